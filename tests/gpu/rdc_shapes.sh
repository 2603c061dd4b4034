#!/bin/bash
# Relocatable device code on the GPU: which rdc shapes run where nvshim inspect says they do.
# A program of two sources (the kernel in the second, calling a __device__ function of the first),
# built for sm_80 in each shape nvcc offers, run on this machine's GPU, and `nvshim inspect`'s
# verdict for the GPU's target beside what the run did.
#   bash tests/gpu/rdc_shapes.sh NVSHIM [NVCC]
NVSHIM=$1
NVCC=${2:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
. "$(dirname "$0")/../e2e/lib.sh"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	skip "rdc shapes on a GPU" "no NVIDIA GPU on this machine"
	finish
	exit
fi
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '. ')
cd "$WORK" || exit 1
cat >a.cu <<'SRC'
#include <cstdio>
__device__ float value(int i) { return 2.0f * i + 1.0f; }
void launch_fill(float *p, int n);
int main() {
	const int n = 256;
	float *d, h[n];
	cudaMalloc(&d, sizeof(h));
	launch_fill(d, n);
	cudaError_t e = cudaDeviceSynchronize();
	if (e == cudaSuccess)
		e = cudaGetLastError();
	cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad += h[i] != 2.0f * i + 1.0f;
	printf("%s %d\n", e == cudaSuccess ? "ran" : cudaGetErrorName(e), bad);
	return e != cudaSuccess || bad;
}
SRC
cat >b.cu <<'SRC'
__device__ float value(int i);
__global__ void fill(float *p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = value(i); }
void launch_fill(float *p, int n) { fill<<<(n + 127) / 128, 128>>>(p, n); }
SRC
CUDA=$(dirname "$(dirname "$(readlink -f "$NVCC")")")
shape() { # shape NAME COMMAND...: builds NAME with the command, runs it, and inspects it
	local name=$1 out verdict
	shift
	if ! "$@" >"$name.build" 2>&1; then
		echo "# $name: build failed: $(tail -2 "$name.build" | tr '\n' ' ')"
		return
	fi
	out=$(./"$name" 2>&1 | tail -1)
	verdict=$("$NVSHIM" inspect "$name" 2>&1 | grep -E "sm_$cc" | head -2 | tr '\n' ' ')
	echo "# $name: run: $out | inspect: $verdict"
	echo "$name	$out	$verdict" >>"$WORK/shapes.tsv"
}
shape p_rdc_sm80 "$NVCC" -rdc=true -arch=sm_80 a.cu b.cu -o p_rdc_sm80
shape p_rdc_ptx80 "$NVCC" -rdc=true -gencode arch=compute_80,code=compute_80 a.cu b.cu -o p_rdc_ptx80
shape p_rdc_sass80 "$NVCC" -rdc=true -gencode arch=compute_80,code=sm_80 a.cu b.cu -o p_rdc_sass80
shape p_dlink_sm80 bash -c "'$NVCC' -rdc=true -arch=sm_80 -c a.cu b.cu && '$NVCC' -arch=sm_80 -dlink a.o b.o -o dl.o && g++ a.o b.o dl.o -L'$CUDA/lib64' -lcudart -o p_dlink_sm80"
shape p_dlto_sm80 "$NVCC" -rdc=true -dlto -arch=sm_80 a.cu b.cu -o p_dlto_sm80
shape p_lib_sm80 bash -c "'$NVCC' -rdc=true -arch=sm_80 -c b.cu -o b.o && ar rcs libb.a b.o && '$NVCC' -rdc=true -arch=sm_80 a.cu -L. -lb -o p_lib_sm80"
shape p_rdc_sm$cc "$NVCC" -rdc=true -arch=sm_$cc a.cu b.cu -o p_rdc_sm$cc
shape p_whole_sm80 bash -c "cat a.cu b.cu | sed '/^__device__ float value(int i);$/d' >w.cu && '$NVCC' -arch=sm_80 w.cu -o p_whole_sm80"
cat "$WORK/shapes.tsv"
finish
