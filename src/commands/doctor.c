#include "commands/commands.h"

#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libiberty.h>

#include "model/arch.h"
#include "base/diag.h"
#include "machine/launcher.h"
#include "objects/images.h"
#include "machine/toolkit.h"
#include "machine/locate.h"
#include "machine/view.h"
#include "modes/cc.h"
#include "modes/session.h"

#ifndef NVSHIM_VERSION
#define NVSHIM_VERSION "0"
#endif

/* Problems found so far. */
static int problems;

static void doctor_problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void doctor_problem(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("  problem: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	problems++;
}

static void doctor_cache_dir(const char *dir)
{
	struct stat sb;
	if (stat(dir, &sb)) {
		printf("cache_dir : %s (not created yet)\n", dir);
		return;
	}
	printf("cache_dir : %s\n", dir);
	if (!S_ISDIR(sb.st_mode))
		doctor_problem("cache_dir %s is not a directory", dir);
	else if (access(dir, W_OK))
		doctor_problem("cache_dir %s is not writable", dir);
	else if (sb.st_uid != getuid())
		doctor_problem("cache_dir %s belongs to another user", dir);
	else if (sb.st_mode & S_IWOTH)
		doctor_problem("cache_dir %s is writable by everyone", dir);
}

/* Every nvcc on PATH, to show which one nvshim skips and which one a build would find. */
static void doctor_path(const struct self *self, const char *chosen)
{
	const char *p = getenv("PATH");
	int index = 0;
	printf("nvcc on PATH:\n");
	while (p) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		char *dir = len ? xstrndup(p, len) : xstrdup(".");
		char *cand = concat(dir, "/nvcc", NULL);
		int is_self;
		if (locate_is_candidate(self, cand, &is_self) || is_self) {
			printf("  %s%s%s\n", cand, is_self ? "  (nvshim itself)" : "",
			       chosen && !strcmp(cand, chosen) ? "  (used)" : "");
			index++;
		}
		free(dir);
		free(cand);
		p = colon ? colon + 1 : NULL;
	}
	if (!index)
		printf("  none\n");
}

/* What a program path (or a name looked up on PATH) is to the routes below: 1 nvshim, 0 another
 * program (the real nvcc, a wrapper), -1 none; *found is the path (xmalloc'ed) when found. */
static int doctor_program(const struct self *self, const char *value, char **found)
{
	int is_self;
	*found = NULL;
	if (!strchr(value, '/')) {
		/* The first on PATH, nvshim or not: what a tool that runs the name gets. */
		*found = locate_first_on_path(self, session_env, value, &is_self);
		return *found ? is_self : -1;
	}
	*found = xstrdup(value);
	if (locate_is_candidate(self, value, &is_self))
		return 0;
	return is_self ? 1 : -1;
}

/* One route to nvcc: a variable and what it leads to. Returns 1 if it goes around nvshim. */
static int doctor_route(const struct self *self, const char *cache_dir, const char *var,
			int is_root, const char *who)
{
	const char *value = getenv(var);
	char *found = NULL;
	int around = 0;
	printf("  %-20s ", var);
	if (!value || !*value) {
		printf("unset (%s)\n", who);
		return 0;
	}
	/* A program variable may hold options after the program (NVCC="nvcc -ccbin g++"). */
	char *program = is_root ? concat(value, "/bin/nvcc", NULL) : xstrndup(value, strcspn(value, " \t"));
	int kind = doctor_program(self, program, &found);
	char *real = kind == 1 && is_root ? view_real_nvcc(value) : NULL;
	char *real_root = NULL;
	if (real) {
		char *resolved = lrealpath(real);
		real_root = resolved ? toolkit_root(resolved) : NULL;
		free(resolved);
	}
	if (kind == 1 && real_root) {
		/* The view of the toolkit as it is now, or an older one. */
		char *now = view_path(cache_dir, real, found);
		char *a = now ? lrealpath(now) : NULL, *b = lrealpath(value);
		printf("nvshim: the toolkit view of %s (%s)%s\n", real_root, who,
		       a && b && strcmp(a, b) ? "; an older view: the toolkit changed since, "
						"eval \"$(nvshim env)\" again for the current one" : "");
		free(now);
		free(a);
		free(b);
	} else if (kind == 1)
		printf("nvshim: %s (%s)\n", found, who);
	else if (kind == 0) {
		printf("around nvshim: %s is not nvshim (%s)\n", found, who);
		around = 1;
	} else
		printf("no program at %s (%s)\n", program, who);
	free(real_root);
	free(real);
	free(found);
	free(program);
	return around;
}

/* Which of the ways tools find nvcc lead to nvshim in this environment. */
static void doctor_routes(const struct self *self, const char *cache_dir)
{
	static const struct {
		const char *var;
		int is_root;
		const char *who;
	} routes[] = {
		{ "CUDACXX", 0, "CMake's enable_language(CUDA)" },
		{ "PYTORCH_NVCC", 0, "PyTorch's extension builder" },
		{ "CUDA_HOME", 1, "PyTorch without PYTORCH_NVCC, FlashInfer, TVM, scripts" },
		{ "CUDA_PATH", 1, "FindCUDA, FindCUDAToolkit, CuPy, scripts" },
		{ "CUDAToolkit_ROOT", 1, "FindCUDAToolkit" },
		{ "CUDA_NVCC_EXECUTABLE", 0, "FindCUDA's cuda_add_executable" },
		{ "NVCC", 0, "CuPy's nvcc backend, Makefiles" },
	};
	char *first = NULL;
	int around = 0;
	printf("routes to nvcc:\n");
	int kind = doctor_program(self, "nvcc", &first);
	printf("  %-20s ", "PATH");
	if (kind == 1)
		printf("nvshim: %s (make, Meson, setuptools, anything that runs `nvcc`)\n", first);
	else if (kind == 0) {
		printf("around nvshim: the first nvcc is %s\n", first);
		around++;
	} else
		printf("no nvcc\n");
	free(first);
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		around += doctor_route(self, cache_dir, routes[i].var, routes[i].is_root, routes[i].who);
	if (around)
		printf("note: %d route(s) go around nvshim: eval \"$(nvshim env)\" points all but NVCC "
		       "at nvshim (NVCC: unset it, or name nvshim's nvcc)\n", around);
}

/* The host compilers a build runs by name (cc, c++, gcc, g++, clang, clang++, and the versioned
 * ones on PATH): which of them reach CC mode (host_compilers, `nvshim env`) and which go around. */
static void doctor_host_compilers(const struct session *s)
{
	static const char *const plain[] = { "cc", "c++", "gcc", "g++", "clang", "clang++", NULL };
	struct argv names = ARGV_INIT, reached = ARGV_INIT, around = ARGV_INIT;
	argv_pushv(&names, plain);
	for (const char *p = getenv("PATH"); p && *p;) {
		size_t len = strcspn(p, ":");
		char *d = xstrndup(p, len);
		DIR *dir = len ? opendir(d) : NULL;
		for (struct dirent *e; dir && (e = readdir(dir));) {
			int seen = 0;
			for (size_t i = 0; i < names.n && !seen; i++)
				seen = !strcmp(names.v[i], e->d_name);
			if (!seen && cc_is_versioned(e->d_name))
				argv_push(&names, e->d_name);
		}
		if (dir)
			closedir(dir);
		free(d);
		p += len + (p[len] == ':');
	}
	for (size_t i = 0; i < names.n; i++) {
		int is_self;
		char *first = locate_first_on_path(&s->self, session_env, names.v[i], &is_self);
		if (first)
			argv_push(is_self ? &reached : &around, names.v[i]);
		free(first);
	}
	char *a = argv_join(&reached, " "), *b = argv_join(&around, " ");
	printf("host compilers: %s%s%s%s%s\n", reached.n ? "CC mode for " : "", a,
	       reached.n && around.n ? "; " : "", around.n ? "around nvshim: " : "", b);
	if (around.n && !strcmp(s->cfg.host_compilers, "off"))
		printf("note: host_compilers = off: eval \"$(nvshim env)\" leaves the host compilers as "
		       "they are\n");
	else if (around.n)
		printf("note: host sources a build compiles with %s get nothing CC mode fixes: eval "
		       "\"$(nvshim env)\" puts CC mode in front of them (host_compilers)\n", b);
	free(a);
	free(b);
	argv_release(&names);
	argv_release(&reached);
	argv_release(&around);
}

/* Whether libnvshim-preload.so is in effect in this environment (LD_PRELOAD). */
static void doctor_preload(const struct self *self)
{
	char *lib = session_preload_library(self);
	const char *env = getenv("LD_PRELOAD");
	int found = 0;
	for (const char *p = env; p && *p;) {
		size_t len = strcspn(p, " :");
		char *entry = xstrndup(p, len);
		if (!strcmp(lbasename(entry), "libnvshim-preload.so")) {
			char real[PATH_MAX];
			found = 1;
			if (access(entry, R_OK))
				doctor_problem("LD_PRELOAD names %s, which cannot be read", entry);
			else
				printf("preload   : in effect (LD_PRELOAD has %s%s)\n", entry,
				       lib && realpath(entry, real) && strcmp(real, lib) ? ", not this nvshim's" : "");
		}
		free(entry);
		p += len;
		p += strspn(p, " :");
	}
	if (!found)
		printf("preload   : not in effect (`nvshim run -- CMD` runs CMD with %s)\n",
		       lib ? lib : "libnvshim-preload.so, which is not installed beside this nvshim");
	free(lib);
}

int cmd_doctor(int n, char **args)
{
	struct session s;
	char *nvcc = NULL, *how = NULL;
	(void)n;
	(void)args;

	session_init(&s, 0, NULL);
	printf("nvshim    : %s %s\n", s.self.exe ? s.self.exe : "(unknown path)", NVSHIM_VERSION);
	printf("config files read:\n");
	if (!s.cfg.files.n)
		printf("  none\n");
	for (size_t i = 0; i < s.cfg.files.n; i++)
		printf("  %s\n", s.cfg.files.v[i]);
	if (diag_warnings())
		doctor_problem("the configuration has %d problem(s), printed above", diag_warnings());

	if (locate_nvcc(&s.cfg, session_env, &s.self, &nvcc, &how)) {
		doctor_problem("no real nvcc (see the error above)");
	} else {
		char *v = toolkit_version(nvcc);
		printf("real nvcc : %s (found through %s)\n", nvcc, how);
		printf("toolkit   : %s\n", v ? v : "unknown");
		if (!v)
			doctor_problem("%s --version does not print nvcc's banner", nvcc);
		free(v);
		struct toolkit tk;
		toolkit_init(&tk);
		if (!toolkit_load(&tk, nvcc, s.cfg.cache_dir)) {
			struct argv kinds[3] = { ARGV_INIT, ARGV_INIT, ARGV_INIT };
			for (size_t i = 0; i < tk.targets.n; i++) {
				struct arch a;
				if (!arch_parse(tk.targets.v[i], &a))
					argv_push(&kinds[a.kind], tk.targets.v[i]);
			}
			static const char *const labels[] = { "virtual targets", "real targets",
							      "lto targets" };
			printf("targets from: %s\n", tk.source);
			for (int k = 0; k < 3; k++) {
				char *line = argv_to_shell(&kinds[k]);
				printf("%-15s : %s\n", labels[k], line);
				free(line);
				argv_release(&kinds[k]);
			}
		} else {
			doctor_problem("%s does not list its targets", nvcc);
		}
		toolkit_release(&tk);
	}
	if (s.cfg.launcher && *s.cfg.launcher) {
		char *lpath, *why;
		if (launcher_find(s.cfg.launcher, session_env, &s.self, &lpath, &why)) {
			doctor_problem("%s: compilations run without it", why);
			free(why);
		} else {
			printf("launcher  : %s (runs nvcc for every compilation)\n", lpath);
			free(lpath);
		}
	}
	struct session_devices devs;
	session_devices_init(&devs, &s);
	const struct devices *d = session_devices_load(&devs);
	printf("GPUs      :");
	for (size_t i = 0; i < d->n; i++)
		printf(" sm_%u%s%s", d->v[i].cc, d->v[i].uuid[0] ? " " : "", d->v[i].uuid);
	printf("%s (from %s)\n", d->n ? "" : " none", d->source);
	if (!d->n && (!s.cfg.forward_ptx || strcmp(s.cfg.forward_ptx, "highest")))
		printf("note: no GPU known and forward_ptx = off: a build of machine code only "
		       "(code=sm_NN) gets no kernel image for GPUs of another major version "
		       "[targets.sass_only]; NVSHIM_DEVICES names the build's GPUs, forward_ptx = highest "
		       "adds PTX for newer ones\n");
	session_devices_release(&devs);
	{
		unsigned drv = images_installed_driver_cuda(NULL);
		if (s.cfg.driver_cuda && *s.cfg.driver_cuda)
			printf("driver    : %s (driver_cuda)\n", s.cfg.driver_cuda);
		else if (drv)
			printf("driver    : CUDA %u.%u (/proc/driver/nvidia/version)\n", drv / 1000, drv % 1000 / 10);
		else
			printf("driver    : none known (PTX newer than the driver is not looked for; driver_cuda "
			       "names the build's)\n");
	}
	doctor_path(&s.self, nvcc);
	doctor_routes(&s.self, s.cfg.cache_dir);
	doctor_host_compilers(&s);
	for (const char *const *v = (const char *const[]){ "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", NULL };
	     *v; v++)
		if (getenv(*v))
			printf("note: %s='%s' applies to every nvcc run\n", *v, getenv(*v));
	doctor_cache_dir(s.cfg.cache_dir);
	doctor_preload(&s.self);
	if (locate_depth(session_env))
		doctor_problem("%s is set: this shell runs inside an nvshim-started nvcc", LOCATE_DEPTH_VAR);
	printf("%s\n", problems ? "problems found" : "no problems found");
	free(nvcc);
	free(how);
	session_release(&s);
	return problems ? 1 : 0;
}
