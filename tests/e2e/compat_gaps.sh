#!/bin/bash
# The compatibility layer where real projects first found it silent (docs/compat.md, "Real
# projects: the corpus"): a removed base class whose follow-on errors name nothing in the table
# (dedisp, tsne-cuda), calls written over several lines (cuda-samples' CG), CC mode on sources
# whose cuda.h comes through a project header (pycuda) or that include only cufft.h (bart), C
# sources with an int device (bart's gpuops.c); and `nvshim migrate` on a name passed to a macro
# apart from its arguments. Each: plain fails, nvshim builds with one compat.restored note.
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"
FIXTURES=$(cd "$(dirname "$0")/fixtures/compat" && pwd) || exit 1
INC=$(dirname "$(dirname "$NVCC")")/include
LIB=$(dirname "$(dirname "$NVCC")")/lib64
cd "$WORK" || exit 1
cp "$FIXTURES"/functor.cu "$FIXTURES"/multiline.cu "$FIXTURES"/advise_c.c "$FIXTURES"/fft_c.c .
mkdir -p inc && cp "$FIXTURES"/indirect.cpp . && cp "$FIXTURES"/indirect.hpp inc/
export NVSHIM_NVCC=$NVCC TMPDIR=$WORK
restored() { grep -c '\[compat\.restored\]$' "$1"; }

# 1. thrust::unary_function removed: errors at the functor's uses name nothing in the table.
"$NVCC" -c -arch=sm_90 functor.cu -o plain.o 2>plain.err; s1=$?
"$NVSHIM" -c -arch=sm_90 functor.cu -o shim.o 2>shim.err; s2=$?
check "functor.cu: plain nvcc fails, also on errors that name nothing in the table" eval \
	'test "$s1" != 0 && grep -q "has no member class \"unary_function\"" plain.err && grep -q "has no member \"result_type\"" plain.err && grep -q "no suitable constructor" plain.err'
check "... through nvshim it builds, thrust::unary_function restored" eval \
	'test "$s2" = 0 -a -s shim.o && test "$(restored shim.err)" = 1 && grep -q "thrust::unary_function restored" shim.err'
# ... and an error of the program's own beside it: the retry fails, nvcc's errors stand.
sed 's/int sum = /int sum = undeclared_name + /' functor.cu >own.cu
"$NVCC" -c -arch=sm_90 own.cu -o own.o 2>own-plain.err; s1=$?
NVSHIM_VERBOSITY=verbose "$NVSHIM" -c -arch=sm_90 own.cu -o own.o 2>own.err; s2=$?
check "... with an error of the program's own: fails as nvcc does, the layer tried once (compat.failed)" eval \
	'test "$s1" != 0 -a "$s2" = "$s1" && grep -q "identifier \"undeclared_name\" is undefined" own.err && grep -q "\[compat\.failed\]" own.err && ! grep -q "compat\.restored" own.err'

# 2. calls over several lines: nvcc reports the argument's line
"$NVCC" -c -arch=sm_90 multiline.cu -o plain.o 2>plain.err; s1=$?
"$NVSHIM" -c -arch=sm_90 multiline.cu -o shim.o 2>shim.err; s2=$?
check "multiline.cu: plain nvcc fails on lines without the function's name" eval \
	'test "$s1" != 0 && grep -q "multiline.cu(20): error: no suitable constructor" plain.err'
check "... through nvshim it builds: cudaMemAdvise and cudaMemPrefetchAsync restored" eval \
	'test "$s2" = 0 -a -s shim.o && grep -q "cudaMemAdvise and cudaMemPrefetchAsync restored" shim.err'

# 3. CC mode: cuda.h through a project header (-Iinc), cuCtxCreate passed to a macro apart
c++ -Iinc -I"$INC" -c indirect.cpp -o plain.o 2>plain.err; s1=$?
"$NVSHIM" c++ -Iinc -I"$INC" -c indirect.cpp -o shim.o 2>shim.err; s2=$?
check "indirect.cpp: plain c++ fails on cuCtxCreate (cuda.h through inc/indirect.hpp)" eval \
	'test "$s1" != 0 && grep -q "cuCtxCreate_v4" plain.err'
check "... nvshim c++ builds it, cuCtxCreate restored" eval \
	'test "$s2" = 0 -a -s shim.o && grep -q "cuCtxCreate restored" shim.err'
"$NVSHIM" migrate inc/indirect.hpp indirect.cpp >mig.out 2>mig.err; s=$?
check "... migrate rewrites the macro's argument list, guarded" eval \
	'test "$s" = 0 && grep -q "^+	CHECKED(cuCtxCreate, (&ctx, NULL, 0, dev));" mig.out && grep -q "^+#if CUDA_VERSION >= 13000" mig.out'
"$NVSHIM" migrate --apply indirect.cpp >/dev/null 2>&1
check "... and, applied, plain c++ builds it" c++ -Iinc -I"$INC" -c indirect.cpp -o fixed.o

# 4. C: only cufft.h; cudaMemAdvise / cudaMemPrefetchAsync with an int device
cc -I"$INC" -c fft_c.c -o plain.o 2>plain.err; s1=$?
"$NVSHIM" cc -I"$INC" fft_c.c -o fft 2>shim.err; s2=$?
check "fft_c.c (includes only cufft.h): plain cc fails, nvshim cc builds, the codes restored" eval \
	'test "$s1" != 0 -a "$s2" = 0 && grep -q "CUFFT_INCOMPLETE_PARAMETER_LIST and CUFFT_LICENSE_ERROR restored" shim.err'
check "... and the old values: CUFFT_LICENSE_ERROR is 15" test "$(./fft)" = "success license error"
cc -I"$INC" -c advise_c.c -o plain.o 2>plain.err; s1=$?
"$NVSHIM" cc -I"$INC" advise_c.c -L"$LIB" -lcudart -o advise 2>shim.err; s2=$?
check "advise_c.c (C): plain cc fails on argument 4 of cudaMemAdvise, nvshim cc builds (_Generic)" eval \
	'test "$s1" != 0 -a "$s2" = 0 && grep -q "incompatible type for argument 4 of .cudaMemAdvise" plain.err && grep -q "cudaMemAdvise and cudaMemPrefetchAsync restored" shim.err'
check "... the object calls the CUDA 13 entry points with a location" eval 'nm advise | grep -q " U cudaMemAdvise"'
finish
