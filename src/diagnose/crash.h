/* crash: what nvshim does after nvcc failed: a crash of nvcc or of one of its stages, and
 * ptxas's resource errors.
 *
 * For an invocation that compiles (crash_wanted()), nvshim runs nvcc with its stderr held
 * (runner_run_held) and then calls crash_run_begin() and crash_run_end() (modes/nvcc.c puts
 * the upgrade layer's retry, upgrade/compat.h, between the two), which together
 *   1. detects a crash (crash_detect): nvcc killed by a signal (its exit status), or a stage
 *      that died of one: nvcc's "'cicc' died due to signal 11 (...)" line (/bin/sh is bash), or
 *      a shell's "Segmentation fault" line with nvcc's exit status 128+N (/bin/sh is dash);
 *   2. for the kind the system causes (SIGKILL, as the out-of-memory killer sends, or SIGTERM)
 *      runs nvcc once more when crash_retry = once, saying so in a warning;
 *   3. prints nvcc's stderr exactly as nvcc wrote it;
 *   4. explains each resource error (diagnose_explain_resource) in an info line;
 *   5. names the replacement of each removed or changed CUDA API an error is about (api.h), in
 *      an info line that also goes into plan->notes (the log's), unless the upgrade layer
 *      repaired the compile;
 *   6. for a crash, writes a reproducer bundle (crash_bundle) and names its folder in one line.
 * The exit status stays nvcc's. Nothing here may fail a build: a bundle that cannot be written
 * costs one warning.
 *
 * Locating the crash. nvcc prints which stage died but not for which source and target, so
 * crash_bundle() asks nvcc for its steps (`--dryrun` with the same arguments, TMPDIR pointing
 * at a private directory) and runs them again in that directory, in order, up to the failing
 * one: every step of the crashed stage but the last is run to see whether it dies of the signal;
 * the last one is not run again (nvcc stopped there or the crash did not happen again).
 * The steps before it leave the failing step's inputs (the preprocessed source .ii, the PTX)
 * in the private directory, from where they go into the bundle. Outputs a step would write
 * outside that directory (-o, -MF) are sent into it. When nvcc itself died, or the steps
 * cannot be had, only the preprocessing steps are run; the sources and headers they name (not
 * the toolkit's or /usr's) are copied to tree/<absolute path>, and repro.sh reruns the nvcc
 * command in tree/<working directory> with absolute paths into tree/ rewritten, or in the
 * original working directory when the copy is incomplete.
 *
 * The bundle: <crash_dir>/<time>-<stage>-<source>-XXXXXX/ (mode 0700) with README.txt,
 * command.txt, environment.txt, versions.txt, config.txt, stderr.txt, dryrun.txt, replay.txt,
 * preprocessed/, inputs/, tree/ and repro.sh. Files that would take it over crash_bundle_max_size
 * are left out and listed in README.txt; the oldest bundles beyond crash_keep are removed.
 */
#ifndef NVSHIM_CRASH_H
#define NVSHIM_CRASH_H

#include <stddef.h>

#include "base/argv.h"
#include "model/config.h"
#include "model/invocation.h"
#include "model/plan.h"
#include "base/runner.h"

struct crash {
	char *stage;  /* "cicc", "ptxas", ...; "nvcc" when nvcc itself died; NULL when only a shell
		       * named the signal (crash_bundle() finds the stage) */
	int signal;
	int core;     /* it dumped core */
	int flaky;    /* the system stopped it (SIGKILL, SIGTERM): it may pass when run again */
	char *source; /* the source it was compiling, when known */
	char *target; /* "compute_90", "sm_90", when known */
};

struct crash_context {
	const struct config *cfg;
	const char *nvcc;             /* the real nvcc */
	const struct argv *args_in;   /* the arguments nvshim was given, without argv[0] */
	const struct invocation *inv; /* the same, parsed */
	const char *exe_dir;          /* where nvshim runs from (the installed API table) */
	const char *(*env)(const char *name); /* the environment (the build a note is said once in) */
	struct argv *notes;           /* where a command run apart from the plan (the modules pass's)
				       * leaves the compatibility layer's notes, for the log; may be NULL */
};

/* 1 if nvcc's stderr should be held for this invocation: it compiles or links (not -E, -M,
 * --dryrun, --run or an information option) and something here is switched on. */
int crash_wanted(const struct invocation *inv, const struct config *cfg);

/* Reads a finished run. Returns 1 and fills *c if nvcc or one of its stages died of a signal
 * (SIGINT, SIGQUIT, SIGHUP and SIGPIPE are the user's or the terminal's doing, not a crash).
 * Pure. */
int crash_detect(const struct run_result *res, const char *held, struct crash *c);
void crash_release(struct crash *c);
/* "'cicc' died of signal 11 (Segmentation fault) compiling k.cu for compute_90" (xmalloc'ed). */
char *crash_describe(const struct crash *c);

/* The crash_dir setting, or <cache_dir>/crashes (xmalloc'ed). */
char *crash_dir(const struct config *cfg);

/* Steps 1 and 2 above. res and *held are those of the run of plan->argv; after a retry they are
 * the retry's. Returns 1 for a crash (*c filled), 0 for none, -1 when nvshim was stopped by a
 * signal (*held printed; nothing more is done, and *c is untouched). */
int crash_run_begin(const struct crash_context *ctx, struct plan *plan, struct run_result *res,
		    char **held, struct crash *c);
/* Steps 4 to 6, once the caller has printed held (step 3): `crashed` is what crash_run_begin()
 * returned; `restored` says that the compile was repaired after the run (the upgrade layer's
 * retry: no API notes then). Releases *c. */
void crash_run_end(const struct crash_context *ctx, struct plan *plan, const struct run_result *res,
		   const char *held, int crashed, struct crash *c, int restored);

/* Writes the reproducer bundle of a crash of the run of plan->argv (held: its stderr), fills in
 * c->stage, c->source and c->target where it finds them, and returns the bundle's path
 * (xmalloc'ed), or NULL after one warning. */
char *crash_bundle(const struct crash_context *ctx, const struct plan *plan, const char *held,
		   struct crash *c);

/* Removes the oldest bundles in dir (folders named as crash_bundle() names them) until at most
 * `keep` remain. Returns how many were removed. */
size_t crash_prune(const char *dir, size_t keep);

/* After a compile that passed: the kernels of its outputs (the objects of -c, the program of
 * a link, a -cubin or -fatbin file; read with elf_cuda_stacks) whose stack per thread is past
 * what a launch allows (512 KiB, less what the system keeps: CRASH_STACK_MAX). nvcc builds
 * them, but every launch fails with cudaErrorInvalidValue; each gets one note with the usual
 * remedy [resource.local]. Only for commands that compile a CUDA source; never fails. Returns
 * how many notes it gave. */
#define CRASH_STACK_MAX (511u * 1024u)
size_t crash_check_stacks(const struct invocation *inv);

/* The real targets of a command line in the order given: "sm_80", "sm_80 or sm_90", or NULL
 * when it names none (xmalloc'ed). For the resource notes. */
char *crash_targets_text(char *const *args, size_t n);

#endif
