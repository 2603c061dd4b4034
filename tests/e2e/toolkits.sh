#!/bin/bash
# The same command lines on every toolkit: the machine's nvcc and nvcc 11.8 and 12.4 from
# scripts/fetch-toolkits.sh. Those have no headers, so each line runs with --dryrun, which checks
# every target option as a build would and names every image the build would embed ("kind=elf,
# sm=90"). A line is checked three ways: plain nvcc's verdict, nvshim's status and notes, and the
# images nvshim's line embeds.
NVSHIM=$1 NVCC=$2
DIR=${NVSHIM_TOOLKITS:-/var/tmp/nvshim-toolkits} # read before lib.sh clears NVSHIM_*
. "$(dirname "$0")/lib.sh"
cd "$WORK" || exit 1
printf '__global__ void k(float *x) { x[0] = 1; }\n' >k.cu

images() { # images TOOL ARGS...: the sorted images of a --dryrun, or "fatal"
	local tool=$1 out
	shift
	out=$("$tool" --dryrun -c k.cu -o k.o "$@" 2>&1)
	if grep -q 'fatal' <<<"$out"; then echo fatal; return; fi
	grep -oE 'kind=[a-z]+,sm=[0-9a-z]+' <<<"$out" | sort -u | tr '\n' ' ' | sed 's/ $//'
}

CUDA12=(-gencode arch=compute_50,code=sm_50 -gencode arch=compute_52,code=sm_52 -gencode arch=compute_60,code=sm_60
	-gencode arch=compute_61,code=sm_61 -gencode arch=compute_70,code=sm_70 -gencode arch=compute_75,code=sm_75
	-gencode arch=compute_80,code=sm_80 -gencode arch=compute_86,code=sm_86 -gencode arch=compute_89,code=sm_89
	-gencode arch=compute_90,code=sm_90)
CMAKE13=()
for a in 75 80 90 100 120; do CMAKE13+=("--generate-code=arch=compute_$a,code=[compute_$a,sm_$a]"); done

check_toolkit() { # check_toolkit NAME NVCC
	local name=$1 tool=$2 v want got
	v=$("$tool" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
	export NVSHIM_NVCC=$tool
	echo "# nvcc $v: $tool"

	# A CUDA 12 era list (50..90).
	if [ "$(images "$tool" "${CUDA12[@]}")" != fatal ]; then
		got=$(images "$NVSHIM" "${CUDA12[@]}" 2>/dev/null)
		check "$name: CUDA 12 list accepted as it is, the same images" test "$got" = "$(images "$tool" "${CUDA12[@]}")"
		check "$name: CUDA 12 list: no note" test -z "$("$NVSHIM" --dryrun -c k.cu -o k.o "${CUDA12[@]}" 2>&1 | grep '^nvshim ')"
	else
		got=$(images "$NVSHIM" "${CUDA12[@]}" 2>/dev/null)
		check "$name: CUDA 12 list: plain nvcc rejects it, nvshim builds 75..90" test "$got" = \
			"kind=elf,sm=75 kind=elf,sm=80 kind=elf,sm=86 kind=elf,sm=89 kind=elf,sm=90"
	fi

	# CMake's form with targets newer than the toolkit: what it knows stays, the rest is named.
	want=""
	for a in 75 80 90 100 120; do
		[ "$(images "$tool" -gencode "arch=compute_$a,code=sm_$a")" = fatal ] && continue
		want="$want kind=elf,sm=$a kind=ptx,sm=$a"
	done
	want=$(tr ' ' '\n' <<<"$want" | sed '/^$/d' | sort -u | tr '\n' ' ' | sed 's/ $//')
	got=$(images "$NVSHIM" "${CMAKE13[@]}" 2>"$WORK/err")
	check "$name: a CUDA 13 CMake list builds what nvcc $v supports" test "$got" = "$want"
	if [ "$(images "$tool" "${CMAKE13[@]}")" = fatal ]; then
		check "$name: ... and names what it dropped" grep -q "not supported by nvcc $v \[targets.unsupported\]" <(NVSHIM_NVCC=$tool "$NVSHIM" --dryrun -c k.cu -o k.o "${CMAKE13[@]}" 2>&1)
	fi

	# -arch=native with the GPU given.
	got=$(NVSHIM_DEVICES=90 images "$NVSHIM" -arch=native)
	check "$name: -arch=native with NVSHIM_DEVICES=90 builds sm_90" test "$got" = "kind=elf,sm=90"

	# -arch=sm_90a where the toolkit has it: one arch-specific pass.
	if [ "$(images "$tool" -arch=sm_90a)" != fatal ]; then
		got=$(images "$NVSHIM" -arch=sm_90a 2>/dev/null)
		check "$name: -arch=sm_90a: sm_90a and compute_90a only" test "$got" = "kind=elf,sm=90a kind=ptx,sm=90a"
	else
		got=$(NVSHIM_DEVICES=90 images "$NVSHIM" -arch=sm_90a 2>/dev/null)
		check "$name: -arch=sm_90a unknown to nvcc $v: the GPU's target instead" test "$got" = "kind=elf,sm=90"
	fi
	unset NVSHIM_NVCC
}

check_toolkit "nvcc on the machine" "$NVCC"
for v in 11.8 12.4; do
	tool="$DIR/$v/usr/lib/nvidia-cuda-toolkit/bin/nvcc"
	if [ -x "$tool" ]; then
		check_toolkit "nvcc $v" "$tool"
	else
		skip "nvcc $v" "not fetched (scripts/fetch-toolkits.sh)"
	fi
done
finish
