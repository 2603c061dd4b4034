/* headers: the include directories an NVRTC needs, found from where that NVRTC came from.
 *
 * NVRTC searches no directory of its own for CUDA's headers: a program that includes
 * <cooperative_groups.h>, <cuda/std/...> or <cub/...> must pass -I for them. Where they are
 * depends on how CUDA got onto the machine (FACTS.md); the library's path says which:
 *
 *   toolkit   <root>/lib64/libnvrtc.so (-> targets/<arch>/lib): <root>/include, and on 13.x its
 *             cccl/ (nvcc adds it: nvcc.profile's `-isystem $(TOP)/include/cccl`)
 *   conda     <prefix>/lib or <prefix>/targets/<arch>/lib: <prefix>/targets/<arch>/include (+cccl)
 *   cu13 wheels  site-packages/nvidia/cu13/lib/libnvrtc.so.13: nvidia/cu13/include, into which
 *             nvidia-cuda-runtime, nvidia-cuda-crt (crt/) and nvidia-cuda-cccl (cccl/, nv/)
 *             all install
 *   cu12 (cu11) wheels  site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12: one package a
 *             directory: nvidia/cuda_runtime/include, nvidia/cuda_cccl/include (cub, cuda, nv,
 *             thrust at its top), nvidia/cuda_nvcc/include (crt/)
 *
 * A set is complete when it has the runtime headers (cuda_runtime.h, cooperative_groups.h),
 * CCCL (cuda/std/, nv/target) and, from 13.0 on where crt/ is a package of its own, crt/. When
 * the set beside NVRTC is not, a complete one of the same major version elsewhere (roots: a
 * toolkit, a conda prefix or a site-packages directory) is the alternative; when there is none,
 * headers_install_hint names the packages to install for the layout NVRTC came from.
 *
 * Only the file system is read (stat, and the first lines of cuda.h for its CUDA_VERSION). */
#ifndef NVSHIM_HEADERS_H
#define NVSHIM_HEADERS_H

#include <stddef.h>

#include "base/argv.h"

/* The parts of CUDA's headers NVRTC programs include. */
enum headers_part {
	HEADERS_RUNTIME = 1, /* cuda_runtime.h, cooperative_groups.h, mma.h, cuda_fp16.h, ... */
	HEADERS_CRT = 2,     /* crt/ */
	HEADERS_CCCL = 4,    /* cuda/, cub/, thrust/, nv/ */
};

enum headers_layout {
	HEADERS_NONE,       /* no set */
	HEADERS_TOOLKIT,    /* a CUDA toolkit */
	HEADERS_CONDA,      /* a conda environment */
	HEADERS_WHEEL,      /* the cu13 wheels: one directory nvidia/cuNN */
	HEADERS_WHEEL_SPLIT /* the cu12 and cu11 wheels: nvidia/cuda_<package> each */
};

struct headers_set {
	enum headers_layout layout;
	struct argv dirs; /* the include directories, in -I order (those that exist) */
	unsigned parts;   /* the headers_part found in dirs */
	int version;      /* CUDA_VERSION of its cuda.h (13000 for 13.0), 0 when it has none */
	char *where;      /* the directory that names it in notes */
};

struct headers {
	struct headers_set own;  /* beside NVRTC */
	struct headers_set full; /* a complete set elsewhere, same major version (layout NONE: none,
				  * or not looked for because `own` is complete) */
};

/* NVRTC opens libnvrtc-builtins.so.MAJOR.MINOR of its own exact version by name; a libnvrtc copied
 * or bundled without it, or a loader path that leads elsewhere, fails every compile with
 * `failed to open libnvrtc-builtins.so.13.5`. The file of that name (xmalloc'ed, or NULL): beside
 * NVRTC (its path, then its real path), else in each root's lib64/, lib/, nvidia/cuNN/lib/,
 * nvidia/cuda_nvrtc/lib/ (roots: `roots` as headers_find takes them, else its defaults, then
 * the site-packages of each Python prefix on PATH (PREFIX/bin on PATH) and of ~/.local). */
char *headers_find_builtins(const char *nvrtc_path, int major, int minor, const char *roots);

/* The package that holds NVRTC's builtins of that version, for a note (xmalloc'ed): "pip install
 * 'nvidia-cuda-nvrtc==13.5.*' (conda: 'cuda-nvrtc=13.5')". */
char *headers_builtins_hint(int major, int minor);

/* The parts an NVRTC of that major version needs for a complete set. */
unsigned headers_needed(int major);

/* Finds the sets for the NVRTC at nvrtc_path (as the loader names it; its real path is read too)
 * of version major.minor. roots: directories separated by ':' where a complete set may be (each
 * a toolkit, a conda prefix or a site-packages directory); NULL or "": $CUDA_HOME, $CUDA_PATH,
 * $CONDA_PREFIX, each entry of $PYTHONPATH, /usr/local/cuda-M.m, /usr/local/cuda. A set is
 * taken only when its cuda.h is of NVRTC's major version (the set beside NVRTC also when it has
 * no cuda.h); of the complete ones elsewhere, the first of NVRTC's minor version, else the first. */
void headers_find(struct headers *h, const char *nvrtc_path, int major, int minor, const char *roots);
void headers_release(struct headers *h);

/* The part a header that an #include names belongs to ("cuda/std/type_traits": HEADERS_CCCL), 0
 * when it is none of CUDA's (the program's own, or a library's such as curand_kernel.h). */
unsigned headers_part_of(const char *header);

/* 1 if one of the set's directories has the header. */
int headers_set_has(const struct headers_set *s, const char *header);

/* What is missing, for a note after "no": "CCCL", "runtime headers or CCCL", ... (static). */
const char *headers_parts_name(unsigned parts);

/* The command that installs `parts` of CUDA major.minor's headers for NVRTC from that layout
 * (xmalloc'ed): "pip install 'nvidia-cuda-cccl==13.0.*'", "pip install
 * 'nvidia-cuda-cccl-cu12==12.9.*'", "conda install 'cuda-cccl=13.0'", the toolkit's packages
 * ("cuda-cccl-13-0"). */
char *headers_install_hint(enum headers_layout layout, unsigned parts, int major, int minor);

/* CUDA_VERSION as cuda.h defines it (`#define CUDA_VERSION 13000`), in the first len bytes of
 * text; 0 when it is not there. */
int headers_cuda_version(const char *text, size_t len);

#endif
