#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "nvshim/toolkit.h"

Test(toolkit, parses_the_banner)
{
	const char *banner = "nvcc: NVIDIA (R) Cuda compiler driver\n"
			     "Copyright (c) 2005-2025 NVIDIA Corporation\n"
			     "Cuda compilation tools, release 13.0, V13.0.88\n";
	char *v = toolkit_parse_version(banner);
	cr_assert_str_eq(v, "13.0.88");
	free(v);
	cr_assert_null(toolkit_parse_version("gcc (Debian 12.2.0) 12.2.0\n"));
}

Test(toolkit, reads_the_machines_nvcc)
{
	char *v = toolkit_version(NVSHIM_TEST_NVCC);
	cr_assert_not_null(v);
	cr_assert(strchr(v, '.'));
	free(v);
	struct argv codes = ARGV_INIT;
	cr_assert_eq(toolkit_list(NVSHIM_TEST_NVCC, "--list-gpu-code", &codes), 0);
	cr_assert_gt(codes.n, 3);
	for (size_t i = 0; i < codes.n; i++)
		cr_assert_eq(strncmp(codes.v[i], "sm_", 3), 0, "%s", codes.v[i]);
	argv_release(&codes);
}
