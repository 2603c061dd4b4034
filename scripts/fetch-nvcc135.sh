#!/bin/bash
# Fetches nvcc 13.5 for the toolkit matrix (tests only): the Python package index's
# nvidia-cuda-nvcc, nvidia-nvvm, nvidia-cuda-runtime and nvidia-cuda-crt wheels (pinned),
# installed with pip --target into one prefix, ${NVSHIM_TOOLKITS:-/var/tmp/nvshim-toolkits}/13.5,
# where they merge into nvidia/cu13/ (bin/nvcc, nvvm/, include/, lib/): a full toolkit that
# compiles. Nothing is installed system-wide. Idempotent: a prefix whose nvcc runs is kept.
# Also the CUDA 12.9 runtime's headers (nvidia-cuda-runtime-cu12, which holds cuda.h,
# cuda_runtime_api.h and driver_types.h) in .../cu12-runtime, for scripts/api-coverage.py.
# A failed download leaves the tests that need it to skip; it never fails the setup.
set -uo pipefail
TOOLKITS=${NVSHIM_TOOLKITS:-/var/tmp/nvshim-toolkits}
DEST=$TOOLKITS/13.5
VERSION=13.5.37
NVCC=$DEST/nvidia/cu13/bin/nvcc
CU12=$TOOLKITS/cu12-runtime
if [ ! -f "$CU12/nvidia/cuda_runtime/include/cuda_runtime_api.h" ]; then
	rm -rf "$CU12.tmp.$$"
	if python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$CU12.tmp.$$" \
		nvidia-cuda-runtime-cu12==12.9.79 >/dev/null 2>&1; then
		rm -rf "$CU12"
		mkdir -p "$TOOLKITS"
		mv "$CU12.tmp.$$" "$CU12"
	else
		rm -rf "$CU12.tmp.$$"
		echo "fetch-nvcc135: could not fetch the CUDA 12.9 runtime headers; the coverage check will skip" >&2
	fi
fi
# NVRTC 13.5 alone (nvidia-cuda-nvrtc: libnvrtc.so.13 and its libnvrtc-builtins.so.13.5), in
# .../nvrtc-13.5, for the census's NVRTC builtins cases (tests/e2e/census/nvrtc_builtins*.case).
NVRTC=$TOOLKITS/nvrtc-13.5
if [ ! -f "$NVRTC/nvidia/cu13/lib/libnvrtc-builtins.so.13.5" ]; then
	rm -rf "$NVRTC.tmp.$$"
	if python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$NVRTC.tmp.$$" \
		"nvidia-cuda-nvrtc==$VERSION" >/dev/null 2>&1; then
		rm -rf "$NVRTC"
		mkdir -p "$TOOLKITS"
		mv "$NVRTC.tmp.$$" "$NVRTC"
	else
		rm -rf "$NVRTC.tmp.$$"
		echo "fetch-nvcc135: could not fetch NVRTC $VERSION; the cases that need it will skip" >&2
	fi
fi
if [ -x "$NVCC" ] && "$NVCC" --version 2>/dev/null | grep -q "V$VERSION"; then
	exit 0
fi
tmp=$DEST.tmp.$$
rm -rf "$tmp"
if python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$tmp" \
	"nvidia-cuda-nvcc==$VERSION" "nvidia-nvvm==$VERSION" "nvidia-cuda-runtime==$VERSION" \
	"nvidia-cuda-crt==$VERSION" >/dev/null 2>&1 &&
	[ -x "$tmp/nvidia/cu13/bin/nvcc" ]; then
	rm -rf "$DEST"
	mkdir -p "$(dirname "$DEST")"
	mv "$tmp" "$DEST"
	echo "fetch-nvcc135: nvcc $VERSION in $DEST/nvidia/cu13"
else
	rm -rf "$tmp"
	echo "fetch-nvcc135: could not fetch nvcc $VERSION from the package index; its tests will skip" >&2
fi
exit 0
