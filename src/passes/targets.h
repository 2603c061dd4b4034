/* targets: the pass that turns a command line's GPU target list into one the installed nvcc
 * accepts and the installed GPUs can run, and says what it changed.
 *
 * Rules, each named in its notes and each with a setting to turn it off:
 *   targets.unsupported    targets the toolkit does not accept are dropped (renamed ones mapped:
 *                          sm_101 -> sm_110 on 13.0; a virtual arch below the toolkit's lowest is
 *                          raised when its codes survive); when nothing would remain: the GPUs'
 *                          targets, else fallback_archs, else nvcc's default, and a note says so
 *   targets.native         -arch=native becomes explicit targets for the detected GPUs; with
 *                          none, fallback_archs (with a warning when that is unset too)
 *   targets.arch_specific  -arch=sm_NNa becomes -gencode arch=compute_NNa,code=[sm_NNa,compute_NNa]
 *   targets.ensure_devices when no requested target can run on an installed GPU, that GPU's
 *                          target is added (as SASS or PTX)
 *   targets.no_arch        a line with no target option is kept unless when_no_arch = devices
 *   targets.only           targets_only (devices, or compute capabilities): each GPU keeps the
 *                          requested targets it would load (its best machine code, else its best
 *                          PTX), the others are not built; a GPU none runs on gets its own
 *                          target; ensure_devices is then not applied
 *   targets.forward_ptx    forward_ptx = highest: machine code without plain PTX for its highest
 *                          target gets that target's PTX (not in -cubin, -ptx, -optix-ir, -ltoir)
 * -arch=all and -arch=all-major are left to nvcc; duplicates go, the user's order stays.
 * Target options are replaced where the first of them stood. Targets that come from
 * NVCC_PREPEND_FLAGS, NVCC_APPEND_FLAGS or a file are left alone, with a note.
 * CMake's compiler identification builds and information options are never changed; -E and -M
 * only when nvcc would reject their targets (it checks them there too, and compiler caches run
 * nvcc -E or -M before every compile) or targets_only or forward_ptx is set: they then get the
 * compile's rewrite.
 */
#ifndef NVSHIM_TARGETS_H
#define NVSHIM_TARGETS_H

#include "model/arch.h"
#include "model/config.h"
#include "machine/devices.h"
#include "model/invocation.h"
#include "model/plan.h"
#include "machine/toolkit.h"

struct targets_context {
	const struct config *cfg;
	const struct toolkit *tk;
	/* Called when the pass needs the GPUs, so that they are looked up only then. */
	const struct devices *(*devices)(void *arg);
	void *devices_arg;
};

/* 1 if the pass has something to look at in this invocation (so the toolkit facts are worth
 * loading), else 0. */
int targets_wanted(const struct invocation *inv, const struct config *cfg);

/* Rewrites plan (whose argv[1..] are inv->argv) and adds notes. Returns 1 if it changed the
 * command line, 0 if not. `before` and `after`, when not NULL, receive the target arguments as
 * given and as they will run (for explain). */
int targets_pass(const struct invocation *inv, const struct targets_context *ctx, struct plan *plan,
		 struct argv *before, struct argv *after);

/* 1 if targets_only or forward_ptx is set: every target list may change. */
int targets_only_active(const struct config *cfg);

/* 1 if a GPU of compute capability cc can run something in the list. */
int targets_run_on(const struct arch_list *l, unsigned cc);

/* The kind of code a one-code mode (-cubin, -ptx, -optix-ir, -ltoir) writes (arch.h:
 * arch_list_one_code()). */
enum arch_kind one_code_kind(enum inv_mode mode);

#endif
