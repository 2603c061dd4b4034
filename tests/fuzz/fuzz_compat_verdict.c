/* The compatibility layer's verdict files (upgrade/compat_dryrun.h), read back from
 * <cache_dir>/compat/verdicts/: the input is the file's text. A verdict that parses formats to
 * the same text again, and parses again. */
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

#include "fuzz.h"
#include "diagnose/api.h"
#include "upgrade/compat.h"
#include "upgrade/compat_dryrun.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_string(data, size);
	struct compat_decision d;
	char *why = NULL;
	if (!compat_dryrun_verdict_parse(text, "k", &d, &why)) {
		if (d.retry && !d.headers.n)
			abort();
		for (size_t i = 0; i < d.headers.n; i++)
			if (!api_compat_header_ok(d.headers.v[i]))
				abort();
		for (size_t i = 0; i < d.nsites; i++)
			if (!d.sites[i].line || !*d.sites[i].field)
				abort();
		char *again = compat_dryrun_verdict_format("k", &d, why);
		struct compat_decision d2;
		char *why2 = NULL;
		if (compat_dryrun_verdict_parse(again, "k", &d2, &why2) || d2.retry != d.retry || d2.nsites != d.nsites ||
		    d2.headers.n != d.headers.n || d2.layout != d.layout ||
		    (d.layout && (!d.layout_header || strcmp(d2.layout_header, d.layout_header))))
			abort();
		compat_decision_release(&d2);
		free(why2);
		free(again);
	} else if (why || d.nsites || d.headers.n || d.layout || d.layout_header) {
		abort();
	}
	compat_decision_release(&d);
	free(why);
	free(text);
	return 0;
}
