#include "passes/scan.h"

#include <ctype.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libiberty.h>

/* Read off ptxas 13.0 (each marker assembled for every target 75..121f) and nvcc 13.0's front
 * end. `min` is a lower bound for every variant of an instruction that contains the text. */
const struct scan_feature scan_features[] = {
	{ "cp.async", 1, 80, NULL, "cp.async" },
	{ "cp.async.bulk", 1, 90, NULL, "cp.async.bulk" },
	{ "cp.reduce.async.bulk", 1, 90, NULL, "cp.reduce.async.bulk" },
	{ "ldmatrix", 1, 75, NULL, "ldmatrix" },
	{ "stmatrix", 1, 90, NULL, "stmatrix" },
	{ "elect.sync", 1, 90, NULL, "elect.sync" },
	{ "mbarrier.try_wait", 1, 90, NULL, "mbarrier.try_wait" },
	{ "fence.proxy.async", 1, 90, NULL, "fence.proxy.async" },
	{ "barrier.cluster", 1, 90, NULL, "barrier.cluster" },
	{ "redux.sync", 1, 80, NULL, "redux.sync" },
	{ ".e4m3", 1, 89, NULL, "fp8 (.e4m3)" },
	{ ".e5m2", 1, 89, NULL, "fp8 (.e5m2)" },
	{ "m16n8k8", 1, 75, NULL, "mma.m16n8k8" },
	{ "m16n8k16", 1, 80, NULL, "mma.m16n8k16" },
	{ "wgmma.", 1, 90, "90a", "wgmma" },
	{ "setmaxnreg", 1, 90, "90a 100a 100f 103a 103f 110a 110f 120a 120f 121a 121f", "setmaxnreg" },
	{ "tcgen05.", 1, 100, "100a 100f 103a 103f 110a 110f", "tcgen05" },
	{ "__cluster_dims__", 0, 90, NULL, "__cluster_dims__" },
	{ "fragment", 0, 80, NULL, "a bf16/tf32/double wmma fragment" },
};
const size_t scan_nfeatures = sizeof(scan_features) / sizeof(scan_features[0]);
#define FEATURE_CLUSTER (&scan_features[scan_nfeatures - 2])
#define FEATURE_WMMA (&scan_features[scan_nfeatures - 1])
/* Arch-specific support is known up to this number; later archs are left to the probe. */
#define SPECIFIC_KNOWN_UP_TO 121

#define MAX_SCOPES 256
#define MAX_PARENS 256
#define MAX_CONDS 64

void scan_init(struct scan *s) { memset(s, 0, sizeof(*s)); }

void scan_release(struct scan *s)
{
	for (size_t i = 0; i < s->nfiles; i++) {
		free(s->files[i].path);
		free(s->files[i].text);
	}
	for (size_t i = 0; i < s->nmarks; i++)
		free(s->marks[i].text);
	for (size_t i = 0; i < s->nfuncs; i++)
		free(s->funcs[i].name);
	for (size_t i = 0; i < s->nconds; i++) {
		free(s->conds[i]->expr);
		free(s->conds[i]);
	}
	free(s->files);
	free(s->marks);
	free(s->funcs);
	free(s->refs);
	free(s->conds);
	free(s->htab);
	memset(s, 0, sizeof(*s));
}

#define GROW(v, n, alloc)                                             \
	do {                                                          \
		if ((n) == (alloc)) {                                 \
			(alloc) = (alloc) ? (alloc) * 2 : 16;         \
			(v) = xrealloc((v), (alloc) * sizeof(*(v)));  \
		}                                                     \
	} while (0)

static struct scan_cond *new_cond(struct scan *s, struct scan_cond *parent, char *expr)
{
	struct scan_cond *c = XNEW(struct scan_cond);
	c->parent = parent;
	c->expr = expr;
	c->unknown = 0;
	GROW(s->conds, s->nconds, s->conds_alloc);
	s->conds[s->nconds++] = c;
	return c;
}

/* ---- the scanner's state while it reads one file or one macro body ---- */

struct scope {
	char kind; /* 'N' namespace or file, 'C' class, 'F' function body, 'B' block, 'I' other */
	unsigned templated : 1, uncertain : 1;
	int func;
};

struct paren {
	unsigned macro : 1, is_asm : 1, constexpr_cond : 1, sa : 1;
};

struct cframe {
	struct scan_cond *node;
	char *prior; /* "!(a)&&!(b)&&" for the branches before */
	char *last;  /* this branch's own condition */
};

struct parser {
	struct scan *s;
	const struct scan_options *o;
	size_t file;
	struct scope scopes[MAX_SCOPES];
	int nscopes;
	struct paren parens[MAX_PARENS];
	int nparens;
	/* the declaration in progress at namespace or class scope */
	unsigned d_template : 1, d_global : 1, d_device : 1, d_class : 1, d_paren : 1, d_ns : 1, d_eq : 1,
		d_enum : 1, d_extern : 1, d_extern_c : 1, d_cluster : 1;
	int d_angle; /* inside template< ... > */
	char d_name[128];
	unsigned d_cluster_line;
	/* the previous token */
	char prev[128];
	int prev_ident;
	unsigned asm_pending : 1, if_pending : 1, constexpr_pending : 1, constexpr_block : 1,
		sa_pending : 1, stmt_uncertain : 1;
	int stmt_uncertain_depth;
	/* static_assert( ... ): its first token and message */
	int sa_first;   /* 1 false/0, 0 something else, -1 not yet */
	char *sa_text;
	unsigned sa_line;
	/* fragment< ... > */
	int frag_depth; /* > 0 while inside the angle brackets */
	int frag_hit;
	unsigned frag_line;
	unsigned frag_pending : 1;
	/* conditions */
	struct cframe conds[MAX_CONDS];
	int nconds;
	int overflow; /* conditions nested deeper than we track */
	struct scan_cond *root;
	int directives; /* seen in this file */
	char guard[128];
};

static int is_ident_start(int c) { return isalpha(c) || c == '_'; }
static int is_ident(int c) { return isalnum(c) || c == '_'; }

static struct scan_cond *current_cond(struct parser *p)
{
	return p->nconds ? p->conds[p->nconds - 1].node : p->root;
}

static struct scope *top(struct parser *p) { return &p->scopes[p->nscopes - 1]; }

static int in_function(struct parser *p) { return top(p)->kind == 'F' || top(p)->kind == 'B'; }

static int uncertain_here(struct parser *p)
{
	if (p->stmt_uncertain || top(p)->uncertain)
		return 1;
	for (int i = 0; i < p->nparens; i++)
		if (p->parens[i].macro)
			return 1;
	return 0;
}

static void add_mark(struct parser *p, enum scan_mark_kind kind, const struct scan_feature *f,
		     char *text, unsigned line, int func, int uncertain)
{
	struct scan *s = p->s;
	GROW(s->marks, s->nmarks, s->marks_alloc);
	struct scan_mark *m = &s->marks[s->nmarks++];
	m->kind = kind;
	m->feature = f;
	m->text = text;
	m->file = p->file;
	m->line = line;
	m->cond = current_cond(p);
	m->func = func;
	m->uncertain = uncertain ? 1 : 0;
}

static void reset_decl(struct parser *p)
{
	p->d_template = p->d_global = p->d_device = p->d_class = p->d_paren = p->d_ns = p->d_eq = 0;
	p->d_enum = p->d_extern = p->d_extern_c = p->d_cluster = 0;
	p->d_angle = 0;
	p->d_name[0] = '\0';
}

static int all_caps(const char *t, size_t n)
{
	int letters = 0;
	for (size_t i = 0; i < n; i++) {
		if (islower((unsigned char)t[i]))
			return 0;
		letters += isupper((unsigned char)t[i]) != 0;
	}
	return letters >= 2;
}

static void copy_token(char *dst, size_t size, const char *t, size_t n)
{
	if (n >= size)
		n = size - 1;
	memcpy(dst, t, n);
	dst[n] = '\0';
}

/* A PTX string of an asm statement: every feature it names. */
static void ptx_string(struct parser *p, const char *t, size_t n, unsigned line)
{
	if (!in_function(p) || top(p)->func < 0)
		return;
	for (size_t k = 0; k < scan_nfeatures; k++) {
		const struct scan_feature *f = &scan_features[k];
		size_t fl = strlen(f->text);
		if (!f->ptx)
			continue;
		for (size_t i = 0; i + fl <= n; i++) {
			if (memcmp(t + i, f->text, fl))
				continue;
			if (f->text[0] != '.' && i > 0 && (is_ident((unsigned char)t[i - 1]) || t[i - 1] == '.'))
				continue;
			add_mark(p, SCAN_FEATURE, f, NULL, line, top(p)->func, uncertain_here(p));
			break;
		}
	}
}

static int in_asm(struct parser *p)
{
	for (int i = 0; i < p->nparens; i++)
		if (p->parens[i].is_asm)
			return 1;
	return 0;
}

static unsigned long name_hash(const char *t, size_t n)
{
	unsigned long h = 5381;
	for (size_t i = 0; i < n; i++)
		h = h * 33 + (unsigned char)t[i];
	return h;
}

/* The function or macro of this name seen so far, or -1. */
static int find_func(const struct scan *s, const char *t, size_t n)
{
	if (!s->hsize)
		return -1;
	for (size_t i = name_hash(t, n) & (s->hsize - 1);; i = (i + 1) & (s->hsize - 1)) {
		int f = s->htab[i];
		if (f < 0)
			return -1;
		if (strlen(s->funcs[f].name) == n && !memcmp(s->funcs[f].name, t, n))
			return f;
	}
}

static void hash_insert(struct scan *s, int f)
{
	const char *name = s->funcs[f].name;
	for (size_t i = name_hash(name, strlen(name)) & (s->hsize - 1);; i = (i + 1) & (s->hsize - 1))
		if (s->htab[i] < 0) {
			s->htab[i] = f;
			return;
		}
}

static int add_func(struct parser *p, const char *name, int kernel, int templated, int macro)
{
	struct scan *s = p->s;
	int same = find_func(s, name, strlen(name));
	GROW(s->funcs, s->nfuncs, s->funcs_alloc);
	struct scan_func *f = &s->funcs[s->nfuncs];
	f->name = xstrdup(name);
	f->kernel = kernel ? 1 : 0;
	f->templated = templated ? 1 : 0;
	f->macro = macro ? 1 : 0;
	f->ambiguous = 0;
	f->cond = current_cond(p);
	int idx = (int)s->nfuncs++;
	if (same >= 0) {
		/* overloads, specialisations, a macro and a function: which one is meant is unknown */
		s->funcs[same].ambiguous = 1;
		f->ambiguous = 1;
		return idx;
	}
	if (2 * (s->hcount + 1) > s->hsize) {
		size_t size = s->hsize ? s->hsize * 2 : 64;
		free(s->htab);
		s->htab = XNEWVEC(int, size);
		for (size_t i = 0; i < size; i++)
			s->htab[i] = -1;
		s->hsize = size;
		for (size_t i = 0; i + 1 < s->nfuncs; i++)
			if (find_func(s, s->funcs[i].name, strlen(s->funcs[i].name)) < 0)
				hash_insert(s, (int)i);
	}
	hash_insert(s, idx);
	s->hcount++;
	return idx;
}

static void push_scope(struct parser *p, char kind, int templated, int uncertain, int func)
{
	if (p->nscopes == MAX_SCOPES)
		return;
	struct scope *sc = &p->scopes[p->nscopes++];
	sc->kind = kind;
	sc->templated = templated ? 1 : 0;
	sc->uncertain = uncertain ? 1 : 0;
	sc->func = func;
}

static void open_brace(struct parser *p)
{
	struct scope *t = top(p);
	if (p->nparens || in_function(p)) {
		push_scope(p, 'B', t->templated, t->uncertain || p->constexpr_block, t->func);
		p->constexpr_block = 0;
		return;
	}
	if (p->d_ns || (p->d_extern_c && !p->d_paren)) {
		push_scope(p, 'N', 0, 0, -1);
	} else if (p->d_paren && !p->d_eq && !p->d_enum) {
		int templated = p->d_template || t->templated;
		int func = -1;
		if ((p->d_global || p->d_device) && p->d_name[0]) {
			func = add_func(p, p->d_name, p->d_global, templated, 0);
			if (p->d_cluster)
				add_mark(p, SCAN_FEATURE, FEATURE_CLUSTER, NULL, p->d_cluster_line, func, 0);
		}
		push_scope(p, 'F', templated, 0, func);
	} else if (p->d_class && !p->d_enum && !p->d_eq) {
		push_scope(p, 'C', p->d_template || t->templated, 0, -1);
	} else {
		push_scope(p, 'I', t->templated, 0, -1);
	}
	reset_decl(p);
}

static void close_brace(struct parser *p)
{
	if (p->nscopes > 1)
		p->nscopes--;
	if (!in_function(p))
		reset_decl(p);
}

static void on_ident(struct parser *p, const char *t, size_t n, unsigned line)
{
#define IS(word) (n == sizeof(word) - 1 && !memcmp(t, word, n))
	int fn = in_function(p);
	int was_if = p->if_pending;
	p->if_pending = 0;
	if (!fn)
		p->d_extern_c = 0;
	if (p->frag_depth > 0) {
		if (IS("__nv_bfloat16") || IS("tf32") || IS("double"))
			p->frag_hit = 1;
	}
	if (IS("asm") || IS("__asm__") || IS("__asm")) {
		p->asm_pending = 1;
	} else if (p->asm_pending && (IS("volatile") || IS("__volatile__") || IS("goto") || IS("inline"))) {
		/* still pending */
	} else if (IS("if")) {
		p->if_pending = 1;
	} else if (IS("constexpr") && was_if && fn) {
		p->constexpr_pending = 1;
	} else if (IS("static_assert")) {
		p->sa_pending = 1;
	} else if (IS("fragment") && fn) {
		p->frag_pending = 1;
		p->frag_line = line;
	} else if (!fn) {
		if (IS("template"))
			p->d_template = 1;
		else if (IS("__global__"))
			p->d_global = 1;
		else if (IS("__device__"))
			p->d_device = 1;
		else if ((IS("struct") || IS("class") || IS("union")) && !p->d_paren)
			p->d_class = 1;
		else if (IS("enum"))
			p->d_enum = 1;
		else if (IS("namespace"))
			p->d_ns = 1;
		else if (IS("extern"))
			p->d_extern = 1;
		else if (IS("__cluster_dims__")) {
			p->d_cluster = 1;
			p->d_cluster_line = line;
		}
	} else if (top(p)->func >= 0 && !in_asm(p)) {
		int target = find_func(p->s, t, n);
		if (target >= 0 && target != top(p)->func) {
			struct scan *s = p->s;
			GROW(s->refs, s->nrefs, s->refs_alloc);
			struct scan_ref *r = &s->refs[s->nrefs++];
			r->from = top(p)->func;
			r->target = target;
			r->cond = current_cond(p);
			r->uncertain = uncertain_here(p) ? 1 : 0;
		}
	}
#undef IS
}

static void on_punct(struct parser *p, char c, unsigned line)
{
	p->if_pending = 0;
	if (p->frag_pending) {
		p->frag_pending = 0;
		if (c == '<') {
			p->frag_depth = 1;
			p->frag_hit = 0;
			return;
		}
	}
	if (p->frag_depth > 0) {
		if (c == '<')
			p->frag_depth++;
		else if (c == '>' && --p->frag_depth == 0 && p->frag_hit)
			add_mark(p, SCAN_FEATURE, FEATURE_WMMA, NULL, p->frag_line, top(p)->func,
				 uncertain_here(p));
		else if (c == ';' || c == '{' || c == '}')
			p->frag_depth = 0;
		if (p->frag_depth > 0)
			return;
	}
	switch (c) {
	case '(': {
		int decl = !in_function(p) && !p->nparens;
		int attr = p->prev_ident && (!strncmp(p->prev, "__", 2) || all_caps(p->prev, strlen(p->prev)));
		if (decl && !attr && !p->d_paren) {
			p->d_paren = 1;
			if (p->prev_ident)
				copy_token(p->d_name, sizeof(p->d_name), p->prev, strlen(p->prev));
		}
		if (p->nparens < MAX_PARENS) {
			struct paren *pa = &p->parens[p->nparens++];
			pa->macro = p->prev_ident && all_caps(p->prev, strlen(p->prev)) && !p->asm_pending;
			pa->is_asm = p->asm_pending;
			pa->constexpr_cond = p->constexpr_pending;
			pa->sa = p->sa_pending;
			if (pa->sa) {
				p->sa_first = -1;
				free(p->sa_text);
				p->sa_text = NULL;
				p->sa_line = line;
			}
		}
		p->asm_pending = p->constexpr_pending = p->sa_pending = 0;
		break;
	}
	case ')':
		if (p->nparens) {
			struct paren pa = p->parens[--p->nparens];
			if (pa.constexpr_cond) {
				p->constexpr_block = 1;
				p->stmt_uncertain = 1;
				p->stmt_uncertain_depth = p->nscopes;
			}
			if (pa.sa && p->sa_first == 1 && !top(p)->templated) {
				add_mark(p, SCAN_STATIC_ASSERT, NULL,
					 p->sa_text ? p->sa_text : xstrdup("static_assert(false)"), p->sa_line, -1, 0);
				p->sa_text = NULL;
			}
		}
		break;
	case '{':
		if (p->constexpr_block) {
			/* the block itself is uncertain; the statement flag is no longer needed */
			p->stmt_uncertain = 0;
		}
		open_brace(p);
		break;
	case '}':
		close_brace(p);
		break;
	case ';':
		if (!p->nparens) {
			if (!in_function(p))
				reset_decl(p);
			if (p->stmt_uncertain && p->nscopes <= p->stmt_uncertain_depth) {
				p->stmt_uncertain = 0;
				p->constexpr_block = 0;
			}
		}
		break;
	case '=':
		if (!in_function(p) && !p->nparens && !p->d_angle)
			p->d_eq = 1;
		break;
	case '<':
		if (!in_function(p) && !p->nparens && p->d_template && !p->d_paren)
			p->d_angle++;
		break;
	case '>':
		if (!in_function(p) && !p->nparens && p->d_angle)
			p->d_angle--;
		break;
	case ':':
		if (!in_function(p) && !p->nparens && top(p)->kind == 'C' && !p->d_paren && !p->d_class)
			reset_decl(p);
		break;
	default:
		break;
	}
}

/* Handles the first token inside static_assert( ... ). */
static void sa_token(struct parser *p, const char *t, size_t n, int is_string)
{
	if (!p->nparens || !p->parens[p->nparens - 1].sa)
		return;
	if (p->sa_first == -1) {
		p->sa_first = (n == 5 && !memcmp(t, "false", 5)) || (n == 1 && t[0] == '0') ? 1 : 0;
	} else if (is_string && !p->sa_text) {
		p->sa_text = xasprintf("static_assert: %.*s", (int)n, t);
	}
}

static void lex_code(struct parser *p, const char *text, size_t len, unsigned first_line,
		     void (*directive)(struct parser *, const char *, const char *, unsigned *));

/* ---- preprocessor directives ---- */

static char *directive_text(const char *a, const char *b)
{
	/* Joins continuation lines and drops comments. */
	char *out = XNEWVEC(char, (size_t)(b - a) + 1);
	size_t n = 0;
	for (const char *q = a; q < b; q++) {
		if (*q == '\\' && q + 1 < b && q[1] == '\n') {
			q++;
			continue;
		}
		if (*q == '/' && q + 1 < b && q[1] == '*') {
			const char *e = q + 2;
			while (e + 1 < b && !(e[0] == '*' && e[1] == '/'))
				e++;
			q = e + 1;
			out[n++] = ' ';
			continue;
		}
		if (*q == '/' && q + 1 < b && q[1] == '/')
			break;
		out[n++] = *q == '\n' ? ' ' : *q;
	}
	while (n && isspace((unsigned char)out[n - 1]))
		n--;
	out[n] = '\0';
	return out;
}

static int path_exists(const char *path)
{
	struct stat sb;
	return !stat(path, &sb) && S_ISREG(sb.st_mode);
}

/* An absolute, lexically normalised path (xmalloc'ed). */
static char *absolute(const char *path)
{
	char *joined;
	if (path[0] == '/') {
		joined = xstrdup(path);
	} else {
		char *cwd = getcwd(NULL, 0);
		joined = concat(cwd ? cwd : ".", "/", path, NULL);
		free(cwd);
	}
	char *out = XNEWVEC(char, strlen(joined) + 2);
	size_t n = 0;
	for (const char *q = joined; *q;) {
		while (*q == '/')
			q++;
		const char *e = strchr(q, '/');
		size_t len = e ? (size_t)(e - q) : strlen(q);
		if (len == 0)
			break;
		if (len == 1 && q[0] == '.') {
		} else if (len == 2 && q[0] == '.' && q[1] == '.') {
			while (n > 0 && out[n - 1] != '/')
				n--;
			if (n > 0)
				n--;
		} else {
			out[n++] = '/';
			memcpy(out + n, q, len);
			n += len;
		}
		q += len;
	}
	if (!n)
		out[n++] = '/';
	out[n] = '\0';
	free(joined);
	return out;
}

static int under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	return dir && !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0' || n == 1);
}

/* A header of the project: under its root, not below the toolkit, and in no nested repository
 * (a directory between it and the root that has its own .git). */
static int in_project(const struct scan_options *o, const char *abs)
{
	if (!o->project_root || !under(abs, o->project_root))
		return 0;
	if (o->toolkit_root && under(abs, o->toolkit_root))
		return 0;
	char *d = xstrdup(abs);
	size_t rootlen = strlen(o->project_root);
	int ok = 1;
	for (char *slash = strrchr(d, '/'); slash && (size_t)(slash - d) > rootlen; slash = strrchr(d, '/')) {
		*slash = '\0';
		char *git = concat(d, "/.git", NULL);
		struct stat sb;
		if (!stat(git, &sb))
			ok = 0;
		free(git);
		if (!ok)
			break;
	}
	free(d);
	return ok;
}

static void scan_one(struct scan *s, const char *abs, char *text, size_t len, const struct scan_options *o,
		     struct scan_cond *ctx);

static int read_whole(const char *path, char **text, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat sb;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return -1;
	}
	size_t size = (size_t)sb.st_size, got = 0;
	char *buf = XNEWVEC(char, size + 1);
	while (got < size) {
		ssize_t r = read(fd, buf + got, size - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	buf[got] = '\0';
	*text = buf;
	*len = got;
	return 0;
}

static int cond_always(const struct scan_cond *c)
{
	for (; c; c = c->parent)
		if (c->unknown || strcmp(c->expr, "1"))
			return 0;
	return 1;
}

static void include(struct parser *p, const char *arg)
{
	struct scan *s = p->s;
	const struct scan_options *o = p->o;
	char close;
	if (*arg == '"')
		close = '"';
	else if (*arg == '<')
		close = '>';
	else
		return; /* #include MACRO */
	const char *end = strchr(arg + 1, close);
	if (!end || end == arg + 1)
		return;
	char *name = xstrndup(arg + 1, (size_t)(end - arg - 1));
	char *found = NULL;
	if (close == '"') {
		const char *cur = s->files[p->file].path;
		const char *slash = strrchr(cur, '/');
		char *dir = slash ? xstrndup(cur, (size_t)(slash - cur)) : xstrdup(".");
		char *cand = concat(dir, "/", name, NULL);
		free(dir);
		if (path_exists(cand))
			found = cand;
		else
			free(cand);
	}
	for (size_t i = 0; !found && o->include_dirs && i < o->include_dirs->n; i++) {
		char *cand = concat(o->include_dirs->v[i], "/", name, NULL);
		if (path_exists(cand))
			found = cand;
		else
			free(cand);
	}
	free(name);
	if (!found)
		return;
	char *abs = absolute(found);
	free(found);
	struct scan_cond *here = current_cond(p);
	for (size_t i = 0; i < s->nfiles; i++) {
		if (strcmp(s->files[i].path, abs))
			continue;
		/* Included again: its content counts only where both contexts agree. */
		struct scan_cond *r = s->files[i].root;
		if (!(cond_always(r->parent) && cond_always(here)) && r->parent != here)
			r->unknown = 1;
		free(abs);
		return;
	}
	size_t max_files = o->max_files ? o->max_files : 256;
	size_t max_bytes = o->max_bytes ? o->max_bytes : 4u << 20;
	char *text;
	size_t len;
	if (!in_project(o, abs) || s->nfiles >= max_files || s->bytes >= max_bytes ||
	    read_whole(abs, &text, &len)) {
		if (s->nfiles >= max_files || s->bytes >= max_bytes)
			s->truncated = 1;
		free(abs);
		return;
	}
	scan_one(s, abs, text, len, o, here);
	free(abs);
}

static void push_cond(struct parser *p, char *expr)
{
	if (p->nconds == MAX_CONDS) {
		p->overflow++;
		free(expr);
		return;
	}
	struct scan_cond *parent = current_cond(p);
	struct cframe *f = &p->conds[p->nconds++];
	f->prior = xstrdup("");
	f->last = expr;
	f->node = new_cond(p->s, parent, concat("(", expr, ")", NULL));
}

static void next_branch(struct parser *p, char *expr)
{
	if (p->overflow || !p->nconds) {
		free(expr);
		return;
	}
	struct cframe *f = &p->conds[p->nconds - 1];
	char *prior = concat(f->prior, "!(", f->last, ")&&", NULL);
	free(f->prior);
	f->prior = prior;
	free(f->last);
	f->last = expr ? expr : xstrdup("1");
	struct scan_cond *parent = p->nconds > 1 ? p->conds[p->nconds - 2].node : p->root;
	f->node = new_cond(p->s, parent, concat(f->prior, "(", f->last, ")", NULL));
}

static void pop_cond(struct parser *p)
{
	if (p->overflow) {
		p->overflow--;
		return;
	}
	if (!p->nconds)
		return;
	struct cframe *f = &p->conds[--p->nconds];
	free(f->prior);
	free(f->last);
}

static void macro_body(struct parser *p, const char *rest, unsigned line);

static void directive(struct parser *p, const char *a, const char *b, unsigned *line)
{
	(void)line;
	char *text = directive_text(a, b);
	char *q = text;
	while (isspace((unsigned char)*q))
		q++;
	const char *name = q;
	while (is_ident((unsigned char)*q))
		q++;
	size_t nl = (size_t)(q - name);
	while (isspace((unsigned char)*q))
		q++;
	const char *rest = q;
	int first = p->directives++ == 0;
#define D(word) (nl == sizeof(word) - 1 && !memcmp(name, word, nl))
	if (D("if")) {
		push_cond(p, xstrdup(rest));
	} else if (D("ifdef") || D("ifndef")) {
		size_t idl = strspn(rest, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
		char *e = xasprintf("%sdefined(%.*s)", D("ifndef") ? "!" : "", (int)idl, rest);
		push_cond(p, e);
		if (D("ifndef") && first && p->nconds)
			copy_token(p->guard, sizeof(p->guard), rest, idl);
	} else if (D("elif")) {
		next_branch(p, xstrdup(rest));
	} else if (D("elifdef") || D("elifndef")) {
		size_t idl = strspn(rest, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
		next_branch(p, xasprintf("%sdefined(%.*s)", D("elifndef") ? "!" : "", (int)idl, rest));
	} else if (D("else")) {
		next_branch(p, NULL);
	} else if (D("endif")) {
		pop_cond(p);
	} else if (D("include") || D("include_next")) {
		include(p, rest);
	} else if (D("define")) {
		size_t idl = strspn(rest, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
		/* #ifndef X / #define X opening a file: an include guard, always true */
		if (p->directives == 2 && p->guard[0] && p->nconds == 1 && strlen(p->guard) == idl &&
		    !strncmp(rest, p->guard, idl)) {
			free(p->conds[0].node->expr);
			p->conds[0].node->expr = xstrdup("1");
		}
		macro_body(p, rest, *line);
	} else if (D("error")) {
		add_mark(p, SCAN_ERROR_DIRECTIVE, NULL, xasprintf("#error %s", rest), *line, -1, 0);
	}
#undef D
	free(text);
}

/* A macro's body is scanned like a function body: the macro is then reached where a kernel
 * names it. */
static void macro_body(struct parser *p, const char *rest, unsigned line)
{
	size_t idl = strspn(rest, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
	if (!idl)
		return;
	const char *body = rest + idl;
	if (*body == '(') {
		const char *e = strchr(body, ')');
		if (!e)
			return;
		body = e + 1;
	}
	/* Only bodies that can hold something of interest are worth a function. */
	if (!strstr(body, "asm") && !strstr(body, "fragment"))
		return;
	char *name = xstrndup(rest, idl);
	struct parser *sub = XCNEW(struct parser);
	sub->s = p->s;
	sub->o = p->o;
	sub->file = p->file;
	sub->root = current_cond(p);
	int func = add_func(p, name, 0, 0, 1);
	free(name);
	sub->scopes[0] = (struct scope){ 'N', 0, 0, -1 };
	sub->scopes[1] = (struct scope){ 'F', 0, 0, func };
	sub->nscopes = 2;
	lex_code(sub, body, strlen(body), line, NULL);
	free(sub->sa_text);
	free(sub);
}

/* ---- the lexer ---- */

static void lex_code(struct parser *p, const char *text, size_t len, unsigned first_line,
		     void (*dir)(struct parser *, const char *, const char *, unsigned *))
{
	const char *t = text, *end = text + len;
	unsigned line = first_line ? first_line : 1;
	int bol = 1;
	while (t < end) {
		char c = *t;
		if (c == '\n') {
			line++;
			bol = 1;
			t++;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
			t++;
			continue;
		}
		if (c == '\\' && t + 1 < end && t[1] == '\n') {
			t += 2;
			line++;
			continue;
		}
		if (c == '/' && t + 1 < end && t[1] == '/') {
			while (t < end && *t != '\n') {
				if (*t == '\\' && t + 1 < end && t[1] == '\n') {
					line++;
					t++;
				}
				t++;
			}
			continue;
		}
		if (c == '/' && t + 1 < end && t[1] == '*') {
			t += 2;
			while (t + 1 < end && !(t[0] == '*' && t[1] == '/')) {
				line += *t == '\n';
				t++;
			}
			t += 2;
			continue;
		}
		if (c == '#' && bol && dir) {
			const char *a = t + 1, *e = a;
			unsigned dline = line;
			while (e < end && *e != '\n') {
				if (*e == '\\' && e + 1 < end && e[1] == '\n') {
					e++;
					line++;
				} else if (*e == '/' && e + 1 < end && e[1] == '*') {
					/* a comment may span lines inside a directive */
					e += 2;
					while (e + 1 < end && !(e[0] == '*' && e[1] == '/')) {
						line += *e == '\n';
						e++;
					}
					e++;
				}
				e++;
			}
			if (e > end)
				e = end;
			dir(p, a, e, &dline);
			t = e;
			continue;
		}
		bol = 0;
		if (c == '"' || (c == 'R' && t + 1 < end && t[1] == '"')) {
			const char *s0 = t;
			if (c == 'R') {
				/* R"delim( ... )delim" */
				const char *open = memchr(t + 2, '(', (size_t)(end - t - 2));
				if (!open) {
					t = end;
					break;
				}
				size_t dl = (size_t)(open - t - 2);
				const char *q = open + 1;
				while (q < end && !(*q == ')' && (size_t)(end - q) > dl + 1 &&
						    !memcmp(q + 1, t + 2, dl) && q[1 + dl] == '"')) {
					line += *q == '\n';
					q++;
				}
				t = q < end ? q + dl + 2 : end;
			} else {
				t++;
				while (t < end && *t != '"' && *t != '\n') {
					if (*t == '\\' && t + 1 < end)
						t++;
					t++;
				}
				if (t < end && *t == '"')
					t++;
			}
			if (in_asm(p))
				ptx_string(p, s0, (size_t)(t - s0), line);
			sa_token(p, s0, (size_t)(t - s0), 1);
			if (p->d_extern && !in_function(p))
				p->d_extern_c = 1;
			p->prev_ident = 0;
			continue;
		}
		if (c == '\'') {
			t++;
			while (t < end && *t != '\'' && *t != '\n') {
				if (*t == '\\' && t + 1 < end)
					t++;
				t++;
			}
			if (t < end && *t == '\'')
				t++;
			sa_token(p, "'", 1, 0);
			p->prev_ident = 0;
			continue;
		}
		if (is_ident_start((unsigned char)c)) {
			const char *s0 = t;
			while (t < end && is_ident((unsigned char)*t))
				t++;
			size_t n = (size_t)(t - s0);
			sa_token(p, s0, n, 0);
			on_ident(p, s0, n, line);
			copy_token(p->prev, sizeof(p->prev), s0, n);
			p->prev_ident = 1;
			continue;
		}
		if (isdigit((unsigned char)c) || (c == '.' && t + 1 < end && isdigit((unsigned char)t[1]))) {
			const char *s0 = t;
			while (t < end && (is_ident((unsigned char)*t) || *t == '.' || *t == '\'' ||
					   ((*t == '+' || *t == '-') && (t[-1] == 'e' || t[-1] == 'E' || t[-1] == 'p' || t[-1] == 'P'))))
				t++;
			sa_token(p, s0, (size_t)(t - s0), 0);
			p->prev_ident = 0;
			continue;
		}
		sa_token(p, t, 1, 0);
		on_punct(p, c, line);
		p->prev_ident = 0;
		t++;
	}
}

static void scan_one(struct scan *s, const char *abs, char *text, size_t len, const struct scan_options *o,
		     struct scan_cond *ctx)
{
	GROW(s->files, s->nfiles, s->files_alloc);
	size_t idx = s->nfiles++;
	struct scan_file *f = &s->files[idx];
	f->path = xstrdup(abs);
	f->text = text;
	f->len = len;
	f->root = new_cond(s, ctx, xstrdup("1"));
	s->bytes += len;

	struct parser *p = XCNEW(struct parser);
	p->s = s;
	p->o = o;
	p->file = idx;
	p->root = s->files[idx].root;
	p->scopes[0] = (struct scope){ 'N', 0, 0, -1 };
	p->nscopes = 1;
	/* s->files may move while includes are read: lex from the text pointer, which stays. */
	lex_code(p, text, len, 1, directive);
	while (p->nconds)
		pop_cond(p);
	free(p->sa_text);
	free(p);
}

int scan_file(struct scan *s, const char *path, const struct scan_options *o)
{
	char *text;
	size_t len;
	struct stat sb;
	/* a source beyond the byte limit is not read at all: nothing is known about it */
	if (stat(path, &sb) || (size_t)sb.st_size > (o->max_bytes ? o->max_bytes : 4u << 20) ||
	    read_whole(path, &text, &len))
		return -1;
	char *abs = absolute(path);
	scan_one(s, abs, text, len, o, NULL);
	free(abs);
	return 0;
}

int scan_text(struct scan *s, const char *name, const char *text, const struct scan_options *o)
{
	char *abs = absolute(name);
	scan_one(s, abs, xstrdup(text), strlen(text), o, NULL);
	free(abs);
	return 0;
}

/* ---- conditions, evaluated for one pass ---- */

struct env {
	const struct arch *virt; /* NULL: host pass */
	const struct argv *defines;
};

struct val {
	int known;
	long long v;
};

struct ev {
	const char *q;
	const struct env *env;
};

static void ws(struct ev *e)
{
	while (isspace((unsigned char)*e->q))
		e->q++;
}

/* The value of a macro name: known (defined or not) or unknown. *defined says whether it is. */
static struct val lookup(const struct env *env, const char *name, size_t n, int *defined)
{
	struct val unknown = { 0, 0 }, undef = { 1, 0 };
	*defined = -1;
#define NAME(word) (n == sizeof(word) - 1 && !memcmp(name, word, n))
	for (size_t i = env->defines ? env->defines->n : 0; i-- > 0;) {
		const char *d = env->defines->v[i];
		int minus = d[0] == '-';
		const char *nm = d + minus;
		size_t dl = strcspn(nm, "=");
		if (dl != n || memcmp(nm, name, n))
			continue;
		if (minus) {
			*defined = 0;
			return undef;
		}
		*defined = 1;
		if (!nm[dl])
			return (struct val){ 1, 1 };
		char *endp;
		long long v = strtoll(nm + dl + 1, &endp, 0);
		if (*endp && *endp != 'u' && *endp != 'U' && *endp != 'l' && *endp != 'L')
			return unknown;
		return (struct val){ 1, v };
	}
	if (NAME("__CUDACC__") || NAME("__NVCC__")) {
		*defined = 1;
		return (struct val){ 1, 1 };
	}
	const struct arch *a = env->virt;
	if (NAME("__CUDA_ARCH__")) {
		*defined = a != NULL;
		return a ? (struct val){ 1, (long long)a->num * 10 } : undef;
	}
	if (NAME("__CUDA_ARCH_SPECIFIC__")) {
		int on = a && a->suffix == 'a';
		*defined = on;
		return on ? (struct val){ 1, (long long)a->num * 10 } : undef;
	}
	if (NAME("__CUDA_ARCH_FAMILY_SPECIFIC__")) {
		int on = a && a->suffix;
		*defined = on;
		return on ? (struct val){ 1, (long long)a->num * 10 } : undef;
	}
	if (n > 20 && !memcmp(name, "__CUDA_ARCH_FEAT_SM", 19) && n > 4 && !memcmp(name + n - 4, "_ALL", 4)) {
		unsigned num = (unsigned)strtoul(name + 19, NULL, 10);
		int on = a && a->suffix == 'a' && a->num == num;
		*defined = on;
		return on ? (struct val){ 1, 1 } : undef;
	}
#undef NAME
	return unknown;
}

static struct val expr_cond(struct ev *e);

static struct val primary(struct ev *e)
{
	struct val unknown = { 0, 0 };
	ws(e);
	const char *q = e->q;
	if (*q == '(') {
		e->q++;
		struct val v = expr_cond(e);
		ws(e);
		if (*e->q == ')')
			e->q++;
		return v;
	}
	if (*q == '!' && q[1] != '=') {
		e->q++;
		struct val v = primary(e);
		return v.known ? (struct val){ 1, !v.v } : unknown;
	}
	if (*q == '-' || *q == '+' || *q == '~') {
		e->q++;
		struct val v = primary(e);
		if (!v.known)
			return v;
		return (struct val){ 1, *q == '-' ? (long long)(0 - (unsigned long long)v.v) : *q == '~' ? ~v.v : v.v };
	}
	if (isdigit((unsigned char)*q)) {
		char *endp;
		long long v = strtoll(q, &endp, 0);
		while (*endp == 'u' || *endp == 'U' || *endp == 'l' || *endp == 'L')
			endp++;
		e->q = endp;
		return (struct val){ 1, v };
	}
	if (is_ident_start((unsigned char)*q)) {
		const char *s0 = q;
		while (is_ident((unsigned char)*q))
			q++;
		size_t n = (size_t)(q - s0);
		e->q = q;
		if (n == 7 && !memcmp(s0, "defined", 7)) {
			ws(e);
			int paren = *e->q == '(';
			if (paren)
				e->q++;
			ws(e);
			const char *m = e->q;
			while (is_ident((unsigned char)*e->q))
				e->q++;
			size_t ml = (size_t)(e->q - m);
			ws(e);
			if (paren && *e->q == ')')
				e->q++;
			int defined;
			lookup(e->env, m, ml, &defined);
			return defined < 0 ? unknown : (struct val){ 1, defined };
		}
		ws(e);
		if (*e->q == '(') {
			/* a function-like macro or __has_include(...): unknown */
			int depth = 0;
			do {
				if (*e->q == '(')
					depth++;
				else if (*e->q == ')')
					depth--;
				e->q++;
			} while (*e->q && depth > 0);
			return unknown;
		}
		if ((n == 4 && !memcmp(s0, "true", 4)) || (n == 5 && !memcmp(s0, "false", 5)))
			return (struct val){ 1, n == 4 };
		int defined;
		return lookup(e->env, s0, n, &defined);
	}
	/* Something this evaluator does not read: give up on the rest. */
	e->q += strlen(e->q);
	return unknown;
}

static int prec(const char *q, int *len)
{
	static const struct {
		const char *op;
		int prec;
	} ops[] = { { "||", 1 }, { "&&", 2 }, { "|", 3 }, { "^", 4 }, { "&", 5 }, { "==", 6 }, { "!=", 6 },
		    { "<=", 7 }, { ">=", 7 }, { "<<", 8 }, { ">>", 8 }, { "<", 7 }, { ">", 7 }, { "+", 9 },
		    { "-", 9 }, { "*", 10 }, { "/", 10 }, { "%", 10 } };
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		size_t n = strlen(ops[i].op);
		if (!strncmp(q, ops[i].op, n)) {
			/* "|" is not "||", "&" is not "&&" */
			if (n == 1 && (q[1] == q[0] || q[1] == '=') && q[0] != '<' && q[0] != '>')
				continue;
			*len = (int)n;
			return ops[i].prec;
		}
	}
	return 0;
}

static struct val binary(struct ev *e, int min_prec)
{
	struct val lhs = primary(e);
	for (;;) {
		ws(e);
		int len, p = prec(e->q, &len);
		if (!p || p < min_prec)
			return lhs;
		char op[3] = { e->q[0], len > 1 ? e->q[1] : '\0', '\0' };
		e->q += len;
		struct val rhs = binary(e, p + 1);
		struct val r = { 0, 0 };
		if (!strcmp(op, "&&")) {
			if ((lhs.known && !lhs.v) || (rhs.known && !rhs.v))
				r = (struct val){ 1, 0 };
			else if (lhs.known && rhs.known)
				r = (struct val){ 1, 1 };
		} else if (!strcmp(op, "||")) {
			if ((lhs.known && lhs.v) || (rhs.known && rhs.v))
				r = (struct val){ 1, 1 };
			else if (lhs.known && rhs.known)
				r = (struct val){ 1, 0 };
		} else if (lhs.known && rhs.known) {
			long long a = lhs.v, b = rhs.v;
			r.known = 1;
			/* Wrapping, as the preprocessor's own arithmetic does (no signed overflow). */
			unsigned long long ua = (unsigned long long)a, ub = (unsigned long long)b;
			if (!strcmp(op, "|")) r.v = a | b;
			else if (!strcmp(op, "^")) r.v = a ^ b;
			else if (!strcmp(op, "&")) r.v = a & b;
			else if (!strcmp(op, "==")) r.v = a == b;
			else if (!strcmp(op, "!=")) r.v = a != b;
			else if (!strcmp(op, "<=")) r.v = a <= b;
			else if (!strcmp(op, ">=")) r.v = a >= b;
			else if (!strcmp(op, "<")) r.v = a < b;
			else if (!strcmp(op, ">")) r.v = a > b;
			else if (!strcmp(op, "<<")) r.v = b >= 0 && b < 63 ? (long long)(ua << b) : 0;
			else if (!strcmp(op, ">>")) r.v = b >= 0 && b < 63 ? a >> b : 0;
			else if (!strcmp(op, "+")) r.v = (long long)(ua + ub);
			else if (!strcmp(op, "-")) r.v = (long long)(ua - ub);
			else if (!strcmp(op, "*")) r.v = (long long)(ua * ub);
			else if ((!strcmp(op, "/") || !strcmp(op, "%")) && b && !(a == LLONG_MIN && b == -1))
				r.v = op[0] == '/' ? a / b : a % b;
			else r.known = 0;
		}
		lhs = r;
	}
}

static struct val expr_cond(struct ev *e)
{
	struct val c = binary(e, 1);
	ws(e);
	if (*e->q != '?')
		return c;
	e->q++;
	struct val a = expr_cond(e);
	ws(e);
	if (*e->q == ':')
		e->q++;
	struct val b = expr_cond(e);
	if (c.known)
		return c.v ? a : b;
	if (a.known && b.known && a.v == b.v)
		return a;
	return (struct val){ 0, 0 };
}

int scan_eval(const char *expr, const struct arch *virt, const struct argv *defines)
{
	struct env env = { virt, defines };
	struct ev e = { expr, &env };
	struct val v = expr_cond(&e);
	ws(&e);
	if (*e.q || !v.known)
		return -1;
	return v.v != 0;
}

/* Tri-valued and: 1, 0 or -1 (unknown). */
static int and3(int a, int b)
{
	if (!a || !b)
		return 0;
	if (a < 0 || b < 0)
		return -1;
	return 1;
}

static int or3(int a, int b)
{
	if (a == 1 || b == 1)
		return 1;
	if (a < 0 || b < 0)
		return -1;
	return 0;
}

static int eval_chain(const struct scan_cond *c, const struct env *env)
{
	int r = 1;
	for (; c && r; c = c->parent) {
		if (c->unknown) {
			r = and3(r, -1);
			continue;
		}
		if (!strcmp(c->expr, "1"))
			continue;
		r = and3(r, scan_eval(c->expr, env->virt, env->defines));
	}
	return r;
}

/* Whether each function is certainly compiled for this pass: kernels that are not templates
 * are roots; a function or macro is reached when a reached function names it (transitively). */
static int *reach(const struct scan *s, const struct env *env)
{
	int *r = XNEWVEC(int, s->nfuncs ? s->nfuncs : 1);
	for (size_t i = 0; i < s->nfuncs; i++) {
		const struct scan_func *f = &s->funcs[i];
		r[i] = f->kernel ? (f->templated ? -1 : eval_chain(f->cond, env)) : 0;
	}
	for (int round = 0; round < 6; round++) {
		int changed = 0;
		for (size_t k = 0; k < s->nrefs; k++) {
			const struct scan_ref *ref = &s->refs[k];
			int target = ref->target;
			if (!r[ref->from] || s->funcs[target].kernel)
				continue;
			int via = and3(r[ref->from], eval_chain(ref->cond, env));
			if (ref->uncertain || s->funcs[target].ambiguous)
				via = and3(via, -1);
			via = and3(via, eval_chain(s->funcs[target].cond, env));
			int next = or3(r[target], via);
			if (next != r[target]) {
				r[target] = next;
				changed = 1;
			}
		}
		if (!changed)
			break;
	}
	return r;
}

/* 1 if a mark is certainly compiled in this pass, 0 if certainly not, -1 unknown. */
static int mark_compiled(const struct scan *s, const struct scan_mark *m, const struct env *env, const int *r)
{
	int c = eval_chain(m->cond, env);
	if (m->uncertain)
		c = and3(c, -1);
	(void)s;
	if (m->func >= 0)
		c = and3(c, r[m->func]);
	return c;
}

/* 1 if the feature can be built for the front-end arch. */
static int feature_ok(const struct scan_feature *f, const struct arch *virt)
{
	if (!f->specific)
		return virt->num >= f->min;
	if (virt->num > SPECIFIC_KNOWN_UP_TO)
		return 1; /* not known: not certain */
	char name[16];
	snprintf(name, sizeof(name), "%u%c", virt->num, virt->suffix ? virt->suffix : ' ');
	size_t n = strlen(name);
	if (name[n - 1] == ' ')
		return 0;
	for (const char *q = f->specific; (q = strstr(q, name)); q += n)
		if ((q == f->specific || q[-1] == ' ') && (q[n] == ' ' || q[n] == '\0'))
			return 1;
	return 0;
}

static char *needs(const struct scan_feature *f)
{
	if (!f->specific)
		return xasprintf("requires sm_%u or higher", f->min);
	const char *sp = strchr(f->specific, ' ');
	if (!sp)
		return xasprintf("needs sm_%s", f->specific);
	return xasprintf("needs an arch-specific target (sm_%.*s, ...)", (int)(sp - f->specific), f->specific);
}

static char *where(const struct scan *s, const struct scan_mark *m)
{
	if (m->file == 0)
		return xasprintf("line %u", m->line);
	return xasprintf("%s:%u", lbasename(s->files[m->file].path), m->line);
}

int scan_fails(const struct scan *s, const struct arch *virt, const struct argv *defines, char **why)
{
	struct env env = { virt, defines }, host = { NULL, defines };
	int *r = reach(s, &env);
	int fails = 0;
	*why = NULL;
	for (size_t i = 0; i < s->nmarks && !fails; i++) {
		const struct scan_mark *m = &s->marks[i];
		if (mark_compiled(s, m, &env, r) != 1)
			continue;
		char *at = where(s, m);
		if (m->kind == SCAN_FEATURE && !feature_ok(m->feature, virt)) {
			char *n = needs(m->feature);
			*why = xasprintf("%s %s (%s)", m->feature->name, n, at);
			free(n);
			fails = 1;
		} else if (m->kind != SCAN_FEATURE && !eval_chain(m->cond, &host)) {
			*why = xasprintf("%s (%s)", m->text, at);
			fails = 1;
		}
		free(at);
	}
	free(r);
	return fails;
}

int scan_specific_code(const struct scan *s, unsigned num, char suffix, const struct argv *defines,
		       char **why)
{
	struct arch plain = { ARCH_VIRTUAL, num, 0 }, special = { ARCH_VIRTUAL, num, suffix };
	struct env ep = { &plain, defines }, es = { &special, defines };
	int *rp = reach(s, &ep), *rs = reach(s, &es);
	int found = 0;
	*why = NULL;
	for (size_t i = 0; i < s->nmarks && !found; i++) {
		const struct scan_mark *m = &s->marks[i];
		if (m->kind != SCAN_FEATURE || !m->feature->specific || !feature_ok(m->feature, &special))
			continue;
		if (mark_compiled(s, m, &es, rs) == 1 && mark_compiled(s, m, &ep, rp) == 0) {
			char *at = where(s, m);
			*why = xasprintf("has %s code for sm_%u%c only (%s): plain sm_%u would build without it",
					 m->feature->name, num, suffix, at, num);
			free(at);
			found = 1;
		}
	}
	free(rp);
	free(rs);
	return found;
}
