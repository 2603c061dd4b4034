/* Zip archives (Python wheels) as `nvshim inspect` reads them: the central directory, ZIP64
 * records, each member's local header, and each stored or deflated member's bytes, checked
 * against its size and CRC. */
#include <stdlib.h>

#include "fuzz.h"
#include "objects/unpack.h"

static int member(const struct zip_member *m, void *arg)
{
	const unsigned char *data;
	void *owned;
	char *why = NULL;
	size_t *n = arg;
	if (!unpack_zip_member(m, 1 << 24, &data, &owned, &why))
		*n += data != NULL;
	free(owned);
	free(why);
	return *n > 256;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *why = NULL;
	size_t n = 0;
	unpack_is_zip(data, size);
	unpack_zip_members(data, size, member, &n, &why);
	free(why);
	return 0;
}
