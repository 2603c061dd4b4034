/* Two preprocessed texts (split at the first 0x1e byte, else in the middle) as the modules pass
 * compares a source's f and a forms: the strings of the trapping code only the first has
 * (stubs_own_literals(), Myers' difference of their lines); a text against itself has none. */
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

#include "fuzz.h"
#include "base/argv.h"
#include "passes/stubs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_string(data, size);
	size_t n = strlen(text);
	char *cut = strchr(text, 0x1e);
	size_t at = cut ? (size_t)(cut - text) : n / 2;
	char *mine = xstrndup(text, at), *other = xstrdup(text + (at < n ? at + (cut != NULL) : n));
	struct argv lits = ARGV_INIT;
	if (!stubs_own_literals(mine, other, &lits))
		for (size_t k = 0; k < lits.n; k++)
			if (strlen(lits.v[k]) < 12)
				abort();
	argv_release(&lits);
	if (stubs_own_literals(mine, mine, &lits) || lits.n)
		abort();
	argv_release(&lits);
	free(mine);
	free(other);
	free(text);
	return 0;
}
