/* The CUDA images of a file as `nvshim inspect` and the preload library read them: every image
 * of an object, program, fatbin or cubin (elf_cuda_images), each payload decompressed (zstd, lz4),
 * each cubin's kernels with their resources and stubs, a named kernel's stub check, each image's
 * kernel names (cubin entry functions, PTX .entry), whether the file is a program, the size of a
 * fatbin in memory, and the run verdicts over the images found (with what each container's
 * kernels say). */
#include <stdlib.h>

#include "fuzz.h"
#include "objects/elf.h"
#include "objects/images.h"

static void kernel(const struct cuda_kernel *k, void *arg)
{
	size_t *n = arg;
	*n += k->name[0] != '\0' && k->regs < 100000 && k->stub >= -1;
}

static void name(const char *n, size_t len, void *arg)
{
	*(size_t *)arg += len && n[0] != '\0';
}

static int image(const struct cuda_image *img, void *arg)
{
	struct image_list *l = arg;
	image_list_add(l, img, 0);
	size_t names = 0;
	char *nwhy = NULL;
	int kernels = elf_image_kernel_names(img, NULL, 1 << 24, name, &names, &nwhy);
	free(nwhy);
	if (img->container < 64)
		image_list_kernels(l, img->container, kernels, img->kind == CUDA_IMAGE_PTX ? (const char *)img->data : NULL,
				   img->size < 16 ? img->size : 16);
	const unsigned char *code;
	size_t len, n = 0;
	void *owned;
	char *why = NULL;
	if (!elf_image_payload(img, 1 << 24, &code, &len, &owned, &why)) {
		if (img->kind == CUDA_IMAGE_SASS) {
			char *w = NULL;
			elf_cubin_kernels(code, len, kernel, &n, &w);
			free(w);
			elf_kernel_is_stub(code, len, "_Z3addPfi");
		}
		free(owned);
	}
	free(why);
	return l->n > 4096;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct image_list l;
	char *why = NULL;
	unsigned n = 0;
	image_list_init(&l);
	elf_fatbin_size(data, size);
	elf_is_program(data, size);
	elf_cuda_images(data, size, image, &l, &n, &why);
	free(why);
	image_list_containers(&l, n < 64 ? n : 64);
	struct image_verdict v;
	const unsigned gpus[] = { 75, 80, 86, 90, 100, 120 };
	for (size_t i = 0; i < sizeof(gpus) / sizeof(gpus[0]); i++)
		if (!images_verdict(&l, gpus[i], i & 1 ? 12080 : 0, &v))
			images_answer_name(v.answer);
	free(images_targets_text(&l));
	image_list_release(&l);
	return 0;
}
