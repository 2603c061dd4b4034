#!/bin/bash
# The compatibility layer (docs/compat.md): CUDA 12 era sources that fail on CUDA 13.0 only on
# APIs the table marks `compat` build through nvshim, in every path a compile takes (-c,
# compile-and-link, -dc, CC mode with .c and .cpp, ccache in front and behind), with one extra
# compile of that source and the user's file untouched; a source that compiles is plain nvcc's
# byte for byte with one compile; an unrelated error, a `nocompat` entry and compat = off leave
# nvcc's failure as it was. The fixtures also build with CUDA 12.9's headers, and their hand-fixed
# forms with plain nvcc 13.0. tests/gpu/compat.sh runs them on a GPU.
NVSHIM=$1 NVCC=$2
DIR=${NVSHIM_TOOLKITS:-/var/tmp/nvshim-toolkits} # read before lib.sh clears NVSHIM_*
. "$(dirname "$0")/lib.sh"
B=${NVSHIM_BUILD_DIR:-$(dirname "$NVSHIM")}
NV=$B/libexec/nvshim/bin/nvcc
FIXTURES=$(cd "$(dirname "$0")/fixtures/compat" && pwd) || exit 1
INC=$(dirname "$(dirname "$NVCC")")/include
STUBS=$(dirname "$(dirname "$NVCC")")/lib64/stubs
CU12=$DIR/cu12-runtime/nvidia/cuda_runtime/include
cd "$WORK" || exit 1
cp "$FIXTURES"/* .
# A stand-in nvcc that records its command lines (the real one does the work).
mkdir -p bin tmp
printf '#!/bin/sh\necho "$*" >>"%s/runs"\nexec "%s" "$@"\n' "$WORK" "$NVCC" >bin/nvcc
chmod +x bin/nvcc
export NVSHIM_NVCC=$WORK/bin/nvcc TMPDIR=$WORK/tmp
# runs: how many compiles (lines with -c or -dc) ran since the last call
runs() { local n; n=$(grep -cE -- '(^| )-(c|dc)( |$)' "$WORK/runs" 2>/dev/null); rm -f "$WORK/runs"; echo "${n:-0}"; }
restored() { grep -c '\[compat\.restored\]$' "$1"; }
same_object() { cmp -s <(normalise "$1") <(normalise "$2"); }
SOURCES="devinfo.cu memadvise.cu ctx_old.cpp ctx_old.c devinfo_c.c memadvise_c.c"
# shellcheck disable=SC2086
sum0=$(sha256sum $SOURCES)

# -c: the removed cudaDeviceProp fields.
"$NVCC" -c devinfo.cu -o plain.o 2>plain.err; s1=$?
"$NVSHIM" -c clean.cu -o shim.o 2>/dev/null # the toolkit's facts, read once and cached
runs >/dev/null
"$NVSHIM" -c devinfo.cu -o shim.o 2>shim.err; s2=$?
check "devinfo.cu: plain nvcc 13.0 fails on the removed fields" test "$s1" -ne 0 -a "$(grep -c 'has no member' plain.err)" = 8
check "devinfo.cu -c: builds through the layer" test "$s2" = 0 -a -s shim.o
check "... with one extra compile of that source" test "$(runs)" = 2
check "... one note: what was restored, how, and the lasting fix" eval 'test "$(wc -l <shim.err)" = 1 -a "$(restored shim.err)" = 1 && grep -q "cudaDeviceProp::clockRate, .*cudaDeviceProp::maxTexture1DLinear restored .*8 field reads rewritten in a private copy of devinfo.cu .*nvshim migrate devinfo.cu" shim.err'
check "... the object reads the attributes (cudaDeviceGetAttribute)" eval 'nm shim.o | grep -q " U cudaDeviceGetAttribute"'
check "... the private copy is gone" test -z "$(ls tmp)"
# compile-and-link and -dc
"$NVSHIM" devinfo.cu -o devinfo 2>err; s=$?
check "devinfo.cu compile-and-link: builds, runs" eval 'test "$s" = 0 -a "$(restored err)" = 1 && ./devinfo >/dev/null'
"$NVSHIM" -dc devinfo.cu -o dc.o 2>err; s=$?
check "devinfo.cu -dc: builds, and links" eval 'test "$s" = 0 -a "$(restored err)" = 1 && "$NVCC" dc.o -o dcapp'
# The issue's project: a CUDA 12 -gencode list (compute_70, which 13.0 rejects) and the printout:
# the targets pass drops sm_70, the modules pass runs the compile, the layer restores the fields.
NVSHIM_LOG_FILE=$WORK/list.json "$NVSHIM" -c devinfo.cu -o list.o -gencode arch=compute_70,code=sm_70 \
	-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 2>err; s=$?
check "a CUDA 12 -gencode list and the removed fields: builds (sm_70 dropped, the fields restored)" eval \
	'test "$s" = 0 -a "$(restored err)" = 1 && grep -q "dropped sm_70" err'
check "... and the log has the note" python3 -c '
import json, sys
e = json.loads(open(sys.argv[1]).read().splitlines()[-1])
sys.exit(not (e["status"] == 0 and any(n.endswith("[compat.restored]") for n in e["notes"])))' "$WORK/list.json"
if [ -n "$(find_cuobjdump)" ]; then
	check "... for sm_80 and sm_90" test "$(elf_targets list.o)" = "sm_80 sm_90"
fi
# __FILE__, __LINE__, warnings and dependencies name the user's file
cat >where.cu <<'CU'
#include <cstdio>
#include <cuda_runtime.h>
#warning "an old file"
int khz(const cudaDeviceProp &p) { return p.clockRate; }
int main() { std::printf("%s:%d\n", __FILE__, __LINE__); return 0; }
CU
"$NVSHIM" where.cu -o where -MD -MF where.d 2>err; s=$?
check "where.cu: __FILE__ and __LINE__ are the user's" eval 'test "$s" = 0 && test "$(./where)" = "where.cu:5"'
check "... the retry's warning names where.cu:3" grep -q '^where.cu:3:2: warning: #warning "an old file"' err
check "... the dependency file names where.cu, not the copy" eval 'grep -q "where.cu" where.d && ! grep -q nvshim-compat where.d'
# "local.h" next to the source is the one found, before an -I directory's of the same name.
mkdir -p sub other
printf '#define LOCAL_VALUE 7\n' >sub/local.h
printf '#error the wrong local.h\n' >other/local.h
printf '#include <cstdio>\n#include <cuda_runtime.h>\n#include "local.h"\nint main() { cudaDeviceProp p = {}; std::printf("%%d %%d\\n", LOCAL_VALUE, p.clockRate); return 0; }\n' >sub/inc.cu
"$NVSHIM" sub/inc.cu -Iother -o inc 2>err; s=$?
check "a source in another directory: its own \"local.h\" is found (nvcc)" eval 'test "$s" = 0 && test "$(./inc)" = "7 0"'
cp sub/inc.cu sub/inc.cpp
"$NVSHIM" g++ -I"$INC" -c sub/inc.cpp -Iother -o inc.o 2>err; s=$?
check "a source in another directory: its own \"local.h\" is found (CC mode)" test "$s" = 0 -a -s inc.o
# changed signatures: cudaMemAdvise/cudaMemPrefetchAsync with an int device, old graph calls
"$NVCC" -c memadvise.cu -o plain.o 2>/dev/null; s1=$?
"$NVSHIM" memadvise.cu -o memadvise 2>err; s2=$?
check "memadvise.cu: fails plainly, builds and links through the layer" test "$s1" -ne 0 -a "$s2" = 0 -a -x memadvise
check "... the note names the calls and the header" grep -q 'cudaMemAdvise, cudaMemPrefetchAsync, .*cudaThreadSynchronize restored by nvshim.s compatibility layer (nvshim/compat/runtime.h force-included)' err

# A source that compiles: plain nvcc's, byte for byte, one compile.
"$NVCC" -c clean.cu -o plain.o 2>plain.err
runs >/dev/null
"$NVSHIM" -c clean.cu -o shim.o 2>shim.err
check "clean.cu: one compile" test "$(runs)" = 1
check "clean.cu: nvcc's object and stderr, byte for byte" eval 'cmp -s plain.err shim.err && same_object plain.o shim.o'
# An error of the program's own beside a removed field: one retry, which fails; nvcc's stderr and status.
"$NVCC" -c unrelated.cu -o x.o 2>plain.err; s1=$?
runs >/dev/null
"$NVSHIM" -c unrelated.cu -o x.o 2>shim.err; s2=$?
check "unrelated.cu: one retry, which fails on the program's own error; nvcc's status" test "$(runs)" = 2 -a "$s1" = "$s2" -a "$s1" -ne 0
check "... nvcc's stderr, then the API note; the failed guess not said at the default verbosity" eval 'cmp -s plain.err <(grep -v -e "^nvshim info    : unrelated.cu:9: cudaDeviceProp::clockRate was removed" shim.err) && ! grep -q "compat\.\(restored\|failed\)" shim.err'
NVSHIM_VERBOSITY=verbose "$NVSHIM" -c unrelated.cu -o x.o 2>shim.err
runs >/dev/null
check "... at verbose, compat.failed says the layer was tried" grep -q "^nvshim info    : the compile failed on APIs the compatibility layer restores and on 1 error that names none .*\[compat\.failed\]$" shim.err
# An entry with nocompat: no retry, the reason.
"$NVSHIM" -c coop.cu -o x.o 2>shim.err; s2=$?
check "coop.cu: fails as before, one compile" test "$s2" -ne 0 -a "$(runs)" = 1
check "... and says why (compat.none), after nvcc's errors" eval 'grep -q "cannot restore cudaLaunchCooperativeKernelMultiDevice: a grid spanning several devices.*\[compat.none\]$" shim.err && test "$(grep -n "compat.none" shim.err | cut -d: -f1)" -gt "$(grep -n "error detected" shim.err | cut -d: -f1)"'
# compat = off
NVSHIM_COMPAT=off "$NVSHIM" -c devinfo.cu -o off.o 2>shim.err; s2=$?
check "compat = off: nvcc's failure, one compile, no compat note" eval 'test "$s2" -ne 0 -a "$(runs)" = 1 -a ! -e off.o && ! grep -q compat shim.err'
# Fail open: the layer's own failure (injected) leaves nvcc's result, with one warning.
NVSHIM_FAULT=compat "$NVSHIM" -c devinfo.cu -o fault.o 2>shim.err; s2=$?
check "a fault in the layer: nvcc's failure, one compile, one warning naming it" eval 'test "$s2" -ne 0 -a "$(runs)" = 1 -a ! -e fault.o && test "$(grep -c "^nvshim warning : the compatibility layer did not run: injected fault" shim.err)" = 1'
# A failed retry: the first compile's errors stand.
cat >assign.cu <<'CU'
#include <cuda_runtime.h>
int main() { cudaDeviceProp p; p.clockRate = 5; return 0; }
CU
"$NVCC" -c assign.cu -o x.o 2>plain.err; s1=$?
runs >/dev/null
"$NVSHIM" -c assign.cu -o x.o 2>shim.err; s2=$?
check "a write to a removed field: the retry fails, nvcc's status and errors stand" eval 'test "$s1" = "$s2" -a "$(runs)" = 2 && grep -q "\[compat.failed\]$" shim.err && cmp -s plain.err <(grep -v "^nvshim info    : " shim.err)'

# CC mode: the host compiler on .cpp and .c sources that include the CUDA headers.
for t in "g++ ctx_old.cpp" "gcc ctx_old.c" "gcc devinfo_c.c" "gcc memadvise_c.c"; do
	set -- $t
	$1 -I"$INC" -c "$2" -o plain.o 2>/dev/null; s1=$?
	"$NVSHIM" "$1" -I"$INC" -c "$2" -o shim.o 2>err; s2=$?
	check "CC mode, $1 $2: fails plainly, builds through the layer" eval 'test "$s1" -ne 0 -a "$s2" = 0 -a -s shim.o -a "$(restored err)" = 1'
done
"$NVSHIM" g++ -I"$INC" ctx_old.cpp -L"$STUBS" -lcuda -o ctx 2>err
check "CC mode: g++ compile-and-link with -lcuda" eval 'test -x ctx && grep -q "CUDA cuCtxCreate restored .*driver.h.*nvshim migrate ctx_old.cpp" err'
printf '#include <cuda_runtime.h>\nint main(void) { return 0; }\n' >ok.c
gcc -I"$INC" -c ok.c -o plain.o; "$NVSHIM" gcc -I"$INC" -c ok.c -o shim.o 2>err
check "CC mode: a C source that compiles is gcc's, byte for byte" eval 'cmp -s plain.o shim.o && test ! -s err'

# The user's files were never written.
# shellcheck disable=SC2086
check "the sources are untouched" test "$(sha256sum $SOURCES)" = "$sum0"

# ccache, in front of nvshim and behind it: a hit never hands back the wrong object.
if command -v ccache >/dev/null; then
	export CCACHE_DIR=$WORK/ccache CCACHE_CONFIGPATH=$WORK/ccache.conf CCACHE_NOHASHDIR=1
	export CCACHE_COMPILERCHECK="%compiler% --nvshim-fingerprint"
	hits() { ccache --print-stats | awk -F'\t' '$1 ~ /^(direct_cache_hit|preprocessed_cache_hit)$/ { h += $2 } END { print h + 0 }'; }
	ccache "$NV" -c devinfo.cu -o c1.o 2>/dev/null; s1=$?
	ccache "$NV" -c devinfo.cu -o c2.o 2>/dev/null; s2=$?
	check "ccache in front: the layer's object is cached, and hit" eval 'test "$s1" = 0 -a "$s2" = 0 -a "$(hits)" = 1 && cmp -s c1.o c2.o'
	NVSHIM_COMPAT=off ccache "$NV" -c devinfo.cu -o c3.o 2>/dev/null; s3=$?
	check "ccache in front: compat = off is another key: no hit, nvcc's failure" test "$s3" -ne 0 -a "$(hits)" = 1 -a ! -e c3.o
	ccache "$NV" -c clean.cu -o c4.o 2>/dev/null
	"$NVCC" -c clean.cu -o plain.o
	check "ccache in front: a source that compiles: nvcc's object" same_object c4.o plain.o
	NVSHIM_LAUNCHER=ccache "$NV" -c devinfo.cu -o l1.o 2>err; s1=$?
	NVSHIM_LAUNCHER=ccache "$NV" -c devinfo.cu -o l2.o 2>/dev/null
	check "ccache behind nvshim: the retry goes through ccache and builds" eval 'test "$s1" = 0 -a -s l1.o && same_object l1.o l2.o && same_object l1.o c1.o && test "$(restored err)" = 1'
	unset CCACHE_DIR CCACHE_CONFIGPATH CCACHE_NOHASHDIR CCACHE_COMPILERCHECK
else
	skip "ccache" "ccache is not installed (scripts/install-deps.sh installs it)"
fi
fp1=$("$NVSHIM" fingerprint); fp2=$(NVSHIM_COMPAT=off "$NVSHIM" fingerprint)
check "the fingerprint covers the setting and the layer's headers" eval 'test "$fp1" != "$fp2" && "$NVSHIM" fingerprint --show | grep -q "^compat header = runtime.h "'

# explain, the log, stats
out=$("$NVSHIM" explain -c devinfo.cu -o x.o)
check "explain: the layer and what it would do" contains "$out" "^compat    : compat = auto: if this compile fails on CUDA APIs"
out=$("$NVSHIM" explain g++ -I"$INC" -c ctx_old.cpp -o x.o)
check "explain g++: the layer" contains "$out" "^compat    : compat = auto"
NVSHIM_LOG_FILE=$WORK/log.json NVSHIM_CACHE_DIR=$WORK/cache "$NVSHIM" -c devinfo.cu -o x.o 2>/dev/null
check "the log: the note names the entries used" python3 -c '
import json, sys
e = json.loads(open(sys.argv[1]).read().splitlines()[-1])
n = [x for x in e["notes"] if x.endswith("[compat.restored]")]
sys.exit(not (len(n) == 1 and "cudaDeviceProp::clockRate" in n[0] and e["status"] == 0))' "$WORK/log.json"
out=$(NVSHIM_CACHE_DIR=$WORK/cache "$NVSHIM" stats 2>&1)
check "nvshim stats counts the rule" contains "$out" "compat.restored"

# The fixtures are CUDA 12 code: they build with CUDA 12.9's headers (host code), and their
# hand-fixed forms build with plain nvcc 13.0.
if [ -f "$CU12/cuda_runtime_api.h" ]; then
	check "CUDA 12.9's headers: devinfo.cu (as C++), devinfo_c.c, ctx_old.cpp and ctx_old.c compile" eval \
		'g++ -fsyntax-only -x c++ -I"$CU12" -idirafter "$INC" devinfo.cu && gcc -fsyntax-only -I"$CU12" -idirafter "$INC" devinfo_c.c && g++ -fsyntax-only -I"$CU12" ctx_old.cpp && gcc -fsyntax-only -I"$CU12" ctx_old.c'
else
	skip "CUDA 12.9's headers" "none in $CU12 (scripts/fetch-nvcc135.sh)"
fi
check "the hand-fixed fixtures build with plain nvcc 13.0" eval '"$NVCC" -c devinfo_fixed.cu -o f1.o && "$NVCC" -c memadvise_fixed.cu -o f2.o && "$NVCC" -c ctx_fixed.cpp -o f3.o'
finish
