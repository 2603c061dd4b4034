/* A configuration file, the same file in a rules directory ([module] rules), and a setting's
 * value from the environment or an option. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <libiberty.h>

#include "fuzz.h"
#include "model/config.h"
#include "model/rules.h"
#include "base/diag.h"

static const char *no_env(const char *name)
{
	(void)name;
	return NULL;
}

static char *path, *dir;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *tmp = getenv("TMPDIR");
	dir = concat(tmp && *tmp ? tmp : "/tmp", "/nvshim-fuzz-XXXXXX", NULL);
	if (!mkdtemp(dir))
		abort();
	path = concat(dir, "/nvshim.ini", NULL);
	diag_set_stream(fopen("/dev/null", "w"));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		abort();
	fwrite(data, 1, size, f);
	fclose(f);

	struct config c;
	config_init(&c, no_env);
	config_load_file(&c, path, LAYER_PROJECT);
	config_load_file(&c, path, LAYER_USER);
	struct argv quads = ARGV_INIT, problems = ARGV_INIT;
	rules_load_dir(&quads, dir, &problems);
	if (quads.n % 4)
		abort();
	argv_release(&quads);
	argv_release(&problems);
	/* The same text as the value of every setting. */
	char *s = fuzz_string(data, size);
	for (size_t i = 0; i < config_nitems; i++) {
		char *why = NULL;
		config_set(&c, &config_items[i], s, LAYER_ENV, "fuzz", "/", &why);
		free(why);
		free(config_format(&c, &config_items[i]));
	}
	config_report(&c);
	free(s);
	config_release(&c);
	return 0;
}
