#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"
#include "buildwide/stats.h"

/* The notes as the passes write them (targets.c, modules.c, hostcc.c). */
static const char *const real_notes[] = {
	"renamed compute_101 -> compute_110, sm_101 -> sm_110 for nvcc 13.0 [targets.unsupported]",
	"dropped compute_50, sm_50, sm_70: not supported by nvcc 13.0 [targets.unsupported]",
	"wgmma.cu: sm_90 -> sm_90a: the source uses wgmma (arch-specific) [modules.scan]",
	"old.cu: dropped sm_75: the probe failed: device code does not support exception handling [modules.probe]",
	"k.cu is CUDA: nvcc compiles it [cc.nvcc]",
	"no rule here",
	NULL,
};

static void notes_of(struct argv *a, const char *const *v)
{
	argv_init(a);
	argv_pushv(a, v);
}

static size_t item(const struct stats_counts *c, enum stats_kind k, const char *name)
{
	for (size_t i = 0; i < c->nitems[k]; i++)
		if (!strcmp(c->items[k][i].name, name))
			return c->items[k][i].n;
	return 0;
}

Test(stats, notes_give_rules_targets_and_sources)
{
	struct argv notes;
	struct stats_entry e;
	notes_of(&notes, real_notes);
	stats_entry_init(&e);
	stats_entry_from_notes(&e, &notes);
	cr_assert_eq(e.rewritten, 1);
	cr_assert_eq(e.items[STATS_RULE].n, 4); /* targets.unsupported once, modules x2, cc.nvcc */
	cr_assert_str_eq(e.items[STATS_RENAMED].v[0], "compute_101 -> compute_110");
	cr_assert_str_eq(e.items[STATS_RENAMED].v[1], "sm_101 -> sm_110");
	cr_assert_eq(e.items[STATS_DROPPED].n, 4);
	cr_assert_str_eq(e.items[STATS_DROPPED].v[0], "compute_50");
	cr_assert_str_eq(e.items[STATS_DROPPED].v[2], "sm_70");
	cr_assert_str_eq(e.items[STATS_DROPPED].v[3], "sm_75");
	cr_assert_eq(e.items[STATS_UPGRADED].n, 1);
	cr_assert_str_eq(e.items[STATS_UPGRADED].v[0], "sm_90 -> sm_90a");
	cr_assert_eq(e.items[STATS_SOURCE].n, 2);
	cr_assert_str_eq(e.items[STATS_SOURCE].v[0], "wgmma.cu");
	cr_assert_str_eq(e.items[STATS_SOURCE].v[1], "old.cu");
	stats_entry_release(&e);
	argv_release(&notes);

	/* CC mode's routine notes alone are not a rewrite */
	static const char *const routine[] = { "k.cu is CUDA: nvcc compiles it [cc.nvcc]",
					       "gcc options for nvcc: -MF k.d added [cc.translate]", NULL };
	notes_of(&notes, routine);
	stats_entry_init(&e);
	stats_entry_from_notes(&e, &notes);
	cr_assert_eq(e.rewritten, 0);
	cr_assert_eq(e.items[STATS_RULE].n, 2);
	stats_entry_release(&e);
	argv_release(&notes);

	/* targets_only: the targets not built, as the targets pass words them */
	static const char *const only[] = {
		"targets_only = devices (NVSHIM_DEVICES): this build's code runs only on sm_90; not built: "
		"sm_75, sm_80, sm_121 [targets.only]",
		"targets_only = 90: no requested target runs on sm_90: building for sm_90 instead; not "
		"built: sm_75, compute_75 [targets.only]",
		"targets_only = devices: no GPU found (none) and fallback_archs is unset: the requested "
		"targets are kept [targets.only]", NULL };
	notes_of(&notes, only);
	stats_entry_init(&e);
	stats_entry_from_notes(&e, &notes);
	cr_assert_eq(e.rewritten, 1);
	cr_assert_eq(e.items[STATS_NOT_BUILT].n, 4);
	cr_assert_str_eq(e.items[STATS_NOT_BUILT].v[0], "sm_75");
	cr_assert_str_eq(e.items[STATS_NOT_BUILT].v[2], "sm_121");
	cr_assert_str_eq(e.items[STATS_NOT_BUILT].v[3], "compute_75");
	cr_assert_eq(e.items[STATS_DROPPED].n, 0);
	char *line = stats_entry_format(&e);
	cr_assert(strstr(line, "\to:sm_121\to:compute_75\n"), "%s", line);
	free(line);
	stats_entry_release(&e);
	argv_release(&notes);
}

/* An entry of build `id` at time t that dropped sm_50. */
static void add_one(struct stats *st, const char *id, long long t, const char *dropped)
{
	struct stats_entry e;
	stats_entry_init(&e);
	e.time = t;
	e.build_id = id;
	e.tool = "ninja";
	e.dir = "/src/b";
	e.added_ms = 0.25;
	e.rewritten = 1;
	e.probes = 2;
	e.hits = 3;
	e.quieted = 1;
	argv_push(&e.items[STATS_RULE], "targets.unsupported");
	argv_push(&e.items[STATS_DROPPED], dropped);
	stats_add(st, &e);
	stats_entry_release(&e);
}

Test(stats, summary_round_trips)
{
	struct stats st, back;
	stats_init(&st, 0);
	add_one(&st, "b1", 100, "sm_50");
	add_one(&st, "b1", 105, "sm_50");
	add_one(&st, "b2", 200, "sm_52");
	add_one(&st, NULL, 300, "sm_52"); /* not part of a build: totals only */
	cr_assert_eq(st.since, 100);
	cr_assert_eq(st.total.invocations, 4);
	cr_assert_eq(st.total.probes, 8);
	cr_assert_eq(st.nbuilds, 2);
	cr_assert_eq(st.builds[0].first, 100);
	cr_assert_eq(st.builds[0].last, 105);
	cr_assert_eq(item(&st.builds[0].c, STATS_DROPPED, "sm_50"), 2);
	cr_assert_eq(item(&st.total, STATS_DROPPED, "sm_52"), 2);
	char *text = stats_format(&st);
	stats_init(&back, 0);
	cr_assert_eq(stats_parse(&back, text, strlen(text)), 0);
	char *again = stats_format(&back);
	cr_assert_str_eq(again, text);
	cr_assert_eq(back.total.hits, 12);
	cr_assert_float_eq(back.total.added_ms, 1.0, 1e-9);
	free(again);
	free(text);
	stats_release(&back);
	stats_release(&st);
}

Test(stats, damaged_summaries_are_refused_whole)
{
	static const char *const bad[] = {
		"",
		"nvshim-stats\t2\nend\n",                                  /* another version */
		"nvshim-stats\t1\nsince\t5\n",                             /* no end: cut short */
		"nvshim-stats\t1\nsince\tfive\nend\n",                     /* not a number */
		"nvshim-stats\t1\nsince\t-5\nend\n",
		"nvshim-stats\t1\ncount\t0\t1\t1\t0\t0\t0\t0.0\nend\n",    /* no build 0 */
		"nvshim-stats\t1\nitem\ttotal\tcolour\t1\tred\nend\n",     /* no such kind */
		"nvshim-stats\t1\nitem\ttotal\trule\t1\t\nend\n",          /* no name */
		"nvshim-stats\t1\ncount\ttotal\t1\t1\t0\t0\t0\tnan\nend\n",
		"nvshim-stats\t1\nend\nmore\n",                            /* after the end */
		"nvshim-stats\t1\nbuild\tx\t1\t2\tmake\t/d\nbuild\tx\t1\t2\tmake\t/d\nend\n", /* twice */
		"nvshim-stats\t1\nwhat\nend\n",
		NULL,
	};
	for (size_t i = 0; bad[i]; i++) {
		struct stats st;
		stats_init(&st, 0);
		cr_assert_eq(stats_parse(&st, bad[i], strlen(bad[i])), -1, "accepted: %s", bad[i]);
		cr_assert_eq(st.total.invocations, 0);
		cr_assert_eq(st.nbuilds, 0);
		stats_release(&st);
	}
	/* a NUL inside */
	struct stats st;
	stats_init(&st, 0);
	cr_assert_eq(stats_parse(&st, "nvshim-stats\t1\nsin\0ce\t5\nend\n", 26), -1);
	stats_release(&st);
}

Test(stats, limits_keep_the_record_bounded)
{
	struct stats st;
	stats_init(&st, 0);
	char name[32];
	for (int i = 0; i < STATS_MAX_ITEMS + 10; i++) {
		snprintf(name, sizeof(name), "sm_%d", i);
		add_one(&st, "b", 10 + i, name);
	}
	cr_assert_eq(st.total.nitems[STATS_DROPPED], STATS_MAX_ITEMS + 1);
	cr_assert_eq(item(&st.total, STATS_DROPPED, STATS_OTHER), 10);
	for (int i = 0; i < STATS_MAX_BUILDS + 3; i++) {
		snprintf(name, sizeof(name), "build-%d", i);
		add_one(&st, name, 1000 + i, "sm_50");
	}
	cr_assert_eq(st.nbuilds, STATS_MAX_BUILDS);
	/* the ones seen least recently went: "b" and build-0..2 */
	cr_assert_str_eq(st.builds[0].id, "build-3");
	cr_assert_eq(st.total.invocations, STATS_MAX_ITEMS + 10 + STATS_MAX_BUILDS + 3);

	/* names: cut, no separators */
	char longname[STATS_MAX_NAME * 2];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	longname[3] = '\t';
	longname[4] = '\n';
	struct stats small;
	stats_init(&small, 0);
	add_one(&small, "b", 1, longname);
	cr_assert_eq(strlen(small.total.items[STATS_DROPPED][0].name), STATS_MAX_NAME);
	cr_assert_eq(strncmp(small.total.items[STATS_DROPPED][0].name, "xxx??x", 6), 0);
	char *text = stats_format(&small);
	struct stats back;
	stats_init(&back, 0);
	cr_assert_eq(stats_parse(&back, text, strlen(text)), 0);
	free(text);
	stats_release(&back);
	stats_release(&small);
	stats_release(&st);

	/* time added: each journal line at most 1e15 ms, and so is a sum, which then reads back */
	static const char big[] = "i\t1\tb\tninja\t/x\t600000000000000\t0\t0\t0\t0\n";
	stats_init(&st, 0);
	cr_assert_eq(stats_add_journal(&st, big, strlen(big), 0), 1);
	cr_assert_eq(stats_add_journal(&st, big, strlen(big), 0), 1);
	cr_assert_eq(st.total.added_ms, 1e15);
	cr_assert_eq(st.builds[0].c.added_ms, 1e15);
	static const char bigger[] = "i\t1\tb\tninja\t/x\t1000000000000001\t0\t0\t0\t0\n";
	cr_assert_eq(stats_add_journal(&st, bigger, strlen(bigger), 0), 0);
	text = stats_format(&st);
	stats_init(&back, 0);
	cr_assert_eq(stats_parse(&back, text, strlen(text)), 0);
	cr_assert_eq(back.total.added_ms, 1e15);
	free(text);
	stats_release(&back);
	stats_release(&st);
}

Test(stats, journal_lines_round_trip_and_damage_is_skipped)
{
	struct stats_entry e;
	stats_entry_init(&e);
	e.time = 42;
	e.build_id = "abc-1-2";
	e.tool = "make";
	e.dir = "/a\tb";
	e.added_ms = 1.5;
	e.rewritten = 1;
	e.probes = 4;
	argv_push(&e.items[STATS_RENAMED], "sm_101 -> sm_110");
	argv_push(&e.items[STATS_SOURCE], "k.cu");
	char *line = stats_entry_format(&e);
	stats_entry_release(&e);
	cr_assert_str_eq(line, "i\t42\tabc-1-2\tmake\t/a?b\t1.500\t1\t4\t0\t0\tn:sm_101 -> sm_110\ts:k.cu\n");
	char *text = concat("nvshim-stats-journal\tfeed\n", line, "i\tbad\n", "\xff\xfe\n",
			    "i\t1\tb\tt\td\t0\t2\t0\t0\t0\n", /* rewritten must be 0 or 1 */
			    "i\t1\tb\tt\td\t0\t1\t0\t0\t0\tq:what\n", line, line, NULL);
	size_t len = strlen(text) - 5; /* the last line cut short: a writer that died */
	char gen[64];
	stats_journal_gen(text, len, gen, sizeof(gen));
	cr_assert_str_eq(gen, "feed");
	stats_journal_gen("i\t1\n", 4, gen, sizeof(gen));
	cr_assert_str_eq(gen, "none");
	struct stats st;
	stats_init(&st, 0);
	cr_assert_eq(stats_add_journal(&st, text, len, 0), 2);
	cr_assert_eq(st.total.invocations, 2);
	cr_assert_eq(st.total.probes, 8);
	cr_assert_eq(item(&st.total, STATS_RENAMED, "sm_101 -> sm_110"), 2);
	cr_assert_str_eq(st.builds[0].dir, "/a?b");
	stats_release(&st);
	free(text);
	free(line);
}

static void record_n(const char *dir, int n, const char *build)
{
	for (int i = 0; i < n; i++) {
		struct stats_entry e;
		stats_entry_init(&e);
		e.time = (long long)time(NULL);
		e.build_id = build;
		e.tool = "make";
		e.dir = "/some/fairly/long/build/directory/to/make/the/lines/longer/than/usual";
		e.rewritten = 1;
		argv_push(&e.items[STATS_RULE], "targets.unsupported");
		argv_push(&e.items[STATS_DROPPED], "compute_50");
		argv_push(&e.items[STATS_DROPPED], "compute_52");
		argv_push(&e.items[STATS_RENAMED], "compute_101 -> compute_110");
		cr_assert_eq(stats_record(dir, &e), 0);
		stats_entry_release(&e);
	}
}

static unsigned long long loaded_invocations(const char *dir)
{
	struct stats st;
	int damaged = 0;
	stats_load(&st, dir, &damaged);
	unsigned long long n = st.total.invocations;
	cr_assert_eq(damaged, 0);
	stats_release(&st);
	return n;
}

Test(stats, merging_counts_everything_once)
{
	char *dir = test_tmpdir();
	struct stats st;
	cr_assert_eq(stats_load(&st, dir, NULL), -1); /* no record yet */
	stats_release(&st);
	record_n(dir, 10, "b1");
	cr_assert_eq(loaded_invocations(dir), 10);
	cr_assert_eq(stats_compact(dir, 1, NULL), 0);
	cr_assert_eq(loaded_invocations(dir), 10);
	record_n(dir, 5, "b2");
	cr_assert_eq(loaded_invocations(dir), 15);

	/* A merge that died after writing the summary and before emptying the journal: the
	 * summary's `merged` line says how far it went, so nothing counts twice. */
	char *jpath = concat(dir, "/stats/journal", NULL);
	char *journal = test_read(jpath);
	cr_assert_eq(stats_compact(dir, 1, NULL), 0);
	cr_assert_eq(loaded_invocations(dir), 15);
	free(test_write(dir, "stats/journal", journal));
	cr_assert_eq(loaded_invocations(dir), 15);
	cr_assert_eq(stats_compact(dir, 1, NULL), 0);
	cr_assert_eq(loaded_invocations(dir), 15);

	/* a damaged summary is started again: the journal's lines still count */
	record_n(dir, 2, "b3");
	free(test_write(dir, "stats/summary", "nvshim-stats\t1\nsince\tx"));
	int damaged = 0;
	stats_load(&st, dir, &damaged);
	cr_assert_eq(damaged, 1);
	cr_assert_eq(st.total.invocations, 2);
	stats_release(&st);
	damaged = 0;
	cr_assert_eq(stats_compact(dir, 1, &damaged), 0);
	cr_assert_eq(damaged, 1);
	cr_assert_eq(loaded_invocations(dir), 2);

	/* zero: nothing, since now */
	cr_assert_eq(stats_zero(dir), 0);
	stats_load(&st, dir, NULL);
	cr_assert_eq(st.total.invocations, 0);
	cr_assert_geq(st.since, (long long)time(NULL) - 60);
	stats_release(&st);
	record_n(dir, 3, "b4");
	cr_assert_eq(loaded_invocations(dir), 3);
	free(journal);
	free(jpath);
	test_rmtree(dir);
	free(dir);
}

/* 64 processes at once, enough lines to merge many times meanwhile: no count lost or doubled. */
Test(stats, parallel_writers_lose_nothing)
{
	char *dir = test_tmpdir();
	enum { WRITERS = 64, EACH = 60 };
	pid_t pids[WRITERS];
	for (int w = 0; w < WRITERS; w++) {
		pids[w] = fork();
		cr_assert_geq(pids[w], 0);
		if (!pids[w]) {
			/* no Criterion assertion in here: the exit status says which record failed */
			char build[32];
			snprintf(build, sizeof(build), "b%d", w % 4);
			for (int i = 0; i < EACH; i++) {
				struct stats_entry e;
				stats_entry_init(&e);
				e.time = (long long)time(NULL);
				e.build_id = build;
				e.tool = "make";
				e.dir = "/some/fairly/long/build/directory/to/make/the/lines/longer/than/usual";
				argv_push(&e.items[STATS_DROPPED], "compute_52");
				int rc = stats_record(dir, &e);
				stats_entry_release(&e);
				if (rc)
					_exit(10 + i % 100);
			}
			_exit(0);
		}
	}
	for (int w = 0; w < WRITERS; w++) {
		int status;
		waitpid(pids[w], &status, 0);
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %d: status %#x", w, status);
	}
	struct stats st;
	stats_load(&st, dir, NULL);
	cr_assert_eq(st.total.invocations, WRITERS * EACH);
	cr_assert_eq(item(&st.total, STATS_DROPPED, "compute_52"), WRITERS * EACH);
	cr_assert_eq(st.nbuilds, 4);
	for (size_t i = 0; i < st.nbuilds; i++)
		cr_assert_eq(st.builds[i].c.invocations, WRITERS * EACH / 4);
	stats_release(&st);
	/* it was merged along the way: the journal stayed small */
	char *jpath = concat(dir, "/stats/journal", NULL);
	char *journal = test_read(jpath);
	cr_assert_lt(strlen(journal), 2 * STATS_JOURNAL_MERGE);
	free(journal);
	free(jpath);
	test_rmtree(dir);
	free(dir);
}

Test(stats, json_and_text)
{
	struct stats st;
	stats_init(&st, 0);
	add_one(&st, "b1", 100, "sm_\"50");
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	stats_print_json(&st, NULL, m);
	fclose(m);
	cr_assert_not_null(strstr(buf, "\"total\":{\"invocations\":1,\"rewritten\":1,\"notes_quieted\":1,"
				       "\"probes\":2,\"cache_hits\":3,\"added_ms\":0.250,"
				       "\"rules\":{\"targets.unsupported\":1},\"dropped\":{\"sm_\\\"50\":1}"));
	cr_assert_not_null(strstr(buf, "\"builds\":[{\"id\":\"b1\",\"tool\":\"ninja\",\"dir\":\"/src/b\""));
	free(buf);
	m = open_memstream(&buf, &len);
	stats_print(&st, "/c/stats", m);
	fclose(m);
	cr_assert_not_null(strstr(buf, "Build by ninja in /src/b"));
	cr_assert_not_null(strstr(buf, "targets dropped:\n    sm_\"50"));
	free(buf);
	stats_release(&st);
}
