#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"
#include "buildwide/build.h"
#include "buildwide/once.h"

Test(once, first_compile_of_a_build_says_it)
{
	char *dir = test_tmpdir();
	const char *note = "dropped sm_50: not supported by nvcc 13.0 [targets.unsupported]";
	cr_assert_eq(once_first(dir, "env-1", note), 1);
	cr_assert_eq(once_first(dir, "env-1", note), 0);
	cr_assert_eq(once_first(dir, "env-1", "another note [targets.unsupported]"), 1);
	cr_assert_eq(once_first(dir, "env-2", note), 1);
	/* no cache, no build: cannot tell, so it is said */
	cr_assert_eq(once_first("", "env-1", note), -1);
	cr_assert_eq(once_first(dir, "", note), -1);
	cr_assert_eq(once_first("/proc/nvshim-no-such-dir", "env-1", note), -1);
	test_rmtree(dir);
	free(dir);
}

/* Many compiles at once: exactly one says the note. */
Test(once, one_winner_among_parallel_compiles)
{
	char *dir = test_tmpdir();
	enum { N = 64 };
	pid_t pids[N];
	for (int i = 0; i < N; i++) {
		pids[i] = fork();
		cr_assert_geq(pids[i], 0);
		if (!pids[i])
			_exit(once_first(dir, "env-par", "renamed sm_101 -> sm_110 [targets.unsupported]") + 1);
	}
	int said = 0, quiet = 0;
	for (int i = 0; i < N; i++) {
		int status;
		waitpid(pids[i], &status, 0);
		cr_assert(WIFEXITED(status));
		said += WEXITSTATUS(status) == 2;
		quiet += WEXITSTATUS(status) == 1;
	}
	cr_assert_eq(said, 1);
	cr_assert_eq(quiet, N - 1);
	test_rmtree(dir);
	free(dir);
}

static int exists(const char *dir, const char *build)
{
	char *p = concat(dir, "/notes/", build, NULL);
	struct stat st;
	int rc = !stat(p, &st);
	free(p);
	return rc;
}

static void age(const char *dir, const char *build, time_t seconds)
{
	char *p = concat(dir, "/notes/", build, NULL);
	struct timeval tv[2] = { { time(NULL) - seconds, 0 }, { time(NULL) - seconds, 0 } };
	cr_assert_eq(utimes(p, tv), 0);
	free(p);
}

Test(once, ended_builds_are_removed)
{
	char *dir = test_tmpdir();
	/* a build whose tool has ended: this boot, a pid with another start time */
	char boot[64], ended[128];
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	cr_assert_not_null(fgets(boot, sizeof(boot), f));
	fclose(f);
	boot[8] = '\0';
	snprintf(ended, sizeof(ended), "%s-%ld-1", boot, (long)getpid());
	cr_assert_eq(once_first(dir, ended, "n"), 1);
	cr_assert_eq(once_first(dir, "env-old", "n"), 1);
	cr_assert_eq(once_first(dir, "env-new", "n"), 1);
	age(dir, "env-old", 2 * 24 * 60 * 60);
	/* a new build's first note prunes */
	cr_assert_eq(once_first(dir, "env-next", "n"), 1);
	cr_assert(!exists(dir, ended));
	cr_assert(!exists(dir, "env-old"));
	cr_assert(exists(dir, "env-new"));
	cr_assert(exists(dir, "env-next"));
	/* past the limit, the oldest go */
	char name[32];
	for (int i = 0; i < ONCE_MAX_BUILDS + 5; i++) {
		snprintf(name, sizeof(name), "env-%d", i);
		cr_assert_eq(once_first(dir, name, "n"), 1);
		age(dir, name, 1000 - i);
	}
	once_prune(dir, NULL, time(NULL));
	cr_assert(!exists(dir, "env-0"));
	cr_assert(exists(dir, "env-68"));
	int n = 0;
	for (int i = 0; i < ONCE_MAX_BUILDS + 5; i++) {
		snprintf(name, sizeof(name), "env-%d", i);
		n += exists(dir, name);
	}
	cr_assert_leq(n, ONCE_MAX_BUILDS);
	test_rmtree(dir);
	free(dir);
}
