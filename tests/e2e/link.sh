#!/bin/bash
# The link pass against the real nvcc and host compiler: host code that calls the CUDA driver
# API (cuTensorMapEncodeTiled) gets -lcuda where plain builds forget it. A shared library built
# the way PyTorch's extension builder does it (nvcc -c, then c++ -shared) records libcuda.so.1
# and loads next to a test libcuda.so.1 (built here: this machine has no driver); an executable
# links through `nvshim -arch=sm_90a x.cu -o x` (the retry); links with nothing to fix are
# left alone, byte for byte.
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"
FIX=$(cd "$(dirname "$0")/fixtures/link" && pwd)
B=${NVSHIM_BUILD_DIR:-$(dirname "$NVSHIM")}
CC_DIR="$B/libexec/nvshim/cc"
CUDA_LIB="$(dirname "$NVCC")/../lib64"
STUBS="$CUDA_LIB/stubs"
# The pass must find the toolkit's stubs itself, whatever the machine sets.
unset LIBRARY_PATH
cd "$WORK" || exit 1
cp "$FIX"/* .
mkdir -p driver
gcc -shared -fPIC -Wl,-soname,libcuda.so.1 fakecuda.c -o driver/libcuda.so.1 && gcc load.c -o load -ldl ||
	{ not_ok "test libcuda and loader build"; finish; exit; }
needs_libcuda() { readelf -d "$1" | grep -q 'NEEDED.*\[libcuda\.so\.1\]'; }

# PyTorch's way: nvcc -c -Xcompiler -fPIC, then the host C++ compiler links with no -lcuda.
"$NVCC" -c -Xcompiler -fPIC tma.cu -o tma.o
c++ -shared tma.o -o plain.so -L"$CUDA_LIB" -lcudart
check "c++ -shared without nvshim: no libcuda.so.1 needed" sh -c "! readelf -d plain.so | grep -q 'libcuda\.so'"
out=$(LD_LIBRARY_PATH=driver ./load ./plain.so)
check "without nvshim: loading fails with undefined symbol" contains "$out" "undefined symbol: cu"
"$CC_DIR/c++" -shared tma.o -o shim.so -L"$CUDA_LIB" -lcudart 2>err
check "CXX=nvshim: c++ -shared links" test $? -eq 0 -a -s shim.so
check "CXX=nvshim: the note names the symbols" grep -qx "nvshim warning : added -lcuda: cu[A-Za-z]* is undefined in tma.o (also cu.*) and no input provides it \[link.lcuda\]" err
check "CXX=nvshim: the toolkit's stubs, as no libcuda.so is on the linker's path" grep -q "added -L.*stubs: no libcuda.so on the linker's path" err
check "CXX=nvshim: readelf -d shows libcuda.so.1 needed" needs_libcuda shim.so
out=$(LD_LIBRARY_PATH=driver ./load ./shim.so make_map)
check "CXX=nvshim: dlopen(RTLD_NOW) next to a test libcuda.so.1 succeeds and builds a map" \
	contains "$out" "^loaded ./shim.so" "cuTensorMapEncodeTiled: CUDA_SUCCESS"
out=$(./load ./shim.so)
check "CXX=nvshim: and without one, it is libcuda.so.1 that is missing" contains "$out" "libcuda.so.1: cannot open"
# With the stubs on the linker's path already, -lcuda is all it takes.
LIBRARY_PATH="$STUBS" "$CC_DIR/c++" -shared tma.o -o shim2.so -L"$CUDA_LIB" -lcudart 2>err
check "LIBRARY_PATH with the stubs: -lcuda only" sh -c "grep -q 'added -lcuda' err && ! grep -q 'added -L' err"
check "LIBRARY_PATH with the stubs: libcuda.so.1 needed" needs_libcuda shim2.so
# nvcc -shared from objects: the pass reads them before the link.
"$NVSHIM" -shared tma.o -o nvcc.so -Xcompiler -fPIC 2>err
check "nvcc -shared: -lcuda added" sh -c "grep -q 'added -lcuda: cu[A-Za-z]* is undefined in tma.o' err"
check "nvcc -shared: libcuda.so.1 needed" needs_libcuda nvcc.so

# An executable from the same host code: plain nvcc fails at link, nvshim retries with -lcuda.
cat tma.cu main.cu >x.cu
"$NVCC" -arch=sm_90a x.cu -o plain_x 2>err
check "nvcc -arch=sm_90a x.cu: plain nvcc fails at link" grep -q "undefined reference to \`cuTensorMapEncodeTiled'" err
"$NVSHIM" -arch=sm_90a x.cu -o x 2>err
check "nvshim -arch=sm_90a x.cu -o x: links" test $? -eq 0 -a -x x
check "the retry is explained" grep -qx "nvshim warning : the link failed on an undefined reference to cu[A-Za-z]*: running it again with -lcuda \[link.retry\]" err
check "the first run's errors are not shown" sh -c "! grep -q 'undefined reference to .cu[A-Za-z]*.\$' err"
check "the executable needs libcuda.so.1" needs_libcuda x
check "the executable builds a map (test libcuda)" sh -c "LD_LIBRARY_PATH=driver ./x | grep -q 'cuTensorMapEncodeTiled: CUDA_SUCCESS'"
# From objects no retry is needed.
"$NVCC" -c main.cu -o main.o
"$NVSHIM" tma.o main.o -o app 2>err
check "nvcc link of objects: -lcuda added up front" sh -c "grep -q 'added -lcuda' err && ! grep -q link.retry err"
# Host compiler links: an object, and a source compiled in the same run (the retry).
"$CC_DIR/g++" main.o tma.o -o app2 -L"$CUDA_LIB" -lcudart 2>err
check "g++ link of objects: -lcuda added" sh -c "grep -q 'added -lcuda' err && test -x app2"
printf '#include <cuda.h>\nint main(void) { return cuInit(0); }\n' >init.c
"$CC_DIR/gcc" -I"$(dirname "$NVCC")/../include" init.c -o init 2>err
check "gcc init.c -o init: retried with the stubs and -lcuda" sh -c "grep -q 'undefined reference to cuInit: running it again with -L.*stubs -lcuda' err && test -x init"
check "gcc init.c: needs libcuda.so.1" needs_libcuda init

# Nothing to fix: nothing changes, and the output is nvcc's, byte for byte.
printf '__global__ void k(float *x) { x[0] = 1; }\nint main() { return 0; }\n' >kernel_only.cu
"$NVCC" -c -Xcompiler -fPIC kernel_only.cu -o k.o
export NVSHIM_LOG_FILE="$WORK/log.jsonl"
"$CC_DIR/c++" -shared k.o -o k.so -L"$CUDA_LIB" -lcudart 2>err
check "no driver call: no note" test ! -s err
check "no driver call: the command line is the user's" sh -c "tail -1 '$NVSHIM_LOG_FILE' | grep -q '\"argv_out\":\[\"/[^\"]*c++\",\"-shared\",\"k.o\",\"-o\",\"k.so\",\"-L[^\"]*\",\"-lcudart\"\]'"
"$NVCC" kernel_only.cu -o prog_nvcc 2>nvcc.err
"$NVSHIM" kernel_only.cu -o prog_shim 2>shim.err
check "a link with nothing to fix: same stderr" cmp -s nvcc.err shim.err
check "a link with nothing to fix: the same program" cmp -s <(normalise prog_nvcc) <(normalise prog_shim)
unset NVSHIM_LOG_FILE
# A link that fails for another reason: nvcc's stderr, unchanged, and its status.
printf 'int missing_function(void);\nint main() { return missing_function(); }\n' >missing.cu
"$NVCC" missing.cu -o m1 2>nvcc.err; st1=$?
"$NVSHIM" missing.cu -o m2 2>shim.err; st2=$?
check "a failing link is passed through: status" test $st1 -eq $st2 -a $st1 -ne 0
check "a failing link is passed through: stderr" sh -c "normalise() { perl -0777 -pe 's/tmpxft_[0-9a-f]{8}_[0-9a-f]{8}/T/g' \"\$1\"; }; test \"\$(normalise nvcc.err)\" = \"\$(normalise shim.err)\""
# Turned off: nvcc's own failure.
NVSHIM_LINK_LCUDA=false "$NVSHIM" -arch=sm_90a x.cu -o off 2>err
check "link_lcuda = false: nvcc's failure, untouched" sh -c "grep -q 'undefined reference' err && ! grep -q '\[link' err"
NVSHIM_LINK_LCUDA=false "$CC_DIR/c++" -shared tma.o -o off.so 2>err
check "link_lcuda = false: c++ -shared unchanged" sh -c "! readelf -d off.so | grep -q libcuda && test ! -s err"
# Already there.
"$CC_DIR/c++" -shared tma.o -o there.so -L"$STUBS" -lcuda 2>err
check "-lcuda given: no note" test ! -s err
check "-lcuda given: it links" needs_libcuda there.so

# A damaged input: skipped with a note, and the linker's own error is what fails the link.
head -c 400 tma.o >cut.o
"$CC_DIR/c++" -shared cut.o -o cut.so 2>err
st=$?
check "damaged object: noted, never a crash" sh -c "test $st -ne 0 -a $st -lt 128 && grep -q 'skipped cut.o when looking for driver symbols' err"
check "damaged object: the linker's message is there" grep -q "cut.o" err

# explain shows the decision and runs nothing.
out=$("$NVSHIM" explain c++ -shared tma.o -o never.so)
check "explain c++ -shared: the link line and the note" contains "$out" "^link      : -lcuda added (cu[A-Za-z]*)" \
	"^note      : added -lcuda" "^command   : .*c++ -shared tma.o -o never.so -L.*stubs -lcuda$"
out=$("$NVSHIM" explain -arch=sm_90a x.cu -o never)
check "explain nvcc link of a source: the retry" contains "$out" "^link      : .* runs again with -lcuda"
check "explain ran nothing" test ! -e never.so -a ! -e never
finish
