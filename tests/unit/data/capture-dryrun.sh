#!/bin/bash
# Regenerates dryrun-<version>-<case>.txt: the steps nvcc prints with --dryrun, which the steps
# module reads (nvcc 13.0 from CUDA_HOME; 11.8 and 12.4 from scripts/fetch-toolkits.sh).
# Usage: bash tests/unit/data/capture-dryrun.sh [OUTDIR]
set -euo pipefail
out=$(cd "${1:-$(dirname "$0")}" && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
old=${NVSHIM_TOOLKITS:-/var/tmp/nvshim-toolkits}
src=/tmp/nvshim-dryrun-src tmp=/tmp/nvshim-dryrun-tmp
rm -rf "$src" "$tmp" && mkdir -p "$src" "$tmp"
trap 'rm -rf "$src" "$tmp"' EXIT
cd "$src"
printf '__global__ void k(float *p) { p[threadIdx.x] = 1; }\n' >k.cu
"$cuda/bin/nvcc" -dc -arch=sm_80 k.cu -o a.o
run() { # run VERSION CASE ARGS...
	local v=$1 name=$2 nvcc=$cuda/bin/nvcc
	shift 2
	[ $v = 13.0 ] || nvcc=$old/$v/usr/lib/nvidia-cuda-toolkit/bin/nvcc
	[ -x "$nvcc" ] || { echo "no nvcc $v; skipped" >&2; return 0; }
	env -i PATH=/usr/bin:/bin TMPDIR="$tmp" "$nvcc" --dryrun "$@" 2>"$out/dryrun-$v-$name.txt" || true
	echo "wrote $out/dryrun-$v-$name.txt"
}
two=(-gencode arch=compute_80,code=sm_80 "-gencode=arch=compute_90,code=[sm_90,compute_90]")
run 13.0 compile -c k.cu "${two[@]}" -o k.o
run 13.0 arch-specific -c k.cu -arch=sm_90a -o k.o
run 13.0 dlink -dlink a.o -arch=sm_80 -o dl.o
run 13.0 link-md k.cu -MD -o app
run 12.4 compile -c k.cu "${two[@]}" -o k.o
run 11.8 compile -c k.cu "${two[@]}" -o k.o
