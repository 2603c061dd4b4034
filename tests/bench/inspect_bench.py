#!/usr/bin/env python3
"""How long `nvshim inspect` takes on a large library, next to cuobjdump on the same file.

Builds (once, in --dir) a shared library of about --mb megabytes whose .nv_fatbin section holds
copies of one real fatbin container made by nvcc (many kernels, machine code for several
targets, PTX; nvcc's default compression), the way a large library holds one container per
translation unit. Then runs, alternately and after a warm-up, `nvshim inspect --no-kernels`
(images and verdicts), `nvshim inspect` (also every kernel of every cubin), `nvshim inspect
--json`, and `cuobjdump --list-elf --list-ptx`, and prints the medians and their ratios to
cuobjdump as a Markdown table.

    python3 tests/bench/inspect_bench.py --build build [--mb 500] [--rounds 5] [--dir /tmp/nvshim-inspect-bench]
"""
import argparse
import glob
import os
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
    subprocess.run([nvcc, "-fatbin", cu, "-o", fatbin, "-t", "2", "--compress-mode=" + compress] + gencode, check=True)
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
    return "cuobjdump"


def timed(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
    a = ap.parse_args()
    lib = a.library or make_library(a.dir, a.nvcc, a.mb, a.compress_mode)
    nvshim = os.path.join(os.path.abspath(a.build), "nvshim")
    cases = [
        ("nvshim inspect --no-kernels", [nvshim, "inspect", "--gpu", "90", "--no-kernels", lib]),
        ("nvshim inspect", [nvshim, "inspect", "--gpu", "90", lib]),
        ("nvshim inspect --json", [nvshim, "inspect", "--gpu", "90", "--json", lib]),
        ("cuobjdump --list-elf --list-ptx", [cuobjdump(), "--list-elf", "--list-ptx", lib]),
    ]
    for _, cmd in cases:
        timed(cmd)
    times = {name: [] for name, _ in cases}
    for r in range(a.rounds):
        order = cases if r % 2 == 0 else list(reversed(cases))
        for name, cmd in order:
            times[name].append(timed(cmd))
    size = os.path.getsize(lib) / 1e6
    out = subprocess.run(cases[0][1], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    print("library: %s, %.0f MB; %s" % (lib, size, out.splitlines()[0] if out else "?"))
    print("%d rounds, alternating, medians\n" % a.rounds)
    ref = statistics.median(times[cases[-1][0]])
    print("| command | median | ratio to cuobjdump |")
    print("|---|---|---|")
    for name, _ in cases:
        m = statistics.median(times[name])
        print("| %s | %.3f s | %.2f |" % (name, m, m / ref))


if __name__ == "__main__":
    main()
