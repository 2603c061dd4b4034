#!/bin/bash
# "Which GPUs can run this?" on a real GPU: programs and a shared library built for a target this
# GPU cannot run (sm_80 on an H100; sm_90 on an older GPU), launched with CUDA_MODULE_LOADING=EAGER
# and LAZY, plain and under `nvshim run`; a kernel that is a stub on this GPU's target; a PyTorch
# extension built with TORCH_CUDA_ARCH_LIST=8.0 (when torch is importable); and `nvshim inspect`
# of PyTorch's libtorch_cuda.so, timed. Skips cleanly without an NVIDIA GPU.
#   bash tests/gpu/inspect.sh NVSHIM [NVCC]
# Every program runs plain first ("# plain: ...") and then under nvshim run ("# nvshim: ..."):
# both outputs go into docs/gpu-run.md.
NVSHIM=$1
NVCC=${2:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
REAL_HOME=$HOME
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
. "$ROOT/tests/e2e/lib.sh"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	skip "inspect GPU suite" "no NVIDIA GPU on this machine"
	finish
	exit
fi
PYTHON=${PYTHON:-python3}
export PYTHONUSERBASE="$(HOME=$REAL_HOME "$PYTHON" -m site --user-base 2>/dev/null)"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '. ')
echo "# GPU: $(nvidia-smi -L | head -1), compute capability $cc; driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
cd "$WORK" || exit 1
T() { timeout -k 5 180 "$@"; }
show() { sed "s/^/# $1: /" "$2"; }
other=80
[ "$cc" -lt 90 ] && other=90
echo "# built for sm_$other only, run on sm_$cc"

cat >kern.cu <<'CU'
#include <cstdio>
__global__ void scale(float *x, float a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= a; }
extern "C" int run_scale(void)
{
	float *x;
	cudaMalloc(&x, 256 * sizeof(float));
	scale<<<1, 256>>>(x, 2.0f, 256);
	cudaError_t launch = cudaGetLastError(), sync = cudaDeviceSynchronize();
	printf("launch: %s; sync: %s\n", cudaGetErrorString(launch), cudaGetErrorString(sync));
	cudaFree(x);
	return launch != cudaSuccess || sync != cudaSuccess;
}
CU
printf 'extern "C" int run_scale(void);\nint main() { return run_scale(); }\n' >main.cu
G=(-gencode arch=compute_$other,code=sm_$other)
"$NVCC" kern.cu main.cu -o prog_static "${G[@]}"
"$NVCC" kern.cu main.cu -o prog_shared -cudart shared "${G[@]}"
"$NVCC" -shared -Xcompiler -fPIC kern.cu -o libkern.so "${G[@]}"
"$NVCC" main.cu -o prog_lib -L. -lkern -Xlinker -rpath="$WORK"
for prog in prog_static prog_shared prog_lib; do
	# a program is named as it was started (./prog, from dladdr), a library by its path
	where=./$prog
	[ $prog = prog_lib ] && where=$WORK/libkern.so
	for mode in EAGER LAZY; do
		CUDA_MODULE_LOADING=$mode T "./$prog" >plain.out 2>&1
		st_plain=$?
		show "plain $prog $mode" plain.out
		CUDA_MODULE_LOADING=$mode T "$NVSHIM" run -- "./$prog" >shim.out 2>shim.err
		st_shim=$?
		show "nvshim $prog $mode" shim.out
		show "nvshim $prog $mode (stderr)" shim.err
		check "$prog, $mode: plain fails with no kernel image" grep -q "no kernel image" plain.out
		check "$prog, $mode: same output and status under nvshim run" test "$st_plain" = "$st_shim" -a "$(cat plain.out)" = "$(cat shim.out)"
		check "$prog, $mode: nvshim names $(basename "$where"), its targets, the GPU's and the fix" \
			grep -q "$where .*no kernel image for this GPU (sm_$cc): it holds sm_$other.*-gencode arch=compute_$cc,code=sm_$cc .*\[noimage.explain\]" shim.err
		check "$prog, $mode: said once" test "$(grep -c noimage.explain shim.err)" = 1
	done
done
out=$("$NVSHIM" inspect prog_static libkern.so 2>&1)
st=$?
echo "$out" | sed 's/^/# inspect: /'
check "nvshim inspect (this machine's GPU): exit 1" test $st = 1
check "nvshim inspect: does not run on sm_$cc" contains "$out" "^  sm_$cc: does not run"

# A kernel that is a stub on this GPU's target (its sm_75 code has a body: the evidence), and a
# no-op kernel (trivial on every target: by design, not said), launched.
cat >stub.cu <<CU
#include <cstdio>
__global__ void guarded(float *x) {
#if __CUDA_ARCH__ != ${cc}0
  x[0] = 1;
#endif
}
__global__ void nop() {}
int main() { float *x; cudaMalloc(&x, 4); guarded<<<1, 1>>>(x); nop<<<1, 1>>>(); printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize())); return 0; }
CU
"$NVCC" stub.cu -o stub -gencode arch=compute_$cc,code=sm_$cc -gencode arch=compute_75,code=sm_75
T ./stub >plain.out 2>&1
show "plain stub" plain.out
T "$NVSHIM" run -- ./stub >shim.out 2>shim.err
show "nvshim stub" shim.out
show "nvshim stub (stderr)" shim.err
check "stub kernel: the program's output unchanged" test "$(cat plain.out)" = "$(cat shim.out)"
check "stub kernel: said" grep -q "kernel 'guarded(float\*)' of \./stub is a stub on sm_$cc.*\[noimage.stub\]" shim.err
check "no-op kernel (trivial on every target): not said" test -z "$(grep "kernel 'nop()'" shim.err)"
out=$("$NVSHIM" inspect --gpu "$cc" stub)
check "nvshim inspect: the stub kernel marked, the no-op one trivial" contains "$out" "^  guarded(float\*) *sm_$cc .* stub$" \
	"^  nop() *sm_$cc .* trivial$"

# A PyTorch extension built for 8.0 only.
if "$PYTHON" -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' >/dev/null 2>&1; then
	mkdir -p ext && cat >ext/ext.cu <<'CU'
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
__global__ void twice(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2; }
torch::Tensor run(torch::Tensor x) {
	twice<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), (int)x.numel());
	C10_CUDA_KERNEL_LAUNCH_CHECK();
	return x;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("run", &run); }
CU
	cat >ext/use.py <<'PY'
import sys, torch
from torch.utils.cpp_extension import load
m = load("noimage_ext", ["ext/ext.cu"], build_directory="ext", verbose=False)
try:
    print(m.run(torch.ones(4, device="cuda")).tolist())
except Exception as e:
    print("error:", str(e).splitlines()[0])
PY
	TORCH_CUDA_ARCH_LIST=$((other / 10)).$((other % 10)) T "$PYTHON" ext/use.py >plain.out 2>&1
	show "plain torch extension" plain.out
	TORCH_CUDA_ARCH_LIST=$((other / 10)).$((other % 10)) T "$NVSHIM" run -- "$PYTHON" ext/use.py >shim.out 2>shim.err
	show "nvshim torch extension" shim.out
	show "nvshim torch extension (stderr)" shim.err
	check "torch extension: plain fails with no kernel image" grep -q "no kernel image" plain.out
	check "torch extension: nvshim names the extension" grep -q "noimage_ext.*\.so .*no kernel image for this GPU (sm_$cc): it holds sm_$other.*\[noimage.explain\]" shim.err
	# libtorch_cuda.so: how long nvshim inspect takes on it.
	lib=$("$PYTHON" -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cuda.so"))')
	if [ -f "$lib" ]; then
		echo "# libtorch_cuda.so: $(stat -c %s "$lib") bytes"
		for flags in --no-kernels "" --json; do
			t0=$(date +%s%N)
			"$NVSHIM" inspect --gpu "$cc" $flags "$lib" >insp.out 2>&1
			st=$?
			t1=$(date +%s%N)
			echo "# nvshim inspect $flags libtorch_cuda.so: $(((t1 - t0) / 1000000)) ms, exit $st"
		done
		head -4 insp.out | cut -c1-300 | sed 's/^/# /'
		"$NVSHIM" inspect --gpu "$cc" --no-kernels "$lib" | head -6 | sed 's/^/# inspect: /'
		t0=$(date +%s%N); "$NVSHIM" inspect --gpu "$cc" "$lib" >/dev/null 2>&1; t1=$(date +%s%N)
		check "nvshim inspect of libtorch_cuda.so with every kernel: under 2 s" test $(((t1 - t0) / 1000000)) -lt 2000
		CO=$(find_cuobjdump)
		if [ -n "$CO" ]; then
			t0=$(date +%s%N); n=$("$CO" --list-elf "$lib" 2>/dev/null | grep -c '^ELF file'); t1=$(date +%s%N)
			m=$("$NVSHIM" inspect --json --no-kernels "$lib" | "$PYTHON" -c "import json,sys; print(sum(i['kind'] == 'sass' for i in json.load(sys.stdin)['files'][0]['images']))")
			echo "# cuobjdump --list-elf libtorch_cuda.so: $(((t1 - t0) / 1000000)) ms, $n ELF images; nvshim: $m"
			check "libtorch_cuda.so: as many machine code images as cuobjdump lists" test "$n" = "$m"
		fi
	fi
else
	skip "torch extension" "torch with CUDA is not importable with $PYTHON"
fi
finish
