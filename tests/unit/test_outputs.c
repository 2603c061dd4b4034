#include <criterion/criterion.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"
#include "model/hostcc.h"
#include "model/outputs.h"

static const char *no_env(const char *name)
{
	(void)name;
	return NULL;
}

/* The outputs of an nvcc line (words separated by spaces), joined by spaces. */
static char *outputs_text(const char *line)
{
	struct argv words = ARGV_INIT, paths = ARGV_INIT;
	char *copy = xstrdup(line);
	for (char *w = strtok(copy, " "); w; w = strtok(NULL, " "))
		argv_push(&words, w);
	struct invocation inv;
	invocation_parse(&inv, words.v, words.n, no_env);
	outputs_of(&inv, &paths);
	char *text = argv_join(&paths, " ");
	invocation_release(&inv);
	argv_release(&paths);
	argv_release(&words);
	free(copy);
	return text;
}

static void expect(const char *line, const char *want)
{
	char *got = outputs_text(line);
	cr_expect_str_eq(got, want, "%s: got '%s', want '%s'", line, got, want);
	free(got);
}

Test(outputs, nvcc_naming)
{
	expect("-o app a.cu b.cu", "app");
	expect("-arch=sm_80 a.cu", "a.out");
	expect("-shared -o libk.so k.cu", "libk.so");
	expect("-c k.cu", "k.o");
	expect("-c dir/k.cu -o obj/k.o", "obj/k.o");
	expect("-odir out -c a.cu b.cu x.o", "out/a.o out/b.o");
	expect("-dc a.cu b.cu", "a.o b.o");
	expect("-dlink a.o b.o", "a_dlink.o");
	expect("-dlink -o d.o a.o", "d.o");
	expect("-lib a.cu b.cu", "a.a");
	expect("-lib -o libk.a a.cu", "libk.a");
	expect("-ptx k.cu", "k.ptx");
	expect("-odir out -ptx k.cu", "out/k.ptx");
	expect("-cubin -arch=sm_80 k.cu -o x.cubin", "x.cubin");
	expect("-fatbin k.cu", "k.fatbin");
	expect("-cuda k.cu", "k.cu.cpp.ii");
	expect("-E k.cu", "");
	expect("-E k.cu -o k.ii", "k.ii");
	expect("-M k.cu", "");
	expect("-M -MF k.d k.cu", "k.d");
	expect("-MD -c k.cu", "k.o k.d");
	expect("-MD -c k.cu -o obj/x.o", "obj/x.o obj/x.d");
	expect("-MMD -MF deps.d -c -o k.o k.cu", "k.o deps.d");
	expect("-odir od -MD -c k.cu", "od/k.o od/k.d");
	expect("--dryrun -o app k.cu", "");
	expect("--version", "");
	expect("-c -E k.cu", "");
}

/* Runs the real nvcc on a line in a fresh directory holding k.cu and a.cu: the files it made,
 * sorted, joined by spaces. */
static char *nvcc_made(const char *line)
{
	char *dir = test_tmpdir();
	free(test_write(dir, "k.cu", "__global__ void k(int *p) { p[0] = 1; }\nint main() { return 0; }\n"));
	free(test_write(dir, "a.cu", "__global__ void a(int *p) { p[0] = 2; }\n"));
	char *od = concat(dir, "/od", NULL);
	mkdir(od, 0755);
	free(od);
	char *cmd = xasprintf("cd '%s' && %s %s >/dev/null 2>&1 && find . -type f ! -name k.cu ! -name a.cu | "
			      "sed 's|^\\./||' | sort | tr '\\n' ' '",
			      dir, NVSHIM_TEST_NVCC, line);
	FILE *p = popen(cmd, "r");
	char buf[4096] = "";
	size_t n = p ? fread(buf, 1, sizeof(buf) - 1, p) : 0;
	buf[n] = '\0';
	if (p)
		pclose(p);
	while (n && buf[n - 1] == ' ')
		buf[--n] = '\0';
	char *rm = xasprintf("rm -rf '%s'", dir);
	cr_assert_eq(system(rm), 0);
	free(rm);
	free(cmd);
	free(dir);
	return xstrdup(buf);
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* outputs_of() names exactly the files the real nvcc writes for the line. */
static void same_as_nvcc(const char *line)
{
	char *made = nvcc_made(line);
	char *named = outputs_text(line);
	struct argv v = ARGV_INIT;
	char *copy = xstrdup(named);
	for (char *w = strtok(copy, " "); w; w = strtok(NULL, " "))
		argv_push(&v, w);
	qsort(v.v, v.n, sizeof(char *), by_name);
	char *sorted = argv_join(&v, " ");
	cr_expect_str_eq(sorted, made, "%s: nvcc made '%s', outputs_of() names '%s'", line, made, sorted);
	free(sorted);
	free(copy);
	argv_release(&v);
	free(named);
	free(made);
}

Test(outputs, names_what_the_real_nvcc_writes, .timeout = 600)
{
	if (access(NVSHIM_TEST_NVCC, X_OK))
		cr_skip_test("no nvcc at %s", NVSHIM_TEST_NVCC);
	same_as_nvcc("-arch=sm_80 k.cu");
	same_as_nvcc("-c k.cu a.cu");
	same_as_nvcc("-odir od -c k.cu a.cu");
	same_as_nvcc("-lib k.cu a.cu");
	same_as_nvcc("-dc a.cu");
	same_as_nvcc("-ptx -odir od a.cu");
	same_as_nvcc("-fatbin a.cu");
	same_as_nvcc("-cuda a.cu");
	same_as_nvcc("-MD -c a.cu");
	same_as_nvcc("-odir od -MD -c a.cu");
	same_as_nvcc("-M -MF a.d a.cu");
	same_as_nvcc("-E -o a.ii a.cu");
}

Test(outputs, host_compiler_naming)
{
	const char *lines[][2] = {
		{ "-o app x.o y.o", "app" },
		{ "x.o", "a.out" },
		{ "-c x.c", "x.o" },
		{ "-c dir/x.c -o obj/x.o", "obj/x.o" },
		{ "-MD -c x.c -o obj/x.o", "obj/x.o obj/x.d" },
		{ "-S x.c", "x.s" },
		{ "-E x.c", "" },
		{ "-E x.c -o x.i", "x.i" },
	};
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct argv words = ARGV_INIT, paths = ARGV_INIT;
		char *copy = xstrdup(lines[i][0]);
		for (char *w = strtok(copy, " "); w; w = strtok(NULL, " "))
			argv_push(&words, w);
		struct hostcc hc;
		hostcc_parse(&hc, words.v, words.n);
		outputs_of_host(&hc, &paths);
		char *got = argv_join(&paths, " ");
		cr_expect_str_eq(got, lines[i][1], "%s: got '%s'", lines[i][0], got);
		free(got);
		hostcc_release(&hc);
		argv_release(&paths);
		argv_release(&words);
		free(copy);
	}
}

Test(outputs, check_wants_each_file_written_since)
{
	char *dir = test_tmpdir();
	char *old = test_write(dir, "old.o", "x");
	struct timespec then = { time(NULL) - 3600, 0 };
	struct timespec times[2] = { then, then };
	cr_assert_eq(utimensat(AT_FDCWD, old, times, 0), 0);
	/* utimensat() sets the ctime to now: a file older than the start is one from before it */
	struct timespec start = outputs_now();
	start.tv_sec += 1;
	sleep(0);
	struct argv paths = ARGV_INIT;
	const char *why = NULL;
	cr_assert_null(outputs_check(&paths, start, &why));
	char *missing = concat(dir, "/missing.o", NULL);
	argv_push(&paths, missing);
	cr_assert_str_eq(outputs_check(&paths, start, &why), missing);
	cr_assert_str_eq(why, "missing");
	argv_release(&paths);
	argv_push(&paths, old);
	cr_assert_str_eq(outputs_check(&paths, start, &why), old);
	cr_assert_str_eq(why, "not written by this run");
	/* written after the start: passes */
	struct timespec before = outputs_now();
	char *fresh = test_write(dir, "fresh.o", "y");
	argv_release(&paths);
	argv_push(&paths, fresh);
	cr_assert_null(outputs_check(&paths, before, &why));
	argv_release(&paths);
	char *rm = xasprintf("rm -rf '%s'", dir);
	cr_assert_eq(system(rm), 0);
	free(rm);
	free(fresh);
	free(missing);
	free(old);
	free(dir);
}
