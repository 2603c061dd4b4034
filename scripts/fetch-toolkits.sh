#!/bin/bash
# Fetches older nvcc drivers for the multi-toolkit tests: nvcc 11.8 and 12.4 from Debian's
# non-free nvidia-cuda-toolkit packages (pinned), unpacked (not installed) under
# ${NVSHIM_TOOLKITS:-/var/tmp/nvshim-toolkits}/<version>. The Python package index's
# nvidia-cuda-nvcc-cu11/-cu12 wheels carry only ptxas, not nvcc. Without headers (nvidia-cuda-dev
# is 774 MB) these nvcc drivers cannot compile, but --dryrun checks every target option and
# names every image a build would embed, which is what the targets pass changes.
# A failed download leaves the tests that need it to skip; it never fails the setup.
set -uo pipefail
DEST=${NVSHIM_TOOLKITS:-/var/tmp/nvshim-toolkits}
fetch() { # fetch VERSION SUITE PACKAGE-VERSION
	local version=$1 suite=$2 pkgver=$3 tmp
	[ -x "$DEST/$version/usr/lib/nvidia-cuda-toolkit/bin/nvcc" ] && return 0
	tmp=$(mktemp -d)
	mkdir -p "$tmp/lists/partial" "$tmp/dl"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite non-free" >"$tmp/sources.list"
	local o=(-o "Dir::Etc::SourceList=$tmp/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache::archives=$tmp/dl" -o APT::Sandbox::User=root)
	if apt-get "${o[@]}" update -qq >/dev/null 2>&1 &&
		(cd "$tmp/dl" && apt-get "${o[@]}" download -qq "nvidia-cuda-toolkit=$pkgver" >/dev/null 2>&1); then
		mkdir -p "$DEST/$version"
		dpkg -x "$tmp"/dl/nvidia-cuda-toolkit_*.deb "$DEST/$version"
		echo "fetch-toolkits: nvcc $version in $DEST/$version"
	else
		echo "fetch-toolkits: could not fetch nvidia-cuda-toolkit $pkgver from $suite; its tests will skip" >&2
	fi
	rm -rf "$tmp"
}
fetch 11.8 bookworm '11.8.89~11.8.0-5~deb12u1'
fetch 12.4 trixie '12.4.131~12.4.1-2'
exit 0
