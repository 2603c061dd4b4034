#!/bin/bash
# The compatibility layer where real projects first found it silent (docs/compat.md, "Real
# projects: the corpus"): a removed base class whose follow-on errors name nothing in the table
# (dedisp, tsne-cuda), calls written over several lines (cuda-samples' CG), CC mode on sources
# whose cuda.h comes through a project header (pycuda) or that include only cufft.h (bart), C
# sources with an int device (bart's gpuops.c); removed fields read in project headers
# (moderngpu); and `nvshim migrate` on a name passed to a macro apart from its arguments. Each:
# plain fails, nvshim builds with one compat.restored note.
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

# 5. Removed fields read in project headers (moderngpu's context.hxx): private copies of those
# headers in a mirror of their tree. inc/lib/devprop.h is reached through -Iinc and includes a
# sibling ("sib.h") and "../common/util.h"; src/local.h is next to the source.
mkdir -p hdr && cp -r "$(dirname "$FIXTURES")"/compat_headers/. hdr/ && cd hdr || exit 1
sums() { find . -type f \( -name '*.h' -o -name '*.cu' -o -name '*.c' -o -name '*.cpp' \) | sort | xargs sha256sum; }
before=$(sums)
left() { find "$WORK" -maxdepth 1 -name 'nvshim-compat-*' | wc -l; }
"$NVCC" -Iinc src/a.cu -o a 2>plain.err; s1=$?
NVSHIM_LOG_FILE=$WORK/hdr.json "$NVSHIM" -Iinc src/a.cu -o a 2>shim.err; s2=$?
check "a.cu: plain nvcc fails on fields read in headers (through -I, a sibling, ../, next to the source)" eval \
	'test "$s1" != 0 && grep -q "^inc/lib/devprop.h(11): error: class \"cudaDeviceProp\" has no member \"clockRate\"" plain.err && grep -q "^inc/lib/sib.h(3): error" plain.err && grep -q "^inc/lib/../common/util.h(4): error" plain.err && grep -q "^src/local.h(3): error" plain.err'
check "... through nvshim it builds: one note naming the four headers copied (5 reads: the template's too)" eval \
	'test "$s2" = 0 -a "$(wc -l <shim.err)" = 1 -a "$(restored shim.err)" = 1 && grep -q "5 field reads rewritten in private copies of inc/lib/sib.h, inc/lib/../common/util.h, inc/lib/devprop.h and src/local.h (the files themselves are untouched" shim.err && grep -q "nvshim migrate inc/lib/sib.h inc/lib/../common/util.h inc/lib/devprop.h src/local.h\`" shim.err'
check "... __FILE__ of the source and of a copied header are the user's; the reads work (no device: 0)" \
	test "$(./a)" = "src/a.cu inc/lib/devprop.h 0 0 0 0 0"
check "... the JSON log has the note with the files" python3 -c '
import json, sys
e = json.loads(open(sys.argv[1]).read().splitlines()[-1])
sys.exit(not (e["status"] == 0 and any(n.endswith("[compat.restored]") and "inc/lib/devprop.h" in n for n in e["notes"])))' "$WORK/hdr.json"
# -MD -MF: the dependency file names the user's paths, as plain nvcc -M does
"$NVSHIM" -Iinc -c src/a.cu -o a.o -MD -MF a.d 2>err; s=$?
"$NVCC" -Iinc -M src/a.cu -MT a.o >plain.d
check "... -MD -MF: the dependency file is plain nvcc -M's, line for line (nvshim's own headers not in it)" eval \
	'test "$s" = 0 && grep -q "^ *inc/lib/devprop.h" a.d && cmp -s a.d plain.d && test "$(grep -c "/nvshim/" a.d)" = 0'
# a second source with the same header, which reads a field itself too
"$NVSHIM" -Iinc -c src/b.cu -o b.o 2>err; s=$?
check "b.cu (the same header, and a read of its own): builds, its copy and the headers' named" eval \
	'test "$s" = 0 -a -s b.o && grep -q "5 field reads rewritten in private copies of src/b.cu, inc/lib/sib.h, .*inc/lib/devprop.h (the files" err && grep -q "nvshim migrate src/b.cu inc/lib/" err'
# an error of the program's own in a header, beside a removed field: fails as plain nvcc does
"$NVCC" -Iinc -c src/c.cu -o c.o 2>plain.err; s1=$?
NVSHIM_VERBOSITY=verbose "$NVSHIM" -Iinc -c src/c.cu -o c.o 2>c.err; s2=$?
check "c.cu (a header with an undeclared name): fails with nvcc's status and errors, one retry (compat.failed)" eval \
	'test "$s1" != 0 -a "$s2" = "$s1" && grep -q "^src/bad.h(3): error: identifier \"undeclared_in_header\" is undefined" c.err && grep -q "\[compat\.failed\]" c.err && ! grep -q "compat\.restored" c.err && test ! -e c.o'
# a header outside the source's directory and the -I directories: no copy, no retry
NVSHIM_VERBOSITY=verbose "$NVSHIM" -c solo/x.cu -o x.o 2>x.err; s=$?
check "solo/x.cu (\"../inc/common/util.h\", no -I): not the project's to copy, fails as nvcc does" eval \
	'test "$s" != 0 && grep -q "is not a project header" x.err && ! grep -q "compiling again" x.err'
# CC mode: C++ with a header next to the source and one through -iquote; C, where only the lines
# reported are rewritten (a struct of the program's own with a field of the same name stays)
c++ -I"$INC" -iquote cc/q -c cc/devq.cpp -o plain.o 2>plain.err; s1=$?
"$NVSHIM" c++ -I"$INC" -iquote cc/q cc/devq.cpp -L"$LIB" -lcudart -o devq 2>err; s2=$?
check "cc/devq.cpp: plain c++ fails, nvshim c++ builds (cc/devq.h, cc/q/qhdr.h copied)" eval \
	'test "$s1" != 0 -a "$s2" = 0 && grep -q "private copies of cc/devq.h and cc/q/qhdr.h" err && test "$(./devq)" = "0 0"'
cc -I"$INC" -c cc/devq.c -o plain.o 2>plain.err; s1=$?
"$NVSHIM" cc -I"$INC" cc/devq.c -L"$LIB" -lcudart -o devqc 2>err; s2=$?
check "cc/devq.c (C): plain cc fails, nvshim cc builds; the own struct's field is read as it is" eval \
	'test "$s1" != 0 -a "$s2" = 0 && grep -q "2 field reads rewritten in private copies of cc/devq.h and cc/own.h" err && test "$(./devqc)" = "0 7 0"'
check "the user's files are unchanged, no private tree is left" eval 'test "$(sums)" = "$before" -a "$(left)" = 0'
finish
