/* modules: the pass that gives each CUDA source the requested targets it can build for.
 *
 * For every CUDA source of a compile, each requested (virtual arch, code) pair is kept,
 * dropped or upgraded, by the first of these that knows (each names its rule in its note):
 *   modules.rules  [module "GLOB"] rules of the configuration (rules.h): drop, min_arch,
 *                  max_arch, require
 *   modules.scan   what a scan of the source and its project headers is sure of (scan.h):
 *                  a pair that certainly fails is upgraded to the first of its raised, f or a
 *                  forms that the scan does not rule out, else dropped; sm_NN is upgraded to
 *                  sm_NNa (or f) when the source has code only that form compiles
 *   modules.probe  the verdict of an earlier probe, cached (verdict.h): a failing unit is
 *                  replaced by a passing raised/f/a form, else dropped
 *   modules.stubs  what an earlier build's object showed (stubs.h), cached in the verdict: a
 *                  plain sm_NN whose kernels only the f/a form builds gets that form (its plain
 *                  PTX kept, for forward compatibility); a target on which every kernel is a
 *                  stub while another target has the code is dropped
 * Upgrades keep nvcc's single-pass form (-gencode=arch=compute_90a,code=[sm_90a,compute_90a]).
 * A source for which nothing would remain builds the requested list unchanged (never an empty
 * build): nvcc's own failure then says why, and the probe names every target's first error.
 * Sources that end with the same list and flags share one nvcc command; otherwise one command
 * per distinct list (-c a.cu b.cu -> one command per list, outputs where nvcc puts them; a
 * compile-and-link compiles each list into a private directory and links the objects).
 * When a dropped target leaves an installed GPU without code, a note says so.
 *
 * The pass reads files (the sources, their project headers, the rules directory, the verdict
 * cache) but runs nothing. modules_run() runs the commands: with stderr held, so that an
 * architecture-related failure (diagnose.h) can be probed — each unit of the failing source
 * compiled on its own (-cubin into a private directory), `jobs` at a time — and retried once
 * with the new verdict, and so that a failure nvshim cannot fix reaches the user exactly as nvcc
 * printed it.
 */
#ifndef NVSHIM_MODULES_H
#define NVSHIM_MODULES_H

#include "model/arch.h"
#include "model/config.h"
#include "machine/devices.h"
#include "model/invocation.h"
#include "model/plan.h"
#include "model/rules.h"
#include "base/runner.h"
#include "passes/scan.h"
#include "machine/toolkit.h"
#include "passes/verdict.h"

struct modules_context {
	const struct config *cfg;
	const struct toolkit *tk;
	const struct devices *(*devices)(void *arg);
	void *devices_arg;
	const char *nvcc;    /* the real nvcc, part of the verdict key */
	const char *exe_dir; /* nvshim's directory: the shipped rules are found from it */
	const char *cwd;     /* NULL: getcwd() */
	/* A command that failed and that no probe or retry mends: passes its held stderr on (and may
	 * diagnose it: crash.h). NULL: the stderr is written out as it is. */
	void (*failed)(void *arg, const struct argv *ran, struct run_result *res, char **held);
	void *failed_arg;
	/* The link pass may retry the link (link.h): a compile-and-link is split into its compiles
	 * and one link, so that a retry runs the link alone, never the compiles again. */
	int split_link;
};

struct module_source {
	char *path; /* as given */
	char *abs;
	size_t pos;                /* its element in the analysed command line */
	struct arch_list list;     /* the targets it builds */
	struct argv flags;         /* extra arguments from rules */
	struct rule_effect rules;
	struct scan scan;
	int scanned;
	char key[33];              /* verdict key, "" when there is none */
	struct verdict verdict;
	int group;
};

struct modules_group {
	struct argv argv; /* the command; argv[0] is nvcc's path */
	struct arch_list list;
	struct argv flags;
	char *objdir;     /* a split compile-and-link: where this group's objects go */
};

struct modules_plan {
	int active;   /* the pass looked at this invocation */
	int hold;     /* run with stderr held: a failure may be probed */
	int decide;   /* targets may be decided before compiling (modules_decide()): as hold, and a
		       * --dryrun too, whose stages sccache-dist runs itself */
	int dryrun;   /* a --dryrun: the caller (sccache) runs the compile, so its object is never
		       * nvshim's to read; stub targets are decided before it (modules_decide()) */
	int undone;   /* the last MODULES_RETRY took back a form decided before compiling */
	enum inv_mode mode;
	int rdc;
	struct arch_list requested;
	struct module_source *src;
	size_t nsrc;
	struct modules_group *groups;
	size_t ngroups;
	int split;         /* several commands: the groups (and the link), not plan->argv */
	struct argv link;  /* after the groups: the link command of a split compile-and-link */
	char *tmpdir;      /* its private directory */
	char *output;      /* -o, or NULL */
	char *odir;        /* --output-directory, or NULL */
	struct argv base;  /* every probe's arguments: no target, mode, output or input */
	struct argv defines;
	struct argv libdirs; /* -I and -isystem directories (as given): where library headers come from */
	struct argv explain; /* one line per source for `nvshim explain` */
};

void modules_plan_init(struct modules_plan *mp);
/* Frees everything and removes the private directory of a split link. */
void modules_plan_release(struct modules_plan *mp);

/* 1 if the pass has something to do for this invocation (toolkit facts are then worth having). */
int modules_wanted(const struct invocation *inv, const struct config *cfg);

/* Plans the invocation: inv is plan->argv[1..] parsed (after the targets pass). With one
 * command, plan->argv becomes it; with several, they are in mp->groups (and mp->link). Adds
 * notes to plan. Returns 1 if the commands differ from plan->argv as it was. */
int modules_pass(const struct invocation *inv, const struct modules_context *ctx, struct plan *plan,
		 struct modules_plan *mp);

/* The list source i builds with its rules, scan and verdict as they are now. */
void modules_source_list(const struct modules_plan *mp, size_t i, const struct modules_context *ctx,
			 struct arch_list *out, struct plan *notes);

/* 1 if no requested target of source i is known to build, with one line per target in *lines:
 * "sm_75: <its first error line, or the reason>". *certain (may be NULL) is set when a rule or
 * the scan, not only the probe, ruled targets out. */
int modules_source_impossible(const struct modules_plan *mp, size_t i, const struct modules_context *ctx,
			      struct argv *lines, int *certain);

/* The probe unit of a pair: "compute_90:sm_90" (a PTX code is checked by assembling it for its
 * own arch), or NULL for an LTO code, which is not probed. xmalloc'ed. */
char *modules_unit(const struct target *t);
/* The forms a failing pair may be upgraded to, best first: the virtual arch raised to the code's,
 * then the f and a forms the toolkit accepts. */
size_t modules_candidates(const struct target *t, const struct toolkit *tk, struct target out[3]);

/* 1 if source's targets were decided before compiling, from its preprocessed device code
 * (modules_decide(); the verdict's "method:specific" unit), rather than by the object. */
int modules_decided_early(const struct verdict *v);

/* The verdict unit of a stub finding for a target: "specific:compute_90:sm_90" (kernels that
 * only the a/f form builds), "stubs:compute_75:sm_75" (every kernel a stub). xmalloc'ed. */
char *modules_stub_unit(const char *kind, const struct target *t);
/* The file nvcc writes source i's kernels to (its object, or the program of a one-source
 * compile-and-link), or NULL when the build writes none nvshim can attribute to it. */
char *modules_object(const struct modules_plan *mp, size_t i);

enum modules_outcome { MODULES_DONE, MODULES_RETRY };

/* Before the first compile: each source's plain sm_NN targets that have f/a forms and no
 * decision in the verdict yet are decided by preprocessing the device code for each form
 * (`nvcc -E`, in parallel; a fraction of a compile): the same text keeps the plain target, a
 * different one takes the form (f where it preprocesses as a does, else a). The decision goes
 * into the verdict (as `specific:` units, read by the pass like the object check's), with the
 * files the source came from. Adds a note per source ([modules.decide], verbose: the method
 * and its cost). Returns 1 when a list changes (plan again). */
int modules_decide(struct modules_plan *mp, const struct modules_context *ctx, struct plan *plan);

/* Runs the planned commands (plan->argv, or the groups and the link). On an architecture-related
 * failure with allow_probe, probes the failing sources, stores their verdicts and returns
 * MODULES_RETRY when they change a list (the caller plans again and calls this once more without
 * probing, or with probing once more when mp->undone: a form decided before compiling was taken
 * back, and the next form may fail in its turn); otherwise prints the held stderr as nvcc wrote it (and, when no requested target of a
 * source builds, one error naming each target and its first error line) and returns
 * MODULES_DONE with res->status. A link that fails on an undefined driver symbol runs once more
 * with `retry` added (the link pass's rule link.retry), as execute() does for other commands. */
enum modules_outcome modules_run(struct modules_plan *mp, struct plan *plan, const struct modules_context *ctx,
				 int allow_probe, const struct argv *retry, struct run_result *res);

#endif
