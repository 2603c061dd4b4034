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
#include "base/cache.h"
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

/* A variable taken away: printed for a shell, or unset in nvshim's own environment. */
static void env_unset(int how, const char *name)
{
	if (how == ENV_SET)
		unsetenv(name);
	else if (how == ENV_FISH)
		printf("set -e %s;\n", name);
	else
		printf("unset %s\n", name);
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

/* Where the versioned host compilers' names live: $XDG_DATA_HOME/nvshim/cc, else
 * ~/.local/share/nvshim/cc (xmalloc'ed), or NULL. Not the install (a package manager would
 * find files it does not own there) and not the cache (a compiler CMake found there would be
 * kept in CMakeCache.txt and go away with it). */
static char *env_versioned_dir(void)
{
	const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
	if (xdg && *xdg == '/')
		return concat(xdg, "/nvshim/cc", NULL);
	return home && *home ? concat(home, "/.local/share/nvshim/cc", NULL) : NULL;
}

/* The versioned host compilers on PATH (gcc-12, g++-12, clang-15, ...: cc_is_versioned) get
 * their name in vdir, a symbolic link to nvshim (never a hard link: it would keep an upgraded
 * nvshim's old file alive); a link that leads elsewhere is made again, and one whose compiler
 * is no longer on PATH is taken away. Returns how many names vdir has. */
static size_t env_versioned_compilers(struct session *s, const char *vdir, const char *const *ours,
				      size_t nours)
{
	size_t have = 0;
	struct argv found = ARGV_INIT;
	if (!s->self.exe)
		return 0;
	for (const char *p = getenv("PATH"); p && *p;) {
		size_t len = strcspn(p, ":");
		char *d = xstrndup(p, len);
		DIR *dir = len && !env_is_one_of(p, len, ours, nours) && strcmp(d, vdir) ? opendir(d) : NULL;
		for (struct dirent *e; dir && (e = readdir(dir));) {
			int is_self;
			char *real = concat(d, "/", e->d_name, NULL);
			if (cc_is_versioned(e->d_name) && locate_is_candidate(&s->self, real, &is_self))
				argv_push(&found, e->d_name);
			free(real);
		}
		if (dir)
			closedir(dir);
		free(d);
		p += len + (p[len] == ':');
	}
	if (found.n && cache_mkdirs(vdir))
		diag_note(VERBOSITY_VERBOSE, "the versioned host compilers are not reached: cannot make %s (%s)",
			  vdir, strerror(errno));
	for (size_t i = 0; i < found.n; i++) {
		char *there = concat(vdir, "/", found.v[i], NULL);
		char buf[4096];
		ssize_t n = readlink(there, buf, sizeof(buf) - 1);
		if (n < 0 || (size_t)n != strlen(s->self.exe) || memcmp(buf, s->self.exe, (size_t)n)) {
			unlink(there);
			if (symlink(s->self.exe, there))
				diag_note(VERBOSITY_VERBOSE, "%s is not reached: cannot make %s (%s)", found.v[i],
					  there, strerror(errno));
		}
		free(there);
	}
	/* names whose compiler left PATH */
	DIR *dir = opendir(vdir);
	for (struct dirent *e; dir && (e = readdir(dir));) {
		int kept = 0;
		for (size_t i = 0; i < found.n && !kept; i++)
			kept = !strcmp(found.v[i], e->d_name);
		if (kept)
			have++;
		else if (cc_is_versioned(e->d_name)) {
			char *gone = concat(vdir, "/", e->d_name, NULL);
			unlink(gone);
			free(gone);
		}
	}
	if (dir)
		closedir(dir);
	argv_release(&found);
	return have;
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
	char *ccdir = cmd_env_cc_dir(s), *vdir = env_versioned_dir();
	int cc_on = ccdir && strcmp(s->cfg.host_compilers, "off");
	const char *const skip[] = { dir, ccdir, vdir };
	int versioned = cc_on && vdir && env_versioned_compilers(s, vdir, skip, 2) > 0;
	/* off: taken out of PATH where an earlier `nvshim env` put it */
	char *path = !cc_on ? xstrdup(dir)
		     : versioned ? concat(dir, ":", ccdir, ":", vdir, NULL) : concat(dir, ":", ccdir, NULL);
	const char *p = getenv("PATH");
	while (p) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		if (!env_is_one_of(p, len, skip, 3)) {
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
	}
	/* CUDAToolkit_ROOT is not set: FindCUDAToolkit searches it first for its libraries and
	 * keeps what it finds in CMakeCache.txt and the targets it imports (CUDA::cudart), so a
	 * view there is a path into nvshim's cache in the build. Without it, FindCUDAToolkit
	 * takes nvshim's nvcc from PATH and the real toolkit from that nvcc's `-v` (TOP=). One an
	 * earlier `nvshim env` set to a view is taken away. */
	const char *ctr = getenv("CUDAToolkit_ROOT");
	char *ctr_real = ctr && *ctr ? view_real_nvcc(ctr) : NULL;
	if (ctr_real)
		env_unset(how, "CUDAToolkit_ROOT");
	free(ctr_real);
	free(view);
	free(nvcc);
	free(path);
	free(ccdir);
	free(vdir);
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

/* `eval "$(nvshim env)"`: nvshim's nvcc first on PATH, CC mode's host compilers after it
 * (host_compilers; each once); CUDACXX, PYTORCH_NVCC and CUDA_NVCC_EXECUTABLE (FindCUDA) name
 * nvshim's nvcc; CUDA_HOME and CUDA_PATH the toolkit view, whose bin/nvcc is nvshim;
 * CUDAToolkit_ROOT is unset where it names a view (what CMake keeps in its cache). --shell=sh, bash or zsh
 * (the default, one syntax) or fish (`nvshim env --shell=fish | source`). */
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
