#include "machine/view.h"

#include <ctype.h>
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
#include "base/strbuf.h"
#include "base/fault.h"
#include "buildwide/build.h"
#include "machine/toolkit.h"

char *view_real_nvcc(const char *root)
{
	struct stat sb;
	char *link = concat(root, "/" VIEW_REAL_NVCC, NULL);
	if (lstat(link, &sb) || !S_ISLNK(sb.st_mode)) {
		free(link);
		return NULL;
	}
	return link;
}

/* 1 if a and b name the same file (links followed). */
static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* 1 if dir is a whole view of real_nvcc with shim as its nvcc. */
static int view_whole(const char *dir, const char *real_nvcc, const char *shim)
{
	char *real = concat(dir, "/" VIEW_REAL_NVCC, NULL);
	char *nvcc = concat(dir, "/bin/nvcc", NULL);
	int ok = same_file(real, real_nvcc) && same_file(nvcc, shim);
	free(real);
	free(nvcc);
	return ok;
}

/* CUDA 12's names for what CUDA 13.0 moved, each with its new place under include/: in the
 * view's include/ they are links to it (the same files nvcc 13 compiles against). */
static const struct {
	const char *name, *to;
} moved_names[] = {
	{ "thrust", "cccl/thrust" },
	{ "cub", "cccl/cub" },
	{ "cuda", "cccl/cuda" },
	{ "nv", "cccl/nv" },
	{ "nvToolsExt.h", "nvtx3/nvToolsExt.h" },
	{ "nvToolsExtCuda.h", "nvtx3/nvToolsExtCuda.h" },
	{ "nvToolsExtCudaRt.h", "nvtx3/nvToolsExtCudaRt.h" },
	{ "nvToolsExtOpenCL.h", "nvtx3/nvToolsExtOpenCL.h" },
	{ "nvToolsExtSync.h", "nvtx3/nvToolsExtSync.h" },
	/* what NVTX 3's headers include with quotes, found beside the name they were included by */
	{ "nvtxDetail", "nvtx3/nvtxDetail" },
};

/* CUDA 13.0 has no libnvToolsExt: the view's lib64/ has this linker script in its place, which
 * adds nothing to a link (NVTX 3, which the headers above are, needs no library). */
static const char nvtx_script[] =
	"/* nvshim's toolkit view: CUDA 13.0 has no libnvToolsExt. NVTX 3 (include/nvtx3), which the\n"
	" * view's include/nvToolsExt.h is, needs no library: this linker script adds nothing. */\n";

static int view_exists(const char *dir, const char *name)
{
	struct stat sb;
	char *p = concat(dir, "/", name, NULL);
	int ok = !lstat(p, &sb);
	free(p);
	return ok;
}

/* 1 if the real include/ lacks a name of moved[] whose new place it has. */
static int view_needs_include(const char *from)
{
	for (size_t i = 0; i < sizeof(moved_names) / sizeof(moved_names[0]); i++)
		if (!view_exists(from, moved_names[i].name) && view_exists(from, moved_names[i].to))
			return 1;
	return 0;
}

/* 1 if the real lib64/ lacks libnvToolsExt.so where the toolkit has NVTX 3. */
static int view_needs_lib(const char *root, const char *from)
{
	char *inc = concat(root, "/include", NULL);
	int yes = !view_exists(from, "libnvToolsExt.so") && view_exists(inc, "nvtx3/nvToolsExt.h");
	free(inc);
	return yes;
}

enum fill { FILL_ROOT, FILL_BIN, FILL_PLAIN };

/* Links every entry of from/ into to/: at the root, bin/ as a directory of links with shim as its
 * nvcc, and include/ and lib64/ as directories of links with CUDA 12's names of what 13.0 moved
 * (moved_names[], nvtx_script) when the toolkit lacks them. Returns 0, or -1 with *why. */
static int view_fill(const char *from, const char *to, const char *shim, enum fill how, char **why)
{
	DIR *d = opendir(from);
	struct dirent *e;
	int rc = 0;
	if (!d) {
		*why = xasprintf("cannot read %s: %s", from, strerror(errno));
		return -1;
	}
	while (!rc && (e = readdir(d))) {
		const char *name = e->d_name;
		if (!strcmp(name, ".") || !strcmp(name, "..") || !strcmp(name, VIEW_REAL_NVCC))
			continue;
		char *src = concat(from, "/", name, NULL);
		char *dst = concat(to, "/", name, NULL);
		int bin = how == FILL_ROOT && !strcmp(name, "bin");
		int inc = how == FILL_ROOT && !strcmp(name, "include") && view_needs_include(src);
		int lib = how == FILL_ROOT && !strcmp(name, "lib64") && view_needs_lib(from, src);
		if (bin || inc || lib) {
			if (mkdir(dst, 0755)) {
				*why = xasprintf("cannot make %s: %s", dst, strerror(errno));
				rc = -1;
			} else {
				rc = view_fill(src, dst, shim, bin ? FILL_BIN : FILL_PLAIN, why);
			}
			for (size_t i = 0; !rc && inc && i < sizeof(moved_names) / sizeof(moved_names[0]); i++) {
				if (view_exists(src, moved_names[i].name) || !view_exists(src, moved_names[i].to))
					continue;
				char *at = concat(dst, "/", moved_names[i].name, NULL);
				char *target = concat(src, "/", moved_names[i].to, NULL);
				if (symlink(target, at)) {
					*why = xasprintf("cannot link %s: %s", at, strerror(errno));
					rc = -1;
				}
				free(at);
				free(target);
			}
			if (!rc && lib) {
				char *at = concat(dst, "/libnvToolsExt.so", NULL);
				FILE *f = fopen(at, "w");
				int ok = f && fputs(nvtx_script, f) >= 0;
				if (f && fclose(f))
					ok = 0;
				if (!ok) {
					*why = xasprintf("cannot write %s: %s", at, strerror(errno));
					rc = -1;
				}
				free(at);
			}
		} else if (symlink(how == FILL_BIN && !strcmp(name, "nvcc") ? shim : src, dst)) {
			*why = xasprintf("cannot link %s: %s", dst, strerror(errno));
			rc = -1;
		}
		free(src);
		free(dst);
	}
	closedir(d);
	return rc;
}

/* A file name made of name: letters, digits, '.', '_' and '-' kept, anything else '_'
 * (xmalloc'ed). */
static char *view_safe(const char *name)
{
	char *safe = xstrdup(*name ? name : "root");
	for (char *p = safe; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("._-", *p))
			*p = '_';
	return safe;
}

/* The hash of what identifies the pair, as 16 hex digits in out; -1 when a file cannot be
 * read. */
static int view_hash(const char *root, const char *real_nvcc, const char *shim, char out[17])
{
	char *bin = concat(root, "/bin", NULL);
	char *keys[3] = { cache_file_key(real_nvcc), cache_file_key(root), cache_file_key(bin) };
	int rc = -1;
	free(bin);
	if (keys[0] && keys[1] && keys[2]) {
		char *all = concat("toolkit-view 3\n", shim, "\n", root, "\n", keys[0], "\n", keys[1],
				   "\n", keys[2], "\n", NULL);
		build_hash(all, out);
		free(all);
		rc = 0;
	}
	for (int i = 0; i < 3; i++)
		free(keys[i]);
	return rc;
}

/* The view's path for this pair (xmalloc'ed, resolved inputs in *real and *shim), or NULL
 * with *why. */
static char *view_where(const char *cache_dir, const char *real_nvcc, const char *shim_nvcc,
			char **real, char **shim, char **root, char **why)
{
	char hash[17];
	*real = lrealpath(real_nvcc);
	*shim = lrealpath(shim_nvcc);
	*root = *real ? toolkit_root(*real) : NULL;
	if (!cache_dir || !*cache_dir) {
		*why = xstrdup("no cache_dir to keep it in");
		return NULL;
	}
	if (!*real || !*shim || !*root ||
	    strcmp(*real + (strcmp(*root, "/") ? strlen(*root) : 0), "/bin/nvcc")) {
		*why = xasprintf("%s is not the bin/nvcc of a toolkit", *real ? *real : real_nvcc);
		return NULL;
	}
	/* never a view of a view, nor of an nvshim's own libexec/nvshim (its bin/nvcc is nvshim) */
	char *marker = view_real_nvcc(*root);
	size_t rl = strlen(*root), ll = strlen("/libexec/nvshim");
	int shim_dir = rl >= ll && !strcmp(*root + rl - ll, "/libexec/nvshim");
	int is_view = marker != NULL;
	free(marker);
	if (is_view || shim_dir || same_file(*real, *shim)) {
		*why = xasprintf("%s is nvshim or a toolkit view, not a real toolkit's nvcc", *real);
		return NULL;
	}
	if (view_hash(*root, *real, *shim, hash)) {
		*why = xasprintf("cannot read %s", *root);
		return NULL;
	}
	/* <cache_dir>/toolkit-view/<leaf>-<hash>/<leaf>: the view has the real root's last name,
	 * which some tools read a version from (Meson: cuda-13.0). */
	char *leaf = view_safe(lbasename(*root));
	char *path = concat(cache_dir, "/toolkit-view/", leaf, "-", hash, "/", leaf, NULL);
	free(leaf);
	return path;
}

char *view_path(const char *cache_dir, const char *real_nvcc, const char *shim_nvcc)
{
	char *real, *shim, *root, *why = NULL;
	char *path = view_where(cache_dir, real_nvcc, shim_nvcc, &real, &shim, &root, &why);
	free(real);
	free(shim);
	free(root);
	free(why);
	return path;
}

int view_get(const char *cache_dir, const char *real_nvcc, const char *shim_nvcc, char **dir,
	     char **why)
{
	*dir = NULL;
	*why = NULL;
	if (fault_inject("view")) {
		*why = xstrdup("failure injected (NVSHIM_FAULT=view)");
		return -1;
	}
	char *real, *shim, *root;
	char *final = view_where(cache_dir, real_nvcc, shim_nvcc, &real, &shim, &root, why);
	char *leaf = NULL, *name = NULL, *base = NULL, *top = NULL;
	int rc = -1;
	if (!final)
		goto out;
	top = xstrndup(final, (size_t)(strrchr(final, '/') - final));
	leaf = xstrdup(lbasename(final));
	name = xstrdup(lbasename(top));
	base = xstrndup(top, (size_t)(strrchr(top, '/') - top));
	/* A second try only when a damaged view was moved out of the way. */
	for (int attempt = 0; attempt < 2 && rc; attempt++) {
		if (view_whole(final, real, shim)) {
			rc = 0;
			break;
		}
		if (cache_mkdirs(base)) {
			*why = xasprintf("cannot make %s: %s", base, strerror(errno));
			break;
		}
		char *tmp = concat(base, "/.", name, ".XXXXXX", NULL);
		if (!mkdtemp(tmp)) {
			*why = xasprintf("cannot make a directory in %s: %s", base, strerror(errno));
			free(tmp);
			break;
		}
		chmod(tmp, 0755);
		char *inner = concat(tmp, "/", leaf, NULL);
		char *marker = concat(inner, "/" VIEW_REAL_NVCC, NULL);
		int made = 1;
		if (mkdir(inner, 0755)) {
			*why = xasprintf("cannot make %s: %s", inner, strerror(errno));
			made = 0;
		}
		made = made && !view_fill(root, inner, shim, FILL_ROOT, why);
		if (made && symlink(real, marker)) {
			*why = xasprintf("cannot link %s: %s", marker, strerror(errno));
			made = 0;
		}
		if (!made) {
			cache_remove_dir(tmp);
			attempt = 2;
		} else if (!rename(tmp, top)) {
			rc = 0;
		} else {
			/* Another nvshim's view is there: take it when it is whole; move a damaged
			 * one aside (one mover wins) and try once more. */
			cache_remove_dir(tmp);
			struct stat judged, moved;
			int have = !lstat(top, &judged);
			if (view_whole(final, real, shim)) {
				rc = 0;
			} else if (!attempt && have) {
				char *aside = concat(base, "/.", name, ".old.XXXXXX", NULL);
				/* rename() replaces the empty directory mkdtemp() made. Only the view judged
				 * damaged goes: one another nvshim put in meanwhile is put back. */
				if (mkdtemp(aside) && !rename(top, aside)) {
					if (!lstat(aside, &moved) && moved.st_ino == judged.st_ino &&
					    moved.st_dev == judged.st_dev)
						cache_remove_dir(aside);
					else
						rename(aside, top);
				} else {
					rmdir(aside);
				}
				free(aside);
			}
		}
		free(marker);
		free(inner);
		free(tmp);
	}
out:
	if (!rc) {
		*dir = xstrdup(final);
		free(*why);
		*why = NULL;
	} else if (!*why)
		*why = xasprintf("%s is there but is not a whole view", final);
	free(real);
	free(shim);
	free(root);
	free(leaf);
	free(name);
	free(base);
	free(top);
	free(final);
	return rc;
}

/* The real root a view stands for: its .nvshim-real-nvcc's target less /bin/nvcc
 * (xmalloc'ed), or NULL when root is no view. */
static char *view_real_root(const char *root)
{
	char *link = view_real_nvcc(root);
	char buf[4096];
	ssize_t n = link ? readlink(link, buf, sizeof(buf) - 1) : -1;
	free(link);
	if (n <= 9 || n >= (ssize_t)sizeof(buf) - 1)
		return NULL;
	buf[n] = '\0';
	if (strcmp(buf + n - 9, "/bin/nvcc") || buf[0] != '/')
		return NULL;
	return xstrndup(buf, (size_t)n - 9);
}

/* Where a view is gone (the cache removed since a build recorded its paths): the real root of
 * the view this nvshim would make for `real_nvcc` when that view's path is `root` (the same
 * <leaf>-<hash>/<leaf> below toolkit-view/: the same toolkit, unchanged), else NULL. */
static char *view_gone_root(const char *cache_dir, const char *shim_nvcc, const char *real_nvcc,
			    const char *root)
{
	if (!shim_nvcc || !real_nvcc)
		return NULL;
	char *would = view_path(cache_dir, real_nvcc, shim_nvcc);
	const char *a = would ? strstr(would, "/toolkit-view/") : NULL, *b = strstr(root, "/toolkit-view/");
	char *real = NULL;
	if (a && b && !strcmp(a, b)) {
		char *resolved = lrealpath(real_nvcc);
		real = resolved ? toolkit_root(resolved) : NULL;
		free(resolved);
	}
	free(would);
	return real;
}

/* One argument with every view under `prefix` (<cache_dir>/toolkit-view/) rewritten, or NULL
 * when it names none. */
static char *view_unmap_arg(const char *prefix, const char *arg, const struct view_unmap_with *w, char **what)
{
	size_t plen = strlen(prefix);
	const char *hit = strstr(arg, prefix);
	if (!hit)
		return NULL;
	struct strbuf out = STRBUF_INIT;
	const char *p = arg;
	int changed = 0;
	while (hit) {
		/* <prefix><leaf>-<hash>/<leaf>, then the end or a '/' */
		const char *a = hit + plen, *s1 = strchr(a, '/');
		const char *b = s1 ? s1 + 1 : NULL;
		size_t blen = b ? strcspn(b, "/:,= ") : 0;
		const char *end = b ? b + blen : NULL;
		char *root = NULL, *real = NULL;
		if (b && blen && (*end == '\0' || *end == '/')) {
			root = xstrndup(hit, (size_t)(end - hit));
			real = view_real_root(root);
			if (!real && w)
				real = view_gone_root(w->cache_dir, w->shim_nvcc, w->real_nvcc, root);
		}
		if (real) {
			strbuf_add(&out, p, (size_t)(hit - p));
			strbuf_addstr(&out, real);
			if (what && !*what)
				*what = concat(root, " -> ", real, NULL);
			p = end;
			changed = 1;
		} else {
			strbuf_add(&out, p, (size_t)(a - p));
			p = a;
		}
		free(root);
		free(real);
		hit = strstr(p, prefix);
	}
	strbuf_addstr(&out, p);
	if (!changed) {
		free(out.s);
		return NULL;
	}
	return out.s;
}

size_t view_unmap(const char *cache_dir, const struct view_unmap_with *w, struct argv *line, char **what)
{
	if (!cache_dir || !*cache_dir)
		return 0;
	/* the cache as configured, and resolved (a view named through a link to it) */
	char *resolved = lrealpath(cache_dir);
	char *prefixes[2] = { concat(cache_dir, "/toolkit-view/", NULL),
			      resolved && strcmp(resolved, cache_dir) ? concat(resolved, "/toolkit-view/", NULL)
								      : NULL };
	size_t changed = 0;
	for (size_t i = 0; i < line->n; i++) {
		int hit = 0;
		for (int k = 0; k < 2; k++) {
			char *now = prefixes[k] ? view_unmap_arg(prefixes[k], line->v[i], w, what) : NULL;
			if (now) {
				argv_replace(line, i, now);
				free(now);
				hit = 1;
			}
		}
		changed += (size_t)hit;
	}
	free(prefixes[0]);
	free(prefixes[1]);
	free(resolved);
	return changed;
}
