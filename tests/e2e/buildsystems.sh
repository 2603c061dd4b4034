#!/bin/bash
# Build systems with nvshim as their CUDA compiler, each given a CUDA 12 era target list that
# nvcc 13.0 rejects (sm_50 or sm_70): CMake through CMAKE_CUDA_COMPILER (both nvshim's names;
# tests/e2e/cmake.sh covers CUDACXX and PATH), Meson's cuda language, a build.ninja, and a
# setuptools extension whose build_ext compiles .cu with $PYTORCH_NVCC as
# torch.utils.cpp_extension does. Each builds, the result runs, and nvshim's note is in the log.
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
B=${NVSHIM_BUILD_DIR:-$(dirname "$NVSHIM")}
NV=$B/libexec/nvshim/bin/nvcc
LIBEXEC=$B/libexec/nvshim/bin
cd "$WORK" || exit 1
unset CUDACXX CMAKE_CUDA_COMPILER PYTORCH_NVCC
export -n NVCC # newer Meson reads NVCC: only the one each case sets
# No compiler cache gets in unasked (Meson puts one on PATH in front of the compiler).
export CCACHE_DISABLE=1 SCCACHE_DISABLE=1
export CUOBJDUMP=${CUOBJDUMP:-$(find_cuobjdump)}
cp "$HERE/fixtures/kernel.cu" main.cu
noted() { # noted LOG: nvshim logged the dropped target
	grep -q 'not supported by nvcc 13.0 \[targets.unsupported\]' "$1"
}
targets_are() { # targets_are NAME OBJECT "sm_80"
	if [ -z "$CUOBJDUMP" ]; then skip "$1" "no cuobjdump"; return; fi
	local got; got=$(elf_targets "$2")
	if [ "$got" = "$3" ]; then ok "$1"; else not_ok "$1" "targets: '$got', want '$3'"; fi
}

# --- CMake: CMAKE_CUDA_COMPILER naming nvshim, under either name
mkdir -p cm
cp main.cu cm/main.cu
printf 'cmake_minimum_required(VERSION 3.18)\nproject(p LANGUAGES CUDA)\nadd_executable(app main.cu)\n' >cm/CMakeLists.txt
for compiler in "$NV" "$NVSHIM"; do
	name="cmake -DCMAKE_CUDA_COMPILER=.../$(basename "$compiler")"
	b=cm-$(basename "$compiler")
	NVSHIM_LOG_FILE=$WORK/$b.log cmake -S cm -B "$b" -DCMAKE_CUDA_COMPILER="$compiler" \
		-DCMAKE_CUDA_ARCHITECTURES="70-real;80-real" >"$b.out" 2>&1 &&
		NVSHIM_LOG_FILE=$WORK/$b.log cmake --build "$b" >>"$b.out" 2>&1
	check "$name: configures and builds a CUDA 12 architecture list" test $? -eq 0
	check "$name: CMake kept the compiler it was given" \
		grep -q "set(CMAKE_CUDA_COMPILER \"$compiler\")" "$b"/CMakeFiles/*/CMakeCUDACompiler.cmake
	check "$name: the program runs" test "$("./$b/app")" = "host part ran"
	check "$name: nvshim dropped sm_70" noted "$b.log"
	targets_are "$name: built for sm_80" "$b/CMakeFiles/app.dir/main.cu.o" sm_80
done

# --- Meson's cuda language (Meson 1.0 looks for nvcc on PATH; a native file names it)
if ! command -v meson >/dev/null; then
	skip "meson" "meson is not installed (scripts/install-deps.sh installs it)"
else
	mkdir -p ms
	cp main.cu ms/main.cu
	cat >ms/meson.build <<'EOF'
project('p', 'cuda')
executable('app', 'main.cu',
           cuda_args: ['-gencode', 'arch=compute_50,code=sm_50', '-gencode', 'arch=compute_80,code=sm_80'])
EOF
	printf "[binaries]\ncuda = ['%s']\n" "$NV" >nvshim.ini.native
	for how in PATH native-file; do
		b=ms-$how
		args=()
		[ $how = native-file ] && args=(--native-file nvshim.ini.native)
		(export NVSHIM_LOG_FILE=$WORK/$b.log PATH=$LIBEXEC:$PATH
		 meson setup "${args[@]}" "$b" ms >"$b.out" 2>&1 && ninja -C "$b" >>"$b.out" 2>&1)
		check "meson ($how): sets up and builds a CUDA 12 list" test $? -eq 0
		check "meson ($how): its compiler sanity check ran through nvshim" grep -q sanitycheckcuda "$b.log"
		check "meson ($how): the program runs" test "$("./$b/app")" = "host part ran"
		check "meson ($how): nvshim dropped sm_50" noted "$b.log"
		targets_are "meson ($how): built for sm_80" "$b/app.p/main.cu.o" sm_80
	done
fi

# --- ninja: a build.ninja that calls nvcc from PATH
mkdir -p nj
cp main.cu nj/main.cu
cat >nj/build.ninja <<'EOF'
rule nvcc
  command = nvcc -c $in -o $out -gencode arch=compute_50,code=sm_50 -gencode arch=compute_80,code=sm_80
rule link
  command = nvcc $in -o $out
build main.o: nvcc main.cu
build app: link main.o
EOF
(cd nj && PATH=$LIBEXEC:$PATH NVSHIM_LOG_FILE=$WORK/ninja.log ninja >../ninja.out 2>&1)
check "ninja: builds a CUDA 12 list with nvcc from PATH" test $? -eq 0
check "ninja: the program runs" test "$(nj/app)" = "host part ran"
check "ninja: nvshim dropped sm_50" noted ninja.log
targets_are "ninja: built for sm_80" nj/main.o sm_80
out=$(cd nj && PATH=$LIBEXEC:$PATH ninja)
check "ninja: a second run has nothing to do" grep -q 'no work to do' <<<"$out"

# --- setuptools: build_ext compiles .cu with $PYTORCH_NVCC (as torch.utils.cpp_extension does)
if ! python3 -c 'import setuptools' 2>/dev/null; then
	skip "setuptools extension" "python3 has no setuptools (scripts/install-deps.sh installs it)"
else
	mkdir -p py
	cat >py/kernels.cu <<'EOF'
__global__ void twice(float *x) { x[threadIdx.x] *= 2.0f; }
/* nvcc defines __CUDA_ARCH_LIST__ in the host pass too: the targets this object was built for. */
static const int archs[] = { __CUDA_ARCH_LIST__ };
extern "C" int nvshim_ext_archs(int *out, int max)
{
	int n = (int)(sizeof(archs) / sizeof(archs[0]));
	for (int i = 0; i < n && i < max; i++)
		out[i] = archs[i];
	return n;
}
EOF
	cat >py/ext.c <<'EOF'
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
	cat >py/setup.py <<'EOF'
import os
import shlex
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

CUDA_HOME = os.environ.get("CUDA_HOME", "/usr/local/cuda")


class CudaBuildExt(build_ext):
    """Compiles .cu sources with $PYTORCH_NVCC, like torch.utils.cpp_extension, then links."""

    def build_extension(self, ext):
        nvcc = os.environ.get("PYTORCH_NVCC", os.path.join(CUDA_HOME, "bin", "nvcc"))
        flags = shlex.split(os.environ.get("CUDA_FLAGS", ""))
        os.makedirs(self.build_temp, exist_ok=True)
        for src in [s for s in ext.sources if s.endswith(".cu")]:
            obj = os.path.join(self.build_temp, os.path.basename(src) + ".o")
            subprocess.check_call([nvcc, "-c", src, "-o", obj, "-Xcompiler", "-fPIC"] + flags)
            ext.extra_objects.append(obj)
        ext.sources = [s for s in ext.sources if not s.endswith(".cu")]
        super().build_extension(ext)


setup(
    name="nvshim_ext",
    ext_modules=[Extension("nvshim_ext", ["ext.c", "kernels.cu"],
                           library_dirs=[os.path.join(CUDA_HOME, "lib64")],
                           libraries=["cudart_static", "stdc++", "dl", "rt", "pthread"])],
    cmdclass={"build_ext": CudaBuildExt},
)
EOF
	export CUDA_FLAGS="-gencode arch=compute_50,code=sm_50 -gencode arch=compute_80,code=sm_80"
	export CUDA_HOME=${CUDA_HOME:-$(cd "$(dirname "$NVCC")/.." && pwd)}
	(cd py && PYTORCH_NVCC=$NVCC python3 setup.py build_ext --inplace >../py-nvcc.out 2>&1)
	check "setuptools: with PYTORCH_NVCC=nvcc 13.0 the CUDA 12 list fails" test $? -ne 0
	(cd py && PYTORCH_NVCC=$NV NVSHIM_LOG_FILE=$WORK/py.log python3 setup.py build_ext --inplace >../py.out 2>&1)
	check "setuptools: with PYTORCH_NVCC=nvshim it builds" test $? -eq 0
	check "setuptools: nvshim dropped sm_50" noted py.log
	out=$(cd py && python3 -c 'import nvshim_ext; print(nvshim_ext.archs())' 2>&1)
	check "setuptools: the extension imports and was built for sm_80 ($out)" test "$out" = "[800]"
fi
finish
