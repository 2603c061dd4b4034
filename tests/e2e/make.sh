#!/bin/bash
# A plain Makefile that calls `nvcc` from PATH, with nvshim's libexec directory first on PATH.
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"
LIBEXEC="${NVSHIM_BUILD_DIR:-$(dirname "$NVSHIM")}/libexec/nvshim/bin"
mkdir -p "$WORK/mk"
cp "$(dirname "$0")/fixtures/kernel.cu" "$WORK/mk/"
cat >"$WORK/mk/Makefile" <<'MK'
all: app
kernel.o: kernel.cu
	nvcc -c kernel.cu -o kernel.o
app: kernel.o
	nvcc kernel.o -o app
MK
export NVSHIM_LOG_FILE="$WORK/log.jsonl"
PATH="$LIBEXEC:$PATH" make -C "$WORK/mk" >"$WORK/make.out" 2>&1
check "make builds through nvcc on PATH" test $? -eq 0
check "the program runs" sh -c "'$WORK/mk/app' | grep -q 'host part ran'"
check "both nvcc calls went through nvshim" test "$(wc -l <"$NVSHIM_LOG_FILE")" -eq 2
finish
