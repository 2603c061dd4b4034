#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diagnose/api.h"
#include "helpers.h"

#define FIXTURES NVSHIM_SOURCE_DIR "/tests/e2e/fixtures/api"
#define DATA NVSHIM_SOURCE_DIR "/tests/unit/data/"

static struct api_table table;

static int starts(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

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
	/* The errors name files relative to where the compiler ran. */
	cr_assert_eq(chdir(FIXTURES), 0);
}

static void free_table(void) { api_table_release(&table); }

TestSuite(api, .init = load_table, .fini = free_table);

Test(api, the_shipped_table)
{
	cr_assert_geq(table.n, 70);
	const struct api_entry *e = api_find(&table, "cudaDeviceProp::clockRate");
	cr_assert_not_null(e);
	cr_assert_str_eq(e->version, "13.0");
	cr_assert_not(e->changed);
	cr_assert_not_null(strstr(e->use, "cudaDevAttrClockRate"));
	e = api_find(&table, "cuCtxCreate_v4");
	cr_assert_not_null(e);
	cr_assert_str_eq(e->name, "cuCtxCreate");
	cr_assert(e->changed);
	cr_assert_not_null(e->what);
	e = api_find(&table, "texture");
	cr_assert_not_null(e);
	cr_assert_str_eq(e->version, "12.0");
	/* An example written over several lines reads as one, joined with single spaces. */
	e = api_find(&table, "cudaBindTexture2D");
	cr_assert_not_null(e);
	cr_assert_not_null(strstr(e->example, "r.res.pitch2D.devPtr = p; r.res.pitch2D.desc ="), "%s", e->example);
	cr_assert_not_null(strstr(e->example, "cudaTextureDesc t = {}; cudaCreateTextureObject(&tex, &r, &t, NULL);"));
	cr_assert_null(api_find(&table, "cudaMalloc"));
	cr_assert_null(api_find(&table, ""));
	cr_assert_null(api_find(&table, NULL));
	/* Every entry has its facts, and names are unique. */
	for (size_t i = 0; i < table.n; i++) {
		cr_assert_not_null(table.v[i].example, "%s has no example", table.v[i].name);
		cr_assert(!table.v[i].changed || table.v[i].what, "%s: changed, but not what", table.v[i].name);
		for (size_t k = i + 1; k < table.n; k++)
			cr_assert_str_neq(table.v[i].name, table.v[k].name);
	}
}

Test(api, table_problems_are_reported)
{
	struct api_table t;
	struct argv problems = ARGV_INIT;
	api_table_init(&t);
	size_t n = api_parse(&t,
			     "stray = 1\n[api a]\nversion = 13.0\nchange = gone\nuse = b()\nnot a line\n"
			     "[api c]\nuse = d()\n[other]\n[api two words]\n[api e]\nversion = 12.0\n"
			     "use = f()\nalso = e_v2, e_v3\n",
			     "t.ini", &problems);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(t.v[0].name, "a");
	cr_assert_str_eq(t.v[1].name, "e");
	cr_assert_eq(t.v[1].also.n, 2);
	cr_assert_eq(api_find(&t, "e_v3"), &t.v[1]);
	cr_assert_eq(problems.n, 6);
	cr_assert_str_eq(problems.v[0], "t.ini:1: 'stray' outside an [api NAME] section");
	cr_assert_str_eq(problems.v[1], "t.ini:4: api a: unknown key 'change = gone'");
	cr_assert_str_eq(problems.v[2], "t.ini:6: expected 'name = value', found 'not a line'");
	cr_assert_str_eq(problems.v[3], "t.ini:7: api c: no version; entry left out");
	cr_assert_str_eq(problems.v[4], "t.ini:9: unknown section [other]");
	cr_assert_str_eq(problems.v[5], "t.ini:10: unknown section [api two words]");
	api_table_release(&t);
	argv_release(&problems);
}

Test(api, compat_keys)
{
	struct api_table t;
	struct argv problems = ARGV_INIT;
	api_table_init(&t);
	size_t n = api_parse(&t,
			     "[api a]\nversion = 13.0\nuse = b()\ncompat = runtime.h\n"
			     "[api s::f]\nversion = 13.0\nuse = g()\ncompat = rewrite sub/fields.h\n"
			     "[api c]\nversion = 13.0\nuse = d()\nnocompat = the feature is gone\n"
			     "[api e]\nversion = 13.0\nuse = f()\ncompat = ../etc/passwd.h\n"
			     "[api h]\nversion = 13.0\nuse = i()\ncompat = x.h\nnocompat = no\n"
			     "[api j]\nversion = 13.0\nuse = k()\ncompat = rewrite\n",
			     "t.ini", &problems);
	cr_assert_eq(n, 6);
	cr_assert_str_eq(t.v[0].compat, "runtime.h");
	cr_assert_not(t.v[0].compat_rewrite);
	cr_assert_null(t.v[0].nocompat);
	cr_assert_str_eq(t.v[1].compat, "sub/fields.h");
	cr_assert(t.v[1].compat_rewrite);
	cr_assert_null(t.v[2].compat);
	cr_assert_str_eq(t.v[2].nocompat, "the feature is gone");
	cr_assert_null(t.v[3].compat);
	cr_assert_null(t.v[4].compat);
	cr_assert_str_eq(t.v[4].nocompat, "no");
	cr_assert_null(t.v[5].compat);
	cr_assert_eq(problems.n, 3);
	cr_assert_str_eq(problems.v[0], "t.ini:16: api e: compat '../etc/passwd.h' is not a header name FILE.h");
	cr_assert_str_eq(problems.v[1], "t.ini:17: api h: both compat and nocompat; compat left out");
	cr_assert_str_eq(problems.v[2], "t.ini:25: api j: compat 'rewrite' is not a header name FILE.h");
	cr_assert(api_compat_header_ok("runtime.h"));
	cr_assert(api_compat_header_ok("cccl/thrust-3.0.h"));
	cr_assert_not(api_compat_header_ok("/abs.h"));
	cr_assert_not(api_compat_header_ok(".hidden.h"));
	cr_assert_not(api_compat_header_ok("a b.h"));
	cr_assert_not(api_compat_header_ok("runtime.hpp"));
	api_table_release(&t);
	argv_release(&problems);
}

Test(api, gcc_c_messages)
{
	struct api_errors e = { NULL, 0 };
	api_read_errors("old.c:11:77: error: incompatible type for argument 4 of \u2018cudaMemAdvise\u2019\n"
			"old.c:17:9: error: implicit declaration of function \u2018cudaThreadSynchronize\u2019; did you "
			"mean \u2018cudaStreamSynchronize\u2019? [-Wimplicit-function-declaration]\n",
			&table, &e);
	cr_assert_eq(e.n, 2);
	cr_assert_str_eq(e.v[0].name, "cudaMemAdvise");
	cr_assert_str_eq(e.v[1].name, "cudaThreadSynchronize");
	api_errors_release(&e);
}

Test(api, callee_at_the_caret)
{
	char *s;
	const char *line = "   cudaMemPrefetchAsync(p, 1024, 0, 0);";
	cr_assert_str_eq(s = api_callee_at(line, 33), "cudaMemPrefetchAsync");
	free(s);
	/* A caret on the call's own ')' (too few arguments). */
	cr_assert_str_eq(s = api_callee_at("   cuCtxCreate_v4(&ctx, 0, 0);", 28), "cuCtxCreate_v4");
	free(s);
	/* Nested calls: the innermost open one. */
	cr_assert_str_eq(s = api_callee_at("check(cudaMemAdvise(p, n, f(a, b), 0));", 35), "cudaMemAdvise");
	free(s);
	cr_assert_str_eq(s = api_callee_at("check(cudaMemAdvise(p, n, f(a, b), 0));", 29), "f");
	free(s);
	/* Template arguments and a space before the parenthesis. */
	cr_assert_str_eq(s = api_callee_at("x = cast<int> (a, b);", 18), "cast");
	free(s);
	cr_assert_null(api_callee_at("a = b + c;", 4));
	cr_assert_null(api_callee_at("", 0));
	cr_assert_null(api_callee_at("(a, b)", 3));
	/* A column past the end: the last open call. */
	cr_assert_str_eq(s = api_callee_at("f(a, g(b", 100), "g");
	free(s);
}

/* The notes for a captured compiler output, one line each. */
static char *notes_for(const char *data, const char *version)
{
	char *text = test_read(data);
	cr_assert_not_null(text, "%s", data);
	struct argv notes = ARGV_INIT;
	api_notes(&table, text, version, &notes);
	char *all = xstrdup("");
	for (size_t i = 0; i < notes.n; i++) {
		char *next = concat(all, notes.v[i], "\n", NULL);
		free(all);
		all = next;
	}
	argv_release(&notes);
	free(text);
	return all;
}

/* The "FILE:LINE: NAME" heads of the notes. */
static char *heads(const char *notes)
{
	char *out = xstrdup("");
	for (const char *p = notes; *p;) {
		const char *nl = strchr(p, '\n');
		const char *sp = strstr(p, " was removed");
		const char *ch = strstr(p, " changed in");
		const char *e = sp && sp < nl ? sp : ch && ch < nl ? ch : nl;
		char *next = xasprintf("%s%.*s\n", out, (int)(e - p), p);
		free(out);
		out = next;
		p = nl + 1;
	}
	return out;
}

Test(api, nvcc_runtime_errors)
{
	char *n = notes_for(DATA "api-nvcc-13.0-runtime.txt", "13.0.88");
	char *h = heads(n);
	cr_assert_str_eq(h, "old_runtime.cu:6: texture\n"
			    "old_runtime.cu:20: cudaDeviceProp::clockRate\n"
			    "old_runtime.cu:20: cudaDeviceProp::computeMode\n"
			    "old_runtime.cu:24: cudaMemAdvise\n"
			    "old_runtime.cu:25: cudaMemPrefetchAsync\n"
			    "old_runtime.cu:35: cudaStreamGetCaptureInfo\n"
			    "old_runtime.cu:42: cudaGraphAddNode\n"
			    "old_runtime.cu:43: cudaGraphAddDependencies\n"
			    "old_runtime.cu:44: cudaThreadSynchronize\n");
	cr_assert_not_null(strstr(n, "old_runtime.cu:20: cudaDeviceProp::clockRate was removed in CUDA 13.0: use "
				     "cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, device) [api.removed]\n"));
	cr_assert_not_null(strstr(n, "old_runtime.cu:43: cudaGraphAddDependencies changed in CUDA 13.0: edge data "
				     "(const cudaGraphEdgeData *) comes before the count; use "
				     "cudaGraphAddDependencies(graph, from, to, NULL, count) [api.changed]\n"));
	free(h);
	free(n);
}

/* Calls written over several lines: nvcc reports the line of the argument (and echoes
 * cudaCpuDeviceId's expansion); the call still open there is read from the file's lines before. */
Test(api, calls_over_several_lines)
{
	char *n = notes_for(DATA "api-nvcc-13.0-multiline.txt", "13.0.88");
	char *h = heads(n);
	cr_assert_str_eq(h, "../compat/multiline.cu:20: cudaMemAdvise\n"
			    "../compat/multiline.cu:23: cudaMemPrefetchAsync\n"
			    "../compat/multiline.cu:28: cudaMemPrefetchAsync\n");
	free(h);
	free(n);
}

/* gcc on C sources: "incompatible type for argument 4 of 'cudaMemAdvise'" (also where
 * cudaCpuDeviceId's expansion is, in driver_types.h), "'X' undeclared (first use in this
 * function)". */
Test(api, gcc_c_messages_as_captured)
{
	char *n = notes_for(DATA "api-gcc-c.txt", "13.0.88");
	char *h = heads(n);
	cr_assert_str_eq(h, "../compat/advise_c.c:14: cudaMemAdvise\n"
			    "/usr/local/cuda/include/driver_types.h:165: cudaMemAdvise\n"
			    "../compat/advise_c.c:16: cudaMemPrefetchAsync\n"
			    "../compat/fft_c.c:9: CUFFT_INCOMPLETE_PARAMETER_LIST\n"
			    "../compat/fft_c.c:10: CUFFT_LICENSE_ERROR\n", "%s", h);
	free(h);
	free(n);
}

/* nvcc, gcc (plain and UTF-8 quotes) and clang on the driver fixture: the same notes. */
Test(api, driver_errors_of_every_compiler)
{
	static const char *const data[] = { DATA "api-nvcc-13.0-driver.txt", DATA "api-gcc-driver.txt",
					     DATA "api-gcc-utf8-driver.txt", DATA "api-clang-driver.txt" };
	const char *want = "old_driver.cpp:13: cuCtxCreate\n"
			   "old_driver.cpp:17: cuMemAdvise\n"
			   "old_driver.cpp:18: cuMemPrefetchAsync\n"
			   "old_driver.cpp:24: cuGraphAddDependencies\n"
			   "old_driver.cpp:27: cudaDeviceProp::memoryClockRate\n";
	for (size_t i = 0; i < 4; i++) {
		char *n = notes_for(data[i], "13.0.88");
		char *h = heads(n);
		cr_assert_str_eq(h, want, "%s:\n%s", data[i], n);
		free(h);
		free(n);
	}
}

Test(api, only_what_the_toolkit_in_use_changed)
{
	/* On 12.x the 13.0 entries do not apply (the code fails for another reason); 12.0's do. */
	char *n = notes_for(DATA "api-nvcc-13.0-runtime.txt", "12.9.86");
	char *h = heads(n);
	cr_assert_str_eq(h, "old_runtime.cu:6: texture\n");
	free(h);
	free(n);
	n = notes_for(DATA "api-nvcc-13.0-runtime.txt", "11.8");
	cr_assert_str_eq(n, "");
	free(n);
	/* 13.5 and an unknown toolkit: every entry. */
	char *a = notes_for(DATA "api-nvcc-13.0-runtime.txt", "13.5.37");
	char *b = notes_for(DATA "api-nvcc-13.0-runtime.txt", NULL);
	cr_assert_str_eq(a, b);
	free(a);
	free(b);
}

Test(api, unrelated_errors_get_nothing)
{
	struct argv notes = ARGV_INIT;
	const char *text = "k.cu(3): error: identifier \"undefined_thing\" is undefined\n"
			   "   undefined_thing(1);\n   ^\n\n"
			   "k.cu(4): error: too few arguments in function call\n"
			   "   my_function(1);\n                 ^\n\n"
			   "k.cpp:5:3: error: 'struct foo' has no member named 'clockRate'\n"
			   "nvcc fatal   : Unsupported gpu architecture 'compute_50'\n"
			   "old.cu(9): warning: class \"cudaDeviceProp\" has no member \"clockRate\"\n";
	cr_assert_eq(api_notes(&table, text, "13.0", &notes), 0);
	argv_release(&notes);
}

Test(api, one_note_per_api_and_line)
{
	/* nvcc's three errors of one cudaGraphAddNode call. */
	const char *text =
		"old2.cu(23): error: argument of type \"size_t\" (aka \"unsigned long\") is incompatible with "
		"parameter of type \"const cudaGraphEdgeData *\"\n   cudaGraphAddNode(&node, g, deps, n, &p);\n"
		"                                    ^\n\n"
		"old2.cu(23): error: argument of type \"cudaGraphNodeParams *\" is incompatible with parameter of "
		"type \"size_t\" (aka \"unsigned long\")\n   cudaGraphAddNode(&node, g, deps, n, &p);\n"
		"                                       ^\n\n"
		"old2.cu(23): error: too few arguments in function call\n"
		"   cudaGraphAddNode(&node, g, deps, n, &p);\n                                         ^\n";
	struct argv notes = ARGV_INIT;
	cr_assert_eq(api_notes(&table, text, "13.0", &notes), 1);
	cr_assert(starts(notes.v[0], "old2.cu:23: cudaGraphAddNode changed in CUDA 13.0"), "%s", notes.v[0]);
	argv_release(&notes);
}

Test(api, other_message_shapes)
{
	struct api_errors e = { NULL, 0 };
	const char *text =
		"a.cu(1): error: texture is not a template\n"
		"a.cu(2): error #20: identifier \"cudaBindTexture\" is undefined\n"
		"a.cu(3): error: namespace \"cooperative_groups\" has no member \"this_multi_grid\"\n"
		"a.cpp:4:5: error: 'this_multi_grid' is not a member of 'cooperative_groups'\n"
		"a.cpp:5:1: error: 'texture' does not name a type\n"
		"a.cpp:6:2: error: use of undeclared identifier 'cudaThreadExit'\n"
		"a.cpp:7:2: error: no member named 'this_multi_grid' in namespace 'cooperative_groups'\n"
		"a.cpp:8:3: error: too many arguments to function 'cudaError_t cudaGraphInstantiate(CUgraphExec_st**, cudaGraph_t, long long unsigned int)'\n"
		"a.cpp:9: error: 'cudaProfilerInitialize' was not declared in this scope\n"
		"a.cpp:10:1: fatal error: unknown type name 'textureReference'\n"
		"x(1): error: no suitable constructor exists to convert from \"int\" to \"cudaMemLocation\"\n";
	api_read_errors(text, NULL, &e);
	cr_assert_eq(e.n, 11);
	static const char *const want[] = { "texture", "cudaBindTexture", "cooperative_groups::this_multi_grid",
					    "cooperative_groups::this_multi_grid", "texture", "cudaThreadExit",
					    "cooperative_groups::this_multi_grid", "cudaGraphInstantiate",
					    "cudaProfilerInitialize", "textureReference", NULL };
	for (size_t i = 0; i < 11; i++) {
		if (want[i])
			cr_assert_str_eq(e.v[i].name, want[i], "error %zu", i);
		else
			cr_assert_null(e.v[i].name);
	}
	cr_assert_str_eq(e.v[3].file, "a.cpp");
	cr_assert_eq(e.v[3].line, 4);
	cr_assert_eq(e.v[8].line, 9);
	/* A call error with no caret line and a file that cannot be read: no name, but a call. */
	cr_assert(e.v[10].by_call);
	api_errors_release(&e);
}

/* nvcc 13.0's, gcc's and clang's messages for what CCCL 3.0 removed, as they print them. */
Test(api, cccl_messages)
{
	struct api_errors e = { NULL, 0 };
	const char *text =
		"unary.cu(2): error: namespace \"thrust\" has no member class \"unary_function\"\n"
		"core.cu(3): error: namespace \"thrust::THRUST_300001_SM_750_NS::cuda_cub::core\" has no member \"uninitialized_array\"\n"
		"cubsum.cu(2): error: namespace \"cub\" has no member \"Sum\"\n"
		"cubmacro.cu(2): error: identifier \"CUB_MAX\" is undefined\n"
		"../migrate/old_thrust.cu:11:46: error: expected template-name before \xe2\x80\x98<\xe2\x80\x99 token\n"
		"c.cpp:2:8: error: no template named 'unary_function' in namespace 'thrust'\n"
		"o.cu:1:10: fatal error: thrust/optional.h: No such file or directory\n"
		"o.cpp:1:10: fatal error: 'thrust/optional.h' file not found\n"
		"x.cu(1): error: namespace \"cub::CUB_300001_SM_750_860_NS\" has no member \"Max\"\n";
	api_read_errors(text, NULL, &e);
	cr_assert_eq(e.n, 9);
	static const char *const want[] = { "thrust::unary_function", "thrust::cuda_cub::core::uninitialized_array",
					    "cub::Sum", "CUB_MAX", "thrust::unary_function", "thrust::unary_function",
					    "thrust/optional.h", "thrust/optional.h", "cub::Max" };
	for (size_t i = 0; i < 9; i++)
		cr_assert_str_eq(e.v[i].name ? e.v[i].name : "(null)", want[i], "error %zu", i);
	api_errors_release(&e);
	/* What follows on the same line is about the same name; on another line it is not. */
	const char *cascade = "u.cu(2): error: namespace \"thrust\" has no member class \"unary_function\"\n"
			      "u.cu(2): error: class or struct definition is missing\n"
			      "u.cu(3): error: class or struct definition is missing\n"
			      "u.cu(4): error: namespace \"cub\" has no member \"Sum\"\n"
			      "u.cu(4): error: type name is not allowed\n";
	api_read_errors(cascade, NULL, &e);
	cr_assert_eq(e.n, 5);
	cr_assert_str_eq(e.v[1].name, "thrust::unary_function");
	cr_assert_null(e.v[2].name);
	cr_assert_str_eq(e.v[4].name, "cub::Sum");
	api_errors_release(&e);
	/* Each is an entry, with its note. */
	struct argv notes = ARGV_INIT;
	cr_assert_eq(api_notes(&table, text, "13.0.88", &notes), 9);
	cr_assert(starts(notes.v[0], "unary.cu:2: thrust::unary_function was removed in CUDA 13.0: use no base class"), "%s", notes.v[0]);
	cr_assert(starts(notes.v[6], "o.cu:1: thrust::optional was removed in CUDA 13.0: use cuda::std::optional<T>"), "%s", notes.v[6]);
	argv_release(&notes);
	/* Not on CUDA 12.9. */
	cr_assert_eq(api_notes(&table, text, "12.9.41", &notes), 0);
	argv_release(&notes);
}

/* The entries added for CCCL 3.0, cuFFT, cuBLASLt and the texture functions each say what the
 * compatibility layer does (compat or nocompat), and a compat header exists. */
Test(api, new_entries_have_compat_or_nocompat)
{
	static const char *const prefixes[] = { "thrust::", "cub::", "CUB_", "CUFFT_", "CUBLASLT_", "tex1Dfetch", "surf2Dwrite" };
	size_t seen = 0;
	for (size_t i = 0; i < table.n; i++) {
		const struct api_entry *e = &table.v[i];
		int mine = 0;
		for (size_t k = 0; k < sizeof(prefixes) / sizeof(prefixes[0]); k++)
			mine |= starts(e->name, prefixes[k]);
		if (!mine)
			continue;
		seen++;
		cr_assert(e->compat || e->nocompat, "%s: neither compat nor nocompat", e->name);
		if (e->compat) {
			char *h = xasprintf(NVSHIM_SOURCE_DIR "/include/nvshim/compat/%s", e->compat);
			cr_assert_eq(access(h, R_OK), 0, "%s: no %s", e->name, h);
			free(h);
		}
	}
	cr_assert_eq(seen, 38);
}

Test(api, describe)
{
	char *d = api_describe(api_find(&table, "cudaMemPrefetchAsync"));
	cr_assert(starts(d, "cudaMemPrefetchAsync: changed in CUDA 13.0\n  what:    "), "%s", d);
	cr_assert_not_null(strstr(d, "\n  use:     cudaMemPrefetchAsync(ptr, size, location, 0, stream)"));
	cr_assert_not_null(strstr(d, "\n  example: cudaMemLocation loc"));
	cr_assert_not_null(strstr(d, "\n  also:    cudaMemPrefetchAsync_v2\n"));
	free(d);
}

Test(api, host_sources_that_include_the_cuda_headers)
{
	char *args[] = { "-c", "old_driver.cpp", "-o", "x.o" };
	struct hostcc hc;
	hostcc_parse(&hc, args, 4);
	cr_assert(api_host_wanted(&hc));
	hostcc_release(&hc);
	char *plain[] = { "-c", NVSHIM_SOURCE_DIR "/tests/e2e/fixtures/host.cpp" };
	hostcc_parse(&hc, plain, 2);
	cr_assert_not(api_host_wanted(&hc));
	hostcc_release(&hc);
	char *info[] = { "--version" };
	hostcc_parse(&hc, info, 1);
	cr_assert_not(api_host_wanted(&hc));
	hostcc_release(&hc);
}

static int wanted(char **args, size_t n)
{
	struct hostcc hc;
	hostcc_parse(&hc, args, n);
	int w = api_host_wanted(&hc);
	hostcc_release(&hc);
	return w;
}

/* cuda.h through a project header (pycuda: cuda.cpp includes "cuda.hpp"), the library headers
 * alone (bart: fft-cuda.c includes <cufft.h>), two levels deep and no deeper. */
Test(api, host_sources_that_include_the_cuda_headers_indirectly)
{
	char *d = test_tmpdir();
	char *sub = concat(d, "/src", NULL), *inc = concat(d, "/inc", NULL), *q = concat(d, "/q", NULL);
	cr_assert_eq(mkdir(sub, 0700) | mkdir(inc, 0700) | mkdir(q, 0700), 0);
	free(test_write(inc, "wrap.hpp", "#pragma once\n#include <vector>\n#include <cuda.h>\n"));
	free(test_write(sub, "local.hpp", "#include \"wrap.hpp\"\n"));
	free(test_write(sub, "deep.hpp", "#include \"local.hpp\"\n"));
	free(test_write(q, "lib.h", "#include <cufft.h>\n"));
	char *one = test_write(sub, "one.cpp", "#include <cstdio>\n#include \"wrap.hpp\"\nint main() {}\n");
	char *two = test_write(sub, "two.cpp", "#include \"local.hpp\"\n");
	char *three = test_write(sub, "three.cpp", "#include \"deep.hpp\"\n");
	char *fft = test_write(sub, "fft.c", "#include <stdio.h>\n#include <cufft.h>\n");
	char *thr = test_write(sub, "thr.cpp", "#  include <thrust/device_vector.h>\n");
	char *viaq = test_write(sub, "viaq.c", "#include \"lib.h\"\n");
	char *none = test_write(sub, "none.cpp", "#include \"nothere.h\"\n#include <cufftw.h>\n#include <thrust.h>\n");
	char *I = concat("-I", inc, NULL);
	char *a1[] = { "-c", one, I }, *a1n[] = { "-c", one };
	cr_assert(wanted(a1, 3), "cuda.h through an -I directory's header");
	cr_assert_not(wanted(a1n, 2), "the header is not found without -I");
	char *a1s[] = { "-I", inc, "-c", one };
	cr_assert(wanted(a1s, 4), "-I DIR as two arguments");
	char *a2[] = { "-c", two, I };
	cr_assert(wanted(a2, 3), "two levels: a header beside the source, then one in -I");
	char *a3[] = { "-c", three, I };
	cr_assert_not(wanted(a3, 3), "three levels are not followed");
	char *a4[] = { "-c", fft };
	cr_assert(wanted(a4, 2), "cufft.h alone");
	char *a5[] = { "-c", thr };
	cr_assert(wanted(a5, 2), "a thrust/ header");
	char *a6[] = { "-iquote", q, "-c", viaq }, *a6n[] = { "-c", viaq };
	cr_assert(wanted(a6, 4), "an -iquote directory");
	cr_assert_not(wanted(a6n, 2));
	char *a7[] = { "-c", none, I };
	cr_assert_not(wanted(a7, 3), "no CUDA header: a missing one, cufftw.h, thrust.h");
	free(I);
	free(one);
	free(two);
	free(three);
	free(fft);
	free(thr);
	free(viaq);
	free(none);
	free(sub);
	free(inc);
	free(q);
	test_rmtree(d);
	free(d);
}
