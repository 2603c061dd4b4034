#include "objects/images.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

void image_list_init(struct image_list *l) { memset(l, 0, sizeof(*l)); }

void image_list_release(struct image_list *l)
{
	for (unsigned c = 0; c < l->known; c++)
		free(l->example[c]);
	free(l->example);
	free(l->kernels);
	free(l->v);
	image_list_init(l);
}

void image_list_containers(struct image_list *l, unsigned n)
{
	if (n > l->containers)
		l->containers = n;
}

void image_list_kernels(struct image_list *l, unsigned container, int count, const char *example, size_t len)
{
	if (container >= l->known) {
		unsigned want = container + 1 > 2 * l->known ? container + 1 : 2 * l->known;
		l->kernels = XRESIZEVEC(signed char, l->kernels, want);
		l->example = XRESIZEVEC(char *, l->example, want);
		memset(l->kernels + l->known, -1, want - l->known);
		memset(l->example + l->known, 0, (want - l->known) * sizeof(char *));
		l->known = want;
	}
	l->kernels[container] = count > 0 ? 1 : count < 0 ? -1 : 0;
	free(l->example[container]);
	l->example[container] = example && len ? xstrndup(example, len) : NULL;
	image_list_containers(l, container + 1);
}

void image_list_add(struct image_list *l, const struct cuda_image *img, unsigned container_base)
{
	if (l->n == l->alloc)
		l->v = XRESIZEVEC(struct image_rec, l->v, l->alloc = l->alloc ? 2 * l->alloc : 16);
	struct image_rec *r = &l->v[l->n++];
	r->kind = img->kind;
	r->sm = img->sm;
	r->variant = img->variant;
	r->ptx_major = img->ptx_major;
	r->ptx_minor = img->ptx_minor;
	r->compression = img->compression;
	r->container = container_base + img->container;
	if (r->container + 1 > l->containers)
		l->containers = r->container + 1;
}

int images_sass_runs(unsigned sm, char variant, unsigned gpu)
{
	if (!sm || sm / 10 != gpu / 10)
		return 0;
	return variant == 'a' ? sm == gpu : sm <= gpu;
}

int images_ptx_runs(unsigned sm, char variant, unsigned gpu)
{
	if (!sm)
		return 0;
	if (variant == 'a')
		return sm == gpu;
	if (variant == 'f')
		return sm / 10 == gpu / 10 && sm <= gpu;
	return sm <= gpu;
}

/* PTX ISA versions and the first CUDA release that has them (the PTX ISA's release history). */
static const struct {
	unsigned ptx, cuda;
} ptx_table[] = {
	{ 60, 9000 },  { 61, 9010 },  { 62, 9020 },  { 63, 10000 }, { 64, 10010 }, { 65, 10020 },
	{ 70, 11000 }, { 71, 11010 }, { 72, 11020 }, { 73, 11030 }, { 74, 11040 }, { 75, 11050 },
	{ 76, 11060 }, { 77, 11070 }, { 78, 11080 }, { 80, 12000 }, { 81, 12010 }, { 82, 12020 },
	{ 83, 12030 }, { 84, 12040 }, { 85, 12050 }, { 86, 12070 }, { 87, 12080 }, { 88, 12090 },
	{ 90, 13000 }, { 91, 13010 },
};

unsigned images_ptx_cuda(unsigned major, unsigned minor)
{
	unsigned v = major * 10 + minor;
	if (minor > 9)
		return 0;
	for (size_t i = 0; i < sizeof(ptx_table) / sizeof(ptx_table[0]); i++)
		if (ptx_table[i].ptx == v)
			return ptx_table[i].cuda;
	/* CUDA 13.x has PTX 9.x. */
	if (major == 9)
		return 13000 + minor * 10;
	return 0;
}

/* Linux driver branches and the newest CUDA each supports (the CUDA release notes' table of
 * minimum driver versions). */
static const struct {
	unsigned branch, cuda;
} driver_table[] = {
	{ 580, 13000 }, { 575, 12090 }, { 570, 12080 }, { 560, 12060 }, { 555, 12050 }, { 550, 12040 },
	{ 545, 12030 }, { 535, 12020 }, { 530, 12010 }, { 525, 12000 }, { 520, 11080 }, { 515, 11070 },
	{ 510, 11060 }, { 495, 11050 }, { 470, 11040 }, { 465, 11030 }, { 460, 11020 }, { 455, 11010 },
	{ 450, 11000 },
};

unsigned images_driver_cuda(unsigned branch)
{
	for (size_t i = 0; i < sizeof(driver_table) / sizeof(driver_table[0]); i++)
		if (branch >= driver_table[i].branch)
			return driver_table[i].cuda;
	return 0;
}

unsigned images_installed_driver_cuda(const char *path)
{
	FILE *f = fopen(path ? path : "/proc/driver/nvidia/version", "r");
	char line[512];
	unsigned cuda = 0;
	if (!f)
		return 0;
	while (!cuda && fgets(line, sizeof(line), f)) {
		/* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 ..." */
		if (strncmp(line, "NVRM version:", 13))
			continue;
		for (char *p = line; *p; p++) {
			unsigned branch, minor;
			if ((p == line || p[-1] == ' ') && sscanf(p, "%u.%u", &branch, &minor) == 2 && branch >= 100) {
				cuda = images_driver_cuda(branch);
				break;
			}
		}
	}
	fclose(f);
	return cuda;
}

static enum image_how image_runs(const struct image_rec *r, unsigned gpu, unsigned driver_cuda)
{
	if (r->kind == CUDA_IMAGE_SASS && images_sass_runs(r->sm, r->variant, gpu))
		return IMAGE_SASS;
	if (r->kind != CUDA_IMAGE_PTX || !images_ptx_runs(r->sm, r->variant, gpu))
		return IMAGE_NONE;
	unsigned need = images_ptx_cuda(r->ptx_major, r->ptx_minor);
	return driver_cuda && need > driver_cuda ? IMAGE_PTX_TOO_NEW : IMAGE_PTX;
}

int images_image_runs(const struct cuda_image *img, unsigned gpu)
{
	return img->kind == CUDA_IMAGE_SASS ? images_sass_runs(img->sm, img->variant, gpu)
					    : img->kind == CUDA_IMAGE_PTX && images_ptx_runs(img->sm, img->variant, gpu);
}

int images_verdict(const struct image_list *l, unsigned gpu, unsigned driver_cuda, struct image_verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->gpu = gpu;
	enum image_how *how = XCNEWVEC(enum image_how, l->containers ? l->containers : 1);
	unsigned char *seen = XCNEWVEC(unsigned char, l->containers ? l->containers : 1);
	for (size_t i = 0; i < l->n; i++) {
		const struct image_rec *r = &l->v[i];
		enum image_how h = image_runs(r, gpu, driver_cuda);
		seen[r->container] = 1;
		if (h == IMAGE_SASS && !v->best_sass.sm)
			v->best_sass = *r;
		if (h == IMAGE_PTX && !v->best_ptx.sm)
			v->best_ptx = *r;
		if (h == IMAGE_PTX_TOO_NEW && !v->newest_ptx.sm) {
			v->newest_ptx = *r;
			v->need_cuda = images_ptx_cuda(r->ptx_major, r->ptx_minor);
		}
		/* The best way each container runs: machine code, then PTX, then PTX too new. */
		enum image_how *c = &how[r->container];
		if (h == IMAGE_SASS || (h == IMAGE_PTX && *c != IMAGE_SASS) || (h == IMAGE_PTX_TOO_NEW && *c == IMAGE_NONE))
			*c = h;
	}
	size_t shown = 0;
	for (unsigned c = 0; c < l->containers; c++) {
		/* A container without images, or whose images hold no kernel, launches nothing. */
		if (!seen[c] || (c < l->known && l->kernels[c] == 0)) {
			v->empty++;
			continue;
		}
		switch (how[c]) {
		case IMAGE_SASS: v->sass++; break;
		case IMAGE_PTX: v->ptx++; break;
		case IMAGE_PTX_TOO_NEW: v->ptx_too_new++; break;
		default: v->none++; break;
		}
		if ((how[c] == IMAGE_NONE || how[c] == IMAGE_PTX_TOO_NEW) && shown < IMAGES_MISSING_SHOWN)
			v->missing[shown++] = c;
	}
	free(seen);
	free(how);
	if (!v->none && !v->ptx_too_new)
		v->answer = IMAGES_RUN;
	else if (v->sass || v->ptx)
		v->answer = IMAGES_PARTLY;
	else
		v->answer = IMAGES_DO_NOT_RUN;
	return v->answer == IMAGES_RUN;
}

const char *images_answer_name(enum image_answer a)
{
	return a == IMAGES_RUN ? "runs" : a == IMAGES_PARTLY ? "partly" : "does not run";
}

static int rec_cmp(const void *a, const void *b)
{
	const struct image_rec *x = a, *y = b;
	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	if (x->sm != y->sm)
		return x->sm < y->sm ? -1 : 1;
	if (x->variant != y->variant)
		return x->variant - y->variant;
	return (int)(x->ptx_major * 10 + x->ptx_minor) - (int)(y->ptx_major * 10 + y->ptx_minor);
}

char *images_targets_text(const struct image_list *l)
{
	if (!l->n)
		return xstrdup("no CUDA code");
	struct image_rec *v = XNEWVEC(struct image_rec, l->n);
	memcpy(v, l->v, l->n * sizeof(*v));
	qsort(v, l->n, sizeof(*v), rec_cmp);
	char *out = xstrdup("");
	size_t shown = 0;
	for (size_t i = 0; i < l->n; i++) {
		if (i && !rec_cmp(&v[i], &v[i - 1]))
			continue;
		struct cuda_image img = { 0 };
		char name[32], item[64];
		img.kind = v[i].kind;
		img.sm = v[i].sm;
		img.variant = v[i].variant;
		elf_image_target(&img, name, sizeof(name));
		if (v[i].kind == CUDA_IMAGE_PTX)
			snprintf(item, sizeof(item), "PTX %s (ISA %u.%u)", name, v[i].ptx_major, v[i].ptx_minor);
		else if (v[i].kind == CUDA_IMAGE_OTHER)
			snprintf(item, sizeof(item), "LTO IR %s", name + 6);
		else
			snprintf(item, sizeof(item), "%s", name);
		char *more = concat(out, shown ? ", " : "", item, NULL);
		free(out);
		out = more;
		shown++;
	}
	free(v);
	return out;
}

char *images_fix_text(unsigned gpu)
{
	return xasprintf("-gencode arch=compute_%u,code=sm_%u (TORCH_CUDA_ARCH_LIST=\"%u.%u\", "
			 "CMAKE_CUDA_ARCHITECTURES=%u)",
			 gpu, gpu, gpu / 10, gpu % 10, gpu);
}
