#!/bin/bash
# CC/CXX mode: nvshim as the host compiler. A Makefile written for gcc builds its .cu and .c
# files with CC pointing at nvshim, in one nvcc run per CUDA source, with dependency files that
# list the right headers; a real `setup.py build_ext` of a C extension with a .cu source builds
# and imports; gcc's options reach nvcc intact (commas, spaces, quotes, $); everything that is
# not CUDA is the real compiler's, unchanged.
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"
FIX=$(cd "$(dirname "$0")/fixtures" && pwd)
B=${NVSHIM_BUILD_DIR:-$(dirname "$NVSHIM")}
CC_DIR="$B/libexec/nvshim/cc"
CUDA_LIB="$(cd "$(dirname "$NVCC")/../lib64" && pwd)"
CUDA_INC="$(cd "$(dirname "$NVCC")/../include" && pwd)"
unset LIBRARY_PATH CC CXX CFLAGS CXXFLAGS LDFLAGS
export NVSHIM_NVCC="$NVCC"
cd "$WORK" || exit 1

# A Makefile project written for gcc.
cp -r "$FIX/cc/make" mk
export NVSHIM_LOG_FILE="$WORK/make.jsonl"
make -C mk CC="$CC_DIR/gcc" CXX="$CC_DIR/g++" CUDA_LIB="$CUDA_LIB" >make.out 2>&1
check "make with CC=nvshim builds the .cu and .c files" test $? -eq 0 -a -x mk/app
check "the program runs" sh -c "mk/app | grep -q 'host part ran: 1024 threads of 128'"
check "scale.d lists the .cu file's headers" sh -c "grep -q 'scale.h' mk/scale.d && grep -q 'common.h' mk/scale.d"
check "scale.d names the object as its target" grep -q '^scale.o *:' mk/scale.d
check "main.d lists the .c file's headers" sh -c "grep -q 'main.h' mk/main.d && grep -q 'common.h' mk/main.d"
check "one nvcc run for the .cu (dependencies included)" test "$(grep -c '"tool":"[^"]*nvcc"' "$NVSHIM_LOG_FILE")" -eq 1
check "the .c file and the link went to the real compilers" test "$(grep -c '"tool":"[^"]*/g\(cc\|++\)"' "$NVSHIM_LOG_FILE")" -eq 2
check "the log shows the translation" grep -q '"gcc options for nvcc: -fPIC -Wall through -Xcompiler \[cc.translate\]"' "$NVSHIM_LOG_FILE"
make -C mk CC="$CC_DIR/gcc" CXX="$CC_DIR/g++" CUDA_LIB="$CUDA_LIB" >make2.out 2>&1
check "a second make has nothing to do" grep -q "Nothing to be done\|is up to date" make2.out
touch mk/common.h
make -C mk CC="$CC_DIR/gcc" CXX="$CC_DIR/g++" CUDA_LIB="$CUDA_LIB" >make3.out 2>&1
check "touching a header rebuilds both objects" sh -c "grep -q 'scale.cu' make3.out && grep -q 'main.c' make3.out"
unset NVSHIM_LOG_FILE

# A real setup.py build_ext of a C extension with a .cu source, CC and CXX set to nvshim.
if python3 -c 'import setuptools, sysconfig, os; assert os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))' 2>/dev/null; then
	cp -r "$FIX/cc/pyext" py && cp "$FIX/link/tma.cu" py/
	mkdir -p driver
	gcc -shared -fPIC -Wl,-soname,libcuda.so.1 "$FIX/link/fakecuda.c" -o driver/libcuda.so.1
	(cd py && NVSHIM_LOG_FILE="$WORK/py.jsonl" CC="$CC_DIR/gcc" CXX="$CC_DIR/g++" CUDA_LIB="$CUDA_LIB" \
		python3 setup.py build_ext --inplace) >py.out 2>&1
	check "setup.py build_ext with CC/CXX=nvshim builds" test $? -eq 0
	ext=$(ls py/tma_ext*.so 2>/dev/null | head -1)
	check "the extension needs libcuda.so.1 (its host code calls the driver)" sh -c "readelf -d '$ext' | grep -q 'NEEDED.*libcuda.so.1'"
	out=$(cd py && LD_LIBRARY_PATH="$WORK/driver" python3 -c 'import tma_ext; print("result", tma_ext.make_map())' 2>&1)
	check "it imports and builds a tensor map (test libcuda)" contains "$out" "cuTensorMapEncodeTiled: CUDA_SUCCESS" "result 0"
	check "setup.py: tma.cu went to nvcc with Python's flags translated" \
		grep -q '"tool":"[^"]*nvcc".*"-Xcompiler","-fPIC".*"tma.cu"' py.jsonl
	check "setup.py: tma_ext.c went to the real gcc" grep -q '"tool":"[^"]*/gcc".*"tma_ext.c"' py.jsonl
	check "setup.py's link got -lcuda" grep -q "added -lcuda: cu[A-Za-z]* is undefined in build/.*tma.o" py.out
else
	skip "setup.py build_ext" "no setuptools or Python headers (scripts/install-deps.sh installs them)"
fi

# gcc's options on a .cu file: commas, spaces, quotes and $ arrive as gcc would pass them.
mkdir -p "sp dir/inc"
echo '#define FROM_DIR "with space"' >"sp dir/inc/h.h"
cat >msg.cu <<'EOF'
#include <stdio.h>
#include "h.h"
int main(void) { printf("%s|%s|%d\n", MSG, FROM_DIR, VALUE); return 0; }
EOF
"$CC_DIR/g++" '-DMSG="a,b c"' -DVALUE=7 -iquote "sp dir/inc" '-Wl,-rpath,$ORIGIN/x y' -fsanitize=address,undefined \
	-fno-omit-frame-pointer -std=gnu++17 msg.cu -o msg 2>err
check "commas, spaces and quotes through CC mode: builds" test $? -eq 0
check "-D with a comma and a space, -iquote with a space" sh -c "./msg | grep -qx 'a,b c|with space|7'"
check "-Wl,-rpath with \$ORIGIN and a space" sh -c "readelf -d msg | grep -q 'RUNPATH.*\[\$ORIGIN/x y\]'"
check "-fsanitize=address,undefined reached the host compiler and the link" sh -c "readelf -d msg | grep -q libasan"
check "-std=gnu++17: said" grep -q "std=gnu++17 passed to nvcc as -std=c++17 .*\[cc.std\]" err
cp msg.cu "sp dir/my k.cu"
"$CC_DIR/gcc" -c "sp dir/my k.cu" -o "sp dir/o u t.o" -MD -I "sp dir/inc" -DMSG='"x"' -DVALUE=1 2>err
check "a source, an object and a dependency file with spaces in their paths" \
	sh -c "test -s 'sp dir/o u t.o' && grep -q 'h.h' 'sp dir/o u t.d'"

# Not CUDA: the real compiler, the same arguments, the same result.
printf 'int add(int a, int b) { return a + b; }\n' >a.c
gcc -c a.c -o a_gcc.o
"$CC_DIR/gcc" -c a.c -o a_shim.o
check "a .c file: the same object as gcc's" cmp -s a_gcc.o a_shim.o
check "--version: gcc's own" test "$("$CC_DIR/gcc" --version)" = "$(gcc --version)"
check "nvshim cc: CC mode too" test "$("$NVSHIM" cc --version)" = "$(cc --version)"
check "nvshim c++ -dumpmachine" test "$("$NVSHIM" c++ -dumpmachine)" = "$(c++ -dumpmachine)"
"$CC_DIR/gcc" -c nosuch.c -o x.o 2>shim.err; st2=$?
gcc -c nosuch.c -o x.o 2>gcc.err; st1=$?
check "an error: gcc's status and message" sh -c "test $st1 -eq $st2 && cmp -s gcc.err shim.err"
if command -v clang++ >/dev/null; then
	check "clang++ mode runs clang++" test "$("$CC_DIR/clang++" --version | head -1)" = "$(clang++ --version | head -1)"
else
	skip "clang++ mode runs clang++" "no clang++"
fi

# The targets pass applies to CUDA compiles in CC mode.
printf '__global__ void k(float *x) { x[0] = 1; }\n' >k.cu
"$CC_DIR/gcc" -c k.cu -o k.o -gencode arch=compute_70,code=sm_70 -gencode arch=compute_80,code=sm_80 2>err
check "CC mode: targets.unsupported on a CUDA 12 list" sh -c "test -s k.o && grep -q 'dropped sm_70.*targets.unsupported' err"

# The modules pass applies too: a source that cannot build below sm_80 (found by the probe) and
# one that needs sm_90a (found by the scan), compiled by gcc-style lines.
MOD="$(cd "$(dirname "$0")/fixtures/modules" && pwd)"
cp "$MOD/cpasync_exc.cu" "$MOD/wgmma.cu" .
"$CC_DIR/g++" -fPIC -O2 -c cpasync_exc.cu -o cpasync_exc.o -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 2>err
check "CC mode, modules.probe: sm_75 dropped, the object builds" sh -c "test -s cpasync_exc.o && grep -q 'cpasync_exc.cu: dropped sm_75: device code does not support exception handling (line 19) \[modules.probe\]' err"
check "CC mode, modules.probe: only sm_80 is embedded" test "$(elf_targets cpasync_exc.o)" = sm_80
"$CC_DIR/g++" -fPIC -c wgmma.cu -o wgmma.o -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 2>err
check "CC mode, modules.scan: sm_80 dropped, sm_90 upgraded to sm_90a" sh -c "test -s wgmma.o && grep -q 'wgmma needs sm_90a (line 6) \[modules.scan\]' err"
check "CC mode, modules.scan: only sm_90a is embedded" test "$(elf_targets wgmma.o)" = sm_90a
out=$("$NVSHIM" explain g++ -fPIC -c wgmma.cu -o wgmma.o -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90)
check "explain g++ shows the modules pass" contains "$out" "^modules   : " "^note      : .*wgmma needs sm_90a"
# ... and so does the explanation of a resource error (nvcc's stderr is watched as in nvcc mode).
printf '__global__ void big(float *o) { __shared__ float s[12320]; s[threadIdx.x] = 1; __syncthreads(); o[0] = s[threadIdx.x ^ 1]; }\n' >big.cu
"$CC_DIR/gcc" -c big.cu -o big.o -gencode arch=compute_80,code=sm_80 2>err; st=$?
"$NVCC" -c big.cu -o big_plain.o -gencode arch=compute_80,code=sm_80 2>plain.err; st_plain=$?
check "CC mode, a resource error: nvcc's status and message" test $st -eq $st_plain -a $st -ne 0 -a "$(grep -v '^nvshim ' err)" = "$(cat plain.err)"
check "CC mode, a resource error: explained" grep -q "kernel big(float\*) (_Z3bigPf) uses 49280 bytes of static shared memory on sm_80.*\[resource.shared\]" err

# explain cc shows the decisions and runs nothing.
out=$("$NVSHIM" explain gcc -fPIC -O2 -Wall -MD -c k.cu -o obj/k.o)
check "explain gcc: route, translation, command" contains "$out" "^host compiler: .*/gcc" "^runs      : nvcc" \
	"^note      : gcc options for nvcc: -fPIC -Wall through -Xcompiler; -MF obj/k.d added" \
	"^command   : .*nvcc -ccbin .*/g++ -Xcompiler -fPIC -O2 -Xcompiler -Wall -MD -c k.cu -o obj/k.o -MF obj/k.d$"
out=$("$NVSHIM" explain cc -c a.c)
check "explain cc of a .c file: the host compiler, unchanged" contains "$out" "^runs      : the host compiler" "^command   : .*/cc -c a.c$"
check "explain ran nothing" test ! -e obj/k.o

# Under an nvcc that nvshim runs, the host compiler names are the real compilers only.
NVSHIM_DEPTH=1 "$CC_DIR/gcc" -c k.cu -o depth.o 2>err
check "NVSHIM_DEPTH set: gcc itself (which does not compile .cu)" sh -c "test ! -e depth.o && ! grep -q nvshim err"
mkdir -p pathbin && ln -sf "$NVSHIM" pathbin/nvcc
PATH="$CC_DIR:$WORK/pathbin:$PATH" NVSHIM_NVCC= nvcc k.cu -c -o viapath.o -Xcompiler -Wall 2>err
check "nvcc (nvshim) with nvshim's gcc first on PATH: builds, nvcc's gcc steps pass through" test $? -eq 0 -a -s viapath.o

# Settings: host_cc naming nvshim itself, or nothing, is an error, not a loop.
NVSHIM_HOST_CC="$CC_DIR/gcc" "$CC_DIR/gcc" -c a.c -o x.o 2>err
check "host_cc = nvshim: one clear error" grep -q "host_cc '.*' is nvshim itself" err
NVSHIM_HOST_CXX=/nonexistent/g++ "$CC_DIR/g++" -c a.c -o x.o 2>err
check "host_cxx missing: one clear error" grep -q "host_cxx '/nonexistent/g++' is not an executable file" err
NVSHIM_HOST_CC=/usr/bin/gcc "$CC_DIR/clang" -c a.c -o hc.o
check "host_cc chooses the compiler" cmp -s a_gcc.o hc.o
finish
