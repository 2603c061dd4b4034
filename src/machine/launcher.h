/* launcher: compiler caches and distributed compilers (ccache, sccache, distcc) around nvshim.
 *
 * In front of nvcc, the recommended order: the `launcher` setting names a program (found on
 * PATH when it has no slash) and nvshim runs `LAUNCHER NVCC ARGS...` with the rewritten
 * arguments, so the cache key and a distributed job hold the final target list and device
 * detection happens once, where nvshim runs. It applies to compilations only, as CMake's
 * <LANG>_COMPILER_LAUNCHER does: not to links, -E, -M, dry runs or information options.
 *
 * Behind a cache (CMAKE_CUDA_COMPILER_LAUNCHER=ccache with nvshim as the compiler), the cache
 * hashes nvshim's arguments and its file, never nvshim's settings or the GPUs it found. The
 * fingerprint is a short text that changes whenever something other than the arguments could
 * change nvshim's rewrite: nvshim's version and file, the real nvcc's path, size and mtime,
 * every setting that is not CONF_NEUTRAL, and the GPUs. `nvshim fingerprint` prints it, for
 * ccache's compiler_check (`%compiler% --nvshim-fingerprint`) and sccache's
 * SCCACHE_C_CUSTOM_CACHE_BUSTER.
 */
#ifndef NVSHIM_LAUNCHER_H
#define NVSHIM_LAUNCHER_H

#include "base/argv.h"
#include "model/config.h"
#include "machine/devices.h"
#include "model/invocation.h"
#include "machine/locate.h"
#include "model/plan.h"

/* 1 if this invocation compiles a source (a cache could take it), else 0. */
int launcher_wanted(const struct invocation *inv);

/* Finds the launcher program named by `setting`. Returns 0 with *path (xmalloc'ed) set, or -1
 * with *why (xmalloc'ed) saying why not: not found, not executable, nvshim itself. */
int launcher_find(const char *setting, config_getenv_fn env, const struct self *self, char **path,
		  char **why);

/* Puts the launcher in front: the plan then runs `launcher` with argv [launcher, nvcc, args...]. */
void launcher_apply(struct plan *p, const char *launcher);

/* The text the fingerprint is made of, one `name = value` line per input (xmalloc'ed).
 * nvshim_exe and nvcc may be NULL (unknown); devices may be NULL (not looked up). */
char *launcher_fingerprint_text(const struct config *c, const char *nvshim_exe, const char *nvcc,
				const struct devices *devices);
/* The fingerprint of that text: "nvshim-<version>-<16 hex digits>" (xmalloc'ed). */
char *launcher_fingerprint(const char *text);

#endif
