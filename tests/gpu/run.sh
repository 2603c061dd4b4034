#!/bin/bash
# The GPU suite: what only a machine with an NVIDIA GPU can show. Skips cleanly without one.
#   bash tests/gpu/run.sh NVSHIM [NVCC]
# NVSHIM is the nvshim executable; nvshim-devices must be in its libexec/nvshim (build tree or
# install). Checks: detection through NVML with a cold and a warm cache (timed),
# CUDA_VISIBLE_DEVICES, -arch=native, and a program built from a list without the GPU's target
# that fails with plain nvcc and runs after nvshim's ensure_devices rule; the modules pass: a
# cp.async kernel built from a list whose sm_75 it cannot build, and (on sm_90) a wgmma kernel
# built from a plain sm_90 list and upgraded to sm_90a, both run and checked; a kernel whose
# stack no launch accepts, noted at build time and failing at launch; then tests/gpu/preload.sh
# tests/gpu/jit_clients.sh, tests/gpu/inspect.sh, tests/gpu/stubs.sh, tests/gpu/inspect_corpus.sh,
# tests/gpu/toolkitview.sh, tests/gpu/census.sh, tests/gpu/runtime.sh (PTX newer than the
# driver, machine code only: NVSHIM_GPU_PREBUILT) and tests/gpu/rdc_shapes.sh.
NVSHIM=$1
NVCC=${2:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
. "$(dirname "$0")/../e2e/lib.sh"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	skip "GPU suite" "no NVIDIA GPU on this machine"
	finish
	exit
fi
GPUDIR="$(cd "$(dirname "$0")" && pwd)" # before the cd below: $0 may be relative
SRC="$(cd "$GPUDIR/../.." && pwd)/examples/saxpy.cu"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '. ')
echo "# GPU: $(nvidia-smi -L | head -1), compute capability $cc"
cd "$WORK" || exit 1

# Detection, cold then warm (cache under the private HOME of this run).
t0=$(date +%s%N); out=$("$NVSHIM" doctor 2>&1); t1=$(date +%s%N)
out2=$("$NVSHIM" doctor 2>&1); t2=$(date +%s%N)
echo "$out" | sed -n 's/^/# /; /GPUs/p'
check "detected sm_$cc through nvshim-devices" contains "$out" "^GPUs *: sm_$cc .*nvshim-devices (NVML)"
check "second lookup from the cache" contains "$out2" "^GPUs *: sm_$cc .*(from cache "
echo "# nvshim doctor: cold device cache $(((t1 - t0) / 1000000)) ms, warm $(((t2 - t1) / 1000000)) ms (doctor also runs nvcc twice)"
helper=$(dirname "$NVSHIM")/libexec/nvshim/nvshim-devices
[ -x "$helper" ] || helper=$(dirname "$NVSHIM")/../libexec/nvshim/nvshim-devices
for i in 1 2 3; do t0=$(date +%s%N); "$helper" >/dev/null; t1=$(date +%s%N); echo "# nvshim-devices (NVML query, cold process): $(((t1 - t0) / 1000)) us"; done
for i in 1 2 3; do
	t0=$(date +%s%N); "$NVSHIM" nvcc --version >/dev/null; t1=$(date +%s%N); "$NVCC" --version >/dev/null; t2=$(date +%s%N)
	echo "# --version: nvshim $(((t1 - t0) / 1000)) us, nvcc $(((t2 - t1) / 1000)) us"
done
# A compile with a target list, caches warm: the targets pass's cost.
printf '__global__ void k(float *x) { x[0] = 1; }\n' >k.cu
"$NVSHIM" -c k.cu -o k.o -arch=sm_90 >/dev/null 2>&1
for i in 1 2 3; do
	t0=$(date +%s%N); "$NVSHIM" -c k.cu -o k.o -arch=sm_90; t1=$(date +%s%N); "$NVCC" -c k.cu -o k.o -arch=sm_90; t2=$(date +%s%N)
	echo "# -c -arch=sm_90: nvshim $(((t1 - t0) / 1000000)) ms, nvcc $(((t2 - t1) / 1000000)) ms"
done
out=$(CUDA_VISIBLE_DEVICES= "$NVSHIM" doctor 2>&1)
check "CUDA_VISIBLE_DEVICES= hides the GPU" contains "$out" "^GPUs *: none"

# 64 compiles at once on a cold device cache (a build's first step): each finds the GPU (the
# compiles take turns on the cache's lock; the first asks NVML, the others read its answer).
for i in $(seq 64); do
	XDG_CACHE_HOME="$WORK/herd" "$NVSHIM" explain -c k.cu -o h.o -arch=native >"$WORK/herd.$i" 2>&1 &
done
wait
found=$(grep -l "sm_$cc" "$WORK"/herd.* | wc -l)
check "64 compiles at once on a cold device cache: each finds sm_$cc ($found of 64)" test "$found" -eq 64

# -arch=native: the GPU's target, explicitly.
"$NVSHIM" "$SRC" -o native -arch=native 2>"$WORK/err"
check "-arch=native builds" test $? -eq 0
check "-arch=native: explained" grep -q "building for the GPUs found" "$WORK/err"
check "-arch=native: the program runs on the GPU" sh -c "./native | grep -q ' 0 of '"

# A list without anything for this GPU: plain nvcc builds a program that cannot run here.
LIST=(-gencode arch=compute_80,code=sm_80)
[ "$cc" -lt 90 ] && LIST=(-gencode arch=compute_90,code=sm_90)
"$NVCC" "$SRC" -o plain "${LIST[@]}"
./plain >"$WORK/plain.out" 2>&1
st=$?
check "plain nvcc's program does not run here" test $st -ne 0 -a -n "$(grep 'no kernel image' "$WORK/plain.out")"
cat "$WORK/plain.out" | sed 's/^/# plain: /' 
"$NVSHIM" "$SRC" -o fixed "${LIST[@]}" 2>"$WORK/err"
check "ensure_devices: explained" grep -q "added sm_$cc" "$WORK/err"
check "ensure_devices: the program runs on the GPU" sh -c "./fixed | grep -q ' 0 of '"

# The link pass: `nvshim -arch=sm_90a x.cu -o x`, host code calling cuTensorMapEncodeTiled and
# no -lcuda. Plain nvcc fails at link; through nvshim the link is retried with -lcuda, and the
# program builds a tensor map with the real driver (an sm_90a target needs an H100-class GPU
# only for kernels; the map is built on the host).
LINKFIX="$(cd "$GPUDIR/../e2e/fixtures/link" && pwd)"
CUDA_LIB="$(dirname "$NVCC")/../lib64"
cat "$LINKFIX/tma.cu" "$LINKFIX/main.cu" >tma_x.cu
"$NVCC" -arch=sm_90a tma_x.cu -o tma_plain 2>"$WORK/err"
check "-lcuda: plain nvcc fails at link" grep -q "undefined reference to" "$WORK/err"
"$NVSHIM" -arch=sm_90a tma_x.cu -o tma_x 2>"$WORK/err"
check "-lcuda: nvshim -arch=sm_90a x.cu -o x links, the retry explained" sh -c "test -x tma_x && grep -q 'link.retry' '$WORK/err'"
./tma_x >"$WORK/tma.out" 2>&1
st=$?
sed 's/^/# tma_x: /' "$WORK/tma.out"
check "-lcuda: the executable runs and builds a tensor map (CUDA_SUCCESS)" \
	sh -c "test $st -eq 0 && grep -q 'cuTensorMapEncodeTiled: CUDA_SUCCESS' '$WORK/tma.out'"
# The PyTorch-style shared library, linked by nvshim as c++, loads with RTLD_NOW and works.
ccdir=$(dirname "$NVSHIM")/libexec/nvshim/cc
[ -d "$ccdir" ] || ccdir=$(dirname "$NVSHIM")/../libexec/nvshim/cc
"$NVCC" -c -Xcompiler -fPIC "$LINKFIX/tma.cu" -o tma.o
"$ccdir/c++" -shared tma.o -o libtma.so -L"$CUDA_LIB" -lcudart 2>"$WORK/err"
gcc "$LINKFIX/load.c" -o load -ldl
./load ./libtma.so make_map >"$WORK/load.out" 2>&1
st=$?
sed 's/^/# load: /' "$WORK/load.out"
check "-lcuda: c++ -shared through nvshim loads (RTLD_NOW) and builds a tensor map" \
	sh -c "test $st -eq 0 && grep -q 'cuTensorMapEncodeTiled: CUDA_SUCCESS' '$WORK/load.out'"
# The preload library's checks (C, CuPy, PyTorch, numba-cuda): their own script, shown here.
bash "$GPUDIR/preload.sh" "$NVSHIM" "$NVCC" 2>&1 | sed -u 's/^/# preload: /'
check "preload suite (tests/gpu/preload.sh)" test "${PIPESTATUS[0]}" -eq 0
bash "$GPUDIR/jit_clients.sh" "$NVSHIM" "$NVCC" 2>&1 | sed -u 's/^/# jit clients: /'
check "JIT clients suite (tests/gpu/jit_clients.sh)" test "${PIPESTATUS[0]}" -eq 0
# nvshim inspect and the "no kernel image" explanations: their own script, shown here.
bash "$GPUDIR/inspect.sh" "$NVSHIM" "$NVCC" 2>&1 | sed -u 's/^/# inspect: /'
check "inspect suite (tests/gpu/inspect.sh)" test "${PIPESTATUS[0]}" -eq 0
bash "$GPUDIR/stubs.sh" "$NVSHIM" "$NVCC" 2>&1 | sed -u 's/^/# stubs: /'
check "stubs suite (tests/gpu/stubs.sh)" test "${PIPESTATUS[0]}" -eq 0
bash "$GPUDIR/inspect_corpus.sh" "$NVSHIM" "$NVCC" 2>&1 | sed -u 's/^/# inspect_corpus: /'
check "inspect corpus suite (tests/gpu/inspect_corpus.sh)" test "${PIPESTATUS[0]}" -eq 0
bash "$GPUDIR/toolkitview.sh" "$NVSHIM" "$NVCC" 2>&1 | sed -u 's/^/# toolkitview: /'
check "toolkit view suite (tests/gpu/toolkitview.sh)" test "${PIPESTATUS[0]}" -eq 0
bash "$GPUDIR/census.sh" "$NVSHIM" "$NVCC" 2>&1 | sed -u 's/^/# census: /'
check "census suite on the GPU (tests/gpu/census.sh)" test "${PIPESTATUS[0]}" -eq 0
bash "$GPUDIR/runtime.sh" "$NVSHIM" "$NVCC" 2>&1 | sed -u 's/^/# runtime: /'
check "run time: PTX and the driver, machine code only (tests/gpu/runtime.sh)" test "${PIPESTATUS[0]}" -eq 0
bash "$GPUDIR/rdc_shapes.sh" "$NVSHIM" "$NVCC" 2>&1 | sed -u 's/^/# rdc: /'
check "relocatable device code's shapes (tests/gpu/rdc_shapes.sh)" test "${PIPESTATUS[0]}" -eq 0

# The modules pass: per-source targets, on the GPU.
PT=()
for a in 75 80 86 89 90; do PT+=(-gencode "arch=compute_$a,code=sm_$a"); done
"$NVCC" "$GPUDIR/modules_cpasync.cu" -o cpasync_plain "${PT[@]}" 2>/dev/null
check "modules: plain nvcc cannot build the cp.async kernel for 75..90" test $? -ne 0
"$NVSHIM" "$GPUDIR/modules_cpasync.cu" -o cpasync "${PT[@]}" 2>"$WORK/err"
cat "$WORK/err" | sed 's/^/# /'
check "modules: nvshim builds it, sm_75 dropped" grep -q "dropped sm_75: device code does not support exception handling" "$WORK/err"
./cpasync >"$WORK/out" 2>&1
sed 's/^/# /' "$WORK/out"
check "modules: the cp.async kernel runs here with the right results" grep -q ' 0 of ' "$WORK/out"
if [ "$cc" = 90 ]; then
	"$NVCC" "$GPUDIR/modules_wgmma.cu" -o wgmma_plain -gencode arch=compute_90,code=sm_90 2>"$WORK/err"
	check "modules: plain nvcc fails on wgmma for plain sm_90" grep -q "not supported on .target 'sm_90'" "$WORK/err"
	"$NVSHIM" "$GPUDIR/modules_wgmma.cu" -o wgmma -gencode arch=compute_90,code=sm_90 2>"$WORK/err"
	sed 's/^/# /' "$WORK/err"
	check "modules: sm_90 upgraded to sm_90a" grep -q "sm_90 -> sm_90a: wgmma needs sm_90a" "$WORK/err"
	./wgmma >"$WORK/out" 2>&1
	sed 's/^/# /' "$WORK/out"
	check "modules: the sm_90a kernel runs on the GPU and gives 2x+1" grep -q ' 0 of ' "$WORK/out"
else
	skip "modules: sm_90a kernel" "the GPU is sm_$cc, not sm_90"
fi

# A stack past what a launch allows: nvcc builds it without a word, nvshim says why it will not
# launch, and the launch fails as the note says.
"$NVSHIM" "$GPUDIR/local_stack.cu" -o local_stack -arch=native 2>"$WORK/err"
sed 's/^/# /' "$WORK/err"
check "resource.local: the 4 MiB kernel is named, the 256 KiB one is not" \
	test "$(grep -c '\[resource.local\]' "$WORK/err")" -eq 1 -a -n "$(grep 'scratch<1048576>.*4096 KiB.*cudaErrorInvalidValue' "$WORK/err")"
./local_stack >"$WORK/out" 2>&1
sed 's/^/# /' "$WORK/out"
check "resource.local: the 256 KiB kernel launches, the 4 MiB one fails with cudaErrorInvalidValue" \
	contains "$(cat "$WORK/out")" "^256 KiB: launch cudaSuccess, sync cudaSuccess$" "^4 MiB: launch cudaErrorInvalidValue"
finish
