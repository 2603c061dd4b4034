#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "passes/gates.h"

Test(gates, the_shipped_table)
{
	char *text = test_read(NVSHIM_SOURCE_DIR "/config/gates.ini");
	cr_assert_not_null(text);
	struct gates g;
	struct argv problems = ARGV_INIT;
	gates_init(&g);
	cr_assert_eq(gates_parse(&g, text, "gates.ini", &problems), 2);
	cr_assert_eq(problems.n, 0, "%s", problems.n ? problems.v[0] : "");
	cr_assert_str_eq(g.v[0].name, "cutlass_old_toolkit");
	cr_assert_eq(g.v[0].includes.n, 2);
	cr_assert_str_eq(g.v[0].includes.v[1], "cute");
	cr_assert_str_eq(g.v[0].nvcc_below, "11.8");
	cr_assert_str_eq(g.v[1].name, "host_compiler_too_new");
	cr_assert(g.v[1].host_too_new);
	cr_assert_not_null(strstr(g.v[1].advice, "-allow-unsupported-compiler"));
	cr_assert_eq(g.nlimits, 6);
	cr_assert_str_eq(g.limits[0].toolkit, "11.8");
	cr_assert_eq(g.limits[0].gcc, 11);
	cr_assert_eq(g.limits[0].clang, 14);
	cr_assert_str_eq(g.limits[5].toolkit, "13.0");
	cr_assert_eq(g.limits[5].gcc, 15);
	gates_release(&g);
	argv_release(&problems);
	free(text);
}

Test(gates, table_problems_are_reported)
{
	struct gates g;
	struct argv problems = ARGV_INIT;
	gates_init(&g);
	gates_parse(&g, "stray = 1\n[gate a]\nincludes = x, y z\nwhen = never\nnot a line\n[other]\n",
		    "t.ini", &problems);
	cr_assert_eq(g.n, 1);
	cr_assert_eq(g.v[0].includes.n, 3);
	cr_assert_eq(problems.n, 4);
	cr_assert_str_eq(problems.v[0], "t.ini:1: 'stray' outside a section");
	cr_assert_str_eq(problems.v[1], "t.ini:4: gate a: unknown condition 'when = never'");
	cr_assert_str_eq(problems.v[2], "t.ini:5: expected 'name = value', found 'not a line'");
	cr_assert_str_eq(problems.v[3], "t.ini:6: unknown section [other]");
	gates_release(&g);
	argv_release(&problems);
}

Test(gates, versions_paths_and_includes)
{
	cr_assert_lt(gates_version_cmp("11.7", "11.8"), 0);
	cr_assert_lt(gates_version_cmp("11.7.99", "11.8"), 0);
	cr_assert_gt(gates_version_cmp("11.8.89", "11.8"), 0);
	cr_assert_eq(gates_version_cmp("11.8.0", "11.8"), 0);
	cr_assert_gt(gates_version_cmp("12.0", "11.8"), 0);
	cr_assert_gt(gates_version_cmp("11.10", "11.8"), 0);

	cr_assert(gates_path_mentions("/opt/cutlass/include", "cutlass"));
	cr_assert(gates_path_mentions("third_party/cutlass-3.5.1/include", "cutlass"));
	cr_assert(gates_path_mentions("cute", "cute"));
	cr_assert(!gates_path_mentions("/opt/cutlassish/include", "cutlass"));
	cr_assert(!gates_path_mentions("/home/execute/include", "cute"));
	cr_assert(!gates_path_mentions("/x/cutlass-/y", "cutlass"));

	cr_assert(gates_source_includes("#include <cute/tensor.hpp>\n", "cute"));
	cr_assert(gates_source_includes("int x;\n  #  include \"cutlass/gemm/device/gemm.h\"\n", "cutlass"));
	cr_assert(!gates_source_includes("#include <cutlass.h>\n", "cutlass"));
	cr_assert(!gates_source_includes("// #include <cute/tensor.hpp> is not used\n", "cute"));
	cr_assert(!gates_source_includes("#include <execute/x.h>\n", "cute"));
}

/* The lines of crt/host_config.h that say which host compilers an nvcc accepts: the
 * machine's 13.0, and the shapes of 11.8 and 12.4 (nvidia-cuda-nvcc wheels). */
Test(gates, host_config_limits)
{
	unsigned gcc, clang;
	char *text = test_read("/usr/local/cuda/include/crt/host_config.h");
	if (text) {
		cr_assert_eq(gates_host_config_max(text, &gcc, &clang), 0);
		cr_assert_eq(gcc, 15);
		cr_assert_eq(clang, 20);
		free(text);
	}
	cr_assert_eq(gates_host_config_max("#if __GNUC__ > 11\n#error -- unsupported GNU version!\n#endif\n"
					   "#if (__clang_major__ >= 15) || (__clang_major__ < 3) || "
					   "((__clang_major__ == 3) &&  (__clang_minor__ < 3))\n",
					   &gcc, &clang), 0);
	cr_assert_eq(gcc, 11);
	cr_assert_eq(clang, 14);
	cr_assert_eq(gates_host_config_max("#if (__GRCO_CLANG_COMPILER__ == 1) && ((__clang_major__ < 16) || "
					   "(__clang_major__ > 17))\n#if __GNUC__ > 13\n",
					   &gcc, &clang), 0);
	cr_assert_eq(gcc, 13);
	cr_assert_eq(clang, 0);
	cr_assert_eq(gates_host_config_max("nothing here\n", &gcc, &clang), -1);
}

Test(gates, host_compiler_versions)
{
	static const struct {
		const char *text, *family, *version;
	} cases[] = {
		{ "gcc (Debian 12.2.0-14+deb12u1) 12.2.0\nCopyright (C) 2022 Free Software Foundation, Inc.\n",
		  "gcc", "12.2.0" },
		{ "g++ (GCC) 13.2.1 20231011 (Red Hat 13.2.1-4)\nCopyright (C) 2023 Free Software "
		  "Foundation, Inc.\n",
		  "gcc", "13.2.1" },
		{ "g++-14 (Ubuntu 14.2.0-4ubuntu2~24.04) 14.2.0\nCopyright (C) 2024 Free Software Foundation, "
		  "Inc.\n",
		  "gcc", "14.2.0" },
		{ "Debian clang version 14.0.6\nTarget: x86_64-pc-linux-gnu\n", "clang", "14.0.6" },
		{ "Ubuntu clang version 18.1.3 (1ubuntu1)\n", "clang", "18.1.3" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *family, *version;
		cr_assert_eq(gates_host_version(cases[i].text, &family, &version), 0, "%s", cases[i].text);
		cr_assert_str_eq(family, cases[i].family);
		cr_assert_str_eq(version, cases[i].version);
		free(family);
		free(version);
	}
	char *family, *version;
	cr_assert_eq(gates_host_version("Intel(R) oneAPI DPC++/C++ Compiler 2024.0.0\n", &family, &version), -1);
	cr_assert_null(family);
	cr_assert_null(version);
}
