/* strbuf: strbuf.h */
#include "base/strbuf.h"

#include <stdint.h>
#include <string.h>

#include <libiberty.h>

void strbuf_add(struct strbuf *b, const char *s, size_t n)
{
	/* No text is that long; said so, gcc's -O3 (-Wstringop-overflow) accepts the copy. */
	if (n > (size_t)PTRDIFF_MAX / 2)
		return;
	if (b->n + n + 1 > b->cap) {
		b->cap = (b->n + n + 1) * 2;
		b->s = XRESIZEVEC(char, b->s, b->cap);
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = '\0';
}

void strbuf_addstr(struct strbuf *b, const char *s) { strbuf_add(b, s, strlen(s)); }
