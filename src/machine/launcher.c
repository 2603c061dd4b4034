#include "machine/launcher.h"
#include "base/hash.h"
#include "model/rules.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libiberty.h>

#ifndef NVSHIM_VERSION
#define NVSHIM_VERSION "0"
#endif

int launcher_wanted(const struct invocation *inv)
{
	if (inv->info || inv->dryrun)
		return 0;
	switch (inv->mode) {
	case MODE_PREPROCESS:
	case MODE_DEPENDENCIES:
	case MODE_DEVICE_LINK:
	case MODE_LIB:
	case MODE_RUN:
		return 0;
	default:
		break;
	}
	int source = 0;
	for (size_t i = 0; i < inv->nargs; i++) {
		const struct inv_arg *a = &inv->args[i];
		if (a->what != ARG_INPUT)
			continue;
		/* CMake identifies the compiler without its launcher; so does nvshim. */
		if (strstr(lbasename(inv->expanded.v[a->pos]), "CMakeCUDACompilerId"))
			return 0;
		switch (a->input) {
		case INPUT_CUDA:
		case INPUT_C:
		case INPUT_CXX:
		case INPUT_PREPROCESSED:
		case INPUT_PTX:
			source = 1;
			break;
		default:
			break;
		}
	}
	return source;
}

int launcher_find(const char *setting, config_getenv_fn env, const struct self *self, char **path,
		  char **why)
{
	int is_self = 0;
	*path = NULL;
	*why = NULL;
	if (strchr(setting, '/')) {
		if (locate_is_candidate(self, setting, &is_self)) {
			*path = xstrdup(setting);
			return 0;
		}
		*why = is_self ? xasprintf("launcher '%s' is nvshim itself", setting)
			       : xasprintf("launcher '%s' is not an executable file", setting);
		return -1;
	}
	*path = locate_on_path(self, env, setting);
	if (*path)
		return 0;
	*why = xasprintf("launcher '%s' was not found on PATH", setting);
	return -1;
}

void launcher_apply(struct plan *p, const char *launcher)
{
	argv_insert(&p->argv, 0, launcher);
	free(p->tool);
	p->tool = xstrdup(launcher);
}

/* "[<path> ]<size> <mtime>" of a file, so that a rebuilt or replaced program changes the text. */
static char *file_identity(const char *path, int with_path)
{
	struct stat sb;
	if (!path)
		return xstrdup("unknown");
	if (stat(path, &sb))
		return xasprintf("%s (missing)", path);
	return xasprintf("%s%s%lld %lld.%09ld", with_path ? path : "", with_path ? " " : "",
			 (long long)sb.st_size, (long long)sb.st_mtim.tv_sec, (long)sb.st_mtim.tv_nsec);
}

char *launcher_fingerprint_text(const struct config *c, const char *nvshim_exe, const char *nvcc,
				const struct devices *devices)
{
	struct argv lines = ARGV_INIT;
	/* nvshim by its file only: bin/nvshim and libexec/nvshim/bin/nvcc give one fingerprint. */
	char *id = file_identity(nvshim_exe, 0);
	argv_pushf(&lines, "nvshim = %s %s", NVSHIM_VERSION, id);
	free(id);
	id = file_identity(nvcc, 1);
	argv_pushf(&lines, "nvcc = %s", id);
	free(id);
	if (devices) {
		char *list = xstrdup("");
		for (size_t i = 0; i < devices->n; i++) {
			char *next = xasprintf("%s%s%u", list, i ? "," : "", devices->v[i].cc);
			free(list);
			list = next;
		}
		argv_pushf(&lines, "devices = %s", devices->n ? list : "none");
		free(list);
	}
	for (size_t i = 0; i < config_nitems; i++) {
		if (config_items[i].flags & CONF_NEUTRAL)
			continue;
		char *v = config_format(c, &config_items[i]);
		argv_pushf(&lines, "%s = %s", config_items[i].name, v);
		free(v);
	}
	/* The modules pass's rules: the configuration's by their text, the directory's by file. */
	for (size_t i = 0; i + 3 < c->module_rules.n; i += 4)
		argv_pushf(&lines, "module \"%s\" %s = %s", c->module_rules.v[i], c->module_rules.v[i + 1],
			   c->module_rules.v[i + 2]);
	if (c->modules && c->modules_rules) {
		char *exe_dir = nvshim_exe ? xstrdup(nvshim_exe) : NULL;
		char *slash = exe_dir ? strrchr(exe_dir, '/') : NULL;
		if (slash)
			*slash = '\0';
		char *dir = rules_dir_path(c->rules_dir, slash ? exe_dir : NULL);
		rules_dir_identity(dir, &lines);
		free(dir);
		free(exe_dir);
	}
	size_t total = 1;
	for (size_t i = 0; i < lines.n; i++)
		total += strlen(lines.v[i]) + 1;
	char *text = XNEWVEC(char, total), *q = text;
	for (size_t i = 0; i < lines.n; i++) {
		size_t n = strlen(lines.v[i]);
		memcpy(q, lines.v[i], n);
		q[n] = '\n';
		q += n + 1;
	}
	*q = '\0';
	argv_release(&lines);
	return text;
}

char *launcher_fingerprint(const char *text)
{
	/* FNV-1a: a cache key only needs different inputs to give different values. */
	uint64_t h = hash_str(HASH_INIT, text);
	return xasprintf("nvshim-%s-%016llx", NVSHIM_VERSION, (unsigned long long)h);
}
