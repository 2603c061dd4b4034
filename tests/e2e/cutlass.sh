#!/bin/bash
# Real CUTLASS (the nvidia-cutlass package, 4.2.0.0) through nvshim with modules_rules = false,
# so no [module] rule for CUTLASS's paths helps: its Hopper GEMM (example 48) and Blackwell GEMM
# (example 70), renamed, asked for plain sm_90 / sm_100 with -arch, PyTorch's -gencode list and
# a CMake project (CMAKE_CUDA_ARCHITECTURES=90); and an sm80-style GEMM (example 14) asked for
# sm_90. The embedded targets are read with cuobjdump. Each compile of a CUTLASS example takes
# tens of seconds, so the suite runs in the release build only (not under the sanitizers), and
# its five independent groups (Hopper, its CMake project, Blackwell, the sm80-style GEMM,
# example 54) run as many at once as there are cores, each with its own record of nvcc's runs. Plain nvcc is not run here:
# what it builds for these sources (sm_90 with the GEMMs compiled out) is in docs/modules.md, and
# compiling a CUTLASS GEMM only to read nvcc's own targets back took a fifth of the suite.
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"
# (lib.sh reads the build's kind before it clears NVSHIM_*: NVSHIM_BUILD_DIR is gone here)
if [ -n "$SANITIZED" ]; then
	skip "cutlass suite" "the release build runs it"
	finish
	exit
fi
C=$(python3 -c 'import glob, site, sys
for d in site.getsitepackages() + [site.getusersitepackages()]:
    for p in glob.glob(d + "/cutlass_library/source"):
        print(p); sys.exit()' 2>/dev/null)
CUOBJDUMP=$(find_cuobjdump)
if [ -z "$C" ] || [ -z "$CUOBJDUMP" ]; then
	skip "cutlass suite" "no nvidia-cutlass or cuobjdump (scripts/install-deps.sh installs both)"
	finish
	exit
fi
cd "$WORK" || exit 1
export NVSHIM_MODULES_RULES=false
embedded() { # "elf:sm_90a ptx:sm_90", sorted; machine code named by its image's own header
	{
		"$CUOBJDUMP" -elf "$1" 2>/dev/null | awk '/^Fatbin /{ elf = $2 == "elf" } elf && /^arch = sm_/{ print "elf:" $3 }'
		"$CUOBJDUMP" --list-ptx "$1" 2>/dev/null | sed -n 's/^PTX file.*\.\(sm_[0-9a-z]*\)\.ptx/ptx:\1/p'
	} | sort -u | tr '\n' ' ' | sed 's/ $//'
}
FLAGS=(-std=c++17 --expt-relaxed-constexpr -w -I"$C/include" -I"$C/tools/util/include" -I"$C/examples/common")
cp "$C/examples/48_hopper_warp_specialized_gemm/48_hopper_warp_specialized_gemm.cu" my_gemm.cu
cp "$C/examples/70_blackwell_gemm/70_blackwell_fp16_gemm.cu" my_blackwell_gemm.cu
cp "$C/examples/14_ampere_tf32_tensorop_gemm/ampere_tf32_tensorop_gemm.cu" my_ampere_gemm.cu
mkdir -p fake
# A recording nvcc: each group has its record ($RUNS) and its stderr file ($ERR).
printf '#!/bin/sh\necho "$*" >>"$RUNS"\nexec "%s" "$@"\n' "$NVCC" >fake/nvcc
chmod +x fake/nvcc
runs() { grep -c "$1" "$RUNS" 2>/dev/null || echo 0; }
# The full compiles of a source: its nvcc runs that are not a device preprocessing (-E).
compiles() { grep "$1" "$RUNS" 2>/dev/null | grep -vc -- ' -E ' || true; }

hopper() {
export RUNS=$WORK/runs.hopper ERR=$WORK/err.hopper
# Hopper: plain nvcc compiles every GEMM out for sm_90; nvshim builds sm_90a machine code and
# keeps compute_90 PTX.
NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" "${FLAGS[@]}" -c my_gemm.cu -o h1.o -arch=sm_90 2>"$ERR"
first=$(runs my_gemm.cu)
check "hopper: -arch=sm_90 builds sm_90a machine code and compute_90 PTX" test "$(embedded h1.o)" = "elf:sm_90a ptx:sm_90"
check "hopper: decided before compiling: one full compile, beside the device preprocessing" \
	test "$(compiles my_gemm.cu)" -eq 1
check "hopper: the note names the upgrade, the method and the rule" contains "$(cat "$ERR")" \
	"^nvshim warning : my_gemm.cu: sm_90 -> sm_90a: the device code differs when compiled for sm_90a" \
	"decided before compiling \[modules.decide\]"
# The second build (another list) runs exactly one nvcc: the verdict of the first serves it.
: >"$RUNS"
NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" "${FLAGS[@]}" -c my_gemm.cu -o h3.o \
	-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 2>"$ERR"
second=$(runs my_gemm.cu)
echo "# hopper: first build $first nvcc runs, second build $second"
check "hopper: PyTorch's list (8.0;9.0): sm_80 and sm_90a, one nvcc (the verdict serves any list)" \
	test "$(embedded h3.o)" = "elf:sm_80 elf:sm_90a" -a "$second" -eq 1
check "hopper: ... and sm_80, where the GEMM is compiled out, is named in a warning" \
	grep -q "my_gemm.cu: 1 kernel is compiled out on sm_80 .*sm_90a has the code" "$ERR"
}

cmake_project() {
# A CMake project with CMAKE_CUDA_ARCHITECTURES=90 and nvshim as its CUDA compiler.
mkdir -p proj
cp my_gemm.cu proj/
cat >proj/CMakeLists.txt <<CMAKE
cmake_minimum_required(VERSION 3.18)
project(g LANGUAGES CXX CUDA)
set(CMAKE_CUDA_STANDARD 17)
add_library(g OBJECT my_gemm.cu)
target_include_directories(g PRIVATE $C/include $C/tools/util/include $C/examples/common)
target_compile_options(g PRIVATE --expt-relaxed-constexpr -w)
CMAKE
if cmake -S proj -B proj/build -G Ninja -DCMAKE_CUDA_COMPILER="$NVSHIM" -DCMAKE_CUDA_ARCHITECTURES=90 >"$WORK/cmake.log" 2>&1 &&
	cmake --build proj/build >>"$WORK/cmake.log" 2>&1; then
	obj=$(find proj/build -name 'my_gemm.cu.o' | head -1)
	check "cmake: CMAKE_CUDA_ARCHITECTURES=90: sm_90a machine code and compute_90 PTX" test "$(embedded "$obj")" = "elf:sm_90a ptx:sm_90"
	check "cmake: said in the build's output" grep -q "sm_90 -> sm_90a.*\[modules.decide\]" "$WORK/cmake.log"
else
	not_ok "cmake: the project builds" "$(tail -5 "$WORK/cmake.log")"
fi
}

blackwell() {
export RUNS=$WORK/runs.blackwell ERR=$WORK/err.blackwell
# Blackwell: -arch=sm_100; the kernels need sm_100a or sm_100f (CUTLASS's SM100A/SM100F chain).
"$NVSHIM" "${FLAGS[@]}" -c my_blackwell_gemm.cu -o b1.o -arch=sm_100 2>"$ERR"
got=$(embedded b1.o)
check "blackwell: -arch=sm_100 builds sm_100a or sm_100f machine code and compute_100 PTX" \
	test "$got" = "elf:sm_100a ptx:sm_100" -o "$got" = "elf:sm_100f ptx:sm_100"
echo "# blackwell: $got"
check "blackwell: said" grep -q "my_blackwell_gemm.cu: sm_100 -> sm_100[af]: the device code differs when compiled for sm_100[af]" "$ERR"

}

ampere() {
export RUNS=$WORK/runs.ampere ERR=$WORK/err.ampere
# An sm80-style GEMM (CUTLASS 2.x, mma.sync under __CUDA_ARCH__ >= 800) asked for sm_90: its
# kernels use nothing arch-specific, but CuTe's TMA descriptor helpers in its headers preprocess
# differently for sm_90a, so the decision before compiling takes sm_90a on purpose: sm_90a
# machine code runs on exactly the GPUs sm_90 code runs on (compute capability 9.0), and the
# PTX stays plain compute_90 for newer GPUs (docs/modules.md). One full compile, as nvcc's.
: >"$RUNS"
NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" "${FLAGS[@]}" -c my_ampere_gemm.cu -o a1.o -arch=sm_90 >"$WORK/out" 2>"$ERR"
check "ampere-style GEMM for sm_90: sm_90a machine code (the same GPUs), compute_90 PTX, one compile" \
	test "$(embedded a1.o)" = "elf:sm_90a ptx:sm_90" -a "$(compiles my_ampere_gemm.cu)" -eq 1
check "ampere-style GEMM for sm_90: said once, with its rule" test "$(grep -c '\[modules.decide\]' "$ERR")" -eq 1

}

example54() {
export RUNS=$WORK/runs.example54 ERR=$WORK/err.example54
# CUTLASS example 54 (FP8 GEMM; its host code calls the driver API) as one compile-and-link: the
# link fails on cuMemsetD32Async and is run again with -lcuda, alone; the program holds sm_90a.
cp "$C/examples/54_hopper_fp8_warp_specialized_gemm/54_hopper_fp8_warp_specialized_gemm.cu" kernels.cu
: >"$RUNS"
NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" "${FLAGS[@]}" -I"$C/examples/54_hopper_fp8_warp_specialized_gemm" \
	-arch=sm_90 kernels.cu -o app 2>"$ERR"
check "example 54 compile-and-link: a program with sm_90a machine code and compute_90 PTX" \
	test -x app -a "$(embedded app)" = "elf:sm_90a ptx:sm_90"
check "example 54 compile-and-link: one full compile, the link run again alone with -lcuda" \
	test "$(compiles kernels.cu)" -eq 1 -a "$(grep -c -- '-lcuda' "$RUNS")" -eq 1
check "example 54 compile-and-link: the retry said" grep -q "\[link.retry\]" "$ERR"
}

# the longest first: two run at once (E2E_JOBS, the cores)
run_groups hopper cmake_project example54 blackwell ampere
finish
