/* An nvcc command line: arguments separated by NUL bytes. The input is also written to a file
 * that the command line may name as a response file (@F) or options file (-optf F), which may
 * name itself; then the targets pass runs over it with the machine's nvcc's facts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libiberty.h>

#include "fuzz.h"
#include "model/config.h"
#include "machine/devices.h"
#include "base/diag.h"
#include "model/invocation.h"
#include "model/plan.h"
#include "passes/targets.h"
#include "machine/toolkit.h"

static char *file;
static struct toolkit tk;
static struct devices devs;
static struct config cfg;

static const char *env(const char *name)
{
	if (!strcmp(name, "NVCC_APPEND_FLAGS"))
		return "-arch=sm_80";
	return NULL;
}

static const struct devices *get_devices(void *arg)
{
	(void)arg;
	return &devs;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *tmp = getenv("TMPDIR");
	char *dir = concat(tmp && *tmp ? tmp : "/tmp", "/nvshim-fuzz-XXXXXX", NULL);
	if (!mkdtemp(dir))
		abort();
	file = concat(dir, "/args", NULL);
	free(dir);
	diag_set_stream(fopen("/dev/null", "w"));
	toolkit_init(&tk);
	if (toolkit_load(&tk, NVSHIM_TEST_NVCC, NULL))
		abort();
	const char *why;
	devices_init(&devs);
	devices_parse(&devs, "90,80", &why);
	config_init(&cfg, env);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fopen(file, "wb");
	if (!f)
		abort();
	fwrite(data, 1, size, f);
	fclose(f);

	struct argv args = ARGV_INIT;
	for (size_t at = 0; at < size;) {
		const uint8_t *nul = memchr(data + at, 0, size - at);
		size_t len = nul ? (size_t)(nul - data) - at : size - at;
		char *a = xstrndup((const char *)data + at, len);
		/* "@@" and "-optf @@" stand for the file. */
		if (!strcmp(a, "@@"))
			argv_push_owned(&args, concat("@", file, NULL));
		else if (!strcmp(a, "=@@"))
			argv_push(&args, file);
		else
			argv_push(&args, a);
		free(a);
		at += len + 1;
	}
	struct invocation inv;
	invocation_parse(&inv, args.v, args.n, env);
	struct plan plan;
	plan_init(&plan, NVSHIM_TEST_NVCC, args.v, args.n);
	struct targets_context ctx = { &cfg, &tk, get_devices, NULL };
	struct argv before = ARGV_INIT, after = ARGV_INIT;
	if (targets_wanted(&inv, &cfg))
		targets_pass(&inv, &ctx, &plan, &before, &after);
	plan_rewritten(&plan, args.v, args.n);
	argv_release(&before);
	argv_release(&after);
	plan_release(&plan);
	invocation_release(&inv);
	argv_release(&args);
	return 0;
}
