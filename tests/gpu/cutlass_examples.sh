#!/bin/bash
# CUTLASS Hopper examples nobody here wrote, built as a new user would: each copied under a name of
# its own and built with plain -arch=sm_90, by plain nvcc and through nvshim (modules_rules =
# false, empty verdict cache), in one step (kernels.cu -o app) and as -c + link; then run on the
# GPU. Plain nvcc's programs abort ("Arch conditional MMA instruction used without targeting
# appropriate compute capability"); nvshim's decide sm_90a before compiling and verify. Example
# 54's host code calls the driver API: its one-step link is retried with -lcuda, alone.
#   bash tests/gpu/cutlass_examples.sh NVSHIM [NVCC] [EXAMPLES]    (EXAMPLES: "49 54 63 88")
# Skips cleanly without a compute capability 9.0 GPU or nvidia-cutlass.
NVSHIM=$1
NVCC=${2:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
EXAMPLES=${3:-49 54 63 88}
. "$(dirname "$0")/../e2e/lib.sh"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	skip "CUTLASS examples on the GPU" "no NVIDIA GPU on this machine"
	finish
	exit
fi
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '. ')
C=${CUTLASS_SOURCE:-$(python3 -c 'import glob, site, sys
for d in site.getsitepackages() + [site.getusersitepackages()] + sys.path:
    for p in glob.glob(d + "/cutlass_library/source"):
        print(p); sys.exit()' 2>/dev/null)}
if [ "$cc" != 90 ] || [ -z "$C" ]; then
	skip "CUTLASS examples on the GPU" "needs a compute capability 9.0 GPU and nvidia-cutlass (found: sm_$cc, '${C}')"
	finish
	exit
fi
echo "# GPU: $(nvidia-smi -L | head -1)"
cd "$WORK" || exit 1
export NVSHIM_MODULES_RULES=false
FLAGS=(-std=c++17 --expt-relaxed-constexpr -w -I"$C/include" -I"$C/tools/util/include" -I"$C/examples/common")
args_of() { # the run's arguments: small problems, verification on
	case $1 in
	88) echo "--verify --b=2 --h=4 --q=1024 --k=1024 --d=128" ;;
	*) echo "--m=2048 --n=2048 --k=2048" ;;
	esac
}
# Builds every example four ways at once (the machine's CPUs share them).
for e in $EXAMPLES; do
	dir=$(ls -d "$C"/examples/${e}_* | head -1)
	src=$(ls "$dir"/*.cu | head -1)
	mkdir -p "ex$e"
	cp "$src" "ex$e/kernels.cu"
	(
		cd "ex$e" || exit 1
		inc=(-I"$dir")
		"$NVCC" "${FLAGS[@]}" "${inc[@]}" -arch=sm_90 kernels.cu -o plain -lcuda >plain.build 2>&1 &
		NVSHIM_CACHE_DIR=$PWD/c1 "$NVSHIM" "${FLAGS[@]}" "${inc[@]}" -arch=sm_90 kernels.cu -o app >one.build 2>&1 &
		(NVSHIM_CACHE_DIR=$PWD/c2 "$NVSHIM" "${FLAGS[@]}" "${inc[@]}" -arch=sm_90 -c kernels.cu -o kernels.o &&
			NVSHIM_CACHE_DIR=$PWD/c2 "$NVSHIM" -arch=sm_90 kernels.o -o app2) >two.build 2>&1 &
		wait
	) &
done
wait
for e in $EXAMPLES; do
	cd "$WORK/ex$e" || continue
	sed "s/^/# example $e, nvshim in one step: /" one.build | grep -v '^$' | head -6
	check "example $e: nvshim in one step: built" test -x app
	check "example $e: nvshim: sm_90 -> sm_90a decided before compiling" grep -q "sm_90 -> sm_90a.*\[modules.decide\]" one.build
	check "example $e: nvshim -c + link: built" test -x app2
	if [ -x plain ]; then
		timeout 300 ./plain $(args_of "$e") >plain.out 2>&1
		sed "s/^/# example $e, plain nvcc: /" plain.out | grep -E 'Abort|arch|Passed|Disposition|\[OK\]|FAIL' | head -3
		check "example $e: plain nvcc's -arch=sm_90 program does not run its kernels" test -z "$(grep -E 'Passed|\[OK\]' plain.out)"
	fi
	for p in app app2; do
		timeout 300 "./$p" $(args_of "$e") >"$p.out" 2>&1
		echo "# example $e, $p: status $?"
		sed "s/^/# example $e, $p: /" "$p.out" | grep -E 'Passed|Failed|\[OK\]|FAIL|Disposition|TFLOP|Abort' | head -6
		check "example $e: $p runs and verifies" sh -c "grep -Eq 'Passed|\[OK\]' $p.out && ! grep -Eq 'Abort|Failed|FAIL' $p.out"
	done
done
finish
