#!/usr/bin/env python3
"""The differential matrix: every path through nvshim against plain nvcc.

Each case is a combination of five dimensions (DIMENSIONS below): the name nvshim runs under,
the build shape, the targets, the layer of nvshim's that acts, and the front (direct, ccache,
sccache). The case's command runs through nvshim in a fresh copy of the fixtures; its oracle is
the same intent built by plain nvcc, behind the same front, with the line a user would have
fixed by hand (`oracle()`:
the dropped target left out, `-arch=native` made the GPU's, the source migrated, `-lcuda`
added, `sm_90` written `sm_90a`, the stub target left out). The two must agree on:

  - the exit status;
  - the set of files the command wrote (names and places);
  - the targets in each object, library, program, fatbin and cubin (`nvshim inspect --json`:
    each image's target and kind) and each PTX file's `.target`;
  - the dependencies each dependency file lists;
  - what each program prints on this machine, and its status.

The cases are generated, not listed: `pairs` is a covering array of every pair of values of
any two dimensions (greedy, seeded, over the valid combinations: CC mode takes gcc's shapes
only), `all` the whole product. The quick run (tests/run-all.sh) samples SAMPLE cases of the
pairs; `--full` (CI) runs every pair. `--all` runs the product (hours on 2 cores).

usage: matrix.py NVSHIM NVCC [--sample N | --pairs | --all] [--seed S] [--only REGEX] [--range A:B] [--list]
Prints TAP-like lines (`ok - ...`, `not ok - ...`) and `N passed, N failed, N skipped`.
"""
import argparse
import itertools
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

DIMENSIONS = {
    "name": ["nvcc", "nvshim", "cc", "c++"],
    "shape": ["c", "link1", "linkN", "aout", "odir", "lib", "shared", "rdc", "dc-dlink", "E", "M", "MD",
              "ptx", "cubin", "fatbin", "atfile", "optf"],
    "targets": ["none", "arch", "native", "gencode-dropped", "code-ptx"],
    "layer": ["none", "compat", "lcuda", "upgrade", "stub", "dropped"],
    "front": ["direct", "ccache", "sccache"],
}
# gcc's shapes: what CC mode (cc, c++) is given by a build written for gcc.
CC_SHAPES = {"c", "link1", "linkN", "aout", "shared", "E", "MD"}

# ---- the fixtures: main.cu by layer, a.cu beside it ----

HEAD = "#include <cstdio>\n#include <cstring>\n#include <cuda_runtime.h>\n"
KERNEL = "__global__ void k(int *p) { p[threadIdx.x] = threadIdx.x; }\n"
# The kernel's launch, where there is a GPU (tests/gpu/matrix.sh): what it computed, or the
# error (no kernel image for this GPU, ...), printed by the program.
LAUNCH_K = """static void launch() {
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
		std::printf("no device\\n");
		return;
	}
	int *d = nullptr, h[32];
	std::memset(h, 0xff, sizeof(h));
	cudaMalloc(&d, sizeof(h));
	cudaMemset(d, 0xff, sizeof(h));
	k<<<1, 32>>>(d);
	cudaError_t r = cudaDeviceSynchronize();
	cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
	std::printf("kernel: %s %d %d\\n", cudaGetErrorName(r), h[1], h[31]);
	cudaFree(d);
}
"""
MAIN = {
    "none": HEAD + KERNEL + LAUNCH_K + """int main() {
	launch();
	return 0;
}
""",
    # reads a field CUDA 13 removed: the compatibility layer restores it
    "compat": HEAD + KERNEL + LAUNCH_K + """int main() {
	cudaDeviceProp p;
	std::memset(&p, 0, sizeof(p));
	cudaError_t e = cudaGetDeviceProperties(&p, 0);
	std::printf("properties: %s\\n", e == cudaSuccess ? (p.clockRate > 0 ? "clock" : "no clock") : "no device");
	launch();
	return 0;
}
""",
    # host code that calls the driver API, linked without -lcuda: the link pass adds it
    "lcuda": HEAD + "#include <cuda.h>\n" + KERNEL + LAUNCH_K + """int main() {
	int v = 0;
	CUresult r = cuDriverGetVersion(&v);
	std::printf("driver: %s\\n", r == CUDA_SUCCESS ? "yes" : "no");
	launch();
	return 0;
}
""",
    # wgmma, which only sm_90a has: a plain sm_90 is upgraded
    "upgrade": HEAD + """__global__ void k(int *p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");
#endif
	p[threadIdx.x] = threadIdx.x;
}
""" + LAUNCH_K + """int main() { launch(); return 0; }
""",
    # library code in the Marlin style (inc/marlin.cuh, through -isystem): its body only for
    # sm_80 and up, an empty stub below; with n = 0 the body writes zeros, the stub nothing
    "stub": HEAD + """#include <marlin.cuh>
template __global__ void marlin_like<16>(const float *, float *, int);
int main() {
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
		std::printf("no device\\n");
		return 0;
	}
	float *a = nullptr, *c = nullptr, h[16];
	cudaMalloc(&a, 64 * sizeof(float));
	cudaMalloc(&c, sizeof(h));
	cudaMemset(c, 0x7f, sizeof(h));
	marlin_like<16><<<1, 32>>>(a, c, 0);
	cudaError_t r = cudaDeviceSynchronize();
	cudaMemcpy(h, c, sizeof(h), cudaMemcpyDeviceToHost);
	std::printf("kernel: %s %g\\n", cudaGetErrorName(r), h[0]);
	return 0;
}
""",
    "dropped": None,  # "none"'s source; the layer is the target list's
}
MAIN["dropped"] = MAIN["none"]
A_CU = """#include <cuda_runtime.h>
__global__ void ka(float *x) { x[threadIdx.x] += 1.0f; }
extern "C" int run_a(float *x) { ka<<<1, 32>>>(x); return (int)cudaGetLastError(); }
"""
# Under the upgrade and stub layers a.cu is of the same kind as main.cu, so that one hand-fixed
# line is the oracle of every shape (per-source lists are the modules suite's).
A_CU_OF = {
    "upgrade": """#include <cuda_runtime.h>
__global__ void ka(float *x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");
#endif
	x[threadIdx.x] += 1.0f;
}
extern "C" int run_a(float *x) { ka<<<1, 32>>>(x); return (int)cudaGetLastError(); }
""",
    "stub": """#include <marlin.cuh>
template __global__ void marlin_like<32>(const float *, float *, int);
""",
}

# the Marlin-style library header of the stubs suite
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "stubs", "inc", "marlin.cuh")) as _f:
    MARLIN = _f.read()

# ---- the cases ----


def valid(c):
    """Whether a combination is a build someone would run."""
    if c.get("name") in ("cc", "c++") and c.get("shape", "c") not in CC_SHAPES:
        return False
    # sccache 0.16 builds no -ptx, -cubin or -fatbin (with plain nvcc it writes main.o, or fails
    # hashing a file it expects): nobody runs them through it
    if c.get("front") == "sccache" and c.get("shape") in ("ptx", "cubin", "fatbin"):
        return False
    return True


def covering_pairs(seed):
    """Every pair of values of any two dimensions, each in at least one valid case (greedy)."""
    dims = list(DIMENSIONS)
    rng = random.Random(seed)
    want = set()
    for a, b in itertools.combinations(range(len(dims)), 2):
        for va in DIMENSIONS[dims[a]]:
            for vb in DIMENSIONS[dims[b]]:
                c = {dims[a]: va, dims[b]: vb}
                # a pair no valid case has is not wanted (CC mode with -lib)
                if valid(c):
                    want.add((a, va, b, vb))
    cases = []
    while want:
        best, best_n = None, -1
        (a0, va0, b0, vb0) = sorted(want)[rng.randrange(len(want))]
        for _ in range(60):
            c = {d: rng.choice(DIMENSIONS[d]) for d in dims}
            c[dims[a0]], c[dims[b0]] = va0, vb0
            # improve each free dimension in turn
            for i, d in enumerate(dims):
                if i in (a0, b0):
                    continue
                scores = []
                for v in DIMENSIONS[d]:
                    c[d] = v
                    if not valid(c):
                        continue
                    scores.append((new_pairs(c, dims, want), rng.random(), v))
                c[d] = max(scores)[2] if scores else c[d]
            if not valid(c):
                continue
            n = new_pairs(c, dims, want)
            if n > best_n:
                best, best_n = dict(c), n
        if best is None or best_n <= 0:
            want.discard((a0, va0, b0, vb0))
            continue
        for a, b in itertools.combinations(range(len(dims)), 2):
            want.discard((a, best[dims[a]], b, best[dims[b]]))
        cases.append(best)
    return cases


def new_pairs(c, dims, want):
    return sum((a, c[dims[a]], b, c[dims[b]]) in want for a, b in itertools.combinations(range(len(dims)), 2))


def all_cases():
    dims = list(DIMENSIONS)
    for vals in itertools.product(*(DIMENSIONS[d] for d in dims)):
        c = dict(zip(dims, vals))
        if valid(c):
            yield c


def known_gap(c):
    """A combination nvshim does not yet get right, with why: reported as a TODO, not a failure
    (found by --all; each is a case to fix). None today: the last one, a stub target behind
    sccache in a compile-only shape, is decided before the compile (modules_decide())."""
    return None


def case_id(c):
    return "%s %s %s %s %s" % (c["name"], c["shape"], c["targets"], c["layer"], c["front"])


# ---- the command lines ----


def target_args(c, side):
    """The target options, as the case gives them (side 'shim') or as a user fixes them ('plain')."""
    t, layer = c["targets"], c["layer"]
    args = []
    if t == "arch":
        args = ["-arch=sm_80"]
    elif t == "native":
        # nvcc's -arch=native: each GPU's SASS, no PTX (the machine's GPU, else sm_80 through
        # NVSHIM_DEVICES)
        cc = GPU_CC or 80
        args = ["-arch=native"] if side == "shim" else ["-gencode", "arch=compute_%d,code=sm_%d" % (cc, cc)]
    elif t == "gencode-dropped":
        args = (["-gencode", "arch=compute_70,code=sm_70"] if side == "shim" else []) + \
            ["-gencode", "arch=compute_80,code=sm_80"]
    elif t == "code-ptx":
        args = ["-gencode", "arch=compute_80,code=[sm_80,compute_80]"]
    if layer == "upgrade":
        args += ["-gencode", "arch=compute_90,code=sm_90" if side == "shim" else "arch=compute_90a,code=sm_90a"]
    elif layer == "stub":
        args = ["-isystem", "inc"] + args
        # -ptx and -cubin write one code: with the stub target beside another, nvcc refuses the
        # line before anything is built, so nothing can show the stub and the user keeps it
        if side == "shim" or len(args) == 2 or c["shape"] in ("ptx", "cubin"):
            args += ["-gencode", "arch=compute_75,code=sm_75"]
    elif layer == "dropped":
        if side == "shim":
            args += ["-gencode", "arch=compute_70,code=sm_70"]
        # the only target nvcc 13.0 does not have: the user writes the GPU's instead (on a GPU
        # machine), else deletes it and nvcc builds for its default
        elif not args and GPU_CC:
            args = ["-gencode", "arch=compute_%d,code=sm_%d" % (GPU_CC, GPU_CC)]
    if side == "plain" and GPU_CC and c["shape"] not in ("ptx", "cubin") and t != "native" and \
            not runs_on(args, GPU_CC):
        # on a GPU machine, a list nothing of which runs on its GPU gets the GPU's target (and
        # then the stub target, kept only as the one target, goes: the GPU's has the code)
        if layer == "stub" and args[-2:] == ["-gencode", "arch=compute_75,code=sm_75"] and \
                c["shape"] not in ("ptx", "cubin"):
            args = args[:-2]
        args += ["-gencode", "arch=compute_%d,code=sm_%d" % (GPU_CC, GPU_CC)]
    return args


def runs_on(args, cc):
    """Whether a target list (nvcc's options) has code a GPU of compute capability cc runs: SASS
    of its major at or below it (an a form: its own only), or PTX at or below it; no target
    option is nvcc's default (sm_75 and compute_75)."""
    codes = []
    for i, a in enumerate(args):
        if a.startswith("-arch=sm_"):
            n = a[len("-arch=sm_"):]
            codes += ["sm_" + n, "compute_" + n.rstrip("af")]
        elif a == "-gencode":
            m = re.match(r"arch=compute_\w+,code=\[?([\w,]+)\]?", args[i + 1])
            codes += m.group(1).split(",") if m else []
    if not codes:
        codes = ["sm_75", "compute_75"]
    for code in codes:
        kind, num = code.split("_")
        suffix = num[-1] if num[-1] in "af" else ""
        v = int(num.rstrip("af"))
        if kind == "compute" and v <= cc and not suffix:
            return True
        if kind == "sm" and (v == cc if suffix else v // 10 == cc // 10 and v <= cc):
            return True
    return False


LINKS = {"link1", "linkN", "aout", "shared", "rdc", "atfile", "optf"}


def gpu_cc():
    """The compute capability of this machine's first GPU (90), or None."""
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=60)
        return int(r.stdout.split()[0].replace(".", "")) if r.returncode == 0 and r.stdout.strip() else None
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


GPU_CC = gpu_cc()


def commands(c, side):
    """The case's commands (a list of argument lists, without the tool) and the files it needs."""
    t = target_args(c, side)
    lib = ["-lcuda"] if side == "plain" and c["layer"] == "lcuda" and c["shape"] in LINKS else []
    s = c["shape"]
    files = {}
    if s == "c":
        cmds = [t + ["-c", "main.cu"]]
    elif s == "link1":
        cmds = [t + ["-o", "app", "main.cu"] + lib]
    elif s == "linkN":
        cmds = [t + ["-o", "app", "main.cu", "a.cu"] + lib]
    elif s == "aout":
        cmds = [t + ["main.cu"] + lib]
    elif s == "odir":
        cmds = [t + ["-odir", "out", "-c", "main.cu", "a.cu"]]
    elif s == "lib":
        cmds = [t + ["-lib", "-o", "libk.a", "main.cu", "a.cu"]]
    elif s == "shared":
        cmds = [t + ["-shared", "-Xcompiler", "-fPIC", "-o", "libk.so", "main.cu"] + lib]
        if c["name"] in ("cc", "c++") and side == "shim":
            cmds = [t + ["-shared", "-fPIC", "-o", "libk.so", "main.cu"] + lib]
    elif s == "rdc":
        cmds = [t + ["-rdc=true", "-o", "app", "main.cu", "a.cu"] + lib]
    elif s == "dc-dlink":
        cmds = [t + ["-dc", "main.cu", "a.cu"], t + ["-dlink", "-o", "dlink.o", "main.o", "a.o"]]
    elif s == "E":
        cmds = [t + ["-E", "-o", "main.ii", "main.cu"]]
    elif s == "M":
        cmds = [t + ["-M", "-o", "main.d", "main.cu"]]
    elif s == "MD":
        cmds = [t + ["-MD", "-MF", "main.d", "-c", "-o", "main.o", "main.cu"]]
    elif s == "ptx":
        cmds = [t + ["-ptx", "main.cu"]]
    elif s == "cubin":
        cmds = [t + ["-cubin", "main.cu"]]
    elif s == "fatbin":
        cmds = [t + ["-fatbin", "main.cu"]]
    elif s == "atfile":
        files["args.rsp"] = " ".join(t + ["-o", "app", "main.cu"] + lib) + "\n"
        # nvcc reads no @file and refuses the line: nvshim gives nvcc's answer
        cmds = [["@args.rsp"]]
    elif s == "optf":
        files["args.opt"] = " ".join(t + ["-o", "app", "main.cu", "a.cu"] + lib) + "\n"
        cmds = [["-optf", "args.opt"]]
    else:
        raise ValueError(s)
    return cmds, files


# ---- running one side ----


class Env:
    def __init__(self, nvshim, nvcc, work):
        self.nvshim = os.path.abspath(nvshim)
        self.nvcc = nvcc
        self.work = work
        build = os.environ.get("NVSHIM_BUILD_DIR") or os.path.dirname(self.nvshim)
        if not os.path.isdir(os.path.join(build, "libexec")):
            build = os.path.dirname(build)  # an install: bin/nvshim beside libexec/
        self.names = {
            "nvcc": os.path.join(build, "libexec/nvshim/bin/nvcc"),
            "nvshim": self.nvshim,
            "cc": os.path.join(build, "libexec/nvshim/cc/cc"),
            "c++": os.path.join(build, "libexec/nvshim/cc/c++"),
        }
        self.base_env = dict(os.environ)
        self.base_env["NVSHIM_CACHE_DIR"] = os.path.join(work, "nvshim-cache")
        self.base_env["CCACHE_DIR"] = os.path.join(work, "ccache")
        self.base_env["CCACHE_CONFIGPATH"] = os.path.join(work, "ccache.conf")
        self.base_env["CCACHE_COMPILERCHECK"] = "%compiler% --nvshim-fingerprint"
        open(self.base_env["CCACHE_CONFIGPATH"], "w").close()
        self.sccache = shutil.which("sccache")
        self.ccache = shutil.which("ccache")
        self.sccache_started = False
        self.inspect_cache = {}

    def start_sccache(self):
        if self.sccache_started or not self.sccache:
            return self.sccache_started
        import socket
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        conf = os.path.join(self.work, "sccache.toml")
        open(conf, "w").close()
        self.base_env.update(SCCACHE_DIR=os.path.join(self.work, "sccache"), SCCACHE_SERVER_PORT=str(port),
                             SCCACHE_CONF=conf, SCCACHE_IDLE_TIMEOUT="0",
                             SCCACHE_ERROR_LOG=os.path.join(self.work, "sccache.log"))
        r = subprocess.run([self.sccache, "--start-server"], env=self.base_env, capture_output=True)
        self.sccache_started = r.returncode == 0
        return self.sccache_started

    def stop(self):
        if self.sccache_started:
            subprocess.run([self.sccache, "--stop-server"], env=self.base_env, capture_output=True)

    def fixtures(self, c, side, d):
        os.makedirs(d)
        os.makedirs(os.path.join(d, "out"))
        with open(os.path.join(d, "main.cu"), "w") as f:
            f.write(MAIN[c["layer"]])
        os.makedirs(os.path.join(d, "inc"))
        with open(os.path.join(d, "inc", "marlin.cuh"), "w") as f:
            f.write(MARLIN)
        with open(os.path.join(d, "a.cu"), "w") as f:
            f.write(A_CU_OF.get(c["layer"], A_CU))
        if side == "plain" and c["layer"] == "compat":
            # the user's lasting fix: the source migrated
            r = subprocess.run([self.nvshim, "migrate", "--apply", "main.cu"], cwd=d, env=self.base_env,
                               capture_output=True, text=True)
            if r.returncode:
                raise RuntimeError("nvshim migrate --apply main.cu: %s" % r.stderr)

    def run_side(self, c, side, d):
        """Runs the case's commands; returns (status, stderr of the last command)."""
        self.fixtures(c, side, d)
        cmds, files = commands(c, side)
        for name, text in files.items():
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        env = dict(self.base_env)
        # each case a build of its own: nothing one case learnt decides another's
        env["NVSHIM_CACHE_DIR"] = os.path.join(os.path.dirname(d), "nvshim-cache")
        if side == "shim" and c["targets"] == "native" and not GPU_CC:
            env["NVSHIM_DEVICES"] = "80"
        # the oracle runs behind the same front: what the front itself does to a line is the
        # same on both sides
        tool = [self.nvcc] if side == "plain" else [self.names[c["name"]]]
        if c["front"] == "ccache":
            tool = [self.ccache] + tool
            if side == "plain":
                del env["CCACHE_COMPILERCHECK"]
        elif c["front"] == "sccache":
            tool = [self.sccache] + tool
        before = set(list_files(d))
        status, err = 0, ""
        for args in cmds:
            r = subprocess.run(tool + args, cwd=d, env=env, capture_output=True, text=True, errors="replace",
                               timeout=600)
            status, err = r.returncode, r.stdout + r.stderr
            if status:
                break
        made = sorted(set(list_files(d)) - before)
        return status, err, made

    def signature(self, d, made):
        """What the run built: for each file, its kind of contents."""
        sig = {}
        for rel in made:
            p = os.path.join(d, rel)
            base = os.path.basename(rel)
            if base.endswith(".ptx"):
                with open(p, errors="replace") as f:
                    sig[rel] = "ptx " + " ".join(re.findall(r"^\.target\s+(\S+)", f.read(), re.M))
            elif base.endswith(".d"):
                with open(p, errors="replace") as f:
                    text = f.read().replace("\\\n", " ")
                deps = set()
                for line in text.splitlines():
                    if ":" in line:
                        # the compatibility layer's own headers are dependencies of what it
                        # built, which the hand-fixed build does not have
                        deps |= {os.path.basename(w) for w in line.split(":", 1)[1].split()
                                 if "/nvshim/compat/" not in w}
                sig[rel] = "deps " + " ".join(sorted(deps))
            elif base.endswith((".ii", ".i", ".cup")):
                sig[rel] = "preprocessed"
            elif base.endswith((".o", ".a", ".so", ".fatbin", ".cubin")) or base in ("app", "a.out"):
                sig[rel] = self.inspect(p)
                if base in ("app", "a.out"):
                    r = subprocess.run(["./" + rel], cwd=d, capture_output=True, text=True, timeout=60,
                                       errors="replace")
                    sig[rel] += " | runs: status %d, prints %r" % (r.returncode, r.stdout)
            else:
                sig[rel] = "file"
        return sig

    def inspect(self, path):
        r = subprocess.run([self.nvshim, "inspect", "--json", "--no-kernels", path], capture_output=True, text=True,
                           env=self.base_env)
        try:
            j = json.loads(r.stdout)
            f = j["files"][0]
            imgs = sorted({"%s:%s" % (i["target"], i["kind"]) for i in f.get("images", [])})
            return "%s [%s]" % (f.get("kind"), " ".join(imgs))
        except (ValueError, KeyError, IndexError):
            return "inspect failed: %s" % r.stderr.strip()[-200:]


def list_files(d):
    for root, dirs, files in os.walk(d):
        for f in files:
            yield os.path.relpath(os.path.join(root, f), d)


def compare(env, c, work):
    d_shim = os.path.join(work, "shim")
    d_plain = os.path.join(work, "plain")
    # both sides build in one directory, one after the other: nvcc derives relocatable code's
    # module ids from the source's absolute path
    d_run = os.path.join(work, "run")
    st_s, err_s, made_s = env.run_side(c, "shim", d_run)
    os.rename(d_run, d_shim)
    st_p, err_p, made_p = env.run_side(c, "plain", d_run)
    os.rename(d_run, d_plain)
    why = []
    if st_s != st_p:
        why.append("status: nvshim %d, plain nvcc %d" % (st_s, st_p))
    if made_s != made_p:
        why.append("files: nvshim %s, plain nvcc %s" % (made_s, made_p))
    sig_s = env.signature(d_shim, made_s)
    sig_p = env.signature(d_plain, made_p)
    for rel in sorted(set(sig_s) & set(sig_p)):
        if sig_s[rel] != sig_p[rel]:
            why.append("%s: nvshim %s; plain nvcc %s" % (rel, sig_s[rel], sig_p[rel]))
    # nothing of nvshim's in what the build wrote: no path into its cache or its install
    # (docs/build-systems.md#what-a-build-leaves)
    own = [os.path.join(work, "nvshim-cache"), os.path.realpath(os.path.join(os.path.dirname(env.names["nvcc"]), "../..")),
           "/include/nvshim/"]
    for rel in made_s:
        with open(os.path.join(d_shim, rel), "rb") as f:
            data = f.read()
        for o in own:
            if o.encode() in data:
                why.append("%s names %s" % (rel, o))
    # nothing to fix (the same line on both sides, no layer acting): the device code is plain's,
    # byte for byte, section by section
    if c["layer"] == "none" and commands(c, "shim") == commands(c, "plain"):
        for rel in sorted(set(made_s) & set(made_p)):
            a, b = device_code(os.path.join(d_shim, rel)), device_code(os.path.join(d_plain, rel))
            for sec in sorted(set(a) | set(b)):
                if a.get(sec) != b.get(sec):
                    why.append("%s: section %s differs from plain nvcc's (%s and %s bytes)" % (
                        rel, sec, len(a.get(sec) or b""), len(b.get(sec) or b"")))
    if why:
        why.append("nvshim printed: " + " | ".join(err_s.strip().splitlines()[-6:]))
        why.append("plain nvcc printed: " + " | ".join(err_p.strip().splitlines()[-4:]))
    return why


# ELF sections that hold device code or name it; the rest of an object (symbol names with nvcc's
# random temporary names) differs between two plain runs too
DEVICE_SECTIONS = (".nv_fatbin", "__nv_module_id", ".nv_module_id", ".nvFatBinSegment", "__nv_relfatbin")


def device_code(path):
    """{section: bytes} of the device code in an object, library member, program or shared
    library; {"file": bytes} for a .fatbin, .cubin or .ptx; {} for anything else."""
    base = os.path.basename(path)
    if base.endswith((".fatbin", ".cubin", ".ptx")):
        with open(path, "rb") as f:
            return {"file": f.read()}
    if not base.endswith((".o", ".a", ".so")) and base not in ("app", "a.out"):
        return {}
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        members = [path]
        if base.endswith(".a"):
            subprocess.run(["ar", "x", os.path.abspath(path)], cwd=tmp, capture_output=True)
            members = sorted(os.path.join(tmp, m) for m in os.listdir(tmp))
        # a library's members are named after nvcc's random temporary files
        # (tmpxft_00003cc6_00000000-13_main.o): named here by what follows the random part
        for m in members:
            for sec in DEVICE_SECTIONS:
                dst = os.path.join(tmp, "section.bin")
                r = subprocess.run(["objcopy", "-O", "binary", "--only-section=" + sec, m, dst],
                                   capture_output=True)
                if r.returncode == 0 and os.path.exists(dst) and os.path.getsize(dst):
                    with open(dst, "rb") as f:
                        member = re.sub(r"^tmpxft_[0-9a-f]+_[0-9a-f]+-\d+_", "", os.path.basename(m))
                        out["%s%s" % (member + ":" if m != path else "", sec)] = f.read()
                if os.path.exists(dst):
                    os.unlink(dst)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("nvshim")
    ap.add_argument("nvcc")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--sample", type=int)
    g.add_argument("--pairs", action="store_true")
    g.add_argument("--all", action="store_true")
    ap.add_argument("--half", type=int, help="with --pairs: the half of day N (N's parity), with every shape and layer")
    ap.add_argument("--seed", type=int, default=39)
    ap.add_argument("--only")
    ap.add_argument("--range", help="A:B: only cases A to B-1 of those picked, before --only (a share of --all for one machine)")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--jobs", type=int, default=1)
    o = ap.parse_args()
    cases = list(all_cases()) if o.all else covering_pairs(o.seed)
    # the cases that bring a shape, a layer, a name or a front not yet picked, in a fixed order
    rng = random.Random(o.seed)
    order = sorted(cases, key=lambda c: rng.random())
    picked, seen = [], set()
    for c in order:
        key = {("shape", c["shape"]), ("layer", c["layer"]), ("name", c["name"]), ("front", c["front"])}
        if key - seen:
            picked.append(c)
            seen |= key
    if o.half is not None and o.pairs:
        # every shape and layer, and every other pair: the two halves are every pair
        cases = [c for i, c in enumerate(cases) if i % 2 == o.half % 2 or c in picked]
    elif o.sample and o.sample < len(cases):
        # a fixed sample that still has every shape and every layer: first the cases that
        # bring one, then the rest
        for c in order:
            if len(picked) >= o.sample:
                break
            if c not in picked:
                picked.append(c)
        cases = picked
    if o.range:
        a, _, b = o.range.partition(":")
        cases = cases[int(a or 0):int(b) if b else None]
    if o.only:
        cases = [c for c in cases if re.search(o.only, case_id(c))]
    if o.list:
        for c in cases:
            print(case_id(c))
        print("# %d cases" % len(cases))
        return 0
    work = tempfile.mkdtemp(prefix="nvshim-matrix-")
    env = Env(o.nvshim, o.nvcc, work)
    passed = failed = skipped = 0

    def one(i):
        c = cases[i]
        if c["front"] == "ccache" and not env.ccache or c["front"] == "sccache" and not env.start_sccache():
            return c, None
        w = os.path.join(work, "case%d" % i)
        try:
            why = compare(env, c, w)
        except Exception as e:  # a harness failure is a failed case, said
            why = ["the case could not run: %r" % e]
        if not os.environ.get("KEEP_WORK"):
            shutil.rmtree(w, ignore_errors=True)
        return c, why

    try:
        if any(c["front"] == "sccache" for c in cases):
            env.start_sccache()
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(max_workers=max(1, o.jobs)) as pool:
            for c, why in pool.map(one, range(len(cases))):
                name = "matrix: " + case_id(c)
                if why is None:
                    skipped += 1
                    print("ok - %s # SKIP no %s" % (name, c["front"]))
                elif why and known_gap(c):
                    print("not ok - %s # TODO %s" % (name, known_gap(c)))
                elif why:
                    failed += 1
                    print("not ok - " + name)
                    for line in why:
                        print("#   " + line)
                else:
                    passed += 1
                    print("ok - " + name)
                sys.stdout.flush()
    finally:
        env.stop()
        if not os.environ.get("KEEP_WORK"):
            shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
