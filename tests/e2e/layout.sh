#!/bin/bash
# CUDA 13's moved files (src/upgrade/layout.h, docs/compat.md#cuda-13s-moved-files): a host
# compile of Thrust, CUB, libcu++ and nv/ with only the toolkit's include/ on its line, NVTX 2's
# nvToolsExt.h and -lnvToolsExt, in CC mode and nvcc mode. Plain g++ and nvcc 13 fail; through
# nvshim they build, with one note, objects equal to the hand-fixed line's, and NVTX's ranges
# reach an injection library (no GPU needed: NVTX loads it without one). A clean compile is the
# compiler's alone: one run, the same bytes, no note. Section 5: real projects' files
# (tests/e2e/fixtures/corpus40/) with their own flags.
NVSHIM=$1 NVCC=$2
DIR=${NVSHIM_TOOLKITS:-/var/tmp/nvshim-toolkits} # read before lib.sh clears NVSHIM_*
SRC=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/lib.sh"
FIX=$(cd "$(dirname "$0")/fixtures/layout" && pwd)
B=${NVSHIM_BUILD_DIR:-$(dirname "$NVSHIM")}
CC_DIR="$B/libexec/nvshim/cc"
CUDA="$(cd "$(dirname "$NVCC")/.." && pwd)"
INC="$CUDA/include"
unset LIBRARY_PATH CC CXX CFLAGS CXXFLAGS LDFLAGS NVTX_INJECTION64_PATH
export NVSHIM_NVCC="$NVCC"
cd "$WORK" || exit 1
if [ ! -d "$INC/cccl/thrust" ] || [ ! -d "$INC/nvtx3" ] || [ -e "$INC/thrust" ]; then
	skip "CUDA 13's layout" "the toolkit at $CUDA has CUDA 12's layout (or no CCCL, no NVTX 3)"
	finish
	exit $?
fi
cp "$FIX"/* .

# 1. CCCL in a host compile (CC mode): -I include/ only, as CMake 3.25's CUDA::cudart gives.
g++ -I"$INC" -O1 -c sum.cpp -o plain.o 2>plain.err
check "plain g++: thrust/host_vector.h not found" grep -q "thrust/host_vector.h: No such file" plain.err
export NVSHIM_LOG_FILE="$WORK/cc.jsonl"
"$CC_DIR/g++" -I"$INC" -O1 -c sum.cpp -o sum.o 2>shim.err
check "through nvshim it builds" test $? -eq 0 -a -s sum.o
check "one note names the move, the line added and the lasting fix" \
	contains "$(cat shim.err)" "thrust/host_vector.h. not found: CUDA 13.0 moved CCCL" "-I$INC/cccl after $INC" \
	"\${CUDAToolkit_INCLUDE_DIRS}/cccl" "CCCL::CCCL" "\[compat.layout\]"
check "the note is the only thing said" test "$(wc -l <shim.err)" -eq 1
g++ -I"$INC" -I"$INC/cccl" -O1 -c sum.cpp -o hand.o
check "the object equals the hand-fixed line's" cmp -s sum.o hand.o
"$CC_DIR/g++" -isystem "$INC" -O1 -MD -c sum.cpp -o sys.o 2>sys.err
check "-isystem include/: include/cccl added as -isystem" grep -q -- "-isystem $INC/cccl after" sys.err
check "the dependency file lists the headers from include/cccl" grep -q "$INC/cccl/thrust/host_vector.h" sys.d
g++ -O1 -c sum.cpp -o noinc.o 2>noinc.err
"$CC_DIR/g++" -O1 -c sum.cpp -o noinc2.o 2>noinc2.err
check "no toolkit include/ on the line: nothing added, g++'s error stands" \
	sh -c "test ! -e noinc2.o && cmp -s noinc.err noinc2.err"
# A clean compile: g++'s bytes, one run.
: >"$NVSHIM_LOG_FILE"
"$CC_DIR/g++" -I"$INC" -O1 -c plain.cpp -o p1.o 2>p1.err
g++ -I"$INC" -O1 -c plain.cpp -o p2.o
check "a clean compile: the same object, nothing said, one run" \
	sh -c "cmp -s p1.o p2.o && test ! -s p1.err && test \$(grep -c '\"tool\"' '$NVSHIM_LOG_FILE') -eq 1"

# 2. NVTX 2 in nvcc mode: nvToolsExt.h and -lnvToolsExt.
"$NVCC" -o plain prof.cu -lnvToolsExt 2>nvcc.err
check "plain nvcc: nvToolsExt.h not found" grep -q "nvToolsExt.h: No such file" nvcc.err
"$NVSHIM" -o prof prof.cu -lnvToolsExt 2>prof.err
check "through nvshim it builds" test $? -eq 0 -a -x prof
check "the note: NVTX 3's headers, -lnvToolsExt taken out" \
	contains "$(cat prof.err)" "nvToolsExt.h. not found: CUDA 13.0 moved NVTX 2 out for NVTX 3" \
	"-lnvToolsExt taken out" "-I$INC/nvtx3" "nvtx3/nvToolsExt.h" "\[compat.layout\]"
check "the program needs no libnvToolsExt" sh -c "! readelf -d prof | grep -q nvToolsExt"
gcc -shared -fPIC -O2 -o inject.so nvtx_inject.c
NVTX_INJECTION64_PATH="$WORK/inject.so" NVTX_RECORD="$WORK/ranges.txt" ./prof >prof.out
check "the ranges reach the injection library" \
	test "$(cat ranges.txt)" = "$(printf 'push setup\npush compute\npop\npop')"
"$NVSHIM" -c prof.cu -o prof.o 2>/dev/null
"$NVCC" -I"$INC/nvtx3" -c prof.cu -o hand_prof.o
check "nvcc -c: the object equals the hand-fixed line's" cmp -s <(normalise prof.o) <(normalise hand_prof.o)
# -lnvToolsExt in an options file (-optf): the retry has the file's words on its line, less it
printf -- '-lnvToolsExt\n' >link.optf
"$NVSHIM" -o prof_optf prof.cu -optf link.optf 2>optf.err
check "-lnvToolsExt in an -optf file: builds, no library needed" \
	sh -c "test -x prof_optf && grep -q -- '-lnvToolsExt taken out' optf.err && ! readelf -d prof_optf | grep -q nvToolsExt"

# 2a. cuda_texture_types.h, gone in 13.0: nvshim's copy of 12.9's two includes.
printf '#include <cuda_texture_types.h>\n__global__ void k(cudaTextureObject_t t, float *o) { *o = tex1Dfetch<float>(t, 0); }\n' >tex.cu
"$NVSHIM" -c tex.cu -o tex.o 2>tex.err
check "cuda_texture_types.h: builds, with its note" \
	sh -c "test -s tex.o && grep -q 'cuda_texture_types.h. not found: CUDA 13.0 removed' tex.err"
"$NVCC" -c tex.cu -o hand_tex.o -I"$SRC/include/nvshim/compat/cuda12"
check "the object equals the hand-fixed line's" cmp -s <(normalise tex.o) <(normalise hand_tex.o)

# 2b. CC mode: the same source's host part by g++, and a g++ link of -lnvToolsExt.
printf '#include <nvToolsExt.h>\nint main() { nvtxRangePushA("host"); nvtxRangePop(); return 0; }\n' >host.cpp
"$CC_DIR/g++" -I"$INC" -c host.cpp -o host.o 2>host.err
check "CC mode: nvToolsExt.h from include/nvtx3" sh -c "test -s host.o && grep -q -- '-I$INC/nvtx3 after' host.err"
g++ -o hostplain host.o -lnvToolsExt 2>link.err
check "plain g++ link: -lnvToolsExt not found" grep -q "cannot find -lnvToolsExt" link.err
"$CC_DIR/g++" -o hostprog host.o -lnvToolsExt 2>link2.err
check "CC mode: the link builds without it" test $? -eq 0 -a -x hostprog
NVTX_INJECTION64_PATH="$WORK/inject.so" NVTX_RECORD="$WORK/host.txt" ./hostprog
check "its range reaches the injection library" test "$(cat host.txt)" = "$(printf 'push host\npop')"
unset NVSHIM_LOG_FILE

# 3. The toolkit view (nvshim env's CUDA_HOME) in CUDA 12's layout: builds that name
# $CUDA_HOME/include and $CUDA_HOME/lib64 find what 13.0 moved, with no retry at all.
view=$("$NVSHIM" toolkit-view)
check "view: include/thrust, cub, cuda, nv are CUDA 13's include/cccl/..." sh -c \
	"test '$view/include/thrust' -ef '$INC/cccl/thrust' -a '$view/include/cub' -ef '$INC/cccl/cub' -a \
	'$view/include/cuda' -ef '$INC/cccl/cuda' -a -d '$view/include/nv/detail'"
check "view: include/nvToolsExt.h is NVTX 3's" test "$view/include/nvToolsExt.h" -ef "$INC/nvtx3/nvToolsExt.h"
g++ -I"$view/include" -O1 -c sum.cpp -o view.o 2>view.err
check "g++ -I\$CUDA_HOME/include: Thrust, CUB, libcu++ found; the object is the hand-fixed line's" \
	sh -c "test ! -s view.err && cmp -s view.o hand.o"
g++ -I"$view/include" host.cpp -o viewprog -L"$view/lib64" -lnvToolsExt 2>viewlink.err
check "g++ ... -L\$CUDA_HOME/lib64 -lnvToolsExt links, and needs no library" \
	sh -c "test -x viewprog -a ! -s viewlink.err && ! readelf -d viewprog | grep -q nvToolsExt"
NVTX_INJECTION64_PATH="$WORK/inject.so" NVTX_RECORD="$WORK/view.txt" ./viewprog
check "its range reaches the injection library" test "$(cat view.txt)" = "$(printf 'push host\npop')"
mkdir copied && cp -r "$view/include/cuda" copied/ 2>cp.err
check "a copy of \$CUDA_HOME/include/cuda (cuda-samples' matrixMul_nvrtc) has libcu++" \
	test -f copied/cuda/std/type_traits

# 4. nvshim migrate on the build files: the lasting fix, which builds with plain g++ on 13.0 and
# with CUDA 12.9's headers (the pinned wheels, scripts/fetch-cccl12.sh).
cp -r "$FIX/build" mig
(cd mig && "$NVSHIM" migrate CMakeLists.txt Makefile setup.py >../mig.diff 2>../mig.err)
check "migrate prints the fix of the three build files as a diff" contains "$(cat mig.diff)" \
	"^+target_include_directories(sum SYSTEM PRIVATE \${CUDAToolkit_INCLUDE_DIRS}/cccl)" \
	"^+target_link_libraries(host PRIVATE CUDA::nvtx3)" "^+file(COPY \${nvshim_cccl_include}/cuda" \
	'^+CXXFLAGS = -O1 -I$(CUDA_HOME)/include/nvtx3 -I$(CUDA_HOME)/include -I$(CUDA_HOME)/include/cccl$' \
	'^+LDLIBS = -L$(CUDA_HOME)/lib64$' '^+    libraries=\["cudart"\],$' \
	'os.path.join(CUDA_HOME, "include", "cccl")\]'
(cd mig && "$NVSHIM" migrate --apply CMakeLists.txt Makefile setup.py >/dev/null 2>&1)
(cd mig && "$NVSHIM" migrate CMakeLists.txt Makefile setup.py >../mig2.diff 2>&1)
check "applied, a second migrate has nothing to change" test ! -s mig2.diff
make -C mig CUDA_HOME="$CUDA" >make13.out 2>&1
check "the migrated Makefile builds with plain g++ on 13.0" test $? -eq 0 -a -x mig/host
cmake -S mig -B mig/b -DCMAKE_BUILD_TYPE=Release >cmake13.out 2>&1 && cmake --build mig/b >>cmake13.out 2>&1
check "the migrated CMakeLists.txt configures and builds with CMake $(cmake --version | sed -n '1s/.* //p') and plain g++ on 13.0" \
	sh -c "test -x mig/b/host -a -f mig/b/cuda_headers/cuda/std/type_traits"
R12=$DIR/cu12-runtime/nvidia/cuda_runtime/include C12=$DIR/cu12-cccl/nvidia/cuda_cccl/include
N12=$(ls -d "$DIR"/nvtx-cu12/nvidia/nvtx/include 2>/dev/null)
if [ -d "$R12" ] && [ -d "$C12/thrust" ]; then
	# CUDA 12.9's include/: the runtime's headers and CCCL 2.8 side by side, as the toolkit has them
	mkdir -p cu129/include cu129/lib64
	for f in "$R12"/* "$C12"/*; do ln -s "$f" cu129/include/; done
	[ -n "$N12" ] && [ ! -e cu129/include/nvtx3 ] && ln -s "$N12/nvtx3" cu129/include/nvtx3
	make -C mig clean >/dev/null 2>&1; rm -f mig/sum.o mig/host
	make -C mig sum.o CUDA_HOME="$WORK/cu129" >make12.out 2>&1
	check "the migrated Makefile builds with CUDA 12.9's headers" test $? -eq 0 -a -s mig/sum.o
else
	skip "the migrated Makefile with CUDA 12.9's headers" "no CUDA 12.9 wheels in $DIR (scripts/fetch-cccl12.sh)"
fi

# 5. Real projects' files (tests/e2e/fixtures/corpus40/README.md: upstream paths, commit, license),
# compiled with the project's own flags: plain stops on the moved file, through nvshim it builds
# with the note, the project's files untouched, the object the hand-fixed line's. (The plain and
# hand-fixed compiles run no nvshim: left out of the sanitizer pass, lib.sh.)
cp -r "$FIX/../corpus40/abacus-develop" abacus
(cd abacus && find . -type f -exec sha256sum {} + | sort) >abacus.sum
ABACUS="-D__CUDA -D__UT_USE_CUDA -Isource -Isource/module_base/module_container"
# abacus-develop 729059f: a host compile of module_container's memory_impl.cpp, whose
# base/macros/cuda.h includes <thrust/complex.h> (the move its pull request #7155 fixed by hand)
unit=source/module_base/module_container/ATen/kernels/memory_impl.cpp
if [ -z "$SANITIZED" ]; then
	(cd abacus && g++ $ABACUS -I"$INC" -O3 -DNDEBUG -std=gnu++17 -c "$unit" -o plain.o) 2>abacus_plain.err
	check "abacus-develop 729059f $unit: plain g++ stops on thrust/complex.h" \
		sh -c "test ! -e abacus/plain.o && grep -q 'base/macros/cuda.h:7:10: fatal error: thrust/complex.h: No such file' abacus_plain.err"
fi
(cd abacus && "$CC_DIR/g++" $ABACUS -I"$INC" -O3 -DNDEBUG -std=gnu++17 -c "$unit" -o shim.o) 2>abacus_shim.err
# (the header is three project headers down, through angle includes: CC mode holds g++'s
# stderr because the line names a CUDA 13 toolkit's include/, layout_host_may_need)
check "abacus-develop $unit: through nvshim (CXX) it builds, with the note" \
	sh -c "test -s abacus/shim.o && grep -q 'thrust/complex.h. not found: CUDA 13.0 moved CCCL.*-I$INC/cccl after $INC.*\[compat.layout\]' abacus_shim.err"
if [ -z "$SANITIZED" ]; then
	(cd abacus && g++ $ABACUS -I"$INC" -I"$INC/cccl" -O3 -DNDEBUG -std=gnu++17 -c "$unit" -o hand.o)
	check "abacus-develop $unit: the object equals the hand-fixed line's" cmp -s abacus/shim.o abacus/hand.o
fi
# The same line with nvshim env's CUDA_HOME (the toolkit view) as the toolkit: plain g++ builds it
if [ -z "$SANITIZED" ]; then
	(cd abacus && g++ $ABACUS -I"$view/include" -O3 -DNDEBUG -std=gnu++17 -c "$unit" -o view.o) 2>abacus_view.err
	check "abacus-develop $unit: g++ -I\$CUDA_HOME/include (the view) builds it, with no retry" \
		sh -c "test -s abacus/view.o -a ! -s abacus_view.err"
	check "abacus-develop $unit: the view's object equals the hand-fixed line's" cmp -s abacus/view.o abacus/hand.o
fi
# abacus-develop 729059f: nvcc on module_hsolver's diag_cusolver.cu, whose diag_cusolver.cuh
# includes NVTX 2's "nvToolsExt.h"
unit=source/module_hsolver/kernels/cuda/diag_cusolver.cu
if [ -z "$SANITIZED" ]; then
	(cd abacus && "$NVCC" $ABACUS -O3 -DNDEBUG -std=c++14 -arch=sm_90 -c "$unit" -o plain_cu.o) 2>abacus_nvcc.err
	check "abacus-develop 729059f $unit: plain nvcc stops on nvToolsExt.h" \
		sh -c "test ! -e abacus/plain_cu.o && grep -q 'diag_cusolver.cuh:5:10: fatal error: nvToolsExt.h: No such file' abacus_nvcc.err"
fi
(cd abacus && "$NVSHIM" $ABACUS -O3 -DNDEBUG -std=c++14 -arch=sm_90 -c "$unit" -o shim_cu.o) 2>abacus_cu.err
check "abacus-develop $unit: through nvshim it builds, with the note" \
	sh -c "test -s abacus/shim_cu.o && grep -q 'nvToolsExt.h. not found: CUDA 13.0 moved NVTX 2 out for NVTX 3.*\[compat.layout\]' abacus_cu.err"
if [ -z "$SANITIZED" ]; then
	(cd abacus && "$NVCC" $ABACUS -O3 -DNDEBUG -std=c++14 -arch=sm_90 -c "$unit" -o hand_cu.o -I"$INC/nvtx3")
	check "abacus-develop $unit: the object equals the hand-fixed line's" \
		cmp -s <(normalise abacus/shim_cu.o) <(normalise abacus/hand_cu.o)
fi
rm -f abacus/*.o
check "abacus-develop: the project's files are untouched" \
	bash -c "cmp -s abacus.sum <(cd abacus && find . -type f -exec sha256sum {} + | sort)"

finish
