#!/bin/bash
# flash-attn 2.8.3 (its sdist, its own setup.py, MAX_JOBS unset, the default arch list 80;90;
# 100;120, --threads 4 from NVCC_THREADS' default) built through nvshim with memory_budget=48G, as a
# workstation would have: the compilers' summed resident memory, sampled every 50 ms, must stay
# within 48G; then the module imports and its output (forward and backward) matches
# torch.nn.functional.scaled_dot_product_attention on a few shapes. With MODE=plain the same build
# runs with plain nvcc (CUDA_HOME the real toolkit), to record its peak beside (FA_TIMEOUT: the
# build's own limit, 540 s by default).
#
# A subset of the kernels: flash_api.cpp, the head-dim-64 fp16 forward, split-KV forward and
# backward kernels (causal and not); every other instantiation is compiled as a stub that throws
# (FA_SUBSET names the kept files instead, e.g. flash_bwd_hdim128_fp16_sm80.cu, the 6.3 GB
# stage). Under 48G on 16 CPUs the build takes about 10 minutes (574 s on an H200 machine): run
# it in the background (setsid) with FA_TIMEOUT raised where one command is limited to 10.
#
#   bash tests/gpu/flash_attn_memory.sh NVSHIM SDIST_DIR [nvshim|plain]
# FA_JOBS=N: MAX_JOBS for the build (a point of the hand-tuned sweep, with plain). With nvshim
# it prints, from the budget's journal, each kind of stage's peaks and what they were expected at.
# SDIST_DIR holds flash_attn-2.8.3.tar.gz and the wheels the build needs without a network
# (ninja, psutil, packaging, einops, wheel), fetched on a machine with one by
#   python3 -m pip download --only-binary :all: --no-deps -d DIR ninja psutil packaging einops wheel
NVSHIM=$1 SDIST=$2 MODE=${3:-nvshim}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
GPUDIR="$(cd "$(dirname "$0")" && pwd)"
. "$GPUDIR/../e2e/lib.sh"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	skip "flash-attn under a memory budget" "no NVIDIA GPU on this machine"
	finish
	exit
fi
if [ ! -f "$SDIST/flash_attn-2.8.3.tar.gz" ] || ! python3 -c 'import torch' 2>/dev/null; then
	skip "flash-attn under a memory budget" "no flash_attn-2.8.3.tar.gz in $SDIST, or no PyTorch"
	finish
	exit
fi
NVSHIM=$(cd "$(dirname "$NVSHIM")" && pwd)/$(basename "$NVSHIM")
SDIST=$(cd "$SDIST" && pwd)
echo "# GPU: $(nvidia-smi -L | head -1); $(nproc) CPUs; $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
cd "$WORK" || exit 1
# what setup.py imports, from the wheels beside the sdist when they are not installed
missing=()
for m in psutil packaging einops wheel; do python3 -c "import $m" 2>/dev/null || missing+=("$m"); done
command -v ninja >/dev/null || missing+=(ninja)
if [ ${#missing[@]} -gt 0 ]; then
	python3 -m pip install -q --no-index --find-links "$SDIST" --target "$WORK/pydeps" "${missing[@]}"
	export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$WORK/pydeps" PATH="$PATH:$WORK/pydeps/bin"
	echo "# installed from $SDIST: ${missing[*]}"
fi
tar xzf "$SDIST/flash_attn-2.8.3.tar.gz"
cd flash_attn-2.8.3 || exit 1
KEEP=${FA_SUBSET:-flash_fwd_hdim64_fp16_sm80.cu flash_fwd_hdim64_fp16_causal_sm80.cu flash_fwd_split_hdim64_fp16_sm80.cu flash_fwd_split_hdim64_fp16_causal_sm80.cu flash_bwd_hdim64_fp16_sm80.cu flash_bwd_hdim64_fp16_causal_sm80.cu}
KEEP="$KEEP" python3 - <<'EOF'
import os, re
keep = set(os.environ["KEEP"].split())
src = open("setup.py").read()
dropped, stubs = [], ['#include <stdexcept>', '#include <cutlass/numeric_types.h>', '#include "namespace_config.h"',
                      '#include "flash.h"', 'namespace FLASH_NAMESPACE {']
def repl(m):
    name = m.group(1).split("/")[-1]
    if name in keep:
        return m.group(0)
    dropped.append(m.group(1))
    return ""
src = re.sub(r'\s*"(csrc/flash_attn/src/[^"]+\.cu)",', repl, src)
src = src.replace('"csrc/flash_attn/flash_api.cpp",',
                  '"csrc/flash_attn/flash_api.cpp",\n                "csrc/flash_attn/src/subset_stubs.cu",', 1)
body = '{ throw std::runtime_error("flash-attn subset: this kernel was not built"); }'
for f in dropped:
    text = open(f).read()
    for m in re.finditer(r'template<>\s*void (run_mha_\w+?)<([^>]*)>\((\w+) &params, cudaStream_t stream\)', text):
        stubs.append(f"template<> void {m.group(1)}<{m.group(2)}>({m.group(3)} &params, cudaStream_t stream) {body}")
    for m in re.finditer(r'template void (run_mha_\w+)<([^>]*)>\((\w+) &params, cudaStream_t stream\);', text):
        stubs.append(f"template<> void {m.group(1)}<{m.group(2)}>({m.group(3)} &params, cudaStream_t stream) {body}")
stubs.append("}")
open("csrc/flash_attn/src/subset_stubs.cu", "w").write("\n".join(stubs) + "\n")
open("setup.py", "w").write(src)
print(f"# kept {len(keep)} kernel files, {len(dropped)} as stubs")
EOF
unset MAX_JOBS NVCC_THREADS FLASH_ATTN_CUDA_ARCHS TORCH_CUDA_ARCH_LIST
# FA_JOBS: MAX_JOBS for a point of the hand-tuned sweep (plain nvcc)
[ -n "${FA_JOBS:-}" ] && export MAX_JOBS=$FA_JOBS
export FLASH_ATTENTION_FORCE_BUILD=TRUE NVSHIM_CACHE_DIR=$WORK/cache NVSHIM_BUILD_ID=flash-attn
if [ "$MODE" = plain ]; then
	export CUDA_HOME=$(cd "$(dirname "$NVCC")/.." && pwd)
	label="plain nvcc"
else
	export CUDA_HOME=$("$NVSHIM" toolkit-view) NVSHIM_MEMORY_BUDGET=48G NVSHIM_NVCC=$NVCC
	label="nvshim, memory_budget=48G"
fi
# the sampler: the summed resident memory of every compiler on the machine, every 50 ms
python3 - >"$WORK/samples" <<'EOF' &
import os, time
C = {"cicc", "ptxas", "cudafe++", "cc1plus", "nvlink", "fatbinary"}
page = os.sysconf("SC_PAGE_SIZE")
while not os.path.exists("/tmp/.nvshim-fa-stop-%d" % os.getppid()):
    t = 0
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                s = open(f"/proc/{p}/stat").read()
                if s[s.index("(") + 1:s.rindex(")")] in C:
                    t += int(open(f"/proc/{p}/statm").read().split()[1]) * page
            except (OSError, ValueError):
                pass
    print(t, flush=True)
    time.sleep(0.05)
EOF
sampler=$!
t0=$(date +%s)
timeout "${FA_TIMEOUT:-540}" python3 setup.py build_ext --inplace >"$WORK/build.log" 2>&1
status=$?
t1=$(date +%s)
touch /tmp/.nvshim-fa-stop-$$
wait "$sampler"
rm -f /tmp/.nvshim-fa-stop-$$
peak=$(sort -n "$WORK/samples" | tail -1)
# FA_KEEP=DIR: the build's log, the samples and the budget's journal copied there
if [ -n "${FA_KEEP:-}" ]; then
	mkdir -p "$FA_KEEP" && cp "$WORK/build.log" "$WORK/samples" "$FA_KEEP/"
	[ -f "$NVSHIM_CACHE_DIR/threads/mem/journal" ] && cp "$NVSHIM_CACHE_DIR/threads/mem/journal" "$FA_KEEP/"
fi
jobs=$(grep -o 'MAX_JOBS[^,]*' "$WORK/build.log" | head -1)
echo "# $label${MAX_JOBS:+, MAX_JOBS=$MAX_JOBS}: build status $status in $((t1 - t0)) s; compilers' summed peak $(awk -v p="$peak" 'BEGIN { printf "%.1f GiB", p / 2^30 }') (sampled); ninja jobs: $(python3 -c 'import os; print(max(1, min(os.cpu_count() // 2, int(__import__("psutil").virtual_memory().available / 2**30 / 9))))' 2>/dev/null) (setup.py's own choice, MAX_JOBS unset)"
grep -E "error|Killed" "$WORK/build.log" | head -5 | sed 's/^/#   /'
check "$label: flash-attn builds" test "$status" = 0
if [ "$MODE" != plain ]; then
	check "... the compilers' summed resident memory stayed within 48G" test "${peak:-0}" -le $((48 << 30))
	"$NVSHIM" stats 2>/dev/null | sed -n '/^memory/,$p' | sed 's/^/# /'
	# each kind's stages: how many, their peaks (least, median, most), what they were expected
	# at (least, most) and the time they waited
	awk -F'\t' '{ n[$3]++; p[$3] = p[$3] " " $4; e[$3] = e[$3] " " $5; w[$3] += $6 }
		END { for (k in n) print k, n[k], w[k], p[k], "|", e[k] }' "$NVSHIM_CACHE_DIR/threads/mem/journal" 2>/dev/null |
		while read -r kind count waited rest; do
			peaks=$(tr ' ' '\n' <<<"${rest%%|*}" | grep . | sort -n)
			ests=$(tr ' ' '\n' <<<"${rest#*|}" | grep . | sort -n)
			echo "# journal: $kind x$count: peaks $(head -1 <<<"$peaks" | awk '{ printf "%.2f", $1 / 2^20 }')/$(sed -n "$(( (count + 1) / 2 ))p" <<<"$peaks" | awk '{ printf "%.2f", $1 / 2^20 }')/$(tail -1 <<<"$peaks" | awk '{ printf "%.2f", $1 / 2^20 }') GiB, expected $(head -1 <<<"$ests" | awk '{ printf "%.2f", $1 / 2^20 }')..$(tail -1 <<<"$ests" | awk '{ printf "%.2f", $1 / 2^20 }') GiB, waited $((waited / 1000)) s"
		done
fi
[ "$status" = 0 ] || { finish; exit; }
out=$(python3 - 2>&1 <<'EOF'
import torch, torch.nn.functional as F
from flash_attn import flash_attn_func
torch.manual_seed(0)
worst = 0.0
for (b, s, h, d, causal) in [(2, 128, 4, 64, False), (1, 512, 8, 64, True), (3, 77, 2, 64, False), (2, 256, 4, 128, False)]:
    q, k, v = (torch.randn(b, s, h, d, device="cuda", dtype=torch.float16, requires_grad=True) for _ in range(3))
    ref = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=causal).transpose(1, 2)
    if d == 64:
        out = flash_attn_func(q, k, v, causal=causal)
        err = (out - ref).abs().max().item()
        g = torch.randn_like(out)
        dq, dk, dv = torch.autograd.grad(out, (q, k, v), g)
        rq, rk, rv = torch.autograd.grad(ref, (q, k, v), g)
        gerr = max((dq - rq).abs().max().item(), (dk - rk).abs().max().item(), (dv - rv).abs().max().item())
        print(f"# shape {(b, s, h, d)} causal={causal}: max |out - sdpa| {err:.2e}, grads {gerr:.2e}")
        worst = max(worst, err, gerr / 4)
    else:
        # head dim 128: its forward is a stub (the kept kernels are head dim 64)
        print(f"# shape {(b, s, h, d)}: forward not in the subset")
print("MATCH" if worst < 2e-2 else "MISMATCH")
EOF
)
echo "$out" | grep -v '^MATCH$' | sed 's/^\([^#]\)/# \1/'
check "the module imports and matches scaled_dot_product_attention (forward and backward)" contains "$out" "^MATCH$"
finish
