#!/bin/bash
# Toolkit gates: known-bad combinations said before nvcc runs, one line each with its advice,
# and silent otherwise. Fake nvccs of older versions (scripts that answer --version), fake host
# compilers (scripts that answer --version and otherwise are the machine's g++), the real nvcc.
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"
cd "$WORK" || exit 1
printf '__global__ void k(float *p) { p[threadIdx.x] = 1; }\n' >k.cu
printf '#include <cute/tensor.hpp>\n__global__ void k(float *p) { p[0] = 1; }\n' >cute.cu
mkdir -p cutlass/include other/include fake
fake_nvcc() { # fake_nvcc VERSION: an nvcc that says it is VERSION and compiles nothing
	cat >"fake/nvcc-$1" <<SH
#!/bin/sh
[ "\$1" = --version ] && printf 'nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release ${1%.*}, V$1\n'
exit 0
SH
	chmod +x "fake/nvcc-$1"
}
fake_gcc() { # fake_gcc VERSION: g++ that says it is VERSION, and logs each time it is asked
	cat >"fake/g++-v$1" <<SH
#!/bin/sh
if [ "\$1" = --version ]; then
	echo asked >>"$WORK/asked-$1"
	printf 'g++ (GCC) $1 20990101\nCopyright (C) 2099 Free Software Foundation, Inc.\n'
	exit 0
fi
exec g++ "\$@"
SH
	chmod +x "fake/g++-v$1"
}
fake_nvcc 11.7.99
fake_nvcc 11.8.89
fake_gcc 99.1.0
fake_gcc 12.2.0

CUTLASS_LINE="nvshim warning : CUTLASS 3 and CuTe are known to fail or crash nvcc older than 11.8, and this is nvcc 11.7.99: build with a newer CUDA toolkit (CUDA_HOME, or nvshim's real_nvcc setting), or use CUTLASS 2.x [gate cutlass_old_toolkit]"
export NVSHIM_NVCC="$WORK/fake/nvcc-11.7.99"
# The machine's gcc may be newer than 11.8's limit: these lines silence that gate.
export NVSHIM_SILENCE_GATES=host_compiler_too_new
out=$("$NVSHIM" -c k.cu -I "$WORK/cutlass/include" 2>&1)
check "CUTLASS include dir with nvcc 11.7: one line with advice, status 0" test $? -eq 0 -a "$out" = "$CUTLASS_LINE"
out=$("$NVSHIM" -c cute.cu 2>&1)
check "#include <cute/...> with nvcc 11.7: the same line" test "$out" = "$CUTLASS_LINE"
out=$("$NVSHIM" -c k.cu -isystem "$WORK/third_party/cutlass-3.5.1/include" 2>&1)
check "-isystem .../cutlass-3.5.1/include: the same line" test "$out" = "$CUTLASS_LINE"
out=$("$NVSHIM" -c k.cu -I "$WORK/other/include" 2>&1)
check "no CUTLASS: nothing" test -z "$out"
out=$(NVSHIM_SILENCE_GATES=host_compiler_too_new,cutlass_old_toolkit "$NVSHIM" -c cute.cu 2>&1)
check "silence_gates names it: nothing" test -z "$out"
out=$(NVSHIM_SILENCE_GATES=all "$NVSHIM" -c cute.cu 2>&1)
check "silence_gates = all: nothing" test -z "$out"
out=$("$NVSHIM" --dryrun -c cute.cu 2>&1)
check "--dryrun: no gate" test -z "$out"
out=$(NVSHIM_NVCC="$WORK/fake/nvcc-11.8.89" "$NVSHIM" -c cute.cu 2>&1)
check "nvcc 11.8: nothing" test -z "$out"
out=$(NVSHIM_NVCC= "$NVSHIM" -c k.cu -o k.o -I "$WORK/cutlass/include" 2>&1)
check "the machine's nvcc with CUTLASS: nothing, and it builds" test $? -eq 0 -a -z "$out" -a -s k.o
unset NVSHIM_SILENCE_GATES

# A host compiler newer than the nvcc accepts: the real nvcc reads it from its host_config.h.
HOST_RE="^nvshim warning : the host compiler gcc 99.1.0 is newer than nvcc [0-9.]* accepts (gcc [0-9]* at most): pass -ccbin with an accepted compiler.*, or -allow-unsupported-compiler at your own risk \[gate host_compiler_too_new\]$"
unset NVSHIM_NVCC
"$NVCC" -c k.cu -o plain.o -ccbin "$WORK/fake/g++-v99.1.0" 2>plain.err
plain=$?
"$NVSHIM" -c k.cu -o k.o -ccbin "$WORK/fake/g++-v99.1.0" 2>err
st=$?
check "-ccbin gcc 99 with the real nvcc: one line with advice" test "$(grep -c . err | tail -1)" -ge 1 -a -n "$(grep "$HOST_RE" err)"
check "-ccbin gcc 99: nvcc runs as it would without nvshim" sh -c "test $st -eq $plain && grep -v '^nvshim ' err | cmp -s - plain.err"
out=$("$NVSHIM" -c k.cu -o k.o -ccbin "$WORK/fake/g++-v99.1.0" -allow-unsupported-compiler 2>&1)
check "-allow-unsupported-compiler: nothing" test -z "$out"
out=$(NVCC_CCBIN="$WORK/fake/g++-v99.1.0" "$NVSHIM" -c k.cu -o k.o 2>&1)
check "NVCC_CCBIN gcc 99: the line" grep -q "$HOST_RE" <<<"$out"
out=$(NVSHIM_SILENCE_GATES=host_compiler_too_new "$NVSHIM" -c k.cu -o k.o -ccbin "$WORK/fake/g++-v99.1.0" 2>&1)
check "silenced: nothing" test -z "$out"
out=$("$NVSHIM" -c k.cu -o k.o 2>&1)
check "the machine's host compiler and nvcc: nothing" test -z "$out"
check "the host compiler's version is asked once, then cached" test "$(wc -l <"$WORK/asked-99.1.0")" -eq 1

# Without a host_config.h next to nvcc, the table's [host_compilers]: nvcc 11.8 takes gcc 11.
out=$(NVSHIM_NVCC="$WORK/fake/nvcc-11.8.89" "$NVSHIM" -c k.cu -ccbin "$WORK/fake/g++-v12.2.0" 2>&1)
check "nvcc 11.8 (table) with gcc 12.2: the line" test "$out" = "nvshim warning : the host compiler gcc 12.2.0 is newer than nvcc 11.8.89 accepts (gcc 11 at most): pass -ccbin with an accepted compiler, or -allow-unsupported-compiler at your own risk [gate host_compiler_too_new]"
out=$(NVSHIM_NVCC="$WORK/fake/nvcc-11.7.99" "$NVSHIM" -c k.cu -ccbin "$WORK/fake/g++-v12.2.0" 2>&1)
check "nvcc 11.7, not in the table: nothing (fail open)" test -z "$out"

# Another table: gates_file, and one found relative to the executable.
cat >mygates.ini <<'INI'
[gate mylib_new_nvcc]
includes = mylib
nvcc_at_least = 11.8
message = mylib breaks with nvcc %nvcc%
advice = use mylib 2
bogus line
INI
mkdir -p mylib
out=$(NVSHIM_NVCC="$WORK/fake/nvcc-11.8.89" NVSHIM_GATES_FILE="$WORK/mygates.ini" "$NVSHIM" -c k.cu -I "$WORK/mylib" -ccbin "$WORK/fake/g++-v12.2.0" 2>&1)
check "gates_file: its gates only, and its problems named" test "$out" = "nvshim warning : $WORK/mygates.ini:6: expected 'name = value', found 'bogus line'
nvshim warning : mylib breaks with nvcc 11.8.89: use mylib 2 [gate mylib_new_nvcc]"
mkdir -p prefix/bin prefix/etc/nvshim
cp "$NVSHIM" prefix/bin/nvshim
head -5 mygates.ini >prefix/etc/nvshim/gates.ini
out=$(NVSHIM_NVCC="$WORK/fake/nvcc-11.8.89" prefix/bin/nvshim -c k.cu -I "$WORK/mylib" 2>&1)
check "<prefix>/etc/nvshim/gates.ini is used when present" test "$out" = "nvshim warning : mylib breaks with nvcc 11.8.89: use mylib 2 [gate mylib_new_nvcc]"

finish
