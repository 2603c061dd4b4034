#include <criterion/criterion.h>

#include <fcntl.h>

#include <stdlib.h>
#include <string.h>

#include "machine/toolkit.h"

Test(toolkit, parses_the_banner)
{
	const char *banner = "nvcc: NVIDIA (R) Cuda compiler driver\n"
			     "Copyright (c) 2005-2025 NVIDIA Corporation\n"
			     "Cuda compilation tools, release 13.0, V13.0.88\n";
	char *v = toolkit_parse_version(banner);
	cr_assert_str_eq(v, "13.0.88");
	free(v);
	cr_assert_null(toolkit_parse_version("gcc (Debian 12.2.0) 12.2.0\n"));
}

Test(toolkit, reads_the_machines_nvcc)
{
	char *v = toolkit_version(NVSHIM_TEST_NVCC);
	cr_assert_not_null(v);
	cr_assert(strchr(v, '.'));
	free(v);
	struct argv codes = ARGV_INIT;
	cr_assert_eq(toolkit_list(NVSHIM_TEST_NVCC, "--list-gpu-code", &codes), 0);
	cr_assert_gt(codes.n, 3);
	for (size_t i = 0; i < codes.n; i++)
		cr_assert_eq(strncmp(codes.v[i], "sm_", 3), 0, "%s", codes.v[i]);
	argv_release(&codes);
}

#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"

Test(toolkit, allowed_values_carry_the_a_and_f_forms)
{
	char *cmd = concat("'", NVSHIM_TEST_NVCC, "' --help", NULL);
	FILE *p = popen(cmd, "r");
	char *help = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&help, &len);
	int c;
	while ((c = fgetc(p)) != EOF)
		fputc(c, m);
	pclose(p);
	fclose(m);
	free(cmd);
	struct argv names = ARGV_INIT;
	toolkit_parse_allowed(help, &names);
	cr_assert_gt(names.n, 20);
	int sm90a = 0, sm100f = 0, lto = 0, listed = 0;
	for (size_t i = 0; i < names.n; i++) {
		struct arch a;
		cr_assert_eq(arch_parse(names.v[i], &a), 0, "%s", names.v[i]);
		sm90a |= !strcmp(names.v[i], "sm_90a");
		sm100f |= !strcmp(names.v[i], "sm_100f");
		lto |= !strncmp(names.v[i], "lto_", 4);
	}
	/* Every plain target that --list-gpu-code names is among them. */
	struct argv codes = ARGV_INIT;
	toolkit_list(NVSHIM_TEST_NVCC, "--list-gpu-code", &codes);
	for (size_t i = 0; i < codes.n; i++) {
		int found = 0;
		for (size_t j = 0; j < names.n; j++)
			found |= !strcmp(codes.v[i], names.v[j]);
		cr_expect(found, "%s", codes.v[i]);
		listed++;
	}
	cr_assert_gt(listed, 3);
	char *v = toolkit_version(NVSHIM_TEST_NVCC);
	if (v && atoi(v) >= 13) {
		cr_assert(sm90a && sm100f && lto);
	}
	free(v);
	argv_release(&codes);
	argv_release(&names);
	free(help);
}

/* A fake nvcc that counts its runs. */
static char *fake_nvcc(const char *dir)
{
	char *text = xasprintf("#!/bin/sh\necho run >>'%s/runs'\n"
			       "case $1 in\n"
			       "--version) printf 'nvcc: NVIDIA (R) Cuda compiler driver\\nCuda compilation "
			       "tools, release 12.9, V12.9.86\\n' ;;\n"
			       "--help) printf -- \"--gpu-code <code>,...   (-code)\\n  Allowed values for "
			       "this option:  'compute_50','sm_50','sm_90a',\\n  'sm_100f'.\\n\\n--next\\n\" ;;\n"
			       "esac\n",
			       dir);
	char *path = test_write(dir, "nvcc", text);
	chmod(path, 0755);
	free(text);
	return path;
}

static int runs(const char *dir)
{
	char *path = concat(dir, "/runs", NULL);
	char *text = test_read(path);
	int n = 0;
	for (char *p = text; p && *p; p++)
		n += *p == '\n';
	free(text);
	free(path);
	return n;
}

Test(toolkit, facts_are_cached_and_the_cache_is_keyed_by_the_binary)
{
	char *dir = test_tmpdir();
	char *cache = concat(dir, "/cache", NULL);
	char *nvcc = fake_nvcc(dir);
	struct toolkit tk;
	toolkit_init(&tk);
	cr_assert_eq(toolkit_load(&tk, nvcc, cache), 0);
	cr_assert_str_eq(tk.source, "nvcc");
	cr_assert_str_eq(tk.version, "12.9.86");
	cr_assert_eq(tk.major, 12);
	cr_assert_eq(tk.minor, 9);
	cr_assert_eq(tk.targets.n, 4);
	struct arch a;
	arch_parse("sm_90a", &a);
	cr_assert(toolkit_accepts(&tk, &a));
	arch_parse("sm_90", &a);
	cr_assert_not(toolkit_accepts(&tk, &a));
	int first = runs(dir);
	cr_assert_eq(first, 2, "--version and --help");

	/* Warm: no nvcc runs. */
	cr_assert_eq(toolkit_load(&tk, nvcc, cache), 0);
	cr_assert_eq(strncmp(tk.source, "cache ", 6), 0, "%s", tk.source);
	cr_assert_eq(tk.targets.n, 4);
	cr_assert_str_eq(tk.version, "12.9.86");
	cr_assert_eq(runs(dir), first);

	/* A corrupt cache file is ignored and rewritten. */
	char *file = xstrdup(tk.source + 6);
	FILE *f = fopen(file, "w");
	fputs("key garbage\n", f);
	fclose(f);
	cr_assert_eq(toolkit_load(&tk, nvcc, cache), 0);
	cr_assert_str_eq(tk.source, "nvcc");
	cr_assert_eq(runs(dir), first + 2);
	cr_assert_eq(toolkit_load(&tk, nvcc, cache), 0);
	cr_assert_eq(strncmp(tk.source, "cache ", 6), 0);

	/* A changed nvcc (new mtime) is asked again. */
	struct timespec times[2] = { { 0, UTIME_OMIT }, { 12345, 0 } };
	utimensat(AT_FDCWD, nvcc, times, 0);
	cr_assert_eq(toolkit_load(&tk, nvcc, cache), 0);
	cr_assert_str_eq(tk.source, "nvcc");
	cr_assert_eq(runs(dir), first + 4);

	/* No temporary files are left behind. */
	char *cmd = xasprintf("test $(ls '%s/toolkit' | wc -l) -eq 1", cache);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
	toolkit_release(&tk);
	test_rmtree(dir);
	free(file);
	free(cache);
	free(nvcc);
	free(dir);
}

Test(toolkit, renamed_targets)
{
	struct toolkit tk;
	toolkit_init(&tk);
	tk.major = 13;
	cr_assert_eq(toolkit_renamed(&tk, 101), 110);
	cr_assert_eq(toolkit_renamed(&tk, 90), 90);
	tk.major = 12;
	cr_assert_eq(toolkit_renamed(&tk, 101), 101);
}
