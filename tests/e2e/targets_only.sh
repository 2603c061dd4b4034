#!/bin/bash
# targets_only and forward_ptx against the real nvcc, every object read with cuobjdump:
# causal-conv1d 1.7.0's nine-target list (and its --threads 4) built for one GPU, in a compile,
# a compile and link, -dc of several sources, -E, CC mode and behind ccache; the note said once
# per build, the targets not built counted by `nvshim stats`, the request kept in the log; the
# highest target's PTX added for newer GPUs, a list with PTX unchanged.
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"
B=${NVSHIM_BUILD_DIR:-$(dirname "$NVSHIM")}
NV=$B/libexec/nvshim/bin/nvcc
CC_DIR=$B/libexec/nvshim/cc
unset CUDACXX NVCC_CCBIN NVSHIM_BUILD_ID
export CUOBJDUMP=${CUOBJDUMP:-$(find_cuobjdump)}
cd "$WORK" || exit 1
printf '__global__ void k(float *x) { x[threadIdx.x] *= 2.0f; }\n' >k.cu
printf '__global__ void k2(float *x) { x[threadIdx.x] += 1.0f; }\nint main() { return 0; }\n' >m.cu
# embedded OBJECT: "elf:sm_90 ptx:sm_90", sorted
embedded() {
	"$CUOBJDUMP" --list-elf --list-ptx "$1" 2>/dev/null | sed -n 's/^ELF file.*\.\(sm_[0-9a-z]*\)\.cubin/elf:\1/p; s/^PTX file.*\.\(sm_[0-9a-z]*\)\.ptx/ptx:\1/p' | sort -u | tr '\n' ' ' | sed 's/ $//'
}
holds() { # holds NAME OBJECT "elf:sm_90"
	if [ -z "$CUOBJDUMP" ]; then skip "$1" "no cuobjdump"; return; fi
	local got; got=$(embedded "$2")
	if [ "$got" = "$3" ]; then ok "$1"; else not_ok "$1" "embedded: '$got', want '$3'"; fi
}

# causal-conv1d 1.7.0's setup.py on CUDA 13: nine -gencode pairs and --threads 4.
NINE=()
for a in 75 80 87 90 100 120 103 110 121; do NINE+=(-gencode "arch=compute_$a,code=sm_$a"); done
"$NVCC" -c k.cu -o plain.o "${NINE[@]}" --threads 4 2>err
check "nvcc accepts all nine targets" test $? -eq 0
holds "plain nvcc: nine machine codes, no PTX" plain.o \
	"elf:sm_100 elf:sm_103 elf:sm_110 elf:sm_120 elf:sm_121 elf:sm_75 elf:sm_80 elf:sm_87 elf:sm_90"

NVSHIM_TARGETS_ONLY=90 "$NVSHIM" -c k.cu -o only.o "${NINE[@]}" --threads 4 2>err
check "targets_only = 90: builds" test $? -eq 0 -a -s only.o
holds "targets_only = 90: sm_90 machine code only" only.o "elf:sm_90"
check "targets_only = 90: the note says what the build is for and what it left out" grep -qx \
	"nvshim warning : targets_only = 90: this build's code runs only on sm_90; not built: sm_75, sm_80, sm_87, sm_100, sm_120, sm_103, sm_110, sm_121 \[targets.only\]" err
NVSHIM_TARGETS_ONLY=devices NVSHIM_DEVICES=90 "$NVSHIM" -c k.cu -o dev.o "${NINE[@]}" --threads 4 2>err
holds "targets_only = devices, NVSHIM_DEVICES=90: sm_90 only" dev.o "elf:sm_90"
check "targets_only = devices: the note names where the GPUs came from" \
	grep -q "targets_only = devices (NVSHIM_DEVICES): this build's code runs only on sm_90" err
NVSHIM_TARGETS_ONLY=devices NVSHIM_DEVICES= NVSHIM_FALLBACK_ARCHS=80 "$NVSHIM" -c k.cu -o fb.o "${NINE[@]}" 2>err
holds "targets_only = devices without a GPU: fallback_archs (80)" fb.o "elf:sm_80"
NVSHIM_TARGETS_ONLY=devices NVSHIM_DEVICES= "$NVSHIM" -c k.cu -o none.o "${NINE[@]}" 2>err
holds "targets_only = devices, no GPU, no fallback_archs: the list as given" none.o \
	"elf:sm_100 elf:sm_103 elf:sm_110 elf:sm_120 elf:sm_121 elf:sm_75 elf:sm_80 elf:sm_87 elf:sm_90"
check "... and a note says so" grep -q "no GPU found ([A-Z_]*) and fallback_archs is unset: the requested targets are kept \[targets.only\]" err
# A GPU between targets gets the highest machine code it can load: sm_80 on 8.6, not sm_87.
NVSHIM_TARGETS_ONLY=86 "$NVSHIM" -c k.cu -o a86.o "${NINE[@]}" 2>/dev/null
holds "targets_only = 86: sm_80, the best code an 8.6 GPU loads" a86.o "elf:sm_80"
NVSHIM_TARGETS_ONLY=80,120 "$NVSHIM" -c k.cu -o two.o "${NINE[@]}" 2>/dev/null
holds "targets_only = 80,120: sm_80 and sm_120" two.o "elf:sm_120 elf:sm_80"
# None of the targets serves the GPU: its own target instead.
NVSHIM_TARGETS_ONLY=90 "$NVSHIM" -c k.cu -o own.o -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 2>err
holds "targets_only = 90 on a 75,80 list: the GPU's target" own.o "elf:sm_90"
check "... said" grep -q "targets_only = 90: no requested target runs on sm_90: building for sm_90 instead; not built: sm_75, sm_80" err
# PTX is loaded where no machine code serves the GPU.
NVSHIM_TARGETS_ONLY=90 "$NVSHIM" -c k.cu -o ptx.o -gencode arch=compute_75,code=[sm_75,compute_75] -gencode arch=compute_80,code=sm_80 2>/dev/null
holds "targets_only = 90 on sm_75+compute_75, sm_80: the PTX the GPU would JIT" ptx.o "ptx:sm_75"
# The modules pass still applies: -arch=sm_90a keeps its machine code.
NVSHIM_TARGETS_ONLY=90 "$NVSHIM" -c k.cu -o a.o -arch=sm_90a "${NINE[@]:0:8}" 2>/dev/null
holds "targets_only = 90 with sm_90a in the list: sm_90 and sm_90a machine code" a.o "elf:sm_90 elf:sm_90a"

# Every path: a compile and link, -dc of several sources, -E.
NVSHIM_TARGETS_ONLY=90 "$NVSHIM" m.cu -o app "${NINE[@]}" 2>/dev/null
check "compile and link: builds" test -x app
holds "compile and link: the program holds sm_90 only" app "elf:sm_90"
mkdir -p dc && cp k.cu dc/a.cu && sed 's/ k(/ kb(/' k.cu >dc/b.cu
(cd dc && NVSHIM_TARGETS_ONLY=90 "$NVSHIM" -dc a.cu b.cu "${NINE[@]}" 2>/dev/null)
holds "-dc of two sources: a.o sm_90 only" dc/a.o "elf:sm_90"
holds "-dc of two sources: b.o sm_90 only" dc/b.o "elf:sm_90"
(cd dc && NVSHIM_TARGETS_ONLY=90 "$NVSHIM" -dlink a.o b.o -o dl.o "${NINE[@]}" 2>/dev/null)
check "-dlink with the same list: links" test -s dc/dl.o
holds "-dlink: sm_90 only" dc/dl.o "elf:sm_90"
NVSHIM_LOG_FILE=$WORK/e.jsonl NVSHIM_TARGETS_ONLY=90 "$NVSHIM" -E k.cu "${NINE[@]}" >k.ii 2>/dev/null
check "-E gets the compile's list (what a cache in front hashes)" python3 -c '
import json, sys
l = json.loads(open(sys.argv[1]).readline())
assert [a for a in l["argv_out"] if "compute_" in a] == ["-gencode=arch=compute_90,code=sm_90"], l["argv_out"]' e.jsonl

# CC mode: a .cu given to g++ with nvcc's target options.
NVSHIM_TARGETS_ONLY=90 "$CC_DIR/g++" -c k.cu -o cc.o "${NINE[@]}" 2>err
check "CC mode: builds" test $? -eq 0 -a -s cc.o
holds "CC mode: sm_90 only" cc.o "elf:sm_90"

# One note per build; the record counts the targets not built; the log keeps the request.
export NVSHIM_BUILD_ID=only-1 NVSHIM_LOG_FILE=$WORK/b.jsonl
"$NVSHIM" stats --zero 2>/dev/null
for s in a b c; do
	cp k.cu "$s.cu"
	NVSHIM_TARGETS_ONLY=90 "$NVSHIM" -c "$s.cu" -o "$s.o" "${NINE[@]}" 2>"$s.err"
done
check "once per build: the first compile says the note" grep -q "runs only on sm_90.*(said once for this" a.err
check "once per build: the others do not" test ! -s b.err -a ! -s c.err
st=$("$NVSHIM" stats --json | python3 -c 'import json, sys
s = json.load(sys.stdin)
b = [b for b in s["builds"] if b["tool"] == "NVSHIM_BUILD_ID"][0]
print(b["invocations"], b["not_built"].get("sm_75"), b["not_built"].get("sm_121"), b["rules"].get("targets.only"))')
check "nvshim stats: 3 compiles, sm_75 and sm_121 not built 3 times each" test "$st" = "3 3 3 3"
check "nvshim stats: the text lists the targets not built" sh -c "'$NVSHIM' stats | grep -q 'targets not built (targets_only)'"
check "the log keeps the request (all nine targets) and the note" python3 -c '
import json, sys
l = json.loads(open(sys.argv[1]).readline())
assert sum(a.startswith("arch=compute_") for a in l["argv_in"]) == 9, l["argv_in"]
assert any("[targets.only]" in n for n in l["notes"])' b.jsonl
unset NVSHIM_BUILD_ID NVSHIM_LOG_FILE

# forward_ptx = highest.
FWD=(-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90)
NVSHIM_FORWARD_PTX=highest "$NVSHIM" -c k.cu -o fwd.o "${FWD[@]}" 2>err
holds "forward_ptx = highest: compute_90 PTX added" fwd.o "elf:sm_80 elf:sm_90 ptx:sm_90"
check "forward_ptx: said" grep -q "added compute_90 PTX: GPUs newer than sm_90 can run this build's code .*\[targets.forward_ptx\]" err
"$NVSHIM" -c k.cu -o nofwd.o "${FWD[@]}" 2>/dev/null
holds "forward_ptx off (the default): the list as given" nofwd.o "elf:sm_80 elf:sm_90"
NVSHIM_FORWARD_PTX=highest "$NVSHIM" -c k.cu -o has.o -gencode arch=compute_80,code=sm_80 -gencode "arch=compute_90,code=[sm_90,compute_90]" 2>err
holds "forward_ptx: a list with the PTX already: unchanged" has.o "elf:sm_80 elf:sm_90 ptx:sm_90"
check "... and nothing said" test ! -s err
NVSHIM_FORWARD_PTX=highest NVSHIM_TARGETS_ONLY=90 "$NVSHIM" -c k.cu -o both.o "${NINE[@]}" 2>/dev/null
holds "targets_only = 90 and forward_ptx = highest: sm_90 and compute_90" both.o "elf:sm_90 ptx:sm_90"
NVSHIM_FORWARD_PTX=highest "$NVSHIM" -cubin k.cu -o k.cubin -arch=sm_90 2>err
check "forward_ptx leaves -cubin alone (one code)" test $? -eq 0 -a ! -s err

# split_compile (auto: on where targets_only chose the targets): cicc and ptxas split their
# optimizations over the CPU slots free when each stage starts (the gate rewrites the number);
# ptxas records what it had in the machine code's toolkit note, which is how this is seen.
if command -v flock >/dev/null; then
	# split_of OBJECT: the -split-compile N its sm_90 machine code records ("" when none)
	split_of() {
		rm -rf xelf && mkdir xelf && (cd xelf && "$CUOBJDUMP" -xelf all "../$1" >/dev/null 2>&1)
		cat xelf/*.cubin 2>/dev/null | tr -c '[:print:]' '\n' | sed -n 's/.*-split-compile \([0-9]*\).*/\1/p' | sort -u | tr '\n' ' ' | sed 's/ $//'
	}
	SPLIT_ENV=(NVSHIM_CACHE_DIR="$WORK/splitcache" NVSHIM_MACHINE=cpus=4,busy=0,mem_mb=16000 NVSHIM_TARGETS_ONLY=90 NVSHIM_FORWARD_PTX=highest)
	env "${SPLIT_ENV[@]}" NVSHIM_VERBOSITY=verbose "$NVSHIM" -c k.cu -o sp.o "${NINE[@]}" 2>err
	holds "split_compile = auto, targets_only = 90: builds sm_90 (and its PTX)" sp.o "elf:sm_90 ptx:sm_90"
	check "split: the note says so (verbose)" grep -q "compiles with --split-compile 4 (in NVCC_APPEND_FLAGS).*split_compile = auto, for a targets_only build \[threads.split\]" err
	check "split: ptxas had the 4 CPU slots free (the machine code's note)" test "$(split_of sp.o)" = 4
	env "${SPLIT_ENV[@]}" "$NVSHIM" -c k.cu -o t4.o "${NINE[@]}" --threads 4 2>/dev/null
	check "split: under the project's own --threads 4 (causal-conv1d's) too" test "$(split_of t4.o)" = 4
	env "${SPLIT_ENV[@]}" NVSHIM_SPLIT_COMPILE=off "$NVSHIM" -c k.cu -o nosplit.o "${NINE[@]}" 2>/dev/null
	check "split_compile = off: none" test -z "$(split_of nosplit.o)"
	check "split: the fatbinary (the JIT's options for the PTX) and every section but ptxas's note are as without it" python3 - sp.o nosplit.o "$CUOBJDUMP" <<'PY'
import os, struct, subprocess, sys, tempfile
def sections(obj):
    d = tempfile.mkdtemp()
    subprocess.run([sys.argv[3], "-xelf", "all", os.path.abspath(obj)], cwd=d, capture_output=True)
    cub = [f for f in os.listdir(d) if f.endswith(".cubin")]
    b = open(os.path.join(d, cub[0]), "rb").read()
    shoff, = struct.unpack_from("<Q", b, 0x28); shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3a)
    hdr = [struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * shentsize) for i in range(shnum)]
    names = hdr[shstrndx]
    name = lambda h: b[names[4] + h[0]:b.index(b"\0", names[4] + h[0])].decode()
    return {name(h): b[h[4]:h[4] + h[5]] if h[1] != 8 else h[5] for h in hdr if name(h) != ".note.nv.tkinfo"}
a, b = sections(sys.argv[1]), sections(sys.argv[2])
assert a == b, [k for k in a if a.get(k) != b.get(k)]
all_a = subprocess.run([sys.argv[3], "-all", sys.argv[1]], capture_output=True, text=True).stdout
all_b = subprocess.run([sys.argv[3], "-all", sys.argv[2]], capture_output=True, text=True).stdout
assert all_a == all_b, "cuobjdump -all differs"
PY
	# Three of the four slots held by other compiles: ptxas gets its own, one thread.
	mkdir -p "$WORK/splitcache/threads"
	for i in 1 2 3; do hold_lock "$WORK/splitcache/threads/slot.$i" || not_ok "slot $i held elsewhere" "flock did not take it"; done
	env "${SPLIT_ENV[@]}" "$NVSHIM" -c k.cu -o held.o "${NINE[@]}" 2>/dev/null
	check "split: with three of four slots held elsewhere, one thread" test "$(split_of held.o)" = 1
	release_locks
	env "${SPLIT_ENV[@]}" "$NVSHIM" --split-compile 2 -c k.cu -o user.o "${NINE[@]}" 2>/dev/null
	check "split: a --split-compile of the user's is left as given" test "$(split_of user.o)" = 2
	env "${SPLIT_ENV[@]}" NVSHIM_TARGETS_ONLY= "$NVSHIM" -c k.cu -o notonly.o -arch=sm_90 2>/dev/null
	check "split_compile = auto without targets_only: none (the object as plain nvcc's)" test -z "$(split_of notonly.o)"
	env "${SPLIT_ENV[@]}" NVSHIM_TARGETS_ONLY= NVSHIM_SPLIT_COMPILE=on "$NVSHIM" -c k.cu -o on.o -arch=sm_90 2>/dev/null
	check "split_compile = on: every compile" test "$(split_of on.o)" = 4
else
	skip "split_compile" "no flock"
fi

# Behind ccache (the launcher setting): the cache sees the rewritten list.
if command -v ccache >/dev/null; then
	for v in $(env | sed -n 's/^\(CCACHE_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
	export CCACHE_DIR=$WORK/ccache CCACHE_CONFIGPATH=$WORK/ccache.conf
	: >"$CCACHE_CONFIGPATH"
	NVSHIM_LAUNCHER=ccache NVSHIM_TARGETS_ONLY=90 "$NV" -c k.cu -o c1.o "${NINE[@]}" 2>/dev/null
	holds "ccache behind nvshim: sm_90 only" c1.o "elf:sm_90"
	NVSHIM_LAUNCHER=ccache NVSHIM_TARGETS_ONLY=80 "$NV" -c k.cu -o c2.o "${NINE[@]}" 2>/dev/null
	holds "ccache behind nvshim: another targets_only is another entry (sm_80)" c2.o "elf:sm_80"
	NVSHIM_LAUNCHER=ccache NVSHIM_TARGETS_ONLY=90 "$NV" -c k.cu -o c3.o "${NINE[@]}" 2>/dev/null
	check "ccache behind nvshim: the first setting again is a hit" \
		test "$(ccache --print-stats | awk -F'\t' '$1 ~ /cache_hit$/ { h += $2 } END { print h + 0 }')" -ge 1
	holds "... with sm_90 only" c3.o "elf:sm_90"
	# ccache in front of nvshim (CMAKE_CUDA_COMPILER_LAUNCHER=ccache): the setting is in nvshim's
	# fingerprint, and nvcc -E gets the compile's list, so another setting is another entry.
	export CCACHE_COMPILERCHECK='%compiler% --nvshim-fingerprint'
	NVSHIM_TARGETS_ONLY=90 ccache "$NV" -c k.cu -o f1.o "${NINE[@]}" 2>/dev/null
	holds "ccache in front of nvshim: sm_90 only" f1.o "elf:sm_90"
	NVSHIM_TARGETS_ONLY=120 ccache "$NV" -c k.cu -o f2.o "${NINE[@]}" 2>/dev/null
	holds "ccache in front of nvshim: targets_only = 120 is not served sm_90 from the cache" f2.o "elf:sm_120"
	ccache "$NV" -c k.cu -o f3.o "${NINE[@]}" 2>/dev/null
	holds "ccache in front of nvshim: targets_only unset: all nine" f3.o \
		"elf:sm_100 elf:sm_103 elf:sm_110 elf:sm_120 elf:sm_121 elf:sm_75 elf:sm_80 elf:sm_87 elf:sm_90"
	unset CCACHE_DIR CCACHE_CONFIGPATH CCACHE_COMPILERCHECK
else
	skip "ccache" "ccache is not installed"
fi
finish
