#!/bin/bash
# At run time (docs/targets.md#ptx-newer-than-the-driver): PTX newer than the driver, and machine
# code only for a GPU the builder never saw.
#   bash tests/gpu/runtime.sh --prepare DIR NVSHIM NVCC135   (on any machine: nvcc 13.5's files)
#   bash tests/gpu/runtime.sh NVSHIM [NVCC]                  (on the GPU machine)
# The GPU machine has no nvcc 13.5 (and no network): what nvcc 13.5 builds is built beforehand
# with --prepare and found in $NVSHIM_GPU_PREBUILT:
#   ptx135        a program of nvcc 13.5 with compute_80 PTX only, built plainly;
#   ptx135_shim   the same line through nvshim for an sm_90 GPU whose driver is CUDA 13.0
#                 (NVSHIM_DEVICES=90, NVSHIM_DRIVER_CUDA=13.0): sm_90 added (targets.driver);
#   k135.ptx      nvcc 13.5's PTX of one kernel, for a driver-API loader built here.
# On a GPU whose driver is older than 13.5: the plain program fails with
# cudaErrorUnsupportedPtxVersion, `nvshim run` names the ISA and the driver it needs, the
# program built through nvshim runs; cuModuleLoadData of the PTX fails with 222 and `nvshim
# run` says why. Then a build for sm_80 machine code only: "no kernel image" on the GPU, the
# note at build time (no GPU known to the build: NVSHIM_DEVICES empty), and the forward_ptx
# build runs.
PROGRAM='#include <cstdio>
__global__ void fill(float *p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = 2.0f * i + 1.0f; }
int main() {
	const int n = 256;
	float *d, h[n];
	cudaMalloc(&d, sizeof(h));
	fill<<<2, 128>>>(d, n);
	cudaError_t e = cudaDeviceSynchronize();
	if (e == cudaSuccess)
		e = cudaGetLastError();
	if (e != cudaSuccess) {
		printf("%s\n", cudaGetErrorName(e));
		return 1;
	}
	cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad += h[i] != 2.0f * i + 1.0f;
	printf("ran %d\n", bad);
	return bad != 0;
}
'
if [ "${1:-}" = --prepare ]; then
	DIR=$2 NVSHIM=$3 N135=$4
	mkdir -p "$DIR" && cd "$DIR" || exit 1
	printf '%s' "$PROGRAM" >p.cu
	"$N135" -gencode arch=compute_80,code=compute_80 p.cu -o ptx135 || exit 1
	SHIM_NVCC="$(dirname "$NVSHIM")/libexec/nvshim/bin/nvcc"
	NVSHIM_NVCC=$N135 NVSHIM_DEVICES=90 NVSHIM_DRIVER_CUDA=13.0 "$SHIM_NVCC" \
		-gencode arch=compute_80,code=compute_80 p.cu -o ptx135_shim 2>ptx135_shim.notes || exit 1
	printf '__global__ void k(int *p) { p[threadIdx.x] = threadIdx.x; }\n' >k.cu
	"$N135" -ptx -arch=compute_80 k.cu -o k135.ptx || exit 1
	"$NVSHIM" inspect ptx135 ptx135_shim k135.ptx >inspect.txt
	cat ptx135_shim.notes inspect.txt
	exit 0
fi
NVSHIM=$1
NVCC=${2:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
. "$(dirname "$0")/../e2e/lib.sh"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	skip "run time: PTX and the driver, machine code only" "no NVIDIA GPU on this machine"
	finish
	exit
fi
PRE=${NVSHIM_GPU_PREBUILT:-}
[ -n "$PRE" ] && PRE=$(cd "$PRE" && pwd)
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '. ')
drv=$(nvidia-smi | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -1)
echo "# GPU sm_$cc, driver CUDA $drv"
SHIM_NVCC="$(dirname "$NVSHIM")/libexec/nvshim/bin/nvcc"
[ -x "$SHIM_NVCC" ] || SHIM_NVCC="$(dirname "$NVSHIM")/../libexec/nvshim/bin/nvcc"
cd "$WORK" || exit 1

# ---- PTX of nvcc 13.5 on this driver ----
if [ -z "$PRE" ] || [ ! -x "$PRE/ptx135" ]; then
	skip "PTX of nvcc 13.5 on this driver" "no prebuilt files (NVSHIM_GPU_PREBUILT; --prepare makes them)"
elif [ "$(printf '%s\n13.5\n' "$drv" | sort -V | head -1)" = 13.5 ]; then
	skip "PTX of nvcc 13.5 on this driver" "the driver is CUDA $drv: it compiles that PTX"
else
	"$PRE/ptx135" >plain.out 2>&1
	echo "# plainly: $(cat plain.out)"
	check "plainly, nvcc 13.5's PTX does not load on a CUDA $drv driver (cudaErrorUnsupportedPtxVersion)" \
		grep -q cudaErrorUnsupportedPtxVersion plain.out
	"$NVSHIM" run -- "$PRE/ptx135" >run.out 2>&1
	sed 's/^/# /' run.out
	check "nvshim run: one note names the PTX ISA, the driver it needs and this one" \
		sh -c "test \"\$(grep -c 'noimage.explain' run.out)\" -eq 1 && grep -q 'its PTX (ISA 9\.[0-9]) needs a CUDA 13\.[0-9] driver, newer than this one (CUDA $drv)' run.out &&
			grep -q 'gencode arch=compute_$cc,code=sm_$cc' run.out"
	echo "# built through nvshim: $(head -1 "$PRE/ptx135_shim.notes" 2>/dev/null)"
	if [ "$cc" = 90 ]; then
		"$PRE/ptx135_shim" >shim.out 2>&1
		check "built through nvshim for sm_90 and a CUDA 13.0 driver (targets.driver), it runs with the right values" \
			grep -q '^ran 0$' shim.out
	else
		skip "the program built through nvshim for sm_90" "the GPU is sm_$cc"
	fi
	cat >load.c <<'SRC'
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	FILE *f = fopen(argv[1], "rb");
	static char text[1 << 20];
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = 0;
	CUdevice dev;
	CUcontext ctx;
	CUmodule m;
	cuInit(0);
	cuDeviceGet(&dev, 0);
	cuDevicePrimaryCtxRetain(&ctx, dev);
	cuCtxSetCurrent(ctx);
	CUresult r = cuModuleLoadData(&m, text);
	printf("cuModuleLoadData: %d\n", (int)r);
	return r != CUDA_SUCCESS;
}
SRC
	CUDA=$(dirname "$(dirname "$(readlink -f "$NVCC")")")
	if gcc load.c -I"$CUDA/include" -L"$CUDA/lib64/stubs" -lcuda -o load 2>load.err; then
		./load "$PRE/k135.ptx" >load.out 2>&1
		check "plainly, cuModuleLoadData of nvcc 13.5's PTX fails with 222" grep -q 'cuModuleLoadData: 222' load.out
		"$NVSHIM" run -- ./load "$PRE/k135.ptx" >loadrun.out 2>&1
		sed 's/^/# /' loadrun.out
		check "nvshim run: the PTX text's ISA and the driver it needs are named" \
			grep -q 'cuModuleLoadData failed with CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222).*PTX (ISA 9\.[0-9]) needs a CUDA 13\.[0-9] driver' loadrun.out
	else
		not_ok "the driver-API loader builds" "$(cat load.err)"
	fi
fi

# ---- machine code only, for a GPU the builder never saw ----
printf '%s' "$PROGRAM" >p.cu
if [ "$cc" -lt 90 ]; then
	skip "machine code only for another GPU" "the GPU is sm_$cc: sm_80 code may run on it"
else
	"$NVCC" -gencode arch=compute_80,code=sm_80 p.cu -o sass80 2>/dev/null
	./sass80 >sass80.out 2>&1
	check "plainly, sm_80 machine code on sm_$cc: no kernel image" grep -q cudaErrorNoKernelImageForDevice sass80.out
	NVSHIM_DEVICES= NVSHIM_VERBOSITY=verbose "$SHIM_NVCC" -gencode arch=compute_80,code=sm_80 p.cu -o sass80_shim 2>build.err
	grep 'targets.sass_only' build.err | sed 's/^/# /'
	check "through nvshim, built where no GPU is known: the note names sm_$cc among the GPUs without a kernel image" \
		sh -c "grep 'targets.sass_only' build.err | grep -q 'sm_$cc'"
	NVSHIM_DEVICES= "$SHIM_NVCC" -gencode arch=compute_80,code=sm_80 p.cu -o sass80_quiet 2>quiet.err
	check "... and at the default verbosity nvcc's stderr only (empty)" test ! -s quiet.err
	NVSHIM_DEVICES= NVSHIM_FORWARD_PTX=highest "$SHIM_NVCC" -gencode arch=compute_80,code=sm_80 p.cu -o fwd 2>fwd.err
	./fwd >fwd.out 2>&1
	check "forward_ptx = highest: compute_80 PTX added, it runs on sm_$cc with the right values" \
		sh -c "grep -q 'targets.forward_ptx' fwd.err && grep -q '^ran 0$' fwd.out"
fi

# ---- nothing new on the path of a program that works: silent, and what it costs ----
if [ -x "${PRE:-}/ptx135_shim" ] && [ "$cc" = 90 ]; then
	"$NVSHIM" run -- "$PRE/ptx135_shim" >ok.out 2>ok.err
	check "nvshim run of a program that works: its output, nothing on stderr" \
		sh -c "grep -q '^ran 0$' ok.out && test ! -s ok.err"
	# alternating, 15 runs each: the program alone and under nvshim run (medians, ms)
	python3 - "$NVSHIM" "$PRE/ptx135_shim" <<'PY'
import statistics, subprocess, sys, time
shim, prog = sys.argv[1], sys.argv[2]
t = {"plain": [], "nvshim run": []}
for i in range(15):
    for k, cmd in (("plain", [prog]), ("nvshim run", [shim, "run", "--", prog])):
        t0 = time.perf_counter(); subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True); t[k].append((time.perf_counter() - t0) * 1000)
a, b = statistics.median(t["plain"]), statistics.median(t["nvshim run"])
print("# run overhead: program alone %.1f ms, under nvshim run %.1f ms (medians of 15, alternating): %.2fx" % (a, b, b / a))
PY
fi
finish
