#!/usr/bin/env python3
"""nvshim against the real nvcc, in one run, alternating which goes first.

For each case it runs warm-up rounds, then N pairs (nvshim, nvcc) in alternating order, and
prints the median wall time of each, the difference and the ratio, as a Markdown table. nvshim's
own peak memory (VmHWM of the nvshim process, not of nvcc) comes from its log file.

    python3 tests/bench/bench.py --nvshim build/nvshim [--nvcc /usr/local/cuda/bin/nvcc] [--pairs 50]

With ccache installed it also compares cache hits with nvshim and without it, in both orders.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

KERNEL = """__global__ void scale(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
"""

# Host code that calls the driver API, for the link cases.
DRIVER = """#include <cuda.h>
extern "C" int init_driver(void) { return cuInit(0); }
"""
MAIN = """extern "C" int init_driver(void);
int main() { return init_driver(); }
"""
C_SOURCE = "int add(int a, int b) { return a + b; }\n"
PLAIN_MAIN = "int main() { return 0; }\n"


# A kernel that needs the probe: its sm_75 stub throws (nvcc: "device code does not support
# exception handling"), so the modules pass drops sm_75 once the verdict is cached.
PROBED = """#include <stdexcept>
__global__ void k(float *x)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    x[threadIdx.x] *= 2.0f;
#else
    throw std::runtime_error("needs sm_80");
#endif
}
"""


def big_source():
    """A 2,000-line source and a project header, for the scan's cost."""
    lines = ['#include "common.cuh"']
    for i in range(200):
        lines += [f"// kernel {i}: cp.async in a comment",
                  f"template <int N> __device__ float f{i}(const float *x) {{",
                  "  float acc = 0.0f; /* block comment */",
                  f"  for (int j = 0; j < N; j++) acc += x[j] * {i}.0f;",
                  "  return acc;", "}",
                  f"__global__ void k{i}(float *y, const float *x, int n) {{",
                  "  int i = blockIdx.x * blockDim.x + threadIdx.x;",
                  f"  if (i < n) y[i] = f{i}<4>(x + i) + helper(x[i]);", "}"]
    header = ["#pragma once", "__device__ inline float helper(float v) {", "#if __CUDA_ARCH__ >= 800",
              '  asm volatile("cp.async.wait_all;\\n" ::);', "#endif", "  return v;", "}"]
    for i in range(300):
        header.append(f"#define MACRO_{i}(x) ((x) * {i})")
    return "\n".join(lines) + "\n", "\n".join(header) + "\n"


# Compiles that fail on purpose (CUDA 12 era API code on CUDA 13): nvshim adds its API notes.
OLD_RUNTIME = """#include <cuda_runtime.h>
int main()
{
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    float *x;
    cudaMallocManaged(&x, 1024);
    cudaMemPrefetchAsync(x, 1024, 0, 0);
    cudaThreadSynchronize();
    return prop.clockRate;
}
"""
HOST_CUDA = """#include <cuda_runtime.h>
int device_count(void) { int n = 0; cudaGetDeviceCount(&n); return n; }
"""
FAILING = ("fails on removed CUDA APIs",)


def timed(cmd, env, cwd, fails=False):
    start = time.perf_counter_ns()
    rc = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL).returncode
    elapsed = (time.perf_counter_ns() - start) / 1e6
    if fails:
        if rc == 0:
            raise SystemExit(f"bench: {' '.join(cmd)} passed; it should fail")
    elif rc != 0:
        raise SystemExit(f"bench: {' '.join(cmd)} failed with {rc}")
    return elapsed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvshim", required=True)
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    ap.add_argument("--pairs", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--only", default="", help="run only the cases whose name contains one of these (a|b)")
    a = ap.parse_args()
    a.nvshim = os.path.abspath(a.nvshim)

    work = tempfile.mkdtemp(prefix="nvshim-bench-")
    big, header = big_source()
    for name, text in (("k.cu", KERNEL), ("drv.cu", DRIVER), ("main.cu", MAIN), ("a.c", C_SOURCE),
                       ("plain.cu", PLAIN_MAIN), ("probed.cu", PROBED), ("big.cu", big), ("common.cuh", header),
                       ("old.cu", OLD_RUNTIME), ("old.cpp", OLD_RUNTIME), ("host.cpp", HOST_CUDA)):
        with open(os.path.join(work, name), "w") as f:
            f.write(text)
    for src in ("k", "drv", "main", "plain"):
        subprocess.run([a.nvcc, "-c", "-Xcompiler", "-fPIC", src + ".cu", "-o", src + ".o"], cwd=work, check=True)
    os.mkdir(os.path.join(work, ".git"))  # the project root, for the scan
    cuda_lib = os.path.join(os.path.dirname(os.path.realpath(a.nvcc)), "..", "lib64")
    stubs = os.path.join(cuda_lib, "stubs")
    cuda_inc = os.path.join(os.path.dirname(os.path.realpath(a.nvcc)), "..", "include")
    cc_dir = os.path.join(os.path.dirname(a.nvshim), "libexec", "nvshim", "cc")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NVSHIM_")}
    env["HOME"] = work
    env["NVSHIM_NVCC"] = a.nvcc
    log = os.path.join(work, "log.jsonl")
    # (name, arguments, extra environment for nvshim). With a log file nvshim waits for nvcc
    # (pex) instead of replacing itself with it (exec): both paths are measured.
    dry = ["--dryrun", "-c", "k.cu", "-o", "k.o"]
    # (name, nvshim's arguments, nvcc's arguments, extra environment for nvshim). With a log file
    # nvshim waits for nvcc (pex) instead of replacing itself with it (exec): both are measured.
    # The rewritten case compares with nvcc given the list nvshim makes of it.
    # (`nvshim --version` is nvshim's own front door: nvcc mode's is `nvshim nvcc --version`.)
    cases = [("nvcc --version", ["nvcc", "--version"], ["--version"], {}),
             ("nvcc --version, log_file set (nvshim waits)", ["nvcc", "--version"], ["--version"],
              {"NVSHIM_LOG_FILE": log + ".bench"}),
             ("--dryrun -c -arch=sm_80 (targets pass, warm caches)", dry + ["-arch=sm_80"], None, {}),
             ("--dryrun -c, CUDA 12 list rewritten (warm caches)",
              dry + ["-gencode", "arch=compute_70,code=sm_70", "-gencode", "arch=compute_80,code=sm_80"],
              dry + ["-gencode=arch=compute_80,code=sm_80"], {"NVSHIM_VERBOSITY": "quiet"}),
             ("--dryrun -c, 2,000-line source and header (scan)", ["--dryrun", "-c", "big.cu", "-o", "big.o", "-arch=sm_80"],
              None, {}),
             ("one-kernel compile (-c)", ["-c", "k.cu", "-o", "k.o"], None, {}),
             ("one-kernel compile -c -arch=sm_80 (modules pass, stderr held)",
              ["-c", "k.cu", "-o", "k.o", "-arch=sm_80"], None, {}),
             ("compile needing the probe, warm verdict (75..90 -> 80..90)",
              ["-c", "probed.cu", "-o", "p.o"] + [f"-gencode=arch=compute_{a},code=sm_{a}" for a in (75, 80, 86, 89, 90)],
              ["-c", "probed.cu", "-o", "p.o"] + [f"-gencode=arch=compute_{a},code=sm_{a}" for a in (80, 86, 89, 90)],
              {"NVSHIM_VERBOSITY": "quiet"}),
             # The link pass: symbol tables read, stderr held for a possible retry.
             ("nvcc link of 2 objects, nothing to add (link pass)", ["k.o", "plain.o", "-o", "app"], None, {}),
             ("nvcc link, -lcuda added (link pass)", ["drv.o", "main.o", "-o", "app"],
              ["drv.o", "main.o", "-o", "app", "-lcuda"], {"NVSHIM_VERBOSITY": "quiet"}),
             # The API notes: a failed compile's errors read, the table parsed, 4 notes.
             ("compile that fails on removed CUDA APIs (4 API notes)", ["-c", "old.cu", "-o", "old.o"], None, {})]
    # CC mode: (name, nvshim's command, the real compiler's command, extra environment).
    cc_cases = [("gcc -c a.c (CC mode, not CUDA: exec)", ["gcc", "-c", "a.c", "-o", "a.o"], ["gcc", "-c", "a.c", "-o", "a.o"]),
                ("c++ -shared k.o, nothing to add (link pass)",
                 ["c++", "-shared", "k.o", "-o", "k.so", "-L" + cuda_lib, "-lcudart"], None),
                ("c++ -shared drv.o, -lcuda added (link pass)",
                 ["c++", "-shared", "drv.o", "-o", "d.so", "-L" + cuda_lib, "-lcudart"],
                 ["c++", "-shared", "drv.o", "-o", "d.so", "-L" + cuda_lib, "-lcudart", "-L" + stubs, "-lcuda"]),
                # A C++ source that includes cuda_runtime.h: stderr held for the API notes.
                ("g++ -c of a source that includes cuda_runtime.h (stderr held)",
                 ["g++", "-I" + cuda_inc, "-c", "host.cpp", "-o", "host.o"], None),
                ("g++ -c that fails on removed CUDA APIs (4 API notes)",
                 ["g++", "-I" + cuda_inc, "-c", "old.cpp", "-o", "oldcpp.o"], None),
                ("c++ main.o -lcudart_static (1.3 MB archive read)",
                 ["c++", "plain.o", "k.o", "-o", "s", "-L" + cuda_lib, "-lcudart_static", "-ldl", "-lrt", "-lpthread"], None)]
    # The link pass alone, in-process: `nvshim explain` of a link against `nvshim explain` of a
    # compile, which runs no pass (neither runs anything).
    base = [a.nvshim, "explain", "c++", "-c", "a.c"]
    pass_cases = [("link pass alone: c++ -shared k.o (2 symbol tables, nothing to add)",
                   ["c++", "-shared", "k.o", "-o", "k.so", "-L" + cuda_lib, "-lcudart"]),
                  ("link pass alone: c++ -shared drv.o (-lcuda added, stub read)",
                   ["c++", "-shared", "drv.o", "-o", "d.so", "-L" + cuda_lib, "-lcudart"]),
                  ("link pass alone: -lcudart_static (1.3 MB archive: index, members pulled)",
                   ["c++", "plain.o", "k.o", "-o", "s", "-L" + cuda_lib, "-lcudart_static", "-ldl"])]
    all_cases = [(n, [a.nvshim] + s_args, [a.nvcc] + (r_args or s_args), extra) for n, s_args, r_args, extra in cases]
    all_cases += [(n, [a.nvshim, "explain"] + c, base, {}) for n, c in pass_cases]
    all_cases += [(n, [os.path.join(cc_dir, c[0])] + c[1:], r or c, {"NVSHIM_VERBOSITY": "quiet"})
                  for n, c, r in cc_cases]
    full = []
    for name, shim_cmd, nvcc_cmd, extra in all_cases:
        shim_env = dict(env, **extra)
        full.append((name, shim_cmd, shim_env, nvcc_cmd, shim_env if nvcc_cmd[0] == a.nvshim else env))
    # The record behind `nvshim stats` and notes said once per build, against nvshim without
    # them: both columns are nvshim ("real tool" is the one with the feature off).
    off = {"NVSHIM_STATS": "false", "NVSHIM_REPEAT_NOTES": "always"}
    # The floor: a static C program that only execv()s nvcc, as nvshim does for --version.
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc:
        with open(os.path.join(work, "bare.c"), "w") as f:
            f.write("#include <unistd.h>\nint main(int c, char **v) { (void)c; v[0] = \"%s\"; "
                    "execv(v[0], v); return 127; }\n" % a.nvcc.replace("\\", "\\\\").replace('"', '\\"'))
        bare = os.path.join(work, "bare")
        if subprocess.run([cc, "-O2", "-static", "-o", bare, "bare.c"], cwd=work).returncode == 0:
            full.insert(1, ("nvcc --version through a bare execv (static C program: the floor)",
                            [bare, "--version"], env, [a.nvcc, "--version"], env))
    full.append(("nvcc --version: the stats record on, against stats = false",
                 [a.nvshim, "nvcc", "--version"], env, [a.nvshim, "nvcc", "--version"], dict(env, NVSHIM_STATS="false")))
    rewritten = [a.nvshim] + dry + ["-gencode", "arch=compute_70,code=sm_70", "-gencode", "arch=compute_80,code=sm_80"]
    full.append(("--dryrun, CUDA 12 list, in a build (notes said once, record), against always and no record",
                 rewritten, dict(env, NVSHIM_BUILD_ID="bench"), rewritten, dict(env, **off)))
    ccache = shutil.which("ccache")
    if ccache:
        nv_name = os.path.join(os.path.dirname(a.nvshim), "libexec", "nvshim", "bin", "nvcc")
        cenv = dict(env, CCACHE_DIR=os.path.join(work, "ccache"),
                    CCACHE_CONFIGPATH=os.path.join(work, "ccache.conf"))
        open(cenv["CCACHE_CONFIGPATH"], "w").close()
        compile_args = ["-c", "k.cu", "-o", "k.o", "-arch=sm_80"]
        full.append(("ccache hit: nvshim in front (launcher = ccache) vs ccache nvcc",
                     [a.nvshim] + compile_args, dict(cenv, NVSHIM_LAUNCHER="ccache"),
                     [ccache, a.nvcc] + compile_args, cenv))
        full.append(("ccache hit: ccache in front of nvshim (compiler_check = fingerprint) vs ccache nvcc",
                     [ccache, nv_name] + compile_args,
                     dict(cenv, CCACHE_COMPILERCHECK="%compiler% --nvshim-fingerprint"),
                     [ccache, a.nvcc] + compile_args, cenv))
    rows = []
    for name, shim_cmd, shim_env, nvcc_cmd, nvcc_env in full:
        if a.only and not any(o in name for o in a.only.split("|")):
            continue
        fails = any(f in name for f in FAILING)
        for _ in range(a.warmup):
            timed(shim_cmd, shim_env, work, fails)
            timed(nvcc_cmd, nvcc_env, work, fails)
        shim, real = [], []
        for i in range(a.pairs):
            order = [(shim_cmd, shim_env, shim), (nvcc_cmd, nvcc_env, real)]
            if i % 2:
                order.reverse()
            for cmd, e, out in order:
                out.append(timed(cmd, e, work, fails))
        ms, mr = statistics.median(shim), statistics.median(real)
        # The per-pair difference is less noisy than the difference of medians.
        diffs = statistics.median(s - r for s, r in zip(shim, real))
        rows.append((name, mr, ms, diffs, ms / mr))

    menv = dict(env, NVSHIM_LOG_FILE=log)
    for args in (["nvcc", "--version"], ["-c", "k.cu", "-o", "k.o"]):
        for _ in range(5):
            timed([a.nvshim] + args, menv, work)
    rss = max(json.loads(l)["maxrss_kb"] for l in open(log))
    shutil.rmtree(work)

    print(f"nvshim benchmark: {a.pairs} alternating pairs per case, nvcc = {a.nvcc}")
    print()
    print("| case | real tool median | nvshim median | median added per pair | ratio |")
    print("|---|---|---|---|---|")
    for name, mr, ms, d, r in rows:
        print(f"| {name} | {mr:.2f} ms | {ms:.2f} ms | {d:+.3f} ms | {r:.4f} |")
    print()
    print(f"nvshim's own peak memory (VmHWM of the nvshim process, max of 10 runs): {rss} KiB ({rss / 1024:.2f} MiB)")


if __name__ == "__main__":
    main()
