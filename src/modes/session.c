#include "modes/session.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libiberty.h>

#include "buildwide/build.h"
#include "base/cache.h"
#include "base/diag.h"
#include "base/fault.h"
#include "machine/launcher.h"
#include "base/logfile.h"
#include "base/runner.h"
#include "buildwide/memgate.h"
#include "buildwide/stats.h"
#include "buildwide/threads.h"
#include "model/outputs.h"
#include "preload/gate.h"

const char *session_env(const char *name)
{
	return config_getenv(name);
}

void session_init(struct session *s, int n, char **args)
{
	session_init_report(s, n, args, 1);
}

void session_init_report(struct session *s, int n, char **args, int report)
{
	s->start_ms = runner_now_ms();
	s->started = outputs_now();
	s->no_record = 0;
	argv_init(&s->outputs);
	argv_init(&s->fallback);
	locate_self(&s->self);
	argv_init(&s->args);
	argv_init(&s->path_store);
	argv_pushn(&s->args, args, (size_t)n);
	config_init(&s->cfg, config_getenv);
	config_default_paths(&s->paths, &s->path_store, s->self.exe_dir, config_getenv);
	config_load(&s->cfg, &s->paths, config_getenv, &s->args);
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

void session_release(struct session *s)
{
	config_release(&s->cfg);
	argv_release(&s->path_store);
	argv_release(&s->args);
	argv_release(&s->outputs);
	argv_release(&s->fallback);
	locate_self_release(&s->self);
}

/* A file of libexec/nvshim that access() allows for `mode`: beside nvshim in a build tree, in
 * <prefix>/libexec/nvshim when installed. Its resolved path (xmalloc'ed), or NULL. */
char *session_libexec_file(const struct self *self, const char *name, int mode)
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

char *session_devices_helper(const struct self *self)
{
	return session_libexec_file(self, "nvshim-devices", X_OK);
}

char *session_preload_library(const struct self *self)
{
	return session_libexec_file(self, "libnvshim-preload.so", R_OK);
}

char *session_gate_library(const struct self *self)
{
	return session_libexec_file(self, GATE_LIBRARY, R_OK);
}


const struct devices *session_devices_load(void *arg)
{
	struct session_devices *l = arg;
	if (!l->loaded) {
		char *helper = session_devices_helper(&l->s->self);
		devices_load(&l->d, session_env, l->s->cfg.cache_dir, helper);
		free(helper);
		l->loaded = 1;
	}
	return &l->d;
}

/* Exports the depth the real tool will see. */
void session_enter_child(void)
{
	char buf[16];
	snprintf(buf, sizeof(buf), "%d", locate_depth(session_env) + 1);
	setenv(LOCATE_DEPTH_VAR, buf, 1);
}

int session_loop_guard(void)
{
	int depth = locate_depth(session_env);
	if (depth < 1)
		return 0;
	return error("nvshim was started again by the nvcc it ran (%s=%d): the 'real' nvcc leads back "
		     "to nvshim; set NVSHIM_NVCC to the toolkit's nvcc (for example "
		     "/usr/local/cuda/bin/nvcc)",
		     LOCATE_DEPTH_VAR, depth);
}

static double tool_started_ms;

void session_tool_starting(void)
{
	if (!tool_started_ms)
		tool_started_ms = runner_now_ms();
}

void session_record(const struct session *s, const struct plan *plan)
{
	static int recorded; /* once per invocation, even when an exec failed */
	if (recorded++ || s->no_record || !s->cfg.stats || !s->cfg.cache_dir || !*s->cfg.cache_dir)
		return;
	struct stats_entry e;
	const struct build *b = build_current(session_env);
	stats_entry_init(&e);
	e.time = (long long)time(NULL);
	if (b) {
		e.build_id = b->id;
		e.tool = b->tool;
		e.dir = b->dir;
	}
	e.added_ms = (tool_started_ms ? tool_started_ms : runner_now_ms()) - s->start_ms;
	stats_process_counts(&e.probes, &e.hits, &e.quieted);
	stats_entry_from_notes(&e, &plan->notes);
	stats_record(s->cfg.cache_dir, &e);
	stats_entry_release(&e);
}

/* ---- the guard on every success ---- */

/* The layers that rerun or split a command, most likely last first, by the rule their notes
 * carry (a prefix ending in '.' matches the family). */
static const struct {
	const char *rule;
	const char *layer;
	const char *fault; /* NVSHIM_FAULT=lose-NAME: the layer acted, and its outputs are lost */
} guard_layers[] = {
	{ "compat.restored", "the compatibility layer's retry", "lose-compat" },
	{ "link.retry", "the link retry (-lcuda)", "lose-link-retry" },
	{ "crash.retry", "the crash retry", "lose-crash" },
	{ "threads.serial", "the serial rerun", "lose-serial" },
	{ "modules.stubs", "the stub drop's re-link", "lose-stubs" },
	{ "modules", "the modules pass's split", "lose-split" },
	{ "modules.split", "the modules pass's split (the compile, then the link)", "lose-split" },
	{ "modules.", "the modules pass", "lose-modules" },
	{ "link.", "the link pass", "lose-link" },
	{ "cc.", "CC mode's hand-over to nvcc", "lose-cc" },
	{ "targets", "the targets pass", "lose-targets" },
	{ "targets.", "the targets pass", "lose-targets" },
	{ "threads.", "the threads step", "lose-threads" },
};

/* The rule of a note ("... [rule]"), pointed into the note, and its length. */
static const char *note_rule(const char *note, size_t *len)
{
	const char *open = NULL;
	for (const char *p = note; (p = strstr(p, " [")); p++)
		open = p;
	size_t n = strlen(note);
	if (!open || !n || note[n - 1] != ']')
		return NULL;
	*len = (size_t)(note + n - 1 - (open + 2));
	return open + 2;
}

/* Whether a note of the plan carries the rule (or, for "x.", one of its family). */
static int plan_has_rule(const struct plan *plan, const char *want)
{
	size_t wl = strlen(want);
	for (size_t i = plan->notes.n; i-- > 0;) {
		size_t len;
		const char *r = note_rule(plan->notes.v[i], &len);
		if (r && (want[wl - 1] == '.' ? len > wl && !strncmp(r, want, wl) : len == wl && !strncmp(r, want, wl)))
			return 1;
	}
	return 0;
}

/* Whether the layer acted: a note of the plan names it, or the caller does (`hint`: a layer that
 * acts without a note, such as the modules pass's split of a compile and its link). */
static int layer_acted(const struct plan *plan, const char *rule, const char *hint)
{
	return (hint && !strcmp(hint, rule)) || plan_has_rule(plan, rule);
}

static const char *guard_layer(const struct plan *plan, const char *hint, const char **rule_out)
{
	for (size_t k = 0; k < sizeof(guard_layers) / sizeof(guard_layers[0]); k++)
		if (layer_acted(plan, guard_layers[k].rule, hint)) {
			*rule_out = guard_layers[k].rule;
			return guard_layers[k].layer;
		}
	*rule_out = NULL;
	return "nvshim's rewrite of the command line";
}

/* NVSHIM_FAULT=lose-NAME (fault.h: named only): where that layer acted, the outputs it made
 * are removed, as a layer that lost them would leave the build; the guard must catch it. */
static void guard_fault(const struct session *s, const struct plan *plan, const char *hint)
{
	const char *f = getenv("NVSHIM_FAULT");
	if (!f || !strstr(f, "lose-"))
		return;
	for (size_t k = 0; k < sizeof(guard_layers) / sizeof(guard_layers[0]); k++)
		if (fault_named(guard_layers[k].fault) && layer_acted(plan, guard_layers[k].rule, hint))
			for (size_t i = 0; i < s->outputs.n; i++)
				unlink(s->outputs.v[i]);
}

/* 1 if a note says what nvshim did (a rewrite, a retry), not only advice about the build as
 * asked (targets.sass_only: the line runs as given). */
static int note_acts(const char *note)
{
	static const char *const advice[] = { "[targets.sass_only]" };
	size_t n = strlen(note);
	for (size_t i = 0; i < sizeof(advice) / sizeof(advice[0]); i++) {
		size_t k = strlen(advice[i]);
		if (n >= k && !strcmp(note + n - k, advice[i]))
			return 0;
	}
	return 1;
}

int session_guarded(const struct session *s, const struct plan *plan, int changed)
{
	int acted = changed;
	for (size_t i = 0; i < plan->notes.n && !acted; i++)
		acted = note_acts(plan->notes.v[i]);
	return s->fallback.n > 0 && s->outputs.n > 0 && acted;
}

int session_guard(struct session *s, struct plan *plan, int changed, int status, const char *hint)
{
	if (status || runner_signal() || !session_guarded(s, plan, changed))
		return status;
	guard_fault(s, plan, hint);
	const char *why = NULL;
	const char *missing = outputs_check(&s->outputs, s->started, &why);
	if (!missing)
		return status;
	const char *rule;
	const char *layer = guard_layer(plan, hint, &rule);
	char *tail = rule ? xasprintf(", %s%s", rule, rule[strlen(rule) - 1] == '.' ? "*" : "") : xstrdup("");
	plan_note(plan, "outputs.missing", "%s %s after %s (status 0%s): nvshim's fault; running the command "
		  "as given, as %s would", missing, !strcmp(why, "missing") ? "is missing" : "was not written",
		  layer, tail, lbasename(s->fallback.v[0]));
	free(tail);
	error("%s", plan->notes.v[plan->notes.n - 1]);
	struct run_result res = { 127, 0, 0 };
	fflush(NULL);
	runner_run(s->fallback.v[0], &s->fallback, &res);
	return res.status;
}

/* The heavy stages of the nvcc this process waited for, from the memory budget's journal
 * (buildwide/memgate.h): the lines nvcc's gate wrote with this process as nvcc's parent, in
 * the last `wall_ms`. */
static void session_memory_stages(const struct session *s, double wall_ms, struct argv *out)
{
	char *dir = threads_slot_dir(s->cfg.cache_dir);
	char *path = dir ? concat(dir, "/mem/journal", NULL) : NULL;
	char *text = path ? cache_read(path) : NULL;
	long long since = memgate_now_ms() - (long long)wall_ms - 1000;
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		struct memgate_entry e;
		if (!memgate_parse_journal_line(line, &e) && e.pid == (long long)getpid() && e.start_ms >= since)
			argv_pushf(out, "%s: peak %lld MiB, expected %lld MiB, waited %lld ms for memory, budget %lld MiB, "
				   "%lld ms%s%s%s", e.kind, e.peak_kb >> 10, e.est_kb >> 10, e.waited_ms, e.budget_kb >> 10,
				   e.end_ms - e.start_ms, strchr(e.flags, 'o') ? ", alone over the budget" : "",
				   strchr(e.flags, 'r') ? ", run again" : "", strchr(e.flags, 'k') ? ", killed for memory" : "");
		line = nl ? nl + 1 : NULL;
	}
	free(text);
	free(path);
	free(dir);
}

/* After nvcc ran: the log line (log_file), the record (stats), and the exit status (1 when
 * strict made a warning an error). */
int session_ran(const struct session *s, const struct plan *plan, const struct argv *argv_in, int status)
{
	struct argv notes = ARGV_INIT;
	argv_copy(&notes, &plan->notes);
	int sig = runner_signal();
	if (sig) {
		/* Not a note of the plan: it is said once, at verbosity verbose, and logged. */
		argv_pushf(&notes, "nvshim received signal %d (%s) while %s ran: it was passed on and "
			   "waited for; nothing more was run (retries, probes and reproducers are "
			   "skipped) [runner.signal]", sig, strsignal(sig), lbasename(plan->tool));
		diag_note(VERBOSITY_VERBOSE, "%s", notes.v[notes.n - 1]);
	}
	if (s->cfg.log_file && *s->cfg.log_file) {
		unsigned long probes, hits, quieted;
		const struct build *b = build_current(session_env);
		char *build = b ? concat(b->tool, " ", b->id, NULL) : NULL;
		stats_process_counts(&probes, &hits, &quieted);
		double wall = runner_now_ms() - s->start_ms;
		struct argv stages = ARGV_INIT;
		session_memory_stages(s, wall, &stages);
		struct logfile_entry e = { plan->tool, argv_in, &plan->argv, &notes, status,
					   wall, build, quieted, stages.n ? &stages : NULL };
		logfile_write(s->cfg.log_file, &e);
		argv_release(&stages);
		free(build);
	}
	session_record(s, plan);
	argv_release(&notes);
	return status == 0 && diag_strict_errors() ? 1 : status;
}

/* Puts the launcher setting's program in front of nvcc when this invocation compiles. Returns 0,
 * or -1 after a warning when the launcher cannot be found (nvcc then runs without it). */
int session_add_launcher(const struct session *s, int wanted, struct plan *plan)
{
	if (!s->cfg.launcher || !*s->cfg.launcher || !wanted)
		return 0;
	char *path, *why;
	if (launcher_find(s->cfg.launcher, session_env, &s->self, &path, &why)) {
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

void session_devices_init(struct session_devices *sd, const struct session *s)
{
	memset(sd, 0, sizeof(*sd));
	sd->s = s;
	devices_init(&sd->d);
}

void session_devices_release(struct session_devices *sd)
{
	devices_release(&sd->d);
}

char *session_quiet_nvcc(void *arg)
{
	struct session *s = arg;
	char *found = NULL, *how = NULL;
	FILE *null = fopen("/dev/null", "w");
	if (!null)
		return NULL;
	diag_set_stream(null);
	if (locate_nvcc(&s->cfg, session_env, &s->self, &found, &how))
		found = NULL;
	diag_set_stream(NULL);
	fclose(null);
	free(how);
	return found;
}
