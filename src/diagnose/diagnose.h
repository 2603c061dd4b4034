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
 *   DIAGNOSE_CRASH          a stage died of a signal. nvcc says so itself when /bin/sh is bash:
 *                             nvcc error   : 'cicc' died due to signal 11 (Invalid memory reference)
 *                             nvcc error   : '"$CICC_PATH/cicc"' died due to signal 6      (13.0)
 *                             nvcc error   : 'cicc' core dumped
 *                           (`what` is the stage: cicc, cudafe++, ptxas, fatbinary, nvlink, ...);
 *                           with dash as /bin/sh the shell that nvcc runs each stage in reports
 *                           it, on a line of its own ("Segmentation fault", "Killed",
 *                           "Aborted (core dumped)"), and nvcc exits with 128+N: `what` is NULL
 *                           and only the exit status confirms it (crash_detect() does)
 *   DIAGNOSE_RESOURCE       a kernel asks for more than a GPU has (ptxas, cicc, the JIT linker):
 *                             Entry function '_Z2mmPf' uses too much shared data (0xc080 bytes, 0xc000 max)
 *                             Entry function 'K' uses too much local data (0x... bytes, 0x... max)
 *                             File uses too much global constant data (0x13880 bytes, 0x10000 max)
 *                             Entry function 'K' uses too much parameter space (0x9c48 bytes, 0x7ffc max).
 *                             K.cu(2): Error: Formal parameter space overflowed (40008 bytes
 *                               required, max 32764 bytes allowed) in function K
 *                             (C7602) Insufficient registers (64) to compile instruction at line
 *                               141 in function K. Try to compile with register target of 154 or higher.
 *                             (C7600) Register allocation failed with register count of '64'. ...
 *                           `resource` says which, with the kernel, the value and the limit
 *   DIAGNOSE_ERROR          any other error line
 * Each finding keeps the line it came from, and the source file and line where the message
 * names them. tests/unit/data/ holds the messages of nvcc 11.8, 12.4 and 13.0 and of ptxas
 * 11.8, 12.4, 12.9 and 13.0 that the unit tests classify, and the scripts that captured them.
 */
#ifndef NVSHIM_DIAGNOSE_H
#define NVSHIM_DIAGNOSE_H

#include <stddef.h>

enum diagnose_kind {
	DIAGNOSE_ERROR,
	DIAGNOSE_ARCH_MIN,
	DIAGNOSE_ARCH_SPECIFIC,
	DIAGNOSE_ARCH_GUARD,
	DIAGNOSE_CRASH,
	DIAGNOSE_RESOURCE,
};

enum diagnose_resource {
	RESOURCE_NONE,
	RESOURCE_SHARED,    /* static shared memory per block */
	RESOURCE_LOCAL,     /* local memory (the stack) per thread */
	RESOURCE_CONSTANT,  /* constant memory: a file's __constant__ data, or one kernel's bank */
	RESOURCE_PARAM,     /* kernel parameters */
	RESOURCE_REGISTERS, /* registers per thread */
};

struct diagnose_finding {
	enum diagnose_kind kind;
	unsigned arch;   /* ARCH_MIN: the minimum; ARCH_SPECIFIC: the target that failed; else 0 */
	char *what;      /* the feature or instruction (ptxas), else the message after "error:" */
	char *file;      /* the source the message names, or NULL (ptxas names its temporary PTX) */
	unsigned line;   /* its line, or 0 */
	char *text;      /* the whole line as the tool printed it */
	/* DIAGNOSE_CRASH: `what` is the stage, or NULL when only a shell named the signal. */
	int signal;      /* the signal that ended it, or 0 when unknown */
	unsigned core : 1; /* it dumped core */
	/* DIAGNOSE_RESOURCE */
	enum diagnose_resource resource;
	char *kernel;              /* the kernel as the message names it (mangled), or NULL */
	unsigned long long value;  /* what it uses: bytes, or registers; 0 when not said */
	unsigned long long limit;  /* the most it may use: bytes, or registers; 0 when not said */
	unsigned long long system; /* bytes the system reserves on top of `value`, or 0 */
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
/* "shared", "local", "constant", "parameter", "registers". */
const char *diagnose_resource_name(enum diagnose_resource r);

/* How a shell names a signal ("Segmentation fault", "Killed", "Aborted"), as dash and bash
 * print it (and strsignal in the C locale); NULL for a signal it does not know. */
const char *diagnose_signal_name(int sig);
/* 1 for the signals with which the system stops a process (SIGKILL, as the out-of-memory
 * killer sends it, and SIGTERM) rather than the process crashing: a run that ended so may
 * pass when run again. */
int diagnose_signal_flaky(int sig);

/* The explanation of a DIAGNOSE_RESOURCE finding, as one line without a trailing newline
 * (xmalloc'ed): the kernel (demangled, with the mangled name), what it uses and the limit, the
 * target when known (`target`: "sm_80", or NULL), and the usual remedy: dynamic shared memory
 * with cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize) and the most the
 * target allows, -maxrregcount / __launch_bounds__, smaller tiles, large parameters by pointer,
 * big tables in global memory. Pure: no process, no file; the preload library uses it for
 * NVRTC and JIT linker logs. NULL for any other kind of finding. */
char *diagnose_explain_resource(const struct diagnose_finding *f, const char *target);

struct argv;
/* Pushes onto `out` the explanation of each resource finding of `d`, one kernel and resource
 * once, as "TEXT [resource.NAME]" (the rule that a note names). Returns how many it pushed. */
size_t diagnose_resource_notes(const struct diagnosis *d, const char *target, struct argv *out);

#endif
