#!/bin/bash
# JIT clients beyond CuPy on a GPU (tests/gpu/jit_clients.py): cuda.core (Program, Linker,
# ObjectCode), cuda.bindings (raw NVRTC and nvJitLink), numba-cuda (its C++ and LTO paths),
# torch.cuda.jiterator, and a C program that links with the driver's cuLink*. Each runs three
# cases without and with `nvshim run`:
#   seed   seed 002: cooperative groups + 49,408 bytes of static shared memory, no include
#          directory: under nvshim the headers are found and ptxas's reason is given
#          ("uses too much shared data (0xc100 bytes, 0xc000 max)", rule resource.shared)
#   good   cooperative groups, no include directory: under nvshim it compiles (and runs)
#   plain  a kernel that needs nothing: the same output, nothing of nvshim's on stderr
# Then with the toolkit hidden (NVSHIM_NVRTC_HEADER_ROOTS, no CUDA_HOME), where NVRTC comes from a
# wheel set without CCCL (PyTorch's environment): one note names the package to install.
# Skips without a GPU, and each client when its package is not importable.
#   bash tests/gpu/jit_clients.sh NVSHIM [NVCC]
NVSHIM=$1
NVCC=${2:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
REAL_HOME=$HOME
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
. "$ROOT/tests/e2e/lib.sh"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	skip "JIT clients GPU suite" "no NVIDIA GPU on this machine"
	finish
	exit
fi
PYTHON=${PYTHON:-python3}
export PYTHONUSERBASE="${PYTHONUSERBASE:-$REAL_HOME/.local}"
CUDA=$(cd "$(dirname "$NVCC")/.." && pwd)
S=$ROOT/tests/preload
PY=$ROOT/tests/gpu/jit_clients.py
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '. ')
cd "$WORK" || exit 1
T() { timeout -k 5 300 "$@"; }
show() { sed "s/^/# $1: /" "$2"; }
have() { "$PYTHON" -c "import $1" >/dev/null 2>&1; }
both() { # both LABEL COMMAND...: plain.out/err, then shim.out/err
	local label=$1
	shift
	T "$@" >plain.out 2>plain.err
	T "$NVSHIM" run -- "$@" >shim.out 2>shim.err
	show "$label plain stdout" plain.out
	show "$label plain stderr" plain.err
	show "$label nvshim stdout" shim.out
	show "$label nvshim stderr" shim.err
	cat shim.out shim.err >shim.all
}

client() { # client NAME MODULE
	local name=$1 module=$2
	if ! have "$module"; then
		skip "$name" "$module is not importable with $PYTHON"
		return
	fi
	both "$name plain" "$PYTHON" "$PY" "$name" plain
	if ! grep -q "^ok" plain.out; then
		skip "$name" "a kernel that needs nothing fails without nvshim too: $(grep -m1 "^error" plain.out)"
		return
	fi
	check "$name, a working program: the same output" cmp -s plain.out shim.out
	check "$name, a working program: nothing of nvshim's" sh -c '! grep -q nvshim shim.err'
	both "$name seed" "$PYTHON" "$PY" "$name" seed
	if grep -q "^error" plain.out; then
		check "$name, seed 002: ptxas's reason under nvshim" grep -q "uses too much shared data (0xc100 bytes, 0xc000 max)" shim.all
		check "$name, seed 002: and the fix (resource.shared)" grep -q "49408 bytes of static shared memory.*\[resource.shared\]" shim.all
	else
		# numba-cuda 0.30 (2026-11-27): its foreign device function with the 49,408-byte array
		# compiled, linked and ran without nvshim too: nothing failed, nothing to explain.
		skip "$name, seed 002" "it does not fail without nvshim either: $(head -1 plain.out)"
		check "$name, seed 002: the same output under nvshim" cmp -s plain.out shim.out
	fi
	both "$name good" "$PYTHON" "$PY" "$name" good
	check "$name, cooperative groups with no include directory: compiles under nvshim" \
		sh -c 'grep -q "^ok" shim.out && ! grep -q "^error" shim.out'
}

client core cuda.core
client bindings cuda.bindings.nvrtc
client numba numba.cuda
client jiterator torch

# The driver's JIT linker: NVRTC -> relocatable PTX -> cuLinkComplete without a log buffer.
gcc -O2 -o link_driver "$S/link_driver.c" -I"$CUDA/include" -L"$CUDA/lib64" -lnvrtc -ldl -Wl,-rpath,"$CUDA/lib64"
both "cuLink seed" ./link_driver --load=dlopen --arch=compute_$cc "$S/seed002.cu"
check "cuLink*, seed 002: ptxas's reason under nvshim" grep -q "uses too much shared data (0xc100 bytes, 0xc000 max)" shim.all
check "cuLink*, seed 002: the headers were found (nvrtc.include_dirs)" grep -q "\[nvrtc.include_dirs\]" shim.all

# PyTorch's environment with the toolkit hidden: NVRTC from the nvidia-cuda-nvrtc wheel, no CCCL.
if have cuda.core; then
	env -u CUDA_HOME -u CUDA_PATH NVSHIM_NVRTC_HEADER_ROOTS="$WORK/nowhere" timeout -k 5 300 "$NVSHIM" run -- "$PYTHON" "$PY" core good >shim.out 2>shim.err
	show "core good, toolkit hidden, nvshim stdout" shim.out
	show "core good, toolkit hidden, nvshim stderr" shim.err
	if grep -q "site-packages/nvidia/cu13" shim.err; then
		check "toolkit hidden: one note names the packages" grep -q "install them: pip install .*'nvidia-cuda-cccl==13\.[0-9]*\.\*'" shim.err
		check "toolkit hidden: one note, no second compiler error" test "$(grep -c '^nvshim' shim.err)" -le 2
	else
		skip "toolkit hidden" "cuda.core's NVRTC is not a wheel's here"
	fi
fi
finish
