/* Objects, shared objects and archives as the link pass reads them: symbol tables, an
 * archive's index and members, and each member's own symbols; and the kernels' stacks of the
 * CUDA images in an object, a program or a cubin (elf_cuda_stacks), and their kernels' code
 * sizes as the modules pass's stub check reads them (stubs_read_data() into a stubs table). */
#include <stdlib.h>

#include "fuzz.h"
#include "objects/elf.h"
#include "passes/stubs.h"

static void count(const char *name, int defined, int weak, void *arg)
{
	(void)defined;
	(void)weak;
	*(size_t *)arg += name[0] != '\0';
}

static void stack(const char *kernel, unsigned sm, unsigned long long bytes, void *arg)
{
	*(size_t *)arg += kernel[0] != '\0' && sm < 1000 && bytes > 0;
}

static int member(const struct ar_member *m, void *arg)
{
	char *why = NULL;
	if (m->data)
		elf_symbols(m->data, m->size, count, arg, &why);
	free(why);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *why = NULL;
	size_t n = 0;
	elf_kind_name(elf_identify(data, size));
	elf_symbols(data, size, count, &n, &why);
	free(why);
	why = NULL;
	struct ar_symbol *syms = NULL;
	size_t nsyms = 0;
	if (!ar_index(data, size, &syms, &nsyms, &why)) {
		for (size_t i = 0; i < nsyms && i < 64; i++) {
			struct ar_member m;
			char *w = NULL;
			if (!ar_member_at(data, size, syms[i].member, &m, &w))
				member(&m, &n);
			free(w);
		}
	}
	free(syms);
	free(why);
	why = NULL;
	ar_members(data, size, member, &n, &why);
	free(why);
	why = NULL;
	elf_cuda_stacks(data, size, stack, &n, &why);
	free(why);
	why = NULL;
	struct stubs st;
	stubs_init(&st);
	stubs_read_data(&st, data, size, &why);
	for (size_t k = 0; k < st.nk; k++)
		for (size_t t = 0; t < st.nt; t++)
			n += stubs_real_on(&st, k, t) >= 0;
	stubs_release(&st);
	free(why);
	return 0;
}
