#include "commands/commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

#include "base/diag.h"
#include "machine/launcher.h"
#include "diagnose/api.h"
#include "upgrade/compat.h"
#include "upgrade/compat_dryrun.h"
#include "modes/cc.h"
#include "modes/nvcc.h"

static void print_args(const char *label, const struct argv *a)
{
	char *line = argv_to_shell(a);
	printf("%-10s: %s\n", label, line);
	free(line);
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
	if (!r.nvcc && s.cfg.explain_api && api_host_wanted(&r.hc))
		printf("api       : its stderr held: a failed compile's errors about removed or changed "
		       "CUDA APIs get notes (explain_api)\n");
	if (!r.nvcc && api_host_wanted(&r.hc)) {
		char *c = compat_explain(&s.cfg, s.self.exe_dir);
		printf("compat    : %s\n", c);
		free(c);
		/* sccache's -E of a compile: the cached verdict (no check is run here) */
		struct api_context ac = { &s.cfg, NULL, s.self.exe_dir, session_quiet_nvcc, &s };
		struct compat_context cx = { &ac, session_env, 1 };
		char *dry = NULL;
		compat_dryrun_host_apply(&cx, &r.hc, &r.plan, 0, &dry);
		if (dry)
			printf("compat    : %s\n", dry);
		free(dry);
	}
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

/* `nvshim explain ARGS...`: the command nvshim would run for these nvcc arguments and why. */
int cmd_explain(int n, char **args)
{
	struct session s;
	struct invocation inv;
	struct plan plan;
	char *nvcc = NULL, *how = NULL;

	if (n >= 1 && cc_is_name(args[0]))
		return cc_explain(args[0], n - 1, args + 1);
	/* `nvshim explain api NAME...`: the API table's entries (explain_api.c). */
	if (n >= 1 && !strcmp(args[0], "api"))
		return cmd_explain_api(n - 1, args + 1);
	session_init(&s, n, args);
	if (locate_nvcc(&s.cfg, session_env, &s.self, &nvcc, &how)) {
		session_release(&s);
		return 1;
	}
	struct argv before = ARGV_INIT, after = ARGV_INIT;
	invocation_parse(&inv, s.args.v, s.args.n, session_env);
	plan_init(&plan, nvcc, s.args.v, s.args.n);
	struct nvcc_passes ps;
	nvcc_passes_init(&ps, &s, nvcc);
	struct link_result link;
	link_result_init(&link);
	int retargeted = nvcc_plan(&s, &inv, nvcc, &plan, &ps, &link, &before, &after);
	/* A --dryrun or -E: the layered compile's, when the cached verdict says so (compat_dryrun.h;
	 * explain runs no check). */
	char *dry = NULL;
	if ((inv.dryrun || inv.mode == MODE_PREPROCESS) && !ps.mp.split) {
		struct api_context ac = { &s.cfg, nvcc, s.self.exe_dir, NULL, NULL };
		struct compat_context cx = { &ac, session_env, 0 };
		compat_dryrun_apply(&cx, &plan, 0, &dry);
	}
	/* What the threads step would choose now; nothing is taken. */
	struct threads_hold th;
	threads_hold_init(&th);
	unsigned threads = nvcc_threads_step(&s, &inv, &plan, &th, 0, &ps, nvcc);
	char *memory = nvcc_memory_step(&s, &inv, &th, 0);
	session_add_launcher(&s, launcher_wanted(&inv), &plan);
	nvcc_modules_launcher(&ps, &plan, nvcc);

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
		printf("       -> : %s\n",
		       after.n ? a : retargeted ? "(none: nvcc builds for its default)" : "(unchanged)");
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
	if (ps.mp.split) {
		for (size_t g = 0; g < ps.mp.ngroups; g++)
			print_args("command", &ps.mp.groups[g].argv);
		if (ps.mp.link.n)
			print_args("command", &ps.mp.link);
	} else {
		print_args("command", &plan.argv);
	}
	if (threads > 1)
		printf("threads   : --threads %u in NVCC_APPEND_FLAGS (as the machine is now; see the "
		       "threads.auto note)\n", threads);
	if (memory) {
		printf("memory    : heavy stages start when their expected peak fits a budget of %s\n", memory);
		char *est = nvcc_memory_estimates(&s);
		printf("estimates : %s\n", est);
		free(est);
	} else {
		printf("memory    : no budget\n");
	}
	free(memory);
	if (ps.mp.hold)
		printf("on failure: an architecture-related error is probed (each target on its own) and "
		       "the command retried once\n");
	if (dry) {
		printf("compat    : %s\n", dry);
		free(dry);
	}
	/* The compatibility layer (compat.h): only for a compile whose stderr is held. */
	if (crash_wanted(&inv, &s.cfg) && inv.ninputs) {
		char *c = compat_explain(&s.cfg, s.self.exe_dir);
		printf("compat    : %s\n", c);
		free(c);
	}

	nvcc_passes_release(&ps);
	plan_release(&plan);
	invocation_release(&inv);
	free(nvcc);
	free(how);
	int rc = diag_strict_errors() ? 1 : 0;
	session_release(&s);
	return rc;
}
