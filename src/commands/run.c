#include "commands/commands.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

#include "base/diag.h"
#include "base/runner.h"
#include "modes/session.h"

/* Does an LD_PRELOAD value (entries separated by spaces or colons) name this file? */
static int preload_has(const char *value, const char *lib)
{
	char real[PATH_MAX];
	for (const char *p = value; p && *p;) {
		size_t len = strcspn(p, " :");
		if (len) {
			char *entry = xstrndup(p, len);
			int same = !strcmp(entry, lib) || (realpath(entry, real) && !strcmp(real, lib));
			free(entry);
			if (same)
				return 1;
		}
		p += len;
		p += strspn(p, " :");
	}
	return 0;
}

int cmd_run(int n, char **args)
{
	struct session s;
	int dash = -1;
	for (int i = 0; i < n && dash < 0; i++)
		if (!strcmp(args[i], "--"))
			dash = i;
	/* nvshim's own options come before "--"; without "--" everything is the command. */
	int nopts = dash < 0 ? 0 : dash;
	char **cmd = dash < 0 ? args : args + dash + 1;
	int ncmd = dash < 0 ? n : n - dash - 1;
	session_init(&s, nopts, args);
	int rc = 1;
	char *lib = NULL;
	if (diag_strict_errors())
		goto out;
	if (s.args.n) {
		error("nvshim run: '%s' is not an nvshim option (usage: nvshim run [--nvshim-<setting>=<value>...] -- "
		      "CMD [ARGS...])",
		      s.args.v[0]);
		goto out;
	}
	if (ncmd < 1) {
		error("nvshim run: no command (usage: nvshim run [--nvshim-<setting>=<value>...] -- CMD [ARGS...])");
		goto out;
	}
	lib = session_preload_library(&s.self);
	if (!lib) {
		error("nvshim run: libnvshim-preload.so is not installed beside %s (libexec/nvshim)",
		      s.self.exe ? s.self.exe : "nvshim");
		goto out;
	}
	/* The settings as nvshim sees them here go to the library through the environment. */
	for (size_t i = 0; i < config_nitems; i++) {
		if (s.cfg.layer[i] == LAYER_DEFAULT || s.cfg.layer[i] == LAYER_ENV)
			continue;
		char *name = concat("NVSHIM_", config_items[i].name, NULL);
		for (char *p = name; *p; p++)
			*p = (char)toupper((unsigned char)*p);
		char *value = config_format(&s.cfg, &config_items[i]);
		setenv(name, value, 1);
		diag_debug("nvshim run: %s=%s (from %s)", name, value, s.cfg.origin[i]);
		free(name);
		free(value);
	}
	/* The program's own preloads keep their place in front; another nvshim's library goes. */
	const char *old = getenv("LD_PRELOAD");
	char *value = xstrdup("");
	int have = 0;
	for (const char *p = old; p && *p;) {
		size_t len = strcspn(p, " :");
		char *entry = xstrndup(p, len);
		int mine = preload_has(entry, lib);
		if (len && (mine || strcmp(lbasename(entry), "libnvshim-preload.so"))) {
			char *more = concat(value, *value ? ":" : "", entry, NULL);
			free(value);
			value = more;
			have |= mine;
		} else if (len) {
			diag_note(VERBOSITY_VERBOSE, "nvshim run: %s replaced by %s in LD_PRELOAD", entry, lib);
		}
		free(entry);
		p += len;
		p += strspn(p, " :");
	}
	if (!have) {
		char *more = concat(value, *value ? ":" : "", lib, NULL);
		free(value);
		value = more;
	}
#ifdef NVSHIM_PRELOAD_RUNTIME
	/* A sanitized build's library needs the sanitizer's runtime loaded before everything. */
	if (!preload_has(value, NVSHIM_PRELOAD_RUNTIME)) {
		char *more = concat(NVSHIM_PRELOAD_RUNTIME, ":", value, NULL);
		free(value);
		value = more;
	}
#endif
	/* Build-time compiles too: nvshim's nvcc first on PATH, CUDACXX, PYTORCH_NVCC, CUDA_HOME and
	 * the rest name it, as after eval "$(nvshim env)" (`nvshim run -- pip install ...`). */
	if (cmd_env_apply(&s, ENV_SET))
		diag_note(VERBOSITY_VERBOSE, "nvshim run: no libexec/nvshim/bin/nvcc beside %s: the "
			  "environment for nvcc is left as it is", s.self.exe ? s.self.exe : "nvshim");
	setenv("LD_PRELOAD", value, 1);
	diag_note(VERBOSITY_VERBOSE, "nvshim run: LD_PRELOAD=%s", value);
	free(value);
	struct argv command = ARGV_INIT;
	argv_pushn(&command, cmd, (size_t)ncmd);
	fflush(NULL);
	runner_execvp(&command);
	argv_release(&command);
	rc = 127;
out:
	free(lib);
	session_release(&s);
	return rc;
}
