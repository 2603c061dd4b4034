/* The compatibility layer's readers (upgrade/compat.h): the input is an API table, a NUL byte,
 * what a compiler printed, a NUL byte, then a source's text. The decision is taken from the
 * table and the output, and the source is rewritten at the sites it names (every site is taken
 * to be in that source). */
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

#include "fuzz.h"
#include "diagnose/api.h"
#include "upgrade/compat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t tsize = nul ? (size_t)(nul - data) : size;
	const uint8_t *rest = nul ? nul + 1 : data + size;
	size_t rsize = (size_t)(data + size - rest);
	const uint8_t *nul2 = memchr(rest, 0, rsize);
	size_t osize = nul2 ? (size_t)(nul2 - rest) : rsize;
	char *table = fuzz_string(data, tsize);
	char *out = fuzz_string(rest, osize);
	char *src = nul2 ? fuzz_string(nul2 + 1, rsize - osize - 1) : xstrdup(out);
	struct api_table t;
	struct argv problems = ARGV_INIT;
	api_table_init(&t);
	api_parse(&t, table, "fuzz.ini", &problems);
	for (size_t i = 0; i < t.n; i++)
		if (t.v[i].compat && !api_compat_header_ok(t.v[i].compat))
			abort();
	struct compat_decision d;
	compat_decision_init(&d);
	compat_decide(&t, out, "13.0.88", &d);
	/* a retry needs an entry it restores and none it cannot; errors that name nothing in the
	 * table do not block it */
	if (d.retry && (d.blocked || !d.headers.n))
		abort();
	if (d.blocked > d.others || d.why_not.n > d.blocked)
		abort();
	size_t n = 0;
	char *copy = compat_rewrite(src, "fuzz \"name\".cu", d.sites, d.nsites, &n);
	if (copy && strncmp(copy, "#line 1 \"fuzz \\\"name\\\".cu\"\n", 27))
		abort();
	free(copy);
	compat_decision_release(&d);
	argv_release(&problems);
	api_table_release(&t);
	free(table);
	free(out);
	free(src);
	return 0;
}
