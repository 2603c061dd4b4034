#!/bin/bash
# Fetches what the aarch64 wheel's checks under qemu-user need (tests only, tests/e2e/wheel.sh):
#   - nvcc 13.5 for aarch64: the Python package index's nvidia-cuda-nvcc, nvidia-nvvm,
#     nvidia-cuda-runtime, nvidia-cuda-crt and nvidia-cuda-nvrtc wheels for manylinux2014_aarch64
#     (pinned), unpacked into one prefix, ${NVSHIM_TOOLKITS:-/var/tmp/nvshim-toolkits}/13.5-aarch64,
#     where they merge into nvidia/cu13/ (bin/nvcc, nvvm/, include/, lib/libnvrtc.so.13);
#   - a root for qemu-aarch64-static (QEMU_LD_PREFIX) with Debian 12's glibc, libgcc and
#     libstdc++ for arm64, from Debian's archive (pinned, checked by SHA-256), in .../sysroot-arm64.
# Nothing is installed system-wide. Idempotent. A failed download leaves the checks to skip,
# saying why; it never fails.
set -uo pipefail
TOOLKITS=${NVSHIM_TOOLKITS:-/var/tmp/nvshim-toolkits}
DEST=$TOOLKITS/13.5-aarch64
ROOT=$TOOLKITS/sysroot-arm64
VERSION=13.5.37
DEBIAN=${NVSHIM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
DEBS=(
	"main/g/glibc/libc6_2.36-9+deb12u14_arm64.deb 01f4330719fd4f65580e16ea5a0527f372fca750e8f588d26deaf09f2d3b1cf4"
	"main/g/gcc-12/libgcc-s1_12.2.0-14+deb12u1_arm64.deb 576926b283613db80168ddf76380a3bd877602778cf0d226caa7bfbfa71eacf3"
	"main/g/gcc-12/libstdc++6_12.2.0-14+deb12u1_arm64.deb 26e138c677a985775331373828a6c286c551ff397cb735d00e2383cb273d1cb2"
)
key="${DEBS[*]}"
if [ "$(cat "$ROOT/.debs" 2>/dev/null)" != "$key" ]; then
	tmp=$ROOT.tmp.$$
	rm -rf "$tmp" && mkdir -p "$tmp"
	ok=1
	for d in "${DEBS[@]}"; do
		read -r path sum <<<"$d"
		f=$tmp/$(basename "$path")
		if curl -fsS --retry 2 -o "$f" "$DEBIAN/pool/$path" && echo "$sum  $f" | sha256sum -c --status; then
			dpkg-deb -x "$f" "$tmp" && rm -f "$f" || ok=0
		else
			echo "fetch-aarch64: could not fetch $path from Debian's archive (or its SHA-256 differs)" >&2
			ok=0
		fi
	done
	if [ $ok = 1 ]; then
		echo "$key" >"$tmp/.debs"
		rm -rf "$ROOT" && mv "$tmp" "$ROOT"
		echo "fetch-aarch64: Debian's arm64 glibc, libgcc and libstdc++ in $ROOT"
	else
		rm -rf "$tmp"
	fi
fi
[ -f "$DEST/.version" ] && [ "$(cat "$DEST/.version")" = "$VERSION" ] && exit 0
tmp=$DEST.tmp.$$
rm -rf "$tmp"
if python3 -m pip install --quiet --disable-pip-version-check --no-deps --platform manylinux2014_aarch64 \
	--only-binary=:all: --target "$tmp" "nvidia-cuda-nvcc==$VERSION" "nvidia-nvvm==$VERSION" \
	"nvidia-cuda-runtime==$VERSION" "nvidia-cuda-crt==$VERSION" "nvidia-cuda-nvrtc==$VERSION" >/dev/null 2>&1 &&
	[ -f "$tmp/nvidia/cu13/bin/nvcc" ]; then
	echo "$VERSION" >"$tmp/.version"
	rm -rf "$DEST"
	mkdir -p "$(dirname "$DEST")"
	mv "$tmp" "$DEST"
	echo "fetch-aarch64: nvcc $VERSION for aarch64 in $DEST/nvidia/cu13"
else
	rm -rf "$tmp"
	echo "fetch-aarch64: could not fetch nvcc $VERSION for aarch64 from the package index; its checks will skip" >&2
fi
exit 0
