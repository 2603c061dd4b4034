/* The API table (config/api.ini's format) and the compiler output it is matched against: the
 * input is a table, a NUL byte, then what a compiler printed. The same table is also read as
 * toolkit gates (config/gates.ini's format): both go through base/inifile. The output is also
 * written as a source file, which CC mode's include search (api_host_wanted, the file quoting
 * itself) and the read-back of a call over several lines (an error at its last line) read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libiberty.h>

#include "fuzz.h"
#include "base/argv.h"
#include "diagnose/api.h"
#include "model/hostcc.h"
#include "passes/gates.h"

static char dir[64];

static void remove_dir(void) { rmdir(dir); }

static void as_source(const struct api_table *t, const char *text)
{
	if (!*dir) {
		if (mkdtemp(strcpy(dir, "/tmp/nvshim-fuzz-api-XXXXXX")) == NULL) {
			*dir = '\0';
			return;
		}
		atexit(remove_dir);
	}
	char *path = concat(dir, "/x.h", NULL);
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
		char *args[] = { "-c", path, "-I", dir, "-iquote", dir };
		struct hostcc hc;
		hostcc_parse(&hc, args, 6);
		(void)api_host_wanted(&hc);
		hostcc_release(&hc);
		unsigned long lines = 1;
		for (const char *p = text; *p; p++)
			lines += *p == '\n';
		char *err = xasprintf("%s(%lu): error: too few arguments in function call\n  x);\n  ^\n"
				      "%s:%lu:3: error: incompatible type for argument 4 of 'f'\n",
				      path, lines, path, lines);
		struct argv notes = ARGV_INIT;
		api_notes(t, err, NULL, &notes);
		argv_release(&notes);
		free(err);
		unlink(path);
	}
	free(path);
}

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
	as_source(&t, out);
	argv_release(&notes);
	argv_release(&problems);
	api_table_release(&t);
	free(table);
	free(out);
	return 0;
}
