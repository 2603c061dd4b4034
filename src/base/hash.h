#ifndef NVSHIM_HASH_H
#define NVSHIM_HASH_H
/* hash: the one non-cryptographic hash of nvshim, 64-bit FNV-1a.
 *
 * Used where a value only needs different inputs to give different values: file names of
 * cache entries, cache keys, open-addressing sets, "said once" records. Never for security.
 * A hash is built up from HASH_INIT with any number of hash_bytes()/hash_str() calls, so
 * several strings can go into one value:
 *
 *	uint64_t h = hash_str(HASH_INIT, call);
 *	h = hash_str(h, path);
 */
#include <stddef.h>
#include <stdint.h>

/* The FNV-1a offset basis: the value of an empty input. */
#define HASH_INIT 14695981039346656037ULL
/* The FNV prime, for a caller that mixes in words rather than bytes (a file hashed fast). */
#define HASH_PRIME 1099511628211ULL

/* h with the n bytes at data added. */
uint64_t hash_bytes(uint64_t h, const void *data, size_t n);
/* h with the bytes of the string s (without its NUL) added; a NULL s adds nothing. */
uint64_t hash_str(uint64_t h, const char *s);

#endif
