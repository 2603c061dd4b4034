#!/bin/bash
# The compatibility layer on a GPU: CUDA 12 era programs built through nvshim (which compiles
# them again with the layer) print what the same programs rewritten by hand for CUDA 13 and built
# plainly print, and what CUDA 12 itself prints: the device-info printout and the C one built with
# g++/gcc against CUDA 12.9's headers and run with its libcudart.so.12, cuCtxCreate's old form
# against 12.9's cuda.h. Paths: compile-and-link, -c then link, -dc then a device link, CC mode
# (.c and .cpp, with -lcuda); a Thrust and CUB pipeline against its migrated form.
#   bash tests/gpu/compat.sh NVSHIM [NVCC]
# CU12: the CUDA 12.9 runtime wheel's nvidia/cuda_runtime (default
# /var/tmp/nvshim-toolkits/cu12-runtime/nvidia/cuda_runtime, scripts/fetch-nvcc135.sh); without
# it the CUDA 12 comparisons skip. The wheel has no crt/host_config.h: the toolkit's is found after
# the wheel's headers (-idirafter).
NVSHIM=$1
NVCC=${2:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
GPUDIR="$(cd "$(dirname "$0")" && pwd)"
. "$GPUDIR/../e2e/lib.sh"
FIX="$GPUDIR/../e2e/fixtures/compat"
CU12=${CU12:-/var/tmp/nvshim-toolkits/cu12-runtime/nvidia/cuda_runtime}
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	skip "the compatibility layer on a GPU" "no NVIDIA GPU on this machine"
	finish
	exit
fi
NVSHIM=$(cd "$(dirname "$NVSHIM")" && pwd)/$(basename "$NVSHIM")
INC=$(dirname "$(dirname "$NVCC")")/include
LIB=$(dirname "$(dirname "$NVCC")")/lib64
echo "# GPU: $(nvidia-smi -L | head -1); driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
echo "# $("$NVCC" --version | tail -2 | head -1)"
export NVSHIM_NVCC=$NVCC
cd "$WORK" || exit 1
cp "$FIX"/* .
# show NAME FILE: the output, for the record
show() { echo "# --- $1"; sed 's/^/#   /' "$2"; }
restored() { grep -q '\[compat.restored\]$' "$1"; }

# The device-info printout: compile-and-link, -c + link, -dc + device link.
"$NVSHIM" devinfo.cu -o shim_devinfo 2>shim.err
check "devinfo.cu: compile-and-link through the layer" restored shim.err
"$NVSHIM" -c devinfo.cu -o devinfo.o 2>/dev/null && "$NVCC" devinfo.o -o shim_devinfo_c
"$NVSHIM" -dc devinfo.cu -o devinfo_dc.o 2>/dev/null && "$NVCC" devinfo_dc.o -o shim_devinfo_dc
"$NVCC" devinfo_fixed.cu -o plain_devinfo
./shim_devinfo >shim.out; ./shim_devinfo_c >shim_c.out; ./shim_devinfo_dc >shim_dc.out; ./plain_devinfo >plain.out
show "devinfo.cu through nvshim" shim.out
show "devinfo_fixed.cu, plain nvcc" plain.out
check "devinfo: a device was seen" grep -q '^clockRate [1-9]' shim.out
check "devinfo: through the layer = rewritten by hand (compile-and-link)" cmp -s shim.out plain.out
check "devinfo: the same through -c and a link" cmp -s shim_c.out plain.out
check "devinfo: the same through -dc and a device link" cmp -s shim_dc.out plain.out
# The removed fields read in a project header (a struct passed by reference, reached through -I):
# the layer's private copy of the header, compiled through a mirror of the tree.
mkdir -p hdr/inc/info
cat >hdr/inc/info/clocks.h <<'EOF_H'
#include <cstdio>
#include <cuda_runtime.h>
static void print_clocks(const cudaDeviceProp &p)
{
	std::printf("clockRate %d\n", p.clockRate);
	std::printf("memoryClockRate %d\n", p.memoryClockRate);
}
EOF_H
cat >hdr/main.cu <<'EOF_C'
#include "info/clocks.h"
int main()
{
	int n = 0;
	cudaGetDeviceCount(&n);
	for (int d = 0; d < n; d++) {
		cudaDeviceProp prop;
		cudaGetDeviceProperties(&prop, d);
		print_clocks(prop);
	}
	return 0;
}
EOF_C
(cd hdr && "$NVSHIM" -Iinc main.cu -o shim_hdr) 2>hdr.err
check "a header that reads the removed fields: built through the layer" restored hdr.err
./hdr/shim_hdr >hdr.out 2>&1
show "the header's reads through nvshim" hdr.out
grep -E '^(clockRate|memoryClockRate) ' plain.out >plain_clocks.out
check "the header's reads through the layer = rewritten by hand" cmp -s hdr.out plain_clocks.out
if [ -f "$CU12/include/cuda_runtime_api.h" ] && [ -f "$CU12/lib/libcudart.so.12" ]; then
	g++ -x c++ -I"$CU12/include" -idirafter "$INC" devinfo.cu -x none "$CU12/lib/libcudart.so.12" -Wl,-rpath,"$CU12/lib" -o cu12_devinfo
	./cu12_devinfo >cu12.out
	show "devinfo.cu built against CUDA 12.9 (libcudart.so.12)" cu12.out
	check "devinfo: through the layer = what CUDA 12's cudaGetDeviceProperties put in the fields" cmp -s shim.out cu12.out
	gcc -I"$CU12/include" -idirafter "$INC" devinfo_c.c "$CU12/lib/libcudart.so.12" -Wl,-rpath,"$CU12/lib" -o cu12_devinfo_c
	./cu12_devinfo_c >cu12_c.out
	"$NVSHIM" gcc -I"$INC" devinfo_c.c -L"$LIB" -lcudart -Wl,-rpath,"$LIB" -o shim_devinfo_cc 2>cc.err
	check "devinfo_c.c: CC mode (gcc) through the layer" restored cc.err
	./shim_devinfo_cc >shim_cc.out
	show "devinfo_c.c through nvshim gcc" shim_cc.out
	check "devinfo_c.c (C): through the layer = CUDA 12" cmp -s shim_cc.out cu12_c.out
	g++ -I"$CU12/include" -idirafter "$INC" ctx_old.cpp -L"$LIB/stubs" -lcuda -o cu12_ctx
	./cu12_ctx >cu12_ctx.out
else
	skip "the CUDA 12 comparisons" "no CUDA 12.9 runtime at $CU12"
fi

# Managed memory and graphs: an int device, no edge data, cudaThreadSynchronize.
"$NVSHIM" memadvise.cu -o shim_mem 2>mem.err
check "memadvise.cu: through the layer" restored mem.err
"$NVCC" memadvise_fixed.cu -o plain_mem
./shim_mem >shim_mem.out; ./plain_mem >plain_mem.out
show "memadvise.cu through nvshim" shim_mem.out
check "memadvise: every call succeeded (cudaSuccess)" awk '/^(advise|advise cpu|prefetch|prefetch back|edge|capture info) -?[0-9]+$/ { n++; if ($NF != 0) bad = 1 } END { exit bad || n != 6 }' shim_mem.out
check "memadvise: through the layer = rewritten by hand" cmp -s shim_mem.out plain_mem.out
check "memadvise: the kernel ran on the prefetched memory" grep -qx 'sum 1099510579200' shim_mem.out

# cuCtxCreate's old form, C++ and C, CC mode with -lcuda.
"$NVSHIM" g++ -I"$INC" ctx_old.cpp -L"$LIB/stubs" -lcuda -o shim_ctx 2>ctx.err
check "ctx_old.cpp: CC mode (g++) through the layer" restored ctx.err
"$NVSHIM" gcc -I"$INC" ctx_old.c -L"$LIB/stubs" -lcuda -o shim_ctx_c 2>ctxc.err
check "ctx_old.c: CC mode (gcc, C) through the layer" restored ctxc.err
g++ -I"$INC" ctx_fixed.cpp -L"$LIB/stubs" -lcuda -o plain_ctx
./shim_ctx >shim_ctx.out; ./shim_ctx_c >shim_ctx_c.out; ./plain_ctx >plain_ctx.out
show "ctx_old.cpp through nvshim g++" shim_ctx.out
check "cuCtxCreate: created (CUDA_SUCCESS), blocking sync, device 0" grep -qx 'cuCtxCreate 0 flags 4 device 0' shim_ctx.out
check "cuCtxCreate: through the layer = rewritten by hand (C++)" cmp -s shim_ctx.out plain_ctx.out
check "cuCtxCreate: through the layer = rewritten by hand (C)" cmp -s shim_ctx_c.out plain_ctx.out
[ -f cu12_ctx.out ] && check "cuCtxCreate: = the same source built against CUDA 12.9's cuda.h" cmp -s shim_ctx.out cu12_ctx.out
# Thrust and CUB on the device, CUDA 12 era: a functor deriving from thrust::unary_function (its
# result_type used) in a transform-reduce, and thrust::binary_function, cub::Max/Sum/Min and the
# CUB_ macros (CCCL 3.0 removed them all): through the layer, and after `nvshim migrate --apply`
# built plainly; both print the same.
cp "$GPUDIR/../e2e/fixtures/migrate/old_thrust.cu" .
for f in functor old_thrust; do
	cp $f.cu ${f}_mig.cu
	"$NVSHIM" migrate --apply ${f}_mig.cu >/dev/null 2>&1
	"$NVSHIM" $f.cu -o shim_$f 2>$f.err
	check "$f.cu: through the layer" restored $f.err
	"$NVCC" ${f}_mig.cu -o plain_$f 2>/dev/null
	check "$f.cu: migrated, it builds with plain nvcc" test -x plain_$f
	./shim_$f >shim_$f.out; ./plain_$f >plain_$f.out
	show "$f.cu through nvshim" shim_$f.out
	check "$f.cu: through the layer = migrated and built plainly" cmp -s shim_$f.out plain_$f.out
done
check "functor.cu: the device's transform-reduce gave 16" grep -qx 16 shim_functor.out
if python3 -c 'import cupy' 2>/dev/null; then
	python3 - <<'PY' | sed 's/^/# /'
import cupy
r = cupy.cuda.runtime
p = r.getDeviceProperties(0)
print("cupy %s, CUDA runtime %d: clockRate %s memoryClockRate %s" % (cupy.__version__, r.runtimeGetVersion(), p.get("clockRate"), p.get("memoryClockRate")))
PY
fi
finish
