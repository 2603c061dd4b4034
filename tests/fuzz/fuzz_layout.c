/* CUDA 13's moved files (upgrade/layout.h), its readers of outside bytes: the input is a
 * compiler's stderr, a NUL byte, and a command line (one word a line). What is found missing is
 * only ever what the text names, and a line fixed for it (on the toolkit of the nvcc under
 * test, and on none) is either the same line grown or cut by the fix, or nothing. */
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

#include "fuzz.h"
#include "base/argv.h"
#include "upgrade/layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = xstrndup((const char *)data, size);
	size_t n = strlen(text);
	char *header = NULL;
	unsigned need = layout_missing(text, &header);
	if (header && !strstr(text, header))
		abort();
	if (need & ~(unsigned)(LAYOUT_CCCL | LAYOUT_NVTX | LAYOUT_NVTX_LIB | LAYOUT_GONE | LAYOUT_TYPES))
		abort();
	free(header);
	/* the dry-run path's gate: only an #include of a header it names */
	if (layout_dryrun_gate(text) && !(strstr(text, "include") && (strstr(text, "nvToolsExt") || strstr(text, "_types.h"))))
		abort();
	struct argv line = ARGV_INIT;
	argv_push(&line, "g++");
	if (n < size) {
		char *words = xstrndup((const char *)data + n + 1, size - n - 1);
		for (char *w = strtok(words, "\n"); w; w = strtok(NULL, "\n"))
			argv_push(&line, w);
		free(words);
	}
	(void)layout_links_nvtx(&line);
	char *root = xstrdup(NVSHIM_TEST_NVCC);
	char *slash = strrchr(root, '/');
	if (slash && slash > root) {
		*slash = '\0';
		slash = strrchr(root, '/');
		if (slash)
			*slash = '\0';
	}
	const char *roots[] = { root, "/nonexistent" };
	for (int r = 0; r < 2; r++)
		for (int host = 0; host < 2; host++) {
			struct argv out, added = ARGV_INIT;
			int rc = layout_fix(&line, need | LAYOUT_CCCL | LAYOUT_NVTX | LAYOUT_NVTX_LIB | LAYOUT_TYPES, roots[r], roots[r], host,
					    &out, &added);
			if (rc ? out.n != 0 || added.n != 0 : !added.n || argv_equal(&out, &line))
				abort();
			argv_release(&out);
			argv_release(&added);
		}
	free(root);
	argv_release(&line);
	free(text);
	return 0;
}
