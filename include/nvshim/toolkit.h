/* toolkit: facts about an nvcc, read by running it (for doctor and explain).
 *
 * toolkit_version() runs `nvcc --version` and reads "release X.Y, VX.Y.Z" from its banner.
 * toolkit_list() runs `nvcc --list-gpu-code` or `--list-gpu-arch` and returns the names.
 */
#ifndef NVSHIM_TOOLKIT_H
#define NVSHIM_TOOLKIT_H

#include "nvshim/argv.h"

/* Returns the version as "13.0.88" (xmalloc'ed), or NULL if nvcc did not say. */
char *toolkit_version(const char *nvcc);
/* Fills out with one name per line of `nvcc <option>`. Returns 0 or -1. */
int toolkit_list(const char *nvcc, const char *option, struct argv *out);
/* Parses a --version banner; NULL if it is not nvcc's. */
char *toolkit_parse_version(const char *banner);

#endif
