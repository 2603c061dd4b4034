#include "preload/registry.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

struct record {
	struct record *prev, *next; /* creation order, oldest first */
	struct record *hnext;       /* chain of live handles in its bucket */
	const void *handle;         /* NULL once destroyed */
	unsigned id;
	void *owner;
	char *source, *name;
	struct argv headers, include_names, name_exprs, options;
	char *notes, *replacement;
	struct fingerprint out[REGISTRY_NOUTPUTS];
	unsigned char has_out[REGISTRY_NOUTPUTS];
	size_t bytes;
};

#define NBUCKETS 256

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct record *head, *tail;
static struct record *buckets[NBUCKETS];
static size_t count, total_bytes;
static size_t max_programs = 256, max_bytes = 32u << 20;
static unsigned next_id = 1;

static uint64_t mix(uint64_t h, uint64_t w)
{
	h ^= w;
	h *= 0xff51afd7ed558ccdULL;
	return h ^ (h >> 33);
}

static uint64_t word_at(const unsigned char *p)
{
	uint64_t w;
	memcpy(&w, p, sizeof(w));
	return w;
}

void registry_fingerprint(struct fingerprint *fp, const void *data, size_t size)
{
	const unsigned char *p = data;
	size_t len = size, stripped = 0;
	/* Trailing NULs do not count, up to a bound that keeps the cost fixed. */
	while (len && p[len - 1] == 0 && stripped < 4096) {
		len--;
		stripped++;
	}
	uint64_t h = mix(0x9e3779b97f4a7c15ULL, (uint64_t)len);
	if (len <= 512) {
		size_t i = 0;
		for (; i + 8 <= len; i += 8)
			h = mix(h, word_at(p + i));
		uint64_t last = 0;
		memcpy(&last, p + i, len - i);
		h = mix(h, last);
	} else {
		/* The first and last 64 bytes, and 48 words spread over the rest. */
		for (size_t i = 0; i < 64; i += 8) {
			h = mix(h, word_at(p + i));
			h = mix(h, word_at(p + len - 64 + i));
		}
		for (size_t k = 0; k < 48; k++)
			h = mix(h, word_at(p + k * (len - 8) / 47));
	}
	fp->len = len;
	fp->hash = h;
}

static uint64_t read_le(const unsigned char *p, int bytes)
{
	uint64_t v = 0;
	for (int i = bytes - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

size_t registry_image_size(const void *image)
{
	const unsigned char *p = image;
	if (!p)
		return 0;
	if (p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F' && p[4] == 2 && p[5] == 1) {
		/* A 64-bit little-endian ELF: the end of its furthest part. */
		uint64_t phoff = read_le(p + 0x20, 8), shoff = read_le(p + 0x28, 8);
		uint64_t phentsize = read_le(p + 0x36, 2), phnum = read_le(p + 0x38, 2);
		uint64_t shentsize = read_le(p + 0x3a, 2), shnum = read_le(p + 0x3c, 2);
		uint64_t end = 0x40;
		if (phoff + phnum * phentsize > end)
			end = phoff + phnum * phentsize;
		if (shoff + shnum * shentsize > end)
			end = shoff + shnum * shentsize;
		for (uint64_t i = 0; shentsize >= 0x40 && i < shnum; i++) {
			const unsigned char *sh = p + shoff + i * shentsize;
			uint64_t type = read_le(sh + 4, 4), off = read_le(sh + 0x18, 8), sz = read_le(sh + 0x20, 8);
			if (type != 8 /* SHT_NOBITS */ && off + sz > end)
				end = off + sz;
		}
		return (size_t)end;
	}
	if (read_le(p, 4) == 0xba55ed50u)
		return (size_t)(read_le(p + 6, 2) + read_le(p + 8, 8));
	return strlen((const char *)p) + 1;
}

void registry_program_release(struct registry_program *p)
{
	free(p->source);
	free(p->name);
	argv_release(&p->headers);
	argv_release(&p->include_names);
	argv_release(&p->name_exprs);
	argv_release(&p->options);
	memset(p, 0, sizeof(*p));
	argv_init(&p->headers);
	argv_init(&p->include_names);
	argv_init(&p->name_exprs);
	argv_init(&p->options);
}

static size_t bucket_of(const void *handle)
{
	uint64_t v = (uint64_t)(uintptr_t)handle * 0x9e3779b97f4a7c15ULL;
	return (size_t)(v >> 56) % NBUCKETS;
}

static struct record *find_live(const void *handle)
{
	if (!handle)
		return NULL;
	for (struct record *r = buckets[bucket_of(handle)]; r; r = r->hnext)
		if (r->handle == handle)
			return r;
	return NULL;
}

static void unhash(struct record *r)
{
	if (!r->handle)
		return;
	struct record **pp = &buckets[bucket_of(r->handle)];
	while (*pp && *pp != r)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = r->hnext;
	r->hnext = NULL;
	r->handle = NULL;
}

static size_t argv_bytes(const struct argv *a)
{
	return argv_size(a) + a->n * sizeof(char *);
}

static void account(struct record *r)
{
	total_bytes -= r->bytes;
	r->bytes = sizeof(*r) + (r->source ? strlen(r->source) + 1 : 0) + (r->name ? strlen(r->name) + 1 : 0) +
		   argv_bytes(&r->headers) + argv_bytes(&r->include_names) + argv_bytes(&r->name_exprs) +
		   argv_bytes(&r->options) + (r->notes ? strlen(r->notes) + 1 : 0) +
		   (r->replacement ? strlen(r->replacement) + 1 : 0);
	total_bytes += r->bytes;
}

static void drop(struct record *r)
{
	unhash(r);
	if (r->prev)
		r->prev->next = r->next;
	else
		head = r->next;
	if (r->next)
		r->next->prev = r->prev;
	else
		tail = r->prev;
	total_bytes -= r->bytes;
	count--;
	free(r->source);
	free(r->name);
	argv_release(&r->headers);
	argv_release(&r->include_names);
	argv_release(&r->name_exprs);
	argv_release(&r->options);
	free(r->notes);
	free(r->replacement);
	free(r);
}

/* Within the limits again: the oldest destroyed records first, then the oldest live ones;
 * `keep` stays whatever it costs. */
static void trim(const struct record *keep)
{
	for (int pass = 0; pass < 2; pass++) {
		struct record *r = head;
		while (r && (count > max_programs || total_bytes > max_bytes)) {
			struct record *next = r->next;
			if (r != keep && (pass == 1 || !r->handle))
				drop(r);
			r = next;
		}
	}
}

void registry_create(const void *handle, void *owner, const char *source, const char *name, int n,
		     const char *const *headers, const char *const *include_names)
{
	struct record *r = XCNEW(struct record);
	r->owner = owner;
	r->source = xstrdup(source ? source : "");
	r->name = name ? xstrdup(name) : NULL;
	argv_init(&r->headers);
	argv_init(&r->include_names);
	argv_init(&r->name_exprs);
	argv_init(&r->options);
	for (int i = 0; headers && include_names && i < n; i++) {
		argv_push(&r->headers, headers[i] ? headers[i] : "");
		argv_push(&r->include_names, include_names[i] ? include_names[i] : "");
	}
	pthread_mutex_lock(&lock);
	/* A handle NVRTC hands out again belongs to the new program. */
	struct record *old = find_live(handle);
	if (old)
		unhash(old);
	r->id = next_id++;
	r->handle = handle;
	size_t b = bucket_of(handle);
	r->hnext = buckets[b];
	buckets[b] = r;
	r->prev = tail;
	if (tail)
		tail->next = r;
	else
		head = r;
	tail = r;
	count++;
	account(r);
	trim(r);
	pthread_mutex_unlock(&lock);
}

void registry_destroy(const void *handle)
{
	pthread_mutex_lock(&lock);
	struct record *r = find_live(handle);
	if (r) {
		unhash(r);
		/* What the log said is of no use once the program is gone. */
		free(r->notes);
		free(r->replacement);
		r->notes = r->replacement = NULL;
		account(r);
		trim(NULL);
	}
	pthread_mutex_unlock(&lock);
}

void registry_name_expr(const void *handle, const char *expr)
{
	pthread_mutex_lock(&lock);
	struct record *r = find_live(handle);
	if (r && expr) {
		argv_push(&r->name_exprs, expr);
		account(r);
	}
	pthread_mutex_unlock(&lock);
}

void registry_compiled(const void *handle, int n, const char *const *options)
{
	pthread_mutex_lock(&lock);
	struct record *r = find_live(handle);
	if (r) {
		argv_release(&r->options);
		for (int i = 0; options && i < n; i++)
			argv_push(&r->options, options[i] ? options[i] : "");
		free(r->notes);
		free(r->replacement);
		r->notes = r->replacement = NULL;
		memset(r->has_out, 0, sizeof(r->has_out));
		account(r);
		trim(r);
	}
	pthread_mutex_unlock(&lock);
}

void registry_set_log(const void *handle, const char *notes, const char *replacement)
{
	pthread_mutex_lock(&lock);
	struct record *r = find_live(handle);
	if (r) {
		free(r->notes);
		free(r->replacement);
		r->notes = notes && *notes ? xstrdup(notes) : NULL;
		r->replacement = replacement ? xstrdup(replacement) : NULL;
		account(r);
	}
	pthread_mutex_unlock(&lock);
}

int registry_log(const void *handle, char **notes, char **replacement)
{
	*notes = *replacement = NULL;
	pthread_mutex_lock(&lock);
	struct record *r = find_live(handle);
	if (r) {
		*notes = r->notes ? xstrdup(r->notes) : NULL;
		*replacement = r->replacement ? xstrdup(r->replacement) : NULL;
	}
	pthread_mutex_unlock(&lock);
	return r != NULL;
}

char *registry_name(const void *handle)
{
	pthread_mutex_lock(&lock);
	struct record *r = find_live(handle);
	char *name = r && r->name ? xstrdup(r->name) : NULL;
	pthread_mutex_unlock(&lock);
	return name;
}

void registry_output(const void *handle, enum registry_output kind, const void *data, size_t size)
{
	if (!data || (unsigned)kind >= REGISTRY_NOUTPUTS)
		return;
	struct fingerprint fp;
	registry_fingerprint(&fp, data, size);
	pthread_mutex_lock(&lock);
	struct record *r = find_live(handle);
	if (r) {
		r->out[kind] = fp;
		r->has_out[kind] = 1;
	}
	pthread_mutex_unlock(&lock);
}

size_t registry_match(const struct fingerprint *fp, unsigned *ids, size_t max)
{
	size_t n = 0;
	pthread_mutex_lock(&lock);
	for (struct record *r = tail; r && n < max; r = r->prev)
		for (int k = 0; k < REGISTRY_NOUTPUTS; k++)
			if (r->has_out[k] && r->out[k].len == fp->len && r->out[k].hash == fp->hash) {
				ids[n++] = r->id;
				break;
			}
	pthread_mutex_unlock(&lock);
	return n;
}

int registry_get(unsigned id, struct registry_program *out)
{
	memset(out, 0, sizeof(*out));
	argv_init(&out->headers);
	argv_init(&out->include_names);
	argv_init(&out->name_exprs);
	argv_init(&out->options);
	pthread_mutex_lock(&lock);
	struct record *r = tail;
	while (r && r->id != id)
		r = r->prev;
	if (r) {
		out->id = r->id;
		out->owner = r->owner;
		out->source = xstrdup(r->source);
		out->name = r->name ? xstrdup(r->name) : NULL;
		argv_copy(&out->headers, &r->headers);
		argv_copy(&out->include_names, &r->include_names);
		argv_copy(&out->name_exprs, &r->name_exprs);
		argv_copy(&out->options, &r->options);
	}
	pthread_mutex_unlock(&lock);
	return r ? 0 : -1;
}

void registry_limits(size_t programs, size_t bytes)
{
	pthread_mutex_lock(&lock);
	max_programs = programs;
	max_bytes = bytes;
	trim(NULL);
	pthread_mutex_unlock(&lock);
}

void registry_stats(size_t *programs, size_t *bytes)
{
	pthread_mutex_lock(&lock);
	*programs = count;
	*bytes = total_bytes;
	pthread_mutex_unlock(&lock);
}

void registry_clear(void)
{
	pthread_mutex_lock(&lock);
	while (head)
		drop(head);
	pthread_mutex_unlock(&lock);
}
