#!/bin/bash
# nvshim from the Python package index (pyproject.toml, docs/packaging.md): the sdist and the
# wheel that scikit-build-core builds from this checkout, the wheel tagged by auditwheel, each
# installed into a fresh venv with no build tree of the project on any path. In each: nvshim on
# the venv's PATH is the native executable, its nvcc compiles examples/saxpy.cu, `nvshim run`
# puts the preload library under an NVRTC client, `nvshim doctor` is clean, `python -m nvshim`
# and `nvshim.env()` work, a setuptools CUDA extension builds through nvshim (`nvshim run -- pip
# install`, `eval "$(nvshim env)"`), and `pip uninstall` leaves the venv as it was.
# The release files are scripts/build-wheels.sh's: the sdist, and the manylinux2014 wheels for
# x86_64 and aarch64 built from it with zig's C compiler, with its checks (ELF machine and glibc
# symbol versions, auditwheel show, twine check). The x86_64 wheel is installed here and the
# release suites WHEEL_SUITES (default: commands inspect) run against its installed
# nvshim; the aarch64 one runs under qemu-user (Debian's qemu-user-static) with the package
# index's aarch64 nvcc and NVRTC (scripts/fetch-aarch64.sh), skipped, saying why, without them.
# The tools come from the index, pinned; without the index the suite skips.
#   bash tests/e2e/wheel.sh NVSHIM NVCC
NVSHIM=$1 NVCC=$2
SRC=${NVSHIM_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$(dirname "$0")/lib.sh"
PY=${WHEEL_TEST_PYTHON:-python3}
CUDA=$(cd "$(dirname "$NVCC")/.." && pwd)
VERSION=$(sed -n 's/^project(nvshim VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
SUITES=${WHEEL_SUITES:-commands inspect}
SETUPTOOLS=setuptools==75.8.0
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PIP_NO_INPUT=1
cd "$WORK" || exit 1

secs() { echo $(($(date +%s) - $1)); }
if ! "$PY" -m venv "$WORK/probe" >/dev/null 2>&1; then
	skip "the Python package index's nvshim" "$PY has no venv module"
	finish
	exit
fi

# --- the release files: scripts/build-wheels.sh, its checks repeated here
t0=$(date +%s)
DIST=$WORK/dist bash "$SRC/scripts/build-wheels.sh" >"$WORK/build.log" 2>&1
st=$?
if grep -q 'cannot install the tools\|cannot fetch' "$WORK/build.log"; then
	skip "the Python package index's nvshim" "scripts/build-wheels.sh cannot fetch its tools or sources (offline?): $(grep 'build-wheels:' "$WORK/build.log" | tail -1)"
	finish
	exit
fi
while IFS= read -r line; do
	case $line in
	"ok - "*) ok "build-wheels.sh: ${line#ok - }" ;;
	"not ok - "*) not_ok "build-wheels.sh: ${line#not ok - }" ;;
	"# "*) echo "$line" ;;
	esac
done <"$WORK/build.log"
SDIST=$WORK/dist/nvshim_cuda-$VERSION.tar.gz
WHEEL=$(ls "$WORK/dist/nvshim_cuda-$VERSION-py3-none-manylinux2014_x86_64."*.whl 2>/dev/null | head -1)
AWHEEL=$(ls "$WORK/dist/nvshim_cuda-$VERSION-py3-none-manylinux2014_aarch64."*.whl 2>/dev/null | head -1)
check "scripts/build-wheels.sh: the sdist and the manylinux2014 wheels for x86_64 and aarch64 ($(secs "$t0") s)" \
	test $st -eq 0 -a -s "$SDIST" -a -s "$WHEEL" -a -s "$AWHEEL"
[ -s "$SDIST" ] && [ -s "$WHEEL" ] || { tail -30 "$WORK/build.log"; finish; exit; }
check "the sdist holds the CMake project, the Python package and the pinned copies of libiberty and inih, not a build tree" \
	test -z "$(tar tzf "$SDIST" | grep -E '^nvshim_cuda-[^/]*/(build[^/]*|_install|dist)/')" -a \
	-n "$(tar tzf "$SDIST" | grep -x "nvshim_cuda-$VERSION/CMakeLists.txt")" -a \
	-n "$(tar tzf "$SDIST" | grep -x "nvshim_cuda-$VERSION/python/nvshim/__init__.py")" -a \
	-n "$(tar tzf "$SDIST" | grep -x "nvshim_cuda-$VERSION/third_party/libiberty/COPYING.LIB")" -a \
	-n "$(tar tzf "$SDIST" | grep -x "nvshim_cuda-$VERSION/third_party/inih/ini.c")"

# --- the x86_64 wheel's files: glibc and the loader only, no CUDA library
mkdir -p "$WORK/raw" && (cd "$WORK/raw" && "$PY" -m zipfile -e "$WHEEL" .)
D="$WORK/raw/nvshim_cuda-$VERSION.data/data"
check "the wheel holds cmake --install's tree under its data directory" test -f "$D/bin/nvshim" -a -f "$D/libexec/nvshim/bin/nvcc" \
	-a -f "$D/libexec/nvshim/libnvshim-preload.so" -a -f "$D/etc/nvshim.ini" -a -f "$D/share/man/man1/nvshim.1"
needed=$(for f in $(find "$WORK/raw" -type f); do
	[ "$(head -c4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] && readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
done | sort -u | tr '\n' ' ')
check "every ELF file of the wheel needs glibc and the loader only, no CUDA library ($needed)" \
	test -z "$(tr ' ' '\n' <<<"$needed" | grep -v -e '^$' -e '^libc\.so\.6$' -e '^libdl\.so\.2$' -e '^libpthread\.so\.0$' -e '^ld-linux-x86-64\.so\.2$')"
check "bin/nvshim is one static executable (musl), as the CMake build's is (glibc)" test -z "$(readelf -d "$D/bin/nvshim" 2>/dev/null | grep NEEDED)" -a \
	-z "$(readelf -l "$D/bin/nvshim" | grep INTERP)"
check "its seven other names are copies of it" test "$(cd "$D" && md5sum bin/nvshim libexec/nvshim/bin/nvcc libexec/nvshim/cc/* | awk '{print $1}' | sort -u | wc -l)" = 1
check "the preload library exports the functions it intercepts only, as the CMake build's does" \
	cmp -s <(nm -D --defined-only "$D/libexec/nvshim/libnvshim-preload.so" | awk '{print $3}' | sort) \
	<(nm -D --defined-only "$(dirname "$NVSHIM")/libexec/nvshim/libnvshim-preload.so" | awk '{print $3}' | sort)
echo "# wheel $(stat -c %s "$WHEEL") bytes, $("$PY" -m zipfile -l "$WHEEL" | tail -n +2 | wc -l) files; sdist $(stat -c %s "$SDIST") bytes"

# in_venv V CMD...: CMD with the venv's bin/ and the toolkit's on PATH, nothing of the project's.
in_venv() {
	local v=$1
	shift
	env -i HOME="$HOME" XDG_CACHE_HOME="$XDG_CACHE_HOME" XDG_CONFIG_HOME="$XDG_CONFIG_HOME" LC_ALL=C \
		PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PIP_NO_INPUT=1 TMPDIR="${TMPDIR:-/tmp}" \
		PATH="$v/bin:$CUDA/bin:/usr/bin:/bin" "$@"
}

# A setuptools CUDA extension (as PyTorch's extension builder works: .cu through $PYTORCH_NVCC,
# else $CUDA_HOME/bin/nvcc), asked for sm_50, which nvcc 13 no longer accepts, and sm_80.
mkdir -p "$WORK/ext"
cat >"$WORK/ext/kernels.cu" <<'EOF'
__global__ void twice(float *x) { x[threadIdx.x] *= 2.0f; }
static const int archs[] = { __CUDA_ARCH_LIST__ };
extern "C" int nvshim_ext_archs(int *out, int max)
{
	int n = (int)(sizeof(archs) / sizeof(archs[0]));
	for (int i = 0; i < n && i < max; i++)
		out[i] = archs[i];
	return n;
}
EOF
cat >"$WORK/ext/ext.c" <<'EOF'
#define PY_SSIZE_T_CLEAN
#include <Python.h>
int nvshim_ext_archs(int *out, int max);
static PyObject *archs(PyObject *self, PyObject *unused)
{
	int v[64], n = nvshim_ext_archs(v, 64);
	PyObject *list = PyList_New(n);
	for (int i = 0; i < n; i++)
		PyList_SET_ITEM(list, i, PyLong_FromLong(v[i]));
	return list;
}
static PyMethodDef methods[] = { { "archs", archs, METH_NOARGS, "the CUDA targets built" }, { 0 } };
static struct PyModuleDef module = { PyModuleDef_HEAD_INIT, "nvshim_ext", NULL, -1, methods };
PyMODINIT_FUNC PyInit_nvshim_ext(void) { return PyModule_Create(&module); }
EOF
cat >"$WORK/ext/setup.py" <<'EOF'
import os
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

CUDA_HOME = os.environ.get("CUDA_HOME", "/usr/local/cuda")


class CudaBuildExt(build_ext):
    def build_extension(self, ext):
        nvcc = os.environ.get("PYTORCH_NVCC", os.path.join(CUDA_HOME, "bin", "nvcc"))
        os.makedirs(self.build_temp, exist_ok=True)
        for src in [s for s in ext.sources if s.endswith(".cu")]:
            obj = os.path.join(self.build_temp, os.path.basename(src) + ".o")
            subprocess.check_call([nvcc, "-c", src, "-o", obj, "-Xcompiler", "-fPIC",
                                   "-gencode", "arch=compute_50,code=sm_50",
                                   "-gencode", "arch=compute_80,code=sm_80"])
            ext.extra_objects.append(obj)
        ext.sources = [s for s in ext.sources if not s.endswith(".cu")]
        super().build_extension(ext)


setup(name="nvshim_ext", version="1.0",
      ext_modules=[Extension("nvshim_ext", ["ext.c", "kernels.cu"],
                             library_dirs=[os.path.join(CUDA_HOME, "lib64")],
                             libraries=["cudart_static", "stdc++", "dl", "rt", "pthread"])],
      cmdclass={"build_ext": CudaBuildExt})
EOF
printf '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n' >"$WORK/ext/pyproject.toml"
# An NVRTC client: tests/preload/rtc_compile.c, NVRTC found at run time.
have_rtc=0
cc -o "$WORK/rtc" "$SRC/tests/preload/rtc_compile.c" -I"$CUDA/include" -L"$CUDA/lib64" -lnvrtc -ldl -lpthread \
	-Wl,-rpath,"$CUDA/lib64" 2>"$WORK/rtc.err" && have_rtc=1

# check_venv KIND V: the installed nvshim of venv V (installed from KIND: wheel or sdist).
check_venv() {
	local kind=$1 v=$2 out st exe
	exe=$(in_venv "$v" sh -c 'command -v nvshim')
	check "$kind: nvshim on the venv's PATH is the native executable" test "$exe" = "$v/bin/nvshim" -a \
		"$(head -c4 "$v/bin/nvshim" | od -An -c | tr -d ' ')" = '177ELF'
	check "$kind: ldd: the executables and libraries need nothing outside glibc" sh -c \
		"! ldd '$v/bin/nvshim' '$v/libexec/nvshim/nvshim-devices' '$v/libexec/nvshim/libnvshim-preload.so' '$v/libexec/nvshim/libnvshim-gate.so' 2>&1 |
		grep -v -e '^/' -e 'linux-vdso' -e 'libc\.so\.6' -e 'libdl\.so\.2' -e 'libpthread\.so\.0' -e 'ld-linux-x86-64' -e 'not a dynamic executable' -e 'statically linked'"
	out=$(in_venv "$v" nvshim --version 2>&1)
	check "$kind: nvshim --version: nvshim's version, nvcc's banner, the nvcc it runs" contains "$out" \
		"^nvshim $VERSION, a stand-in for nvcc" '^nvcc: NVIDIA (R) Cuda compiler driver$' "^nvshim runs $CUDA/bin/nvcc"
	check "$kind: python -m nvshim --version is the same" test "$(in_venv "$v" "$v/bin/python" -m nvshim --version 2>&1)" = "$out"
	check "$kind: nvshim --help is nvshim's" contains "$(in_venv "$v" nvshim --help)" "^nvshim $VERSION: a transparent stand-in" "man nvshim" \
		"The manual: $v/share/doc/nvshim/README.md"
	check "$kind: the venv's nvcc gives nvcc's --help, byte for byte" cmp -s <(in_venv "$v" "$v/libexec/nvshim/bin/nvcc" --help) <("$NVCC" --help)
	check "$kind: the installed defaults are read from the venv" contains "$(in_venv "$v" nvshim config)" "^#  *$v/etc/nvshim.ini (install)"
	out=$(in_venv "$v" nvshim env)
	check "$kind: nvshim env names the venv's nvcc" contains "$out" "^PATH=$v/libexec/nvshim/bin:" \
		"^CUDACXX=$v/libexec/nvshim/bin/nvcc; export CUDACXX$" "^CUDA_HOME="
	check "$kind: nvshim env --shell=fish" contains "$(in_venv "$v" nvshim env --shell=fish)" \
		"^set -gx PATH '$v/libexec/nvshim/bin' " "^set -gx CUDACXX '$v/libexec/nvshim/bin/nvcc';$"
	out=$(in_venv "$v" "$v/bin/python" -c 'import nvshim, sys; e = nvshim.env({"PATH": sys.argv[1]}); print(e["CUDACXX"], e["PATH"].split(":")[0], nvshim.executable())' "$v/bin:$CUDA/bin:/usr/bin:/bin")
	check "$kind: nvshim.env() for subprocess" test "$out" = "$v/libexec/nvshim/bin/nvcc $v/libexec/nvshim/bin $v/bin/nvshim"
	cp "$SRC/examples/saxpy.cu" "$WORK/saxpy.cu"
	out=$(cd "$WORK" && in_venv "$v" bash -c 'eval "$(nvshim env)" && command -v nvcc &&
		NVSHIM_LOG_FILE=$PWD/saxpy.log nvcc -arch=sm_80 saxpy.cu -o saxpy-'"$kind"' && nvshim doctor' 2>&1)
	st=$?
	# the real nvcc ran, by the name PATH gives it (docs/build-systems.md#what-a-build-leaves)
	tool=$(sed -n 's/.*"tool":"\([^"]*\)".*/\1/p' "$WORK/saxpy.log" 2>/dev/null | head -1)
	check "$kind: examples/saxpy.cu compiles through the venv's nvcc" test $st -eq 0 -a -x "$WORK/saxpy-$kind" -a \
		"$(head -1 <<<"$out")" = "$v/libexec/nvshim/bin/nvcc" -a -n "$tool" -a "$(realpath "${tool:-/nonexistent}" 2>/dev/null)" = "$(realpath "$NVCC")"
	check "$kind: nvshim doctor is clean" contains "$out" "^nvshim *: $v/bin/nvshim $VERSION" "^no problems found"
	rm -f "$WORK/saxpy.log"
	if [ $have_rtc = 1 ]; then
		out=$(cd "$WORK" && in_venv "$v" env NVSHIM_DEVICES=90 nvshim run -- ./rtc "$SRC/tests/preload/wmma_bf16.cu" -I"$CUDA/include" 2>/dev/null)
		check "$kind: nvshim run: the venv's preload library fixes an NVRTC compile" contains "$out" "^result 0" "^target sm_90$" '\[nvrtc.no_arch\]'
	else
		skip "$kind: nvshim run with an NVRTC client" "cannot build tests/preload/rtc_compile.c: $(head -1 "$WORK/rtc.err")"
	fi
	if command -v man >/dev/null; then
		check "$kind: man nvshim finds the venv's page" test "$(in_venv "$v" env -u MANPATH man -w nvshim 2>/dev/null)" = "$v/share/man/man1/nvshim.1"
	fi
}

# fresh_venv V: a new venv with the pinned setuptools (for --no-build-isolation), and its file list.
fresh_venv() {
	"$PY" -m venv "$1" && in_venv "$1" pip install -q "$SETUPTOOLS" >"$1.setup.log" 2>&1 &&
		(cd "$1" && find . | sort >"$1.before")
}
# uninstalled KIND V: pip uninstall took every file and link it installed from venv V. The
# directories that held no file of the wheel directly (libexec/, share/, share/doc/, share/man/)
# stay, empty: pip removes a directory only with the files it held.
uninstalled() {
	local kind=$1 v=$2 left
	left=$(comm -13 "$v.before" <(cd "$v" && find . | sort))
	check "$kind: pip uninstall takes every file it installed" test -z "$(cd "$v" && for f in $left; do [ -d "$f" ] || echo "$f"; done)"
	check "$kind: what stays is empty directories only ($(echo $left))" test -z "$(cd "$v" && for f in $left; do [ -d "$f" ] && [ -n "$(find "$f" ! -type d)" ] && echo "$f"; done)"
}

# --- the wheel
V=$WORK/venv-wheel
fresh_venv "$V" || { not_ok "a fresh venv" "$(tail -2 "$V.setup.log")"; finish; exit; }
t0=$(date +%s)
sleep 1
touch "$WORK/installing"
in_venv "$V" pip install -q "$WHEEL" >"$WORK/install-wheel.log" 2>&1
check "pip install the wheel into a fresh venv ($(secs "$t0") s)" test $? -eq 0
check "nothing written outside the venv at install time (in HOME, or the toolkit)" \
	test -z "$(find "$HOME" "$CUDA/" -newer "$WORK/installing" 2>/dev/null | head -3)"
check_venv wheel "$V"
# The release suites against the wheel's installed nvshim (WHEEL_SUITES; docs/packaging.md).
for suite in $SUITES; do
	t0=$(date +%s)
	(unset NVSHIM_BUILD_DIR; bash "$SRC/tests/e2e/$suite.sh" "$V/bin/nvshim" "$NVCC") >"$WORK/suite-$suite.log" 2>&1
	st=$?
	check "wheel: tests/e2e/$suite.sh against the installed nvshim: $(grep -E '^[0-9]+ passed, [0-9]+ failed' "$WORK/suite-$suite.log" | tail -1) ($(secs "$t0") s)" test $st -eq 0
	[ $st -eq 0 ] || grep '^not ok' "$WORK/suite-$suite.log" | head -5
done
# The extension flow, one line: nvshim run -- pip install --no-build-isolation.
out=$(cd "$WORK" && in_venv "$V" env NVSHIM_LOG_FILE="$WORK/ext.log" nvshim run -- pip install -q --no-build-isolation ./ext 2>&1)
check "wheel: nvshim run -- pip install --no-build-isolation builds the CUDA extension" test $? -eq 0
check "wheel: its compile went through nvshim, which dropped sm_50" test -n "$(grep -F 'dropped sm_50: not supported by nvcc' "$WORK/ext.log" 2>/dev/null)"
out=$(cd / && in_venv "$V" "$V/bin/python" -c 'import nvshim_ext; print(nvshim_ext.archs())' 2>&1)
check "wheel: the extension imports, built for sm_80 ($out)" test "$out" = "[800]"
in_venv "$V" pip uninstall -q -y nvshim_ext nvshim-cuda >"$WORK/uninstall-wheel.log" 2>&1
uninstalled wheel "$V"

# --- the sdist: pip builds it (its own isolated build environment, the backend from the index)
V=$WORK/venv-sdist
fresh_venv "$V" || { not_ok "a fresh venv" "$(tail -2 "$V.setup.log")"; finish; exit; }
t0=$(date +%s)
# libiberty and inih from the sdist's own copies (third_party/), as where the system has none.
in_venv "$V" pip install -q --config-settings=cmake.define.NVSHIM_BUNDLED_DEPS=ON "$SDIST" >"$WORK/install-sdist.log" 2>&1
st=$?
check "pip install the sdist into a fresh venv, libiberty and inih from its copies ($(secs "$t0") s, the C build included)" test $st -eq 0
[ $st -eq 0 ] || tail -20 "$WORK/install-sdist.log"
check_venv sdist "$V"
# The extension flow through the environment: eval "$(nvshim env)", then the usual pip install.
out=$(cd "$WORK" && in_venv "$V" bash -c 'eval "$(nvshim env)" && NVSHIM_LOG_FILE='"$WORK/ext2.log"' pip install -q --no-build-isolation ./ext' 2>&1)
check "sdist: eval \"\$(nvshim env)\", then pip install builds the CUDA extension" test $? -eq 0 -a -n "$(grep -F 'dropped sm_50: not supported by nvcc' "$WORK/ext2.log" 2>/dev/null)"
in_venv "$V" pip uninstall -q -y nvshim_ext nvshim-cuda >"$WORK/uninstall-sdist.log" 2>&1
uninstalled sdist "$V"

# --- the aarch64 wheel under qemu-user: its nvshim with the package index's aarch64 nvcc, its
# preload library in an aarch64 NVRTC client. qemu runs one program; without binfmt_misc a
# program it runs cannot start another aarch64 program, so the toolkit's programs are reached
# through a view of the toolkit whose bin/ has a script per program that starts it under qemu
# (nvcc's own stages, started by the emulated nvcc, are not: --dryrun and -E need none).
QEMU=$(command -v qemu-aarch64-static || command -v qemu-aarch64)
TK=${NVSHIM_TOOLKITS:-/var/tmp/nvshim-toolkits}
A64=$TK/13.5-aarch64/nvidia/cu13
ROOT=$TK/sysroot-arm64
if [ -z "$AWHEEL" ]; then
	skip "aarch64 under qemu" "no aarch64 wheel"
elif [ -z "$QEMU" ]; then
	skip "aarch64 under qemu" "no qemu-aarch64-static (Debian's qemu-user-static; scripts/install-deps.sh)"
elif [ ! -f "$A64/bin/nvcc" ] || [ ! -f "$ROOT/lib/ld-linux-aarch64.so.1" ]; then
	skip "aarch64 under qemu" "no aarch64 nvcc or glibc in $TK (scripts/fetch-aarch64.sh could not fetch them)"
else
	export QEMU_LD_PREFIX=$ROOT
	P=$WORK/a64
	mkdir -p "$P/whl" && (cd "$P/whl" && "$PY" -m zipfile -e "$AWHEEL" .)
	mv "$P/whl/nvshim_cuda-$VERSION.data/data" "$P/prefix"
	chmod +x "$P/prefix/bin/nvshim" "$P/prefix/libexec/nvshim/bin/nvcc" "$P/prefix/libexec/nvshim/nvshim-devices"
	# The toolkit view: links to the toolkit's folders, bin/ with one script per program.
	V64=$P/cuda
	mkdir -p "$V64/bin"
	for d in "$A64"/*; do [ "$(basename "$d")" = bin ] || ln -s "$d" "$V64/"; done
	for f in "$A64"/bin/*; do
		if [ -f "$f" ] && [ "$(head -c4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ]; then
			printf '#!/bin/sh\nexec %s %s "$@"\n' "$QEMU" "$f" >"$V64/bin/$(basename "$f")"
			chmod +x "$V64/bin/$(basename "$f")"
		else
			ln -s "$f" "$V64/bin/"
		fi
	done
	# The view is the toolkit: CUDA_HOME (which nvshim asks before PATH) and PATH name it.
	# nvshim-devices, an aarch64 program, cannot be started from the emulated nvshim: no GPUs.
	a64() { env -u CUDA_PATH NVSHIM_DEVICES= CUDA_HOME="$V64" PATH="$V64/bin:/usr/bin:/bin" "$QEMU" "$@"; }
	host() { env -u CUDA_PATH CUDA_HOME="$V64" PATH="$V64/bin:/usr/bin:/bin" "$@"; }
	out=$(a64 "$P/prefix/bin/nvshim" --version 2>&1)
	check "aarch64: nvshim --version under qemu: its version, the aarch64 nvcc's banner" contains "$out" \
		"^nvshim $VERSION, a stand-in for nvcc" 'release 13.5, V13.5' "^nvshim runs $V64/bin/nvcc"
	check "aarch64: nvshim --help" contains "$(a64 "$P/prefix/bin/nvshim" --help 2>&1)" "^nvshim $VERSION: a transparent stand-in"
	printf '__global__ void k(float *x) { x[threadIdx.x] *= 2.0f; }\n' >"$P/k.cu"
	G=(-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90)
	(cd "$P" && a64 "$P/prefix/libexec/nvshim/bin/nvcc" --dryrun -c k.cu "${G[@]}" >shim.out 2>shim.err)
	(cd "$P" && host nvcc --dryrun -c k.cu "${G[@]}" >nvcc.out 2>nvcc.err)
	check "aarch64: identity: --dryrun through nvshim is nvcc's, byte for byte" \
		cmp -s <(normalise "$P/shim.out" "$P/shim.err") <(normalise "$P/nvcc.out" "$P/nvcc.err")
	(cd "$P" && a64 "$P/prefix/libexec/nvshim/bin/nvcc" -E k.cu -o shim.ii 2>shim-e.err)
	(cd "$P" && host nvcc -E k.cu -o nvcc.ii 2>nvcc-e.err)
	check "aarch64: identity: -E through nvshim is nvcc's, byte for byte" \
		test -s "$P/nvcc.ii" -a -z "$(cmp "$P/shim.ii" "$P/nvcc.ii" 2>&1)" -a -z "$(cmp "$P/shim-e.err" "$P/nvcc-e.err" 2>&1)"
	out=$(cd "$P" && a64 "$P/prefix/libexec/nvshim/bin/nvcc" --dryrun -c k.cu -gencode arch=compute_70,code=sm_70 "${G[@]}" 2>&1)
	check "aarch64: targets: sm_70 dropped for nvcc 13.5, sm_80 and sm_90 kept (--dryrun)" contains "$out" \
		'dropped sm_70: not supported by nvcc 13.5' 'cicc.* -arch compute_80 ' 'cicc.* -arch compute_90 '
	check "aarch64: targets: the --dryrun lines name no sm_70" test -z "$(grep -v 'nvshim' <<<"$out" | grep -e 'compute_70' -e 'sm_70')"
	# inspect: a cubin from the aarch64 ptxas, and an aarch64 host object that carries it in a fatbin.
	printf '.version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n\tret;\n}\n' >"$P/k.ptx"
	ZCC=${NVSHIM_WHEEL_CACHE:-/var/tmp/nvshim-wheels}/bin/aarch64-linux-gnu.2.17-cc
	(cd "$P" && a64 "$A64/bin/ptxas" -arch=sm_80 k.ptx -o k.cubin &&
		a64 "$A64/bin/fatbinary" --64 --create=k.fatbin --image3=kind=elf,sm=80,file=k.cubin &&
		printf '.section .nv_fatbin,"a"\n.balign 8\n.incbin "k.fatbin"\n' >fb.s &&
		printf 'int add(int a, int b) { return a + b; }\n' >host.c &&
		"$ZCC" -c fb.s -o fb.o && "$ZCC" -c host.c -o h.o && "$ZCC" -r h.o fb.o -o host.o) >"$P/inspect-setup.log" 2>&1
	out=$(cd "$P" && a64 "$P/prefix/bin/nvshim" inspect --gpu=sm_80 k.cubin 2>&1)
	check "aarch64: nvshim inspect of a cubin from the aarch64 ptxas" contains "$out" '^k.cubin: cubin, 1 fatbin' 'images: sm_80' 'runs'
	out=$(cd "$P" && a64 "$P/prefix/bin/nvshim" inspect --gpu=sm_80 host.o 2>&1)
	check "aarch64: nvshim inspect of an aarch64 host object with a fatbin ($(readelf -h "$P/host.o" 2>/dev/null | sed -n 's/.*Machine: *//p'))" \
		contains "$out" '^host.o: object, 1 fatbin' 'images: sm_80' 'sm_80: runs'
	# The preload library in an aarch64 program that calls NVRTC (tests/preload/rtc_compile.c).
	if "$ZCC" -D_GNU_SOURCE -O1 -o "$P/rtc" "$SRC/tests/preload/rtc_compile.c" -I"$A64/include" -ldl -lpthread 2>"$P/rtc.err"; then
		out=$(cd "$P" && env LD_LIBRARY_PATH="$A64/lib" NVSHIM_DEVICES=90 LD_PRELOAD="$P/prefix/libexec/nvshim/libnvshim-preload.so" \
			"$QEMU" ./rtc "$SRC/tests/preload/wmma_bf16.cu" -I"$A64/include" 2>/dev/null)
		check "aarch64: the preload library fixes an NVRTC compile in an aarch64 program" contains "$out" "^result 0" "^target sm_90$" '\[nvrtc.no_arch\]'
		out=$(cd "$P" && env LD_LIBRARY_PATH="$A64/lib" "$QEMU" ./rtc "$SRC/tests/preload/wmma_bf16.cu" -I"$A64/include" 2>/dev/null)
		check "aarch64: without it, the same compile fails" contains "$out" "^result 6"
	else
		not_ok "aarch64: an aarch64 NVRTC client" "$(head -3 "$P/rtc.err")"
	fi
	unset QEMU_LD_PREFIX
fi
finish
