#!/bin/bash
# nvshim inspect over binaries nobody here built, and over programs nvcc 13 links: the installed
# toolkit's libraries, a pinned small wheel from the package index, and programs with and
# without PTX. Each expected verdict is written below with its reason (docs/inspect.md, "The
# verdict"); nothing that readelf -S reads exits 2.
#   bash tests/e2e/inspect_corpus.sh NVSHIM [NVCC]
# The wheel (nvidia-nvjpeg 13.0.1.86, 3.7 MB) is taken from INSPECT_CORPUS_WHEELS (a folder)
# when it is there, else downloaded with pip; without either that part is skipped.
NVSHIM=$1 NVCC=${2:-/usr/local/cuda/bin/nvcc}
. "$(dirname "$0")/lib.sh"
cd "$WORK" || exit 1
insp() { "$NVSHIM" inspect "$@"; }
GPUS=80,90,100,120
# verdicts OUTPUT: "sm_80=partly sm_90=runs ..." from the table
verdicts() { sed -n 's/^  \(sm_[0-9]*\): \(runs\|partly\|does not run\).*/\1=\2/p' <<<"$1" | sed 's/does not run/no/' | tr '\n' ' ' | sed 's/ $//'; }

# --- programs nvcc 13 links: nvlink adds a device-link fatbin with no kernel (machine code for the
# machine-code targets only; an empty one when there are none). It launches nothing: not counted.
cat >k.cu <<'CU'
#include <cstdio>
__global__ void setk(int *x) { x[5] = 6; }
int main() { int *d, h[16] = {0}; cudaMalloc(&d, 64); setk<<<1, 1>>>(d); cudaMemcpy(h, d, 64, cudaMemcpyDeviceToHost); printf("x[5]=%d\n", h[5]); return 0; }
CU
"$NVCC" k.cu -o ptx80 -gencode 'arch=compute_80,code=[sm_80,compute_80]'
"$NVCC" k.cu -o sm80 -gencode arch=compute_80,code=sm_80
"$NVCC" k.cu -o ptxonly -gencode arch=compute_80,code=compute_80
"$NVCC" k.cu -o nopie -gencode 'arch=compute_80,code=[sm_80,compute_80]' -Xcompiler -no-pie -Xlinker -no-pie
"$NVCC" -shared -Xcompiler -fPIC k.cu -o libptx80.so -gencode 'arch=compute_80,code=[sm_80,compute_80]'
out=$(insp --gpu 80,90 ptx80); st=$?
check "sm_80 + compute_80 program: a program (a PIE), 2 fatbins" contains "$out" "^ptx80: program, 2 fatbins"
check "sm_80 + compute_80 on 9.0: runs by the PTX, the device-link fatbin not counted; exit 0" test $st = 0 -a \
	-n "$(grep '^  sm_90: runs: PTX compute_80 (ISA 9.0), compiled by the driver at load (1 fatbin holds no kernel: not counted)$' <<<"$out")"
out=$(insp --gpu 80,90 sm80); st=$?
check "sm_80-only program on 9.0: does not run (its one fatbin with kernels has no sm_90 code nor PTX); exit 1" \
	test $st = 1 -a -n "$(grep '^  sm_90: does not run: 1 of 1 fatbin has no image for sm_90 (it holds sm_80)' <<<"$out")"
check "sm_80-only program on 8.0: runs" contains "$out" "^  sm_80: runs: machine code sm_80"
out=$(insp --gpu 80,90 ptxonly); st=$?
check "compute_80-only program: runs on 8.0 and 9.0 by the PTX (its device-link fatbin is empty); exit 0" \
	test $st = 0 -a "$(verdicts "$out")" = "sm_80=runs sm_90=runs"
out=$(insp --gpu 90 nopie); st=$?
check "a program linked -no-pie (ET_EXEC): a program, runs on 9.0" test $st = 0 -a -n "$(grep '^nopie: program, ' <<<"$out")"
out=$(insp --gpu 90 libptx80.so); st=$?
check "shared library with compute_80 PTX: a shared object, runs on 9.0" test $st = 0 -a \
	-n "$(grep '^libptx80.so: shared object, ' <<<"$out")" -a "$(verdicts "$out")" = "sm_90=runs"
# Not a regular file: refused at once, not read (a FIFO without a writer would block a read).
mkfifo fifo
start=$(date +%s)
out=$(timeout 10 "$NVSHIM" inspect --gpu 90 fifo 2>&1); st=$?
check "a FIFO: refused at once (exit 2, within 5 s), not waited on" test $st = 2 -a $(($(date +%s) - start)) -le 5
check "a FIFO: says why" contains "$out" "^fifo: file, unreadable: not a regular file"

# --- the installed toolkit's libraries (CUDA 13.0: the verdicts below are that release's).
LIB=$(cd "$(dirname "$(readlink -f "$NVCC")")/../lib64" 2>/dev/null && pwd)
version=$("$NVCC" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
if [ -z "$LIB" ] || [ ! -e "$LIB/libcublas.so.13" ]; then
	skip "toolkit libraries" "no libcublas.so.13 beside $NVCC"
else
	# Every shared library that readelf reads is read: none exits 2, none "does not run" on the
	# GPUs NVIDIA builds them for.
	bad=
	for f in $(find "$LIB/" -maxdepth 1 -type f -name 'lib*.so*' | sort); do
		readelf -S "$f" >/dev/null 2>&1 || continue
		out=$(insp --no-kernels --gpu $GPUS "$f" 2>&1); st=$?
		[ $st = 2 ] && bad="$bad $(basename "$f"):unreadable"
		grep -q ': does not run' <<<"$out" && bad="$bad $(basename "$f"):does-not-run"
	done
	check "every toolkit library readelf reads: read (no exit 2), and none 'does not run' on $GPUS" test -z "$bad"
	if [ "$version" = 13.0 ]; then
		# name, expected verdicts for 80,90,100,120, and why
		while IFS='|' read -r lib want why; do
			[ -e "$LIB/$lib" ] || { skip "$lib: $want" "not installed"; continue; }
			out=$(insp --no-kernels --gpu $GPUS "$LIB/$lib"); st=$?
			check "$lib: $want, exit 0 ($why)" test $st = 0 -a "$(verdicts "$out")" = "$want"
		done <<'T'
libcublasLt.so.13|sm_80=partly sm_90=partly sm_100=partly sm_120=partly|a kernel set per GPU: 2,782 fatbins, each for some targets; it loads its GPU's
libcublas.so.13|sm_80=partly sm_90=partly sm_100=partly sm_120=partly|2 of its 193 fatbins hold grouped CUTLASS kernels for older GPUs only
libcusparse.so.12|sm_80=partly sm_90=partly sm_100=partly sm_120=partly|20 fatbins of per-GPU kernels
libcusolver.so.12|sm_80=partly sm_90=runs sm_100=runs sm_120=runs|one fatbin without sm_80 code
libnccl.so.2|sm_80=partly sm_90=partly sm_100=runs sm_120=partly|4 fatbins of symmetric-memory kernels for the sm_100 family only
libcufft.so.12|sm_80=runs sm_90=runs sm_100=runs sm_120=runs|its one fatbin (sm_75) holds no kernel: there is nothing that cannot run
libcurand.so.10|sm_80=runs sm_90=runs sm_100=runs sm_120=runs|machine code for every GPU in every fatbin
libcudart.so.13|sm_80=runs sm_90=runs sm_100=runs sm_120=runs|no CUDA code
T
		out=$(insp --no-kernels --gpu 90 "$LIB/libcublasLt.so.13")
		check "libcublasLt.so.13 on 9.0: names kernels without code for it, and the fatbins without kernels" contains "$out" \
			"^  sm_90: partly: [0-9]* of [0-9]* fatbins with kernels have no code for sm_90: '[^']*', " \
			"the rest: machine code sm_90 ([0-9]* fatbins hold no kernel: not counted)"
		out=$(insp --no-kernels --gpu 90 "$LIB/libcufft.so.12")
		check "libcufft.so.12: 'no CUDA kernels'" contains "$out" "^  sm_90: runs: no CUDA kernels$"
	else
		skip "toolkit libraries' verdicts" "CUDA $version, not 13.0"
	fi
	# NCCL: its relocatable cubins hold a .nv_debug.shared section whose bytes are not in the
	# image; every kernel is read all the same.
	if [ -e "$LIB/libnccl.so.2" ]; then
		out=$(insp --gpu 90 "$LIB/libnccl.so.2" 2>&1); st=$?
		check "libnccl.so.2 with its kernels: read (not exit 2)" test $st != 2 -a -z "$(grep unreadable <<<"$out")"
		check "libnccl.so.2: its kernels listed" test "$(grep -c '  sm_90 ' <<<"$out")" -gt 100
	fi
	# Stubs need evidence: cuBLASLt's no-op kernels exit at once on every target by design.
	out=$(insp --gpu 90 "$LIB/libcublasLt.so.13" 2>&1)
	check "libcublasLt.so.13: nopClusterDiscoveryTool and nopHardwareDetection are trivial, not stubs" \
		test -n "$(grep -E 'nop(ClusterDiscoveryTool|HardwareDetection)\(\)' <<<"$out")" -a \
		-z "$(grep -E 'nop(ClusterDiscoveryTool|HardwareDetection)\(\).* stub$' <<<"$out")"
	check "libcublasLt.so.13: the stubs said have a body on another target" contains "$out" \
		"stub kernels: compiled out for that target (an #if __CUDA_ARCH__ guard; each has a body on another target)" \
		"trivial kernels: they only exit or only trap on every target here"
fi

# --- a pinned small wheel from the package index: nvJPEG 13.0.1.86 (3.7 MB), machine code for
# sm_75 to sm_121 in each of its 11 fatbins.
WHEEL=nvidia_nvjpeg-13.0.1.86-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl
if [ -n "${INSPECT_CORPUS_WHEELS:-}" ] && [ -e "$INSPECT_CORPUS_WHEELS/$WHEEL" ]; then
	cp "$INSPECT_CORPUS_WHEELS/$WHEEL" .
else
	timeout 120 python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
		-d . nvidia-nvjpeg==13.0.1.86 >/dev/null 2>&1
fi
if [ ! -e "$WHEEL" ]; then
	skip "wheel nvidia-nvjpeg 13.0.1.86" "not in INSPECT_CORPUS_WHEELS and pip could not download it"
else
	out=$(insp --gpu $GPUS "$WHEEL"); st=$?
	check "nvjpeg wheel: its libnvjpeg.so.13 runs on $GPUS (machine code in every fatbin), exit 0" test $st = 0 -a \
		"$(verdicts "$out")" = "sm_80=runs sm_90=runs sm_100=runs sm_120=runs" -a \
		-n "$(grep "^$WHEEL!nvidia/cu13/lib/libnvjpeg.so.13: shared object in a wheel, 11 fatbins" <<<"$out")"
	check "nvjpeg wheel: cub::EmptyKernel (empty by design) is trivial, and nothing is called a stub" test \
		-n "$(grep -E "cub::EmptyKernel<void>\(\) +sm_90 .* trivial$" <<<"$out")" -a -z "$(grep -E '[0-9-]  stub$' <<<"$out")"
fi
finish
