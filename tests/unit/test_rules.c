#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "model/rules.h"

Test(rules, globs)
{
	cr_assert(rules_glob_match("*.cu", "/p/csrc/x.cu"));
	cr_assert_not(rules_glob_match("*.cu", "/p/csrc/x.cuh"));
	cr_assert(rules_glob_match("csrc/quantization/*.cu", "/home/u/vllm/csrc/quantization/q.cu"));
	cr_assert_not(rules_glob_match("csrc/quantization/*.cu", "/home/u/vllm/csrc/quantization/sub/q.cu"));
	cr_assert_not(rules_glob_match("csrc/quantization/*.cu", "/home/u/vllm/xcsrc/quantization/q.cu"));
	cr_assert(rules_glob_match("csrc/**/*_sm90*.cu", "/v/csrc/quantization/w8a8/cutlass/c3x/scaled_mm_sm90_fp8.cu"));
	cr_assert(rules_glob_match("csrc/**/*_sm90*.cu", "/v/csrc/a_sm90.cu"));
	cr_assert_not(rules_glob_match("csrc/**/*_sm90*.cu", "/v/csrc/a_sm100.cu"));
	cr_assert(rules_glob_match("/abs/k?.cu", "/abs/k1.cu"));
	cr_assert_not(rules_glob_match("/abs/k?.cu", "/other/abs/k1.cu"));
	cr_assert(rules_glob_match("k[0-9].cu", "/x/k7.cu"));
	cr_assert_not(rules_glob_match("k[!0-9].cu", "/x/k7.cu"));
	cr_assert(rules_glob_match("examples/*_hopper_*/*.cu", "/c/examples/48_hopper_warp_specialized_gemm/g.cu"));
}

Test(rules, sections_and_values)
{
	char *glob = NULL, *why = NULL;
	cr_assert(rules_section("module \"csrc/*.cu\"", &glob));
	cr_assert_str_eq(glob, "csrc/*.cu");
	free(glob);
	cr_assert(rules_section("module  k.cu ", &glob));
	cr_assert_str_eq(glob, "k.cu");
	free(glob);
	cr_assert_not(rules_section("nvshim", &glob));
	cr_assert_not(rules_section("modules x", &glob));
	cr_assert_eq(rules_check("min_arch", "sm_80", &why), 0);
	cr_assert_eq(rules_check("max_arch", "90", &why), 0);
	cr_assert_eq(rules_check("require", "sm_90a, sm_100f", &why), 0);
	cr_assert_eq(rules_check("drop", "sm_75 compute_75 86", &why), 0);
	cr_assert_eq(rules_check("flags", "-DX=1 --use_fast_math", &why), 0);
	cr_assert_eq(rules_check("require", "sm_90", &why), -1);
	cr_assert_str_eq(why, "'require' takes arch-specific targets such as sm_90a or sm_100f, not 'sm_90'");
	free(why);
	cr_assert_eq(rules_check("min_arch", "ampere", &why), -1);
	free(why);
	cr_assert_eq(rules_check("colour", "red", &why), -1);
	cr_assert_str_eq(why, "unknown rule key 'colour' (min_arch, max_arch, require, drop, flags)");
	free(why);
}

static void quad(struct argv *q, const char *glob, const char *key, const char *value, const char *origin)
{
	argv_push(q, glob);
	argv_push(q, key);
	argv_push(q, value);
	argv_push(q, origin);
}

Test(rules, later_sections_win_per_key)
{
	struct argv dir = ARGV_INIT, cfg = ARGV_INIT;
	quad(&dir, "csrc/**/*.cu", "min_arch", "80", "d.ini:2");
	quad(&dir, "csrc/**/*.cu", "drop", "sm_86", "d.ini:3");
	quad(&dir, "other/*.cu", "max_arch", "75", "d.ini:5");
	quad(&cfg, "q*.cu", "min_arch", "90", ".nvshim.ini:2");
	quad(&cfg, "q*.cu", "require", "sm_90a", ".nvshim.ini:3");
	quad(&cfg, "q*.cu", "flags", "-DQ=1 '-DNAME=a b'", ".nvshim.ini:4");
	struct rule_effect e;
	rules_effect_init(&e);
	rules_resolve(&dir, &cfg, "/p/csrc/quant/q1.cu", &e);
	cr_assert(e.matched);
	cr_assert_eq(e.min_arch, 90);
	cr_assert_eq(e.max_arch, 0);
	cr_assert_str_eq(e.origin[0], "[module \"q*.cu\"] at .nvshim.ini:2");
	cr_assert_eq(e.require.n, 1);
	cr_assert_eq(e.flags.n, 2);
	cr_assert_str_eq(e.flags.v[1], "-DNAME=a b");
	struct arch a86 = { ARCH_REAL, 86, 0 }, a80 = { ARCH_REAL, 80, 0 }, c86 = { ARCH_VIRTUAL, 86, 0 };
	cr_assert(rules_drops(&e, &a86));
	cr_assert_not(rules_drops(&e, &a80));
	cr_assert_not(rules_drops(&e, &c86));
	rules_effect_release(&e);
	/* an empty value unsets */
	quad(&cfg, "q1.cu", "min_arch", "", "x:1");
	rules_resolve(&dir, &cfg, "/p/csrc/quant/q1.cu", &e);
	cr_assert_eq(e.min_arch, 0);
	rules_effect_release(&e);
	rules_resolve(&dir, &cfg, "/p/lib/k.cu", &e);
	cr_assert_not(e.matched);
	rules_effect_release(&e);
	argv_release(&dir);
	argv_release(&cfg);
}

Test(rules, a_directory_of_files)
{
	char *dir = test_tmpdir();
	free(test_write(dir, "b.ini", "[module \"b.cu\"]\nmin_arch = 90\n"));
	free(test_write(dir, "a.ini", "; comment\n[module \"a.cu\"]\nmin_arch = 80\nbogus = 1\n[nvshim]\nverbosity = debug\n"));
	free(test_write(dir, "README", "not a rules file\n"));
	struct argv q = ARGV_INIT, problems = ARGV_INIT;
	rules_load_dir(&q, dir, &problems);
	cr_assert_eq(q.n, 8);
	cr_assert_str_eq(q.v[0], "a.cu");
	cr_assert(strstr(q.v[3], "/a.ini:3"));
	cr_assert_str_eq(q.v[4], "b.cu");
	cr_assert_eq(problems.n, 2);
	cr_assert(strstr(problems.v[0], "/a.ini:4: unknown rule key 'bogus'"), "%s", problems.v[0]);
	cr_assert(strstr(problems.v[1], "only [module \"GLOB\"] sections belong in a rules directory"));
	argv_release(&q);
	argv_release(&problems);
	rules_load_dir(&q, "/nonexistent/rules", &problems);
	cr_assert_eq(q.n + problems.n, 0);
	test_rmtree(dir);
	free(dir);
}

/* The shipped rules load without a problem. */
Test(rules, shipped_rules_are_valid)
{
	struct argv q = ARGV_INIT, problems = ARGV_INIT;
	rules_load_dir(&q, NVSHIM_SOURCE_DIR "/config/modules.d", &problems);
	for (size_t i = 0; i < problems.n; i++)
		cr_log_error("%s", problems.v[i]);
	cr_assert_eq(problems.n, 0);
	cr_assert_gt(q.n, 20);
	struct rule_effect e;
	rules_effect_init(&e);
	rules_resolve(&q, NULL, "/src/vllm/csrc/quantization/w8a8/cutlass/c3x/scaled_mm_sm90_fp8.cu", &e);
	cr_assert_eq(e.min_arch, 90);
	cr_assert_str_eq(e.require.v[0], "sm_90a");
	rules_effect_release(&e);
	rules_resolve(&q, NULL, "/src/cutlass/examples/79_blackwell_geforce_gemm/g.cu", &e);
	cr_assert_eq(e.min_arch, 120);
	rules_effect_release(&e);
	argv_release(&q);
	argv_release(&problems);
}
