#include "passes/stubs.h"
#include "base/hash.h"

#include <stdlib.h>
#include <string.h>

#include <demangle.h>
#include <libiberty.h>

void stubs_init(struct stubs *s)
{
	memset(s, 0, sizeof(*s));
}

void stubs_release(struct stubs *s)
{
	for (size_t k = 0; k < s->nk; k++)
		free(s->kernel[k]);
	free(s->kernel);
	free(s->t);
	free(s->code);
	free(s->calls);
	free(s->traps);
	stubs_init(s);
}

long stubs_target_index(const struct stubs *s, unsigned sm, char suffix)
{
	for (size_t t = 0; t < s->nt; t++)
		if (s->t[t].sm == sm && s->t[t].suffix == suffix)
			return (long)t;
	return -1;
}

/* A table one column or row larger, cells copied. */
static void grow(struct stubs *s, size_t nk, size_t nt)
{
	unsigned long long *code = XCNEWVEC(unsigned long long, nk * nt + 1);
	unsigned char *calls = XCNEWVEC(unsigned char, nk * nt + 1);
	unsigned *traps = XCNEWVEC(unsigned, nk * nt + 1);
	for (size_t k = 0; k < s->nk; k++)
		for (size_t t = 0; t < s->nt; t++) {
			code[k * nt + t] = s->code[k * s->nt + t];
			calls[k * nt + t] = s->calls[k * s->nt + t];
			traps[k * nt + t] = s->traps[k * s->nt + t];
		}
	free(s->code);
	free(s->calls);
	free(s->traps);
	s->code = code;
	s->calls = calls;
	s->traps = traps;
}

void stubs_add(struct stubs *s, unsigned sm, char variant, const struct cuda_kernel *k)
{
	long t = stubs_target_index(s, sm, variant);
	if (t < 0) {
		grow(s, s->nk, s->nt + 1);
		s->t = XRESIZEVEC(struct stubs_target, s->t, s->nt + 1);
		s->t[s->nt] = (struct stubs_target){ sm, variant };
		t = (long)s->nt++;
	}
	size_t row = 0;
	while (row < s->nk && strcmp(s->kernel[row], k->name))
		row++;
	if (row == s->nk) {
		grow(s, s->nk + 1, s->nt);
		s->kernel = XRESIZEVEC(char *, s->kernel, s->nk + 1);
		s->kernel[s->nk++] = xstrdup(k->name);
	}
	size_t cell = row * s->nt + (size_t)t;
	s->code[cell] = k->code ? k->code : 1; /* present, even when empty */
	s->calls[cell] = (unsigned char)((k->calls & 3) | (k->stub == 1) << 2);
	s->traps[cell] = k->traps;
}

struct reading {
	struct stubs *s;
	unsigned sm;
	char variant;
	char **why;
	int rc;
};

static void add_kernel(const struct cuda_kernel *k, void *arg)
{
	struct reading *r = arg;
	stubs_add(r->s, r->sm, r->variant, k);
}

/* Machine code only: PTX has no code sizes. A compressed image is decompressed (up to 1 GiB). */
static int add_image(const struct cuda_image *img, void *arg)
{
	struct reading *r = arg;
	if (img->kind != CUDA_IMAGE_SASS || !img->sm)
		return 0;
	const unsigned char *data;
	size_t len;
	void *owned = NULL;
	if (elf_image_payload(img, 1ull << 30, &data, &len, &owned, r->why) ||
	    elf_cubin_kernels(data, len, add_kernel, &(struct reading){ r->s, img->sm, img->variant, r->why, 0 }, r->why))
		r->rc = -1;
	free(owned);
	return r->rc;
}

int stubs_read_data(struct stubs *s, const void *data, size_t size, char **why)
{
	struct reading r = { s, 0, 0, why, 0 };
	*why = NULL;
	if (elf_cuda_images(data, size, add_image, &r, NULL, why))
		return -1;
	return r.rc;
}

int stubs_read(struct stubs *s, const char *path, char **why)
{
	struct elf_map m;
	*why = NULL;
	if (elf_map_file(path, &m, why))
		return -1;
	int rc = stubs_read_data(s, m.data, m.size, why);
	elf_unmap(&m);
	return rc;
}

int stubs_trivial(const struct stubs *s, size_t k, size_t t)
{
	unsigned long long c = s->code[k * s->nt + t];
	unsigned char calls = s->calls[k * s->nt + t];
	if (!c)
		return 0;
	return c <= STUBS_TRIVIAL || (calls & 4) || ((calls & 3) && c <= STUBS_TRIVIAL_CALL);
}

int stubs_trap_paths(const struct stubs *s, size_t k, size_t t)
{
	unsigned traps = s->traps[k * s->nt + t];
	unsigned long long insns = s->code[k * s->nt + t] / 16;
	return traps >= STUBS_TRAPS && (unsigned long long)traps * 64 >= insns;
}

int stubs_traps_fewer(unsigned traps, unsigned plain)
{
	return plain >= STUBS_TRAPS && 2ull * traps + STUBS_TRAPS <= plain;
}

int stubs_real_over(unsigned long long real, unsigned long long stub)
{
	return real >= STUBS_RATIO * stub && real >= stub + STUBS_MARGIN;
}

long stubs_real_on(const struct stubs *s, size_t k, size_t t)
{
	if (!stubs_trivial(s, k, t))
		return -1;
	unsigned long long stub = s->code[k * s->nt + t];
	for (size_t y = 0; y < s->nt; y++)
		if (y != t && stubs_real_over(s->code[k * s->nt + y], stub))
			return (long)y;
	return -1;
}

char *stubs_kernel_name(const char *mangled)
{
	char *d = cplus_demangle(mangled, DMGL_PARAMS | DMGL_ANSI | DMGL_TYPES);
	if (!d)
		return xstrdup(mangled);
	if (strlen(d) <= 60)
		return d;
	/* "void ns::kernel<...>(...)": the name, its template arguments and parameters elided */
	char *open = strpbrk(d, "<(");
	char *start = d;
	for (char *p = d; p < open; p++)
		if (*p == ' ')
			start = p + 1;
	char *out = open ? xasprintf("%.*s%s", (int)(open - start), start, *open == '<' ? "<...>" : "(...)")
			 : xstrdup(d);
	free(d);
	return out;
}

/* ---- code one form compiles and another does not ---- */

/* A line of preprocessed text: [b, e). Line markers (# N "file") and blank lines are not code. */
static int code_line(const char *b, const char *e)
{
	while (b < e && (*b == ' ' || *b == '\t' || *b == '\r'))
		b++;
	return b < e && *b != '#';
}

static unsigned long long line_hash(const char *b, const char *e)
{
	return hash_bytes(HASH_INIT, b, (size_t)(e - b)) | 1; /* 0 marks an empty slot */
}

/* A set of strings by hash: open addressing, the table a power of two, 0 an empty slot. */
struct string_set {
	unsigned long long *h;
	size_t mask;
};

static size_t set_slot(const struct string_set *ss, const char *str)
{
	unsigned long long h = line_hash(str, str + strlen(str));
	size_t i = (size_t)(h ^ (h >> 29)) & ss->mask;
	while (ss->h[i] && ss->h[i] != h)
		i = (i + 1) & ss->mask;
	return i;
}

static int set_has(const struct string_set *ss, const char *str)
{
	return ss->h[set_slot(ss, str)] != 0;
}

static void set_add(struct string_set *ss, const char *str)
{
	ss->h[set_slot(ss, str)] = line_hash(str, str + strlen(str));
}

static int has_text(const char *b, const char *e, const char *needle)
{
	return memmem(b, (size_t)(e - b), needle, strlen(needle)) != NULL;
}

/* The string literals of a line, unescaped (\" \\ \n \t); those with other escapes are left out. */
static void line_literals(const char *b, const char *e, struct argv *out)
{
	for (const char *p = b; p < e; p++) {
		if (*p == '\'' && p + 2 < e) { /* a character literal: '"' is not a string */
			p += p[1] == '\\' ? 3 : 2;
			continue;
		}
		if (*p != '"')
			continue;
		char *lit = XNEWVEC(char, (size_t)(e - p) + 1);
		size_t n = 0;
		int odd = 0;
		const char *q = p + 1;
		for (; q < e && *q != '"'; q++) {
			if (*q != '\\') {
				lit[n++] = *q;
				continue;
			}
			if (++q >= e)
				break;
			switch (*q) {
			case '"': case '\\': lit[n++] = *q; break;
			case 'n': lit[n++] = '\n'; break;
			case 't': lit[n++] = '\t'; break;
			default: odd = 1;
			}
		}
		lit[n] = 0;
		if (q < e && !odd && n >= 12)
			argv_push(out, lit);
		free(lit);
		p = q;
	}
}

static void set_init(struct string_set *ss, size_t entries)
{
	size_t size = 1024;
	while (size < 2 * entries)
		size *= 2;
	ss->h = XCNEWVEC(unsigned long long, size);
	ss->mask = size - 1;
}

/* The code lines of a text: their starts, ends and hashes. */
struct code_lines {
	const char **b, **e;
	unsigned long long *h;
	size_t n;
};

static void code_lines_of(const char *text, struct code_lines *cl)
{
	size_t max = 1;
	for (const char *p = text; *p; p++)
		max += *p == '\n';
	cl->b = XNEWVEC(const char *, max);
	cl->e = XNEWVEC(const char *, max);
	cl->h = XNEWVEC(unsigned long long, max);
	cl->n = 0;
	for (const char *b = text; *b;) {
		const char *e = strchr(b, '\n');
		if (!e)
			e = b + strlen(b);
		if (code_line(b, e)) {
			cl->b[cl->n] = b;
			cl->e[cl->n] = e;
			cl->h[cl->n++] = line_hash(b, e);
		}
		b = *e ? e + 1 : e;
	}
}

static void code_lines_release(struct code_lines *cl)
{
	free(cl->b);
	free(cl->e);
	free(cl->h);
}

/* The lines of x that a shortest edit script from x to y deletes (Myers' O(ND) difference
 * algorithm), in mine[]; -1 when more than max_d lines differ. */
static int deleted_lines(const struct code_lines *x, const struct code_lines *y, size_t max_d, unsigned char *mine)
{
	long n = (long)x->n, m = (long)y->n, off = (long)max_d + 1;
	long *v = XCNEWVEC(long, 2 * (size_t)off + 1);
	/* trace[d]: v before step d, only its 2d+1 middle entries */
	long **trace = XCNEWVEC(long *, max_d + 1);
	long found = -1;
	for (long d = 0; d <= (long)max_d && found < 0; d++) {
		trace[d] = XNEWVEC(long, 2 * (size_t)d + 1);
		for (long k = -d; k <= d; k++)
			trace[d][k + d] = v[off + k];
		for (long k = -d; k <= d; k += 2) {
			long xx = k == -d || (k != d && v[off + k - 1] < v[off + k + 1]) ? v[off + k + 1] : v[off + k - 1] + 1;
			long yy = xx - k;
			while (xx < n && yy < m && x->h[xx] == y->h[yy])
				xx++, yy++;
			v[off + k] = xx;
			if (xx >= n && yy >= m) {
				found = d;
				break;
			}
		}
	}
	if (found >= 0) {
		long xx = n, yy = m;
		for (long d = found; d > 0; d--) {
			long *pv = trace[d]; /* v as it was before step d: index k + d */
			long k = xx - yy;
			long prev_k = k == -d || (k != d && pv[k - 1 + d] < pv[k + 1 + d]) ? k + 1 : k - 1;
			long px = pv[prev_k + d], py = px - prev_k;
			if (prev_k == k - 1) /* a deletion: x[px] */
				mine[px] = 1;
			xx = px;
			yy = py;
		}
	}
	for (long d = 0; d <= (long)max_d; d++)
		free(trace[d]);
	free(trace);
	free(v);
	return found < 0 ? -1 : 0;
}

int stubs_own_literals(const char *mine, const char *other, struct argv *out)
{
	struct code_lines x, y;
	code_lines_of(mine, &x);
	code_lines_of(other, &y);
	unsigned char *own = XCNEWVEC(unsigned char, x.n + 1);
	int rc = deleted_lines(&x, &y, 1000, own);
	/* other's literals: a literal other has too (the file name of an assert in a header both
	 * compile) finds nothing of mine's own */
	size_t quotes = 1;
	for (const char *p = other; *p; p++)
		quotes += *p == '"';
	struct string_set lits;
	set_init(&lits, quotes / 2 + 1);
	struct argv some = ARGV_INIT, run = ARGV_INIT;
	for (size_t i = 0; !rc && i < y.n; i++) {
		line_literals(y.b[i], y.e[i], &some);
		for (size_t k = 0; k < some.n; k++)
			set_add(&lits, some.v[k]);
		argv_release(&some);
	}
	/* runs of lines only mine has; a line both have ends a run */
	int traps = 0;
	for (size_t i = 0; !rc && i <= x.n; i++) {
		if (i < x.n && own[i]) {
			const char *b = x.b[i], *e = x.e[i];
			traps |= has_text(b, e, "__brkpt") || has_text(b, e, "__trap") ||
				 has_text(b, e, "__assert_fail") || has_text(b, e, "trap;");
			line_literals(b, e, &some);
			for (size_t k = 0; k < some.n; k++)
				if (!set_has(&lits, some.v[k]))
					argv_push(&run, some.v[k]);
			argv_release(&some);
			continue;
		}
		if (traps && !run.n)
			rc = -1;
		if (traps)
			argv_pushn(out, run.v, run.n);
		argv_release(&run);
		traps = 0;
	}
	argv_release(&run);
	free(lits.h);
	free(own);
	code_lines_release(&x);
	code_lines_release(&y);
	return rc;
}

struct literal_search {
	unsigned sm;
	char variant;
	const struct argv *literals;
	int found; /* 1 found, -1 an image unreadable */
};

static int search_image(const struct cuda_image *img, void *arg)
{
	struct literal_search *ls = arg;
	if (img->kind != CUDA_IMAGE_SASS || img->sm != ls->sm || img->variant != ls->variant)
		return 0;
	const unsigned char *code;
	size_t len;
	void *owned;
	char *why = NULL;
	if (elf_image_payload(img, 1ull << 31, &code, &len, &owned, &why)) {
		free(why);
		ls->found = -1;
		return 1;
	}
	for (size_t k = 0; k < ls->literals->n && ls->found != 1; k++)
		if (memmem(code, len, ls->literals->v[k], strlen(ls->literals->v[k])))
			ls->found = 1;
	free(owned);
	return ls->found == 1;
}

int stubs_object_has(const void *data, size_t size, unsigned sm, char variant, const struct argv *literals)
{
	char *why = NULL;
	struct literal_search ls = { sm, variant, literals, 0 };
	if (elf_cuda_images(data, size, search_image, &ls, NULL, &why)) {
		free(why);
		ls.found = -1;
	}
	return ls.found;
}
