#include <criterion/criterion.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "model/options.h"

Test(options, table_is_sorted_and_unique)
{
	for (size_t i = 1; i < options_count; i++)
		cr_assert_lt(strcmp(options_table[i - 1].name, options_table[i].name), 0,
			     "'%s' is not before '%s'", options_table[i - 1].name, options_table[i].name);
}

Test(options, short_names_are_unique)
{
	for (size_t i = 0; i < options_count; i++)
		for (size_t j = i + 1; j < options_count; j++)
			if (options_table[i].short_name && options_table[j].short_name)
				cr_assert_str_neq(options_table[i].short_name, options_table[j].short_name);
}

Test(options, every_entry_is_found_by_both_names)
{
	for (size_t i = 0; i < options_count; i++) {
		const struct nvcc_option *o = &options_table[i];
		cr_assert_eq(options_find_long(o->name, strlen(o->name)), o, "%s", o->name);
		if (o->short_name)
			cr_assert_eq(options_find_short(o->short_name, strlen(o->short_name)), o, "%s",
				     o->short_name);
		cr_assert_eq(!!(o->flags & OPT_LIST) && !(o->flags & OPT_VALUE), 0,
			     "%s: a list option must take a value", o->name);
		cr_assert_eq((o->flags & OPT_ATTACHED) && !(o->flags & OPT_VALUE), 0, "%s", o->name);
	}
}

Test(options, spelled_lookup_follows_nvcc_dashes)
{
	cr_assert_not_null(options_find("--gpu-architecture"));
	cr_assert_not_null(options_find("-arch"));
	cr_assert_null(options_find("--arch"), "nvcc rejects --arch");
	cr_assert_null(options_find("-gpu-architecture"), "nvcc rejects -gpu-architecture");
	cr_assert_null(options_find("arch"));
	cr_assert_eq(options_find("-o"), options_find("--output-file"));
}

Test(options, kinds_of_well_known_options)
{
	cr_assert_eq(options_find("-c")->kind, OPT_KIND_MODE);
	cr_assert_eq(options_find("-dlink")->kind, OPT_KIND_MODE);
	cr_assert_eq(options_find("-gencode")->kind, OPT_KIND_TARGET);
	cr_assert_eq(options_find("-code")->kind, OPT_KIND_TARGET);
	cr_assert_eq(options_find("-o")->kind, OPT_KIND_OUTPUT);
	cr_assert_eq(options_find("-MF")->kind, OPT_KIND_DEPENDENCY);
	cr_assert_eq(options_find("-ccbin")->kind, OPT_KIND_HOST);
	cr_assert_eq(options_find("-Xptxas")->kind, OPT_KIND_PASSTHROUGH);
	cr_assert_eq(options_find("-Xcudafe")->kind, OPT_KIND_PASSTHROUGH);
	cr_assert_eq(options_find("-l")->kind, OPT_KIND_LINK);
	cr_assert_eq(options_find("-V")->kind, OPT_KIND_INFO);
	cr_assert_eq(options_find("-I")->kind, OPT_KIND_PREPROCESSOR);
}

/* Parses `nvcc --help` of the machine's nvcc: every "--long <value> (-short)" line. */
Test(options, complete_against_the_machines_nvcc_help)
{
	char *cmd = concat("'", NVSHIM_TEST_NVCC, "' --help", NULL);
	FILE *p = popen(cmd, "r");
	free(cmd);
	cr_assert_not_null(p);
	char line[512];
	int seen = 0;
	while (fgets(line, sizeof(line), p)) {
		if (strncmp(line, "--", 2))
			continue;
		char name[128] = { 0 };
		if (sscanf(line + 2, "%127s", name) != 1)
			continue;
		const char *after = line + 2 + strlen(name);
		/* The short name is the last "(-x)" on the line, or a repeated "--name". */
		const char *open = strstr(after, "(-");
		char short_name[128] = { 0 };
		if (open)
			sscanf(open + 2, "%127[^)]", short_name);
		const struct nvcc_option *o = options_find_long(name, strlen(name));
		cr_assert_not_null(o, "nvcc --help lists --%s, the table does not", name);
		cr_assert_eq(o->flags & (OPT_HIDDEN | OPT_DROPPED), 0, "--%s is listed by --help", name);
		if (*short_name) {
			cr_assert_not_null(o->short_name, "--%s has short name -%s", name, short_name);
			cr_assert_str_eq(o->short_name, short_name);
		}
		seen++;
	}
	pclose(p);
	cr_assert_gt(seen, 100, "nvcc --help listed only %d options", seen);
	/* And nothing unmarked in the table is missing from --help. */
	size_t listed = 0;
	for (size_t i = 0; i < options_count; i++)
		if (!(options_table[i].flags & (OPT_HIDDEN | OPT_DROPPED)))
			listed++;
	cr_assert_eq(listed, (size_t)seen, "table has %zu listed options, --help %d", listed, seen);
}

/* Options marked hidden are accepted by the machine's nvcc; options marked dropped are not. */
Test(options, hidden_are_accepted_and_dropped_are_rejected)
{
	char *dir = test_tmpdir();
	char *src = test_write(dir, "k.cu", "__global__ void k() {}\n");
	for (size_t i = 0; i < options_count; i++) {
		const struct nvcc_option *o = &options_table[i];
		if (!(o->flags & (OPT_HIDDEN | OPT_DROPPED)))
			continue;
		char *cmd = xasprintf("cd '%s' && '%s' -E k.cu --%s%s >/dev/null 2>err.txt; grep -c "
				      "'Unknown option' err.txt >/dev/null",
				      dir, NVSHIM_TEST_NVCC, o->name,
				      (o->flags & OPT_VALUE) ? "=1" : "");
		int unknown = system(cmd) == 0;
		free(cmd);
		if (o->flags & OPT_HIDDEN)
			cr_expect_not(unknown, "--%s is marked hidden but nvcc rejects it", o->name);
		else
			cr_expect(unknown, "--%s is marked dropped but nvcc accepts it", o->name);
	}
	test_rmtree(dir);
	free(src);
	free(dir);
}

/* Whether an option takes a value is asked of nvcc itself: `nvcc --NAME` with nothing after it
 * says "argument expected after '--NAME'" exactly for those that do. (--help does not show the
 * value of -MF and -qpp-config.) */
Test(options, takes_value_agrees_with_the_machines_nvcc)
{
	/* These take a value but nvcc lets it be missing at the very end of the line. */
	static const char *const optional_at_end[] = { "Ofast-compile", "host-linker-script" };
	for (size_t i = 0; i < options_count; i++) {
		const struct nvcc_option *o = &options_table[i];
		if (o->flags & OPT_DROPPED)
			continue;
		char *cmd = xasprintf("'%s' --%s 2>&1 </dev/null | grep -q 'argument expected after'",
				      NVSHIM_TEST_NVCC, o->name);
		int expected = system(cmd) == 0;
		free(cmd);
		int optional = 0;
		for (size_t k = 0; k < 2; k++)
			optional |= !strcmp(o->name, optional_at_end[k]);
		if (optional) {
			cr_expect(o->flags & OPT_VALUE, "--%s", o->name);
			cr_expect_not(expected, "--%s: nvcc now insists on its value", o->name);
		} else {
			cr_expect_eq(!!(o->flags & OPT_VALUE), expected,
				     "--%s: table says value=%d, nvcc says %d", o->name,
				     !!(o->flags & OPT_VALUE), expected);
		}
	}
}
