#!/bin/bash
# Real projects' own build lines through nvshim on a GPU, each program present and run:
#   - BitCracker (e-ago/bitcracker at 4257899, a CUDA 11 era project): src_CUDA/Makefile's line
#     `nvcc -gencode arch=compute_70,code=sm_70 -gencode arch=compute_80,code=sm_80 -Xptxas -v
#     -o bitcracker_cuda main.cu cuda_attack.cu utils.cu w_blocks.cu` with nvshim's nvcc first on
#     PATH (sm_70 dropped, the compile and the link split, the removed cudaDeviceProp fields
#     restored by the compatibility layer): the program must be there and find the password of
#     the user-password hash its README shows ("paperino", from Dictionary/user_passwords.txt);
#   - cuda-samples v12.9 (NVIDIA/cuda-samples at cab7c66) that read removed fields, each built
#     by its own CMakeLists.txt (CMAKE_CUDA_ARCHITECTURES 50 ... 120, separable compilation)
#     with CMAKE_CUDA_COMPILER set to nvshim's nvcc and CMAKE_CXX_COMPILER to its c++ (CC mode, for
#     the .cpp sources): each program there and passing.
# Plain nvcc's result for the same lines is recorded beside (it fails: sm_70 and the removed
# fields). BITCRACKER_SRC and SAMPLES_SRC name checkouts at those commits; each part skips
# without its checkout.
#   bash tests/gpu/real_builds.sh NVSHIM [NVCC]
NVSHIM=$1
NVCC=${2:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
GPUDIR="$(cd "$(dirname "$0")" && pwd)"
. "$GPUDIR/../e2e/lib.sh"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	skip "real builds on a GPU" "no NVIDIA GPU on this machine"
	finish
	exit
fi
NVSHIM=$(cd "$(dirname "$NVSHIM")" && pwd)/$(basename "$NVSHIM")
SHIMBIN=$(dirname "$NVSHIM")/libexec/nvshim/bin
[ -x "$SHIMBIN/nvcc" ] || SHIMBIN=$(dirname "$NVSHIM")/../libexec/nvshim/bin
echo "# GPU: $(nvidia-smi -L | head -1)"
export NVSHIM_NVCC=$NVCC
cd "$WORK" || exit 1

if [ -z "${BITCRACKER_SRC:-}" ] || [ ! -f "$BITCRACKER_SRC/src_CUDA/Makefile" ]; then
	skip "BitCracker" "BITCRACKER_SRC is not a checkout of e-ago/bitcracker"
else
	cp -r "$BITCRACKER_SRC" bc && cp -r "$BITCRACKER_SRC" bc-plain
	(cd bc-plain/src_CUDA && PATH="$(dirname "$NVCC"):$PATH" make >../plain.log 2>&1)
	echo "# BitCracker, plain nvcc: status $? ($(grep -m1 -o 'fatal.*\|error:.*' bc-plain/plain.log | head -1))"
	t0=$(date +%s)
	(cd bc/src_CUDA && PATH="$SHIMBIN:$PATH" make >../shim.log 2>&1)
	st=$?
	echo "# BitCracker through nvshim: status $st in $(($(date +%s) - t0)) s"
	grep '^nvshim' bc/shim.log | cut -c1-300 | sed 's/^/# /'
	check "BitCracker: its Makefile's line through nvshim ends with status 0" test $st -eq 0
	check "BitCracker: bitcracker_cuda is there" test -x bc/src_CUDA/bitcracker_cuda
	printf '%s\n' '$bitlocker$0$16$0a8b9d0655d3900e9f67280adc27b5d7$1048576$12$b0599ad6c6a1cf0103000000$60$c16658f54140b3d90be6de9e03b1fe90033a2c7df7127bcd16cb013cf778c12072142c484c9c291a496fc0ebd8c21c33b595a9c1587acfc6d8bb9663' >hash_user_pass.txt
	out=$(timeout 300 bc/src_CUDA/bitcracker_cuda -f hash_user_pass.txt -d bc/Dictionary/user_passwords.txt -t 1 -b 1 -g 0 -u 2>&1)
	echo "$out" | grep -E 'Clock rate|Memory Clock|Password found|Time:' | sed 's/^/# /'
	check "BitCracker: the program finds the README's password" contains "$out" "Password found: paperino"
	check "BitCracker: the restored clock rate is the GPU's" contains "$out" "^Clock rate: [1-9][0-9]*$"
fi

if [ -z "${SAMPLES_SRC:-}" ] || [ ! -d "$SAMPLES_SRC/Samples" ]; then
	skip "cuda-samples" "SAMPLES_SRC is not a checkout of NVIDIA/cuda-samples v12.9"
else
	for s in 1_Utilities/deviceQuery 0_Introduction/simpleHyperQ 0_Introduction/simpleMultiCopy \
		0_Introduction/systemWideAtomics 0_Introduction/UnifiedMemoryStreams 3_CUDA_Features/graphMemoryFootprint; do
		name=${s##*/}
		cmake -S "$SAMPLES_SRC/Samples/$s" -B "plain-$name" -DCMAKE_CUDA_COMPILER="$NVCC" >"plain-$name.log" 2>&1 &&
			cmake --build "plain-$name" -j "$(nproc)" >>"plain-$name.log" 2>&1
		echo "# $name, plain nvcc: status $? ($(grep -m1 -o 'nvcc fatal.*\|error: .*' "plain-$name.log" | head -1 | cut -c1-160))"
		t0=$(date +%s)
		cmake -S "$SAMPLES_SRC/Samples/$s" -B "shim-$name" -DCMAKE_CUDA_COMPILER="$SHIMBIN/nvcc" \
			-DCMAKE_CXX_COMPILER="$SHIMBIN/../cc/c++" -DCMAKE_C_COMPILER="$SHIMBIN/../cc/cc" >"shim-$name.log" 2>&1 &&
			cmake --build "shim-$name" -j "$(nproc)" >>"shim-$name.log" 2>&1
		st=$?
		echo "# $name through nvshim: status $st in $(($(date +%s) - t0)) s"
		grep -o 'nvshim [a-z]* *: .*' "shim-$name.log" | sort -u | cut -c1-250 | head -4 | sed 's/^/#   /'
		check "$name: its CMake build through nvshim ends with status 0" test $st -eq 0
		check "$name: the program is there" test -x "shim-$name/$name"
		out=$(cd "shim-$name" && timeout 300 "./$name" 2>&1)
		rc=$?
		echo "$out" | grep -iE 'clock|Result|PASS|overlap|compute mode|Test passed|passed' | head -4 | sed 's/^/#   /'
		check "$name: the program runs and passes (status 0)" test $rc -eq 0
	done
fi
finish
