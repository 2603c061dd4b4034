/* `nvshim migrate`'s scanner and rewrite: the input is a source text (any bytes). A text with
 * nothing rewritten comes back byte for byte, the diff against the input is empty exactly when
 * the texts are equal, and the result is migrated once more (a scan of migrate's own output). */
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

#include "fuzz.h"
#include "base/argv.h"
#include "upgrade/migrate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "texture", "surface", "tex1Dfetch", "surf2Dwrite", "thrust::identity",
					     "cudaBindTexture", "cudaUnbindTexture", "cudaDeviceProp::maxTexture1DLinear",
					     "thrust/optional.h", "cub::Max" };
	struct argv known = ARGV_INIT;
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		argv_push(&known, names[k]);
	struct migrate_result r;
	migrate_text((const char *)data, size, &known, &r);
	if (!r.changes && (r.len != size || memcmp(r.text, data, size)))
		abort();
	char *d = migrate_diff("f.cu", (const char *)data, size, r.text, r.len);
	int same = r.len == size && !memcmp(r.text, data, size);
	if (same != !*d)
		abort();
	free(d);
	struct migrate_result again;
	migrate_text(r.text, r.len, &known, &again);
	migrate_result_release(&again);
	migrate_result_release(&r);
	argv_release(&known);
	return 0;
}
