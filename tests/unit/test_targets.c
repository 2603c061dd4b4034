#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "passes/targets.h"

/* nvcc 13.0's accepted targets, as its --help lists them. */
static const char *const nvcc13[] = {
	"compute_75", "compute_80", "compute_86", "compute_87", "compute_88", "compute_89", "compute_90",
	"compute_90a", "compute_100", "compute_100a", "compute_100f", "compute_103", "compute_110",
	"compute_110a", "compute_120", "compute_121", "sm_75", "sm_80", "sm_86", "sm_87", "sm_88",
	"sm_89", "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_100f", "sm_103", "sm_110", "sm_110a",
	"sm_120", "sm_121", "lto_80", "lto_90", NULL
};

static struct devices gpus;
/* the toolkit's minor version: 13.0 unless a test says otherwise */
static unsigned tk_minor;
/* whether run() keeps the targets.sass_only note */
static int want_sass_only;
static const struct devices *get_gpus(void *arg)
{
	(void)arg;
	return &gpus;
}

struct result {
	int changed;
	char *command; /* the arguments after the pass, joined */
	char *notes;   /* every note, joined with " | " */
};

/* Runs the pass over `line` with nvcc 13.0's facts, GPUs from `devices` and settings. */
static struct result run(const char *line, const char *devices, const char *settings)
{
	struct config cfg;
	struct toolkit tk;
	struct invocation inv;
	struct plan plan;
	struct result r;
	const char *why;

	config_init(&cfg, NULL);
	/* not this machine's driver: a test says which one it means */
	char *w0 = NULL;
	cr_assert_eq(config_set(&cfg, config_item_find("driver_cuda"), "off", LAYER_FLAG, "test", NULL, &w0), 0);
	if (settings) {
		char **kv = buildargv(settings);
		for (char **p = kv; p && *p; p++) {
			char *eq = strchr(*p, '=');
			*eq = '\0';
			char *w = NULL;
			cr_assert_eq(config_set(&cfg, config_item_find(*p), eq + 1, LAYER_FLAG, "test", NULL, &w), 0);
		}
		freeargv(kv);
	}
	toolkit_init(&tk);
	tk.version = xstrdup(tk_minor ? "13.5.37" : "13.0.88");
	tk.major = 13;
	tk.minor = tk_minor;
	for (const char *const *n = nvcc13; *n; n++)
		argv_push(&tk.targets, *n);
	devices_init(&gpus);
	gpus.source = xstrdup("test");
	cr_assert_eq(devices_parse(&gpus, devices ? devices : "", &why), 0);

	char **v = buildargv(line);
	size_t n = 0;
	while (v && v[n])
		n++;
	invocation_parse(&inv, v, n, NULL);
	plan_init(&plan, "nvcc", v, n);
	struct targets_context ctx = { &cfg, &tk, get_gpus, NULL };
	r.changed = targets_pass(&inv, &ctx, &plan, NULL, NULL);
	struct argv rest = ARGV_INIT;
	argv_pushn(&rest, plan.argv.v + 1, plan.argv.n - 1);
	r.command = argv_to_shell(&rest);
	r.notes = xstrdup("");
	for (size_t i = 0; i < plan.notes.n; i++) {
		/* the routine note of every SASS-only list without GPUs: only where a test asks */
		if (!want_sass_only && strstr(plan.notes.v[i], "[targets.sass_only]"))
			continue;
		char *s = concat(r.notes, *r.notes ? " | " : "", plan.notes.v[i], NULL);
		free(r.notes);
		r.notes = s;
	}
	argv_release(&rest);
	freeargv(v);
	plan_release(&plan);
	invocation_release(&inv);
	toolkit_release(&tk);
	devices_release(&gpus);
	config_release(&cfg);
	return r;
}

static void expect(const char *line, const char *devices, const char *settings, const char *command,
		   const char *note)
{
	struct result r = run(line, devices, settings);
	cr_expect_str_eq(r.command, command, "%s\n   got: %s\n  want: %s", line, r.command, command);
	if (note)
		cr_expect(strstr(r.notes, note) != NULL, "%s\n  notes: %s\n   want: %s", line, r.notes, note);
	else
		cr_expect_str_eq(r.notes, "", "%s: unexpected notes: %s", line, r.notes);
	free(r.command);
	free(r.notes);
}

Test(targets, supported_lists_are_left_alone)
{
	expect("-c k.cu -arch=sm_80", NULL, NULL, "-c k.cu -arch=sm_80", NULL);
	expect("-c k.cu -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=[sm_90,compute_90]",
	       NULL, NULL,
	       "-c k.cu -gencode arch=compute_80,code=sm_80 -gencode 'arch=compute_90,code=[sm_90,compute_90]'",
	       NULL);
	/* No target option: nvcc's default is kept. */
	expect("-c k.cu -o k.o", "90", NULL, "-c k.cu -o k.o", NULL);
	/* all and all-major are nvcc's business. */
	expect("-c k.cu -arch=all-major", "90", NULL, "-c k.cu -arch=all-major", NULL);
	/* Never -E, -M, information, or CMake's compiler identification. */
	/* -E and -M: only what nvcc would reject there is rewritten (see below). */
	expect("-E k.cu -arch=sm_80", "90", NULL, "-E k.cu -arch=sm_80", NULL);
	expect("-M k.cu -arch=native", "", "fallback_archs=80", "-M k.cu -arch=native", NULL);
	expect("-E k.cu -arch=sm_50", NULL, "targets_unsupported=false", "-E k.cu -arch=sm_50", NULL);
	expect("--version -arch=sm_50", NULL, NULL, "--version -arch=sm_50", NULL);
	expect("-arch=sm_50 CMakeCUDACompilerId.cu", NULL, NULL, "-arch=sm_50 CMakeCUDACompilerId.cu", NULL);
}

/* nvcc rejects unsupported targets in -E and -M as in a compile, and caches run those before
 * compiling: they get the compile's rewrite, ensure_devices included. */
Test(targets, preprocessing_with_rejected_targets_gets_the_compile_rewrite)
{
	expect("-E k.cu -arch=sm_50", NULL, NULL, "-E k.cu",
	       "dropped sm_50, compute_50: not supported by nvcc 13.0, which builds for no GPU of compute "
	       "capability 5.0: the program will not run on the GPU requested (CUDA 12.9 is the newest toolkit "
	       "that builds for it) [targets.unsupported] | no requested "
	       "target remains and no GPU or fallback_archs is known: nvcc builds for its default "
	       "[targets.unsupported]");
	expect("-M k.cu -gencode arch=compute_70,code=sm_70 -gencode arch=compute_80,code=sm_80", "90",
	       NULL, "-M k.cu -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90",
	       "dropped sm_70: not supported by nvcc 13.0 [targets.unsupported] | added sm_90: no "
	       "requested target runs on the GPU of compute capability 9.0 (test) [targets.ensure_devices]");
}

Test(targets, unsupported_targets_are_dropped_in_place)
{
	/* A CUDA 12 era list; the target options are replaced where the first stood. */
	expect("-c k.cu -gencode arch=compute_50,code=sm_50 -O2 -gencode arch=compute_70,code=sm_70 "
	       "-gencode=arch=compute_80,code=sm_80 --generate-code=arch=compute_90,code=[compute_90,sm_90] -o k.o",
	       NULL, NULL,
	       "-c k.cu -gencode=arch=compute_80,code=sm_80 '-gencode=arch=compute_90,code=[compute_90,sm_90]' -O2 -o k.o",
	       "dropped sm_50, sm_70: not supported by nvcc 13.0 [targets.unsupported]");
	/* A virtual arch below the toolkit's lowest is raised when its code survives. */
	expect("-c k.cu -gencode arch=compute_70,code=sm_80", NULL, NULL,
	       "-c k.cu -gencode=arch=compute_75,code=sm_80", NULL);
	/* Renamed: sm_101 is sm_110 on 13.0. */
	expect("-c k.cu -gencode arch=compute_101,code=sm_101", NULL, NULL,
	       "-c k.cu -gencode=arch=compute_110,code=sm_110", "renamed sm_101 -> sm_110 for nvcc 13.0");
	/* Duplicates go, order stays. */
	expect("-c k.cu -gencode arch=compute_90,code=sm_90 -gencode arch=compute_50,code=sm_50 "
	       "-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90",
	       NULL, NULL, "-c k.cu -gencode=arch=compute_90,code=sm_90 -gencode=arch=compute_80,code=sm_80",
	       "dropped sm_50");
	/* The rule can be turned off. */
	expect("-c k.cu -arch=sm_70", NULL, "targets_unsupported=false", "-c k.cu -arch=sm_70", NULL);
}

Test(targets, nothing_left_means_gpus_then_fallback_then_default)
{
	expect("-c k.cu -arch=sm_70", "90", NULL, "-c k.cu -gencode=arch=compute_90,code=sm_90",
	       "no requested target remains: building for the GPUs (test)");
	expect("-c k.cu -arch=sm_70", NULL, "fallback_archs=80,90",
	       "-c k.cu -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90",
	       "building for fallback_archs = 80,90");
	/* Never an empty list: no target option at all, nvcc's default. */
	expect("-c k.cu -arch=sm_70 -o k.o", NULL, NULL, "-c k.cu -o k.o",
	       "no requested target remains and no GPU or fallback_archs is known: nvcc builds for its default");
}

Test(targets, native)
{
	expect("-c k.cu -arch=native", "90,80", NULL,
	       "-c k.cu -gencode=arch=compute_90,code=sm_90 -gencode=arch=compute_80,code=sm_80",
	       "-arch=native: building for the GPUs found (test) [targets.native]");
	expect("-c k.cu -arch=native", "90,70", NULL, "-c k.cu -gencode=arch=compute_90,code=sm_90",
	       "GPU sm_70 not supported by nvcc 13.0; skipped");
	expect("-c k.cu -arch=native", NULL, "fallback_archs=sm_86", "-c k.cu -gencode=arch=compute_86,code=sm_86",
	       "no GPU found (test); building for fallback_archs = sm_86");
	/* No GPU and no fallback: left to nvcc (with a warning). */
	expect("-c k.cu -arch=native", NULL, NULL, "-c k.cu -arch=native", NULL);
	expect("-c k.cu -arch=native", "90", "targets_native=false", "-c k.cu -arch=native", NULL);
}

Test(targets, arch_specific)
{
	expect("-c k.cu -arch=sm_90a", NULL, NULL, "-c k.cu '-gencode=arch=compute_90a,code=[sm_90a,compute_90a]'",
	       "-arch=sm_90a: one pass for compute_90a, without nvcc's extra plain compute_90 pass [targets.arch_specific]");
	/* Asked for explicitly, the plain pass stays. */
	expect("-c k.cu -arch=sm_90a -gencode arch=compute_90,code=compute_90", NULL, NULL,
	       "-c k.cu -arch=sm_90a -gencode arch=compute_90,code=compute_90", NULL);
	expect("-c k.cu -arch=sm_90a", NULL, "targets_arch_specific=false", "-c k.cu -arch=sm_90a", NULL);
	/* -arch=compute_90a -code=sm_90a has no plain pass to remove. */
	expect("-c k.cu -arch=compute_90a -code=sm_90a", NULL, NULL, "-c k.cu -arch=compute_90a -code=sm_90a", NULL);
}

Test(targets, ensure_devices)
{
	/* Built for sm_80 and sm_86, run on an H100: nothing runs there. */
	expect("-c k.cu -gencode arch=compute_80,code=sm_80 -gencode arch=compute_86,code=sm_86", "90", NULL,
	       "-c k.cu -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_86,code=sm_86 "
	       "-gencode=arch=compute_90,code=sm_90",
	       "added sm_90: no requested target runs on the GPU of compute capability 9.0 (test) [targets.ensure_devices]");
	expect("-c k.cu -gencode arch=compute_80,code=sm_80", "90", "ensure_devices=ptx",
	       "-c k.cu -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=compute_90", "added compute_90");
	expect("-c k.cu -gencode arch=compute_80,code=sm_80", "90", "ensure_devices=off",
	       "-c k.cu -gencode arch=compute_80,code=sm_80", NULL);
	/* PTX of a lower arch, or SASS of the same major, already runs. */
	expect("-c k.cu -arch=sm_80", "90", NULL, "-c k.cu -arch=sm_80", NULL);
	expect("-c k.cu -gencode arch=compute_80,code=sm_80", "86", NULL, "-c k.cu -gencode arch=compute_80,code=sm_80", NULL);
	/* sm_90a runs only on 9.0 exactly. */
	expect("-c k.cu -gencode arch=compute_90a,code=sm_90a", "100", NULL,
	       "-c k.cu -gencode=arch=compute_90a,code=sm_90a -gencode=arch=compute_100,code=sm_100", "added sm_100");
}

Test(targets, when_no_arch_devices)
{
	expect("-c k.cu -o k.o", "90", "when_no_arch=devices", "-c k.cu -o k.o -gencode=arch=compute_90,code=sm_90",
	       "no target given: building for the GPUs (test)");
	expect("-c k.cu -o k.o", NULL, "when_no_arch=devices", "-c k.cu -o k.o", NULL);
}

Test(targets, errors_are_left_to_nvcc)
{
	expect("-c k.cu -arch=sm_80 -code=sm_80", "90", NULL, "-c k.cu -arch=sm_80 -code=sm_80", NULL);
	expect("-c k.cu -gencode arch=compute_90a,code=sm_90", "90", NULL, "-c k.cu -gencode arch=compute_90a,code=sm_90", NULL);
}

Test(targets, run_on)
{
	struct arch_list l;
	arch_list_init(&l);
	struct target t = { { ARCH_VIRTUAL, 80, 0 }, { ARCH_REAL, 80, 0 } };
	arch_list_add(&l, &t);
	cr_assert(targets_run_on(&l, 80));
	cr_assert(targets_run_on(&l, 86));
	cr_assert_not(targets_run_on(&l, 90));
	cr_assert_not(targets_run_on(&l, 75));
	struct target ptx = { { ARCH_VIRTUAL, 80, 0 }, { ARCH_VIRTUAL, 80, 0 } };
	arch_list_add(&l, &ptx);
	cr_assert(targets_run_on(&l, 120));
	arch_list_release(&l);
	struct target fam = { { ARCH_VIRTUAL, 100, 'f' }, { ARCH_REAL, 100, 0 } };
	arch_list_add(&l, &fam);
	cr_assert(targets_run_on(&l, 103));
	cr_assert_not(targets_run_on(&l, 110));
	arch_list_release(&l);
}

/* targets_only: each GPU keeps what it would load; none: its own target; off: as before. */
Test(targets, only)
{
	const char *nine = "-c k.cu -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 "
			   "-gencode arch=compute_90,code=sm_90 -gencode arch=compute_121,code=sm_121";
	expect(nine, NULL, "targets_only=90", "-c k.cu -gencode=arch=compute_90,code=sm_90",
	       "targets_only = 90: this build's code runs only on sm_90; not built: sm_75, sm_80, sm_121 "
	       "[targets.only]");
	/* devices: the machine's GPUs, which then decide alone (ensure_devices not on top) */
	expect(nine, "90,80", "targets_only=devices",
	       "-c k.cu -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_90,code=sm_90",
	       "targets_only = devices (test): this build's code runs only on sm_90, sm_80; not built: "
	       "sm_75, sm_121");
	expect(nine, "", "targets_only=devices fallback_archs=80", "-c k.cu -gencode=arch=compute_80,code=sm_80",
	       "targets_only = devices (fallback_archs)");
	expect(nine, "", "targets_only=devices", nine + 0,
	       "no GPU found (test) and fallback_archs is unset: the requested targets are kept");
	/* the best machine code for the GPU, not every one that runs: sm_80 for 8.6 */
	expect("-c k.cu -gencode arch=compute_80,code=sm_80 -gencode arch=compute_87,code=sm_87", NULL,
	       "targets_only=86", "-c k.cu -gencode=arch=compute_80,code=sm_80", "not built: sm_87");
	/* PTX only where no machine code serves the GPU; LTO-IR counts as machine code */
	expect("-c k.cu -gencode arch=compute_75,code=[sm_75,compute_75] -gencode arch=compute_80,code=sm_80",
	       NULL, "targets_only=90", "-c k.cu -gencode=arch=compute_75,code=compute_75",
	       "not built: sm_75, sm_80");
	expect("-dc k.cu -gencode arch=compute_80,code=[sm_80,compute_80] -gencode arch=compute_90,code=lto_90",
	       NULL, "targets_only=90", "-dc k.cu -gencode=arch=compute_90,code=lto_90",
	       "not built: sm_80, compute_80");
	/* nothing runs on the GPU: its own target; -arch=sm_75's PTX does run on it (JIT) */
	expect("-c k.cu -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80", NULL,
	       "targets_only=90", "-c k.cu -gencode=arch=compute_90,code=sm_90",
	       "no requested target runs on sm_90: building for sm_90 instead; not built: sm_75, sm_80");
	expect("-c k.cu -arch=sm_75", NULL, "targets_only=90", "-c k.cu -gencode=arch=compute_75,code=compute_75",
	       "not built: sm_75 [targets.only]");
	/* a value that names no GPU: a note, the list kept */
	expect("-c k.cu -arch=sm_80", NULL, "targets_only=ninety", "-c k.cu -arch=sm_80",
	       "targets_only = ninety: expected compute capabilities");
	/* -E gets the compile's list */
	expect("-E k.cu -arch=sm_80 -gencode arch=compute_90,code=sm_90", NULL, "targets_only=90",
	       "-E k.cu -gencode=arch=compute_90,code=sm_90", "[targets.only]");
	/* the list already fits: unchanged, nothing said */
	expect("-c k.cu -gencode arch=compute_90,code=sm_90", "90", "targets_only=devices",
	       "-c k.cu -gencode arch=compute_90,code=sm_90", NULL);
}

Test(targets, forward_ptx)
{
	expect("-c k.cu -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90", NULL,
	       "forward_ptx=highest",
	       "-c k.cu -gencode=arch=compute_80,code=sm_80 '-gencode=arch=compute_90,code=[sm_90,compute_90]'",
	       "added compute_90 PTX: GPUs newer than sm_90 can run this build's code");
	/* the highest target's PTX there already, or lower PTX for a lower list: unchanged */
	expect("-c k.cu -arch=sm_90", NULL, "forward_ptx=highest", "-c k.cu -arch=sm_90", NULL);
	expect("-c k.cu -gencode arch=compute_80,code=[sm_80,compute_80] -gencode arch=compute_90,code=sm_90",
	       NULL, "forward_ptx=highest",
	       "-c k.cu '-gencode=arch=compute_80,code=[sm_80,compute_80]' "
	       "'-gencode=arch=compute_90,code=[sm_90,compute_90]'",
	       "added compute_90 PTX");
	/* arch-specific PTX does not run on newer GPUs: the plain form is added */
	expect("-c k.cu -gencode arch=compute_90a,code=[sm_90a,compute_90a]", NULL, "forward_ptx=highest",
	       "-c k.cu '-gencode=arch=compute_90a,code=[sm_90a,compute_90a]' -gencode=arch=compute_90,code=compute_90",
	       "added compute_90 PTX");
	/* one code per mode, and PTX-only lists: left alone */
	expect("-cubin k.cu -arch=sm_90", NULL, "forward_ptx=highest", "-cubin k.cu -arch=sm_90", NULL);
	expect("-c k.cu -arch=compute_80", NULL, "forward_ptx=highest", "-c k.cu -arch=compute_80", NULL);
	expect("-c k.cu -arch=sm_80", NULL, "forward_ptx=off", "-c k.cu -arch=sm_80", NULL);
}

/* targets_only with several GPUs: one the list does not serve gets its own target. */
Test(targets, only_several_gpus)
{
	expect("-c k.cu -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 "
	       "-gencode arch=compute_75,code=sm_75", NULL, "targets_only=90,100",
	       "-c k.cu -gencode=arch=compute_90,code=sm_90 -gencode=arch=compute_100,code=sm_100",
	       "targets_only = 90,100: this build's code runs only on sm_90, sm_100 (sm_100 added: no "
	       "requested target runs on it); not built: sm_80, sm_75 [targets.only]");
	expect("-c k.cu -gencode arch=compute_90,code=sm_90", NULL, "targets_only=90,100",
	       "-c k.cu -gencode=arch=compute_90,code=sm_90 -gencode=arch=compute_100,code=sm_100",
	       "runs only on sm_90, sm_100 (sm_100 added: no requested target runs on it) [targets.only]");
	/* a GPU nvcc 13.0 cannot build for is named */
	expect("-c k.cu -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90", NULL,
	       "targets_only=70,90", "-c k.cu -gencode=arch=compute_90,code=sm_90",
	       "runs only on sm_70, sm_90 (nvcc 13.0 cannot build for sm_70); not built: sm_80");
}

/* -arch=all and all-major hold every GPU's target: targets_only keeps the GPUs'. */
Test(targets, only_all)
{
	expect("-c k.cu -arch=all", NULL, "targets_only=90", "-c k.cu -gencode=arch=compute_90,code=sm_90",
	       "targets_only = 90: -arch=all builds for every GPU; this build's code runs only on sm_90 [targets.only]");
	expect("-c k.cu -arch=all-major", NULL, "targets_only=86", "-c k.cu -gencode=arch=compute_80,code=sm_80",
	       "-arch=all-major builds for every GPU; this build's code runs only on sm_86");
	expect("-c k.cu -arch=all", NULL, NULL, "-c k.cu -arch=all", NULL);
}

Test(targets, ptx_newer_than_the_driver)
{
	tk_minor = 5;
	/* nvcc 13.5's PTX on an H100 whose driver is CUDA 13.0: its machine code is added */
	expect("-c k.cu -gencode arch=compute_90,code=compute_90", "90", "driver_cuda=13.0",
	       "-c k.cu '-gencode=arch=compute_90,code=[compute_90,sm_90]'",
	       "added sm_90: the only code for the GPU of compute capability 9.0 (test) is PTX of nvcc 13.5, "
	       "which its driver (CUDA 13.0: driver_cuda) cannot compile; that driver loads the machine code "
	       "[targets.driver]");
	/* PTX of a lower arch: the same */
	expect("-c k.cu -arch=compute_80", "90", "driver_cuda=13.0",
	       "-c k.cu -gencode=arch=compute_80,code=compute_80 -gencode=arch=compute_90,code=sm_90", "added sm_90");
	/* machine code that runs there already, a driver as new as the toolkit, off, none known */
	expect("-c k.cu -gencode arch=compute_90,code=[sm_90,compute_90]", "90", "driver_cuda=13.0",
	       "-c k.cu -gencode 'arch=compute_90,code=[sm_90,compute_90]'", NULL);
	expect("-c k.cu -arch=compute_90", "90", "driver_cuda=13.5", "-c k.cu -arch=compute_90", NULL);
	expect("-c k.cu -arch=compute_90", "90", "driver_cuda=off", "-c k.cu -arch=compute_90", NULL);
	expect("-c k.cu -arch=compute_90", "", "driver_cuda=13.0", "-c k.cu -arch=compute_90", NULL);
	/* a driver of the previous major version loads neither: said, nothing added */
	expect("-c k.cu -arch=compute_90", "90", "driver_cuda=12.8", "-c k.cu -arch=compute_90",
	       "the program needs a CUDA 13.5 driver there, or a CUDA 12 toolkit [targets.driver]");
	/* -ptx writes one code instance: left as it is */
	expect("-ptx k.cu -arch=compute_90", "90", "driver_cuda=13.0", "-ptx k.cu -arch=compute_90", NULL);
	tk_minor = 0;
}

Test(targets, sass_only_for_unknown_gpus)
{
	want_sass_only = 1;
	expect("-c k.cu -gencode arch=compute_80,code=sm_80", "", NULL, "-c k.cu -gencode arch=compute_80,code=sm_80",
	       "machine code only, and no GPU known to nvshim (test): GPUs sm_75, sm_90, sm_100, sm_103, sm_110, "
	       "sm_120, sm_121 get no kernel image from this build; forward_ptx = highest adds compute_80 PTX for "
	       "those newer than sm_80 (CMake: CMAKE_CUDA_ARCHITECTURES 80; PyTorch: TORCH_CUDA_ARCH_LIST "
	       "\"8.0+PTX\"); NVSHIM_DEVICES names the build's GPUs [targets.sass_only]");
	/* PTX in the list, a GPU known, forward_ptx on: nothing to say */
	expect("-c k.cu -gencode arch=compute_80,code=[sm_80,compute_80]", "", NULL,
	       "-c k.cu -gencode 'arch=compute_80,code=[sm_80,compute_80]'", NULL);
	expect("-c k.cu -gencode arch=compute_80,code=sm_80", "86", NULL, "-c k.cu -gencode arch=compute_80,code=sm_80",
	       NULL);
	expect("-c k.cu -gencode arch=compute_80,code=sm_80", "", "forward_ptx=highest",
	       "-c k.cu '-gencode=arch=compute_80,code=[sm_80,compute_80]'", "[targets.forward_ptx]");
	want_sass_only = 0;
}
