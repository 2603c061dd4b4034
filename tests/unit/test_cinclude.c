#include <criterion/criterion.h>

#include <string.h>

#include "base/cinclude.h"

static int names(const char *line, const char *want, int want_angle)
{
	const char *name;
	size_t len;
	int angle;
	if (!cinclude_parse(line, &name, &len, &angle))
		return 0;
	return len == strlen(want) && !memcmp(name, want, len) && angle == want_angle;
}

Test(cinclude, directives_and_what_is_not_one)
{
	cr_assert(names("#include <cub/cub.cuh>\n", "cub/cub.cuh", 1));
	cr_assert(names("  #  include\t\"k.cuh\" // a comment", "k.cuh", 0));
	cr_assert(names("#include <>", "", 1));
	cr_assert(names("#include\"a.h\"", "a.h", 0));
	const char *name;
	size_t len;
	int angle;
	static const char *const not[] = { "// #include <a.h>", "#include <a.h\n>", "#include a.h", "#define include <a.h>",
					   "#include MACRO", "#inc <a.h>", "", "#" };
	for (size_t i = 0; i < sizeof(not) / sizeof(not[0]); i++)
		cr_assert(!cinclude_parse(not[i], &name, &len, &angle), "%s", not[i]);
}

Test(cinclude, lines_of_a_text)
{
	const char *text = "int x;\n#include <a.h>\n\n  #include \"b.h\"\n#include <c.h>";
	int n = 0;
	for (const char *p = text; p; p = cinclude_next_line(p)) {
		const char *name;
		size_t len;
		int angle;
		n += cinclude_parse(p, &name, &len, &angle);
	}
	cr_assert_eq(n, 3);
	cr_assert_null(cinclude_next_line("last\n"));
	cr_assert_null(cinclude_next_line("last"));
}
