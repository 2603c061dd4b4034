#include "commands/commands.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libiberty.h>

#include "base/argv.h"
#include "base/diag.h"
#include "machine/locate.h"
#include "machine/view.h"
#include "modes/cc.h"
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
 * `quiet`). *root (may be NULL) gets the real toolkit's root as the real nvcc was named
 * (<root>/bin/nvcc, not resolved: /usr/local/cuda stays so), or NULL. */
static char *env_view(struct session *s, const char *shim, int quiet, char **root)
{
	char *nvcc, *how, *dir = NULL, *why = NULL;
	if (root)
		*root = NULL;
	if (locate_nvcc(&s->cfg, session_env, &s->self, &nvcc, &how)) {
		if (!quiet)
			warning("no real nvcc: CUDA_HOME and CUDA_PATH are left as they are");
		return NULL;
	}
	size_t n = strlen(nvcc);
	if (root && n > 9 && !strcmp(nvcc + n - 9, "/bin/nvcc"))
		*root = xstrndup(nvcc, n - 9);
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

/* 1 if the len bytes at p name one of the directories in skip. */
static int env_is_one_of(const char *p, size_t len, const char *const *skip, size_t nskip)
{
	for (size_t i = 0; i < nskip; i++)
		if (skip[i] && strlen(skip[i]) == len && !strncmp(p, skip[i], len))
			return 1;
	return 0;
}

/* The versioned host compilers on PATH (gcc-12, g++-12, clang-15, ...: cc_is_versioned) get
 * their name in CC mode's directory, a hard link to nvshim (a symbolic one across file
 * systems), where that directory can be written; a name already there is kept. Returns how
 * many such compilers are on PATH without their name there (0 when all are reached). */
static size_t env_versioned_compilers(struct session *s, const char *ccdir)
{
	size_t missing = 0;
	if (!s->self.exe)
		return 0;
	for (const char *p = getenv("PATH"); p && *p;) {
		size_t len = strcspn(p, ":");
		char *d = xstrndup(p, len);
		DIR *dir = len && strcmp(d, ccdir) ? opendir(d) : NULL;
		for (struct dirent *e; dir && (e = readdir(dir));) {
			if (!cc_is_versioned(e->d_name))
				continue;
			char *there = concat(ccdir, "/", e->d_name, NULL);
			char *real = concat(d, "/", e->d_name, NULL);
			int is_self;
			struct stat sb;
			/* a name made by an earlier nvshim (upgraded since: another file) is made again */
			int here = !lstat(there, &sb);
			/* only nvshim makes these names: a file that is not this nvshim is the hard
			 * link of an earlier one (nvshim upgraded since) */
			if (here && S_ISREG(sb.st_mode) && s->self.known &&
			    (sb.st_dev != s->self.dev || sb.st_ino != s->self.ino))
				here = unlink(there) != 0;
			if (!here && locate_is_candidate(&s->self, real, &is_self) &&
			    link(s->self.exe, there) && symlink(s->self.exe, there)) {
				diag_note(VERBOSITY_VERBOSE, "%s is not reached: %s cannot be written (%s)",
					  e->d_name, ccdir, strerror(errno));
				missing++;
			}
			free(there);
			free(real);
		}
		if (dir)
			closedir(dir);
		free(d);
		p += len + (p[len] == ':');
	}
	return missing;
}

char *cmd_env_cc_dir(const struct session *s)
{
	char *dir = locate_shim_dir(&s->self);
	char *cc = dir ? concat(dir, "/../cc", NULL) : NULL;
	char *resolved = cc && !access(cc, X_OK) ? lrealpath(cc) : NULL;
	free(dir);
	free(cc);
	return resolved;
}

int cmd_env_apply(struct session *s, int how)
{
	char *dir = locate_shim_dir(&s->self);
	if (!dir)
		return -1;
	/* CC mode in front of the host compilers a build runs by name (host_compilers) */
	char *ccdir = cmd_env_cc_dir(s);
	int cc_on = ccdir && strcmp(s->cfg.host_compilers, "off");
	if (cc_on)
		env_versioned_compilers(s, ccdir);
	/* off: taken out of PATH where an earlier `nvshim env` put it */
	char *path = cc_on ? concat(dir, ":", ccdir, NULL) : xstrdup(dir);
	const char *const skip[] = { dir, ccdir };
	const char *p = getenv("PATH");
	while (p) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		if (!env_is_one_of(p, len, skip, 2)) {
			char *next = xasprintf("%s:%.*s", path, (int)len, p);
			free(path);
			path = next;
		}
		p = colon ? colon + 1 : NULL;
	}
	char *nvcc = concat(dir, "/nvcc", NULL);
	/* the view is found before PATH changes: the real nvcc as the caller's PATH has it */
	char *root = NULL;
	char *view = env_view(s, nvcc, how == ENV_SET, &root);
	env_put(how, "PATH", path);
	env_put(how, "CUDACXX", nvcc);
	env_put(how, "PYTORCH_NVCC", nvcc);
	env_put(how, "CUDA_NVCC_EXECUTABLE", nvcc);
	if (view) {
		env_put(how, "CUDA_HOME", view);
		env_put(how, "CUDA_PATH", view);
	}
	/* FindCUDAToolkit keeps its root's paths in CMakeCache.txt and in the targets it
	 * imports (CUDA::cudart): the real toolkit, so that nothing a build writes names the
	 * view; CMake's CUDA language reaches nvshim through CUDACXX */
	if (view && root)
		env_put(how, "CUDAToolkit_ROOT", root);
	free(root);
	free(view);
	free(nvcc);
	free(path);
	free(ccdir);
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
	char *dir = nvcc ? env_view(&s, nvcc, 0, NULL) : NULL;
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
