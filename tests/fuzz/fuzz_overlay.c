/* The compatibility layer's mirror (upgrade/overlay.h), its readers of outside bytes: the input
 * is a compile line (one argument a line, the first the tool) up to a NUL byte, then a text (a
 * dependency file, a compiler's messages). Each include directory is mapped (those starting
 * with 'i' to "/M/..."), and the text has its "/M/" paths mapped back. */
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

#include "fuzz.h"
#include "upgrade/overlay.h"

static size_t calls;

static char *to_m(const char *dir, void *arg)
{
	(void)arg;
	if (!*dir)
		abort(); /* an empty directory is never handed out */
	calls++;
	return dir[0] == 'i' ? concat("/M/", dir, NULL) : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t lsize = nul ? (size_t)(nul - data) : size;
	char *line = fuzz_string(data, lsize);
	char *text = nul ? fuzz_string(nul + 1, size - lsize - 1) : xstrdup(line);
	struct argv a = ARGV_INIT;
	for (char *p = line;;) {
		char *e = strchr(p, '\n');
		if (e)
			*e = '\0';
		argv_push(&a, p);
		if (!e)
			break;
		p = e + 1;
	}
	for (int host = 0; host < 2; host++) {
		struct argv b = ARGV_INIT;
		argv_copy(&b, &a);
		calls = 0;
		size_t n = overlay_map_includes(&b, host, to_m, NULL);
		if (n > calls || b.n != a.n)
			abort();
		/* the tool and every argument the map did not touch are as they were */
		if (strcmp(a.v[0], b.v[0]) || (!n && !argv_equal(&a, &b)))
			abort();
		(void)overlay_is_c(&b, b.n > 1 ? b.v[b.n - 1] : "", host);
		argv_release(&b);
	}
	struct argv from = ARGV_INIT, to = ARGV_INIT;
	argv_push(&from, "/M/");
	argv_push(&to, "");
	argv_push(&from, "/M/i");
	argv_push(&to, "I");
	char *back = overlay_unmap(text, &from, &to);
	if (strlen(back) > strlen(text) || (!strstr(text, "/M/") && strcmp(back, text)))
		abort();
	free(back);
	char *deps = overlay_dedupe_deps(text);
	if (strlen(deps) > strlen(text))
		abort();
	free(deps);
	argv_release(&from);
	argv_release(&to);
	argv_release(&a);
	free(line);
	free(text);
	return 0;
}
