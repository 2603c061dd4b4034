#include "base/argv.h"

#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <libiberty.h>

#include "base/diag.h"

char *argv_empty[] = { NULL };

void argv_init(struct argv *a)
{
	a->v = argv_empty;
	a->n = 0;
	a->alloc = 0;
}

void argv_release(struct argv *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	if (a->v != argv_empty)
		free(a->v);
	argv_init(a);
}

static void grow(struct argv *a, size_t extra)
{
	if (a->n + extra + 1 <= a->alloc)
		return;
	size_t want = a->alloc ? a->alloc * 2 : 8;
	while (want < a->n + extra + 1)
		want *= 2;
	if (a->v == argv_empty)
		a->v = NULL;
	a->v = XRESIZEVEC(char *, a->v, want);
	a->alloc = want;
}

void argv_push_owned(struct argv *a, char *s)
{
	grow(a, 1);
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

void argv_push(struct argv *a, const char *s)
{
	argv_push_owned(a, xstrdup(s));
}

void argv_pushf(struct argv *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	argv_push_owned(a, xvasprintf(fmt, ap));
	va_end(ap);
}

void argv_pushv(struct argv *a, const char *const *v)
{
	for (; *v; v++)
		argv_push(a, *v);
}

void argv_pushn(struct argv *a, char *const *v, size_t n)
{
	grow(a, n);
	for (size_t i = 0; i < n; i++)
		argv_push(a, v[i]);
}

void argv_insert(struct argv *a, size_t at, const char *s)
{
	if (at > a->n)
		BUG("argv_insert at %zu past %zu", at, a->n);
	grow(a, 1);
	memmove(a->v + at + 1, a->v + at, (a->n - at + 1) * sizeof(char *));
	a->v[at] = xstrdup(s);
	a->n++;
}

void argv_remove(struct argv *a, size_t at)
{
	if (at >= a->n)
		BUG("argv_remove at %zu past %zu", at, a->n);
	free(a->v[at]);
	memmove(a->v + at, a->v + at + 1, (a->n - at) * sizeof(char *));
	a->n--;
}

void argv_replace(struct argv *a, size_t at, const char *s)
{
	if (at >= a->n)
		BUG("argv_replace at %zu past %zu", at, a->n);
	char *copy = xstrdup(s);
	free(a->v[at]);
	a->v[at] = copy;
}

void argv_copy(struct argv *dst, const struct argv *src)
{
	argv_release(dst);
	argv_pushn(dst, src->v, src->n);
}

int argv_equal(const struct argv *a, const struct argv *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]))
			return 0;
	return 1;
}

size_t argv_size(const struct argv *a)
{
	size_t total = 0;
	for (size_t i = 0; i < a->n; i++)
		total += strlen(a->v[i]) + 1;
	return total;
}

static void append(char **buf, size_t *len, const char *s, size_t n)
{
	*buf = XRESIZEVEC(char, *buf, *len + n + 1);
	memcpy(*buf + *len, s, n);
	*len += n;
	(*buf)[*len] = '\0';
}

void argv_shell_quote(char **buf, size_t *len, const char *s)
{
	static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				   "0123456789_-+=/.,:@%^";
	if (*s && strspn(s, safe) == strlen(s)) {
		append(buf, len, s, strlen(s));
		return;
	}
	append(buf, len, "'", 1);
	for (const char *p = s; *p; p++) {
		if (*p == '\'')
			append(buf, len, "'\\''", 4);
		else
			append(buf, len, p, 1);
	}
	append(buf, len, "'", 1);
}

char *argv_to_shell(const struct argv *a)
{
	char *buf = xstrdup("");
	size_t len = 0;
	for (size_t i = 0; i < a->n; i++) {
		if (i)
			append(&buf, &len, " ", 1);
		argv_shell_quote(&buf, &len, a->v[i]);
	}
	return buf;
}

char *argv_join(const struct argv *a, const char *sep)
{
	size_t len = 1, slen = strlen(sep);
	for (size_t i = 0; i < a->n; i++)
		len += strlen(a->v[i]) + (i ? slen : 0);
	char *s = xmalloc(len), *p = s;
	for (size_t i = 0; i < a->n; i++) {
		if (i) {
			memcpy(p, sep, slen);
			p += slen;
		}
		size_t n = strlen(a->v[i]);
		memcpy(p, a->v[i], n);
		p += n;
	}
	*p = '\0';
	return s;
}
