#!/usr/bin/env python3
"""The modules pass on real CUTLASS compiles: nvshim against the real nvcc, alternating.

Each case is a pair of whole compiles of a CUTLASS example from the nvidia-cutlass package,
renamed (modules_rules = false, so no rule helps), run one after the other, the order swapped
every pair:
  - first build: example 54 (Hopper FP8 GEMM) and example 48 (Hopper GEMM) with -arch=sm_90 and
    an empty verdict cache (a new one for each nvshim run: decided before compiling), against the
    correct hand-written build, -gencode arch=compute_90a,code=sm_90a;
  - cached: the same -arch=sm_90 line with the verdict of an earlier build (one nvcc: sm_90a and
    compute_90), against nvcc given that list itself;
  - nothing arch-specific: a kernel of our own with no library (-arch=sm_90, empty cache each
    time: its device code preprocesses the same for sm_90a, so the target stays), against
    plain nvcc;
  - with --ninja: a ninja build of 8 Hopper examples (--ninja-sources, up to 16; -j as the
    machine has CPUs), -arch=sm_90 (--ninja-line arch) or PyTorch's -gencode
    arch=compute_90,code=sm_90 (--ninja-line torch) through nvshim with an empty cache, against
    the same build with hand-written sm_90a lines.
Prints a Markdown table: the median of each, the median per-pair difference and the ratio.

    python3 tests/bench/cutlass_bench.py --nvshim build/nvshim [--nvcc ...] [--pairs 3] [--ninja]
        [--cases first54,first48,first14,cached,plain] [--hand-ptx] [--ninja-line arch|torch]
        [--ninja-sources 8]
"""
import argparse
import glob
import os
import shutil
import site
import statistics
import subprocess
import sys
import tempfile
import time

NINJA_EXAMPLES = ["48_hopper_warp_specialized_gemm", "49_hopper_gemm_with_collective_builder",
                  "50_hopper_gemm_with_epilogue_swizzle", "51_hopper_gett", "52_hopper_gather_scatter_fusion",
                  "53_hopper_gemm_permute", "54_hopper_fp8_warp_specialized_gemm",
                  "63_hopper_gemm_with_weight_prefetch",
                  # --ninja-sources up to 16: the rest of the Hopper examples that build on 13.0
                  "55_hopper_mixed_dtype_gemm/55_hopper_mixed_dtype_gemm.cu", "56_hopper_ptr_array_batched_gemm", "57_hopper_grouped_gemm",
                  "61_hopper_gemm_with_topk_and_softmax", "65_distributed_gemm",
                  "68_hopper_fp8_warp_specialized_grouped_gemm_with_blockwise_scaling",
                  "58_ada_fp8_gemm", "64_ada_fp8_gemm_grouped"]
# what the user's line asks for in the ninja case, and the hand-written line that builds the same
# kernels correctly: -arch=sm_90 asks for compute_90 PTX too (which nvshim keeps for later GPUs;
# --hand-ptx gives the hand-written build the same PTX), PyTorch's TORCH_CUDA_ARCH_LIST=9.0 does not
NINJA_LINES = {"arch": (["-arch=sm_90"], ["-gencode=arch=compute_90a,code=sm_90a"]),
               "torch": (["-gencode=arch=compute_90,code=sm_90"], ["-gencode=arch=compute_90a,code=sm_90a"])}
PLAIN_KERNEL = r"""
__global__ void axpy(float a, const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}
"""


def timed(cmd, env, cwd):
    start = time.perf_counter_ns()
    rc = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    if rc:
        raise SystemExit(f"cutlass_bench: {' '.join(cmd)} failed with {rc}")
    return (time.perf_counter_ns() - start) / 1e6


def cutlass_root():
    for d in site.getsitepackages() + [site.getusersitepackages()] + sys.path:
        for p in glob.glob(d + "/cutlass_library/source"):
            return p
    raise SystemExit("cutlass_bench: no nvidia-cutlass (scripts/install-deps.sh installs it)")


def pairs(n, shim, real, env, work, fresh_cache):
    s, r = [], []
    for i in range(n):
        order = [(shim, s, True), (real, r, False)]
        if i % 2:
            order.reverse()
        for cmd, out, is_shim in order:
            if is_shim and fresh_cache:
                env["NVSHIM_CACHE_DIR"] = tempfile.mkdtemp(dir=work)
            out.append(timed(cmd, env, work))
    return s, r


def ninja_file(path, compiler, sources, flags, targets, incs):
    """incs: each source's own -I (its example's directory: two examples have headers of one name)."""
    with open(path, "w") as f:
        f.write(f"rule cc\n  command = {compiler} {' '.join(flags)} $inc {' '.join(targets)} -c $in -o $out\n")
        for src, inc in zip(sources, incs):
            f.write(f"build {os.path.splitext(src)[0]}.o: cc {src}\n  inc = {inc}\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvshim", required=True)
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--ninja", action="store_true")
    ap.add_argument("--cases", default="first54,first48,cached,plain")
    ap.add_argument("--hand-ptx", action="store_true",
                    help="the hand-written build keeps compute_90 PTX too, as -arch=sm_90 asks")
    ap.add_argument("--ninja-line", choices=sorted(NINJA_LINES), default="arch")
    ap.add_argument("--ninja-sources", type=int, default=8, choices=range(1, len(NINJA_EXAMPLES) + 1))
    a = ap.parse_args()
    c = cutlass_root()
    cases_wanted = set(a.cases.split(","))
    work = tempfile.mkdtemp(prefix="nvshim-cutlass-bench-")
    os.mkdir(os.path.join(work, ".git"))
    shutil.copy(f"{c}/examples/48_hopper_warp_specialized_gemm/48_hopper_warp_specialized_gemm.cu",
                os.path.join(work, "my_gemm.cu"))
    shutil.copy(f"{c}/examples/54_hopper_fp8_warp_specialized_gemm/54_hopper_fp8_warp_specialized_gemm.cu",
                os.path.join(work, "kernels.cu"))
    shutil.copy(f"{c}/examples/14_ampere_tf32_tensorop_gemm/ampere_tf32_tensorop_gemm.cu",
                os.path.join(work, "ampere_gemm.cu"))
    with open(os.path.join(work, "axpy.cu"), "w") as f:
        f.write(PLAIN_KERNEL)
    flags = ["-std=c++17", "--expt-relaxed-constexpr", "-w", f"-I{c}/include", f"-I{c}/tools/util/include",
             f"-I{c}/examples/common", f"-I{c}/examples/54_hopper_fp8_warp_specialized_gemm", "-c"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("NVSHIM_")}
    env.update(HOME=work, NVSHIM_NVCC=os.path.abspath(a.nvcc), NVSHIM_MODULES_RULES="false",
               NVSHIM_VERBOSITY="quiet", NVSHIM_CACHE_DIR=os.path.join(work, "cache"))
    nvshim = os.path.abspath(a.nvshim)
    hand = ["-gencode=arch=compute_90a,code=sm_90a"]
    if a.hand_ptx:
        hand.append("-gencode=arch=compute_90,code=compute_90")
    rows = []
    for key, name, src, fresh in (("first54", "example 54, -arch=sm_90, empty cache / hand-written sm_90a", "kernels.cu", True),
                                  ("first48", "example 48, -arch=sm_90, empty cache / hand-written sm_90a", "my_gemm.cu", True)):
        if key not in cases_wanted:
            continue
        s, r = pairs(a.pairs, [nvshim] + flags + [src, "-o", "f.o", "-arch=sm_90"],
                     [a.nvcc] + flags + [src, "-o", "h.o"] + hand, env, work, fresh)
        rows.append((name, s, r))
    if "first14" in cases_wanted:
        # sm80-style code that nvshim upgrades on purpose (docs/modules.md): against plain nvcc
        s, r = pairs(a.pairs, [nvshim] + flags + ["ampere_gemm.cu", "-o", "f.o", "-arch=sm_90"],
                     [a.nvcc] + flags + ["ampere_gemm.cu", "-o", "h.o", "-arch=sm_90"], env, work, True)
        rows.append(("example 14 (sm80-style), -arch=sm_90, empty cache / plain nvcc", s, r))
    if "cached" in cases_wanted:
        env["NVSHIM_CACHE_DIR"] = os.path.join(work, "cache")
        timed([nvshim] + flags + ["kernels.cu", "-o", "f.o", "-arch=sm_90"], env, work)  # the verdict
        s, r = pairs(a.pairs, [nvshim] + flags + ["kernels.cu", "-o", "f.o", "-arch=sm_90"],
                     [a.nvcc] + flags + ["kernels.cu", "-o", "h.o", "-gencode=arch=compute_90a,code=sm_90a",
                                         "-gencode=arch=compute_90,code=compute_90"], env, work, False)
        rows.append(("example 54, -arch=sm_90, cached / nvcc with sm_90a + compute_90", s, r))
    if "plain" in cases_wanted:
        s, r = pairs(max(a.pairs, 5), [nvshim, "-c", "axpy.cu", "-o", "p.o", "-arch=sm_90"],
                     [a.nvcc, "-c", "axpy.cu", "-o", "q.o", "-arch=sm_90"], env, work, True)
        rows.append(("a kernel with nothing arch-specific, -arch=sm_90, empty cache / plain nvcc", s, r))
    if a.ninja:
        srcs = []
        examples = NINJA_EXAMPLES[:a.ninja_sources]
        line, hand = NINJA_LINES[a.ninja_line]
        if a.hand_ptx and a.ninja_line == "arch":
            hand = hand + ["-gencode=arch=compute_90,code=compute_90"]
        for ex in examples:
            # an example's first source, or the one named (example/source.cu)
            src = f"{c}/examples/{ex}" if ex.endswith(".cu") else sorted(glob.glob(f"{c}/examples/{ex}/*.cu"))[0]
            mine = f"n{len(srcs)}_{os.path.basename(src)}"
            shutil.copy(src, os.path.join(work, mine))
            srcs.append(mine)
        nflags = [f for f in flags if f != "-c" and "/examples/54_" not in f]
        incs = [f"-I{c}/examples/{ex.split('/')[0]}" for ex in examples]
        shim_dir, real_dir = os.path.join(work, "ns"), os.path.join(work, "nr")
        for d in (shim_dir, real_dir):
            os.mkdir(d)
            for src in srcs:
                os.symlink(os.path.join(work, src), os.path.join(d, src))
            os.mkdir(os.path.join(d, ".git"))
        ninja_file(os.path.join(shim_dir, "build.ninja"), nvshim, srcs, nflags, line, incs)
        ninja_file(os.path.join(real_dir, "build.ninja"), a.nvcc, srcs, nflags, hand, incs)
        jobs = str(os.cpu_count() or 2)
        s, r = [], []
        for i in range(a.pairs):
            order = [(shim_dir, s, True), (real_dir, r, False)]
            if i % 2:
                order.reverse()
            for d, out, is_shim in order:
                subprocess.run(["ninja", "-C", d, "-t", "clean"], stdout=subprocess.DEVNULL)
                if is_shim:
                    env["NVSHIM_CACHE_DIR"] = tempfile.mkdtemp(dir=work)
                out.append(timed(["ninja", "-C", d, "-j", jobs], env, work))
        rows.append((f"ninja build of {len(srcs)} Hopper examples, -j{jobs}: {' '.join(line)}, empty cache / hand-written "
                     f"{' + '.join(h.split(',code=')[1] for h in hand)}", s, r))
    shutil.rmtree(work, ignore_errors=True)
    print(f"CUTLASS compiles: {a.pairs} alternating pairs per case, nvcc = {a.nvcc}, {os.cpu_count()} CPUs")
    print()
    print("| case | nvcc (or the hand-written build) median | nvshim median | median added per pair | ratio |")
    print("|---|---|---|---|---|")
    for name, s, r in rows:
        ms, mr = statistics.median(s), statistics.median(r)
        d = statistics.median(x - y for x, y in zip(s, r))
        print(f"| {name} | {mr / 1000:.2f} s | {ms / 1000:.2f} s | {d / 1000:+.3f} s | {ms / mr:.3f} |")


if __name__ == "__main__":
    main()
