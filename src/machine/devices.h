/* devices: the compute capabilities of the GPUs this build is for.
 *
 * NVSHIM_DEVICES overrides everything ("90,80", "sm_90", "9.0"; empty: no GPU): for tests, and
 * for build farms whose builders have no GPU. Otherwise the GPUs are detected by
 * libexec/nvshim/nvshim-devices (NVML, else the driver API, both loaded with dlopen) and cached
 * in <cache_dir>/devices, keyed by the driver (/proc/driver/nvidia/version) and the library
 * path, so a warm lookup reads one small file and runs nothing. CUDA_VISIBLE_DEVICES (indices
 * or GPU-UUID prefixes, up to the first entry that matches nothing, as CUDA reads it) selects
 * among the detected GPUs. No GPU is an empty set, never an error.
 */
#ifndef NVSHIM_DEVICES_H
#define NVSHIM_DEVICES_H

#include <stddef.h>

#include "model/config.h"

#define DEVICES_MAX 64

struct device {
	unsigned cc;   /* 90 for compute capability 9.0 */
	char uuid[64]; /* "GPU-..." or "" */
};

struct devices {
	struct device v[DEVICES_MAX];
	size_t n;
	char *source; /* "NVSHIM_DEVICES", "cache FILE", "nvshim-devices (NVML)", ... */
};

void devices_init(struct devices *d);
void devices_release(struct devices *d);

/* Parses a NVSHIM_DEVICES value. Returns 0, or -1 with *why (static text). */
int devices_parse(struct devices *d, const char *text, const char **why);
/* Keeps the devices CUDA_VISIBLE_DEVICES selects, in its order. NULL keeps all. */
void devices_select(struct devices *d, const char *visible);

/* Loads the devices as described above. helper is the nvshim-devices program (NULL: none).
 * Never fails: problems are warnings and give an empty set. */
void devices_load(struct devices *d, config_getenv_fn env, const char *cache_dir, const char *helper);

#endif
