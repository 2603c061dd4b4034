/* -gencode values and arch names, as a build script writes them. */
#include <stdlib.h>

#include "fuzz.h"
#include "model/arch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size);
	struct arch a;
	char buf[32];
	if (!arch_parse(s, &a))
		arch_format(&a, buf, sizeof(buf));

	struct arch_list l;
	char *why = NULL;
	arch_list_init(&l);
	if (!arch_list_parse_gencode(&l, s, &why)) {
		struct argv out = ARGV_INIT;
		arch_list_to_args(&l, &out);
		for (size_t i = 0; i < l.n; i++) {
			const char *w;
			target_check(&l.v[i], &w);
			struct arch e = target_embedded(&l.v[i]);
			arch_format(&e, buf, sizeof(buf));
		}
		/* What it prints parses again to the same list. */
		struct arch_list again;
		arch_list_init(&again);
		for (size_t i = 0; i < out.n; i++) {
			const char *v = out.v[i] + sizeof("-gencode=") - 1;
			char *w2 = NULL;
			if (arch_list_parse_gencode(&again, v, &w2))
				abort();
		}
		if (again.n != l.n)
			abort();
		arch_list_release(&again);
		argv_release(&out);
	}
	free(why);
	arch_list_release(&l);
	free(s);
	return 0;
}
