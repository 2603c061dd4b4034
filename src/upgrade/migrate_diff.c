/* migrate_diff: migrate_diff() (upgrade/migrate.h), the change of one file as a unified diff. */
#include "upgrade/migrate.h"
#include "base/strbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

struct lines {
	const char **p;
	size_t *n; /* each line's length, its '\n' included */
	size_t count;
};

static void split_lines(struct lines *l, const char *s, size_t len)
{
	size_t alloc = 64;
	l->p = XNEWVEC(const char *, alloc);
	l->n = XNEWVEC(size_t, alloc);
	l->count = 0;
	for (size_t i = 0; i < len;) {
		const char *e = memchr(s + i, '\n', len - i);
		size_t n = e ? (size_t)(e - (s + i)) + 1 : len - i;
		if (l->count == alloc) {
			alloc *= 2;
			l->p = XRESIZEVEC(const char *, l->p, alloc);
			l->n = XRESIZEVEC(size_t, l->n, alloc);
		}
		l->p[l->count] = s + i;
		l->n[l->count++] = n;
		i += n;
	}
}

static int line_eq(const struct lines *a, size_t i, const struct lines *b, size_t j)
{
	return a->n[i] == b->n[j] && !memcmp(a->p[i], b->p[j], a->n[i]);
}

static void put_line(struct strbuf *o, char mark, const struct lines *l, size_t i)
{
	strbuf_add(o, &mark, 1);
	strbuf_add(o, l->p[i], l->n[i]);
	if (l->p[i][l->n[i] - 1] != '\n')
		strbuf_addstr(o, "\n\\ No newline at end of file\n");
}

/* Changed blocks, found by walking both texts and, where they differ, looking for the nearest
 * point (within a window) where three lines (or the end) match again. Any such pairing gives a
 * correct diff; the edits migrate makes are local, so it is also a short one. */
char *migrate_diff(const char *path, const char *old, size_t old_len, const char *new, size_t new_len)
{
	struct lines a, b;
	split_lines(&a, old, old_len);
	split_lines(&b, new, new_len);
	/* blocks: old [ab, ae), new [bb, be) */
	struct block {
		size_t a0, a1, b0, b1;
	} *blk = NULL;
	size_t nblk = 0, ablk = 0;
	size_t i = 0, j = 0;
	const size_t window = 400;
	while (i < a.count || j < b.count) {
		if (i < a.count && j < b.count && line_eq(&a, i, &b, j)) {
			i++;
			j++;
			continue;
		}
		size_t bi = a.count, bj = b.count, best = (size_t)-1;
		for (size_t d = 1; d <= 2 * window && best == (size_t)-1; d++)
			for (size_t di = 0; di <= d; di++) {
				size_t x = i + di, y = j + (d - di);
				if (x > a.count || y > b.count)
					continue;
				int ok = 1;
				for (size_t q = 0; q < 3 && ok; q++) {
					if (x + q >= a.count && y + q >= b.count)
						break;
					ok = x + q < a.count && y + q < b.count && line_eq(&a, x + q, &b, y + q);
				}
				if (ok) {
					bi = x;
					bj = y;
					best = d;
					break;
				}
			}
		/* Within a small block, the longest common subsequence of its lines splits it into the
		 * lines that really changed. */
		size_t na = bi - i, nb = bj - j;
		if (na && nb && na * nb <= 250000) {
			unsigned *L = XCNEWVEC(unsigned, (na + 1) * (nb + 1));
			for (size_t x = na; x-- > 0;)
				for (size_t y = nb; y-- > 0;)
					L[x * (nb + 1) + y] = line_eq(&a, i + x, &b, j + y)
								      ? L[(x + 1) * (nb + 1) + y + 1] + 1
								      : L[(x + 1) * (nb + 1) + y] > L[x * (nb + 1) + y + 1]
									? L[(x + 1) * (nb + 1) + y]
									: L[x * (nb + 1) + y + 1];
			size_t x = 0, y = 0, sx = 0, sy = 0;
			while (x < na || y < nb) {
				if (x < na && y < nb && line_eq(&a, i + x, &b, j + y) &&
				    L[x * (nb + 1) + y] == L[(x + 1) * (nb + 1) + y + 1] + 1) {
					if (sx < x || sy < y) {
						if (nblk == ablk) {
							ablk = ablk ? ablk * 2 : 16;
							blk = XRESIZEVEC(struct block, blk, ablk);
						}
						blk[nblk++] = (struct block){ i + sx, i + x, j + sy, j + y };
					}
					x++;
					y++;
					sx = x;
					sy = y;
				} else if (y < nb && (x == na || L[x * (nb + 1) + y + 1] >= L[(x + 1) * (nb + 1) + y])) {
					y++;
				} else {
					x++;
				}
			}
			if (sx < na || sy < nb) {
				if (nblk == ablk) {
					ablk = ablk ? ablk * 2 : 16;
					blk = XRESIZEVEC(struct block, blk, ablk);
				}
				blk[nblk++] = (struct block){ i + sx, bi, j + sy, bj };
			}
			free(L);
		} else {
			if (nblk == ablk) {
				ablk = ablk ? ablk * 2 : 16;
				blk = XRESIZEVEC(struct block, blk, ablk);
			}
			blk[nblk++] = (struct block){ i, bi, j, bj };
		}
		i = bi;
		j = bj;
	}
	struct strbuf o = STRBUF_INIT;
	strbuf_addstr(&o, "");
	if (nblk) {
		char *h = xasprintf("--- %s\n+++ %s\n", path, path);
		strbuf_addstr(&o, h);
		free(h);
	}
	const size_t ctx = 3;
	for (size_t k = 0; k < nblk;) {
		/* Blocks whose context touches join one hunk. */
		size_t k1 = k + 1;
		while (k1 < nblk && blk[k1].a0 - blk[k1 - 1].a1 <= 2 * ctx)
			k1++;
		size_t as = blk[k].a0 > ctx ? blk[k].a0 - ctx : 0;
		size_t bs = blk[k].b0 - (blk[k].a0 - as);
		size_t ae = blk[k1 - 1].a1 + ctx < a.count ? blk[k1 - 1].a1 + ctx : a.count;
		size_t be = blk[k1 - 1].b1 + (ae - blk[k1 - 1].a1);
		char *h = xasprintf("@@ -%lu,%lu +%lu,%lu @@\n", (unsigned long)(ae - as ? as + 1 : as),
				  (unsigned long)(ae - as), (unsigned long)(be - bs ? bs + 1 : bs), (unsigned long)(be - bs));
		strbuf_addstr(&o, h);
		free(h);
		size_t x = as;
		for (size_t q = k; q < k1; q++) {
			for (; x < blk[q].a0; x++)
				put_line(&o, ' ', &a, x);
			for (size_t y = blk[q].a0; y < blk[q].a1; y++)
				put_line(&o, '-', &a, y);
			for (size_t y = blk[q].b0; y < blk[q].b1; y++)
				put_line(&o, '+', &b, y);
			x = blk[q].a1;
		}
		for (; x < ae; x++)
			put_line(&o, ' ', &a, x);
		k = k1;
	}
	free(blk);
	free(a.p);
	free(a.n);
	free(b.p);
	free(b.n);
	return o.s;
}
