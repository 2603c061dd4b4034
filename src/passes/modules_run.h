/* modules_run.h: what modules_run.c (the commands, the probe, the object's stub check) lends
 * modules_decide.c (targets decided before compiling). Both are the modules pass (modules.h);
 * nothing else includes this. */
#ifndef NVSHIM_MODULES_RUN_H
#define NVSHIM_MODULES_RUN_H

#include <stddef.h>

#include "base/argv.h"
#include "model/config.h"
#include "passes/modules.h"

/* How many probe compiles run at once: the jobs setting, else the machine's processors. */
unsigned modules_jobs_of(const struct config *cfg);
/* A private directory $TMPDIR/nvshim-NAME-XXXXXX (xmalloc'ed), or NULL with a warning naming
 * `what` (none when NULL). */
char *modules_private_dir(const char *name, const char *what);
/* Takes the lock of source s's verdict and reads it again: another build may have learnt
 * something meanwhile. Returns the lock, for verdict_unlock(). */
int modules_verdict_relock(struct module_source *s, const char *cache_dir);
/* The files a preprocessed source came from (its line markers), as verdict dependencies. */
void modules_deps_of(const char *ii, struct argv *deps);
/* Records in the verdict the trapping code only target f's form compiles (f_text against
 * a_text), for the object to show later whether a kernel holds it. */
void modules_own_code_store(struct verdict *v, const struct target *f, const char *f_text, const char *a_text);
/* The stub check of source i on the object at obj (taken; NULL: none): records its findings in
 * the verdict with `learn`; 1 when the list changes (stubs.h). */
int modules_check_stubs_in(struct modules_plan *mp, size_t i, const struct modules_context *ctx, struct plan *plan,
			   int learn, char *obj);
/* Each machine-code target of source i with no "stubs:" unit yet gets a passing one, with
 * `reason` (checked: what a target found to have its code, some kernels compiled out, none at
 * all, or a compile that failed leaves), stored in its verdict. */
void modules_mark_checked(struct modules_plan *mp, size_t i, const struct modules_context *ctx, const char *reason);

#endif
