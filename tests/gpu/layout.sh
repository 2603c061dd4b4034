#!/bin/bash
# NVTX 2 on NVTX 3 on a GPU (src/upgrade/layout.h): a CUDA 12 program with NVTX 2 annotations
# around a kernel (tests/e2e/fixtures/layout/prof_gpu.cu: nvToolsExt.h, nvToolsExtCudaRt.h,
# -lnvToolsExt), which plain nvcc 13.0 cannot build, built through nvshim; its ranges reach a
# profiler's injection library (NVTX_INJECTION64_PATH: tests/e2e/fixtures/layout/nvtx_inject.c,
# which records them) exactly as those of the same program built against CUDA 12's NVTX 2
# (nvToolsExt.h and libnvToolsExt.so.1 of the nvidia-nvtx-cu12 12.4.127 wheel, the last with the
# library; NVTX12: its unpacked nvidia/nvtx directory) do, and both compute the same result.
#   NVTX12=DIR bash tests/gpu/layout.sh NVSHIM [NVCC]
NVSHIM=$1
NVCC=${2:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
N12=${NVTX12:-}
GPUDIR="$(cd "$(dirname "$0")" && pwd)"
. "$GPUDIR/../e2e/lib.sh"
FIX="$GPUDIR/../e2e/fixtures/layout"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	skip "NVTX 2 on NVTX 3 on a GPU" "no NVIDIA GPU on this machine"
	finish
	exit
fi
NVSHIM=$(cd "$(dirname "$NVSHIM")" && pwd)/$(basename "$NVSHIM")
echo "# GPU: $(nvidia-smi -L | head -1); driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
echo "# $("$NVCC" --version | tail -2 | head -1)"
export NVSHIM_NVCC=$NVCC
cd "$WORK" || exit 1
cp "$FIX/prof_gpu.cu" "$FIX/nvtx_inject.c" .
gcc -shared -fPIC -O2 -o inject.so nvtx_inject.c

"$NVCC" -o plain prof_gpu.cu -lnvToolsExt -arch=native 2>plain.err
check "plain nvcc 13.0 does not build it" grep -q "nvToolsExt.h: No such file" plain.err
"$NVSHIM" -o prof13 prof_gpu.cu -lnvToolsExt -arch=native 2>shim.err
check "through nvshim it builds, with one note" sh -c "test -x prof13 && grep -q 'compat.layout' shim.err"
sed 's/^/# /' shim.err
NVTX_INJECTION64_PATH="$WORK/inject.so" NVTX_RECORD="$WORK/r13.txt" ./prof13 >out13.txt 2>&1
check "it runs on the GPU: sum 3145728" grep -q "^sum 3145728 (no error)" out13.txt
check "its ranges reach the injection library" test "$(cat r13.txt)" = "$(printf 'push setup\npop\npush scale\npop')"
./prof13 >out13b.txt 2>&1
check "without an injection library it runs the same" cmp -s out13.txt out13b.txt
if [ -n "$N12" ] && [ -f "$N12/include/nvToolsExt.h" ] && [ -f "$N12/lib/libnvToolsExt.so.1" ]; then
	mkdir -p lib12 && ln -sf "$N12/lib/libnvToolsExt.so.1" lib12/libnvToolsExt.so
	ln -sf "$N12/lib/libnvToolsExt.so.1" lib12/libnvToolsExt.so.1
	"$NVCC" -o prof12 prof_gpu.cu -I"$N12/include" -Llib12 -lnvToolsExt -arch=native
	check "CUDA 12's NVTX 2 build needs libnvToolsExt.so.1" sh -c "readelf -d prof12 | grep -q 'NEEDED.*libnvToolsExt.so.1'"
	LD_LIBRARY_PATH="$WORK/lib12" NVTX_INJECTION64_PATH="$WORK/inject.so" NVTX_RECORD="$WORK/r12.txt" ./prof12 >out12.txt 2>&1
	check "CUDA 12's build prints the same" cmp -s out12.txt out13.txt
	check "and the injection library records the same ranges" cmp -s r12.txt r13.txt
else
	skip "CUDA 12's NVTX 2 build" "NVTX12 does not name the nvidia-nvtx-cu12 12.4.127 wheel's nvidia/nvtx"
fi
finish
