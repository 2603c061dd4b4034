#!/bin/bash
# The toolkit matrix's second full toolkit: the targets, modules and identity suites again, with
# nvcc 13.5 from the Python package index (scripts/fetch-nvcc135.sh: nvidia-cuda-nvcc,
# nvidia-nvvm, nvidia-cuda-runtime and nvidia-cuda-crt merged into one prefix) as the nvcc under
# test: first on PATH and as CUDA_HOME, so that nvshim finds it. Skips when it is not there.
NVSHIM=$1
DIR=${NVSHIM_TOOLKITS:-/var/tmp/nvshim-toolkits}
ROOT=$DIR/13.5/nvidia/cu13
HERE=$(cd "$(dirname "$0")" && pwd)
# The same suites run under the sanitizers with nvcc 13.0; 13.5 adds a toolkit, not nvshim code.
if grep -q '^NVSHIM_SANITIZE:BOOL=ON' "${NVSHIM_BUILD_DIR:-.}/CMakeCache.txt" 2>/dev/null; then
	echo "ok - nvcc 13.5 # SKIP the release build runs it"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi
if [ ! -x "$ROOT/bin/nvcc" ] || ! "$ROOT/bin/nvcc" --version >/dev/null 2>&1; then
	echo "ok - nvcc 13.5 # SKIP no $ROOT/bin/nvcc (scripts/fetch-nvcc135.sh)"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi
export CUDA_HOME=$ROOT CUDA_PATH=$ROOT
echo "# nvcc 13.5: $("$ROOT/bin/nvcc" --version | sed -n 's/.*release \([0-9.]*\), \(V[0-9.]*\).*/\1 (\2)/p') in $ROOT"
# The three run at once (each has its own work directory and caches), printed in this order.
OUT=$(mktemp -d "${TMPDIR:-/tmp}/nvshim-135-XXXXXX")
trap 'rm -rf "$OUT"' EXIT
SUITES=(targets modules identity)
for suite in "${SUITES[@]}"; do
	# (the identity suite samples its option-table lines here, as in the quick run; the modules
	# suite takes the CMake-style list for one family of each rule)
	(E2E_FULL= E2E_SECOND_TOOLKIT=1 bash "$HERE/$suite.sh" "$NVSHIM" "$ROOT/bin/nvcc" >"$OUT/$suite" 2>&1; echo $? >"$OUT/$suite.rc") &
done
wait
status=0
for suite in "${SUITES[@]}"; do
	sed "s/^ok - /ok - nvcc 13.5: $suite: /; s/^not ok - /not ok - nvcc 13.5: $suite: /" "$OUT/$suite"
	[ "$(cat "$OUT/$suite.rc" 2>/dev/null)" = 0 ] || status=1
done
exit $status
