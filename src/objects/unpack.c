#include "objects/unpack.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>
#include <lz4.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

int unpack_fail(char **why, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	*why = xvasprintf(fmt, ap);
	va_end(ap);
	return -1;
}


const char *unpack_method_name(enum unpack_method m)
{
	return m == UNPACK_ZSTD ? "zstd" : m == UNPACK_LZ4 ? "lz4" : "none";
}

void unpacker_release(struct unpacker *u)
{
	ZSTD_freeDCtx(u->zstd);
	u->zstd = NULL;
}

int unpack_image(enum unpack_method m, const void *data, size_t size, uint64_t full_size, uint64_t limit,
		 unsigned char **out, char **why)
{
	return unpack_image_with(NULL, m, data, size, full_size, limit, out, why);
}

/* The most an LZ4 block can expand: a match's length grows by 255 for each byte that spells it. */
#define LZ4_MOST_RATIO 255
/* A zstd buffer's first size: the compressed size times this, at least UNZSTD_FIRST_MIN. Real
 * images stay well below it (the most among libcublasLt's 6,120 images: 134 to 1), so they are
 * decoded in one call; only a larger claim is streamed. */
#define UNZSTD_FIRST_RATIO 256
#define UNZSTD_FIRST_MIN (1u << 20)

/* Zstandard. A claim within the first buffer's size (256 times the compressed bytes, at least
 * 1 MiB) is decoded in one call; a larger one is streamed into a buffer that grows with what the
 * data really produce, so a header that claims gigabytes makes nvshim allocate only what the
 * frames decode to. */
static int unzstd(struct unpacker *u, const void *data, size_t size, uint64_t full_size, unsigned char **out,
		  char **why)
{
	ZSTD_DCtx *own = NULL, *d = u ? u->zstd : NULL;
	if (u && !d)
		d = u->zstd = ZSTD_createDCtx();
	if (!d)
		d = own = ZSTD_createDCtx();
	if (!d)
		return unpack_fail(why, "no memory for a zstd context");
	ZSTD_DCtx_reset(d, ZSTD_reset_session_only);
	uint64_t first = (uint64_t)size * UNZSTD_FIRST_RATIO;
	if (first < UNZSTD_FIRST_MIN)
		first = UNZSTD_FIRST_MIN;
	size_t cap = (size_t)(full_size < first ? full_size : first);
	unsigned char *buf = XNEWVEC(unsigned char, cap ? cap : 1);
	ZSTD_inBuffer in = { data, size, 0 };
	ZSTD_outBuffer o = { buf, cap, 0 };
	const char *bad = NULL;
	if (cap == full_size) {
		/* The claim fits the first buffer: one call, straight into it (as fast as before). */
		size_t got = ZSTD_decompressDCtx(d, buf, cap, data, size);
		if (ZSTD_isError(got))
			bad = ZSTD_getErrorCode(got) == ZSTD_error_dstSize_tooSmall ? "longer than recorded"
										 : ZSTD_getErrorName(got);
		o.pos = ZSTD_isError(got) ? 0 : got;
	} else {
		for (;;) {
			if (o.pos == o.size && o.size < full_size) {
				uint64_t more = (uint64_t)o.size * 2;
				o.size = (size_t)(more < full_size ? more : full_size);
				o.dst = buf = XRESIZEVEC(unsigned char, buf, o.size);
			}
			size_t in_was = in.pos, out_was = o.pos;
			size_t r = ZSTD_decompressStream(d, &o, &in);
			if (ZSTD_isError(r)) {
				bad = ZSTD_getErrorName(r);
				break;
			}
			if (r == 0 && in.pos == in.size)
				break; /* every frame decoded and flushed */
			if (in.pos == in_was && o.pos == out_was) {
				bad = o.pos == full_size ? "longer than recorded" : "truncated";
				break;
			}
		}
	}
	if (own)
		ZSTD_freeDCtx(own);
	if (bad || o.pos != full_size) {
		free(buf);
		return unpack_fail(why, "a zstd-compressed image does not decompress to its %llu bytes (%s)",
			    (unsigned long long)full_size, bad ? bad : "wrong size");
	}
	*out = buf;
	return 0;
}

static int unlz4(const void *data, size_t size, uint64_t full_size, unsigned char **out, char **why)
{
	if (size > (size_t)LZ4_MAX_INPUT_SIZE || full_size > 0x7fffffff)
		return unpack_fail(why, "an lz4-compressed image is too large");
	if (full_size > (uint64_t)size * LZ4_MOST_RATIO)
		return unpack_fail(why, "an lz4-compressed image claims %llu bytes, more than %zu bytes can hold",
			    (unsigned long long)full_size, size);
	unsigned char *buf = XNEWVEC(unsigned char, full_size ? (size_t)full_size : 1);
	int got = LZ4_decompress_safe(data, (char *)buf, (int)size, (int)full_size);
	if (got < 0 || (uint64_t)got != full_size) {
		free(buf);
		return unpack_fail(why, "an lz4-compressed image does not decompress to its %llu bytes",
			    (unsigned long long)full_size);
	}
	*out = buf;
	return 0;
}

int unpack_image_with(struct unpacker *u, enum unpack_method m, const void *data, size_t size,
		      uint64_t full_size, uint64_t limit, unsigned char **out, char **why)
{
	*out = NULL;
	*why = NULL;
	if (full_size > limit)
		return unpack_fail(why, "a compressed image claims %llu bytes, more than %llu",
			    (unsigned long long)full_size, (unsigned long long)limit);
	if (m == UNPACK_NONE)
		return unpack_fail(why, "not compressed");
	return m == UNPACK_ZSTD ? unzstd(u, data, size, full_size, out, why) : unlz4(data, size, full_size, out, why);
}

/* ---- zip ---- */

static uint16_t le16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t le64(const unsigned char *p) { return le32(p) | (uint64_t)le32(p + 4) << 32; }

/* The most deflate can expand: 258 bytes from one length code of at least two bits, so 1032 to 1. */
#define DEFLATE_MOST_RATIO 1032

#define ZIP_LOCAL 0x04034b50u
#define ZIP_CENTRAL 0x02014b50u
#define ZIP_END 0x06054b50u
#define ZIP64_LOCATOR 0x07064b50u
#define ZIP64_END 0x06064b50u

int unpack_is_zip(const void *data, size_t size)
{
	const unsigned char *p = data;
	return size >= 22 && (le32(p) == ZIP_LOCAL || le32(p) == ZIP_END);
}

/* The central directory: where it starts and how many entries it has. */
static int zip_directory(const unsigned char *p, size_t size, uint64_t *start, uint64_t *count, char **why)
{
	if (size < 22)
		return unpack_fail(why, "too short for a zip archive");
	/* The end record: 22 bytes and a comment of up to 65535. */
	size_t lowest = size > 22 + 65535 ? size - 22 - 65535 : 0;
	size_t at = size - 22;
	for (;;) {
		if (le32(p + at) == ZIP_END && at + 22 + le16(p + at + 20) == size)
			break;
		if (at == lowest)
			return unpack_fail(why, "no zip end record");
		at--;
	}
	uint64_t n = le16(p + at + 10), dir = le32(p + at + 16), dirsize = le32(p + at + 12);
	if ((n == 0xffff || dir == 0xffffffffu || dirsize == 0xffffffffu) && at >= 20 &&
	    le32(p + at - 20) == ZIP64_LOCATOR) {
		uint64_t rec = le64(p + at - 20 + 8);
		if (!unpack_in_bounds(size, rec, 56) || le32(p + rec) != ZIP64_END)
			return unpack_fail(why, "damaged zip64 end record");
		n = le64(p + rec + 32);
		dirsize = le64(p + rec + 40);
		dir = le64(p + rec + 48);
	}
	if (!unpack_in_bounds(size, dir, dirsize))
		return unpack_fail(why, "the zip central directory runs past the end");
	*start = dir;
	*count = n;
	return 0;
}

int unpack_zip_members(const void *data, size_t size, int (*fn)(const struct zip_member *m, void *arg),
		       void *arg, char **why)
{
	const unsigned char *p = data;
	uint64_t at = 0, n = 0;
	*why = NULL;
	if (zip_directory(p, size, &at, &n, why))
		return -1;
	struct zip_member *m = XNEW(struct zip_member);
	int rc = 0;
	for (uint64_t i = 0; i < n; i++) {
		if (!unpack_in_bounds(size, at, 46) || le32(p + at) != ZIP_CENTRAL) {
			rc = unpack_fail(why, "zip central directory entry %llu is damaged", (unsigned long long)i);
			break;
		}
		const unsigned char *e = p + at;
		unsigned flags = le16(e + 8), namelen = le16(e + 28), extralen = le16(e + 30), commentlen = le16(e + 32);
		uint64_t csize = le32(e + 20), usize = le32(e + 24), local = le32(e + 42);
		if (!unpack_in_bounds(size, at + 46, (uint64_t)namelen + extralen + commentlen)) {
			rc = unpack_fail(why, "zip central directory entry %llu runs past the end", (unsigned long long)i);
			break;
		}
		/* ZIP64: the sizes and offset that do not fit are in extra field 1, in this order. */
		const unsigned char *x = e + 46 + namelen, *xend = x + extralen;
		while (x + 4 <= xend) {
			unsigned id = le16(x), len = le16(x + 2);
			if (x + 4 + len > xend)
				break;
			if (id == 1) {
				const unsigned char *v = x + 4, *vend = v + len;
				if (usize == 0xffffffffu && v + 8 <= vend)
					usize = le64(v), v += 8;
				if (csize == 0xffffffffu && v + 8 <= vend)
					csize = le64(v), v += 8;
				if (local == 0xffffffffu && v + 8 <= vend)
					local = le64(v);
			}
			x += 4 + len;
		}
		size_t copy = namelen < sizeof(m->name) ? namelen : sizeof(m->name) - 1;
		memcpy(m->name, e + 46, copy);
		m->name[copy] = '\0';
		m->method = le16(e + 10);
		if (flags & 1)
			m->method = 0xffff; /* encrypted: not readable */
		m->crc = le32(e + 16);
		m->size = csize;
		m->full_size = usize;
		if (!unpack_in_bounds(size, local, 30) || le32(p + local) != ZIP_LOCAL) {
			rc = unpack_fail(why, "zip member '%s' has a damaged local header", m->name);
			break;
		}
		uint64_t off = local + 30 + (uint64_t)le16(p + local + 26) + le16(p + local + 28);
		if (!unpack_in_bounds(size, off, csize)) {
			rc = unpack_fail(why, "zip member '%s' runs past the end", m->name);
			break;
		}
		m->data = p + off;
		if (fn(m, arg))
			break;
		at += 46 + (uint64_t)namelen + extralen + commentlen;
	}
	free(m);
	return rc;
}

int unpack_zip_member(const struct zip_member *m, uint64_t limit, const unsigned char **out, void **owned,
		      char **why)
{
	*out = NULL;
	*owned = NULL;
	*why = NULL;
	if (m->full_size > limit)
		return unpack_fail(why, "zip member '%s' claims %llu bytes, more than %llu", m->name,
			    (unsigned long long)m->full_size, (unsigned long long)limit);
	if (m->method == 0) {
		if (m->size != m->full_size)
			return unpack_fail(why, "stored zip member '%s' has two sizes", m->name);
		*out = m->data;
		return 0;
	}
	if (m->method != 8)
		return unpack_fail(why, "zip member '%s' uses method %u, which nvshim does not read", m->name, m->method);
	if (m->full_size > 64 && (m->full_size - 64) / DEFLATE_MOST_RATIO > m->size)
		return unpack_fail(why, "zip member '%s' claims %llu bytes, more than deflate makes of %llu", m->name,
			    (unsigned long long)m->full_size, (unsigned long long)m->size);
	unsigned char *buf = XNEWVEC(unsigned char, m->full_size ? (size_t)m->full_size : 1);
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, -MAX_WBITS) != Z_OK) {
		free(buf);
		return unpack_fail(why, "zlib cannot start");
	}
	uint64_t in_left = m->size, out_left = m->full_size;
	const unsigned char *in = m->data;
	unsigned char *dst = buf;
	int zr = Z_OK;
	while (zr == Z_OK) {
		uInt cin = in_left > 0x40000000u ? 0x40000000u : (uInt)in_left;
		uInt cout = out_left > 0x40000000u ? 0x40000000u : (uInt)out_left;
		z.next_in = (Bytef *)in;
		z.avail_in = cin;
		z.next_out = dst;
		z.avail_out = cout;
		zr = inflate(&z, Z_NO_FLUSH);
		in += cin - z.avail_in;
		in_left -= cin - z.avail_in;
		dst += cout - z.avail_out;
		out_left -= cout - z.avail_out;
		if (zr == Z_OK && cin == z.avail_in && cout == z.avail_out)
			zr = Z_BUF_ERROR; /* no progress: truncated or longer than recorded */
	}
	inflateEnd(&z);
	if (zr != Z_STREAM_END || out_left ||
	    (uint32_t)crc32_z(0L, buf, (z_size_t)m->full_size) != m->crc) {
		free(buf);
		return unpack_fail(why, "zip member '%s' does not inflate to its recorded size and CRC", m->name);
	}
	*out = buf;
	*owned = buf;
	return 0;
}
