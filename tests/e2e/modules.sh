#!/bin/bash
# The modules pass against the real nvcc: one test kernel per family, each compiled with a
# PyTorch-style list (-gencode for 75, 80, 86, 89, 90) and a CMake-style one
# (--generate-code=arch=compute_NN,code=[compute_NN,sm_NN]); the targets embedded in each object
# are read with cuobjdump. Then several sources whose lists differ (-c, a link, CMake's
# --options-file), the probe's cost (a second build runs one nvcc), 16 concurrent builds sharing
# one cache, rules, settings, failures nvshim cannot fix, and nvcc 12.4 (--dryrun only: its
# Debian package has no headers).
NVSHIM=$1 NVCC=$2
DIR=${NVSHIM_TOOLKITS:-/var/tmp/nvshim-toolkits} # read before lib.sh clears NVSHIM_*
. "$(dirname "$0")/lib.sh"
FIX="$(cd "$(dirname "$0")" && pwd)/fixtures/modules"
CUOBJDUMP=$(command -v cuobjdump || python3 -c 'import glob, sys, site
for d in site.getsitepackages() + [site.getusersitepackages()]:
    for p in glob.glob(d + "/nvidia/*/bin/cuobjdump"):
        print(p); sys.exit()' 2>/dev/null)
if [ -z "$CUOBJDUMP" ] || [ ! -x "$CUOBJDUMP" ]; then
	skip "modules suite" "no cuobjdump (pip install nvidia-cuda-cuobjdump)"
	finish
	exit
fi
cd "$WORK" || exit 1
cp "$FIX"/*.cu .
embedded() { # the targets in an object, sorted, one line: "elf:sm_80 ptx:sm_90"
	"$CUOBJDUMP" --list-elf --list-ptx "$1" 2>/dev/null | sed -n 's/^ELF file.*\.\(sm_[0-9a-z]*\)\.cubin/elf:\1/p; s/^PTX file.*\.\(sm_[0-9a-z]*\)\.ptx/ptx:\1/p' | sort | tr '\n' ' ' | sed 's/ $//'
}
PT=()
for a in 75 80 86 89 90; do PT+=(-gencode "arch=compute_$a,code=sm_$a"); done
CM=()
for a in 75 80 86 89 90; do CM+=("--generate-code=arch=compute_$a,code=[compute_$a,sm_$a]"); done
elf() { local o="" a; for a; do o="$o elf:sm_$a"; done; echo "${o# }"; }
both() { local o="" a; for a; do o="$o elf:sm_$a ptx:sm_$a"; done; tr ' ' '\n' <<<"${o# }" | sort | tr '\n' ' ' | sed 's/ $//'; }

# family NAME RULE PT-WANT CM-WANT: plain nvcc fails on the list (unless RULE is "-"), nvshim
# builds exactly the wanted targets and says why in a note of that rule.
family() {
	local name=$1 rule=$2 want_pt=$3 want_cm=$4
	# (plain nvcc's side: not in the sanitizer pass, lib.sh)
	if [ -z "$SANITIZED" ]; then
		"$NVCC" -c "$name.cu" -o "plain_$name.o" "${PT[@]}" 2>/dev/null
		local plain=$?
		if [ "$rule" = - ]; then
			check "$name: plain nvcc builds the PyTorch list" test $plain -eq 0
		else
			check "$name: plain nvcc fails on the PyTorch list" test $plain -ne 0
		fi
	fi
	"$NVSHIM" -c "$name.cu" -o "pt_$name.o" "${PT[@]}" 2>"$WORK/err_pt_$name"
	check "$name: PyTorch list builds through nvshim" test $? -eq 0
	check "$name: PyTorch list embeds $want_pt" test "$(embedded "pt_$name.o")" = "$want_pt"
	# (the sanitizer pass, and the second toolkit (toolkit135.sh): the CMake list, which reaches
	# the same decisions through another spelling, for one family of each rule)
	: >"$WORK/err_cm_$name"
	case "${SANITIZED}${E2E_SECOND_TOOLKIT:-}:$name" in
	?*:plain | ?*:cpasync_exc | ?*:wgmma | :*)
		"$NVSHIM" -c "$name.cu" -o "cm_$name.o" "${CM[@]}" 2>"$WORK/err_cm_$name"
		check "$name: CMake list builds through nvshim" test $? -eq 0
		check "$name: CMake list embeds $want_cm" test "$(embedded "cm_$name.o")" = "$want_cm"
		;;
	esac
	if [ "$rule" = - ]; then
		check "$name: nothing to say" test ! -s "$WORK/err_pt_$name" -a ! -s "$WORK/err_cm_$name"
	else
		check "$name: explained [$rule]" grep -q "^nvshim warning : $name.cu: .*\[$rule\]$" "$WORK/err_pt_$name"
	fi
}
family plain - "$(elf 75 80 86 89 90)" "$(both 75 80 86 89 90)"
family ldmatrix - "$(elf 75 80 86 89 90)" "$(both 75 80 86 89 90)"
family cpasync_exc modules.probe "$(elf 80 86 89 90)" "$(both 80 86 89 90)"
check "cpasync_exc: the note names the reason and line" grep -qx "nvshim warning : cpasync_exc.cu: dropped sm_75: device code does not support exception handling (line 19) \[modules.probe\]" "$WORK/err_pt_cpasync_exc"
family wmma_bf16 modules.scan "$(elf 80 86 89 90)" "$(both 80 86 89 90)"
family fp8_cvt modules.probe "$(elf 89 90)" "$(both 89 90)"
family tma_cluster modules.scan "$(elf 90)" "$(both 90)"
family wgmma modules.scan "elf:sm_90a" "elf:sm_90a ptx:sm_90a"
check "wgmma: sm_90 upgraded, in one note" grep -qx "nvshim warning : wgmma.cu: sm_90 -> sm_90a: wgmma needs sm_90a (line 6) \[modules.scan\]" "$WORK/err_pt_wgmma"
family setmaxnreg modules.scan "elf:sm_90a" "elf:sm_90a ptx:sm_90a"
check "setmaxnreg: sm_90 upgraded" grep -q "^nvshim warning : setmaxnreg.cu: sm_90 -> sm_90a: setmaxnreg needs an arch-specific target (sm_90a, ...) (line 7) \[modules.scan\]$" "$WORK/err_pt_setmaxnreg"
family static_assert modules.probe "$(elf 80 86 89 90)" "$(both 80 86 89 90)"
[ -n "$SANITIZED" ] || check "plain: the object is the one plain nvcc builds" cmp -s <(embedded pt_plain.o) <(embedded plain_plain.o)

# tcgen05 with a CUDA 13 CMake list: sm_100 becomes the family target sm_100f (enough for
# tcgen05; cuobjdump names family SASS sm_100), sm_120 and below are dropped.
CM13=()
for a in 75 80 90 100 120; do CM13+=("--generate-code=arch=compute_$a,code=[compute_$a,sm_$a]"); done
if [ -z "$SANITIZED" ]; then
	"$NVCC" -c tcgen05.cu -o plain_tc.o "${CM13[@]}" 2>/dev/null
	check "tcgen05: plain nvcc fails on 75..120" test $? -ne 0
fi
"$NVSHIM" -c tcgen05.cu -o tc.o "${CM13[@]}" 2>"$WORK/err"
check "tcgen05: builds through nvshim" test $? -eq 0
check "tcgen05: sm_100f SASS and PTX only" test "$(embedded tc.o)" = "elf:sm_100 ptx:sm_100f"
check "tcgen05: upgrade explained" grep -q "tcgen05.cu: compute_100 -> compute_100f, sm_100 -> sm_100f: tcgen05 needs" "$WORK/err"

# Never an empty build: no requested target supports tcgen05. nvcc's own error, then one
# message naming the source, each target and why.
"$NVSHIM" -c tcgen05.cu -o none.o "${PT[@]}" 2>"$WORK/err"
st=$?
check "tcgen05 on 75..90: fails" test $st -ne 0 -a ! -e none.o
check "tcgen05 on 75..90: nvcc's error and one message naming every target" contains "$(cat "$WORK/err")" \
	"^ptxas .*Instruction 'tcgen05.fence' not supported on .target 'sm_75'" \
	"^nvshim error   : tcgen05.cu supports none of the requested targets \[modules.probe\]" \
	"^nvshim error   :   sm_75: tcgen05 needs" "^nvshim error   :   sm_90: tcgen05 needs"

# The probe's cost: the first build probes, the second runs exactly one nvcc. A logging nvcc
# counts every process started for the source.
mkdir -p fake
printf '#!/bin/sh\necho "$*" >>%s/runs\nexec "%s" "$@"\n' "$WORK" "$NVCC" >fake/nvcc
chmod +x fake/nvcc
cp cpasync_exc.cu probe_me.cu
runs() { grep -c "probe_me.cu" "$WORK/runs" 2>/dev/null || echo 0; }
NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" -c probe_me.cu -o p1.o "${PT[@]}" 2>/dev/null
first=$(runs)
: >"$WORK/runs"
NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" -c probe_me.cu -o p2.o "${PT[@]}" 2>"$WORK/err"
second=$(runs)
echo "# probe cost: first build $first nvcc runs, second build $second"
check "probe: the first build probes (more than 2 runs)" test "$first" -gt 2
check "probe: the second build runs exactly one nvcc" test "$second" -eq 1
check "probe: ... with the verdict's list" test "$(embedded p2.o)" = "$(elf 80 86 89 90)"
check "probe: ... and says so again" grep -q "dropped sm_75: device code does not support exception handling" "$WORK/err"
# A corrupt verdict is ignored: the build probes again and succeeds.
for f in home/.cache/nvshim/modules/*/*.verdict; do echo garbage >"$f"; done
: >"$WORK/runs"
NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" -c probe_me.cu -o p3.o "${PT[@]}" 2>/dev/null
check "probe: a corrupt verdict is ignored (builds, probes again)" test $? -eq 0 -a "$(runs)" -gt 2 -a "$(embedded p3.o)" = "$(elf 80 86 89 90)"
# An edit invalidates the verdict.
echo "// edited" >>probe_me.cu
: >"$WORK/runs"
NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" -c probe_me.cu -o p4.o "${PT[@]}" 2>/dev/null
check "probe: an edited source is probed again" test "$(runs)" -gt 2

# Concurrency: 16 builds at once, 8 sources that need probing, each built twice, one cache.
export XDG_CACHE_HOME="$WORK/shared-cache"
: >"$WORK/runs"
for i in 1 2 3 4 5 6 7 8; do sed "s/copy_async/copy_async_$i/" cpasync_exc.cu >"conc_$i.cu"; done
pids=()
for i in 1 2 3 4 5 6 7 8; do
	for r in a b; do
		NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" -c "conc_$i.cu" -o "conc_${i}_$r.o" -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 2>"$WORK/conc_${i}_$r.err" &
		pids+=($!)
	done
done
fails=0
for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
check "16 concurrent builds: all succeed" test $fails -eq 0
echo "# 16 concurrent builds of 8 sources: $(grep -c conc_ "$WORK/runs") nvcc runs (a second build of a source waits for the first one's probe)"
bad=0
for i in 1 2 3 4 5 6 7 8; do for r in a b; do [ "$(embedded "conc_${i}_$r.o")" = "elf:sm_80" ] || bad=$((bad + 1)); done; done
check "16 concurrent builds: every object holds sm_80 only" test $bad -eq 0
nverdicts=$(ls "$XDG_CACHE_HOME"/nvshim/modules/*/*.verdict | wc -l)
check "16 concurrent builds: one verdict per source, none half-written" test "$nverdicts" -eq 8 -a -z "$(ls "$XDG_CACHE_HOME"/nvshim/modules/*/ | grep 'verdict\.')"
complete=0
for f in "$XDG_CACHE_HOME"/nvshim/modules/*/*.verdict; do
	[ "$(tail -1 "$f")" = end ] && grep -q '^unit compute_75:sm_75 fail' "$f" && grep -q '^unit compute_80:sm_80 pass' "$f" && complete=$((complete + 1))
done
check "16 concurrent builds: every verdict complete" test $complete -eq 8
: >"$WORK/runs"
for i in 1 2 3 4 5 6 7 8; do NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" -c "conc_$i.cu" -o "again_$i.o" -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 2>/dev/null; done
check "16 concurrent builds: no verdict lost (8 rebuilds, 8 nvcc runs)" test "$(grep -c conc_ "$WORK/runs")" -eq 8
unset XDG_CACHE_HOME
export XDG_CACHE_HOME="$WORK/home/.cache"

# Several sources, different lists: one nvcc per list, objects where nvcc puts them.
: >"$WORK/runs"
NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" -c plain.cu wmma_bf16.cu ldmatrix.cu -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 2>"$WORK/err"
check "-c a.cu b.cu c.cu: builds" test $? -eq 0 -a -e plain.o -a -e wmma_bf16.o -a -e ldmatrix.o
check "-c: one nvcc per list (2)" test "$(grep -c -- '-c ' "$WORK/runs")" -eq 2
check "-c: plain.o and ldmatrix.o have 75 and 80, wmma_bf16.o 80" test "$(embedded plain.o)|$(embedded ldmatrix.o)|$(embedded wmma_bf16.o)" = "$(elf 75 80)|$(elf 75 80)|$(elf 80)"
: >"$WORK/runs"
NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" -c plain.cu ldmatrix.cu -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 2>"$WORK/err"
check "-c with equal lists: one nvcc, nothing said" test "$(grep -c -- '-c ' "$WORK/runs")" -eq 1 -a ! -s "$WORK/err"
printf 'int main() { return 0; }\n' >main.cpp
mkdir -p tmp
TMPDIR="$WORK/tmp" "$NVSHIM" plain.cu wmma_bf16.cu main.cpp -o app -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 2>"$WORK/err"
check "link of sources with different lists: builds and runs" sh -c "test -x app && ./app"
kernels() { # "kernel:arch" for each kernel of each ELF in a file, sorted
	"$CUOBJDUMP" --dump-elf-symbols "$1" 2>/dev/null | awk '/^arch = /{a=$3} /ENTRY/{print $NF ":" a}' |
		perl -pe 's/^_Z(\d+)(\w+):/substr($2, 0, $1) . ":"/e' | sort | tr '\n' ' ' | sed 's/ $//'
}
check "link: saxpy for sm_75 and sm_80, the bf16 kernel for sm_80 only" test "$(kernels app)" = "bf16_mma:sm_80 saxpy:sm_75 saxpy:sm_80"
check "link: said" grep -q "one nvcc command per list, then one to link" "$WORK/err"
check "link: its private objects are gone" test -z "$(ls "$WORK/tmp")"

# CMake's --options-file: flags and include directories in a file; the scan follows a project
# header found through an -I of that file.
mkdir -p proj/include proj/src
printf '#pragma once\n__device__ __forceinline__ void warpgroup_fence() { asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory"); }\n' >proj/include/hopper.cuh
printf '#include <hopper.cuh>\n__global__ void k(float *y) { warpgroup_fence(); y[threadIdx.x] = 1.0f; }\n' >proj/src/gemm.cu
cp plain.cu proj/src/other.cu
git -C proj init -q 2>/dev/null || mkdir -p proj/.git
printf -- '-I%s/proj/include\n"--generate-code=arch=compute_80,code=[compute_80,sm_80]"\n"--generate-code=arch=compute_90,code=[compute_90,sm_90]"\n' "$WORK" >proj/flags.rsp
(cd proj && "$NVSHIM" -c src/gemm.cu src/other.cu --options-file flags.rsp) 2>"$WORK/err"
check "--options-file: builds" test $? -eq 0 -a -e proj/gemm.o -a -e proj/other.o
check "--options-file: the header's wgmma drops sm_80 and upgrades sm_90" test "$(embedded proj/gemm.o)" = "elf:sm_90a ptx:sm_90a"
check "--options-file: the other source keeps its list" test "$(embedded proj/other.o)" = "$(both 80 90)"
check "--options-file: the note names the header" grep -q "gemm.cu: dropped compute_80, sm_80: wgmma needs sm_90a (hopper.cuh:2)" "$WORK/err"

# Rules: a project's .nvshim.ini, and the shipped rules directory.
mkdir -p ruled/hopper/instantiations
cp plain.cu ruled/quant_kernel.cu
cp plain.cu ruled/hopper/instantiations/flash_fwd_hdim64_bf16_sm90.cu
printf '[module "quant_*.cu"]\nmin_arch = 86\nrequire = sm_90a\nflags = -DQUANT=1\n' >ruled/.nvshim.ini
(cd ruled && "$NVSHIM" -c quant_kernel.cu -o q.o "${PT[@]}") 2>"$WORK/err"
check "rules: min_arch and require" test "$(embedded ruled/q.o)" = "elf:sm_86 elf:sm_89 elf:sm_90a"
check "rules: explained with the file" grep -q "quant_kernel.cu: dropped sm_75, sm_80: below min_arch = 86 of \[module \"quant_\*.cu\"\] at .*/ruled/.nvshim.ini:2 \[modules.rules\]" "$WORK/err"
out=$(cd ruled && "$NVSHIM" explain -c quant_kernel.cu -o q.o "${PT[@]}")
check "rules: flags reach the command" contains "$out" "^command *: .* -DQUANT=1$"
(cd ruled && "$NVSHIM" -c hopper/instantiations/flash_fwd_hdim64_bf16_sm90.cu -o fa.o "${PT[@]}") 2>"$WORK/err"
check "shipped rules (flash-attention): sm_90a only" test "$(embedded ruled/fa.o)" = "elf:sm_90a"
check "shipped rules: the rules file is named" grep -q "etc/nvshim/modules.d/flash-attention.ini" "$WORK/err"

# explain shows the per-source lists.
out=$("$NVSHIM" explain -c plain.cu wgmma.cu "${PT[@]}")
check "explain: per-source lists" contains "$out" "^modules   : plain.cu: .* (as requested)$" \
	"^ *: wgmma.cu: -gencode=arch=compute_90a,code=sm_90a$"

# An installed GPU that loses its code is named.
NVSHIM_DEVICES=75 "$NVSHIM" -c wmma_bf16.cu -o g.o "${PT[@]}" 2>"$WORK/err"
check "a dropped target of an installed GPU is named" grep -q "wmma_bf16.cu: no code left for the installed GPU of compute capability 7.5" "$WORK/err"

# Each part can be turned off; with the pass off a failure is nvcc's, byte for byte.
"$NVCC" -c wmma_bf16.cu -o off1.o "${PT[@]}" >"$WORK/nvcc.out" 2>"$WORK/nvcc.err"
nst=$?
NVSHIM_MODULES=false "$NVSHIM" -c wmma_bf16.cu -o off2.o "${PT[@]}" >"$WORK/shim.out" 2>"$WORK/shim.err"
sst=$?
check "modules = false: nvcc's failure, byte for byte" test $nst -eq $sst -a "$(normalise "$WORK/nvcc.err")" = "$(normalise "$WORK/shim.err")" -a ! -s "$WORK/shim.out"
NVSHIM_MODULES_SCAN=false "$NVSHIM" -c wmma_bf16.cu -o off3.o "${PT[@]}" 2>"$WORK/err"
check "modules_scan = false: the probe finds it instead" test "$(embedded off3.o)" = "$(elf 80 86 89 90)" -a -n "$(grep 'modules.probe' "$WORK/err")"
cp cpasync_exc.cu noprobe.cu
NVSHIM_MODULES_PROBE=false "$NVSHIM" -c noprobe.cu -o off4.o "${PT[@]}" 2>"$WORK/err"
check "modules_probe = false: nvcc's failure" test $? -ne 0 -a -n "$(grep 'exception handling' "$WORK/err")" -a -z "$(grep nvshim "$WORK/err")"

# Failures nvshim cannot fix look exactly like nvcc's: a syntax error, and an error every
# target shares.
printf '__global__ void k(float *x) { x[0] = 1 }\n' >syntax.cu
printf '__global__ void k(float *x) {\n#ifdef __CUDA_ARCH__\n  static_assert(sizeof(int) == 8, "never");\n#endif\n}\n' >always.cu
for f in syntax always; do
	"$NVCC" -c $f.cu -o a.o "${PT[@]}" >"$WORK/nvcc.out" 2>"$WORK/nvcc.err"
	nst=$?
	"$NVSHIM" -c $f.cu -o b.o "${PT[@]}" >"$WORK/shim.out" 2>"$WORK/shim.err"
	sst=$?
	check "$f error: same status and bytes as nvcc" test $nst -ne 0 -a $nst -eq $sst -a "$(normalise "$WORK/nvcc.err")" = "$(normalise "$WORK/shim.err")"
done

# nvcc 12.4 (Debian's, no headers): --dryrun shows what the scan and the rules decide.
tool="$DIR/12.4/usr/lib/nvidia-cuda-toolkit/bin/nvcc"
if [ -x "$tool" ]; then
	images() { grep -oE 'kind=[a-z]+,sm=[0-9a-z]+' | sort -u | tr '\n' ' ' | sed 's/ $//'; }
	got=$(NVSHIM_NVCC=$tool "$NVSHIM" --dryrun -c wgmma.cu -o w.o "${PT[@]}" 2>&1 | images)
	check "nvcc 12.4 --dryrun: wgmma builds sm_90a only" test "$got" = "kind=elf,sm=90a"
	got=$(NVSHIM_NVCC=$tool "$NVSHIM" --dryrun -c wmma_bf16.cu -o w.o "${CM[@]}" 2>&1 | images)
	check "nvcc 12.4 --dryrun: bf16 wmma 80..90 with PTX" test "$got" = "kind=elf,sm=80 kind=elf,sm=86 kind=elf,sm=89 kind=elf,sm=90 kind=ptx,sm=80 kind=ptx,sm=86 kind=ptx,sm=89 kind=ptx,sm=90"
	got=$(cd ruled && NVSHIM_NVCC=$tool "$NVSHIM" --dryrun -c quant_kernel.cu -o q.o "${PT[@]}" 2>&1 | images)
	check "nvcc 12.4 --dryrun: rules" test "$got" = "kind=elf,sm=86 kind=elf,sm=89 kind=elf,sm=90a"
else
	skip "nvcc 12.4" "not fetched (scripts/fetch-toolkits.sh)"
fi
finish
