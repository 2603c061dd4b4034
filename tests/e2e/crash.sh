#!/bin/bash
# Crashes and resource errors. Fake toolchains: the machine's nvcc in a copy of its toolkit
# layout where one stage is a script that dies of a signal (for one target only), an nvcc that
# dies itself, an nvcc that names the stage as it does when /bin/sh is bash. For each: the exit
# status is plain nvcc's, nvcc's stderr passes unchanged, one line names the reproducer bundle,
# the bundle holds every file, and its repro.sh reproduces the crash from the bundle alone.
# Then the real nvcc: resource errors get their explanation, and a passing build is unchanged.
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"
CUDA=$(dirname "$(dirname "$(readlink -f "$NVCC")")")
export NVSHIM_CRASH_DIR="$WORK/crashes"
cd "$WORK" || exit 1

# crashing_stage DIR/PROGRAM MATCH SIGNAL: PROGRAM dies of SIGNAL when its arguments hold MATCH
# (a target), and logs the arguments it died with; otherwise it is the real program.
crashing_stage() {
	local path=$1 match=$2 sig=$3 real
	real=$(readlink -f "$path")
	rm -f "$path"
	cat >"$path" <<SH
#!/bin/sh
case " \$* " in *"$match "*) echo "\$*" >>"$WORK/died.log"; kill -$sig \$\$ ;; esac
exec "$real" "\$@"
SH
	chmod +x "$path"
}
# without_nvshim FILE: its lines that are not nvshim's own
without_nvshim() { grep -v '^nvshim ' "$1"; }
# bundle_of FILE: the folder the info line names
bundle_of() { sed -n 's/.*reproducer in \([^ ]*\).*/\1/p' "$1" | head -1; }
has_files() { # has_files DIR FILE...
	local d=$1 f
	shift
	for f; do [ -f "$d/$f" ] || { echo "missing: $f" >&2; return 1; }; done
}
BUNDLE_FILES=(README.txt command.txt environment.txt versions.txt config.txt stderr.txt dryrun.txt replay.txt repro.sh)

mkdir -p src
printf '__global__ void k(float *p) { p[threadIdx.x] = 1; }\n' >src/k.cu
TWO=(-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90)

# 1. cicc dies of SIGSEGV for compute_90 only (nvcc built compute_80 first).
make_toolkit tk1
crashing_stage tk1/nvvm/bin/cicc "compute_90" SEGV
(cd src && "$WORK/tk1/bin/nvcc" -c k.cu "${TWO[@]}" -o plain.o 2>"$WORK/plain.err")
plain=$?
ls src >before.txt
(cd src && NVSHIM_NVCC="$WORK/tk1/bin/nvcc" "$NVSHIM" -c k.cu "${TWO[@]}" -o k.o >"$WORK/out" 2>"$WORK/err")
st=$?
check "cicc crash: plain nvcc fails with a signal's status" test $plain -gt 128
check "cicc crash: the exit status is plain nvcc's ($plain)" test $st -eq $plain
check "cicc crash: nvcc's stderr passes unchanged" cmp -s <(without_nvshim "$WORK/err") "$WORK/plain.err"
check "cicc crash: nothing on stdout" test ! -s "$WORK/out"
check "cicc crash: one line names stage, signal, source, target and folder" \
	test "$(grep -c '^nvshim ' "$WORK/err")" -eq 1 -a -n "$(grep "^nvshim info    : 'cicc' died of signal 11 (Segmentation fault) compiling k.cu for compute_90: .*reproducer in $WORK/crashes/" "$WORK/err")"
B=$(bundle_of "$WORK/err")
check "cicc crash: the bundle holds every file" has_files "$B" "${BUNDLE_FILES[@]}" \
	preprocessed/k.compute_90.cpp1.ii inputs/k.module_id
check "cicc crash: the bundle is private" test "$(stat -c %a "$B")" = 700
check "cicc crash: the preprocessed source is the kernel's, for compute_90" \
	grep -q '__CUDA_ARCH__\|k(float \*p)' "$B/preprocessed/k.compute_90.cpp1.ii"
check "cicc crash: the bundle has the command lines, versions, settings and stderr" sh -c "
	grep -q '^original: .*nvcc -c k.cu -gencode arch=compute_80,code=sm_80' '$B/command.txt' &&
	grep -q '^ran: ' '$B/command.txt' && grep -q '^cwd: $WORK/src' '$B/command.txt' &&
	grep -q 'release 1[0-9]\.' '$B/versions.txt' && grep -qi 'gcc\|clang' '$B/versions.txt' &&
	grep -q '^crash_dir ' '$B/config.txt' && grep -q '^PATH=' '$B/environment.txt' &&
	cmp -s '$B/stderr.txt' '$WORK/plain.err'"
check "cicc crash: README names the step and the target" grep -q "compute_90" "$B/README.txt"
check "cicc crash: no output and nothing new in the source directory" cmp -s before.txt <(ls src)
# repro.sh from a copy of the bundle, the sources gone: the same crash.
cp -r "$B" copy1 && mv src src.away && : >died.log
(cd / && sh "$WORK/copy1/repro.sh" >/dev/null 2>&1)
st=$?
mv src.away src
check "cicc crash: repro.sh reproduces it from the bundle alone (status 139)" test $st -eq 139
check "cicc crash: repro.sh ran cicc on the bundle's preprocessed source" \
	grep -q "$WORK/copy1/preprocessed/k.compute_90.cpp1.ii" died.log

# 2. ptxas dies of SIGSEGV for sm_90 only.
make_toolkit tk2
crashing_stage tk2/bin/ptxas "-arch=sm_90" SEGV
(cd src && "$WORK/tk2/bin/nvcc" -c k.cu "${TWO[@]}" -o plain.o 2>"$WORK/plain.err")
plain=$?
(cd src && NVSHIM_NVCC="$WORK/tk2/bin/nvcc" "$NVSHIM" -c k.cu "${TWO[@]}" -o k.o 2>"$WORK/err")
st=$?
check "ptxas crash: the exit status is plain nvcc's ($plain)" test $st -eq $plain -a $st -ne 0
check "ptxas crash: the line names ptxas and sm_90" grep -q "^nvshim info    : 'ptxas' died of signal 11 (Segmentation fault) compiling k.cu for sm_90" "$WORK/err"
B=$(bundle_of "$WORK/err")
check "ptxas crash: the bundle holds the PTX and the preprocessed source for compute_90" \
	has_files "$B" "${BUNDLE_FILES[@]}" inputs/k.compute_90.ptx preprocessed/k.compute_90.cpp1.ii
cp -r "$B" copy2
(cd / && sh "$WORK/copy2/repro.sh" >/dev/null 2>&1)
check "ptxas crash: repro.sh reproduces it" test $? -eq 139

# 3. nvcc itself dies (a stand-in nvcc that answers --dryrun and --version like the real one,
# and dies only where its sources and include directory are: else it exits 66).
mkdir -p dies src/inc
printf '#define KVALUE 3\n' >src/inc/kh.h
printf '#include "kh.h"\n__global__ void kk(float *p) { p[threadIdx.x] = KVALUE; }\n' >src/kk.cu
cat >dies/nvcc <<SH
#!/bin/sh
case " \$* " in *" --dryrun "* | *" --version "*) exec "$NVCC" "\$@" ;; esac
for a; do
	case "\$a" in *.cu) [ -f "\$a" ] || exit 66 ;; -I*) [ -f "\${a#-I}/kh.h" ] || exit 66 ;; esac
done
kill -SEGV \$\$
SH
chmod +x dies/nvcc
(cd src && "$WORK/dies/nvcc" -c kk.cu -I"$WORK/src/inc" -arch=sm_80 -o kk.o 2>"$WORK/plain.err") 2>/dev/null
plain=$?
(cd src && NVSHIM_NVCC="$WORK/dies/nvcc" "$NVSHIM" -c kk.cu -I"$WORK/src/inc" -arch=sm_80 -o kk.o 2>"$WORK/err")
st=$?
check "nvcc killed: the exit status is what the shell saw without nvshim ($plain)" test $st -eq $plain -a $st -eq 139
check "nvcc killed: the line says so" grep -q "^nvshim info    : nvcc itself died of signal 11 (Segmentation fault) compiling kk.cu: .*reproducer in " "$WORK/err"
B=$(bundle_of "$WORK/err")
check "nvcc killed: the bundle holds every file, the preprocessed sources, the source and its header" \
	has_files "$B" "${BUNDLE_FILES[@]}" preprocessed/kk.cpp4.ii preprocessed/kk.cpp1.ii "tree$WORK/src/kk.cu" "tree$WORK/src/inc/kh.h"
# repro.sh from a copy of the bundle, the sources gone: the same crash, on the bundle's copy.
cp -r "$B" copy3 && mv src src.away
(cd / && sh "$WORK/copy3/repro.sh" >/dev/null 2>&1)
st=$?
mv src.away src
check "nvcc killed: repro.sh reproduces it from the bundle alone (status 139)" test $st -eq 139
check "nvcc killed: repro.sh runs nvcc in the bundle's copy of where it ran, -I rewritten" sh -c \
	"grep -q '^mkdir -p \"\$here/tree\"$WORK/src && cd \"\$here/tree\"$WORK/src ' '$B/repro.sh' && grep -q -- '-I\"\$here/tree\"$WORK/src/inc' '$B/repro.sh'"
# A header too big for the bundle: repro.sh reruns nvcc where it ran.
cp src/inc/kh.h kh.h.orig && head -c 200000 /dev/zero | tr '\0' ' ' >>src/inc/kh.h
(cd src && NVSHIM_CRASH_BUNDLE_MAX_SIZE=100000 NVSHIM_NVCC="$WORK/dies/nvcc" "$NVSHIM" -c kk.cu -I"$WORK/src/inc" -arch=sm_80 -o kk.o 2>"$WORK/err")
B=$(bundle_of "$WORK/err")
mv kh.h.orig src/inc/kh.h
(cd / && sh "$B/repro.sh" >/dev/null 2>&1)
check "nvcc killed, sources left out: repro.sh reruns nvcc where it ran, and reproduces it" \
	test $? -eq 139 -a -n "$(grep "^cd $WORK/src " "$B/repro.sh")"

# 4. nvcc names the stage, as it does when /bin/sh is bash: the last cicc step is the one.
mkdir -p names
cat >names/nvcc <<SH
#!/bin/sh
case " \$* " in *" --dryrun "* | *" --version "* | *" --help "* | *" --list-gpu-"*) exec "$WORK/tk1/bin/nvcc" "\$@" ;; esac
echo "nvcc error   : '\"\\\$CICC_PATH/cicc\"' died due to signal 11 (Invalid memory reference)" >&2
exit 11
SH
chmod +x names/nvcc
(cd src && NVSHIM_NVCC="$WORK/names/nvcc" "$NVSHIM" -c k.cu "${TWO[@]}" -o k.o 2>"$WORK/err")
st=$?
check "stage named by nvcc: status 11 passes through" test $st -eq 11
check "stage named by nvcc: its line passes unchanged" test "$(without_nvshim "$WORK/err")" = "nvcc error   : '\"\$CICC_PATH/cicc\"' died due to signal 11 (Invalid memory reference)"
check "stage named by nvcc: the last cicc step, compute_90" grep -q "^nvshim info    : 'cicc' died of signal 11 (Segmentation fault) compiling k.cu for compute_90" "$WORK/err"
B=$(bundle_of "$WORK/err")
check "stage named by nvcc: not run again, said in README" grep -q "did not run it again" "$B/README.txt"
check "stage named by nvcc: bundle and preprocessed source" has_files "$B" "${BUNDLE_FILES[@]}" preprocessed/k.compute_90.cpp1.ii
(cd src && NVSHIM_CRASH_BUNDLES=false NVSHIM_NVCC="$WORK/names/nvcc" "$NVSHIM" -c k.cu -arch=sm_80 -o k.o 2>"$WORK/err")
check "stage named by nvcc, no bundle, one target: the target from the command line" test "$(grep '^nvshim ' "$WORK/err")" = \
	"nvshim info    : 'cicc' died of signal 11 (Segmentation fault) compiling k.cu for compute_80: a crash of the CUDA toolkit's compiler, which is a bug to report to NVIDIA"

# 5. The system kills cicc once (SIGKILL, as the out-of-memory killer does).
make_toolkit tk5
real=$(readlink -f tk5/nvvm/bin/cicc)
rm tk5/nvvm/bin/cicc
cat >tk5/nvvm/bin/cicc <<SH
#!/bin/sh
[ -e "$WORK/killed-once" ] || { : >"$WORK/killed-once"; kill -KILL \$\$; }
exec "$real" "\$@"
SH
chmod +x tk5/nvvm/bin/cicc
(cd src && NVSHIM_CRASH_RETRY=once NVSHIM_NVCC="$WORK/tk5/bin/nvcc" "$NVSHIM" -c k.cu -arch=sm_80 -o retry.o 2>"$WORK/err")
st=$?
check "killed once, crash_retry = once: the build passes" test $st -eq 0 -a -s src/retry.o
check "killed once, crash_retry = once: never silent" test "$(cat "$WORK/err")" = "nvshim warning : a stage of nvcc was killed (signal 9 (Killed)), as the system does when memory runs out; running nvcc once more (crash_retry = once)"
rm -f killed-once
(cd src && "$WORK/tk5/bin/nvcc" -c k.cu -arch=sm_80 -o plain.o 2>"$WORK/plain.err")
plain=$?
rm -f killed-once src/plain.o
(cd src && NVSHIM_NVCC="$WORK/tk5/bin/nvcc" "$NVSHIM" -c k.cu -arch=sm_80 -o k.o 2>"$WORK/err")
st=$?
check "killed once, crash_retry = off: plain nvcc's status ($plain)" test $st -eq $plain -a $st -eq 137
check "killed once, crash_retry = off: the line points at memory" grep -q "was killed (signal 9 (Killed)) compiling k.cu, which the system does when memory runs out: build with fewer parallel jobs" "$WORK/err"
B=$(bundle_of "$WORK/err")
check "killed once: the replay found no crash, and says so" grep -q "none crashed" "$B/README.txt"
check "killed once: the replay wrote nothing into the source directory" test ! -e src/k.o

# 6. Settings: a size cap, pruning, bundles off, and a crash_dir that cannot be written.
(cd src && NVSHIM_CRASH_BUNDLE_MAX_SIZE=30000 NVSHIM_NVCC="$WORK/tk1/bin/nvcc" "$NVSHIM" -c k.cu "${TWO[@]}" -o k.o 2>"$WORK/err")
B=$(bundle_of "$WORK/err")
check "size cap: the preprocessed source is left out and listed" sh -c "
	test ! -e '$B/preprocessed/k.compute_90.cpp1.ii' && grep -q 'left out' '$B/README.txt' &&
	grep -q 'k.compute_90.cpp1.ii' '$B/README.txt' && test -s '$B/repro.sh'"
check "size cap: the bundle stays under it (README aside)" test "$(du -sb --exclude=README.txt "$B" | cut -f1)" -lt 40000
rm -rf crashes
for i in 1 2 3; do
	(cd src && NVSHIM_CRASH_KEEP=2 NVSHIM_NVCC="$WORK/tk1/bin/nvcc" "$NVSHIM" -c k.cu "${TWO[@]}" -o k.o 2>/dev/null)
	sleep 1
done
check "crash_keep = 2: the oldest bundle goes" test "$(ls crashes | wc -l)" -eq 2
(cd src && NVSHIM_CRASH_BUNDLES=false NVSHIM_CRASH_DIR="$WORK/none" NVSHIM_NVCC="$WORK/tk1/bin/nvcc" "$NVSHIM" -c k.cu "${TWO[@]}" -o k.o 2>"$WORK/err")
st=$?
check "crash_bundles = false: the diagnosis without a folder" sh -c "test $st -eq 139 && test ! -e '$WORK/none' &&
	grep -q \"^nvshim info    : a stage of nvcc died of signal 11 (Segmentation fault) compiling k.cu: a crash of the CUDA toolkit's compiler, which is a bug to report to NVIDIA$\" '$WORK/err'"
: >"$WORK/file"
(cd src && NVSHIM_CRASH_DIR="$WORK/file/sub" NVSHIM_NVCC="$WORK/tk1/bin/nvcc" "$NVSHIM" -c k.cu "${TWO[@]}" -o k.o 2>"$WORK/err")
st=$?
check "unwritable crash_dir: fail open, plain nvcc's status" test $st -eq 139
check "unwritable crash_dir: one warning" test "$(grep -c '^nvshim warning : cannot write a crash reproducer in' "$WORK/err")" -eq 1

# 7. Resource errors with the real nvcc.
cat >shared.cu <<'CU'
__global__ void mm(float *p)
{
	__shared__ float tile[0xc080 / sizeof(float)];
	tile[threadIdx.x] = p[threadIdx.x];
	__syncthreads();
	p[threadIdx.x] = tile[(threadIdx.x * 7) % (0xc080 / sizeof(float))];
}
CU
cat >local.cu <<'CU'
__global__ void big_local(float *p, int n)
{
	volatile float scratch[1 << 24];
	for (int i = 0; i < n; i++)
		scratch[(i * 31) & ((1 << 24) - 1)] = p[i];
	p[threadIdx.x] = scratch[p[0] > 0 ? n : 0];
}
CU
cat >param.cu <<'CU'
struct Big { float v[10000]; };
__global__ void big_param(Big b, float *out) { out[threadIdx.x] = b.v[threadIdx.x]; }
CU
resource() { # resource NAME FILE ARGS...: plain nvcc and nvshim side by side
	local name=$1 file=$2
	shift 2
	"$NVCC" -c "$file" -o plain.o "$@" 2>plain.err
	plain=$?
	"$NVSHIM" -c "$file" -o shim.o "$@" 2>shim.err
	st=$?
	check "$name: the exit status is plain nvcc's ($plain)" test $st -eq $plain
	check "$name: nvcc's stderr passes unchanged" cmp -s <(without_nvshim shim.err) plain.err
}
resource "shared 0xc080 on sm_80" shared.cu -arch=sm_80
check "shared 0xc080: one note with kernel, value, limit, target and remedy" \
	test "$(grep -c '^nvshim ' shim.err)" -eq 1 -a -n "$(grep -F "nvshim info    : kernel mm(float*) (_Z2mmPf) uses 49280 bytes of static shared memory on sm_80, more than the 49152 bytes (48 KiB) a kernel may declare statically: declare the buffer \`extern __shared__\`" shim.err)"
check "shared 0xc080: the remedy is cudaFuncSetAttribute with the size" grep -qF "cudaFuncSetAttribute(mm, cudaFuncAttributeMaxDynamicSharedMemorySize, 49280) (sm_80 allows up to 166912 bytes, 163 KiB, per block), or use smaller tiles [resource.shared]" shim.err
resource "shared 0xc080 for two targets" shared.cu "${TWO[@]}"
check "shared 0xc080, two targets: both named" grep -qF "static shared memory on sm_80 or sm_90, more than" shim.err
resource "parameters of 40008 bytes" param.cu -arch=sm_80
check "parameters: the note says pass by pointer" grep -qF "nvshim info    : kernel big_param(Big, float*) (_Z9big_param3BigPf) takes 40008 bytes of parameters on sm_80, more than the 32764 bytes allowed: pass large structs" shim.err
"$NVCC" -c shared.cu -o plain.o -arch=sm_80 2>plain.err
NVSHIM_EXPLAIN_RESOURCES=false "$NVSHIM" -c shared.cu -o shim.o -arch=sm_80 2>shim.err
check "explain_resources = false: nvcc's stderr only" cmp -s shim.err plain.err
# Registers: a wgmma whose 128 accumulators do not fit -maxrregcount=64 (sm_90a; -gencode, as
# -cubin takes a single code).
python3 - <<'PY'
n = 128
regs = ", ".join(f"%f{i}" for i in range(n))
body = [".version 8.0", ".target sm_90a", ".address_size 64",
        ".visible .entry _Z2wgPfyy(.param .u64 p, .param .u64 da, .param .u64 db)", "{",
        f"\t.reg .f32 %f<{n}>;", "\t.reg .b64 %rd<5>;", "\tld.param.u64 %rd1, [p];",
        "\tld.param.u64 %rd2, [da];", "\tld.param.u64 %rd3, [db];", "\tcvta.to.global.u64 %rd4, %rd1;"]
body += [f"\tmov.f32 %f{i}, 0f00000000;" for i in range(n)]
body += ["\twgmma.fence.sync.aligned;",
         f"\twgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {{{regs}}}, %rd2, %rd3, 1, 1, 1, 0, 0;",
         "\twgmma.commit_group.sync.aligned;", "\twgmma.wait_group.sync.aligned 0;"]
body += [f"\tst.global.f32 [%rd4+{4 * i}], %f{i};" for i in range(n)] + ["\tret;", "}"]
open("regs.ptx", "w").write("\n".join(body) + "\n")
PY
"$NVCC" -cubin -gencode arch=compute_90a,code=sm_90a -maxrregcount=64 regs.ptx -o plain.cubin 2>plain.err
plain=$?
"$NVSHIM" -cubin -gencode arch=compute_90a,code=sm_90a -maxrregcount=64 regs.ptx -o shim.cubin 2>shim.err
st=$?
check "registers: plain nvcc's status ($plain) and stderr" sh -c "test $st -eq $plain && grep -v '^nvshim ' shim.err | cmp -s - plain.err"
check "registers: the note says what is needed and what to relax" grep -qF "needs at least 154 registers per thread on sm_90a, but is held to 64: raise or drop -maxrregcount" shim.err
# A huge local array: nvcc accepts it (ptxas has no such limit), but no launch does (512 KiB
# per thread at most; cudaErrorInvalidValue on an H100, docs/gpu-run.md). The note comes from
# the kernel's stack as the object records it.
resource "a 64 MiB local array" local.cu -arch=sm_80
check "a 64 MiB local array: builds, as with plain nvcc" test $plain -eq 0 -a -s shim.o
check "a 64 MiB local array: one note with kernel, stack, target, limit and remedy" \
	test "$(grep -c '^nvshim ' shim.err)" -eq 1 -a -n "$(grep -F "nvshim info    : kernel big_local(float*, int) (_Z9big_localPfi) uses 67108864 bytes (65536 KiB) of local memory (its stack) per thread on sm_80; a thread may have at most 512 KiB, less what the system keeps, so nvcc builds it but every launch fails with cudaErrorInvalidValue (invalid argument): keep large per-thread arrays in global memory" shim.err)"
"$NVSHIM" -c local.cu -o two.o "${TWO[@]}" 2>shim.err
check "a 64 MiB local array, two targets: a note for each" \
	test "$(grep -c 'per thread on sm_80;' shim.err)" -eq 1 -a "$(grep -c 'per thread on sm_90;' shim.err)" -eq 1
"$NVSHIM" -cubin local.cu -o local.cubin -arch=sm_90 2>shim.err
check "a 64 MiB local array, -cubin: the note" grep -q "_Z9big_localPfi) uses 67108864 bytes .* on sm_90; .*\[resource.local\]$" shim.err
sed 's/1 << 24/1 << 16/g' local.cu >local_ok.cu
resource "a 256 KiB local array" local_ok.cu -arch=sm_80
check "a 256 KiB local array (launches): nothing of nvshim's own" test $plain -eq 0 -a ! -s shim.err
NVSHIM_EXPLAIN_RESOURCES=false "$NVSHIM" -c local.cu -o shim.o -arch=sm_80 2>shim.err
check "a 64 MiB local array, explain_resources = false: nothing" test ! -s shim.err
# A passing build with a warning: byte for byte nvcc's stderr.
resource "a passing build with a warning" "$(dirname "$0")/fixtures/warn.cu" -arch=sm_80
check "a passing build: nothing of nvshim's own" test $plain -eq 0 -a -s plain.err -a "$(grep -c '^nvshim ' shim.err)" -eq 0

finish
