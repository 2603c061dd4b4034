/* What the preload library reads and rewrites for a program: NVRTC options (NUL-separated,
 * as a program passes them), and NVRTC's and the JIT linker's logs (the same bytes). */
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

#include "fuzz.h"
#include "preload/headers.h"
#include "preload/rtc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct argv opts = ARGV_INIT;
	fuzz_args(data, size, &opts);
	int n = (int)opts.n;
	const char *const *v = (const char *const *)opts.v;
	struct rtc_options o;
	rtc_options_scan(&o, n, v);
	rtc_options_has_include(n, v, "/usr/local/cuda/include/cccl");
	struct argv out = ARGV_INIT;
	rtc_options_with_arch(&out, n, v, "compute_90");
	/* The rewritten options say what was asked. */
	struct rtc_options again;
	rtc_options_scan(&again, (int)out.n, (const char *const *)out.v);
	if (!again.arch_value || strcmp(again.arch_value, "compute_90"))
		abort();
	argv_release(&out);
	rtc_options_for_sass(&out, n, v, 90);
	argv_release(&out);
	static const int supported[] = { 75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121 };
	if (o.arch_parsed)
		rtc_clamp(o.arch.num, supported, sizeof(supported) / sizeof(supported[0]));

	char *log = fuzz_string(data, size);
	free(rtc_log_missing_header(log));
	struct rtc_arch_failure f;
	rtc_log_arch_failure(log, &f);
	rtc_arch_failure_release(&f);
	rtc_log_vague(log);
	free(rtc_log_messages(log));
	/* The same bytes as a cuda.h (its CUDA_VERSION) and as the header a log names. */
	int cv = headers_cuda_version((const char *)data, size);
	if (cv < 0 || cv > 9999999)
		abort();
	unsigned part = headers_part_of(log);
	free(headers_install_hint((enum headers_layout)(size % 5), part | (unsigned)(size & 7), cv / 1000, cv % 1000 / 10));
	headers_parts_name(part);
	free(log);
	argv_release(&opts);
	return 0;
}
