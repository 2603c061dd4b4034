/* A gcc-style command line as CC/CXX mode reads it (arguments separated by NUL bytes): the
 * classification, then the nvcc line it becomes when it has CUDA inputs. */
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

#include "fuzz.h"
#include "base/argv.h"
#include "model/hostcc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct argv args = ARGV_INIT;
	fuzz_args(data, size, &args);
	struct hostcc hc;
	hostcc_parse(&hc, args.v, args.n);
	hostcc_mode_name(hc.mode);
	if (hc.ncuda) {
		struct argv out = ARGV_INIT, notes = ARGV_INIT;
		hostcc_translate(&hc, "/usr/bin/g++", &out, &notes);
		argv_release(&out);
		argv_release(&notes);
	}
	hostcc_release(&hc);
	argv_release(&args);
	return 0;
}
