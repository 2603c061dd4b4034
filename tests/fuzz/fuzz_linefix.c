/* linefix (upgrade/linefix.h), its reader of outside bytes: the input is a compiler's stderr, a
 * NUL byte, and a command line (one word a line). What it finds is only what the text says (a
 * Thrust name it names, a vector type it names, an ISA it names), and the line it writes is the
 * given one with only the fixes of what it found. */
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

#include "fuzz.h"
#include "base/argv.h"
#include "upgrade/linefix.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size);
	size_t n = strlen(text);
	struct linefix_found f;
	linefix_found_init(&f);
	unsigned need = linefix_read(text, &f);
	if (need & ~(unsigned)(LINEFIX_DIALECT | LINEFIX_VECTOR | LINEFIX_HOSTCC | LINEFIX_PTXAS | LINEFIX_INCLUDE))
		abort();
	/* every name is in the text and its header among the headers; every header is a name's */
	for (size_t i = 0; i < f.names.n; i++) {
		const char *h = linefix_thrust_header(f.names.v[i]);
		int in = 0;
		for (size_t k = 0; h && k < f.headers.n; k++)
			in |= !strcmp(f.headers.v[k], h);
		if (!strstr(text, f.names.v[i]) || !in)
			abort();
	}
	for (size_t k = 0; k < f.headers.n; k++) {
		int of = 0;
		for (size_t i = 0; i < f.names.n; i++)
			of |= !strcmp(linefix_thrust_header(f.names.v[i]), f.headers.v[k]);
		if (!of)
			abort();
	}
	if (f.vector_type && !strstr(text, f.vector_type))
		abort();
	if ((need & LINEFIX_HOSTCC) && !f.host_max)
		abort();
	(void)linefix_isa_toolkit(f.ptx_isa);
	struct argv line = ARGV_INIT;
	argv_push(&line, "nvcc");
	if (n < size) {
		char *words = xstrndup((const char *)data + n + 1, size - n - 1);
		for (char *w = strtok(words, "\n"); w; w = strtok(NULL, "\n"))
			argv_push(&line, w);
		free(words);
	}
	f.need |= LINEFIX_DIALECT;
	for (int dialect = 0; dialect < 2; dialect++) {
		struct argv out = ARGV_INIT, added = ARGV_INIT;
		unsigned done = linefix_apply(&line, &f, dialect, &out, &added);
		if (done & ~f.need || ((done & LINEFIX_DIALECT) && !dialect))
			abort();
		size_t at;
		int split;
		/* after the dialect fix, no dialect older than C++17 is left */
		if ((done & LINEFIX_DIALECT) && linefix_old_dialect(&out, &at, &split))
			abort();
		if (!done && !argv_equal(&out, &line))
			abort();
		argv_release(&out);
		argv_release(&added);
	}
	argv_release(&line);
	linefix_found_release(&f);
	free(text);
	return 0;
}
