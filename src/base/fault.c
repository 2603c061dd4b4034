#include "base/fault.h"

#include <stdlib.h>
#include <string.h>

static int fault_listed(const char *step, int all);

int fault_inject(const char *step) { return fault_listed(step, 1); }

int fault_named(const char *step) { return fault_listed(step, 0); }

static int fault_listed(const char *step, int all)
{
	const char *list = getenv("NVSHIM_FAULT");
	if (!list || !*list)
		return 0;
	size_t n = strlen(step);
	for (const char *p = list; *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if ((len == n && !strncmp(p, step, n)) || (all && len == 3 && !strncmp(p, "all", 3)))
			return 1;
		p += len + (end != NULL);
	}
	return 0;
}
