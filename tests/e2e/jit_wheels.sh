#!/bin/bash
# NVRTC from the pip wheels (the cu13 and cu12 layouts), as Python's JIT clients load it: the
# preload library finds the headers beside it, or a complete set elsewhere, or names the package
# to install. A small C program (tests/preload/rtc_compile.c) dlopens the wheel's libnvrtc and
# compiles to PTX or to sm_90 code (NVRTC needs no GPU for either) with no include directory.
#   bash tests/e2e/jit_wheels.sh NVSHIM [NVCC]
# The wheels, pinned, are downloaded once into <build>/tests/wheels (not the user's pip cache);
# without the network the suite skips.
NVSHIM=$1 NVCC=${2:-/usr/local/cuda/bin/nvcc}
PY=${PRELOAD_TEST_PYTHON:-python3}
B=${NVSHIM_BUILD_DIR:-$(dirname "$NVSHIM")}
S=${NVSHIM_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/preload
. "$(dirname "$0")/lib.sh"
T=$B/tests/preload
LIB=$B/libexec/nvshim/libnvshim-preload.so
SANITIZED=
if readelf -d "$LIB" | grep -q 'NEEDED.*libasan'; then
	SANITIZED=1
	printf 'leak:libnvrtc\nleak:libnvrtc-builtins\n' >"$WORK/lsan.supp"
	export LSAN_OPTIONS="suppressions=$WORK/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
	export ASAN_OPTIONS="verify_asan_link_order=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
fi
WH=$B/tests/wheels
mkdir -p "$WH/download"
# install NAME CCCL-PACKAGE PACKAGES...: <build>/tests/wheels/NAME, a site-packages directory with
# all of them, and NAME-nocccl, the same less the CCCL package (hard links, less the files its
# RECORD lists: what uninstalling it leaves), made once.
install() {
	local name=$1 dir=$WH/$1 cccl=$2
	shift 2
	if [ ! -e "$dir/.done" ]; then
		rm -rf "$dir" "$dir-nocccl"
		"$PY" -m pip download -q --no-deps --only-binary=:all: -d "$WH/download" "$@" "$cccl" >"$WORK/pip-$name.log" 2>&1 &&
			"$PY" -m pip install -q --no-deps --no-index --find-links "$WH/download" --no-compile --target "$dir" \
				"$@" "$cccl" >>"$WORK/pip-$name.log" 2>&1 && touch "$dir/.done" || return 1
	fi
	if [ ! -e "$dir-nocccl/.done" ]; then
		rm -rf "$dir-nocccl"
		cp -al "$dir" "$dir-nocccl" && "$PY" - "$dir-nocccl" "${cccl%%==*}" <<-'PYEOF' || return 1
			import csv, glob, os, sys
			top, name = sys.argv[1], sys.argv[2].replace("-", "_")
			info = glob.glob(os.path.join(top, name + "-*.dist-info"))[0]
			for row in csv.reader(open(os.path.join(info, "RECORD"))):
			    p = os.path.join(top, row[0])
			    if os.path.isfile(p):
			        os.unlink(p)
			PYEOF
	fi
}
# The toolkit and every other place nvshim might find headers in, hidden.
hidden() { env -u CUDA_HOME -u CUDA_PATH -u CONDA_PREFIX -u PYTHONPATH NVSHIM_NVRTC_HEADER_ROOTS="$WORK/nowhere" "$NVSHIM" run -- "$@"; }
run() { "$NVSHIM" run -- "$@"; }
cd "$WORK" || exit 1

layout() { # layout NAME NVRTC-LIBRARY INCLUDE-DIRS (relative to the site-packages directory)
	local name=$1 rel=$2 incs=$3
	local full=$WH/$name nocccl=$WH/$name-nocccl
	if [ ! -e "$nocccl/.done" ]; then
		skip "$name wheels" "pip could not download or install them: $(tail -1 "$WORK/pip-$name.log" 2>/dev/null)"
		return
	fi
	local nvrtc=$full/$rel bare=$nocccl/$rel
	local version
	version=$("$T/rtc_compile" --lib="$nvrtc" --archs | sed -n 's/^version //p')
	local major=${version%%.*}
	echo "# $name: NVRTC $version from $nvrtc"
	local I=()
	for d in $incs; do I+=("-I$full/$d"); done

	# Cooperative groups, libcu++ and CUB, no include directory.
	out=$("$T/rtc_compile" --lib="$nvrtc" "$S/jit_headers.cu" -arch=compute_90 2>&1)
	check "$name: NVRTC alone finds no header" contains "$out" "^result 6" 'open source file "cooperative_groups.h"'
	out=$(hidden "$T/rtc_compile" --lib="$nvrtc" "$S/jit_headers.cu" -arch=compute_90 2>"$WORK/err")
	check "$name: under nvshim run it compiles to PTX (toolkit hidden)" contains "$out" "^result 0" "^target sm_90$"
	local want=""
	for d in $incs; do want="$want -I$(realpath "$full/$d")"; done
	check "$name: with the wheels' own include directories" contains "$out" \
		"compiled again with ${want# } (the headers of NVRTC $version's wheels, in .*): that worked \[nvrtc.include_dirs\]"
	check "$name: said once on stderr" test "$(grep -c '^nvshim' "$WORK/err")" = 1
	# The search runs once per NVRTC and process: two compiles, one search.
	out=$(NVSHIM_VERBOSITY=debug hidden "$T/rtc_compile" --lib="$nvrtc" --lib="$nvrtc" "$S/jit_headers.cu" -arch=compute_90 2>&1)
	check "$name: two compiles in one process, one header search" test \
		"$(grep -c '^result 0' <<<"$out") $(grep -c 'headers beside it' <<<"$out")" = "2 1"
	# A program that passes the directories itself works as given: nothing of nvshim's.
	out=$(hidden "$T/rtc_compile" --lib="$nvrtc" "$S/jit_headers.cu" -arch=compute_90 "${I[@]}" 2>"$WORK/err")
	check "$name: a program that works prints nothing of nvshim's" contains "$out" "^result 0"
	check "$name: ... on stderr either" test ! -s "$WORK/err"
	check "$name: ... nor in its log" test "$(grep -c nvshim <<<"$out")" = 0

	# Seed 002: cooperative groups and 49,408 bytes of static shared memory, to sm_90 code.
	out=$(hidden "$T/rtc_compile" --lib="$nvrtc" "$S/seed002.cu" -arch=sm_90 2>"$WORK/err")
	check "$name: seed 002: the headers are found, then ptxas's reason" contains "$out" "^result 6" \
		"compiled again with .*: the headers were found, then the compile failed (ptxas error *: Entry function 'reduce' uses too much shared data (0xc100 bytes, 0xc000 max))"
	check "$name: seed 002: and the fix" contains "$out" \
		"kernel reduce uses 49408 bytes of static shared memory on sm_90, .*cudaFuncSetAttribute(reduce, cudaFuncAttributeMaxDynamicSharedMemorySize, 49408).*\[resource.shared\]"

	# Without the CCCL wheel and no toolkit to be seen: one note names the package.
	local pkg="'nvidia-cuda-cccl==$version.*'"
	[ "$major" -lt 13 ] && pkg="'nvidia-cuda-cccl-cu$major==$version.*'"
	out=$(hidden "$T/rtc_compile" --lib="$bare" "$S/jit_headers.cu" -arch=compute_90 2>"$WORK/err")
	check "$name without CCCL, toolkit hidden: NVRTC's own failure" contains "$out" "^result 6" 'open source file "cooperative_groups.h"'
	check "$name without CCCL, toolkit hidden: the note names the package" contains "$out" \
		"then \"nv/target\" was not found: there are no CCCL of CUDA $major beside NVRTC $version or elsewhere on this machine; install them: pip install $pkg \[nvrtc.include_dirs\]"
	check "$name without CCCL: one note, no second compiler error" test "$(grep -c '^nvshim' "$WORK/err")" = 1
	out=$(hidden "$T/rtc_compile" --lib="$bare" "$S/cuda_std.cu" -arch=compute_90 2>"$WORK/err")
	check "$name without CCCL: a CCCL header alone: no retry, the package" contains "$out" "^result 6" \
		"\"cuda/std/type_traits\" was not found: there are no CCCL of CUDA $major beside NVRTC $version (.*) or elsewhere on this machine; install them: pip install $pkg"
	# ... and with a complete set of the same version elsewhere (the full wheels' site-packages).
	out=$(NVSHIM_NVRTC_HEADER_ROOTS="$WORK/nowhere:$full" run "$T/rtc_compile" --lib="$bare" "$S/jit_headers.cu" -arch=compute_90 2>"$WORK/err")
	check "$name without CCCL, the full wheels elsewhere: compiles with those" contains "$out" "^result 0" \
		"compiled again with ${want# } (CUDA $version's headers in .*, since $(realpath "$nocccl")/.* has no CCCL): that worked"
	python_client "$name" "$nvrtc" "$bare" "$version" "$pkg"
	# Only NVRTC's major version: the other layout's complete set is not taken.
	other=$WH/cu13
	[ "$major" -ge 13 ] && other=$WH/cu12
	if [ -e "$other/.done" ]; then
		out=$(NVSHIM_NVRTC_HEADER_ROOTS="$other" run "$T/rtc_compile" --lib="$bare" "$S/jit_headers.cu" -arch=compute_90 2>/dev/null)
		check "$name without CCCL: another major version's headers are not used" contains "$out" "^result 6" "install them: pip install $pkg"
	fi
}

install cu13 nvidia-cuda-cccl==13.0.85 nvidia-cuda-nvrtc==13.0.88 nvidia-cuda-runtime==13.0.96 nvidia-cuda-crt==13.0.88 &&
	touch "$WH/cu13-nocccl/.done"
install cu12 nvidia-cuda-cccl-cu12==12.9.27 nvidia-cuda-nvrtc-cu12==12.9.86 nvidia-cuda-runtime-cu12==12.9.79 &&
	touch "$WH/cu12-nocccl/.done"
# cuda.bindings (cuda-python's raw NVRTC), for the Python that runs the suite.
PYS=$WH/python-$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
if [ ! -e "$PYS/.done" ]; then
	rm -rf "$PYS"
	"$PY" -m pip download -q --no-deps --only-binary=:all: -d "$WH/download" cuda-bindings==13.3.1 cuda-pathfinder==1.8.1 >"$WORK/pip.log" 2>&1 &&
		"$PY" -m pip install -q --no-deps --no-index --find-links "$WH/download" --no-compile --target "$PYS" \
			cuda-bindings==13.3.1 cuda-pathfinder==1.8.1 >>"$WORK/pip.log" 2>&1 && touch "$PYS/.done"
fi
python_client() { # python_client NAME NVRTC-LIBRARY NO-CCCL-LIBRARY VERSION PACKAGE
	local name=$1 nvrtc=$2 bare=$3 version=$4 pkg=$5
	if [ ! -e "$PYS/.done" ]; then
		skip "$name, cuda.bindings" "pip could not download or install cuda-bindings 13.3.1: $(tail -1 "$WORK/pip.log")"
		return
	fi
	local client=(env PYTHONPATH="$PYS" "$PY" "$S/bindings_compile.py")
	# Sanitized: what Python keeps until exit is Python's; the C programs above keep the leak check.
	[ -n "$SANITIZED" ] && client=(env PYTHONPATH="$PYS" ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" "$PY" "$S/bindings_compile.py")
	out=$("${client[@]}" "$nvrtc" "$S/jit_headers.cu" -arch=compute_90 2>&1)
	check "$name, cuda.bindings: NVRTC alone finds no header" contains "$out" "^result 6" 'open source file "cooperative_groups.h"'
	out=$(hidden "${client[@]}" "$nvrtc" "$S/jit_headers.cu" -arch=compute_90 2>"$WORK/err")
	check "$name, cuda.bindings: compiles under nvshim run, the note in its log" contains "$out" "^result 0" \
		"the headers of NVRTC $version's wheels, in .*: that worked \[nvrtc.include_dirs\]"
	out=$(hidden "${client[@]}" "$nvrtc" "$S/seed002.cu" -arch=sm_90 2>"$WORK/err")
	check "$name, cuda.bindings: seed 002: ptxas's reason and the fix" contains "$out" "^result 6" \
		"uses too much shared data (0xc100 bytes, 0xc000 max)" "kernel reduce uses 49408 bytes .*\[resource.shared\]"
	out=$(hidden "${client[@]}" "$bare" "$S/jit_headers.cu" -arch=compute_90 2>"$WORK/err")
	check "$name, cuda.bindings without CCCL: one note names the package" contains "$out" "^result 6" \
		"install them: pip install $pkg \[nvrtc.include_dirs\]"
	check "$name, cuda.bindings without CCCL: said once" test "$(grep -c '^nvshim' "$WORK/err")" = 1
	out=$(hidden "${client[@]}" "$nvrtc" "$S/tiny.cu" -arch=compute_90 2>"$WORK/err")
	check "$name, cuda.bindings: a program that works compiles" contains "$out" "^result 0"
	check "$name, cuda.bindings: ... and prints nothing of nvshim's" test ! -s "$WORK/err"
	check "$name, cuda.bindings: ... nor puts any in its log" test "$(grep -c nvshim <<<"$out")" = 0
}

# A sanitized build: ASan's dlopen interceptor makes NVRTC's own dlopen of its builtins come
# from libasan, whose search path has no $ORIGIN of libnvrtc: a directory of the builtins alone
# says where they are (not the wheels' lib directories: the sanitized programs link libnvrtc, and
# one found there would be the same file as the copy without CCCL, which it then stands for).
if [ -n "$SANITIZED" ]; then
	mkdir -p "$WORK/builtins"
	ln -sf "$WH"/cu13/nvidia/cu13/lib/libnvrtc-builtins.so.* "$WH"/cu12/nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.* "$WORK/builtins/"
	export LD_LIBRARY_PATH="$WORK/builtins${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
layout cu13 nvidia/cu13/lib/libnvrtc.so.13 "nvidia/cu13/include nvidia/cu13/include/cccl"
layout cu12 nvidia/cuda_nvrtc/lib/libnvrtc.so.12 "nvidia/cuda_runtime/include nvidia/cuda_cccl/include"
# The toolkit of the same version as a complete set: CUDA 13.0 in /usr/local/cuda here.
CUDA=$(cd "$(dirname "$NVCC")/.." && pwd)
if [ -e "$WH/cu13-nocccl/.done" ] && grep -q '#define CUDA_VERSION 130' "$CUDA/include/cuda.h" 2>/dev/null; then
	out=$(env -u CUDA_HOME NVSHIM_NVRTC_HEADER_ROOTS="$CUDA" "$NVSHIM" run -- "$T/rtc_compile" --lib="$WH/cu13-nocccl/nvidia/cu13/lib/libnvrtc.so.13" "$S/jit_headers.cu" -arch=compute_90 2>/dev/null)
	check "cu13 without CCCL: the toolkit's headers (same version) instead, and said" contains "$out" "^result 0" \
		"-I$(realpath "$CUDA")/include -I$(realpath "$CUDA")/include/cccl (CUDA 13.0's headers in $(realpath "$CUDA"), since .* has no CCCL): that worked"
fi
finish
