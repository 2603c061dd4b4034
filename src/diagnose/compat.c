#include "diagnose/compat.h"

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
#include "base/hash.h"
#include "base/fault.h"
#include "buildwide/build.h"
#include "buildwide/once.h"
#include "buildwide/stats.h"

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

/* Compares "12.0" with "13.0.88" by major and minor. */
static int version_newer(const char *entry, const char *toolkit)
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
		if (!e || (toolkit_version && version_newer(e->version, toolkit_version))) {
			d->others++;
			continue;
		}
		if (e->nocompat) {
			char *w = concat(e->name, ": ", e->nocompat, NULL);
			push_once(&d->why_not, w);
			free(w);
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
			d->sites[d->nsites++] = (struct compat_site){ xstrdup(er->file), er->line, xstrdup(field + 2) };
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

static char *rewrite_line(const char *l, const char *field, size_t *count)
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
		char *next = rewrite_line(*l, sites[s].field, &n);
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
	size_t nlen = strlen(name);
	int cplusplus = !(nlen >= 2 && !strcmp(name + nlen - 2, ".c"));
	for (size_t s = 0; s < nsites && ok && cplusplus; s++) {
		int seen = 0;
		for (size_t t = 0; t < s && !seen; t++)
			seen = !strcmp(sites[t].field, sites[s].field);
		for (size_t i = 0; i < lines.n && !seen; i++) {
			if (!strstr(lines.v[i], sites[s].field))
				continue;
			size_t n = 0;
			char *next = rewrite_line(lines.v[i], sites[s].field, &n);
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
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(out, f);
		fclose(f);
	}
	free(out);
	free(text);
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

/* Says the restored note: once per build (its rule is the key), every time outside one. */
static void say_restored(const struct compat_context *ctx, const char *note)
{
	const struct build *b = ctx->env ? build_current(ctx->env) : NULL;
	const struct config *cfg = ctx->api->cfg;
	if (b && !strcmp(cfg->repeat_notes, "once") && diag_verbosity() > VERBOSITY_QUIET) {
		int first = once_first(cfg->cache_dir, b->id, "[compat.restored]");
		if (first == 0) {
			stats_count_quieted();
			diag_note(VERBOSITY_VERBOSE, "%s", note);
			return;
		}
		if (first == 1) {
			diag_rewrite("%s (said once for this %s build: its other sources the layer restores "
				     "are noted at verbosity verbose; nvshim stats counts them)", note, b->tool);
			return;
		}
	}
	diag_rewrite("%s", note);
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

int compat_layer(const struct argv *argv, const struct compat_decision *d, const char *inc, const char *cache_dir,
		 int host, struct compat_layered *l)
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
	char *src = xstrdup(named ? named : "FILE");
	char *how = l->copy ? xasprintf("; %lu field read%s rewritten in a private copy of %s (the file "
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

int compat_after_failure(const struct compat_context *ctx, struct plan *plan, struct run_result *res,
			 char **held)
{
	const struct config *cfg = ctx->api->cfg;
	if (!cfg->compat || strcmp(cfg->compat, "auto") || !*held || res->signal || runner_signal())
		return 0;
	/* Cheap first: an error about something at all. */
	struct api_errors errs = { NULL, 0 };
	api_read_errors(*held, NULL, &errs);
	int any = 0;
	for (size_t i = 0; i < errs.n; i++)
		any |= errs.v[i].name || errs.v[i].by_call;
	api_errors_release(&errs);
	if (!any)
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
		int ok = !compat_layer(&plan->argv, &d, inc, NULL, ctx->host, &l);
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
				free(deps);
				free(*held);
				*held = held2;
				*res = again;
				restored = 1;
			} else {
				diag_note(VERBOSITY_VERBOSE, "the compile with the compatibility layer failed too "
					  "(status %d):\n%s", again.status, held2 ? held2 : "");
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
			    "fields read through a private copy of the source), and goes on if that "
			    "passes (rule compat.restored)",
			    inc ? inc : "(headers not found)", inc ? "/nvshim/compat/FILE.h" : "");
	free(inc);
	return s;
}
