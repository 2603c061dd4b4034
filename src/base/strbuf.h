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

#endif
