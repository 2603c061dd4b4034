#!/bin/bash
# The guard on every success (session.h: session_guard()): in each layer that reruns, splits or
# rewrites a command, failure injection (NVSHIM_FAULT=lose-LAYER) removes what the layer built
# after it succeeded; the guard must then say so in one `nvshim error` line naming the missing
# file and the layer, record it (the JSON log, `nvshim stats`), and run the command as given,
# so that the build ends as plain nvcc's would: its status and its files. Without the fault each
# line builds its outputs with status 0 (the shapes of the differential matrix, matrix.py).
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"
BUILD=${NVSHIM_BUILD_DIR:-$(dirname "$NVSHIM")}
CC_NAME="$BUILD/libexec/nvshim/cc/c++"
CUDA=$(cd "$(dirname "$(readlink -f "$NVCC")")/.." && pwd)
STUBS_INC="$(cd "$(dirname "$0")" && pwd)/fixtures/stubs/inc"
cd "$WORK" || exit 1
export NVSHIM_CACHE_DIR="$WORK/cache"

cat >k.cu <<'EOF'
#include <cstdio>
__global__ void k(int *p) { p[threadIdx.x] = threadIdx.x; }
int main() { std::printf("k\n"); return 0; }
EOF
cat >clock.cu <<'EOF'
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
int main() {
	cudaDeviceProp p;
	std::memset(&p, 0, sizeof(p));
	cudaGetDeviceProperties(&p, 0);
	std::printf("%d\n", p.clockRate > 0);
	return 0;
}
EOF
cat >drv.cu <<'EOF'
#include <cstdio>
#include <cuda.h>
int main() { int v = 0; std::printf("%d\n", cuDriverGetVersion(&v) == CUDA_SUCCESS); return 0; }
EOF
# the Marlin-style library header of the stubs suite
mkdir -p inc && cp "$STUBS_INC/marlin.cuh" inc/
cat >stub.cu <<'EOF'
#include <marlin.cuh>
template __global__ void marlin_like<16>(const float *, float *, int);
EOF

# lost LAYER-FAULT "LAYER WORDS" OUTPUT -- TOOL ARGS...: the layer acts, the fault removes its
# outputs; the guard says so and the build ends as plain nvcc's line does.
lost() {
	local fault=$1 words=$2 out=$3 name="$1"
	shift 4
	local tool=("$1")
	shift
	rm -rf run plain && mkdir run plain
	cp -r k.cu clock.cu drv.cu stub.cu inc run/ && cp -r k.cu clock.cu drv.cu stub.cu inc plain/
	# without the fault: built, status 0
	(cd run && "${tool[@]}" "$@" >/dev/null 2>"$WORK/err.ok")
	local st=$?
	if [ $st -ne 0 ] || [ ! -s "run/$out" ]; then
		not_ok "$name: the line builds $out through nvshim" "status $st" "$(tail -3 "$WORK/err.ok")"
		return
	fi
	rm -f "run/$out"
	# plain nvcc's own result for the line as given (what the fallback must give)
	local plain_args=("$@")
	[ "${tool[0]}" = "$CC_NAME" ] && plain_args=(-ccbin "$(command -v c++)" "$@")
	(cd plain && "$NVCC" "${plain_args[@]}" >/dev/null 2>&1)
	local plain_st=$?
	(cd run && NVSHIM_FAULT=$fault NVSHIM_LOG_FILE="$WORK/log.json" "${tool[@]}" "$@" >/dev/null 2>"$WORK/err")
	st=$?
	local line
	line=$(grep '^nvshim error' "$WORK/err")
	check "$name: one error line names $out and $words" \
		contains "$line" "^nvshim error   : $out .* after $words" "nvshim's fault; running the command as given" "\[outputs.missing\]"
	check "$name: one line only" test "$(grep -c '^nvshim error' "$WORK/err")" -eq 1
	check "$name: the status is plain nvcc's ($plain_st)" test "$st" -eq "$plain_st"
	if [ "$plain_st" -eq 0 ]; then
		check "$name: $out is there, as plain nvcc builds it" test -s "run/$out"
	else
		check "$name: no $out, as with plain nvcc" test ! -e "run/$out"
	fi
	check "$name: the JSON log has the note" grep -q 'outputs.missing' "$WORK/log.json"
	rm -f "$WORK/log.json"
}

lost lose-compat "the compatibility layer's retry" app -- "$NVSHIM" -arch=sm_80 -o app clock.cu
lost lose-split "the modules pass's split (the compile, then the link)" app -- "$NVSHIM" -arch=sm_80 -o app k.cu
lost lose-link-retry "the link retry (-lcuda)" app -- "$NVSHIM" -o app drv.cu
lost lose-stubs "the stub drop's re-link" stub.o -- "$NVSHIM" -isystem inc -gencode arch=compute_80,code=sm_80 \
	-gencode arch=compute_75,code=sm_75 -c stub.cu -o stub.o
lost lose-targets "the targets pass" k.o -- "$NVSHIM" -gencode arch=compute_70,code=sm_70 \
	-gencode arch=compute_80,code=sm_80 -c k.cu
lost lose-cc "CC mode's hand-over to nvcc" k.o -- "$CC_NAME" -c k.cu -o k.o

# the crash retry: cicc killed once (SIGKILL, as the out-of-memory killer does), crash_retry = once
make_toolkit tk
real=$(readlink -f tk/nvvm/bin/cicc)
rm tk/nvvm/bin/cicc
cat >tk/nvvm/bin/cicc <<SH
#!/bin/sh
[ -e "$WORK/killed-once" ] || { : >"$WORK/killed-once"; kill -KILL \$\$; }
exec "$real" "\$@"
SH
chmod +x tk/nvvm/bin/cicc
mkdir -p crash && cp k.cu crash/
(cd crash && NVSHIM_CRASH_RETRY=once NVSHIM_FAULT=lose-crash NVSHIM_NVCC="$WORK/tk/bin/nvcc" \
	"$NVSHIM" -c k.cu -arch=sm_80 -o k.o 2>"$WORK/err")
st=$?
check "lose-crash: the error line names k.o and the crash retry" \
	grep -q "^nvshim error   : k.o is missing after the crash retry (status 0, crash.retry)" "$WORK/err"
check "lose-crash: the command ran as given: k.o built, status 0" test $st -eq 0 -a -s crash/k.o

# a file an earlier build left is not one this run wrote
rm -rf run && mkdir run && cp k.cu run/
(cd run && "$NVSHIM" -gencode arch=compute_70,code=sm_70 -gencode arch=compute_80,code=sm_80 -c k.cu 2>/dev/null)
touch -d '2 hours ago' run/k.o
(cd run && NVSHIM_FAULT=lose-targets "$NVSHIM" -gencode arch=compute_70,code=sm_70 \
	-gencode arch=compute_80,code=sm_80 -c k.cu 2>"$WORK/err")
check "an output the fault removed is missing, not an old one passed off" grep -q "^nvshim error   : k.o is missing" "$WORK/err"

# `nvshim stats` counts it
rm -rf run && mkdir run && cp k.cu run/
(cd run && NVSHIM_FAULT=lose-targets "$NVSHIM" -gencode arch=compute_70,code=sm_70 \
	-gencode arch=compute_80,code=sm_80 -c k.cu 2>/dev/null)
stats=$("$NVSHIM" stats 2>&1)
check "nvshim stats names the guard's rule" contains "$stats" "outputs.missing"

# the fault is named only: NVSHIM_FAULT=all does not remove outputs
rm -rf run && mkdir run && cp k.cu run/
(cd run && NVSHIM_FAULT=all "$NVSHIM" -arch=sm_80 -o app k.cu 2>"$WORK/err")
check "NVSHIM_FAULT=all: the build passes, nothing said of outputs" test $? -eq 0 -a -s run/app
check "NVSHIM_FAULT=all: no outputs.missing" test "$(grep -c 'outputs.missing' "$WORK/err")" -eq 0

# nothing changed: the line goes to nvcc as given (no wait, no guard), and nvcc's own result
rm -rf run && mkdir run && cp k.cu run/
(cd run && NVSHIM_FAULT=lose-targets "$NVSHIM" -c k.cu -o k.o 2>"$WORK/err")
check "a line nvshim does not change: no guard, nvcc's result" test $? -eq 0 -a -s run/k.o -a ! -s "$WORK/err"
finish
