#!/bin/bash
# libnvshim-preload.so against the machine's NVRTC and nvJitLink, and a test double of the CUDA
# driver (tests/preload/fake_cuda.c, whose linker fails with CUDA_ERROR_INVALID_SOURCE and an
# empty log, as the driver does for relocatable code that uses too much shared memory when no
# log buffer is given). Every case runs the same program without and with the library: the
# failure is NVRTC's or nvJitLink's own, and the fix or the explanation is nvshim's.
#   bash tests/e2e/preload.sh NVSHIM [NVCC]
NVSHIM=$1 NVCC=${2:-/usr/local/cuda/bin/nvcc}
PY=${PRELOAD_TEST_PYTHON:-python3}
B=${NVSHIM_BUILD_DIR:-$(dirname "$NVSHIM")}
S=${NVSHIM_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/preload
. "$(dirname "$0")/lib.sh"
T=$B/tests/preload
LIB=$B/libexec/nvshim/libnvshim-preload.so
CUDA=$(cd "$(dirname "$NVCC")/.." && pwd)
INC=$CUDA/include
INC_REAL=$(realpath "$INC")
export LD_LIBRARY_PATH="$B/tests/fakecuda:$CUDA/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# A sanitized build: the programs, the test double and the library are all instrumented, and
# the library needs the sanitizer runtime loaded before it (`nvshim run` of such a build puts
# it first; the cases that set LD_PRELOAD themselves do the same). NVRTC and nvJitLink are not
# instrumented; what they keep until exit is theirs, not a leak of nvshim's.
# (nvshim itself, started with another LD_PRELOAD by some cases, then has the runtime second:
# the order check is off.)
PRE=$LIB
if readelf -d "$LIB" | grep -q 'NEEDED.*libasan'; then
	echo "# a sanitized build: the sanitizer runtime is preloaded first"
	PRE="$(gcc -print-file-name=libasan.so):$LIB"
	printf 'leak:libnvrtc\nleak:libnvJitLink\nleak:libnvrtc-builtins\n' >"$WORK/lsan.supp"
	export LSAN_OPTIONS="suppressions=$WORK/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
	export ASAN_OPTIONS="verify_asan_link_order=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
fi
cd "$WORK" || exit 1
run() { "$NVSHIM" run -- "$@"; } # with the library
max=$("$T/rtc_compile" --archs | sed -n 's/^archs .* \([0-9]*\)$/\1/p')
version=$("$T/rtc_compile" --archs | sed -n 's/^version //p')
echo "# NVRTC $version, newest target compute_$max"

# --- nvrtc.no_arch: a bf16 wmma fragment is an incomplete type at NVRTC's default target.
for load in direct dlopen dlvsym default; do
	prog=$T/rtc_compile
	args=(--load=$load)
	[ $load = direct ] && prog=$T/rtc_compile_direct && args=()
	out=$(NVSHIM_DEVICES=90 "$prog" "${args[@]}" "$S/wmma_bf16.cu" -I"$INC" 2>&1)
	check "no -arch, $load: NVRTC alone fails on the bf16 fragment" contains "$out" "^result 6" 'incomplete type "nvcuda::wmma::fragment<'
	out=$(NVSHIM_DEVICES=90 run "$prog" "${args[@]}" "$S/wmma_bf16.cu" -I"$INC" 2>"$WORK/err")
	check "no -arch, $load: compiles for the GPU's compute_90" contains "$out" "^result 0" "^target sm_90$"
	check "no -arch, $load: the program log says why" contains "$out" "no -arch given: compiling for compute_90, the GPU's (NVSHIM_DEVICES).*\[nvrtc.no_arch\]"
	check "no -arch, $load: so does stderr, once" test "$(grep -c '\[nvrtc.no_arch\]' "$WORK/err")" = 1
done
out=$(NVSHIM_DEVICES= NVSHIM_FALLBACK_ARCHS=86,90 run "$T/rtc_compile" "$S/wmma_bf16.cu" -I"$INC" 2>/dev/null)
check "no -arch, no GPU: fallback_archs (the lowest)" contains "$out" "^result 0" "^target sm_86$" "(fallback_archs)"
out=$(NVSHIM_DEVICES= run "$T/rtc_compile" "$S/wmma_bf16.cu" -I"$INC" 2>"$WORK/err")
check "no -arch, no GPU, no fallback_archs: left to NVRTC" contains "$out" "^result 6"
check "no -arch, no GPU: nothing said" test ! -s "$WORK/err"
out=$(NVSHIM_DEVICES=90 "$NVSHIM" run --nvshim-nvrtc-no-arch=false -- "$T/rtc_compile" "$S/wmma_bf16.cu" -I"$INC" 2>/dev/null)
check "nvrtc_no_arch = false (an option of nvshim run): NVRTC's default fails, nvrtc.retry_arch retries" \
	contains "$out" "^result 0" "failed for compute_75 .*\[nvrtc.retry_arch\]"
out=$(NVSHIM_DEVICES=90 "$NVSHIM" run --nvshim-nvrtc-no-arch=false --nvshim-nvrtc-retry-arch=false -- "$T/rtc_compile" "$S/wmma_bf16.cu" -I"$INC" 2>/dev/null)
check "nvrtc_no_arch and nvrtc_retry_arch off: NVRTC's own result" contains "$out" "^result 6"

# --- nvrtc.include_dirs: cooperative groups need include/ and, on CUDA 13, include/cccl.
out=$("$T/rtc_compile" "$S/coop_groups.cu" -arch=compute_90 2>&1)
check "cooperative groups: NVRTC alone cannot find the header" contains "$out" "^result 6" 'open source file "cooperative_groups.h"'
out=$("$T/rtc_compile" "$S/coop_groups.cu" -arch=compute_90 -I"$INC" 2>&1)
if grep -q '"cuda/std/type_traits"' <<<"$out"; then
	echo "# with -I$INC only: cannot open source file \"cuda/std/type_traits\" (CUDA 13's CCCL is in include/cccl)"
fi
for load in direct dlopen; do
	prog=$T/rtc_compile
	[ $load = direct ] && prog=$T/rtc_compile_direct
	out=$(run "$prog" "$S/coop_groups.cu" -arch=compute_90 2>"$WORK/err")
	check "cooperative groups, $load: compiles after one retry" contains "$out" "^result 0" "^target sm_90$"
	check "cooperative groups, $load: with the toolkit's include and include/cccl" contains "$out" \
		"compiled again with -I$INC_REAL -I$INC_REAL/cccl (the headers of NVRTC $version's toolkit): that worked \[nvrtc.include_dirs\]"
	check "cooperative groups, $load: said on stderr" grep -q '\[nvrtc.include_dirs\]' "$WORK/err"
done
out=$(NVSHIM_NVRTC_INCLUDE_DIRS=false run "$T/rtc_compile" "$S/coop_groups.cu" -arch=compute_90 2>/dev/null)
check "nvrtc_include_dirs = false: NVRTC's own result" contains "$out" "^result 6"
out=$(run "$T/rtc_compile" "$S/tiny.cu" -arch=compute_90 -include no_such_header.h 2>"$WORK/err")
check "a header the toolkit does not have either: no retry, NVRTC's log" contains "$out" "^result 6" "no_such_header.h"
check "a header the toolkit does not have either: nothing said" test ! -s "$WORK/err"

# --- nvrtc.clamp_arch: a target newer (or older) than this NVRTC supports.
out=$("$T/rtc_compile" "$S/tiny.cu" -arch=compute_130 2>&1)
check "-arch=compute_130: NVRTC alone rejects it" contains "$out" "^result 5" "invalid value for --gpu-architecture"
out=$(run "$T/rtc_compile_direct" "$S/tiny.cu" -arch=compute_130 2>/dev/null)
check "-arch=compute_130: compiled for NVRTC's newest, compute_$max" contains "$out" "^result 0" "^target sm_$max$" \
	"-arch=compute_130 is newer than the targets NVRTC $version supports .*compiling for compute_$max \[nvrtc.clamp_arch\]"
out=$(run "$T/rtc_compile" "$S/tiny.cu" -arch=sm_52 2>/dev/null)
check "-arch=sm_52: compiled for NVRTC's oldest" contains "$out" "^result 0" "-arch=sm_52 is older than .*\[nvrtc.clamp_arch\]"

# --- nvrtc.retry_arch: a target below the GPU's that the code cannot be compiled for.
out=$("$T/rtc_compile" "$S/wmma_bf16.cu" -arch=compute_75 -I"$INC" 2>&1)
check "-arch=compute_75 bf16 wmma: NVRTC alone fails" contains "$out" "^result 6" "incomplete type"
out=$(NVSHIM_DEVICES=90 run "$T/rtc_compile" "$S/wmma_bf16.cu" -arch=compute_75 -I"$INC" 2>/dev/null)
check "-arch=compute_75, GPU sm_90: one retry for compute_90 works" contains "$out" "^result 0" "^target sm_90$" \
	"failed for compute_75 with an error a newer target cures .*compiled again for compute_90, the GPU's (NVSHIM_DEVICES): that worked \[nvrtc.retry_arch\]"
out=$(NVSHIM_DEVICES=75 run "$T/rtc_compile" "$S/wmma_bf16.cu" -arch=compute_75 -I"$INC" 2>/dev/null)
check "-arch=compute_75, GPU sm_75: no retry, NVRTC's failure" contains "$out" "^result 6" "incomplete type"
check "-arch=compute_75, GPU sm_75: no note" test -z "$(grep nvshim <<<"$out")"
{ cat "$S/wmma_bf16.cu"; echo 'extern "C" __global__ void broken() { undefined_thing(); }'; } >broken.cu
out=$(NVSHIM_DEVICES=90 run "$T/rtc_compile" broken.cu -arch=compute_75 -I"$INC" 2>/dev/null)
check "a retry that fails too: the first result and the first log, with the note" contains "$out" "^result 6" \
	"incomplete type" "that failed too (.*undefined_thing" 'identifier "undefined_thing" is undefined'

# --- The happy path: one compile, the caller's options, NVRTC's output unchanged.
"$T/rtc_compile_direct" "$S/tiny.cu" -arch=compute_90 -lineinfo >plain.out 2>&1
LD_PRELOAD="$PRE:$T/libcount_lib.so" "$T/rtc_compile_direct" "$S/tiny.cu" -arch=compute_90 -lineinfo >shim.out 2>shim.err
check "happy path: the same result, PTX target and log as without nvshim" cmp -s plain.out shim.out
check "happy path: compiled once, with the caller's options" test "$(cat shim.err)" = "count_lib: compile -arch=compute_90 -lineinfo"
NVSHIM_DEVICES=90 LD_PRELOAD="$PRE:$T/libcount_lib.so" "$T/rtc_compile_direct" "$S/wmma_bf16.cu" -arch=compute_75 -I"$INC" >/dev/null 2>shim.err
check "a retry is one more compile" test "$(grep -c '^count_lib: compile' shim.err)" = 2
# Another interposer in front of nvshim (nvshim run appends to LD_PRELOAD) sees the program's calls.
LD_PRELOAD="$T/libcount_lib.so" "$NVSHIM" run -- "$T/rtc_compile_direct" "$S/tiny.cu" -arch=compute_90 >/dev/null 2>shim.err
check "an interposer before nvshim: its calls reach NVRTC through nvshim" test "$(cat shim.err)" = "count_lib: compile -arch=compute_90"
out=$(NVSHIM_DEVICES=90 NVSHIM_VERBOSITY=quiet run "$T/rtc_compile" "$S/wmma_bf16.cu" -I"$INC" 2>"$WORK/err")
check "verbosity quiet: nothing on stderr, the note still in the log" test ! -s "$WORK/err" -a -n "$(grep 'nvrtc.no_arch' <<<"$out")"

# --- resource.*: ptxas's resource errors in a program's log are explained as nvcc mode does.
out=$("$T/rtc_compile" "$S/shared_too_much.cu" -arch=sm_90 2>"$WORK/err")
check "0xc080 bytes of shared memory, -arch=sm_90: NVRTC alone fails with ptxas's terse line" contains "$out" \
	"^result 6" "^ptxas error   : Entry function 'mm' uses too much shared data (0xc080 bytes, 0xc000 max)$"
check "0xc080 bytes of shared memory: nothing on stderr without nvshim" test ! -s "$WORK/err"
out2=$(run "$T/rtc_compile" "$S/shared_too_much.cu" -arch=sm_90 2>"$WORK/err")
check "0xc080 bytes of shared memory: the same result, the log explains it" contains "$out2" "^result 6" \
	"^ptxas error   : Entry function 'mm' uses too much shared data" \
	"^nvshim warning : NVRTC program 'shared_too_much.cu': kernel mm uses 49280 bytes of static shared memory on sm_90, more than the 49152 bytes (48 KiB) .*cudaFuncSetAttribute(mm, cudaFuncAttributeMaxDynamicSharedMemorySize, 49280) (sm_90 allows up to 232448 bytes.* \[resource.shared\]$"
check "0xc080 bytes of shared memory: stderr too, once" test "$(grep -c '\[resource.shared\]' "$WORK/err")" = 1
out2=$(NVSHIM_EXPLAIN_RESOURCES=false run "$T/rtc_compile" "$S/shared_too_much.cu" -arch=sm_90 2>"$WORK/err")
check "explain_resources = false: NVRTC's log as it is" test "$out" = "$out2" -a ! -s "$WORK/err"

# --- Several NVRTC libraries in one process: each gets its own wrappers.
if [ -e "$CUDA/lib64/libnvrtc.alt.so.13" ]; then
	out=$(NVSHIM_VERBOSITY=debug run "$T/rtc_compile" --lib=libnvrtc.so.13 --lib="$CUDA/lib64/libnvrtc.alt.so.13" "$S/coop_groups.cu" -arch=compute_90 2>"$WORK/err")
	check "two NVRTC libraries: both compiles fixed" test "$(grep -c '^result 0' <<<"$out")" = 2
	check "two NVRTC libraries: two library slots" contains "$(cat "$WORK/err")" "libnvrtc.so.13 is library slot" "libnvrtc.alt.so.13 is library slot"
else
	skip "two NVRTC libraries" "no libnvrtc.alt.so.13 in $CUDA/lib64"
fi
# Two NVRTC versions, when a CUDA 12 NVRTC is at hand (PRELOAD_TEST_NVRTC12, or the
# nvidia-cuda-nvrtc-cu12 wheel in $PY's site-packages): each library's own supported targets.
NVRTC12=${PRELOAD_TEST_NVRTC12:-$("$PY" -c 'import glob, site
for d in site.getsitepackages() + [site.getusersitepackages()]:
    for p in glob.glob(d + "/nvidia/cuda_nvrtc/lib/libnvrtc.so.12"):
        print(p); raise SystemExit' 2>/dev/null)}
if [ -n "$NVRTC12" ] && [ -e "$NVRTC12" ]; then
	max12=$("$T/rtc_compile" --lib="$NVRTC12" --archs | sed -n 's/^archs .* \([0-9]*\)$/\1/p')
	v12=$("$T/rtc_compile" --lib="$NVRTC12" --archs | sed -n 's/^version //p')
	# (Its builtins are found beside it through LD_LIBRARY_PATH: a sanitizer's dlopen
	# interceptor hides NVRTC's own $ORIGIN from the loader.)
	min12=$("$T/rtc_compile" --lib="$NVRTC12" --archs | sed -n 's/^archs \([0-9]*\) .*/\1/p')
	min=$("$T/rtc_compile" --archs | sed -n 's/^archs \([0-9]*\) .*/\1/p')
	# compute_70: NVRTC 12 has it, NVRTC 13 (from compute_75 on) does not.
	out=$(LD_LIBRARY_PATH="$(dirname "$NVRTC12"):$LD_LIBRARY_PATH" run "$T/rtc_compile" --lib=libnvrtc.so.13 --lib="$NVRTC12" "$S/tiny.cu" -arch=compute_70 2>/dev/null)
	echo "# NVRTC $version (compute_$min to compute_$max) and NVRTC $v12 (compute_$min12 to compute_$max12) in one process"
	check "NVRTC $version and $v12 in one process: each compiles" test "$(grep -c '^result 0' <<<"$out")" = 2
	check "NVRTC $version and $v12 in one process: compute_70 kept for $v12, clamped for $version" contains "$out" \
		"^target sm_70$" "^target sm_$min$" "-arch=compute_70 is older than the targets NVRTC $version supports .*compiling for compute_$min \[nvrtc.clamp_arch\]"
	check "NVRTC $version and $v12 in one process: no note for $v12" test "$(grep -c 'nvrtc.clamp_arch' <<<"$out")" = 1
else
	skip "NVRTC 12 and 13 in one process" "no libnvrtc.so.12 (pip install nvidia-cuda-nvrtc-cu12, or PRELOAD_TEST_NVRTC12)"
fi

# --- nvJitLink: relocatable code with 0xc080 bytes of shared memory fails at the link, and a
# program that never reads nvJitLink's error log shows nothing.
for v in "direct cubin" "direct ptx" "dlsym cubin"; do
	set -- $v
	prog=$T/jit_link
	[ $1 = direct ] && prog=$T/jit_link_direct
	flags=()
	[ $2 = ptx ] && flags=(--ptx)
	out=$("$prog" "${flags[@]}" "$S/shared_too_much.cu" 2>"$WORK/err")
	check "nvJitLink ($1, -rdc $2): the link fails" contains "$out" "^nvJitLinkComplete [1-9]"
	check "nvJitLink ($1, -rdc $2): nothing on stderr without nvshim" test ! -s "$WORK/err"
	out2=$(run "$prog" "${flags[@]}" "$S/shared_too_much.cu" 2>"$WORK/err")
	check "nvJitLink ($1, -rdc $2): the same result" test "$out" = "$out2"
	check "nvJitLink ($1, -rdc $2): stderr has ptxas's message" contains "$(cat "$WORK/err")" \
		"nvJitLinkComplete failed with NVJITLINK_ERROR_[A-Z_]* ([0-9]*); nvJitLink's error log says: \[link.diagnose\]" \
		"Entry function 'mm' uses too much shared data (0xc080 bytes, 0xc000 max)"
	check "nvJitLink ($1, -rdc $2): and explains it" grep -q "kernel mm uses 49280 bytes of static shared memory.*\[resource.shared\]$" "$WORK/err"
done
out=$("$T/jit_link_direct" --errlog "$S/shared_too_much.cu" 2>/dev/null)
out2=$(run "$T/jit_link_direct" --errlog "$S/shared_too_much.cu" 2>/dev/null)
check "nvJitLink: a program that reads the error log gets what nvJitLink says, then the explanation" \
	test "$(grep -v '^nvshim: note: ' <<<"$out2")" = "$out" -a "$(grep -c '^nvshim: note: kernel mm uses 49280 bytes .*\[resource.shared\]$' <<<"$out2")" = 1

# --- The driver's JIT linker (test double): CUDA_ERROR_INVALID_SOURCE and an empty log.
for load in direct dlopen procaddress; do
	prog=$T/link_driver
	[ $load = direct ] && prog=$T/link_driver_direct
	out=$("$prog" --load=$load "$S/shared_too_much.cu" 2>"$WORK/err")
	check "driver link ($load): fails with 300 and nothing to say" contains "$out" "^cuLinkComplete 300 CUDA_ERROR_INVALID_SOURCE: device kernel image is invalid$"
	check "driver link ($load): no stderr without nvshim" test ! -s "$WORK/err"
	out=$(run "$prog" --load=$load "$S/shared_too_much.cu" 2>"$WORK/err")
	check "driver link ($load): still 300 with nvshim" contains "$out" "^cuLinkComplete 300 "
	check "driver link ($load): the program was compiled again for the device's sm_90 without -rdc" contains "$(cat "$WORK/err")" \
		"cuLinkComplete failed with CUDA_ERROR_INVALID_SOURCE (300) and an empty log; NVRTC program 'shared_too_much.cu', compiled again for sm_90 without -rdc, says: \[link.diagnose\]" \
		"^ptxas error   : Entry function 'mm' uses too much shared data (0xc080 bytes, 0xc000 max)$"
	check "driver link ($load): and explains it for sm_90" grep -q "kernel mm uses 49280 bytes of static shared memory on sm_90.*\[resource.shared\]$" "$WORK/err"
	check "driver link ($load): cuGetErrorString right after says it too" contains "$out" \
		"device kernel image is invalid (nvshim: ptxas error   : Entry function 'mm' uses too much shared data"
done
out=$(run "$T/link_driver" --load=procaddress --proc-version=3020 "$S/shared_too_much.cu" 2>"$WORK/err")
check "cuGetProcAddress for CUDA 3.2 (the first cuLink* forms): explained too" grep -q "uses too much shared data" "$WORK/err"
out=$(run "$T/link_driver" --log --cubin "$S/shared_too_much.cu" 2>/dev/null)
check "driver link with a log buffer: the explanation is in the caller's buffer" contains "$out" "^log-begin" \
	"^nvshim: NVRTC program 'shared_too_much.cu', compiled for sm_90 without -rdc, says:" "^ptxas error   : Entry function 'mm' uses too much shared data" \
	"^nvshim: note: kernel mm uses 49280 bytes of static shared memory on sm_90.*\[resource.shared\]$"
for mode in file module ex library; do
	out=$(run "$T/link_driver" --mode=$mode "$S/shared_too_much.cu" 2>"$WORK/err")
	check "driver, $mode: the original result" contains "$out" " 300 CUDA_ERROR_INVALID_SOURCE"
	check "driver, $mode: explained" grep -q "^ptxas error   : Entry function 'mm' uses too much shared data" "$WORK/err"
done
out=$(FAKE_CUDA_CC=80 run "$T/link_driver" "$S/shared_too_much.cu" 2>"$WORK/err")
check "the target is the context's device (sm_80 here)" grep -q "compiled again for sm_80 without -rdc" "$WORK/err"
out=$(FAKE_CUDA_LOG="error   : a message of the driver's" run "$T/link_driver" "$S/shared_too_much.cu" 2>"$WORK/err")
check "a log the program did not ask for is captured and shown" contains "$(cat "$WORK/err")" \
	"the JIT linker's error log, which the program did not ask for" "^error   : a message of the driver's$"
check "... and not replaced by a recompile" test -z "$(grep 'compiled again' "$WORK/err")"
out=$(NVSHIM_LINK_DIAGNOSE=false run "$T/link_driver" "$S/shared_too_much.cu" 2>"$WORK/err")
check "link_diagnose = false: as without nvshim" test ! -s "$WORK/err" -a -z "$(grep nvshim <<<"$out")"
out=$(NVSHIM_LINK_ERROR_STRING=false run "$T/link_driver" "$S/shared_too_much.cu" 2>/dev/null)
check "link_error_string = false: cuGetErrorString as the driver says it" contains "$out" "device kernel image is invalid$"
out=$(FAKE_CUDA_OK=1 run "$T/link_driver" "$S/shared_too_much.cu" 2>"$WORK/err")
check "a link that works: nothing said" test ! -s "$WORK/err" -a -n "$(grep '^cuLinkComplete 0 ' <<<"$out")"

# --- An allocator that finds malloc with dlsym(RTLD_NEXT) from inside malloc (as jemalloc,
# tcmalloc and sanitizers do): its dlsym calls go through nvshim's hook, which must not
# allocate (the allocation would come back into a malloc that is not ready).
if [ "$PRE" = "$LIB" ]; then
	LD_PRELOAD="$T/libmalloc_probe.so" "$T/rtc_compile_direct" "$S/coop_groups.cu" -arch=compute_90 >plain.out 2>plain.err
	LD_PRELOAD="$LIB:$T/libmalloc_probe.so" "$T/rtc_compile_direct" "$S/coop_groups.cu" -arch=compute_90 >shim.out 2>shim.err
	check "a malloc that resolves itself with dlsym: its dlsym goes through nvshim's hook" sh -c \
		"LD_DEBUG=bindings LD_PRELOAD='$LIB:$T/libmalloc_probe.so' '$T/rtc_compile_direct' '$S/tiny.cu' -arch=compute_90 2>&1 | grep -q 'libmalloc_probe.so .*to .*libnvshim-preload.so .*symbol .dlsym'"
	check "a malloc that resolves itself with dlsym: no allocation from nvshim's hook" \
		test "$(grep '^malloc_probe:' shim.err)" = "$(grep '^malloc_probe:' plain.err)" -a -n "$(grep '^malloc_probe: 0 ' plain.err)"
	check "a malloc that resolves itself with dlsym: the program is fixed as usual" contains "$(cat shim.out)" "^result 0" "\[nvrtc.include_dirs\]"
else
	skip "a malloc that resolves itself with dlsym" "a sanitized build: the sanitizer owns malloc"
fi

# --- dlsym itself: RTLD_NEXT and RTLD_DEFAULT are still relative to the caller.
out=$(LD_PRELOAD="$PRE:$T/libnext_lib.so" "$T/next_main" 2>&1)
check "an interposer after nvshim finds the real getpid with dlsym(RTLD_NEXT)" contains "$out" "^pid ok$"
check "dlsym(RTLD_DEFAULT) finds the program's own symbol" contains "$out" "^default ok$"
check "dlsym(RTLD_DEFAULT, nvrtcCompileProgram) without NVRTC loaded: not found, as without nvshim" contains "$out" "^nvrtc before dlopen not found$"

# --- nvshim run and nvshim doctor.
out=$(LD_PRELOAD="$T/libnext_lib.so" "$NVSHIM" run --nvshim-verbosity=quiet -- sh -c 'echo "$LD_PRELOAD"; echo "NVSHIM_VERBOSITY=$NVSHIM_VERBOSITY"')
check "nvshim run: existing LD_PRELOAD entries kept, the library added" contains "$out" "$T/libnext_lib.so:.*$(basename "$LIB")$"
check "nvshim run: settings passed on" contains "$out" "^NVSHIM_VERBOSITY=quiet$"
out=$(run sh -c 'echo "$LD_PRELOAD"' 2>&1)
out2=$(LD_PRELOAD=$out "$NVSHIM" run -- sh -c 'echo "$LD_PRELOAD"' 2>&1)
check "nvshim run inside nvshim run: the library once" test "$out" = "$out2"
mkdir -p other && cp "$LIB" other/
out=$(LD_PRELOAD="$WORK/other/libnvshim-preload.so:$T/libnext_lib.so" "$NVSHIM" run -- sh -c 'echo "$LD_PRELOAD"' 2>&1)
check "nvshim run: another nvshim's library is replaced by this one's" contains "$out" "$T/libnext_lib.so:$LIB$"
"$NVSHIM" run -- false
check "nvshim run: the command's exit status" test $? -eq 1
"$NVSHIM" run -- ./no-such-command 2>"$WORK/err"
check "nvshim run: a command that cannot run is an error, status 127" test $? -eq 127 -a -n "$(grep "cannot run './no-such-command'" "$WORK/err")"
out=$("$NVSHIM" doctor 2>/dev/null)
check "doctor: not in effect here" contains "$out" "^preload   : not in effect (.nvshim run -- CMD. runs CMD with .*libnvshim-preload.so)"
out=$(run "$NVSHIM" doctor 2>/dev/null)
check "doctor under nvshim run: in effect" contains "$out" "^preload   : in effect (LD_PRELOAD has .*libnvshim-preload.so)"
out=$(LD_PRELOAD= run sh -c 'printf "%s\n" hello | tr a-z A-Z' 2>&1)
check "a program that uses no CUDA runs as it would" test "$out" = HELLO
out=$(NVSHIM_VERBOSITY=loud NVSHIM_DEVICES=90 LD_PRELOAD="$PRE" "$T/rtc_compile" "$S/wmma_bf16.cu" -I"$INC" 2>"$WORK/err")
check "a bad setting: one warning, and the rules still work" contains "$out" "^result 0"
check "a bad setting: said once" test "$(grep -c "NVSHIM_VERBOSITY" "$WORK/err")" = 1

# --- noimage.explain / noimage.stub: "no kernel image" at load, lookup or launch, with the test
# driver judging images as the driver does (FAKE_CUDA_IMAGES). The images are nvcc's own: a
# fatbin and a cubin for sm_80, and a fatbin for sm_75, held by a shared library.
cat >ni.cu <<'CU'
__global__ void add(float *x) { x[threadIdx.x] += 1; }
__global__ void guarded(float *x) {
#if __CUDA_ARCH__ >= 900
  x[0] = 1;
#endif
}
CU
"$NVCC" -fatbin -gencode arch=compute_80,code=sm_80 ni.cu -o ni80.fatbin &&
	"$NVCC" -cubin -arch=sm_80 ni.cu -o ni80.cubin &&
	"$NVCC" -fatbin -gencode 'arch=compute_75,code=[sm_75,compute_75]' ni.cu -o ni75.fatbin &&
	"$NVCC" -fatbin -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 ni.cu -o ni8090.fatbin &&
	"$NVCC" -ptx -arch=compute_80 ni.cu -o ni95.ptx &&
	# as nvcc 13.5 writes it (ISA 9.5), NUL-terminated as a loader is given it
	sed -i 's/^\.version .*/.version 9.5/' ni95.ptx && printf '\0' >>ni95.ptx &&
	for b in ni80.fatbin ni80.cubin ni75.fatbin ni8090.fatbin ni95.ptx; do ld -r -z noexecstack -b binary $b -o $b.o; done &&
	gcc -shared ni80.fatbin.o ni80.cubin.o ni75.fatbin.o ni8090.fatbin.o ni95.ptx.o -o "$WORK/libni.so"
NI=$T/noimage
export FAKE_CUDA_IMAGES=1
EXPECT="has no kernel image for this GPU (sm_75): it holds sm_80; rebuild it with -gencode arch=compute_75,code=sm_75 (TORCH_CUDA_ARCH_LIST=\"7.5\", CMAKE_CUDA_ARCHITECTURES=75) \[noimage.explain\]"
for via in dlsym proc direct; do
	prog=$NI args=(--via=$via)
	[ $via = direct ] && prog=${NI}_direct args=()
	plain=$(FAKE_CUDA_CC=75 "$prog" "${args[@]}" module "$WORK/libni.so" _binary_ni80_fatbin_start _Z3addPf 2>&1)
	out=$(FAKE_CUDA_CC=75 run "$prog" "${args[@]}" module "$WORK/libni.so" _binary_ni80_fatbin_start _Z3addPf 2>"$WORK/err")
	check "no image, lazy, $via: the program's own results unchanged" test "$out" = "$plain" -a "$out" = "$(printf 'load 0\nget 209')"
	check "no image, lazy, $via: cuModuleGetFunction explained: the kernel, the library, its targets, the fix" \
		grep -q "cuModuleGetFunction failed with CUDA_ERROR_NO_BINARY_FOR_GPU (209): kernel 'add(float\*)' of $WORK/libni.so $EXPECT" "$WORK/err"
	out=$(FAKE_CUDA_CC=75 run "$prog" "${args[@]}" library "$WORK/libni.so" _binary_ni80_fatbin_start _Z3addPf 2>"$WORK/err")
	launch=cuLaunchKernel
	[ $via = proc ] && launch=cuLaunchKernel_ptsz
	check "no image, library, $via: the launch fails as it would" test "$out" = "$(printf 'load 0\nget 0\nlaunch 209')"
	check "no image, library, $via: the launch ($launch) explained, naming the library" \
		grep -q "$launch failed with CUDA_ERROR_NO_BINARY_FOR_GPU (209): $WORK/libni.so $EXPECT" "$WORK/err"
	check "no image, library, $via: said once" test "$(grep -c noimage.explain "$WORK/err")" = 1
done
out=$(CUDA_MODULE_LOADING=EAGER FAKE_CUDA_CC=75 run "$NI" module "$WORK/libni.so" _binary_ni80_cubin_start _Z3addPf 2>"$WORK/err")
check "no image, eager, a cubin: the load fails as it would" test "$out" = "load 209"
check "no image, eager: cuModuleLoadData explained" grep -q "cuModuleLoadData failed with CUDA_ERROR_NO_BINARY_FOR_GPU (209): $WORK/libni.so $EXPECT" "$WORK/err"
check "no image, eager: nothing of link.diagnose" test -z "$(grep link.diagnose "$WORK/err")"
out=$(CUDA_MODULE_LOADING=EAGER FAKE_CUDA_CC=75 run "$NI" fatbin "$WORK/libni.so" _binary_ni80_fatbin_start _Z3addPf 2>"$WORK/err")
check "no image, eager, cuModuleLoadFatBinary: explained" grep -q "cuModuleLoadFatBinary failed with CUDA_ERROR_NO_BINARY_FOR_GPU (209): $WORK/libni.so" "$WORK/err"
out=$(FAKE_CUDA_CC=75 run "${NI}_direct" file ni80.cubin _Z3addPf 2>"$WORK/err")
check "no image, cuModuleLoad of a file: the file named" grep -q "kernel 'add(float\*)' of ni80.cubin $EXPECT" "$WORK/err"
out=$(FAKE_CUDA_CC=75 run "$NI" --via=proc module "$WORK/libni.so" _binary_ni75_fatbin_start _Z3addPf 2>"$WORK/err")
check "an image for the GPU: runs, nothing said" test "$out" = "$(printf 'load 0\nget 0\nlaunch 0')" -a ! -s "$WORK/err"
out=$(FAKE_CUDA_CC=86 run "$NI" --via=proc module "$WORK/libni.so" _binary_ni75_fatbin_start _Z3addPf 2>"$WORK/err")
check "PTX the driver compiles: runs, nothing said" test "$out" = "$(printf 'load 0\nget 0\nlaunch 0')" -a ! -s "$WORK/err"
out=$(FAKE_CUDA_CC=75 NVSHIM_EXPLAIN_NO_IMAGE=false run "$NI" module "$WORK/libni.so" _binary_ni80_fatbin_start _Z3addPf 2>"$WORK/err")
check "explain_no_image = false: nothing said" test "$out" = "$(printf 'load 0\nget 209')" -a ! -s "$WORK/err"
# A stub kernel on the GPU's target, looked up: said once, with evidence (the same fatbin's sm_90
# code has a body); trivial on its only target (a no-op kernel by design looks the same): not said.
out=$(FAKE_CUDA_CC=80 run "$NI" --via=proc library "$WORK/libni.so" _binary_ni8090_fatbin_start _Z7guardedPf 2>"$WORK/err")
check "stub on sm_80: the program runs as it would" test "$out" = "$(printf 'load 0\nget 0\nlaunch 0')"
check "stub on sm_80 (a body on sm_90): said" grep -q "kernel 'guarded(float\*)' of $WORK/libni.so is a stub on sm_80: its body was compiled out .*\[noimage.stub\]" "$WORK/err"
check "stub on sm_80: said once" test "$(grep -c noimage.stub "$WORK/err")" = 1
out=$(FAKE_CUDA_CC=80 run "$NI" --via=proc library "$WORK/libni.so" _binary_ni80_fatbin_start _Z7guardedPf 2>"$WORK/err")
check "trivial on every target of its fatbin (sm_80 only): runs as it would, nothing said" \
	test "$out" = "$(printf 'load 0\nget 0\nlaunch 0')" -a ! -s "$WORK/err"
out=$(FAKE_CUDA_CC=80 run "$NI" --via=proc library "$WORK/libni.so" _binary_ni80_fatbin_start _Z3addPf 2>"$WORK/err")
check "a kernel with a body: nothing said" test ! -s "$WORK/err"
out=$(FAKE_CUDA_CC=80 NVSHIM_EXPLAIN_STUB_KERNELS=false run "$NI" library "$WORK/libni.so" _binary_ni8090_fatbin_start _Z7guardedPf 2>"$WORK/err")
check "explain_stub_kernels = false: nothing said" test ! -s "$WORK/err"
# PTX newer than the driver (222): the PTX text's ISA and the driver it needs
out=$(FAKE_CUDA_CC=90 FAKE_CUDA_PTX_ISA=90 run "$NI" module "$WORK/libni.so" _binary_ni95_ptx_start _Z3addPf 2>"$WORK/err")
check "PTX text newer than the driver: the load fails as it would (222)" test "$out" = "load 222"
check "PTX text newer than the driver: its ISA, the driver it needs and this one named" \
	grep -q "cuModuleLoadData failed with CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222): $WORK/libni.so has no machine code for this GPU (sm_90), and its PTX (ISA 9\.5) needs a CUDA 13\.5 driver, newer than this one (CUDA 13\.0); it holds PTX compute_80 (ISA 9\.5): update the driver, or rebuild it with -gencode arch=compute_90,code=sm_90" "$WORK/err"
unset FAKE_CUDA_IMAGES

# --- CuPy's own loader, when CuPy is installed (python3, or PRELOAD_TEST_PYTHON): its RawModule
# path without a GPU, for the header rule.
if "$PY" -c 'import cupy' >/dev/null 2>&1; then
	out=$("$PY" "$S/cupy_compile.py" "$S/wmma_bf16.cu" 90 2>&1 | tail -1)
	echo "# CuPy alone: $out"
	check "CuPy RawModule, bf16 wmma: NVRTC alone does not find mma.h" grep -q '^error: .*mma.h' <<<"$out"
	out=$(run "$PY" "$S/cupy_compile.py" "$S/wmma_bf16.cu" 90 2>"$WORK/err" | tail -1)
	check "CuPy RawModule, bf16 wmma: compiles under nvshim" test "$out" = ok
	check "CuPy RawModule: nvshim says why" grep -q '"mma.h" was not found: compiled again with .*\[nvrtc.include_dirs\]' "$WORK/err"
else
	skip "CuPy RawModule" "cupy is not importable with $PY"
fi

# --- Threads: 1,000 compiles from 8 threads, half of them fixed by a rule.
out=$(NVSHIM_DEVICES=90 run "$T/rtc_threads" 8 1000 2>"$WORK/err")
echo "# rtc_threads under nvshim: $out"
check "1,000 compiles from 8 threads: all good, each note in its own program's log" contains "$out" "^ok 1000 compiles in .* 0 failed, 500 logs with nvshim's note$"
check "1,000 compiles from 8 threads: the note said once on stderr" test "$(grep -c 'nvrtc.no_arch' "$WORK/err")" = 1
finish
