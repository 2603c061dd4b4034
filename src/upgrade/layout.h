/* layout: CUDA 13's moved and removed files, for builds written for CUDA 12.
 *
 * CUDA 13.0 moved CCCL 3 (Thrust, CUB, libcu++, nv/) from include/ to include/cccl/, which nvcc
 * adds to its own line and a host compiler does not, and removed NVTX 2 (include/nvToolsExt*.h,
 * lib64/libnvToolsExt.so) for NVTX 3 (include/nvtx3/, header-only, the same API). A build written
 * for 12.x stops on them before any API is reached:
 *   x.cpp:1:10: fatal error: thrust/host_vector.h: No such file or directory      (gcc)
 *   x.cpp:1:10: fatal error: 'cub/cub.cuh' file not found                         (clang)
 *   x.cu(1): catastrophic error: cannot open source file "nvToolsExt.h"           (EDG)
 *   /usr/bin/ld: cannot find -lnvToolsExt: No such file or directory              (ld)
 *
 * After such a failure (only then: a compile that passes never gets here) the line runs once
 * more with what 13.0's own nvcc compiles against:
 *   - a Thrust, CUB, libcu++ or nv/ header missing that <toolkit>/include/cccl has, and the
 *     toolkit's include/ on the line (-I, -isystem, -idirafter; compared resolved): the same
 *     option with include/cccl right after it (nvcc mode never needs it: nvcc adds it);
 *   - an NVTX 2 header missing (nvToolsExt.h, nvToolsExtCuda.h, ...) that include/nvtx3 has, or
 *     a line that links -lnvToolsExt: include/nvtx3 after the toolkit's include/ (nvcc mode: at
 *     the end of the line); NVTX 3's headers implement the v2 API, and they are the files a
 *     12.x build would read under their own names;
 *   - -lnvToolsExt when the linker cannot find it and the toolkit has no libnvToolsExt: taken
 *     out (NVTX 3 needs no library: its calls reach a profiler's injection library through
 *     NVTX_INJECTION64_PATH, as NVTX 2's did).
 *   - cuda_texture_types.h or cuda_surface_types.h missing (13.0 removed them; since 12.0 they
 *     only included channel_descriptor.h and cuda_runtime_api.h): nvshim's headers of that
 *     content, include/nvshim/compat/cuda12/, last on the line (-idirafter; nvcc: -I at the end).
 * texture_fetch_functions.h and surface_functions.h (the references' fetch functions) are not
 * restored: a note (compat.none) names the lasting fix.
 * If that run passes, its output, stderr and status are the compile's, with one note (rule
 * compat.layout, said once per build) naming what was added and the lasting fix for the build
 * file; if it fails, the first run's stderr and status stand (a note at verbosity verbose).
 * The setting `compat` (auto, off) switches it with the compatibility layer.
 */
#ifndef NVSHIM_LAYOUT_H
#define NVSHIM_LAYOUT_H

#include "base/argv.h"
#include "base/runner.h"
#include "model/plan.h"
#include "upgrade/compat.h"

enum layout_need {
	LAYOUT_CCCL = 1,    /* a CCCL header was not found */
	LAYOUT_NVTX = 2,    /* an NVTX 2 header was not found */
	LAYOUT_NVTX_LIB = 4, /* the linker did not find -lnvToolsExt */
	LAYOUT_GONE = 8,     /* a header 13.0 removed with texture and surface references: a note */
	LAYOUT_TYPES = 16    /* cuda_texture_types.h, cuda_surface_types.h: nvshim's copies */
};

/* What a failed run's stderr says is missing (LAYOUT_* bits), 0 for none. *header (may be
 * NULL) gets the first header named (xmalloc'ed). Pure. */
unsigned layout_missing(const char *held, char **header);

/* 1 if the line links libnvToolsExt: -lnvToolsExt, -l nvToolsExt, --library[=]nvToolsExt. */
int layout_links_nvtx(const struct argv *line);

/* 1 if an include directory on a host compiler's line (-I, -isystem, -idirafter) is a CUDA 13
 * toolkit's include/, the one CCCL moved out of (it has cccl/thrust): a compile of that line may
 * fail on a CCCL header however deep it is included, so CC mode holds its stderr. A stat per
 * include directory. */
int layout_host_may_need(const struct argv *line);

/* The line to run again (*out, with argv[0]) for what `need` says on the toolkit at root; `host`:
 * the tool is a host compiler. *added gets what was changed, for the note ("-I/x/include/cccl
 * after /x/include"). cuda12: nvshim's include/nvshim/compat/cuda12, or NULL. Returns 0, or -1 when nothing applies (the directory is not there, the
 * toolkit's include/ is not on a host compiler's line). Reads the file system only. */
int layout_fix(const struct argv *line, unsigned need, const char *root, const char *cuda12, int host,
	       struct argv *out, struct argv *added);

/* After a run of `plan` that failed (res, *held: its stderr, not yet passed on). Returns 1 when
 * the run again passed: *res and *held are then its; 0 otherwise, with both as they were. */
int layout_after_failure(const struct compat_context *ctx, struct plan *plan, struct run_result *res,
			 char **held);

/* A compile whose steps a caller runs (sccache: `nvcc -E` for its key, then the steps of
 * `nvcc --dryrun`), where no failed run comes back to nvshim: compat_dryrun.h checks the front
 * end beforehand and answers with the fixed line. Only what nvcc mode needs (NVTX 2's headers,
 * cuda_texture_types.h and cuda_surface_types.h); a host compile behind sccache is compiled
 * through nvshim, which retries it itself. */

/* 1 if text (a source or a header it includes) #includes an NVTX 2 header or one of the two
 * removed type headers by its bare name (<nvToolsExt.h>, not <nvtx3/nvToolsExt.h>): the gate
 * before any check is run. Pure. */
int layout_dryrun_gate(const char *text);

/* 1 if the toolkit of ctx's nvcc no longer has NVTX 2 (include/nvToolsExt.h): a CUDA 13 one. */
int layout_dryrun_moved(const struct compat_context *ctx);

/* layout_fix() of an nvcc line for the LAYOUT_NVTX and LAYOUT_TYPES bits of `need`, on the
 * toolkit of ctx's nvcc. Returns 0, or -1 when nothing applies (out and added then empty). */
int layout_dryrun_fix(const struct compat_context *ctx, const struct argv *line, unsigned need,
		      struct argv *out, struct argv *added);

/* The note (rule compat.layout) for a line fixed that way (xmalloc'ed): `header` as
 * layout_missing() found it, `goes` what takes the fix ("the steps --dryrun prints compile
 * with"), `added` as layout_dryrun_fix() said it, `then` after it (" (verdict: cached)"). */
char *layout_dryrun_note(unsigned need, const char *header, const struct argv *added, const char *goes,
			 const char *then);

#endif
