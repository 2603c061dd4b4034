#include "commands/commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/argv.h"
#include "base/diag.h"
#include "base/runner.h"
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

/* `nvshim --version`: nvshim's line, then the real nvcc's --version text as nvcc prints it,
 * then which nvcc that was. CMake (its compiler vendor test runs `<compiler> --version` and
 * looks for "nvcc: NVIDIA (R) Cuda compiler driver", then reads the first "V<x.y.z>") and Meson
 * keep identifying nvshim as nvcc; nvshim's own lines hold no "V<digits>". */
int cmd_version_front(void)
{
	struct session s;
	char *nvcc = NULL, *how = NULL, *out = NULL;
	session_init(&s, 0, NULL);
	printf("nvshim %s, a stand-in for nvcc (nvshim --help; nvcc's text alone: nvshim nvcc "
	       "--version)\n", NVSHIM_VERSION);
	fflush(stdout);
	int rc = 1;
	if (!diag_strict_errors() && !session_loop_guard() &&
	    !locate_nvcc(&s.cfg, session_env, &s.self, &nvcc, &how)) {
		struct argv a;
		argv_init(&a);
		argv_push(&a, nvcc);
		argv_push(&a, "--version");
		/* the nvcc it runs carries the loop guard, as in nvcc mode */
		session_enter_child();
		rc = runner_capture(nvcc, &a, &out);
		fputs(out ? out : "", stdout);
		if (rc)
			error("%s --version: exit status %d", nvcc, rc);
		printf("nvshim runs %s (found through %s)\n", nvcc, how);
		argv_release(&a);
	}
	free(out);
	free(nvcc);
	free(how);
	session_release(&s);
	return rc ? 1 : 0;
}
