#include "machine/locate.h"

#include <errno.h>
#include <glob.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libiberty.h>

#include "base/diag.h"
#include "machine/toolkit.h"
#include "machine/view.h"

#ifndef NVSHIM_REL_BINDIR
#define NVSHIM_REL_BINDIR "bin"
#endif

#define LIBEXEC_BIN "/libexec/nvshim/bin"
#define LIBEXEC_CC "/libexec/nvshim/cc"

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

/* Notes the twin at path (see locate.h); returns 1 if it is there. */
static int find_twin(struct self *self, const char *path)
{
	struct stat sb;
	if (stat(path, &sb) || !S_ISREG(sb.st_mode))
		return 0;
	self->twin_dev = sb.st_dev;
	self->twin_ino = sb.st_ino;
	self->twin_known = 1;
	return 1;
}

static void locate_twin(struct self *self)
{
	/* An absolute CMAKE_INSTALL_BINDIR is not relative to the prefix: use bin/. */
	const char *bindir = NVSHIM_REL_BINDIR[0] == '/' ? "bin" : NVSHIM_REL_BINDIR;
	const char *under = ends_with(self->exe_dir, LIBEXEC_BIN)  ? LIBEXEC_BIN
			    : ends_with(self->exe_dir, LIBEXEC_CC) ? LIBEXEC_CC
								   : NULL;
	if (under) {
		/* Run as <prefix>/libexec/nvshim/bin/nvcc or libexec/nvshim/cc/NAME: the twin is
		 * <prefix>/bin/nvshim, or <build>/nvshim in a build tree. */
		size_t plen = strlen(self->exe_dir) - strlen(under);
		char *prefix = xstrndup(self->exe_dir, plen);
		char *bin = concat(prefix, "/", bindir, "/nvshim", NULL);
		char *flat = concat(prefix, "/nvshim", NULL);
		const char *twin = find_twin(self, bin) ? bin : find_twin(self, flat) ? flat : NULL;
		if (twin) {
			free(self->exe_dir);
			self->exe_dir = xstrndup(twin, (size_t)(strrchr(twin, '/') - twin));
		}
		free(prefix);
		free(bin);
		free(flat);
		return;
	}
	char *installed = concat(self->exe_dir, "/.." LIBEXEC_BIN "/nvcc", NULL);
	char *build = concat(self->exe_dir, LIBEXEC_BIN "/nvcc", NULL);
	if (!find_twin(self, installed))
		find_twin(self, build);
	free(installed);
	free(build);
}

void locate_self(struct self *self)
{
	struct stat sb;
	memset(self, 0, sizeof(*self));
	char buf[4096];
	/* The kernel's link is already the resolved path. */
	ssize_t len = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	self->exe = len > 0 ? xstrndup(buf, (size_t)len) : NULL;
	if (self->exe && self->exe[0] == '/') {
		char *slash = strrchr(self->exe, '/');
		self->exe_dir = xstrndup(self->exe, (size_t)(slash - self->exe) + (slash == self->exe));
	} else {
		free(self->exe);
		self->exe = NULL;
	}
	if (!stat("/proc/self/exe", &sb)) {
		self->dev = sb.st_dev;
		self->ino = sb.st_ino;
		self->size = sb.st_size;
		self->known = 1;
	}
	if (self->exe_dir)
		locate_twin(self);
}

void locate_self_release(struct self *self)
{
	free(self->exe);
	free(self->exe_dir);
	memset(self, 0, sizeof(*self));
}

/* 1 if the file at path, of the running nvshim's size, has its bytes too. */
static int same_bytes_as_self(const char *path)
{
	int a = open("/proc/self/exe", O_RDONLY | O_CLOEXEC), b = open(path, O_RDONLY | O_CLOEXEC);
	int same = a >= 0 && b >= 0;
	char x[65536], y[65536];
	while (same) {
		ssize_t n = read(a, x, sizeof(x)), m = read(b, y, sizeof(y));
		if (n < 0 || n != m || memcmp(x, y, (size_t)n))
			same = 0;
		else if (!n)
			break;
	}
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
	return same;
}

int locate_is_candidate(const struct self *self, const char *path, int *is_self)
{
	struct stat sb;
	*is_self = 0;
	if (stat(path, &sb) || !S_ISREG(sb.st_mode) || access(path, X_OK))
		return 0;
	if ((self->known && sb.st_dev == self->dev && sb.st_ino == self->ino) ||
	    (self->twin_known && sb.st_dev == self->twin_dev && sb.st_ino == self->twin_ino) ||
	    (self->known && sb.st_size == self->size && same_bytes_as_self(path))) {
		*is_self = 1;
		return 0;
	}
	return 1;
}

int locate_depth(config_getenv_fn env)
{
	const char *v = env(LOCATE_DEPTH_VAR);
	if (!v)
		return 0;
	char *end;
	long d = strtol(v, &end, 10);
	return (*end || d < 0 || d > 1000) ? 0 : (int)d;
}

/* The first nvcc on PATH that is the file `real` under another name (a link to it or to a
 * directory above it), not inside a view, xmalloc'ed; NULL when there is none. */
static char *same_on_path(const struct self *self, config_getenv_fn env, const char *real)
{
	struct stat want, sb;
	if (stat(real, &want))
		return NULL;
	for (const char *p = env("PATH"); p && *p;) {
		size_t len = strcspn(p, ":");
		char *cand = len ? xasprintf("%.*s/nvcc", (int)len, p) : NULL;
		char *root = cand ? toolkit_root(cand) : NULL;
		char *marker = root ? view_real_nvcc(root) : NULL;
		int is_self;
		if (cand && !marker && strcmp(cand, real) && !stat(cand, &sb) && sb.st_dev == want.st_dev &&
		    sb.st_ino == want.st_ino && locate_is_candidate(self, cand, &is_self)) {
			free(root);
			return cand;
		}
		free(marker);
		free(root);
		free(cand);
		p += len + (p[len] == ':');
	}
	return NULL;
}

/* When root is a toolkit view (view.h), made by this nvshim or another one (a build tree, another
 * prefix), the real nvcc it stands for: a view's bin/nvcc is never taken for the real one.
 * Returns 1 with *path and *how set (how: "`what` (nvshim's toolkit view of ...)"). */
static int try_view(const struct self *self, config_getenv_fn env, const char *root, const char *what,
		    char **path, char **how)
{
	char *link = view_real_nvcc(root);
	int is_self;
	if (!link)
		return 0;
	char *real = lrealpath(link);
	free(link);
	if (real && locate_is_candidate(self, real, &is_self)) {
		char *real_root = toolkit_root(real);
		/* run by the name the caller's PATH gives it (/usr/local/cuda/bin/nvcc rather than
		 * /usr/local/cuda-13.0/bin/nvcc): nvcc records paths derived from its own location
		 * in what it writes, so only that name gives plain nvcc's bytes */
		char *named = same_on_path(self, env, real);
		if (named) {
			free(real);
			real = named;
		}
		*path = real;
		*how = concat(what, " (nvshim's toolkit view of ", real_root, ")", NULL);
		free(real_root);
		return 1;
	}
	diag_debug("skipped the toolkit view %s: its real nvcc is gone or is nvshim", root);
	free(real);
	return 0;
}

static int try_dir_var(const struct self *self, config_getenv_fn env, const char *var, char **path,
		       char **how)
{
	const char *dir = env(var);
	int is_self;
	if (!dir || !*dir)
		return 0;
	char *view_what = concat("$", var, NULL);
	int in_view = try_view(self, env, dir, view_what, path, how);
	free(view_what);
	if (in_view)
		return 1;
	char *p = concat(dir, "/bin/nvcc", NULL);
	if (locate_is_candidate(self, p, &is_self)) {
		*path = p;
		*how = concat("$", var, NULL);
		return 1;
	}
	free(p);
	if (is_self)
		diag_debug("skipped %s/bin/nvcc: it is nvshim itself", dir);
	return 0;
}

int locate_nvcc(const struct config *c, config_getenv_fn env, const struct self *self, char **path,
		char **how)
{
	int is_self;
	const size_t real_index = (size_t)(config_item_find("real_nvcc") - config_items);

	*path = NULL;
	*how = NULL;
	if (c->real_nvcc && *c->real_nvcc) {
		const char *origin = c->origin[real_index];
		if (locate_is_candidate(self, c->real_nvcc, &is_self)) {
			*path = xstrdup(c->real_nvcc);
			*how = concat("real_nvcc (", origin, ")", NULL);
			return 0;
		}
		if (is_self)
			return error("real_nvcc '%s' (%s) is nvshim itself; point it at the toolkit's nvcc",
				     c->real_nvcc, origin);
		return error("real_nvcc '%s' (%s) is not an executable file", c->real_nvcc, origin);
	}
	if (try_dir_var(self, env, "CUDA_HOME", path, how) ||
	    try_dir_var(self, env, "CUDA_PATH", path, how))
		return 0;

	const char *p = env("PATH");
	while (p) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		char *dir = len ? xstrndup(p, len) : xstrdup(".");
		char *cand = concat(dir, "/nvcc", NULL);
		free(dir);
		/* A view's bin/ on PATH: the real nvcc the view stands for. */
		char *root = toolkit_root(cand);
		int in_view = root && try_view(self, env, root, "PATH", path, how);
		free(root);
		if (in_view) {
			free(cand);
			return 0;
		}
		if (locate_is_candidate(self, cand, &is_self)) {
			*path = cand;
			*how = xstrdup("PATH");
			return 0;
		}
		if (is_self)
			diag_debug("skipped %s on PATH: it is nvshim itself", cand);
		free(cand);
		p = colon ? colon + 1 : NULL;
	}
	if (locate_is_candidate(self, "/usr/local/cuda/bin/nvcc", &is_self)) {
		*path = xstrdup("/usr/local/cuda/bin/nvcc");
		*how = xstrdup("the default location");
		return 0;
	}
	return error("cannot find the real nvcc: none in $CUDA_HOME, $CUDA_PATH, on PATH (other than "
		     "nvshim itself) or in /usr/local/cuda/bin; set NVSHIM_NVCC to its path");
}

char *locate_first_on_path(const struct self *self, config_getenv_fn env, const char *name,
			   int *is_self)
{
	*is_self = 0;
	for (const char *p = env("PATH"); p;) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		char *cand = xasprintf("%.*s/%s", (int)len, len ? p : ".", name);
		if (locate_is_candidate(self, cand, is_self) || *is_self)
			return cand;
		free(cand);
		p = colon ? colon + 1 : NULL;
	}
	return NULL;
}

char *locate_on_path(const struct self *self, config_getenv_fn env, const char *name)
{
	int is_self;
	const char *p = env("PATH");
	while (p) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		char *dir = len ? xstrndup(p, len) : xstrdup(".");
		char *cand = concat(dir, "/", name, NULL);
		free(dir);
		if (locate_is_candidate(self, cand, &is_self))
			return cand;
		if (is_self)
			diag_debug("skipped %s on PATH: it is nvshim itself", cand);
		free(cand);
		p = colon ? colon + 1 : NULL;
	}
	return NULL;
}

char *locate_shim_dir(const struct self *self)
{
	static const char *const rel[] = { "/.." LIBEXEC_BIN, LIBEXEC_BIN };
	for (size_t i = 0; self->exe_dir && i < 2; i++) {
		char *dir = concat(self->exe_dir, rel[i], NULL);
		char *nvcc = concat(dir, "/nvcc", NULL);
		char *resolved = access(nvcc, X_OK) ? NULL : lrealpath(dir);
		free(dir);
		free(nvcc);
		if (resolved)
			return resolved;
	}
	return NULL;
}

void locate_python_sites(struct argv *out)
{
	struct argv patterns = ARGV_INIT;
	const char *path = getenv("PATH"), *home = getenv("HOME");
	for (const char *p = path; p && *p;) {
		const char *c = strchr(p, ':');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		if (n > 4 && n < 1024 && !memcmp(p + n - 4, "/bin", 4))
			argv_pushf(&patterns, "%.*s/lib/python3*/site-packages", (int)(n - 4), p);
		p = c ? c + 1 : NULL;
	}
	if (home && *home)
		argv_pushf(&patterns, "%s/.local/lib/python3*/site-packages", home);
	for (size_t i = 0; i < patterns.n; i++) {
		glob_t g;
		/* GLOB_MARK (POSIX, unlike GLOB_ONLYDIR) marks directories */
		if (glob(patterns.v[i], GLOB_MARK, NULL, &g))
			continue;
		for (size_t k = 0; k < g.gl_pathc; k++) {
			const char *d = g.gl_pathv[k];
			size_t n = strlen(d);
			if (n > 1 && d[n - 1] == '/')
				argv_pushf(out, "%.*s", (int)(n - 1), d);
		}
		globfree(&g);
	}
	argv_release(&patterns);
}
