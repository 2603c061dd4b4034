#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include <lz4.h>
#include <zstd.h>

#include "objects/unpack.h"

/* Compressed images as nvcc's fatbins hold them, made here with the real libzstd and liblz4, and
 * recorded sizes that the data cannot hold: refused with a reason, never a buffer of the claim. */

static unsigned char *sample(size_t n)
{
	unsigned char *p = malloc(n);
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(i % 251 == 0 ? i * 7 : i / 64);
	return p;
}

static size_t zstd_of(const unsigned char *src, size_t n, unsigned char **out)
{
	size_t cap = ZSTD_compressBound(n);
	*out = malloc(cap);
	size_t got = ZSTD_compress(*out, cap, src, n, 3);
	cr_assert(!ZSTD_isError(got));
	return got;
}

Test(unpack, zstd_decodes_to_its_recorded_size)
{
	size_t n = 5u << 20; /* more than the first buffer: it grows */
	unsigned char *src = calloc(n, 1), *z, *out = NULL;
	for (size_t i = 0; i < n; i += 65536)
		src[i] = (unsigned char)(i >> 16);
	size_t zn = zstd_of(src, n, &z);
	cr_assert_lt(zn * 256, n, "compresses well enough to be streamed (%zu)", zn);
	char *why = NULL;
	struct unpacker u = { 0 };
	for (int round = 0; round < 2; round++) { /* a context kept from one image to the next */
		cr_assert_eq(unpack_image_with(&u, UNPACK_ZSTD, z, zn, n, 1ull << 30, &out, &why), 0, "%s", why);
		cr_assert_eq(memcmp(out, src, n), 0);
		free(out);
	}
	cr_assert_eq(unpack_image(UNPACK_ZSTD, z, zn, n, 1ull << 30, &out, &why), 0, "%s", why);
	free(out);
	/* The streamed path checks the recorded size as the one-call path does. */
	cr_assert_eq(unpack_image(UNPACK_ZSTD, z, zn, n - 1, 1ull << 30, &out, &why), -1);
	cr_assert(strstr(why, "(longer than recorded)"), "%s", why);
	free(why);
	cr_assert_eq(unpack_image(UNPACK_ZSTD, z, zn, n + 1, 1ull << 30, &out, &why), -1);
	cr_assert(strstr(why, "(wrong size)"), "%s", why);
	free(why);
	/* Two frames one after the other decode as one image. */
	unsigned char *two = malloc(2 * zn);
	memcpy(two, z, zn);
	memcpy(two + zn, z, zn);
	cr_assert_eq(unpack_image_with(&u, UNPACK_ZSTD, two, 2 * zn, 2 * n, 1ull << 30, &out, &why), 0, "%s", why);
	cr_assert_eq(memcmp(out + n, src, n), 0);
	free(out);
	free(two);
	unpacker_release(&u);
	free(src);
	free(z);
}

Test(unpack, zstd_with_a_wrong_recorded_size_fails)
{
	size_t n = 100000;
	unsigned char *src = sample(n), *z, *out = (unsigned char *)1;
	size_t zn = zstd_of(src, n, &z);
	char *why = NULL;
	cr_assert_eq(unpack_image(UNPACK_ZSTD, z, zn, n - 1, 1ull << 30, &out, &why), -1);
	cr_assert_null(out);
	cr_assert(strstr(why, "does not decompress to its 99999 bytes (longer than recorded)"), "%s", why);
	free(why);
	/* A claim of 2 GiB from a few kilobytes: within the limit, refused once the frames end. */
	cr_assert_eq(unpack_image(UNPACK_ZSTD, z, zn, 1ull << 31, 1ull << 31, &out, &why), -1);
	cr_assert(strstr(why, "does not decompress to its 2147483648 bytes"), "%s", why);
	free(why);
	cr_assert_eq(unpack_image(UNPACK_ZSTD, z, zn / 2, n, 1ull << 30, &out, &why), -1);
	cr_assert(strstr(why, "does not decompress"), "truncated: %s", why);
	free(why);
	cr_assert_eq(unpack_image(UNPACK_ZSTD, z, zn, n, n - 1, &out, &why), -1);
	cr_assert(strstr(why, "more than 99999"), "%s", why);
	free(why);
	free(src);
	free(z);
}

Test(unpack, lz4_decodes_and_refuses_what_it_cannot_hold)
{
	size_t n = 300000;
	unsigned char *src = sample(n), *out = NULL;
	int cap = LZ4_compressBound((int)n);
	char *l = malloc((size_t)cap), *why = NULL;
	int ln = LZ4_compress_default((const char *)src, l, (int)n, cap);
	cr_assert_gt(ln, 0);
	cr_assert_eq(unpack_image(UNPACK_LZ4, l, (size_t)ln, n, 1ull << 30, &out, &why), 0, "%s", why);
	cr_assert_eq(memcmp(out, src, n), 0);
	free(out);
	cr_assert_eq(unpack_image(UNPACK_LZ4, l, (size_t)ln, n + 1, 1ull << 30, &out, &why), -1);
	free(why);
	/* 255 to 1 is the most an LZ4 block expands: a larger claim is refused before decoding. */
	cr_assert_eq(unpack_image(UNPACK_LZ4, l, 100, 25501, 1ull << 31, &out, &why), -1);
	cr_assert(strstr(why, "claims 25501 bytes, more than 100 bytes can hold"), "%s", why);
	free(why);
	cr_assert_eq(unpack_image(UNPACK_NONE, l, 100, 100, 1ull << 31, &out, &why), -1);
	cr_assert_str_eq(why, "not compressed");
	free(why);
	free(l);
	free(src);
}

Test(unpack, a_deflated_member_claiming_more_than_deflate_makes_is_refused)
{
	unsigned char data[16] = { 0 };
	struct zip_member m = { .method = 8, .data = data, .size = 16, .full_size = 17 * 1032 + 64 };
	strcpy(m.name, "x/y.h");
	const unsigned char *out;
	void *owned;
	char *why = NULL;
	cr_assert_eq(unpack_zip_member(&m, 1ull << 31, &out, &owned, &why), -1);
	cr_assert(strstr(why, "zip member 'x/y.h' claims 17608 bytes, more than deflate makes of 16"), "%s", why);
	free(why);
	m.full_size = 17 * 1032 + 63; /* possible: tried, and these bytes are no deflate stream */
	cr_assert_eq(unpack_zip_member(&m, 1ull << 31, &out, &owned, &why), -1);
	cr_assert_null(strstr(why, "more than deflate makes"), "%s", why);
	free(why);
}
