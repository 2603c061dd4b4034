#!/usr/bin/env python3
"""nvcc's --threads chosen by nvshim (threads = auto) against plain nvcc, in one run.

    python3 tests/bench/threads_bench.py --nvshim build/nvshim [--nvcc /usr/local/cuda/bin/nvcc]
        [--pairs 3] [--sources 36] [--cases lone,batch,build,memory]

The same command runs on the 2-core test machine and on the 16-core GPU machine: every count
(cores, -j) comes from the CPUs this process may use. Cases, each alternating which side goes
first, printing medians and ratios as Markdown:

  lone    one 7-target compile of a source with real device work (unrolled templates), nvshim
          (zero configuration) against plain nvcc. Goal: <= 0.6 on 2 cores.
  batch   as many such compiles at once as cores (make -jN style). A sampler counts the cicc and
          ptxas processes below this script every 5 ms: the peak through nvshim must not exceed
          the cores. Goal: wall ratio <= 1.10.
  build   a ninja build of --sources small 7-target sources with -j<cores>: nvshim (zero
          configuration) against plain nvcc, and against the best of a grid of hand-tuned
          (-j, --threads) pairs with plain nvcc. Goal: within 5 % of the best pair.
  memory  the peak RSS of nvcc's largest child (cicc or ptxas) for one target of the lone
          source, and of a 7-target compile with --threads 7 (the figure behind THREADS_PASS_MB).

nvshim runs with a private cache directory (its slots live there) and its settings cleared.
Exit status 1 when a hard check fails (the peak over the cores, objects with other targets).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

TARGETS = ["75", "80", "86", "89", "90", "100", "120"]
GENCODE = [a for t in TARGETS for a in ("-gencode", "arch=compute_%s,code=sm_%s" % (t, t))]

# Unrolled templates: each target keeps cicc and ptxas busy for a second or two.
WORK = r"""
template <int N> struct Step {
	__device__ static float run(float x, const float *t) {
		float y = Step<N - 1>::run(x, t);
#pragma unroll
		for (int i = 0; i < 8; i++) y = fmaf(y, t[(N * 8 + i) & 255], sinf(y + i * N));
		return y;
	}
};
template <> struct Step<0> { __device__ static float run(float x, const float *) { return x; } };
template <int N> __global__ void kern(float *out, const float *in, const float *t) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	out[i] = Step<N>::run(in[i], t);
}
"""


def source(depths):
    return WORK + "".join("template __global__ void kern<%d>(float *, const float *, const float *);\n" % d
                          for d in depths)


def cpus():
    return len(os.sched_getaffinity(0))


class Sampler(threading.Thread):
    """Counts the cicc and ptxas processes that descend from this script, every 5 ms."""

    def __init__(self):
        super().__init__(daemon=True)
        self.peak = 0
        self.stop = False
        self.me = os.getpid()

    def sample(self):
        parent, comm = {}, {}
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % pid) as f:
                    st = f.read()
            except OSError:
                continue
            close = st.rfind(")")
            fields = st[close + 2:].split()
            if fields and fields[0] not in "ZTX":
                parent[int(pid)] = int(fields[1])
                comm[int(pid)] = st[st.find("(") + 1:close]
        n = 0
        for pid, name in comm.items():
            if name not in ("cicc", "ptxas"):
                continue
            p, hops = pid, 0
            while p > 1 and p != self.me and hops < 64:
                p, hops = parent.get(p, 0), hops + 1
            n += p == self.me
        return n

    def run(self):
        while not self.stop:
            self.peak = max(self.peak, self.sample())
            time.sleep(0.005)


def timed(cmds, env, cwd, sample=False):
    """Runs the commands at once; returns (wall seconds, peak cicc+ptxas)."""
    s = Sampler() if sample else None
    if s:
        s.start()
    t0 = time.monotonic()
    procs = [subprocess.Popen(c, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for c in cmds]
    for p in procs:
        _, err = p.communicate()
        if p.returncode:
            sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmds[procs.index(p)]), err.decode()))
    wall = time.monotonic() - t0
    if s:
        s.stop = True
        s.join()
    return wall, (s.peak if s else 0)


def table(title, rows):
    print("\n### %s\n" % title)
    print("| case | nvshim | plain nvcc | ratio |\n|---|---|---|---|")
    for r in rows:
        print("| %s | %.2f s | %.2f s | %.2f |" % r)


def envs(a, tmp):
    plain = {k: v for k, v in os.environ.items() if not k.startswith("NVSHIM_")
             and k not in ("NVCC_APPEND_FLAGS", "NVCC_PREPEND_FLAGS", "MAKEFLAGS", "MFLAGS")}
    shim = dict(plain, XDG_CACHE_HOME=os.path.join(tmp, "cache"), XDG_CONFIG_HOME=os.path.join(tmp, "config"),
                NVSHIM_NVCC=a.nvcc)
    return plain, shim


def lone(a, tmp, nv, plain, shim):
    src = os.path.join(tmp, "lone.cu")
    with open(src, "w") as f:
        f.write(source([12, 13]))
    ts, tp = [], []
    for i in range(a.pairs + 1):  # the first pair warms the caches and is dropped
        order = [("shim", nv, shim), ("plain", a.nvcc, plain)]
        if i % 2:
            order.reverse()
        for side, exe, env in order:
            w, _ = timed([[exe, "-c", src, "-o", os.path.join(tmp, side + ".o")] + GENCODE], env, tmp)
            if i:
                (ts if side == "shim" else tp).append(w)
    ms, mp = statistics.median(ts), statistics.median(tp)
    table("lone 7-target compile, %d CPUs, %d pairs (medians)" % (cpus(), a.pairs),
          [("one compile", ms, mp, ms / mp)])
    return ms / mp


def batch(a, tmp, nv, plain, shim):
    n = cpus()
    srcs = []
    for i in range(n):
        p = os.path.join(tmp, "b%d.cu" % i)
        with open(p, "w") as f:
            f.write(source([10 + i % 3]))
        srcs.append(p)
    ts, tp, peaks_s, peaks_p = [], [], [], []
    for i in range(a.pairs):
        order = [("shim", nv, shim), ("plain", a.nvcc, plain)]
        if i % 2:
            order.reverse()
        for side, exe, env in order:
            cmds = [[exe, "-c", s, "-o", s + "." + side + ".o"] + GENCODE for s in srcs]
            w, peak = timed(cmds, env, tmp, sample=True)
            (ts if side == "shim" else tp).append(w)
            (peaks_s if side == "shim" else peaks_p).append(peak)
    ms, mp = statistics.median(ts), statistics.median(tp)
    table("%d concurrent 7-target compiles on %d CPUs, %d pairs (medians)" % (n, n, a.pairs),
          [("batch", ms, mp, ms / mp)])
    print("\npeak cicc+ptxas at once: nvshim %d, plain nvcc %d (cores: %d)" % (max(peaks_s), max(peaks_p), n))
    return max(peaks_s) <= n


NINJA = """rule cu
  command = {nvcc} -c $in -o $out {flags}
  description = CU $out
"""


def build(a, tmp, nv, plain, shim):
    if not shutil.which("ninja"):
        print("\n(build: ninja is not installed; skipped)")
        return True
    n = cpus()
    d = os.path.join(tmp, "proj")
    os.makedirs(d, exist_ok=True)
    for i in range(a.sources):
        with open(os.path.join(d, "s%02d.cu" % i), "w") as f:
            f.write(source([3 + i % 5]))

    def run(exe, env, j, t):
        flags = " ".join(GENCODE + (["--threads", str(t)] if t else []))
        with open(os.path.join(d, "build.ninja"), "w") as f:
            f.write(NINJA.format(nvcc=exe, flags=flags))
            for i in range(a.sources):
                f.write("build s%02d.o: cu s%02d.cu\n" % (i, i))
        subprocess.run(["ninja", "-C", d, "-t", "clean"], stdout=subprocess.DEVNULL, check=True)
        w, peak = timed([["ninja", "-C", d, "-j", str(j)]], env, d, sample=True)
        return w, peak

    grid = sorted({(n, 2), (max(1, n // 2), 2), (max(1, n // 2), 4), (max(1, n // 4), 7), (2 * n, 1)})
    results = {("nvshim", n, 0): [], ("plain", n, 0): []}
    for jt in grid:
        results[("plain",) + jt] = []
    peaks = []
    for i in range(a.pairs):
        keys = list(results)
        if i % 2:
            keys.reverse()
        for k in keys:
            side, j, t = k
            w, peak = run(nv if side == "nvshim" else a.nvcc, shim if side == "nvshim" else plain, j, t)
            results[k].append(w)
            if side == "nvshim":
                peaks.append(peak)
    med = {k: statistics.median(v) for k, v in results.items()}
    shim_w, plain_w = med[("nvshim", n, 0)], med[("plain", n, 0)]
    best = min((v, k) for k, v in med.items() if k[0] == "plain")
    print("\n### ninja build of %d 7-target sources, %d CPUs, %d rounds (medians)\n" % (a.sources, n, a.pairs))
    print("| build | wall | nvshim / this |\n|---|---|---|")
    for k, v in sorted(med.items(), key=lambda kv: kv[1]):
        name = "nvshim, ninja -j%d (zero configuration)" % n if k[0] == "nvshim" else \
            "plain nvcc, ninja -j%d%s" % (k[1], ", --threads %d" % k[2] if k[2] else "")
        print("| %s | %.2f s | %.2f |" % (name, v, shim_w / v))
    print("\nnvshim / plain -j%d: %.2f; nvshim / best hand-tuned pair (-j%d%s): %.2f; peak cicc+ptxas through "
          "nvshim: %d (cores %d)" % (n, shim_w / plain_w, best[1][1], ", -t %d" % best[1][2] if best[1][2] else "",
                                     shim_w / best[0], max(peaks), n))
    return max(peaks) <= n


def memory(a, tmp, plain):
    src = os.path.join(tmp, "mem.cu")
    with open(src, "w") as f:
        f.write(source([12, 13]))
    print("\n### memory: peak RSS of nvcc's largest child\n\n| compile | peak RSS |\n|---|---|")
    for label, extra in (("one target (sm_90)", ["-arch=sm_90"]), ("7 targets, one at a time", GENCODE),
                         ("7 targets, --threads 7", GENCODE + ["--threads", "7"])):
        # GNU time's %M is the largest RSS among the process and its children, each in its own run
        out = subprocess.run(["/usr/bin/time", "-f", "%M", a.nvcc, "-c", src, "-o", os.path.join(tmp, "m.o")] + extra,
                             env=plain, check=True, stderr=subprocess.PIPE, text=True).stderr.strip().splitlines()[-1]
        print("| %s | %.0f MiB |" % (label, int(out) / 1024))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nvshim", required=True)
    p.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--sources", type=int, default=36)
    p.add_argument("--cases", default="lone,batch,build,memory")
    a = p.parse_args()
    a.nvcc = os.path.realpath(a.nvcc)
    nv = os.path.join(os.path.dirname(os.path.abspath(a.nvshim)), "libexec", "nvshim", "bin", "nvcc")
    cases = a.cases.split(",")
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        plain, shim = envs(a, tmp)
        print("# nvshim threads benchmark: %d CPUs usable, load %s, nvcc %s" %
              (cpus(), open("/proc/loadavg").read().split()[0], a.nvcc))
        if "lone" in cases:
            lone(a, tmp, nv, plain, shim)
        if "batch" in cases:
            ok &= batch(a, tmp, nv, plain, shim)
        if "build" in cases:
            ok &= build(a, tmp, nv, plain, shim)
        if "memory" in cases and shutil.which("/usr/bin/time"):
            memory(a, tmp, plain)
    if not ok:
        print("\nFAILED: more cicc+ptxas at once through nvshim than cores")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
