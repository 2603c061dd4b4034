#include "commands/commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

#include "base/diag.h"
#include "upgrade/compat.h"
#include "machine/launcher.h"
#include "modes/session.h"

/* For a compiler cache that runs nvshim: see launcher.h. */
int cmd_fingerprint(int n, char **args)
{
	struct session s;
	char *nvcc = NULL, *how = NULL;
	int show = n == 1 && !strcmp(args[0], "--show");
	if (n && !show)
		return error("usage: nvshim fingerprint [--show]");
	session_init(&s, 0, NULL);
	int rc = locate_nvcc(&s.cfg, session_env, &s.self, &nvcc, &how) ? 1 : 0;
	struct session_devices devs;
	session_devices_init(&devs, &s);
	char *base = launcher_fingerprint_text(&s.cfg, s.self.exe, nvcc, session_devices_load(&devs));
	/* The compatibility layer builds what fails otherwise: its headers and table count. */
	char *layer = compat_identity(&s.cfg, s.self.exe_dir);
	char *text = concat(base, layer, NULL);
	free(base);
	free(layer);
	if (show) {
		fputs(text, stdout);
	} else {
		char *key = launcher_fingerprint(text);
		printf("%s\n", key);
		free(key);
	}
	if (diag_strict_errors())
		rc = 1;
	free(text);
	session_devices_release(&devs);
	free(nvcc);
	free(how);
	session_release(&s);
	return rc;
}
