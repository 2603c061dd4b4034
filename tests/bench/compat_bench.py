#!/usr/bin/env python3
"""The compatibility layer's cost, nvshim against the real nvcc in one run, alternating which
goes first (as tests/bench/bench.py does), medians of N pairs.

  - a source that compiles (clean.cu, -c): nvshim against nvcc; the layer must cost nothing;
  - a source the layer fixes (devinfo.cu: 8 field reads rewritten; memadvise.cu: header only):
    nvshim, which runs nvcc, sees it fail and compiles once more with the layer, against what
    the same work costs by hand: nvcc on the failing source, then nvcc on the hand-fixed one.
    The ratio near 1 says the layer costs one extra compile of that source and nothing more.
  - with --dryrun, the answers sccache in front asks nvshim for (docs/compat.md, "sccache in
    front"): `--dryrun -c` of a source that names nothing the layer restores (the gate alone),
    of one that does in its CUDA 13 form (the cached verdict: plain) and of devinfo.cu (the
    cached verdict: the layer), each against nvcc's own --dryrun; and the check itself (no
    verdict: the front end run, twice for devinfo.cu) against nvcc compiling that source.

    python3 tests/bench/compat_bench.py --nvshim build/nvshim [--nvcc /usr/local/cuda/bin/nvcc] [--pairs 15] [--dryrun]
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "e2e", "fixtures", "compat")


def cpu_ms():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r.ru_utime + r.ru_stime) * 1000.0


CPU = []  # (wall ms, CPU ms) of each timed() call, in order


def timed(cmds, env, cwd):
    """Runs the commands one after the other; the wall time of all of them, in ms (their CPU
    time, less sensitive to a shared machine's load, is appended to CPU)."""
    c = cpu_ms()
    t = time.perf_counter()
    for cmd, may_fail in cmds:
        if callable(cmd):
            cmd()
            continue
        r = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if r.returncode and not may_fail:
            raise SystemExit(f"failed: {' '.join(cmd)}")
    wall = (time.perf_counter() - t) * 1000.0
    CPU.append(cpu_ms() - c)
    return wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvshim", required=True)
    ap.add_argument("--nvcc", default="/usr/local/cuda/bin/nvcc")
    ap.add_argument("--pairs", type=int, default=15)
    ap.add_argument("--dryrun", action="store_true", help="the --dryrun cases (sccache in front)")
    a = ap.parse_args()
    nvshim = os.path.abspath(a.nvshim)
    work = tempfile.mkdtemp(prefix="nvshim-compat-bench-")
    for f in os.listdir(FIXTURES):
        shutil.copy(os.path.join(FIXTURES, f), work)
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("NVSHIM_") or k in ("NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS"):
            del env[k]
    env["NVSHIM_NVCC"] = a.nvcc
    env["NVSHIM_CACHE_DIR"] = os.path.join(work, "cache")
    env["NVSHIM_STATS"] = "false"
    nv = a.nvcc
    cases = [
        ("clean.cu -c (compiles: the identity path)",
         [([nvshim, "-c", "clean.cu", "-o", "s.o"], False)],
         [([nv, "-c", "clean.cu", "-o", "r.o"], False)]),
        ("devinfo.cu -c: the layer (8 field reads rewritten) / nvcc fails, then nvcc on the hand-fixed source",
         [([nvshim, "-c", "devinfo.cu", "-o", "s.o"], False)],
         [([nv, "-c", "devinfo.cu", "-o", "r.o"], True), ([nv, "-c", "devinfo_fixed.cu", "-o", "r.o"], False)]),
        ("memadvise.cu -c: the layer (header only) / nvcc fails, then nvcc on the hand-fixed source",
         [([nvshim, "-c", "memadvise.cu", "-o", "s.o"], False)],
         [([nv, "-c", "memadvise.cu", "-o", "r.o"], True), ([nv, "-c", "memadvise_fixed.cu", "-o", "r.o"], False)]),
    ]
    verdicts = os.path.join(work, "cache", "compat", "verdicts")
    forget = (lambda: shutil.rmtree(verdicts, ignore_errors=True), False)
    if a.dryrun:
        d = ["--dryrun", "-c"]
        cases = [
            ("clean.cu --dryrun -c: names nothing the layer restores (the gate alone)",
             [([nvshim] + d + ["clean.cu", "-o", "s.o"], False)], [([nv] + d + ["clean.cu", "-o", "r.o"], False)]),
            ("memadvise_fixed.cu --dryrun -c: names cudaMemAdvise, verdict cached (plain)",
             [([nvshim] + d + ["memadvise_fixed.cu", "-o", "s.o"], False)],
             [([nv] + d + ["memadvise_fixed.cu", "-o", "r.o"], False)]),
            ("devinfo.cu --dryrun -c: verdict cached (the layer)",
             [([nvshim] + d + ["devinfo.cu", "-o", "s.o"], False)], [([nv] + d + ["devinfo.cu", "-o", "r.o"], False)]),
            ("memadvise_fixed.cu --dryrun -c, no verdict (the check: one front end) / nvcc -c of it",
             [forget, ([nvshim] + d + ["memadvise_fixed.cu", "-o", "s.o"], False)],
             [forget, ([nv, "-c", "memadvise_fixed.cu", "-o", "r.o"], False)]),
            ("devinfo.cu --dryrun -c, no verdict (the check: two front ends) / nvcc -c of devinfo_fixed.cu",
             [forget, ([nvshim] + d + ["devinfo.cu", "-o", "s.o"], False)],
             [forget, ([nv, "-c", "devinfo_fixed.cu", "-o", "r.o"], False)]),
        ]
    rows = []
    for name, shim, real in cases:
        for _ in range(2):  # warm-up: caches of facts, the page cache
            timed(shim, env, work)
            timed(real, env, work)
        s_t, r_t, s_c, r_c = [], [], [], []
        for i in range(a.pairs):
            order = [(shim, s_t, s_c), (real, r_t, r_c)] if i % 2 == 0 else [(real, r_t, r_c), (shim, s_t, s_c)]
            for cmds, out, cpu in order:
                out.append(timed(cmds, env, work))
                cpu.append(CPU[-1])
        ms, mr = statistics.median(s_t), statistics.median(r_t)
        diff = statistics.median(s - r for s, r in zip(s_t, r_t))
        cdiff = statistics.median(s - r for s, r in zip(s_c, r_c))
        rows.append((name, mr, ms, diff, ms / mr, statistics.median(r_c), statistics.median(s_c), cdiff))
    shutil.rmtree(work, ignore_errors=True)
    v = subprocess.run([nv, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-2]
    print(f"compatibility layer benchmark: {a.pairs} alternating pairs per case; {v}; {os.cpu_count()} CPUs")
    print()
    print("| case | %s median | nvshim median | median added per pair | ratio | CPU: %s, nvshim, added per pair |"
          % (("nvcc",) * 2 if a.dryrun else ("by hand (nvcc)", "by hand")))
    print("|---|---|---|---|---|---|")
    for name, mr, ms, diff, ratio, cr, cs, cdiff in rows:
        print(f"| {name} | {mr:.0f} ms | {ms:.0f} ms | {diff:+.0f} ms | {ratio:.3f} | {cr:.1f}, {cs:.1f}, {cdiff:+.1f} ms |")


if __name__ == "__main__":
    main()
