#!/usr/bin/env python3
"""Every Hopper and Blackwell example of real CUTLASS (the nvidia-cutlass package) through nvshim.

For each example source that plain nvcc builds on this toolkit, renamed (so no [module] rule and
no path helps: modules_rules = false), with an empty verdict cache each time:
  - the targets nvshim builds for -arch=sm_90, -arch=sm_100, the example's own target where its
    CMake asks for another (-arch=sm_120 for 120a, -arch=sm_103 for 103a) and PyTorch's 8.0;9.0 list
    (-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90), read from the
    object with cuobjdump, against what the example's own CMakeLists.txt asks for
    (CUTLASS_NVCC_ARCHS MATCHES ...);
  - which method decided (the [modules.method] note of the JSON log: preprocessing, what it
    found and what it cost; or no preprocessing, when the gate saw nothing to decide);
  - with --time, the first build of its own target (-arch=sm_90 for Hopper, else sm_100) through
    nvshim against the hand-written build of the same deliverables (-gencode
    arch=compute_90a,code=sm_90a -gencode arch=compute_90,code=compute_90, or 100), the plain
    build's time (about what the plain PTX pass costs), and what the objects say on their own: how many kernels of a plain build
    differ from the arch-specific build's, and how many are stubs there (the object check's
    view, to hold the preprocessing decision against: a false upgrade is "differ" with no kernel
    changed, a missed one "the same" with kernels changed).
Builds run --jobs at a time, each a task of its own: first every source's nvshim build of its own
target side by side with its hand-written build (so the two see the same load), then the rest.
Prints a Markdown table, and writes the rows as JSON with --json FILE as each build finishes;
--resume FILE... skips the builds a run stopped early has done, --table FILE... merges runs.

    python3 tests/bench/cutlass_sweep.py --nvshim build/nvshim [--nvcc ...] [--jobs 4] [--time]
        [--only 48,54,70] [--json out.json] [--resume earlier.json ...]
"""
import argparse
import concurrent.futures
import glob
import json
import os
import re
import shutil
import site
import subprocess
import sys
import tempfile
import threading
import time

TORCH = ["-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90"]


def cutlass_root():
    dirs = site.getsitepackages() + [site.getusersitepackages()] + sys.path
    for d in dirs:
        for p in glob.glob(d + "/cutlass_library/source"):
            return p
    raise SystemExit("cutlass_sweep: no nvidia-cutlass (scripts/install-deps.sh installs it)")


def cuobjdump():
    found = shutil.which("cuobjdump")
    if found:
        return found
    for d in site.getsitepackages() + sys.path:
        for p in glob.glob(d + "/nvidia/*/bin/cuobjdump"):
            return p
    raise SystemExit("cutlass_sweep: no cuobjdump (pip install nvidia-cuda-cuobjdump)")


def embedded(tool, obj):
    """'sm_90a ptx:90': machine code from each image's own header, PTX by name."""
    elf = subprocess.run([tool, "-elf", obj], capture_output=True, text=True).stdout
    ptx = subprocess.run([tool, "--list-ptx", obj], capture_output=True, text=True).stdout
    # "arch = sm_90" heads each image, the PTX ones too ("Fatbin ptx code:"): machine code only
    sass = sorted(set(re.findall(r"^Fatbin elf code:\n=+\narch = (sm_\w+)$", elf, re.M)))
    virt = sorted(set(re.findall(r"\.(sm_\w+)\.ptx", ptx)))
    return " ".join(sass + ["ptx:" + v.replace("sm_", "") for v in virt])


def cmake_asks(example_dir):
    try:
        text = open(os.path.join(example_dir, "CMakeLists.txt")).read()
    except OSError:
        return "?"
    wants = sorted(set(re.findall(r'CUTLASS_NVCC_ARCHS MATCHES\s+"?\(?([0-9a-z|]+)', text)))
    return " or ".join(wants) if wants else "any"


def run(cmd, env, cwd):
    start = time.perf_counter()
    p = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return p.returncode, time.perf_counter() - start, p.stderr


def kernel_sizes(tool, obj):
    """{kernel: bytes of machine code} of an object's machine code (its .text.<kernel> sections)."""
    elf = subprocess.run([tool, "-elf", obj], capture_output=True, text=True).stdout
    sizes = {}
    for m in re.finditer(r"^\s+\w+\s+\w+\s+(\w+)\s.*PROGBITS.*\s\.text\.(\S+)$", elf, re.M):
        sizes[m.group(2)] = sizes.get(m.group(2), 0) + int(m.group(1), 16)
    return sizes


def object_truth(p, h):
    """What the objects say, independently of nvshim: how many kernels of the plain build differ
    in size from the arch-specific build's, and how many of them are stubs there (at most 512
    bytes plain, four times that or more arch-specific). p, h: kernel_sizes() of the two."""
    differ = [k for k in h if p.get(k) != h[k]]
    stubs = [k for k in differ if p.get(k, 0) <= 512 and h[k] >= 4 * max(p.get(k, 0), 1)]
    return f"{len(differ)} of {len(h)} kernels differ, {len(stubs)} stubs"


def notes(log):
    """The modules pass's notes in a JSON log: which method decided, and its verdict notes."""
    out = []
    try:
        for line in open(log):
            for n in json.loads(line).get("notes", []):
                if "[modules" in n:
                    out.append(n)
    except (OSError, ValueError):
        pass
    return out


def method(found):
    for n in found:
        m = re.search(r"by preprocessing .*?: (the same|they differ|only the a form differs)[^(]*\((\d+) ms\)", n)
        if m:
            return {"the same": "pre: same", "they differ": "pre: differ"}.get(m.group(1), "pre, then object") + \
                f" {int(m.group(2)) / 1000:.1f} s"
    return "no preprocessing" if not found else "object"


OWN_KEYS = ("first_s", "hand_s", "plain_s", "hand_sizes", "plain_sizes", "objects")


def source_setup(src, c, before):
    """A source's row, with what earlier runs found (before), and its own target: what its CMake
    asks for where that is a GeForce Blackwell (120a) or sm_103 (103a) GPU, else sm_90 for
    Hopper and sm_100 for Blackwell."""
    ex_dir = os.path.dirname(src)
    name = os.path.basename(ex_dir)
    cmake = cmake_asks(ex_dir)
    blackwell = int(name.split("_")[0]) >= 70 and not name.startswith("88_")
    arch = re.match(r"\d+", cmake).group(0) if re.match(r"1(03|2\d)a", cmake) else "100" if blackwell else "90"
    row = {"example": name, "source": os.path.basename(src), "cmake": cmake, "own": f"sm_{arch}"}
    old = dict(before.get((name, row["source"]), {}))
    if old.get("own", row["own"]) != row["own"]:
        # timed for another target by a run before the own target followed the CMake: the
        # decision stays (as its -arch column), the times and objects do not
        old = {k: v for k, v in old.items() if k not in OWN_KEYS and k != "own"}
    row.update(old)
    return row, arch


def tasks_of(row, arch, a, index):
    """The builds of one source, each a task of its own: nvshim's first build of the example's own
    target and the hand-written build of the same deliverables (side by side, so both see the
    same load), the plain build, and nvshim's builds for the other targets and PyTorch's list."""
    own = f"sm_{arch}"
    # the same deliverables as nvshim's: the a form's machine code and the plain PTX that
    # -arch=sm_NN asks for (a second cicc pass, which nvshim keeps for later GPUs)
    hand = ["-gencode", f"arch=compute_{arch}a,code=sm_{arch}a", "-gencode", f"arch=compute_{arch},code=compute_{arch}"]
    first = [("own", "nvshim", own, [f"-arch=sm_{arch}"])]
    timed = [("hand", "nvcc", "hand", hand)] if a.time else []
    pair = first + timed if index % 2 == 0 else timed + first
    rest = [("plain", "nvcc", "plain", [f"-arch=sm_{arch}"])] if a.time else []
    rest += [("other", "nvshim", t, [f"-arch={t}"]) for t in ("sm_90", "sm_100") if t != own]
    rest += [("torch", "nvshim", "torch", TORCH)]
    return pair, rest


def task_done(row, task):
    kind, _, key, _ = task
    if row.get("builds") is False:
        return True
    return {"own": "first_s", "hand": "hand_s", "plain": "plain_s"}.get(kind, key) in row


def sweep_build(src, row, task, a, c, tool):
    """One build of one source in a directory of its own; its findings go into row."""
    kind, who, key, targets = task
    ex_dir = os.path.dirname(src)
    work = tempfile.mkdtemp(prefix="nvshim-sweep-")
    os.mkdir(os.path.join(work, ".git"))
    shutil.copy(src, os.path.join(work, "kernels.cu"))
    flags = ["-std=c++17", "--expt-relaxed-constexpr", "-w", f"-I{c}/include", f"-I{c}/tools/util/include",
             f"-I{c}/examples/common", f"-I{ex_dir}", "-c", "kernels.cu"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("NVSHIM_")}
    # ensure_devices off: on a GPU machine -arch=sm_100 would also get the GPU's own target
    env.update(NVSHIM_NVCC=os.path.abspath(a.nvcc), NVSHIM_MODULES_RULES="false", NVSHIM_VERBOSITY="quiet",
               NVSHIM_ENSURE_DEVICES="off", NVSHIM_CACHE_DIR=os.path.join(work, "cache"),
               NVSHIM_LOG_FILE=os.path.join(work, "log.jsonl"))
    obj = os.path.join(work, "out.o")
    rc, secs, err = run([a.nvshim if who == "nvshim" else a.nvcc] + flags + ["-o", obj] + targets, env, work)
    found = {}
    if kind == "own":
        # a source nvshim cannot build is one plain nvcc cannot either (nvshim fails open), so
        # the example's own target stands for "builds on this nvcc"
        if rc:
            lines = err.strip().splitlines() or ["?"]
            found.update(builds=False, why=next((x for x in lines if "error" in x), lines[-1]).strip()[:120])
        else:
            found.update(builds=True, first_s=secs)
            found[key] = embedded(tool, obj)
            found[key + "_method"] = method(notes(env["NVSHIM_LOG_FILE"]))
    elif kind in ("hand", "plain"):
        if not rc:
            found[kind + "_s"] = secs
            found[kind + "_sizes"] = kernel_sizes(tool, obj)
    else:
        found[key] = embedded(tool, obj) if not rc else "fails: " + err.strip()[-100:]
        found[key + "_method"] = method(notes(env["NVSHIM_LOG_FILE"]))
    shutil.rmtree(work, ignore_errors=True)
    return found


def objects(r):
    if "plain_sizes" in r and "hand_sizes" in r:
        return object_truth(r["plain_sizes"], r["hand_sizes"])
    return r.get("objects", "")  # rows written before the sizes were kept


def table(rows):
    print("| example | source | its CMake asks | -arch=sm_90 | -arch=sm_100 | its own (-arch=) | 8.0;9.0 | decided by (own arch) | the objects (plain / a) | first / hand |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if not r.get("builds", True):
            print(f"| {r['example']} | {r['source']} | {r['cmake']} | does not build on this nvcc: {r['why']} | | | | | | |")
            continue
        first = f"{r['first_s'] / r['hand_s']:.2f} ({r['first_s']:.0f} / {r['hand_s']:.0f} s)" \
            if "hand_s" in r and "first_s" in r else ""
        own = r["own"]
        mine = f"{own}: {r.get(own, '')}" if own not in ("sm_90", "sm_100") else ""
        print(f"| {r['example']} | {r['source']} | {r['cmake']} | {r.get('sm_90', '')} | "
              f"{r.get('sm_100', '')} | {mine} | {r.get('torch', '')} | {r.get(own + '_method', '')} | {objects(r)} | {first} |")
    done = [r for r in rows if r.get("builds") and "hand_s" in r and "first_s" in r]
    if done:
        ratios = sorted(r["first_s"] / r["hand_s"] for r in done)
        mid = ratios[len(ratios) // 2] if len(ratios) % 2 else (ratios[len(ratios) // 2 - 1] + ratios[len(ratios) // 2]) / 2
        print(f"\n{len(done)} sources timed: first / hand median {mid:.2f}, range {ratios[0]:.2f}..{ratios[-1]:.2f}")


def merged(files):
    """Rows of earlier runs (--json files), one per source, later files filling in what earlier
    ones lack."""
    rows = {}
    for f in files:
        for r in json.load(open(f)):
            rows.setdefault((r["example"], r["source"]), {}).update(r)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvshim")
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 4))
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--json")
    ap.add_argument("--resume", nargs="*", default=[], metavar="JSON",
                    help="rows of earlier runs: their finished builds are not run again")
    ap.add_argument("--table", nargs="*", metavar="JSON",
                    help="print the table of rows written before (--json of runs stopped early, merged)")
    a = ap.parse_args()
    if a.table is not None:
        rows = list(merged(a.table).values())
        rows.sort(key=lambda r: (r["example"], r["source"]))
        table(rows)
        return
    a.nvshim = os.path.abspath(a.nvshim)
    c = cutlass_root()
    tool = cuobjdump()
    only = {x.strip() for x in a.only.split(",") if x.strip()}
    sources = []
    for ex_dir in sorted(glob.glob(f"{c}/examples/[0-9]*_*")):
        name = os.path.basename(ex_dir)
        num = int(name.split("_")[0])
        hopper = 48 <= num <= 69 or num == 88
        if not (hopper or num >= 70) or (only and str(num) not in only and name not in only):
            continue
        for src in sorted(glob.glob(ex_dir + "/*.cu")):
            sources.append(src)
    before = merged(a.resume)
    rows, firsts, rests = {}, [], []
    for i, src in enumerate(sources):
        row, arch = source_setup(src, c, before)
        rows[src] = row
        pair, rest = tasks_of(row, arch, a, i)
        firsts += [(src, t) for t in pair if not task_done(row, t)]
        rests += [(src, t) for t in rest if not task_done(row, t)]
    lock = threading.Lock()

    def save():
        if a.json:
            with open(a.json + ".tmp", "w") as out:
                json.dump(list(rows.values()), out, indent=1)
            os.replace(a.json + ".tmp", a.json)

    # every source's first build and hand-written build before the rest, each pair side by side;
    # each build's findings as it finishes (stderr, and the JSON file rewritten), so that a run
    # stopped early keeps what it did and --resume goes on from there
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        futures = {pool.submit(sweep_build, src, rows[src], t, a, c, tool): (src, t) for src, t in firsts + rests}
        for f in concurrent.futures.as_completed(futures):
            src, t = futures[f]
            found = f.result()
            with lock:
                rows[src].update(found)
                brief = {k: v for k, v in found.items() if not k.endswith("_sizes")}
                print(json.dumps({"source": rows[src]["source"], "build": t[0], **brief}), file=sys.stderr, flush=True)
                save()
    out = [rows[s] for s in sources]
    table(out)
    save()


if __name__ == "__main__":
    main()
