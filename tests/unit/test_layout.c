#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libiberty.h>

#include "base/argv.h"
#include "upgrade/layout.h"

Test(layout, missing_reads_each_compiler)
{
	char *h = NULL;
	cr_assert_eq(layout_missing("x.cpp:1:10: fatal error: thrust/host_vector.h: No such file or directory\n"
				    "compilation terminated.\n", &h), LAYOUT_CCCL);
	cr_assert_str_eq(h, "thrust/host_vector.h");
	free(h);
	cr_assert_eq(layout_missing("x.cpp:2:10: fatal error: 'cuda/std/type_traits' file not found\n", &h), LAYOUT_CCCL);
	cr_assert_str_eq(h, "cuda/std/type_traits");
	free(h);
	cr_assert_eq(layout_missing("p.cu(3): catastrophic error: cannot open source file \"nvToolsExt.h\"\n", &h),
		     LAYOUT_NVTX);
	free(h);
	cr_assert_eq(layout_missing("/usr/bin/ld: cannot find -lnvToolsExt: No such file or directory\n", &h),
		     LAYOUT_NVTX_LIB);
	cr_assert_null(h);
	cr_assert_eq(layout_missing("/usr/bin/ld: cannot find -lnvToolsExt\n", NULL), LAYOUT_NVTX_LIB);
	/* other headers and libraries are not CUDA 13's moves */
	cr_assert_eq(layout_missing("x.cpp:1:10: fatal error: boost/any.hpp: No such file or directory\n"
				    "/usr/bin/ld: cannot find -lnvToolsExtra\n"
				    "x.cpp:1:10: fatal error: mythrust/x.h: No such file or directory\n", NULL), 0);
	cr_assert_eq(layout_missing("t.cu:2:10: fatal error: cuda_texture_types.h: No such file or directory\n", NULL),
		     LAYOUT_TYPES);
	cr_assert_eq(layout_missing("t.cu:2:10: fatal error: texture_fetch_functions.h: No such file or directory\n", NULL),
		     LAYOUT_GONE);
	cr_assert_eq(layout_missing("", NULL), 0);
	cr_assert_eq(layout_missing(NULL, NULL), 0);
}

Test(layout, links_nvtx)
{
	struct argv a = ARGV_INIT;
	argv_pushv(&a, (const char *const[]){ "g++", "-o", "p", "p.o", "-l", "nvToolsExt", NULL });
	cr_assert(layout_links_nvtx(&a));
	argv_release(&a);
	argv_pushv(&a, (const char *const[]){ "g++", "-o", "p", "p.o", "-lnvToolsExtra", "-lnvtx3interop", NULL });
	cr_assert(!layout_links_nvtx(&a));
	argv_release(&a);
}

/* A toolkit of CUDA 13's layout under a temporary directory, and its include/ by another name. */
static char root[64];
static void make_root(void)
{
	strcpy(root, "/tmp/nvshim-layout-XXXXXX");
	cr_assert_not_null(mkdtemp(root));
	char *d[] = { "include", "include/cccl", "include/nvtx3", "lib64" };
	for (size_t i = 0; i < 4; i++) {
		char *p = concat(root, "/", d[i], NULL);
		cr_assert_eq(mkdir(p, 0755), 0);
		free(p);
	}
	char *link = concat(root, "/inc", NULL), *to = concat(root, "/include", NULL);
	cr_assert_eq(symlink(to, link), 0);
	free(link);
	free(to);
}

static void remove_root(void)
{
	char *cmd = concat("rm -rf ", root, NULL);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
}

Test(layout, fix_host_line_keeps_the_option_and_its_spelling)
{
	make_root();
	struct argv a = ARGV_INIT, out, added = ARGV_INIT;
	char *inc = concat(root, "/inc/", NULL);
	argv_pushv(&a, (const char *const[]){ "g++", "-Iproj", "-isystem", inc, "-Iafter", "-c", "x.cpp", NULL });
	cr_assert_eq(layout_fix(&a, LAYOUT_CCCL, root, NULL, 1, &out, &added), 0);
	char *cccl = concat(root, "/inc/cccl", NULL);
	cr_assert_eq(out.n, a.n + 2);
	cr_assert_str_eq(out.v[4], "-isystem");
	cr_assert_str_eq(out.v[5], cccl);
	cr_assert_str_eq(out.v[6], "-Iafter");
	cr_assert_eq(added.n, 1);
	argv_release(&out);
	argv_release(&added);
	/* not on the line: nothing */
	argv_release(&a);
	argv_pushv(&a, (const char *const[]){ "g++", "-Iproj", "-c", "x.cpp", NULL });
	cr_assert_eq(layout_fix(&a, LAYOUT_CCCL, root, NULL, 1, &out, &added), -1);
	cr_assert_eq(out.n, 0);
	argv_release(&out);
	argv_release(&added);
	argv_release(&a);
	free(cccl);
	free(inc);
	remove_root();
}

Test(layout, fix_nvtx_in_nvcc_mode)
{
	make_root();
	struct argv a = ARGV_INIT, out, added = ARGV_INIT;
	argv_pushv(&a, (const char *const[]){ "nvcc", "-o", "p", "p.cu", "-lnvToolsExt", NULL });
	cr_assert_eq(layout_fix(&a, LAYOUT_NVTX, root, NULL, 0, &out, &added), 0);
	char *nvtx = concat("-I", root, "/include/nvtx3", NULL);
	cr_assert_eq(out.n, 5);
	cr_assert_str_eq(out.v[3], "p.cu");
	cr_assert_str_eq(out.v[4], nvtx);
	cr_assert_eq(added.n, 2);
	argv_release(&out);
	argv_release(&added);
	/* CCCL is nvcc's own business in nvcc mode */
	argv_release(&a);
	argv_pushv(&a, (const char *const[]){ "nvcc", "-c", "p.cu", NULL });
	cr_assert_eq(layout_fix(&a, LAYOUT_CCCL, root, NULL, 0, &out, &added), -1);
	argv_release(&out);
	argv_release(&added);
	free(nvtx);
	argv_release(&a);
	remove_root();
}

Test(layout, host_may_need_names_a_cuda13_include_dir)
{
	make_root();
	struct argv a = ARGV_INIT;
	char *inc = concat(root, "/include", NULL), *joined = concat("-I", root, "/include", NULL);
	argv_pushv(&a, (const char *const[]){ "g++", "-c", "x.cpp", joined, NULL });
	cr_assert(!layout_host_may_need(&a), "include/ without cccl/thrust is no CUDA 13 toolkit's");
	char *thrust = concat(root, "/include/cccl/thrust", NULL);
	cr_assert_eq(mkdir(thrust, 0755), 0);
	cr_assert(layout_host_may_need(&a), "-I<toolkit>/include");
	argv_release(&a);
	argv_pushv(&a, (const char *const[]){ "g++", "-isystem", inc, "-c", "x.cpp", NULL });
	cr_assert(layout_host_may_need(&a), "-isystem <toolkit>/include, two words");
	argv_release(&a);
	argv_pushv(&a, (const char *const[]){ "g++", "-include", inc, "-I.", "-c", "x.cpp", NULL });
	cr_assert(!layout_host_may_need(&a), "-include names a file, not a directory to search");
	argv_release(&a);
	free(thrust);
	free(inc);
	free(joined);
	remove_root();
}

Test(layout, dryrun_gate_takes_nvtx2_and_the_removed_type_headers_by_their_bare_names)
{
	cr_assert(layout_dryrun_gate("#include <nvToolsExt.h>\n"));
	cr_assert(layout_dryrun_gate("int x;\n  #  include \"nvToolsExtCudaRt.h\"\n"));
	cr_assert(layout_dryrun_gate("#include <cuda_texture_types.h>"));
	cr_assert(!layout_dryrun_gate("#include <nvtx3/nvToolsExt.h>\n"));
	cr_assert(!layout_dryrun_gate("// #include <nvToolsExt.h>\n"));
	cr_assert(!layout_dryrun_gate("#include <nvToolsExt.h\n>"));
	cr_assert(!layout_dryrun_gate("nvToolsExt.h"));
	cr_assert(!layout_dryrun_gate(""));
}
