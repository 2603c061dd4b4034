#!/bin/bash
# Stub targets (rule modules.stubs) against the real nvcc, with modules_rules = false: kernels
# compiled out on some target, read from the object nvcc wrote. A Marlin-style kernel in an
# -isystem header (empty below sm_80), a print-and-trap stub, a module mixing a stub and a real
# kernel, tuned code (no stub), and library code behind arch-specific feature macros derived in
# a header (sm_90 -> sm_90a, sm_100 -> sm_100a or sm_100f), each through a PyTorch-style
# -gencode list, a CMake-style one and -arch. The embedded targets are read with cuobjdump; a
# logging nvcc counts the processes of a second build.
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"
FIX="$(cd "$(dirname "$0")" && pwd)/fixtures/stubs"
CUOBJDUMP=$(find_cuobjdump)
if [ -z "$CUOBJDUMP" ] || [ ! -x "$CUOBJDUMP" ]; then
	skip "stubs suite" "no cuobjdump (pip install nvidia-cuda-cuobjdump)"
	finish
	exit
fi
cd "$WORK" || exit 1
cp -r "$FIX"/. .
export NVSHIM_MODULES_RULES=false
embedded() { # "elf:sm_80 ptx:sm_90", sorted
	"$CUOBJDUMP" --list-elf --list-ptx "$1" 2>/dev/null | sed -n 's/^ELF file.*\.\(sm_[0-9a-z]*\)\.cubin/elf:\1/p; s/^PTX file.*\.\(sm_[0-9a-z]*\)\.ptx/ptx:\1/p' | sort | tr '\n' ' ' | sed 's/ $//'
}
PT=()
for a in 75 80 86 90; do PT+=(-gencode "arch=compute_$a,code=sm_$a"); done
CM=()
for a in 75 80; do CM+=("--generate-code=arch=compute_$a,code=[compute_$a,sm_$a]"); done

# Marlin-style: sm_75 is all stubs; dropped, with a note naming the kernels; the PTX of
# compute_75 holds the same stubs and goes too.
"$NVCC" -c marlin.cu -isystem inc -o plain.o "${PT[@]}" 2>/dev/null
check "marlin: plain nvcc builds every target, sm_75 included" test "$(embedded plain.o)" = "elf:sm_75 elf:sm_80 elf:sm_86 elf:sm_90"
"$NVSHIM" -c marlin.cu -isystem inc -o m.o "${PT[@]}" 2>"$WORK/err"
check "marlin: PyTorch list: sm_75 dropped" test "$(embedded m.o)" = "elf:sm_80 elf:sm_86 elf:sm_90"
check "marlin: the note names the target, the kernels and the rule" contains "$(cat "$WORK/err")" \
	"^nvshim warning : marlin.cu: dropped sm_75: every kernel is compiled out there" "marlin_like<16>" \
	"marlin_like<32>" "sm_80 has the code" "\[modules.stubs\]"
"$NVSHIM" -c marlin.cu -isystem inc -o mc.o "${CM[@]}" 2>"$WORK/err"
check "marlin: CMake list: sm_75 and compute_75 dropped" test "$(embedded mc.o)" = "elf:sm_80 ptx:sm_80"
"$NVSHIM" -c marlin.cu -isystem inc -o ml "${PT[@]}" --nvshim-modules-stubs=false 2>"$WORK/err"
check "marlin: modules_stubs = false: as nvcc builds it, silently" test "$(embedded ml)" = "$(embedded plain.o)" -a ! -s "$WORK/err"

# A second build of an unchanged source runs exactly one nvcc (the verdict is cached).
mkdir -p fake
printf '#!/bin/sh\necho "$*" >>%s/runs\nexec "%s" "$@"\n' "$WORK" "$NVCC" >fake/nvcc
chmod +x fake/nvcc
runs() { grep -c "$1" "$WORK/runs" 2>/dev/null || echo 0; }
cp marlin.cu cached.cu
NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" -c cached.cu -isystem inc -o c1.o "${PT[@]}" 2>/dev/null
first=$(runs cached.cu)
: >"$WORK/runs"
NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" -c cached.cu -isystem inc -o c2.o "${PT[@]}" 2>"$WORK/err"
second=$(runs cached.cu)
echo "# stub check cost: first build $first nvcc runs, second build $second"
check "cached: the first build runs nvcc 4 times (-E for sm_90 and sm_90a, decided before compiling; the build; the build without sm_75)" test "$first" -eq 4
check "cached: the second build runs exactly one nvcc" test "$second" -eq 1
check "cached: ... with the verdict's list, and says so" test "$(embedded c2.o)" = "elf:sm_80 elf:sm_86 elf:sm_90" -a -n "$(grep 'dropped sm_75' "$WORK/err")"
# A changed header (outside the project: -isystem) makes the verdict stale: checked again.
sed -i 's/__CUDA_ARCH__ >= 800/__CUDA_ARCH__ >= 750/' inc/marlin.cuh
: >"$WORK/runs"
NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" -c cached.cu -isystem inc -o c3.o "${PT[@]}" 2>"$WORK/err"
check "cached: a library header changed: sm_75 has the body now, kept, nothing said" test "$(embedded c3.o)" = "elf:sm_75 elf:sm_80 elf:sm_86 elf:sm_90" -a ! -s "$WORK/err"
cp "$FIX/inc/marlin.cuh" inc/

# A --dryrun, whose steps a caller runs itself (sccache: nvshim never reads the object): the
# stub target is decided before the compile, by a private compile at the first --dryrun of the
# source; the steps nvshim prints have no sm_75, and the next --dryrun compiles nothing.
cp marlin.cu dry.cu
: >"$WORK/runs"
NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" --dryrun -c dry.cu -isystem inc -o d1.o "${PT[@]}" >"$WORK/dry1" 2>"$WORK/err"
first=$(runs dry.cu)
grep -h '^#\$' "$WORK/dry1" "$WORK/err" >"$WORK/steps1"
check "dryrun: nvcc's steps, for sm_80, sm_86 and sm_90 and not sm_75" sh -c "grep -q 'arch=sm_80' '$WORK/steps1' && grep -q 'arch=sm_90' '$WORK/steps1' && ! grep -q 'sm_75\|compute_75' '$WORK/steps1'"
check "dryrun: the note says the target went" contains "$(cat "$WORK/err")" \
	"dropped sm_75: every kernel is compiled out there" "\[modules.stubs\]"
check "dryrun: the first runs nvcc 4 times (-E for sm_90 and sm_90a; the private compile; its own --dryrun)" \
	test "$first" -eq 4
: >"$WORK/runs"
NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" --dryrun -c dry.cu -isystem inc -o d1.o "${PT[@]}" >"$WORK/dry2" 2>"$WORK/err"
second=$(runs dry.cu)
echo "# a --dryrun's stub check: first $first nvcc runs, second $second"
check "dryrun: the second --dryrun runs nvcc once (its own), from the verdict" test "$second" -eq 1
check "dryrun: ... and prints the same steps" test "$(grep -h '^#\$' "$WORK/dry2" "$WORK/err" | grep -c 'sm_75')" -eq 0
# one machine-code target: nothing to compare it with, no private compile
: >"$WORK/runs"
NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" --dryrun -c dry.cu -isystem inc -o d3.o -arch=sm_75 >/dev/null 2>&1
check "dryrun: one target: only nvcc's own --dryrun" test "$(runs dry.cu)" -eq 1

# some kernels compiled out (the target stays) and a failed compile: checked once as well
cp mixed.cu drymixed.cu
NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" --dryrun -c drymixed.cu -o dm.o "${PT[@]}" >/dev/null 2>&1
: >"$WORK/runs"
NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" --dryrun -c drymixed.cu -o dm.o "${PT[@]}" >/dev/null 2>&1
check "dryrun: some kernels compiled out: the second --dryrun runs nvcc once" test "$(runs drymixed.cu)" -eq 1
printf '#include <marlin.cuh>\n__global__ void broken(float *p) { p[0] = undeclared; }\n' >drybad.cu
NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" --dryrun -c drybad.cu -isystem inc -o db.o "${PT[@]}" >/dev/null 2>&1
: >"$WORK/runs"
NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" --dryrun -c drybad.cu -isystem inc -o db.o "${PT[@]}" >/dev/null 2>&1
check "dryrun: a source that does not compile: the second --dryrun runs nvcc once" test "$(runs drybad.cu)" -eq 1

# Print and trap below sm_80: a stub too.
"$NVSHIM" -c printed.cu -o p.o "${PT[@]}" 2>"$WORK/err"
check "printed: sm_75 dropped" test "$(embedded p.o)" = "elf:sm_80 elf:sm_86 elf:sm_90"
check "printed: named" grep -q "dropped sm_75: every kernel is compiled out there.*needs_ampere" "$WORK/err"

# A stub and a real kernel: the target stays, a warning names the stub kernel.
"$NVSHIM" -c mixed.cu -o x.o "${PT[@]}" 2>"$WORK/err"
check "mixed: every target kept" test "$(embedded x.o)" = "elf:sm_75 elf:sm_80 elf:sm_86 elf:sm_90"
check "mixed: a warning names the stub kernel and the target" contains "$(cat "$WORK/err")" \
	"^nvshim warning : mixed.cu: 1 kernel is compiled out on sm_75" "fast_path(float const\*, float\*, int)" "\[modules.stubs\]"
check "mixed: ... not the real one" test -z "$(grep everywhere "$WORK/err")"
check "mixed: the warning is said again by the next build (it is about this source)" \
	sh -c "'$NVSHIM' -c mixed.cu -o x2.o ${PT[*]} 2>&1 | grep -q 'compiled out on sm_75'"

# Tuned code: both bodies real; a tiny kernel: nothing to say, nvcc's output unchanged.
"$NVCC" -c tuned.cu -o tp.o "${PT[@]}" >"$WORK/plain.out" 2>"$WORK/plain.err"
"$NVSHIM" -c tuned.cu -o tn.o "${PT[@]}" >"$WORK/out" 2>"$WORK/err"
check "tuned: no stub: targets as nvcc builds them" test "$(embedded tn.o)" = "$(embedded tp.o)"
check "tuned: stdout and stderr byte for byte nvcc's" cmp -s "$WORK/plain.err" "$WORK/err"
check "tuned: ... stdout too" cmp -s "$WORK/plain.out" "$WORK/out"

# Arch-specific code behind a library's derived macros: -arch=sm_90 builds sm_90a machine
# code and keeps plain compute_90 PTX (forward compatibility).
"$NVCC" -c feat90.cu -isystem inc -o fp.o -arch=sm_90 2>/dev/null
check "feat90: plain nvcc: sm_90 with the kernel compiled out" test "$(embedded fp.o)" = "elf:sm_90 ptx:sm_90"
"$NVSHIM" -c feat90.cu -isystem inc -o f1.o -arch=sm_90 2>"$WORK/err"
check "feat90: -arch=sm_90: sm_90a machine code, plain PTX kept" test "$(embedded f1.o)" = "elf:sm_90a ptx:sm_90"
check "feat90: the note names the upgrade, the method and the rule" contains "$(cat "$WORK/err")" \
	"^nvshim warning : feat90.cu: sm_90 -> sm_90a: the device code differs when compiled for sm_90a" \
	"decided before compiling \[modules.decide\]"
check "feat90: ... not the kernel that is the same on both" test -z "$(grep 'scale(' "$WORK/err")"
"$NVSHIM" -c feat90.cu -isystem inc -o f2.o -gencode arch=compute_90,code=sm_90 2>/dev/null
check "feat90: PyTorch's -gencode arch=compute_90,code=sm_90: sm_90a" test "$(embedded f2.o)" = "elf:sm_90a"
"$NVSHIM" -c feat90.cu -isystem inc -o f3.o "--generate-code=arch=compute_90,code=[compute_90,sm_90]" 2>/dev/null
check "feat90: CMake's list for 90: sm_90a and compute_90" test "$(embedded f3.o)" = "elf:sm_90a ptx:sm_90"
"$NVSHIM" -c feat90.cu -isystem inc -o f4.o "${PT[@]}" 2>/dev/null
check "feat90: with older targets: sm_90a, and the older ones as requested" test "$(embedded f4.o)" = "elf:sm_75 elf:sm_80 elf:sm_86 elf:sm_90a"
out=$("$NVSHIM" explain -c feat90.cu -isystem inc -o f5.o -arch=sm_90)
check "feat90: explain shows the decision from the cached verdict" contains "$out" \
	"^modules   : feat90.cu: -gencode=arch=compute_90a,code=sm_90a -gencode=arch=compute_90,code=compute_90" \
	"^note      : feat90.cu: sm_90 -> sm_90a: .*\[modules.decide\]"
"$NVSHIM" -c feat90.cu -isystem inc -o f6.o -arch=sm_90 --nvshim-log-file="$WORK/log.json" 2>/dev/null
check "feat90: the JSON log records the decision" grep -q 'modules.decide' "$WORK/log.json"

# The same decision in every path a compile can take (each with an empty verdict cache).
fresh() { export NVSHIM_CACHE_DIR="$WORK/cache-$1"; }
unique() { embedded "$1" | tr ' ' '\n' | sort -u | tr '\n' ' ' | sed 's/ $//'; }
CC_DIR="${NVSHIM_BUILD_DIR:-$(dirname "$NVSHIM")}/libexec/nvshim/cc"
fresh dc
"$NVSHIM" -dc feat90.cu -isystem inc -o d1.o -arch=sm_90 2>"$WORK/err" &&
	"$NVSHIM" -dlink d1.o -o d1_link.o -arch=sm_90 2>>"$WORK/err"
check "paths: -dc, then -dlink: sm_90a in the relocatable object" test "$(embedded d1.o)" = "elf:sm_90a ptx:sm_90" -a -s d1_link.o
fresh two
"$NVSHIM" -c feat90.cu tuned.cu -isystem inc -arch=sm_90 2>"$WORK/err"
check "paths: two sources on one line: sm_90a for the library code, sm_90 for the other" \
	test "$(embedded feat90.o)" = "elf:sm_90a ptx:sm_90" -a "$(embedded tuned.o)" = "elf:sm_90 ptx:sm_90"
fresh cc
"$CC_DIR/gcc" -c feat90.cu -isystem inc -o cc1.o -arch=sm_90 2>"$WORK/err"
check "paths: CC mode (gcc -c x.cu): sm_90a" test "$(embedded cc1.o)" = "elf:sm_90a ptx:sm_90"
fresh shared
"$NVSHIM" -shared -Xcompiler -fPIC feat90.cu -isystem inc -o libfeat.so -arch=sm_90 2>"$WORK/err"
check "paths: -shared: sm_90a in the library" test "$(unique libfeat.so)" = "elf:sm_90a ptx:sm_90"
if command -v ccache >/dev/null; then
	fresh ccache
	CCACHE_DIR="$WORK/ccache" NVSHIM_LAUNCHER=ccache "$NVSHIM" -c feat90.cu -isystem inc -o cc2.o -arch=sm_90 2>"$WORK/err"
	check "paths: ccache in front (launcher): sm_90a" test "$(embedded cc2.o)" = "elf:sm_90a ptx:sm_90"
	CCACHE_DIR="$WORK/ccache" NVSHIM_LAUNCHER=ccache "$NVSHIM" -c feat90.cu -isystem inc -o cc3.o -arch=sm_90 2>"$WORK/err"
	check "paths: ccache in front: the second build is a hit, with the decided list" \
		sh -c "CCACHE_DIR='$WORK/ccache' ccache -s 2>/dev/null | grep -Eq '(cache hit|Hits).*[1-9]' && test '$(embedded cc3.o)' = 'elf:sm_90a ptx:sm_90'"
fi
unset NVSHIM_CACHE_DIR

# sm_100: the a form where only __CUDA_ARCH_FEAT_SM100_ALL builds the code, the f form (which
# also runs on sm_103) where __CUDA_ARCH_FAMILY_SPECIFIC__ does.
"$NVSHIM" -c feat100a.cu -isystem inc -o g1.o -arch=sm_100 2>"$WORK/err"
check "feat100a: -arch=sm_100: sm_100a machine code, plain PTX kept" test "$(embedded g1.o)" = "elf:sm_100a ptx:sm_100"
check "feat100a: f first (f and a preprocess differently), then a: the object shows the kernel f compiles out" \
	grep -q "sm_100 -> sm_100a: 1 kernel is compiled out on sm_100f that sm_100a builds.*gemm_sm100<64>" "$WORK/err"
"$NVSHIM" -c feat100f.cu -isystem inc -o g2.o -arch=sm_100 2>"$WORK/err"
# (cuobjdump --list-elf names an sm_100f image sm_100; its -elf header says sm_100f)
check "feat100f: -arch=sm_100: sm_100f, the family form, builds the same code" test "$(embedded g2.o)" = "elf:sm_100 ptx:sm_100" -a -n "$("$CUOBJDUMP" -elf g2.o | grep '^arch = sm_100f$')"
check "feat100f: said" grep -q "sm_100 -> sm_100f: the device code differs when compiled for sm_100f.*\[modules.decide\]" "$WORK/err"
# The f and a forms preprocess the same, but ptxas refuses an instruction for sm_100f (tcgen05's
# int8 MMA, as in CUTLASS's block-scaled sparse GEMMs): the a form, not the plain target.
: >"$WORK/runs"
NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" -c feat100i8.cu -isystem inc -o g3.o -arch=sm_100 2>"$WORK/err"
check "feat100i8: ptxas refuses .kind::i8 for sm_100f: sm_100a machine code, plain PTX kept" test "$(embedded g3.o)" = "elf:sm_100a ptx:sm_100"
check "feat100i8: said, with what ptxas refused" grep -q "feat100i8.cu: the family form chosen before compiling did not build (ptxas refuses .kind::i8 for it): building the arch-specific form \[modules.decide\]" "$WORK/err"
check "feat100i8: three preprocessings, the refused compile, the compile" test "$(runs feat100i8.cu)" -eq 5
: >"$WORK/runs"
NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" -c feat100i8.cu -isystem inc -o g4.o -arch=sm_100 2>"$WORK/err"
check "feat100i8: the next build: sm_100a from the verdict, one nvcc, and the reason" \
	test "$(embedded g4.o)" = "elf:sm_100a ptx:sm_100" -a "$(runs feat100i8.cu)" -eq 1 -a \
	-n "$(grep 'sm_100 -> sm_100a: .*ptxas refuses .kind::i8 for the family form sm_100f' "$WORK/err")"
# ... and the plain path issues it too, so plain nvcc cannot build -arch=sm_100 at all (its plain
# PTX is refused): the a form's machine code and PTX.
"$NVCC" -c feat100i8all.cu -isystem inc -o g5p.o -arch=sm_100 2>/dev/null
check "feat100i8all: plain nvcc fails" test $? -ne 0
: >"$WORK/runs"
NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" -c feat100i8all.cu -isystem inc -o g5.o -arch=sm_100 2>"$WORK/err"
check "feat100i8all: nvshim builds sm_100a and compute_100a" test "$(embedded g5.o)" = "elf:sm_100a ptx:sm_100a"
check "feat100i8all: the note says the plain target cannot be built" grep -q "sm_100 -> sm_100a, compute_100 -> compute_100a: ptxas refuses .* for plain sm_100, so the requested plain target cannot be built (plain nvcc fails too) \[modules.probe\]" "$WORK/err"
echo "# feat100i8all: first build, $(runs feat100i8all.cu) nvcc runs"
: >"$WORK/runs"
NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" -c feat100i8all.cu -isystem inc -o g6.o -arch=sm_100 2>/dev/null
check "feat100i8all: the next build: one nvcc, the same targets" test "$(runs feat100i8all.cu)" -eq 1 -a "$(embedded g6.o)" = "elf:sm_100a ptx:sm_100a"
# f and a preprocess differently (an atom only a compiles, CuTe-style), and the f object's kernel
# has trap paths of its own (checks that trap, as FMHA kernels have): where none of the atom's
# fallback is in a kernel (its strings are in no image), a is not built to compare; where a
# kernel calls the atom, it is.
: >"$WORK/runs"
NVSHIM_NVCC="$WORK/fake/nvcc" NVSHIM_VERBOSITY=verbose NVSHIM_LOG_FILE="$WORK/attn.json" "$NVSHIM" -c attn.cu -isystem inc -o h1.o -arch=sm_100 2>"$WORK/err"
check "attn: sm_100f, the family form" test -n "$("$CUOBJDUMP" -elf h1.o | grep '^arch = sm_100f$')"
check "attn: the a form is not built to compare: three preprocessings and the compile" \
	test "$(runs attn.cu)" -eq 4 -a "$(grep -c -- -cubin "$WORK/runs")" -eq 0
check "attn: said at verbosity verbose" grep -q "attn.cu: 1 kernel of sm_100f with trap paths, but none of the code only sm_100f compiles that traps (found by [0-9]* strings) is in the object: the a form builds the same kernels, not compared \[modules.confirm\]" "$WORK/err"
check "attn: ... and in the JSON log" grep -q "not compared \[modules.confirm\]" "$WORK/attn.json"
: >"$WORK/runs"
NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" -c attn_s8.cu -isystem inc -o h2.o -arch=sm_100 2>/dev/null
check "attn_s8: a kernel holds the atom's fallback: the a form is built to compare" \
	test "$(grep -c -- -cubin "$WORK/runs")" -eq 1
: >"$WORK/runs"
NVSHIM_NVCC="$WORK/fake/nvcc" "$NVSHIM" -c attn.cu -isystem inc -o h3.o -arch=sm_100 2>/dev/null
check "attn: the next build runs one nvcc" test "$(runs attn.cu)" -eq 1 -a -n "$("$CUOBJDUMP" -elf h3.o | grep '^arch = sm_100f$')"

# A compile-and-link of one source: the program's kernels are read.
printf '#include <marlin.cuh>\ntemplate __global__ void marlin_like<16>(const float *, float *, int);\nint main() { return 0; }\n' >prog.cu
"$NVSHIM" prog.cu -isystem inc -o prog "${PT[@]}" 2>"$WORK/err"
check "program: sm_75 dropped from a compile-and-link" test "$(embedded prog | tr ' ' '\n' | sort -u | tr '\n' ' ' | sed 's/ $//')" = "elf:sm_80 elf:sm_86 elf:sm_90" -a -x prog
finish
