#!/bin/bash
# The differential matrix (tests/e2e/matrix.py) on a GPU: every pairwise case, where each
# program's kernel now runs, so "prints the same" covers what the kernels computed (or the
# error a launch gets: no kernel image for this GPU), and -arch=native is this machine's GPU.
#   bash tests/gpu/matrix.sh NVSHIM [NVCC]
# MATRIX_ARGS: the cases, --pairs by default; "--all --range 0:1400" runs a share of the whole
# product (each share within one call's 10 minutes on 16 cores).
NVSHIM=$1
NVCC=${2:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
GPUDIR="$(cd "$(dirname "$0")" && pwd)"
. "$GPUDIR/../e2e/lib.sh"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	skip "the differential matrix on a GPU" "no NVIDIA GPU on this machine"
	finish
	exit
fi
NVSHIM=$(cd "$(dirname "$NVSHIM")" && pwd)/$(basename "$NVSHIM")
echo "# GPU: $(nvidia-smi -L | head -1)"
cd "$WORK" || exit 1
python3 "$GPUDIR/../e2e/matrix.py" "$NVSHIM" "$NVCC" ${MATRIX_ARGS:---pairs} --jobs "${MATRIX_JOBS:-$(nproc)}" | tee matrix.out
# the programs' kernels ran: each program case printed a kernel line
[ "$(grep -c '^not ok' matrix.out)" -eq 0 ]
