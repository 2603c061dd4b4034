#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "diagnose/api.h"
#include "upgrade/compat.h"
#include "helpers.h"

static struct api_table table;

static void load_table(void)
{
	char *text = test_read(NVSHIM_SOURCE_DIR "/config/api.ini");
	cr_assert_not_null(text);
	struct argv problems = ARGV_INIT;
	api_table_init(&table);
	api_parse(&table, text, "api.ini", &problems);
	cr_assert_eq(problems.n, 0, "%s", problems.n ? problems.v[0] : "");
	argv_release(&problems);
	free(text);
}

static void free_table(void) { api_table_release(&table); }

TestSuite(compat, .init = load_table, .fini = free_table);

Test(compat, every_entry_says_compat_or_why_not)
{
	for (size_t i = 0; i < table.n; i++) {
		const struct api_entry *e = &table.v[i];
		cr_assert(e->compat || e->nocompat, "%s: neither compat nor nocompat", e->name);
		if (!e->compat)
			continue;
		char *h = concat(NVSHIM_SOURCE_DIR "/include/nvshim/compat/", e->compat, NULL);
		struct stat sb;
		cr_assert_eq(stat(h, &sb), 0, "%s: no %s", e->name, h);
		free(h);
		/* a rewrite is for struct fields, and the header has the field's function */
		if (e->compat_rewrite) {
			cr_assert_not_null(strstr(e->name, "::"), "%s", e->name);
			char *text = test_read(NVSHIM_SOURCE_DIR "/include/nvshim/compat/runtime.h");
			char *fn = concat("NVSHIM_COMPAT_PROP_FIELD(", strstr(e->name, "::") + 2, ",", NULL);
			cr_assert_not_null(strstr(text, fn), "%s: no %s", e->name, fn);
			free(fn);
			free(text);
		}
	}
	cr_assert_not_null(api_find(&table, "cudaLaunchCooperativeKernelMultiDevice")->nocompat);
	cr_assert_str_eq(api_find(&table, "cuCtxCreate")->compat, "driver.h");
}

static const char *const devinfo_err =
	"devinfo.cu(20): error: class \"cudaDeviceProp\" has no member \"clockRate\"\n"
	"    std::printf(\"clockRate %d\\n\", prop.clockRate);\n"
	"                                       ^\n\n"
	"devinfo.cu(23): error: class \"cudaDeviceProp\" has no member \"kernelExecTimeoutEnabled\"\n"
	"    std::printf(\"%d\\n\", pp->kernelExecTimeoutEnabled);\n"
	"                              ^\n\n"
	"2 errors detected in the compilation of \"devinfo.cu\".\n";

Test(compat, decides_on_every_error)
{
	struct compat_decision d;
	compat_decision_init(&d);
	compat_decide(&table, devinfo_err, "13.0.88", &d);
	cr_assert(d.retry);
	cr_assert_eq(d.errors, 2);
	cr_assert_eq(d.headers.n, 1);
	cr_assert_str_eq(d.headers.v[0], "runtime.h");
	cr_assert_eq(d.nsites, 2);
	cr_assert_str_eq(d.sites[1].field, "kernelExecTimeoutEnabled");
	cr_assert_eq(d.sites[1].line, 23);
	cr_assert_str_eq(d.sites[1].file, "devinfo.cu");
	compat_decision_release(&d);
	/* a toolkit older than the entries: nothing is restored */
	compat_decide(&table, devinfo_err, "12.9", &d);
	cr_assert_not(d.retry);
	compat_decision_release(&d);
	/* one error the table does not know does not block: the retry fails if it was real */
	char *two = concat(devinfo_err, "devinfo.cu(30): error: identifier \"nope\" is undefined\n", NULL);
	compat_decide(&table, two, "13.0.88", &d);
	cr_assert(d.retry);
	cr_assert_eq(d.others, 1);
	cr_assert_eq(d.blocked, 0);
	compat_decision_release(&d);
	free(two);
	/* nothing the layer restores: no retry */
	compat_decide(&table, "devinfo.cu(30): error: identifier \"nope\" is undefined\n", "13.0.88", &d);
	cr_assert_not(d.retry);
	compat_decision_release(&d);
	/* one it restores and one it cannot: no retry */
	char *mixed = concat(devinfo_err, "c.cu(3): error: identifier "
			     "\"cudaLaunchCooperativeKernelMultiDevice\" is undefined\n", NULL);
	compat_decide(&table, mixed, "13.0.88", &d);
	cr_assert_not(d.retry);
	cr_assert_eq(d.blocked, 1);
	compat_decision_release(&d);
	free(mixed);
	/* an entry with nocompat: no retry, and why */
	compat_decide(&table, "c.cu(3): error: identifier \"cudaLaunchCooperativeKernelMultiDevice\" is undefined\n",
		      "13.0", &d);
	cr_assert_not(d.retry);
	cr_assert_eq(d.why_not.n, 1);
	cr_assert(!strncmp(d.why_not.v[0], "cudaLaunchCooperativeKernelMultiDevice: a grid spanning", 55));
	compat_decision_release(&d);
	/* no errors at all */
	compat_decide(&table, "warning only\n", "13.0", &d);
	cr_assert_not(d.retry);
	compat_decision_release(&d);
}

/* nvcc 13.0 on a functor derived from thrust::unary_function (as in dedisp's kernels.cuh): the
 * removed base, then errors at the functor's uses and inside Thrust that name nothing. */
static const char *const unary_err =
	"src/kernels.cuh(481): error: namespace \"thrust\" has no member class \"unary_function\"\n"
	"  struct scrunch_x2_functor : public thrust::unary_function<unsigned int,T> {\n"
	"                                             ^\n\n"
	"src/kernels.cuh(481): error: class or struct definition is missing\n"
	"  struct scrunch_x2_functor : public thrust::unary_function<unsigned int,T> {\n"
	"                                                           ^\n\n"
	"src/kernels.cuh(529): error: no suitable constructor exists to convert from \"const dedisp_word *\" to "
	"\"scrunch_x2_functor<dedisp_word>\"\n"
	"                        scrunch_x2_functor<dedisp_word>(d_in, in_nsamps_padded)),\n"
	"                        ^\n\n"
	"src/kernels.cuh(529): error: expected a \")\"\n"
	"                        scrunch_x2_functor<dedisp_word>(d_in, in_nsamps_padded)),\n"
	"                                                                              ^\n\n"
	"/usr/local/cuda/include/cccl/thrust/iterator/transform_iterator.h(66): error: class \"Fn\" has no member "
	"\"result_type\"\n\n"
	"5 errors detected in the compilation of \"src/dedisp.cu\".\n";

Test(compat, retries_past_the_follow_on_errors_of_a_removed_base)
{
	struct compat_decision d;
	compat_decision_init(&d);
	compat_decide(&table, unary_err, "13.0.88", &d);
	cr_assert_eq(d.errors, 5);
	cr_assert(d.retry);
	cr_assert_eq(d.blocked, 0);
	cr_assert(d.others >= 2, "%zu", d.others);
	cr_assert_eq(d.entries.n, 1);
	cr_assert_str_eq(d.entries.v[0], "thrust::unary_function");
	compat_decision_release(&d);
}

static char *rewrite1(const char *text, unsigned long line, const char *field, size_t *n)
{
	struct compat_site s = { (char *)"x.cu", line, (char *)field, 0 };
	return compat_rewrite(text, "x.cu", &s, 1, n);
}

Test(compat, rewrites_the_reads_on_the_line)
{
	size_t n;
	char *out = rewrite1("int a;\nf(prop.clockRate, p->clockRate, v[i].clockRate, o.p->clockRate);\nprop.clockRate;\n",
			     2, "clockRate", &n);
	/* C++: the read on line 3 too (a template's reads are reported only once instantiated) */
	cr_assert_str_eq(out, "#line 1 \"x.cu\"\nint a;\nf(nvshim_compat_clockRate(&(prop)), nvshim_compat_clockRate(p), "
			      "nvshim_compat_clockRate(&(v[i])), nvshim_compat_clockRate(o.p));\n"
			      "nvshim_compat_clockRate(&(prop));\n");
	cr_assert_eq(n, 5);
	free(out);
	/* C: the reported line only */
	struct compat_site c = { (char *)"x.c", 2, (char *)"clockRate", 0 };
	out = compat_rewrite("int a;\nf(prop.clockRate);\nprop.clockRate;\n", "x.c", &c, 1, &n);
	cr_assert_str_eq(out, "#line 1 \"x.c\"\nint a;\nf(nvshim_compat_clockRate(&(prop)));\nprop.clockRate;\n");
	cr_assert_eq(n, 1);
	free(out);
	/* unqualified, reported alone (a class derived from cudaDeviceProp): this; a qualified or
	 * scoped name on the line is left */
	struct compat_site b = { (char *)"x.cu", 1, (char *)"computeMode", 1 };
	out = compat_rewrite("int m() const { return computeMode + cudaDeviceProp::computeMode + o.computeMode; }\n", "x.cu",
			     &b, 1, &n);
	cr_assert_str_eq(out, "#line 1 \"x.cu\"\nint m() const { return nvshim_compat_computeMode(this) + "
			      "cudaDeviceProp::computeMode + nvshim_compat_computeMode(&(o)); }\n");
	cr_assert_eq(n, 2);
	free(out);
	/* the field's name in a string, a character literal's neighbour or a // comment is text */
	out = rewrite1("printf(\"prop.clockRate=%d '\\\"\", prop.clockRate); // p.clockRate\n", 1, "clockRate", &n);
	cr_assert_str_eq(out, "#line 1 \"x.cu\"\nprintf(\"prop.clockRate=%d '\\\"\", nvshim_compat_clockRate(&(prop))); // p.clockRate\n");
	cr_assert_eq(n, 1);
	free(out);
	/* calls, parenthesised groups, ::, keywords before them */
	out = rewrite1("return get(i).clockRate + (*pp).clockRate + ns::g.clockRate + my_clockRate + clockRate;", 1,
		       "clockRate", &n);
	cr_assert_str_eq(out, "#line 1 \"x.cu\"\nreturn nvshim_compat_clockRate(&(get(i))) + nvshim_compat_clockRate(&((*pp))) + "
			      "nvshim_compat_clockRate(&(ns::g)) + my_clockRate + clockRate;");
	cr_assert_eq(n, 3);
	free(out);
	out = rewrite1("if (sizeof(p).clockRate) x = 1.f;\n", 1, "clockRate", &n);
	cr_assert_null(strstr(out, "sizeof(nvshim"), "%s", out);
	free(out);
	/* a site whose line holds no read: nothing (no retry) */
	cr_assert_null(rewrite1("int clockRate;\n", 1, "clockRate", &n));
	cr_assert_null(rewrite1("a.clockRate;\n", 5, "clockRate", &n));
	/* the name is quoted as a C string */
	struct compat_site s = { (char *)"a\"b.cu", 1, (char *)"f", 0 };
	out = compat_rewrite("x.f\n", "a\"b\\.cu", &s, 1, &n);
	cr_assert_str_eq(out, "#line 1 \"a\\\"b\\\\.cu\"\nnvshim_compat_f(&(x))\n");
	free(out);
	/* two errors on one line: rewritten once */
	struct compat_site two[2] = { { (char *)"x.cu", 1, (char *)"f", 0 }, { (char *)"x.cu", 1, (char *)"f", 0 } };
	out = compat_rewrite("a.f + b.f;\n", "x.cu", two, 2, &n);
	cr_assert_str_eq(out, "#line 1 \"x.cu\"\nnvshim_compat_f(&(a)) + nvshim_compat_f(&(b));\n");
	cr_assert_eq(n, 2);
	free(out);
}

Test(compat, finds_its_headers)
{
	char *d = compat_include_dir(NULL);
	cr_assert_not_null(d);
	cr_assert_str_eq(d, NVSHIM_SOURCE_DIR "/include");
	free(d);
	d = compat_include_dir("/nonexistent/bin");
	cr_assert_str_eq(d, NVSHIM_SOURCE_DIR "/include");
	free(d);
}
