#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cache.h"
#include "helpers.h"
#include "machine/locate.h"
#include "machine/toolkit.h"
#include "machine/view.h"

/* The toolkit under test (the real one) and this test program as "nvshim's nvcc". */
static char *dir, *real, *root;
static struct self self;

static void setup(void)
{
	memset(test_envv, 0, sizeof(test_envv));
	dir = test_tmpdir();
	locate_self(&self);
	real = lrealpath(NVSHIM_TEST_NVCC);
	root = toolkit_root(real);
}

static void teardown(void)
{
	test_rmtree(dir);
	free(dir);
	free(real);
	free(root);
	locate_self_release(&self);
}

TestSuite(view, .init = setup, .fini = teardown);

static int same(const char *a, const char *b)
{
	struct stat sa, sb;
	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static char *make(void)
{
	char *v, *why;
	cr_assert_eq(view_get(dir, NVSHIM_TEST_NVCC, self.exe, &v, &why), 0, "%s", why ? why : "");
	cr_assert_null(why);
	return v;
}

Test(view, the_toolkit_with_nvshim_as_nvcc)
{
	char *v = make();
	char *nvcc = concat(v, "/bin/nvcc", NULL);
	char *ptxas = concat(v, "/bin/ptxas", NULL);
	char *real_ptxas = concat(root, "/bin/ptxas", NULL);
	char *include = concat(v, "/include", NULL);
	char *real_include = concat(root, "/include", NULL);
	cr_assert(same(nvcc, self.exe));
	cr_assert(same(ptxas, real_ptxas));
	/* include/: the real one, or (CUDA 13's layout) a directory of links to its entries with
	 * CUDA 12's names of what moved */
	char *inc_cccl = concat(real_include, "/cccl/thrust", NULL), *thrust = concat(include, "/thrust", NULL);
	char *cuda_h = concat(include, "/cuda.h", NULL), *real_cuda_h = concat(real_include, "/cuda.h", NULL);
	struct stat sb;
	if (!stat(inc_cccl, &sb) && !same(include, real_include))
		cr_assert(same(thrust, inc_cccl) && same(cuda_h, real_cuda_h));
	else
		cr_assert(same(include, real_include));
	free(inc_cccl);
	free(thrust);
	free(cuda_h);
	free(real_cuda_h);
	char *link = view_real_nvcc(v);
	cr_assert_not_null(link);
	cr_assert(same(link, real));
	cr_assert_null(view_real_nvcc(root), "the real toolkit is no view");
	/* Made once: a second call names the same directory. */
	char *again = make();
	cr_assert_str_eq(again, v);
	free(again);
	free(link);
	free(nvcc);
	free(ptxas);
	free(real_ptxas);
	free(include);
	free(real_include);
	free(v);
}

Test(view, a_damaged_view_is_made_again)
{
	char *v = make();
	char *nvcc = concat(v, "/bin/nvcc", NULL);
	cr_assert_eq(unlink(nvcc), 0);
	char *again = make();
	cr_assert_str_eq(again, v);
	cr_assert(same(nvcc, self.exe));
	free(again);
	free(nvcc);
	free(v);
}

Test(view, only_the_bin_nvcc_of_a_toolkit)
{
	char *v = NULL, *why = NULL;
	char *script = test_write(dir, "nvcc", "#!/bin/sh\n");
	chmod(script, 0755);
	/* dir/nvcc is not in a bin/ directory. */
	cr_assert_eq(view_get(dir, script, self.exe, &v, &why), -1);
	cr_assert_null(v);
	cr_assert(strstr(why, "is not the bin/nvcc of a toolkit"), "%s", why);
	free(why);
	cr_assert_eq(view_get("", NVSHIM_TEST_NVCC, self.exe, &v, &why), -1);
	cr_assert(strstr(why, "no cache_dir"), "%s", why);
	free(why);
	free(script);
}

Test(view, locate_takes_the_real_nvcc_of_a_view)
{
	char *v = make();
	char *bin = concat(v, "/bin", NULL);
	struct config c;
	char *path, *how;
	config_init(&c, NULL);
	/* CUDA_HOME is the view: its bin/nvcc is nvshim, its real nvcc is taken. */
	test_envv[0][0] = "CUDA_HOME";
	test_envv[0][1] = v;
	test_envv[1][0] = "PATH";
	test_envv[1][1] = "/nonexistent";
	cr_assert_eq(locate_nvcc(&c, test_env, &self, &path, &how), 0);
	cr_assert_str_eq(path, real);
	cr_assert(strstr(how, "$CUDA_HOME (nvshim's toolkit view of "), "%s", how);
	free(path);
	free(how);
	/* The view's bin/ on PATH, nothing else. */
	test_envv[0][0] = "PATH";
	test_envv[0][1] = bin;
	test_envv[1][0] = NULL;
	cr_assert_eq(locate_nvcc(&c, test_env, &self, &path, &how), 0);
	cr_assert_str_eq(path, real);
	cr_assert(!strncmp(how, "PATH (nvshim's toolkit view", 27), "%s", how);
	free(path);
	free(how);
	/* A view whose real nvcc is gone (a link to nvshim here) leads nowhere: skipped. */
	char *link = concat(v, "/" VIEW_REAL_NVCC, NULL);
	cr_assert_eq(unlink(link), 0);
	cr_assert_eq(symlink(self.exe, link), 0);
	test_envv[0][0] = "CUDA_HOME";
	test_envv[0][1] = v;
	test_envv[1][0] = "PATH";
	test_envv[1][1] = "/nonexistent";
	int rc = locate_nvcc(&c, test_env, &self, &path, &how);
	cr_assert(rc != 0 || strcmp(path, self.exe), "nvshim never takes itself for the real nvcc");
	if (!rc) {
		free(path);
		free(how);
	}
	free(link);
	config_release(&c);
	free(bin);
	free(v);
}

Test(view, cache_remove_dir_removes_links_and_subdirectories)
{
	/* a toolkit of this test's own, so that following a link would delete what it points at */
	char *tk = concat(dir, "/tk", NULL), *bin = concat(tk, "/bin", NULL), *inc = concat(tk, "/include", NULL);
	char *nvcc = concat(bin, "/nvcc", NULL), *header = concat(inc, "/cuda.h", NULL);
	cr_assert_eq(mkdir(tk, 0755), 0);
	cr_assert_eq(mkdir(bin, 0755), 0);
	cr_assert_eq(mkdir(inc, 0755), 0);
	FILE *f = fopen(nvcc, "w");
	cr_assert_not_null(f);
	fputs("#!/bin/sh\nexit 0\n", f);
	fclose(f);
	cr_assert_eq(chmod(nvcc, 0755), 0);
	f = fopen(header, "w");
	cr_assert_not_null(f);
	fputs("/* a header */\n", f);
	fclose(f);
	char *v, *why = NULL, *cache = concat(dir, "/cache", NULL);
	cr_assert_eq(view_get(cache, nvcc, self.exe, &v, &why), 0, "%s", why ? why : "");
	char *in_view = concat(v, "/include/cuda.h", NULL);
	cr_assert_eq(access(in_view, F_OK), 0, "the view links the toolkit's include/");
	cache_remove_dir(v);
	cr_assert_neq(access(v, F_OK), 0);
	cr_assert_eq(access(nvcc, X_OK), 0, "the toolkit's nvcc is untouched");
	cr_assert_eq(access(header, F_OK), 0, "the toolkit's headers are untouched");
	free(in_view);
	free(v);
	free(cache);
	free(nvcc);
	free(header);
	free(inc);
	free(bin);
	free(tk);
}

Test(view, never_a_view_of_a_view)
{
	char *v = make(), *why = NULL, *again = NULL;
	char *nvcc = concat(v, "/bin/nvcc", NULL);
	cr_assert_neq(view_get(dir, nvcc, self.exe, &again, &why), 0, "a view's nvcc is no toolkit's");
	cr_assert_not_null(why);
	free(why);
	free(nvcc);
	free(v);
}

Test(view, unmap_reads_paths_into_a_view_as_the_real_toolkits)
{
	char *v = make();
	struct argv line = ARGV_INIT;
	char *what = NULL;
	argv_pushf(&line, "-I%s/include", v);
	argv_pushf(&line, "-Wl,-rpath,%s/lib64:/opt/x", v);
	argv_pushf(&line, "%s/lib64/libcudart.so", v);
	argv_push(&line, "-c");
	argv_pushf(&line, "%s/toolkit-view/not-a-view", dir);
	cr_assert_eq(view_unmap(dir, NULL, &line, &what), 3);
	char *want0 = concat("-I", root, "/include", NULL), *want1 = concat("-Wl,-rpath,", root, "/lib64:/opt/x", NULL),
	     *want2 = concat(root, "/lib64/libcudart.so", NULL);
	cr_assert_str_eq(line.v[0], want0);
	cr_assert_str_eq(line.v[1], want1);
	cr_assert_str_eq(line.v[2], want2);
	cr_assert_str_eq(line.v[3], "-c");
	cr_assert(strstr(what, " -> ") && strstr(what, root), "%s", what);
	free(what);
	what = NULL;
	/* the view removed: mapped only with the pair it would be made of again */
	argv_release(&line);
	argv_pushf(&line, "-I%s/include", v);
	char *views = concat(dir, "/toolkit-view", NULL);
	test_rmtree(views);
	cr_assert_eq(view_unmap(dir, NULL, &line, &what), 0);
	struct view_unmap_with w = { dir, self.exe, NVSHIM_TEST_NVCC };
	cr_assert_eq(view_unmap(dir, &w, &line, &what), 1);
	cr_assert_str_eq(line.v[0], want0);
	free(what);
	free(views);
	free(want0);
	free(want1);
	free(want2);
	argv_release(&line);
	free(v);
}
