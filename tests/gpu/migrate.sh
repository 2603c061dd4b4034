#!/bin/bash
# `nvshim migrate`'s output on a GPU, where what it prints needs one:
#   - old_devprop.cu (cudaDeviceProp's removed fields read where the device is not in sight:
#     the device of the struct's PCI ids), migrated and built with nvcc 13.0, prints what the
#     original prints built with g++ against CUDA 12.9's runtime headers and run with its
#     libcudart.so.12 (the fields as CUDA 12 filled them), line for line;
#   - old_texref.cu (texture references of the simple pattern, as texture objects in __device__
#     variables), migrated and built with nvcc 13.0, reads what its data gives (no CUDA 12.x
#     here has texture references to compare with: out[i] = src[idx[i]] + pairs[i].y).
#   bash tests/gpu/migrate.sh NVSHIM [NVCC]
# CU12: the CUDA 12.9 runtime wheel's nvidia/cuda_runtime (scripts/fetch-nvcc135.sh) and
# CU12LIBS the math libraries' headers (scripts/fetch-cu12-libheaders.py); without them the CUDA
# 12 comparison skips.
NVSHIM=$1
NVCC=${2:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
GPUDIR="$(cd "$(dirname "$0")" && pwd)"
. "$GPUDIR/../e2e/lib.sh"
FIX="$GPUDIR/../e2e/fixtures/migrate"
CU12=${CU12:-/var/tmp/nvshim-toolkits/cu12-runtime/nvidia/cuda_runtime}
CU12LIBS=${CU12LIBS:-/var/tmp/nvshim-toolkits/cu12-libs/nvidia}
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	skip "nvshim migrate's output on a GPU" "no NVIDIA GPU on this machine"
	finish
	exit
fi
NVSHIM=$(cd "$(dirname "$NVSHIM")" && pwd)/$(basename "$NVSHIM")
INC=$(dirname "$(dirname "$NVCC")")/include
echo "# GPU: $(nvidia-smi -L | head -1); driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
cd "$WORK" || exit 1
cp "$FIX"/old_devprop.cu "$FIX"/old_texref.cu .
cp old_devprop.cu orig_devprop.cu
show() { echo "# --- $1"; sed 's/^/#   /' "$2"; }

"$NVSHIM" migrate --apply old_devprop.cu old_texref.cu >/dev/null 2>migrate.err
check "migrate rewrites both, nothing left" test $? = 0
"$NVCC" -DNO_CUBLAS old_devprop.cu -o devprop13 2>build.err
check "devprop: migrated, built with nvcc 13.0" test -x devprop13
./devprop13 >devprop13.out 2>&1
show "migrated, CUDA 13.0" devprop13.out
check "devprop: it reads a clock for every device (not 0)" eval '! grep -q ": 0 kHz" devprop13.out && grep -q "kHz" devprop13.out'
if [ -f "$CU12/include/cuda_runtime_api.h" ] && [ -f "$CU12/lib/libcudart.so.12" ] && [ -d "$CU12LIBS/cublas/include" ]; then
	g++ -x c++ -DNO_CUBLAS -I"$CU12/include" -I"$CU12LIBS/cublas/include" -idirafter "$INC" orig_devprop.cu -x none \
		"$CU12/lib/libcudart.so.12" -Wl,-rpath,"$CU12/lib" -o devprop12 2>>build.err
	./devprop12 >devprop12.out 2>&1
	show "the original, CUDA 12.9's runtime" devprop12.out
	check "devprop: the migrated program prints what CUDA 12.9 prints for the original" cmp -s devprop13.out devprop12.out
else
	skip "devprop: the comparison with CUDA 12.9" "no CUDA 12.9 runtime at $CU12 or its cuBLAS headers at $CU12LIBS"
fi
"$NVCC" old_texref.cu -o texref13 2>>build.err
check "texref: migrated, built with nvcc 13.0" test -x texref13
./texref13 >texref13.out 2>&1
show "texture objects" texref13.out
check "texref: the kernel reads what the bound memory holds (no error 127.5 510)" test "$(cat texref13.out)" = "no error 127.5 510"
finish
