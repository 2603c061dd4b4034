#include "modes/nvcc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libiberty.h>

#include "model/arch.h"
#include "buildwide/build.h"
#include "base/diag.h"
#include "base/fault.h"
#include "machine/launcher.h"
#include "machine/view.h"
#include "buildwide/once.h"
#include "base/runner.h"
#include "base/strbuf.h"
#include "buildwide/stats.h"
#include "buildwide/memgate.h"
#include "buildwide/slots.h"
#include "buildwide/threads.h"
#include "passes/gates.h"
#include "passes/targets.h"
#include "upgrade/compat.h"
#include "upgrade/compat_dryrun.h"
#include "upgrade/linefix.h"
#include "upgrade/layout.h"
#include "model/outputs.h"

void nvcc_passes_init(struct nvcc_passes *ps, const struct session *s, const char *nvcc)
{
	memset(ps, 0, sizeof(*ps));
	toolkit_init(&ps->tk);
	session_devices_init(&ps->devs, s);
	modules_plan_init(&ps->mp);
	ps->mctx = (struct modules_context){ &s->cfg, &ps->tk, session_devices_load, &ps->devs, nvcc, s->self.exe_dir, NULL, NULL, NULL, 0 };
}

void nvcc_passes_release(struct nvcc_passes *ps)
{
	modules_plan_release(&ps->mp);
	toolkit_release(&ps->tk);
	session_devices_release(&ps->devs);
}

/* The toolkit's facts, read once for all the passes (a failure warns once). */
static int nvcc_passes_toolkit(struct nvcc_passes *ps, const struct session *s, const char *nvcc)
{
	if (!ps->tk_state)
		ps->tk_state = toolkit_load(&ps->tk, nvcc, s->cfg.cache_dir) ? -1 : 1;
	return ps->tk_state > 0;
}

/* The targets pass (targets.h); 1 if it rewrote the target options. Fail open: without the
 * toolkit's facts it changes nothing. */
static int nvcc_targets_pass(const struct session *s, const struct invocation *inv, const char *nvcc,
			      struct plan *plan, struct nvcc_passes *ps, struct argv *before, struct argv *after)
{
	if (!targets_wanted(inv, &s->cfg) || !nvcc_passes_toolkit(ps, s, nvcc))
		return 0;
	struct targets_context ctx = { &s->cfg, &ps->tk, session_devices_load, &ps->devs };
	return targets_pass(inv, &ctx, plan, before, after);
}

/* The modules pass, on the command line the other passes made (after the link pass, so that a
 * split compile-and-link keeps what that pass added to the link). */
static void nvcc_modules_pass(const struct session *s, const struct invocation *inv, const char *nvcc,
			     struct plan *plan, struct nvcc_passes *ps)
{
	if (!modules_wanted(inv, &s->cfg) || !nvcc_passes_toolkit(ps, s, nvcc))
		return;
	struct invocation now;
	invocation_parse(&now, plan->argv.v + 1, plan->argv.n - 1, session_env);
	modules_pass(&now, &ps->mctx, plan, &ps->mp);
	invocation_release(&now);
}

/* The launcher goes in front of every command the modules pass split the line into. */
void nvcc_modules_launcher(struct nvcc_passes *ps, const struct plan *plan, const char *nvcc)
{
	if (!strcmp(plan->tool, nvcc) || !ps->mp.split)
		return;
	for (size_t g = 0; g < ps->mp.ngroups; g++)
		argv_insert(&ps->mp.groups[g].argv, 0, plan->tool);
	if (ps->mp.link.n)
		argv_insert(&ps->mp.link, 0, plan->tool);
}

/* Where the toolkit's stub libcuda.so is, for a link pass. nvcc may be NULL (CC mode): then it
 * is looked for quietly, since a plain C link must not complain about a missing toolkit. */
static void link_context_init(struct link_context *ctx, const struct session *s, const char *nvcc)
{
	char *found = NULL;
	memset(ctx, 0, sizeof(*ctx));
	ctx->cfg = &s->cfg;
	if (!nvcc) {
		found = session_quiet_nvcc((void *)s);
	} else {
		ctx->toolkit_lib = link_toolkit_lib(nvcc);
	}
	ctx->stubs = link_find_stubs(nvcc ? nvcc : found, session_env);
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
void nvcc_link_request_pass(const struct session *s, struct link_request *req, const char *nvcc,
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

static void nvcc_link_pass(const struct session *s, const struct invocation *inv, const char *nvcc,
			   struct plan *plan, struct link_result *res)
{
	struct link_request req;
	link_request_init(&req);
	if (s->cfg.link_lcuda && link_request_from_nvcc(&req, inv))
		nvcc_link_request_pass(s, &req, nvcc, plan, res);
	link_request_release(&req);
}


/* ---- the passes: targets, link, modules ---- */

/* The kind of file (--options-file) a target option of the line came from, or NULL. */
static const char *targets_file(const struct invocation *inv)
{
	for (size_t i = 0; i < inv->nargs; i++) {
		const struct inv_arg *a = &inv->args[i];
		if (a->what == ARG_OPTION && a->opt->kind == OPT_KIND_TARGET && a->source == SOURCE_OPTIONS_FILE)
			return invocation_source_name(a->source);
	}
	return NULL;
}

/* Whether the line has an @file (read or not): nvcc reads none, and refuses the line ("Don't
 * know what to do with '@...'"), which is nvcc's answer to give. */
static int response_file(const struct invocation *inv)
{
	for (size_t i = 0; i < inv->expanded.n; i++)
		if (inv->sources[i] == SOURCE_RESPONSE_FILE)
			return 1;
	for (size_t i = 0; i < inv->nargs; i++) {
		const struct inv_arg *a = &inv->args[i];
		const char *t = inv->expanded.v[a->pos];
		if (a->what != ARG_OPTION && a->source == SOURCE_COMMAND_LINE && t[0] == '@' && t[1])
			return 1;
	}
	return 0;
}

int nvcc_plan(const struct session *s, const struct invocation *inv, const char *nvcc, struct plan *plan,
	      struct nvcc_passes *ps, struct link_result *link, struct argv *before, struct argv *after)
{
	if (response_file(inv)) {
		diag_debug("an @file on the line: nvcc reads none and refuses the line; nothing to plan");
		return 0;
	}
	/* Target options in an options file are out of the passes' reach (they edit the command
	 * line): when the targets pass would change them, the file's arguments go on the command
	 * line instead (the file is left as it is), and every pass plans from that line. */
	const char *file = targets_file(inv);
	struct invocation flat;
	int flattened = 0;
	if (file) {
		struct argv a = ARGV_INIT;
		struct plan trial;
		invocation_flatten(inv, &a);
		invocation_parse(&flat, a.v, a.n, session_env);
		plan_init(&trial, plan->tool, a.v, a.n);
		flattened = nvcc_targets_pass(s, &flat, nvcc, &trial, ps, NULL, NULL);
		plan_release(&trial);
		if (flattened) {
			plan_release(plan);
			plan_init(plan, nvcc, a.v, a.n);
			plan_note(plan, "targets.files", "target options in an options file (%s) need a change: "
				  "its arguments are passed on nvcc's command line (the file is left as it is)", file);
			inv = &flat;
		} else {
			invocation_release(&flat);
		}
		argv_release(&a);
	}
	int retargeted = nvcc_targets_pass(s, inv, nvcc, plan, ps, before, after);
	nvcc_link_pass(s, inv, nvcc, plan, link);
	ps->mctx.split_link = link->retry.n > 0;
	nvcc_modules_pass(s, inv, nvcc, plan, ps);
	if (flattened)
		invocation_release(&flat);
	return retargeted;
}

/* ---- nvcc's --threads ---- */

/* The virtual architectures the line compiles for (each is a cicc and ptxas chain that
 * --threads can run beside the others); 0 when it compiles no device code this step counts. */
static unsigned threads_units(const struct invocation *inv)
{
	switch (inv->mode) {
	case MODE_LINK:
	case MODE_COMPILE:
	case MODE_DEVICE_C:
	case MODE_DEVICE_W:
	case MODE_CUBIN:
	case MODE_FATBIN:
	case MODE_PTX:
	case MODE_OPTIX_IR:
	case MODE_LTOIR:
		break;
	default:
		return 0;
	}
	struct arch_list l;
	char *why = NULL;
	unsigned units = 0;
	arch_list_init(&l);
	if (!arch_list_from_invocation(&l, inv, &why)) {
		if (l.all || l.all_major)
			units = 8;
		for (size_t i = 0; i < l.n; i++) {
			size_t k = 0;
			while (k < i && !arch_equal(&l.v[k].virt, &l.v[i].virt))
				k++;
			units += k == i;
		}
	}
	free(why);
	arch_list_release(&l);
	return units;
}

/* Whether a compile may split its optimizations (split_compile, threads.h): off, on, or auto,
 * which is on where targets_only chose the targets; never over a --split-compile of the user's,
 * and only with an nvcc that has the option (11.8 and later). */
static int split_wanted(const struct session *s, const struct invocation *given, struct nvcc_passes *ps,
			const char *nvcc)
{
	const char *v = s->cfg.split_compile;
	if (!strcmp(v, "off") || (!strcmp(v, "auto") && !(s->cfg.targets_only && *s->cfg.targets_only)))
		return 0;
	if (invocation_find(given, "split-compile") || invocation_find(given, "split-compile-extended"))
		return 0;
	if (!ps || !nvcc || !nvcc_passes_toolkit(ps, s, nvcc))
		return 0;
	return ps->tk.major > 11 || (ps->tk.major == 11 && ps->tk.minor >= 8);
}

unsigned nvcc_threads_step(const struct session *s, const struct invocation *given, struct plan *plan,
			   struct threads_hold *hold, int acquire, struct nvcc_passes *ps, const char *nvcc)
{
	if (s->cfg.threads == THREADS_OFF || s->cfg.threads == 1 || !launcher_wanted(given))
		return 1;
	/* A --threads of the user's stays as given (nvshim adds none); its stages may still split
	 * (causal-conv1d's --threads 4 on a list targets_only cut to one target). */
	int users = invocation_find(given, "threads") != NULL;
	if (s->cfg.launcher && *s->cfg.launcher) {
		const char *base = lbasename(s->cfg.launcher);
		/* A distributed compile runs on another machine, whose CPUs nvshim cannot count. */
		if (!strcmp(base, "distcc") || !strcmp(base, "icecc") || !strcmp(base, "pump"))
			return 1;
	}
	/* The line the passes made: its targets are the ones nvcc compiles. */
	struct invocation now;
	invocation_parse(&now, plan->argv.v + 1, plan->argv.n - 1, session_env);
	unsigned units = threads_units(&now);
	invocation_release(&now);
	int split = units >= 1 && split_wanted(s, given, ps, nvcc);
	if ((units < 2 || users) && !split)
		return 1;
	if (fault_inject("threads")) {
		plan_note(plan, "threads.auto", "%u targets, one pass at a time: the accounting failed "
			  "(injected fault, NVSHIM_FAULT)", units);
		return 1;
	}
	struct threads_input in = { units, s->cfg.threads, { 0 }, THREADS_PASS_MB, 0 };
	threads_machine_read(&in.m, getenv("NVSHIM_MACHINE"));
	char *dir = threads_slot_dir(s->cfg.cache_dir);
	/* The gate, unless sccache runs nvcc's stages itself, or an nvshim further up set one: its
	 * gate reaches this compile's nvcc and counts, so this one holds no slot (a slot held here
	 * would be one its stages wait for) and sets nothing. */
	const char *launcher = s->cfg.launcher && *s->cfg.launcher ? lbasename(s->cfg.launcher) : "";
	int inherited = getenv(SLOTS_GATE_ENV) != NULL;
	char *gate = dir && strcmp(launcher, "sccache") && !inherited && (!acquire || threads_slots_usable(dir))
			     ? session_gate_library(&s->self)
			     : NULL;
	if (gate && !threads_gate_possible(gate, dir)) {
		/* an install path LD_PRELOAD cannot hold: nvshim holds the slots itself */
		free(gate);
		gate = NULL;
	}
	in.gate = gate != NULL || inherited;
	static const char no_gate[] = "no --split-compile: without the gate (libnvshim-gate.so) nothing "
				      "would count its threads";
	if ((units < 2 || users) && !in.gate) {
		/* no --threads of nvshim's to add: only a split would use more CPUs, and only the gate
		 * would count them (no slot is taken for nothing) */
		plan_note(plan, "threads.split", "%s", no_gate);
		free(gate);
		free(dir);
		return 1;
	}
	in.m.held = slots_held(dir, in.m.cpus);
	char *why = NULL;
	/* the user's --threads: the stages take turns in the slots, K is theirs */
	unsigned want = users ? 1 : threads_decide(&in, &why);
	unsigned k = want, slots = in.gate ? threads_gate_slots(&in) : 0;
	char *how = xstrdup("");
	if (acquire) {
		int extra = in.gate ? (int)want - 1 : threads_slots_take(hold, dir, in.m.cpus, want - 1);
		unsigned tokens = 0;
		if (extra > 0)
			tokens = threads_tokens_take(hold, getenv("MAKEFLAGS"), (unsigned)extra);
		k = threads_settle(want, extra < 0 ? 0 : (unsigned)extra, hold->js.kind, tokens);
		if (!in.gate)
			threads_slots_keep(hold, k);
		free(how);
		if (extra < 0)
			how = xasprintf("; the slots in %s cannot be used", dir ? dir : "(no cache_dir)");
		else if (hold->js.kind == THREADS_JS_BROKEN)
			how = xstrdup("; MAKEFLAGS names a jobserver this command cannot use (a rule "
				      "without '+' under make 4.3)");
		else if (hold->js.kind != THREADS_JS_ABSENT)
			how = xasprintf("; %u token%s from make's jobserver", tokens, tokens == 1 ? "" : "s");
		else
			how = xstrdup("");
		if (hold->waited_ms >= 100) {
			char *w = xasprintf("%s; waited %u ms for a free slot", how, hold->waited_ms);
			free(how);
			how = w;
		}
	}
	char *turns;
	if (gate)
		turns = xasprintf(", nvcc's stages taking turns in %u slot%s", slots, slots == 1 ? "" : "s");
	else if (inherited)
		turns = xstrdup(", nvcc's stages taking turns in the slots of an nvshim further up");
	else
		turns = xstrdup("");
	/* The split: each cicc and ptxas stage takes, besides its own slot, the slots free when it
	 * starts, up to S (the gate rewrites its --split-compile): only where the gate counts them. */
	unsigned split_s = 0;
	if (split && in.gate) {
		unsigned total = gate ? slots : in.m.cpus;
		split_s = total >= 2 ? total : 0;
	}
	if (acquire) {
		/* set just before nvcc runs (threads_hold_apply()) */
		hold->k = k;
		hold->split = split_s;
		hold->gate_lib = gate ? xstrdup(gate) : NULL;
		hold->gate_dir = gate ? xstrdup(dir) : NULL;
		hold->gate_n = slots;
	}
	if (split_s)
		plan_note(plan, "threads.split", "%s --split-compile %u (in NVCC_APPEND_FLAGS): cicc and ptxas "
			  "split their optimizations, each stage over the CPUs free when it starts (the slots it "
			  "can take), up to %u; split_compile = %s%s", acquire ? "compiles with" : "would compile with",
			  split_s, split_s, s->cfg.split_compile,
			  !strcmp(s->cfg.split_compile, "on") ? "" : ", for a targets_only build");
	else if (split)
		plan_note(plan, "threads.split", "%s", !in.gate ? no_gate : "no --split-compile: one CPU");
	if (units < 2 || users) {
		free(turns);
		free(gate);
		free(how);
		free(why);
		free(dir);
		return 1;
	}
	if (k > 1) {
		plan_note(plan, "threads.auto", "%s --threads %u (in NVCC_APPEND_FLAGS)%s: %s%s",
			  acquire ? "compiles with" : "would compile with", k, turns, why, how);
	} else {
		plan_note(plan, "threads.auto", "one pass at a time%s: %s%s", turns, why, how);
	}
	free(turns);
	free(gate);
	free(how);
	free(why);
	free(dir);
	return k;
}

/* The memory budget (buildwide/memgate.h): the gate in front of every nvcc that compiles or
 * links, so that its heavy stages start only when their expected peak fits. Fails open: any
 * problem leaves the compile as it was. Returns the budget text for explain (xmalloc'ed), or
 * NULL when there is none. */
char *nvcc_memory_step(const struct session *s, const struct invocation *given, struct threads_hold *hold,
		       int acquire)
{
	const char *v = s->cfg.memory_budget ? s->cfg.memory_budget : "";
	long long bytes = 0, total = -1, avail = -1;
	if (given->info || given->dryrun || given->mode == MODE_PREPROCESS || fault_inject("memory"))
		return NULL;
	if (strchr(v, '%'))
		memgate_machine(&total, &avail);
	if (memgate_parse_budget(v, total, &bytes)) {
		warning("memory_budget: '%s' is not a size (bytes, 24G, 60%%, auto or off); no memory budget", v);
		return NULL;
	}
	if (bytes < 0)
		return NULL;
	if (s->cfg.launcher && *s->cfg.launcher) {
		const char *base = lbasename(s->cfg.launcher);
		/* sccache runs nvcc's stages itself; a distributed compile runs elsewhere */
		if (!strcmp(base, "sccache") || !strcmp(base, "distcc") || !strcmp(base, "icecc") ||
		    !strcmp(base, "pump"))
			return NULL;
	}
	char *dir = threads_slot_dir(s->cfg.cache_dir);
	char *lib = dir ? session_gate_library(&s->self) : NULL;
	char *text = NULL;
	if (lib && threads_gate_possible(lib, dir)) {
		char *ledger = concat(dir, "/mem", NULL);
		char *learn = concat(dir, "/peaks", NULL);
		char *spec = xasprintf("%lld:%s:%s", bytes, ledger, learn);
		struct memgate probe;
		if (!memgate_parse_spec(spec, &probe)) {
			if (acquire) {
				mkdir(dir, 0700);
				hold->mem_spec = spec;
				hold->mem_lib = lib;
				spec = NULL;
				lib = NULL;
			}
			if (bytes > 0) {
				text = xasprintf("%lld MiB (memory_budget = %s)", bytes >> 20, v);
			} else {
				memgate_machine(&total, &avail);
				text = xasprintf("%lld MiB (auto: the memory available, %lld MiB, less a reserve)",
						 memgate_default_budget(avail) >> 20, avail >> 20);
			}
		}
		free(spec);
		free(ledger);
		free(learn);
	}
	free(lib);
	free(dir);
	return text;
}

char *nvcc_memory_estimates(const struct session *s)
{
	char *dir = threads_slot_dir(s->cfg.cache_dir);
	struct memgate g;
	memset(&g, 0, sizeof(g));
	if (dir)
		snprintf(g.ledger, sizeof(g.ledger), "%s/mem", dir);
	char *out = xstrdup("");
	static const enum memgate_kind kinds[] = { MEMGATE_CICC, MEMGATE_PTXAS, MEMGATE_CUDAFE, MEMGATE_HOST,
						   MEMGATE_HOST_PP, MEMGATE_NVLINK };
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		long long seen = dir ? memgate_similar(&g, kinds[i]) : -1;
		long long est = memgate_estimate(-1, seen, memgate_default_peak(kinds[i]));
		char *next = xasprintf("%s%s%s %lld MiB (%s)", out, i ? ", " : "", memgate_kind_name(kinds[i]), est >> 20,
				       seen > 0 ? "from the peaks of this build" : "the default, at most half the budget");
		free(out);
		out = next;
	}
	char *next = xasprintf("%s; a stage this source ran before: its learned peak (per input content, "
			       "target and stage, else per source name and target)", out);
	free(out);
	free(dir);
	return next;
}

/* ---- the run ---- */

/* Whether a note is about the whole build rather than one source, link or command line: the
 * targets rules, whose notes every compile of a build with the same target list repeats
 * word for word. Notes of the modules pass (per source), the link pass, CC mode, crashes and
 * resources are not. */
int nvcc_note_build_wide(const char *note)
{
	const char *open = NULL;
	for (const char *p = note; (p = strstr(p, " [")); p++)
		open = p;
	size_t len = strlen(note);
	return open && note[len - 1] == ']' &&
	       (!strncmp(open, " [targets]", 10) || !strncmp(open, " [targets.", 10));
}

void nvcc_say_note(const struct session *s, const char *note)
{
	const struct build *b;
	if (!strcmp(s->cfg.repeat_notes, "once") && diag_verbosity() > VERBOSITY_QUIET &&
	    nvcc_note_build_wide(note) && (b = build_current(session_env))) {
		int first = once_first(s->cfg.cache_dir, b->id, note);
		if (first == 0) {
			stats_count_quieted();
			diag_debug("said already in this build (repeat_notes = once): %s", note);
			return;
		}
		if (first == 1) {
			diag_rewrite("%s (said once for this %s build: its other compiles that do the same "
				     "are not noted again; nvshim stats counts them)", note, b->tool);
			return;
		}
	}
	diag_rewrite("%s", note);
}

/* Routine notes (CC mode's, the threads step's) are shown at verbosity verbose; every other
 * note is a rewrite. */
char *nvcc_unmap_view(struct session *s, const char *nvcc)
{
	char *unmapped = NULL;
	int views = 0;
	for (size_t i = 0; i < s->args.n && !views; i++)
		views = strstr(s->args.v[i], "/toolkit-view/") != NULL;
	if (!views)
		return NULL;
	char *dir = locate_shim_dir(&s->self);
	char *shim = dir ? concat(dir, "/nvcc", NULL) : NULL;
	/* CC mode runs no nvcc for a host source: the one on PATH past nvshim, if any */
	char *found = nvcc ? NULL : locate_on_path(&s->self, session_env, "nvcc");
	struct view_unmap_with w = { s->cfg.cache_dir, shim, nvcc ? nvcc : found };
	view_unmap(s->cfg.cache_dir, &w, &s->args, &unmapped);
	free(found);
	free(shim);
	free(dir);
	return unmapped;
}

void nvcc_note_unmapped(struct plan *plan, char *unmapped)
{
	if (unmapped)
		plan_note(plan, "toolkit.view", "paths into the toolkit view go to the real toolkit (%s), "
			  "so that nothing the build writes names nvshim's cache", unmapped);
	free(unmapped);
}

void nvcc_print_notes(const struct session *s, const struct plan *plan)
{
	static const char *const routine[] = { "[cc.nvcc]", "[cc.translate]", "[threads.auto]", "[threads.serial]",
					       "[toolkit.view]", "[targets.sass_only]",
					       "[threads.split]", "[modules.method]", "[modules.confirm]" };
	for (size_t i = 0; i < plan->notes.n; i++) {
		const char *note = plan->notes.v[i];
		size_t len = strlen(note);
		int quiet = 0;
		for (size_t k = 0; k < sizeof(routine) / sizeof(routine[0]); k++) {
			size_t rl = strlen(routine[k]);
			quiet |= len >= rl && !strcmp(note + len - rl, routine[k]);
		}
		if (quiet)
			diag_note(VERBOSITY_VERBOSE, "%s", note);
		else
			nvcc_say_note(s, note);
	}
}

/* A compile that failed with the --threads nvshim added (threads.h: nvcc then exits 255 for
 * every failure) runs again one pass at a time, so that the caller gets serial nvcc's messages
 * and status; the first run's stderr is dropped. */
static void nvcc_serial_again(struct plan *plan, unsigned k, struct run_result *res, char **err)
{
	plan_note(plan, "threads.serial", "nvcc failed with --threads %u (status %d): running it again one "
		  "pass at a time for nvcc's own messages and status", k, res->status);
	diag_note(VERBOSITY_VERBOSE, "%s", plan->notes.v[plan->notes.n - 1]);
	free(*err);
	*err = NULL;
	runner_run_held(plan->tool, &plan->argv, res, err);
}

/* After a watched run: the crash module's steps (crash.h), with the upgrade layer's retry
 * between them: a failure only on APIs the compatibility layer restores is compiled again with
 * it (compat.h); when that passes, its stderr and status are the compile's. */
static void nvcc_after_run(const struct crash_context *ctx, struct plan *plan,
			   struct run_result *res, char **held)
{
	struct crash c;
	int crashed = crash_run_begin(ctx, plan, res, held, &c);
	if (crashed < 0)
		return;
	struct api_context ac = { ctx->cfg, ctx->nvcc, ctx->exe_dir, NULL, NULL };
	struct compat_context cx = { &ac, ctx->env, 0 };
	size_t notes_before = plan->notes.n;
	/* read without colours (-Xcompiler -fdiagnostics-color=always); shown as it came */
	char *plain = strbuf_uncolor(*held);
	char **look = plain ? &plain : held;
	/* a header or library CUDA 13 moved first (layout.h): the compiler stops there */
	int restored = res->status != 0 && !crashed &&
		       (layout_after_failure(&cx, plan, res, look) || linefix_after_failure(&cx, plan, res, look) ||
			 compat_after_failure(&cx, plan, res, look));
	if (plain && restored) {
		free(*held);
		*held = plain;
	} else {
		free(plain);
	}
	fputs(*held, stderr);
	fflush(stderr);
	compat_say_after(plan, notes_before);
	crash_run_end(ctx, plan, res, *held, crashed, &c, restored);
}

/* nvcc_run(); `wait`: nvshim holds something to give back after nvcc (threads.h), so it
 * waits for nvcc rather than replacing itself with it. */
static int run_plan(struct session *s, struct plan *plan, const struct argv *argv_in, const struct argv *retry,
		    const struct crash_context *watch, const struct api_context *api, int wait)
{
	struct run_result res = { 127, 0, 0 };
	int log = s->cfg.log_file && *s->cfg.log_file;
	/* with nvshim's --threads, a failure is run again one pass at a time: its stderr is held */
	int hold = (retry && retry->n) || watch || api || threads_env_added() > 1;
	/* a line nvshim changed is waited for: its success is guarded (session_guard()) */
	int changed = plan_rewritten(plan, s->args.v, s->args.n);
	wait |= session_guarded(s, plan, changed);

	session_tool_starting();
	if (!log && !plan->options_file && !hold && !wait) {
		/* nvshim is gone once nvcc runs: the record is written now */
		session_record(s, plan);
		fflush(NULL);
		runner_exec(plan->tool, &plan->argv);
		res.status = 127;
	} else if (hold) {
		char *err = NULL;
		runner_run_held(plan->tool, &plan->argv, &res, &err);
		/* Stopped by a signal: what nvcc printed, and nothing more is run. */
		int stop = runner_signal() != 0;
		unsigned k = threads_env_added();
		/* what runs from now on (a serial run, a link retry, a crash's replay) runs as nvcc would */
		threads_env_undo();
		if (res.status && !stop && k > 1) {
			nvcc_serial_again(plan, k, &res, &err);
			stop = runner_signal() != 0;
		}
		char *sym = NULL;
		if (!stop && res.status && retry && retry->n) {
			char *plain = strbuf_uncolor(err);
			sym = link_undefined_driver_symbol(plain ? plain : err ? err : "");
			free(plain);
		}
		int retried = sym != NULL;
		if (sym) {
			char *added = argv_to_shell(retry);
			plan_note(plan, "link.retry", "the link failed on an undefined reference to %s: "
				  "running it again with %s", sym, added);
			diag_rewrite("%s", plan->notes.v[plan->notes.n - 1]);
			free(added);
			free(sym);
			argv_pushn(&plan->argv, retry->v, retry->n);
			runner_run(plan->tool, &plan->argv, &res);
		} else if (watch && !stop) {
			nvcc_after_run(watch, plan, &res, &err);
		} else if (err) {
			/* A host compiler's failure only on APIs the compatibility layer restores:
			 * compiled again with it (compat.h). */
			struct compat_context cx = { api, session_env, 1 };
			size_t notes_before = plan->notes.n;
			/* read without colours (-fdiagnostics-color=always, Meson's default); the
			 * user sees them as the compiler wrote them */
			char *plain = strbuf_uncolor(err);
			char **look = plain ? &plain : &err;
			int restored = api && !stop && res.status && !res.signal &&
				       (layout_after_failure(&cx, plan, &res, look) ||
					linefix_after_failure(&cx, plan, &res, look) ||
					compat_after_failure(&cx, plan, &res, look));
			/* C: a removed function is only an implicit declaration until the link */
			if (api && !stop && !restored && !res.signal && *look)
				restored |= compat_after_implicit(&cx, plan, &res, look);
			/* restored: the retry's stderr (in the colours asked for) is the compile's */
			runner_write_stderr(restored ? *look : err);
			compat_say_after(plan, notes_before);
			/* A host compiler's errors about removed or changed CUDA APIs (api.h). */
			if (api && !retried && !stop && res.status && !res.signal && !restored)
				api_explain(api, *look, &plan->notes);
			free(plain);
		}
		free(err);
	} else {
		runner_run(plan->tool, &plan->argv, &res);
	}

	return session_ran(s, plan, argv_in, session_guard(s, plan, changed, res.status, NULL));
}

int nvcc_run(struct session *s, struct plan *plan, const struct argv *argv_in, const struct argv *retry,
	     const struct crash_context *watch, const struct api_context *api)
{
	return run_plan(s, plan, argv_in, retry, watch, api, 0);
}

/* The modules pass's hook for a command that failed: the crash module looks at it (crash.h). */
static void modules_failed(void *arg, const struct argv *ran, struct run_result *res, char **held)
{
	const struct crash_context *cc = arg;
	struct plan p;
	plan_init(&p, ran->v[0], ran->v + 1, ran->n - 1);
	nvcc_after_run(cc, &p, res, held);
	/* the compatibility layer's notes and the crash retry's go to the log, the record and the
	 * outputs guard with the plan's */
	for (size_t i = 0; cc->notes && i < p.notes.n; i++)
		if (strstr(p.notes.v[i], " [compat.") || strstr(p.notes.v[i], " [crash."))
			argv_push(cc->notes, p.notes.v[i]);
	plan_release(&p);
}

static void watch_modules(struct nvcc_passes *ps, const struct crash_context *watch)
{
	ps->mctx.failed = watch ? modules_failed : NULL;
	ps->mctx.failed_arg = (void *)watch;
}

/* Plans the line again with what the modules pass learnt (a verdict). After the notes were said
 * (`said`), says only the new ones and puts the launcher back in front; before, neither. */
static void nvcc_replan(struct session *s, struct plan *plan, struct nvcc_passes *ps, const char *nvcc,
			struct link_result *link, const struct crash_context *watch, int said_already)
{
	struct argv said = ARGV_INIT;
	char *launcher = strcmp(plan->tool, nvcc) ? xstrdup(plan->tool) : NULL;
	argv_copy(&said, &plan->notes);
	nvcc_passes_release(ps);
	nvcc_passes_init(ps, s, nvcc);
	plan_release(plan);
	plan_init(plan, nvcc, s->args.v, s->args.n);
	link_result_release(link);
	link_result_init(link);
	struct invocation inv;
	invocation_parse(&inv, s->args.v, s->args.n, session_env);
	nvcc_plan(s, &inv, nvcc, plan, ps, link, NULL, NULL);
	invocation_release(&inv);
	for (size_t i = 0; said_already && i < plan->notes.n; i++) {
		int seen = 0;
		for (size_t k = 0; k < said.n && !seen; k++)
			seen = !strcmp(said.v[k], plan->notes.v[i]);
		if (!seen)
			nvcc_say_note(s, plan->notes.v[i]);
	}
	/* how the targets were decided stays in the plan, for the log and the record */
	for (size_t k = 0; k < said.n; k++) {
		int kept = 0;
		for (size_t i = 0; i < plan->notes.n && !kept; i++)
			kept = !strcmp(said.v[k], plan->notes.v[i]);
		if (!kept && strstr(said.v[k], "[modules.method]"))
			argv_push(&plan->notes, said.v[k]);
	}
	argv_release(&said);
	if (!said_already) {
		free(launcher);
		return;
	}
	if (!ps->mp.split && plan_rewritten(plan, s->args.v, s->args.n))
		plan_finalize(plan, s->cfg.options_file_threshold, NULL);
	if (launcher)
		launcher_apply(plan, launcher);
	free(launcher);
	nvcc_modules_launcher(ps, plan, nvcc);
	watch_modules(ps, watch);
}

/* Runs what the modules pass planned (its targets decided already: nvcc_execute()): the
 * compiles with stderr held, a probe on an architecture-related failure, and one retry planned
 * again with what the probe or the object learnt. Logs like nvcc_run(). */
static int nvcc_run_modules(struct session *s, struct plan *plan, struct nvcc_passes *ps, const char *nvcc,
			   const struct argv *argv_in, struct link_result *link,
			   const struct crash_context *watch)
{
	struct run_result res = { 127, 0, 0 };
	watch_modules(ps, watch);
	session_tool_starting();
	if (runner_signal())
		return session_ran(s, plan, argv_in, 128 + runner_signal());
	/* After a retry the compile runs once more without probing, or with it where the retry took
	 * back a form decided before compiling (an f form ptxas refused goes to a, whose plain PTX
	 * may be refused in turn): three runs at most. */
	int probe = 1;
	for (int run = 0; modules_run(&ps->mp, plan, &ps->mctx, probe, &link->retry, &res) == MODULES_RETRY &&
			  !runner_signal(); run++) {
		probe = run == 0 && ps->mp.undone;
		nvcc_replan(s, plan, ps, nvcc, link, watch, 1);
	}
	int changed = ps->mp.split || plan_rewritten(plan, s->args.v, s->args.n);
	return session_ran(s, plan, argv_in, session_guard(s, plan, changed, res.status,
								       ps->mp.split ? "modules.split" : NULL));
}

/* ---- after the passes: notes, gates, launcher, run, after-run ---- */

int nvcc_execute(struct session *s, const char *nvcc, const struct invocation *inv,
			struct plan *plan, struct nvcc_passes *ps, struct link_result *link, const char *name,
			char **given, size_t ngiven)
{
	int wants_launcher = launcher_wanted(inv);
	/* The guard's facts (session_guard()): what the line names as its outputs, and the line as
	 * nvcc runs it, for when a success of nvshim's lacks one. */
	if (!s->fallback.n) {
		outputs_of(inv, &s->outputs);
		argv_push(&s->fallback, nvcc);
		argv_pushn(&s->fallback, s->args.v, s->args.n);
	}
	/* Watched: nvcc's stderr is held, to be looked at when it fails (crash.h). */
	int watch = crash_wanted(inv, &s->cfg);
	/* nvcc's --threads, from what the machine has free now (threads.h). */
	struct threads_hold th;
	threads_hold_init(&th);
	/* Targets decided before the first compile, where a source's verdict has no decision yet
	 * (modules.h): --threads and the notes are for the decided list. The decision is nvshim's
	 * own time before nvcc runs (the record's added time). */
	if (ps->mp.active && (ps->mp.decide || ps->mp.split) && modules_decide(&ps->mp, &ps->mctx, plan) &&
	    !runner_signal())
		nvcc_replan(s, plan, ps, nvcc, link, NULL, 0);
	/* A --dryrun or -E whose steps a caller runs itself (sccache): the layered compile's, where
	 * the compile needs the compatibility layer (compat_dryrun.h). */
	if ((inv->dryrun || inv->mode == MODE_PREPROCESS) && !ps->mp.split && !runner_signal()) {
		struct api_context ac = { &s->cfg, nvcc, s->self.exe_dir, NULL, NULL };
		struct compat_context cx = { &ac, session_env, 0 };
		compat_dryrun_apply(&cx, plan, 1, NULL);
	}
	nvcc_threads_step(s, inv, plan, &th, 1, ps, nvcc);
	free(nvcc_memory_step(s, inv, &th, 1));
	nvcc_print_notes(s, plan);
	if (!plan->notes.n)
		diag_note(VERBOSITY_VERBOSE, "nothing to change: the arguments go to nvcc as given");
	/* Known-bad combinations of toolkit, host compiler and libraries (gates.h). */
	struct gates_context gc = { &s->cfg, inv, nvcc, s->self.exe_dir };
	gates_check(&gc);
	/* A compile the modules pass may probe, or several commands: it runs them (and passes the
	 * long lines of a split through options files itself). */
	int modules = ps->mp.active && (ps->mp.hold || ps->mp.split);
	/* Only a line nvshim changed can be too long: the one it was given was not. */
	if (!ps->mp.split && plan_rewritten(plan, given, ngiven) &&
	    plan_finalize(plan, s->cfg.options_file_threshold, NULL) > 0)
		diag_note(VERBOSITY_VERBOSE, "the command line is passed in %s", plan->options_file);
	int status = 1;
	if (!session_add_launcher(s, wants_launcher, plan) || !diag_strict_errors()) {
		if (modules)
			nvcc_modules_launcher(ps, plan, nvcc);
		struct argv in = ARGV_INIT;
		argv_push(&in, name);
		argv_pushn(&in, given, ngiven);
		struct crash_context cc = { &s->cfg, nvcc, &s->args, inv, s->self.exe_dir, session_env, &plan->notes };
		threads_hold_apply(&th);
		status = modules ? nvcc_run_modules(s, plan, ps, nvcc, &in, link, watch ? &cc : NULL)
				 : run_plan(s, plan, &in, &link->retry, watch ? &cc : NULL, NULL,
					    th.nslots || th.tokens);
		threads_hold_release(&th);
		threads_env_undo();
		argv_release(&in);
		/* Kernels nvcc builds that no launch accepts (a stack past the limit). */
		if (!status && watch && s->cfg.explain_resources)
			crash_check_stacks(inv);
	}
	threads_hold_release(&th);
	return status;
}

/* ---- nvcc mode, top to bottom: parse, passes, plan, run, after-run ---- */

int nvcc_main(int n, char **args)
{
	struct session s;
	struct plan plan;
	char *nvcc = NULL, *how = NULL;

	/* From here on a termination signal is passed on to nvcc, never lost (runner.h). */
	runner_catch_signals();
	session_init(&s, n, args);
	if (diag_strict_errors() || session_loop_guard() ||
	    locate_nvcc(&s.cfg, session_env, &s.self, &nvcc, &how)) {
		session_release(&s);
		return 1;
	}
	diag_note(VERBOSITY_VERBOSE, "runs %s (found through %s)", nvcc, how);

	/* Every nvcc nvshim starts from here on, for facts too, carries the loop guard. */
	session_enter_child();
	/* paths into the toolkit view (CUDA_HOME) read as the real toolkit's (view.h) */
	char *unmapped = nvcc_unmap_view(&s, nvcc);
	struct invocation inv;
	struct nvcc_passes ps;
	nvcc_passes_init(&ps, &s, nvcc);
	invocation_parse(&inv, s.args.v, s.args.n, session_env);
	s.no_record = inv.info;
	plan_init(&plan, nvcc, s.args.v, s.args.n);
	nvcc_note_unmapped(&plan, unmapped);
	struct link_result link;
	link_result_init(&link);
	nvcc_plan(&s, &inv, nvcc, &plan, &ps, &link, NULL, NULL);
	int status = nvcc_execute(&s, nvcc, &inv, &plan, &ps, &link, nvcc, args, (size_t)n);
	invocation_release(&inv);
	nvcc_passes_release(&ps);
	link_result_release(&link);
	plan_release(&plan);
	free(nvcc);
	free(how);
	session_release(&s);
	return status;
}
