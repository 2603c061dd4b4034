/* What a compiler printed on stderr. */
#include <stdlib.h>

#include "fuzz.h"
#include "diagnose/diagnose.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size);
	struct diagnosis d;
	diagnose_init(&d);
	diagnose_stderr(&d, s);
	for (size_t i = 0; i < d.n; i++)
		free(diagnose_reason(&d.v[i]));
	diagnose_release(&d);
	free(s);
	return 0;
}
