#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "machine/steps.h"

static void load(struct steps *s, const char *name)
{
	char *path = concat(NVSHIM_SOURCE_DIR, "/tests/unit/data/", name, NULL);
	char *text = test_read(path);
	cr_assert_not_null(text, "%s", path);
	steps_init(s);
	steps_parse(s, text);
	free(text);
	free(path);
}

/* "stage:target" of every command, space separated (xmalloc'ed). */
static char *summary(const struct steps *s)
{
	char *out = xstrdup("");
	for (size_t i = 0; i < s->n; i++) {
		char *next = xasprintf("%s%s%s%s%s", out, i ? " " : "", s->v[i].stage,
				       s->v[i].target ? ":" : "", s->v[i].target ? s->v[i].target : "");
		free(out);
		out = next;
	}
	return out;
}

Test(steps, split_like_sh)
{
	struct argv set = ARGV_INIT, out = ARGV_INIT;
	argv_push(&set, "CICC_PATH=/cuda/nvvm/bin");
	argv_push(&set, "_SPACE_= ");
	cr_assert_eq(steps_split("\"$CICC_PATH/cicc\" -arch compute_80 \"a b\" 'c $d' e\\ f \"\" "
				 "--x=\"-y -z \" -DF=\"\\\"q\\\"\" ${CICC_PATH}x $NOPE. $",
				 &set, &out), 0);
	const char *want[] = { "/cuda/nvvm/bin/cicc", "-arch", "compute_80", "a b", "c $d", "e f", "",
			       "--x=-y -z ", "-DF=\"q\"", "/cuda/nvvm/binx", ".", "$" };
	cr_assert_eq(out.n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < out.n; i++)
		cr_assert_str_eq(out.v[i], want[i]);
	argv_release(&out);
	static const char *const shell[] = { "-- Filter Dependencies -- > app.d", "a | b", "a; b",
					     "echo $(x)", "echo `x`", "\"open", "'open", "a \\" };
	for (size_t i = 0; i < sizeof(shell) / sizeof(shell[0]); i++) {
		cr_assert_eq(steps_split(shell[i], &set, &out), -1, "%s", shell[i]);
		cr_assert_eq(out.n, 0);
	}
	argv_release(&set);
}

Test(steps, nvcc_13_0_two_targets)
{
	struct steps s;
	load(&s, "dryrun-13.0-compile.txt");
	char *sum = summary(&s);
	cr_assert_str_eq(sum, "gcc cudafe++ gcc:compute_80 cicc:compute_80 ptxas:sm_80 gcc:compute_90 "
			      "cicc:compute_90 ptxas:sm_90 fatbinary rm gcc");
	free(sum);
	for (size_t i = 0; i < s.n; i++) {
		cr_assert(s.v[i].simple, "%s", s.v[i].line);
		cr_assert_str_eq(s.v[i].source, "k.cu", "%s", s.v[i].line);
	}
	/* "$CICC_PATH/cicc" is the setting's path. */
	const char *cicc_path = steps_setting(&s, "CICC_PATH");
	cr_assert_not_null(cicc_path);
	char *cicc = concat(cicc_path, "/cicc", NULL);
	cr_assert_str_eq(s.v[3].argv.v[0], cicc);
	free(cicc);
	cr_assert(s.v[0].preprocess && !s.v[0].target);
	cr_assert(s.v[2].preprocess && !s.v[10].preprocess);
	cr_assert_not_null(steps_setting(&s, "PATH"));
	cr_assert_null(steps_setting(&s, "NOPE"));
	/* The settings are kept verbatim, as nvcc exports them. */
	cr_assert_str_eq(steps_setting(&s, "_SPACE_"), " ");
	steps_release(&s);
}

Test(steps, nvcc_13_0_arch_specific_dlink_and_dependencies)
{
	struct steps s;
	load(&s, "dryrun-13.0-arch-specific.txt");
	char *sum = summary(&s);
	cr_assert_str_eq(sum, "gcc cudafe++ gcc:compute_90 cicc:compute_90 ptxas:compute_90 "
			      "gcc:compute_90a cicc:compute_90a ptxas:sm_90a fatbinary rm gcc");
	free(sum);
	steps_release(&s);

	load(&s, "dryrun-13.0-dlink.txt");
	sum = summary(&s);
	cr_assert_str_eq(sum, "nvlink:sm_80 fatbinary rm gcc");
	free(sum);
	steps_release(&s);

	load(&s, "dryrun-13.0-link-md.txt");
	size_t shell = 0;
	for (size_t i = 0; i < s.n; i++)
		if (!s.v[i].simple) {
			shell++;
			cr_assert_str_eq(s.v[i].line, "-- Filter Dependencies -- > app.d");
			cr_assert_eq(s.v[i].argv.n, 0);
		}
	cr_assert_eq(shell, 1);
	steps_release(&s);
}

Test(steps, older_nvcc_orders_targets_its_own_way)
{
	struct steps s;
	load(&s, "dryrun-11.8-compile.txt");
	char *sum = summary(&s);
	cr_assert_str_eq(sum, "gcc:compute_90 cicc:compute_90 gcc:compute_80 cicc:compute_80 "
			      "ptxas:sm_80 ptxas:sm_90 fatbinary rm gcc cudafe++ gcc");
	free(sum);
	cr_assert_str_eq(s.v[1].argv.v[0], "cicc");
	steps_release(&s);

	load(&s, "dryrun-12.4-compile.txt");
	cr_assert_gt(s.n, 8);
	for (size_t i = 0; i < s.n; i++)
		cr_assert_str_eq(s.v[i].source, "k.cu");
	steps_release(&s);
}
