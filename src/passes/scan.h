/* scan: what a CUDA source certainly needs, read from its text (no process is run).
 *
 * scan_file() reads a source and the headers it includes from its own project (quoted
 * includes relative to the including file, then -I directories; angle includes through -I
 * directories only; never a header outside the project root, below the toolkit, or inside a
 * nested repository such as a git submodule), and records:
 *   - markers: inline PTX in asm statements (cp.async, ldmatrix, stmatrix, cp.async.bulk,
 *     elect.sync, mbarrier.try_wait, fence.proxy.async, barrier.cluster, redux.sync, fp8 .e4m3 /
 *     .e5m2, mma m16n8k8 / m16n8k16, wgmma., setmaxnreg, tcgen05.), wmma fragments of bf16,
 *     tf32 or double, __cluster_dims__;
 *   - #error directives and static_assert(false / 0, ...) outside templates;
 *   - where each stands: the chain of preprocessor conditions around it, the device function,
 *     kernel or macro it is in, and the functions and macros every kernel refers to.
 * Comments and strings outside asm statements are skipped, so a marker in host text counts for
 * nothing.
 *
 * scan_check() then answers, for one front-end arch (the virtual arch of a target), whether the
 * source certainly fails to build. "Certainly" means: the marker is compiled for that arch for
 * sure (each condition around it evaluates to true for it: __CUDA_ARCH__, the
 * __CUDA_ARCH_FEAT_SMNN_ALL / _SPECIFIC__ / _FAMILY_SPECIFIC__ macros, -D/-U of the command
 * line; any other macro is unknown), and it is reached: it stands in a kernel that is not a
 * template, or in a function or macro that such a kernel names (transitively), never inside a
 * template kernel, an `if constexpr`, or the arguments of an ALL_CAPS macro. #error and
 * static_assert(false) count when their branch is taken for that arch and not in the host pass.
 * Anything less certain is left to the probe: a scan may only drop or upgrade when it is sure.
 * The feature table was read off ptxas 13.0 (every marker assembled for every target).
 */
#ifndef NVSHIM_SCAN_H
#define NVSHIM_SCAN_H

#include <stddef.h>

#include "model/arch.h"
#include "base/argv.h"

struct scan_cond {
	struct scan_cond *parent;
	char *expr;           /* the branch's condition, "1" for always */
	unsigned unknown : 1; /* a context that cannot be told (a header included from several) */
};

struct scan_feature {
	const char *text;     /* what is searched */
	int ptx;              /* 1: inside asm strings; 0: in code */
	unsigned min;         /* the lowest arch number that has it */
	const char *specific; /* NULL, or the only arch-specific forms that have it: "90a" */
	const char *name;     /* for notes */
};

enum scan_mark_kind { SCAN_FEATURE, SCAN_ERROR_DIRECTIVE, SCAN_STATIC_ASSERT };

struct scan_mark {
	enum scan_mark_kind kind;
	const struct scan_feature *feature; /* SCAN_FEATURE */
	char *text;                         /* the #error or static_assert message */
	size_t file;                        /* index in files */
	unsigned line;
	struct scan_cond *cond;
	int func;            /* the function or macro it is in, -1 at file scope */
	unsigned uncertain : 1;
};

struct scan_func {
	char *name;
	unsigned kernel : 1, templated : 1, macro : 1;
	unsigned ambiguous : 1; /* another function or macro has this name */
	struct scan_cond *cond; /* where it is defined */
};

struct scan_ref {
	int from;     /* the function whose body names it */
	int target;   /* the function or macro it names */
	struct scan_cond *cond;
	unsigned uncertain : 1;
};

struct scan_file {
	char *path;
	char *text;
	size_t len;
	struct scan_cond *root;
};

struct scan {
	struct scan_file *files;
	size_t nfiles, files_alloc;
	struct scan_mark *marks;
	size_t nmarks, marks_alloc;
	struct scan_func *funcs;
	size_t nfuncs, funcs_alloc;
	struct scan_ref *refs;
	size_t nrefs, refs_alloc;
	struct scan_cond **conds;
	size_t nconds, conds_alloc;
	int *htab;         /* function names: index in funcs, -1 empty */
	size_t hsize, hcount;
	size_t bytes;      /* read so far */
	unsigned truncated : 1; /* a limit stopped the include walk */
};

struct scan_options {
	const struct argv *include_dirs; /* -I directories as given (relative to the working directory) */
	const char *project_root;        /* absolute; headers outside it are not read */
	const char *toolkit_root;        /* absolute or NULL; nothing below it is read */
	size_t max_files;                /* 0: 256 */
	size_t max_bytes;                /* 0: 4 MiB */
};

void scan_init(struct scan *s);
void scan_release(struct scan *s);

/* Scans path and its project headers. Returns 0, or -1 if path cannot be read or is larger
 * than max_bytes. */
int scan_file(struct scan *s, const char *path, const struct scan_options *o);
/* Scans text as if it were the file `name` (its includes are resolved like scan_file's). */
int scan_text(struct scan *s, const char *name, const char *text, const struct scan_options *o);

/* 1 if the source certainly cannot be built for the front-end arch `virt` (a compute_ arch),
 * with *why (xmalloc'ed) saying what and where: "wgmma. needs sm_90a (line 12)". 0 if the scan
 * cannot tell. `defines` holds the -D (NAME or NAME=VALUE) and -U (-NAME) of the command line. */
int scan_fails(const struct scan *s, const struct arch *virt, const struct argv *defines, char **why);

/* 1 if the source has code that only the arch-specific form `suffix` of arch `num` compiles,
 * for sure, while the plain form certainly does not (wgmma under __CUDA_ARCH_FEAT_SM90_ALL):
 * plain sm_NN would build silently without it. *why as above. */
int scan_specific_code(const struct scan *s, unsigned num, char suffix, const struct argv *defines,
		       char **why);

/* Evaluates a preprocessor condition for a front-end arch (virt NULL: the host pass): 1 true,
 * 0 false, -1 unknown. */
int scan_eval(const char *expr, const struct arch *virt, const struct argv *defines);

/* The feature table. */
extern const struct scan_feature scan_features[];
extern const size_t scan_nfeatures;

#endif
