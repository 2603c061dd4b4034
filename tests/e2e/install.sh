#!/bin/bash
# `cmake --install` to a fresh prefix gives the documented layout, and the installed nvshim finds
# its default configuration relative to itself, wherever the prefix is.
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"
B=${NVSHIM_BUILD_DIR:-$(dirname "$NVSHIM")}
P="$WORK/some prefix"
cmake --install "$B" --prefix "$P" >"$WORK/install.out" 2>&1
check "cmake --install succeeds" test $? -eq 0
check "bin/nvshim" test -x "$P/bin/nvshim"
check "libexec/nvshim/bin/nvcc is a relative symlink to it" test "$(readlink "$P/libexec/nvshim/bin/nvcc")" = ../../../bin/nvshim -a "$P/libexec/nvshim/bin/nvcc" -ef "$P/bin/nvshim"
check "etc/nvshim.ini" test -s "$P/etc/nvshim.ini"
check "etc/nvshim/modules.d: the shipped rules" test -s "$P/etc/nvshim/modules.d/vllm.ini" -a -s "$P/etc/nvshim/modules.d/flash-attention.ini"
check "docs" test -s "$P/share/doc/nvshim/README.md" -a -s "$P/share/doc/nvshim/configuration.md"
check "shell wrapper" test -x "$P/share/nvshim/nvshim-env.sh"
out=$("$P/libexec/nvshim/bin/nvcc" --version)
check "the installed nvcc acts as nvcc" grep -q 'Cuda compiler driver' <<<"$out"
out=$("$P/bin/nvshim" config)
check "the installed defaults file is read" grep -q "$P/etc/nvshim.ini (install)" <<<"$out"
mv "$P" "$WORK/moved"
out=$("$WORK/moved/libexec/nvshim/bin/nvcc" --nvshim-verbosity=normal --version 2>&1)
check "a moved prefix still works" grep -q 'Cuda compiler driver' <<<"$out"
out=$("$WORK/moved/bin/nvshim" config)
check "a moved prefix still reads its defaults" grep -q "$WORK/moved/etc/nvshim.ini (install)" <<<"$out"
mkdir -p "$WORK/fa/hopper/instantiations"
printf '__global__ void k(float *x) { x[0] = 1; }\n' >"$WORK/fa/hopper/instantiations/flash_fwd_hdim64_bf16_sm90.cu"
out=$(cd "$WORK/fa" && "$WORK/moved/bin/nvshim" explain -c hopper/instantiations/flash_fwd_hdim64_bf16_sm90.cu -gencode arch=compute_90,code=sm_90)
check "a moved prefix still reads its shipped rules" grep -q "sm_90 -> sm_90a: require = sm_90a of .* at $WORK/moved/etc/nvshim/modules.d/flash-attention.ini" <<<"$out"
out=$(. "$WORK/moved/share/nvshim/nvshim-env.sh" && command -v nvcc && echo "$CUDACXX")
check "nvshim-env.sh puts nvshim first on PATH" test "$out" = "$WORK/moved/libexec/nvshim/bin/nvcc
$WORK/moved/libexec/nvshim/bin/nvcc"
finish
