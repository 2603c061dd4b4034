/* `nvshim migrate` on build files (upgrade/migrate_build.h): the input is a CMakeLists.txt, a
 * Makefile or a setup.py (any bytes), read as each. A text with nothing rewritten comes back byte
 * for byte, and every change is counted. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "upgrade/migrate_build.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum migrate_build_kind kinds[] = { MIGRATE_CMAKE, MIGRATE_MAKE, MIGRATE_SETUP, MIGRATE_SOURCE };
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct migrate_result r;
		migrate_build_text((const char *)data, size, kinds[k], &r);
		int same = r.len == size && !memcmp(r.text, data, size);
		if (!r.changes && !same)
			abort();
		if (r.changes != r.fixed.n)
			abort();
		migrate_result_release(&r);
	}
	return 0;
}
