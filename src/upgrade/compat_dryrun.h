/* compat_dryrun: the compatibility layer (compat.h) for a compile whose steps nvshim never runs.
 *
 * sccache in front of nvshim decomposes every nvcc compile: it asks `nvcc ARGS -E -Xcompiler=-P`
 * for the text its cache key hashes, then `nvcc ARGS --dryrun --keep` (twice), and runs the
 * listed steps (cudafe++, cicc, ptxas, ...) itself, caching each by its inputs. nvshim never
 * sees the front end fail, so compat_after_failure() cannot act. Here, for a --dryrun of a
 * compile, or an -E that keeps its compile's -c, -dc or -dw or has -Xcompiler=-P (sccache's
 * key: an -E alone, a user's or ccache's, is left to nvcc), with `compat = auto`, nvshim decides beforehand whether
 * the compile needs the layer,
 * and if so answers with the layered compile: the -E text of the layered source, the steps of
 * the layered command line. Whoever runs those steps builds what compat_after_failure() would
 * have built, and a cache that keys on them keys on the layer.
 *
 * The decision, cheap first:
 *  1. the gate: the source and the project headers it includes with quotes (found as the
 *     compiler does: beside the including file, then the -I directories; two levels deep, at most
 *     16 files) are read for an identifier that a `compat` entry of the API table names (the
 *     part after the last "::": clockRate, unary_function, cudaMemAdvise). None: nvcc's own
 *     answer, nothing else is run (byte for byte nvcc's).
 *  2. the verdict, cached in <cache_dir>/compat/verdicts/KEY: KEY hashes the nvcc binary (path,
 *     size, mtime), the working directory, NVCC_PREPEND_FLAGS/NVCC_APPEND_FLAGS, the layer's
 *     identity (compat_identity()), the arguments that reach the front end (all but modes,
 *     outputs, targets, dependency and driver options: so the -E and the --dryrun of one compile
 *     share it), the source's real path and bytes and the bytes of the headers the gate read.
 *  3. without one, the check, under the key's lock (sccache's two --dryrun may run at once):
 *     the front end of the compile (nvcc's own steps from its --dryrun, run up to and including
 *     cudafe++, in a private directory: host preprocessing and the EDG front end, where CUDA
 *     13's removals fail). It passes: plain. It fails: compat_decide() on its errors; a retry
 *     that the front end of the layered line passes: the layer; else plain. The verdict is
 *     stored; a second --dryrun of the compile reads it.
 * CUDA 13's moved files (layout.h) come first, in nvcc mode: the gate also lets through a
 * source or project header that #includes an NVTX 2 header (or cuda_texture_types.h,
 * cuda_surface_types.h) by its bare name, when the toolkit no longer has NVTX 2; where the check's
 * front end fails on such a header, it runs again with layout_dryrun_fix()'s line (include/nvtx3,
 * nvshim's type headers), and the layer's decision, if still needed, is taken on that run's
 * errors. The verdict keeps it ("layout N HEADER"); the answer is the fixed line (note
 * compat.layout), layered on top where the layer is needed too.
 * The layered line is compat_layer()'s with a lasting private copy (a field rewrite's copy must
 * outlive nvshim: the caller runs the steps later). Fail open: anything that goes wrong leaves
 * the line unchanged.
 *
 * CC mode (nvshim as the host compiler, ctx->host): sccache treats nvshim as gcc, hashes the
 * text of `COMPILER -x LANG -E [-P] ARGS SOURCE` (its preprocess_cmd: the language first, then
 * -E; -P unless its preprocessor cache mode is on) and on a miss runs the compile, where nvshim
 * retries with the layer itself. Such an -E of a source that includes the CUDA headers (an -E
 * not so begun, a user's, is the compiler's) is decided the same way, the check being the host
 * compiler's -fsyntax-only on the line (plain, then layered), and answered with the layered
 * preprocessing where the compile needs the layer. And whenever the gate hits, with compat =
 * auto or off, the -E force-includes nvshim/compat/sccache.h, whose line marker names a file
 * that does not exist: sccache's preprocessor cache mode then stores no entry for the source
 * (an entry would skip the -E on the next build, and hand back an object built with the layer
 * to a build without it, or the reverse).
 */
#ifndef NVSHIM_COMPAT_DRYRUN_H
#define NVSHIM_COMPAT_DRYRUN_H

#include <stddef.h>

#include "base/argv.h"
#include "diagnose/api.h"
#include "upgrade/compat.h"
#include "model/hostcc.h"
#include "model/invocation.h"
#include "model/plan.h"

/* The identifiers the gate looks for: for each entry of `t` with a compat key that applies to
 * toolkit_version (NULL: all), the last "::" part of its name and of each `also` spelling;
 * sorted, each once. Pure. */
void compat_dryrun_names(const struct api_table *t, const char *toolkit_version, struct argv *names);

/* 1 if text holds one of `names` (sorted) as a whole identifier. Pure. */
int compat_dryrun_gate(const char *text, const struct argv *names);

/* The front end's arguments for a compile line (parsed without the environment's flags):
 * every argument but the mode, output, target, dependency, driver and information options and
 * -Xcompiler=-P or -EP (sccache's, which would take the line markers the errors are read by), -x first
 * (nvcc applies it to every input; none where the source's suffix says the same), then the compile's mode (-dc, -dw, else -c). *source: the index in *out of the one source. Returns 0,
 * or -1 when the line is not one compile of one C, C++ or CUDA source. Pure. */
int compat_dryrun_front_args(const struct invocation *inv, struct argv *out, size_t *source);

/* A verdict's file text (xmalloc'ed): d->retry says the layer; its headers, entries and sites
 * (line and field: the file is the source) are kept; `why`, for a plain verdict, says why. */
char *compat_dryrun_verdict_format(const char *key, const struct compat_decision *d, const char *why);

/* Reads a verdict for `key` into d (initialised) and *why (xmalloc'ed or NULL); the sites' file
 * is "". Returns 0, or -1 when the text is not a whole verdict for that key (d is then empty).
 * Pure. */
int compat_dryrun_verdict_parse(const char *text, const char *key, struct compat_decision *d, char **why);

/* For a --dryrun or -E line in `plan` with compat = auto: decides (the gate, the verdict, with
 * `check` the check when there is none) and, where the compile needs the layer, puts the
 * layered line in plan->argv with a note (rule compat.dryrun). `*what` (may be NULL) gets a
 * line for `nvshim explain` (xmalloc'ed, NULL when the line is not one this handles). Returns
 * 1 when the line has the layer, 0 otherwise. Fail open. */
int compat_dryrun_apply(const struct compat_context *ctx, struct plan *plan, int check, char **what);

/* CC mode: 1 if a host compiler's arguments (argv[0] not among them) are sccache's -E of a
 * compile: they begin `-x LANG -E`. Pure. */
int compat_dryrun_host_is_key(const struct argv *args);

/* CC mode: the check's arguments for sccache's -E line `hc` (argv[0] not among them): every
 * argument but -E, -P, -fdirectives-only, -frewrite-includes, -o and the dependency options,
 * then -fsyntax-only. *source: the index in *out of the one source. Returns 0, or -1 when the
 * line is not one C or C++ source (or came from an @file). Pure. */
int compat_dryrun_host_front_args(const struct hostcc *hc, struct argv *out, size_t *source);

/* CC mode (ctx->host): compat_dryrun_apply() for sccache's -E line in plan (the host compiler's
 * line; hc: its arguments parsed), and the mark for sccache's preprocessor cache mode (above).
 * Returns 1 when the line has the layer, 0 otherwise. Fail open. */
int compat_dryrun_host_apply(const struct compat_context *ctx, const struct hostcc *hc, struct plan *plan, int check,
			     char **what);

#endif
