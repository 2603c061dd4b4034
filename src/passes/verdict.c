#include "passes/verdict.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libiberty.h>

#include "base/cache.h"

/* MurmurHash3 x64 128 (public domain, Austin Appleby), in streaming form. A cache key, not a
 * defence against anyone: fast and well mixed is what it needs. */
static const uint64_t C1 = 0x87c37b91114253d5ULL, C2 = 0x4cf5ad432745937fULL;

static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static uint64_t fmix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

static uint64_t load64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static void block(struct hash128 *h, const unsigned char *p)
{
	uint64_t k1 = load64(p), k2 = load64(p + 8);
	k1 *= C1;
	k1 = rotl(k1, 31);
	k1 *= C2;
	h->h1 ^= k1;
	h->h1 = rotl(h->h1, 27);
	h->h1 += h->h2;
	h->h1 = h->h1 * 5 + 0x52dce729;
	k2 *= C2;
	k2 = rotl(k2, 33);
	k2 *= C1;
	h->h2 ^= k2;
	h->h2 = rotl(h->h2, 31);
	h->h2 += h->h1;
	h->h2 = h->h2 * 5 + 0x38495ab5;
}

void hash_init(struct hash128 *h) { memset(h, 0, sizeof(*h)); h->h1 = h->h2 = 0x6e7673686d; }

void hash_update(struct hash128 *h, const void *data, size_t n)
{
	const unsigned char *p = data;
	h->len += n;
	if (h->nbuf) {
		size_t take = 16 - h->nbuf < n ? 16 - h->nbuf : n;
		memcpy(h->buf + h->nbuf, p, take);
		h->nbuf += take;
		p += take;
		n -= take;
		if (h->nbuf < 16)
			return;
		block(h, h->buf);
		h->nbuf = 0;
	}
	for (; n >= 16; p += 16, n -= 16)
		block(h, p);
	memcpy(h->buf, p, n);
	h->nbuf = n;
}

void hash_string(struct hash128 *h, const char *s) { hash_update(h, s, strlen(s) + 1); }

void hash_hex(const struct hash128 *in, char out[33])
{
	struct hash128 h = *in;
	uint64_t k1 = 0, k2 = 0;
	const unsigned char *t = h.buf;
	for (size_t i = h.nbuf; i-- > 8;)
		k2 = (k2 << 8) | t[i];
	for (size_t i = h.nbuf < 8 ? h.nbuf : 8; i-- > 0;)
		k1 = (k1 << 8) | t[i];
	if (h.nbuf > 8) {
		k2 *= C2;
		k2 = rotl(k2, 33);
		k2 *= C1;
		h.h2 ^= k2;
	}
	if (h.nbuf) {
		k1 *= C1;
		k1 = rotl(k1, 31);
		k1 *= C2;
		h.h1 ^= k1;
	}
	h.h1 ^= h.len;
	h.h2 ^= h.len;
	h.h1 += h.h2;
	h.h2 += h.h1;
	h.h1 = fmix(h.h1);
	h.h2 = fmix(h.h2);
	h.h1 += h.h2;
	h.h2 += h.h1;
	snprintf(out, 33, "%016llx%016llx", (unsigned long long)h.h1, (unsigned long long)h.h2);
}

void verdict_init(struct verdict *v)
{
	memset(v, 0, sizeof(*v));
	argv_init(&v->deps);
}

void verdict_release(struct verdict *v)
{
	for (size_t i = 0; i < v->n; i++) {
		free(v->v[i].name);
		free(v->v[i].reason);
		free(v->v[i].first);
	}
	free(v->v);
	argv_release(&v->deps);
	verdict_init(v);
}

const struct verdict_unit *verdict_find(const struct verdict *v, const char *unit)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->v[i].name, unit))
			return &v->v[i];
	return NULL;
}

/* One line of text: tabs and newlines become spaces. */
static char *one_line(const char *s)
{
	char *r = xstrdup(s ? s : "");
	for (char *p = r; *p; p++)
		if (*p == '\t' || *p == '\n' || *p == '\r')
			*p = ' ';
	return r;
}

void verdict_set(struct verdict *v, const char *unit, int pass, const char *reason, const char *first)
{
	struct verdict_unit *u = (struct verdict_unit *)verdict_find(v, unit);
	if (!u) {
		if (v->n == v->alloc) {
			v->alloc = v->alloc ? v->alloc * 2 : 8;
			v->v = XRESIZEVEC(struct verdict_unit, v->v, v->alloc);
		}
		u = &v->v[v->n++];
		u->name = xstrdup(unit);
	} else {
		free(u->reason);
		free(u->first);
	}
	u->pass = pass ? 1 : 0;
	u->reason = one_line(reason);
	u->first = one_line(first);
}

char *verdict_dep(const char *path)
{
	struct stat sb;
	if (stat(path, &sb))
		return NULL;
	return xasprintf("%lld %lld.%09ld %s", (long long)sb.st_size, (long long)sb.st_mtim.tv_sec,
			 (long)sb.st_mtim.tv_nsec, path);
}

static char *dir_of(const char *cache_dir, const char *key)
{
	return xasprintf("%s/modules/%.2s", cache_dir, key);
}

static char *path_of(const char *cache_dir, const char *key, const char *ext)
{
	return xasprintf("%s/modules/%.2s/%s%s", cache_dir, key, key, ext);
}

int verdict_load(struct verdict *v, const char *cache_dir, const char *key)
{
	char *path = path_of(cache_dir, key, ".verdict");
	char *text = cache_read(path);
	free(path);
	verdict_release(v);
	if (!text)
		return -1;
	char *head = xasprintf("nvshim-verdict 1 %s\n", key);
	int ok = !strncmp(text, head, strlen(head)), ended = 0;
	char *save = NULL;
	for (char *line = ok ? strtok_r(text + strlen(head), "\n", &save) : NULL; line && ok && !ended;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strcmp(line, "end")) {
			ended = 1;
		} else if (!strncmp(line, "unit ", 5)) {
			/* unit NAME pass|fail\tREASON\tFIRST */
			char *name = line + 5, *sp = strchr(name, ' ');
			if (!sp)
				break;
			*sp = '\0';
			char *rest = sp + 1, *t1 = strchr(rest, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
			if (!t2)
				break;
			*t1 = *t2 = '\0';
			if (strcmp(rest, "pass") && strcmp(rest, "fail"))
				break;
			verdict_set(v, name, !strcmp(rest, "pass"), t1 + 1, t2 + 1);
		} else if (!strncmp(line, "dep ", 4)) {
			/* stale when the file changed */
			char *p = strchr(strchr(line + 4, ' ') ? strchr(line + 4, ' ') + 1 : line + 4, ' ');
			char *now = p ? verdict_dep(p + 1) : NULL;
			ok = now && !strcmp(now, line + 4);
			free(now);
			if (ok)
				argv_push(&v->deps, line + 4);
		} else {
			ok = 0;
		}
	}
	free(head);
	free(text);
	if (!ok || !ended) {
		verdict_release(v);
		return -1;
	}
	return 0;
}

int verdict_store(const struct verdict *v, const char *cache_dir, const char *key)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	fprintf(m, "nvshim-verdict 1 %s\n", key);
	for (size_t i = 0; i < v->n; i++)
		fprintf(m, "unit %s %s\t%s\t%s\n", v->v[i].name, v->v[i].pass ? "pass" : "fail", v->v[i].reason,
			v->v[i].first);
	for (size_t i = 0; i < v->deps.n; i++)
		fprintf(m, "dep %s\n", v->deps.v[i]);
	fprintf(m, "end\n");
	fclose(m);
	char *dir = dir_of(cache_dir, key), *path = path_of(cache_dir, key, ".verdict");
	int rc = cache_write(dir, path, buf);
	free(dir);
	free(path);
	free(buf);
	return rc;
}

int verdict_lock(const char *cache_dir, const char *key)
{
	char *dir = dir_of(cache_dir, key), *path = path_of(cache_dir, key, ".lock");
	int fd = cache_mkdirs(dir) ? -1 : open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	free(dir);
	free(path);
	if (fd >= 0) {
		while (flock(fd, LOCK_EX) && errno == EINTR)
			;
	}
	return fd;
}

void verdict_unlock(int fd)
{
	if (fd >= 0) {
		flock(fd, LOCK_UN);
		close(fd);
	}
}
