#!/usr/bin/env python3
"""What libnvshim-preload.so adds on the happy path: tests/bench/preload_bench.c run alternately
without and with the library (LD_PRELOAD), which goes first alternating too, after a warm-up.
Prints the median of each measurement over the rounds, the difference and the ratio, as a
Markdown table. The driver calls go to the test double of libcuda (FAKE_CUDA_OK=1), whose own
functions take nanoseconds, so the difference is nvshim's.

    python3 tests/bench/preload_bench.py --build build [--rounds 11] [--compiles 10] [--calls 20000]
                                         [--nvrtc-dir DIR]

--nvrtc-dir puts DIR first on LD_LIBRARY_PATH, so that the benchmark's libnvrtc.so.13 is that one
(a wheel's nvidia/cu13/lib, as <build>/tests/wheels/cu13 of tests/e2e/jit_wheels.sh holds).
"""
import argparse
import os
import statistics
import subprocess
import tempfile


def run(cmd, env):
    out = subprocess.run(cmd, env=env, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True).stdout
    return {name: float(value) for name, value in (line.split() for line in out.splitlines())}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--compiles", type=int, default=10)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--nvrtc-dir", default=None)
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    lib = os.path.join(build, "libexec/nvshim/libnvshim-preload.so")
    cmd = [os.path.join(build, "tests/preload/preload_bench"), str(a.compiles), str(a.calls)]
    home = tempfile.mkdtemp(prefix="nvshim-bench-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NVSHIM_") and k != "LD_PRELOAD"}
    env.update(HOME=home, FAKE_CUDA_OK="1", FAKE_CUDA_IMAGES="1", NVSHIM_DEVICES="90",
               LD_LIBRARY_PATH=(a.nvrtc_dir + ":" if a.nvrtc_dir else "") + os.path.join(build, "tests/fakecuda"))
    shim = dict(env, LD_PRELOAD=lib)
    run(cmd, env)
    run(cmd, shim)
    plain, preloaded = {}, {}
    for r in range(a.rounds):
        order = [(env, plain), (shim, preloaded)]
        for e, into in (order if r % 2 == 0 else reversed(order)):
            for name, value in run(cmd, e).items():
                into.setdefault(name, []).append(value)
    print(f"{a.rounds} rounds, {a.compiles} compiles and {a.calls} calls of each kind per run\n")
    print("| measurement | without | with libnvshim-preload.so | added | ratio |")
    print("|---|---|---|---|---|")
    for name in plain:
        p, s = statistics.median(plain[name]), statistics.median(preloaded[name])
        if name == "compile":
            print(f"| nvrtcCompileProgram, happy path | {p / 1e6:.2f} ms | {s / 1e6:.2f} ms | "
                  f"{(s - p) / 1e3:+.1f} us | {s / p:.4f} |")
        else:
            print(f"| {name} | {p:.0f} ns | {s:.0f} ns | {s - p:+.0f} ns | {s / p:.2f} |")


if __name__ == "__main__":
    main()
