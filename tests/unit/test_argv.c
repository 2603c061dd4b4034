#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/argv.h"

Test(argv, empty_vector_is_terminated_and_never_null)
{
	struct argv a = ARGV_INIT;
	cr_assert_not_null(a.v);
	cr_assert_null(a.v[0]);
	cr_assert_eq(a.n, 0);
	argv_release(&a);
	cr_assert_not_null(a.v);
	cr_assert_null(a.v[0]);
}

Test(argv, push_insert_remove_replace_keep_order_and_terminator)
{
	struct argv a = ARGV_INIT;
	argv_push(&a, "b");
	argv_push(&a, "d");
	argv_insert(&a, 0, "a");
	argv_insert(&a, 2, "c");
	argv_insert(&a, 4, "e");
	cr_assert_eq(a.n, 5);
	const char *want[] = { "a", "b", "c", "d", "e" };
	for (size_t i = 0; i < 5; i++)
		cr_assert_str_eq(a.v[i], want[i]);
	cr_assert_null(a.v[5]);
	argv_remove(&a, 1);
	argv_remove(&a, 3);
	cr_assert_eq(a.n, 3);
	cr_assert_str_eq(a.v[0], "a");
	cr_assert_str_eq(a.v[1], "c");
	cr_assert_str_eq(a.v[2], "d");
	cr_assert_null(a.v[3]);
	argv_replace(&a, 2, "z");
	cr_assert_str_eq(a.v[2], "z");
	argv_release(&a);
	cr_assert_eq(a.n, 0);
}

Test(argv, owns_its_strings)
{
	struct argv a = ARGV_INIT;
	char buf[] = "mutable";
	argv_push(&a, buf);
	buf[0] = 'X';
	cr_assert_str_eq(a.v[0], "mutable");
	argv_pushf(&a, "%s-%d", "n", 42);
	cr_assert_str_eq(a.v[1], "n-42");
	argv_release(&a);
}

Test(argv, grows_past_many_elements)
{
	struct argv a = ARGV_INIT, b = ARGV_INIT;
	for (int i = 0; i < 10000; i++)
		argv_pushf(&a, "%d", i);
	cr_assert_eq(a.n, 10000);
	cr_assert_str_eq(a.v[9999], "9999");
	cr_assert_null(a.v[10000]);
	argv_copy(&b, &a);
	cr_assert(argv_equal(&a, &b));
	argv_replace(&b, 5, "x");
	cr_assert_not(argv_equal(&a, &b));
	cr_assert_eq(argv_size(&a), argv_size(&b));
	argv_release(&a);
	argv_release(&b);
}

Test(argv, shell_quoting_round_trips_through_sh)
{
	struct argv a = ARGV_INIT;
	argv_push(&a, "printf");
	argv_push(&a, "[%s]");
	argv_push(&a, "plain");
	argv_push(&a, "with space");
	argv_push(&a, "it's");
	argv_push(&a, "");
	argv_push(&a, "$HOME\"`x`\n");
	char *line = argv_to_shell(&a);
	cr_assert_str_eq(line, "printf '[%s]' plain 'with space' 'it'\\''s' '' '$HOME\"`x`\n'");
	FILE *p = popen(line, "r");
	char out[256] = { 0 };
	size_t got = fread(out, 1, sizeof(out) - 1, p);
	pclose(p);
	out[got] = '\0';
	cr_assert_str_eq(out, "[plain][with space][it's][][$HOME\"`x`\n]");
	free(line);
	argv_release(&a);
}

#include "base/strbuf.h"

Test(strbuf, uncolor_takes_out_gcc_and_clang_control_sequences_only)
{
	cr_assert_null(strbuf_uncolor("x.cpp:3:10: error: plain\n"));
	cr_assert_null(strbuf_uncolor(NULL));
	/* gcc 12 -fdiagnostics-color=always, as it writes an error line */
	char *u = strbuf_uncolor("\033[01m\033[Kx.cpp:3:10:\033[m\033[K \033[01;31m\033[Kerror: \033[m\033[K"
				 "'\033[01m\033[KclockRate\033[m\033[K' was not declared\n");
	cr_assert_str_eq(u, "x.cpp:3:10: error: 'clockRate' was not declared\n");
	free(u);
	/* an OSC 8 link (-fdiagnostics-urls=always), and a lone ESC kept */
	u = strbuf_uncolor("see \033]8;;https://gcc.gnu.org/x\a[-Wfoo]\033]8;;\a\n\033x");
	cr_assert_str_eq(u, "see [-Wfoo]\n\033x");
	free(u);
	u = strbuf_uncolor("\033[m");
	cr_assert_str_eq(u, "");
	free(u);
}
