#!/usr/bin/env python3
"""The wheel's nvshim against the CMake build's, in one run (docs/packaging.md).

Rounds alternate, in a rotating order: the real nvcc, a static C program that only execv()s it
(the floor any wrapper pays), the CMake build's installed nvshim and the wheel's installed
nvshim, for the pass-through (`nvcc --version`), then a first build (`-c k.cu -arch=sm_90`, each
nvshim run with a new, empty cache) of the two nvshims and plain nvcc. Prints medians, and the
per-round differences to nvcc and the ratio wheel/CMake as medians of the rounds.

    python3 tests/bench/wheel_bench.py --cmake PREFIX/bin/nvshim --wheel VENV/bin/nvshim \
        [--nvcc /usr/local/cuda/bin/nvcc] [--rounds 300] [--builds 10]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time

KERNEL = "__global__ void scale(float *x, float a) { x[threadIdx.x] *= a; }\n"


def timed(cmd, env, cwd):
    t = time.perf_counter()
    rc = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    elapsed = time.perf_counter() - t
    if rc != 0:
        raise SystemExit(f"wheel_bench: {' '.join(cmd)} failed with {rc}")
    return elapsed


def rounds(cases, n, cwd, fresh_cache=False):
    """cases: [(name, cmd, env)]; n rounds, the order rotated each round. Returns name -> times."""
    times = {name: [] for name, _, _ in cases}
    for i in range(n):
        k = i % len(cases)
        for name, cmd, env in cases[k:] + cases[:k]:
            e = env
            if fresh_cache and name != "nvcc":
                e = dict(env, XDG_CACHE_HOME=tempfile.mkdtemp(dir=cwd))
            times[name].append(timed(cmd, e, cwd))
    return times


def report(title, times, base="nvcc"):
    print(f"\n{title}\n")
    print("| what | median | added per round (to nvcc) |")
    print("|---|---|---|")
    for name, t in times.items():
        added = statistics.median(a - b for a, b in zip(t, times[base])) if name != base else 0.0
        print(f"| {name} | {statistics.median(t) * 1e3:.3f} ms | {added * 1e3:+.3f} ms |")
    w, c = times["wheel nvshim"], times["CMake nvshim"]
    print(f"\nwheel / CMake, median of the per-round ratios: {statistics.median(a / b for a, b in zip(w, c)):.4f}; "
          f"wheel - CMake per round: {statistics.median(a - b for a, b in zip(w, c)) * 1e3:+.3f} ms")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cmake", required=True, help="the CMake build's installed bin/nvshim")
    ap.add_argument("--wheel", required=True, help="the wheel's installed bin/nvshim")
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--builds", type=int, default=10)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="nvshim-wheel-bench-")
    with open(os.path.join(work, "k.cu"), "w") as f:
        f.write(KERNEL)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NVSHIM_")}
    env.update(HOME=work, XDG_CACHE_HOME=os.path.join(work, "cache"), XDG_CONFIG_HOME=os.path.join(work, "config"),
               NVSHIM_NVCC=a.nvcc)
    bare = os.path.join(work, "bare")
    with open(bare + ".c", "w") as f:
        f.write('#include <unistd.h>\nint main(int c, char **v) { (void)c; v[0] = "%s"; execv(v[0], v); return 127; }\n'
                % a.nvcc)
    subprocess.run(["cc", "-O2", "-static", "-o", bare, bare + ".c"], check=True)
    for exe in (a.cmake, a.wheel):  # warm-up, caches filled
        for _ in range(5):
            timed([exe, "nvcc", "--version"], env, work)
    passthrough = [("nvcc", [a.nvcc, "--version"], env),
                   ("bare execv (the floor)", [bare, "--version"], env),
                   ("CMake nvshim", [a.cmake, "nvcc", "--version"], env),
                   ("wheel nvshim", [a.wheel, "nvcc", "--version"], env)]
    report(f"`nvcc --version` (the pass-through), {a.rounds} rounds", rounds(passthrough, a.rounds, work))
    build = ["-c", "k.cu", "-o", "k.o", "-arch=sm_90"]
    first = [("nvcc", [a.nvcc] + build, env),
             ("CMake nvshim", [a.cmake, "nvcc"] + build, env),
             ("wheel nvshim", [a.wheel, "nvcc"] + build, env)]
    report(f"first build, `-c k.cu -arch=sm_90`, an empty cache each nvshim run, {a.builds} rounds",
           rounds(first, a.builds, work, fresh_cache=True))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
