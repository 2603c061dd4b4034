/* verdict: what the probe learnt about a source, cached under <cache_dir>/modules/.
 *
 * A verdict says, for each probe unit ("compute_90:sm_90": a front-end arch and the code it was
 * assembled for), whether the source builds, and if not why (a short reason and the first error
 * line). Units, not target lists, so a verdict serves any list that shares them (a PyTorch-style
 * and a CMake-style list of the same archs).
 *
 * The key is a hash of what decides the outcome: the nvcc binary (path, size, mtime), the working
 * directory, the arguments that reach the device compiler (everything but targets, outputs,
 * modes and inputs), the source's path and bytes and the bytes of every project header the scan
 * read. Headers outside the project (the toolkit's, a library's) are checked the way ccache's
 * direct mode does: the verdict lists every file the preprocessed source came from (read off
 * `nvcc -E`'s line markers when the probe ran) with its size and mtime, and a file that changed
 * makes the verdict stale. A warm lookup therefore runs no process at all.
 *
 * Files are written whole under a temporary name and renamed (cache.h); a file that does not
 * parse, or whose key line differs, is ignored. verdict_lock() serialises the probes of one key
 * across concurrent builds (flock), so a second build waits and then reuses the first one's
 * verdict instead of probing again, and a read-merge-write never loses a unit.
 */
#ifndef NVSHIM_VERDICT_H
#define NVSHIM_VERDICT_H

#include <stddef.h>
#include <stdint.h>

#include "base/argv.h"

struct hash128 {
	uint64_t h1, h2;
	unsigned char buf[16];
	size_t nbuf;
	uint64_t len;
};

void hash_init(struct hash128 *h);
void hash_update(struct hash128 *h, const void *data, size_t n);
/* The string and its terminating NUL, so that ("ab", "c") and ("a", "bc") differ. */
void hash_string(struct hash128 *h, const char *s);
/* 32 hex digits and a NUL. */
void hash_hex(const struct hash128 *h, char out[33]);

struct verdict_unit {
	char *name;   /* "compute_90:sm_90" */
	int pass;
	char *reason; /* why it failed: "wgmma.fence is not supported on plain sm_90 ..." */
	char *first;  /* the first error line nvcc printed for it */
};

struct verdict {
	struct verdict_unit *v;
	size_t n, alloc;
	struct argv deps; /* "SIZE MTIME_NS PATH" */
};

void verdict_init(struct verdict *v);
void verdict_release(struct verdict *v);
const struct verdict_unit *verdict_find(const struct verdict *v, const char *unit);
/* Adds or replaces a unit. */
void verdict_set(struct verdict *v, const char *unit, int pass, const char *reason, const char *first);

/* The dependency line of a file, or NULL if it cannot be read. */
char *verdict_dep(const char *path);

/* Loads a verdict. Returns 0, or -1 when there is none, it is damaged or stale. */
int verdict_load(struct verdict *v, const char *cache_dir, const char *key);
/* Stores it atomically. Returns 0 or -1 (errno set). */
int verdict_store(const struct verdict *v, const char *cache_dir, const char *key);
/* Takes the key's lock (blocking); returns a descriptor for verdict_unlock(), or -1. */
int verdict_lock(const char *cache_dir, const char *key);
void verdict_unlock(int fd);

#endif
