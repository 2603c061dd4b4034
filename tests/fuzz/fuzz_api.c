/* The API table (config/api.ini's format) and the compiler output it is matched against: the
 * input is a table, a NUL byte, then what a compiler printed. The same table is also read as
 * toolkit gates (config/gates.ini's format): both go through base/inifile. */
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

#include "fuzz.h"
#include "base/argv.h"
#include "diagnose/api.h"
#include "passes/gates.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t tsize = nul ? (size_t)(nul - data) : size;
	char *table = fuzz_string(data, tsize);
	char *out = nul ? fuzz_string(nul + 1, size - tsize - 1) : xstrdup(table);
	struct api_table t;
	struct argv problems = ARGV_INIT, notes = ARGV_INIT;
	api_table_init(&t);
	api_parse(&t, table, "fuzz.ini", &problems);
	for (size_t i = 0; i < t.n; i++) {
		free(api_describe(&t.v[i]));
		if (api_find(&t, t.v[i].name) == NULL)
			abort();
	}
	struct gates g;
	gates_init(&g);
	gates_parse(&g, table, "fuzz.ini", &problems);
	for (size_t i = 0; i < g.n; i++)
		if (!g.v[i].name)
			abort();
	gates_release(&g);
	api_notes(&t, out, NULL, &notes);
	api_notes(&t, out, "13.0.88", &notes);
	size_t len = strlen(out);
	free(api_callee_at(out, len / 2));
	argv_release(&notes);
	argv_release(&problems);
	api_table_release(&t);
	free(table);
	free(out);
	return 0;
}
