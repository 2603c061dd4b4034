#include "core/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libiberty.h>

#include "core/diag.h"

double runner_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void decode_status(int wstatus, struct run_result *res)
{
	res->signal = 0;
	if (WIFEXITED(wstatus)) {
		res->status = WEXITSTATUS(wstatus);
	} else if (WIFSIGNALED(wstatus)) {
		res->signal = WTERMSIG(wstatus);
		res->status = 128 + res->signal;
	} else {
		res->status = 1;
	}
}

static void on_signal(int sig) { (void)sig; }

/* Reads a whole stream into an xmalloc'ed, NUL-terminated string. */
static char *read_all(FILE *fp)
{
	size_t len = 0, alloc = 256, got;
	char *text = XNEWVEC(char, alloc);
	char buf[4096];
	while (fp && (got = fread(buf, 1, sizeof(buf), fp)) > 0) {
		if (len + got + 1 > alloc) {
			alloc = (len + got + 1) * 2;
			text = XRESIZEVEC(char, text, alloc);
		}
		memcpy(text + len, buf, got);
		len += got;
	}
	text[len] = '\0';
	return text;
}

/* Runs the program with nvshim's stdin and stdout; its stderr is nvshim's too, or, when
 * `held` is not NULL, read into *held. */
static int run_child(const char *path, const struct argv *args, struct run_result *res, char **held)
{
	struct sigaction ign = { 0 }, old_int, old_quit;
	int err = 0, wstatus = 0;
	double start = runner_now_ms();

	res->status = 127;
	res->signal = 0;
	if (held)
		*held = NULL;
	struct pex_obj *pex = pex_init(0, "nvshim", NULL);
	if (!pex)
		return error("cannot run '%s': %s", path, strerror(errno));

	/* A handler, not SIG_IGN: an ignored signal would stay ignored in the child across exec,
	 * and nvcc would no longer stop on ^C. SA_RESTART keeps pex's waitpid going. */
	ign.sa_handler = on_signal;
	ign.sa_flags = SA_RESTART;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);

	int flags = PEX_LAST | (held ? PEX_STDERR_TO_PIPE : 0);
	const char *msg = pex_run(pex, flags, path, args->v, NULL, NULL, &err);
	/* The pipe must be drained before the status can be had. */
	if (!msg && held)
		*held = read_all(pex_read_err(pex, 0));
	int ok = !msg && pex_get_status(pex, 1, &wstatus);

	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	pex_free(pex);
	res->wall_ms = runner_now_ms() - start;
	if (held && !*held)
		*held = xstrdup("");
	if (msg)
		return error("cannot run '%s': %s%s%s", path, msg, err ? ": " : "",
			     err ? strerror(err) : "");
	if (!ok)
		return error("lost the exit status of '%s'", path);
	decode_status(wstatus, res);
	return 0;
}

int runner_run(const char *path, const struct argv *args, struct run_result *res)
{
	return run_child(path, args, res, NULL);
}

int runner_run_held(const char *path, const struct argv *args, struct run_result *res, char **held)
{
	return run_child(path, args, res, held);
}

int runner_run_many(struct runner_job *jobs, size_t n, unsigned parallel)
{
	struct pex_obj **live = XCNEWVEC(struct pex_obj *, n ? n : 1);
	double *start = XCNEWVEC(double, n ? n : 1);
	size_t next = 0, done = 0;
	int rc = 0;
	if (!parallel)
		parallel = 1;
	while (done < n) {
		/* start as many as allowed, then wait for the oldest */
		while (next < n && next - done < parallel) {
			struct runner_job *j = &jobs[next];
			int err = 0;
			j->res.status = 127;
			j->res.signal = 0;
			start[next] = runner_now_ms();
			live[next] = pex_init(0, "nvshim", NULL);
			const char *msg = live[next]
				? pex_run(live[next], PEX_LAST, j->path, j->args->v,
					  j->out_file ? j->out_file : "/dev/null",
					  j->err_file ? j->err_file : "/dev/null", &err)
				: "pex_init failed";
			if (msg) {
				rc = error("cannot run '%s': %s%s%s", j->path, msg, err ? ": " : "",
					   err ? strerror(err) : "");
				if (live[next])
					pex_free(live[next]);
				live[next] = NULL;
			}
			next++;
		}
		struct runner_job *j = &jobs[done];
		int wstatus = 0;
		if (live[done]) {
			if (pex_get_status(live[done], 1, &wstatus))
				decode_status(wstatus, &j->res);
			pex_free(live[done]);
		}
		j->res.wall_ms = runner_now_ms() - start[done];
		done++;
	}
	free(live);
	free(start);
	return rc;
}

void runner_write_stderr(const char *text)
{
	size_t len = strlen(text);
	fflush(stderr);
	while (len) {
		ssize_t n = write(STDERR_FILENO, text, len);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			break;
		}
		text += n;
		len -= (size_t)n;
	}
}

int runner_run_env(const char *path, const struct argv *args, char *const *env, const char *out_file,
		   const char *err_file, struct run_result *res)
{
	int err = 0, wstatus = 0;
	double start = runner_now_ms();
	res->status = 127;
	res->signal = 0;
	struct pex_obj *pex = pex_init(0, "nvshim", NULL);
	if (!pex)
		return -1;
	/* As in run_child: ^C stops the program, and nvshim lives to see it and clean up. */
	struct sigaction ign = { 0 }, old_int, old_quit;
	ign.sa_handler = on_signal;
	ign.sa_flags = SA_RESTART;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	const char *msg = pex_run_in_environment(pex, PEX_LAST, path, args->v, env,
						 out_file ? out_file : "/dev/null",
						 err_file ? err_file : "/dev/null", &err);
	int ok = !msg && pex_get_status(pex, 1, &wstatus);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	pex_free(pex);
	res->wall_ms = runner_now_ms() - start;
	if (!ok)
		return -1;
	decode_status(wstatus, res);
	return 0;
}

int runner_exec(const char *path, const struct argv *args)
{
	execv(path, args->v);
	return error("cannot run '%s': %s", path, strerror(errno));
}

int runner_execvp(const struct argv *args)
{
	if (!args->n)
		return error("no command to run");
	execvp(args->v[0], args->v);
	return error("cannot run '%s': %s", args->v[0], strerror(errno));
}

int runner_capture(const char *path, const struct argv *args, char **out)
{
	int err = 0, wstatus = 0;
	*out = NULL;
	struct pex_obj *pex = pex_init(PEX_USE_PIPES, "nvshim", NULL);
	if (!pex)
		return -1;
	const char *msg = pex_run(pex, 0, path, args->v, NULL, "/dev/null", &err);
	/* The pipe must be drained before the status can be had. */
	char *text = msg ? NULL : read_all(pex_read_output(pex, 0));
	int ok = !msg && pex_get_status(pex, 1, &wstatus);
	pex_free(pex);
	if (!ok) {
		free(text);
		return -1;
	}
	*out = text;
	struct run_result res;
	decode_status(wstatus, &res);
	return res.status;
}
