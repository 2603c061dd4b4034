/* unpack: compressed bytes that nvshim reads from outside: the compressed images of a fatbin,
 * and the members of a zip archive (a Python wheel).
 *
 * Fatbin images. nvcc 13.0 compresses the images it puts into a fatbin (--compress-mode, see
 * docs/inspect.md): `default`, `balance` and `size` use Zstandard (the entry's flag 0x8000),
 * `speed` an LZ4 block (flag 0x2000), `none` nothing. A compressed entry records both sizes;
 * unpack_image() decompresses into an xmalloc'ed buffer of exactly the recorded size and fails
 * when the data do not decompress to that size. A recorded size is never trusted for memory:
 * one above what the method can make of the compressed bytes (LZ4 255 to 1, deflate 1032 to 1)
 * is refused before anything is allocated, and a Zstandard claim (whose frames can expand
 * further) above 256 times the compressed size is streamed into a buffer that grows only as
 * decoded bytes arrive.
 *
 * Zip archives. unpack_zip_members() walks the central directory (the end record found from the
 * end of the file, ZIP64 sizes and offsets understood) and hands out each member's name, its
 * local data and its method; unpack_zip_member() returns a member's bytes: the stored data
 * itself, or (deflate) an xmalloc'ed copy inflated with zlib, checked against the recorded size
 * and CRC-32. Every offset and size is checked against the data, so a damaged archive gives an
 * error with a reason, never a read outside it.
 *
 * All functions return 0, or -1 with *why (xmalloc'ed).
 */
#ifndef NVSHIM_UNPACK_H
#define NVSHIM_UNPACK_H

#include <stddef.h>
#include <stdint.h>

enum unpack_method { UNPACK_NONE, UNPACK_LZ4, UNPACK_ZSTD };

/* The name of a method ("zstd", "lz4", "none"). */
const char *unpack_method_name(enum unpack_method m);

/* Decompresses [data, data + size) into *out (xmalloc'ed, full_size bytes). Refuses a full_size
 * above `limit` bytes (a damaged header must not make nvshim allocate gigabytes). */
int unpack_image(enum unpack_method m, const void *data, size_t size, uint64_t full_size, uint64_t limit,
		 unsigned char **out, char **why);

/* A decompressor kept from one image to the next: Zstandard's context, made on first use, so
 * that each image does not make and free its own. One per thread (it is not shared); start it
 * zeroed ({ 0 }) and release it when done. */
struct unpacker {
	void *zstd;
};
void unpacker_release(struct unpacker *u);

/* unpack_image(), with u's context (u may be NULL: a context for this image alone). */
int unpack_image_with(struct unpacker *u, enum unpack_method m, const void *data, size_t size,
		      uint64_t full_size, uint64_t limit, unsigned char **out, char **why);

/* One member of a zip archive. */
struct zip_member {
	char name[1024];            /* NUL-terminated (truncated if longer) */
	unsigned method;            /* 0 stored, 8 deflate, other: not readable here */
	const unsigned char *data;  /* its compressed bytes, inside the archive */
	uint64_t size;              /* compressed size */
	uint64_t full_size;         /* uncompressed size */
	uint32_t crc;
};

/* 1 if the data start like a zip archive (a local header or an empty archive's end record). */
int unpack_is_zip(const void *data, size_t size);

/* Calls fn for every member of the central directory, in order; fn returns non-zero to stop. */
int unpack_zip_members(const void *data, size_t size, int (*fn)(const struct zip_member *m, void *arg),
		       void *arg, char **why);

/* A member's bytes: *out points into the archive (stored) or to an xmalloc'ed buffer, which is
 * then also in *owned (free() it; NULL for stored members). Refuses members larger than limit. */
int unpack_zip_member(const struct zip_member *m, uint64_t limit, const unsigned char **out, void **owned,
		      char **why);

/* Helpers of the readers of outside bytes (this module and objects/elf.c). */
/* Sets *why to the message (xmalloc'ed) and returns -1. */
int unpack_fail(char **why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 1 if [off, off + len) lies inside [0, size), without overflow. */
static inline int unpack_in_bounds(size_t size, uint64_t off, uint64_t len)
{
	return off <= size && len <= size - off;
}

#endif
