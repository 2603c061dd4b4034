#!/bin/bash
# The modules pass's stub checks on a GPU (rule modules.stubs). Skips cleanly without one.
#   bash tests/gpu/stubs.sh NVSHIM [NVCC]
# CUTLASS's Hopper GEMM (example 48, renamed my_gemm.cu, from the nvidia-cutlass package) built
# with plain -arch=sm_90: by plain nvcc it builds and refuses to run its GEMM; through nvshim
# (modules_rules = false) it gets sm_90a and verifies its GEMM. Then a Marlin-style module built
# for 7.5, 8.0 and 9.0 with its all-stub sm_75 dropped: it still runs on this GPU and computes.
NVSHIM=$1
NVCC=${2:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
. "$(dirname "$0")/../e2e/lib.sh"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	skip "GPU stubs suite" "no NVIDIA GPU on this machine"
	finish
	exit
fi
FIX="$(cd "$(dirname "$0")/../e2e/fixtures/stubs" && pwd)"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '. ')
echo "# GPU: $(nvidia-smi -L | head -1), compute capability $cc"
cd "$WORK" || exit 1
export NVSHIM_MODULES_RULES=false
C=$(python3 -c 'import glob, site, sys
for d in site.getsitepackages() + [site.getusersitepackages()] + sys.path:
    for p in glob.glob(d + "/cutlass_library/source"):
        print(p); sys.exit()' 2>/dev/null)
if [ "$cc" != 90 ] || [ -z "$C" ]; then
	skip "CUTLASS Hopper GEMM" "needs a compute capability 9.0 GPU and nvidia-cutlass (found: sm_$cc, '${C}')"
else
	cp "$C/examples/48_hopper_warp_specialized_gemm/48_hopper_warp_specialized_gemm.cu" my_gemm.cu
	FLAGS=(-std=c++17 --expt-relaxed-constexpr -w -I"$C/include" -I"$C/tools/util/include" -I"$C/examples/common")
	"$NVCC" "${FLAGS[@]}" my_gemm.cu -o gemm_plain -arch=sm_90
	./gemm_plain --m=2048 --n=2048 --k=2048 >"$WORK/plain.out" 2>&1
	sed 's/^/# plain nvcc -arch=sm_90: /' "$WORK/plain.out" | head -8
	check "cutlass: plain nvcc's sm_90 build does not run its GEMM" test -z "$(grep 'Disposition: Passed' "$WORK/plain.out")"
	"$NVSHIM" "${FLAGS[@]}" my_gemm.cu -o gemm -arch=sm_90 2>"$WORK/err"
	sed 's/^/# nvshim: /' "$WORK/err"
	check "cutlass: nvshim says sm_90 -> sm_90a" grep -q "sm_90 -> sm_90a.*\[modules.decide\]" "$WORK/err"
	./gemm --m=2048 --n=2048 --k=2048 >"$WORK/gemm.out" 2>&1
	sed 's/^/# nvshim -arch=sm_90: /' "$WORK/gemm.out" | head -8
	check "cutlass: the upgraded GEMM runs and verifies on the H100" grep -q "Disposition: Passed" "$WORK/gemm.out"
fi

# Marlin-style: sm_75 dropped (every kernel a stub there); this GPU runs its own target.
cp -r "$FIX"/. .
cat >marlin_main.cu <<'MAIN'
#include <cstdio>
#include <marlin.cuh>
int main()
{
	const int n = 4096, N = 16;
	float *a, *c;
	cudaMallocManaged(&a, sizeof(float) * (n * N + N + 64));
	cudaMallocManaged(&c, sizeof(float) * N);
	for (int i = 0; i < n * N + N + 64; i++)
		a[i] = 1.0f;
	marlin_like<N><<<1, 1>>>(a, c, n);
	cudaError_t e = cudaDeviceSynchronize();
	float want = 0.0f;
	for (int i = 0; i < n; i++)
		want += 1.0f * (float)(N) + 1.0f; /* j = N - 1: a * N + sqrtf(1) */
	printf("%s: c[%d] = %.0f, expected %.0f\n", cudaGetErrorString(e), N - 1, c[N - 1], want);
	return e != cudaSuccess || c[N - 1] != want;
}
MAIN
"$NVSHIM" marlin_main.cu -isystem inc -o marlin -gencode arch=compute_75,code=sm_75 \
	-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 2>"$WORK/err"
sed 's/^/# nvshim: /' "$WORK/err"
check "marlin: sm_75 dropped" grep -q "dropped sm_75: every kernel is compiled out there" "$WORK/err"
./marlin >"$WORK/m.out" 2>&1
st=$?
sed 's/^/# marlin: /' "$WORK/m.out"
check "marlin: the module without its stub target runs on this GPU and computes" test $st -eq 0
finish
