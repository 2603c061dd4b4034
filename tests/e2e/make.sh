#!/bin/bash
# A plain Makefile that calls `nvcc` from PATH, with nvshim's libexec directory first on PATH,
# and a CUDA 12 era target list (sm_50, which nvcc 13.0 rejects).
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"
LIBEXEC="${NVSHIM_BUILD_DIR:-$(dirname "$NVSHIM")}/libexec/nvshim/bin"
mkdir -p "$WORK/mk"
cp "$(dirname "$0")/fixtures/kernel.cu" "$WORK/mk/"
cat >"$WORK/mk/Makefile" <<'MK'
ARCH = -gencode arch=compute_50,code=sm_50 -gencode arch=compute_80,code=sm_80
all: app
kernel.o: kernel.cu
	nvcc -c kernel.cu -o kernel.o $(ARCH)
app: kernel.o
	nvcc kernel.o -o app $(ARCH)
MK
mkdir -p "$WORK/plainbin" && ln -s "$NVCC" "$WORK/plainbin/nvcc"
PATH="$WORK/plainbin:$PATH" make -C "$WORK/mk" >"$WORK/plain.out" 2>&1
check "plain nvcc 13 rejects the Makefile's sm_50" sh -c "test ! -e '$WORK/mk/kernel.o' && grep -q 'compute_50' '$WORK/plain.out'"
export NVSHIM_LOG_FILE="$WORK/log.jsonl"
PATH="$LIBEXEC:$PATH" make -C "$WORK/mk" >"$WORK/make.out" 2>&1
check "make builds through nvcc on PATH" test $? -eq 0
check "the program runs" sh -c "'$WORK/mk/app' | grep -q 'host part ran'"
check "both nvcc calls went through nvshim" test "$(wc -l <"$NVSHIM_LOG_FILE")" -eq 2
check "the log shows sm_50 dropped" grep -q 'dropped .*sm_50.*targets.unsupported' "$NVSHIM_LOG_FILE"
finish
