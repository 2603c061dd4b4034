#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "machine/locate.h"


static char *dir;
static struct self self;
static char *self_dir, *other_dir, *plain_dir;

static void setup(void)
{
	memset(test_envv, 0, sizeof(test_envv));
	dir = test_tmpdir();
	locate_self(&self);
	self_dir = concat(dir, "/self", NULL);
	other_dir = concat(dir, "/other", NULL);
	plain_dir = concat(dir, "/plain", NULL);
	mkdir(self_dir, 0700);
	mkdir(other_dir, 0700);
	mkdir(plain_dir, 0700);
	/* A symlink named nvcc that leads to the running program (nvshim's stand-in here). */
	char *link = concat(self_dir, "/nvcc", NULL);
	cr_assert_eq(symlink(self.exe, link), 0);
	free(link);
	char *script = test_write(other_dir, "nvcc", "#!/bin/sh\nexit 0\n");
	chmod(script, 0755);
	free(script);
	free(test_write(plain_dir, "nvcc", "not executable\n"));
}

static void teardown(void)
{
	test_rmtree(dir);
	free(dir);
	free(self_dir);
	free(other_dir);
	free(plain_dir);
	locate_self_release(&self);
}

TestSuite(locate, .init = setup, .fini = teardown);

static int find(struct config *c, char **path, char **how)
{
	return locate_nvcc(c, test_env, &self, path, how);
}

Test(locate, self_is_known)
{
	cr_assert_not_null(self.exe);
	cr_assert(self.known);
	int is_self;
	cr_assert_not(locate_is_candidate(&self, self.exe, &is_self));
	cr_assert(is_self);
}

Test(locate, path_skips_nvshim_itself_and_non_executables)
{
	char *p = xasprintf("%s:%s:%s", self_dir, plain_dir, other_dir);
	test_envv[0][0] = "PATH";
	test_envv[0][1] = p;
	struct config c;
	config_init(&c, NULL);
	char *path, *how;
	cr_assert_eq(find(&c, &path, &how), 0);
	char *want = concat(other_dir, "/nvcc", NULL);
	cr_assert_str_eq(path, want);
	cr_assert_str_eq(how, "PATH");
	free(want);
	free(path);
	free(how);
	free(p);
	config_release(&c);
}

Test(locate, cuda_home_before_path_and_skipped_when_it_is_nvshim)
{
	/* $CUDA_HOME/bin/nvcc */
	char *home = concat(dir, "/cuda", NULL);
	char *bin = concat(home, "/bin", NULL);
	mkdir(home, 0700);
	mkdir(bin, 0700);
	char *script = test_write(bin, "nvcc", "#!/bin/sh\n");
	chmod(script, 0755);
	test_envv[0][0] = "CUDA_HOME";
	test_envv[0][1] = home;
	test_envv[1][0] = "PATH";
	test_envv[1][1] = other_dir;
	struct config c;
	config_init(&c, NULL);
	char *path, *how;
	cr_assert_eq(find(&c, &path, &how), 0);
	cr_assert_str_eq(path, script);
	cr_assert_str_eq(how, "$CUDA_HOME");
	free(path);
	free(how);
	/* When $CUDA_HOME/bin/nvcc is nvshim, PATH decides. */
	unlink(script);
	cr_assert_eq(symlink(self.exe, script), 0);
	cr_assert_eq(find(&c, &path, &how), 0);
	cr_assert_str_eq(how, "PATH");
	free(path);
	free(how);
	config_release(&c);
	free(home);
	free(bin);
	free(script);
}

Test(locate, explicit_real_nvcc_is_never_replaced)
{
	test_envv[0][0] = "PATH";
	test_envv[0][1] = other_dir;
	struct config c;
	config_init(&c, NULL);
	c.real_nvcc = concat(plain_dir, "/nvcc", NULL);
	char *path, *how;
	cr_assert_eq(find(&c, &path, &how), -1, "a non-executable real_nvcc is an error");
	free(c.real_nvcc);
	c.real_nvcc = concat(self_dir, "/nvcc", NULL);
	cr_assert_eq(find(&c, &path, &how), -1, "real_nvcc that is nvshim is an error");
	free(c.real_nvcc);
	c.real_nvcc = concat(other_dir, "/nvcc", NULL);
	cr_assert_eq(find(&c, &path, &how), 0);
	cr_assert_str_eq(path, c.real_nvcc);
	cr_assert_not_null(strstr(how, "real_nvcc"));
	free(path);
	free(how);
	config_release(&c);
}

Test(locate, nothing_found_is_one_error)
{
	test_envv[0][0] = "PATH";
	test_envv[0][1] = self_dir;
	struct config c;
	config_init(&c, NULL);
	char *path, *how;
	int rc = find(&c, &path, &how);
	struct stat sb;
	if (stat("/usr/local/cuda/bin/nvcc", &sb) == 0) {
		cr_assert_eq(rc, 0, "falls back to /usr/local/cuda/bin/nvcc");
		cr_assert_str_eq(path, "/usr/local/cuda/bin/nvcc");
		free(path);
		free(how);
	} else {
		cr_assert_eq(rc, -1);
	}
	config_release(&c);
}

Test(locate, depth_from_environment)
{
	cr_assert_eq(locate_depth(test_env), 0);
	test_envv[0][0] = LOCATE_DEPTH_VAR;
	test_envv[0][1] = "2";
	cr_assert_eq(locate_depth(test_env), 2);
	test_envv[0][1] = "garbage";
	cr_assert_eq(locate_depth(test_env), 0);
}

/* CC mode's search for the real compiler: the same rules, any name. */
Test(locate, on_path_skips_nvshim_itself)
{
	char *path = concat(self_dir, ":", plain_dir, ":", other_dir, NULL);
	test_envv[0][0] = "PATH";
	test_envv[0][1] = path;
	char *found = locate_on_path(&self, test_env, "nvcc");
	char *want = concat(other_dir, "/nvcc", NULL);
	cr_assert_str_eq(found, want);
	free(found);
	free(want);
	cr_assert_null(locate_on_path(&self, test_env, "no-such-compiler"));
	free(path);
}

/* A copy of the running program (pip's install of the wheel has copies, not links): the same
 * size and bytes are nvshim itself; a copy changed in one byte, of the same size, is not. */
Test(locate, a_copy_of_itself_is_itself)
{
	FILE *in = fopen(self.exe, "rb");
	cr_assert_not_null(in);
	char *copy = concat(plain_dir, "/copy", NULL), *changed = concat(plain_dir, "/changed", NULL);
	FILE *a = fopen(copy, "wb"), *b = fopen(changed, "wb");
	cr_assert(a && b);
	char buf[8192];
	size_t n, total = 0;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0) {
		fwrite(buf, 1, n, a);
		if (total + n > 100000 && total <= 100000)
			buf[100000 - total] ^= 1;
		fwrite(buf, 1, n, b);
		total += n;
	}
	fclose(in);
	fclose(a);
	fclose(b);
	chmod(copy, 0755);
	chmod(changed, 0755);
	cr_assert_gt(total, 100000);
	int is_self;
	cr_assert_not(locate_is_candidate(&self, copy, &is_self));
	cr_assert(is_self);
	cr_assert(locate_is_candidate(&self, changed, &is_self));
	cr_assert_not(is_self);
	free(copy);
	free(changed);
}
