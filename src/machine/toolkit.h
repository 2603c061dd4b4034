/* toolkit: facts about an nvcc, read by running it, and cached.
 *
 * toolkit_version() runs `nvcc --version` and reads "release X.Y, VX.Y.Z" from its banner.
 * toolkit_list() runs `nvcc --list-gpu-code` or `--list-gpu-arch` and returns the names.
 *
 * toolkit_load() gathers what the target rules need: the version, and every target the nvcc
 * accepts, with the arch-specific (a) and family (f) forms that only the "Allowed values" of
 * --gpu-code in `nvcc --help` shows. The facts are cached in <cache_dir>/toolkit/, one file per
 * nvcc, keyed by its resolved path, size and modification time; the file is written to a
 * temporary name and renamed, so concurrent builds never read half a file, and a file that does
 * not parse is ignored and rewritten. With a warm cache no nvcc runs.
 */
#ifndef NVSHIM_TOOLKIT_H
#define NVSHIM_TOOLKIT_H

#include "model/arch.h"
#include "base/argv.h"

/* Returns the version as "13.0.88" (xmalloc'ed), or NULL if nvcc did not say. */
char *toolkit_version(const char *nvcc);
/* Fills out with one name per line of `nvcc <option>`. Returns 0 or -1. */
int toolkit_list(const char *nvcc, const char *option, struct argv *out);
/* Parses a --version banner; NULL if it is not nvcc's. */
char *toolkit_parse_version(const char *banner);
/* Appends the 'quoted' names of the "Allowed values" of --gpu-code in `nvcc --help` text. */
void toolkit_parse_allowed(const char *help, struct argv *out);

struct toolkit {
	char *nvcc;          /* the nvcc these facts are about */
	char *version;       /* "13.0.88" */
	unsigned major, minor;
	struct argv targets; /* every accepted name: sm_NN[a|f], compute_NN[a|f], lto_NN[a|f] */
	char *source;        /* where the facts came from: "cache FILE" or "nvcc" */
};

void toolkit_init(struct toolkit *tk);
void toolkit_release(struct toolkit *tk);
/* Loads the facts for nvcc, from the cache under cache_dir when it is current (cache_dir NULL:
 * no cache). Returns 0, or -1 after a warning when nvcc could not tell. */
int toolkit_load(struct toolkit *tk, const char *nvcc, const char *cache_dir);
/* 1 if the toolkit accepts this target name. */
int toolkit_accepts(const struct toolkit *tk, const struct arch *a);
/* The number a toolkit uses for a retired number, or the number itself (13.0: 101 -> 110). */
unsigned toolkit_renamed(const struct toolkit *tk, unsigned num);

/* The toolkit root of an nvcc path: two directories up from .../bin/nvcc, as written (resolve
 * the path first for the real toolkit's); "/" for /bin/nvcc; xmalloc'ed, or NULL. */
char *toolkit_root(const char *nvcc);

#endif
