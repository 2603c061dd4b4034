#include "nvshim/runner.h"

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

#include "nvshim/diag.h"

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

int runner_run(const char *path, const struct argv *args, struct run_result *res)
{
	struct sigaction ign = { 0 }, old_int, old_quit;
	int err = 0, wstatus = 0;
	double start = runner_now_ms();

	res->status = 127;
	res->signal = 0;
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

	const char *msg = pex_run(pex, PEX_LAST, path, args->v, NULL, NULL, &err);
	int ok = !msg && pex_get_status(pex, 1, &wstatus);

	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	pex_free(pex);
	res->wall_ms = runner_now_ms() - start;
	if (msg)
		return error("cannot run '%s': %s%s%s", path, msg, err ? ": " : "",
			     err ? strerror(err) : "");
	if (!ok)
		return error("lost the exit status of '%s'", path);
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
	FILE *fp = msg ? NULL : pex_read_output(pex, 0);
	size_t len = 0, alloc = 0;
	char buf[4096];
	size_t got;
	char *text = NULL;
	while (fp && (got = fread(buf, 1, sizeof(buf), fp)) > 0) {
		if (len + got + 1 > alloc) {
			alloc = (len + got + 1) * 2;
			text = XRESIZEVEC(char, text, alloc);
		}
		memcpy(text + len, buf, got);
		len += got;
	}
	int ok = !msg && pex_get_status(pex, 1, &wstatus);
	pex_free(pex);
	if (!ok) {
		free(text);
		return -1;
	}
	if (!text)
		text = xstrdup("");
	else
		text[len] = '\0';
	*out = text;
	struct run_result res;
	decode_status(wstatus, &res);
	return res.status;
}
