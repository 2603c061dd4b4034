#include <criterion/criterion.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "preload/registry.h"

static void fresh(void)
{
	registry_clear();
	registry_limits(256, 32u << 20);
}

TestSuite(registry, .init = fresh);

Test(registry, fingerprint_ignores_trailing_nuls)
{
	const char ptx[] = "//\n.version 9.0\n.target sm_90\n.address_size 64\n";
	struct fingerprint a, b, c;
	registry_fingerprint(&a, ptx, strlen(ptx));
	registry_fingerprint(&b, ptx, sizeof(ptx));      /* with its NUL */
	cr_assert_eq(a.len, b.len);
	cr_assert_eq(a.hash, b.hash);
	registry_fingerprint(&c, ptx, strlen(ptx) - 1);
	cr_assert_neq(a.hash, c.hash);
}

Test(registry, fingerprint_of_large_data)
{
	size_t n = 1 << 20;
	unsigned char *a = malloc(n + 1), *b = malloc(n + 1);
	for (size_t i = 0; i < n; i++)
		a[i] = b[i] = (unsigned char)(i * 7 + 1);
	a[n] = b[n] = 0;
	struct fingerprint fa, fb;
	registry_fingerprint(&fa, a, n);
	registry_fingerprint(&fb, b, n + 1); /* CuPy passes len(data) + 1 */
	cr_assert_eq(fa.hash, fb.hash);
	b[n - 3] ^= 1; /* in the last 64 bytes */
	registry_fingerprint(&fb, b, n);
	cr_assert_neq(fa.hash, fb.hash);
	free(a);
	free(b);
}

Test(registry, image_size)
{
	/* A minimal 64-bit ELF: header, then one section header at 0x100 pointing at data that
	 * ends at 0x300. */
	unsigned char elf[0x400] = { 0x7f, 'E', 'L', 'F', 2, 1 };
	uint64_t shoff = 0x100;
	memcpy(elf + 0x28, &shoff, 8);
	uint16_t shentsize = 0x40, shnum = 1;
	memcpy(elf + 0x3a, &shentsize, 2);
	memcpy(elf + 0x3c, &shnum, 2);
	uint32_t type = 1;
	uint64_t off = 0x200, size = 0x100;
	memcpy(elf + 0x100 + 4, &type, 4);
	memcpy(elf + 0x100 + 0x18, &off, 8);
	memcpy(elf + 0x100 + 0x20, &size, 8);
	cr_assert_eq(registry_image_size(elf), 0x300);

	unsigned char fatbin[32] = { 0x50, 0xed, 0x55, 0xba, 1, 0, 16, 0 };
	uint64_t body = 1000;
	memcpy(fatbin + 8, &body, 8);
	cr_assert_eq(registry_image_size(fatbin), 1016);

	cr_assert_eq(registry_image_size(".version 9.0\n"), 14, "PTX: its text and NUL");
	cr_assert_eq(registry_image_size(NULL), 0);
}

Test(registry, lifecycle)
{
	int h1 = 1, h2 = 2;
	const char *headers[] = { "#define X 1\n" }, *names[] = { "x.h" };
	registry_create(&h1, (void *)0x1, "src one", "one.cu", 1, headers, names);
	registry_create(&h2, (void *)0x2, "src two", NULL, 0, NULL, NULL);
	registry_name_expr(&h1, "k<int>");
	const char *opts[] = { "-arch=compute_90", "-rdc=true" };
	registry_compiled(&h1, 2, opts);
	const char ptx1[] = "ptx of one", ptx2[] = "ptx of two";
	registry_output(&h1, REGISTRY_PTX, ptx1, sizeof(ptx1));
	registry_output(&h2, REGISTRY_CUBIN, ptx2, sizeof(ptx2));

	char *name = registry_name(&h1);
	cr_assert_str_eq(name, "one.cu");
	free(name);
	cr_assert_null(registry_name(&h2));

	struct fingerprint fp;
	unsigned ids[4];
	registry_fingerprint(&fp, ptx1, strlen(ptx1));
	cr_assert_eq(registry_match(&fp, ids, 4), 1);
	struct registry_program p;
	cr_assert_eq(registry_get(ids[0], &p), 0);
	cr_assert_eq(p.owner, (void *)0x1);
	cr_assert_str_eq(p.source, "src one");
	cr_assert_str_eq(p.name, "one.cu");
	cr_assert_eq(p.headers.n, 1);
	cr_assert_str_eq(p.include_names.v[0], "x.h");
	cr_assert_eq(p.name_exprs.n, 1);
	cr_assert_eq(p.options.n, 2);
	cr_assert_str_eq(p.options.v[1], "-rdc=true");
	unsigned id1 = p.id;
	registry_program_release(&p);

	/* Destroyed programs stay, for links that come after. */
	registry_destroy(&h1);
	cr_assert_eq(registry_match(&fp, ids, 4), 1);
	cr_assert_eq(ids[0], id1);
	cr_assert_null(registry_name(&h1), "the handle is gone");

	/* A handle NVRTC hands out again is a new program. */
	registry_create(&h1, (void *)0x3, "src three", "three.cu", 0, NULL, NULL);
	name = registry_name(&h1);
	cr_assert_str_eq(name, "three.cu");
	free(name);
	cr_assert_eq(registry_get(id1, &p), 0, "the old record is still there");
	cr_assert_str_eq(p.source, "src one");
	registry_program_release(&p);
}

Test(registry, log_notes)
{
	int h = 0;
	char *notes, *repl;
	registry_create(&h, NULL, "s", "n", 0, NULL, NULL);
	cr_assert(registry_log(&h, &notes, &repl));
	cr_assert_null(notes);
	registry_set_log(&h, "nvshim warning : x\n", "first log");
	cr_assert(registry_log(&h, &notes, &repl));
	cr_assert_str_eq(notes, "nvshim warning : x\n");
	cr_assert_str_eq(repl, "first log");
	free(notes);
	free(repl);
	registry_compiled(&h, 0, NULL);
	registry_log(&h, &notes, &repl);
	cr_assert_null(notes, "a new compile starts without notes");
	cr_assert_null(repl);
	int other = 0;
	cr_assert_not(registry_log(&other, &notes, &repl));
}

Test(registry, limits_evict_destroyed_first)
{
	int h[10] = { 0 };
	registry_limits(4, 1 << 20);
	for (int i = 0; i < 3; i++)
		registry_create(&h[i], NULL, "s", "live", 0, NULL, NULL);
	for (int i = 3; i < 10; i++) {
		registry_create(&h[i], NULL, "s", "gone", 0, NULL, NULL);
		registry_destroy(&h[i]);
	}
	size_t n, bytes;
	registry_stats(&n, &bytes);
	cr_assert_eq(n, 4);
	for (int i = 0; i < 3; i++) {
		char *name = registry_name(&h[i]);
		cr_assert_str_eq(name, "live", "live programs stay while destroyed ones can go");
		free(name);
	}
	registry_limits(2, 1 << 20);
	registry_stats(&n, &bytes);
	cr_assert_eq(n, 2);
	cr_assert_null(registry_name(&h[0]), "then the oldest live one");

	/* Bytes: one big source pushes the others out but stays itself. */
	registry_limits(100, 4096);
	char *big = malloc(10000);
	memset(big, 'x', 9999);
	big[9999] = 0;
	int hb = 0;
	registry_create(&hb, NULL, big, "big", 0, NULL, NULL);
	registry_stats(&n, &bytes);
	cr_assert_eq(n, 1);
	cr_assert_geq(bytes, 10000);
	free(big);
	registry_clear();
	registry_stats(&n, &bytes);
	cr_assert_eq(n, 0);
	cr_assert_eq(bytes, 0);
}

static void *hammer(void *arg)
{
	char *handles = arg;
	for (int i = 0; i < 2000; i++) {
		void *h = handles + (i % 64);
		registry_create(h, NULL, "source", "t.cu", 0, NULL, NULL);
		registry_output(h, REGISTRY_PTX, "ptx", 4);
		char *n, *r;
		registry_log(h, &n, &r);
		free(n);
		free(r);
		struct fingerprint fp;
		unsigned ids[16];
		registry_fingerprint(&fp, "ptx", 4);
		registry_match(&fp, ids, 16);
		registry_destroy(h);
	}
	return NULL;
}

Test(registry, threads)
{
	static char handles[8][64];
	pthread_t t[8];
	for (int i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, hammer, handles[i]);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	size_t n, bytes;
	registry_stats(&n, &bytes);
	cr_assert_leq(n, 256);
}
