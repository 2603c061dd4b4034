/* diagnose: reads what a failed nvcc run printed on stderr and says what kind of failure it was.
 *
 * Only the real tools' own messages are matched (FACTS.md), never nvshim's:
 *   DIAGNOSE_ARCH_MIN       ptxas: "Feature 'cp.async' requires .target sm_80 or higher"
 *                           the source needs a target of at least `arch`
 *   DIAGNOSE_ARCH_SPECIFIC  ptxas: "Instruction 'wgmma.fence' not supported on .target 'sm_90'"
 *                           the source needs an arch-specific (a/f) target; `arch` is the one
 *                           that failed
 *   DIAGNOSE_ARCH_GUARD     front end: an error that often depends on the target being built
 *                           (#error, static_assert, exception handling or host calls in device
 *                           code, an incomplete wmma fragment type): only building each target
 *                           on its own tells whether it does
 *   DIAGNOSE_ERROR          any other error line
 * Each finding keeps the line it came from, and the source file and line where the message
 * names them.
 */
#ifndef NVSHIM_DIAGNOSE_H
#define NVSHIM_DIAGNOSE_H

#include <stddef.h>

enum diagnose_kind {
	DIAGNOSE_ERROR,
	DIAGNOSE_ARCH_MIN,
	DIAGNOSE_ARCH_SPECIFIC,
	DIAGNOSE_ARCH_GUARD,
};

struct diagnose_finding {
	enum diagnose_kind kind;
	unsigned arch;   /* ARCH_MIN: the minimum; ARCH_SPECIFIC: the target that failed; else 0 */
	char *what;      /* the feature or instruction (ptxas), else the message after "error:" */
	char *file;      /* the source the message names, or NULL (ptxas names its temporary PTX) */
	unsigned line;   /* its line, or 0 */
	char *text;      /* the whole line as the tool printed it */
};

struct diagnosis {
	struct diagnose_finding *v;
	size_t n, alloc;
};

void diagnose_init(struct diagnosis *d);
void diagnose_release(struct diagnosis *d);

/* Classifies every error line of a tool's stderr, appending to d. Returns the number found. */
size_t diagnose_stderr(struct diagnosis *d, const char *text);

/* The first finding of this kind, or NULL. */
const struct diagnose_finding *diagnose_find(const struct diagnosis *d, enum diagnose_kind kind);
/* 1 if a finding says the failure may depend on the target (any ARCH_* kind). */
int diagnose_arch_related(const struct diagnosis *d);
/* "requires sm_80", "needs an arch-specific target", "device code does not support exception
 * handling (line 17)": a short reason for a note (xmalloc'ed). */
char *diagnose_reason(const struct diagnose_finding *f);
const char *diagnose_kind_name(enum diagnose_kind kind);

#endif
