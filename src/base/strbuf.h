/* strbuf: a growing string of bytes, always NUL-terminated.
 *
 *   struct strbuf b = STRBUF_INIT;
 *   strbuf_addstr(&b, "text");      b.s is "text", b.n is 4
 *   strbuf_add(&b, p, n);           n bytes more (any bytes; the NUL after them is kept)
 *   free(b.s);                      the caller owns b.s (NULL until something was added)
 *
 * Memory comes from libiberty's xrealloc, which ends the program when there is none. */
#ifndef NVSHIM_STRBUF_H
#define NVSHIM_STRBUF_H

#include <stddef.h>

struct strbuf {
	char *s;
	size_t n, cap;
};
#define STRBUF_INIT { NULL, 0, 0 }

void strbuf_add(struct strbuf *b, const char *s, size_t n);
void strbuf_addstr(struct strbuf *b, const char *s);

/* A compiler's stderr without its colours: s with every ANSI control sequence (ESC [ params
 * final byte: gcc's and clang's SGR colours, EL erase-line, under -fdiagnostics-color=always,
 * GCC_COLORS, a terminal) taken out, xmalloc'ed; NULL when s has none (or is NULL), so the
 * caller keeps s. What nvshim reads of a failure is read from this; what the user sees is s. */
char *strbuf_uncolor(const char *s);

#endif
