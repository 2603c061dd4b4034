#!/bin/bash
# causal-conv1d 1.7.0 (a real PyTorch extension from its sdist) built for this machine's GPU
# with targets_only = devices, against the same `python3 setup.py build_ext` run plainly: both
# timed (a benchmark: printed, not checked), the module nvshim built checked against
# torch.nn.functional.conv1d, its machine code read with cuobjdump. Downloads nothing.
#   bash tests/gpu/causal_conv1d.sh NVSHIM [NVCC]
# The sdist: $SDIST, else tests/gpu/sdist/causal_conv1d-1.7.0.tar.gz (fetched on a machine with
# network: pip download --no-deps --no-binary :all: causal-conv1d==1.7.0). Its setup.py asks for
# nine -gencode targets on CUDA 13 (75, 80, 87, 90, 100, 120, 103, 110, 121) and --threads 4.
# PLAIN_TIMEOUT (default 360 s) caps the plain build, which then reports how long it ran before
# it was stopped; SHIM_TIMEOUT (default 150 s) caps the build through nvshim. MAX_JOBS defaults
# to the number of CPUs. SIDES (default "shim plain") picks the builds, so that each can have a
# call of its own on a machine lent by the minute; PLAIN_SECS gives the plain build's time when
# it ran in an earlier call.
NVSHIM=$1
NVCC=${2:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
GPUDIR="$(cd "$(dirname "$0")" && pwd)"
. "$GPUDIR/../e2e/lib.sh"
SDIST=${SDIST:-$GPUDIR/sdist/causal_conv1d-1.7.0.tar.gz}
PLAIN_TIMEOUT=${PLAIN_TIMEOUT:-360}
SHIM_TIMEOUT=${SHIM_TIMEOUT:-150}
SIDES=${SIDES:-shim plain}
export MAX_JOBS=${MAX_JOBS:-$(nproc)}
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
	skip "causal-conv1d" "no NVIDIA GPU on this machine"
	finish
	exit
fi
if ! python3 -c 'import torch, torch.utils.cpp_extension; assert torch.cuda.is_available()' 2>/dev/null; then
	skip "causal-conv1d" "no PyTorch with CUDA"
	finish
	exit
fi
if [ ! -f "$SDIST" ]; then
	skip "causal-conv1d" "no sdist at $SDIST"
	finish
	exit
fi
# nvshim under the name nvcc (build tree or install), as an absolute path: the builds run elsewhere.
NV=$(dirname "$NVSHIM")/libexec/nvshim/bin/nvcc
[ -x "$NV" ] || NV=$(dirname "$NVSHIM")/../libexec/nvshim/bin/nvcc
NV=$(cd "$(dirname "$NV")" && pwd)/nvcc
NVCC=$(cd "$(dirname "$NVCC")" && pwd)/$(basename "$NVCC")
REAL=$(cd "$(dirname "$NVCC")/.." && pwd)
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '. ')
echo "# GPU: $(nvidia-smi -L | head -1), compute capability $cc; $(nproc) CPUs, MAX_JOBS=$MAX_JOBS"
echo "# $("$NVCC" --version | tail -2 | head -1); torch $(python3 -c 'import torch; print(torch.__version__)')"
CUOBJDUMP=$(command -v cuobjdump || ls "$REAL/bin/cuobjdump" 2>/dev/null || find_cuobjdump)
cd "$WORK" || exit 1
unset TORCH_CUDA_ARCH_LIST NVCC_PREPEND_FLAGS NVCC_APPEND_FLAGS PYTORCH_NVCC CUDACXX
mkdir plain shim
tar xzf "$SDIST" -C plain && tar xzf "$SDIST" -C shim
# A CUDA_HOME whose bin/nvcc is nvshim (for PyTorch versions without PYTORCH_NVCC), everything
# else the toolkit's; nvshim runs the toolkit's nvcc (NVSHIM_NVCC), not itself.
mkdir -p cuda/bin
for f in "$REAL"/*; do [ "$(basename "$f")" = bin ] || ln -s "$f" cuda/; done
for f in "$REAL"/bin/*; do ln -s "$f" cuda/bin/; done
rm cuda/bin/nvcc && ln -s "$NV" cuda/bin/nvcc

# $1: the folder, $2: the timeout, then the environment. Prints the seconds; the status in $rc.
build() {
	local dir=$1 limit=$2 t0 t1
	shift 2
	t0=$(date +%s%N)
	(cd "$dir"/causal_conv1d-1.7.0 && env "$@" CAUSAL_CONV1D_FORCE_BUILD=TRUE \
		timeout "$limit" python3 setup.py build_ext >"$WORK/$dir.log" 2>&1)
	rc=$?
	t1=$(date +%s%N)
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
}

# The module against torch.nn.functional.conv1d (a depthwise causal convolution).
verify() {
	python3 - "$1" <<'EOF'
import os, sys, torch, torch.nn.functional as F
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[1])))
import causal_conv1d_cuda as m
torch.manual_seed(0)
worst = 0.0
for dtype, tol in ((torch.float32, 1e-4), (torch.float16, 1e-2), (torch.bfloat16, 5e-2)):
    for width in (2, 3, 4):
        for silu in (False, True):
            x = torch.randn(2, 64, 513, device="cuda", dtype=dtype)
            w = torch.randn(64, width, device="cuda", dtype=torch.float32)
            b = torch.randn(64, device="cuda", dtype=torch.float32)
            out = torch.empty_like(x)
            m.causal_conv1d_fwd(x, w, b, None, None, out, None, silu)
            ref = F.conv1d(x.float(), w.unsqueeze(1), b, padding=width - 1, groups=64)[..., :x.shape[-1]]
            if silu:
                ref = F.silu(ref)
            err = (out.float() - ref).abs().max().item() / max(1.0, ref.abs().max().item())
            worst = max(worst, err)
            assert err <= tol, (dtype, width, silu, err)
torch.cuda.synchronize()
print(f"# largest error relative to the output's range: {worst:.2e}")
EOF
}
if [[ " $SIDES " == *" shim "* ]]; then
	build shim "$SHIM_TIMEOUT" CUDA_HOME="$WORK/cuda" PYTORCH_NVCC="$NV" NVSHIM_NVCC="$NVCC" \
		NVSHIM_TARGETS_ONLY=devices NVSHIM_LOG_FILE="$WORK/shim.jsonl"
	shim_rc=$rc shim_secs=$secs
	check "through nvshim, targets_only = devices: builds (${shim_secs} s)" test "$shim_rc" -eq 0
	[ "$shim_rc" -eq 0 ] || tail -30 "$WORK/shim.log" | sed 's/^/#   /'
	SO=$(find shim -name 'causal_conv1d_cuda*.so' | head -1)
	python3 -c '
import json, os, sys
for l in map(json.loads, open(sys.argv[1])):
    src = [os.path.basename(a) for a in l["argv_in"] if a.endswith(".cu")]
    said = [n for n in l["notes"] if "[threads.split]" in n or "[modules.method]" in n]
    print("#   %-28s %7.1f s  %s" % (",".join(src) or l["tool"], l["wall_ms"] / 1000, " | ".join(n[:110] for n in said)))
' shim.jsonl 2>/dev/null
	check "three CUDA sources went through nvshim" test "$(grep -c '"argv_in":\[[^]]*\.cu"' shim.jsonl 2>/dev/null)" -ge 3
	check "each kept the nine targets it was given in its log line (the request)" python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
cu = [l for l in lines if any(a.endswith(".cu") for a in l["argv_in"])]
assert cu and all(sum(a.startswith("arch=compute_") for a in l["argv_in"]) == 9 for l in cu)
assert all(any("[targets.only]" in n for n in l["notes"]) for l in cu)' shim.jsonl
	check "the note: this build's code runs only on sm_$cc" grep -q "this build's code runs only on sm_$cc" shim.log
	if [ -n "$SO" ] && [ -n "$CUOBJDUMP" ]; then
		got=$("$CUOBJDUMP" --list-elf "$SO" 2>/dev/null | sed -n 's/^ELF file.*\.\(sm_[0-9a-z]*\)\.cubin/\1/p' | sort -u | tr '\n' ' ')
		echo "# machine code in $(basename "$SO"): $got"
		check "the module holds machine code for sm_$cc only" test "$(echo $got | sed 's/a$//')" = "sm_$cc"
	fi

	if [ -n "$SO" ]; then
		out=$(verify "$SO" 2>&1)
		check "the module nvshim built matches torch.nn.functional.conv1d (fp32, fp16, bf16; widths 2-4; silu)" test $? -eq 0
		echo "$out" | tail -3
	fi
fi

if [[ " $SIDES " != *" plain "* ]]; then
	[ -n "${PLAIN_SECS:-}" ] && echo "# through nvshim: $shim_secs s; plain (an earlier call): $PLAIN_SECS s: $(awk -v a="$shim_secs" -v b="$PLAIN_SECS" 'BEGIN { printf "%.3f", a / b }') of the plain build's time (goal 0.2)"
	finish
	exit
fi
build plain "$PLAIN_TIMEOUT" CUDA_HOME="$REAL"
plain_rc=$rc plain_secs=$secs
if [ "$plain_rc" -eq 124 ]; then
	echo "# plain build: stopped after $plain_secs s (PLAIN_TIMEOUT=$PLAIN_TIMEOUT), $(grep -c ptxas "$WORK/plain.log") ptxas lines by then"
	echo "# through nvshim: $shim_secs s, at most $(awk -v a="$shim_secs" -v b="$plain_secs" 'BEGIN { printf "%.3f", a / b }') of the plain build's time (goal 0.2)"
else
	check "plain build: builds (${plain_secs} s)" test "$plain_rc" -eq 0
	echo "# plain build: $plain_secs s; through nvshim: $shim_secs s: $(awk -v a="$shim_secs" -v b="$plain_secs" 'BEGIN { printf "%.3f", a / b }') of the plain build's time (goal 0.2)"
	PSO=$(find plain -name 'causal_conv1d_cuda*.so' | head -1)
	if [ "$plain_rc" -eq 0 ] && [ -n "$PSO" ]; then
		out=$(verify "$PSO" 2>&1)
		check "the plainly built module matches too" test $? -eq 0
	fi
fi
finish
