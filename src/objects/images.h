/* images: which GPUs the CUDA images of a file run on, and how; what to rebuild when they do not.
 * Used by `nvshim inspect` and by the preload library's "no kernel image" explanation.
 *
 * A file (a library, a program, an object) holds one fatbin container per translation unit,
 * and each container its images (elf.h: struct cuda_image). A kernel can run on a GPU when its
 * container has, in the order the driver prefers:
 *   machine code   sm_XY runs on compute capability X.Z with Z >= Y (same major);
 *                  sm_XYa only on X.Y itself; sm_XYf on X.Z with Z >= Y
 *   PTX            compute_XY is compiled by the driver (JIT) for any GPU >= X.Y;
 *                  compute_XYa only for X.Y; compute_XYf for X.Z with Z >= Y;
 *                  and only when the driver knows the PTX ISA version (PTX 9.0 needs a
 *                  CUDA 13.0 driver; the table is in images.c)
 * So a file runs on a GPU when every container has one of these; a container without one
 * gives "no kernel image is available" at the first launch of one of its kernels.
 */
#ifndef NVSHIM_IMAGES_H
#define NVSHIM_IMAGES_H

#include <stddef.h>

#include "objects/elf.h"

/* One image, as the verdict needs it. */
struct image_rec {
	enum cuda_image_kind kind;
	unsigned sm;
	char variant;
	unsigned ptx_major, ptx_minor;
	int compression;
	unsigned container;
};

/* The images of one file, in order. */
struct image_list {
	struct image_rec *v;
	size_t n, alloc;
	unsigned containers;
};

void image_list_init(struct image_list *l);
void image_list_release(struct image_list *l);
void image_list_add(struct image_list *l, const struct cuda_image *img, unsigned container_base);

/* 1 if machine code for (sm, variant) runs on a GPU of compute capability gpu (90 for 9.0). */
int images_sass_runs(unsigned sm, char variant, unsigned gpu);
/* 1 if PTX for (sm, variant) can be compiled for that GPU (the ISA version aside). */
int images_ptx_runs(unsigned sm, char variant, unsigned gpu);
/* The first CUDA version (12080 for 12.8) whose driver loads a PTX ISA version, 0 if unknown. */
unsigned images_ptx_cuda(unsigned major, unsigned minor);
/* The CUDA version a Linux driver branch supports (580 -> 13000), 0 if unknown (older). */
unsigned images_driver_cuda(unsigned branch);
/* The installed driver's CUDA version from /proc/driver/nvidia/version (or the file `path`),
 * 0 when there is none. */
unsigned images_installed_driver_cuda(const char *path);

enum image_how { IMAGE_NONE, IMAGE_SASS, IMAGE_PTX, IMAGE_PTX_TOO_NEW };

/* The verdict for one GPU. */
struct image_verdict {
	unsigned gpu;
	size_t sass, ptx, ptx_too_new, none; /* containers by how they run */
	struct image_rec best_sass, best_ptx, newest_ptx; /* an example of each (first seen) */
	unsigned need_cuda;  /* with ptx_too_new: the CUDA version its PTX needs */
};

/* How the images of l run on gpu; driver_cuda: the driver's CUDA version (0: unknown, PTX
 * assumed loadable). Returns 1 when every container runs (a file without CUDA code runs). */
int images_verdict(const struct image_list *l, unsigned gpu, unsigned driver_cuda, struct image_verdict *v);

/* "sm_80, sm_90 and PTX compute_80 (9.0)": the distinct targets of l, in ascending order
 * (xmalloc'ed); "no CUDA code" when there are none. */
char *images_targets_text(const struct image_list *l);

/* The fix for a GPU without an image: the -gencode to add, and the values of
 * TORCH_CUDA_ARCH_LIST and CMAKE_CUDA_ARCHITECTURES (xmalloc'ed). */
char *images_fix_text(unsigned gpu);

#endif
