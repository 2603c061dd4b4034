#include "commands/commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "machine/toolkit.h"
#include "modes/session.h"

#ifndef NVSHIM_VERSION
#define NVSHIM_VERSION "0"
#endif

int cmd_version(int n, char **args)
{
	struct session s;
	char *nvcc = NULL, *how = NULL;
	(void)n;
	(void)args;
	session_init(&s, 0, NULL);
	printf("nvshim %s\n", NVSHIM_VERSION);
	if (!locate_nvcc(&s.cfg, session_env, &s.self, &nvcc, &how)) {
		char *v = toolkit_version(nvcc);
		printf("nvcc   %s (%s, found through %s)\n", v ? v : "unknown version", nvcc, how);
		free(v);
	}
	int rc = nvcc && !diag_strict_errors() ? 0 : 1;
	free(nvcc);
	free(how);
	session_release(&s);
	return rc;
}
