#!/bin/bash
# Notes said once per build (repeat_notes) and the record behind `nvshim stats`, with the real
# nvcc 13.0 and a CUDA 12 era target list: a CMake + ninja project of 20 sources, two builds
# each of make -j, ninja -j and setuptools, 64 compiles at once, a damaged record, --zero.
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"
cd "$WORK" || exit 1
unset CUDACXX CMAKE_CUDA_COMPILER NVSHIM_BUILD_ID
export CCACHE_DISABLE=1 SCCACHE_DISABLE=1
RENAMED='renamed compute_101 -> compute_110 for nvcc 13.0 [targets.unsupported]'
DROPPED='dropped compute_50, compute_70: not supported by nvcc 13.0 [targets.unsupported]'
HINT='(said once for this'
ARCH="-gencode=arch=compute_50,code=compute_50 -gencode=arch=compute_70,code=compute_70 -gencode=arch=compute_75,code=compute_75 -gencode=arch=compute_101,code=compute_101"
tiny() { printf '__global__ void k%s(float *x) { x[threadIdx.x] *= %s.0f; }\n' "$2" "$2" >"$1"; }
# notes FILE: nvshim's lines of a build's output, hints taken off
notes() { grep '^nvshim ' "$1" | sed 's/ (said once for this .*//'; }
# once_each NAME FILE: each distinct note appears exactly once, both targets notes among them
once_each() {
	local dup; dup=$(notes "$2" | sort | uniq -d)
	if [ -z "$dup" ] && notes "$2" | grep -qxF "nvshim warning : $RENAMED" && notes "$2" | grep -qxF "nvshim warning : $DROPPED" &&
		[ "$(grep -cF "$HINT" "$2")" -eq 2 ]; then
		ok "$1"
	else
		not_ok "$1" "repeated: $dup" "$(grep '^nvshim ' "$2" | head -5)"
	fi
}
# stat EXPR: a Python expression over the JSON of `nvshim stats --json` (s)
stat() { "$NVSHIM" stats --json | python3 -c 'import json, sys; s = json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

# --- outside any build (a shell, a script): every compile says its notes, as before
tiny k.cu 0
"$NVSHIM" --dryrun -c k.cu -o k.o $ARCH 2>one.err >/dev/null
"$NVSHIM" --dryrun -c k.cu -o k.o $ARCH 2>two.err >/dev/null
check "no build: the second compile says the notes again" test "$(notes two.err)" = "$(notes one.err)"
check "no build: both notes, without a hint" sh -c "grep -qF '$RENAMED' two.err && grep -qF '$DROPPED' two.err && ! grep -qF '$HINT' one.err"
today=$(notes one.err)
NVSHIM_BUILD_ID=ci-42 "$NVSHIM" --dryrun -c k.cu -o k.o $ARCH 2>id1.err >/dev/null
NVSHIM_BUILD_ID=ci-42 "$NVSHIM" --dryrun -c k.cu -o k.o $ARCH 2>id2.err >/dev/null
check "NVSHIM_BUILD_ID: the first compile says the notes with the hint" test "$(grep -c "$HINT.*NVSHIM_BUILD_ID build" id1.err)" -eq 2
check "NVSHIM_BUILD_ID: the second says nothing" test -z "$(notes id2.err)"

# --- the acceptance case: CMake + ninja, 20 sources, a CUDA 12 architecture list
if ! command -v cmake >/dev/null || ! command -v ninja >/dev/null; then
	skip "cmake + ninja" "cmake or ninja is not installed"
else
	mkdir -p cm
	srcs=""
	for i in $(seq 1 20); do tiny cm/s$i.cu "$i"; srcs="$srcs s$i.cu"; done
	cat >cm/CMakeLists.txt <<EOF
cmake_minimum_required(VERSION 3.18)
project(p LANGUAGES CUDA)
add_library(k OBJECT $srcs)
EOF
	"$NVSHIM" stats --zero 2>/dev/null
	cmake -S cm -B cm/b -G Ninja -DCMAKE_CUDA_COMPILER="$NVSHIM" \
		-DCMAKE_CUDA_ARCHITECTURES="50-virtual;70-virtual;75-virtual;101-virtual" >cm.configure 2>&1
	check "cmake: configures with a CUDA 12 list" test $? -eq 0
	NVSHIM_LOG_FILE=$WORK/cm.log cmake --build cm/b -j2 >cm.once 2>&1
	check "cmake --build -j2 (ninja): builds 20 sources" test $? -eq 0 -a "$(ls cm/b/CMakeFiles/k.dir/*.o | wc -l)" -eq 20
	once_each "cmake --build: each distinct note appears once in the build output" cm.once
	check "cmake --build: the hint names the build tool" grep -qF "$HINT cmake build" cm.once
	check "the log keeps every note of every compile, and the notes not said again" python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) == 20, len(lines)
assert all(len([n for n in l["notes"] if "targets.unsupported" in n]) == 2 for l in lines)
assert sum(l["notes_quieted"] for l in lines) == 38
assert len({l["build"] for l in lines}) == 1 and lines[0]["build"].startswith("cmake ")' cm.log
	check "nvshim stats: the build had 20 invocations, 20 rewritten" \
		test "$(stat '[(b["invocations"], b["rewritten"]) for b in s["builds"] if b["tool"] == "cmake" and b["invocations"] == 20]')" = "[(20, 20)]"
	check "nvshim stats: the dropped targets, 20 times each" \
		test "$(stat '[b["dropped"] for b in s["builds"] if b["invocations"] == 20]')" = "[{'compute_50': 20, 'compute_70': 20}]"
	check "nvshim stats: the renamed target and the notes not repeated" \
		test "$(stat '[(b["renamed"], b["notes_quieted"], {k: v for k, v in b["rules"].items() if k != "threads.auto"}) for b in s["builds"] if b["invocations"] == 20]')" = \
		"[({'compute_101 -> compute_110': 20}, 38, {'targets.unsupported': 20})]"
	"$NVSHIM" stats >stats.txt 2>&1
	check "nvshim stats: the text names the build and its numbers" \
		sh -c "grep -q 'Build by cmake in $WORK/cm' stats.txt && grep -q 'compute_50 *20' stats.txt && grep -q 'rewritten *20' stats.txt"
	# repeat_notes = always: the output every compile gave before
	cmake --build cm/b --target clean >/dev/null 2>&1
	NVSHIM_REPEAT_NOTES=always cmake --build cm/b -j2 >cm.always 2>&1
	check "repeat_notes = always: builds" test $? -eq 0
	check "repeat_notes = always: each note 20 times, no hint" \
		sh -c "test \$(grep -cF '$RENAMED' cm.always) -eq 20 -a \$(grep -cF '$DROPPED' cm.always) -eq 20 && ! grep -qF '$HINT' cm.always"
	check "repeat_notes = always: each compile says what it says outside a build" \
		test "$(notes cm.always | sort | uniq -c | awk '{$1=""; print substr($0, 2)}')" = "$(sort <<<"$today")"
fi

# --- two builds each of make -j, ninja -j and setuptools: each says its notes once
mkdir -p par
for i in $(seq 1 8); do tiny par/s$i.cu "$i"; done
{
	printf 'ARCH = %s\nall: %s\n' "$ARCH" "$(for i in $(seq 1 8); do printf 's%s.o ' "$i"; done)"
	printf '%%.o: %%.cu\n\t%s --dryrun -c $< -o $@ $(ARCH) 2>&1 | grep ^nvshim >&2 || true\n' "$NVSHIM"
} >par/Makefile
for run in 1 2; do
	make -C par -B -j4 >make$run.out 2>&1
	once_each "make -j4, build $run: each note once" make$run.out
done
{
	printf 'rule nv\n  command = %s --dryrun -c $in -o $out %s 2>&1 | grep ^nvshim >&2 || true\n' "$NVSHIM" "$ARCH"
	for i in $(seq 1 8); do printf 'build s%s.o: nv s%s.cu\n' "$i" "$i"; done
} >par/build.ninja
if command -v ninja >/dev/null; then
	for run in 1 2; do
		ninja -C par -t clean >/dev/null 2>&1
		ninja -C par -j4 >ninja$run.out 2>&1
		once_each "ninja -j4, build $run: each note once" ninja$run.out
	done
else
	skip "ninja -j" "ninja is not installed"
fi
if python3 -c 'import setuptools' 2>/dev/null; then
	cat >par/setup.py <<EOF
import os
from setuptools import setup
from setuptools.command.build import build
class Build(build):
    def run(self):
        for i in range(1, 9):
            self.spawn(["$NVSHIM", "--dryrun", "-c", "s%d.cu" % i, "-o", "s%d.o" % i] + "$ARCH".split())
setup(name="p", version="0.1", cmdclass={"build": Build}, py_modules=[])
EOF
	for run in 1 2; do
		(cd par && python3 setup.py build) >setup$run.all 2>&1
		grep '^nvshim ' setup$run.all >setup$run.out
		once_each "setuptools (setup.py build), build $run: each note once" setup$run.out
		check "setuptools, build $run: the hint names setup.py" grep -qF "$HINT setup.py build" setup$run.out
	done
else
	skip "setuptools" "setuptools is not installed"
fi
check "nvshim stats: the six builds are told apart" \
	test "$(stat 'sorted(b["tool"] for b in s["builds"] if b["invocations"] == 8)')" = "['make', 'make', 'ninja', 'ninja', 'setup.py', 'setup.py']"

# --- 64 compiles at once in one build: first one wins, no count lost
"$NVSHIM" stats --zero 2>/dev/null
mkdir -p wide
tiny wide/k.cu 1
{
	printf 'all: %s\n' "$(for i in $(seq 1 64); do printf 'o%s ' "$i"; done)"
	printf 'o%%:\n\t%s --dryrun -c k.cu -o $@.o %s 2>&1 | grep ^nvshim >&2 || true\n' "$NVSHIM" "$ARCH"
} >wide/Makefile
make -C wide -j64 >wide.out 2>&1
once_each "make -j64: each note said once" wide.out
check "make -j64: 64 invocations recorded, 64 rewritten, 126 notes not repeated" \
	test "$(stat '(s["total"]["invocations"], s["total"]["rewritten"], s["total"]["notes_quieted"])')" = "(64, 64, 126)"

# --- a damaged record is started again, never fatal; --zero; stats = false
printf 'nvshim-stats\t1\nsince\tgarbage\n\x01\x02' >"$XDG_CACHE_HOME/nvshim/stats/summary"
printf 'i\tnot a line\n\xff\xfe\n' >>"$XDG_CACHE_HOME/nvshim/stats/journal"
"$NVSHIM" --dryrun -c k.cu -o k.o $ARCH >/dev/null 2>damaged.err
check "damaged record: the compile runs as before" test "$(notes damaged.err)" = "$today"
"$NVSHIM" stats >damaged.txt 2>&1
check "damaged record: nvshim stats warns and starts it again" \
	grep -q "^nvshim warning : stats: the record in .* was damaged; it was started again" damaged.txt
check "damaged record: counts go on" test "$(stat 's["total"]["invocations"]')" -ge 1
"$NVSHIM" stats --zero 2>/dev/null
check "nvshim stats --zero: nothing counted" test "$(stat 's["total"]["invocations"], len(s["builds"])')" = "(0, 0)"
NVSHIM_STATS=false "$NVSHIM" --dryrun -c k.cu -o k.o $ARCH >/dev/null 2>&1
check "stats = false: nothing recorded" test "$(stat 's["total"]["invocations"]')" = 0
"$NVSHIM" nvcc --version >/dev/null
check "an information query is not recorded" test "$(stat 's["total"]["invocations"]')" = 0
"$NVSHIM" --dryrun -c k.cu -o k.o >/dev/null 2>&1
check "a pass-through run is recorded" test "$(stat '(s["total"]["invocations"], s["total"]["rewritten"])')" = "(1, 0)"
finish
