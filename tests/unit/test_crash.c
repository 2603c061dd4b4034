#include <criterion/criterion.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "helpers.h"
#include "diagnose/crash.h"

static int detect(int status, int sig, const char *err, struct crash *c)
{
	struct run_result res = { status, sig, 0 };
	return crash_detect(&res, err, c);
}

Test(crash, nvcc_names_the_stage)
{
	struct crash c;
	cr_assert(detect(11, 0, "nvcc error   : '\"$CICC_PATH/cicc\"' died due to signal 11 (Invalid memory "
				"reference)\n", &c));
	cr_assert_str_eq(c.stage, "cicc");
	cr_assert_eq(c.signal, 11);
	cr_assert(!c.flaky);
	char *d = crash_describe(&c);
	cr_assert_str_eq(d, "'cicc' died of signal 11 (Segmentation fault)");
	free(d);
	c.source = xstrdup("k.cu");
	c.target = xstrdup("compute_90");
	d = crash_describe(&c);
	cr_assert_str_eq(d, "'cicc' died of signal 11 (Segmentation fault) compiling k.cu for compute_90");
	free(d);
	crash_release(&c);

	cr_assert(detect(9, 0, "nvcc error   : 'ptxas' died due to signal 9 (Kill signal)\n", &c));
	cr_assert(c.flaky);
	d = crash_describe(&c);
	cr_assert_str_eq(d, "'ptxas' was killed (signal 9 (Killed))");
	free(d);
	crash_release(&c);
}

Test(crash, a_shell_line_counts_only_with_its_status)
{
	struct crash c;
	cr_assert(detect(139, 0, "Segmentation fault\n", &c));
	cr_assert_null(c.stage);
	cr_assert_eq(c.signal, 11);
	crash_release(&c);
	cr_assert(detect(137, 0, "k.cu(3): warning: something\nKilled\n", &c));
	cr_assert(c.flaky);
	crash_release(&c);
	/* The line alone, or a status that is not 128+N for it: a program's output, no crash. */
	cr_assert(!detect(1, 0, "Segmentation fault\n", &c));
	cr_assert(!detect(139, 0, "Killed\n", &c));
	cr_assert(!detect(0, 0, "Segmentation fault\n", &c));
	cr_assert(!detect(2, 0, "k.cu(1): error: expected a \";\"\n", &c));
}

Test(crash, nvcc_itself_and_the_users_signals)
{
	struct crash c;
	cr_assert(detect(139, SIGSEGV, "", &c));
	cr_assert_str_eq(c.stage, "nvcc");
	char *d = crash_describe(&c);
	cr_assert_str_eq(d, "nvcc itself died of signal 11 (Segmentation fault)");
	free(d);
	crash_release(&c);
	cr_assert(detect(137, SIGKILL, NULL, &c));
	cr_assert(c.flaky);
	crash_release(&c);
	/* ^C, a closed terminal or pipe: the user's doing. */
	cr_assert(!detect(130, SIGINT, "", &c));
	cr_assert(!detect(129, SIGHUP, "", &c));
	cr_assert(!detect(141, SIGPIPE, "", &c));
	cr_assert(!detect(2, 0, "nvcc error   : 'cicc' died due to signal 2 (Interrupt)\n", &c));
}

Test(crash, the_targets_of_a_command_line)
{
	char *a[] = { "-c", "k.cu", "-gencode", "arch=compute_80,code=sm_80", "-gencode",
		      "arch=compute_90,code=[sm_90,compute_90]", "-gencode", "arch=compute_100,code=sm_100" };
	char *t = crash_targets_text(a, 8);
	cr_assert_str_eq(t, "sm_80, sm_90 or sm_100");
	free(t);
	t = crash_targets_text(a, 4);
	cr_assert_str_eq(t, "sm_80");
	free(t);
	char *ptx[] = { "-c", "k.cu", "-arch=compute_80" };
	cr_assert_null(crash_targets_text(ptx, 3));
	cr_assert_null(crash_targets_text(a, 2));
}

Test(crash, wanted_for_compiles_only)
{
	struct config cfg;
	config_init(&cfg, NULL);
	static char *const lines[][4] = {
		{ "-c", "k.cu", NULL }, { "k.o", "-o", "app", NULL }, { "-E", "k.cu", NULL },
		{ "-M", "k.cu", NULL }, { "--version", NULL }, { "--dryrun", "-c", "k.cu", NULL },
		{ "--run", "k.cu", NULL }, { "-c", NULL },
	};
	static const int want[] = { 1, 1, 0, 0, 0, 0, 0, 0 };
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct invocation inv;
		size_t n = 0;
		while (lines[i][n])
			n++;
		invocation_parse(&inv, lines[i], n, test_env);
		cr_assert_eq(crash_wanted(&inv, &cfg), want[i], "line %zu", i);
		invocation_release(&inv);
	}
	/* Nothing to do with a failure: no need to hold stderr. */
	struct invocation inv;
	invocation_parse(&inv, lines[0], 2, test_env);
	cfg.crash_bundles = 0;
	cfg.explain_resources = 0;
	cr_assert_eq(crash_wanted(&inv, &cfg), 1);
	cfg.explain_api = 0;
	cr_assert_eq(crash_wanted(&inv, &cfg), 1); /* compat = auto: the layer reads the failure */
	free(cfg.compat);
	cfg.compat = xstrdup("off");
	cr_assert_eq(crash_wanted(&inv, &cfg), 0);
	free(cfg.crash_retry);
	cfg.crash_retry = xstrdup("once");
	cr_assert_eq(crash_wanted(&inv, &cfg), 1);
	invocation_release(&inv);
	config_release(&cfg);
}

Test(crash, dir_and_pruning)
{
	struct config cfg;
	config_init(&cfg, NULL);
	free(cfg.cache_dir);
	cfg.cache_dir = xstrdup("/c");
	char *d = crash_dir(&cfg);
	cr_assert_str_eq(d, "/c/crashes");
	free(d);
	config_release(&cfg);

	char *dir = test_tmpdir();
	static const char *const names[] = { "20260101-000000-cicc-a.cu-AAAAAA",
					     "20260102-000000-cicc-a.cu-BBBBBB",
					     "20260103-000000-ptxas-b.cu-CCCCCC", "notes",
					     "20260104-000000-nvcc-c.cu-DDDDDD" };
	for (size_t i = 0; i < 5; i++) {
		char *p = concat(dir, "/", names[i], NULL);
		cr_assert_eq(mkdir(p, 0700), 0);
		free(test_write(p, "README.txt", "x"));
		free(p);
	}
	cr_assert_eq(crash_prune(dir, 2), 2);
	for (size_t i = 0; i < 5; i++) {
		char *p = concat(dir, "/", names[i], NULL);
		struct stat sb;
		cr_assert_eq(stat(p, &sb) == 0, i >= 2, "%s", names[i]);
		free(p);
	}
	cr_assert_eq(crash_prune(dir, 2), 0);
	cr_assert_eq(crash_prune("/nonexistent/dir", 1), 0);
	test_rmtree(dir);
	free(dir);
}
