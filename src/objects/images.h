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
 * A container without one gives "no kernel image is available" at the first launch of one of its
 * kernels; a container that holds no kernel (nvcc 13's device-link fatbin, which every program
 * and library it links gets, with machine code for its machine-code targets only; an empty one)
 * launches nothing, so it does not count. The verdict for a GPU, over the containers that count:
 *   runs          every one has machine code or PTX the GPU runs;
 *   partly        some have and some do not: which kernels fail depends on which the program
 *                 launches (a library with a kernel set per GPU, cuBLAS's, loads only its GPU's);
 *   does not run  none has (or the file holds nothing but PTX too new for the driver).
 * Whether a container holds kernels is read off its images by the caller (image_list_kernels):
 * a container nobody read counts.
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

/* The images of one file, in order, and what is known of each container's kernels. */
struct image_list {
	struct image_rec *v;
	size_t n, alloc;
	unsigned containers;
	signed char *kernels; /* per container: -1 not read, 0 holds no kernel, 1 holds kernels */
	char **example;       /* per container: one of its kernels (mangled, xmalloc'ed), or NULL */
	unsigned known;       /* entries of kernels and example */
};

void image_list_init(struct image_list *l);
void image_list_release(struct image_list *l);
void image_list_add(struct image_list *l, const struct cuda_image *img, unsigned container_base);
/* There are at least n containers (one without images holds no kernel). */
void image_list_containers(struct image_list *l, unsigned n);
/* What a container's images say of its kernels: count kernels (0: none), one of them (example,
 * len bytes; may be NULL). */
void image_list_kernels(struct image_list *l, unsigned container, int count, const char *example, size_t len);
/* 1 when an image runs on gpu: machine code it runs, or PTX it compiles (whatever its ISA). */
int images_image_runs(const struct cuda_image *img, unsigned gpu);

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
enum image_answer { IMAGES_RUN, IMAGES_PARTLY, IMAGES_DO_NOT_RUN };

#define IMAGES_MISSING_SHOWN 3

/* The verdict for one GPU. */
struct image_verdict {
	unsigned gpu;
	enum image_answer answer;
	size_t sass, ptx, ptx_too_new, none; /* containers that count, by how they run */
	size_t empty;        /* containers that hold no kernel: not counted */
	struct image_rec best_sass, best_ptx, newest_ptx; /* an example of each (first seen) */
	unsigned need_cuda;  /* with ptx_too_new: the CUDA version its PTX needs */
	unsigned missing[IMAGES_MISSING_SHOWN]; /* the first containers without code (or only PTX
						   too new), min(none + ptx_too_new, 3) of them */
};

/* How the images of l run on gpu; driver_cuda: the driver's CUDA version (0: unknown, PTX
 * assumed loadable). Returns 1 when the answer is IMAGES_RUN (a file without CUDA code runs). */
int images_verdict(const struct image_list *l, unsigned gpu, unsigned driver_cuda, struct image_verdict *v);
/* "runs", "partly", "does not run". */
const char *images_answer_name(enum image_answer a);

/* "sm_80, sm_90 and PTX compute_80 (9.0)": the distinct targets of l, in ascending order
 * (xmalloc'ed); "no CUDA code" when there are none. */
char *images_targets_text(const struct image_list *l);

/* The fix for a GPU without an image: the -gencode to add, and the values of
 * TORCH_CUDA_ARCH_LIST and CMAKE_CUDA_ARCHITECTURES (xmalloc'ed). */
char *images_fix_text(unsigned gpu);

#endif
