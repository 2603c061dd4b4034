#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "core/runner.h"

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
