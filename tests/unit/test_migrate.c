/* migrate: the rewrite engine of `nvshim migrate` (diagnose/migrate.c) on small sources. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/migrate.h"

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
	/* A write, or no cudaGetDeviceProperties: left, and said. */
	mig("void f(cudaDeviceProp &p) { p.clockRate = 1; int x = p.memoryClockRate; }\n", &r);
	cr_assert_eq(r.changes, 0);
	cr_assert_eq(r.skipped.n, 2);
	cr_assert(strstr(r.skipped.v[0], "1: cudaDeviceProp::clockRate: not migrated"), "%s", r.skipped.v[0]);
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
	cr_assert(strstr(r.text, "#if CCCL_MAJOR_VERSION >= 3 /* nvshim migrate */\n thrust::transform_iterator<op, int *, float> t(p, op());\n#else\n"), "%s", r.text);
	cr_assert_eq(r.changes, 1);
	cr_assert_eq(r.skipped.n, 1);
	cr_assert(strstr(r.skipped.v[0], "4: cub::CountingInputIterator: not migrated: 2 template arguments"), "%s", r.skipped.v[0]);
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
	cr_assert_null(migrate_form("thrust::identity"));
}
