#!/bin/bash
# The toolkit view on a GPU machine: after `eval "$(nvshim env)"`, tools that run
# $CUDA_HOME/bin/nvcc or $CUDA_PATH/bin/nvcc reach nvshim (docs/build-systems.md).
#   - PyTorch's torch.utils.cpp_extension.load() with PYTORCH_NVCC unset builds an extension whose
#     extra_cuda_cflags hold a CUDA-12 list (compute_52 and this GPU's target), and runs it; with
#     CUDA_HOME the real toolkit, the same build stops at compute_52 (the control);
#   - CuPy's RawModule(code, backend='nvcc') compiles a kernel with compute_52 added to CuPy's own
#     target for this GPU, and runs it; with CUDA_PATH the real toolkit, compute_52 stops it.
# nvshim's log file proves each compile went through nvshim. Skips without a GPU, and each part
# without its Python package.
#   bash tests/gpu/toolkitview.sh NVSHIM [NVCC]
NVSHIM=$(realpath "$1")
NVCC=${2:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
REAL_HOME=$HOME
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
. "$ROOT/tests/e2e/lib.sh"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	skip "toolkit view GPU suite" "no NVIDIA GPU on this machine"
	finish
	exit
fi
PYTHON=${PYTHON:-python3}
export PYTHONUSERBASE="$(HOME=$REAL_HOME "$PYTHON" -m site --user-base 2>/dev/null)"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '. ')
echo "# GPU: $(nvidia-smi -L | head -1), compute capability $cc"
cd "$WORK" || exit 1
T() { timeout -k 5 600 "$@"; }
show() { sed "s/^/# $1: /" "$2"; }
REALROOT=$(dirname "$(dirname "$(realpath "$NVCC")")")
unset CUDA_HOME CUDA_PATH PYTORCH_NVCC NVCC_PREPEND_FLAGS NVCC_APPEND_FLAGS
eval "$("$NVSHIM" env)"
unset PYTORCH_NVCC NVCC
echo "# CUDA_HOME=$CUDA_HOME (the view of $REALROOT)"
check "CUDA_HOME is a toolkit view whose nvcc is nvshim" test -L "$CUDA_HOME/.nvshim-real-nvcc" -a "$CUDA_HOME/bin/nvcc" -ef "$CUDACXX"
# A CUDA-12 list: nvcc 13 refuses compute_52; this GPU's target stays.
LIST="'-gencode', 'arch=compute_52,code=sm_52', '-gencode', 'arch=compute_$cc,code=sm_$cc'"

# --- PyTorch: load() with PYTORCH_NVCC unset compiles with $CUDA_HOME/bin/nvcc.
if "$PYTHON" -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' >/dev/null 2>&1; then
	mkdir -p ext
	cat >ext/ext.cu <<'CU'
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
__global__ void axpb(float *x, float a, float b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = a * x[i] + b;
}
torch::Tensor run(torch::Tensor x, double a, double b)
{
	TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat);
	axpb<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), (float)a, (float)b, (int)x.numel());
	C10_CUDA_KERNEL_LAUNCH_CHECK();
	return x;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("run", &run); }
CU
	cat >ext/use.py <<PY
import os, sys, torch
from torch.utils.cpp_extension import load
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
m = load("viewext", ["ext/ext.cu"], build_directory=d, extra_cuda_cflags=[$LIST], verbose=True)
x = torch.arange(1024, device="cuda", dtype=torch.float32)
y = m.run(x.clone(), 2.0, 1.0)
torch.cuda.synchronize()
ok = torch.equal(y, 2 * x + 1)
print("result:", "right" if ok else "WRONG", y[:4].tolist())
sys.exit(0 if ok else 1)
PY
	# The control: CUDA_HOME the real toolkit, PYTORCH_NVCC unset: the real nvcc stops.
	CUDA_HOME=$REALROOT CUDA_PATH=$REALROOT T "$PYTHON" ext/use.py build-plain >plain.out 2>&1
	grep -m3 -i "unsupported\|error" plain.out | sed 's/^/# torch plain: /'
	check "torch control: with CUDA_HOME the real toolkit, the build stops at compute_52" \
		grep -q "Unsupported gpu architecture 'compute_52'" plain.out
	t0=$(date +%s%N)
	NVSHIM_LOG_FILE="$WORK/torch.log" T "$PYTHON" ext/use.py build-view >view.out 2>&1
	st=$?
	t1=$(date +%s%N)
	show "torch through the view" view.out
	echo "# torch load() through the view: $(((t1 - t0) / 1000000)) ms"
	check "torch load() with PYTORCH_NVCC unset: built, ran, right result" test $st -eq 0 -a -n "$(grep '^result: right' view.out)"
	check "torch: the .cu compile went through nvshim (log), compute_52 dropped" python3 -c '
import json, sys
ls = [json.loads(l) for l in open(sys.argv[1])]
hit = [l for l in ls if any(a.endswith("ext.cu") for a in l["argv_in"])]
sys.exit(not (hit and all("arch=compute_52,code=sm_52" in l["argv_in"] and
                          "arch=compute_52,code=sm_52" not in " ".join(l["argv_out"]) and l["status"] == 0 for l in hit)))' "$WORK/torch.log"
	check "torch: the compile command named the view's nvcc" grep -q "$CUDA_HOME/bin/nvcc" view.out
else
	skip "torch load() through the view" "torch with CUDA is not importable"
fi

# --- CuPy: RawModule(backend='nvcc') runs $CUDA_PATH/bin/nvcc ($NVCC unset).
if "$PYTHON" -c 'import cupy; cupy.cuda.runtime.getDeviceCount()' >/dev/null 2>&1; then
	cat >cp.py <<PY
import sys, cupy as cp
code = r'''
extern "C" __global__ void axpb(float *x, float a, float b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = a * x[i] + b;
}
'''
mod = cp.RawModule(code=code, backend="nvcc", options=("-gencode", "arch=compute_52,code=sm_52"))
k = mod.get_function("axpb")
x = cp.arange(1024, dtype=cp.float32)
y = x.copy()
k((4,), (256,), (y, cp.float32(2), cp.float32(1), cp.int32(1024)))
cp.cuda.runtime.deviceSynchronize()
ok = bool(cp.all(y == 2 * x + 1))
print("result:", "right" if ok else "WRONG", y[:4].tolist())
sys.exit(0 if ok else 1)
PY
	echo "# cupy's nvcc: $("$PYTHON" -c 'import cupy.cuda; print(cupy.cuda.get_nvcc_path())' 2>&1 | tail -1)"
	t0=$(date +%s%N)
	CUPY_CACHE_DIR="$WORK/cupy-cache" NVSHIM_LOG_FILE="$WORK/cupy.log" T "$PYTHON" cp.py >cupy.out 2>&1
	st=$?
	t1=$(date +%s%N)
	show "cupy through the view" cupy.out
	echo "# cupy RawModule(backend='nvcc') through the view: $(((t1 - t0) / 1000000)) ms"
	check "cupy nvcc backend: compiled, ran, right result" test $st -eq 0 -a -n "$(grep '^result: right' cupy.out)"
	check "cupy: the compile went through nvshim (log), compute_52 dropped" python3 -c '
import json, sys
ls = [json.loads(l) for l in open(sys.argv[1])]
hit = [l for l in ls if "arch=compute_52,code=sm_52" in l["argv_in"]]
sys.exit(not (hit and all("arch=compute_52,code=sm_52" not in " ".join(l["argv_out"]) and l["status"] == 0 for l in hit)))' "$WORK/cupy.log"
	CUPY_CACHE_DIR="$WORK/cupy-plain" CUDA_PATH=$REALROOT T "$PYTHON" cp.py >cupy-plain.out 2>&1
	grep -m3 -i "unsupported\|error" cupy-plain.out | sed 's/^/# cupy plain: /'
	check "cupy control: with CUDA_PATH the real toolkit, nvcc refuses compute_52" \
		grep -q "Unsupported gpu architecture 'compute_52'" cupy-plain.out
else
	skip "cupy nvcc backend through the view" "cupy with a GPU is not importable"
fi
finish
