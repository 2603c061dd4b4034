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
# (written again with cp after CMake's copy, for the page cache: docs/speed.md)
check "bin/nvshim and the libraries rewritten in place: nothing left beside them" \
	test -z "$(find "$P" -name '*.large')" -a -s "$P/libexec/nvshim/libnvshim-gate.so" -a -s "$P/libexec/nvshim/libnvshim-preload.so"
check "libexec/nvshim/bin/nvcc is a hard link to it (ccache 4.7 follows symbolic links to learn the name)" test ! -L "$P/libexec/nvshim/bin/nvcc" -a "$P/libexec/nvshim/bin/nvcc" -ef "$P/bin/nvshim"
for name in cc c++ gcc g++ clang clang++; do
	check "libexec/nvshim/cc/$name is a hard link to it" test ! -L "$P/libexec/nvshim/cc/$name" -a "$P/libexec/nvshim/cc/$name" -ef "$P/bin/nvshim"
done
check "etc/nvshim.ini" test -s "$P/etc/nvshim.ini"
check "etc/nvshim/gates.ini, the toolkit gates" cmp -s "$P/etc/nvshim/gates.ini" "$(dirname "$0")/../../config/gates.ini"
check "etc/nvshim/api.ini, the removed and changed CUDA APIs" cmp -s "$P/etc/nvshim/api.ini" "$(dirname "$0")/../../config/api.ini"
check "docs: api.md" test -s "$P/share/doc/nvshim/docs/api.md"
check "etc/nvshim/modules.d: the shipped rules" test -s "$P/etc/nvshim/modules.d/vllm.ini" -a -s "$P/etc/nvshim/modules.d/flash-attention.ini"
check "docs: the README, and the manual beside it as in the source tree" test -s "$P/share/doc/nvshim/README.md" \
	-a -s "$P/share/doc/nvshim/docs/README.md" -a -s "$P/share/doc/nvshim/docs/configuration.md"
check "docs: every page of docs/ is installed" diff <(cd "$(dirname "$0")/../../docs" && ls ./*.md) <(cd "$P/share/doc/nvshim/docs" && ls ./*.md)
check "shell wrapper" test -x "$P/share/nvshim/nvshim-env.sh"
check "man page nvshim(1)" test -s "$P/share/man/man1/nvshim.1"
check "the man page is what nvshim help --man prints" cmp -s "$P/share/man/man1/nvshim.1" <("$P/bin/nvshim" help --man)
check "preload library and its shell wrapper" test -f "$P/libexec/nvshim/libnvshim-preload.so" -a -x "$P/share/nvshim/nvshim-run.sh"
out=$("$P/libexec/nvshim/bin/nvcc" --version)
check "the installed nvcc acts as nvcc" grep -q 'Cuda compiler driver' <<<"$out"
out=$("$P/bin/nvshim" config)
check "the installed defaults file is read" grep -q "$P/etc/nvshim.ini (install)" <<<"$out"
mv "$P" "$WORK/moved"
out=$("$WORK/moved/libexec/nvshim/bin/nvcc" --nvshim-verbosity=normal --version 2>&1)
check "a moved prefix still works" grep -q 'Cuda compiler driver' <<<"$out"
out=$("$WORK/moved/libexec/nvshim/cc/cc" --version 2>&1)
check "a moved prefix: the installed cc acts as the host compiler" test "$out" = "$(cc --version)"
out=$("$WORK/moved/bin/nvshim" config)
check "a moved prefix still reads its defaults" grep -q "$WORK/moved/etc/nvshim.ini (install)" <<<"$out"
mkdir -p "$WORK/fa/hopper/instantiations"
printf '__global__ void k(float *x) { x[0] = 1; }\n' >"$WORK/fa/hopper/instantiations/flash_fwd_hdim64_bf16_sm90.cu"
out=$(cd "$WORK/fa" && "$WORK/moved/bin/nvshim" explain -c hopper/instantiations/flash_fwd_hdim64_bf16_sm90.cu -gencode arch=compute_90,code=sm_90)
check "a moved prefix still reads its shipped rules" grep -q "sm_90 -> sm_90a: require = sm_90a of .* at $WORK/moved/etc/nvshim/modules.d/flash-attention.ini" <<<"$out"
out=$(. "$WORK/moved/share/nvshim/nvshim-env.sh" && command -v nvcc && echo "$CUDACXX")
check "nvshim-env.sh puts nvshim first on PATH" test "$out" = "$WORK/moved/libexec/nvshim/bin/nvcc
$WORK/moved/libexec/nvshim/bin/nvcc"
# The nvcc name finds the installed defaults too (its directory is libexec/nvshim/bin).
printf '[nvshim]\nfallback_archs = 86\n' >>"$WORK/moved/etc/nvshim.ini"
cp "$(dirname "$0")/fixtures/kernel.cu" "$WORK/k.cu"
out=$(cd "$WORK" && NVSHIM_DEVICES= "$WORK/moved/libexec/nvshim/bin/nvcc" --dryrun -c k.cu -arch=native 2>&1)
check "the nvcc name of a moved prefix reads the prefix's etc/nvshim.ini" contains "$out" 'fallback_archs = 86 \[targets.native\]' 'ptxas -arch=sm_86'
out=$("$WORK/moved/bin/nvshim" env)
check "nvshim env names the moved prefix" contains "$out" "^PATH=$WORK/moved/libexec/nvshim/bin:" "^CUDACXX=$WORK/moved/libexec/nvshim/bin/nvcc; export CUDACXX\$" "^PYTORCH_NVCC=$WORK/moved/libexec/nvshim/bin/nvcc; export PYTORCH_NVCC\$"
out=$(eval "$("$WORK/moved/bin/nvshim" env)" && eval "$("$WORK/moved/bin/nvshim" env)" && echo "$PATH")
check "nvshim env twice puts the directory on PATH once" test "$(tr : '\n' <<<"$out" | grep -c "^$WORK/moved/libexec/nvshim/bin\$")" = 1
# A prefix copied without its hard links: the two names are two files, and neither takes the
# other for the real nvcc.
cp -r "$WORK/moved" "$WORK/copied"
check "cp -r made a copy, not a link" test ! "$WORK/copied/libexec/nvshim/bin/nvcc" -ef "$WORK/copied/bin/nvshim"
out=$(cd "$WORK" && unset CUDA_HOME CUDA_PATH && PATH="$WORK/copied/libexec/nvshim/bin:$(dirname "$NVCC"):$PATH" "$WORK/copied/bin/nvshim" -c k.cu -o k.o 2>&1)
check "bin/nvshim of a copied prefix skips its own libexec nvcc on PATH" test $? -eq 0 -a -s "$WORK/k.o" -a -z "$out"
out=$(PATH="$WORK/copied/libexec/nvshim/bin:$PATH" "$WORK/copied/bin/nvshim" doctor 2>&1)
check "doctor marks the copy as nvshim itself" contains "$out" "$WORK/copied/libexec/nvshim/bin/nvcc  (nvshim itself)"
out=$("$WORK/moved/bin/nvshim" run -- sh -c 'echo "$LD_PRELOAD"')
check "a moved prefix: nvshim run preloads the moved library" grep -q "$WORK/moved/libexec/nvshim/libnvshim-preload.so$" <<<"$out"
out=$("$WORK/moved/share/nvshim/nvshim-run.sh" sh -c 'echo "$LD_PRELOAD"')
check "nvshim-run.sh CMD: the same" grep -q "$WORK/moved/libexec/nvshim/libnvshim-preload.so$" <<<"$out"
out=$(LD_PRELOAD= bash -c ". '$WORK/moved/share/nvshim/nvshim-run.sh' && echo \"\$LD_PRELOAD\"")
check ". nvshim-run.sh: the library in LD_PRELOAD for the shell" test "$out" = "$WORK/moved/libexec/nvshim/libnvshim-preload.so"
# The gate beside the moved nvshim: a multi-target compile's stages take turns in its slots.
(cd "$WORK" && NVSHIM_LOG_FILE=$WORK/gate.log "$WORK/moved/bin/nvshim" -c k.cu -o gate.o \
	-gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80)
check "the gate is installed, and a moved prefix's nvshim uses it" \
	sh -c "test -f '$WORK/moved/libexec/nvshim/libnvshim-gate.so' && test -s '$WORK/gate.o' && grep -q 'stages taking turns in' '$WORK/gate.log'"
# The API table found relative to the executable: the installed one, edited, is the one used.
printf '#include <cuda_runtime.h>\nint main() { cudaThreadSynchronize(); return 0; }\n' >"$WORK/old.cu"
sed -i 's/^use = cudaDeviceSynchronize()$/use = the installed table'"'"'s advice/' "$WORK/moved/etc/nvshim/api.ini"
out=$(cd "$WORK" && NVSHIM_COMPAT=off NVSHIM_NVCC=$NVCC "$WORK/moved/bin/nvshim" -c old.cu -o old.o 2>&1)
check "a moved prefix: the API notes come from its etc/nvshim/api.ini" grep -qx "nvshim info    : old.cu:2: cudaThreadSynchronize was removed in CUDA 13.0: use the installed table's advice \[api.removed\]" <<<"$out"
# The compatibility layer's headers, installed and found relative to the executable.
rm -f "$WORK/old.o"
(cd "$WORK" && NVSHIM_VERBOSITY=verbose NVSHIM_NVCC=$NVCC "$WORK/moved/bin/nvshim" -c old.cu -o old.o 2>"$WORK/compat.err")
check "a moved prefix: the compatibility layer's headers are its include/nvshim/compat" \
	sh -c "test -f '$WORK/moved/include/nvshim/compat/runtime.h' && test -s '$WORK/old.o' && grep -q -- '-include $WORK/moved/include/nvshim/compat/runtime.h' '$WORK/compat.err'"
finish
