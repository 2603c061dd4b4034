#!/bin/bash
# Fetches CUDA 12.9's CCCL headers (Thrust, CUB, libcu++ 2.8.2: the package index's
# nvidia-cuda-cccl-cu12==12.9.27, 3 MB) with pip --target into
# ${NVSHIM_TOOLKITS:-/var/tmp/nvshim-toolkits}/cu12-cccl (nvidia/cuda_cccl/include), for
# tests/e2e/migrate.sh: `nvshim migrate`'s output must build with CUDA 12.9's headers too, and
# the compat headers must give what CCCL 2.8 gave. Also the CUDA 12.9 runtime headers
# (scripts/fetch-nvcc135.sh fetches them to .../cu12-runtime). Nothing is installed system-wide.
# Idempotent; a failed download leaves the checks that need it to skip; exit status 0 always.
set -uo pipefail
TOOLKITS=${NVSHIM_TOOLKITS:-/var/tmp/nvshim-toolkits}
fetch() { # fetch DIR FILE PACKAGE==VERSION
	local dest=$TOOLKITS/$1
	[ -f "$dest/$2" ] && return 0
	rm -rf "$dest.tmp.$$"
	if python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$dest.tmp.$$" \
		"$3" >/dev/null 2>&1 && [ -f "$dest.tmp.$$/$2" ]; then
		rm -rf "$dest"
		mkdir -p "$TOOLKITS"
		mv "$dest.tmp.$$" "$dest"
	else
		rm -rf "$dest.tmp.$$"
		echo "fetch-cccl12: could not fetch $3; the checks that need it will skip" >&2
	fi
}
fetch cu12-cccl nvidia/cuda_cccl/include/thrust/version.h nvidia-cuda-cccl-cu12==12.9.27
fetch cu12-runtime nvidia/cuda_runtime/include/cuda_runtime_api.h nvidia-cuda-runtime-cu12==12.9.79
exit 0
