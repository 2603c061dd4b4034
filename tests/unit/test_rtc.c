#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "preload/rtc.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

Test(rtc, scan_arch_forms)
{
	struct rtc_options o;
	const char *none[] = { "-I/x", "--std=c++17" };
	rtc_options_scan(&o, N(none), none);
	cr_assert_eq(o.narch, 0);
	cr_assert_eq(o.arch_index, -1);
	cr_assert_null(o.arch_value);

	const char *eq[] = { "-arch=compute_90" };
	rtc_options_scan(&o, N(eq), eq);
	cr_assert_eq(o.narch, 1);
	cr_assert_str_eq(o.arch_value, "compute_90");
	cr_assert(o.arch_parsed);
	cr_assert_eq(o.arch.kind, ARCH_VIRTUAL);
	cr_assert_eq(o.arch.num, 90);

	const char *split[] = { "-arch", "sm_80", "-rdc=true" };
	rtc_options_scan(&o, N(split), split);
	cr_assert_str_eq(o.arch_value, "sm_80");
	cr_assert(o.arch_split);
	cr_assert_eq(o.arch.kind, ARCH_REAL);
	cr_assert(o.relocatable);

	/* NVRTC takes the last one (and warns). */
	const char *twice[] = { "--gpu-architecture=compute_75", "-arch=sm_90a", "-dc" };
	rtc_options_scan(&o, N(twice), twice);
	cr_assert_eq(o.narch, 2);
	cr_assert_eq(o.arch_index, 1);
	cr_assert_eq(o.arch.num, 90);
	cr_assert_eq(o.arch.suffix, 'a');
	cr_assert(o.relocatable);

	const char *off[] = { "-rdc=true", "-rdc=false", "-arch=compute_130" };
	rtc_options_scan(&o, N(off), off);
	cr_assert_not(o.relocatable, "the last -rdc wins");
	cr_assert(o.arch_parsed);
	cr_assert_eq(o.arch.num, 130);

	const char *missing[] = { "-arch" };
	rtc_options_scan(&o, N(missing), missing);
	cr_assert_eq(o.narch, 1);
	cr_assert_null(o.arch_value);
	cr_assert_not(o.arch_parsed);
}

Test(rtc, includes)
{
	const char *o[] = { "-I/a/include/", "-I", "/b", "--include-path=/c", "-DX" };
	cr_assert(rtc_options_has_include(N(o), o, "/a/include"));
	cr_assert(rtc_options_has_include(N(o), o, "/b/"));
	cr_assert(rtc_options_has_include(N(o), o, "/c"));
	cr_assert_not(rtc_options_has_include(N(o), o, "/d"));
	cr_assert_not(rtc_options_has_include(N(o), o, "X"));
}

static char *joined(const struct argv *a)
{
	char *s = argv_to_shell(a);
	return s;
}

Test(rtc, with_arch)
{
	struct argv out = ARGV_INIT;
	const char *none[] = { "-default-device", "-I/x" };
	rtc_options_with_arch(&out, N(none), none, "compute_90");
	char *s = joined(&out);
	cr_assert_str_eq(s, "-default-device -I/x -arch=compute_90");
	free(s);
	argv_release(&out);

	const char *two[] = { "-arch", "compute_75", "-I/x", "--gpu-architecture=sm_80", "-lineinfo" };
	rtc_options_with_arch(&out, N(two), two, "compute_90");
	s = joined(&out);
	cr_assert_str_eq(s, "-arch=compute_90 -I/x -lineinfo", "every -arch goes; the new one where the first stood");
	free(s);
	argv_release(&out);
}

Test(rtc, for_sass)
{
	struct argv out = ARGV_INIT;
	const char *o[] = { "-arch=compute_90", "-rdc=true", "--device-c", "-dlto", "-I/x", "-std=c++17" };
	rtc_options_for_sass(&out, N(o), o, 90);
	char *s = joined(&out);
	cr_assert_str_eq(s, "-arch=sm_90 -I/x -std=c++17");
	free(s);
	argv_release(&out);
}

Test(rtc, clamp)
{
	/* nvrtcGetSupportedArchs of NVRTC 13.0. */
	const int v13[] = { 75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121 };
	cr_assert_eq(rtc_clamp(130, v13, 12), 121);
	cr_assert_eq(rtc_clamp(52, v13, 12), 75);
	cr_assert_eq(rtc_clamp(90, v13, 12), 90);
	cr_assert_eq(rtc_clamp(101, v13, 12), 100, "inside the range, not listed: the one below");
	cr_assert_eq(rtc_clamp(95, NULL, 0), 95, "nothing known: unchanged");
	cr_assert(rtc_supported(121, v13, 12));
	cr_assert_not(rtc_supported(70, v13, 12));
}

/* The logs below are NVRTC 13.0's own, captured from the machine's NVRTC (FACTS.md). */
Test(rtc, missing_header)
{
	char *h = rtc_log_missing_header(
		"/usr/local/cuda/include/cooperative_groups/details/info.h(167): catastrophic error: cannot open "
		"source file \"cuda/std/type_traits\"\n  #  include <cuda/std/type_traits>\n");
	cr_assert_str_eq(h, "cuda/std/type_traits");
	free(h);
	h = rtc_log_missing_header("k.cu(1): catastrophic error: could not open source file \"mma.h\" (no "
				   "directories in search list)\n");
	cr_assert_str_eq(h, "mma.h");
	free(h);
	cr_assert_null(rtc_log_missing_header("k.cu(5): error: identifier \"x\" is undefined\n"));
	cr_assert_null(rtc_log_missing_header(NULL));
}

Test(rtc, arch_failures)
{
	struct rtc_arch_failure f;
	rtc_log_arch_failure("k.cu(5): error: incomplete type \"nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, "
			     "16, __nv_bfloat16, nvcuda::wmma::row_major>\" is not allowed\n    wmma::fragment<...> fa;\n",
			     &f);
	cr_assert_eq(f.need, RTC_NEED_NEWER);
	cr_assert_eq(f.min, 0);
	cr_assert(strstr(f.line, "incomplete type"));
	rtc_arch_failure_release(&f);

	rtc_log_arch_failure("ptxas error   : Feature 'cp.async' requires .target sm_80 or higher\n", &f);
	cr_assert_eq(f.need, RTC_NEED_NEWER);
	cr_assert_eq(f.min, 80);
	rtc_arch_failure_release(&f);

	rtc_log_arch_failure("ptxas error   : Instruction 'wgmma.fence' not supported on .target 'sm_90'\n", &f);
	cr_assert_eq(f.need, RTC_NEED_SPECIFIC);
	rtc_arch_failure_release(&f);

	rtc_log_arch_failure("k.cu(3): error: #error directive: \"needs sm_80 or newer\"\n", &f);
	cr_assert_eq(f.need, RTC_NEED_NEWER);
	rtc_arch_failure_release(&f);

	rtc_log_arch_failure("k.cu(3): error: #error directive: \"unsupported configuration\"\n", &f);
	cr_assert_eq(f.need, RTC_NEED_NONE, "a #error that names no architecture is not about the target");
	rtc_log_arch_failure("k.cu(5): error: identifier \"x\" is undefined\n", &f);
	cr_assert_eq(f.need, RTC_NEED_NONE);
	cr_assert_null(f.line);
}

Test(rtc, vague_logs)
{
	cr_assert(rtc_log_vague(NULL));
	cr_assert(rtc_log_vague(""));
	cr_assert(rtc_log_vague("\n\n"));
	cr_assert(rtc_log_vague("ERROR 9: finish\n"));
	cr_assert(rtc_log_vague("info    : 0 bytes gmem\n"));
	/* nvJitLink 13.0's log for 0xc080 bytes of shared memory. */
	cr_assert_not(rtc_log_vague("error   : Entry function 'mm' uses too much shared data (0xc080 bytes, 0xc000 "
				    "max)\nERROR 9: finish\n"));
	cr_assert_not(rtc_log_vague("ptxas fatal   : Unresolved extern function 'f'\n"));
}

Test(rtc, messages)
{
	char *m = rtc_log_messages("ptxas error   : Entry function 'mm' uses too much shared data (0xc080 bytes, "
				   "0xc000 max)\r\n\ninfo    : used 4 registers\nptxas warning : x\n");
	cr_assert_str_eq(m, "ptxas error   : Entry function 'mm' uses too much shared data (0xc080 bytes, 0xc000 "
			    "max)\nptxas warning : x\n");
	free(m);
	m = rtc_log_messages(NULL);
	cr_assert_str_eq(m, "");
	free(m);
}
