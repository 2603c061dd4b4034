#!/bin/bash
# What a build leaves is the user's (docs/build-systems.md#what-a-build-leaves): four projects of
# the CUDA 12 era, each with its own build files, built after `eval "$(nvshim env)"` alone:
#   - a Makefile that takes everything from $(CUDA_HOME) (nvcc, -I, -L, -Xlinker -rpath) and
#     compiles its host .cpp with a hard-coded g++ (cuCtxCreate's CUDA 12 form);
#   - a CMake 3.25 C++ project with find_package(CUDAToolkit), CUDA::cudart and CUDA::cupti
#     (cudaDeviceProp::clockRate, removed in 13.0);
#   - a Meson project (colours on: b_colorout=always) with dependency('cuda') and the same
#     source;
#   - a configure script and Makefile for a C program calling the driver API (cuCtxCreate);
#   - a setuptools C++ extension taking its directories from CUDA_HOME, as PyTorch's builder does.
# Each fails plainly on CUDA 13.0 and builds through nvshim; nothing it wrote names nvshim's
# cache or install (readelf -d, strings, CMakeCache.txt, build.ninja's outputs); with nvshim's
# cache removed after the build, every program still loads and runs.
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"
BUILD=${NVSHIM_BUILD_DIR:-$(dirname "$NVSHIM")}
CACHE="$XDG_CACHE_HOME/nvshim"
REAL_ROOT=$(cd "$(dirname "$NVCC")/.." && pwd -P)
P="$WORK/projects"
mkdir -p "$P"

# ---- the sources ----
cat >"$P/host_ctx.h" <<'EOF'
#include <stdio.h>
#include <cuda.h>
/* CUDA 12's cuCtxCreate(ctx, flags, dev) */
static int make_context(void)
{
	CUcontext ctx;
	if (cuInit(0) != CUDA_SUCCESS) {
		printf("loaded; no GPU driver here\n");
		return 0;
	}
	CUresult r = cuCtxCreate(&ctx, 0, 0);
	printf("context: %d\n", (int)r);
	return 0;
}
EOF
cat >"$P/clock.cpp" <<'EOF'
#include <cstdio>
#include <cuda_runtime.h>
int main()
{
	cudaDeviceProp p = {};
	if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) {
		std::printf("loaded; no GPU here\n");
		return 0;
	}
	std::printf("clock %d kHz\n", p.clockRate);
	return 0;
}
EOF

# 1. Make: a gpu-burn-like Makefile
mkdir -p "$P/make"
cp "$P/host_ctx.h" "$P/make/"
cat >"$P/make/main.cpp" <<'EOF'
#include "host_ctx.h"
extern void launch();
int main() { launch(); return make_context(); }
EOF
cat >"$P/make/k.cu" <<'EOF'
#include <cstdio>
__global__ void k() {}
void launch() { k<<<1, 1>>>(); cudaDeviceSynchronize(); }
EOF
cat >"$P/make/Makefile" <<'EOF'
CUDAPATH ?= $(CUDA_HOME)
NVCC = $(CUDAPATH)/bin/nvcc
CXX = g++
app: main.o k.o
	$(CXX) -o app main.o k.o -L$(CUDAPATH)/lib64 -Xlinker -rpath=$(CUDAPATH)/lib64 -lcuda -lcudart
main.o: main.cpp
	$(CXX) -O2 -g -I$(CUDAPATH)/include -c main.cpp -o main.o
k.o: k.cu
	$(NVCC) -g -arch=sm_80 -I$(CUDAPATH)/include -c k.cu -o k.o
EOF

# 2. CMake: FindCUDAToolkit, CUDA::cudart and CUDA::cupti, a C++ target only
mkdir -p "$P/cmake"
cp "$P/clock.cpp" "$P/cmake/"
cat >"$P/cmake/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.18)
project(clocks CXX)
find_package(CUDAToolkit REQUIRED)
add_executable(clock clock.cpp)
target_link_libraries(clock PRIVATE CUDA::cudart CUDA::cupti)
EOF

# 3. Meson, colours on
mkdir -p "$P/meson"
cp "$P/clock.cpp" "$P/meson/"
cat >"$P/meson/meson.build" <<'EOF'
project('clocks', 'cpp', default_options: ['b_colorout=always'])
cuda = dependency('cuda', modules: ['cudart'])
executable('clock', 'clock.cpp', dependencies: cuda)
EOF

# 4. configure + make, a C program on the driver API
mkdir -p "$P/conf"
cp "$P/host_ctx.h" "$P/conf/"
cat >"$P/conf/ctx.c" <<'EOF'
#include "host_ctx.h"
int main(void) { return make_context(); }
EOF
cat >"$P/conf/configure" <<'EOF'
#!/bin/sh
# what an autoconf script checks: the C compiler works, cuda.h is found, -lcuda links
CC=${CC:-cc}
CUDA=${CUDA_PATH:-/usr/local/cuda}
printf 'checking whether the C compiler works... '
echo 'int main(void) { return 0; }' >conftest.c
$CC conftest.c -o conftest >config.log 2>&1 && ./conftest || { echo no; exit 1; }
echo yes
printf 'checking for cuda.h... '
echo '#include <cuda.h>
int main(void) { return 0; }' >conftest.c
$CC -I"$CUDA/include" -c conftest.c -o conftest.o >>config.log 2>&1 || { echo no; exit 1; }
echo yes
rm -f conftest conftest.c conftest.o
cat >Makefile <<MK
CC = $CC
CFLAGS = -g -I$CUDA/include
LDFLAGS = -L$CUDA/lib64 -Wl,-rpath,$CUDA/lib64
ctx: ctx.c host_ctx.h
	\$(CC) \$(CFLAGS) ctx.c -o ctx \$(LDFLAGS) -lcuda
MK
echo "config.status: creating Makefile"
EOF
chmod +x "$P/conf/configure"

# 5. setuptools: a C++ extension that takes its include, library and runtime directories from
#    CUDA_HOME, as PyTorch's extension builder does (cudaDeviceProp::clockRate in the .cpp)
mkdir -p "$P/setuptools"
cat >"$P/setuptools/clockext.cpp" <<'EOF'
#include <Python.h>
#include <cuda_runtime.h>
static PyObject *clock_khz(PyObject *, PyObject *)
{
	cudaDeviceProp p = {};
	if (cudaGetDeviceProperties(&p, 0) != cudaSuccess)
		return PyLong_FromLong(-1);
	return PyLong_FromLong(p.clockRate);
}
static PyMethodDef methods[] = { { "clock_khz", clock_khz, METH_NOARGS, "" }, { nullptr, nullptr, 0, nullptr } };
static struct PyModuleDef mod = { PyModuleDef_HEAD_INIT, "clockext", nullptr, -1, methods };
PyMODINIT_FUNC PyInit_clockext(void) { return PyModule_Create(&mod); }
EOF
cat >"$P/setuptools/setup.py" <<'EOF'
import os
from setuptools import setup, Extension
cuda = os.environ["CUDA_HOME"]
setup(name="clockext", ext_modules=[Extension("clockext", ["clockext.cpp"], language="c++",
      include_dirs=[cuda + "/include"], library_dirs=[cuda + "/lib64"],
      runtime_library_dirs=[cuda + "/lib64"], libraries=["cudart"])])
EOF

# build_all DIR: each project built in a copy under DIR; out/<name>.log
build_all() {
	local d=$1
	rm -rf "$d"
	cp -r "$P" "$d"
	( cd "$d/make" && make ) >"$d/make.log" 2>&1
	echo $? >"$d/make.status"
	( cmake -S "$d/cmake" -B "$d/cmake/build" && cmake --build "$d/cmake/build" ) >"$d/cmake.log" 2>&1
	echo $? >"$d/cmake.status"
	( cd "$d/meson" && meson setup build && CLICOLOR_FORCE=1 ninja -C build ) >"$d/meson.log" 2>&1
	echo $? >"$d/meson.status"
	( cd "$d/conf" && ./configure && make ) >"$d/conf.log" 2>&1
	echo $? >"$d/conf.status"
	( cd "$d/setuptools" && python3 setup.py build_ext --inplace ) >"$d/setuptools.log" 2>&1
	echo $? >"$d/setuptools.status"
}
PYHAS=$(python3 -c 'import setuptools, sysconfig, os; print(int(os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))))' 2>/dev/null)
PROJECTS="make cmake meson conf"
[ "$PYHAS" = 1 ] && PROJECTS="$PROJECTS setuptools"
PROGRAMS="make/app cmake/build/clock meson/build/clock conf/ctx"
# the extension, by the name setuptools gives it
SO_NAME=setuptools/clockext$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null)

# ---- plain: the toolkit as installed ----
( export CUDA_HOME="$REAL_ROOT" CUDA_PATH="$REAL_ROOT"; build_all "$WORK/plain" )
for proj in $PROJECTS; do
	check "plainly, the $proj project fails on CUDA 13.0" test "$(cat "$WORK/plain/$proj.status")" -ne 0
done
[ "$PYHAS" = 1 ] || skip "the setuptools project" "python3 has no setuptools or no Python.h"

# ---- through `nvshim env` alone ----
ORIG_PATH=$PATH
eval "$("$NVSHIM" env)"
check "nvshim env: CC mode's directory on PATH, after nvshim's nvcc" \
	test "$(echo "$PATH" | cut -d: -f2)" = "$(cd "$BUILD/libexec/nvshim/cc" && pwd -P)"
check "nvshim env: CUDAToolkit_ROOT left unset (FindCUDAToolkit takes nvshim's nvcc from PATH)" test -z "${CUDAToolkit_ROOT:-}"
case "${CUDA_HOME:-}" in "$CACHE"/toolkit-view/*) ok "nvshim env: CUDA_HOME is the toolkit view" ;;
*) not_ok "nvshim env: CUDA_HOME is the toolkit view" "CUDA_HOME=${CUDA_HOME:-}" ;; esac
"$NVSHIM" doctor >"$WORK/doctor.out" 2>&1
check "doctor: g++ and cc reach CC mode" grep -q '^host compilers: CC mode for cc c++ gcc g++' "$WORK/doctor.out"
export NVSHIM_LOG_FILE="$WORK/log.jsonl"
build_all "$WORK/shim"
for proj in $PROJECTS; do
	if [ "$(cat "$WORK/shim/$proj.status")" -eq 0 ]; then
		ok "through nvshim env, the $proj project builds"
	else
		not_ok "through nvshim env, the $proj project builds" "$(tail -5 "$WORK/shim/$proj.log" | tr '\n' '|')"
	fi
done
check "the Meson build's compiler wrote colours (b_colorout=always; ninja keeps them: CLICOLOR_FORCE)" \
	sh -c "grep -q -- -fdiagnostics-color=always '$WORK/shim/meson/build/build.ninja' && grep -q \"\$(printf '\\033')\\[\" '$WORK/plain/meson.log'"
check "the log: CC mode restored cuCtxCreate and clockRate" \
	sh -c "grep -q 'cuCtxCreate restored' '$NVSHIM_LOG_FILE' && grep -q 'clockRate' '$NVSHIM_LOG_FILE'"
check "the log: paths into the view read as the real toolkit's" grep -q 'toolkit.view' "$NVSHIM_LOG_FILE"

# ---- nothing of nvshim's in what was written ----
leaks() { # every written file that names nvshim's cache or install
	local d=$1
	find "$d" -type f -newer "$P/clock.cpp" ! -name '*.log' ! -name 'config.log' ! -name '*.status' \
		! -path '*/CMakeFiles/CMakeOutput.log' -print0 |
		xargs -0 grep -l -a -F -e "$CACHE" -e "$(cd "$BUILD" && pwd -P)/libexec" -e "$BUILD/libexec" 2>/dev/null |
		grep -v -e 'CMakeCache.txt$' -e '/meson-info/' -e '/meson-logs/' -e 'build.ninja$' -e 'compile_commands.json$' \
			-e '/meson-private/' -e '\.ninja_log$' -e '/CMakeFiles/' -e '/Makefile$'
}
found=$(leaks "$WORK/shim")
check "no output names nvshim's cache or install (objects, programs, dependency files)" test -z "$found"
[ -n "$found" ] && echo "#   $found" | head -5
for prog in $PROGRAMS; do
	f="$WORK/shim/$prog"
	[ -f "$f" ] || continue
	rp=$(readelf -d "$f" | grep -E 'RUNPATH|RPATH')
	case "$rp" in *"$CACHE"*|*toolkit-view*) not_ok "$prog: RUNPATH names no nvshim path" "$rp" ;;
	*) ok "$prog: RUNPATH names no nvshim path${rp:+ (${rp##*: })}" ;; esac
done
check "make/app: its RUNPATH is the real toolkit's lib64" \
	sh -c "readelf -d '$WORK/shim/make/app' | grep -q 'runpath: \[$REAL_ROOT/lib64\]'"
check "CMakeCache.txt: the CUDA libraries and include directories are the real toolkit's" \
	sh -c "! grep -E '^CUDA_(cudart|cupti)_LIBRARY|^CUDAToolkit_(INCLUDE_DIR|LIBRARY_ROOT|BIN_DIR)' '$WORK/shim/cmake/build/CMakeCache.txt' | grep -q -F -e toolkit-view -e '$CACHE' &&
		grep -q '^CUDA_cupti_LIBRARY:FILEPATH=$(dirname "$(dirname "$NVCC")")/' '$WORK/shim/cmake/build/CMakeCache.txt'"

if [ "$PYHAS" = 1 ]; then
	rp=$(readelf -d "$WORK/shim/$SO_NAME" 2>/dev/null | grep -E 'RUNPATH|RPATH')
	check "the setuptools extension: its RUNPATH is the real toolkit's (${rp##*: })" \
		sh -c "test -n '$rp' && ! echo '$rp' | grep -q -e toolkit-view -e '$CACHE'"
fi

# ---- the cache removed, every program still loads ----
rm -rf "$CACHE"
if [ "$PYHAS" = 1 ]; then
	out=$(cd "$WORK/shim/setuptools" && env -u LD_LIBRARY_PATH python3 -c 'import clockext; print(clockext.clock_khz())' 2>&1)
	check "the setuptools extension imports with nvshim's cache removed (clock_khz: $out)" \
		sh -c "echo '$out' | grep -qE '^-?[0-9]+$'"
fi
for prog in $PROGRAMS; do
	f="$WORK/shim/$prog"
	if [ ! -x "$f" ]; then
		skip "$prog runs with nvshim's cache removed" "not built"
		continue
	fi
	# libcuda.so.1 is the GPU driver's: a machine without one cannot load a program linked
	# with -lcuda, plain or not; every other library must be found
	missing=$(env -u LD_LIBRARY_PATH ldd "$f" | grep 'not found' | grep -v '^\s*libcuda\.so\.1 ')
	if [ -n "$missing" ]; then
		not_ok "$prog loads with nvshim's cache removed" "$missing"
	elif env -u LD_LIBRARY_PATH ldd "$f" | grep -q 'libcuda\.so\.1 => not found'; then
		ok "$prog loads with nvshim's cache removed (every library but the driver's found)"
	else
		out=$(cd "$(dirname "$f")" && env -u LD_LIBRARY_PATH "$f" 2>&1)
		case "$out" in "loaded"*|"clock "*|"context: "*) ok "$prog runs with nvshim's cache removed ($out)" ;;
		*) not_ok "$prog runs with nvshim's cache removed" "$out" ;; esac
	fi
done

# a compile line recorded through the view runs on without it: Meson's compile_commands.json
# names -I<view>/include; CC mode maps a view that is gone to the toolkit it was made of (the
# library files Meson's build.ninja names as inputs are another matter: docs/build-systems.md)
cmd=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[0]["command"])' "$WORK/shim/meson/build/compile_commands.json" 2>/dev/null)
( cd "$WORK/shim/meson/build" && eval "$cmd" ) >"$WORK/rebuild.log" 2>&1
st=$?
check "a compile line of compile_commands.json names the view; with the cache removed it runs (mapped)" \
	sh -c "echo '$cmd' | grep -q toolkit-view && test $st -eq 0"

# ---- failures read whatever the colours: the issue's own line, and nvcc mode's host steps ----
mkdir -p "$WORK/colour" && cd "$WORK/colour" || exit 1
cp "$P/clock.cpp" color.cpp
printf '#include <nvToolsExt.h>\nint main() { nvtxRangePushA("x"); nvtxRangePop(); return 0; }\n' >nvtx.cu
CCDIR="$BUILD/libexec/nvshim/cc"
/usr/bin/g++ -fdiagnostics-color=always -I"$REAL_ROOT/include" -c color.cpp -o plain.o 2>plain.err
"$CCDIR/g++" -fdiagnostics-color=always -I"$REAL_ROOT/include" -c color.cpp -o color.o 2>color.err
check "g++ -fdiagnostics-color=always on a source reading clockRate: plainly it fails, in colour" \
	sh -c "test ! -e plain.o && grep -q \"\$(printf '\\033')\\[\" plain.err"
check "... through nvshim's g++ the compatibility layer restores it (compat.restored)" \
	sh -c "test -s color.o && grep -q 'compat.restored' color.err"
"$NVCC" -Xcompiler -fdiagnostics-color=always -arch=sm_80 -c nvtx.cu -o plain_nvtx.o 2>plain_nvtx.err
"$BUILD/libexec/nvshim/bin/nvcc" -Xcompiler -fdiagnostics-color=always -arch=sm_80 -c nvtx.cu -o nvtx.o 2>nvtx.err
check "nvcc -Xcompiler -fdiagnostics-color=always, NVTX 2's header: plainly it fails; nvshim's moved-files retry builds it" \
	sh -c "test ! -e plain_nvtx.o && grep -q \"\$(printf '\\033')\\[\" plain_nvtx.err && test -s nvtx.o && grep -q 'compat.layout' nvtx.err"
cd "$WORK" || exit 1

# ---- nvshim run: the same line for one command ----
ran=$(env -u CUDAToolkit_ROOT PATH="$ORIG_PATH" "$NVSHIM" run -- sh -c 'command -v g++; command -v cc' 2>&1)
check "nvshim run -- CMD: g++ and cc are CC mode's for CMD" \
	test "$ran" = "$(cd "$BUILD/libexec/nvshim/cc" && pwd -P)/g++
$(cd "$BUILD/libexec/nvshim/cc" && pwd -P)/cc"

# ---- host_compilers = off: nvshim env leaves them ----
NVSHIM_HOST_COMPILERS=off "$NVSHIM" env >"$WORK/env.off"
check "host_compilers = off: no CC mode on PATH" sh -c "! grep -q 'libexec/nvshim/cc' '$WORK/env.off'"
finish
