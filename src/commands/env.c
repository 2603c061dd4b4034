#include "commands/commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

#include "base/argv.h"
#include "base/diag.h"
#include "machine/locate.h"
#include "machine/view.h"
#include "modes/session.h"

/* A word for fish: single quotes, in which only \\ and \' are escapes. */
static void print_fish_word(const char *s)
{
	putchar('\'');
	for (; *s; s++) {
		if (*s == '\\' || *s == '\'')
			putchar('\\');
		putchar(*s);
	}
	putchar('\'');
}

/* NAME=VALUE; export NAME for sh, bash and zsh; set -gx NAME VALUE for fish, where PATH is a
 * list (one word per directory). */
static void print_export(int fish, const char *name, const char *value)
{
	if (fish) {
		printf("set -gx %s", name);
		int list = !strcmp(name, "PATH");
		for (const char *p = value; p;) {
			const char *colon = list ? strchr(p, ':') : NULL;
			char *word = colon ? xstrndup(p, (size_t)(colon - p)) : xstrdup(p);
			putchar(' ');
			print_fish_word(word);
			free(word);
			p = colon ? colon + 1 : NULL;
		}
		printf(";\n");
		return;
	}
	char *q = xstrdup("");
	size_t len = 0;
	argv_shell_quote(&q, &len, value);
	printf("%s=%s; export %s\n", name, q, name);
	free(q);
}

/* The toolkit view of the real nvcc (view.h), or NULL after a warning (a verbose note when
 * `quiet`). */
static char *env_view(struct session *s, const char *shim, int quiet)
{
	char *nvcc, *how, *dir = NULL, *why = NULL;
	if (locate_nvcc(&s->cfg, session_env, &s->self, &nvcc, &how)) {
		if (!quiet)
			warning("no real nvcc: CUDA_HOME and CUDA_PATH are left as they are");
		return NULL;
	}
	if (view_get(s->cfg.cache_dir, nvcc, shim, &dir, &why)) {
		if (quiet)
			diag_note(VERBOSITY_VERBOSE, "no toolkit view of %s (%s): CUDA_HOME and CUDA_PATH "
				  "are left as they are", nvcc, why);
		else
			warning("no toolkit view of %s (%s): CUDA_HOME and CUDA_PATH are left as they are",
				nvcc, why);
	}
	free(why);
	free(nvcc);
	free(how);
	return dir;
}

/* One variable: printed for a shell, or set in nvshim's own environment (ENV_SET). */
static void env_put(int how, const char *name, const char *value)
{
	if (how == ENV_SET) {
		setenv(name, value, 1);
		diag_debug("%s=%s", name, value);
	} else {
		print_export(how == ENV_FISH, name, value);
	}
}

int cmd_env_apply(struct session *s, int how)
{
	char *dir = locate_shim_dir(&s->self);
	if (!dir)
		return -1;
	char *path = xstrdup(dir);
	const char *p = getenv("PATH");
	while (p) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		if (len != strlen(dir) || strncmp(p, dir, len)) {
			char *next = xasprintf("%s:%.*s", path, (int)len, p);
			free(path);
			path = next;
		}
		p = colon ? colon + 1 : NULL;
	}
	char *nvcc = concat(dir, "/nvcc", NULL);
	/* the view is found before PATH changes: the real nvcc as the caller's PATH has it */
	char *view = env_view(s, nvcc, how == ENV_SET);
	env_put(how, "PATH", path);
	env_put(how, "CUDACXX", nvcc);
	env_put(how, "PYTORCH_NVCC", nvcc);
	env_put(how, "CUDA_NVCC_EXECUTABLE", nvcc);
	if (view) {
		env_put(how, "CUDA_HOME", view);
		env_put(how, "CUDA_PATH", view);
		env_put(how, "CUDAToolkit_ROOT", view);
	}
	free(view);
	free(nvcc);
	free(path);
	free(dir);
	return 0;
}

/* `nvshim toolkit-view`: the view's directory, made when it is not there. */
int cmd_toolkit_view(int n, char **args)
{
	struct session s;
	(void)args;
	if (n)
		return error("usage: nvshim toolkit-view (prints the toolkit view's directory)");
	session_init(&s, 0, NULL);
	char *shim = locate_shim_dir(&s.self);
	char *nvcc = shim ? concat(shim, "/nvcc", NULL) : NULL;
	char *dir = nvcc ? env_view(&s, nvcc, 0) : NULL;
	if (!shim)
		error("no libexec/nvshim/bin/nvcc beside %s", s.self.exe ? s.self.exe : "nvshim");
	if (dir)
		printf("%s\n", dir);
	free(dir);
	free(nvcc);
	free(shim);
	session_release(&s);
	return dir ? 0 : 1;
}

/* `eval "$(nvshim env)"`: nvshim's nvcc first on PATH (once); CUDACXX, PYTORCH_NVCC and
 * CUDA_NVCC_EXECUTABLE (FindCUDA) name it; CUDA_HOME, CUDA_PATH and CUDAToolkit_ROOT name the
 * toolkit view, whose bin/nvcc is nvshim. --shell=sh, bash or zsh (the default, one syntax) or
 * fish (`nvshim env --shell=fish | source`). */
int cmd_env(int n, char **args)
{
	struct session s;
	int fish = 0;
	if (n == 1 && !strncmp(args[0], "--shell=", 8)) {
		const char *sh = args[0] + 8;
		fish = !strcmp(sh, "fish");
		if (!fish && strcmp(sh, "sh") && strcmp(sh, "bash") && strcmp(sh, "zsh"))
			return error("nvshim env: unknown shell '%s' (sh, bash, zsh or fish)", sh);
		n = 0;
	}
	if (n)
		return error("usage: nvshim env [--shell=sh|bash|zsh|fish] (then: eval \"$(nvshim "
			     "env)\", or in fish: nvshim env --shell=fish | source)");
	session_init(&s, 0, NULL);
	if (cmd_env_apply(&s, fish ? ENV_FISH : ENV_SH)) {
		error("no libexec/nvshim/bin/nvcc beside %s: run the nvshim of an installed prefix or "
		      "of a build tree", s.self.exe ? s.self.exe : "nvshim");
		session_release(&s);
		return 1;
	}
	session_release(&s);
	return 0;
}
