/* A CUDA source as the modules pass scans it: markers, guards and `#if` conditions, then what
 * the scan says for each front-end arch; and each `#if`/`#elif` line's condition alone through
 * scan_eval. Headers outside a project root that does not exist are never read. */
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

#include "fuzz.h"
#include "model/arch.h"
#include "base/argv.h"
#include "passes/scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_string(data, size);
	struct argv dirs = ARGV_INIT, defines = ARGV_INIT;
	argv_push(&dirs, "inc");
	argv_push(&defines, "NDEBUG");
	argv_push(&defines, "TILE=64");
	argv_push(&defines, "-OLD");
	struct scan_options o = { &dirs, "/nonexistent-nvshim-fuzz", NULL, 8, 1 << 20 };
	struct scan s;
	scan_init(&s);
	if (!scan_text(&s, "f.cu", text, &o)) {
		static const unsigned nums[] = { 75, 80, 89, 90, 100, 120 };
		for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
			struct arch virt = { ARCH_VIRTUAL, nums[i], '\0' };
			char *why = NULL;
			scan_fails(&s, &virt, &defines, &why);
			free(why);
			why = NULL;
			scan_specific_code(&s, nums[i], 'a', &defines, &why);
			free(why);
		}
	}
	scan_release(&s);
	for (char *line = text; line && *line;) {
		char *end = strchr(line, '\n');
		if (end)
			*end = '\0';
		const char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!strncmp(p, "#if ", 4) || !strncmp(p, "#elif ", 6)) {
			struct arch virt = { ARCH_VIRTUAL, 90, 'a' };
			scan_eval(strchr(p, ' ') + 1, &virt, &defines);
			scan_eval(strchr(p, ' ') + 1, NULL, &defines);
		}
		line = end ? end + 1 : NULL;
	}
	argv_release(&dirs);
	argv_release(&defines);
	free(text);
	return 0;
}
