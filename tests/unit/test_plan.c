#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "model/plan.h"
#include "base/runner.h"

Test(plan, short_command_lines_are_left_alone)
{
	char *args[] = { "-c", "a.cu" };
	struct plan p;
	plan_init(&p, "/bin/nvcc", args, 2);
	cr_assert_eq(plan_finalize(&p, 1000, NULL), 0);
	cr_assert_eq(p.argv.n, 3);
	cr_assert_str_eq(p.argv.v[0], "/bin/nvcc");
	cr_assert_str_eq(p.argv.v[2], "a.cu");
	cr_assert_null(p.options_file);
	plan_release(&p);
}

Test(plan, notes_name_their_rule)
{
	struct plan p;
	plan_init(&p, "/bin/nvcc", NULL, 0);
	plan_note(&p, "targets.unsupported", "dropped %s", "sm_70");
	cr_assert_str_eq(p.notes.v[0], "dropped sm_70 [targets.unsupported]");
	plan_release(&p);
}

Test(plan, arguments_nvcc_files_cannot_carry_keep_the_command_line)
{
	char *args[] = { "-DQ=\"x\"", "a.cu" };
	struct plan p;
	plan_init(&p, "/bin/nvcc", args, 2);
	cr_assert_eq(plan_finalize(&p, 1, NULL), 0);
	cr_assert_eq(p.argv.n, 3);
	plan_release(&p);
}

/* A long line goes into a private options file that the real nvcc reads exactly, and the file
 * and its directory are gone afterwards. */
Test(plan, long_command_lines_go_through_an_options_file_nvcc_accepts)
{
	char *dir = test_tmpdir();
	free(test_write(dir, "k.cu", "#ifndef MSG\n#error no MSG\n#endif\n"
				     "static const char *m = MSG; __global__ void k() {}\n"));
	char *out = concat(dir, "/k.o", NULL);
	char *src = concat(dir, "/k.cu", NULL);
	char *inc = concat(dir, "/dir with space", NULL);
	mkdir(inc, 0700);
	char *args[] = { "-c", src, "-o", out, "-DMSG=0", "-I", inc };
	struct plan p;
	plan_init(&p, NVSHIM_TEST_NVCC, args, 7);
	cr_assert_eq(plan_finalize(&p, 10, dir), 1);
	cr_assert_eq(p.argv.n, 3);
	cr_assert_str_eq(p.argv.v[1], "--options-file");
	struct stat sb;
	cr_assert_eq(stat(p.options_dir, &sb), 0);
	cr_assert_eq(sb.st_mode & 0777, 0700, "private directory");
	struct run_result res;
	cr_assert_eq(runner_run(p.tool, &p.argv, &res), 0);
	cr_assert_eq(res.status, 0);
	cr_assert_eq(stat(out, &sb), 0, "nvcc wrote the object named in the options file");
	char *file = xstrdup(p.options_file), *odir = xstrdup(p.options_dir);
	plan_release(&p);
	cr_assert_neq(stat(file, &sb), 0);
	cr_assert_neq(stat(odir, &sb), 0);
	test_rmtree(dir);
	free(file);
	free(odir);
	free(out);
	free(src);
	free(inc);
	free(dir);
}

Test(plan, rewritten_compares_with_the_given_arguments)
{
	char *args[] = { "-c", "a.cu" };
	char *other[] = { "-c", "b.cu" };
	struct plan p;
	plan_init(&p, "/bin/nvcc", args, 2);
	cr_assert_not(plan_rewritten(&p, args, 2));
	cr_assert(plan_rewritten(&p, other, 2));
	cr_assert(plan_rewritten(&p, args, 1));
	plan_release(&p);
}
