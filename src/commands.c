#include "nvshim/commands.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libiberty.h>

#include "nvshim/argv.h"
#include "nvshim/cache.h"
#include "nvshim/config.h"
#include "nvshim/crash.h"
#include "nvshim/devices.h"
#include "nvshim/diag.h"
#include "nvshim/fault.h"
#include "nvshim/hostcc.h"
#include "nvshim/gates.h"
#include "nvshim/invocation.h"
#include "nvshim/link.h"
#include "nvshim/launcher.h"
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

static void session_init_report(struct session *s, int n, char **args, int report);
static void session_init(struct session *s, int n, char **args)
{
	session_init_report(s, n, args, 1);
}

static void session_init_report(struct session *s, int n, char **args, int report)
{
	s->start_ms = runner_now_ms();
	locate_self(&s->self);
	argv_init(&s->args);
	argv_init(&s->path_store);
	argv_pushn(&s->args, args, (size_t)n);
	config_init(&s->cfg, env_get);
	config_default_paths(&s->paths, &s->path_store, s->self.exe_dir, env_get);
	config_load(&s->cfg, &s->paths, env_get, &s->args);
	if (report)
		config_report(&s->cfg);
	const char *why = "injected fault (NVSHIM_FAULT)";
	if (s->cfg.cache_dir && *s->cfg.cache_dir &&
	    (fault_inject("cache") || cache_dir_check(s->cfg.cache_dir, &why))) {
		if (report)
			warning("cache_dir %s %s: running without a cache", s->cfg.cache_dir, why);
		free(s->cfg.cache_dir);
		s->cfg.cache_dir = xstrdup("");
	}
}

static void session_release(struct session *s)
{
	config_release(&s->cfg);
	argv_release(&s->path_store);
	argv_release(&s->args);
	locate_self_release(&s->self);
}

/* A file of libexec/nvshim that access() allows for `mode`: beside nvshim in a build tree, in
 * <prefix>/libexec/nvshim when installed. Its resolved path (xmalloc'ed), or NULL. */
static char *libexec_file(const struct self *self, const char *name, int mode)
{
	if (!self->exe_dir)
		return NULL;
	static const char *const rel[] = { "/libexec/nvshim/", "/../libexec/nvshim/" };
	for (size_t i = 0; i < 2; i++) {
		char *p = concat(self->exe_dir, rel[i], name, NULL);
		char real[PATH_MAX];
		if (!access(p, mode) && realpath(p, real)) {
			free(p);
			return xstrdup(real);
		}
		free(p);
	}
	return NULL;
}

static char *devices_helper(const struct self *self)
{
	return libexec_file(self, "nvshim-devices", X_OK);
}

static char *preload_library(const struct self *self)
{
	return libexec_file(self, "libnvshim-preload.so", R_OK);
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

/* What the modules pass keeps for running its commands: its plan and the facts it used. */
struct passes {
	struct toolkit tk;
	struct lazy_devices devs;
	struct modules_plan mp;
	struct modules_context mctx;
	int tk_state; /* the toolkit's facts: 0 not read yet, 1 read, -1 not to be had */
};

static void passes_init(struct passes *ps, const struct session *s, const char *nvcc)
{
	memset(ps, 0, sizeof(*ps));
	toolkit_init(&ps->tk);
	ps->devs.s = s;
	devices_init(&ps->devs.d);
	modules_plan_init(&ps->mp);
	ps->mctx = (struct modules_context){ &s->cfg, &ps->tk, load_devices, &ps->devs, nvcc, s->self.exe_dir, NULL, NULL, NULL };
}

static void passes_release(struct passes *ps)
{
	modules_plan_release(&ps->mp);
	toolkit_release(&ps->tk);
	devices_release(&ps->devs.d);
}

/* The toolkit's facts, read once for all the passes (a failure warns once). */
static int passes_toolkit(struct passes *ps, const struct session *s, const char *nvcc)
{
	if (!ps->tk_state)
		ps->tk_state = toolkit_load(&ps->tk, nvcc, s->cfg.cache_dir) ? -1 : 1;
	return ps->tk_state > 0;
}

/* Runs the passes over the invocation, editing the plan. Fail open: a pass that cannot get
 * its facts changes nothing. With ps, the facts are kept there for the modules pass. */
static void run_passes(const struct session *s, const struct invocation *inv, const char *nvcc,
		       struct plan *plan, struct passes *ps, struct argv *before, struct argv *after)
{
	if (!targets_wanted(inv, &s->cfg))
		return;
	if (ps) {
		if (passes_toolkit(ps, s, nvcc)) {
			struct targets_context ctx = { &s->cfg, &ps->tk, load_devices, &ps->devs };
			targets_pass(inv, &ctx, plan, before, after);
		}
		return;
	}
	struct toolkit tk;
	struct lazy_devices devs = { .s = s };
	toolkit_init(&tk);
	devices_init(&devs.d);
	if (!toolkit_load(&tk, nvcc, s->cfg.cache_dir)) {
		struct targets_context ctx = { &s->cfg, &tk, load_devices, &devs };
		targets_pass(inv, &ctx, plan, before, after);
	}
	toolkit_release(&tk);
	devices_release(&devs.d);
}

/* The modules pass, on the command line the other passes made (after the link pass, so that a
 * split compile-and-link keeps what that pass added to the link). */
static void run_modules_pass(const struct session *s, const struct invocation *inv, const char *nvcc,
			     struct plan *plan, struct passes *ps)
{
	if (!modules_wanted(inv, &s->cfg) || !passes_toolkit(ps, s, nvcc))
		return;
	struct invocation now;
	invocation_parse(&now, plan->argv.v + 1, plan->argv.n - 1, env_get);
	modules_pass(&now, &ps->mctx, plan, &ps->mp);
	invocation_release(&now);
}

/* The launcher goes in front of every command the modules pass split the line into. */
static void modules_launcher(struct passes *ps, const struct plan *plan, const char *nvcc)
{
	if (!strcmp(plan->tool, nvcc) || ps->mp.ngroups < 2)
		return;
	for (size_t g = 0; g < ps->mp.ngroups; g++)
		argv_insert(&ps->mp.groups[g].argv, 0, plan->tool);
	if (ps->mp.link.n)
		argv_insert(&ps->mp.link, 0, plan->tool);
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

/* Where the toolkit's stub libcuda.so is, for a link pass. nvcc may be NULL (CC mode): then it
 * is looked for quietly, since a plain C link must not complain about a missing toolkit. */
static void link_context_init(struct link_context *ctx, const struct session *s, const char *nvcc)
{
	char *found = NULL, *how = NULL;
	memset(ctx, 0, sizeof(*ctx));
	ctx->cfg = &s->cfg;
	if (!nvcc) {
		FILE *null = fopen("/dev/null", "w");
		if (null) {
			diag_set_stream(null);
			if (locate_nvcc(&s->cfg, env_get, &s->self, &found, &how))
				found = NULL;
			diag_set_stream(NULL);
			fclose(null);
		}
		free(how);
	} else {
		ctx->toolkit_lib = link_toolkit_lib(nvcc);
	}
	ctx->stubs = link_find_stubs(nvcc ? nvcc : found, env_get);
	ctx->library_path = getenv("LIBRARY_PATH");
	free(found);
}

static void link_context_release(struct link_context *ctx)
{
	free((char *)ctx->stubs);
	free((char *)ctx->toolkit_lib);
	memset(ctx, 0, sizeof(*ctx));
}

/* The link pass over a request (when it is a link). Fail open: nothing it meets stops a build. */
static void run_link_pass(const struct session *s, struct link_request *req, const char *nvcc,
			  struct plan *plan, struct link_result *res)
{
	if (!s->cfg.link_lcuda)
		return;
	if (fault_inject("link")) {
		warning("the link pass did not run: injected fault (NVSHIM_FAULT); the link runs as "
			"given");
		return;
	}
	struct link_context ctx;
	link_context_init(&ctx, s, nvcc);
	link_pass(req, &ctx, plan, res);
	link_context_release(&ctx);
}

static void run_link_pass_nvcc(const struct session *s, const struct invocation *inv, const char *nvcc,
			       struct plan *plan, struct link_result *res)
{
	struct link_request req;
	link_request_init(&req);
	if (s->cfg.link_lcuda && link_request_from_nvcc(&req, inv))
		run_link_pass(s, &req, nvcc, plan, res);
	link_request_release(&req);
}

/* Routine notes of CC mode are shown at verbosity verbose; every other note is a rewrite. */
static void print_notes(const struct plan *plan)
{
	static const char *const routine[] = { "[cc.nvcc]", "[cc.translate]" };
	for (size_t i = 0; i < plan->notes.n; i++) {
		const char *note = plan->notes.v[i];
		size_t len = strlen(note);
		int quiet = 0;
		for (size_t k = 0; k < 2; k++) {
			size_t rl = strlen(routine[k]);
			quiet |= len >= rl && !strcmp(note + len - rl, routine[k]);
		}
		if (quiet)
			diag_note(VERBOSITY_VERBOSE, "%s", note);
		else
			diag_rewrite("%s", note);
	}
}

/* Runs the plan and logs it. With nothing to do afterwards nvshim replaces itself with the
 * tool; otherwise it waits. A run that nvshim may look at afterwards runs with its stderr held:
 * a link that may fail for want of -lcuda runs once more with `retry` added when it fails on an
 * undefined driver symbol (rule link.retry); a watched compile (`watch`, crash.h) goes to
 * crash_after_run(), which passes the stderr on and explains crashes and resource errors;
 * otherwise the stderr is passed on unchanged. */
/* After nvcc ran: the log line (log_file), and the exit status (1 when strict made a warning
 * an error). */
static int ran(const struct session *s, const struct plan *plan, const struct argv *argv_in, int status)
{
	if (s->cfg.log_file && *s->cfg.log_file) {
		struct logfile_entry e = { plan->tool, argv_in, &plan->argv, &plan->notes, status,
					   runner_now_ms() - s->start_ms };
		logfile_write(s->cfg.log_file, &e);
	}
	return status == 0 && diag_strict_errors() ? 1 : status;
}

static int execute(struct session *s, struct plan *plan, const struct argv *argv_in,
		   const struct argv *retry, const struct crash_context *watch)
{
	struct run_result res = { 127, 0, 0 };
	int log = s->cfg.log_file && *s->cfg.log_file;
	int hold = (retry && retry->n) || watch;

	if (!log && !plan->options_file && !hold) {
		fflush(NULL);
		runner_exec(plan->tool, &plan->argv);
		res.status = 127;
	} else if (hold) {
		char *err = NULL;
		runner_run_held(plan->tool, &plan->argv, &res, &err);
		char *sym = res.status && retry && retry->n ? link_undefined_driver_symbol(err ? err : "")
							    : NULL;
		if (sym) {
			char *added = argv_to_shell(retry);
			plan_note(plan, "link.retry", "the link failed on an undefined reference to %s: "
				  "running it again with %s", sym, added);
			diag_rewrite("%s", plan->notes.v[plan->notes.n - 1]);
			free(added);
			free(sym);
			argv_pushn(&plan->argv, retry->v, retry->n);
			runner_run(plan->tool, &plan->argv, &res);
		} else if (watch) {
			crash_after_run(watch, plan, &res, &err);
		} else if (err) {
			runner_write_stderr(err);
		}
		free(err);
	} else {
		runner_run(plan->tool, &plan->argv, &res);
	}

	return ran(s, plan, argv_in, res.status);
}

/* Runs what the modules pass planned: compiles with stderr held, a probe on an
 * architecture-related failure, and one retry planned again with what the probe learnt (only
 * the notes not said already are said). Logs like execute(). */
/* The modules pass's hook for a command that failed: the crash module looks at it (crash.h). */
static void modules_failed(void *arg, const struct argv *ran, struct run_result *res, char **held)
{
	struct plan p;
	plan_init(&p, ran->v[0], ran->v + 1, ran->n - 1);
	crash_after_run(arg, &p, res, held);
	plan_release(&p);
}

static void watch_modules(struct passes *ps, const struct crash_context *watch)
{
	ps->mctx.failed = watch ? modules_failed : NULL;
	ps->mctx.failed_arg = (void *)watch;
}

static int execute_modules(struct session *s, struct plan *plan, struct passes *ps, const char *nvcc,
			   const struct argv *argv_in, struct link_result *link,
			   const struct crash_context *watch)
{
	struct run_result res = { 127, 0, 0 };
	watch_modules(ps, watch);
	if (modules_run(&ps->mp, plan, &ps->mctx, 1, &link->retry, &res) == MODULES_RETRY) {
		struct argv said = ARGV_INIT;
		char *launcher = strcmp(plan->tool, nvcc) ? xstrdup(plan->tool) : NULL;
		argv_copy(&said, &plan->notes);
		passes_release(ps);
		passes_init(ps, s, nvcc);
		plan_release(plan);
		plan_init(plan, nvcc, s->args.v, s->args.n);
		link_result_release(link);
		link_result_init(link);
		struct invocation inv;
		invocation_parse(&inv, s->args.v, s->args.n, env_get);
		run_passes(s, &inv, nvcc, plan, ps, NULL, NULL);
		run_link_pass_nvcc(s, &inv, nvcc, plan, link);
		run_modules_pass(s, &inv, nvcc, plan, ps);
		invocation_release(&inv);
		for (size_t i = 0; i < plan->notes.n; i++) {
			int seen = 0;
			for (size_t k = 0; k < said.n && !seen; k++)
				seen = !strcmp(said.v[k], plan->notes.v[i]);
			if (!seen)
				diag_rewrite("%s", plan->notes.v[i]);
		}
		argv_release(&said);
		if (ps->mp.ngroups < 2 && plan_rewritten(plan, s->args.v, s->args.n))
			plan_finalize(plan, s->cfg.options_file_threshold, NULL);
		if (launcher)
			launcher_apply(plan, launcher);
		free(launcher);
		modules_launcher(ps, plan, nvcc);
		watch_modules(ps, watch);
		modules_run(&ps->mp, plan, &ps->mctx, 0, &link->retry, &res);
	}
	return ran(s, plan, argv_in, res.status);
}

/* Puts the launcher setting's program in front of nvcc when this invocation compiles. Returns 0,
 * or -1 after a warning when the launcher cannot be found (nvcc then runs without it). */
static int add_launcher(const struct session *s, int wanted, struct plan *plan)
{
	if (!s->cfg.launcher || !*s->cfg.launcher || !wanted)
		return 0;
	char *path, *why;
	if (launcher_find(s->cfg.launcher, env_get, &s->self, &path, &why)) {
		const struct config_item *item = config_item_find("launcher");
		warning("%s (%s); nvcc runs without it", why,
			s->cfg.origin[item - config_items]);
		free(why);
		return -1;
	}
	launcher_apply(plan, path);
	diag_note(VERBOSITY_VERBOSE, "runs nvcc through the launcher %s", path);
	free(path);
	return 0;
}

/* nvcc mode from the passes' plan on: the notes, the gates, the launcher, the line (an options
 * file when long), then the run (the modules pass's commands, crash watching). `name` and
 * `given`: the command nvshim was given (nvcc, or the host compiler's name in CC mode), for the
 * log and to tell whether the line changed. */
static int nvcc_execute(struct session *s, const char *nvcc, const struct invocation *inv,
			struct plan *plan, struct passes *ps, struct link_result *link, const char *name,
			char **given, size_t ngiven)
{
	int wants_launcher = launcher_wanted(inv);
	/* Watched: nvcc's stderr is held, to be looked at when it fails (crash.h). */
	int watch = crash_wanted(inv, &s->cfg);
	print_notes(plan);
	if (!plan->notes.n)
		diag_note(VERBOSITY_VERBOSE, "nothing to change: the arguments go to nvcc as given");
	/* Known-bad combinations of toolkit, host compiler and libraries (gates.h). */
	struct gates_context gc = { &s->cfg, inv, nvcc, s->self.exe_dir };
	gates_check(&gc);
	/* A compile the modules pass may probe, or several commands: it runs them (and passes the
	 * long lines of a split through options files itself). */
	int modules = ps->mp.active && (ps->mp.hold || ps->mp.ngroups > 1);
	/* Only a line nvshim changed can be too long: the one it was given was not. */
	if (ps->mp.ngroups < 2 && plan_rewritten(plan, given, ngiven) &&
	    plan_finalize(plan, s->cfg.options_file_threshold, NULL) > 0)
		diag_note(VERBOSITY_VERBOSE, "the command line is passed in %s", plan->options_file);
	int status = 1;
	if (!add_launcher(s, wants_launcher, plan) || !diag_strict_errors()) {
		if (modules)
			modules_launcher(ps, plan, nvcc);
		struct argv in = ARGV_INIT;
		argv_push(&in, name);
		argv_pushn(&in, given, ngiven);
		struct crash_context cc = { &s->cfg, nvcc, &s->args, inv };
		status = modules ? execute_modules(s, plan, ps, nvcc, &in, link, watch ? &cc : NULL)
				 : execute(s, plan, &in, &link->retry, watch ? &cc : NULL);
		argv_release(&in);
		/* Kernels nvcc builds that no launch accepts (a stack past the limit). */
		if (!status && watch && s->cfg.explain_resources)
			crash_check_stacks(inv);
	}
	return status;
}

int commands_nvcc(int n, char **args)
{
	struct session s;
	struct plan plan;
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
	struct link_result link;
	link_result_init(&link);
	run_link_pass_nvcc(&s, &inv, nvcc, &plan, &link);
	run_modules_pass(&s, &inv, nvcc, &plan, &ps);
	int status = nvcc_execute(&s, nvcc, &inv, &plan, &ps, &link, nvcc, args, (size_t)n);
	invocation_release(&inv);
	passes_release(&ps);
	link_result_release(&link);
	plan_release(&plan);
	free(nvcc);
	free(how);
	session_release(&s);
	return status;
}

/* The usage lines of `nvshim help` and the man page. */
static const struct {
	const char *usage;
	const char *what;
} usage_lines[] = {
	{ "nvcc ARGS...", "(nvshim run under the name nvcc) acts as nvcc" },
	{ "nvshim ARGS...", "acts as nvcc with ARGS" },
	{ "nvshim nvcc ARGS...", "the same, for ARGS that start with a command word" },
	{ "nvshim help [--man]", "this text (--man: the nvshim(1) manual page, in troff)" },
	{ "nvshim version", "nvshim's version and the nvcc it runs" },
	{ "nvshim config [--template]", "every setting, its value and where it came from" },
	{ "nvshim explain ARGS...", "the command nvshim would run for these nvcc ARGS, and why; runs nothing" },
	{ "nvshim doctor", "checks the setup: toolkit, targets, configuration" },
	{ "nvshim env", "shell lines that put nvshim in front of nvcc: eval \"$(nvshim env)\"" },
	{ "cc|c++|gcc|g++|clang|clang++ ARGS...",
	  "(nvshim under that name, or `nvshim cc ARGS`) acts as the host compiler: CUDA sources go "
	  "to nvcc with gcc's options translated, links get -lcuda when they need it" },
	{ "nvshim explain cc ARGS...", "what CC mode would run, and why" },
	{ "nvshim fingerprint [--show]",
	  "a key that changes when nvshim's rewrite could change, for a compiler cache that runs "
	  "nvshim; also nvcc --nvshim-fingerprint" },
};

static const char *type_name(const struct config_item *item)
{
	switch (item->type) {
	case CONF_STRING:
		return "text";
	case CONF_PATH:
		return "path";
	case CONF_BOOL:
		return "true or false";
	case CONF_VERBOSITY:
		return "quiet, normal, verbose or debug";
	case CONF_SIZE:
		return "bytes";
	case CONF_CHOICE:
		return item->choices;
	}
	return "";
}

/* Text for troff: backslashes and hyphens escaped, no line starting with a control character. */
static void troff_text(FILE *out, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", out);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", out);
		else if (*s == '-')
			fputs("\\-", out);
		else
			fputc(*s, out);
	}
}

/* nvshim(1), from the same tables as `nvshim help`: the commands and the settings. */
static void write_man(FILE *out)
{
	struct config defaults;
	config_init(&defaults, NULL);
	fprintf(out, ".\\\" nvshim(1), generated by `nvshim help --man` from nvshim's tables.\n"
		     ".TH NVSHIM 1 \"\" \"nvshim %s\" \"User Commands\"\n"
		     ".SH NAME\nnvshim \\- a transparent stand\\-in for nvcc\n.SH SYNOPSIS\n",
		NVSHIM_VERSION);
	for (size_t i = 0; i < sizeof(usage_lines) / sizeof(usage_lines[0]); i++) {
		fputs(i ? ".br\n" : "", out);
		fputs("\\fB", out);
		troff_text(out, usage_lines[i].usage);
		fputs("\\fR\n", out);
	}
	fputs(".SH DESCRIPTION\n"
	      "nvshim stands where a build names a CUDA compiler (\\fBCUDACXX\\fR, "
	      "\\fBCMAKE_CUDA_COMPILER\\fR, \\fBPYTORCH_NVCC\\fR, an \\fBnvcc\\fR first on "
	      "\\fBPATH\\fR). It reads the invocation, rewrites what would fail (GPU targets the "
	      "installed nvcc does not accept, \\fB\\-arch=native\\fR without a GPU, ...), explains "
	      "every rewrite on standard error in nvcc's message style, and runs the real nvcc. "
	      "With nothing to rewrite, nvcc gets the arguments as given and its own standard "
	      "input, output and error.\n"
	      ".SH COMMANDS\n",
	      out);
	for (size_t i = 0; i < sizeof(usage_lines) / sizeof(usage_lines[0]); i++) {
		fputs(".TP\n\\fB", out);
		troff_text(out, usage_lines[i].usage);
		fputs("\\fR\n", out);
		troff_text(out, usage_lines[i].what);
		fputs("\n", out);
	}
	fputs(".SH SETTINGS\n"
	      "Each setting is read from INI files (\\fIname\\fR = \\fIvalue\\fR), from the "
	      "environment as \\fBNVSHIM_\\fR\\fINAME\\fR and from \\fB\\-\\-nvshim\\-\\fR\\fIname"
	      "\\fR=\\fIvalue\\fR options, which are removed before nvcc runs.\n",
	      out);
	for (size_t i = 0; i < config_nitems; i++) {
		const struct config_item *item = &config_items[i];
		char *v = item->offset == offsetof(struct config, cache_dir) ? xstrdup("")
									     : config_format(&defaults, item);
		fprintf(out, ".TP\n\\fB%s\\fR (", item->name);
		troff_text(out, type_name(item));
		fputs("; default: ", out);
		troff_text(out, *v ? v : "none");
		fputs(")\n", out);
		troff_text(out, item->help);
		fputs("\n", out);
		free(v);
	}
	config_release(&defaults);
	fputs(".SH FILES\n"
	      "Lowest precedence first; a later file overrides an earlier one.\n"
	      ".TP\n\\fI<prefix>/etc/nvshim.ini\\fR\nThe installed defaults, found relative to the "
	      "nvshim executable.\n"
	      ".TP\n\\fI/etc/nvshim.ini\\fR\nThe machine's settings.\n"
	      ".TP\n\\fI~/.config/nvshim/nvshim.ini\\fR\nThe user's settings "
	      "(\\fB$XDG_CONFIG_HOME\\fR/nvshim/nvshim.ini when that is set).\n"
	      ".TP\n\\fI.nvshim.ini\\fR\nThe project's settings: the first found from the working "
	      "directory upwards. It cannot choose the programs that run.\n"
	      ".TP\n\\fI<prefix>/libexec/nvshim/bin/nvcc\\fR\nnvshim under the name nvcc: put this "
	      "directory first on \\fBPATH\\fR, or point \\fBCUDACXX\\fR at it.\n"
	      ".SH ENVIRONMENT\n"
	      ".TP\n\\fBNVSHIM_\\fR\\fINAME\\fR\nA setting (see SETTINGS).\n"
	      ".TP\n\\fBNVSHIM_DEVICES\\fR\nThe GPUs' compute capabilities (\\fB90,80\\fR; empty for "
	      "none) instead of detecting them: for build machines without a GPU.\n"
	      ".TP\n\\fBNVSHIM_DEPTH\\fR\nSet by nvshim for the nvcc it runs; an nvshim that finds it "
	      "set stops, instead of starting itself without end.\n"
	      ".TP\n\\fBCUDA_HOME\\fR, \\fBCUDA_PATH\\fR, \\fBPATH\\fR\nWhere the real nvcc is looked "
	      "for when \\fBreal_nvcc\\fR is empty.\n"
	      ".SH EXAMPLES\n"
	      ".nf\n"
	      "eval \"$(nvshim env)\"              # nvcc, CUDACXX and PYTORCH_NVCC are nvshim\n"
	      "NVSHIM_LAUNCHER=ccache make       # nvshim, then ccache, then nvcc\n"
	      "nvshim explain \\-c k.cu \\-arch=sm_70\n"
	      ".fi\n"
	      ".SH SEE ALSO\n"
	      "\\fBnvcc\\fR(1), \\fBccache\\fR(1), \\fBsccache\\fR(1)\n",
	      out);
}

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

static int cmd_run(int n, char **args)
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
	lib = preload_library(&s.self);
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

static int cmd_help(int n, char **args)
{
	if (n == 1 && !strcmp(args[0], "--man")) {
		write_man(stdout);
		return 0;
	}
	printf("nvshim %s: a transparent stand-in for nvcc\n\nUsage:\n", NVSHIM_VERSION);
	for (size_t i = 0; i < sizeof(usage_lines) / sizeof(usage_lines[0]); i++)
		printf("  %-28s  %s\n", usage_lines[i].usage, usage_lines[i].what);
	printf("\nSettings (INI files, NVSHIM_<NAME> variables, --nvshim-<name>=<value> options):\n");
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

static int cc_explain(const char *name, int n, char **args);
static void print_link_line(const struct link_result *link, int is_link);

static int cmd_explain(int n, char **args)
{
	struct session s;
	struct invocation inv;
	struct plan plan;
	char *nvcc = NULL, *how = NULL;

	if (n >= 1 && commands_is_cc_name(args[0]))
		return cc_explain(args[0], n - 1, args + 1);
	session_init(&s, n, args);
	if (locate_nvcc(&s.cfg, env_get, &s.self, &nvcc, &how)) {
		session_release(&s);
		return 1;
	}
	struct argv before = ARGV_INIT, after = ARGV_INIT;
	invocation_parse(&inv, s.args.v, s.args.n, env_get);
	plan_init(&plan, nvcc, s.args.v, s.args.n);
	struct passes ps;
	passes_init(&ps, &s, nvcc);
	run_passes(&s, &inv, nvcc, &plan, &ps, &before, &after);
	struct link_result link;
	link_result_init(&link);
	run_link_pass_nvcc(&s, &inv, nvcc, &plan, &link);
	run_modules_pass(&s, &inv, nvcc, &plan, &ps);
	add_launcher(&s, launcher_wanted(&inv), &plan);
	modules_launcher(&ps, &plan, nvcc);

	printf("real nvcc : %s (found through %s)\n", nvcc, how);
	if (strcmp(plan.tool, nvcc))
		printf("launcher  : %s\n", plan.tool);
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
	struct link_request req;
	link_request_init(&req);
	print_link_line(&link, s.cfg.link_lcuda && link_request_from_nvcc(&req, &inv));
	link_request_release(&req);
	link_result_release(&link);
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


/* ---- CC/CXX mode: nvshim as the host compiler ---- */

static const char *const cc_names[] = { "cc", "c++", "gcc", "g++", "clang", "clang++" };

int commands_is_cc_name(const char *name)
{
	for (size_t i = 0; i < sizeof(cc_names) / sizeof(cc_names[0]); i++)
		if (!strcmp(name, cc_names[i]))
			return 1;
	return 0;
}

static int cc_is_cxx(const char *name)
{
	size_t len = strlen(name);
	return len >= 2 && !strcmp(name + len - 2, "++");
}

/* The C++ driver of a C driver's family: nvcc needs a C++ host compiler. */
static const char *cc_counterpart(const char *name)
{
	if (!strcmp(name, "cc"))
		return "c++";
	if (!strcmp(name, "gcc"))
		return "g++";
	if (!strcmp(name, "clang"))
		return "clang++";
	return name;
}

/* The real compiler: the setting when it is set, else the first `name` on PATH that is not
 * nvshim itself. xmalloc'ed; NULL after an error (none when quiet). *how says where from. */
static char *locate_host(const struct session *s, const char *name, const char *setting_name,
			 const char *setting, int quiet, const char **how)
{
	int is_self;
	*how = "PATH";
	if (setting && *setting) {
		*how = setting_name;
		if (locate_is_candidate(&s->self, setting, &is_self))
			return xstrdup(setting);
		if (!quiet)
			error("%s '%s' %s", setting_name, setting,
			      is_self ? "is nvshim itself; point it at the real compiler"
				      : "is not an executable file");
		return NULL;
	}
	char *found = locate_on_path(&s->self, env_get, name);
	if (found)
		return found;
	if (!quiet)
		error("cannot find the real %s: none on PATH other than nvshim itself; set %s (or "
		      "NVSHIM_%s) to the compiler", name, setting_name,
		      !strcmp(setting_name, "host_cc") ? "HOST_CC" : "HOST_CXX");
	return NULL;
}

/* What CC mode will run for these arguments: the plan, and what a failed link would add. */
struct cc_run {
	char *real;        /* the real host compiler */
	const char *how;   /* where it came from */
	char *nvcc;        /* set when CUDA inputs go to nvcc */
	char *nvcc_how;
	struct hostcc hc;
	struct argv nvargs; /* the arguments for nvcc (CUDA inputs) */
	struct passes ps;   /* nvcc mode's passes over them */
	struct plan plan;
	struct link_result link;
};

static int cc_plan(struct session *s, const char *name, struct cc_run *r)
{
	int cxx = cc_is_cxx(name);
	memset(r, 0, sizeof(*r));
	link_result_init(&r->link);
	argv_init(&r->nvargs);
	passes_init(&r->ps, s, NULL);
	r->real = locate_host(s, name, cxx ? "host_cxx" : "host_cc", cxx ? s->cfg.host_cxx : s->cfg.host_cc,
			      0, &r->how);
	if (!r->real)
		return -1;
	hostcc_parse(&r->hc, s->args.v, s->args.n);
	if (!r->hc.ncuda || r->hc.mode == HOSTCC_INFO) {
		/* Not CUDA: the real compiler, the arguments as given; links get the link pass. */
		plan_init(&r->plan, r->real, s->args.v, s->args.n);
		struct link_request req;
		link_request_init(&req);
		if (s->cfg.link_lcuda && link_request_from_hostcc(&req, &r->hc))
			run_link_pass(s, &req, NULL, &r->plan, &r->link);
		link_request_release(&req);
		return 0;
	}
	if (locate_nvcc(&s->cfg, env_get, &s->self, &r->nvcc, &r->nvcc_how))
		return -1;
	char *ccbin = NULL;
	const char *how;
	if (!getenv("NVCC_CCBIN"))
		ccbin = cxx ? xstrdup(r->real)
			    : locate_host(s, cc_counterpart(name), "host_cxx", s->cfg.host_cxx, 1, &how);
	struct argv notes = ARGV_INIT;
	hostcc_translate(&r->hc, ccbin, &r->nvargs, &notes);
	/* From here on as in nvcc mode: every pass (targets, link, modules). */
	plan_init(&r->plan, r->nvcc, r->nvargs.v, r->nvargs.n);
	argv_pushn(&r->plan.notes, notes.v, notes.n);
	passes_release(&r->ps);
	passes_init(&r->ps, s, r->nvcc);
	struct invocation inv;
	invocation_parse(&inv, r->nvargs.v, r->nvargs.n, env_get);
	run_passes(s, &inv, r->nvcc, &r->plan, &r->ps, NULL, NULL);
	run_link_pass_nvcc(s, &inv, r->nvcc, &r->plan, &r->link);
	run_modules_pass(s, &inv, r->nvcc, &r->plan, &r->ps);
	invocation_release(&inv);
	argv_release(&notes);
	free(ccbin);
	return 0;
}

static void cc_run_release(struct cc_run *r)
{
	free(r->real);
	free(r->nvcc);
	free(r->nvcc_how);
	hostcc_release(&r->hc);
	argv_release(&r->nvargs);
	passes_release(&r->ps);
	plan_release(&r->plan);
	link_result_release(&r->link);
}

int commands_cc(const char *name, int n, char **args)
{
	struct session s;
	struct cc_run r;
	int depth = locate_depth(env_get);

	/* Started by a tool nvshim runs (nvcc's host compiler steps): the real compiler only. */
	session_init_report(&s, n, args, depth == 0);
	if (depth > 0) {
		const char *how;
		int cxx = cc_is_cxx(name);
		char *real = locate_host(&s, name, cxx ? "host_cxx" : "host_cc",
					 cxx ? s.cfg.host_cxx : s.cfg.host_cc, 0, &how);
		int status = 1;
		if (real) {
			struct argv a = ARGV_INIT;
			argv_push(&a, real);
			argv_pushn(&a, s.args.v, s.args.n);
			fflush(NULL);
			runner_exec(real, &a);
			argv_release(&a);
			free(real);
			status = 127;
		}
		session_release(&s);
		return status;
	}
	if (diag_strict_errors()) {
		session_release(&s);
		return 1;
	}
	enter_child_depth();
	if (cc_plan(&s, name, &r)) {
		cc_run_release(&r);
		session_release(&s);
		return 1;
	}
	diag_note(VERBOSITY_VERBOSE, "runs %s (%s)", r.plan.tool, r.nvcc ? "CUDA inputs: nvcc" : r.how);
	int status;
	if (r.nvcc) {
		/* nvcc mode on the translated line: the session's arguments become nvcc's (the
		 * modules pass plans again from them, crash bundles record them). */
		argv_release(&s.args);
		argv_copy(&s.args, &r.nvargs);
		struct invocation inv;
		invocation_parse(&inv, s.args.v, s.args.n, env_get);
		status = nvcc_execute(&s, r.nvcc, &inv, &r.plan, &r.ps, &r.link, name, args, (size_t)n);
		invocation_release(&inv);
	} else {
		print_notes(&r.plan);
		struct argv in = ARGV_INIT;
		argv_push(&in, name);
		argv_pushn(&in, args, (size_t)n);
		status = execute(&s, &r.plan, &in, &r.link.retry, NULL);
		argv_release(&in);
	}
	cc_run_release(&r);
	session_release(&s);
	return status;
}

static void print_link_line(const struct link_result *link, int is_link)
{
	if (!is_link)
		return;
	if (link->changed) {
		printf("link      : -lcuda added (%s)\n", link->symbol);
	} else if (link->retry.n) {
		char *r = argv_to_shell(&link->retry);
		printf("link      : no driver symbol left undefined by the inputs read; a link that fails "
		       "on one runs again with %s\n", r);
		free(r);
	} else {
		printf("link      : nothing to add\n");
	}
}

/* `nvshim explain cc ARGS...`: what CC mode would run, and why. */
static int cc_explain(const char *name, int n, char **args)
{
	struct session s;
	struct cc_run r;
	session_init(&s, n, args);
	if (cc_plan(&s, name, &r)) {
		cc_run_release(&r);
		session_release(&s);
		return 1;
	}
	printf("host compiler: %s (found through %s)\n", r.real, r.how);
	printf("mode      : %s %s\n", name, hostcc_mode_name(r.hc.mode));
	printf("inputs    :");
	for (size_t i = 0; i < r.hc.n; i++)
		if (r.hc.v[i].input)
			printf(" %s (%s)", r.hc.args.v[r.hc.v[i].pos], invocation_input_kind_name(r.hc.v[i].kind));
	printf("%s\n", r.hc.ninputs ? "" : " none");
	if (r.nvcc)
		printf("runs      : nvcc, %s (found through %s): CUDA inputs\n", r.nvcc, r.nvcc_how);
	else
		printf("runs      : the host compiler, with the arguments as given%s\n",
		       r.hc.mode == HOSTCC_LINK ? " (and the link pass)" : "");
	struct link_request req;
	link_request_init(&req);
	int is_link = r.nvcc ? r.hc.mode == HOSTCC_LINK : link_request_from_hostcc(&req, &r.hc);
	link_request_release(&req);
	print_link_line(&r.link, is_link && s.cfg.link_lcuda);
	if (!r.plan.notes.n)
		printf("notes     : none\n");
	for (size_t i = 0; i < r.ps.mp.explain.n; i++)
		printf("%-10s: %s\n", i ? "" : "modules", r.ps.mp.explain.v[i]);
	for (size_t i = 0; i < r.plan.notes.n; i++)
		printf("note      : %s\n", r.plan.notes.v[i]);
	print_args("command", &r.plan.argv);
	int rc = diag_strict_errors() ? 1 : 0;
	cc_run_release(&r);
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

/* Whether libnvshim-preload.so is in effect in this environment (LD_PRELOAD). */
static void doctor_preload(const struct self *self)
{
	char *lib = preload_library(self);
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
	if (s.cfg.launcher && *s.cfg.launcher) {
		char *lpath, *why;
		if (launcher_find(s.cfg.launcher, env_get, &s.self, &lpath, &why)) {
			doctor_problem("%s: compilations run without it", why);
			free(why);
		} else {
			printf("launcher  : %s (runs nvcc for every compilation)\n", lpath);
			free(lpath);
		}
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
	doctor_preload(&s.self);
	if (locate_depth(env_get))
		doctor_problem("%s is set: this shell runs inside an nvshim-started nvcc", LOCATE_DEPTH_VAR);
	printf("%s\n", problems ? "problems found" : "no problems found");
	free(nvcc);
	free(how);
	session_release(&s);
	return problems ? 1 : 0;
}

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
static int cmd_env(int n, char **args)
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

/* For a compiler cache that runs nvshim: see launcher.h. */
static int cmd_fingerprint(int n, char **args)
{
	struct session s;
	char *nvcc = NULL, *how = NULL;
	int show = n == 1 && !strcmp(args[0], "--show");
	if (n && !show)
		return error("usage: nvshim fingerprint [--show]");
	session_init(&s, 0, NULL);
	int rc = locate_nvcc(&s.cfg, env_get, &s.self, &nvcc, &how) ? 1 : 0;
	struct lazy_devices devs = { .s = &s };
	devices_init(&devs.d);
	char *text = launcher_fingerprint_text(&s.cfg, s.self.exe, nvcc, load_devices(&devs));
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
	devices_release(&devs.d);
	free(nvcc);
	free(how);
	session_release(&s);
	return rc;
}

static const struct {
	const char *name;
	int (*fn)(int n, char **args);
} commands[] = {
	{ "config", cmd_config }, { "doctor", cmd_doctor },   { "env", cmd_env },
	{ "explain", cmd_explain }, { "fingerprint", cmd_fingerprint }, { "help", cmd_help },
	{ "nvcc", commands_nvcc }, { "run", cmd_run }, { "version", cmd_version },
};

int commands_main(int argc, char **argv)
{
	const char *base = argc > 0 ? lbasename(argv[0]) : "nvshim";
	/* ccache's compiler_check runs `%compiler% --nvshim-fingerprint`, under any name. */
	if (argc == 2 && !strcmp(argv[1], "--nvshim-fingerprint"))
		return cmd_fingerprint(0, NULL);
	if (commands_is_cc_name(base))
		return commands_cc(base, argc - 1, argv + 1);
	if (!strcmp(base, "nvshim") && argc > 1 && commands_is_cc_name(argv[1]))
		return commands_cc(argv[1], argc - 2, argv + 2);
	if (!strcmp(base, "nvshim") && argc > 1) {
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			if (!strcmp(argv[1], commands[i].name))
				return commands[i].fn(argc - 2, argv + 2);
	}
	return commands_nvcc(argc > 0 ? argc - 1 : 0, argv + (argc > 0));
}
