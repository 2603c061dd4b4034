#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "passes/modules.h"

/* nvcc 13.0's accepted targets, as its --help lists them (a subset). */
static const char *const nvcc13[] = {
	"compute_75", "compute_80", "compute_86", "compute_89", "compute_90", "compute_90a", "compute_100",
	"compute_100a", "compute_100f", "compute_120", "compute_120a", "compute_120f", "sm_75", "sm_80", "sm_86",
	"sm_89", "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_100f", "sm_120", "sm_120a", "sm_120f", NULL
};

static char *dir, *olddir;
static struct config cfg;
static struct toolkit tk;
static struct devices gpus;

static const struct devices *get_gpus(void *arg)
{
	(void)arg;
	return &gpus;
}

static void setup(void)
{
	dir = test_tmpdir();
	olddir = getcwd(NULL, 0);
	cr_assert_eq(chdir(dir), 0);
	config_init(&cfg, NULL);
	free(cfg.cache_dir);
	cfg.cache_dir = concat(dir, "/cache", NULL);
	toolkit_init(&tk);
	tk.version = xstrdup("13.0.88");
	tk.major = 13;
	for (const char *const *n = nvcc13; *n; n++)
		argv_push(&tk.targets, *n);
	devices_init(&gpus);
}

static void teardown(void)
{
	cr_assert_eq(chdir(olddir), 0);
	free(olddir);
	config_release(&cfg);
	toolkit_release(&tk);
	devices_release(&gpus);
	test_rmtree(dir);
	free(dir);
}

TestSuite(modules, .init = setup, .fini = teardown);

struct result {
	char *command; /* the first command's arguments, joined */
	char *notes;   /* " | " between notes */
	struct modules_plan mp;
	int changed;
};

static struct result run(const char *line, const char *env_append)
{
	struct result r;
	struct invocation inv;
	struct plan plan;
	char **v = buildargv(line);
	size_t n = 0;
	while (v && v[n])
		n++;
	test_envv[0][0] = "NVCC_APPEND_FLAGS";
	test_envv[0][1] = env_append;
	invocation_parse(&inv, v, n, env_append ? test_env : NULL);
	plan_init(&plan, "/usr/local/cuda/bin/nvcc", v, n);
	modules_plan_init(&r.mp);
	struct modules_context ctx = { &cfg, &tk, get_gpus, NULL, "/usr/local/cuda/bin/nvcc", NULL, NULL, NULL, NULL, 0 };
	r.changed = modules_pass(&inv, &ctx, &plan, &r.mp);
	struct argv rest = ARGV_INIT;
	argv_pushn(&rest, plan.argv.v + 1, plan.argv.n - 1);
	r.command = argv_to_shell(&rest);
	r.notes = xstrdup("");
	for (size_t i = 0; i < plan.notes.n; i++) {
		char *s = concat(r.notes, i ? " | " : "", plan.notes.v[i], NULL);
		free(r.notes);
		r.notes = s;
	}
	argv_release(&rest);
	plan_release(&plan);
	invocation_release(&inv);
	freeargv(v);
	return r;
}

static void done(struct result *r)
{
	free(r->command);
	free(r->notes);
	modules_plan_release(&r->mp);
}

#define PT "-gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90"

static const char plain[] = "__global__ void k(float *x) { x[0] = 1; }\n";
static const char wgmma[] = "__global__ void k() { asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\"); }\n";
static const char bf16[] = "__global__ void k() { nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, "
			   "__nv_bfloat16, nvcuda::wmma::row_major> f; }\n";

Test(modules, nothing_to_change_leaves_the_command_alone)
{
	free(test_write(dir, "k.cu", plain));
	struct result r = run("-c k.cu -o k.o " PT, NULL);
	cr_assert_not(r.changed);
	cr_assert(r.mp.active);
	cr_assert(r.mp.hold);
	cr_assert_eq(r.mp.ngroups, 1);
	cr_assert_str_eq(r.command, "-c k.cu -o k.o " PT);
	cr_assert_str_eq(r.notes, "");
	cr_assert_eq(strlen(r.mp.src[0].key), 32);
	done(&r);
}

Test(modules, the_scan_drops_and_upgrades)
{
	free(test_write(dir, "w.cu", wgmma));
	struct result r = run("-c w.cu -o w.o " PT, NULL);
	cr_assert(r.changed);
	cr_assert_str_eq(r.command, "-c w.cu -o w.o -gencode=arch=compute_90a,code=sm_90a");
	cr_assert_str_eq(r.notes, "w.cu: dropped sm_75, sm_80: wgmma needs sm_90a (line 1) [modules.scan] | "
				  "w.cu: sm_90 -> sm_90a: wgmma needs sm_90a (line 1) [modules.scan]");
	done(&r);
	/* the single-pass form for a CMake-style list */
	r = run("-c w.cu -o w.o --generate-code=arch=compute_90,code=[compute_90,sm_90]", NULL);
	cr_assert_str_eq(r.command, "-c w.cu -o w.o '-gencode=arch=compute_90a,code=[compute_90a,sm_90a]'");
	done(&r);
	/* -arch=sm_90: the same */
	r = run("-c w.cu -arch=sm_90", NULL);
	cr_assert_str_eq(r.command, "-c w.cu '-gencode=arch=compute_90a,code=[sm_90a,compute_90a]'");
	done(&r);
	cfg.modules_scan = 0;
	r = run("-c w.cu -o w.o " PT, NULL);
	cr_assert_not(r.changed);
	done(&r);
}

Test(modules, a_cached_verdict_decides)
{
	free(test_write(dir, "q.cu", plain));
	struct result r = run("-c q.cu " PT, NULL);
	struct verdict v;
	verdict_init(&v);
	verdict_set(&v, "compute_75:sm_75", 0, "device code does not support exception handling (line 17)",
		    "q.cu(17): error: device code does not support exception handling");
	verdict_set(&v, "compute_80:sm_80", 1, "", "");
	verdict_set(&v, "compute_90:sm_90", 0, "wgmma.fence is not supported on plain sm_90", "ptxas error");
	verdict_set(&v, "compute_90a:sm_90a", 1, "", "");
	cr_assert_eq(verdict_store(&v, cfg.cache_dir, r.mp.src[0].key), 0);
	verdict_release(&v);
	done(&r);
	r = run("-c q.cu " PT, NULL);
	cr_assert_str_eq(r.command, "-c q.cu -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90a,code=sm_90a");
	cr_assert_str_eq(r.notes, "q.cu: dropped sm_75: device code does not support exception handling (line 17) "
				  "[modules.probe] | q.cu: sm_90 -> sm_90a: wgmma.fence is not supported on plain sm_90 "
				  "[modules.probe]");
	done(&r);
	/* a changed source has another key: the verdict does not apply */
	free(test_write(dir, "q.cu", "// edited\n__global__ void k(float *x) { x[0] = 1; }\n"));
	r = run("-c q.cu " PT, NULL);
	cr_assert_not(r.changed);
	done(&r);
	/* other flags, another key */
	free(test_write(dir, "q.cu", plain));
	r = run("-c q.cu -DX=1 " PT, NULL);
	cr_assert_not(r.changed);
	done(&r);
}

Test(modules, never_an_empty_build)
{
	free(test_write(dir, "t.cu", "__global__ void k() { asm volatile(\"tcgen05.fence::before_thread_sync;\"); }\n"));
	struct result r = run("-c t.cu " PT, NULL);
	cr_assert_not(r.changed);
	cr_assert(strstr(r.notes, "t.cu: no requested target is known to build; building them as requested [modules]"));
	struct argv lines = ARGV_INIT;
	int certain = 0;
	struct modules_context ctx = { &cfg, &tk, get_gpus, NULL, "/usr/local/cuda/bin/nvcc", NULL, NULL, NULL, NULL, 0 };
	cr_assert(modules_source_impossible(&r.mp, 0, &ctx, &lines, &certain));
	cr_assert(certain);
	cr_assert_eq(lines.n, 3);
	cr_assert_str_eq(lines.v[0], "sm_75: tcgen05 needs an arch-specific target (sm_100a, ...) (line 1)");
	argv_release(&lines);
	done(&r);
	/* with sm_100 asked for: the family target is enough */
	r = run("-c t.cu -gencode arch=compute_90,code=sm_90 -gencode arch=compute_100,code=sm_100", NULL);
	cr_assert_str_eq(r.command, "-c t.cu -gencode=arch=compute_100f,code=sm_100f");
	done(&r);
}

Test(modules, rules)
{
	free(test_write(dir, "quant_gemm.cu", plain));
	const char *q[][4] = { { "quant_*.cu", "min_arch", "80", "p.ini:2" },
			       { "quant_*.cu", "require", "sm_90a", "p.ini:3" },
			       { "quant_*.cu", "flags", "-DQUANT", "p.ini:4" } };
	for (size_t i = 0; i < 3; i++)
		for (size_t k = 0; k < 4; k++)
			argv_push(&cfg.module_rules, q[i][k]);
	struct result r = run("-c quant_gemm.cu " PT, NULL);
	cr_assert_str_eq(r.command, "-c quant_gemm.cu -gencode=arch=compute_80,code=sm_80 "
				    "-gencode=arch=compute_90a,code=sm_90a -DQUANT");
	cr_assert(strstr(r.notes, "quant_gemm.cu: dropped sm_75: below min_arch = 80 of [module \"quant_*.cu\"] at "
				  "p.ini:2 [modules.rules]"));
	done(&r);
	/* a raised virtual arch keeps the code: compute_75 -> sm_80 is built from compute_80 */
	r = run("-c quant_gemm.cu -gencode arch=compute_75,code=sm_80", NULL);
	cr_assert_str_eq(r.command, "-c quant_gemm.cu -gencode=arch=compute_80,code=sm_80 -DQUANT");
	done(&r);
	cfg.modules_rules = 0;
	r = run("-c quant_gemm.cu " PT, NULL);
	cr_assert_not(r.changed);
	done(&r);
}

Test(modules, sources_with_different_lists_split)
{
	free(test_write(dir, "a.cu", plain));
	free(test_write(dir, "b.cu", bf16));
	free(test_write(dir, "c.cu", plain));
	struct result r = run("-c a.cu b.cu c.cu -O3 " PT, NULL);
	cr_assert(r.changed);
	cr_assert_eq(r.mp.ngroups, 2);
	char *g0 = argv_to_shell(&r.mp.groups[0].argv), *g1 = argv_to_shell(&r.mp.groups[1].argv);
	cr_assert_str_eq(g0, "/usr/local/cuda/bin/nvcc -c a.cu c.cu -O3 " PT);
	cr_assert_str_eq(g1, "/usr/local/cuda/bin/nvcc -c b.cu -O3 -gencode=arch=compute_80,code=sm_80 "
			     "-gencode=arch=compute_90,code=sm_90");
	free(g0);
	free(g1);
	cr_assert_eq(r.mp.link.n, 0);
	done(&r);
	/* equal lists: one command */
	r = run("-c a.cu c.cu " PT, NULL);
	cr_assert_not(r.changed);
	cr_assert_eq(r.mp.ngroups, 1);
	done(&r);
	/* compile and link: objects in a private directory, then the link */
	free(test_write(dir, "main.cpp", "int main() { return 0; }\n"));
	r = run("a.cu b.cu main.cpp -o app -lm " PT, NULL);
	cr_assert_eq(r.mp.ngroups, 2);
	cr_assert_not_null(r.mp.tmpdir);
	char *link = argv_to_shell(&r.mp.link);
	char *want = xasprintf("/usr/local/cuda/bin/nvcc %s/g0/a.o %s/g1/b.o main.cpp -o app -lm " PT, r.mp.tmpdir,
			       r.mp.tmpdir);
	cr_assert_str_eq(link, want);
	g1 = argv_to_shell(&r.mp.groups[1].argv);
	char *want1 = xasprintf("/usr/local/cuda/bin/nvcc b.cu -gencode=arch=compute_80,code=sm_80 "
				"-gencode=arch=compute_90,code=sm_90 -c -odir %s/g1", r.mp.tmpdir);
	cr_assert_str_eq(g1, want1);
	char *tmp = xstrdup(r.mp.tmpdir);
	done(&r);
	cr_assert_neq(access(tmp, F_OK), 0, "the private directory is removed");
	free(tmp);
	free(link);
	free(want);
	free(g1);
	free(want1);
}

Test(modules, options_files_are_written_out_when_they_hold_what_changes)
{
	free(test_write(dir, "b.cu", bf16));
	free(test_write(dir, "flags.rsp", "-I/opt/x\n\"--generate-code=arch=compute_75,code=[compute_75,sm_75]\"\n"
					  "\"--generate-code=arch=compute_80,code=[compute_80,sm_80]\"\n"));
	struct result r = run("-c b.cu -o b.o --options-file flags.rsp", NULL);
	cr_assert_str_eq(r.command, "-c b.cu -o b.o -I/opt/x '-gencode=arch=compute_80,code=[compute_80,sm_80]'");
	done(&r);
}

Test(modules, what_the_pass_leaves_alone)
{
	free(test_write(dir, "k.cu", wgmma));
	free(test_write(dir, "h.cpp", "int f() { return 0; }\n"));
	const char *lines[] = { "-E k.cu " PT, "-M k.cu " PT, "--version", "-c k.cu", "-c k.cu -arch=native",
				"-c k.cu -arch=all", "-c k.cu h.cpp -o x.o " PT, "-c h.cpp " PT,
				"-c CMakeCUDACompilerId.cu " PT };
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct result r = run(lines[i], NULL);
		cr_assert_not(r.changed, "%s", lines[i]);
		cr_assert_not(r.mp.active && r.mp.hold, "%s", lines[i]);
		done(&r);
	}
	/* targets from NVCC_APPEND_FLAGS: nvcc adds them, so nvshim cannot take them away */
	struct result r = run("-c k.cu", "-gencode arch=compute_90,code=sm_90");
	cr_assert_not(r.changed);
	cr_assert_not(r.mp.active);
	done(&r);
	/* --dryrun: lists, but nothing to probe */
	r = run("--dryrun -c k.cu " PT, NULL);
	cr_assert(r.changed);
	cr_assert_not(r.mp.hold);
	done(&r);
	/* disabled */
	cfg.modules = 0;
	r = run("-c k.cu " PT, NULL);
	cr_assert_not(r.mp.active);
	done(&r);
}

Test(modules, installed_gpus_that_lose_their_code_are_named)
{
	const char *why;
	free(test_write(dir, "b.cu", bf16));
	cr_assert_eq(devices_parse(&gpus, "75,90", &why), 0);
	struct result r = run("-c b.cu " PT, NULL);
	cr_assert(strstr(r.notes, "b.cu: no code left for the installed GPU of compute capability 7.5: it cannot "
				  "run this file's kernels [modules]"));
	cr_assert_null(strstr(r.notes, "9.0"));
	done(&r);
}

Test(modules, units_and_candidates)
{
	struct target t = { { ARCH_VIRTUAL, 90, 0 }, { ARCH_VIRTUAL, 90, 0 } }, c[3];
	char *u = modules_unit(&t);
	cr_assert_str_eq(u, "compute_90:sm_90");
	free(u);
	cr_assert_eq(modules_candidates(&t, &tk, c), 1);
	cr_assert_eq(c[0].virt.suffix, 'a');
	cr_assert_eq(c[0].code.kind, ARCH_VIRTUAL);
	struct target s100 = { { ARCH_VIRTUAL, 100, 0 }, { ARCH_REAL, 100, 0 } };
	cr_assert_eq(modules_candidates(&s100, &tk, c), 2);
	cr_assert_eq(c[0].code.suffix, 'f');
	cr_assert_eq(c[1].code.suffix, 'a');
	struct target low = { { ARCH_VIRTUAL, 80, 0 }, { ARCH_REAL, 90, 0 } };
	cr_assert_eq(modules_candidates(&low, &tk, c), 2);
	cr_assert_eq(c[0].virt.num, 90);
	cr_assert_eq(c[0].virt.suffix, 0);
	u = modules_unit(&low);
	cr_assert_str_eq(u, "compute_80:sm_90");
	free(u);
	struct target s80 = { { ARCH_VIRTUAL, 80, 0 }, { ARCH_REAL, 80, 0 } };
	cr_assert_eq(modules_candidates(&s80, &tk, c), 0);
	struct target lto = { { ARCH_VIRTUAL, 90, 0 }, { ARCH_LTO, 90, 0 } };
	cr_assert_null(modules_unit(&lto));
}

Test(modules, verdicts_are_stored_checked_and_go_stale)
{
	char *cache = concat(dir, "/vc", NULL);
	char *src = test_write(dir, "dep.h", "int x;\n");
	const char *key = "0123456789abcdef0123456789abcdef";
	struct verdict v;
	verdict_init(&v);
	cr_assert_neq(verdict_load(&v, cache, key), 0);
	verdict_set(&v, "compute_75:sm_75", 0, "a\treason\nwith lines", "first");
	verdict_set(&v, "compute_80:sm_80", 1, "", "");
	argv_push_owned(&v.deps, verdict_dep(src));
	cr_assert_eq(verdict_store(&v, cache, key), 0);
	verdict_release(&v);
	cr_assert_eq(verdict_load(&v, cache, key), 0);
	cr_assert_eq(v.n, 2);
	cr_assert_str_eq(v.v[0].reason, "a reason with lines");
	cr_assert_not(v.v[0].pass);
	cr_assert(verdict_find(&v, "compute_80:sm_80")->pass);
	cr_assert_null(verdict_find(&v, "compute_90:sm_90"));
	verdict_release(&v);
	/* another key in the same file name: refused */
	char *path = xasprintf("%s/modules/01/%s.verdict", cache, key);
	char *text = test_read(path);
	cr_assert_not_null(text);
	/* damaged: no end line */
	text[strlen(text) - 4] = '\0';
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	cr_assert_neq(verdict_load(&v, cache, key), 0);
	free(text);
	/* stale: a dependency changed */
	verdict_set(&v, "compute_80:sm_80", 1, "", "");
	argv_push_owned(&v.deps, verdict_dep(src));
	verdict_store(&v, cache, key);
	verdict_release(&v);
	free(test_write(dir, "dep.h", "int x, y;\n"));
	cr_assert_neq(verdict_load(&v, cache, key), 0);
	int fd = verdict_lock(cache, key);
	cr_assert_geq(fd, 0);
	verdict_unlock(fd);
	free(path);
	free(src);
	free(cache);
}

Test(modules, hash)
{
	struct hash128 a, b;
	char ha[33], hb[33];
	hash_init(&a);
	hash_update(&a, "hello, world: a string longer than sixteen bytes", 48);
	hash_init(&b);
	hash_update(&b, "hello, wor", 10);
	hash_update(&b, "ld: a string longer than si", 27);
	hash_update(&b, "xteen bytes", 11);
	hash_hex(&a, ha);
	hash_hex(&b, hb);
	cr_assert_str_eq(ha, hb);
	hash_update(&b, "", 0);
	hash_hex(&b, hb);
	cr_assert_str_eq(ha, hb);
	hash_string(&b, "x");
	hash_hex(&b, hb);
	cr_assert_str_neq(ha, hb);
	/* ("ab","c") and ("a","bc") differ */
	hash_init(&a);
	hash_string(&a, "ab");
	hash_string(&a, "c");
	hash_init(&b);
	hash_string(&b, "a");
	hash_string(&b, "bc");
	hash_hex(&a, ha);
	hash_hex(&b, hb);
	cr_assert_str_neq(ha, hb);
}
