/* An allocator interposer of the kind jemalloc, tcmalloc and sanitizers are: preloaded after
 * libnvshim-preload.so, it finds the real malloc, calloc, realloc and free with
 * dlsym(RTLD_NEXT) on first use, so its dlsym calls reach nvshim's dlsym hook from inside a
 * malloc. An allocation made while it resolves comes back into it; it serves that from a static
 * arena, as such allocators do, and counts it. At exit it writes the count to stderr:
 * "malloc_probe: N allocations while resolving". nvshim's hook must add none. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static __thread int resolving;
static unsigned reentered;
static _Alignas(16) unsigned char arena[1 << 16];
static size_t used;

static void *from_arena(size_t n)
{
	reentered++;
	n = (n + 15) & ~(size_t)15;
	if (n > sizeof(arena) - used)
		return NULL;
	void *p = arena + used;
	used += n;
	return p;
}

static int in_arena(const void *p)
{
	return (const unsigned char *)p >= arena && (const unsigned char *)p < arena + sizeof(arena);
}

static int resolve(void)
{
	if (real_malloc && real_calloc && real_realloc && real_free)
		return 0;
	if (resolving)
		return -1;
	resolving = 1;
	void *m = dlsym(RTLD_NEXT, "malloc"), *c = dlsym(RTLD_NEXT, "calloc");
	void *r = dlsym(RTLD_NEXT, "realloc"), *f = dlsym(RTLD_NEXT, "free");
	memcpy(&real_malloc, &m, sizeof(m));
	memcpy(&real_calloc, &c, sizeof(c));
	memcpy(&real_realloc, &r, sizeof(r));
	memcpy(&real_free, &f, sizeof(f));
	resolving = 0;
	return real_malloc && real_calloc && real_realloc && real_free ? 0 : -1;
}

EXPORT void *malloc(size_t n) { return resolve() ? from_arena(n) : real_malloc(n); }

EXPORT void *calloc(size_t k, size_t n)
{
	if (!resolve())
		return real_calloc(k, n);
	return n && k > sizeof(arena) / n ? NULL : from_arena(k * n); /* the arena is zeroed */
}

EXPORT void *realloc(void *p, size_t n)
{
	if (resolve() || in_arena(p)) {
		void *q = resolve() ? from_arena(n) : real_malloc(n);
		if (q && p)
			memcpy(q, p, n); /* an arena block is at most what is left of the arena */
		return q;
	}
	return real_realloc(p, n);
}

EXPORT void free(void *p)
{
	if (p && !in_arena(p) && !resolve())
		real_free(p);
}

__attribute__((destructor)) static void report(void)
{
	fprintf(stderr, "malloc_probe: %u allocations while resolving\n", reentered);
}
