#include "commands/commands.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libiberty.h>

#include "base/argv.h"
#include "base/diag.h"
#include "machine/locate.h"

/* The directory whose nvcc is nvshim: <prefix>/libexec/nvshim/bin (resolved), or NULL. */
static char *nvcc_dir(const struct self *self)
{
	static const char *const rel[] = { "/../libexec/nvshim/bin", "/libexec/nvshim/bin" };
	for (size_t i = 0; self->exe_dir && i < 2; i++) {
		char *dir = concat(self->exe_dir, rel[i], NULL);
		char *nvcc = concat(dir, "/nvcc", NULL);
		char *resolved = access(nvcc, X_OK) ? NULL : realpath(dir, NULL);
		free(dir);
		free(nvcc);
		if (resolved)
			return resolved;
	}
	return NULL;
}

static void print_export(const char *name, const char *value)
{
	char *q = xstrdup("");
	size_t len = 0;
	argv_shell_quote(&q, &len, value);
	printf("%s=%s; export %s\n", name, q, name);
	free(q);
}

/* `eval "$(nvshim env)"`: nvshim's nvcc first on PATH (once), and CUDACXX and PYTORCH_NVCC. */
int cmd_env(int n, char **args)
{
	struct self self;
	(void)args;
	if (n)
		return error("usage: nvshim env (then: eval \"$(nvshim env)\")");
	locate_self(&self);
	char *dir = nvcc_dir(&self);
	if (!dir) {
		error("no libexec/nvshim/bin/nvcc beside %s: run the nvshim of an installed prefix or "
		      "of a build tree", self.exe ? self.exe : "nvshim");
		locate_self_release(&self);
		return 1;
	}
	char *path = xstrdup(dir);
	const char *p = getenv("PATH");
	while (p) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		if (len != strlen(dir) || strncmp(p, dir, len)) {
			char *next = xasprintf("%s:%.*s", path, (int)len, p);
			free(path);
			path = next;
		}
		p = colon ? colon + 1 : NULL;
	}
	char *nvcc = concat(dir, "/nvcc", NULL);
	print_export("PATH", path);
	print_export("CUDACXX", nvcc);
	print_export("PYTORCH_NVCC", nvcc);
	free(nvcc);
	free(path);
	free(dir);
	locate_self_release(&self);
	return 0;
}
