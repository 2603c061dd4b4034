#!/bin/bash
# The loop guard and self-skipping: nvshim never runs itself as "the real nvcc" without end.
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"
unset CUDA_HOME CUDA_PATH

# A symlink named nvcc that points at nvshim, alone on PATH: nvshim skips it (same inode).
mkdir -p "$WORK/link"
ln -s "$NVSHIM" "$WORK/link/nvcc"
if [ -x /usr/local/cuda/bin/nvcc ]; then
	out=$(PATH="$WORK/link:/usr/bin:/bin" "$WORK/link/nvcc" --version 2>&1)
	check "a symlink to nvshim on PATH is skipped" grep -q 'Cuda compiler driver' <<<"$out"
else
	skip "a symlink to nvshim on PATH is skipped" "no /usr/local/cuda/bin/nvcc to fall back to"
fi

# The symlink named as the real nvcc: a clear error, no run.
out=$(NVSHIM_NVCC="$WORK/link/nvcc" "$NVSHIM" nvcc --version 2>&1)
st=$?
check "real_nvcc that is nvshim: status 1" test $st -eq 1
check "real_nvcc that is nvshim: says so" grep -q "is nvshim itself" <<<"$out"

# A wrapper script named nvcc that calls nvshim (a different inode): the second nvshim sees the
# depth variable and stops at once. The wrapper counts how often it ran for a command (nvshim may
# also ask it for its --version, for the toolkit gates: that loops no more than the rest).
mkdir -p "$WORK/wrap"
cat >"$WORK/wrap/nvcc" <<SH
#!/bin/sh
[ "\$1" = --version ] || echo x >>"$WORK/count"
exec "$NVSHIM" "\$@"
SH
chmod +x "$WORK/wrap/nvcc"
start=$(date +%s%N)
out=$(PATH="$WORK/wrap:/usr/bin:/bin" timeout 20 "$WORK/wrap/nvcc" -c k.cu 2>&1)
st=$?
end=$(date +%s%N)
check "loop: status 1" test $st -eq 1
check "loop: one clear error line" test "$(grep -c 'nvshim error   : nvshim was started again by the nvcc it ran' <<<"$out")" -eq 1 -a "$(wc -l <<<"$out")" -eq 1
check "loop: the wrapper ran twice (the user's call and nvshim's), not more" test "$(wc -l <"$WORK/count")" -eq 2
check "loop: ended at once (under 5 s)" test $(((end - start) / 1000000)) -lt 5000

finish
