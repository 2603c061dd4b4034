#!/usr/bin/env python3
"""How long `nvshim inspect` takes on a large library, next to cuobjdump on the same file.

Builds (once, in --dir) a shared library of about --mb megabytes whose .nv_fatbin section holds
copies of one real fatbin container made by nvcc (120 kernels, machine code for six targets, PTX;
--compress-mode=size by default, so that every image is zstd-compressed, machine code too, as in
PyTorch's libraries), the way a large library holds one container per translation unit. Then
runs, alternately and after a warm-up, `nvshim inspect --no-kernels` (images and verdicts),
`nvshim inspect` (also every kernel of every cubin: the default), the same on one thread
(NVSHIM_FAULT=inspect_threads: no thread can be started), `nvshim inspect --json`, the same three
of a --baseline build when given (another nvshim, e.g. before a change), and `cuobjdump
--list-elf --list-ptx` (when found), and prints the medians and their ratios to cuobjdump as a
Markdown table.

    python3 tests/bench/inspect_bench.py --build build-rel [--baseline OLD_BUILD] [--mb 500] [--rounds 5]
        [--dir /tmp/nvshim-inspect-bench] [--library FILE | --torch] [--compress-mode size]

--torch times PyTorch's libtorch_cuda.so (of the python3 that runs this) instead.
"""
import argparse
import glob
import os
import shutil
import site
import statistics
import subprocess
import time

KERNELS = 120
TARGETS = ["75", "80", "86", "90", "100", "120"]


def source():
    lines = ["template <int N> __global__ void k(float *x, const float *y, int n) {",
             "  __shared__ float s[64 + N];",
             "  int i = blockIdx.x * blockDim.x + threadIdx.x;",
             "  s[threadIdx.x % (64 + N)] = y[i % n];",
             "  __syncthreads();",
             "  float a = 0;",
             "  for (int j = 0; j < N % 7 + 1; j++) a += s[(threadIdx.x + j) % (64 + N)] * (j + N);",
             "  if (i < n) x[i] = a;",
             "}"]
    lines += ["template __global__ void k<%d>(float *, const float *, int);" % i for i in range(KERNELS)]
    return "\n".join(lines) + "\n"


def make_library(d, nvcc, mb, compress):
    lib = os.path.join(d, "libbig%d-%s.so" % (mb, compress))
    if os.path.exists(lib):
        return lib
    os.makedirs(d, exist_ok=True)
    cu = os.path.join(d, "big.cu")
    with open(cu, "w") as f:
        f.write(source())
    fatbin = os.path.join(d, "big-%s.fatbin" % compress)
    gencode = []
    for t in TARGETS:
        gencode += ["-gencode", "arch=compute_%s,code=sm_%s" % (t, t)]
    gencode += ["-gencode", "arch=compute_%s,code=compute_%s" % (TARGETS[-1], TARGETS[-1])]
    if not os.path.exists(fatbin):  # one kept from an earlier run (or copied in) is used again
        subprocess.run([nvcc, "-fatbin", cu, "-o", fatbin + ".tmp", "-t", "2", "--compress-mode=" + compress]
                       + gencode, check=True)
        os.rename(fatbin + ".tmp", fatbin)
    one = open(fatbin, "rb").read()
    one += b"\0" * (-len(one) % 8)
    copies = max(1, mb * 1024 * 1024 // len(one))
    section = os.path.join(d, "section.bin")
    with open(section, "wb") as f:
        for _ in range(copies):
            f.write(one)
    c = os.path.join(d, "empty.c")
    with open(c, "w") as f:
        f.write("int big_library_marker(void) { return 0; }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", c, "-o", lib + ".tmp"], check=True)
    subprocess.run(["objcopy", "--add-section", ".nv_fatbin=" + section, "--set-section-flags",
                    ".nv_fatbin=alloc,readonly,data", "--set-section-alignment", ".nv_fatbin=8",
                    lib + ".tmp", lib], check=True)
    os.unlink(lib + ".tmp")
    os.unlink(section)
    return lib


def cuobjdump():
    for d in site.getsitepackages() + [site.getusersitepackages()]:
        for p in glob.glob(d + "/nvidia/*/bin/cuobjdump"):
            return p
    for p in [shutil.which("cuobjdump"), "/usr/local/cuda/bin/cuobjdump"]:
        if p and os.path.exists(p):
            return p
    return None


def torch_library():
    import torch  # noqa: the library beside it
    return os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cuda.so")


def timed(cmd, env=None):
    t = time.perf_counter()
    subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--nvcc", default="/usr/local/cuda/bin/nvcc")
    ap.add_argument("--mb", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", default="/tmp/nvshim-inspect-bench")
    ap.add_argument("--compress-mode", default="size",
                    help="nvcc's --compress-mode for the images: size (zstd, machine code too: "
                         "like PyTorch's), default, speed (lz4), none")
    ap.add_argument("--library", help="an existing library to inspect instead (libtorch_cuda.so)")
    ap.add_argument("--torch", action="store_true", help="inspect PyTorch's libtorch_cuda.so")
    ap.add_argument("--baseline", help="the build folder of another nvshim to time beside --build")
    a = ap.parse_args()
    if not os.path.exists(a.nvcc) and shutil.which("nvcc"):
        a.nvcc = shutil.which("nvcc")
    lib = torch_library() if a.torch else a.library or make_library(a.dir, a.nvcc, a.mb, a.compress_mode)
    one = dict(os.environ, NVSHIM_FAULT="inspect_threads")
    cases = []
    for label, build in [("", a.build)] + ([(" (baseline)", a.baseline)] if a.baseline else []):
        nvshim = os.path.join(os.path.abspath(build), "nvshim")
        cases += [
            ("nvshim inspect --no-kernels" + label, [nvshim, "inspect", "--gpu", "90", "--no-kernels", lib], None),
            ("nvshim inspect" + label, [nvshim, "inspect", "--gpu", "90", lib], None),
            ("nvshim inspect --json" + label, [nvshim, "inspect", "--gpu", "90", "--json", lib], None),
        ]
        if not label:
            cases.append(("nvshim inspect, one thread", [nvshim, "inspect", "--gpu", "90", lib], one))
    co = cuobjdump()
    if co:
        cases.append(("cuobjdump --list-elf --list-ptx", [co, "--list-elf", "--list-ptx", lib], None))
    for _, cmd, env in cases:
        timed(cmd, env)
    times = {name: [] for name, _, _ in cases}
    for r in range(a.rounds):
        order = cases if r % 2 == 0 else list(reversed(cases))
        for name, cmd, env in order:
            times[name].append(timed(cmd, env))
    size = os.path.getsize(lib) / 1e6
    out = subprocess.run(cases[1][1], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    lines = out.splitlines()
    rows = sum(1 for line in lines if line.startswith("  ") and not line.startswith(("  images:", "  compressed:", "  sm_", "  kernel ")) and " stub kernel" not in line and " trivial kernel" not in line)
    print("library: %s, %.0f MB; %s" % (lib, size, lines[0] if lines else "?"))
    print("%s; %d kernel rows; %d CPUs for this process; %d rounds, alternating, medians\n"
          % (lines[2].strip() if len(lines) > 2 else "?", rows, len(os.sched_getaffinity(0)), a.rounds))
    ref = statistics.median(times[cases[-1][0]]) if co else None
    print("| command | median | ratio to cuobjdump |")
    print("|---|---|---|")
    for name, _, _ in cases:
        m = statistics.median(times[name])
        print("| %s | %.3f s | %s |" % (name, m, "%.2f" % (m / ref) if ref else "-"))


if __name__ == "__main__":
    main()
