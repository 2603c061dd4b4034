#include "passes/link.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libiberty.h>

#include "base/hash.h"
#include "base/diag.h"
#include "machine/toolkit.h"
#include "objects/elf.h"

#if defined(__x86_64__)
#define TRIPLET "x86_64-linux-gnu"
#define TARGET_DIR "x86_64-linux"
#elif defined(__aarch64__)
#define TRIPLET "aarch64-linux-gnu"
#define TARGET_DIR "sbsa-linux"
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define TRIPLET "powerpc64le-linux-gnu"
#define TARGET_DIR "ppc64le-linux"
#endif

/* GNU ld's own search directories on Debian, Ubuntu, Fedora and RHEL. */
static const char *const default_dirs[] = {
#ifdef TRIPLET
	"/usr/local/lib/" TRIPLET, "/lib/" TRIPLET, "/usr/lib/" TRIPLET,
#endif
	"/usr/local/lib64", "/lib64", "/usr/lib64", "/usr/local/lib", "/lib", "/usr/lib", NULL,
};

/* ---- requests ---- */

void link_request_init(struct link_request *r)
{
	memset(r, 0, sizeof(*r));
	argv_init(&r->dirs);
	argv_init(&r->store);
}

void link_request_release(struct link_request *r)
{
	free(r->v);
	argv_release(&r->dirs);
	argv_release(&r->store);
	link_request_init(r);
}

static int names_libcuda(const char *path)
{
	const char *base = lbasename(path);
	return !strcmp(base, "libcuda.so") || !strncmp(base, "libcuda.so.", 11);
}

void link_request_add(struct link_request *r, enum link_item_kind kind, const char *name)
{
	if (r->n == r->alloc) {
		r->alloc = r->alloc ? r->alloc * 2 : 16;
		r->v = XRESIZEVEC(struct link_item, r->v, r->alloc);
	}
	const char *owned = NULL;
	if (name) {
		argv_push(&r->store, name);
		owned = r->store.v[r->store.n - 1];
	}
	r->v[r->n].kind = kind;
	r->v[r->n].name = owned;
	r->n++;
	if (kind == LINK_LIB && (!strcmp(name, "cuda") || (name[0] == ':' && names_libcuda(name + 1))))
		r->cuda_named = 1;
	if (kind == LINK_FILE && names_libcuda(name))
		r->cuda_named = 1;
}

static void add_dir(struct link_request *r, const char *dir)
{
	if (dir && *dir)
		argv_push(&r->dirs, dir);
}

/* ld options whose value is the next word. */
static int ld_takes_value(const char *w)
{
	static const char *const names[] = {
		"-A", "-F", "-G", "-I", "-L", "-O", "-P", "-R", "-T", "-Y", "-a", "-b", "-c", "-e", "-f",
		"-h", "-l", "-m", "-o", "-u", "-y", "-z", "--dynamic-linker", "--exclude-libs",
		"--out-implib", "--plugin-opt", "--version-script", "--dynamic-list", "--retain-symbols-file",
		"-Map", "-plugin", "-rpath", "-rpath-link", "-soname", "--hash-style", "--build-id",
		"-dynamic-linker", "--defsym", "--section-start", "--wrap", "--trace-symbol", "--undefined",
		"--entry", "--script", "--output", "--soname", "--rpath", "--rpath-link", "--audit",
		"--filter", "--auxiliary", "-Ttext", "-Tdata", "-Tbss",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(w, names[i]))
			return 1;
	return 0;
}

void link_request_linker_word(struct link_request *r, const char *w, int *skip)
{
	static const struct {
		const char *word;
		enum link_item_kind kind;
	} flags[] = {
		{ "--start-group", LINK_GROUP_START }, { "-(", LINK_GROUP_START },
		{ "--end-group", LINK_GROUP_END },     { "-)", LINK_GROUP_END },
		{ "--whole-archive", LINK_WHOLE_ARCHIVE }, { "-whole-archive", LINK_WHOLE_ARCHIVE },
		{ "--no-whole-archive", LINK_NO_WHOLE_ARCHIVE }, { "-no-whole-archive", LINK_NO_WHOLE_ARCHIVE },
		{ "-Bstatic", LINK_STATIC }, { "-dn", LINK_STATIC }, { "-non_shared", LINK_STATIC },
		{ "-static", LINK_STATIC }, { "--static", LINK_STATIC },
		{ "-Bdynamic", LINK_DYNAMIC }, { "-dy", LINK_DYNAMIC }, { "-call_shared", LINK_DYNAMIC },
	};
	if (*skip == 1) {
		*skip = 0;
		return;
	}
	if (*skip == 'l' || *skip == 'L') {
		if (*skip == 'l')
			link_request_add(r, LINK_LIB, w);
		else
			add_dir(r, w);
		*skip = 0;
		return;
	}
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (!strcmp(w, flags[i].word)) {
			link_request_add(r, flags[i].kind, NULL);
			return;
		}
	if (!strcmp(w, "-l") || !strcmp(w, "--library")) {
		*skip = 'l';
	} else if (!strcmp(w, "-L") || !strcmp(w, "--library-path")) {
		*skip = 'L';
	} else if (!strncmp(w, "--library=", 10)) {
		link_request_add(r, LINK_LIB, w + 10);
	} else if (!strncmp(w, "--library-path=", 15)) {
		add_dir(r, w + 15);
	} else if (w[0] == '-' && w[1] == 'l' && w[2]) {
		link_request_add(r, LINK_LIB, w + 2);
	} else if (w[0] == '-' && w[1] == 'L' && w[2]) {
		add_dir(r, w + 2);
	} else if (ld_takes_value(w)) {
		*skip = 1;
	} else if (w[0] != '-') {
		link_request_add(r, LINK_FILE, w);
	}
}

static void linker_words(struct link_request *r, const char *list, int *skip)
{
	struct argv words = ARGV_INIT;
	invocation_split_list(&words, list);
	for (size_t i = 0; i < words.n; i++)
		link_request_linker_word(r, words.v[i], skip);
	argv_release(&words);
}

static int is_source(enum input_kind k)
{
	return k <= INPUT_LTOIR;
}

int link_request_from_nvcc(struct link_request *r, const struct invocation *inv)
{
	if (inv->info || inv->dryrun || !inv->ninputs || (inv->mode != MODE_LINK && inv->mode != MODE_RUN))
		return 0;
	r->nvcc = 1;
	r->no_retry = inv->mode == MODE_RUN;
	int skip = 0;
	for (size_t i = 0; i < inv->nargs; i++) {
		const struct inv_arg *a = &inv->args[i];
		const char *arg = inv->expanded.v[a->pos];
		if (a->what == ARG_INPUT) {
			link_request_add(r, is_source(a->input) ? LINK_SOURCE : LINK_FILE, arg);
			continue;
		}
		if (a->what != ARG_OPTION || !a->value)
			continue;
		const char *name = a->opt->name;
		if (!strcmp(name, "library-path")) {
			struct argv dirs = ARGV_INIT;
			invocation_split_list(&dirs, a->value);
			for (size_t k = 0; k < dirs.n; k++)
				add_dir(r, dirs.v[k]);
			argv_release(&dirs);
		} else if (!strcmp(name, "linker-options")) {
			linker_words(r, a->value, &skip);
		} else if (!strcmp(name, "compiler-options")) {
			/* The host compiler also links: -Xcompiler -static, -Xcompiler -Wl,... */
			struct argv words = ARGV_INIT;
			invocation_split_list(&words, a->value);
			for (size_t k = 0; k < words.n; k++) {
				if (!strcmp(words.v[k], "-static"))
					r->is_static = 1;
			}
			argv_release(&words);
		}
	}
	/* nvcc passes the libraries after the inputs. */
	for (size_t i = 0; i < inv->nargs; i++) {
		const struct inv_arg *a = &inv->args[i];
		if (a->what == ARG_OPTION && a->value && !strcmp(a->opt->name, "library")) {
			struct argv libs = ARGV_INIT;
			invocation_split_list(&libs, a->value);
			for (size_t k = 0; k < libs.n; k++)
				link_request_add(r, LINK_LIB, libs.v[k]);
			argv_release(&libs);
		}
	}
	return 1;
}

int link_request_from_hostcc(struct link_request *r, const struct hostcc *hc)
{
	if (hc->mode != HOSTCC_LINK)
		return 0;
	int skip = 0;
	r->is_static = hc->is_static;
	for (size_t i = 0; i < hc->n; i++) {
		const struct hostcc_arg *a = &hc->v[i];
		const char *arg = hc->args.v[a->pos];
		if (a->input) {
			link_request_add(r, is_source(a->kind) ? LINK_SOURCE : LINK_FILE, arg);
			continue;
		}
		if (!a->opt) {
			if (a->nvcc && !strcmp(a->nvcc->name, "linker-options") && a->value)
				linker_words(r, a->value, &skip);
			continue;
		}
		const char *name = a->opt->name, *v = a->value;
		if (!v)
			continue;
		if (!strcmp(name, "-l"))
			link_request_add(r, LINK_LIB, v);
		else if (!strcmp(name, "-L"))
			add_dir(r, v);
		else if (!strcmp(name, "-Wl,"))
			linker_words(r, v, &skip);
		else if (!strcmp(name, "-Xlinker"))
			link_request_linker_word(r, v, &skip);
		else if (!strcmp(name, "--sysroot") || !strcmp(name, "--sysroot="))
			r->sysroot = v;
	}
	return 1;
}

/* ---- a set of symbol names ---- */

struct symset {
	const char **keys;
	const char **vals;
	size_t cap, n;
};

static uint64_t hash_name(const char *s)
{
	return hash_str(HASH_INIT, s);
}

static size_t slot_of(const struct symset *s, const char *name)
{
	size_t i = (size_t)hash_name(name) & (s->cap - 1);
	while (s->keys[i] && strcmp(s->keys[i], name))
		i = (i + 1) & (s->cap - 1);
	return i;
}

static int symset_has(const struct symset *s, const char *name)
{
	return s->cap && s->keys[slot_of(s, name)];
}

static const char *symset_get(const struct symset *s, const char *name)
{
	return s->cap ? s->vals[slot_of(s, name)] : NULL;
}

static void symset_add(struct symset *s, const char *name, const char *val)
{
	if ((s->n + 1) * 2 > s->cap) {
		struct symset bigger = { NULL, NULL, s->cap ? s->cap * 2 : 256, 0 };
		bigger.keys = XCNEWVEC(const char *, bigger.cap);
		bigger.vals = XCNEWVEC(const char *, bigger.cap);
		for (size_t i = 0; i < s->cap; i++)
			if (s->keys[i]) {
				size_t j = slot_of(&bigger, s->keys[i]);
				bigger.keys[j] = s->keys[i];
				bigger.vals[j] = s->vals[i];
				bigger.n++;
			}
		free(s->keys);
		free(s->vals);
		*s = bigger;
	}
	size_t i = slot_of(s, name);
	if (s->keys[i])
		return;
	s->keys[i] = name;
	s->vals[i] = val;
	s->n++;
}

static void symset_release(struct symset *s)
{
	free(s->keys);
	free(s->vals);
	memset(s, 0, sizeof(*s));
}

/* ---- the linker, as far as symbols go ---- */

struct archive {
	const char *path;
	struct elf_map map;
	struct ar_symbol *index;
	size_t nindex;
	size_t *pulled; /* header offsets of members taken */
	size_t npulled;
	int whole;
	int built;      /* index built from the members (the archive had none) */
};

struct sim {
	const struct link_request *req;
	const struct link_context *ctx;
	struct plan *plan;
	struct symset undefined; /* name -> the input that refers to it first */
	struct symset defined;
	struct elf_map *maps;    /* kept until the end: names point into them */
	size_t nmaps, amaps;
	struct archive *archives;
	size_t narchives, aarchives;
	struct argv shared;      /* shared objects on the line, to look at later */
	struct argv labels;      /* owns "lib.a(member.o)" labels */
	struct argv dirs;        /* where -l looks, in order */
	struct argv order;       /* undefined driver symbols, in the order they were met */
	const char *label;       /* the input being read */
	int sources;             /* inputs whose symbols are not known before the link */
	int static_at_end;       /* -Bstatic still in force after the last input */
};

static void keep_map(struct sim *s, struct elf_map m)
{
	if (s->nmaps == s->amaps) {
		s->amaps = s->amaps ? s->amaps * 2 : 16;
		s->maps = XRESIZEVEC(struct elf_map, s->maps, s->amaps);
	}
	s->maps[s->nmaps++] = m;
}

static void on_symbol(const char *name, int defined, int weak, void *arg)
{
	struct sim *s = arg;
	if (defined) {
		symset_add(&s->defined, name, s->label);
	} else if (!weak) {
		if (link_is_driver_name(name) && !symset_has(&s->undefined, name))
			argv_push(&s->order, name);
		symset_add(&s->undefined, name, s->label);
	}
}

static void skipped(struct sim *s, const char *what, const char *why)
{
	plan_note(s->plan, "link.input", "skipped %s when looking for driver symbols: %s", what, why);
}

static void read_object(struct sim *s, const unsigned char *data, size_t size, const char *label)
{
	char *why = NULL;
	s->label = label;
	if (elf_symbols(data, size, on_symbol, s, &why)) {
		skipped(s, label, why);
		free(why);
	}
}

static const char *member_label(struct sim *s, const char *archive, const char *member)
{
	argv_pushf(&s->labels, "%s(%s)", archive, member);
	return s->labels.v[s->labels.n - 1];
}

/* Reads one member of an archive: its bytes, or for a thin archive the file it names. */
static void read_member(struct sim *s, struct archive *a, const struct ar_member *m)
{
	const char *label = member_label(s, a->path, m->name);
	if (m->data) {
		read_object(s, m->data, m->size, label);
		return;
	}
	const char *slash = strrchr(a->path, '/');
	char *path;
	if (m->name[0] == '/' || !slash) {
		path = xstrdup(m->name);
	} else {
		char *dir = xstrndup(a->path, (size_t)(slash - a->path + 1));
		path = concat(dir, m->name, NULL);
		free(dir);
	}
	struct elf_map map;
	char *why = NULL;
	if (!elf_map_file(path, &map, &why)) {
		keep_map(s, map);
		read_object(s, map.data, map.size, label);
	} else {
		free(why);
	}
	free(path);
}

static int was_pulled(const struct archive *a, size_t header)
{
	for (size_t i = 0; i < a->npulled; i++)
		if (a->pulled[i] == header)
			return 1;
	return 0;
}

/* Takes the members that define a symbol still undefined, until none does. Returns how many
 * it took. */
static size_t pull_members(struct sim *s, struct archive *a)
{
	size_t taken = 0;
	int again = 1;
	while (again) {
		again = 0;
		for (size_t i = 0; i < a->nindex; i++) {
			const struct ar_symbol *e = &a->index[i];
			if (was_pulled(a, e->member) || !symset_has(&s->undefined, e->name) ||
			    symset_has(&s->defined, e->name))
				continue;
			struct ar_member *m = XNEW(struct ar_member);
			char *why = NULL;
			a->pulled = XRESIZEVEC(size_t, a->pulled, a->npulled + 1);
			a->pulled[a->npulled++] = e->member;
			if (ar_member_at(a->map.data, a->map.size, e->member, m, &why)) {
				skipped(s, a->path, why);
				free(why);
				free(m);
				continue;
			}
			read_member(s, a, m);
			free(m);
			taken++;
			again = 1;
		}
	}
	return taken;
}

struct build_index {
	struct sim *s;
	struct archive *a;
	size_t alloc;
	const struct ar_member *member;
};

static void index_symbol(const char *name, int defined, int weak, void *arg)
{
	struct build_index *b = arg;
	(void)weak;
	if (!defined)
		return;
	if (b->a->nindex == b->alloc) {
		b->alloc = b->alloc ? b->alloc * 2 : 64;
		b->a->index = XRESIZEVEC(struct ar_symbol, b->a->index, b->alloc);
	}
	b->a->index[b->a->nindex].name = name;
	b->a->index[b->a->nindex].member = b->member->header;
	b->a->nindex++;
}

static int index_member(const struct ar_member *m, void *arg)
{
	struct build_index *b = arg;
	char *why = NULL;
	b->member = m;
	if (m->data && elf_symbols(m->data, m->size, index_symbol, b, &why))
		free(why);
	return 0;
}

static int whole_member(const struct ar_member *m, void *arg)
{
	struct build_index *b = arg;
	read_member(b->s, b->a, m);
	return 0;
}

static void read_archive(struct sim *s, const char *path, struct elf_map map, int whole)
{
	if (s->narchives == s->aarchives) {
		s->aarchives = s->aarchives ? s->aarchives * 2 : 8;
		s->archives = XRESIZEVEC(struct archive, s->archives, s->aarchives);
	}
	struct archive *a = &s->archives[s->narchives];
	memset(a, 0, sizeof(*a));
	a->path = path;
	a->map = map;
	a->whole = whole;
	char *why = NULL;
	struct build_index b = { s, a, 0, NULL };
	if (whole) {
		if (ar_members(map.data, map.size, whole_member, &b, &why)) {
			skipped(s, path, why);
			free(why);
		}
		s->narchives++;
		return;
	}
	if (ar_index(map.data, map.size, &a->index, &a->nindex, &why)) {
		skipped(s, path, why);
		free(why);
		return;
	}
	if (!a->nindex) {
		free(a->index);
		a->index = NULL;
		a->built = 1;
		if (ar_members(map.data, map.size, index_member, &b, &why)) {
			skipped(s, path, why);
			free(why);
		}
	}
	s->narchives++;
	pull_members(s, a);
}

static int file_exists(const char *path)
{
	return !access(path, F_OK);
}

/* Where -lNAME is found: a .so before a .a in each directory unless static. xmalloc'ed. */
static char *find_library(const struct sim *s, const char *name, int static_only)
{
	for (size_t i = 0; i < s->dirs.n; i++) {
		const char *dir = s->dirs.v[i];
		if (name[0] == ':') {
			char *p = concat(dir, "/", name + 1, NULL);
			if (file_exists(p))
				return p;
			free(p);
			continue;
		}
		if (!static_only) {
			char *p = concat(dir, "/lib", name, ".so", NULL);
			if (file_exists(p))
				return p;
			free(p);
		}
		char *p = concat(dir, "/lib", name, ".a", NULL);
		if (file_exists(p))
			return p;
		free(p);
	}
	return NULL;
}

static void read_file(struct sim *s, const char *path, int whole)
{
	struct elf_map map;
	char *why = NULL;
	if (elf_map_file(path, &map, &why)) {
		/* Missing or unreadable: the linker says so itself. */
		free(why);
		return;
	}
	switch (elf_identify(map.data, map.size)) {
	case ELF_KIND_OBJECT:
		keep_map(s, map);
		read_object(s, map.data, map.size, path);
		break;
	case ELF_KIND_ARCHIVE:
	case ELF_KIND_THIN_ARCHIVE:
		keep_map(s, map);
		read_archive(s, path, map, whole);
		break;
	case ELF_KIND_SHARED:
		argv_push(&s->shared, path);
		elf_unmap(&map);
		break;
	case ELF_KIND_ELF_OTHER:
		skipped(s, path, "not a 64-bit ELF object or shared object of this machine");
		elf_unmap(&map);
		break;
	case ELF_KIND_OTHER:
		/* A linker script or a source the driver compiles first. */
		if (map.size >= 4 && !memcmp(map.data, "\177ELF", 4))
			skipped(s, path, "truncated ELF header");
		elf_unmap(&map);
		break;
	}
}

static void search_dirs(struct sim *s)
{
	const struct link_request *r = s->req;
	const struct link_context *c = s->ctx;
	argv_pushv(&s->dirs, (const char *const *)r->dirs.v);
	if (r->nvcc && c->toolkit_lib) {
		argv_pushf(&s->dirs, "%s/stubs", c->toolkit_lib);
		argv_push(&s->dirs, c->toolkit_lib);
	}
	if (c->library_path) {
		const char *p = c->library_path;
		while (*p) {
			const char *colon = strchr(p, ':');
			size_t len = colon ? (size_t)(colon - p) : strlen(p);
			if (len)
				argv_push_owned(&s->dirs, xstrndup(p, len));
			p = colon ? colon + 1 : p + len;
		}
	}
	const char *const *sys = c->system_dirs ? c->system_dirs : default_dirs;
	for (; *sys; sys++)
		argv_push_owned(&s->dirs, concat(r->sysroot ? r->sysroot : "", *sys, NULL));
}

/* Runs the inputs through the linker's rules. */
static void simulate(struct sim *s)
{
	const struct link_request *r = s->req;
	int whole = 0, static_only = r->is_static, group = r->nvcc;
	size_t group_first = 0; /* archives from here belong to the open group */

	for (size_t i = 0; i < r->n; i++) {
		const struct link_item *it = &r->v[i];
		switch (it->kind) {
		case LINK_SOURCE:
			s->sources++;
			break;
		case LINK_FILE:
			read_file(s, it->name, whole);
			break;
		case LINK_LIB: {
			char *path = find_library(s, it->name, static_only);
			if (path) {
				argv_push_owned(&s->labels, path);
				read_file(s, s->labels.v[s->labels.n - 1], whole);
			}
			break;
		}
		case LINK_WHOLE_ARCHIVE:
			whole = 1;
			break;
		case LINK_NO_WHOLE_ARCHIVE:
			whole = 0;
			break;
		case LINK_STATIC:
			static_only = 1;
			break;
		case LINK_DYNAMIC:
			static_only = r->is_static;
			break;
		case LINK_GROUP_START:
			if (!group) {
				group = 1;
				group_first = s->narchives;
			}
			break;
		case LINK_GROUP_END:
			if (group && !r->nvcc) {
				/* Round the group's archives until none takes another member. */
				size_t taken = 1;
				while (taken) {
					taken = 0;
					for (size_t k = group_first; k < s->narchives; k++)
						taken += pull_members(s, &s->archives[k]);
				}
				group = 0;
			}
			break;
		}
	}
	s->static_at_end = static_only && !r->is_static;
	if (group) {
		size_t taken = 1;
		while (taken) {
			taken = 0;
			for (size_t k = group_first; k < s->narchives; k++)
				taken += pull_members(s, &s->archives[k]);
		}
	}
}

struct provided {
	const struct symset *wanted;
	struct symset *found;
};

static void on_provided(const char *name, int defined, int weak, void *arg)
{
	struct provided *p = arg;
	(void)weak;
	if (!defined || !p->wanted->cap)
		return;
	/* The wanted set's own copy of the name: the map goes away. */
	const char *key = p->wanted->keys[slot_of(p->wanted, name)];
	if (key)
		symset_add(p->found, key, NULL);
}

/* Adds to found the names of `wanted` that a shared object defines. */
static int shared_defines(const char *path, const struct symset *wanted, struct symset *found)
{
	struct elf_map map;
	char *why = NULL;
	if (elf_map_file(path, &map, &why)) {
		free(why);
		return -1;
	}
	struct provided p = { wanted, found };
	int rc = elf_symbols(map.data, map.size, on_provided, &p, &why);
	free(why);
	elf_unmap(&map);
	return rc;
}

static int libcuda_findable(const struct sim *s)
{
	for (size_t i = 0; i < s->dirs.n; i++) {
		char *p = concat(s->dirs.v[i], "/libcuda.so", NULL);
		int ok = file_exists(p);
		free(p);
		if (ok)
			return 1;
	}
	return 0;
}

void link_result_init(struct link_result *res)
{
	memset(res, 0, sizeof(*res));
	argv_init(&res->retry);
}

void link_result_release(struct link_result *res)
{
	free(res->symbol);
	argv_release(&res->retry);
	link_result_init(res);
}

int link_is_driver_name(const char *name)
{
	return name[0] == 'c' && name[1] == 'u' && name[2] >= 'A' && name[2] <= 'Z' &&
	       strncmp(name, "cuFile", 6);
}

/* What adds libcuda: -lcuda, after -L<stubs> when nothing else would find it. */
static void lcuda_args(const struct sim *s, int findable, struct argv *out)
{
	if (!s->req->nvcc && !findable && s->ctx->stubs)
		argv_pushf(out, "-L%s", s->ctx->stubs);
	if (!s->req->nvcc && s->static_at_end)
		argv_push(out, "-Wl,-Bdynamic");
	argv_push(out, "-lcuda");
}

int link_pass(const struct link_request *req, const struct link_context *ctx, struct plan *plan,
	      struct link_result *res)
{
	struct sim s;
	int changed = 0;

	if (!ctx->cfg->link_lcuda || req->cuda_named)
		return 0;
	memset(&s, 0, sizeof(s));
	s.req = req;
	s.ctx = ctx;
	s.plan = plan;
	argv_init(&s.shared);
	argv_init(&s.labels);
	argv_init(&s.dirs);
	argv_init(&s.order);
	search_dirs(&s);
	simulate(&s);

	int findable = libcuda_findable(&s);
	int can_add = !req->is_static && (findable || (!req->nvcc && ctx->stubs));

	/* The driver symbols still undefined, in a set whose names outlive the maps. */
	struct argv names = ARGV_INIT, where = ARGV_INIT;
	for (size_t i = 0; i < s.order.n; i++) {
		const char *name = s.order.v[i];
		if (!symset_has(&s.defined, name)) {
			argv_push(&names, name);
			argv_push(&where, symset_get(&s.undefined, name));
		}
	}
	if (names.n) {
		struct symset wanted = { NULL, NULL, 0, 0 }, found = { NULL, NULL, 0, 0 };
		for (size_t i = 0; i < names.n; i++)
			symset_add(&wanted, names.v[i], NULL);
		for (size_t i = 0; i < s.shared.n; i++)
			shared_defines(s.shared.v[i], &wanted, &found);
		/* Only what the driver defines: the stub says (when there is one). */
		struct symset driver = { NULL, NULL, 0, 0 };
		char *stub = ctx->stubs ? concat(ctx->stubs, "/libcuda.so", NULL) : NULL;
		int checked = stub && !shared_defines(stub, &wanted, &driver);
		struct argv keep = ARGV_INIT, keep_where = ARGV_INIT;
		for (size_t i = 0; i < names.n; i++)
			if (!symset_has(&found, names.v[i]) && (!checked || symset_has(&driver, names.v[i]))) {
				argv_push(&keep, names.v[i]);
				argv_push(&keep_where, where.v[i]);
			}
		free(stub);
		symset_release(&wanted);
		symset_release(&found);
		symset_release(&driver);
		argv_release(&names);
		argv_release(&where);
		names = keep;
		where = keep_where;
	}
	if (names.n) {
		res->symbol = xstrdup(names.v[0]);
		char *also = xstrdup("");
		for (size_t i = 1; i < names.n && i < 4; i++) {
			char *n = concat(also, i == 1 ? " (also " : ", ", names.v[i], NULL);
			free(also);
			also = n;
		}
		if (names.n > 4) {
			char *n = concat(also, ", ...", NULL);
			free(also);
			also = n;
		}
		if (names.n > 1) {
			char *n = concat(also, ")", NULL);
			free(also);
			also = n;
		}
		if (req->is_static) {
			plan_note(plan, "link.lcuda", "%s is undefined in %s%s, but the link is static and "
				  "there is no static libcuda: nothing added", names.v[0], where.v[0], also);
		} else if (!can_add) {
			plan_note(plan, "link.lcuda", "%s is undefined in %s%s, but no libcuda.so is found "
				  "(no driver library on the linker's path, no toolkit stub): nothing added",
				  names.v[0], where.v[0], also);
		} else {
			struct argv add = ARGV_INIT;
			lcuda_args(&s, findable, &add);
			argv_pushn(&plan->argv, add.v, add.n);
			plan_note(plan, "link.lcuda", "added -lcuda: %s is undefined in %s%s and no input "
				  "provides it", names.v[0], where.v[0], also);
			if (!strncmp(add.v[0], "-L", 2))
				plan_note(plan, "link.lcuda", "added %s: no libcuda.so on the linker's path; "
					  "the toolkit's stub records libcuda.so.1, the driver's library",
					  add.v[0]);
			argv_release(&add);
			changed = 1;
		}
		free(also);
	}
	if (!changed && can_add && !req->no_retry)
		lcuda_args(&s, findable, &res->retry);
	res->changed = changed;

	argv_release(&names);
	argv_release(&where);
	for (size_t i = 0; i < s.narchives; i++) {
		free(s.archives[i].index);
		free(s.archives[i].pulled);
	}
	free(s.archives);
	for (size_t i = 0; i < s.nmaps; i++)
		elf_unmap(&s.maps[i]);
	free(s.maps);
	symset_release(&s.undefined);
	symset_release(&s.defined);
	argv_release(&s.shared);
	argv_release(&s.labels);
	argv_release(&s.dirs);
	argv_release(&s.order);
	return changed;
}

/* ---- the linker's own words ---- */

/* The symbol quoted at p, up to the closing quote; NULL when it is not a plain C name. */
static char *quoted_name(const char *p, char close)
{
	size_t len = 0;
	while (p[len] && p[len] != close && p[len] != '\n') {
		char c = p[len];
		if (c == '@')
			break;
		if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
			return NULL;
		len++;
	}
	if (p[len] == '@') {
		/* A version: cuInit@@libcuda.so.1 */
		const char *q = strchr(p + len, close);
		const char *nl = strchr(p + len, '\n');
		if (!q || (nl && nl < q))
			return NULL;
	} else if (p[len] != close) {
		return NULL;
	}
	return len ? xstrndup(p, len) : NULL;
}

char *link_undefined_driver_symbol(const char *text)
{
	static const char *const shapes[] = {
		"undefined reference to symbol '", "undefined reference to `", "undefined reference to '",
		"undefined symbol: ",
	};
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		/* Device-side links report their own undefined names. */
		if (strncmp(line, "nvlink", 6)) {
			for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
				const char *at = strstr(line, shapes[k]);
				if (!at || (size_t)(at - line) >= len)
					continue;
				const char *p = at + strlen(shapes[k]);
				char close = shapes[k][strlen(shapes[k]) - 1];
				char *name = quoted_name(p, close == '`' ? '\'' : close == ' ' ? '\n' : close);
				if (name && link_is_driver_name(name))
					return name;
				free(name);
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return NULL;
}

/* ---- the toolkit ---- */

static char *stubs_under(const char *root)
{
	static const char *const rel[] = { "/lib64/stubs",
#ifdef TARGET_DIR
					   "/targets/" TARGET_DIR "/lib/stubs",
#endif
					   "/lib/stubs" };
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		char *dir = concat(root, rel[i], NULL);
		char *lib = concat(dir, "/libcuda.so", NULL);
		int ok = file_exists(lib);
		free(lib);
		if (ok)
			return dir;
		free(dir);
	}
	return NULL;
}

char *link_find_stubs(const char *nvcc, config_getenv_fn env)
{
	char *found = NULL;
	if (nvcc) {
		char *root = toolkit_root(nvcc);
		if (root)
			found = stubs_under(root);
		free(root);
		if (!found) {
			char *real = lrealpath(nvcc);
			root = real ? toolkit_root(real) : NULL;
			if (root)
				found = stubs_under(root);
			free(root);
			free(real);
		}
	}
	static const char *const vars[] = { "CUDA_HOME", "CUDA_PATH" };
	for (size_t i = 0; i < 2 && !found && env; i++) {
		const char *v = env(vars[i]);
		if (v && *v)
			found = stubs_under(v);
	}
	if (!found)
		found = stubs_under("/usr/local/cuda");
	return found;
}

char *link_toolkit_lib(const char *nvcc)
{
	char *root = nvcc ? toolkit_root(nvcc) : NULL;
	if (!root)
		return NULL;
	static const char *const rel[] = {
#ifdef TARGET_DIR
		"/targets/" TARGET_DIR "/lib",
#endif
		"/lib64", "/lib" };
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		char *dir = concat(root, rel[i], NULL);
		if (file_exists(dir)) {
			free(root);
			return dir;
		}
		free(dir);
	}
	free(root);
	return NULL;
}
