/* hash: 64-bit FNV-1a (see hash.h). */
#include "base/hash.h"

uint64_t hash_bytes(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * HASH_PRIME;
	return h;
}

uint64_t hash_str(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * HASH_PRIME;
	return h;
}
