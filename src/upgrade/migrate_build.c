#include "upgrade/migrate_build.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libiberty.h>

#include "base/argv.h"

enum migrate_build_kind migrate_build_kind(const char *path)
{
	const char *base = lbasename(path);
	size_t n = strlen(base);
	if (!strcmp(base, "CMakeLists.txt") || (n > 6 && !strcmp(base + n - 6, ".cmake")))
		return MIGRATE_CMAKE;
	if (!strcmp(base, "Makefile") || !strcmp(base, "makefile") || !strcmp(base, "GNUmakefile") ||
	    (n > 3 && !strcmp(base + n - 3, ".mk")))
		return MIGRATE_MAKE;
	if (!strcmp(base, "setup.py"))
		return MIGRATE_SETUP;
	return MIGRATE_SOURCE;
}

/* ---- edits of the text ---- */

struct bedit {
	size_t b, e; /* replaced bytes [b, e) */
	char *text;
};

struct bmig {
	const char *s;
	size_t n;
	struct bedit *v;
	size_t count, alloc;
	struct migrate_result *out;
};

static void add(struct bmig *m, size_t b, size_t e, char *text)
{
	if (m->count == m->alloc) {
		m->alloc = m->alloc ? m->alloc * 2 : 16;
		m->v = XRESIZEVEC(struct bedit, m->v, m->alloc);
	}
	m->v[m->count++] = (struct bedit){ b, e, text };
}

static unsigned long line_of(const struct bmig *m, size_t at)
{
	unsigned long l = 1;
	for (size_t i = 0; i < at && i < m->n; i++)
		l += m->s[i] == '\n';
	return l;
}

static void fixed(struct bmig *m, size_t at, const char *what)
{
	argv_pushf(&m->out->fixed, "%lu: %s", line_of(m, at), what);
	m->out->changes++;
}

static int has(const struct bmig *m, const char *needle)
{
	size_t k = strlen(needle);
	for (size_t i = 0; i + k <= m->n; i++)
		if (!memcmp(m->s + i, needle, k))
			return 1;
	return 0;
}

static int ident(int c) { return isalnum((unsigned char)c) || c == '_'; }

static size_t line_start(const struct bmig *m, size_t at)
{
	while (at && m->s[at - 1] != '\n')
		at--;
	return at;
}

static size_t line_end(const struct bmig *m, size_t at)
{
	while (at < m->n && m->s[at] != '\n')
		at++;
	return at;
}

static char *indent_of(const struct bmig *m, size_t at)
{
	size_t b = line_start(m, at), e = b;
	while (e < m->n && (m->s[e] == ' ' || m->s[e] == '\t'))
		e++;
	return xstrndup(m->s + b, e - b);
}

static int cmp_edit(const void *a, const void *b)
{
	const struct bedit *x = a, *y = b;
	return x->b < y->b ? -1 : x->b > y->b;
}

static void finish(struct bmig *m)
{
	if (m->count)
		qsort(m->v, m->count, sizeof(m->v[0]), cmp_edit);
	size_t cap = m->n + 1, len = 0, pos = 0;
	for (size_t k = 0; k < m->count; k++)
		cap += strlen(m->v[k].text);
	char *t = XNEWVEC(char, cap);
	for (size_t k = 0; k < m->count; k++) {
		const struct bedit *e = &m->v[k];
		if (e->b < pos)
			continue; /* overlapping: the first wins */
		memcpy(t + len, m->s + pos, e->b - pos);
		len += e->b - pos;
		size_t tl = strlen(e->text);
		memcpy(t + len, e->text, tl);
		len += tl;
		pos = e->e;
	}
	if (m->n > pos)
		memcpy(t + len, m->s + pos, m->n - pos);
	len += m->n - pos;
	t[len] = '\0';
	m->out->text = t;
	m->out->len = len;
	for (size_t k = 0; k < m->count; k++)
		free(m->v[k].text);
	free(m->v);
}

/* ---- CMake ---- */

static const char cccl_block[] =
	"%s# nvshim migrate: CUDA 13.0 moved CCCL (Thrust, CUB, libcu++, nv/) to include/cccl\n"
	"%sif(EXISTS \"${CUDAToolkit_BIN_DIR}/../include/cccl\")\n"
	"%s  set(nvshim_cccl_include \"${CUDAToolkit_BIN_DIR}/../include/cccl\")\n"
	"%selse()\n"
	"%s  set(nvshim_cccl_include \"${CUDAToolkit_BIN_DIR}/../include\")\n"
	"%sendif()\n";

/* One command: NAME( ... ) with its arguments in [ab, ae). */
static void cmake_command(struct bmig *m, size_t start, const char *name, size_t nlen, size_t ab, size_t ae,
			  int *block_done, int want_cccl, int want_nvtx)
{
	static const char bin[] = "${CUDAToolkit_BIN_DIR}/../include/";
	static const char *const moved[] = { "cuda", "thrust", "cub", "nv" };
	for (size_t i = ab; i + sizeof(bin) - 1 < ae; i++) {
		if (memcmp(m->s + i, bin, sizeof(bin) - 1))
			continue;
		size_t d = i + sizeof(bin) - 1;
		for (size_t k = 0; k < sizeof(moved) / sizeof(moved[0]); k++) {
			size_t l = strlen(moved[k]);
			if (d + l > ae || memcmp(m->s + d, moved[k], l) || (d + l < ae && ident(m->s[d + l])))
				continue;
			add(m, i, d, xstrdup("${nvshim_cccl_include}/"));
			fixed(m, i, "include/cccl for CCCL's moved directories");
			if (!*block_done) {
				char *in = indent_of(m, start);
				size_t ls = line_start(m, start);
				add(m, ls, ls, xasprintf(cccl_block, in, in, in, in, in, in));
				free(in);
				*block_done = 1;
			}
		}
	}
	if (nlen != 21 || strncasecmp(m->s + start, "target_link_libraries", 21))
		return;
	(void)name;
	/* the target: the first argument */
	size_t t = ab;
	while (t < ae && isspace((unsigned char)m->s[t]))
		t++;
	size_t te = t;
	while (te < ae && !isspace((unsigned char)m->s[te]) && m->s[te] != ')')
		te++;
	if (te == t)
		return;
	char *target = xstrndup(m->s + t, te - t);
	int cudart = 0, nvtx = 0;
	static const char *const runtime[] = { "CUDA::cudart", "CUDA::cudart_static", "CUDA::toolkit" };
	for (size_t i = te; i < ae; i++) {
		if (i && (ident(m->s[i - 1]) || m->s[i - 1] == ':'))
			continue;
		for (size_t k = 0; k < 3; k++) {
			size_t l = strlen(runtime[k]);
			if (i + l <= ae && !memcmp(m->s + i, runtime[k], l) && (i + l == ae || !ident(m->s[i + l])))
				cudart = 1;
		}
		if (i + 16 <= ae && !memcmp(m->s + i, "CUDA::nvToolsExt", 16) && (i + 16 == ae || !ident(m->s[i + 16]))) {
			add(m, i, i + 16, xstrdup("CUDA::nvtx3"));
			fixed(m, i, "CUDA::nvToolsExt -> CUDA::nvtx3 (NVTX 3, header-only)");
			nvtx = 1;
		}
	}
	char *in = indent_of(m, start);
	size_t eol = line_end(m, ae);
	if (cudart && want_cccl) {
		add(m, eol, eol, xasprintf("\n%starget_include_directories(%s SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS}/cccl) "
					   "# nvshim migrate: CCCL for host compilers on CUDA 13", in, target));
		fixed(m, ae, "include/cccl for the host compiler");
	}
	if (nvtx && want_nvtx) {
		add(m, eol, eol, xasprintf("\n%starget_include_directories(%s SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS}/nvtx3) "
					   "# nvshim migrate: nvToolsExt.h is NVTX 3's on CUDA 13", in, target));
		fixed(m, ae, "include/nvtx3 for nvToolsExt.h");
	}
	free(in);
	free(target);
}

static void cmake_file(struct bmig *m)
{
	int want_cccl = !has(m, "INCLUDE_DIRS}/cccl") && !has(m, "CCCL::") && !has(m, "include/cccl\"");
	int want_nvtx = !has(m, "INCLUDE_DIRS}/nvtx3");
	int block_done = has(m, "nvshim_cccl_include");
	size_t i = 0;
	while (i < m->n) {
		char c = m->s[i];
		if (c == '#') { /* a comment to the end of the line */
			i = line_end(m, i);
			continue;
		}
		if (!(isalpha((unsigned char)c) || c == '_') || (i && ident(m->s[i - 1]))) {
			i++;
			continue;
		}
		size_t nb = i;
		while (i < m->n && ident(m->s[i]))
			i++;
		size_t ne = i;
		while (i < m->n && (m->s[i] == ' ' || m->s[i] == '\t'))
			i++;
		if (i >= m->n || m->s[i] != '(')
			continue;
		/* the arguments, to the matching ')': quotes and comments skipped */
		size_t ab = ++i;
		int depth = 1, quote = 0;
		while (i < m->n && depth) {
			char d = m->s[i];
			if (quote) {
				if (d == '\\' && i + 1 < m->n)
					i++;
				else if (d == '"')
					quote = 0;
			} else if (d == '"') {
				quote = 1;
			} else if (d == '#') {
				i = line_end(m, i);
				continue;
			} else if (d == '(') {
				depth++;
			} else if (d == ')') {
				depth--;
			}
			i++;
		}
		if (depth)
			break;
		cmake_command(m, nb, m->s + nb, ne - nb, ab, i - 1, &block_done, want_cccl, want_nvtx);
	}
}

/* ---- Makefiles ---- */

static int word_end(int c) { return !c || isspace((unsigned char)c) || c == '"' || c == '\''; }

static int cuda_named(const char *s, size_t n)
{
	for (size_t i = 0; i + 4 <= n; i++)
		if (!strncasecmp(s + i, "cuda", 4))
			return 1;
	return 0;
}

static void make_file(struct bmig *m)
{
	int want = !has(m, "/include/cccl");
	int nvtx = has(m, "-lnvToolsExt");
	for (size_t i = 0; i + 1 < m->n; i++) {
		if (m->s[i] == '#') {
			i = line_end(m, i);
			continue;
		}
		if (m->s[i] == '-' && m->s[i + 1] == 'l' && i + 12 <= m->n && !memcmp(m->s + i, "-lnvToolsExt", 12) &&
		    (i + 12 == m->n || word_end(m->s[i + 12])) && (!i || isspace((unsigned char)m->s[i - 1]))) {
			size_t b = i;
			while (b && (m->s[b - 1] == ' ' || m->s[b - 1] == '\t'))
				b--;
			add(m, b, i + 12, xstrdup(""));
			fixed(m, i, "-lnvToolsExt taken out (NVTX 3 needs no library)");
			continue;
		}
		if (m->s[i] != '-' || m->s[i + 1] != 'I' || (i && !isspace((unsigned char)m->s[i - 1]) && m->s[i - 1] != '"'))
			continue;
		size_t p = i + 2;
		while (p < m->n && (m->s[p] == ' ' || m->s[p] == '\t'))
			p++;
		size_t e = p;
		while (e < m->n && !word_end(m->s[e]))
			e++;
		size_t len = e - p;
		if (len < 8 || memcmp(m->s + e - 8, "/include", 8) || !cuda_named(m->s + p, len))
			continue;
		char *spell = xstrndup(m->s + i, e - i); /* "-I" with its spaces and the directory */
		/* NVTX 3 before include/: on 12.x include/nvToolsExt.h is NVTX 2's, which needs its library */
		if (nvtx && !has(m, "/include/nvtx3")) {
			add(m, i, i, xasprintf("%s/nvtx3 ", spell));
			fixed(m, i, "include/nvtx3 before the toolkit's include/");
		}
		char *ins = want ? xasprintf(" %s/cccl", spell) : NULL;
		free(spell);
		if (ins) {
			add(m, e, e, ins);
			fixed(m, i, "include/cccl after the toolkit's include/");
		}
		i = e;
	}
}

/* ---- setup.py ---- */

static size_t skip_space(const struct bmig *m, size_t i)
{
	while (i < m->n && isspace((unsigned char)m->s[i]))
		i++;
	return i;
}

static size_t skip_space_back(const struct bmig *m, size_t i)
{
	while (i && isspace((unsigned char)m->s[i - 1]))
		i--;
	return i;
}

static void setup_file(struct bmig *m)
{
	static const char join[] = "os.path.join(";
	int want = !has(m, "\"cccl\"") && !has(m, "'cccl'") && !has(m, "include/cccl");
	int nvtx = has(m, "'nvToolsExt'") || has(m, "\"nvToolsExt\"");
	for (size_t i = 0; i < m->n; i++) {
		if (m->s[i] == '#') {
			i = line_end(m, i);
			continue;
		}
		if ((m->s[i] == '\'' || m->s[i] == '"') && i + 12 <= m->n && !memcmp(m->s + i + 1, "nvToolsExt", 10) &&
		    m->s[i + 11] == m->s[i]) {
			/* an element of a list: it goes with one comma */
			size_t b = skip_space_back(m, i), e = skip_space(m, i + 12);
			if (e < m->n && m->s[e] == ',')
				add(m, i, skip_space(m, e + 1), xstrdup(""));
			else if (b && m->s[b - 1] == ',')
				add(m, b - 1, i + 12, xstrdup(""));
			else
				continue;
			fixed(m, i, "nvToolsExt taken out of the libraries (NVTX 3 needs no library)");
			continue;
		}
		if (i + sizeof(join) - 1 > m->n || memcmp(m->s + i, join, sizeof(join) - 1) || (i && ident(m->s[i - 1])))
			continue;
		size_t before = skip_space_back(m, i);
		if (!before || (m->s[before - 1] != '[' && m->s[before - 1] != ','))
			continue;
		size_t a = i + sizeof(join) - 1, c = a;
		while (c < m->n && m->s[c] != ',' && m->s[c] != ')' && m->s[c] != '\n')
			c++;
		if (c >= m->n || m->s[c] != ',' || !cuda_named(m->s + a, c - a))
			continue;
		size_t q = skip_space(m, c + 1);
		if (q + 9 > m->n || (m->s[q] != '\'' && m->s[q] != '"') || memcmp(m->s + q + 1, "include", 7) ||
		    m->s[q + 8] != m->s[q])
			continue;
		size_t close = skip_space(m, q + 9);
		if (close >= m->n || m->s[close] != ')')
			continue;
		size_t after = skip_space(m, close + 1);
		if (after >= m->n || (m->s[after] != ',' && m->s[after] != ']'))
			continue;
		char *x = xstrndup(m->s + a, c - a);
		char qc = m->s[q];
		/* NVTX 3 before include/: on 12.x include/nvToolsExt.h is NVTX 2's, which needs its library */
		if (nvtx && !has(m, "\"nvtx3\"") && !has(m, "'nvtx3'")) {
			add(m, i, i, xasprintf("os.path.join(%s, %cinclude%c, %cnvtx3%c), ", x, qc, qc, qc, qc));
			fixed(m, i, "include/nvtx3 before the toolkit's include/");
		}
		char *ins = want ? xasprintf(", os.path.join(%s, %cinclude%c, %ccccl%c)", x, qc, qc, qc, qc) : NULL;
		free(x);
		if (ins) {
			add(m, close + 1, close + 1, ins);
			fixed(m, i, "include/cccl after the toolkit's include/");
		}
		i = close;
	}
}

/* ---- CCCL 3's C++17 floor, in any of the three ---- */

/* The dialect number at p (98, 03, 0x, 11, 1y, 14), its length in *n; 0 if none. */
static int old_number(const struct bmig *m, size_t p, size_t *n)
{
	static const char *const old[] = { "98", "03", "0x", "11", "1y", "14" };
	for (size_t k = 0; k < sizeof(old) / sizeof(old[0]); k++)
		if (p + 2 <= m->n && !memcmp(m->s + p, old[k], 2) && (p + 2 == m->n || !ident(m->s[p + 2]))) {
			*n = 2;
			return 1;
		}
	return 0;
}

/* `-std=c++14` (gnu++, --std), CMake's CMAKE_CUDA_STANDARD / CMAKE_CXX_STANDARD / CUDA_STANDARD /
 * CXX_STANDARD 14 and cxx_std_14 / cuda_std_14: C++17, the oldest dialect CCCL 3 compiles in (GCC
 * and Clang keep one ABI across dialects). Comments (#) are skipped. */
static void dialect_file(struct bmig *m, int cmake)
{
	static const char *const props[] = { "CMAKE_CUDA_STANDARD", "CMAKE_CXX_STANDARD", "CUDA_STANDARD", "CXX_STANDARD" };
	static const char *const feats[] = { "cxx_std_", "cuda_std_" };
	for (size_t i = 0; i < m->n; i++) {
		if (m->s[i] == '#') {
			i = line_end(m, i);
			continue;
		}
		if (i && (ident(m->s[i - 1])))
			continue;
		size_t n;
		/* --std=: read at its first '-' only */
		if (m->s[i] == '-' && !(i && m->s[i - 1] == '-')) {
			size_t v = i + (i + 1 < m->n && m->s[i + 1] == '-' ? 2 : 1);
			if (v + 4 > m->n || memcmp(m->s + v, "std=", 4))
				continue;
			v += 4;
			size_t pre = v + 5 <= m->n && !memcmp(m->s + v, "gnu++", 5) ? 5 : v + 3 <= m->n && !memcmp(m->s + v, "c++", 3) ? 3 : 0;
			if (pre && old_number(m, v + pre, &n)) {
				add(m, v + pre, v + pre + n, xstrdup("17"));
				fixed(m, i, "C++17, which CCCL 3 (Thrust, CUB, libcu++) requires");
			}
			continue;
		}
		if (!cmake)
			continue;
		for (size_t k = 0; k < sizeof(props) / sizeof(props[0]); k++) {
			size_t l = strlen(props[k]);
			if (i + l >= m->n || memcmp(m->s + i, props[k], l) || ident(m->s[i + l]))
				continue;
			size_t v = i + l;
			while (v < m->n && (m->s[v] == ' ' || m->s[v] == '\t' || m->s[v] == '"'))
				v++;
			if (v > i + l && old_number(m, v, &n)) {
				add(m, v, v + n, xstrdup("17"));
				fixed(m, i, "C++17, which CCCL 3 (Thrust, CUB, libcu++) requires");
			}
		}
		for (size_t k = 0; k < 2; k++) {
			size_t l = strlen(feats[k]);
			if (i + l < m->n && !memcmp(m->s + i, feats[k], l) && old_number(m, i + l, &n)) {
				add(m, i + l, i + l + n, xstrdup("17"));
				fixed(m, i, "C++17, which CCCL 3 (Thrust, CUB, libcu++) requires");
			}
		}
	}
}

void migrate_build_text(const char *text, size_t len, enum migrate_build_kind kind, struct migrate_result *out)
{
	struct bmig m = { text, len, NULL, 0, 0, out };
	memset(out, 0, sizeof(*out));
	argv_init(&out->skipped);
	argv_init(&out->fixed);
	if (kind == MIGRATE_CMAKE)
		cmake_file(&m);
	else if (kind == MIGRATE_MAKE)
		make_file(&m);
	else if (kind == MIGRATE_SETUP)
		setup_file(&m);
	if (kind != MIGRATE_SOURCE)
		dialect_file(&m, kind == MIGRATE_CMAKE);
	finish(&m);
}
