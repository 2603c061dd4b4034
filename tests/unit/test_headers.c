/* headers: the include directories NVRTC needs, found from layouts built in a temporary
 * directory the way a toolkit, the cu13 and cu12 wheels and conda lay them out. */
#include <criterion/criterion.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libiberty.h>

#include "preload/headers.h"

static char root[256];

/* Creates root/rel (and its directories), with `text` in it. */
static void put(const char *rel, const char *text)
{
	char *path = concat(root, "/", rel, NULL);
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
	free(path);
}

static void setup(void)
{
	snprintf(root, sizeof(root), "/tmp/nvshim-headers-XXXXXX");
	cr_assert_not_null(mkdtemp(root));
}

static void teardown(void)
{
	char *cmd = concat("rm -rf '", root, "'", NULL);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
}

/* The runtime headers, crt/ and CCCL (as `parts` says) of CUDA `version` under inc. */
static void headers(const char *inc, unsigned parts, int version)
{
	char *p;
	char text[64];
	snprintf(text, sizeof(text), "/* cuda.h */\n#define CUDA_VERSION %d\n", version);
	if (parts & HEADERS_RUNTIME) {
		p = concat(inc, "/cuda_runtime.h", NULL), put(p, ""), free(p);
		p = concat(inc, "/cooperative_groups.h", NULL), put(p, ""), free(p);
		p = concat(inc, "/cuda.h", NULL), put(p, text), free(p);
	}
	if (parts & HEADERS_CRT)
		p = concat(inc, "/crt/host_defines.h", NULL), put(p, ""), free(p);
	if (parts & HEADERS_CCCL) {
		p = concat(inc, "/cuda/std/type_traits", NULL), put(p, ""), free(p);
		p = concat(inc, "/nv/target", NULL), put(p, ""), free(p);
	}
}

static char *at(const char *rel)
{
	char *p = concat(root, "/", rel, NULL);
	char real[PATH_MAX];
	cr_assert_not_null(realpath(p, real), "%s", p);
	free(p);
	return xstrdup(real);
}

static void expect_dirs(const struct headers_set *s, const char *a, const char *b)
{
	char *x = at(a);
	cr_assert_geq(s->dirs.n, 1);
	cr_assert_str_eq(s->dirs.v[0], x);
	free(x);
	if (b) {
		x = at(b);
		cr_assert_eq(s->dirs.n, 2);
		cr_assert_str_eq(s->dirs.v[1], x);
		free(x);
	} else {
		cr_assert_eq(s->dirs.n, 1);
	}
}

TestSuite(headers, .init = setup, .fini = teardown);

Test(headers, toolkit_13_adds_cccl)
{
	put("cuda-13.0/targets/x86_64-linux/lib/libnvrtc.so.13", "");
	headers("cuda-13.0/targets/x86_64-linux/include", HEADERS_RUNTIME | HEADERS_CRT, 13000);
	headers("cuda-13.0/targets/x86_64-linux/include/cccl", HEADERS_CCCL, 0);
	char *lib = concat(root, "/cuda-13.0/targets/x86_64-linux/lib/libnvrtc.so.13", NULL);
	struct headers h;
	headers_find(&h, lib, 13, 0, "/nonexistent");
	cr_assert_eq(h.own.layout, HEADERS_TOOLKIT);
	expect_dirs(&h.own, "cuda-13.0/targets/x86_64-linux/include", "cuda-13.0/targets/x86_64-linux/include/cccl");
	cr_assert_eq(h.own.parts, HEADERS_RUNTIME | HEADERS_CRT | HEADERS_CCCL);
	cr_assert_eq(h.own.version, 13000);
	cr_assert_eq(h.full.layout, HEADERS_NONE, "a complete set needs no other");
	cr_assert(headers_set_has(&h.own, "cooperative_groups.h"));
	cr_assert(headers_set_has(&h.own, "cuda/std/type_traits"));
	cr_assert_not(headers_set_has(&h.own, "mine.h"));
	headers_release(&h);
	free(lib);
}

Test(headers, cu13_wheels_without_cccl_take_a_toolkit_of_the_same_major)
{
	put("sp/nvidia/cu13/lib/libnvrtc.so.13", "");
	headers("sp/nvidia/cu13/include", HEADERS_RUNTIME, 13000);
	/* A 12.9 toolkit first in the roots (another major: not taken), then 13.1, then 13.0. */
	put("cuda-12.9/lib64/libnvrtc.so.12", "");
	headers("cuda-12.9/include", HEADERS_RUNTIME | HEADERS_CCCL, 12090);
	put("cuda-13.1/lib64/libnvrtc.so.13", "");
	headers("cuda-13.1/include", HEADERS_RUNTIME | HEADERS_CRT, 13010);
	headers("cuda-13.1/include/cccl", HEADERS_CCCL, 0);
	put("cuda-13.0/lib64/libnvrtc.so.13", "");
	headers("cuda-13.0/include", HEADERS_RUNTIME | HEADERS_CRT, 13000);
	headers("cuda-13.0/include/cccl", HEADERS_CCCL, 0);
	char *lib = concat(root, "/sp/nvidia/cu13/lib/libnvrtc.so.13", NULL);
	char *roots = concat(root, "/cuda-12.9:", root, "/cuda-13.1:", root, "/cuda-13.0", NULL);
	struct headers h;
	headers_find(&h, lib, 13, 0, roots);
	cr_assert_eq(h.own.layout, HEADERS_WHEEL);
	expect_dirs(&h.own, "sp/nvidia/cu13/include", NULL);
	cr_assert_eq(h.own.parts, HEADERS_RUNTIME);
	cr_assert_eq(h.full.layout, HEADERS_TOOLKIT);
	cr_assert_eq(h.full.version, 13000, "NVRTC's minor version first");
	expect_dirs(&h.full, "cuda-13.0/include", "cuda-13.0/include/cccl");
	headers_release(&h);
	/* Without 13.0, 13.1 (same major); with only 12.9, none. */
	free(roots);
	roots = concat(root, "/cuda-12.9:", root, "/cuda-13.1", NULL);
	headers_find(&h, lib, 13, 0, roots);
	cr_assert_eq(h.full.version, 13010);
	headers_release(&h);
	free(roots);
	roots = concat(root, "/cuda-12.9", NULL);
	headers_find(&h, lib, 13, 0, roots);
	cr_assert_eq(h.full.layout, HEADERS_NONE);
	headers_release(&h);
	free(roots);
	free(lib);
}

Test(headers, cu12_wheels_one_directory_a_package)
{
	put("sp/nvidia/cuda_nvrtc/lib/libnvrtc.so.12", "");
	headers("sp/nvidia/cuda_runtime/include", HEADERS_RUNTIME, 12090);
	headers("sp/nvidia/cuda_cccl/include", HEADERS_CCCL, 0);
	char *lib = concat(root, "/sp/nvidia/cuda_nvrtc/lib/libnvrtc.so.12", NULL);
	struct headers h;
	headers_find(&h, lib, 12, 9, "/nonexistent");
	cr_assert_eq(h.own.layout, HEADERS_WHEEL_SPLIT);
	expect_dirs(&h.own, "sp/nvidia/cuda_runtime/include", "sp/nvidia/cuda_cccl/include");
	cr_assert_eq(h.own.parts & headers_needed(12), headers_needed(12), "no crt/ needed before 13");
	char *where = at("sp/nvidia");
	cr_assert_str_eq(h.own.where, where);
	free(where);
	headers_release(&h);
	/* The same site-packages as a root for a cu12 NVRTC elsewhere that has no CCCL. */
	put("other/nvidia/cuda_nvrtc/lib/libnvrtc.so.12", "");
	headers("other/nvidia/cuda_runtime/include", HEADERS_RUNTIME, 12090);
	char *lib2 = concat(root, "/other/nvidia/cuda_nvrtc/lib/libnvrtc.so.12", NULL);
	char *sp = concat(root, "/sp", NULL);
	headers_find(&h, lib2, 12, 9, sp);
	cr_assert_eq(h.own.parts, HEADERS_RUNTIME);
	cr_assert_eq(h.full.layout, HEADERS_WHEEL_SPLIT);
	expect_dirs(&h.full, "sp/nvidia/cuda_runtime/include", "sp/nvidia/cuda_cccl/include");
	headers_release(&h);
	free(sp);
	free(lib2);
	free(lib);
}

Test(headers, conda_prefix_lib_and_targets)
{
	put("env/conda-meta/history", "");
	put("env/lib/libnvrtc.so.13", "");
	put("env/include/python3.12/Python.h", "");
	headers("env/targets/x86_64-linux/include", HEADERS_RUNTIME | HEADERS_CRT, 13000);
	headers("env/targets/x86_64-linux/include/cccl", HEADERS_CCCL, 0);
	char *lib = concat(root, "/env/lib/libnvrtc.so.13", NULL);
	struct headers h;
	headers_find(&h, lib, 13, 0, "/nonexistent");
	cr_assert_eq(h.own.layout, HEADERS_CONDA);
	expect_dirs(&h.own, "env/targets/x86_64-linux/include", "env/targets/x86_64-linux/include/cccl");
	cr_assert_eq(h.own.parts, headers_needed(13));
	headers_release(&h);
	free(lib);
}

Test(headers, another_major_beside_nvrtc_is_not_taken)
{
	put("cuda/lib64/libnvrtc.so.13", "");
	headers("cuda/include", HEADERS_RUNTIME | HEADERS_CRT | HEADERS_CCCL, 12090);
	char *lib = concat(root, "/cuda/lib64/libnvrtc.so.13", NULL);
	struct headers h;
	headers_find(&h, lib, 13, 0, "/nonexistent");
	cr_assert_eq(h.own.layout, HEADERS_NONE);
	cr_assert_eq(h.own.dirs.n, 0);
	headers_release(&h);
	free(lib);
}

Test(headers, parts_of_header_names)
{
	cr_assert_eq(headers_part_of("cuda/std/type_traits"), HEADERS_CCCL);
	cr_assert_eq(headers_part_of("cub/block/block_reduce.cuh"), HEADERS_CCCL);
	cr_assert_eq(headers_part_of("thrust/device_vector.h"), HEADERS_CCCL);
	cr_assert_eq(headers_part_of("nv/target"), HEADERS_CCCL);
	cr_assert_eq(headers_part_of("crt/host_defines.h"), HEADERS_CRT);
	cr_assert_eq(headers_part_of("cooperative_groups.h"), HEADERS_RUNTIME);
	cr_assert_eq(headers_part_of("cuda_fp16.h"), HEADERS_RUNTIME);
	cr_assert_eq(headers_part_of("mma.h"), HEADERS_RUNTIME);
	cr_assert_eq(headers_part_of("mine.h"), 0, "the program's own");
	cr_assert_eq(headers_part_of("curand_kernel.h"), 0, "a library's, not the runtime's");
}

Test(headers, install_hints_name_the_package_and_version)
{
	char *s = headers_install_hint(HEADERS_WHEEL, HEADERS_CCCL, 13, 0);
	cr_assert_str_eq(s, "pip install 'nvidia-cuda-cccl==13.0.*'");
	free(s);
	s = headers_install_hint(HEADERS_WHEEL, HEADERS_CRT | HEADERS_CCCL, 13, 0);
	cr_assert_str_eq(s, "pip install 'nvidia-cuda-crt==13.0.*' 'nvidia-cuda-cccl==13.0.*'");
	free(s);
	s = headers_install_hint(HEADERS_WHEEL_SPLIT, HEADERS_CCCL, 12, 9);
	cr_assert_str_eq(s, "pip install 'nvidia-cuda-cccl-cu12==12.9.*'");
	free(s);
	s = headers_install_hint(HEADERS_CONDA, HEADERS_CCCL, 13, 0);
	cr_assert_str_eq(s, "conda install 'cuda-cccl=13.0'");
	free(s);
	s = headers_install_hint(HEADERS_TOOLKIT, HEADERS_CCCL, 13, 0);
	cr_assert_str_eq(s, "the toolkit's package cuda-cccl-13-0");
	free(s);
	s = headers_install_hint(HEADERS_NONE, HEADERS_RUNTIME, 12, 4);
	cr_assert_str_eq(s, "pip install 'nvidia-cuda-runtime-cu12==12.4.*'");
	free(s);
}

Test(headers, cuda_h_version)
{
	const char *t = "/*\n * #define CUDA_VERSION 1\n */\n#define CUDA_VERSION 13000\n";
	cr_assert_eq(headers_cuda_version(t, strlen(t)), 13000);
	const char *no = "#define CUDA_VERSIONX 12\n#define CUDA_VERSION\n";
	cr_assert_eq(headers_cuda_version(no, strlen(no)), 0);
	const char *cut = "#define CUDA_VERSION 12090";
	cr_assert_eq(headers_cuda_version(cut, 22), 1, "only the bytes given");
	cr_assert_eq(headers_cuda_version(NULL, 0), 0);
}
