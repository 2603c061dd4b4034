#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "diagnose/api.h"
#include "upgrade/compat.h"
#include "upgrade/compat_dryrun.h"
#include "upgrade/layout.h"
#include "helpers.h"

static struct api_table table;

static void load_table(void)
{
	char *text = test_read(NVSHIM_SOURCE_DIR "/config/api.ini");
	cr_assert_not_null(text);
	struct argv problems = ARGV_INIT;
	api_table_init(&table);
	api_parse(&table, text, "api.ini", &problems);
	argv_release(&problems);
	free(text);
}

static void free_table(void) { api_table_release(&table); }

TestSuite(compat_dryrun, .init = load_table, .fini = free_table);

static int has(const struct argv *a, const char *s)
{
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->v[i], s))
			return 1;
	return 0;
}

Test(compat_dryrun, the_gate_names_what_the_layer_restores)
{
	struct argv names = ARGV_INIT;
	compat_dryrun_names(&table, "13.0.88", &names);
	/* fields, functions, CCCL bases and the also spellings; not what has nocompat */
	cr_assert(has(&names, "clockRate"));
	cr_assert(has(&names, "cudaMemAdvise"));
	cr_assert(has(&names, "unary_function"));
	cr_assert(has(&names, "cuCtxCreate"));
	cr_assert(!has(&names, "cudaLaunchCooperativeKernelMultiDevice"));
	for (size_t i = 1; i < names.n; i++)
		cr_assert(strcmp(names.v[i - 1], names.v[i]) < 0, "sorted, once: %s %s", names.v[i - 1], names.v[i]);
	/* a toolkit older than the removals: nothing applies */
	struct argv none = ARGV_INIT;
	compat_dryrun_names(&table, "11.8", &none);
	cr_assert_eq(none.n, 0);
	argv_release(&none);

	cr_assert(compat_dryrun_gate("int k = prop.clockRate;", &names));
	cr_assert(compat_dryrun_gate("struct f : thrust::unary_function<int, int> {};", &names));
	cr_assert(!compat_dryrun_gate("int k = prop.clockRateX + myclockRate + clockRate_2;", &names));
	cr_assert(!compat_dryrun_gate("__global__ void k(float *x) { x[0] = 1; }", &names));
	cr_assert(!compat_dryrun_gate("", &names));
	struct argv empty = ARGV_INIT;
	cr_assert(!compat_dryrun_gate("clockRate", &empty));
	argv_release(&names);
}

static int front(const char *const *args, size_t n, struct argv *out, size_t *source)
{
	struct invocation inv;
	invocation_parse(&inv, (char *const *)args, n, NULL);
	int rc = compat_dryrun_front_args(&inv, out, source);
	invocation_release(&inv);
	return rc;
}

Test(compat_dryrun, the_front_end_line)
{
	/* sccache's -E: its -c, -x cu, the source, -E, -Xcompiler=-P */
	const char *pre[] = { "-DX=1", "-Iinc", "-c", "-x", "cu", "k.cu", "-E", "-Xcompiler=-P" };
	struct argv out = ARGV_INIT;
	size_t src = 99;
	cr_assert_eq(front(pre, 8, &out, &src), 0);
	char *s = argv_join(&out, " ");
	cr_assert_str_eq(s, "-DX=1 -Iinc k.cu -c");
	cr_assert_eq(src, 2);
	free(s);
	argv_release(&out);
	/* sccache's --dryrun: -o, targets, --keep-dir, -dc: the same front end */
	const char *dry[] = { "-x", "cu", "-o", "k.o", "-DX=1", "-Iinc", "-dc", "-gencode", "arch=compute_90,code=sm_90",
			      "/abs/k.cu", "--dryrun", "--keep", "--keep-dir", "/tmp/x", "-MD" };
	cr_assert_eq(front(dry, 15, &out, &src), 0);
	s = argv_join(&out, " ");
	cr_assert_str_eq(s, "-DX=1 -Iinc /abs/k.cu -dc");
	cr_assert_eq(src, 2);
	free(s);
	argv_release(&out);
	/* a -x the name does not imply goes first */
	const char *cpp[] = { "-DX", "-c", "k.cpp", "-x", "cu", "--dryrun" };
	cr_assert_eq(front(cpp, 6, &out, &src), 0);
	s = argv_join(&out, " ");
	cr_assert_str_eq(s, "-x cu -DX k.cpp -c");
	free(s);
	argv_release(&out);
	/* a host flag that is not -P stays */
	const char *host[] = { "-Xcompiler", "-fPIC", "-c", "k.cu", "--dryrun" };
	cr_assert_eq(front(host, 5, &out, &src), 0);
	s = argv_join(&out, " ");
	cr_assert_str_eq(s, "-Xcompiler -fPIC k.cu -c");
	free(s);
	argv_release(&out);
	/* not one compile of one source */
	const char *two[] = { "-c", "a.cu", "b.cu", "--dryrun" };
	cr_assert_eq(front(two, 4, &out, &src), -1);
	argv_release(&out);
	const char *obj[] = { "a.o", "-o", "app", "--dryrun" };
	cr_assert_eq(front(obj, 4, &out, &src), -1);
	argv_release(&out);
	const char *deps[] = { "-M", "a.cu" };
	cr_assert_eq(front(deps, 2, &out, &src), -1);
	argv_release(&out);
}

Test(compat_dryrun, a_verdict_reads_back)
{
	struct compat_decision d, back;
	compat_decision_init(&d);
	d.retry = 1;
	argv_push(&d.headers, "runtime.h");
	argv_push(&d.entries, "cudaDeviceProp::clockRate");
	d.sites = XNEWVEC(struct compat_site, 2);
	d.sites[0] = (struct compat_site){ xstrdup("k.cu"), 20, xstrdup("clockRate"), 0 };
	d.sites[1] = (struct compat_site){ xstrdup("k.cu"), 22, xstrdup("memoryClockRate"), 0 };
	d.nsites = 2;
	char *text = compat_dryrun_verdict_format("abc", &d, NULL);
	char *why = NULL;
	cr_assert_eq(compat_dryrun_verdict_parse(text, "abc", &back, &why), 0, "%s", text);
	cr_assert(back.retry);
	cr_assert_null(why);
	cr_assert_eq(back.headers.n, 1);
	cr_assert_str_eq(back.headers.v[0], "runtime.h");
	cr_assert_str_eq(back.entries.v[0], "cudaDeviceProp::clockRate");
	cr_assert_eq(back.nsites, 2);
	cr_assert_eq(back.sites[1].line, 22);
	cr_assert_str_eq(back.sites[1].field, "memoryClockRate");
	cr_assert_str_eq(back.sites[1].file, "");
	compat_decision_release(&back);
	/* another key, a cut file, a line too many: not a verdict */
	cr_assert_eq(compat_dryrun_verdict_parse(text, "abd", &back, &why), -1);
	text[strlen(text) - 4] = '\0';
	cr_assert_eq(compat_dryrun_verdict_parse(text, "abc", &back, &why), -1);
	free(text);
	compat_decision_release(&d);

	/* plain, with why (a newline in it kept on one line) */
	compat_decision_init(&d);
	text = compat_dryrun_verdict_format("k", &d, "its front end\npasses");
	cr_assert_eq(compat_dryrun_verdict_parse(text, "k", &back, &why), 0, "%s", text);
	cr_assert(!back.retry);
	cr_assert_str_eq(why, "its front end passes");
	free(why);
	free(text);
	compat_decision_release(&back);
	/* bad lines */
	static const char *const bad[] = {
		"nvshim-compat-verdict 2\nkey k\nlayer\nend\n",                          /* no header */
		"nvshim-compat-verdict 2\nkey k\nlayer\nheader ../x.h\nend\n",            /* a bad header */
		"nvshim-compat-verdict 2\nkey k\nlayer\nheader runtime.h\nsite 0 f\nend\n", /* line 0 */
		"nvshim-compat-verdict 2\nkey k\nlayer\nheader runtime.h\nsite 3 a-b\nend\n",
		"nvshim-compat-verdict 2\nkey k\nplain x\nheader runtime.h\nend\n",      /* plain has no body */
		"nvshim-compat-verdict 2\nkey k\nmaybe\nend\n",
		"nvshim-compat-verdict 2\nkey k\nplain x\nend\nend\n",
		"nvshim-compat-verdict 1\nkey k\nplain x\nend\n",
		"nvshim-compat-verdict 2\nkey k\nplain x\nlayout 4 nvToolsExt.h\nend\n", /* not a dry-run fix */
		"nvshim-compat-verdict 2\nkey k\nplain x\nlayout 2\nend\n",              /* no header */
		"nvshim-compat-verdict 2\nkey k\nplain x\nlayout 2 a\nlayout 2 a\nend\n",
		"",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(compat_dryrun_verdict_parse(bad[i], "k", &back, &why), -1, "%s", bad[i]);
		cr_assert_null(why);
		cr_assert_eq(back.headers.n + back.nsites, 0);
	}
	/* CUDA 13's moved files, alone (a plain verdict) or under the layer */
	compat_decision_init(&d);
	d.layout = LAYOUT_NVTX;
	d.layout_header = xstrdup("nvToolsExt.h");
	text = compat_dryrun_verdict_format("k", &d, "its front end passes with CUDA 13's moved files");
	cr_assert_eq(compat_dryrun_verdict_parse(text, "k", &back, &why), 0, "%s", text);
	cr_assert(!back.retry);
	cr_assert_eq(back.layout, LAYOUT_NVTX);
	cr_assert_str_eq(back.layout_header, "nvToolsExt.h");
	free(why);
	free(text);
	compat_decision_release(&back);
	d.retry = 1;
	argv_push(&d.headers, "runtime.h");
	text = compat_dryrun_verdict_format("k", &d, NULL);
	cr_assert_eq(compat_dryrun_verdict_parse(text, "k", &back, &why), 0, "%s", text);
	cr_assert(back.retry && back.layout == LAYOUT_NVTX && back.headers.n == 1);
	free(text);
	compat_decision_release(&back);
	compat_decision_release(&d);
	cr_assert_eq(compat_dryrun_verdict_parse("nvshim-compat-verdict 2\nkey k\nlayer\nheader runtime.h\n"
						 "site 7 clockRate\nend\n", "k", &back, &why), 0);
	cr_assert_eq(back.sites[0].line, 7);
	compat_decision_release(&back);
}

static int host_front(const char **args, size_t n, struct argv *out, size_t *source, int *key)
{
	struct hostcc hc;
	hostcc_parse(&hc, (char *const *)args, n);
	*key = compat_dryrun_host_is_key(&hc.args);
	int rc = compat_dryrun_host_front_args(&hc, out, source);
	hostcc_release(&hc);
	return rc;
}

Test(compat_dryrun, sccaches_e_of_a_host_compile)
{
	/* sccache's preprocess_cmd: -x LANG -E [-P], the preprocessor, dependency and common
	 * arguments, the source */
	const char *pre[] = { "-x", "c++", "-E", "-P", "-DX=1", "-Iinc", "-MD", "-MF", "x.d", "-MT", "x.o", "-O2",
			      "ctx_old.cpp" };
	struct argv out = ARGV_INIT;
	size_t src = 99;
	int key = 0;
	cr_assert_eq(host_front(pre, 13, &out, &src, &key), 0);
	cr_assert_eq(key, 1);
	char *s = argv_join(&out, " ");
	cr_assert_str_eq(s, "-x c++ -DX=1 -Iinc -O2 ctx_old.cpp -fsyntax-only");
	cr_assert_eq(src, 5);
	free(s);
	argv_release(&out);
	/* its preprocessor cache mode: no -P; a C source, -fdirectives-only (distributed) */
	const char *direct[] = { "-x", "c", "-E", "-fdirectives-only", "-I", "inc", "devinfo_c.c" };
	cr_assert_eq(host_front(direct, 7, &out, &src, &key), 0);
	cr_assert_eq(key, 1);
	s = argv_join(&out, " ");
	cr_assert_str_eq(s, "-x c -I inc devinfo_c.c -fsyntax-only");
	cr_assert_eq(src, 4);
	free(s);
	argv_release(&out);
	/* a user's -E (not begun -x LANG -E): not sccache's key; its arguments would still do */
	const char *user[] = { "-E", "-P", "ctx_old.cpp", "-o", "x.ii" };
	cr_assert_eq(host_front(user, 5, &out, &src, &key), 0);
	cr_assert_eq(key, 0);
	s = argv_join(&out, " ");
	cr_assert_str_eq(s, "ctx_old.cpp -fsyntax-only");
	free(s);
	argv_release(&out);
	const char *later[] = { "-x", "c++", "-P", "-E", "ctx_old.cpp" };
	host_front(later, 5, &out, &src, &key);
	cr_assert_eq(key, 0);
	argv_release(&out);
	/* not one C or C++ source: two, none, a CUDA one, stdin, a compile */
	const char *two[] = { "-x", "c++", "-E", "a.cpp", "b.cpp" };
	cr_assert_eq(host_front(two, 5, &out, &src, &key), -1);
	argv_release(&out);
	const char *none[] = { "-x", "c++", "-E" };
	cr_assert_eq(host_front(none, 3, &out, &src, &key), -1);
	argv_release(&out);
	const char *cu[] = { "-x", "cu", "-E", "k.cu" };
	cr_assert_eq(host_front(cu, 4, &out, &src, &key), -1);
	argv_release(&out);
	const char *in[] = { "-x", "c", "-E", "-" };
	cr_assert_eq(host_front(in, 4, &out, &src, &key), -1);
	argv_release(&out);
	const char *c[] = { "-c", "ctx_old.cpp", "-o", "x.o" };
	cr_assert_eq(host_front(c, 4, &out, &src, &key), -1);
	cr_assert_eq(key, 0);
	argv_release(&out);
}
