#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "nvshim/diagnose.h"
#include "nvshim/runner.h"

/* Captured from nvcc 13.0.88 (and ptxas 12.9.86, which prints the same shapes). */
static const char ptxas_min[] =
	"ptxas /tmp/tmpxft_000045a6_00000000-6_cpasync.ptx, line 37; error   : Feature 'cp.async' "
	"requires .target sm_80 or higher\n"
	"ptxas /tmp/tmpxft_000045a6_00000000-6_cpasync.ptx, line 41; error   : Feature "
	"'cp.async.wait_all' requires .target sm_80 or higher\n"
	"ptxas fatal   : Ptx assembly aborted due to errors\n";
static const char ptxas_specific[] =
	"ptxas w.ptx, line 21; error   : Instruction 'wgmma.fence' not supported on .target 'sm_90'\n"
	"ptxas fatal   : Ptx assembly aborted due to errors\n";
static const char exception[] =
	"exc.cu(4): error: device code does not support exception handling\n"
	"    throw std::runtime_error(\"needs sm_80\");\n"
	"    ^\n\n1 error detected in the compilation of \"exc.cu\".\n";
static const char hash_error[] = "err.cu:3:2: error: #error \"fp8 kernels need sm_89\"\n"
				 "    3 | #error \"fp8 kernels need sm_89\"\n"
				 "      |  ^~~~~\n";
static const char wmma[] =
	"bf16.cu(5): error: incomplete type \"nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, "
	"16, __nv_bfloat16, nvcuda::wmma::row_major>\" is not allowed\n";
static const char syntax[] = "bad.cu(2): error: expected a \";\"\n"
			     "1 error detected in the compilation of \"bad.cu\".\n";

Test(diagnose, ptxas_feature_gives_the_minimum)
{
	struct diagnosis d;
	diagnose_init(&d);
	cr_assert_eq(diagnose_stderr(&d, ptxas_min), 3);
	const struct diagnose_finding *f = diagnose_find(&d, DIAGNOSE_ARCH_MIN);
	cr_assert_not_null(f);
	cr_assert_eq(f->arch, 80);
	cr_assert_str_eq(f->what, "cp.async");
	cr_assert_eq(d.v[2].kind, DIAGNOSE_ERROR); /* "ptxas fatal" */
	cr_assert(diagnose_arch_related(&d));
	char *r = diagnose_reason(f);
	cr_assert_str_eq(r, "cp.async requires sm_80 or higher");
	free(r);
	diagnose_release(&d);
}

Test(diagnose, ptxas_instruction_needs_an_arch_specific_target)
{
	struct diagnosis d;
	diagnose_init(&d);
	diagnose_stderr(&d, ptxas_specific);
	const struct diagnose_finding *f = diagnose_find(&d, DIAGNOSE_ARCH_SPECIFIC);
	cr_assert_not_null(f);
	cr_assert_eq(f->arch, 90);
	cr_assert_str_eq(f->what, "wgmma.fence");
	diagnose_release(&d);
}

Test(diagnose, front_end_guards_with_file_and_line)
{
	struct diagnosis d;
	diagnose_init(&d);
	diagnose_stderr(&d, exception);
	cr_assert_eq(d.n, 1);
	cr_assert_eq(d.v[0].kind, DIAGNOSE_ARCH_GUARD);
	cr_assert_str_eq(d.v[0].file, "exc.cu");
	cr_assert_eq(d.v[0].line, 4);
	char *r = diagnose_reason(&d.v[0]);
	cr_assert_str_eq(r, "device code does not support exception handling (line 4)");
	free(r);
	diagnose_release(&d);

	diagnose_stderr(&d, hash_error);
	cr_assert_eq(d.n, 1);
	cr_assert_eq(d.v[0].kind, DIAGNOSE_ARCH_GUARD);
	cr_assert_str_eq(d.v[0].file, "err.cu");
	cr_assert_eq(d.v[0].line, 3);
	diagnose_release(&d);

	diagnose_stderr(&d, wmma);
	cr_assert_eq(d.v[0].kind, DIAGNOSE_ARCH_GUARD);
	diagnose_release(&d);
}

Test(diagnose, plain_errors_are_not_arch_related)
{
	struct diagnosis d;
	diagnose_init(&d);
	diagnose_stderr(&d, syntax);
	cr_assert_eq(d.n, 1);
	cr_assert_eq(d.v[0].kind, DIAGNOSE_ERROR);
	cr_assert_str_eq(d.v[0].file, "bad.cu");
	cr_assert_eq(d.v[0].line, 2);
	cr_assert(!diagnose_arch_related(&d));
	diagnose_release(&d);
	cr_assert_eq(diagnose_stderr(&d, ""), 0);
	cr_assert_eq(diagnose_stderr(&d, "no newline at the end"), 0);
	diagnose_release(&d);
}

/* The machine's nvcc, live: what it prints for a source built below its minimum. */
Test(diagnose, real_nvcc_messages)
{
	char *dir = test_tmpdir();
	char *src = test_write(dir, "k.cu",
			       "__global__ void k(float *d, const float *s) {\n"
			       "  __shared__ float b[32];\n"
			       "  unsigned a = (unsigned)__cvta_generic_to_shared(b + threadIdx.x);\n"
			       "  asm volatile(\"cp.async.ca.shared.global [%0], [%1], 4;\" :: \"r\"(a), "
			       "\"l\"(s));\n"
			       "  asm volatile(\"cp.async.wait_all;\" ::);\n"
			       "  d[0] = b[0];\n}\n");
	struct argv a = ARGV_INIT;
	argv_pushv(&a, (const char *const[]){ "nvcc", "-c", src, "-o", "/dev/null", "-gencode",
					      "arch=compute_75,code=sm_75", NULL });
	struct run_result res;
	char *held = NULL;
	cr_assert_eq(runner_run_held(NVSHIM_TEST_NVCC, &a, &res, &held), 0);
	cr_assert_neq(res.status, 0);
	struct diagnosis d;
	diagnose_init(&d);
	diagnose_stderr(&d, held);
	const struct diagnose_finding *f = diagnose_find(&d, DIAGNOSE_ARCH_MIN);
	cr_assert_not_null(f, "%s", held);
	cr_assert_eq(f->arch, 80);
	diagnose_release(&d);
	free(held);
	argv_release(&a);
	free(src);
	free(dir);
}

/* Captured from nvcc 13.0.88 building for sm_80. */
Test(diagnose, clusters_below_sm_90)
{
	static const char dims[] = "cl.cu(1): error: __cluster_dims__ is not supported for this GPU architecture\n";
	static const char cg[] = "tc.cu(3): error: namespace \"cooperative_groups\" has no member \"this_cluster\"\n";
	struct diagnosis d;
	diagnose_init(&d);
	diagnose_stderr(&d, dims);
	diagnose_stderr(&d, cg);
	cr_assert_eq(d.n, 2);
	cr_assert_eq(d.v[0].kind, DIAGNOSE_ARCH_GUARD);
	cr_assert_eq(d.v[1].kind, DIAGNOSE_ARCH_GUARD);
	cr_assert_eq(d.v[1].line, 3);
	diagnose_release(&d);
}
