#include "fuzz.h"

#include <string.h>

#include <libiberty.h>

char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s = XNEWVEC(char, size + 1);
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}
