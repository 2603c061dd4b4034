#!/bin/bash
# Removed and changed CUDA APIs: a compile of CUDA 12 era code that fails on CUDA 13 gets one
# note per error naming the API, the toolkit that changed it and the replacement; nvcc's (or
# the host compiler's) own output and exit status stay as they are, and a compile that passes
# is byte for byte plain nvcc's. The fixed fixtures (the notes' replacements applied) build on
# 13.0 and on nvcc 13.5 (scripts/fetch-nvcc135.sh; those checks skip without it).
NVSHIM=$1 NVCC=$2
DIR=${NVSHIM_TOOLKITS:-/var/tmp/nvshim-toolkits} # read before lib.sh clears NVSHIM_*
. "$(dirname "$0")/lib.sh"
FIXTURES=$(cd "$(dirname "$0")/fixtures/api" && pwd)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
INCLUDE=$(dirname "$(dirname "$NVCC")")/include
NVCC135=$DIR/13.5/nvidia/cu13/bin/nvcc
cd "$WORK" || exit 1
cp "$FIXTURES"/* .
printf 'int f(void) { return 0; }\n' >other.c
export NVSHIM_NVCC=$NVCC
# The notes of a compile that fails: the compatibility layer (compat.sh) would make some of
# these fixtures build.
export NVSHIM_COMPAT=off

# without_notes FILE: the file without nvshim's api lines
without_notes() { grep -v '^nvshim info    : .*\[api\.\(removed\|changed\)\]$' "$1"; }
# notes FILE: the heads ("FILE:LINE: NAME") of its api notes
notes() { sed -n 's/^nvshim info    : \(.*\) \(was removed\|changed\) in CUDA [0-9.]*: .*/\1/p' "$1" | tr '\n' ' ' | sed 's/ $//'; }
# same_object A B: the same object once nvcc's random temporary names are normalised
same_object() { cmp -s <(normalise "$1") <(normalise "$2"); }

RUNTIME_NOTES="old_runtime.cu:6: texture old_runtime.cu:20: cudaDeviceProp::clockRate old_runtime.cu:20: cudaDeviceProp::computeMode old_runtime.cu:24: cudaMemAdvise old_runtime.cu:25: cudaMemPrefetchAsync old_runtime.cu:35: cudaStreamGetCaptureInfo old_runtime.cu:42: cudaGraphAddNode old_runtime.cu:43: cudaGraphAddDependencies old_runtime.cu:44: cudaThreadSynchronize"
DRIVER_NOTES="old_driver.cpp:13: cuCtxCreate old_driver.cpp:17: cuMemAdvise old_driver.cpp:18: cuMemPrefetchAsync old_driver.cpp:24: cuGraphAddDependencies old_driver.cpp:27: cudaDeviceProp::memoryClockRate"

check_toolkit() { # check_toolkit NAME NVCC
	local name=$1 tool=$2 s1 s2
	export NVSHIM_NVCC=$tool
	# A .cu of the runtime API through nvcc mode.
	"$tool" -c old_runtime.cu -o plain.o 2>plain.err; s1=$?
	"$NVSHIM" -c old_runtime.cu -o shim.o 2>shim.err; s2=$?
	check "$name: runtime .cu: nvcc's exit status ($s1)" test "$s1" -ne 0 -a "$s1" = "$s2"
	check "$name: runtime .cu: nvcc's stderr byte for byte, then the notes" cmp -s plain.err <(without_notes shim.err)
	check "$name: runtime .cu: one note per API and line" test "$(notes shim.err)" = "$RUNTIME_NOTES"
	check "$name: runtime .cu: only notes were added" test "$(wc -l <shim.err)" -eq $(($(wc -l <plain.err) + 9))
	check "$name: the note names the toolkit and the replacement" grep -qxF 'nvshim info    : old_runtime.cu:20: cudaDeviceProp::clockRate was removed in CUDA 13.0: use cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, device) [api.removed]' shim.err
	# A .cpp of the driver API, compiled by nvcc.
	"$tool" -c old_driver.cpp -o plain.o 2>plain.err; s1=$?
	"$NVSHIM" -c old_driver.cpp -o shim.o 2>shim.err; s2=$?
	check "$name: driver .cpp through nvcc: status and stderr kept" test "$s1" -ne 0 -a "$s1" = "$s2" -a "$(without_notes shim.err)" = "$(cat plain.err)"
	check "$name: driver .cpp through nvcc: its notes" test "$(notes shim.err)" = "$DRIVER_NOTES"
	check "$name: cuCtxCreate: what changed and the call to write" grep -qxF 'nvshim info    : old_driver.cpp:13: cuCtxCreate changed in CUDA 13.0: it is cuCtxCreate_v4, with a CUctxCreateParams * (NULL for none) before the flags; use cuCtxCreate(&ctx, NULL, flags, device) [api.changed]' shim.err
	# The replacements build, and that compile is plain nvcc's byte for byte.
	rm -f plain.o shim.o
	"$tool" -c new_runtime.cu -o plain.o 2>plain.err; s1=$?
	"$NVSHIM" -c new_runtime.cu -o shim.o 2>shim.err; s2=$?
	check "$name: the fixed runtime .cu builds" test "$s1" = 0 -a "$s2" = 0
	check "$name: ... with nvcc's stderr and object, byte for byte" eval 'cmp -s plain.err shim.err && same_object plain.o shim.o'
	"$tool" -c new_driver.cpp -o plain.o 2>plain.err; s1=$?
	"$NVSHIM" -c new_driver.cpp -o shim.o 2>shim.err; s2=$?
	check "$name: the fixed driver .cpp builds through nvcc, as nvcc builds it" eval 'test "$s1" = 0 -a "$s2" = 0 && cmp -s plain.err shim.err && same_object plain.o shim.o'
}

check_toolkit "nvcc 13.0" "$NVCC"
if [ -x "$NVCC135" ]; then
	check_toolkit "nvcc 13.5" "$NVCC135"
else
	skip "nvcc 13.5: the API notes and the fixed fixtures" "no $NVCC135 (scripts/fetch-nvcc135.sh)"
fi
export NVSHIM_NVCC=$NVCC

# CC mode: the host compiler on a .cpp that includes the CUDA headers.
for cxx in g++ clang++; do
	if ! command -v "$cxx" >/dev/null; then
		skip "CC mode with $cxx" "no $cxx"
		continue
	fi
	"$cxx" -I"$INCLUDE" -c old_driver.cpp -o plain.o 2>plain.err; s1=$?
	"$NVSHIM" "$cxx" -I"$INCLUDE" -c old_driver.cpp -o shim.o 2>shim.err; s2=$?
	check "CC mode ($cxx): its exit status and stderr kept" test "$s1" -ne 0 -a "$s1" = "$s2" -a "$(without_notes shim.err)" = "$(cat plain.err)"
	check "CC mode ($cxx): the notes" test "$(notes shim.err)" = "$DRIVER_NOTES"
	"$cxx" -I"$INCLUDE" -c new_driver.cpp -o plain.o 2>plain.err; s1=$?
	"$NVSHIM" "$cxx" -I"$INCLUDE" -c new_driver.cpp -o shim.o 2>shim.err; s2=$?
	check "CC mode ($cxx): the fixed .cpp builds, as $cxx builds it" eval 'test "$s1" = 0 -a "$s2" = 0 && cmp -s plain.err shim.err && cmp -s plain.o shim.o'
done
out=$("$NVSHIM" explain g++ -I"$INCLUDE" -c old_driver.cpp -o shim.o 2>&1)
check "explain g++: the held stderr and why" contains "$out" "^api       : its stderr held: a failed compile's errors about removed or changed CUDA APIs get notes (explain_api)$"
out=$("$NVSHIM" explain g++ -c other.c -o shim.o 2>&1)
check "explain g++ of a source without the CUDA headers: no api line" eval '! grep -q "^api " <<<"$out"'
# An error that is not about an API of the table: the compiler's output only.
printf '#include <cuda_runtime.h>\nint main() { return undefined_name; }\n' >other.cpp
g++ -I"$INCLUDE" -c other.cpp -o plain.o 2>plain.err; s1=$?
"$NVSHIM" g++ -I"$INCLUDE" -c other.cpp -o shim.o 2>shim.err; s2=$?
check "CC mode: an unrelated error: g++'s stderr and status only" eval 'test "$s1" = "$s2" && cmp -s plain.err shim.err'
printf 'int main() { return undefined_name; }\n' >k.cu
"$NVCC" -c k.cu -o plain.o 2>plain.err; s1=$?
"$NVSHIM" -c k.cu -o shim.o 2>shim.err; s2=$?
check "nvcc mode: an unrelated error: nvcc's stderr and status only" eval 'test "$s1" = "$s2" && cmp -s plain.err shim.err'

# Settings: off, the log, another table.
NVSHIM_EXPLAIN_API=false "$NVSHIM" -c old_runtime.cu -o shim.o 2>shim.err
"$NVCC" -c old_runtime.cu -o plain.o 2>plain.err
check "explain_api = false: nvcc's stderr only" cmp -s plain.err shim.err
NVSHIM_EXPLAIN_API=false "$NVSHIM" g++ -I"$INCLUDE" -c old_driver.cpp -o shim.o 2>shim.err
g++ -I"$INCLUDE" -c old_driver.cpp -o plain.o 2>plain.err
check "explain_api = false: g++'s stderr only" cmp -s plain.err shim.err
NVSHIM_LOG_FILE=$WORK/log.json "$NVSHIM" -c old_driver.cpp -o shim.o 2>/dev/null
check "the log's notes carry the API notes" python3 -c '
import json, sys
e = json.loads(open(sys.argv[1]).read().splitlines()[-1])
n = [x for x in e["notes"] if x.endswith("[api.changed]") or x.endswith("[api.removed]")]
sys.exit(not (len(n) == 5 and n[0].startswith("old_driver.cpp:13: cuCtxCreate changed in CUDA 13.0")))' "$WORK/log.json"
cat >mine.ini <<'INI'
[api cuCtxCreate]
version = 13.0
change = changed
what = a test table
use = my_ctx_create()
also = cuCtxCreate_v4
bogus line
INI
NVSHIM_API_FILE=$WORK/mine.ini "$NVSHIM" -c old_driver.cpp -o shim.o 2>shim.err
check "api_file: its entries only, and its problems named" test "$(grep '^nvshim' shim.err)" = "nvshim warning : $WORK/mine.ini:7: expected 'name = value', found 'bogus line'
nvshim info    : old_driver.cpp:13: cuCtxCreate changed in CUDA 13.0: a test table; use my_ctx_create() [api.changed]"

# nvshim explain-api NAME, and the same through explain.
out=$("$NVSHIM" explain-api cudaDeviceProp::clockRate 2>&1); s1=$?
check "explain-api: an entry" test "$s1" = 0 -a "$out" = "cudaDeviceProp::clockRate: removed in CUDA 13.0
  use:     cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, device)
  example: int khz = 0; cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device);
  compat:  include/nvshim/compat/runtime.h, the field read rewritten in a private copy of the source or header that reads it, in the retry of a compile that failed on it
  migrate: OBJ.clockRate -> nvshim_migrate_attr(cudaDevAttrClockRate, DEVICE), DEVICE the one passed to cudaGetDeviceProperties(&OBJ, DEVICE); a static helper calling cudaDeviceGetAttribute is added after the leading #includes; where no such call is in sight and OBJ is declared a cudaDeviceProp, nvshim_migrate_prop_attr(&(OBJ), cudaDevAttrClockRate), the device whose PCI ids are the struct's, guarded by #if CUDART_VERSION >= 13000"
check "explain-api: an entry of CCCL 3.0, its compat header and its migrate form" eval \
	'"$NVSHIM" explain-api cub::Max | grep -qxF "  compat:  include/nvshim/compat/cub.h, in the retry of a compile that failed on it" &&
	 "$NVSHIM" explain-api cub::Max | grep -qxF "  migrate: cub::Max -> cuda::maximum<>, guarded by #if CCCL_MAJOR_VERSION >= 3"'
check "explain-api: an also spelling with a recipe of its own shows that one" eval \
	'"$NVSHIM" explain-api cub::DiscardOutputIterator | grep -qF "  migrate: cub::DiscardOutputIterator<> and cub::DiscardOutputIterator<OffsetT> -> thrust::discard_iterator<>"'
check "explain-api: an entry with nocompat says why" eval \
	'"$NVSHIM" explain-api cub/device/device_spmv.cuh | grep -qxF "  compat:  none: CCCL 3.0 removed the algorithm itself (cub/device/device_spmv.cuh)"'
check "explain-api: prop.clockRate and a spelling (cuCtxCreate_v4) find their entries" eval \
	'test "$("$NVSHIM" explain-api cudaDeviceProp.clockRate)" = "$out" && "$NVSHIM" explain-api cuCtxCreate_v4 | head -1 | grep -qx "cuCtxCreate: changed in CUDA 13.0"'
check "explain api NAME: the same" test "$("$NVSHIM" explain api cudaDeviceProp::clockRate 2>&1)" = "$out"
"$NVSHIM" explain-api noSuchApi >out 2>err; s1=$?
check "explain-api: an unknown name is an error" test "$s1" = 1 -a ! -s out -a -n "$(grep 'noSuchApi: not in the API table' err)"
check "explain-api --list: every entry" test "$("$NVSHIM" explain-api --list | wc -l)" -eq "$(grep -c '^\[api ' "$ROOT/config/api.ini")"
# The table against what the 12.9 headers declare and 13.0 (and 13.5) do not, or declare
# differently: every symbol is covered.
CU12=$DIR/cu12-runtime/nvidia/cuda_runtime/include
TABLE=$ROOT/config/api.ini
COVERAGE=$ROOT/scripts/api-coverage.py
if [ -f "$CU12/cuda_runtime_api.h" ]; then
	out=$(python3 "$COVERAGE" --old "$CU12" --new "$INCLUDE" --table "$TABLE")
	total=$(sed -n 's/^total: \([0-9]*\) of \([0-9]*\) .*/\1 \2/p' <<<"$out")
	check "coverage, 12.9 -> 13.0: every removed or changed symbol is in the table ($total)" eval \
		'set -- $total; test "$#" = 2 -a "$2" -ge 68 -a "$1" = "$2"'
	if [ -x "$NVCC135" ]; then
		out=$(python3 "$COVERAGE" --old "$CU12" --new "$(dirname "$(dirname "$NVCC135")")/include" --table "$TABLE")
		total=$(sed -n 's/^total: \([0-9]*\) of \([0-9]*\) .*/\1 \2/p' <<<"$out")
		check "coverage, 12.9 -> 13.5: every removed or changed symbol is in the table ($total)" eval \
			'set -- $total; test "$#" = 2 -a "$1" = "$2"'
	fi
else
	skip "coverage of the table" "no CUDA 12.9 runtime headers in $DIR/cu12-runtime (scripts/fetch-nvcc135.sh)"
fi
finish
