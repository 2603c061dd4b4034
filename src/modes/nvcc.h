/* nvcc: nvcc mode, the flow every compile through nvshim takes.
 *
 *   parse     the command line becomes an invocation (invocation.h)
 *   passes    targets (targets.h), link (link.h), then modules (modules.h) on what the others
 *             made; each edits the plan and adds its notes; none runs a process
 *   plan      the notes said, the gates checked (gates.h), the launcher put in front, a long
 *             line passed in an options file
 *   run       nvcc exec'ed when nothing remains to do after it; otherwise run and waited for,
 *             its stderr held where a failure may be diagnosed (the link retry, the modules
 *             pass's probe and retry, crash bundles and resource notes: crash.h)
 *   after-run the log line, the stacks of what it built, the exit status
 *
 * CC mode (cc.h) and `nvshim explain` (commands/) use the same pieces.
 */
#ifndef NVSHIM_NVCC_H
#define NVSHIM_NVCC_H

#include "base/argv.h"
#include "model/invocation.h"
#include "model/plan.h"
#include "buildwide/threads.h"
#include "machine/toolkit.h"
#include "diagnose/api.h"
#include "diagnose/crash.h"
#include "modes/session.h"
#include "passes/link.h"
#include "passes/modules.h"

/* What the passes keep for running the commands: the modules pass's plan and the facts they
 * used (the toolkit's read once for all of them, the GPUs when first asked for). */
struct nvcc_passes {
	struct toolkit tk;
	struct session_devices devs;
	struct modules_plan mp;
	struct modules_context mctx;
	int tk_state; /* the toolkit's facts: 0 not read yet, 1 read, -1 not to be had */
};

void nvcc_passes_init(struct nvcc_passes *ps, const struct session *s, const char *nvcc);
void nvcc_passes_release(struct nvcc_passes *ps);

/* The passes over inv (the line plan was made from, for nvcc): targets, link, modules. before
 * and after (may be NULL) receive the target options as given and as rewritten (after stays
 * empty when the targets pass left them, and when it took them all out). Returns 1 if the
 * targets pass rewrote the target options, else 0. Fail open: a pass that cannot get its facts
 * changes nothing. */
int nvcc_plan(const struct session *s, const struct invocation *inv, const char *nvcc, struct plan *plan,
	      struct nvcc_passes *ps, struct link_result *link, struct argv *before, struct argv *after);

/* The link pass over a request of CC mode (nvcc NULL: the toolkit is looked for quietly). */
void nvcc_link_request_pass(const struct session *s, struct link_request *req, const char *nvcc,
			    struct plan *plan, struct link_result *res);

/* The launcher (plan->tool, when it is not nvcc) goes in front of every command the modules
 * pass split the line into. */
void nvcc_modules_launcher(struct nvcc_passes *ps, const struct plan *plan, const char *nvcc);

/* The threads step (threads.h), after the passes: for a compile of several targets whose line
 * has no --threads/-t, K from the CPUs, compilers, memory, nvshim's slots and make's jobserver;
 * K > 1 goes to nvcc as --threads K in NVCC_APPEND_FLAGS (the arguments, and so every cache's
 * key, stay as they are); with libnvshim-gate.so beside nvshim, nvcc's stages take turns in the
 * slots (preload/gate.h). With `acquire`, slots and tokens are taken into `hold` (released by
 * threads_hold_release() once nvcc has run), which threads_hold_apply() then puts in the
 * environment just before nvcc runs; without, nothing is taken (explain). Adds a note (rule
 * threads.auto) when it applies; returns K (1: nothing to add). Fail open: a failure of the
 * accounting gives 1. With split_compile (auto: a targets_only build), and the gate in front of
 * nvcc, also --split-compile S (hold->split, note threads.split): each cicc and ptxas stage gets
 * one thread for its slot and one for each slot free when it starts, up to S (preload/gate.h);
 * `ps` and `nvcc` give the toolkit's version (the option is nvcc 11.8's). */
/* The memory budget: the gate with MEMGATE_ENV for nvcc (acquire: in hold). Returns the budget
 * as text for explain (xmalloc'ed), or NULL when no budget applies. */
char *nvcc_memory_step(const struct session *s, const struct invocation *inv, struct threads_hold *hold,
		       int acquire);
/* What each kind of heavy stage is expected to peak at now, as text (xmalloc'ed). */
char *nvcc_memory_estimates(const struct session *s);
unsigned nvcc_threads_step(const struct session *s, const struct invocation *inv, struct plan *plan,
			   struct threads_hold *hold, int acquire, struct nvcc_passes *ps, const char *nvcc);

/* view_unmap() on the session's arguments, with the real nvcc (NULL in CC mode: the one on
 * PATH past nvshim) for a view that is gone: what it rewrote ("<view> -> <root>", xmalloc'ed),
 * or NULL. Nothing is looked up unless an argument names a toolkit-view/ path. */
char *nvcc_unmap_view(struct session *s, const char *nvcc);

/* The note (rule toolkit.view, a routine one) of what view_unmap() rewrote on the line; takes
 * `unmapped` (NULL: nothing was, no note). */
void nvcc_note_unmapped(struct plan *plan, char *unmapped);

/* Says the plan's notes: routine notes (CC mode's, the threads step's) at verbosity verbose,
 * every other as a rewrite (nvcc_say_note()). */
void nvcc_print_notes(const struct session *s, const struct plan *plan);
/* Whether a note ("<text> [<rule>]") is about the whole build: the targets rules' notes. */
int nvcc_note_build_wide(const char *note);
/* Says one rewrite note. With repeat_notes = once, a build-wide note is said by the first
 * compile of the build (build.h) that makes it, with a hint, and only counted by the others
 * (once.h); a note about one source, or a compile outside any build, is always said. */
void nvcc_say_note(const struct session *s, const char *note);

/* Runs the plan and logs it. With nothing to do afterwards nvshim replaces itself with the
 * tool; otherwise it waits. A run that nvshim may look at afterwards runs with its stderr held:
 * a link that may fail for want of -lcuda runs once more with `retry` added when it fails on an
 * undefined driver symbol (rule link.retry); a watched compile (`watch`, crash.h) goes to
 * nvcc_after_run(), which passes the stderr on and explains crashes, resource errors and
 * removed CUDA APIs, with the upgrade layer's retry between (compat.h); otherwise the stderr is passed on unchanged, and with `api` (CC mode's host
 * compiler on a source that includes the CUDA headers) a failed run's errors about removed or
 * changed CUDA APIs get their notes (api.h). Returns the exit status. */
int nvcc_run(struct session *s, struct plan *plan, const struct argv *argv_in, const struct argv *retry,
	     const struct crash_context *watch, const struct api_context *api);

/* nvcc mode from the passes' plan on: the notes, the gates, the launcher, the line (an options
 * file when long), then the run (the modules pass's commands, crash watching) and what follows
 * it. `name` and `given`: the command nvshim was given (nvcc, or the host compiler's name in CC
 * mode), for the log and to tell whether the line changed. */
int nvcc_execute(struct session *s, const char *nvcc, const struct invocation *inv, struct plan *plan,
		 struct nvcc_passes *ps, struct link_result *link, const char *name, char **given,
		 size_t ngiven);

/* nvcc mode on args[0..n): returns the exit status. */
int nvcc_main(int n, char **args);

#endif
