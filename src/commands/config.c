#include "commands/commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "modes/session.h"

int cmd_config(int n, char **args)
{
	struct session s;
	if (n == 1 && !strcmp(args[0], "--template")) {
		config_write_template(stdout);
		return 0;
	}
	session_init(&s, n, args);
	config_print(&s.cfg, stdout);
	int rc = diag_strict_errors() ? 1 : 0;
	session_release(&s);
	return rc;
}
