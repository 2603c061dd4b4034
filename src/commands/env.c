#include "commands/commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

#include "base/argv.h"
#include "base/diag.h"
#include "machine/locate.h"
#include "machine/view.h"
#include "modes/session.h"

static void print_export(const char *name, const char *value)
{
	char *q = xstrdup("");
	size_t len = 0;
	argv_shell_quote(&q, &len, value);
	printf("%s=%s; export %s\n", name, q, name);
	free(q);
}

/* The toolkit view of the real nvcc (view.h), or NULL after a warning. */
static char *env_view(struct session *s, const char *shim)
{
	char *nvcc, *how, *dir = NULL, *why = NULL;
	if (locate_nvcc(&s->cfg, session_env, &s->self, &nvcc, &how)) {
		warning("no real nvcc: CUDA_HOME and CUDA_PATH are left as they are");
		return NULL;
	}
	if (view_get(s->cfg.cache_dir, nvcc, shim, &dir, &why))
		warning("no toolkit view of %s (%s): CUDA_HOME and CUDA_PATH are left as they are",
			nvcc, why);
	free(why);
	free(nvcc);
	free(how);
	return dir;
}

/* `nvshim toolkit-view`: the view's directory, made when it is not there. */
int cmd_toolkit_view(int n, char **args)
{
	struct session s;
	(void)args;
	if (n)
		return error("usage: nvshim toolkit-view (prints the toolkit view's directory)");
	session_init(&s, 0, NULL);
	char *shim = locate_shim_dir(&s.self);
	char *nvcc = shim ? concat(shim, "/nvcc", NULL) : NULL;
	char *dir = nvcc ? env_view(&s, nvcc) : NULL;
	if (!shim)
		error("no libexec/nvshim/bin/nvcc beside %s", s.self.exe ? s.self.exe : "nvshim");
	if (dir)
		printf("%s\n", dir);
	free(dir);
	free(nvcc);
	free(shim);
	session_release(&s);
	return dir ? 0 : 1;
}

/* `eval "$(nvshim env)"`: nvshim's nvcc first on PATH (once); CUDACXX, PYTORCH_NVCC and
 * CUDA_NVCC_EXECUTABLE (FindCUDA) name it; CUDA_HOME, CUDA_PATH and CUDAToolkit_ROOT name the
 * toolkit view, whose bin/nvcc is nvshim. */
int cmd_env(int n, char **args)
{
	struct session s;
	(void)args;
	if (n)
		return error("usage: nvshim env (then: eval \"$(nvshim env)\")");
	session_init(&s, 0, NULL);
	char *dir = locate_shim_dir(&s.self);
	if (!dir) {
		error("no libexec/nvshim/bin/nvcc beside %s: run the nvshim of an installed prefix or "
		      "of a build tree", s.self.exe ? s.self.exe : "nvshim");
		session_release(&s);
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
	char *view = env_view(&s, nvcc);
	print_export("PATH", path);
	print_export("CUDACXX", nvcc);
	print_export("PYTORCH_NVCC", nvcc);
	print_export("CUDA_NVCC_EXECUTABLE", nvcc);
	if (view) {
		print_export("CUDA_HOME", view);
		print_export("CUDA_PATH", view);
		print_export("CUDAToolkit_ROOT", view);
	}
	free(view);
	free(nvcc);
	free(path);
	free(dir);
	session_release(&s);
	return 0;
}
