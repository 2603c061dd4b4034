#include "nvshim/commands.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libiberty.h>

#include "nvshim/argv.h"
#include "nvshim/config.h"
#include "nvshim/devices.h"
#include "nvshim/diag.h"
#include "nvshim/invocation.h"
#include "nvshim/locate.h"
#include "nvshim/logfile.h"
#include "nvshim/modules.h"
#include "nvshim/plan.h"
#include "nvshim/runner.h"
#include "nvshim/targets.h"
#include "nvshim/toolkit.h"

#ifndef NVSHIM_VERSION
#define NVSHIM_VERSION "0"
#endif

static const char *env_get(const char *name) { return getenv(name); }

/* What every command starts from: who we are, the settings, the arguments left for nvcc. */
struct session {
	double start_ms;
	struct self self;
	struct config cfg;
	struct argv path_store;
	struct config_paths paths;
	struct argv args;
};

static void session_init(struct session *s, int n, char **args)
{
	s->start_ms = runner_now_ms();
	locate_self(&s->self);
	argv_init(&s->args);
	argv_init(&s->path_store);
	argv_pushn(&s->args, args, (size_t)n);
	config_init(&s->cfg, env_get);
	config_default_paths(&s->paths, &s->path_store, s->self.exe_dir, env_get);
	config_load(&s->cfg, &s->paths, env_get, &s->args);
	config_report(&s->cfg);
}

static void session_release(struct session *s)
{
	config_release(&s->cfg);
	argv_release(&s->path_store);
	argv_release(&s->args);
	locate_self_release(&s->self);
}

/* nvshim-devices: beside nvshim in a build tree, in <prefix>/libexec/nvshim when installed. */
static char *devices_helper(const struct self *self)
{
	if (!self->exe_dir)
		return NULL;
	static const char *const rel[] = { "/libexec/nvshim/nvshim-devices",
					   "/../libexec/nvshim/nvshim-devices" };
	for (size_t i = 0; i < 2; i++) {
		char *p = concat(self->exe_dir, rel[i], NULL);
		if (!access(p, X_OK))
			return p;
		free(p);
	}
	return NULL;
}

struct lazy_devices {
	const struct session *s;
	struct devices d;
	int loaded;
};

static const struct devices *load_devices(void *arg)
{
	struct lazy_devices *l = arg;
	if (!l->loaded) {
		char *helper = devices_helper(&l->s->self);
		devices_load(&l->d, env_get, l->s->cfg.cache_dir, helper);
		free(helper);
		l->loaded = 1;
	}
	return &l->d;
}

/* What the passes share, and what running the modules pass's commands needs afterwards. */
struct passes {
	struct toolkit tk;
	struct lazy_devices devs;
	struct modules_plan mp;
	struct modules_context mctx;
};

static void passes_init(struct passes *ps, const struct session *s, const char *nvcc)
{
	memset(ps, 0, sizeof(*ps));
	toolkit_init(&ps->tk);
	ps->devs.s = s;
	devices_init(&ps->devs.d);
	modules_plan_init(&ps->mp);
	ps->mctx = (struct modules_context){ &s->cfg, &ps->tk, load_devices, &ps->devs, nvcc, s->self.exe_dir, NULL };
}

static void passes_release(struct passes *ps)
{
	modules_plan_release(&ps->mp);
	toolkit_release(&ps->tk);
	devices_release(&ps->devs.d);
}

/* Runs the passes over the invocation, editing the plan. Fail open: a pass that cannot get
 * its facts changes nothing. The modules pass sees the command line the targets pass made. */
static void run_passes(const struct session *s, const struct invocation *inv, const char *nvcc,
		       struct plan *plan, struct passes *ps, struct argv *before, struct argv *after)
{
	int targets = targets_wanted(inv, &s->cfg), modules = modules_wanted(inv, &s->cfg);
	if ((!targets && !modules) || toolkit_load(&ps->tk, nvcc, s->cfg.cache_dir))
		return;
	if (targets) {
		struct targets_context ctx = { &s->cfg, &ps->tk, load_devices, &ps->devs };
		targets_pass(inv, &ctx, plan, before, after);
	}
	if (modules) {
		struct invocation now;
		invocation_parse(&now, plan->argv.v + 1, plan->argv.n - 1, env_get);
		modules_pass(&now, &ps->mctx, plan, &ps->mp);
		invocation_release(&now);
	}
}

/* The modules pass's commands: held stderr, a probe on an architecture-related failure, and
 * one retry with what the probe learnt (its notes are those not said already). */
static void run_modules(struct session *s, struct plan *plan, struct passes *ps, const char *nvcc,
			struct run_result *res)
{
	if (modules_run(&ps->mp, plan, &ps->mctx, 1, res) != MODULES_RETRY)
		return;
	struct argv said = ARGV_INIT;
	argv_copy(&said, &plan->notes);
	passes_release(ps);
	passes_init(ps, s, nvcc);
	plan_release(plan);
	plan_init(plan, nvcc, s->args.v, s->args.n);
	struct invocation inv;
	invocation_parse(&inv, s->args.v, s->args.n, env_get);
	run_passes(s, &inv, nvcc, plan, ps, NULL, NULL);
	invocation_release(&inv);
	for (size_t i = 0; i < plan->notes.n; i++) {
		int seen = 0;
		for (size_t k = 0; k < said.n && !seen; k++)
			seen = !strcmp(said.v[k], plan->notes.v[i]);
		if (!seen)
			diag_rewrite("%s", plan->notes.v[i]);
	}
	argv_release(&said);
	modules_run(&ps->mp, plan, &ps->mctx, 0, res);
}

/* Exports the depth the real tool will see. */
static void enter_child_depth(void)
{
	char buf[16];
	snprintf(buf, sizeof(buf), "%d", locate_depth(env_get) + 1);
	setenv(LOCATE_DEPTH_VAR, buf, 1);
}

static int loop_guard(void)
{
	int depth = locate_depth(env_get);
	if (depth < 1)
		return 0;
	return error("nvshim was started again by the nvcc it ran (%s=%d): the 'real' nvcc leads back "
		     "to nvshim; set NVSHIM_NVCC to the toolkit's nvcc (for example "
		     "/usr/local/cuda/bin/nvcc)",
		     LOCATE_DEPTH_VAR, depth);
}

int commands_nvcc(int n, char **args)
{
	struct session s;
	struct plan plan;
	struct run_result res = { 127, 0, 0 };
	char *nvcc = NULL, *how = NULL;

	session_init(&s, n, args);
	if (diag_strict_errors() || loop_guard() ||
	    locate_nvcc(&s.cfg, env_get, &s.self, &nvcc, &how)) {
		session_release(&s);
		return 1;
	}
	diag_note(VERBOSITY_VERBOSE, "runs %s (found through %s)", nvcc, how);

	/* Every nvcc nvshim starts from here on, for facts too, carries the loop guard. */
	enter_child_depth();
	struct invocation inv;
	struct passes ps;
	passes_init(&ps, &s, nvcc);
	invocation_parse(&inv, s.args.v, s.args.n, env_get);
	plan_init(&plan, nvcc, s.args.v, s.args.n);
	run_passes(&s, &inv, nvcc, &plan, &ps, NULL, NULL);
	invocation_release(&inv);
	for (size_t i = 0; i < plan.notes.n; i++)
		diag_rewrite("%s", plan.notes.v[i]);
	if (!plan.notes.n)
		diag_note(VERBOSITY_VERBOSE, "nothing to change: the arguments go to nvcc as given");
	/* A compile the modules pass may probe, or several commands: it runs them. */
	int modules = ps.mp.active && (ps.mp.hold || ps.mp.ngroups > 1);
	/* Only a line nvshim changed can be too long: the one it was given was not. */
	if (!modules && plan_rewritten(&plan, args, (size_t)n) &&
	    plan_finalize(&plan, s.cfg.options_file_threshold, NULL) > 0)
		diag_note(VERBOSITY_VERBOSE, "the command line is passed in %s", plan.options_file);

	/* With nothing to do afterwards nvshim gets out of the way; otherwise it waits. */
	int after = (s.cfg.log_file && *s.cfg.log_file) || plan.options_file;
	if (modules) {
		run_modules(&s, &plan, &ps, nvcc, &res);
	} else if (!after) {
		fflush(NULL);
		runner_exec(plan.tool, &plan.argv);
		res.status = 127;
	} else {
		runner_run(plan.tool, &plan.argv, &res);
	}

	if (s.cfg.log_file && *s.cfg.log_file) {
		struct argv in = ARGV_INIT;
		argv_push(&in, nvcc);
		argv_pushn(&in, args, (size_t)n);
		struct logfile_entry e = { nvcc, &in, &plan.argv, &plan.notes, res.status,
					   runner_now_ms() - s.start_ms };
		logfile_write(s.cfg.log_file, &e);
		argv_release(&in);
	}
	int status = res.status;
	if (status == 0 && diag_strict_errors())
		status = 1;
	passes_release(&ps);
	plan_release(&plan);
	free(nvcc);
	free(how);
	session_release(&s);
	return status;
}

static int cmd_help(int n, char **args)
{
	(void)n;
	(void)args;
	printf("nvshim %s: a transparent stand-in for nvcc\n\n"
	       "Usage:\n"
	       "  nvcc ARGS...            (nvshim run under the name nvcc) acts as nvcc\n"
	       "  nvshim ARGS...          acts as nvcc with ARGS\n"
	       "  nvshim nvcc ARGS...     the same, for ARGS that start with a command word\n"
	       "  nvshim help             this text\n"
	       "  nvshim version          nvshim's version and the nvcc it runs\n"
	       "  nvshim config           every setting, its value and where it came from\n"
	       "  nvshim explain ARGS...  the command nvshim would run for these nvcc ARGS, and why;\n"
	       "                          runs nothing\n"
	       "  nvshim doctor           checks the setup: toolkit, targets, configuration\n\n"
	       "Settings (INI files, NVSHIM_<NAME> variables, --nvshim-<name>=<value> options):\n",
	       NVSHIM_VERSION);
	for (size_t i = 0; i < config_nitems; i++)
		printf("  %-24s %s\n", config_items[i].name, config_items[i].help);
	printf("\nFiles, lowest precedence first: <prefix>/etc/nvshim.ini, /etc/nvshim.ini,\n"
	       "~/.config/nvshim/nvshim.ini, .nvshim.ini in the working directory or above.\n");
	return 0;
}

static int cmd_version(int n, char **args)
{
	struct session s;
	char *nvcc = NULL, *how = NULL;
	(void)n;
	(void)args;
	session_init(&s, 0, NULL);
	printf("nvshim %s\n", NVSHIM_VERSION);
	if (!locate_nvcc(&s.cfg, env_get, &s.self, &nvcc, &how)) {
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

static int cmd_config(int n, char **args)
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

static void print_args(const char *label, const struct argv *a)
{
	char *line = argv_to_shell(a);
	printf("%-10s: %s\n", label, line);
	free(line);
}

static int cmd_explain(int n, char **args)
{
	struct session s;
	struct invocation inv;
	struct plan plan;
	char *nvcc = NULL, *how = NULL;

	session_init(&s, n, args);
	if (locate_nvcc(&s.cfg, env_get, &s.self, &nvcc, &how)) {
		session_release(&s);
		return 1;
	}
	struct argv before = ARGV_INIT, after = ARGV_INIT;
	struct passes ps;
	passes_init(&ps, &s, nvcc);
	invocation_parse(&inv, s.args.v, s.args.n, env_get);
	plan_init(&plan, nvcc, s.args.v, s.args.n);
	run_passes(&s, &inv, nvcc, &plan, &ps, &before, &after);

	printf("real nvcc : %s (found through %s)\n", nvcc, how);
	printf("mode      : %s%s%s\n", inv.info ? "information only" : invocation_mode_name(inv.mode),
	       inv.modes_conflict ? " (several modes given; nvcc decides)" : "",
	       inv.dryrun ? ", dry run" : "");
	printf("inputs    :");
	for (size_t i = 0; i < inv.nargs; i++) {
		const struct inv_arg *a = &inv.args[i];
		if (a->what == ARG_INPUT)
			printf(" %s (%s)", inv.expanded.v[a->pos], invocation_input_kind_name(a->input));
	}
	printf("%s\n", inv.ninputs ? "" : " none");
	printf("output    : %s\n", inv.output ? inv.output : "nvcc's default");
	if (!argv_equal(&inv.argv, &inv.expanded)) {
		printf("analysed  :\n");
		for (size_t i = 0; i < inv.expanded.n; i++)
			printf("  %-16s %s\n", invocation_source_name(inv.sources[i]), inv.expanded.v[i]);
	}
	for (size_t i = 0; i < inv.nargs; i++) {
		const struct inv_arg *a = &inv.args[i];
		if (a->what == ARG_OPTION && (a->opt->flags & OPT_DROPPED))
			printf("dropped   : %s is not accepted by nvcc 13.0 (%s option)\n",
			       inv.expanded.v[a->pos], options_kind_name(a->opt->kind));
		else if (a->what == ARG_UNKNOWN)
			printf("unknown   : %s (kept in place; nvcc decides)\n", inv.expanded.v[a->pos]);
	}
	if (before.n || after.n) {
		char *b = argv_to_shell(&before), *a = argv_to_shell(&after);
		printf("targets   : %s\n", b);
		printf("       -> : %s\n", after.n ? a : "(unchanged)");
		free(b);
		free(a);
	}
	argv_release(&before);
	argv_release(&after);
	if (!plan.notes.n)
		printf("notes     : none; nvcc runs with the arguments unchanged\n");
	for (size_t i = 0; i < ps.mp.explain.n; i++)
		printf("%-10s: %s\n", i ? "" : "modules", ps.mp.explain.v[i]);
	for (size_t i = 0; i < plan.notes.n; i++)
		printf("note      : %s\n", plan.notes.v[i]);
	if (ps.mp.ngroups > 1) {
		for (size_t g = 0; g < ps.mp.ngroups; g++)
			print_args("command", &ps.mp.groups[g].argv);
		if (ps.mp.link.n)
			print_args("command", &ps.mp.link);
	} else {
		print_args("command", &plan.argv);
	}
	if (ps.mp.hold)
		printf("on failure: an architecture-related error is probed (each target on its own) and "
		       "the command retried once\n");

	passes_release(&ps);
	plan_release(&plan);
	invocation_release(&inv);
	free(nvcc);
	free(how);
	int rc = diag_strict_errors() ? 1 : 0;
	session_release(&s);
	return rc;
}

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

static int cmd_doctor(int n, char **args)
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

	if (locate_nvcc(&s.cfg, env_get, &s.self, &nvcc, &how)) {
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
	struct lazy_devices devs = { .s = &s };
	devices_init(&devs.d);
	const struct devices *d = load_devices(&devs);
	printf("GPUs      :");
	for (size_t i = 0; i < d->n; i++)
		printf(" sm_%u%s%s", d->v[i].cc, d->v[i].uuid[0] ? " " : "", d->v[i].uuid);
	printf("%s (from %s)\n", d->n ? "" : " none", d->source);
	devices_release(&devs.d);
	doctor_path(&s.self, nvcc);
	const char *home = getenv("CUDA_HOME");
	if (home && nvcc && strncmp(nvcc, home, strlen(home)))
		printf("note: CUDA_HOME=%s, but nvshim runs %s\n", home, nvcc);
	for (const char *const *v = (const char *const[]){ "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS", NULL };
	     *v; v++)
		if (getenv(*v))
			printf("note: %s='%s' applies to every nvcc run\n", *v, getenv(*v));
	doctor_cache_dir(s.cfg.cache_dir);
	if (locate_depth(env_get))
		doctor_problem("%s is set: this shell runs inside an nvshim-started nvcc", LOCATE_DEPTH_VAR);
	printf("%s\n", problems ? "problems found" : "no problems found");
	free(nvcc);
	free(how);
	session_release(&s);
	return problems ? 1 : 0;
}

static const struct {
	const char *name;
	int (*fn)(int n, char **args);
} commands[] = {
	{ "config", cmd_config }, { "doctor", cmd_doctor }, { "explain", cmd_explain },
	{ "help", cmd_help },	  { "nvcc", commands_nvcc }, { "version", cmd_version },
};

int commands_main(int argc, char **argv)
{
	const char *base = argc > 0 ? lbasename(argv[0]) : "nvshim";
	if (!strcmp(base, "nvshim") && argc > 1) {
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			if (!strcmp(argv[1], commands[i].name))
				return commands[i].fn(argc - 2, argv + 2);
	}
	return commands_nvcc(argc > 0 ? argc - 1 : 0, argv + (argc > 0));
}
