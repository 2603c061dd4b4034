#include "upgrade/compat.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libiberty.h>

#include "base/cache.h"
#include "base/diag.h"
#include "base/strbuf.h"
#include "base/hash.h"
#include "base/fault.h"
#include "buildwide/build.h"
#include "buildwide/once.h"
#include "buildwide/stats.h"
#include "upgrade/overlay.h"

/* The layer's own version: what the retry does and how (the headers' contents count apart). */
#define NVSHIM_COMPAT_LAYER 1

#ifndef NVSHIM_SOURCE_INCLUDE_DIR
#define NVSHIM_SOURCE_INCLUDE_DIR ""
#endif

void compat_decision_init(struct compat_decision *d)
{
	memset(d, 0, sizeof(*d));
	argv_init(&d->headers);
	argv_init(&d->entries);
	argv_init(&d->why_not);
	argv_init(&d->files);
}

void compat_decision_release(struct compat_decision *d)
{
	argv_release(&d->headers);
	argv_release(&d->entries);
	argv_release(&d->why_not);
	argv_release(&d->files);
	for (size_t i = 0; i < d->nsites; i++) {
		free(d->sites[i].file);
		free(d->sites[i].field);
	}
	free(d->sites);
	free(d->layout_header);
	compat_decision_init(d);
}

static int has_string(const struct argv *a, const char *s)
{
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->v[i], s))
			return 1;
	return 0;
}

static void push_once(struct argv *a, const char *s)
{
	if (!has_string(a, s))
		argv_push(a, s);
}

int compat_version_newer(const char *entry, const char *toolkit)
{
	for (int k = 0; k < 2; k++) {
		unsigned long x = strtoul(entry, (char **)&entry, 10), y = strtoul(toolkit, (char **)&toolkit, 10);
		if (x != y)
			return x > y;
		entry += *entry == '.';
		toolkit += *toolkit == '.';
	}
	return 0;
}

void compat_decide(const struct api_table *t, const char *held, const char *toolkit_version,
		   struct compat_decision *d)
{
	struct api_errors errs = { NULL, 0 };
	api_read_errors(held ? held : "", t, &errs);
	size_t alloc = 0;
	d->errors = errs.n;
	for (size_t i = 0; i < errs.n; i++)
		if (errs.v[i].file)
			push_once(&d->files, errs.v[i].file);
	for (size_t i = 0; i < errs.n; i++) {
		const struct api_error *er = &errs.v[i];
		const struct api_entry *e = api_find(t, er->name);
		if (!e || (toolkit_version && compat_version_newer(e->version, toolkit_version))) {
			d->others++;
			continue;
		}
		if (e->nocompat) {
			/* named as the first error names it (cusparseDcsrsv2_solve, one of the entry's
			 * `also`), once per entry */
			const char *name = api_shown_name(e, er->name);
			char *tail = concat(": ", e->nocompat, NULL);
			int said = 0;
			for (size_t k = 0; k < d->why_not.n && !said; k++) {
				size_t a = strlen(d->why_not.v[k]), b = strlen(tail);
				said = a >= b && !strcmp(d->why_not.v[k] + a - b, tail);
			}
			char *w = concat(name, tail, NULL);
			if (!said)
				push_once(&d->why_not, w);
			free(w);
			free(tail);
			d->others++;
			d->blocked++;
			continue;
		}
		if (!e->compat) {
			d->others++;
			d->blocked++;
			continue;
		}
		push_once(&d->headers, e->compat);
		push_once(&d->entries, e->name);
		const char *field = e->compat_rewrite ? strstr(e->name, "::") : NULL;
		if (field) {
			if (d->nsites == alloc) {
				alloc = alloc ? alloc * 2 : 8;
				d->sites = XRESIZEVEC(struct compat_site, d->sites, alloc);
			}
			d->sites[d->nsites++] = (struct compat_site){ xstrdup(er->file), er->line, xstrdup(field + 2),
								      er->name && !strstr(er->name, "::") };
		}
	}
	/* Errors that name nothing in the table (a removed base class's consequences further down,
	 * errors inside a library's headers) do not block: if they were real, the retry fails and
	 * the first compile's result stands. An entry the layer does not restore does. */
	d->retry = d->errors && !d->blocked && d->headers.n;
	api_errors_release(&errs);
}

/* ---- the rewrite ---- */

static int ident(int c) { return isalnum((unsigned char)c) || c == '_'; }

/* Past spaces leftwards from i (exclusive): the index after the last non-space before i. */
static size_t back_spaces(const char *l, size_t i)
{
	while (i > 0 && (l[i - 1] == ' ' || l[i - 1] == '\t'))
		i--;
	return i;
}

/* The start of the postfix expression that ends at `end` (exclusive): identifiers, calls,
 * subscripts, parenthesised groups joined by '.', "->" and "::". Returns `end` when there is
 * none. */
static size_t expression_start(const char *l, size_t end)
{
	size_t i = back_spaces(l, end);
	for (;;) {
		size_t unit_end = i;
		if (i > 0 && (l[i - 1] == ')' || l[i - 1] == ']')) {
			/* a balanced group, then whatever it belongs to */
			int depth = 0;
			while (i > 0) {
				char c = l[--i];
				depth += c == ')' || c == ']';
				depth -= c == '(' || c == '[';
				if (!depth)
					break;
			}
			if (depth)
				return end;
			size_t j = back_spaces(l, i);
			if (j > 0 && (ident(l[j - 1]) || l[j - 1] == ')' || l[j - 1] == ']')) {
				/* a call or a subscript: the callee or the array goes with it, unless it is
				 * a keyword that takes a parenthesised operand */
				size_t k = j;
				while (k > 0 && ident(l[k - 1]))
					k--;
				static const char *const kw[] = { "return", "sizeof", "if", "while", "switch", "case", "else", "do" };
				int keyword = 0;
				for (size_t n = 0; n < sizeof(kw) / sizeof(kw[0]) && k < j; n++)
					keyword |= j - k == strlen(kw[n]) && !strncmp(l + k, kw[n], j - k);
				if (!keyword) {
					i = j;
					continue;
				}
			}
		} else if (i > 0 && ident(l[i - 1])) {
			while (i > 0 && ident(l[i - 1]))
				i--;
			if (isdigit((unsigned char)l[i]))
				return end;
		}
		if (i == unit_end)
			return i == back_spaces(l, end) ? end : i;
		/* a connector before it: '.', "->", "::" */
		size_t j = back_spaces(l, i);
		if (j > 0 && l[j - 1] == '.' && !(j > 1 && isdigit((unsigned char)l[j - 2])))
			i = back_spaces(l, j - 1);
		else if (j > 1 && l[j - 1] == '>' && l[j - 2] == '-')
			i = back_spaces(l, j - 2);
		else if (j > 1 && l[j - 1] == ':' && l[j - 2] == ':')
			i = back_spaces(l, j - 2);
		else
			return i;
	}
}

/* Rewrites the reads of `field` in one line (a copy, xmalloc'ed). *count gets how many. */
/* Whether column at of line l is inside a string or character literal or after a // comment
 * (a field's name in a message the program prints is text, not a read). */
static int in_text(const char *l, size_t at)
{
	char quote = 0;
	for (size_t i = 0; i < at; i++) {
		if (quote) {
			if (l[i] == '\\' && i + 1 < at)
				i++;
			else if (l[i] == quote)
				quote = 0;
		} else if (l[i] == '"' || l[i] == '\'') {
			quote = l[i];
		} else if (l[i] == '/' && l[i + 1] == '/') {
			return 1;
		}
	}
	return quote != 0;
}

static char *rewrite_line(const char *l, const char *field, int bare, size_t *count)
{
	size_t flen = strlen(field), len = strlen(l);
	char *out = xstrdup(l);
	*count = 0;
	for (size_t pos = 0; pos + flen <= len;) {
		const char *hit = strstr(out + pos, field);
		if (!hit)
			break;
		size_t at = (size_t)(hit - out), after = at + flen;
		len = strlen(out);
		if ((at > 0 && ident(out[at - 1])) || ident(out[after]) || in_text(out, at)) {
			pos = at + 1;
			continue;
		}
		size_t j = back_spaces(out, at);
		int arrow = j > 1 && out[j - 1] == '>' && out[j - 2] == '-';
		int dot = !arrow && j > 0 && out[j - 1] == '.';
		size_t op = arrow ? j - 2 : dot ? j - 1 : (size_t)-1;
		size_t start = op != (size_t)-1 ? expression_start(out, op) : op;
		if (op == (size_t)-1 && bare && !(j > 1 && out[j - 1] == ':' && out[j - 2] == ':')) {
			/* unqualified, in a member function of a class derived from the struct */
			char *call = xasprintf("nvshim_compat_%s(this)", field);
			char *next = xasprintf("%.*s%s%s", (int)at, out, call, out + after);
			pos = at + strlen(call);
			free(call);
			free(out);
			out = next;
			len = strlen(out);
			(*count)++;
			continue;
		}
		if (op == (size_t)-1 || start == op) {
			pos = at + 1;
			continue;
		}
		size_t estart = start, eend = back_spaces(out, op);
		char *expr = xstrndup(out + estart, eend - estart);
		char *call = arrow ? xasprintf("nvshim_compat_%s(%s)", field, expr)
				   : xasprintf("nvshim_compat_%s(&(%s))", field, expr);
		char *next = xasprintf("%.*s%s%s", (int)estart, out, call, out + after);
		pos = estart + strlen(call);
		free(expr);
		free(call);
		free(out);
		out = next;
		len = strlen(out);
		(*count)++;
	}
	return out;
}

char *compat_rewrite(const char *text, const char *name, const struct compat_site *sites, size_t nsites,
		     size_t *count)
{
	size_t nlen = strlen(name);
	return compat_rewrite_as(text, name, !(nlen >= 2 && !strcmp(name + nlen - 2, ".c")), sites, nsites, count);
}

char *compat_rewrite_as(const char *text, const char *name, int cplusplus, const struct compat_site *sites,
			size_t nsites, size_t *count)
{
	*count = 0;
	/* #line takes a string literal: the name's quotes and backslashes escaped */
	struct argv lines = ARGV_INIT;
	for (const char *p = text; *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p + 1) : strlen(p);
		argv_push_owned(&lines, xstrndup(p, n));
		p += n;
	}
	int ok = 1;
	for (size_t s = 0; s < nsites && ok; s++) {
		if (!sites[s].line || sites[s].line > lines.n) {
			ok = 0;
			break;
		}
		char **l = &lines.v[sites[s].line - 1];
		size_t n = 0;
		/* several errors may name the same line: the first rewrote it */
		char *probe = xasprintf("nvshim_compat_%s(", sites[s].field);
		int done = strstr(*l, probe) != NULL;
		free(probe);
		char *next = rewrite_line(*l, sites[s].field, sites[s].bare, &n);
		if (!n && !done)
			ok = 0;
		free(*l);
		*l = next;
		*count += n;
	}
	/* C++ (any source but a .c one): a read of the same field on another line is rewritten too.
	 * A template's read is reported only when the template is instantiated, which the first
	 * compile never reaches (it stopped at the reported errors): without this the retry would
	 * fail on it. A read of a field of that name in a struct of the program's own then fails
	 * the retry (no conversion to a cudaDeviceProp pointer in C++) and the first compile's
	 * errors stand. Not in C, where that conversion is only a warning. */
	for (size_t s = 0; s < nsites && ok && cplusplus; s++) {
		int seen = 0;
		for (size_t t = 0; t < s && !seen; t++)
			seen = !strcmp(sites[t].field, sites[s].field);
		for (size_t i = 0; i < lines.n && !seen; i++) {
			if (!strstr(lines.v[i], sites[s].field))
				continue;
			size_t n = 0;
			char *next = rewrite_line(lines.v[i], sites[s].field, 0, &n);
			free(lines.v[i]);
			lines.v[i] = next;
			*count += n;
		}
	}
	char *out = NULL;
	if (ok) {
		size_t cap = strlen(text) + strlen(name) * 2 + 32 + *count * 64, len = 0;
		out = XNEWVEC(char, cap);
		len += (size_t)sprintf(out, "#line 1 \"");
		for (const char *q = name; *q; q++) {
			if (*q == '"' || *q == '\\')
				out[len++] = '\\';
			out[len++] = *q;
		}
		len += (size_t)sprintf(out + len, "\"\n");
		for (size_t i = 0; i < lines.n; i++) {
			size_t n = strlen(lines.v[i]);
			if (len + n + 1 > cap) {
				cap = (len + n + 1) * 2;
				out = XRESIZEVEC(char, out, cap);
			}
			memcpy(out + len, lines.v[i], n);
			len += n;
		}
		out[len] = '\0';
	}
	argv_release(&lines);
	return out;
}

/* ---- the retry ---- */

static int is_file(const char *p)
{
	struct stat sb;
	return !stat(p, &sb) && S_ISREG(sb.st_mode);
}

char *compat_include_dir(const char *exe_dir)
{
	if (exe_dir) {
		char *d = concat(exe_dir, "/../include", NULL);
		char *probe = concat(d, "/nvshim/compat/common.h", NULL);
		int ok = is_file(probe);
		free(probe);
		if (ok) {
			char *real = realpath(d, NULL);
			free(d);
			return real;
		}
		free(d);
	}
	if (*NVSHIM_SOURCE_INCLUDE_DIR) {
		char *probe = concat(NVSHIM_SOURCE_INCLUDE_DIR, "/nvshim/compat/common.h", NULL);
		int ok = is_file(probe);
		free(probe);
		if (ok)
			return xstrdup(NVSHIM_SOURCE_INCLUDE_DIR);
	}
	return NULL;
}

/* 1 if two paths name one existing file (the same string, or the same device and inode). */
static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	if (!strcmp(a, b))
		return 1;
	return !stat(a, &sa) && !stat(b, &sb) && S_ISREG(sa.st_mode) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* The argument naming the dependency file a compile writes, or NULL: -MF FILE, -MFFILE,
 * --dependency-output FILE; with -MD or -MMD and no -MF, the object's name with .d. */
static char *deps_file(const struct argv *a)
{
	const char *obj = NULL;
	int md = 0;
	for (size_t i = 1; i < a->n; i++) {
		const char *s = a->v[i];
		if ((!strcmp(s, "-MF") || !strcmp(s, "--dependency-output")) && i + 1 < a->n)
			return xstrdup(a->v[i + 1]);
		if (!strncmp(s, "-MF", 3) && s[3])
			return xstrdup(s + 3);
		if (!strncmp(s, "--dependency-output=", 20))
			return xstrdup(s + 20);
		if (!strcmp(s, "-MD") || !strcmp(s, "-MMD") || !strcmp(s, "--generate-dependencies-with-compile") ||
		    !strcmp(s, "--generate-nonsystem-dependencies-with-compile"))
			md = 1;
		if ((!strcmp(s, "-o") || !strcmp(s, "--output-file")) && i + 1 < a->n)
			obj = a->v[i + 1];
	}
	if (!md || !obj)
		return NULL;
	const char *dot = strrchr(obj, '.'), *slash = strrchr(obj, '/');
	size_t n = dot && (!slash || dot > slash) ? (size_t)(dot - obj) : strlen(obj);
	char *base = xstrndup(obj, n);
	char *d = concat(base, ".d", NULL);
	free(base);
	return d;
}

/* Writes `out` (a new text of the file `text` was read from) to path when it differs; frees both. */
static void write_changed(const char *path, char *text, char *out)
{
	if (out && text && strcmp(out, text)) {
		FILE *f = fopen(path, "w");
		if (f) {
			fputs(out, f);
			fclose(f);
		}
	}
	free(out);
	free(text);
}

/* Every `from` in a file becomes `to`. */
static void replace_in_file(const char *path, const char *from, const char *to)
{
	char *text = cache_read(path);
	if (!text || !strstr(text, from)) {
		free(text);
		return;
	}
	size_t fl = strlen(from), tl = strlen(to), n = 0;
	for (const char *p = text; (p = strstr(p, from)); p += fl)
		n++;
	char *out = XNEWVEC(char, strlen(text) + n * (tl > fl ? tl - fl : 0) + 1), *o = out;
	for (const char *p = text;;) {
		const char *h = strstr(p, from);
		if (!h) {
			strcpy(o, p);
			break;
		}
		memcpy(o, p, (size_t)(h - p));
		o += h - p;
		memcpy(o, to, tl);
		o += tl;
		p = h + fl;
	}
	write_changed(path, text, out);
}

/* Every prefix from->v[i] in a file becomes to->v[i] (overlay_unmap). */
static void unmap_file(const char *path, const struct argv *from, const struct argv *to)
{
	char *text = cache_read(path);
	write_changed(path, text, text ? overlay_unmap(text, from, to) : NULL);
}

/* A dependency file's first rule without the prerequisites named twice (the copies' #line). */
static void dedupe_file(const char *path)
{
	char *text = cache_read(path);
	write_changed(path, text, text ? overlay_dedupe_deps(text) : NULL);
}

void compat_drop_own_deps(const struct argv *line, const char *exe_dir)
{
	char *path = deps_file(line), *inc = path ? compat_include_dir(exe_dir) : NULL;
	char *prefix = inc ? concat(inc, "/nvshim/", NULL) : NULL;
	char *text = prefix ? cache_read(path) : NULL;
	write_changed(path, text, text && strstr(text, prefix) ? overlay_drop_deps(text, prefix) : NULL);
	free(prefix);
	free(inc);
	free(path);
}

/* ---- field reads in project headers: the retry through a mirror (overlay.h) ---- */

static char *joined(const struct argv *a);

struct headers_copy {
	struct overlay o;
	struct argv from, to; /* the mirror's paths -> the user's spelling */
	struct argv files;    /* the files rewritten, as the errors name them */
	char *source;         /* the source, as the compile line names it */
	size_t rewritten;     /* reads rewritten in all */
};

static void headers_copy_init(struct headers_copy *h)
{
	memset(h, 0, sizeof(*h));
	overlay_init(&h->o);
	argv_init(&h->from);
	argv_init(&h->to);
	argv_init(&h->files);
}

static void headers_copy_release(struct headers_copy *h)
{
	overlay_remove(&h->o);
	argv_release(&h->from);
	argv_release(&h->to);
	argv_release(&h->files);
	free(h->source);
	headers_copy_init(h);
}

/* The argument that is the compile's one source (a file with a source's suffix, not an
 * option's value), or 0. */
static size_t source_argument(const struct argv *a)
{
	static const char *const ext[] = { ".cu", ".c", ".cpp", ".cc", ".cxx", ".C", ".c++", ".cp", ".CPP" };
	static const char *const valued[] = { "-o", "-MF", "-MT", "-MQ", "-include", "-imacros", "-x",
					      "--output-file", "--dependency-output", "-Xcompiler", "-Xlinker" };
	size_t pos = 0;
	for (size_t i = 1; i < a->n; i++) {
		int skip = 0;
		for (size_t k = 0; k < sizeof(valued) / sizeof(valued[0]) && !skip; k++)
			skip = !strcmp(a->v[i - 1], valued[k]);
		const char *dot = strrchr(a->v[i], '.');
		int src = 0;
		for (size_t e = 0; dot && !skip && a->v[i][0] != '-' && e < sizeof(ext) / sizeof(ext[0]) && !src; e++)
			src = !strcmp(dot, ext[e]) && is_file(a->v[i]);
		if (src) {
			if (pos)
				return 0;
			pos = i;
		}
	}
	return pos;
}

static char *collect_dir(const char *dir, void *arg)
{
	argv_push((struct argv *)arg, dir);
	return NULL;
}

/* A toolkit's include directory (not the user's): it has the CUDA runtime's headers. */
static int toolkit_dir(const char *dir)
{
	char *a = concat(dir, "/cuda_runtime_api.h", NULL), *b = concat(dir, "/cuda.h", NULL);
	int yes = is_file(a) || is_file(b);
	free(a);
	free(b);
	return yes;
}

struct map_arg {
	const char *root, *mirror;
	struct argv *from, *to;
};

/* An include directory inside the mirrored tree: its mirror, and the pair that maps back. */
static char *map_dir(const char *dir, void *arg)
{
	struct map_arg *m = arg;
	char *real = realpath(dir, NULL), *out = NULL;
	if (real && overlay_under(real, m->root)) {
		out = concat(m->mirror, real + strlen(m->root), NULL);
		size_t n = strlen(dir);
		while (n > 1 && dir[n - 1] == '/')
			n--;
		argv_push_owned(m->from, concat(out, "/", NULL));
		argv_push_owned(m->to, xasprintf("%.*s/", (int)n, dir));
	}
	free(real);
	return out;
}

/* The sites in project headers: private copies of those headers and of the source, in a mirror
 * of the tree that holds them, and the compile line `argv` changed to compile through it.
 * 1 when argv is ready; 0 (h released) when not: the first compile's result stands. */
static int copy_headers(int host, const char *nvcc, const struct compat_decision *d, const char *inc,
			struct argv *argv, struct headers_copy *h)
{
	size_t pos = source_argument(argv);
	if (!pos) {
		diag_note(VERBOSITY_VERBOSE, "compat: field reads in headers, but no one source on the line: no retry");
		return 0;
	}
	h->source = xstrdup(argv->v[pos]);
	const char *slash = strrchr(h->source, '/');
	char *sdir_spelled = slash ? xstrndup(h->source, (size_t)(slash - h->source + 1)) : xstrdup("");
	char *sdir = realpath(*sdir_spelled ? sdir_spelled : ".", NULL);
	const char *base = slash ? slash + 1 : h->source;
	int cplusplus = !overlay_is_c(argv, h->source, host);
	/* the real path of each site's file; the headers, each once */
	char **real = XCNEWVEC(char *, d->nsites);
	struct argv hreal = ARGV_INIT, hname = ARGV_INIT;
	char *why = NULL;
	for (size_t i = 0; i < d->nsites && !why; i++) {
		if (same_file(d->sites[i].file, h->source))
			continue;
		real[i] = realpath(d->sites[i].file, NULL);
		if (!real[i] || !is_file(real[i]))
			why = xasprintf("%s is not a file here", d->sites[i].file);
		else if (!has_string(&hreal, real[i])) {
			argv_push(&hreal, real[i]);
			argv_push(&hname, d->sites[i].file);
		}
	}
	/* the user's directories: the source's, and the -I / -iquote ones that are no toolkit's */
	struct argv dirs = ARGV_INIT, roots = ARGV_INIT, spanned = ARGV_INIT, excluded = ARGV_INIT;
	overlay_map_includes(argv, host, collect_dir, &dirs);
	for (size_t i = 0; i < dirs.n; i++) {
		char *r = realpath(dirs.v[i], NULL);
		if (r && !toolkit_dir(r))
			argv_push(&roots, r);
		free(r);
	}
	argv_push(&excluded, "/usr");
	if (inc)
		argv_push(&excluded, inc);
	char *cuda = realpath("/usr/local/cuda", NULL);
	if (cuda)
		argv_push_owned(&excluded, cuda);
	if (nvcc) {
		char *tk = xstrdup(nvcc), *t;
		for (int k = 0; k < 2 && (t = strrchr(tk, '/')); k++)
			*t = '\0';
		char *r = *tk ? realpath(tk, NULL) : NULL;
		if (r && strcmp(r, "/"))
			argv_push_owned(&excluded, r);
		else
			free(r);
		free(tk);
	}
	if (!sdir && !why)
		why = xasprintf("the directory of %s is not found", h->source);
	if (sdir)
		argv_push(&spanned, sdir);
	for (size_t k = 0; k < hreal.n && !why; k++) {
		int bad = 0, in = sdir && overlay_under(hreal.v[k], sdir);
		for (size_t x = 0; x < excluded.n; x++)
			bad |= overlay_under(hreal.v[k], excluded.v[x]);
		for (size_t r = 0; r < roots.n; r++)
			if (overlay_under(hreal.v[k], roots.v[r])) {
				in = 1;
				push_once(&spanned, roots.v[r]);
			}
		if (bad || !in)
			why = xasprintf("%s is not a project header (under the source's directory or an -I or "
					"-iquote directory, and not the toolkit's or the system's)", hname.v[k]);
		else
			push_once(&spanned, hreal.v[k]);
	}
	char *root = !why ? overlay_common_dir(spanned.v, spanned.n) : NULL;
	int whole = 1; /* the source compiled from the mirror too */
	if (root && !strcmp(root, "/")) {
		/* Nothing in common but /: the headers' directories mirrored without the source's,
		 * where none of them is beside the source and the source reads no field itself (the
		 * headers are then reached through the -I / -iquote directories). */
		int apart = spanned.n > 1;
		for (size_t k = 0; k < hreal.n; k++)
			apart &= !overlay_under(hreal.v[k], sdir);
		for (size_t i = 0; i < d->nsites; i++)
			apart &= real[i] != NULL;
		if (apart) {
			free(root);
			root = overlay_common_dir(spanned.v + 1, spanned.n - 1);
			whole = 0;
		}
		if (!strcmp(root, "/"))
			why = xstrdup("the source and the headers have no directory in common but /");
	}
	/* the private copies' texts */
	struct argv rel = ARGV_INIT, texts = ARGV_INIT;
	if (!why) {
		char *text = whole ? cache_read(h->source) : NULL;
		struct compat_site *mine = XNEWVEC(struct compat_site, d->nsites + 1);
		size_t n = 0, count = 0;
		for (size_t i = 0; i < d->nsites; i++)
			if (!real[i])
				mine[n++] = d->sites[i];
		char *copied = text ? compat_rewrite(text, h->source, mine, n, &count) : NULL;
		if (!copied && whole)
			why = xasprintf("the reads in %s are not on the lines reported", h->source);
		else if (whole) {
			argv_push_owned(&rel, strcmp(sdir, root) ? concat(sdir + strlen(root) + 1, "/", base, NULL)
								 : xstrdup(base));
			argv_push_owned(&texts, copied);
			if (n)
				argv_push(&h->files, h->source);
			h->rewritten += count;
		}
		free(text);
		for (size_t k = 0; k < hreal.n && !why; k++) {
			n = 0;
			for (size_t i = 0; i < d->nsites; i++)
				if (real[i] && !strcmp(real[i], hreal.v[k]))
					mine[n++] = d->sites[i];
			text = cache_read(hreal.v[k]);
			copied = text ? compat_rewrite_as(text, hname.v[k], cplusplus, mine, n, &count) : NULL;
			if (!copied)
				why = xasprintf("the reads in %s are not on the lines reported", hname.v[k]);
			else {
				argv_push(&rel, hreal.v[k] + strlen(root) + 1);
				argv_push_owned(&texts, copied);
				argv_push(&h->files, hname.v[k]);
				h->rewritten += count;
			}
			free(text);
		}
		free(mine);
	}
	const char *tmp = getenv("TMPDIR");
	if (!why && overlay_build(&h->o, root, tmp && *tmp == '/' ? tmp : "/tmp", &rel, &texts))
		why = xasprintf("no mirror of %s could be made", root);
	if (!why && !host && strchr(h->o.dir, ','))
		why = xasprintf("the mirror's path %s has a comma, which nvcc would split", h->o.dir);
	if (!why && whole) {
		/* the source's copy, and the way back to its spelling */
		char *copy = concat(h->o.dir, "/", rel.v[0], NULL);
		argv_replace(argv, pos, copy);
		*strrchr(copy, '/') = '\0';
		argv_push_owned(&h->from, concat(copy, "/", NULL));
		argv_push(&h->to, sdir_spelled);
		free(copy);
	}
	if (!why) {
		struct map_arg m = { root, h->o.dir, &h->from, &h->to };
		overlay_map_includes(argv, host, map_dir, &m);
		argv_push_owned(&h->from, concat(h->o.dir, "/", NULL));
		argv_push_owned(&h->to, concat(root, "/", NULL));
		char *files = joined(&h->files);
		diag_note(VERBOSITY_VERBOSE, "compat: private copies of %s in a mirror of %s (%s)", files, root, h->o.dir);
		free(files);
	} else {
		diag_note(VERBOSITY_VERBOSE, "compat: field reads in headers, and no private copies: %s; no retry", why);
	}
	int ok = why == NULL;
	for (size_t i = 0; i < d->nsites; i++)
		free(real[i]);
	free(real);
	free(why);
	free(root);
	free(sdir);
	free(sdir_spelled);
	argv_release(&hreal);
	argv_release(&hname);
	argv_release(&dirs);
	argv_release(&roots);
	argv_release(&spanned);
	argv_release(&excluded);
	argv_release(&rel);
	argv_release(&texts);
	if (!ok)
		headers_copy_release(h);
	return ok;
}

/* "a, b and c" */
static char *joined(const struct argv *a)
{
	char *s = xstrdup("");
	for (size_t i = 0; i < a->n; i++) {
		char *n = concat(s, i == 0 ? "" : i + 1 == a->n ? " and " : ", ", a->v[i], NULL);
		free(s);
		s = n;
	}
	return s;
}

/* "; N field reads rewritten in private copies of A and B (...)" for the note. */
static char *rewritten_how(const struct headers_copy *h)
{
	char *files = joined(&h->files);
	int one = h->files.n == 1;
	char *how = xasprintf("; %lu field read%s rewritten in %s of %s (the file%s untouched: the retry "
			      "compiled through a mirror of the directory tree that holds %s)",
			      (unsigned long)h->rewritten, h->rewritten == 1 ? "" : "s",
			      one ? "a private copy" : "private copies", files, one ? " itself is" : "s themselves are",
			      one ? "it" : "them");
	free(files);
	return how;
}

/* The files `nvshim migrate` should be given: those the errors name that are the source or a
 * header copied, as the errors name them (the source first, as the line names it). */
static char *migrate_files(const struct compat_decision *d, const struct headers_copy *h)
{
	struct argv f = ARGV_INIT;
	argv_push(&f, h->source);
	for (size_t i = 0; i < d->files.n; i++)
		if (has_string(&h->files, d->files.v[i]) && !same_file(d->files.v[i], h->source))
			push_once(&f, d->files.v[i]);
	/* the source only where an error names it */
	int named = 0;
	for (size_t i = 0; i < d->files.n && !named; i++)
		named = same_file(d->files.v[i], h->source);
	if (!named && f.n > 1)
		argv_remove(&f, 0);
	char *s = argv_join(&f, " ");
	argv_release(&f);
	return s;
}

void compat_say_once(const struct compat_context *ctx, const char *key, const char *note, const char *tail)
{
	/* one nvshim that runs its line as two commands (a compile, then the link) says a rule once */
	static struct argv said = ARGV_INIT;
	for (size_t i = 0; i < said.n; i++)
		if (!strcmp(said.v[i], key)) {
			diag_note(VERBOSITY_VERBOSE, "%s", note);
			return;
		}
	argv_push(&said, key);
	const struct build *b = ctx->env ? build_current(ctx->env) : NULL;
	const struct config *cfg = ctx->api->cfg;
	if (b && !strcmp(cfg->repeat_notes, "once") && diag_verbosity() > VERBOSITY_QUIET) {
		int first = once_first(cfg->cache_dir, b->id, key);
		if (first == 0) {
			stats_count_quieted();
			diag_note(VERBOSITY_VERBOSE, "%s", note);
			return;
		}
		if (first == 1) {
			diag_rewrite("%s (said once for this %s build%s)", note, b->tool, tail);
			return;
		}
	}
	diag_rewrite("%s", note);
}

/* Says the restored note: once per build (its rule is the key), every time outside one. */
static void say_restored(const struct compat_context *ctx, const char *note)
{
	compat_say_once(ctx, "[compat.restored]", note,
			": its other sources the layer restores are noted at verbosity verbose; nvshim stats counts them");
}

static void note_none(struct plan *plan, const struct compat_decision *d)
{
	for (size_t i = 0; i < d->why_not.n; i++) {
		plan_note(plan, "compat.none", "the compatibility layer cannot restore %s; the build fails as "
			  "before", d->why_not.v[i]);
	}
}

void compat_layered_release(struct compat_layered *l)
{
	if (l->temp && l->copy)
		unlink(l->copy);
	if (l->temp && l->dir)
		rmdir(l->dir);
	if (l->headers) {
		headers_copy_release(l->headers);
		free(l->headers);
	}
	argv_release(&l->argv);
	free(l->copy);
	free(l->dir);
	free(l->source);
	memset(l, 0, sizeof(*l));
	argv_init(&l->argv);
}

/* Where a lasting private copy of text `copied` for `source` goes: <cache_dir>/compat/copies/HASH,
 * HASH of the text and the source's absolute directory (its -iquote). xmalloc'ed. */
static char *lasting_dir(const char *cache_dir, const char *copied, const char *sdir)
{
	uint64_t h = hash_str(HASH_INIT, "nvshim compat copy 1");
	h = hash_bytes(h, copied, strlen(copied) + 1);
	h = hash_str(h, sdir);
	uint64_t h2 = hash_str(h ^ 0x9e3779b97f4a7c15ULL, copied);
	return xasprintf("%s/compat/copies/%016llx%016llx", cache_dir, (unsigned long long)h, (unsigned long long)h2);
}

/* -DNVSHIM_COMPAT_SELECTED and -DNVSHIM_COMPAT_WANT_NAME for each API entry the errors named, once:
 * the headers restore only those (common.h's NVSHIM_COMPAT_WANTS). */
static void push_wants(struct argv *line, const struct compat_decision *d)
{
	for (size_t i = 1; i < line->n; i++)
		if (!strcmp(line->v[i], "-DNVSHIM_COMPAT_SELECTED"))
			return;
	argv_push(line, "-DNVSHIM_COMPAT_SELECTED");
	for (size_t i = 0; i < d->entries.n; i++) {
		const char *e = d->entries.v[i];
		int plain = *e != '\0';
		for (const char *c = e; *c && plain; c++)
			plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_';
		if (plain)
			argv_pushf(line, "-DNVSHIM_COMPAT_WANT_%s", e);
	}
}

int compat_layer(const struct argv *argv, const struct compat_decision *d, const char *inc, const char *cache_dir,
		 int host, const char *nvcc, struct compat_layered *l)
{
	memset(l, 0, sizeof(*l));
	argv_copy(&l->argv, argv);
	int ok = 1;
	if (d->nsites) {
		char *source = xstrdup(d->sites[0].file);
		for (size_t i = 1; i < d->nsites; i++)
			ok &= !strcmp(d->sites[i].file, source);
		/* the argument that names it (a launcher may print it absolute) */
		size_t pos = 0;
		for (size_t i = 1; i < l->argv.n && ok && !pos; i++)
			if (same_file(l->argv.v[i], source))
				pos = i;
		if (!ok || !pos) {
			/* reads in project headers too: private copies in a mirror of their tree */
			free(source);
			if (cache_dir) {
				diag_note(VERBOSITY_VERBOSE, "compat: field reads in project headers: their private "
					  "copies do not outlive nvshim, so a dry run is not layered");
				return -1;
			}
			l->headers = XNEW(struct headers_copy);
			headers_copy_init(l->headers);
			ok = copy_headers(host, nvcc, d, inc, &l->argv, l->headers);
			if (ok)
				l->source = xstrdup(l->headers->source);
			if (ok && d->headers.n)
				push_wants(&l->argv, d);
			for (size_t i = 0; ok && i < d->headers.n; i++) {
				argv_push(&l->argv, "-include");
				argv_push_owned(&l->argv, concat(inc, "/nvshim/compat/", d->headers.v[i], NULL));
			}
			return ok ? 0 : -1;
		}
		if (pos) {
			free(source);
			source = xstrdup(l->argv.v[pos]);
		}
		l->source = source;
		char *text = ok && pos ? cache_read(source) : NULL;
		char *copied = text ? compat_rewrite(text, source, d->sites, d->nsites, &l->rewritten) : NULL;
		const char *slash = strrchr(source, '/');
		/* "header.h" next to the source is found as before; a lasting copy is used after
		 * nvshim ended, from any directory: its directory absolute */
		char *sdir = slash ? xstrndup(source, (size_t)(slash - source)) : xstrdup(".");
		if (copied && cache_dir) {
			char *real = realpath(*sdir ? sdir : "/", NULL);
			free(sdir);
			sdir = real;
			if (sdir) {
				l->dir = lasting_dir(cache_dir, copied, sdir);
				l->copy = concat(l->dir, "/", slash ? slash + 1 : source, NULL);
				char *have = cache_read(l->copy);
				/* content-addressed: a copy already there is this one */
				ok = (have && !strcmp(have, copied)) || !cache_write(l->dir, l->copy, copied);
				free(have);
			} else {
				ok = 0;
			}
		} else if (copied) {
			const char *tmp = getenv("TMPDIR");
			l->dir = concat(tmp && *tmp == '/' ? tmp : "/tmp", "/nvshim-compat-XXXXXX", NULL);
			l->temp = 1;
			if (!mkdtemp(l->dir)) {
				free(l->dir);
				l->dir = NULL;
				ok = 0;
			} else {
				l->copy = concat(l->dir, "/", slash ? slash + 1 : source, NULL);
				FILE *f = fopen(l->copy, "w");
				ok = f && fputs(copied, f) >= 0;
				if (f)
					ok &= fclose(f) == 0;
			}
		} else {
			ok = 0;
		}
		if (ok) {
			free(l->argv.v[pos]);
			l->argv.v[pos] = xstrdup(l->copy);
			if (host) {
				argv_insert(&l->argv, 1, sdir);
				argv_insert(&l->argv, 1, "-iquote");
			} else {
				char *x = concat("-iquote,", sdir, NULL);
				argv_push(&l->argv, "-Xcompiler");
				argv_push_owned(&l->argv, x);
			}
		}
		free(sdir);
		free(copied);
		free(text);
	}
	if (ok && d->headers.n)
		push_wants(&l->argv, d);
	for (size_t i = 0; ok && i < d->headers.n; i++) {
		argv_push(&l->argv, "-include");
		argv_push_owned(&l->argv, concat(inc, "/nvshim/compat/", d->headers.v[i], NULL));
	}
	return ok ? 0 : -1;
}

char *compat_restored_text(const struct compat_decision *d, const struct compat_layered *l, const struct argv *argv,
			   const char *goes)
{
	char *what = joined(&d->entries), *hdr = joined(&d->headers);
	/* the compiled source: a file the errors name that is an argument */
	const char *named = l->copy ? l->source : NULL;
	for (size_t i = 0; i < d->files.n && !named; i++)
		for (size_t k = 1; k < argv->n && !named; k++)
			if (!strcmp(argv->v[k], d->files.v[i]))
				named = d->files.v[i];
	static const char *const ext[] = { ".cu", ".c", ".cpp", ".cc", ".cxx", ".C" };
	for (size_t k = 1; k < argv->n && !named; k++) {
		const char *dot = strrchr(argv->v[k], '.');
		for (size_t e = 0; dot && e < sizeof(ext) / sizeof(ext[0]) && !named; e++)
			if (!strcmp(dot, ext[e]) && is_file(argv->v[k]))
				named = argv->v[k];
	}
	char *src = l->headers ? migrate_files(d, l->headers) : xstrdup(named ? named : "FILE");
	char *how = l->headers ? rewritten_how(l->headers)
		    : l->copy ? xasprintf("; %lu field read%s rewritten in a private copy of %s (the file "
					"itself is untouched)", (unsigned long)l->rewritten, l->rewritten == 1 ? "" : "s",
					l->source)
			    : xstrdup("");
	char *text = xasprintf("CUDA %s restored by nvshim's compatibility layer (nvshim/compat/%s "
			       "force-included%s)", what, hdr, how);
	char *full = xasprintf("%s: %s; the lasting fix is `nvshim migrate %s`, which rewrites "
			       "the code for CUDA 12 and 13", text, goes, src);
	free(text);
	free(what);
	free(hdr);
	free(src);
	free(how);
	return full;
}

/* Whether an nvcc line reads an options file. */
static int has_options_file(const struct argv *argv)
{
	for (size_t i = 1; i < argv->n; i++)
		if (!strcmp(argv->v[i], "-optf") || !strcmp(argv->v[i], "--options-file") ||
		    !strncmp(argv->v[i], "-optf=", 6) || !strncmp(argv->v[i], "--options-file=", 15))
			return 1;
	return 0;
}

const struct argv *compat_flat_line(const struct compat_context *ctx, const struct argv *line, struct argv *buf)
{
	argv_init(buf);
	if (ctx->host || !has_options_file(line))
		return line;
	struct invocation inv;
	invocation_parse(&inv, line->v + 1, line->n - 1, ctx->env);
	argv_push(buf, line->v[0]);
	invocation_flatten(&inv, buf);
	invocation_release(&inv);
	return buf;
}

int compat_after_failure(const struct compat_context *ctx, struct plan *plan, struct run_result *res,
			 char **held)
{
	const struct config *cfg = ctx->api->cfg;
	if (!cfg->compat || strcmp(cfg->compat, "auto") || !*held || res->signal || runner_signal())
		return 0;
	/* Cheap first: an error about something at all. */
	if (!api_errors_name_any(*held))
		return 0;
	if (fault_inject("compat")) {
		warning("the compatibility layer did not run: injected fault (NVSHIM_FAULT); the compile's "
			"result stands");
		return 0;
	}
	struct api_table t;
	char *version = NULL;
	api_table_init(&t);
	api_context_load(ctx->api, &t, &version);
	struct compat_decision d;
	compat_decision_init(&d);
	compat_decide(&t, *held, version, &d);
	free(version);
	api_table_release(&t);
	note_none(plan, &d);
	char *inc = d.retry ? compat_include_dir(ctx->api->exe_dir) : NULL;
	if (d.retry && !inc)
		warning("the compatibility layer's headers (nvshim/compat/) are not installed beside nvshim: "
			"no retry");
	int restored = 0, retried = 0;
	struct compat_layered l;
	memset(&l, 0, sizeof(l));
	argv_init(&l.argv);
	if (inc) {
		/* sources in an options file: the retry's line has them on the command line, where
		 * the layer can put a private copy in their place */
		struct argv base;
		const struct argv *given = compat_flat_line(ctx, &plan->argv, &base);
		int ok = !compat_layer(given, &d, inc, NULL, ctx->host, ctx->api->nvcc, &l);
		argv_release(&base);
		if (!ok)
			diag_note(VERBOSITY_VERBOSE, "compat: no private copy of %s (its reads not found on the "
				  "lines reported, or it is not an argument of this compile): no retry",
				  l.source ? l.source : "the source");
		if (ok) {
			struct run_result again = { 127, 0, 0 };
			char *held2 = NULL;
			char *line = argv_to_shell(&l.argv);
			diag_note(VERBOSITY_VERBOSE, "compiling again with the compatibility layer: %s", line);
			free(line);
			retried = 1;
			if (!runner_run_held(plan->tool, &l.argv, &again, &held2) && again.status == 0) {
				char *deps = deps_file(&l.argv);
				if (deps && l.copy)
					replace_in_file(deps, l.copy, l.source);
				if (deps && l.headers)
					unmap_file(deps, &l.headers->from, &l.headers->to);
				if (deps && (l.copy || l.headers))
					dedupe_file(deps);
				free(deps);
				compat_drop_own_deps(&l.argv, ctx->api->exe_dir);
				free(*held);
				*held = held2;
				/* its warnings name the user's files, not the mirror's */
				if (l.headers && held2) {
					*held = overlay_unmap(held2, &l.headers->from, &l.headers->to);
					free(held2);
				}
				*res = again;
				restored = 1;
			} else {
				char *said = l.headers && held2 ? overlay_unmap(held2, &l.headers->from, &l.headers->to) : NULL;
				diag_note(VERBOSITY_VERBOSE, "the compile with the compatibility layer failed too "
					  "(status %d):\n%s", again.status, said ? said : held2 ? held2 : "");
				free(said);
				free(held2);
			}
		}
	}
	if (restored) {
		char *text = compat_restored_text(&d, &l, &plan->argv, "the build goes on");
		plan_note(plan, "compat.restored", "%s", text);
		free(text);
		say_restored(ctx, plan->notes.v[plan->notes.n - 1]);
	} else if (retried) {
		if (d.others)
			plan_note(plan, "compat.failed", "the compile failed on APIs the compatibility layer "
				  "restores and on %lu error%s that name%s none of the API table's, and failed "
				  "again with the layer: the first compile's errors stand", (unsigned long)d.others,
				  d.others == 1 ? "" : "s", d.others == 1 ? "s" : "");
		else
			plan_note(plan, "compat.failed", "the compile failed on APIs the compatibility layer "
				  "restores, and failed again with it: the first compile's errors stand");
	}
	compat_layered_release(&l);
	free(inc);
	compat_decision_release(&d);
	return restored;
}

int compat_after_implicit(const struct compat_context *ctx, struct plan *plan, struct run_result *res, char **held)
{
	static const char implicit[] = "warning: implicit declaration of function ";
	if (res->signal || !*held || !strstr(*held, implicit))
		return 0;
	/* a compile and link on one line: the link's undefined references are what the
	 * declarations cause; any other error stands */
	for (const char *line = *held; res->status && *line;) {
		const char *end = strchr(line, '\n');
		size_t n = end ? (size_t)(end - line) : strlen(line);
		if ((memmem(line, n, "error", 5) && !memmem(line, n, "ld returned", 11)) &&
		    !memmem(line, n, "undefined reference to", 22))
			return 0;
		line += n + (end != NULL);
	}
	/* the warnings as the errors they are in C++ (and in C from C23 on), for the decision */
	struct strbuf b = STRBUF_INIT;
	for (const char *line = *held; *line;) {
		const char *end = strchr(line, '\n');
		size_t n = end ? (size_t)(end - line) : strlen(line);
		const char *w = memmem(line, n, implicit, sizeof(implicit) - 1);
		if (w) {
			strbuf_add(&b, line, (size_t)(w - line));
			strbuf_addstr(&b, "error: ");
			strbuf_add(&b, w + 9, n - (size_t)(w + 9 - line));
			strbuf_addstr(&b, "\n");
		}
		line += n + (end != NULL);
	}
	struct run_result failed = *res;
	failed.status = 1;
	size_t notes = plan->notes.n;
	char *errs = b.s;
	int restored = compat_after_failure(ctx, plan, &failed, &errs);
	if (restored) {
		free(*held);
		*held = errs;
		*res = failed;
		return 1;
	}
	/* the compile passed: nothing of the layer's to say */
	while (plan->notes.n > notes)
		argv_remove(&plan->notes, plan->notes.n - 1);
	free(errs);
	return 0;
}

void compat_say_after(const struct plan *plan, size_t from)
{
	for (size_t i = from; i < plan->notes.n; i++) {
		const char *n = plan->notes.v[i];
		size_t len = strlen(n);
		/* A retry that errors naming no entry of the table made a guess of (a removed base's
		 * follow-on errors, or the program's own) says its failure at verbose only: the
		 * compiler's errors and the API notes already say all there is. */
		if (len > 13 && !strcmp(n + len - 13, "[compat.none]"))
			diag_note(VERBOSITY_NORMAL, "%s", n);
		else if (len > 15 && !strcmp(n + len - 15, "[compat.failed]"))
			diag_note(strstr(n, " none of the API table's") ? VERBOSITY_VERBOSE : VERBOSITY_NORMAL, "%s", n);
	}
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* "REL SIZE MTIME" for every file under dir (two levels), into out. */
static void list_files(const char *dir, const char *rel, int depth, struct argv *out)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char *path = concat(dir, "/", e->d_name, NULL);
		char *r = *rel ? concat(rel, "/", e->d_name, NULL) : xstrdup(e->d_name);
		struct stat sb;
		if (!stat(path, &sb) && S_ISDIR(sb.st_mode) && depth < 2)
			list_files(path, r, depth + 1, out);
		else if (!stat(path, &sb) && S_ISREG(sb.st_mode))
			argv_pushf(out, "%s %lld %lld.%09ld", r, (long long)sb.st_size, (long long)sb.st_mtim.tv_sec,
				   (long)sb.st_mtim.tv_nsec);
		free(path);
		free(r);
	}
	closedir(d);
}

char *compat_identity(const struct config *cfg, const char *exe_dir)
{
	if (!cfg->compat || strcmp(cfg->compat, "auto"))
		return xstrdup("");
	char *inc = compat_include_dir(exe_dir);
	struct argv files = ARGV_INIT;
	char *dir = inc ? concat(inc, "/nvshim/compat", NULL) : NULL;
	if (dir)
		list_files(dir, "", 0, &files);
	if (files.n)
		qsort(files.v, files.n, sizeof(files.v[0]), by_name);
	char *text = xasprintf("compat layer = %d %s\n", NVSHIM_COMPAT_LAYER, dir ? dir : "(headers not found)");
	for (size_t i = 0; i < files.n; i++) {
		char *next = concat(text, "compat header = ", files.v[i], "\n", NULL);
		free(text);
		text = next;
	}
	/* The table decides what the layer restores. */
	char *table = NULL;
	if (cfg->api_file && *cfg->api_file)
		table = xstrdup(cfg->api_file);
	else if (exe_dir)
		table = concat(exe_dir, "/../etc/nvshim/api.ini", NULL);
	struct stat sb;
	char *line = table && !stat(table, &sb)
			     ? xasprintf("compat table = %s %lld %lld.%09ld\n", table, (long long)sb.st_size,
					 (long long)sb.st_mtim.tv_sec, (long)sb.st_mtim.tv_nsec)
			     : xstrdup("compat table = built in\n");
	char *next = concat(text, line, NULL);
	free(text);
	free(line);
	free(table);
	free(dir);
	free(inc);
	argv_release(&files);
	return next;
}

char *compat_explain(const struct config *cfg, const char *exe_dir)
{
	if (!cfg->compat || strcmp(cfg->compat, "auto"))
		return xstrdup("compat = off: a compile that fails on a removed CUDA API fails as nvcc's does");
	char *inc = compat_include_dir(exe_dir);
	char *s = xasprintf("compat = auto: if this compile fails on CUDA APIs that the API table "
			    "marks `compat` and on none it does not, it runs once more with %s%s force-included (removed struct "
			    "fields read through private copies of the source and of the project headers that "
			    "read them), and goes on if that "
			    "passes (rule compat.restored)",
			    inc ? inc : "(headers not found)", inc ? "/nvshim/compat/FILE.h" : "");
	free(inc);
	return s;
}
