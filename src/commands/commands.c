#include "commands/commands.h"

#include <string.h>

#include <libiberty.h>

#include "modes/cc.h"
#include "modes/nvcc.h"

static const struct {
	const char *name;
	int (*fn)(int n, char **args);
} commands[] = {
	{ "config", cmd_config }, { "doctor", cmd_doctor },   { "env", cmd_env },
	{ "explain", cmd_explain }, { "explain-api", cmd_explain_api },
	{ "fingerprint", cmd_fingerprint }, { "help", cmd_help },
	{ "inspect", cmd_inspect }, { "migrate", cmd_migrate }, { "nvcc", nvcc_main }, { "run", cmd_run }, { "stats", cmd_stats },
	{ "toolkit-view", cmd_toolkit_view }, { "version", cmd_version },
};

int commands_main(int argc, char **argv)
{
	const char *base = argc > 0 ? lbasename(argv[0]) : "nvshim";
	/* ccache's compiler_check runs `%compiler% --nvshim-fingerprint`, under any name. */
	if (argc == 2 && !strcmp(argv[1], "--nvshim-fingerprint"))
		return cmd_fingerprint(0, NULL);
	if (cc_is_name(base))
		return cc_main(base, argc - 1, argv + 1);
	if (!strcmp(base, "nvshim") && argc > 1 && cc_is_name(argv[1]))
		return cc_main(argv[1], argc - 2, argv + 2);
	if (!strcmp(base, "nvshim") && argc > 1) {
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			if (!strcmp(argv[1], commands[i].name))
				return commands[i].fn(argc - 2, argv + 2);
	}
	return nvcc_main(argc > 0 ? argc - 1 : 0, argv + (argc > 0));
}
