#!/bin/bash
# `nvshim migrate`: the lasting fix for removed and changed CUDA and CCCL APIs, as a unified diff.
# (The sanitizer pass leaves out the builds and runs with plain nvcc: see SANITIZED in lib.sh.)
# CUDA 12 era sources (runtime and driver API, Thrust and CUB) fail with plain nvcc 13.0;
# migrated, they build with plain nvcc 13.0 and with CUDA 12.9's headers (nvcc 13.0's front end
# with the CUDA 12.9 runtime headers, its math libraries' headers and CCCL 2.8 first on the include
# path, from pinned wheels: scripts/fetch-cccl12.sh, scripts/fetch-cu12-libheaders.py; there is
# no full 12.x toolkit here), and the Thrust and CUB programs print what they printed with CCCL
# 2.8 (run through Thrust's CPP device system or on the host, no GPU; the device-properties and
# texture programs are built, not run: they need a GPU). A clean file
# prints nothing; --apply writes what the diff says, keeping the mode; comments and strings stay.
# The compat headers (include/nvshim/compat/) are checked on the same program: the unmigrated
# source builds with them on 13.0 and prints what CCCL 2.8 printed.
NVSHIM=$1 NVCC=$2
DIR=${NVSHIM_TOOLKITS:-/var/tmp/nvshim-toolkits} # read before lib.sh clears NVSHIM_*
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
FIXTURES=$ROOT/tests/e2e/fixtures/migrate
COMPAT=$ROOT/include/nvshim/compat
cd "$WORK" || exit 1
cp "$FIXTURES"/* "$ROOT"/tests/e2e/fixtures/api/new_runtime.cu .
NVSHIM_TOOLKITS=$DIR bash "$ROOT/scripts/fetch-cccl12.sh"
NVSHIM_TOOLKITS=$DIR python3 "$ROOT/scripts/fetch-cu12-libheaders.py"
R12=$DIR/cu12-runtime/nvidia/cuda_runtime/include
C12=$DIR/cu12-cccl/nvidia/cuda_cccl/include
# CUDA 12.9's cuBLAS, cuFFT, cuSPARSE, cuSOLVER and cuRAND headers (only the headers, out of the
# pinned wheels: scripts/fetch-cu12-libheaders.py): 13.0's cublas_api.h does not build with 12.9's
# runtime headers.
L12=$DIR/cu12-libs/nvidia
LIB12=
for lib in cublas cufft cusparse cusolver curand; do
	[ -d "$L12/$lib/include" ] || { LIB12=; break; }
	LIB12="$LIB12 -I$L12/$lib/include"
done
CPP=-DTHRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_CPP
EXPECT='21.000 10 13 13 19 14 thrust::unary_function'

# The 12.9 headers are the ones in effect: CUDART_VERSION 12090, CCCL 2, and the 13.0-only form
# (the api suite's hand-fixed new_runtime.cu) fails with them.
if [ -z "$SANITIZED" ] && [ -d "$R12" ] && [ -d "$C12" ]; then
	printf '#include <cuda/std/version>\n#include <cuda_runtime_api.h>\nstatic_assert(CCCL_MAJOR_VERSION == 2, "");\nstatic_assert(CUDART_VERSION == 12090, "");\n' >v12.cu
	check "12.9's headers in effect: CUDART_VERSION 12090, CCCL_MAJOR_VERSION 2" "$NVCC" -I"$R12" -I"$C12" -c v12.cu -o /dev/null
	if [ -n "$LIB12" ]; then
		printf '#include <cublas_v2.h>\n#include <cufft.h>\n#include <cusparse.h>\n#include <cusolverDn.h>\n#include <curand.h>\nstatic_assert(CUBLAS_VERSION == 120901, "");\nstatic_assert(CUFFT_VERSION == 11401, "");\nstatic_assert(CUSPARSE_VERSION == 12510, "");\nstatic_assert(CUSOLVER_VERSION == 11705, "");\nstatic_assert(CURAND_VERSION == 10310, "");\n' >l12.cu
		check "12.9's cuBLAS, cuFFT, cuSPARSE, cuSOLVER and cuRAND headers in effect (12.9.1.4, 11.4.1.4, 12.5.10, 11.7.5, 10.3.10)" "$NVCC" -I"$R12" $LIB12 -c l12.cu -o /dev/null
		"$NVCC" -I"$R12" -c l12.cu -o /dev/null 2>/dev/null
		check "12.9's runtime headers with 13.0's cuBLAS headers fail (hence the 12.9 library headers)" test $? -ne 0
	else
		skip "12.9's cuBLAS, cuFFT, cuSPARSE, cuSOLVER and cuRAND headers" "scripts/fetch-cu12-libheaders.py could not fetch them"
	fi
	"$NVCC" -I"$R12" -I"$C12" -c new_runtime.cu -o /dev/null 2>/dev/null
	check "12.9's headers in effect: the 13.0-only form fails with them" test $? -ne 0
fi

# A clean file: nothing printed, status 0.
"$NVSHIM" migrate new_runtime.cu >clean.out 2>clean.err
check "a clean file: no output, status 0" test $? = 0 -a ! -s clean.out -a ! -s clean.err

for f in old_runtime.cu old_driver.cpp old_thrust.cu old_cub.cu old_cubiter.cu old_cuboffset.cu old_identity.cu old_devprop.cu old_texref.cu; do
	# Thrust through its CPP system (no GPU), but for the CUB-only sources (cub.cuh wants CUDA).
	cpp=$CPP
	case $f in old_cubiter.cu | old_cuboffset.cu) cpp= ;; esac
	if [ -z "$SANITIZED" ]; then
		"$NVCC" -std=c++17 $cpp -c "$f" -o /dev/null 2>/dev/null
		check "$f: plain nvcc 13.0 fails" test $? -ne 0
	fi
	cp -p "$f" "orig_$f"
	"$NVSHIM" migrate "$f" >"$f.diff" 2>"$f.err"
	check "$f: migrate prints a diff, status 0" test $? = 0 -a -s "$f.diff" -a ! -s "$f.err"
	check "$f: migrate alone leaves the file as it was" cmp -s "$f" "orig_$f"
	cp -p "$f" "patched_$f"
	check "$f: the diff applies with patch" eval "sed 's#^\(---\|+++\) $f#\1 patched_$f#' $f.diff | patch -s -p0"
	chmod 640 "$f"
	"$NVSHIM" migrate --apply "$f" >"$f.applied" 2>/dev/null
	check "$f: --apply writes what the diff says" cmp -s "$f" "patched_$f"
	check "$f: --apply prints the same diff" cmp -s "$f.diff" "$f.applied"
	check "$f: --apply keeps the mode" test "$(stat -c %a "$f")" = 640
	check "$f: migrating again changes nothing" test -z "$("$NVSHIM" migrate "$f" 2>&1)"
	# (the builds of the migrated text are plain nvcc's: not in the sanitizer pass)
	[ -n "$SANITIZED" ] && continue
	"$NVCC" -std=c++17 $cpp -c "$f" -o "$f.o" 2>"$f.build"
	check "$f: migrated, it builds with plain nvcc 13.0" test $? = 0
	if [ -d "$R12" ] && [ -d "$C12" ] && { [ -n "$LIB12" ] || ! grep -q '#include <cu\(blas\|fft\|sparse\|solver\|rand\)' "$f"; }; then
		"$NVCC" -std=c++17 $cpp -I"$R12" $LIB12 -I"$C12" -c "$f" -o "$f.12.o" 2>"$f.build12"
		check "$f: migrated, it builds with CUDA 12.9's runtime headers and CCCL 2.8${LIB12:+ (and its math library headers)}" test $? = 0
	else
		skip "$f: migrated, it builds with CUDA 12.9's headers" "scripts/fetch-cccl12.sh or fetch-cu12-libheaders.py could not fetch them"
	fi
done
check "comments and strings stay" eval 'grep -q "cub::Max in a comment" old_thrust.cu && grep -q "thrust::unary_function\\\\n" old_thrust.cu'
check "a guarded rewrite keeps the old form for CUDA 12" eval 'grep -qx "#if CUDA_VERSION >= 13000 /\* nvshim migrate \*/" old_driver.cpp && grep -qF "cuCtxCreate(&ctx, 0, dev);" old_driver.cpp && grep -qF "cuCtxCreate(&ctx, NULL, 0, dev);" old_driver.cpp'
check "a removed field is read for the device cudaGetDeviceProperties was given" grep -qF 'nvshim_migrate_attr(cudaDevAttrClockRate, dev)' old_runtime.cu

# The Thrust program: migrated, it prints on 13.0 what it printed with CCCL 2.8.
if [ -z "$SANITIZED" ]; then
	out13= out12=
	"$NVCC" old_thrust.cu.o -o new13 2>/dev/null && out13=$(./new13)
	check "thrust: migrated, built with 13.0: $EXPECT" test "$out13" = "$EXPECT"
	if [ -d "$C12" ]; then
		"$NVCC" -std=c++17 $CPP -I"$C12" orig_old_thrust.cu -o old12 2>/dev/null && out12=$(./old12)
		check "thrust: the original with CCCL 2.8 prints the same" test "$out12" = "$EXPECT"
		"$NVCC" old_thrust.cu.12.o -o new12 2>/dev/null && out=$(./new12)
		check "thrust: migrated, with CCCL 2.8: the same" test "$out" = "$EXPECT"
	else
		skip "thrust: the original with CCCL 2.8" "no CCCL 2.8 headers"
	fi
	# The compat headers: the unmigrated source, built with them on 13.0, prints the same.
	"$NVCC" -std=c++17 $CPP -include "$COMPAT/thrust.h" -include "$COMPAT/cub.h" orig_old_thrust.cu -o compat13 2>/dev/null && out=$(./compat13)
	check "compat: thrust.h and cub.h: the CCCL 2.x source builds on 13.0 and prints the same" test "$out" = "$EXPECT"
	cat >ident.cu <<'EOT'
#include <cstdio>
#include <thrust/functional.h>
#include <thrust/host_vector.h>
#include <thrust/transform.h>
int main() {
  thrust::host_vector<double> v(2, 3.75);
  thrust::host_vector<int> o(2);
  thrust::transform(v.begin(), v.end(), o.begin(), thrust::identity<int>());
  printf("%d %g %d\n", o[0], thrust::identity<>()(2.5), thrust::identity<long>()(7));
  return 0;
}
EOT
	"$NVCC" -std=c++17 $CPP -c ident.cu -o /dev/null 2>/dev/null
	check "compat: thrust::identity fails on plain 13.0" test $? -ne 0
	"$NVCC" -std=c++17 $CPP -include "$COMPAT/thrust.h" ident.cu -o ident13 2>/dev/null && out=$(./ident13)
	check "compat: thrust::identity<int> converts as CCCL 2.8's did (3 2.5 7)" test "$out" = "3 2.5 7"
	if [ -d "$C12" ]; then
		"$NVCC" -std=c++17 $CPP -I"$C12" ident.cu -o ident12 2>/dev/null && out12=$(./ident12)
		check "compat: ... and CCCL 2.8 prints the same" test "$out12" = "$out"
	fi
fi
cat >fft.cu <<'EOT'
#include <cstdio>
#include <cufft.h>
static const char *name(cufftResult r) {
  switch (r) {
  case CUFFT_SUCCESS: return "ok";
  case CUFFT_INCOMPLETE_PARAMETER_LIST: return "incomplete";
  case CUFFT_PARSE_ERROR: return "parse";
  case CUFFT_LICENSE_ERROR: return "license";
  default: return "other";
  }
}
int main() { printf("%s %s %s %d\n", name(CUFFT_SUCCESS), name((cufftResult)0xC), name(CUFFT_INVALID_PLAN), (int)CUFFT_LICENSE_ERROR); return 0; }
EOT
if [ -z "$SANITIZED" ]; then
	"$NVCC" -c fft.cu -o /dev/null 2>/dev/null
	check "compat: the removed cufftResult values fail on plain 13.0" test $? -ne 0
	"$NVCC" -include "$COMPAT/cufft.h" fft.cu -o fft13 2>/dev/null && out=$(./fft13)
	check "compat: cufft.h: 12.x's values (ok parse other 15)" test "$out" = "ok parse other 15"
fi

# Through nvshim: the compatibility layer restores CUB's operators and macros and cuFFT's values
# with these headers; the programs print what CCCL 2.8 (and cuFFT 11's values) gave.
CUB_EXPECT='10 18 7 1 21 43'
NVSHIM_NVCC=$NVCC "$NVSHIM" -std=c++17 $CPP orig_old_cub.cu -o cub_layer 2>cub_layer.err && out=$(./cub_layer)
check "cub: through nvshim, the layer restores it (cub.h) and it prints $CUB_EXPECT" eval \
	'test "$out" = "$CUB_EXPECT" && grep -q "restored by nvshim.s compatibility layer (nvshim/compat/cub.h force-included)" cub_layer.err'
if [ -z "$SANITIZED" ]; then
	"$NVCC" old_cub.cu.o -o cub_migrated 2>/dev/null && out=$(./cub_migrated)
	check "cub: migrated, plain nvcc 13.0 prints the same" test "$out" = "$CUB_EXPECT"
	if [ -d "$C12" ]; then
		"$NVCC" -std=c++17 $CPP -I"$C12" orig_old_cub.cu -o cub12 2>/dev/null && out=$(./cub12)
		check "cub: the original with CCCL 2.8 prints $CUB_EXPECT" test "$out" = "$CUB_EXPECT"
		"$NVCC" old_cub.cu.12.o -o cub12m 2>/dev/null && out=$(./cub12m)
		check "cub: migrated, with CCCL 2.8: the same" test "$out" = "$CUB_EXPECT"
	fi
	# CUB's fancy iterators, migrated to Thrust's: the same values on 13.0 and with CCCL 2.8.
	ITER_EXPECT='8 7 6 8'
	"$NVCC" old_cubiter.cu.o -o iter13 2>/dev/null && out=$(./iter13)
	check "cub iterators: migrated to Thrust's, 13.0 prints $ITER_EXPECT" test "$out" = "$ITER_EXPECT"
	check "cub iterators: the header each needs is included" grep -qx '#include <thrust/iterator/transform_iterator.h> /\* nvshim migrate \*/' old_cubiter.cu
	if [ -d "$C12" ]; then
		"$NVCC" -I"$C12" orig_old_cubiter.cu -o iter12 2>/dev/null && out=$(./iter12)
		check "cub iterators: the original with CCCL 2.8 prints the same" test "$out" = "$ITER_EXPECT"
		"$NVCC" old_cubiter.cu.12.o -o iter12m 2>/dev/null && out=$(./iter12m)
		check "cub iterators: migrated, with CCCL 2.8: the same" test "$out" = "$ITER_EXPECT"
	fi
	# Offset types and cub::DiscardOutputIterator, migrated to Thrust's: the same values on 13.0 and
	# with CCCL 2.8 (and counting_iterator's difference type is the offset type, long long).
	OFF_EXPECT='8 2.5 6 7 5 9 8'
	"$NVCC" old_cuboffset.cu.o -o off13 2>/dev/null && out=$(./off13)
	check "cub iterators with an offset type: migrated, 13.0 prints $OFF_EXPECT" test "$out" = "$OFF_EXPECT"
	check "cub iterators with an offset type: the offset type is counting_iterator's difference type" \
		grep -qF 'thrust::counting_iterator<int, thrust::use_default, thrust::use_default, long long> c(5);' old_cuboffset.cu
	if [ -d "$C12" ]; then
		"$NVCC" -I"$C12" orig_old_cuboffset.cu -o off12 2>/dev/null && out=$(./off12)
		check "cub iterators with an offset type: the original with CCCL 2.8 prints the same" test "$out" = "$OFF_EXPECT"
		"$NVCC" old_cuboffset.cu.12.o -o off12m 2>/dev/null && out=$(./off12m)
		check "cub iterators with an offset type: migrated, with CCCL 2.8: the same" test "$out" = "$OFF_EXPECT"
	fi
	# thrust::identity<T>: migrated to CCCL 2.8's class, it converts as before (3 2.5 7).
	"$NVCC" old_identity.cu.o -o id13 2>/dev/null && out=$(./id13)
	check "thrust::identity: migrated, 13.0 prints 3 2.5 7" test "$out" = "3 2.5 7"
	check "thrust::identity: no version guard (the same class on both)" eval '! grep -q "#if CCCL" old_identity.cu'
	if [ -d "$C12" ]; then
		"$NVCC" -std=c++17 $CPP -I"$C12" orig_old_identity.cu -o id12 2>/dev/null && out=$(./id12)
		check "thrust::identity: the original with CCCL 2.8 prints the same" test "$out" = "3 2.5 7"
		"$NVCC" old_identity.cu.12.o -o id12m 2>/dev/null && out=$(./id12m)
		check "thrust::identity: migrated, with CCCL 2.8: the same" test "$out" = "3 2.5 7"
	fi
fi
# A cudaDeviceProp read where its device is not in sight: the PCI-matched helper on 13.0, the
# field on 12.x (what it prints needs a GPU: not run here).
check "devprop: a struct by reference reads the device of its PCI ids on 13.0" \
	grep -qF 'nvshim_migrate_prop_attr(&(p), cudaDevAttrClockRate)' old_devprop.cu
check "devprop: through a pointer and as a member too" eval \
	'grep -qF "nvshim_migrate_prop_attr(p, cudaDevAttrGpuOverlap)" old_devprop.cu && grep -qF "nvshim_migrate_prop_attr(&(ctx.props), cudaDevAttrSingleToDoublePrecisionPerfRatio)" old_devprop.cu'
if [ -z "$SANITIZED" ]; then
	"$NVCC" -std=c++17 old_devprop.cu -lcublas -o devprop13 2>/dev/null
	check "devprop: migrated, it links with plain nvcc 13.0 (and cuBLAS)" test -x devprop13
fi
# A texture reference of the simple pattern: a texture object in a __device__ variable.
check "texref: the reference becomes a __device__ texture object, the fetch its object form" eval \
	'grep -qx "static __device__ cudaTextureObject_t src_tex;" old_texref.cu && grep -qx "static __device__ cudaTextureObject_t pair_tex;" old_texref.cu &&
	grep -qF "tex1Dfetch<float>(src_tex, idx[i]) + tex1Dfetch<int2>(pair_tex, i).y" old_texref.cu &&
	grep -qF "nvshim_migrate_bind_texture<float>(0, src_tex, src, n * sizeof(float));" old_texref.cu'
if [ -z "$SANITIZED" ]; then
	"$NVCC" old_texref.cu.o -o texref13 2>/dev/null
	check "texref: migrated, it links with plain nvcc 13.0" test -x texref13
fi
NVSHIM_NVCC=$NVCC "$NVSHIM" fft.cu -o fft_layer 2>fft_layer.err && out=$(./fft_layer)
check "cufft: through nvshim, the layer restores the values (cufft.h): ok parse other 15" eval \
	'test "$out" = "ok parse other 15" && grep -q "nvshim/compat/cufft.h force-included" fft_layer.err'

# A member declared a cudaDeviceProp in a header the source includes with quotes (two levels
# down): read for the device of its PCI ids; the header is read, not written.
mkdir -p hdr/inc
printf '#include "inc/ctx.h"\n' >hdr/top.h
printf '#include <cuda_runtime.h>\nstruct ctx { int ordinal; cudaDeviceProp props; };\n' >hdr/inc/ctx.h
printf '#include <cstdio>\n#include "top.h"\nvoid show(const ctx *c) { printf("%%d\\n", c->props.clockRate); }\n' >hdr/use.cu
cp hdr/inc/ctx.h ctx.h.orig
"$NVSHIM" migrate --apply hdr/use.cu >/dev/null 2>hdr.err
st=$?
check "a member declared in an included header: rewritten, the header untouched" eval 'test $st = 0 && ! grep -q warning hdr.err &&
	grep -qF "nvshim_migrate_prop_attr(&(c->props), cudaDevAttrClockRate)" hdr/use.cu && cmp -s hdr/inc/ctx.h ctx.h.orig'
if [ -z "$SANITIZED" ]; then
	"$NVCC" -c hdr/use.cu -o /dev/null 2>/dev/null
	check "a member declared in an included header: migrated, it builds with plain nvcc 13.0" test $? = 0
	if [ -d "$R12" ]; then
		"$NVCC" -I"$R12" -c hdr/use.cu -o /dev/null 2>/dev/null
		check "a member declared in an included header: migrated, it builds with CUDA 12.9's runtime headers" test $? = 0
	fi
fi

# A use migrate cannot fix is named, and the file is left as it was.
printf '#include <cstdio>\nstruct info;\nvoid f(const info &i) { printf("%%d\\n", i.prop.clockRate); }\n' >nodev.cu
cp nodev.cu nodev.orig
"$NVSHIM" migrate --apply nodev.cu >nodev.out 2>nodev.err
st=$?
check "no device for the struct, and no declaration of it as a cudaDeviceProp: status 1, named, nothing written" eval 'test $st = 1 && grep -q "nodev.cu:3: cudaDeviceProp::clockRate: not migrated" nodev.err && cmp -s nodev.cu nodev.orig && test ! -s nodev.out'
# Texture references: left, each use saying why and what to write.
printf 'texture<float, 1, cudaReadModeElementType> tex;\n__global__ void k(float *o) { o[0] = tex1Dfetch(tex, 0); }\nvoid f(float *d, size_t *off) { cudaBindTexture(off, tex, d, 4); }\n' >texref.cu
cp texref.cu texref.orig
"$NVSHIM" migrate texref.cu >texref.out 2>texref.err
st=$?
check "texture references: status 1, nothing changed, each use says why and what to write" eval 'test $st = 1 && test ! -s texref.out && cmp -s texref.cu texref.orig &&
	grep -q "texref.cu:1: texture: not migrated: texture and surface references are gone since CUDA 12.0.*its use on line 3 is not.*here, write a cudaTextureObject_t" texref.err &&
	grep -q "texref.cu:2: tex1Dfetch: not migrated: .*FETCH<T>(obj, ...)" texref.err && grep -q "texref.cu:3: cudaBindTexture: not migrated: .*cudaResourceTypeLinear" texref.err'
"$NVSHIM" migrate missing.cu 2>/dev/null
check "an unreadable file: status 2" test $? = 2
finish
