#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "model/arch.h"

Test(arch, parse_and_format_round_trip)
{
	static const char *const names[] = { "sm_80", "sm_90a", "sm_100f", "compute_75", "compute_90a",
					     "compute_121f", "lto_80", "sm_1000" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct arch a;
		char buf[32];
		cr_assert_eq(arch_parse(names[i], &a), 0, "%s", names[i]);
		cr_assert_str_eq(arch_format(&a, buf, sizeof(buf)), names[i]);
	}
	struct arch a;
	cr_assert_eq(arch_parse("sm_90a", &a), 0);
	cr_assert_eq(a.kind, ARCH_REAL);
	cr_assert_eq(a.num, 90);
	cr_assert_eq(a.suffix, 'a');
	static const char *const bad[] = { "sm_", "sm_8", "sm_80b", "sm80", "compute_90aa", "native",
					   "all", "sm_80,sm_86", "SM_80", "", "sm_99999" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(arch_parse(bad[i], &a), -1, "%s", bad[i]);
}

Test(arch, order)
{
	struct arch a, b;
	arch_parse("sm_90", &a);
	arch_parse("sm_90a", &b);
	cr_assert_lt(arch_cmp(&a, &b), 0);
	arch_parse("sm_100", &b);
	cr_assert_lt(arch_cmp(&a, &b), 0);
	arch_parse("sm_90f", &b);
	cr_assert_lt(arch_cmp(&a, &b), 0);
	arch_parse("compute_90", &b);
	cr_assert_gt(arch_cmp(&a, &b), 0, "same number: virtual before real");
}

static void add_once(struct argv *set, char *item)
{
	for (size_t i = 0; i < set->n; i++)
		if (!strcmp(set->v[i], item)) {
			free(item);
			return;
		}
	argv_push_owned(set, item);
}

/* The set's items sorted and joined with spaces (xmalloc'ed); releases the set. */
static char *sorted_set(struct argv *seen)
{
	for (size_t i = 0; i < seen->n; i++)
		for (size_t j = i + 1; j < seen->n; j++)
			if (strcmp(seen->v[i], seen->v[j]) > 0) {
				char *t = seen->v[i];
				seen->v[i] = seen->v[j];
				seen->v[j] = t;
			}
	char *r = xstrdup("");
	for (size_t i = 0; i < seen->n; i++) {
		char *n = concat(r, i ? " " : "", seen->v[i], NULL);
		free(r);
		r = n;
	}
	argv_release(seen);
	return r;
}

/* nvcc's own verdict, through --dryrun: the sorted set of "kind=X,sm=Y" images it would embed,
 * or "fatal: ..." (xmalloc'ed). */
static char *nvcc_images(const char *args)
{
	static char *dir;
	if (!dir) {
		dir = test_tmpdir();
		free(test_write(dir, "k.cu", "__global__ void k() {}\n"));
	}
	char *cmd = xasprintf("cd '%s' && '%s' -c k.cu -o k.o --dryrun %s 2>&1", dir, NVSHIM_TEST_NVCC, args);
	FILE *p = popen(cmd, "r");
	free(cmd);
	struct argv seen = ARGV_INIT;
	char line[8192];
	char *fatal = NULL;
	while (fgets(line, sizeof(line), p)) {
		if (!fatal && strstr(line, "nvcc fatal"))
			fatal = xstrdup(strstr(line, "fatal"));
		for (char *k = strstr(line, "kind="); k; k = strstr(k + 1, "kind=")) {
			size_t len = strcspn(k, ", ");
			len += strcspn(k + len + 1, ", \"") + 1;
			add_once(&seen, xstrndup(k, len));
		}
	}
	pclose(p);
	if (fatal) {
		fatal[strcspn(fatal, "\n")] = '\0';
		argv_release(&seen);
		return fatal;
	}
	return sorted_set(&seen);
}

/* The same set, from nvshim's model. */
static char *model_images(const struct arch_list *l)
{
	struct argv seen = ARGV_INIT;
	for (size_t i = 0; i < l->n; i++) {
		struct arch e = target_embedded(&l->v[i]);
		char buf[32];
		arch_format(&e, buf, sizeof(buf));
		const char *kind = e.kind == ARCH_REAL ? "elf" : e.kind == ARCH_VIRTUAL ? "ptx" : "nvvm";
		add_once(&seen, xasprintf("kind=%s,sm=%s", kind, strchr(buf, '_') + 1));
	}
	return sorted_set(&seen);
}

/* Which (arch, code) pairs are valid, asked of the machine's nvcc for archs it supports. */
Test(arch, pair_rules_agree_with_nvcc)
{
	static const char *const virts[] = { "compute_80", "compute_90", "compute_90a", "compute_100f",
					     "compute_100a", "compute_120" };
	static const char *const codes[] = { "sm_80", "sm_86", "sm_90", "sm_90a", "sm_100", "sm_100a",
					     "sm_100f", "sm_103", "sm_110", "sm_120", "compute_80",
					     "compute_90", "compute_90a", "compute_100f", "lto_90", "lto_90a",
					     "lto_100", "lto_100f" };
	int compared = 0;
	for (size_t i = 0; i < sizeof(virts) / sizeof(virts[0]); i++)
		for (size_t j = 0; j < sizeof(codes) / sizeof(codes[0]); j++) {
			char *args = xasprintf("-rdc=true -gencode arch=%s,code=%s", virts[i], codes[j]);
			char *want = nvcc_images(args);
			free(args);
			if (strstr(want, "Unsupported gpu architecture")) {
				free(want);
				continue;
			}
			struct target t;
			arch_parse(virts[i], &t.virt);
			arch_parse(codes[j], &t.code);
			const char *why;
			int ok = target_check(&t, &why) == 0;
			cr_expect_eq(ok, !strstr(want, "fatal"), "%s -> %s: nvcc says '%s', model %s",
				     virts[i], codes[j], want, ok ? "accepts" : why);
			if (ok && !strstr(want, "fatal")) {
				struct arch_list l;
				arch_list_init(&l);
				arch_list_add(&l, &t);
				char *got = model_images(&l);
				cr_expect_str_eq(got, want, "%s -> %s", virts[i], codes[j]);
				free(got);
				arch_list_release(&l);
			}
			free(want);
			compared++;
		}
	cr_assert_gt(compared, 50);
}

static void parse_line(struct invocation *inv, const char *line)
{
	char **v = buildargv(line);
	size_t n = 0;
	while (v && v[n])
		n++;
	invocation_parse(inv, v, n, NULL);
	freeargv(v);
}

/* Every spelling becomes the targets nvcc builds, and the -gencode arguments nvshim writes back
 * build exactly the same. */
Test(arch, command_lines_expand_like_nvcc_and_round_trip)
{
	static const char *const lines[] = {
		"-arch=sm_80",
		"-arch sm_86",
		"--gpu-architecture=sm_90a",
		"-arch=sm_100a",
		"-arch=sm_100f",
		"-arch=compute_80",
		"-arch=compute_80 -code=sm_80,sm_86,compute_80",
		"-arch=compute_90a -code=sm_90a",
		"-arch=sm_80 -arch=sm_86",
		"-arch=sm_80 -gencode arch=compute_90,code=sm_90",
		"-gencode arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=[sm_90,compute_90]",
		"'--generate-code=arch=compute_86,code=\"sm_86,compute_86\"'",
		"-gencode code=sm_80,arch=compute_80",
		"--generate-code=arch=compute_75,code=[compute_75,sm_75] --generate-code=arch=compute_120,code=[compute_120,sm_120]",
		"-gencode arch=compute_80,code=sm_80 -gencode arch=compute_80,code=sm_80",
		"-arch=lto_80 -rdc=true",
		"-arch=compute_80 -code=lto_80 -rdc=true",
		"-gencode arch=compute_100f,code=[sm_100,sm_103]",
	};
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct invocation inv;
		struct arch_list l;
		char *why;
		parse_line(&inv, lines[i]);
		arch_list_init(&l);
		cr_assert_eq(arch_list_from_invocation(&l, &inv, &why), 0, "%s: %s", lines[i], why);
		cr_assert(l.given);
		char *want = nvcc_images(lines[i]);
		char *got = model_images(&l);
		cr_expect_str_eq(got, want, "%s: model '%s', nvcc '%s'", lines[i], got, want);

		struct argv args = ARGV_INIT;
		arch_list_to_args(&l, &args);
		if (strstr(lines[i], "-rdc=true"))
			argv_push(&args, "-rdc=true");
		char *joined = argv_to_shell(&args);
		char *again = nvcc_images(joined);
		cr_expect_str_eq(again, want, "%s -> %s: '%s', nvcc '%s'", lines[i], joined, again, want);
		free(joined);
		free(again);
		argv_release(&args);
		free(want);
		free(got);
		arch_list_release(&l);
		invocation_release(&inv);
	}
}

Test(arch, errors_in_nvccs_words)
{
	static const struct {
		const char *line, *error;
	} cases[] = {
		{ "-arch=sm_80 -code=sm_80", "must be a virtual code architecture" },
		{ "-gencode arch=compute_90a,code=sm_90", "Incompatible code generation requested: arch='compute_90a', code='sm_90'" },
		{ "-gencode arch=compute_90,code=sm_80", "Incompatible code generation requested" },
		{ "-arch=native -code=sm_80", "Cannot use '-arch=native' with '--gpu-code (-code)'" },
		{ "-code=sm_80", "-arch option not specified" },
		{ "-arch=sm_8x", "Unsupported gpu architecture 'sm_8x'" },
		{ "-arch=compute_80 -code=sm_8x", "Value 'sm_8x' is not defined for option 'gpu-code'" },
		{ "-gencode code=sm_80", "Option '--generate-code code=sm_80', missing architecture" },
		{ "-gencode arch=compute_80", "Option '--generate-code arch=compute_80', missing code" },
		{ "-gencode arch=compute_80,foo=1,code=sm_80", "Keyword 'foo' is not defined for option 'generate-code'" },
		{ "-gencode arch=compute_86,code=sm_86,compute_86", "'compute_86' is not in 'keyword=value' format" },
		{ "-gencode arch=compute_80,code=[sm_80],code=sm_86", "redefinition of keyword 'code'" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct invocation inv;
		struct arch_list l;
		char *why = NULL;
		parse_line(&inv, cases[i].line);
		arch_list_init(&l);
		cr_assert_eq(arch_list_from_invocation(&l, &inv, &why), -1, "%s", cases[i].line);
		cr_assert_not_null(strstr(why, cases[i].error), "%s: got '%s'", cases[i].line, why);
		/* nvcc says the same. */
		char *nvcc_says = nvcc_images(cases[i].line);
		cr_expect_not_null(strstr(nvcc_says, cases[i].error), "%s: nvcc says '%s'", cases[i].line,
				   nvcc_says);
		free(nvcc_says);
		free(why);
		arch_list_release(&l);
		invocation_release(&inv);
	}
}

Test(arch, special_values_and_no_targets)
{
	struct invocation inv;
	struct arch_list l;
	char *why;
	parse_line(&inv, "-c k.cu -arch=native");
	arch_list_init(&l);
	cr_assert_eq(arch_list_from_invocation(&l, &inv, &why), 0);
	cr_assert(l.native && l.given && l.n == 0);
	arch_list_release(&l);
	invocation_release(&inv);
	parse_line(&inv, "-c k.cu -arch=all-major");
	arch_list_init(&l);
	cr_assert_eq(arch_list_from_invocation(&l, &inv, &why), 0);
	cr_assert(l.all_major && !l.all);
	arch_list_release(&l);
	invocation_release(&inv);
	parse_line(&inv, "-c k.cu");
	arch_list_init(&l);
	cr_assert_eq(arch_list_from_invocation(&l, &inv, &why), 0);
	cr_assert(!l.given && l.n == 0);
	arch_list_release(&l);
	invocation_release(&inv);
}

/* A one-code mode keeps, per architecture, the code of its kind: -arch=sm_80 -cubin is the sm_80
 * SASS, -ptx the compute_80 PTX; an architecture with no such code keeps what it has. */
Test(arch, one_code_per_architecture)
{
	struct invocation inv;
	struct arch_list l;
	char *why, buf[32];
	parse_line(&inv, "-c k.cu -arch=sm_80 -gencode arch=compute_90,code=sm_90");
	arch_list_init(&l);
	cr_assert_eq(arch_list_from_invocation(&l, &inv, &why), 0);
	size_t before = l.n;
	arch_list_one_code(&l, ARCH_REAL);
	cr_assert_eq(before, 3);
	cr_assert_eq(l.n, 2);
	cr_assert_str_eq(arch_format(&l.v[0].code, buf, sizeof(buf)), "sm_80");
	cr_assert_str_eq(arch_format(&l.v[1].code, buf, sizeof(buf)), "sm_90");
	arch_list_release(&l);
	arch_list_init(&l);
	cr_assert_eq(arch_list_from_invocation(&l, &inv, &why), 0);
	arch_list_one_code(&l, ARCH_VIRTUAL);
	/* compute_80 PTX for 80; 90 has no PTX: its SASS stays (nvcc then judges the line) */
	cr_assert_eq(l.n, 2);
	cr_assert_str_eq(arch_format(&l.v[0].code, buf, sizeof(buf)), "compute_80");
	cr_assert_str_eq(arch_format(&l.v[1].code, buf, sizeof(buf)), "sm_90");
	arch_list_release(&l);
	invocation_release(&inv);
}
