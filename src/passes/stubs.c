#include "passes/stubs.h"

#include <stdlib.h>
#include <string.h>

#include <demangle.h>
#include <libiberty.h>

void stubs_init(struct stubs *s)
{
	memset(s, 0, sizeof(*s));
}

void stubs_release(struct stubs *s)
{
	for (size_t k = 0; k < s->nk; k++)
		free(s->kernel[k]);
	free(s->kernel);
	free(s->t);
	free(s->code);
	free(s->calls);
	free(s->traps);
	stubs_init(s);
}

long stubs_target_index(const struct stubs *s, unsigned sm, char suffix)
{
	for (size_t t = 0; t < s->nt; t++)
		if (s->t[t].sm == sm && s->t[t].suffix == suffix)
			return (long)t;
	return -1;
}

/* A table one column or row larger, cells copied. */
static void grow(struct stubs *s, size_t nk, size_t nt)
{
	unsigned long long *code = XCNEWVEC(unsigned long long, nk * nt + 1);
	unsigned char *calls = XCNEWVEC(unsigned char, nk * nt + 1);
	unsigned *traps = XCNEWVEC(unsigned, nk * nt + 1);
	for (size_t k = 0; k < s->nk; k++)
		for (size_t t = 0; t < s->nt; t++) {
			code[k * nt + t] = s->code[k * s->nt + t];
			calls[k * nt + t] = s->calls[k * s->nt + t];
			traps[k * nt + t] = s->traps[k * s->nt + t];
		}
	free(s->code);
	free(s->calls);
	free(s->traps);
	s->code = code;
	s->calls = calls;
	s->traps = traps;
}

void stubs_add(struct stubs *s, unsigned sm, char variant, const struct cuda_kernel *k)
{
	long t = stubs_target_index(s, sm, variant);
	if (t < 0) {
		grow(s, s->nk, s->nt + 1);
		s->t = XRESIZEVEC(struct stubs_target, s->t, s->nt + 1);
		s->t[s->nt] = (struct stubs_target){ sm, variant };
		t = (long)s->nt++;
	}
	size_t row = 0;
	while (row < s->nk && strcmp(s->kernel[row], k->name))
		row++;
	if (row == s->nk) {
		grow(s, s->nk + 1, s->nt);
		s->kernel = XRESIZEVEC(char *, s->kernel, s->nk + 1);
		s->kernel[s->nk++] = xstrdup(k->name);
	}
	size_t cell = row * s->nt + (size_t)t;
	s->code[cell] = k->code ? k->code : 1; /* present, even when empty */
	s->calls[cell] = (unsigned char)((k->calls & 3) | (k->stub == 1) << 2);
	s->traps[cell] = k->traps;
}

struct reading {
	struct stubs *s;
	unsigned sm;
	char variant;
	char **why;
	int rc;
};

static void add_kernel(const struct cuda_kernel *k, void *arg)
{
	struct reading *r = arg;
	stubs_add(r->s, r->sm, r->variant, k);
}

/* Machine code only: PTX has no code sizes. A compressed image is decompressed (up to 1 GiB). */
static int add_image(const struct cuda_image *img, void *arg)
{
	struct reading *r = arg;
	if (img->kind != CUDA_IMAGE_SASS || !img->sm)
		return 0;
	const unsigned char *data;
	size_t len;
	void *owned = NULL;
	if (elf_image_payload(img, 1ull << 30, &data, &len, &owned, r->why) ||
	    elf_cubin_kernels(data, len, add_kernel, &(struct reading){ r->s, img->sm, img->variant, r->why, 0 }, r->why))
		r->rc = -1;
	free(owned);
	return r->rc;
}

int stubs_read_data(struct stubs *s, const void *data, size_t size, char **why)
{
	struct reading r = { s, 0, 0, why, 0 };
	*why = NULL;
	if (elf_cuda_images(data, size, add_image, &r, NULL, why))
		return -1;
	return r.rc;
}

int stubs_read(struct stubs *s, const char *path, char **why)
{
	struct elf_map m;
	*why = NULL;
	if (elf_map_file(path, &m, why))
		return -1;
	int rc = stubs_read_data(s, m.data, m.size, why);
	elf_unmap(&m);
	return rc;
}

int stubs_trivial(const struct stubs *s, size_t k, size_t t)
{
	unsigned long long c = s->code[k * s->nt + t];
	unsigned char calls = s->calls[k * s->nt + t];
	if (!c)
		return 0;
	return c <= STUBS_TRIVIAL || (calls & 4) || ((calls & 3) && c <= STUBS_TRIVIAL_CALL);
}

int stubs_trap_paths(const struct stubs *s, size_t k, size_t t)
{
	unsigned traps = s->traps[k * s->nt + t];
	unsigned long long insns = s->code[k * s->nt + t] / 16;
	return traps >= STUBS_TRAPS && (unsigned long long)traps * 64 >= insns;
}

int stubs_traps_fewer(unsigned traps, unsigned plain)
{
	return plain >= STUBS_TRAPS && 2ull * traps + STUBS_TRAPS <= plain;
}

int stubs_real_over(unsigned long long real, unsigned long long stub)
{
	return real >= STUBS_RATIO * stub && real >= stub + STUBS_MARGIN;
}

long stubs_real_on(const struct stubs *s, size_t k, size_t t)
{
	if (!stubs_trivial(s, k, t))
		return -1;
	unsigned long long stub = s->code[k * s->nt + t];
	for (size_t y = 0; y < s->nt; y++)
		if (y != t && stubs_real_over(s->code[k * s->nt + y], stub))
			return (long)y;
	return -1;
}

char *stubs_kernel_name(const char *mangled)
{
	char *d = cplus_demangle(mangled, DMGL_PARAMS | DMGL_ANSI | DMGL_TYPES);
	if (!d)
		return xstrdup(mangled);
	if (strlen(d) <= 60)
		return d;
	/* "void ns::kernel<...>(...)": the name, its template arguments and parameters elided */
	char *open = strpbrk(d, "<(");
	char *start = d;
	for (char *p = d; p < open; p++)
		if (*p == ' ')
			start = p + 1;
	char *out = open ? xasprintf("%.*s%s", (int)(open - start), start, *open == '<' ? "<...>" : "(...)")
			 : xstrdup(d);
	free(d);
	return out;
}
