#include "preload/headers.h"

#include <ctype.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libiberty.h>

#include "machine/locate.h"

unsigned headers_needed(int major)
{
	return HEADERS_RUNTIME | HEADERS_CCCL | (major >= 13 ? HEADERS_CRT : 0);
}

unsigned headers_part_of(const char *header)
{
	static const char *const cccl[] = { "cuda/", "cub/", "thrust/", "nv/" };
	if (!header)
		return 0;
	while (header[0] == '.' && header[1] == '/')
		header += 2;
	for (size_t i = 0; i < sizeof(cccl) / sizeof(cccl[0]); i++)
		if (!strncmp(header, cccl[i], strlen(cccl[i])))
			return HEADERS_CCCL;
	if (!strncmp(header, "crt/", 4))
		return HEADERS_CRT;
	/* The runtime package's headers by their names; anything else may be the program's own. */
	static const char *const runtime[] = {
		"cooperative_groups", "cuda_", "cuda.h", "cudaTypedefs.h", "mma.h", "sm_", "vector_",
		"device_", "math_", "texture_", "surface_", "builtin_types.h", "driver_types.h",
		"host_defines.h", "library_types.h", "channel_descriptor.h", "common_functions.h",
	};
	for (size_t i = 0; i < sizeof(runtime) / sizeof(runtime[0]); i++)
		if (!strncmp(header, runtime[i], strlen(runtime[i])))
			return HEADERS_RUNTIME;
	return 0;
}

const char *headers_parts_name(unsigned parts)
{
	static const char *const names[8] = {
		"nothing",
		"runtime headers",
		"crt headers",
		"runtime or crt headers",
		"CCCL",
		"runtime headers or CCCL",
		"crt headers or CCCL",
		"runtime headers, crt headers or CCCL",
	};
	return names[parts & 7];
}

int headers_cuda_version(const char *text, size_t len)
{
	static const char key[] = "#define CUDA_VERSION";
	const size_t klen = sizeof(key) - 1;
	for (size_t i = 0; text && i + klen < len; i++) {
		if ((i && text[i - 1] != '\n') || memcmp(text + i, key, klen))
			continue;
		size_t j = i + klen;
		if (j >= len || (text[j] != ' ' && text[j] != '\t'))
			continue;
		while (j < len && (text[j] == ' ' || text[j] == '\t'))
			j++;
		int v = 0, digits = 0;
		while (j < len && isdigit((unsigned char)text[j]) && digits < 7) {
			v = v * 10 + (text[j++] - '0');
			digits++;
		}
		if (digits && (j == len || !isalnum((unsigned char)text[j])))
			return v;
	}
	return 0;
}

static int is_dir(const char *path)
{
	struct stat sb;
	return !stat(path, &sb) && S_ISDIR(sb.st_mode);
}

static int has_file(const char *dir, const char *rel)
{
	struct stat sb;
	char *p = concat(dir, "/", rel, NULL);
	int ok = !stat(p, &sb) && !S_ISDIR(sb.st_mode);
	free(p);
	return ok;
}

/* cuda.h's CUDA_VERSION in dir, 0 when there is none (cuda.h defines it within its first lines). */
static int dir_version(const char *dir)
{
	char *path = concat(dir, "/cuda.h", NULL);
	FILE *f = fopen(path, "r");
	free(path);
	if (!f)
		return 0;
	char buf[16384];
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	return headers_cuda_version(buf, n);
}

int headers_set_has(const struct headers_set *s, const char *header)
{
	for (size_t i = 0; header && *header && i < s->dirs.n; i++)
		if (has_file(s->dirs.v[i], header))
			return 1;
	return 0;
}

static void set_release(struct headers_set *s)
{
	argv_release(&s->dirs);
	free(s->where);
	memset(s, 0, sizeof(*s));
}

/* Adds dir (its real path) to s when it is a directory not in s already. */
static void add_dir(struct headers_set *s, const char *dir)
{
	char real[PATH_MAX];
	if (!realpath(dir, real) || !is_dir(real))
		return;
	for (size_t i = 0; i < s->dirs.n; i++)
		if (!strcmp(s->dirs.v[i], real))
			return;
	argv_push(&s->dirs, real);
}

/* The parts and the version of s, from its directories. */
static void set_read(struct headers_set *s)
{
	s->parts = 0;
	s->version = 0;
	for (size_t i = 0; i < s->dirs.n; i++) {
		const char *d = s->dirs.v[i];
		if (has_file(d, "cuda_runtime.h") && has_file(d, "cooperative_groups.h"))
			s->parts |= HEADERS_RUNTIME;
		if (has_file(d, "crt/host_defines.h"))
			s->parts |= HEADERS_CRT;
		if (has_file(d, "cuda/std/type_traits") && has_file(d, "nv/target"))
			s->parts |= HEADERS_CCCL;
		if (!s->version)
			s->version = dir_version(d);
	}
}

/* An include directory and its cccl/ (as nvcc adds it on 13.x; absent before). */
static void add_with_cccl(struct headers_set *s, const char *inc)
{
	add_dir(s, inc);
	char *cccl = concat(inc, "/cccl", NULL);
	add_dir(s, cccl);
	free(cccl);
}

static const char *base_of(const char *path, size_t len, size_t *blen)
{
	while (len > 1 && path[len - 1] == '/')
		len--;
	size_t start = len;
	while (start && path[start - 1] != '/')
		start--;
	*blen = len - start;
	return path + start;
}

/* The set laid out around a library directory `lib` (where libnvrtc is). */
static void set_from_lib(struct headers_set *s, const char *lib)
{
	char *parent = concat(lib, "/..", NULL), real_parent[PATH_MAX];
	if (!realpath(parent, real_parent)) {
		free(parent);
		return;
	}
	free(parent);
	size_t plen = strlen(real_parent), blen, glen;
	const char *pbase = base_of(real_parent, plen, &blen);
	const char *gbase = base_of(real_parent, (size_t)(pbase - real_parent), &glen);
	int under_nvidia = glen == 6 && !strncmp(gbase, "nvidia", 6);
	if (under_nvidia && blen == 10 && !strncmp(pbase, "cuda_nvrtc", 10)) {
		/* cu12/cu11: nvidia/cuda_nvrtc/lib; the runtime, CCCL and crt are packages beside it. */
		char *nv = xstrndup(real_parent, (size_t)(pbase - real_parent));
		static const char *const pkgs[] = { "cuda_runtime", "cuda_cccl", "cuda_nvcc", "cuda_crt" };
		for (size_t i = 0; i < sizeof(pkgs) / sizeof(pkgs[0]); i++) {
			char *inc = concat(nv, pkgs[i], "/include", NULL);
			add_with_cccl(s, inc);
			free(inc);
		}
		s->layout = HEADERS_WHEEL_SPLIT;
		s->where = nv;
		if (s->where[0] && strlen(s->where) > 1)
			s->where[strlen(s->where) - 1] = '\0';
		return;
	}
	char *inc = concat(real_parent, "/include", NULL);
	if (is_dir(inc)) {
		add_with_cccl(s, inc);
		if (under_nvidia && blen >= 3 && pbase[0] == 'c' && pbase[1] == 'u' && isdigit((unsigned char)pbase[2]))
			s->layout = HEADERS_WHEEL;
		else
			s->layout = HEADERS_TOOLKIT;
		s->where = xstrdup(real_parent);
	}
	free(inc);
	/* conda: <prefix>/lib beside <prefix>/targets/<arch>/include, or targets/<arch>/lib itself. */
	char *pattern = concat(real_parent, "/targets/*/include", NULL);
	glob_t g;
	if (!glob(pattern, GLOB_NOSORT, NULL, &g)) {
		/* Only the targets' include: a conda prefix's include/ holds every other package's
		 * headers too (a toolkit's include/ is a link to its target's). */
		argv_release(&s->dirs);
		for (size_t i = 0; i < g.gl_pathc; i++)
			add_with_cccl(s, g.gl_pathv[i]);
		if (s->layout == HEADERS_NONE || s->layout == HEADERS_TOOLKIT) {
			free(s->where);
			s->where = xstrdup(real_parent);
		}
		if (s->layout == HEADERS_NONE)
			s->layout = HEADERS_TOOLKIT;
		globfree(&g);
	}
	free(pattern);
	/* A conda environment names itself with conda-meta/: <prefix> or <prefix>/targets/<arch>. */
	if (s->layout == HEADERS_TOOLKIT) {
		char *meta = concat(real_parent, "/conda-meta", NULL), *meta2 = concat(real_parent, "/../../conda-meta", NULL);
		if (is_dir(meta) || is_dir(meta2))
			s->layout = HEADERS_CONDA;
		free(meta);
		free(meta2);
	}
}

static int same_major(int version, int major)
{
	return version / 1000 == major;
}

/* The candidate sets of a root: a toolkit or conda prefix, or a site-packages directory. */
static void root_sets(const char *root, int major, struct headers_set *out, size_t *n, size_t cap)
{
	char *libs[4];
	size_t nl = 0;
	libs[nl++] = concat(root, "/lib64", NULL);
	libs[nl++] = concat(root, "/lib", NULL);
	libs[nl++] = xasprintf("%s/nvidia/cu%d/lib", root, major);
	libs[nl++] = concat(root, "/nvidia/cuda_nvrtc/lib", NULL);
	for (size_t i = 0; i < nl; i++) {
		if (*n < cap) {
			struct headers_set *s = &out[*n];
			memset(s, 0, sizeof(*s));
			if (is_dir(libs[i]))
				set_from_lib(s, libs[i]);
			if (s->dirs.n)
				(*n)++;
			else
				set_release(s);
		}
		free(libs[i]);
	}
}

static int same_dirs(const struct headers_set *a, const struct headers_set *b)
{
	return a->dirs.n && argv_equal(&a->dirs, &b->dirs);
}

/* The roots headers_find looks in when `roots` is empty. */
static void default_roots(struct argv *where, int major, int minor)
{
	const char *vars[] = { "CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX" };
	for (size_t i = 0; i < 3; i++) {
		const char *v = getenv(vars[i]);
		if (v && *v)
			argv_push(where, v);
	}
	const char *pp = getenv("PYTHONPATH");
	if (pp && *pp) {
		char *copy = xstrdup(pp), *save = NULL;
		for (char *r = strtok_r(copy, ":", &save); r; r = strtok_r(NULL, ":", &save))
			argv_push(where, r);
		free(copy);
	}
	argv_pushf(where, "/usr/local/cuda-%d.%d", major, minor);
	argv_push(where, "/usr/local/cuda");
}

/* The roots to look in: `roots` (':'-separated), else the defaults. */
static void roots_of(struct argv *where, const char *roots, int major, int minor)
{
	if (!roots || !*roots) {
		default_roots(where, major, minor);
		return;
	}
	char *copy = xstrdup(roots), *save = NULL;
	for (char *r = strtok_r(copy, ":", &save); r; r = strtok_r(NULL, ":", &save))
		argv_push(where, r);
	free(copy);
}

void headers_find(struct headers *h, const char *nvrtc_path, int major, int minor, const char *roots)
{
	memset(h, 0, sizeof(*h));
	const unsigned need = headers_needed(major);
	/* Beside NVRTC: the path as the loader names it first (a conda prefix's lib/ symlink), then
	 * its real path. */
	char real[PATH_MAX];
	const char *paths[2] = { nvrtc_path, nvrtc_path && realpath(nvrtc_path, real) ? real : NULL };
	for (size_t i = 0; i < 2 && !h->own.dirs.n; i++) {
		const char *slash = paths[i] ? strrchr(paths[i], '/') : NULL;
		if (!slash)
			continue;
		char *lib = xstrndup(paths[i], (size_t)(slash - paths[i]));
		set_release(&h->own);
		set_from_lib(&h->own, lib);
		free(lib);
	}
	if (!h->own.dirs.n) {
		set_release(&h->own);
	} else {
		set_read(&h->own);
		if (h->own.version && !same_major(h->own.version, major))
			set_release(&h->own);
	}
	if ((h->own.parts & need) == need)
		return;

	struct argv where = ARGV_INIT;
	roots_of(&where, roots, major, minor);
	struct headers_set cand[32];
	size_t n = 0;
	for (size_t i = 0; i < where.n && n < 32; i++)
		root_sets(where.v[i], major, cand, &n, 32);
	argv_release(&where);
	int best = -1;
	for (size_t i = 0; i < n; i++) {
		set_read(&cand[i]);
		if ((cand[i].parts & need) != need || !same_major(cand[i].version, major) ||
		    same_dirs(&cand[i], &h->own))
			continue;
		if (best < 0 || (cand[i].version % 1000 / 10 == minor && cand[best].version % 1000 / 10 != minor))
			best = (int)i;
	}
	for (size_t i = 0; i < n; i++) {
		if ((int)i == best)
			h->full = cand[i];
		else
			set_release(&cand[i]);
	}
}

/* `dir`/`name` when it is a file (xmalloc'ed), else NULL. */
static char *file_in(const char *dir, const char *name)
{
	char *p = concat(dir, "/", name, NULL);
	struct stat st;
	if (!stat(p, &st) && S_ISREG(st.st_mode))
		return p;
	free(p);
	return NULL;
}

char *headers_find_builtins(const char *nvrtc_path, int major, int minor, const char *roots)
{
	char name[64];
	snprintf(name, sizeof(name), "libnvrtc-builtins.so.%d.%d", major, minor);
	char real[PATH_MAX];
	const char *paths[2] = { nvrtc_path, nvrtc_path && realpath(nvrtc_path, real) ? real : NULL };
	for (size_t i = 0; i < 2; i++) {
		const char *slash = paths[i] ? strrchr(paths[i], '/') : NULL;
		if (!slash)
			continue;
		char *dir = xstrndup(paths[i], (size_t)(slash - paths[i]));
		char *f = file_in(dir, name);
		free(dir);
		if (f)
			return f;
	}
	struct argv where = ARGV_INIT;
	roots_of(&where, roots, major, minor);
	/* the package index's wheels in a Python prefix on PATH (a virtual environment) or ~/.local */
	locate_python_sites(&where);
	char *found = NULL;
	for (size_t i = 0; i < where.n && !found; i++) {
		char *libs[4] = { concat(where.v[i], "/lib64", NULL), concat(where.v[i], "/lib", NULL),
				  xasprintf("%s/nvidia/cu%d/lib", where.v[i], major),
				  concat(where.v[i], "/nvidia/cuda_nvrtc/lib", NULL) };
		for (size_t k = 0; k < 4; k++) {
			if (!found)
				found = file_in(libs[k], name);
			free(libs[k]);
		}
	}
	argv_release(&where);
	return found;
}

char *headers_builtins_hint(int major, int minor)
{
	if (major >= 13)
		return xasprintf("pip install 'nvidia-cuda-nvrtc==%d.%d.*' (conda: 'cuda-nvrtc=%d.%d')", major, minor,
				 major, minor);
	return xasprintf("pip install 'nvidia-cuda-nvrtc-cu%d==%d.%d.*' (conda: 'cuda-nvrtc=%d.%d')", major, major,
			 minor, major, minor);
}

void headers_release(struct headers *h)
{
	set_release(&h->own);
	set_release(&h->full);
}

char *headers_install_hint(enum headers_layout layout, unsigned parts, int major, int minor)
{
	struct argv pkgs = ARGV_INIT;
	const unsigned order[] = { HEADERS_RUNTIME, HEADERS_CRT, HEADERS_CCCL };
	for (size_t i = 0; i < 3; i++) {
		unsigned p = order[i];
		if (!(parts & p))
			continue;
		switch (layout) {
		case HEADERS_WHEEL_SPLIT:
			argv_pushf(&pkgs, "'%s-cu%d==%d.%d.*'",
				   p == HEADERS_RUNTIME ? "nvidia-cuda-runtime"
				   : p == HEADERS_CRT   ? "nvidia-cuda-nvcc"
							: "nvidia-cuda-cccl",
				   major, major, minor);
			break;
		case HEADERS_CONDA:
			argv_pushf(&pkgs, "'%s=%d.%d'",
				   p == HEADERS_RUNTIME ? "cuda-cudart-dev"
				   : p == HEADERS_CRT   ? (major >= 13 ? "cuda-crt-dev" : "cuda-nvcc-dev")
							: "cuda-cccl",
				   major, minor);
			break;
		case HEADERS_TOOLKIT:
			argv_pushf(&pkgs, "%s-%d-%d",
				   p == HEADERS_RUNTIME ? "cuda-cudart-dev"
				   : p == HEADERS_CRT   ? (major >= 13 ? "cuda-crt" : "cuda-nvcc")
							: "cuda-cccl",
				   major, minor);
			break;
		default: /* the cu13 wheels, and an NVRTC from nowhere known: the wheels of its version */
			if (major < 13)
				argv_pushf(&pkgs, "'%s-cu%d==%d.%d.*'",
					   p == HEADERS_RUNTIME ? "nvidia-cuda-runtime"
					   : p == HEADERS_CRT   ? "nvidia-cuda-nvcc"
								: "nvidia-cuda-cccl",
					   major, major, minor);
			else
				argv_pushf(&pkgs, "'%s==%d.%d.*'",
					   p == HEADERS_RUNTIME ? "nvidia-cuda-runtime"
					   : p == HEADERS_CRT   ? "nvidia-cuda-crt"
								: "nvidia-cuda-cccl",
					   major, minor);
			break;
		}
	}
	char *list = argv_join(&pkgs, " ");
	const size_t npkgs = pkgs.n;
	argv_release(&pkgs);
	char *hint;
	if (layout == HEADERS_CONDA)
		hint = concat("conda install ", list, NULL);
	else if (layout == HEADERS_TOOLKIT)
		hint = concat("the toolkit's package", npkgs > 1 ? "s " : " ", list, NULL);
	else
		hint = concat("pip install ", list, NULL);
	free(list);
	return hint;
}
