#!/bin/bash
# `nvshim inspect` and `nvshim run` against what runs on this GPU: every shared library under
# PyTorch's nvidia/ directory and libtorch_cuda.so (they all load and run here, so none may be
# "does not run" or unreadable); programs nvcc 13 links (a device-link fatbin without kernels):
# sm_80 with compute_80 PTX, compute_80 PTX only (both run here, EAGER and LAZY, plain and under
# nvshim run), and sm_80 only (still "does not run", and explained at run time); and
# `nvshim run -- python3` with torch.compile, a cuBLAS matmul and a cuDNN convolution, which
# prints nothing of nvshim's. Skips cleanly without an NVIDIA GPU (and the PyTorch parts without
# torch).
#   bash tests/gpu/inspect_corpus.sh NVSHIM [NVCC]
NVSHIM=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") # absolute: the suite runs in its own folder
NVCC=${2:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
REAL_HOME=$HOME
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
. "$ROOT/tests/e2e/lib.sh"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	skip "inspect corpus GPU suite" "no NVIDIA GPU on this machine"
	finish
	exit
fi
PYTHON=${PYTHON:-python3}
export PYTHONUSERBASE="$(HOME=$REAL_HOME "$PYTHON" -m site --user-base 2>/dev/null)"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '. ')
echo "# GPU: $(nvidia-smi -L | head -1), compute capability $cc; driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
cd "$WORK" || exit 1
T() { timeout -k 5 300 "$@"; }
show() { sed "s/^/# $1: /" "$2"; }

# --- programs nvcc 13 links
cat >k.cu <<'CU'
#include <cstdio>
__global__ void setk(int *x) { x[5] = 6; }
int main() {
	int *d, h[16] = {0};
	cudaMalloc(&d, 64);
	setk<<<1, 1>>>(d);
	cudaError_t e = cudaDeviceSynchronize();
	cudaMemcpy(h, d, 64, cudaMemcpyDeviceToHost);
	printf("%s x[5]=%d\n", cudaGetErrorString(e), h[5]);
	return e != cudaSuccess;
}
CU
"$NVCC" k.cu -o ptx80 -gencode 'arch=compute_80,code=[sm_80,compute_80]'
"$NVCC" k.cu -o ptxonly -gencode arch=compute_80,code=compute_80
"$NVCC" k.cu -o sm80 -gencode arch=compute_80,code=sm_80
for prog in ptx80 ptxonly; do
	out=$("$NVSHIM" inspect --gpu "$cc" "./$prog" 2>&1); st=$?
	show "inspect $prog" <(echo "$out")
	check "$prog: inspect says it runs on sm_$cc (exit 0)" test $st = 0 -a -n "$(grep "^  sm_$cc: runs: " <<<"$out")"
	for mode in EAGER LAZY; do
		CUDA_MODULE_LOADING=$mode T "./$prog" >plain.out 2>&1; st_plain=$?
		CUDA_MODULE_LOADING=$mode T "$NVSHIM" run -- "./$prog" >shim.out 2>shim.err; st_shim=$?
		show "plain $prog $mode" plain.out
		show "nvshim $prog $mode (stderr)" shim.err
		check "$prog, $mode: runs plain (x[5]=6)" test $st_plain = 0 -a -n "$(grep 'no error x\[5\]=6' plain.out)"
		check "$prog, $mode: the same under nvshim run, nothing said" \
			test $st_shim = 0 -a "$(cat plain.out)" = "$(cat shim.out)" -a ! -s shim.err
	done
done
out=$("$NVSHIM" inspect --gpu "$cc" ./sm80 2>&1); st=$?
show "inspect sm80" <(echo "$out")
if [ "$cc" -ge 90 ]; then
	check "sm_80-only program: still 'does not run' on sm_$cc (exit 1)" test $st = 1 -a -n "$(grep "^  sm_$cc: does not run: " <<<"$out")"
	T ./sm80 >plain.out 2>&1
	T "$NVSHIM" run -- ./sm80 >shim.out 2>shim.err
	show "plain sm80" plain.out
	show "nvshim sm80 (stderr)" shim.err
	# the program checks cudaDeviceSynchronize(), not the launch: its kernel just never ran
	check "sm_80-only program: its kernel does not run plain (x[5] stays 0)" grep -q "x\[5\]=0" plain.out
	check "sm_80-only program: explained at run time under nvshim run" \
		grep -q "no kernel image for this GPU (sm_$cc): it holds sm_80.*\[noimage.explain\]" shim.err
else
	skip "sm_80-only program" "sm_$cc runs sm_80 code"
fi

# --- PyTorch's CUDA libraries
if ! "$PYTHON" -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' >/dev/null 2>&1; then
	skip "PyTorch's libraries and nvshim run of torch" "torch with CUDA is not importable with $PYTHON"
	finish
	exit
fi
libs=$("$PYTHON" - <<'PY'
import glob, os, torch
site = os.path.dirname(os.path.dirname(torch.__file__))
found = sorted(p for p in glob.glob(os.path.join(site, "nvidia", "**", "*.so*"), recursive=True)
               if os.path.isfile(p) and not os.path.islink(p))
found.append(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cuda.so"))
print("\n".join(found))
PY
)
n=0 bad=
for f in $libs; do
	n=$((n + 1))
	out=$("$NVSHIM" inspect --no-kernels --gpu "$cc" "$f" 2>&1); st=$?
	echo "# $f: exit $st: $(grep "^  sm_$cc: " <<<"$out" | cut -c1-200)"
	[ $st = 2 ] && bad="$bad $(basename "$f"):unreadable"
	grep -q ': does not run' <<<"$out" && bad="$bad $(basename "$f"):does-not-run"
done
echo "# $n libraries judged for sm_$cc"
check "PyTorch's $n CUDA libraries: none unreadable, none 'does not run' on sm_$cc (all load and run here)" test -z "$bad"
torchlib=$(tail -1 <<<"$libs")
t0=$(date +%s%N); out=$("$NVSHIM" inspect --gpu "$cc" "$torchlib" 2>&1); st=$?; t1=$(date +%s%N)
echo "# nvshim inspect libtorch_cuda.so with its kernels: $(((t1 - t0) / 1000000)) ms, exit $st, $(grep -c ' stub$' <<<"$out") stub rows, $(grep -c ' trivial$' <<<"$out") trivial rows"
check "libtorch_cuda.so with its kernels: read (exit 0)" test $st = 0

# --- nvshim run of PyTorch: torch.compile, cuBLAS, cuDNN; nothing of nvshim's on stderr.
cat >torch_work.py <<'PY'
import torch
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(1024, 1024, device="cuda")
gelu = torch.compile(lambda t: F.gelu(t) * 2)
a = gelu(x)
b = x @ x.t()                                  # cuBLAS
torch.backends.cudnn.enabled = True
w = torch.randn(8, 3, 3, 3, device="cuda")
c = F.conv2d(torch.randn(2, 3, 32, 32, device="cuda"), w, padding=1)  # cuDNN
torch.cuda.synchronize()
print("gelu %.3g matmul %.3g conv %.3g" % (float((a - F.gelu(x) * 2).abs().max()), float(b.trace()),
                                          float(c.abs().mean())))
PY
T "$PYTHON" torch_work.py >plain.out 2>plain.err; st_plain=$?
T "$NVSHIM" run -- "$PYTHON" torch_work.py >shim.out 2>shim.err; st_shim=$?
show "plain torch" plain.out
show "nvshim torch" shim.out
show "nvshim torch (stderr)" shim.err
check "torch.compile, cuBLAS, cuDNN: run plain" test $st_plain = 0 -a -s plain.out
check "torch.compile, cuBLAS, cuDNN under nvshim run: the same output and status" \
	test $st_shim = $st_plain -a "$(cat plain.out)" = "$(cat shim.out)"
check "torch.compile, cuBLAS, cuDNN under nvshim run: nothing of nvshim's on stderr" \
	test -z "$(grep -E '^nvshim [a-z]+ *:|\[noimage\.' shim.err)"
finish
