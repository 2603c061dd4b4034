#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "objects/images.h"

/* The run rules, the version tables and the verdict over fatbin containers. */

Test(images, machine_code_runs_within_its_major)
{
	cr_assert(images_sass_runs(80, 0, 80));
	cr_assert(images_sass_runs(80, 0, 86));
	cr_assert(images_sass_runs(80, 0, 89));
	cr_assert(!images_sass_runs(86, 0, 80), "not on an older minor");
	cr_assert(!images_sass_runs(80, 0, 90), "not on another major");
	cr_assert(!images_sass_runs(80, 0, 75));
	cr_assert(images_sass_runs(90, 'a', 90));
	cr_assert(!images_sass_runs(100, 'a', 103), "an a target only on its own GPU");
	cr_assert(images_sass_runs(100, 'f', 103), "an f target on its family");
	cr_assert(!images_sass_runs(103, 'f', 100));
	cr_assert(!images_sass_runs(0, 0, 0));
}

Test(images, ptx_is_compiled_for_newer_gpus)
{
	cr_assert(images_ptx_runs(80, 0, 80));
	cr_assert(images_ptx_runs(80, 0, 120));
	cr_assert(!images_ptx_runs(80, 0, 75));
	cr_assert(images_ptx_runs(90, 'a', 90));
	cr_assert(!images_ptx_runs(90, 'a', 100), "compute_90a cannot be compiled for another GPU");
	cr_assert(images_ptx_runs(100, 'f', 103));
	cr_assert(!images_ptx_runs(100, 'f', 120));
}

Test(images, ptx_isa_and_driver_tables)
{
	cr_assert_eq(images_ptx_cuda(9, 0), 13000);
	cr_assert_eq(images_ptx_cuda(8, 8), 12090);
	cr_assert_eq(images_ptx_cuda(8, 6), 12070, "12.6 kept PTX 8.5");
	cr_assert_eq(images_ptx_cuda(7, 8), 11080);
	cr_assert_eq(images_ptx_cuda(9, 4), 13040, "CUDA 13.x has PTX 9.x");
	cr_assert_eq(images_ptx_cuda(5, 5), 0);
	cr_assert_eq(images_driver_cuda(580), 13000);
	cr_assert_eq(images_driver_cuda(575), 12090);
	cr_assert_eq(images_driver_cuda(572), 12080);
	cr_assert_eq(images_driver_cuda(390), 0);
	char *dir = test_tmpdir();
	char *path = test_write(dir, "version",
				"NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.124.06  Wed Feb 26 2025\n"
				"GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n");
	cr_assert_eq(images_installed_driver_cuda(path), 12080);
	cr_assert_eq(images_installed_driver_cuda("/nonexistent/version"), 0);
	free(path);
	test_rmtree(dir);
	free(dir);
}

static void add(struct image_list *l, enum cuda_image_kind kind, unsigned sm, char variant, unsigned container)
{
	struct cuda_image img = { 0 };
	img.kind = kind;
	img.sm = sm;
	img.variant = variant;
	img.container = container;
	if (kind == CUDA_IMAGE_PTX)
		img.ptx_major = 9;
	image_list_add(l, &img, 0);
}

Test(images, verdict_counts_containers)
{
	struct image_list l;
	struct image_verdict v;
	image_list_init(&l);
	cr_assert_eq(images_verdict(&l, 90, 0, &v), 1, "no CUDA code runs anywhere");
	/* Two translation units: one with sm_80 and PTX, one with sm_90 only. */
	add(&l, CUDA_IMAGE_SASS, 80, 0, 0);
	add(&l, CUDA_IMAGE_PTX, 80, 0, 0);
	add(&l, CUDA_IMAGE_SASS, 90, 0, 1);
	cr_assert_eq(l.containers, 2);
	cr_assert_eq(images_verdict(&l, 90, 0, &v), 1);
	cr_assert_eq(v.sass, 1);
	cr_assert_eq(v.ptx, 1);
	cr_assert_eq(images_verdict(&l, 80, 0, &v), 0);
	cr_assert_eq(v.none, 1, "the sm_90 unit has nothing for 8.0");
	cr_assert_eq(images_verdict(&l, 90, 12080, &v), 0, "PTX 9.0 with a 12.8 driver");
	cr_assert_eq(v.ptx_too_new, 1);
	cr_assert_eq(v.need_cuda, 13000);
	char *t = images_targets_text(&l);
	cr_assert_str_eq(t, "sm_80, sm_90, PTX compute_80 (ISA 9.0)");
	free(t);
	t = images_fix_text(86);
	cr_assert_str_eq(t, "-gencode arch=compute_86,code=sm_86 (TORCH_CUDA_ARCH_LIST=\"8.6\", CMAKE_CUDA_ARCHITECTURES=86)");
	free(t);
	image_list_release(&l);
}

/* nvcc 13's device-link fatbin holds no kernel: it does not count; fatbins that cover different
 * GPUs give "partly". */
Test(images, verdict_partly_and_fatbins_without_kernels)
{
	struct image_list l;
	struct image_verdict v;
	image_list_init(&l);
	/* A program: its kernels as sm_80 and PTX, and the device-link fatbin with sm_80 alone. */
	add(&l, CUDA_IMAGE_SASS, 80, 0, 0);
	add(&l, CUDA_IMAGE_PTX, 80, 0, 0);
	add(&l, CUDA_IMAGE_SASS, 80, 0, 1);
	cr_assert_eq(images_verdict(&l, 90, 0, &v), 0, "not read yet: the device-link fatbin counts");
	cr_assert_eq(v.answer, IMAGES_PARTLY);
	image_list_kernels(&l, 1, 0, NULL, 0);
	cr_assert_eq(images_verdict(&l, 90, 0, &v), 1, "PTX for 9.0, and a fatbin without kernels");
	cr_assert_eq(v.empty, 1);
	cr_assert_eq(v.ptx, 1);
	/* The same without PTX: nothing of it runs on 9.0. */
	image_list_release(&l);
	add(&l, CUDA_IMAGE_SASS, 80, 0, 0);
	add(&l, CUDA_IMAGE_SASS, 80, 0, 1);
	image_list_kernels(&l, 1, 0, NULL, 0);
	cr_assert_eq(images_verdict(&l, 90, 0, &v), 0);
	cr_assert_eq(v.answer, IMAGES_DO_NOT_RUN);
	cr_assert_eq(v.none, 1);
	cr_assert_str_eq(images_answer_name(v.answer), "does not run");
	/* An empty container (nvcc 13's device-link fatbin of a PTX-only program) counts for nothing. */
	image_list_release(&l);
	add(&l, CUDA_IMAGE_PTX, 80, 0, 1);
	image_list_containers(&l, 2);
	cr_assert_eq(images_verdict(&l, 90, 0, &v), 1);
	cr_assert_eq(v.empty, 1);
	/* A library with a kernel set per GPU: partly, and which containers lack code. */
	image_list_release(&l);
	add(&l, CUDA_IMAGE_SASS, 80, 0, 0);
	add(&l, CUDA_IMAGE_SASS, 90, 0, 0);
	add(&l, CUDA_IMAGE_SASS, 100, 0, 1);
	add(&l, CUDA_IMAGE_SASS, 90, 'a', 2);
	image_list_kernels(&l, 1, 3, "_Z5sm100v", 9);
	cr_assert_eq(images_verdict(&l, 90, 0, &v), 0);
	cr_assert_eq(v.answer, IMAGES_PARTLY);
	cr_assert_eq(v.none, 1);
	cr_assert_eq(v.missing[0], 1);
	cr_assert_str_eq(l.example[1], "_Z5sm100v");
	cr_assert_str_eq(images_answer_name(v.answer), "partly");
	cr_assert_eq(images_verdict(&l, 75, 0, &v), 0);
	cr_assert_eq(v.answer, IMAGES_DO_NOT_RUN);
	cr_assert_eq(v.none, 3);
	image_list_release(&l);
}
