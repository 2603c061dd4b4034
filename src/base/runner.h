/* runner: the only module that starts processes (fork and exec; no shell, no system()).
 *
 * runner_run() hands the child nvshim's own stdin, stdout and stderr, so everything passes
 * through unchanged, and returns the child's exit status; a child killed by signal N gives
 * 128+N, as a shell reports it.
 *
 * Process lifetime. While nvshim waits for children, the termination signals it receives
 * (SIGTERM, SIGINT, SIGHUP, SIGQUIT) are passed on to each child it waits for, and nvshim
 * waits for them to end; a signal nvshim was started with ignored stays ignored, in nvshim and
 * in its children. Every child is started with the parent-death signal set (Linux prctl
 * PR_SET_PDEATHSIG, SIGTERM): if nvshim dies without a chance to pass anything on (SIGKILL,
 * a crash), its children are sent SIGTERM and stop, so none writes its outputs later for a
 * caller that has moved on. The parent-death signal reaches only those children, not what they
 * start (nvcc's stages, which nvcc does not stop when it is sent SIGTERM): the lifeline does.
 * Before its first child nvshim forks a watcher, and every child's environment gets
 * NVSHIM_LIFELINE=<token>, inherited by everything below it; when nvshim dies without an
 * orderly end, the watcher sends SIGTERM (SIGKILL after 2 s) to each process of the session
 * whose environment holds the token, however deep it sits. libiberty's pex_* has no hook between fork and exec and does
 * not tell the child's pid, which both of these need: that is why the runner forks itself.
 *
 * Once a termination signal has come, the runner starts nothing more: runner_run() and the
 * others return -1 at once (status 128+N, no message but a verbose note), and runner_exec()
 * ends nvshim by the signal instead of starting the tool. The caller skips what it would do
 * after the run (retries, probes, reproducers; runner_signal() says a signal came), removes
 * its temporary files, passes on what the child printed, and ends through runner_end(), which
 * makes nvshim end as the child did.
 *
 * runner_exec() replaces nvshim with the tool when nothing remains to be done after it: the
 * fastest and most transparent way, used when there is no log to write and no file to remove.
 *
 * runner_capture() runs a command for nvshim's own use and returns its stdout.
 */
#ifndef NVSHIM_RUNNER_H
#define NVSHIM_RUNNER_H

#include "base/argv.h"

struct run_result {
	int status;     /* exit status, or 128+N */
	int signal;     /* N when killed by a signal, else 0 */
	double wall_ms;
};

/* args->v[0] is the program's argv[0]; `path` is what is executed. Returns 0, or -1 after
 * printing an error when the program could not be started (res->status is then 127). */
int runner_run(const char *path, const struct argv *args, struct run_result *res);

/* As runner_run(), but the program's stderr is read into *held (xmalloc'ed, "" when it printed
 * nothing) instead of reaching nvshim's stderr: for a run whose failure nvshim may diagnose and
 * retry before the user sees it. The caller prints *held when it decides to pass it on. */
int runner_run_held(const char *path, const struct argv *args, struct run_result *res, char **held);
/* Writes held stderr text to nvshim's stderr, byte for byte. */
void runner_write_stderr(const char *text);

/* Runs path with args (args->v[0] is argv[0]; path is not searched for) in the environment
 * `env` (NULL-terminated "NAME=value" strings; NULL: nvshim's own), stdout written to out_file
 * and stderr to err_file (NULL: /dev/null), stdin nvshim's: for commands nvshim runs on its
 * own account, such as the steps it replays to find where a compiler crashed. Returns 0 with
 * res filled in, or -1 (res->status 127) when the program could not be started. */
int runner_run_env(const char *path, const struct argv *args, char *const *env, const char *out_file,
		   const char *err_file, struct run_result *res);

struct runner_job {
	const char *path;
	const struct argv *args;
	const char *out_file; /* stdout goes here; NULL: /dev/null */
	const char *err_file; /* stderr goes here; NULL: /dev/null */
	struct run_result res;
};

/* Runs the jobs, at most `parallel` at once (0: one), stdin inherited, and fills each one's res.
 * Returns 0, or -1 if some job could not be started (its status is then 127). */
int runner_run_many(struct runner_job *jobs, size_t n, unsigned parallel);

/* Replaces nvshim with the program: for when nothing is left to do after it (no log to write,
 * no file to remove, no result to read). The caller sees the program's own exit status or
 * signal, as if it had run the program itself. Returns -1 after an error if exec failed. */
int runner_exec(const char *path, const struct argv *args);

/* Replaces nvshim with args->v[0], found on PATH as a shell would (`nvshim run -- CMD`).
 * Returns -1 after an error if it could not be run. */
int runner_execvp(const struct argv *args);

/* Runs path with args (args->v[0] is argv[0]), stdin inherited and stderr discarded,
 * and returns its whole stdout in *out (xmalloc'ed). Returns the exit status, or -1. */
int runner_capture(const char *path, const struct argv *args, char **out);

/* Keeps the termination signals' handlers installed from now until nvshim ends, not only
 * while a child runs: a signal that comes while nvshim plans is remembered, no child is
 * started after it, and the flow ends through runner_end(). For nvcc mode and CC mode. */
void runner_catch_signals(void);

/* The first termination signal nvshim received (SIGTERM, SIGINT, SIGHUP, SIGQUIT), or 0. */
int runner_signal(void);

/* nvshim's exit status, given the one its flow computed (the tool's status). With no
 * termination signal received: `status`. Otherwise nvshim ends as the tool did, the tool
 * being the program of runner_run() / runner_run_held() (nvcc, a launcher), not nvshim's
 * own runs (probes, replays, queries):
 *   - the tool was running: `status` (nvcc's 255 after SIGTERM, or its own result where it
 *     carried on: nvcc ignores SIGINT and SIGQUIT sent to it alone while a stage runs), or,
 *     where the tool died of a signal, that signal, re-raised with its default action
 *     (nvshim's own core file suppressed);
 *   - the tool had ended before (the signal stopped nvshim's own work after it): `status`;
 *   - the tool had not started: nvshim dies of the signal it received.
 * Call it last, after every temporary file is removed. */
int runner_end(int status);

/* Tells the lifeline's watcher that nvshim ends in order (its children are not to be ended
 * with it). Called at exit, before nvshim dies of a signal it passed on and before an exec;
 * harmless to call twice or without a watcher. */
void runner_lifeline_end(void);

double runner_now_ms(void);

/* The program exec would run for name: name itself when it holds a '/', else the first
 * executable PATH entry (`path`, getenv("PATH") when NULL) that has it; xmalloc'ed, or NULL. */
char *runner_which(const char *name, const char *path);

#endif
