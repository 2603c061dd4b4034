#!/bin/bash
# The targets pass against the real nvcc: CUDA 12 era lists, -arch=native, -arch=sm_90a and
# GPUs without a target build where plain nvcc fails or builds the wrong thing, and the objects
# hold exactly the expected targets (read with cuobjdump from the Python package index).
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"
CUOBJDUMP=$(command -v cuobjdump || python3 -c 'import glob, sys, site
for d in site.getsitepackages() + [site.getusersitepackages()]:
    for p in glob.glob(d + "/nvidia/*/bin/cuobjdump"):
        print(p); sys.exit()' 2>/dev/null)
cd "$WORK" || exit 1
printf '__global__ void k(float *x) { x[threadIdx.x] *= 2.0f; }\n' >k.cu
embedded() { # the targets in an object, sorted, one line: "elf:sm_80 ptx:sm_90"
	"$CUOBJDUMP" --list-elf --list-ptx "$1" 2>/dev/null | sed -n 's/^ELF file.*\.\(sm_[0-9a-z]*\)\.cubin/elf:\1/p; s/^PTX file.*\.\(sm_[0-9a-z]*\)\.ptx/ptx:\1/p' | sort | tr '\n' ' ' | sed 's/ $//'
}
have_cuobjdump() { [ -n "$CUOBJDUMP" ] && [ -x "$CUOBJDUMP" ]; }

# A CUDA 12 list: nvcc 13 rejects it; through nvshim the supported part builds.
LIST=(-gencode arch=compute_50,code=sm_50 -gencode arch=compute_70,code=sm_70 -gencode arch=compute_80,code=sm_80
      -gencode arch=compute_90,code=[sm_90,compute_90])
"$NVCC" -c k.cu -o plain.o "${LIST[@]}" 2>"$WORK/err"
check "CUDA 12 list: plain nvcc fails" grep -q "Unsupported gpu architecture 'compute_50'" "$WORK/err"
"$NVSHIM" -c k.cu -o shim.o "${LIST[@]}" 2>"$WORK/err"
check "CUDA 12 list: builds through nvshim" test $? -eq 0 -a -s shim.o
check "CUDA 12 list: one note names the rule" grep -qx "nvshim warning : dropped sm_50, sm_70: not supported by nvcc [0-9.]* \[targets.unsupported\]" "$WORK/err"
if have_cuobjdump; then
	check "CUDA 12 list: the object holds sm_80, sm_90 and compute_90" test "$(embedded shim.o)" = "elf:sm_80 elf:sm_90 ptx:sm_90"
else
	skip "CUDA 12 list: embedded targets" "no cuobjdump"
fi

# -arch=native: explicit targets from the GPUs (NVSHIM_DEVICES here), not nvcc's silent default.
NVSHIM_DEVICES=90 "$NVSHIM" -c k.cu -o native.o -arch=native 2>"$WORK/err"
check "-arch=native with a GPU: builds" test $? -eq 0
have_cuobjdump && check "-arch=native: sm_90 only" test "$(embedded native.o)" = "elf:sm_90"
NVSHIM_DEVICES= NVSHIM_FALLBACK_ARCHS=86 "$NVSHIM" -c k.cu -o fb.o -arch=native 2>"$WORK/err"
check "-arch=native without a GPU: fallback_archs, said" grep -q "building for fallback_archs = 86" "$WORK/err"
have_cuobjdump && check "-arch=native without a GPU: sm_86" test "$(embedded fb.o)" = "elf:sm_86"
NVSHIM_DEVICES= "$NVSHIM" -c k.cu -o none.o -arch=native 2>"$WORK/err"
check "-arch=native, no GPU, no fallback: a warning, nvcc's default" grep -q "fallback_archs is unset" "$WORK/err"

# -arch=sm_90a: one arch-specific pass; plain nvcc also embeds compute_90 PTX.
"$NVCC" -c k.cu -o a_plain.o -arch=sm_90a
"$NVSHIM" -c k.cu -o a_shim.o -arch=sm_90a 2>/dev/null
if have_cuobjdump; then
	check "-arch=sm_90a: plain nvcc embeds a plain compute_90 PTX too" test "$(embedded a_plain.o)" = "elf:sm_90a ptx:sm_90 ptx:sm_90a"
	check "-arch=sm_90a: nvshim builds sm_90a and compute_90a only" test "$(embedded a_shim.o)" = "elf:sm_90a ptx:sm_90a"
fi

# A list with nothing for the GPU: its target is added.
NVSHIM_DEVICES=90 "$NVSHIM" -c k.cu -o ens.o -gencode arch=compute_80,code=sm_80 2>"$WORK/err"
check "ensure_devices: note" grep -q "added sm_90: no requested target runs on the GPU of compute capability 9.0" "$WORK/err"
have_cuobjdump && check "ensure_devices: sm_80 and sm_90" test "$(embedded ens.o)" = "elf:sm_80 elf:sm_90"

# explain shows the lists before and after, and runs nothing.
out=$(NVSHIM_DEVICES=90 "$NVSHIM" explain -c k.cu -o x.o -arch=sm_70)
check "explain: before and after" contains "$out" "^targets   : '-gencode=arch=compute_70,code=\[sm_70,compute_70\]'" \
	"^       -> : -gencode=arch=compute_90,code=sm_90" "no requested target remains: building for the GPUs (NVSHIM_DEVICES)"
check "explain ran nothing" test ! -e x.o
# Every target dropped and nothing known to build for: the list goes, nvcc's default stays.
out=$(NVSHIM_DEVICES= NVSHIM_FALLBACK_ARCHS= "$NVSHIM" explain -c k.cu -o x.o -arch=sm_70)
check "explain: all dropped, nvcc's default" contains "$out" "^       -> : (none: nvcc builds for its default)" \
	"dropped sm_70, compute_70: not supported"
out=$("$NVSHIM" explain -c k.cu -o x.o -arch=sm_90)
check "explain: a list kept is unchanged" contains "$out" "^       -> : (unchanged)"

# A CMake project with a CUDA 12 era CMAKE_CUDA_ARCHITECTURES.
if command -v cmake >/dev/null; then
	mkdir -p proj
	cp k.cu proj/
	printf 'cmake_minimum_required(VERSION 3.18)\nproject(p LANGUAGES CUDA)\nadd_library(k STATIC k.cu)\n' >proj/CMakeLists.txt
	ARCHS="50;52;60;61;70;72;75;80;86;89;90"
	CUDACXX="$NVCC" cmake -S proj -B b-plain -DCMAKE_CUDA_ARCHITECTURES="$ARCHS" >/dev/null 2>&1 &&
		cmake --build b-plain >"$WORK/plain.log" 2>&1
	check "CMake with $ARCHS: plain nvcc fails" test $? -ne 0
	CUDACXX="$NVSHIM" cmake -S proj -B b-shim -DCMAKE_CUDA_ARCHITECTURES="$ARCHS" >"$WORK/shim.log" 2>&1 &&
		cmake --build b-shim >>"$WORK/shim.log" 2>&1
	check "CMake with $ARCHS: builds through nvshim" test $? -eq 0
	have_cuobjdump && check "CMake: the library holds SASS and PTX for 75..90 only" \
		test "$(cd b-shim && ar x libk.a && embedded "$(ls *.o | head -1)")" = \
		"elf:sm_75 elf:sm_80 elf:sm_86 elf:sm_89 elf:sm_90 ptx:sm_75 ptx:sm_80 ptx:sm_86 ptx:sm_89 ptx:sm_90"
fi
# -cubin and -ptx write one code instance: nvcc gives -arch=sm_90a a single pass there, and
# rejects two codes, so the line stays as it is and the output is nvcc's.
for mode in cubin ptx; do
	"$NVCC" -$mode -arch=sm_90a k.cu -o plain.$mode 2>"$WORK/err"
	pst=$?
	"$NVSHIM" -$mode -arch=sm_90a k.cu -o shim.$mode 2>"$WORK/err"
	check "-$mode -arch=sm_90a: builds as with nvcc, no rewrite" test $? -eq $pst -a $pst -eq 0 -a ! -s "$WORK/err"
	check "-$mode -arch=sm_90a: nvcc's output" cmp -s plain.$mode shim.$mode
done

# The GPUs from the driver API when there is no NVML (this machine has none): a test double of
# libcuda.so.1 (tests/preload/fake_cuda.c) with one sm_90 device, a private cache.
FAKE=${NVSHIM_BUILD_DIR:-$(dirname "$NVSHIM")}/tests/fakecuda
if [ -e "$FAKE/libcuda.so.1" ] && ! ldconfig -p 2>/dev/null | grep -q libnvidia-ml.so.1; then
	out=$(env -u NVSHIM_DEVICES LD_LIBRARY_PATH="$FAKE" FAKE_CUDA_CC=90 NVSHIM_CACHE_DIR="$WORK/drvcache" "$NVSHIM" doctor 2>&1)
	check "driver API fallback: doctor names the GPU and the source" contains "$out" "^GPUs *: sm_90 (from nvshim-devices (driver API))"
	env -u NVSHIM_DEVICES LD_LIBRARY_PATH="$FAKE" FAKE_CUDA_CC=90 NVSHIM_CACHE_DIR="$WORK/drvcache" \
		"$NVSHIM" -c k.cu -o drv.o -gencode arch=compute_80,code=sm_80 2>"$WORK/err"
	check "driver API fallback: ensure_devices adds the GPU's sm_90" grep -q "added sm_90: no requested target runs on the GPU of compute capability 9.0" "$WORK/err"
	# A driver that fails to start (seen with dozens of compiles at once on a multi-GPU
	# machine): the detector tries again, then gives no answer; nvshim assumes no GPU for this
	# compile and keeps nothing, so the next compile, with the driver working, finds the GPU.
	out=$(env -u NVSHIM_DEVICES LD_LIBRARY_PATH="$FAKE" FAKE_CUDA_INIT_ERROR=999 NVSHIM_CACHE_DIR="$WORK/flaky" "$NVSHIM" doctor 2>&1)
	check "a failing driver: no GPU for this run, said" contains "$out" "nvshim-devices did not list the GPUs; assuming none"
	check "a failing driver: nothing cached" test ! -e "$WORK/flaky/devices"
	out=$(env -u NVSHIM_DEVICES LD_LIBRARY_PATH="$FAKE" FAKE_CUDA_CC=90 NVSHIM_CACHE_DIR="$WORK/flaky" "$NVSHIM" doctor 2>&1)
	check "a failing driver: the next run finds the GPU" contains "$out" "^GPUs *: sm_90 (from nvshim-devices (driver API))"
	# A driver with no GPU is a whole answer, kept.
	env -u NVSHIM_DEVICES LD_LIBRARY_PATH="$FAKE" FAKE_CUDA_INIT_ERROR=100 NVSHIM_CACHE_DIR="$WORK/nogpu" "$NVSHIM" doctor >/dev/null 2>&1
	check "a driver with no GPU: kept as no GPU" eval 'grep -qx "source driver API" "$WORK/nogpu/devices" && ! grep -q "^device" "$WORK/nogpu/devices"'
	# Compiles that start together on a cold cache ask the driver once between them.
	for i in 1 2 3 4 5 6; do
		env -u NVSHIM_DEVICES LD_LIBRARY_PATH="$FAKE" FAKE_CUDA_CC=90 FAKE_CUDA_INIT_LOG="$WORK/herd.inits" \
			NVSHIM_CACHE_DIR="$WORK/herd" "$NVSHIM" explain -c k.cu -o h.o -arch=native >"$WORK/herd.$i" 2>&1 &
	done
	wait
	check "six compiles at once on a cold cache: the driver asked once, each finds the GPU" \
		eval 'test "$(wc -l <"$WORK/herd.inits")" -eq 1 && test "$(grep -l "sm_90" "$WORK"/herd.[1-6] | wc -l)" -eq 6'
else
	skip "driver API fallback" "NVML present, or no test libcuda built"
fi
finish
