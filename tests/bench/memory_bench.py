#!/usr/bin/env python3
"""The memory budget on real compiles: several CUTLASS Hopper GEMM compiles (the nvidia-cutlass
package's example 48, -arch=sm_90a) at once through nvshim under a budget below their sum, then
plain nvcc at every job count from 1 to N (the hand-tuned sweep).

For each run: the wall time, the most resident memory the compilers (cicc, ptxas, cudafe++,
cc1plus, nvlink) had at once (sampled every 20 ms from /proc), whether every object was built.
The best hand-tuned job count is the fastest plain run whose sampled peak stays within the same
budget; the ratio is nvshim's time over its time.

  python3 tests/bench/memory_bench.py --nvshim build/nvshim --jobs 3 --budget 4G
"""
import argparse
import glob
import os
import shutil
import site
import subprocess
import sys
import tempfile
import threading
import time

COMPILERS = {"cicc", "ptxas", "cudafe++", "cc1plus", "nvlink"}


def parse_size(text):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    t = text.strip().upper().rstrip("B").rstrip("I")
    if t and t[-1] in mult:
        return int(float(t[:-1]) * mult[t[-1]])
    return int(t)


def sample_rss():
    """The summed resident memory of the compilers this benchmark started (its descendants: the
    machine may be compiling other things)."""
    procs = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
            comm = stat[stat.index("(") + 1:stat.rindex(")")]
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
            procs[int(pid)] = (comm, ppid)
        except (OSError, ValueError, IndexError):
            pass
    me, total = os.getpid(), 0
    for pid, (comm, ppid) in procs.items():
        if comm not in COMPILERS:
            continue
        q = ppid
        while q > 1 and q != me and q in procs:
            q = procs[q][1]
        if q != me:
            continue
        try:
            with open(f"/proc/{pid}/statm") as f:
                total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError):
            pass
    return total


class Sampler(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True)
        self.stop = threading.Event()
        self.peak = 0

    def run(self):
        while not self.stop.is_set():
            self.peak = max(self.peak, sample_rss())
            time.sleep(0.02)


def run_batch(cmds, jobs, env):
    """Runs the commands, at most `jobs` at once; returns (wall s, peak bytes, all ok)."""
    sampler = Sampler()
    sampler.start()
    t0 = time.monotonic()
    pending, running, ok = list(cmds), [], True
    while pending or running:
        while pending and len(running) < jobs:
            running.append(subprocess.Popen(pending.pop(0), env=env))
        time.sleep(0.05)
        for p in list(running):
            if p.poll() is not None:
                ok = ok and p.returncode == 0
                running.remove(p)
    wall = time.monotonic() - t0
    sampler.stop.set()
    sampler.join()
    return wall, sampler.peak, ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvshim", required=True)
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    ap.add_argument("--jobs", type=int, default=3, help="compiles at once through nvshim (and the sweep's top)")
    ap.add_argument("--budget", default="4G")
    ap.add_argument("--skip-plain", action="store_true")
    ap.add_argument("--skip-nvshim", action="store_true")
    ap.add_argument("--sweep", default="", help="the plain job counts to run (1,2): every one from 1 to --jobs by default")
    a = ap.parse_args()
    src = None
    for d in site.getsitepackages() + [site.getusersitepackages()]:
        for p in glob.glob(d + "/cutlass_library/source"):
            src = p
    if not src:
        sys.exit("no nvidia-cutlass (pip install nvidia-cutlass)")
    budget = parse_size(a.budget)
    build = os.path.dirname(os.path.abspath(a.nvshim))
    nv = os.path.join(build, "libexec/nvshim/bin/nvcc")
    work = tempfile.mkdtemp(prefix="nvshim-membench-")
    flags = ["-std=c++17", "--expt-relaxed-constexpr", "-w", f"-I{src}/include", f"-I{src}/tools/util/include",
             f"-I{src}/examples/common", "-gencode", "arch=compute_90a,code=sm_90a", "-c"]
    example = f"{src}/examples/48_hopper_warp_specialized_gemm/48_hopper_warp_specialized_gemm.cu"
    sources = []
    for i in range(a.jobs):
        s = os.path.join(work, f"gemm{i}.cu")
        with open(example) as f, open(s, "w") as g:
            g.write(f"// copy {i}\n" + f.read())
        sources.append(s)
    env = dict(os.environ, NVSHIM_CACHE_DIR=os.path.join(work, "cache"), NVSHIM_MEMORY_BUDGET=a.budget,
               NVSHIM_BUILD_ID="membench")
    env.pop("MAKEFLAGS", None)
    rows = []
    if not a.skip_nvshim:
        cmds = [[nv] + flags + [s, "-o", s + ".nvshim.o"] for s in sources]
        wall, peak, ok = run_batch(cmds, a.jobs, env)
        rows.append((f"nvshim, {a.jobs} at once, memory_budget={a.budget}", wall, peak, ok))
        print(f"nvshim: {wall:.1f} s, peak {peak / 2**30:.2f} GiB, budget {budget / 2**30:.2f} GiB, all built: {ok}",
              flush=True)
    if not a.skip_plain:
        penv = dict(os.environ)
        penv.pop("MAKEFLAGS", None)
        sweep = [int(j) for j in a.sweep.split(",")] if a.sweep else range(1, a.jobs + 1)
        for j in sweep:
            cmds = [[a.nvcc] + flags + [s, "-o", s + f".plain{j}.o"] for s in sources]
            wall, peak, ok = run_batch(cmds, j, penv)
            rows.append((f"plain nvcc, -j{j}", wall, peak, ok))
            print(f"plain -j{j}: {wall:.1f} s, peak {peak / 2**30:.2f} GiB, all built: {ok}", flush=True)
    if not rows:
        return
    fits = [r for r in rows if r[2] <= budget and r[3] and not r[0].startswith("nvshim")]
    best = min(fits, key=lambda r: r[1]) if fits else None
    print()
    print(f"| {a.jobs} CUTLASS Hopper GEMM compiles (example 48, sm_90a) | wall | compilers' peak (sampled) | "
          f"within {a.budget} | nvshim / this |")
    print("|---|---|---|---|---|")
    for name, wall, peak, ok in rows:
        print(f"| {name}{'' if ok else ' (a compile failed)'} | {wall:.1f} s | {peak / 2**30:.2f} GiB | "
              f"{'yes' if peak <= budget else 'no'} | {rows[0][1] / wall:.3f} |")
    if best and rows[0][0].startswith("nvshim"):
        print(f"\nbest hand-tuned job count within the budget: {best[0]}; nvshim / best = {rows[0][1] / best[1]:.3f}")
    journal = os.path.join(work, "cache/threads/mem/journal")
    if os.path.exists(journal):
        with open(journal) as f:
            print("\njournal of nvshim's run (start end kind peak_kb est_kb waited_ms budget_kb flags pid):")
            sys.stdout.write(f.read())
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
