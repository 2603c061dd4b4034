/* migrate: the rewrite engine of `nvshim migrate` (upgrade/migrate.c) on small sources. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "upgrade/migrate.h"

static char *mig(const char *src, struct migrate_result *r)
{
	migrate_text(src, strlen(src), NULL, r);
	return r->text;
}

Test(migrate, clean_text_is_byte_identical)
{
	struct migrate_result r;
	const char *src = "#include <cuda_runtime.h>\n// cudaThreadSynchronize();\nconst char *s = \"cub::Max()\";\n"
			  "int main() { cudaDeviceSynchronize(); return 0; }\n";
	cr_assert_str_eq(mig(src, &r), src);
	cr_assert_eq(r.changes, 0);
	cr_assert_eq(r.skipped.n, 0);
	char *d = migrate_diff("a.cu", src, strlen(src), r.text, r.len);
	cr_assert_str_eq(d, "");
	free(d);
	migrate_result_release(&r);
}

Test(migrate, rename_without_guard)
{
	struct migrate_result r;
	cr_assert_str_eq(mig("void f() { cudaThreadSynchronize(); }\n", &r), "void f() { cudaDeviceSynchronize(); }\n");
	cr_assert_eq(r.changes, 1);
	migrate_result_release(&r);
}

Test(migrate, cuCtxCreate_guarded_whole_line)
{
	struct migrate_result r;
	cr_assert_str_eq(mig("int f() {\n\tcuCtxCreate(&c, 0, dev); // x\n}\n", &r),
			 "int f() {\n#if CUDA_VERSION >= 13000 /* nvshim migrate */\n\tcuCtxCreate(&c, NULL, 0, dev); // x\n"
			 "#else\n\tcuCtxCreate(&c, 0, dev); // x\n#endif\n}\n");
	migrate_result_release(&r);
	/* The new form is left alone, and so is migrate's own output. */
	const char *done = "#if CUDA_VERSION >= 13000 /* nvshim migrate */\ncuCtxCreate(&c, NULL, 0, d);\n#else\ncuCtxCreate(&c, 0, d);\n#endif\n";
	cr_assert_str_eq(mig(done, &r), done);
	migrate_result_release(&r);
}

Test(migrate, field_reads_the_device_of_its_struct)
{
	struct migrate_result r;
	const char *src = "#include <cuda_runtime.h>\nvoid f(int d) {\n cudaDeviceProp p[2];\n cudaGetDeviceProperties(&p[1], d + 1);\n"
			  " int k = p[1].clockRate;\n}\n";
	mig(src, &r);
	cr_assert(strstr(r.text, "int k = nvshim_migrate_attr(cudaDevAttrClockRate, d + 1);\n"), "%s", r.text);
	cr_assert(strstr(r.text, "#include <cuda_runtime.h>\n/* nvshim migrate: cudaDeviceProp"), "%s", r.text);
	migrate_result_release(&r);
	/* A write, or no cudaGetDeviceProperties for a struct not declared a cudaDeviceProp here: left, and said. */
	mig("void f(cudaDeviceProp &p, struct info *i) { p.clockRate = 1; int x = i->prop.memoryClockRate; }\n", &r);
	cr_assert_eq(r.changes, 0);
	cr_assert_eq(r.skipped.n, 2);
	cr_assert(strstr(r.skipped.v[0], "1: cudaDeviceProp::clockRate: not migrated: the field is written"), "%s", r.skipped.v[0]);
	cr_assert(strstr(r.skipped.v[1], "1: cudaDeviceProp::memoryClockRate: not migrated: no cudaGetDeviceProperties(&i->prop, "
				     "device) before it names the device, and no declaration of it as a cudaDeviceProp"), "%s", r.skipped.v[1]);
	migrate_result_release(&r);
}

Test(migrate, helpers_go_after_the_includes_and_their_blocks)
{
	struct migrate_result r;
	mig("#ifndef H\n#define H\n#ifdef USE_CUDA\n#include <cuda_runtime.h>\n#endif\n#if FOO\nint foo;\n#endif\n"
	    "void f(int d) { cudaDeviceProp p; cudaGetDeviceProperties(&p, d); int k = p.clockRate; }\n#endif\n", &r);
	cr_assert(strstr(r.text, "#include <cuda_runtime.h>\n#endif\n/* nvshim migrate: cudaDeviceProp"), "%s", r.text);
	migrate_result_release(&r);
}

Test(migrate, field_of_a_copy_or_a_pointer)
{
	struct migrate_result r;
	mig("void f(int d) {\n cudaDeviceProp p; cudaGetDeviceProperties(&p, d);\n cudaDeviceProp c = p;\n"
	    " const cudaDeviceProp *q = &c;\n int a = c.computeMode + q->clockRate;\n}\n", &r);
	cr_assert(strstr(r.text, "int a = nvshim_migrate_attr(cudaDevAttrComputeMode, d) + nvshim_migrate_attr(cudaDevAttrClockRate, d);"),
		  "%s", r.text);
	migrate_result_release(&r);
}

Test(migrate, uses_without_a_recipe_are_named)
{
	struct argv known = ARGV_INIT;
	argv_push(&known, "texture");
	argv_push(&known, "tex1Dfetch");
	argv_push(&known, "thrust/optional.h");
	argv_push(&known, "cudaDeviceProp::maxTexture1DLinear");
	struct migrate_result r;
	const char *src = "#include <thrust/optional.h>\ntexture<float, 1> t; int texture = 0;\n"
			  "__global__ void k(float *o, cudaTextureObject_t x) { o[0] = tex1Dfetch(t, 0) + tex1Dfetch<float>(x, 0); }\n"
			  "int g(cudaDeviceProp &p) { return p.maxTexture1DLinear; }\n";
	migrate_text(src, strlen(src), &known, &r);
	cr_assert_str_eq(r.text, src);
	cr_assert_eq(r.skipped.n, 4);
	cr_assert(strstr(r.skipped.v[0], "1: thrust/optional.h: no automatic rewrite"), "%s", r.skipped.v[0]);
	cr_assert(strstr(r.skipped.v[1], "2: texture:"), "%s", r.skipped.v[1]);
	cr_assert(strstr(r.skipped.v[2], "3: tex1Dfetch:"), "%s", r.skipped.v[2]);
	cr_assert(strstr(r.skipped.v[3], "4: cudaDeviceProp::maxTexture1DLinear:"), "%s", r.skipped.v[3]);
	migrate_result_release(&r);
	argv_release(&known);
}

Test(migrate, thrust_base_removed_with_its_aliases)
{
	struct migrate_result r;
	cr_assert_str_eq(mig("struct sq : public thrust::unary_function<float, float> { float operator()(float x) const; };\n", &r),
			 "struct sq { using argument_type = float; using result_type = float; float operator()(float x) const; };\n");
	migrate_result_release(&r);
	/* Another base stays; an alias the class declares itself is not declared twice. */
	cr_assert_str_eq(mig("template <class T> struct a : thrust::binary_function<T, T, bool>, b { typedef bool result_type; };\n", &r),
			 "template <class T> struct a : b { using first_argument_type = T; using second_argument_type = T; typedef bool result_type; };\n");
	migrate_result_release(&r);
}

Test(migrate, cub_operators_and_macros)
{
	struct migrate_result r;
	mig("int m = CUB_MAX(f(1, 2), y) + cub::Sum()(1, 2);\n", &r);
	cr_assert_str_eq(r.text, "#if CCCL_MAJOR_VERSION >= 3 /* nvshim migrate */\n"
				 "int m = (((y) > (f(1, 2))) ? (y) : (f(1, 2))) + cuda::std::plus<>()(1, 2);\n#else\n"
				 "int m = (((y) > (f(1, 2))) ? (y) : (f(1, 2))) + cub::Sum()(1, 2);\n#endif\n");
	migrate_result_release(&r);
	/* A program's own #define CUB_MAX is its own. */
	const char *own = "#ifndef CUB_MAX\n#define CUB_MAX(a, b) ((a) > (b) ? (a) : (b))\n#endif\n";
	cr_assert_str_eq(mig(own, &r), own);
	migrate_result_release(&r);
}

Test(migrate, cub_iterators_to_thrust)
{
	struct migrate_result r;
	mig("#include <cub/cub.cuh>\nvoid f(int *p) {\n cub::TransformInputIterator<float, op, int *> t(p, op());\n"
	    " cub::CountingInputIterator<int, long> c(0);\n}\n", &r);
	cr_assert(strstr(r.text, "#include <cub/cub.cuh>\n#include <thrust/iterator/transform_iterator.h> /* nvshim migrate */\n"), "%s", r.text);
	cr_assert(strstr(r.text, "#if CCCL_MAJOR_VERSION >= 3 /* nvshim migrate */\n thrust::transform_iterator<op, int *, float> t(p, op());\n"), "%s", r.text);
	cr_assert_eq(r.changes, 2);
	cr_assert_eq(r.skipped.n, 0);
	migrate_result_release(&r);
}

/* The forms with an offset type: kept as the difference type where Thrust has one, dropped
 * where it has none; cub::DiscardOutputIterator too; a count that is neither form is said. */
Test(migrate, cub_iterators_with_an_offset_type)
{
	struct migrate_result r;
	mig("void f(int *p) {\n"
	    " cub::CountingInputIterator<int, long> c(0);\n"
	    " cub::ConstantInputIterator<float, int> k(2.5f);\n"
	    " cub::TransformInputIterator<float, op, cub::CountingInputIterator<int>, int> t(c2, op());\n"
	    " cub::DiscardOutputIterator<> d; cub::DiscardOutputIterator<long long> e;\n"
	    " cub::ConstantInputIterator<float, int, int> bad(1);\n}\n", &r);
	cr_assert(strstr(r.text, "#if CCCL_MAJOR_VERSION >= 3 /* nvshim migrate */\n"
				 " thrust::counting_iterator<int, thrust::use_default, thrust::use_default, long> c(0);\n#else\n"), "%s", r.text);
	cr_assert(strstr(r.text, "#if CCCL_MAJOR_VERSION >= 3 /* nvshim migrate */\n thrust::constant_iterator<float, int> k(2.5f);\n"),
		  "%s", r.text);
	cr_assert(strstr(r.text, " thrust::discard_iterator<> d; thrust::discard_iterator<> e;\n"), "%s", r.text);
	cr_assert(strstr(r.text, " thrust::transform_iterator<op, thrust::counting_iterator<int>, float> t(c2, op());\n"), "%s", r.text);
	cr_assert(strstr(r.text, "#include <thrust/iterator/discard_iterator.h> /* nvshim migrate */\n"), "%s", r.text);
	/* the old lines, as they were, on the #else side */
	cr_assert(strstr(r.text, "#else\n cub::CountingInputIterator<int, long> c(0);\n"), "%s", r.text);
	cr_assert_eq(r.skipped.n, 1);
	cr_assert(strstr(r.skipped.v[0], "6: cub::ConstantInputIterator: not migrated: 3 template arguments (the old form has 1, "
				     "or 2 with an offset type)"), "%s", r.skipped.v[0]);
	migrate_result_release(&r);
}

/* thrust::identity<T> converted its argument to T: CCCL 2.8's class, added once, on both. */
Test(migrate, thrust_identity_becomes_cccl_2_8s)
{
	struct migrate_result r;
	mig("#include <thrust/functional.h>\nvoid f() {\n t(v, thrust::identity<int>());\n auto a = thrust::identity<>{};\n"
	    " auto b = thrust::identity{};\n}\nusing thrust::identity;\n", &r);
	cr_assert(strstr(r.text, "#include <thrust/functional.h>\n/* nvshim migrate: thrust::identity is gone"), "%s", r.text);
	cr_assert(strstr(r.text, "template <typename T = void>\nstruct nvshim_migrate_identity\n{\n"), "%s", r.text);
	cr_assert(strstr(r.text, " t(v, nvshim_migrate_identity<int>());\n auto a = nvshim_migrate_identity<>{};\n"
				 " auto b = nvshim_migrate_identity<>{};\n}\nusing thrust::identity;\n"), "%s", r.text);
	cr_assert(!strstr(r.text, "#if CCCL"), "no guard: %s", r.text);
	cr_assert_eq(r.changes, 3);
	cr_assert_eq(r.skipped.n, 1);
	cr_assert(strstr(r.skipped.v[0], "7: thrust::identity: not migrated: not a use of the class template"), "%s", r.skipped.v[0]);
	/* Migrated again: nothing to do, and the helper is not added twice. */
	struct migrate_result r2;
	migrate_text(r.text, r.len, NULL, &r2);
	cr_assert_eq(r2.changes, 0);
	cr_assert_str_eq(r2.text, r.text);
	migrate_result_release(&r2);
	migrate_result_release(&r);
}

/* A struct the program did not fill in sight (a parameter, a member, an element): the device
 * whose PCI ids are the struct's, on CUDA 13; CUDA 12 reads the field. */
Test(migrate, field_of_a_struct_filled_elsewhere_reads_its_pci_device)
{
	struct migrate_result r;
	mig("#include <cuda_runtime.h>\nstruct ctx { cudaDeviceProp props; };\n"
	    "void show(const cudaDeviceProp& p, struct ctx *c, std::vector<cudaDeviceProp> &all) {\n"
	    " printf(\"%d\\n\", p.clockRate);\n"
	    " int k = c->props.memoryClockRate + all[1].computeMode;\n"
	    "}\nint g(const cudaDeviceProp *q) { return q->deviceOverlap; }\nint h(cudaDeviceProp *q) { return q && q->clockRate & 1; }\n", &r);
	cr_assert(strstr(r.text, "#include <cuda_runtime.h>\n#if CUDART_VERSION >= 13000\n/* nvshim migrate: cudaDeviceProp's"), "%s", r.text);
	cr_assert(strstr(r.text, "static inline int nvshim_migrate_prop_attr(const struct cudaDeviceProp *prop, enum cudaDeviceAttr attr)\n"), "%s", r.text);
	cr_assert(strstr(r.text, "#if CUDART_VERSION >= 13000 /* nvshim migrate */\n"
				 " printf(\"%d\\n\", nvshim_migrate_prop_attr(&(p), cudaDevAttrClockRate));\n#else\n"
				 " printf(\"%d\\n\", p.clockRate);\n#endif\n#if CUDART_VERSION >= 13000 /* nvshim migrate */\n"
				 " int k = nvshim_migrate_prop_attr(&(c->props), cudaDevAttrMemoryClockRate) + "
				 "nvshim_migrate_prop_attr(&(all[1]), cudaDevAttrComputeMode);\n#else\n"
				 " int k = c->props.memoryClockRate + all[1].computeMode;\n#endif\n"), "%s", r.text);
	cr_assert(strstr(r.text, "#if CUDART_VERSION >= 13000 /* nvshim migrate */\nint g(const cudaDeviceProp *q) { return "
				 "nvshim_migrate_prop_attr(q, cudaDevAttrGpuOverlap); }\n#else\n"), "%s", r.text);
	cr_assert(strstr(r.text, "int h(cudaDeviceProp *q) { return q && nvshim_migrate_prop_attr(q, cudaDevAttrClockRate) & 1; }\n"), "%s", r.text);
	cr_assert_eq(r.changes, 5);
	cr_assert_eq(r.skipped.n, 0);
	/* Migrated again: nothing changes (the #else side is the old form, kept). */
	struct migrate_result r2;
	migrate_text(r.text, r.len, NULL, &r2);
	cr_assert_eq(r2.changes, 0);
	cr_assert_str_eq(r2.text, r.text);
	migrate_result_release(&r2);
	migrate_result_release(&r);
	/* A struct of another type with a field of that name is not touched. */
	const char *other = "struct clk { int clockRate; };\nint h(struct clk &c) { return c.clockRate; }\n";
	cr_assert_str_eq(mig(other, &r), other);
	cr_assert_eq(r.skipped.n, 1);
	migrate_result_release(&r);
	/* In a macro's continued line: no guard there, said. */
	const char *mac = "#define CLK(p) \\\n  p.clockRate\nvoid f(cudaDeviceProp &p) { }\n";
	cr_assert_str_eq(mig(mac, &r), mac);
	migrate_result_release(&r);
}

/* pycuda's cuda.hpp: CUDAPP_CALL_GUARDED_THREADED(cuCtxCreate, (&ctx, flags, m_device)), the
 * name and the argument list apart, pasted together by the macro. */
Test(migrate, name_and_arguments_passed_to_a_macro_apart)
{
	struct migrate_result r;
	cr_assert_str_eq(mig("void f() {\n  CALL_GUARDED(cuCtxCreate, (&ctx, flags, dev));\n}\n", &r),
			 "void f() {\n#if CUDA_VERSION >= 13000 /* nvshim migrate */\n"
			 "  CALL_GUARDED(cuCtxCreate, (&ctx, NULL, flags, dev));\n#else\n"
			 "  CALL_GUARDED(cuCtxCreate, (&ctx, flags, dev));\n#endif\n}\n");
	cr_assert_eq(r.skipped.n, 0);
	migrate_result_release(&r);
	/* the name alone as an argument: said, left */
	const char *src = "void f() {\n  CALL(cuCtxCreate, args);\n  g(&cudaGraphAddNode);\n  h(cuCtxCreate);\n}\n";
	cr_assert_str_eq(mig(src, &r), src);
	cr_assert_eq(r.skipped.n, 2);
	cr_assert_str_eq(r.skipped.v[0], "2: cuCtxCreate: not migrated: passed as an argument, not called here (a macro "
					 "that calls it, or a function pointer): rewrite the call by hand");
	cr_assert(!strncmp(r.skipped.v[1], "4: cuCtxCreate: not migrated: passed as an argument", 51), "%s",
		  r.skipped.v[1]);
	migrate_result_release(&r);
}

Test(migrate, guard_refused_in_a_macro)
{
	struct migrate_result r;
	const char *src = "#define MK(c, d) \\\n  cuCtxCreate(&c, 0, d)\n";
	cr_assert_str_eq(mig(src, &r), src);
	cr_assert_eq(r.skipped.n, 1);
	migrate_result_release(&r);
}

Test(migrate, prefetch_location_and_the_new_form)
{
	struct migrate_result r;
	mig("void f() { cudaMemPrefetchAsync(p, n, dev, s); }\n", &r);
	cr_assert(strstr(r.text, "cudaMemPrefetchAsync(p, n, nvshim_migrate_location(dev), 0, s); }\n#else\n"), "%s", r.text);
	cr_assert(strstr(r.text, "#if CUDART_VERSION >= 13000\n/* nvshim migrate: cudaMemAdvise"), "%s", r.text);
	migrate_result_release(&r);
	const char *newform = "void f() { cudaMemLocation where = {}; cudaMemAdvise(p, n, a, where); }\n";
	cr_assert_str_eq(mig(newform, &r), newform);
	migrate_result_release(&r);
}

Test(migrate, diff_is_unified)
{
	const char *a = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
	const char *b = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n";
	char *d = migrate_diff("x.cu", a, strlen(a), b, strlen(b));
	cr_assert_str_eq(d, "--- x.cu\n+++ x.cu\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
	free(d);
	const char *c = "1\n2";
	const char *e = "1\n3";
	d = migrate_diff("y.cu", c, 3, e, 3);
	cr_assert_str_eq(d, "--- y.cu\n+++ y.cu\n@@ -1,2 +1,2 @@\n 1\n-2\n\\ No newline at end of file\n+3\n\\ No newline at end of file\n");
	free(d);
}

Test(migrate, forms_for_explain_api)
{
	cr_assert_not_null(migrate_form("cuCtxCreate"));
	cr_assert_not_null(strstr(migrate_form("cub::Max"), "CCCL_MAJOR_VERSION >= 3"));
	cr_assert_not_null(strstr(migrate_form("thrust::identity"), "nvshim_migrate_identity<T>"));
	cr_assert_not_null(strstr(migrate_form("cub::DiscardOutputIterator"), "thrust::discard_iterator<>"));
	cr_assert_null(migrate_form("texture"));
}

/* A member declared in a header the file includes with quotes (superbenchmark's gpu_stream:
 * args->gpu_device_prop, declared in gpu_stream_utils.hpp). */
Test(migrate, field_of_a_member_declared_in_an_included_header)
{
	struct argv props = ARGV_INIT, quoted = ARGV_INIT;
	const char *hdr = "#include <cuda_runtime.h>\n#include \"more.hpp\"\nstruct args { int n; cudaDeviceProp gpu_device_prop; };\n";
	migrate_declarations(hdr, strlen(hdr), &props, &quoted);
	cr_assert_eq(props.n, 1);
	cr_assert_str_eq(props.v[0], "gpu_device_prop");
	cr_assert_eq(quoted.n, 1);
	cr_assert_str_eq(quoted.v[0], "more.hpp");
	struct migrate_result r;
	const char *src = "#include \"utils.hpp\"\nint bw(struct args *a) { return a->gpu_device_prop.memoryClockRate; }\n";
	migrate_text(src, strlen(src), NULL, &r);
	cr_assert_eq(r.changes, 0);
	cr_assert_eq(r.skipped.n, 1);
	cr_assert(strstr(r.skipped.v[0], "in this file or the headers it includes with quotes"), "%s", r.skipped.v[0]);
	migrate_result_release(&r);
	migrate_text_with(src, strlen(src), NULL, &props, &r);
	cr_assert_eq(r.changes, 1);
	cr_assert(strstr(r.text, "int bw(struct args *a) { return nvshim_migrate_prop_attr(&(a->gpu_device_prop), cudaDevAttrMemoryClockRate); }\n"),
		  "%s", r.text);
	migrate_result_release(&r);
	argv_release(&props);
	argv_release(&quoted);
}

static void texture_known(struct argv *known)
{
	argv_init(known);
	argv_push(known, "texture");
	argv_push(known, "tex1Dfetch");
	argv_push(known, "cudaBindTexture");
	argv_push(known, "cudaUnbindTexture");
}

/* The simple pattern: a file-scope 1D reference bound to linear memory, read with tex1Dfetch. */
Test(migrate, texture_reference_of_the_simple_pattern)
{
	struct argv known;
	texture_known(&known);
	struct migrate_result r;
	const char *src = "#include <cuda_runtime.h>\n"
			  "texture<float, 1, cudaReadModeElementType> tex;\nstatic texture<int2> t2;\n"
			  "__global__ void k(float *o, int i) { o[0] = tex1Dfetch(tex, i) + tex1Dfetch(t2, i).x; }\n"
			  "void f(float *d, int2 *e, size_t n) {\n cudaBindTexture(0, tex, d, n);\n cudaBindTexture(NULL, t2, e, cudaCreateChannelDesc<int2>(), n);\n"
			  " cudaUnbindTexture(tex);\n}\n";
	migrate_text(src, strlen(src), &known, &r);
	cr_assert_eq(r.skipped.n, 0, "%s", r.skipped.n ? r.skipped.v[0] : "");
	cr_assert(strstr(r.text, "#include <cuda_runtime.h>\n/* nvshim migrate: texture references are gone"), "%s", r.text);
	cr_assert(strstr(r.text, "static cudaError_t nvshim_migrate_bind_texture(size_t *offset, const cudaTextureObject_t &ref,"), "%s", r.text);
	cr_assert(strstr(r.text, "}\nstatic __device__ cudaTextureObject_t tex;\nstatic __device__ cudaTextureObject_t t2;\n"
				 "__global__ void k(float *o, int i) { o[0] = tex1Dfetch<float>(tex, i) + tex1Dfetch<int2>(t2, i).x; }\n"
				 "void f(float *d, int2 *e, size_t n) {\n nvshim_migrate_bind_texture<float>(0, tex, d, n);\n"
				 " nvshim_migrate_bind_texture<int2>(NULL, t2, e, cudaCreateChannelDesc<int2>(), n);\n nvshim_migrate_unbind_texture(tex);\n}\n"), "%s", r.text);
	cr_assert(!strstr(r.text, "#if"), "no guard (texture objects are on both): %s", r.text);
	cr_assert_eq(r.changes, 7);
	struct migrate_result r2;
	migrate_text(r.text, r.len, &known, &r2);
	cr_assert_eq(r2.changes, 0);
	cr_assert_eq(r2.skipped.n, 0);
	cr_assert_str_eq(r2.text, r.text);
	migrate_result_release(&r2);
	migrate_result_release(&r);
	argv_release(&known);
}

/* Any other texture reference: left, with why and, per use, what to write. */
Test(migrate, texture_references_say_what_to_write)
{
	struct argv known;
	texture_known(&known);
	struct migrate_result r;
	const char *src = "texture<float, 1, cudaReadModeElementType> tex;\n"
			  "__global__ void k(float *o) { o[0] = tex1Dfetch(tex, 0); }\n"
			  "void f(float *d, size_t n, size_t *off) { cudaBindTexture(off, tex, d, n); cudaUnbindTexture(tex); }\n";
	migrate_text(src, strlen(src), &known, &r);
	cr_assert_str_eq(r.text, src);
	cr_assert_eq(r.skipped.n, 4);
	cr_assert(strstr(r.skipped.v[0], "1: texture: not migrated: texture and surface references are gone since CUDA 12.0"), "%s", r.skipped.v[0]);
	cr_assert(strstr(r.skipped.v[0], "and its use on line 3 is not tex1Dfetch(REF, i), cudaBindTexture(0, REF, ptr[, desc], size) or "
				     "cudaUnbindTexture(REF); here, write a cudaTextureObject_t created where the reference is bound"), "%s", r.skipped.v[0]);
	cr_assert(strstr(r.skipped.v[1], "2: tex1Dfetch: not migrated: ") && strstr(r.skipped.v[1], "FETCH<T>(obj, ...)"), "%s", r.skipped.v[1]);
	cr_assert(strstr(r.skipped.v[2], "cudaResourceTypeLinear"), "%s", r.skipped.v[2]);
	cr_assert(strstr(r.skipped.v[3], "cudaDestroyTextureObject(obj)"), "%s", r.skipped.v[3]);
	migrate_result_release(&r);
	/* 2D, normalized reads, an attribute set, not bound here: each said. */
	const char *more[][2] = {
		{ "texture<float, 2> a;\nvoid f() { cudaBindTexture(0, a, p, n); }\n", "it is not one-dimensional" },
		{ "texture<unsigned char, 1, cudaReadModeNormalizedFloat> a;\nvoid f() { cudaBindTexture(0, a, p, n); }\n",
		  "its read mode is not cudaReadModeElementType" },
		{ "texture<float> a;\nvoid f() { a.filterMode = cudaFilterModeLinear; cudaBindTexture(0, a, p, n); }\n",
		  "its use on line 2 is not" },
		{ "texture<float> a;\n__global__ void k(float *o) { *o = tex1Dfetch(a, 0); }\n", "it is not bound in this file" },
	};
	for (size_t k = 0; k < sizeof(more) / sizeof(more[0]); k++) {
		migrate_text(more[k][0], strlen(more[k][0]), &known, &r);
		cr_assert_str_eq(r.text, more[k][0]);
		cr_assert(r.skipped.n >= 1 && strstr(r.skipped.v[0], more[k][1]), "%s", r.skipped.n ? r.skipped.v[0] : "");
		migrate_result_release(&r);
	}
	argv_release(&known);
}

Test(migrate, an_empty_argument_is_left_as_written)
{
	/* A macro's body, where an argument is written in later: nothing to rewrite, one message. */
	struct migrate_result r;
	const char *src = "void f() { cudaMemAdvise(p, n, a, ); cudaMemPrefetchAsync(p, n, , s); }\n";
	cr_assert_str_eq(mig(src, &r), src);
	cr_assert_eq(r.changes, 0);
	cr_assert_eq(r.skipped.n, 2);
	cr_assert(strstr(r.skipped.v[0], "cudaMemAdvise: not migrated: an empty argument"), "%s", r.skipped.v[0]);
	migrate_result_release(&r);
}
