/* Text nvshim reads from other programs and the environment: nvcc's --version banner and
 * --help, NVSHIM_DEVICES / CUDA_VISIBLE_DEVICES. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "machine/devices.h"
#include "machine/toolkit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size);
	free(toolkit_parse_version(s));
	struct argv allowed = ARGV_INIT;
	toolkit_parse_allowed(s, &allowed);
	argv_release(&allowed);

	struct devices d;
	const char *why;
	devices_init(&d);
	devices_parse(&d, s, &why);
	devices_release(&d);
	/* A device list, then what CUDA_VISIBLE_DEVICES selects from it. */
	devices_init(&d);
	if (!devices_parse(&d, "90,80,75,120", &why))
		devices_select(&d, s);
	devices_release(&d);
	free(s);
	return 0;
}
