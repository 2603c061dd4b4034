#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "buildwide/build.h"
#include "base/hash.h"

static enum build_kind classify(const char *comm, const char *args, const char **tool)
{
	/* args: space-separated, as /proc/PID/cmdline would give them */
	char *copy = xstrdup(args), *v[8];
	int n = 0;
	for (char *t = strtok(copy, " "); t && n < 8; t = strtok(NULL, " "))
		v[n++] = t;
	enum build_kind k = build_classify(comm, v, n, tool);
	/* tool points into args only for python's scons/waf, which these cases do not use */
	free(copy);
	return k;
}

/* The process chains measured under make, ninja, cmake --build, setup.py and pip (build.h). */
Test(build, classify_build_tools_wrappers_and_the_rest)
{
	const char *tool;
	static const struct { const char *comm, *args, *tool; enum build_kind kind; } cases[] = {
		{ "make", "make -j2", "make", BUILD_TOOL },
		{ "gmake", "/usr/bin/gmake -s -f CMakeFiles/Makefile2 all", "gmake", BUILD_TOOL },
		{ "ninja", "/usr/bin/ninja", "ninja", BUILD_TOOL },
		{ "cmake", "cmake --build b", "cmake", BUILD_TOOL },
		{ "python3", "/usr/bin/python3 setup.py build", "setup.py", BUILD_TOOL },
		{ "python3.11", "/usr/bin/python3.11 /x/pip/_vendor/pyproject_hooks/_in_process/_in_process.py build_wheel /tmp/x", "pip", BUILD_TOOL },
		{ "python3", "python3 -m pip install .", "pip", BUILD_TOOL },
		{ "python3", "python3 -m build", "build", BUILD_TOOL },
		{ "pip", "/usr/bin/python3.11 /usr/bin/pip install .", "pip", BUILD_TOOL },
		{ "sh", "/bin/sh -c nvcc -c k.cu", NULL, BUILD_PASS },
		{ "bash", "bash build.sh", NULL, BUILD_PASS },
		{ "ccache", "ccache nvcc", NULL, BUILD_PASS },
		{ "python3", "python3 -m pytest", NULL, BUILD_OTHER },
		{ "python3", "python3 run_tests.py", NULL, BUILD_OTHER },
		{ "ctest", "ctest -R x", NULL, BUILD_OTHER },
		{ "sshd", "sshd: user", NULL, BUILD_OTHER },
		{ "tmux: server", "tmux", NULL, BUILD_OTHER },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum build_kind k = classify(cases[i].comm, cases[i].args, &tool);
		cr_assert_eq(k, cases[i].kind, "%s: %d", cases[i].args, k);
		if (cases[i].tool)
			cr_assert_str_eq(tool, cases[i].tool, "%s", cases[i].args);
	}
}

Test(build, named_by_the_environment)
{
	struct build b, c;
	test_envv[0][0] = BUILD_ID_VAR;
	test_envv[0][1] = "ci job 42";
	cr_assert_eq(build_identify(&b, test_env), 0);
	cr_assert_eq(strncmp(b.id, "env-", 4), 0);
	cr_assert_eq(strlen(b.id), 4 + 16);
	cr_assert_str_eq(b.tool, BUILD_ID_VAR);
	cr_assert_eq(build_alive(b.id), -1);
	test_envv[0][1] = "ci job 43";
	cr_assert_eq(build_identify(&c, test_env), 0);
	cr_assert_str_neq(b.id, c.id);
	build_release(&b);
	build_release(&c);
	test_envv[0][0] = NULL;
}

/* This process's own identity: alive while it runs; a wrong start time, pid or boot is not. */
Test(build, alive_by_pid_start_time_and_boot)
{
	char buf[1024], boot[64], id[128];
	FILE *f = fopen("/proc/self/stat", "r");
	cr_assert_not_null(f);
	cr_assert_not_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	char *p = strrchr(buf, ')') + 2;
	unsigned long long start = 0;
	for (int field = 3; field < 22; field++)
		p = strchr(p, ' ') + 1;
	cr_assert_eq(sscanf(p, "%llu", &start), 1);
	f = fopen("/proc/sys/kernel/random/boot_id", "r");
	cr_assert_not_null(f);
	cr_assert_not_null(fgets(boot, sizeof(boot), f));
	fclose(f);
	boot[8] = '\0';
	snprintf(id, sizeof(id), "%s-%ld-%llu", boot, (long)getpid(), start);
	cr_assert_eq(build_alive(id), 1);
	snprintf(id, sizeof(id), "%s-%ld-%llu", boot, (long)getpid(), start + 1);
	cr_assert_eq(build_alive(id), 0);
	boot[0] = boot[0] == '0' ? '1' : '0';
	snprintf(id, sizeof(id), "%s-%ld-%llu", boot, (long)getpid(), start);
	cr_assert_eq(build_alive(id), 0);
	cr_assert_eq(build_alive("not-an-id"), -1);
	cr_assert_eq(build_alive("01234567-12x-5"), -1);
}

Test(build, hash_is_fnv1a)
{
	char h[17];
	build_hash("", h);
	cr_assert_str_eq(h, "cbf29ce484222325");
	build_hash("a", h);
	cr_assert_str_eq(h, "af63dc4c8601ec8c");
}

Test(build, hash_pieces_are_one_string)
{
	/* base/hash: the published FNV-1a vectors, and a value built in pieces equals the whole. */
	cr_assert_eq(hash_str(HASH_INIT, ""), 0xcbf29ce484222325ULL);
	cr_assert_eq(hash_str(HASH_INIT, NULL), 0xcbf29ce484222325ULL);
	cr_assert_eq(hash_str(HASH_INIT, "foobar"), 0x85944171f73967e8ULL);
	cr_assert_eq(hash_str(hash_str(HASH_INIT, "foo"), "bar"), 0x85944171f73967e8ULL);
	cr_assert_eq(hash_bytes(HASH_INIT, "foobarX", 6), 0x85944171f73967e8ULL);
}
