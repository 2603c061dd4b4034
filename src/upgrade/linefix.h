/* linefix: upgrade breaks that one changed option fixes, after a failed run.
 *
 * Some builds written for an older toolkit stop on CUDA 13 not on an API but on the line itself,
 * and the fix is an option the user would write by hand:
 *   - CCCL 3 (Thrust, CUB, libcu++; cooperative_groups.h includes libcu++) compiles only as C++17
 *     or newer: `#error Thrust requires at least C++17. Define CCCL_IGNORE_DEPRECATED_CPP_DIALECT
 *     ...` under -std=c++14 (CMAKE_CUDA_STANDARD 14). The -std value becomes c++17 (gnu++17 for a
 *     gnu++ one): GCC and Clang keep one ABI across dialects, and CCCL 3 compiles in no other.
 *     Defining the macro only moves the failure into libcu++. Setting `cxx_dialect` (auto, off).
 *   - CUDA 13 deprecated double4, long4, ulong4, longlong4 and ulonglong4 for their _16a and _32a
 *     forms; under -Werror the deprecation is fatal. The toolkit's own
 *     -D__NV_NO_VECTOR_DEPRECATION_DIAG silences it; the types are unchanged.
 *   - the host compiler is newer than nvcc accepts (`unsupported GNU version! gcc versions later
 *     than 15 are not supported!`, the clang form): the newest accepted g++-N or clang++-N of the
 *     same family on PATH becomes -ccbin (nvcc mode).
 *   - a .ptx input newer than the toolkit's ptxas (`ptxas fatal : Unsupported .version 9.5;
 *     current version is '9.0'`): the line runs with a newer nvcc found on the machine (another
 *     /usr/local/cuda-X.Y, the package index's nvidia-cuda-nvcc under a python prefix on PATH or
 *     ~/.local), whose ptxas reads it; none found: a note names the toolkit the ISA needs.
 *   - a Thrust name that a header no longer declares through the headers it includes
 *     (`namespace "thrust" has no member "distance"`; gcc: `'distance' is not a member of
 *     'thrust'`): the name's public header is force-included (-include thrust/distance.h).
 * Only when every error of the run is one of these (so a fix cannot hide another cause), and only
 * once: if the run again passes, its output, stderr and status are the compile's, with one note
 * per cause and build (rules compat.dialect, compat.vector, compat.hostcc, compat.ptxas,
 * compat.include) naming the lasting fix; if it fails, the first run's stderr and status stand
 * (a note at verbosity verbose). A compile that passes never gets here. The setting `compat`
 * (auto, off) switches it with the compatibility layer.
 */
#ifndef NVSHIM_LINEFIX_H
#define NVSHIM_LINEFIX_H

#include "base/argv.h"
#include "base/runner.h"
#include "model/plan.h"
#include "upgrade/compat.h"

enum linefix_need {
	LINEFIX_DIALECT = 1,  /* CCCL 3's C++17 floor */
	LINEFIX_VECTOR = 2,   /* double4 and its kin deprecated, fatal under -Werror */
	LINEFIX_HOSTCC = 4,   /* a host compiler newer than nvcc accepts */
	LINEFIX_PTXAS = 8,    /* a .ptx newer than the toolkit's ptxas */
	LINEFIX_INCLUDE = 16  /* a Thrust name no longer declared through transitive includes */
};

/* What a failed run's stderr says, read by linefix_read(). */
struct linefix_found {
	unsigned need;        /* LINEFIX_* bits; 0 when some error is of none of them */
	char *vector_type;    /* "double4": the first deprecated vector type named */
	unsigned host_family; /* 'g' (GNU) or 'c' (clang) */
	unsigned host_max;    /* the newest major version nvcc accepts (15) */
	unsigned ptx_isa;     /* the PTX ISA the input has, major * 10 + minor (95) */
	unsigned ptxas_isa;   /* the newest one the ptxas reads (90) */
	struct argv names;    /* "distance": the Thrust names not declared, each once */
	struct argv headers;  /* "thrust/distance.h": their public headers, each once */
};

void linefix_found_init(struct linefix_found *f);
void linefix_found_release(struct linefix_found *f);

/* Reads a failed run's stderr into *f. Returns f->need. Pure. */
unsigned linefix_read(const char *held, struct linefix_found *f);

/* The public header (static) that declares thrust::NAME, or NULL when nvshim does not know it. */
const char *linefix_thrust_header(const char *name);

/* The -std value of a C++ dialect older than C++17 on the line (the argument's index in *at, and
 * 1 in *split when the value is the next argument), or NULL. Pure. */
const char *linefix_old_dialect(const struct argv *line, size_t *at, int *split);

/* The line (argv[0] first) with the fixes of `need` that apply without looking at the machine
 * (LINEFIX_DIALECT, LINEFIX_VECTOR, LINEFIX_INCLUDE) into *out, and what was added into *added
 * ("-std=c++17"). `dialect`: 0 leaves the dialect as it is. Returns the bits applied. Pure. */
unsigned linefix_apply(const struct argv *line, const struct linefix_found *f, int dialect, struct argv *out,
		       struct argv *added);

/* The toolkit (CUDA X.Y) whose ptxas first reads PTX ISA `isa` (major * 10 + minor), as "13.5";
 * static storage. */
const char *linefix_isa_toolkit(unsigned isa);

/* After a run of `plan` that failed (res, *held: its stderr, not yet passed on). Returns 1 when
 * the run again passed: *res and *held are then its; 0 otherwise, with both as they were. Adds
 * its notes to plan (a cause nothing on the machine fixes gets its note here too). */
int linefix_after_failure(const struct compat_context *ctx, struct plan *plan, struct run_result *res,
			  char **held);

#endif
