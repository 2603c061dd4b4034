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

char *strbuf_uncolor(const char *s)
{
	const char *esc = s ? strchr(s, '\033') : NULL;
	if (!esc)
		return NULL;
	struct strbuf b = STRBUF_INIT;
	strbuf_add(&b, s, (size_t)(esc - s));
	for (const char *p = esc; *p;) {
		if (p[0] == '\033' && p[1] == '[') {
			/* CSI: parameter and intermediate bytes 0x20..0x3f, then a final 0x40..0x7e */
			const char *q = p + 2;
			while (*q >= 0x20 && *q <= 0x3f)
				q++;
			if (*q >= 0x40 && *q <= 0x7e) {
				p = q + 1;
				continue;
			}
		} else if (p[0] == '\033' && p[1] == ']') {
			/* OSC (gcc 10's URLs, -fdiagnostics-urls): up to BEL or ESC \ */
			const char *q = p + 2;
			while (*q && *q != '\a' && !(q[0] == '\033' && q[1] == '\\'))
				q++;
			if (*q) {
				p = q + (*q == '\a' ? 1 : 2);
				continue;
			}
		}
		const char *next = strchr(p + 1, '\033');
		size_t n = next ? (size_t)(next - p) : strlen(p);
		strbuf_add(&b, p, n);
		p += n;
	}
	if (!b.s)
		strbuf_add(&b, "", 0);
	return b.s;
}
