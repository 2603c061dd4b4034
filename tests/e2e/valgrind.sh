#!/bin/bash
# libnvshim-preload.so under valgrind: memcheck on each path of the library (a rule that
# rewrites the options, a retry with include directories, an nvJitLink link explained, a driver
# link explained by recompiling, a lookup through cuGetProcAddress), helgrind on compiles from
# several threads. Any error valgrind reports in the program, the library or nvshim's core fails
# the check; NVRTC's and nvJitLink's own code is not nvshim's to fix, so what those libraries do
# by themselves (the same reports without nvshim) is suppressed: tests/e2e/fixtures/valgrind.supp
# says what and why. Runs on the plain build only: valgrind and the sanitizers do not mix.
#   bash tests/e2e/valgrind.sh NVSHIM [NVCC]
NVSHIM=$1 NVCC=${2:-/usr/local/cuda/bin/nvcc}
B=${NVSHIM_BUILD_DIR:-$(dirname "$NVSHIM")}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/lib.sh"
S=$SRC/tests/preload
T=$B/tests/preload
LIB=$B/libexec/nvshim/libnvshim-preload.so
CUDA=$(cd "$(dirname "$NVCC")/.." && pwd)
SUPP=$SRC/tests/e2e/fixtures/valgrind.supp
if ! command -v valgrind >/dev/null; then
	skip "valgrind suite" "no valgrind"
	finish
	exit
fi
if readelf -d "$LIB" | grep -q 'NEEDED.*libasan'; then
	skip "valgrind suite" "a sanitized build (valgrind runs on the plain build)"
	finish
	exit
fi
export LD_LIBRARY_PATH="$B/tests/fakecuda:$CUDA/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cd "$WORK" || exit 1
# vg TOOL NAME PROGRAM ARGS...: the program under valgrind with the library preloaded.
vg() {
	local tool=$1 name=$2
	shift 2
	local opts=(--error-exitcode=99 --num-callers=40 --suppressions="$SUPP")
	[ "$tool" = memcheck ] && opts+=(--leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite)
	LD_PRELOAD=$LIB valgrind --tool="$tool" "${opts[@]}" --log-file="$WORK/$name.vg" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
	local st=$?
	local errors
	errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$WORK/$name.vg" | tail -n 1)
	echo "# $name ($tool): status $st, ${errors:-?} errors"
	check "$name under $tool: no error" test $st -ne 99 -a "${errors:-1}" = 0 || sed 's/^/#   /' "$WORK/$name.vg" | head -60
}
# Each path: the run must also do what it does without valgrind.
NVSHIM_DEVICES=90 vg memcheck no-arch "$T/rtc_compile" "$S/wmma_bf16.cu" -I"$CUDA/include"
check "no-arch: compiled for compute_90" contains "$(cat "$WORK/no-arch.out")" "^result 0" "^target sm_90$"
vg memcheck include-dirs "$T/rtc_compile" --load=dlopen "$S/coop_groups.cu" -arch=compute_90
check "include-dirs: the retry compiled it" contains "$(cat "$WORK/include-dirs.out")" "^result 0"
vg memcheck nvjitlink "$T/jit_link" "$S/shared_too_much.cu"
check "nvjitlink: ptxas's message" grep -q "uses too much shared data" "$WORK/nvjitlink.err"
vg memcheck driver-link "$T/link_driver" "$S/shared_too_much.cu"
check "driver-link: recompiled and explained" grep -q "uses too much shared data" "$WORK/driver-link.err"
vg memcheck proc-address "$T/link_driver" --load=procaddress "$S/shared_too_much.cu"
check "proc-address: explained" grep -q "uses too much shared data" "$WORK/proc-address.err"
# Threads: compiles from 4 threads, half of them fixed by a rule.
NVSHIM_DEVICES=90 vg helgrind threads "$T/rtc_threads" 4 8
check "threads: all compiles good" grep -q "^ok 8 compiles in .* 0 failed" "$WORK/threads.out"
# nvshim's own signal handling (runner.c): a compile with stderr held, SIGTERM to nvshim's pid
# mid-compile; nvshim passes it on to nvcc, waits and ends with nvcc's 255. Under helgrind (the
# handler against the code it interrupts); nvcc itself runs natively. Not memcheck: nvshim is
# linked statically, so memcheck cannot see its malloc and reports libc's start-up as
# uninitialised (the ASan+UBSan build covers nvshim's memory, tests/e2e/signals.sh included).
SIGFIX=$SRC/tests/e2e/fixtures/signals
GEN=()
for a in 75 80 86 89 90; do GEN+=(-gencode "arch=compute_$a,code=sm_$a"); done
for tool in helgrind; do
	D=$WORK/sig-$tool
	mkdir -p "$D/tmp"
	cp "$SIGFIX"/*.cu "$D/"
	opts=(--error-exitcode=99 --num-callers=40 --log-file="$D/vg")
	out=$(cd "$D" && TMPDIR="$D/tmp" NVSHIM_NVCC="$NVCC" python3 "$SIGFIX/sigrun.py" TERM "nvvm/bin/cicc .*$D/tmp/" 60 "$D/err" -- \
		valgrind --tool=$tool "${opts[@]}" "$NVSHIM" -c slow.cu "${GEN[@]}" -o "$D/k.o")
	errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$D/vg" | tail -n 1)
	echo "# nvshim, SIGTERM mid-compile ($tool): $(tr '\n' ' ' <<<"$out")${errors:-?} errors"
	check "nvshim, SIGTERM mid-compile, under $tool: nvcc's 255, no error" \
		test "$(sed -n 's/^status //p' <<<"$out")" = 255 -a "${errors:-1}" = 0 || sed 's/^/#   /' "$D/vg" | head -60
	check "nvshim, SIGTERM mid-compile, under $tool: no object, nvcc ended with nvshim, no process of the run left" \
		test ! -e "$D/k.o" -a "$(sed -n 's/^nvcc //p' <<<"$out")" = 0 -a "$(sed -n 's/^left_later //p' <<<"$out")" = 0
done
finish
