#!/usr/bin/env python3
"""nvshim against the real nvcc, in one run, alternating which goes first.

For each case it runs warm-up rounds, then N pairs (nvshim, nvcc) in alternating order, and
prints the median wall time of each, the difference and the ratio, as a Markdown table. nvshim's
own peak memory (VmHWM of the nvshim process, not of nvcc) comes from its log file.

    python3 tests/bench/bench.py --nvshim build/nvshim [--nvcc /usr/local/cuda/bin/nvcc] [--pairs 50]
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


def timed(cmd, env, cwd):
    start = time.perf_counter_ns()
    rc = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL).returncode
    elapsed = (time.perf_counter_ns() - start) / 1e6
    if rc != 0:
        raise SystemExit(f"bench: {' '.join(cmd)} failed with {rc}")
    return elapsed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvshim", required=True)
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    ap.add_argument("--pairs", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=3)
    a = ap.parse_args()
    a.nvshim = os.path.abspath(a.nvshim)

    work = tempfile.mkdtemp(prefix="nvshim-bench-")
    with open(os.path.join(work, "k.cu"), "w") as f:
        f.write(KERNEL)
    with open(os.path.join(work, "probed.cu"), "w") as f:
        f.write(PROBED)
    big, header = big_source()
    with open(os.path.join(work, "big.cu"), "w") as f:
        f.write(big)
    with open(os.path.join(work, "common.cuh"), "w") as f:
        f.write(header)
    os.mkdir(os.path.join(work, ".git"))  # the project root, for the scan
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
    cases = [("nvcc --version", ["--version"], None, {}),
             ("nvcc --version, log_file set (nvshim waits)", ["--version"], None,
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
              {"NVSHIM_VERBOSITY": "quiet"})]
    rows = []
    for name, args, nvcc_args, extra in cases:
        shim_cmd, nvcc_cmd = [a.nvshim] + args, [a.nvcc] + (nvcc_args or args)
        shim_env = dict(env, **extra)
        for _ in range(a.warmup):
            timed(shim_cmd, shim_env, work)
            timed(nvcc_cmd, env, work)
        shim, real = [], []
        for i in range(a.pairs):
            order = [(shim_cmd, shim_env, shim), (nvcc_cmd, env, real)]
            if i % 2:
                order.reverse()
            for cmd, e, out in order:
                out.append(timed(cmd, e, work))
        ms, mr = statistics.median(shim), statistics.median(real)
        # The per-pair difference is less noisy than the difference of medians.
        diffs = statistics.median(s - r for s, r in zip(shim, real))
        rows.append((name, mr, ms, diffs, ms / mr))

    menv = dict(env, NVSHIM_LOG_FILE=log)
    for args in (["--version"], ["-c", "k.cu", "-o", "k.o"]):
        for _ in range(5):
            timed([a.nvshim] + args, menv, work)
    rss = max(json.loads(l)["maxrss_kb"] for l in open(log))
    shutil.rmtree(work)

    print(f"nvshim benchmark: {a.pairs} alternating pairs per case, nvcc = {a.nvcc}")
    print()
    print("| case | nvcc median | nvshim median | median added per pair | ratio |")
    print("|---|---|---|---|---|")
    for name, mr, ms, d, r in rows:
        print(f"| {name} | {mr:.2f} ms | {ms:.2f} ms | {d:+.3f} ms | {r:.4f} |")
    print()
    print(f"nvshim's own peak memory (VmHWM of the nvshim process, max of 10 runs): {rss} KiB ({rss / 1024:.2f} MiB)")


if __name__ == "__main__":
    main()
