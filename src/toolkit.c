#include "nvshim/toolkit.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

#include "nvshim/runner.h"

char *toolkit_parse_version(const char *banner)
{
	if (!strstr(banner, "Cuda compiler driver"))
		return NULL;
	const char *p = strstr(banner, ", V");
	if (!p)
		return NULL;
	p += 3;
	size_t len = strspn(p, "0123456789.");
	return len ? xstrndup(p, len) : NULL;
}

static char *capture(const char *nvcc, const char *option)
{
	struct argv args = ARGV_INIT;
	char *out = NULL;
	argv_push(&args, nvcc);
	argv_push(&args, option);
	int rc = runner_capture(nvcc, &args, &out);
	argv_release(&args);
	if (rc != 0) {
		free(out);
		return NULL;
	}
	return out;
}

char *toolkit_version(const char *nvcc)
{
	char *out = capture(nvcc, "--version");
	char *v = out ? toolkit_parse_version(out) : NULL;
	free(out);
	return v;
}

int toolkit_list(const char *nvcc, const char *option, struct argv *out)
{
	char *text = capture(nvcc, option);
	if (!text)
		return -1;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		while (isspace((unsigned char)*line))
			line++;
		size_t len = strcspn(line, " \t\r");
		if (len)
			argv_push_owned(out, xstrndup(line, len));
	}
	free(text);
	return 0;
}
