/* The record behind `nvshim stats` (stats.h), which any process of the user can damage: the
 * summary, read whole or refused, and the journal, read line by line; what is read is written
 * again and must read back the same. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "buildwide/stats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct stats st, back;
	stats_init(&st, 0);
	if (!stats_parse(&st, text, size)) {
		char *again = stats_format(&st);
		stats_init(&back, 0);
		if (stats_parse(&back, again, strlen(again)))
			abort();
		char *third = stats_format(&back);
		if (strcmp(again, third))
			abort();
		free(third);
		free(again);
		stats_release(&back);
	}
	/* the same bytes as a journal, on top of whatever the summary held */
	char gen[64];
	stats_journal_gen(text, size, gen, sizeof(gen));
	stats_add_journal(&st, text, size, size > 8 ? (size_t)data[0] % size : 0);
	stats_add_journal(&st, text, size, 0);
	char *out = stats_format(&st);
	stats_init(&back, 0);
	if (stats_parse(&back, out, strlen(out)))
		abort();
	free(out);
	stats_release(&back);
	stats_release(&st);
	return 0;
}
