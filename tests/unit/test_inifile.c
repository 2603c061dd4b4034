#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

#include "base/inifile.h"

/* Each setting as "LINE section name=value" (a continuation as "LINE+ ..."). */
struct seen {
	struct inifile *f;
	struct argv out;
};

static int record(void *user, const char *section, const char *name, const char *value)
{
	struct seen *s = user;
	argv_pushf(&s->out, "%d%s %s %s=%s", s->f->line, s->f->continued ? "+" : "", section, name, value);
	return 1;
}

static void section_seen(struct inifile *f, char *line, void *user)
{
	struct seen *s = user;
	argv_pushf(&s->out, "%d section", f->line);
	(void)line;
}

Test(inifile, lines_sections_and_problems)
{
	struct argv problems = ARGV_INIT;
	struct seen s = { NULL, ARGV_INIT };
	struct inifile f = INIFILE_INIT("t.ini", &problems);
	s.f = &f;
	f.on_section = section_seen;
	char *long_line = xmalloc(400);
	memset(long_line, 'x', 300);
	strcpy(long_line + 300, " = 1\n");
	char *text = concat("; comment\na = 1\n[s]\nb = two ; inline comment\nno equals here\n", long_line,
			    "c=d;e\n", NULL);
	int rc = inifile_read_text(&f, text, record, &s);
	cr_assert_eq(rc, 0);
	cr_assert_eq(s.out.n, 4);
	cr_assert_str_eq(s.out.v[0], "2  a=1");
	cr_assert_str_eq(s.out.v[1], "3 section");
	cr_assert_str_eq(s.out.v[2], "4 s b=two");
	cr_assert_str_eq(s.out.v[3], "7 s c=d;e");
	cr_assert_eq(problems.n, 2);
	cr_assert_str_eq(problems.v[0], "t.ini:5: expected 'name = value', found 'no equals here'");
	cr_assert_str_eq(problems.v[1], "t.ini:6: line longer than 198 characters; ignored");
	argv_release(&s.out);
	argv_release(&problems);
	free(text);
	free(long_line);
}

Test(inifile, continuation_lines_only_where_asked)
{
	struct argv problems = ARGV_INIT;
	struct seen s = { NULL, ARGV_INIT };
	struct inifile f = INIFILE_INIT("t.ini", &problems);
	s.f = &f;
	f.multiline = 1;
	const char *text = "[s]\nexample = one;\n  two();\n\n  three\nnext = 1\n";
	cr_assert_eq(inifile_read_text(&f, text, record, &s), 0);
	cr_assert_eq(s.out.n, 4);
	cr_assert_str_eq(s.out.v[0], "2 s example=one;");
	cr_assert_str_eq(s.out.v[1], "3+ s example=two();");
	cr_assert_str_eq(s.out.v[2], "5+ s example=three");
	cr_assert_str_eq(s.out.v[3], "6 s next=1");
	cr_assert_eq(problems.n, 0);
	argv_release(&s.out);

	/* Without multiline (nvshim.ini, the rules) an indented line is no continuation. */
	struct inifile g = INIFILE_INIT("u.ini", &problems);
	s.f = &g;
	cr_assert_eq(inifile_read_text(&g, text, record, &s), 0);
	cr_assert_eq(s.out.n, 2);
	cr_assert_eq(problems.n, 2);
	cr_assert_str_eq(problems.v[0], "u.ini:3: expected 'name = value', found 'two();'");
	argv_release(&s.out);
	argv_release(&problems);
}

Test(inifile, a_file_reads_as_its_text)
{
	struct argv problems = ARGV_INIT;
	struct seen s = { NULL, ARGV_INIT };
	struct inifile f = INIFILE_INIT("t.ini", &problems);
	s.f = &f;
	FILE *fp = tmpfile();
	cr_assert_not_null(fp);
	fputs("[a]\nx = 1\ny = 2", fp);
	rewind(fp);
	cr_assert_eq(inifile_read_file(&f, fp, record, &s), 0);
	fclose(fp);
	cr_assert_eq(s.out.n, 2);
	cr_assert_str_eq(s.out.v[1], "3 a y=2");
	argv_release(&s.out);
	argv_release(&problems);
}
