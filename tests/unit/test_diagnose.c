#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "diagnose/diagnose.h"
#include "base/runner.h"

/* Captured from nvcc 13.0.88 (and ptxas 12.9.86, which prints the same shapes). */
static const char ptxas_min[] =
	"ptxas /tmp/tmpxft_000045a6_00000000-6_cpasync.ptx, line 37; error   : Feature 'cp.async' "
	"requires .target sm_80 or higher\n"
	"ptxas /tmp/tmpxft_000045a6_00000000-6_cpasync.ptx, line 41; error   : Feature "
	"'cp.async.wait_all' requires .target sm_80 or higher\n"
	"ptxas fatal   : Ptx assembly aborted due to errors\n";
static const char ptxas_specific[] =
	"ptxas w.ptx, line 21; error   : Instruction 'wgmma.fence' not supported on .target 'sm_90'\n"
	"ptxas fatal   : Ptx assembly aborted due to errors\n";
static const char exception[] =
	"exc.cu(4): error: device code does not support exception handling\n"
	"    throw std::runtime_error(\"needs sm_80\");\n"
	"    ^\n\n1 error detected in the compilation of \"exc.cu\".\n";
static const char hash_error[] = "err.cu:3:2: error: #error \"fp8 kernels need sm_89\"\n"
				 "    3 | #error \"fp8 kernels need sm_89\"\n"
				 "      |  ^~~~~\n";
static const char wmma[] =
	"bf16.cu(5): error: incomplete type \"nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, "
	"16, __nv_bfloat16, nvcuda::wmma::row_major>\" is not allowed\n";
static const char syntax[] = "bad.cu(2): error: expected a \";\"\n"
			     "1 error detected in the compilation of \"bad.cu\".\n";

Test(diagnose, ptxas_feature_gives_the_minimum)
{
	struct diagnosis d;
	diagnose_init(&d);
	cr_assert_eq(diagnose_stderr(&d, ptxas_min), 3);
	const struct diagnose_finding *f = diagnose_find(&d, DIAGNOSE_ARCH_MIN);
	cr_assert_not_null(f);
	cr_assert_eq(f->arch, 80);
	cr_assert_str_eq(f->what, "cp.async");
	cr_assert_eq(d.v[2].kind, DIAGNOSE_ERROR); /* "ptxas fatal" */
	cr_assert(diagnose_arch_related(&d));
	char *r = diagnose_reason(f);
	cr_assert_str_eq(r, "cp.async requires sm_80 or higher");
	free(r);
	diagnose_release(&d);
}

Test(diagnose, ptxas_instruction_needs_an_arch_specific_target)
{
	struct diagnosis d;
	diagnose_init(&d);
	diagnose_stderr(&d, ptxas_specific);
	const struct diagnose_finding *f = diagnose_find(&d, DIAGNOSE_ARCH_SPECIFIC);
	cr_assert_not_null(f);
	cr_assert_eq(f->arch, 90);
	cr_assert_str_eq(f->what, "wgmma.fence");
	diagnose_release(&d);
}

Test(diagnose, front_end_guards_with_file_and_line)
{
	struct diagnosis d;
	diagnose_init(&d);
	diagnose_stderr(&d, exception);
	cr_assert_eq(d.n, 1);
	cr_assert_eq(d.v[0].kind, DIAGNOSE_ARCH_GUARD);
	cr_assert_str_eq(d.v[0].file, "exc.cu");
	cr_assert_eq(d.v[0].line, 4);
	char *r = diagnose_reason(&d.v[0]);
	cr_assert_str_eq(r, "device code does not support exception handling (line 4)");
	free(r);
	diagnose_release(&d);

	diagnose_stderr(&d, hash_error);
	cr_assert_eq(d.n, 1);
	cr_assert_eq(d.v[0].kind, DIAGNOSE_ARCH_GUARD);
	cr_assert_str_eq(d.v[0].file, "err.cu");
	cr_assert_eq(d.v[0].line, 3);
	diagnose_release(&d);

	diagnose_stderr(&d, wmma);
	cr_assert_eq(d.v[0].kind, DIAGNOSE_ARCH_GUARD);
	diagnose_release(&d);
}

Test(diagnose, plain_errors_are_not_arch_related)
{
	struct diagnosis d;
	diagnose_init(&d);
	diagnose_stderr(&d, syntax);
	cr_assert_eq(d.n, 1);
	cr_assert_eq(d.v[0].kind, DIAGNOSE_ERROR);
	cr_assert_str_eq(d.v[0].file, "bad.cu");
	cr_assert_eq(d.v[0].line, 2);
	cr_assert(!diagnose_arch_related(&d));
	diagnose_release(&d);
	cr_assert_eq(diagnose_stderr(&d, ""), 0);
	cr_assert_eq(diagnose_stderr(&d, "no newline at the end"), 0);
	diagnose_release(&d);
}

/* The machine's nvcc, live: what it prints for a source built below its minimum. argv[0] is
 * the full path: nvcc finds its nvcc.profile (and so cicc) from argv[0], searching PATH when it
 * has no slash, and the toolkit need not be on PATH. */
Test(diagnose, real_nvcc_messages)
{
	char *dir = test_tmpdir();
	char *src = test_write(dir, "k.cu",
			       "__global__ void k(float *d, const float *s) {\n"
			       "  __shared__ float b[32];\n"
			       "  unsigned a = (unsigned)__cvta_generic_to_shared(b + threadIdx.x);\n"
			       "  asm volatile(\"cp.async.ca.shared.global [%0], [%1], 4;\" :: \"r\"(a), "
			       "\"l\"(s));\n"
			       "  asm volatile(\"cp.async.wait_all;\" ::);\n"
			       "  d[0] = b[0];\n}\n");
	struct argv a = ARGV_INIT;
	argv_pushv(&a, (const char *const[]){ NVSHIM_TEST_NVCC, "-c", src, "-o", "/dev/null", "-gencode",
					      "arch=compute_75,code=sm_75", NULL });
	struct run_result res;
	char *held = NULL;
	cr_assert_eq(runner_run_held(NVSHIM_TEST_NVCC, &a, &res, &held), 0);
	cr_assert_neq(res.status, 0);
	struct diagnosis d;
	diagnose_init(&d);
	diagnose_stderr(&d, held);
	const struct diagnose_finding *f = diagnose_find(&d, DIAGNOSE_ARCH_MIN);
	cr_assert_not_null(f, "%s", held);
	cr_assert_eq(f->arch, 80);
	diagnose_release(&d);
	free(held);
	argv_release(&a);
	free(src);
	free(dir);
}

/* The cases of a captured file (tests/unit/data/NAME.txt): "## HEAD" lines, each followed by the
 * stderr of that case. Calls fn(head, stderr) for each. */
static void each_case(const char *name, void (*fn)(const char *head, const char *err))
{
	char *path = concat(NVSHIM_SOURCE_DIR, "/tests/unit/data/", name, NULL);
	char *text = test_read(path);
	cr_assert_not_null(text, "%s", path);
	int cases = 0;
	char *head = NULL, *body = NULL;
	size_t len = 0;
	FILE *m = NULL;
	for (char *line = text; *line;) {
		char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line + 1) : strlen(line);
		if (!strncmp(line, "## ", 3)) {
			if (head) {
				fclose(m);
				fn(head, body);
				cases++;
				free(head);
				free(body);
			}
			head = xstrndup(line + 3, n - 3 - (nl != NULL));
			body = NULL;
			len = 0;
			m = open_memstream(&body, &len);
		} else if (head) {
			fwrite(line, 1, n, m);
		}
		line += n;
	}
	if (head) {
		fclose(m);
		fn(head, body);
		cases++;
		free(head);
		free(body);
	}
	cr_assert_gt(cases, 4, "%s: only %d cases", name, cases);
	free(text);
	free(path);
}

static int starts(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

static int signal_number(const char *name)
{
	static const char *const names[] = { "SEGV", "KILL", "ABRT", "BUS", "TERM" };
	static const int nums[] = { 11, 9, 6, 7, 15 };
	for (int i = 0; i < 5; i++)
		if (!strcmp(name, names[i]))
			return nums[i];
	cr_assert_fail("unknown signal %s", name);
	return 0;
}

/* "## SHELL STAGE SIG[ core] status=N": with bash as /bin/sh nvcc names the stage; with dash
 * only the shell names the signal, and nvcc's exit status is 128+N. */
static void check_crash(const char *head, const char *err)
{
	char shell[8], stage[16], sig[8];
	int status = -1;
	cr_assert_eq(sscanf(head, "%7s %15s %7s", shell, stage, sig), 3, "%s", head);
	const char *st = strstr(head, "status=");
	cr_assert_not_null(st);
	status = atoi(st + 7);
	int core = strstr(head, " core ") != NULL;
	int n = signal_number(sig);
	struct diagnosis d;
	diagnose_init(&d);
	diagnose_stderr(&d, err);
	cr_assert_eq(d.n, 1, "%s: %zu findings in:\n%s", head, d.n, err);
	const struct diagnose_finding *f = &d.v[0];
	cr_assert_eq(f->kind, DIAGNOSE_CRASH, "%s", head);
	cr_assert_eq(f->signal, n, "%s", head);
	cr_assert_eq(f->core, core, "%s", head);
	if (!strcmp(shell, "bash")) {
		cr_assert_not_null(f->what, "%s", head);
		cr_assert_str_eq(f->what, stage, "%s", head);
	} else {
		cr_assert_null(f->what, "%s", head);
		cr_assert_eq(status, 128 + n, "%s", head);
	}
	cr_assert(!diagnose_arch_related(&d));
	diagnose_release(&d);
}

Test(diagnose, crash_messages_of_nvcc_13_0) { each_case("nvcc-13.0-crash.txt", check_crash); }
Test(diagnose, crash_messages_of_nvcc_12_4) { each_case("nvcc-12.4-crash.txt", check_crash); }
Test(diagnose, crash_messages_of_nvcc_11_8) { each_case("nvcc-11.8-crash.txt", check_crash); }

Test(diagnose, crash_reason_and_signal_names)
{
	struct diagnosis d;
	diagnose_init(&d);
	diagnose_stderr(&d, "nvcc error   : '\"$CICC_PATH/cicc\"' died due to signal 11 (Invalid memory "
			    "reference)\nnvcc error   : '\"$CICC_PATH/cicc\"' core dumped\n");
	cr_assert_eq(d.n, 1);
	char *r = diagnose_reason(&d.v[0]);
	cr_assert_str_eq(r, "'cicc' died of signal 11 (Segmentation fault), core dumped");
	free(r);
	diagnose_release(&d);
	diagnose_stderr(&d, "Killed\n");
	r = diagnose_reason(&d.v[0]);
	cr_assert_str_eq(r, "a stage died of signal 9 (Killed)");
	free(r);
	diagnose_release(&d);
	/* Not a line of its own: not a shell's report. */
	cr_assert_eq(diagnose_stderr(&d, "k.cu(3): warning: Killed is a word\n"), 0);
	cr_assert_str_eq(diagnose_signal_name(11), "Segmentation fault");
	cr_assert_null(diagnose_signal_name(0));
	cr_assert(diagnose_signal_flaky(9) && diagnose_signal_flaky(15));
	cr_assert(!diagnose_signal_flaky(11) && !diagnose_signal_flaky(6));
	diagnose_release(&d);
}

/* "## KIND TARGET: COMMAND status=N": the resource each case asks too much of. */
static void check_resource(const char *head, const char *err)
{
	char kind[16];
	cr_assert_eq(sscanf(head, "%15[a-z]", kind), 1);
	int status = atoi(strstr(head, "status=") + 7);
	struct diagnosis d;
	diagnose_init(&d);
	diagnose_stderr(&d, err);
	const struct diagnose_finding *f = diagnose_find(&d, DIAGNOSE_RESOURCE);
	if (status == 0 || strstr(err, "is not defined for option")) {
		/* ptxas 12.4 builds 0xc080 bytes of static shared memory; 13.0 has no sm_70. */
		cr_assert_null(f, "%s", head);
		diagnose_release(&d);
		return;
	}
	cr_assert_not_null(f, "%s:\n%s", head, err);
	cr_assert_str_eq(diagnose_resource_name(f->resource), kind, "%s", head);
	switch (f->resource) {
	case RESOURCE_SHARED:
		cr_assert_str_eq(f->kernel, "_Z2mmPf");
		cr_assert_eq(f->value, 0xc080);
		cr_assert_eq(f->limit, 0xc000);
		break;
	case RESOURCE_CONSTANT:
		cr_assert_null(f->kernel);
		cr_assert_eq(f->value, 0x13880);
		cr_assert_eq(f->limit, 0x10000);
		break;
	case RESOURCE_PARAM:
		cr_assert_str_eq(f->kernel, "_Z9big_param3BigPf");
		/* ptxas counts the PTX's 40000 + 8 bytes, cicc the C++ parameters: the same 40008. */
		cr_assert_eq(f->value, 40008);
		cr_assert(f->limit == 0x7ffc || f->limit == 0x1100, "%s: %llu", head, f->limit);
		break;
	case RESOURCE_REGISTERS:
		cr_assert_eq(f->limit, 64);
		/* C7602 names the kernel and what it needs; C7600 (12.4) only the limit. */
		if (strstr(err, "C7602")) {
			cr_assert_str_eq(f->kernel, "_Z2wgPfyy");
			cr_assert_eq(f->value, 154);
		}
		break;
	default:
		cr_assert_fail("%s", head);
	}
	cr_assert(!diagnose_arch_related(&d));
	char *note = diagnose_explain_resource(f, "sm_80");
	cr_assert_not_null(note);
	cr_assert_null(strchr(note, '\n'));
	free(note);
	diagnose_release(&d);
}

Test(diagnose, resource_messages_of_ptxas_13_0) { each_case("ptxas-13.0-resource.txt", check_resource); }
Test(diagnose, resource_messages_of_ptxas_12_9) { each_case("ptxas-12.9-resource.txt", check_resource); }
Test(diagnose, resource_messages_of_ptxas_12_4) { each_case("ptxas-12.4-resource.txt", check_resource); }
Test(diagnose, resource_messages_of_ptxas_11_8) { each_case("ptxas-11.8-resource.txt", check_resource); }
Test(diagnose, resource_messages_of_nvcc_13_0) { each_case("nvcc-13.0-resource.txt", check_resource); }

Test(diagnose, cicc_parameter_error_names_file_and_line)
{
	struct diagnosis d;
	diagnose_init(&d);
	diagnose_stderr(&d, "param.cu(2): Error: Formal parameter space overflowed (40008 bytes required, "
			    "max 32764 bytes allowed) in function _Z9big_param3BigPf\n\n");
	cr_assert_eq(d.n, 1);
	cr_assert_str_eq(d.v[0].file, "param.cu");
	cr_assert_eq(d.v[0].line, 2);
	diagnose_release(&d);
}

/* FACTS.md: NVRTC's and the driver JIT linker's logs, and ptxas's message templates that no
 * kernel of capture-resource.sh triggers (local data, the "+ system" and "bank" forms). */
Test(diagnose, resource_shapes_without_a_capture)
{
	static const struct {
		const char *line;
		enum diagnose_resource r;
		const char *kernel;
		unsigned long long value, limit, system;
	} cases[] = {
		{ "ptxas error   : Entry function 'mm' uses too much shared data (0xc080 bytes, 0xc000 max)",
		  RESOURCE_SHARED, "mm", 0xc080, 0xc000, 0 },
		{ "error   : Entry function 'mm' uses too much shared data (0xc080 bytes, 0xc000 max)",
		  RESOURCE_SHARED, "mm", 0xc080, 0xc000, 0 },
		{ "ptxas error   : Entry function '_Z1kv' uses too much shared data (0xe000 bytes + 0x400 "
		  "bytes system, 0xe000 max)",
		  RESOURCE_SHARED, "_Z1kv", 0xe000, 0xe000, 0x400 },
		{ "ptxas error   : Entry function '_Z1kv' uses too much local data (0x100000 bytes, 0x80000 max)",
		  RESOURCE_LOCAL, "_Z1kv", 0x100000, 0x80000, 0 },
		{ "ptxas error   : Entry function '_Z1kv' uses too much local data (0x80000 bytes + 0x400 bytes "
		  "system, 0x80000 max)",
		  RESOURCE_LOCAL, "_Z1kv", 0x80000, 0x80000, 0x400 },
		{ "ptxas error   : Entry function '_Z1kv' uses too much constant data (bank 3, 0x10004 bytes, "
		  "0x10000 max)",
		  RESOURCE_CONSTANT, "_Z1kv", 0x10004, 0x10000, 0 },
		{ "ptxas fatal   : Function _Z1kv size requires more registers(300) than available(255)",
		  RESOURCE_REGISTERS, "_Z1kv", 300, 255, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct diagnosis d;
		diagnose_init(&d);
		cr_assert_eq(diagnose_stderr(&d, cases[i].line), 1, "%s", cases[i].line);
		const struct diagnose_finding *f = &d.v[0];
		cr_assert_eq(f->kind, DIAGNOSE_RESOURCE, "%s", cases[i].line);
		cr_assert_eq(f->resource, cases[i].r, "%s", cases[i].line);
		cr_assert_str_eq(f->kernel, cases[i].kernel);
		cr_assert_eq(f->value, cases[i].value, "%s", cases[i].line);
		cr_assert_eq(f->limit, cases[i].limit, "%s", cases[i].line);
		cr_assert_eq(f->system, cases[i].system, "%s", cases[i].line);
		diagnose_release(&d);
	}
}

Test(diagnose, shared_memory_explained)
{
	struct diagnosis d;
	diagnose_init(&d);
	diagnose_stderr(&d, "ptxas error   : Entry function '_Z2mmPf' uses too much shared data (0xc080 "
			    "bytes, 0xc000 max)\n");
	char *n = diagnose_explain_resource(&d.v[0], "sm_80");
	cr_assert_str_eq(n, "kernel mm(float*) (_Z2mmPf) uses 49280 bytes of static shared memory on "
			    "sm_80, more than the 49152 bytes (48 KiB) a kernel may declare statically: "
			    "declare the buffer `extern __shared__` and give its size at launch "
			    "(<<<grid, block, 49280>>>) after allowing it once with cudaFuncSetAttribute(mm, "
			    "cudaFuncAttributeMaxDynamicSharedMemorySize, 49280) (sm_80 allows up to "
			    "166912 bytes, 163 KiB, per block), or use smaller tiles");
	free(n);
	/* More than even the opt-in allows. */
	d.v[0].value = 200 * 1024;
	n = diagnose_explain_resource(&d.v[0], "sm_86");
	cr_assert(strstr(n, "even so sm_86 allows at most 101376 bytes (99 KiB) per block, so use "
			    "smaller tiles"), "%s", n);
	free(n);
	/* No target: a range. An extern "C" kernel (NVRTC) is not mangled. */
	free(d.v[0].kernel);
	d.v[0].kernel = xstrdup("mm");
	n = diagnose_explain_resource(&d.v[0], NULL);
	cr_assert(starts(n, "kernel mm uses 204800 bytes (200 KiB) of static shared memory, more than"), "%s", n);
	cr_assert(strstr(n, "cudaFuncSetAttribute(mm, ") && strstr(n, "64 to 227 KiB"), "%s", n);
	free(n);
	diagnose_release(&d);
}

Test(diagnose, other_resources_explained)
{
	struct diagnosis d;
	diagnose_init(&d);
	diagnose_stderr(&d, "ptxas fatal   : (C7602) Insufficient registers (64) to compile instruction "
			    "at line 141 in function _Z2wgPfyy. Try to compile with register target of "
			    "154 or higher.\n");
	char *n = diagnose_explain_resource(&d.v[0], "sm_90a");
	cr_assert(starts(n, "kernel wg(float*, unsigned long long, unsigned long long) (_Z2wgPfyy) "
			    "needs at least 154 registers per thread on sm_90a, but is held to 64: "
			    "raise or drop -maxrregcount"), "%s", n);
	cr_assert(strstr(n, "__launch_bounds__"), "%s", n);
	free(n);
	diagnose_release(&d);

	diagnose_stderr(&d, "ptxas error   : File uses too much global constant data (0x13880 bytes, "
			    "0x10000 max)\n");
	n = diagnose_explain_resource(&d.v[0], NULL);
	cr_assert(starts(n, "the file's __constant__ data takes 80000 bytes of constant memory, more "
			    "than the 65536 bytes (64 KiB) there is: keep large tables in global memory"),
		  "%s", n);
	free(n);
	diagnose_release(&d);

	diagnose_stderr(&d, "ptxas param.ptx, line 13; error   : Entry function '_Z9big_param3BigPf' uses "
			    "too much parameter space (0x9c48 bytes, 0x1100 max).\n");
	n = diagnose_explain_resource(&d.v[0], "sm_80");
	cr_assert(strstr(n, "kernel big_param(Big, float*) (_Z9big_param3BigPf) takes 40008 bytes of "
			    "parameters on sm_80, more than the 4352 bytes allowed: pass large structs"), "%s", n);
	cr_assert(strstr(n, "CUDA 12.1 and newer allow 32764 bytes"), "%s", n);
	free(n);
	cr_assert_null(diagnose_explain_resource(diagnose_find(&d, DIAGNOSE_ERROR), NULL));
	diagnose_release(&d);
}

/* Captured from nvcc 13.0.88 building for sm_80. */
Test(diagnose, clusters_below_sm_90)
{
	static const char dims[] = "cl.cu(1): error: __cluster_dims__ is not supported for this GPU architecture\n";
	static const char cg[] = "tc.cu(3): error: namespace \"cooperative_groups\" has no member \"this_cluster\"\n";
	struct diagnosis d;
	diagnose_init(&d);
	diagnose_stderr(&d, dims);
	diagnose_stderr(&d, cg);
	cr_assert_eq(d.n, 2);
	cr_assert_eq(d.v[0].kind, DIAGNOSE_ARCH_GUARD);
	cr_assert_eq(d.v[1].kind, DIAGNOSE_ARCH_GUARD);
	cr_assert_eq(d.v[1].line, 3);
	diagnose_release(&d);
}

/* The notes the preload library and nvcc mode share: one per kernel and resource. */
Test(diagnose, resource_notes_once_each)
{
	const char *log = "ptxas error   : Entry function 'mm' uses too much shared data (0xc080 bytes, 0xc000 max)\n"
			  "ptxas error   : Entry function 'mm' uses too much shared data (0xc080 bytes, 0xc000 max)\n"
			  "ptxas error   : Entry function 'mm' uses too much parameter space (0x1100 bytes, 0x1000 max).\n"
			  "ptxas error   : Entry function 'k2' uses too much shared data (0xd000 bytes, 0xc000 max)\n"
			  "error: something else\n";
	struct diagnosis d;
	diagnose_init(&d);
	diagnose_stderr(&d, log);
	struct argv notes = ARGV_INIT;
	cr_assert_eq(diagnose_resource_notes(&d, "sm_80", &notes), 3);
	cr_assert_eq(notes.n, 3);
	cr_assert(strstr(notes.v[0], "kernel mm uses 49280 bytes of static shared memory on sm_80"), "%s", notes.v[0]);
	cr_assert(strstr(notes.v[0], "[resource.shared]"), "%s", notes.v[0]);
	cr_assert(strstr(notes.v[1], "[resource.parameter]"), "%s", notes.v[1]);
	cr_assert(strstr(notes.v[2], "kernel k2 uses 53248 bytes (52 KiB)"), "%s", notes.v[2]);
	argv_release(&notes);
	diagnose_release(&d);
	diagnose_init(&d);
	diagnose_stderr(&d, "error: nothing about resources\n");
	cr_assert_eq(diagnose_resource_notes(&d, NULL, &notes), 0);
	cr_assert_eq(notes.n, 0);
	diagnose_release(&d);
}
