/* The CUDA images of a file as `nvshim inspect` and the preload library read them: every image
 * of an object, program, fatbin or cubin (elf_cuda_images), each payload decompressed (zstd, lz4),
 * each cubin's kernels with their resources and stubs, a named kernel's stub check, the size of
 * a fatbin in memory, and the run verdicts over the images found. */
#include <stdlib.h>

#include "fuzz.h"
#include "objects/elf.h"
#include "objects/images.h"

static void kernel(const struct cuda_kernel *k, void *arg)
{
	size_t *n = arg;
	*n += k->name[0] != '\0' && k->regs < 100000 && k->stub >= -1;
}

static int image(const struct cuda_image *img, void *arg)
{
	struct image_list *l = arg;
	image_list_add(l, img, 0);
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
	elf_cuda_images(data, size, image, &l, &n, &why);
	free(why);
	struct image_verdict v;
	const unsigned gpus[] = { 75, 80, 86, 90, 100, 120 };
	for (size_t i = 0; i < sizeof(gpus) / sizeof(gpus[0]); i++)
		images_verdict(&l, gpus[i], i & 1 ? 12080 : 0, &v);
	free(images_targets_text(&l));
	image_list_release(&l);
	return 0;
}
