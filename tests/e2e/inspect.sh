#!/bin/bash
# nvshim inspect against objects, archives, shared libraries, programs and a wheel built here by
# the real nvcc for each case (machine code only, PTX only, both, an `a` target, every
# --compress-mode), checked against cuobjdump's listing and resource usage; damaged inputs give
# exit status 2 and a reason, never a crash.
#   bash tests/e2e/inspect.sh NVSHIM [NVCC]
NVSHIM=$1 NVCC=${2:-/usr/local/cuda/bin/nvcc}
. "$(dirname "$0")/lib.sh"
cd "$WORK" || exit 1
CUOBJDUMP=$(find_cuobjdump)
insp() { "$NVSHIM" inspect "$@"; }
cat >k.cu <<'CU'
#include <cstdio>
__global__ void add(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; __shared__ float s[64];
  s[threadIdx.x % 64] = x[i]; __syncthreads(); if (i < n) x[i] = s[(threadIdx.x + 1) % 64] * 2; }
__global__ void guarded(float *x) {
#if __CUDA_ARCH__ >= 900
  x[0] = 1;
#endif
}
__global__ void aborts(float *x) {
#if __CUDA_ARCH__ < 900
  printf("ERROR : Arch conditional MMA instruction used without targeting sm90a compute capability. Aborting.\n"); __trap();
#else
  x[0] = 3;
#endif
}
CU
"$NVCC" -c k.cu -o sass80.o -gencode arch=compute_80,code=sm_80
"$NVCC" -c k.cu -o ptx80.o -gencode arch=compute_80,code=compute_80
"$NVCC" -c k.cu -o both.o -gencode 'arch=compute_80,code=[sm_80,compute_80]' -gencode arch=compute_90,code=sm_90
"$NVCC" -c k.cu -o a90.o -gencode 'arch=compute_90a,code=[sm_90a,compute_90a]'
for m in none speed size; do
	"$NVCC" -c k.cu -o comp_$m.o -gencode 'arch=compute_80,code=[sm_80,compute_80]' --compress-mode=$m
done

# Machine code only: runs on 8.x at or above 8.0, not on 7.5 or 9.0.
out=$(insp --gpu 80,86,75,90 sass80.o); st=$?
check "sm_80 only: exit 1 (not every GPU runs it)" test $st = 1
check "sm_80 only: images and verdicts" contains "$out" "^sass80.o: object, 1 fatbin" "^  images: sm_80$" \
	"^  sm_80: runs: machine code sm_80" "^  sm_86: runs: machine code sm_80" \
	"^  sm_75: does not run: 1 of 1 fatbin has no image for sm_75 (it holds sm_80); rebuild with -gencode arch=compute_75,code=sm_75 (TORCH_CUDA_ARCH_LIST=\"7.5\", CMAKE_CUDA_ARCHITECTURES=75)" \
	"^  sm_90: does not run"
out=$(insp --gpu 80,86 sass80.o); st=$?
check "sm_80 only on 8.0 and 8.6: exit 0" test $st = 0
# Per kernel: registers and shared memory as cuobjdump reports them, and the stubs.
res=$("$CUOBJDUMP" -res-usage sass80.o 2>&1)
for k in _Z3addPfi _Z7guardedPf _Z6abortsPf; do
	regs=$(grep -A1 "Function $k:" <<<"$res" | sed -n 's/.*REG:\([0-9]*\).*/\1/p')
	shared=$(grep -A1 "Function $k:" <<<"$res" | sed -n 's/.*SHARED:\([0-9]*\).*/\1/p')
	got=$(insp --json --gpu 80 sass80.o | python3 -c "import json,sys; d=json.load(sys.stdin)
k=[k for k in d['files'][0]['kernels'] if k['name']=='$k'][0]; print(k['registers'], k['shared'])")
	check "kernel $k: registers and shared memory as cuobjdump says ($regs $shared)" test "$got" = "$regs $shared"
done
# A stub needs evidence: trivial on one target and with a body on another. With sm_80 alone the
# compiled-out and printf-then-trap kernels are only trivial (a no-op kernel by design looks the same).
out=$(insp --gpu 80 sass80.o)
check "sm_80 alone: the compiled-out and the printf-then-trap kernels are trivial, not stubs" contains "$out" \
	"^  guarded(float\*) *sm_80 .* trivial$" "^  aborts(float\*) *sm_80 .* trivial$" "^  add(float\*, int) *sm_80 .*[0-9]  $" \
	"^  2 trivial kernels: they only exit or only trap on every target here"
check "sm_80 alone: no stub said" test -z "$(grep -E '[0-9-]  stub$|stub kernel' <<<"$out")"
out=$(insp --gpu 90 both.o)
check "on sm_90 the guarded kernel has a body" contains "$out" "^  guarded(float\*) *sm_90 .*[0-9]  $"
check "with sm_80 and sm_90: the kernels compiled out on sm_80 are stubs there (their sm_90 code has a body)" \
	contains "$out" "^  guarded(float\*) *sm_80 .* stub$" "^  aborts(float\*) *sm_80 .* stub$" "^  2 stub kernels"

# PTX only: the driver compiles it for any newer GPU, if it knows the PTX ISA version.
out=$(insp --gpu 80,120 ptx80.o); st=$?
check "PTX only: runs by JIT on 8.0 and 12.0" contains "$out" "^  images: PTX compute_80 (ISA 9.0)$" \
	"^  sm_120: runs: PTX compute_80 (ISA 9.0), compiled by the driver at load"
check "PTX only: exit 0" test $st = 0
out=$(insp --gpu 120 --driver 12.8 ptx80.o); st=$?
check "PTX 9.0 with a CUDA 12.8 driver: does not run, exit 1" test $st = 1
check "PTX 9.0 with a CUDA 12.8 driver: says why" contains "$out" "needs a CUDA 13.0 driver"
out=$(insp --gpu 75 ptx80.o); st=$?
check "PTX compute_80 on 7.5: exit 1" test $st = 1

# Both, and an arch-specific target.
out=$(insp --gpu 80,90,100 both.o)
check "both: machine code where there is some, PTX elsewhere" contains "$out" \
	"^  images: sm_80, sm_90, PTX compute_80 (ISA 9.0)$" "^  sm_90: runs: machine code sm_90" \
	"^  sm_100: runs: PTX compute_80 (ISA 9.0), compiled by the driver"
out=$(insp --gpu 90,100 a90.o); st=$?
check "sm_90a: runs on 9.0 only" contains "$out" "^  images: sm_90a, PTX compute_90a (ISA 9.0)$" \
	"^  sm_90: runs: machine code sm_90a" "^  sm_100: does not run"
check "sm_90a on 10.0: exit 1" test $st = 1
check "the targets cuobjdump lists (both.o)" test "$(elf_targets both.o)" = "sm_80 sm_90"

# Compressed fatbins: --compress-mode=size (zstd), speed (lz4), none; the same kernels read.
kernels() { insp --json --gpu 80 "$1" | python3 -c "import json,sys; f=json.load(sys.stdin)['files'][0]
print(' '.join(sorted('%s=%d/%d/%s' % (k['name'], k['registers'], k['shared'], k['stub']) for k in f['kernels'])))"; }
ref=$(kernels comp_none.o)
echo "# kernels of the uncompressed object: $ref"
for m in speed size; do
	check "--compress-mode=$m: the same kernels, registers, shared memory and stubs" test "$(kernels comp_$m.o)" = "$ref"
done
check "--compress-mode=size is zstd" contains "$(insp --json comp_size.o 2>/dev/null)" '"target":"sm_80","kind":"sass","compression":"zstd"'
check "--compress-mode=speed is lz4 (PTX)" contains "$(insp --json comp_speed.o 2>/dev/null)" '"target":"compute_80","kind":"ptx","ptx_isa":"9.0","compression":"lz4"'
check "the default mode compresses PTX with zstd" contains "$(insp --json ptx80.o 2>/dev/null)" '"compression":"zstd"'

# Archives, shared libraries, programs.
"$NVCC" -c k.cu -o other90.o -gencode arch=compute_90,code=sm_90 -DOTHER -Xcompiler -fPIC
ar rcs libmix.a sass80.o other90.o
out=$(insp --gpu 80 libmix.a); st=$?
check "archive: two fatbins, one without sm_80: partly, which is exit 0" test $st = 0
check "archive: says how many fatbins lack code, and their kernels" contains "$out" "^libmix.a: archive, 2 fatbins" \
	"^  sm_80: partly: 1 of 2 fatbins with kernels have no code for sm_80: '[a-z]*(float\*[a-z, ]*)'; the rest: machine code sm_80"
out=$(insp --gpu 75 libmix.a); st=$?
check "archive: no fatbin has code for 7.5: does not run, exit 1" test $st = 1 -a -n "$(grep '^  sm_75: does not run: 2 of 2 fatbins' <<<"$out")"
"$NVCC" -shared -Xcompiler -fPIC k.cu -o libk.so -gencode arch=compute_80,code=sm_80
out=$(insp --gpu 80,90 libk.so); st=$?
# nvcc -shared links the static CUDA runtime, whose own fatbin is the second one.
nelf=$("$CUOBJDUMP" -lelf libk.so | grep -c '^ELF file')
njson=$(insp --json --no-kernels libk.so 2>/dev/null | python3 -c "import json,sys; print(sum(i['kind'] == 'sass' for i in json.load(sys.stdin)['files'][0]['images']))")
check "shared library: as many machine code images as cuobjdump lists ($nelf)" test "$nelf" = "$njson"
check "shared library built for sm_80: runs on 8.0, not on 9.0" contains "$out" "^libk.so: shared object, 2 fatbins" \
	"^  sm_80: runs" "^  sm_90: does not run"
printf 'int main() { return 0; }\n' >>k.cu
"$NVCC" k.cu -o prog -gencode arch=compute_80,code=sm_80
out=$(insp --gpu 90 prog); st=$?
check "program built for sm_80 on 9.0: exit 1" test $st = 1
check "program: images read" contains "$out" "^  images: sm_80$"
out=$(insp --gpu 80 /bin/true); st=$?
check "a program without CUDA code: runs, exit 0" test $st = 0
check "a program without CUDA code: says so" contains "$out" "images: no CUDA code"

# A wheel: the shared libraries inside (deflated and stored).
python3 - <<'PY'
import zipfile
with zipfile.ZipFile('pkg-1.0-cp311-linux_x86_64.whl', 'w') as z:
    z.write('libk.so', 'pkg/lib/libk.so', compress_type=zipfile.ZIP_DEFLATED)
    z.write('libk.so', 'pkg/libk_stored.so.1', compress_type=zipfile.ZIP_STORED)
    z.writestr('pkg/__init__.py', '')
PY
out=$(insp --gpu 80,90 pkg-1.0-cp311-linux_x86_64.whl); st=$?
check "wheel: each shared library inside, deflated or stored" contains "$out" \
	"^pkg-1.0-cp311-linux_x86_64.whl!pkg/lib/libk.so: shared object in a wheel, 2 fatbins" \
	"^pkg-1.0-cp311-linux_x86_64.whl!pkg/libk_stored.so.1: shared object in a wheel, 2 fatbins"
check "wheel: exit 1 (not on 9.0)" test $st = 1

# The kernels of several images are read by several threads, and added in image order: the same
# output as one thread (NVSHIM_FAULT=inspect_threads: no thread can be started).
all=(sass80.o both.o a90.o comp_size.o libmix.a libk.so prog pkg-1.0-cp311-linux_x86_64.whl)
for flags in "" --json; do
	insp --gpu 80,90 $flags "${all[@]}" >threads.out 2>&1; st=$?
	NVSHIM_FAULT=inspect_threads insp --gpu 80,90 $flags "${all[@]}" >one.out 2>&1
	check "inspect $flags: the same output and status on one thread" test $? = $st -a -s one.out
	check "inspect $flags: the same bytes on one thread" cmp -s threads.out one.out
done

# JSON for tools.
insp --json --gpu 80,90 sass80.o both.o >j.json
check "--json is valid JSON with a verdict per GPU" python3 -c "import json; d=json.load(open('j.json'))
assert d['runs'] is False and d['gpus'] == ['sm_80', 'sm_90']
v = {f['path']: [x['runs'] for x in f['verdicts']] for f in d['files']}
assert v == {'sass80.o': [True, False], 'both.o': [True, True]}, v"

# Unreadable and damaged inputs: exit 2 with a reason, never a crash.
echo 'not an object' >text.o
out=$(insp --gpu 80 text.o 2>&1); st=$?
check "not an object: exit 2" test $st = 2
check "not an object: says what it is not" contains "$out" "unreadable: not an object, archive"
out=$(insp --gpu 80 missing.o 2>&1); st=$?
check "missing file: exit 2" test $st = 2
head -c 3000 sass80.o >trunc.o
out=$(insp --gpu 80 trunc.o 2>&1); st=$?
check "truncated object: exit 2, a reason" test $st = 2 -a -n "$(grep unreadable <<<"$out")"
head -c 2000 pkg-1.0-cp311-linux_x86_64.whl >broken.whl
out=$(insp --gpu 80 broken.whl 2>&1); st=$?
check "truncated wheel: exit 2" test $st = 2
# Every prefix and a flipped byte every 97 bytes of a fatbin-carrying object: no crash.
crashed=0
size=$(stat -c %s comp_size.o)
for cut in $(seq 64 211 "$size"); do
	head -c "$cut" comp_size.o >cut.o
	insp --gpu 80 cut.o >/dev/null 2>&1; st=$?
	[ $st -gt 2 ] && crashed=$((crashed + 1))
done
python3 - <<'PY'
d = bytearray(open('comp_size.o', 'rb').read())
for i in range(0, len(d), 97):
    e = bytearray(d); e[i] ^= 0xff
    open('flip_%06d.o' % i, 'wb').write(e)
PY
differ=0
for f in flip_*.o; do
	insp --gpu 80 "$f" >flip.out 2>&1; st=$?
	[ $st -gt 2 ] && crashed=$((crashed + 1))
	NVSHIM_FAULT=inspect_threads insp --gpu 80 "$f" >flip1.out 2>&1
	[ $? = $st ] && cmp -s flip.out flip1.out || differ=$((differ + 1))
done
check "damaged objects: never a crash (exit status at most 2)" test $crashed = 0
check "damaged objects: the same output and status on one thread (the first bad image's reason)" test $differ = 0
out=$(insp 2>&1); st=$?
check "no file: usage, exit 2" test $st = 2

finish
