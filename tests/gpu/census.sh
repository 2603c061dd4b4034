#!/bin/bash
# The census of upgrade breaks on a GPU (tests/e2e/census/*.case): every fixed case whose program
# runs (`exec`) runs on the GPU, built through nvshim and from the hand-fixed source, and prints
# the same (cudaDeviceProp's fields read through the layer against cudaDeviceGetAttribute, a
# Thrust reduction under the C++17 floor, CUB's reduction with cub::Sum, a double4 kernel under
# -D__NV_NO_VECTOR_DEPRECATION_DIAG against double4_16a, ...); a program that finds no GPU fails.
#   bash tests/gpu/census.sh NVSHIM [NVCC]
NVSHIM=$1
NVCC=${2:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
. "$(dirname "$0")/../e2e/lib.sh"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	skip "census on a GPU" "no NVIDIA GPU on this machine"
	finish
	exit
fi
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
export TMPDIR=$WORK NVSHIM_CENSUS_GPU=1
ids=$(grep -l '^exec:' "$ROOT"/tests/e2e/census/*.case | xargs -n1 basename | sed 's/\.case$//')
# shellcheck disable=SC2086
python3 "$ROOT/tests/e2e/census.py" "$NVSHIM" "$NVCC" $ids
