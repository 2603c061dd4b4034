#include <criterion/criterion.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "helpers.h"
#include "base/runner.h"

static int run_sh(const char *script, struct run_result *res)
{
	struct argv a = ARGV_INIT;
	argv_push(&a, "sh");
	argv_push(&a, "-c");
	argv_push(&a, script);
	int rc = runner_run("/bin/sh", &a, res);
	argv_release(&a);
	return rc;
}

Test(runner, exit_status_passes_through)
{
	struct run_result res;
	cr_assert_eq(run_sh("exit 0", &res), 0);
	cr_assert_eq(res.status, 0);
	cr_assert_eq(run_sh("exit 3", &res), 0);
	cr_assert_eq(res.status, 3);
	cr_assert_eq(run_sh("exit 255", &res), 0);
	cr_assert_eq(res.status, 255);
	cr_assert_geq(res.wall_ms, 0.0);
}

Test(runner, signal_gives_128_plus_n)
{
	struct run_result res;
	cr_assert_eq(run_sh("kill -9 $$", &res), 0);
	cr_assert_eq(res.status, 137);
	cr_assert_eq(res.signal, 9);
	cr_assert_eq(run_sh("kill -SEGV $$", &res), 0);
	cr_assert_eq(res.status, 128 + 11);
	/* The runner itself survives an interrupt sent to the child. */
	cr_assert_eq(run_sh("kill -INT $$", &res), 0);
	cr_assert_eq(res.status, 130);
}

Test(runner, missing_program_is_an_error_with_127)
{
	struct argv a = ARGV_INIT;
	argv_push(&a, "nope");
	struct run_result res;
	cr_assert_eq(runner_run("/nonexistent/nope", &a, &res), -1);
	cr_assert_eq(res.status, 127);
	argv_release(&a);
}

Test(runner, stdio_is_inherited)
{
	/* The child reads our stdin and writes our stdout: redirect both to files. */
	char *dir = test_tmpdir();
	char *in = test_write(dir, "in", "hello stdin\n");
	char *out = concat(dir, "/out", NULL);
	fflush(stdout);
	cr_assert_not_null(freopen(in, "r", stdin));
	int saved = dup(1);
	FILE *o = fopen(out, "w");
	dup2(fileno(o), 1);
	struct run_result res;
	run_sh("cat; echo err >&2", &res);
	dup2(saved, 1);
	close(saved);
	fclose(o);
	char *got = test_read(out);
	cr_assert_str_eq(got, "hello stdin\n");
	free(got);
	test_rmtree(dir);
	free(in);
	free(out);
	free(dir);
}

Test(runner, capture_returns_stdout_and_status)
{
	struct argv a = ARGV_INIT;
	argv_push(&a, "sh");
	argv_push(&a, "-c");
	argv_push(&a, "printf 'a\\nb'; echo hidden >&2; exit 4");
	char *out;
	cr_assert_eq(runner_capture("/bin/sh", &a, &out), 4);
	cr_assert_str_eq(out, "a\nb");
	free(out);
	argv_release(&a);
}

Test(runner, held_stderr_is_read_not_printed)
{
	struct argv a = ARGV_INIT;
	argv_push(&a, "sh");
	argv_push(&a, "-c");
	/* More than a pipe holds, so that a runner that waits before it reads would hang. */
	argv_push(&a, "i=0; while [ $i -lt 20000 ]; do echo \"error line $i\" >&2; i=$((i+1)); done; "
		      "echo out; exit 4");
	struct run_result res;
	char *held = NULL;
	cr_assert_eq(runner_run_held("/bin/sh", &a, &res, &held), 0);
	cr_assert_eq(res.status, 4);
	cr_assert_not_null(held);
	cr_assert(!strncmp(held, "error line 0\n", 13));
	cr_assert_not_null(strstr(held, "error line 19999\n"));
	free(held);
	argv_release(&a);

	/* Nothing printed: an empty string, never NULL. */
	argv_init(&a);
	argv_push(&a, "true");
	cr_assert_eq(runner_run_held("/bin/true", &a, &res, &held), 0);
	cr_assert_eq(res.status, 0);
	cr_assert_str_eq(held, "");
	free(held);

	/* A signal still gives 128+N. */
	argv_release(&a);
	argv_push(&a, "sh");
	argv_push(&a, "-c");
	argv_push(&a, "echo dying >&2; kill -SEGV $$");
	cr_assert_eq(runner_run_held("/bin/sh", &a, &res, &held), 0);
	cr_assert_eq(res.status, 139);
	cr_assert_str_eq(held, "dying\n");
	free(held);
	argv_release(&a);
}

/* The held stderr is the exact bytes, however much there is; stdout still passes through. */
Test(runner, stderr_held)
{
	struct run_result res;
	struct argv a = ARGV_INIT;
	char *err = NULL;
	argv_push(&a, "sh");
	argv_push(&a, "-c");
	argv_push(&a, "printf 'one\\ntwo' >&2; head -c 300000 /dev/zero | tr '\\0' x >&2; exit 3");
	cr_assert_eq(runner_run_held("/bin/sh", &a, &res, &err), 0);
	cr_assert_eq(res.status, 3);
	cr_assert_eq(strlen(err), 7 + 300000);
	cr_assert_eq(strncmp(err, "one\ntwo", 7), 0);
	free(err);
	argv_release(&a);
	argv_push(&a, "/nonexistent/program");
	cr_assert_eq(runner_run_held("/nonexistent/program", &a, &res, &err), -1);
	cr_assert_eq(res.status, 127);
	free(err);
	argv_release(&a);
}

Test(runner, run_env_gives_its_environment_and_files)
{
	char *dir = test_tmpdir();
	char *out = concat(dir, "/out", NULL), *err = concat(dir, "/err", NULL);
	struct argv a = ARGV_INIT;
	argv_pushv(&a, (const char *const[]){ "sh", "-c", "echo \"$FOO\"; echo to-err >&2; exit 3", NULL });
	char *env[] = { "FOO=bar", "PATH=/usr/bin:/bin", NULL };
	struct run_result res;
	cr_assert_eq(runner_run_env("/bin/sh", &a, env, out, err, &res), 0);
	cr_assert_eq(res.status, 3);
	cr_assert_eq(res.signal, 0);
	char *o = test_read(out), *e = test_read(err);
	cr_assert_str_eq(o, "bar\n");
	cr_assert_str_eq(e, "to-err\n");
	free(o);
	free(e);
	argv_release(&a);
	/* A signal, and /dev/null when no file is named. */
	argv_pushv(&a, (const char *const[]){ "sh", "-c", "echo x; kill -SEGV $$", NULL });
	cr_assert_eq(runner_run_env("/bin/sh", &a, NULL, NULL, NULL, &res), 0);
	cr_assert_eq(res.signal, 11);
	cr_assert_eq(res.status, 139);
	cr_assert_eq(runner_run_env("/nonexistent/program", &a, NULL, NULL, NULL, &res), -1);
	cr_assert_eq(res.status, 127);
	argv_release(&a);
	free(out);
	free(err);
	test_rmtree(dir);
	free(dir);
}

/* ---- termination signals and process lifetime ---- */

/* Each Criterion test runs in a process of its own: the runner's record of a signal starts
 * empty in each. The children send the signal to the runner ($PPID), as a build tool's
 * timeout would, while it waits for them. */

Test(runner, term_is_passed_on_and_the_child_decides, .timeout = 20)
{
	struct run_result res;
	/* the child exits 7 on SIGTERM: it can only get one if the runner passed it on */
	cr_assert_eq(run_sh("trap 'exit 7' TERM; kill -TERM $PPID; i=0; while [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done", &res), 0);
	cr_assert_eq(res.status, 7);
	cr_assert_eq(res.signal, 0);
	cr_assert_eq(runner_signal(), SIGTERM);
	/* nothing starts after it */
	cr_assert_eq(run_sh("exit 0", &res), -1);
	cr_assert_eq(res.status, 128 + SIGTERM);
	/* the tool's own status stands */
	cr_assert_eq(runner_end(7), 7);
}

Test(runner, a_child_killed_by_the_signal_is_shown_by_the_same_signal, .signal = SIGHUP, .timeout = 20)
{
	struct run_result res;
	cr_assert_eq(run_sh("kill -HUP $PPID; i=0; while [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done", &res), 0);
	cr_assert_eq(res.signal, SIGHUP);
	cr_assert_eq(runner_signal(), SIGHUP);
	runner_end(res.status); /* dies of SIGHUP */
	cr_assert_fail("runner_end() returned after the child died of SIGHUP");
}

Test(runner, a_signal_before_the_tool_ran_ends_nvshim_by_it, .signal = SIGTERM)
{
	struct run_result res;
	runner_catch_signals();
	raise(SIGTERM);
	cr_assert_eq(runner_signal(), SIGTERM);
	cr_assert_eq(run_sh("exit 0", &res), -1);
	runner_end(res.status);
	cr_assert_fail("runner_end() returned though no tool had run");
}

Test(runner, a_signal_after_the_tool_ended_keeps_its_status)
{
	struct run_result res;
	runner_catch_signals();
	cr_assert_eq(run_sh("exit 3", &res), 0);
	raise(SIGINT);
	cr_assert_eq(runner_signal(), SIGINT);
	cr_assert_eq(runner_end(res.status), 3);
}

Test(runner, every_parallel_job_gets_the_signal, .timeout = 20)
{
	struct argv a = ARGV_INIT, b = ARGV_INIT;
	/* The signal is sent once the first job has its trap (an event, not a moment: a loaded
	 * machine starts a shell late). */
	char *dir = test_tmpdir();
	char *sa = concat("trap 'exit 5' INT; while [ ! -e ", dir, "/ready ]; do sleep 0.01; done; kill -INT $PPID; "
			  "i=0; while [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done", NULL);
	char *sb = concat("trap 'exit 6' INT; touch ", dir, "/ready; i=0; while [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done",
			  NULL);
	argv_pushv(&a, (const char *const[]){ "sh", "-c", sa, NULL });
	argv_pushv(&b, (const char *const[]){ "sh", "-c", sb, NULL });
	struct runner_job jobs[3] = { { "/bin/sh", &b, NULL, NULL, { 0, 0, 0 } },
				      { "/bin/sh", &a, NULL, NULL, { 0, 0, 0 } },
				      { "/bin/sh", &b, NULL, NULL, { 0, 0, 0 } } };
	cr_assert_eq(runner_run_many(jobs, 3, 2), -1); /* the third is not started */
	cr_assert_eq(jobs[0].res.status, 6);
	cr_assert_eq(jobs[1].res.status, 5);
	cr_assert_eq(jobs[2].res.status, 128 + SIGINT);
	argv_release(&a);
	argv_release(&b);
	test_rmtree(dir);
	free(sa);
	free(sb);
	free(dir);
}

/* The SigIgn mask of a shell the runner starts. */
static unsigned long long child_ignores(void)
{
	struct argv a = ARGV_INIT;
	argv_pushv(&a, (const char *const[]){ "sh", "-c", "sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$$/status", NULL });
	char *out = NULL;
	cr_assert_eq(runner_capture("/bin/sh", &a, &out), 0);
	unsigned long long mask = strtoull(out, NULL, 16);
	free(out);
	argv_release(&a);
	return mask;
}

Test(runner, an_ignored_signal_stays_ignored_in_the_child)
{
	unsigned long long bit = 1ULL << (SIGINT - 1);
	signal(SIGINT, SIG_DFL);
	cr_assert_eq(child_ignores() & bit, 0, "SIGINT handled by nvshim, default in the child");
	/* as nvshim started from a shell's background job */
	signal(SIGINT, SIG_IGN);
	cr_assert_neq(child_ignores() & bit, 0, "SIGINT ignored by nvshim's caller, ignored in the child");
	/* and not passed on: nvshim itself ignores it, the whole run long */
	runner_catch_signals();
	cr_assert_neq(child_ignores() & bit, 0);
	struct run_result res;
	cr_assert_eq(run_sh("trap 'exit 9' INT; kill -INT $PPID; sleep 0.2; exit 4", &res), 0);
	cr_assert_eq(res.status, 4);
	cr_assert_eq(runner_signal(), 0);
}

/* Is pid gone (or a zombie nobody reaps yet)? */
static int gone(pid_t pid)
{
	char path[64], state = 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 1;
	int n = fscanf(f, "%*d (%*[^)]) %c", &state);
	fclose(f);
	return n != 1 || state == 'Z' || state == 'X';
}

/* Runs `script` with sh through the runner in a forked process (nvshim), waits for the pid
 * the script writes to `pidfile`, SIGKILLs that process and returns whether the pid ended
 * within a minute (a generous limit: it ends at once when it ends at all). */
static int dies_with_runner(const char *script, const char *pidfile)
{
	pid_t middle = fork();
	cr_assert_geq(middle, 0);
	if (middle == 0) {
		struct argv a = ARGV_INIT;
		argv_pushv(&a, (const char *const[]){ "sh", "-c", script, NULL });
		struct run_result res;
		runner_run("/bin/sh", &a, &res);
		_exit(0);
	}
	pid_t child = 0;
	for (int i = 0; i < 6000 && !child; i++) {
		FILE *f = fopen(pidfile, "r");
		if (f) {
			int p = 0;
			if (fscanf(f, "%d", &p) == 1)
				child = p;
			fclose(f);
		}
		if (!child)
			usleep(10000);
	}
	cr_assert_gt(child, 0, "the child did not start");
	kill(middle, SIGKILL);
	waitpid(middle, NULL, 0);
	int dead = 0;
	for (int i = 0; i < 6000 && !dead; i++) {
		dead = gone(child);
		if (!dead)
			usleep(10000);
	}
	if (!dead)
		kill(child, SIGKILL);
	return dead;
}

Test(runner, children_die_with_nvshim)
{
	char *dir = test_tmpdir();
	char *pidfile = concat(dir, "/pid", NULL);
	/* the child itself: the parent-death signal */
	char *script = concat("echo $$ > ", pidfile, ".tmp && mv ", pidfile, ".tmp ", pidfile,
			      " && exec sleep 300", NULL);
	cr_assert(dies_with_runner(script, pidfile), "the child outlived the runner's process by a minute");
	test_rmtree(dir);
	free(script);
	free(pidfile);
	free(dir);
}

Test(runner, grandchildren_die_with_nvshim)
{
	/* A stage of nvcc's: two levels below, its parent ignoring SIGTERM (as nvcc goes on with
	 * its clean-up), started in the background (reparented to init once its parent ends). */
	char *dir = test_tmpdir();
	char *pidfile = concat(dir, "/pid", NULL);
	char *script = concat("trap '' TERM; sh -c 'sh -c \"echo \\$\\$ > ", pidfile, ".tmp && mv ", pidfile,
			      ".tmp ", pidfile, " && exec sleep 300\" & wait'; sleep 300", NULL);
	cr_assert(dies_with_runner(script, pidfile), "a grandchild outlived the runner's process by a minute");
	test_rmtree(dir);
	free(script);
	free(pidfile);
	free(dir);
}

Test(runner, lifeline_in_the_environment)
{
	/* the children's environment holds the token; nvshim's own does not change */
	char *dir = test_tmpdir();
	char *out = concat(dir, "/env", NULL);
	struct argv a = ARGV_INIT;
	argv_pushv(&a, (const char *const[]){ "sh", "-c", "echo \"$NVSHIM_LIFELINE\"", NULL });
	setenv("NVSHIM_LIFELINE", "1.00000000000000aa", 1);
	struct run_result res;
	cr_assert_eq(runner_run_env("/bin/sh", &a, NULL, out, NULL, &res), 0);
	cr_assert_eq(res.status, 0);
	char *text = test_read(out);
	char expect[64];
	snprintf(expect, sizeof(expect), "1.00000000000000aa %d.", (int)getpid());
	cr_assert(!strncmp(text, expect, strlen(expect)), "got %s", text);
	cr_assert_str_eq(getenv("NVSHIM_LIFELINE"), "1.00000000000000aa");
	unsetenv("NVSHIM_LIFELINE");
	test_rmtree(dir);
	free(text);
	free(out);
	free(dir);
	argv_release(&a);
}
