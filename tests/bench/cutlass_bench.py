#!/usr/bin/env python3
"""The modules pass on real CUTLASS compiles: nvshim against the real nvcc, alternating.

Cases (each a whole `-c` compile of a CUTLASS example, renamed, modules_rules = false):
  - nothing to change: example 48 (Hopper GEMM) asked for sm_90a with -gencode (not -arch=sm_90a,
    which the targets pass makes one pass instead of nvcc's two), and example 14 (an sm80-style
    GEMM) asked for sm_90. nvshim scans the source, holds stderr and reads the object's kernels
    after the compile (the stub check); nvcc runs once.
  - cached verdict: example 48 asked for plain sm_90, after a first build has learnt that it
    needs sm_90a; nvshim runs one nvcc with sm_90a + compute_90, compared with nvcc given that
    list itself.
Prints, per case, the median wall time of each, the median per-pair difference and the ratio,
as a Markdown table, and the first build's cost (compare + rebuild) once.

    python3 tests/bench/cutlass_bench.py --nvshim build/nvshim [--nvcc ...] [--pairs 3]
"""
import argparse
import glob
import os
import shutil
import site
import sys
import statistics
import subprocess
import tempfile
import time


def timed(cmd, env, cwd):
    start = time.perf_counter_ns()
    rc = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    if rc:
        raise SystemExit(f"cutlass_bench: {' '.join(cmd)} failed with {rc}")
    return (time.perf_counter_ns() - start) / 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvshim", required=True)
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    ap.add_argument("--pairs", type=int, default=3)
    a = ap.parse_args()
    roots = [p for d in site.getsitepackages() + [site.getusersitepackages()]
             for p in glob.glob(d + "/cutlass_library/source")] + [p for d in sys.path for p in glob.glob(d + "/cutlass_library/source")]
    if not roots:
        raise SystemExit("cutlass_bench: no nvidia-cutlass (scripts/install-deps.sh installs it)")
    c = roots[0]
    work = tempfile.mkdtemp(prefix="nvshim-cutlass-bench-")
    shutil.copy(f"{c}/examples/48_hopper_warp_specialized_gemm/48_hopper_warp_specialized_gemm.cu",
                os.path.join(work, "my_gemm.cu"))
    shutil.copy(f"{c}/examples/14_ampere_tf32_tensorop_gemm/ampere_tf32_tensorop_gemm.cu",
                os.path.join(work, "my_ampere_gemm.cu"))
    os.mkdir(os.path.join(work, ".git"))
    flags = ["-std=c++17", "--expt-relaxed-constexpr", "-w", f"-I{c}/include", f"-I{c}/tools/util/include",
             f"-I{c}/examples/common", "-c"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("NVSHIM_")}
    env.update(HOME=work, NVSHIM_NVCC=os.path.abspath(a.nvcc), NVSHIM_MODULES_RULES="false",
               NVSHIM_VERBOSITY="quiet", NVSHIM_CACHE_DIR=os.path.join(work, "cache"))
    nvshim = os.path.abspath(a.nvshim)
    g = flags + ["my_gemm.cu", "-o", "g.o"]
    first = timed([nvshim] + g + ["-arch=sm_90"], env, work)  # learns sm_90a
    plain_first = timed([a.nvcc] + g + ["-arch=sm_90"], env, work)
    sm90a = ["-gencode=arch=compute_90a,code=sm_90a"]  # a line no pass changes (-arch=sm_90a is made one pass)
    cases = [("example 48 for sm_90a (-gencode): nothing to change", [nvshim] + g + sm90a, [a.nvcc] + g + sm90a),
             ("example 14 (sm80-style) for sm_90: nothing to change",
              [nvshim] + flags + ["my_ampere_gemm.cu", "-o", "a.o", "-arch=sm_90"],
              [a.nvcc] + flags + ["my_ampere_gemm.cu", "-o", "a.o", "-arch=sm_90"]),
             ("example 48 for sm_90, cached verdict (one nvcc: sm_90a + compute_90)", [nvshim] + g + ["-arch=sm_90"],
              [a.nvcc] + g + ["-gencode=arch=compute_90a,code=sm_90a", "-gencode=arch=compute_90,code=compute_90"])]
    rows = []
    for name, shim, real in cases:
        timed(shim, env, work)  # warm: file caches, the verdict
        s, r = [], []
        for i in range(a.pairs):
            order = [(shim, s), (real, r)]
            if i % 2:
                order.reverse()
            for cmd, out in order:
                out.append(timed(cmd, env, work))
        ms, mr = statistics.median(s), statistics.median(r)
        rows.append((name, mr, ms, statistics.median(x - y for x, y in zip(s, r)), ms / mr))
    shutil.rmtree(work)
    print(f"CUTLASS compiles: {a.pairs} alternating pairs per case, nvcc = {a.nvcc}, {os.cpu_count()} CPUs")
    print()
    print("| case | nvcc median | nvshim median | median added per pair | ratio |")
    print("|---|---|---|---|---|")
    for name, mr, ms, d, r in rows:
        print(f"| {name} | {mr / 1000:.2f} s | {ms / 1000:.2f} s | {d / 1000:+.3f} s | {r:.4f} |")
    print()
    print(f"First build of example 48 for plain sm_90 (compile, compare with sm_90a, rebuild): "
          f"{first / 1000:.2f} s, plain nvcc's (GEMM compiled out) {plain_first / 1000:.2f} s, ratio {first / plain_first:.2f}")


if __name__ == "__main__":
    main()
