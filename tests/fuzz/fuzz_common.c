#include "fuzz.h"

#include <string.h>

#include <libiberty.h>

#include "base/argv.h"

char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s = XNEWVEC(char, size + 1);
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

void fuzz_args(const uint8_t *data, size_t size, struct argv *out)
{
	for (size_t at = 0; at < size;) {
		const uint8_t *nul = memchr(data + at, 0, size - at);
		size_t len = nul ? (size_t)(nul - data) - at : size - at;
		argv_push_owned(out, xstrndup((const char *)data + at, len));
		at += len + 1;
	}
}
