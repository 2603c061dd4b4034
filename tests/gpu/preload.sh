#!/bin/bash
# The preload library on a GPU: what the test double of the driver stands in for on machines
# without one (tests/e2e/preload.sh), here with the real driver, CuPy, PyTorch and numba-cuda.
# Skips cleanly without an NVIDIA GPU.
#   bash tests/gpu/preload.sh NVSHIM [NVCC]
# NVSHIM is the nvshim executable (libnvshim-preload.so in its libexec/nvshim, build tree or
# install). PYTHON picks the interpreter (python3); each Python check skips when its package is
# not importable. Every check runs the same program without nvshim first and prints what it
# said ("# plain: ..."), then under `nvshim run` ("# nvshim: ..."): record both in the docs.
#
# Checks:
#   - C: NVRTC -> PTX with -rdc=true -> cuLinkComplete without a log buffer: the program sees
#     CUDA_ERROR_INVALID_SOURCE; under nvshim run stderr and cuGetErrorString carry ptxas's
#     "uses too much shared data"; the same link of a good kernel works and says nothing
#   - CuPy RawModule(code=..., options=("--device-c",)) with 0xc080 bytes of shared memory: the
#     error CuPy raises contains "uses too much shared data"
#   - CuPy RawModule(..., jitify=True) with a bf16 wmma kernel compiles, and computes 16.0
#   - a PyTorch jiterator kernel and a numba-cuda kernel still run and compute
NVSHIM=$1
NVCC=${2:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
REAL_HOME=$HOME
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
. "$ROOT/tests/e2e/lib.sh"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	skip "preload GPU suite" "no NVIDIA GPU on this machine"
	finish
	exit
fi
PYTHON=${PYTHON:-python3}
# The Python packages may be installed for the user: keep them visible with the private HOME.
export PYTHONUSERBASE="$(HOME=$REAL_HOME "$PYTHON" -m site --user-base 2>/dev/null)"
CUDA=$(cd "$(dirname "$NVCC")/.." && pwd)
S=$ROOT/tests/preload
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '. ')
echo "# GPU: $(nvidia-smi -L | head -1), compute capability $cc; driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
cd "$WORK" || exit 1
# Every program gets a time limit: a hang fails its check instead of the whole suite.
T() { timeout -k 5 180 "$@"; }
shim() { T "$NVSHIM" run -- "$@"; }
show() { sed "s/^/# $1: /" "$2"; } # show LABEL FILE

# --- C: the driver's JIT linker, without a log buffer.
gcc -O2 -o link_driver "$S/link_driver.c" -I"$CUDA/include" -L"$CUDA/lib64" -lnvrtc -ldl -Wl,-rpath,"$CUDA/lib64"
check "C program builds" test -x link_driver
printf 'extern "C" __global__ void mm(float *out) { out[threadIdx.x] = threadIdx.x; }\n' >good.cu
for load in dlopen procaddress; do
	T ./link_driver --load=$load --arch=compute_$cc "$S/shared_too_much.cu" >plain.out 2>plain.err
	show "plain ($load) stdout" plain.out
	show "plain ($load) stderr" plain.err
	check "C, $load: plain, cuLinkComplete fails" grep -q "^cuLinkComplete [1-9]" plain.out
	shim ./link_driver --load=$load --arch=compute_$cc "$S/shared_too_much.cu" >shim.out 2>shim.err
	show "nvshim ($load) stdout" shim.out
	show "nvshim ($load) stderr" shim.err
	check "C, $load: the same result under nvshim" test "$(cut -d' ' -f1-2 plain.out)" = "$(cut -d' ' -f1-2 shim.out)"
	check "C, $load: stderr has ptxas's message" grep -q "uses too much shared data (0xc080 bytes, 0xc000 max)" shim.err
	check "C, $load: and its explanation (resource.shared)" grep -q "kernel mm uses 49280 bytes of static shared memory on sm_$cc.*\[resource.shared\]" shim.err
	check "C, $load: so has cuGetErrorString's text" grep -q "(nvshim: .*uses too much shared data" shim.out
done
shim ./link_driver --arch=compute_$cc good.cu >shim.out 2>shim.err
check "C: a good kernel links, nothing said" test -n "$(grep '^cuLinkComplete 0 ' shim.out)" -a ! -s shim.err
show "nvshim (good kernel)" shim.out
T ./link_driver --mode=module --arch=compute_$cc "$S/shared_too_much.cu" >plain.out 2>&1
shim ./link_driver --mode=module --arch=compute_$cc "$S/shared_too_much.cu" >shim.out 2>&1
show "plain (cuModuleLoadData, for the record)" plain.out
show "nvshim (cuModuleLoadData, for the record)" shim.out

# --- Python programs.
have() { T "$PYTHON" -c "import $1" >/dev/null 2>&1; }
py() { # py LABEL SCRIPT: runs it plain and under nvshim; output in plain.out / shim.out
	T "$PYTHON" -c "$2" >plain.out 2>plain.err
	show "plain $1" plain.out
	show "plain $1 stderr" plain.err
	shim "$PYTHON" -c "$2" >shim.out 2>shim.err
	show "nvshim $1" shim.out
	show "nvshim $1 stderr" shim.err
}
export CUPY_CACHE_DIR="$WORK/cupy-cache" # a fresh cache: every kernel is compiled

if have cupy; then
	py "CuPy --device-c" '
import cupy as cp
src = r"""
extern "C" __global__ void mm(float *out) {
  __shared__ float tile[0xc080 / 4];
  tile[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = tile[(threadIdx.x + 1) % (0xc080 / 4)];
}
"""
try:
    cp.RawModule(code=src, options=("--device-c",)).get_function("mm")
    print("no error")
except Exception as e:
    print("error:", type(e).__name__, str(e).replace("\n", " | "))
'
	rm -rf "$CUPY_CACHE_DIR"
	check "CuPy --device-c: plain CuPy raises" grep -q "^error:" plain.out
	check "CuPy --device-c: under nvshim the error says 'uses too much shared data'" grep -q "^error: .*uses too much shared data" shim.out
	check "CuPy --device-c: and stderr explains it (resource.shared)" grep -q "kernel mm uses 49280 bytes of static shared memory on sm_$cc.*cudaFuncSetAttribute.*\[resource.shared\]" shim.err

	py "CuPy jitify bf16 wmma" '
import cupy as cp
src = r"""
#include <mma.h>
#include <cuda_bf16.h>
using namespace nvcuda;
extern "C" __global__ void k(const __nv_bfloat16 *a, const __nv_bfloat16 *b, float *c) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}
"""
try:
    k = cp.RawModule(code=src, jitify=True).get_function("k")
    one = cp.full(256, 0x3F80, dtype=cp.uint16)  # bf16 1.0
    c = cp.zeros(256, dtype=cp.float32)
    k((1,), (32,), (one, one, c))
    print("ok", float(c[0]), float(c[255]))
except Exception as e:
    print("error:", type(e).__name__, str(e).replace("\n", " | ")[:2000])
'
	rm -rf "$CUPY_CACHE_DIR"
	check "CuPy jitify bf16 wmma: compiles and computes 16.0 under nvshim" grep -q "^ok 16.0 16.0" shim.out
else
	skip "CuPy checks" "cupy is not importable with $PYTHON"
fi

if have torch; then
	py "PyTorch jiterator" '
import torch
fn = torch.cuda.jiterator._create_jit_fn("template <typename T> T fma1(T x, T y) { return x * y + T(1); }")
a = torch.rand(4096, device="cuda")
b = torch.rand(4096, device="cuda")
print("ok" if torch.allclose(fn(a, b), a * b + 1) else "wrong")
'
	check "PyTorch jiterator kernel runs under nvshim" grep -q "^ok$" shim.out
else
	skip "PyTorch jiterator" "torch is not importable with $PYTHON"
fi

if have numba.cuda; then
	py "numba-cuda" '
import numpy as np
from numba import cuda
@cuda.jit
def add(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] + y[i]
x = np.arange(4096, dtype=np.float32)
out = cuda.device_array_like(x)
add[16, 256](cuda.to_device(x), cuda.to_device(x), out)
print("ok" if np.allclose(out.copy_to_host(), 2 * x) else "wrong")
'
	# "Still runs" is measured against the same program without nvshim: where numba-cuda itself
	# is broken (seen: numba-cuda 0.68 with a NumPy that has no row_stack), that is no check.
	if grep -q "^ok$" plain.out; then
		check "numba-cuda kernel runs under nvshim" grep -q "^ok$" shim.out
	else
		skip "numba-cuda kernel" "it fails without nvshim too: $(tail -n 1 plain.err)"
		check "numba-cuda under nvshim fails the same way" test "$(tail -n 1 plain.err)" = "$(tail -n 1 shim.err)"
	fi
else
	skip "numba-cuda" "numba.cuda is not importable with $PYTHON"
fi

out=$(shim "$NVSHIM" doctor 2>/dev/null | grep '^preload')
check "doctor under nvshim run: in effect" grep -q "in effect (LD_PRELOAD" <<<"$out"
finish
