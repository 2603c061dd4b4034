#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "objects/elf.h"
#include "passes/stubs.h"

/* Objects made by the machine's nvcc at test time; kernels read with stubs_read() (elf_cuda_images() and
 * elf_cubin_kernels()) and
 * classified by the size rule of stubs.h. */

static char *dir;

static void setup(void) { dir = test_tmpdir(); }
static void teardown(void)
{
	test_rmtree(dir);
	free(dir);
}

TestSuite(stubs, .init = setup, .fini = teardown);

static void sh(const char *cmd)
{
	char *full = concat("cd '", dir, "' && ", cmd, NULL);
	int rc = system(full);
	cr_assert_eq(rc, 0, "failed: %s", cmd);
	free(full);
}

static void read_file(struct stubs *s, const char *name)
{
	char *path = concat(dir, "/", name, NULL), *why = NULL;
	stubs_init(s);
	cr_assert_eq(stubs_read(s, path, &why), 0, "%s: %s", name, why ? why : "");
	free(path);
}

static long row(const struct stubs *s, const char *mangled)
{
	for (size_t k = 0; k < s->nk; k++)
		if (!strcmp(s->kernel[k], mangled))
			return (long)k;
	cr_assert_fail("no kernel %s", mangled);
	return -1;
}

/* Marlin-style: the body only from sm_80 on; an empty kernel; a kernel that prints and traps
 * below sm_80; an assert; tuned code (both real); a tiny kernel. */
static const char source[] =
	"#include <cstdio>\n"
	"#include <cassert>\n"
	"#define BODY(N) float acc = 0.0f; \\\n"
	"  for (int i = threadIdx.x; i < n; i += blockDim.x) \\\n"
	"    _Pragma(\"unroll\") for (int j = 0; j < N; j++) acc += a[i * N + j] * (float)(j + 1) + sqrtf(a[i + j]); \\\n"
	"  c[threadIdx.x] = acc;\n"
	"__global__ void guarded(const float *a, float *c, int n) {\n"
	"#if __CUDA_ARCH__ >= 800\n BODY(32)\n#endif\n}\n"
	"__global__ void printed(const float *a, float *c, int n) {\n"
	"#if __CUDA_ARCH__ >= 800\n BODY(32)\n#else\n printf(\"needs sm_80\\n\"); __trap();\n#endif\n}\n"
	"__global__ void asserted(const float *a, float *c, int n) {\n"
	"#if __CUDA_ARCH__ >= 800\n BODY(32)\n#else\n assert(0 && \"needs sm_80\");\n#endif\n}\n"
	"__global__ void tuned(const float *a, float *c, int n) {\n"
	"#if __CUDA_ARCH__ >= 800\n BODY(32)\n#else\n BODY(4)\n#endif\n}\n"
	"__global__ void empty(float *c) {}\n"
	"__global__ void tiny(float *c) { c[threadIdx.x] *= 2.0f; }\n";

Test(stubs, kernels_of_an_object_by_target)
{
	free(test_write(dir, "k.cu", source));
	sh("'" NVSHIM_TEST_NVCC "' -c k.cu -o k.o -gencode arch=compute_75,code=sm_75 "
	   "-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90a,code=sm_90a");
	struct stubs s;
	read_file(&s, "k.o");
	cr_assert_eq(s.nt, 3);
	cr_assert_eq(s.nk, 6);
	long t75 = stubs_target_index(&s, 75, 0), t80 = stubs_target_index(&s, 80, 0),
	     t90a = stubs_target_index(&s, 90, 'a');
	cr_assert(t75 >= 0 && t80 >= 0 && t90a >= 0, "sm_90a is told from sm_90 by its fatbin entry");
	cr_assert_eq(stubs_target_index(&s, 90, 0), -1);
	long guarded = row(&s, "_Z7guardedPKfPfi"), printed = row(&s, "_Z7printedPKfPfi"),
	     asserted = row(&s, "_Z8assertedPKfPfi"), tuned = row(&s, "_Z5tunedPKfPfi"), empty = row(&s, "_Z5emptyPf"),
	     tiny = row(&s, "_Z4tinyPf");
	/* stubs on sm_75, each with its real body on another target */
	cr_assert_geq(stubs_real_on(&s, (size_t)guarded, (size_t)t75), 0);
	cr_assert_geq(stubs_real_on(&s, (size_t)printed, (size_t)t75), 0);
	cr_assert_geq(stubs_real_on(&s, (size_t)asserted, (size_t)t75), 0);
	/* never a stub: the same kernel where it has its body; tuned code; small everywhere */
	cr_assert_eq(stubs_real_on(&s, (size_t)guarded, (size_t)t80), -1);
	cr_assert_eq(stubs_real_on(&s, (size_t)tuned, (size_t)t75), -1, "tuned code is no stub");
	cr_assert_eq(stubs_real_on(&s, (size_t)empty, (size_t)t75), -1, "empty everywhere");
	cr_assert_eq(stubs_real_on(&s, (size_t)tiny, (size_t)t75), -1, "tiny everywhere");
	cr_assert(stubs_trivial(&s, (size_t)empty, (size_t)t90a));
	cr_assert_not(stubs_trivial(&s, (size_t)guarded, (size_t)t90a));
	stubs_release(&s);
}

Test(stubs, a_cubin_and_a_program)
{
	free(test_write(dir, "k.cu", source));
	free(test_write(dir, "m.cu", "__global__ void k(float *y) { y[threadIdx.x] = 1.0f; }\nint main() { return 0; }\n"));
	sh("'" NVSHIM_TEST_NVCC "' -cubin k.cu -o k.cubin -arch=sm_80 && '" NVSHIM_TEST_NVCC "' m.cu -o m.out -arch=sm_90");
	struct stubs s;
	read_file(&s, "k.cubin");
	cr_assert_eq(s.nt, 1);
	cr_assert_eq(s.t[0].sm, 80);
	cr_assert_eq(s.nk, 6);
	stubs_release(&s);
	read_file(&s, "m.out");
	cr_assert_eq(s.nk, 1);
	cr_assert_str_eq(s.kernel[0], "_Z1kPf");
	stubs_release(&s);
}

/* The size rule on plain data. */
Test(stubs, size_rule)
{
	struct stubs s;
	stubs_init(&s);
	static const struct {
		const char *name;
		unsigned sm;
		unsigned long long code;
		unsigned calls;
		int stub;
	} k[] = {
		{ "stub", 75, 128, 0, 0 },   { "stub", 80, 4096, 0, 0 },   { "print", 75, 384, 1, 0 },
		{ "print", 80, 4096, 1, 0 }, { "nocall", 75, 384, 0, 0 },  { "nocall", 80, 4096, 0, 0 },
		{ "close", 75, 256, 0, 0 },  { "close", 80, 700, 0, 0 },   { "only80", 80, 4096, 0, 0 },
		{ "traps", 75, 900, 0, 1 },  { "traps", 80, 8192, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		struct cuda_kernel c = { k[i].name, 0, 0, 0, 0, k[i].stub, k[i].code, k[i].calls, 0 };
		stubs_add(&s, k[i].sm, 0, &c);
	}
	cr_assert_eq(s.nt, 2);
	cr_assert_eq(s.nk, 6);
	cr_assert_eq(stubs_real_on(&s, 0, 0), 1, "empty on 75, real on 80");
	cr_assert_eq(stubs_real_on(&s, 1, 0), 1, "a print in 384 bytes");
	cr_assert_eq(stubs_real_on(&s, 2, 0), -1, "384 bytes without a call is code");
	cr_assert_eq(stubs_real_on(&s, 3, 0), -1, "700 is not 4 times 256");
	cr_assert_eq(stubs_real_on(&s, 4, 0), -1, "absent on 75");
	cr_assert_eq(stubs_real_on(&s, 5, 0), 1, "900 bytes, but its instructions only trap");
	cr_assert(stubs_real_over(36736, 384));
	/* CUTLASS's sm100 GEMM: 119 traps in 4,848 instructions on plain sm_100, 7 on sm_100a */
	struct cuda_kernel bw = { "bw", 0, 0, 0, 0, 0, 77568, 1, 119 }, ok = { "ok", 0, 0, 0, 0, 0, 36736, 1, 10 };
	stubs_add(&s, 100, 0, &bw);
	stubs_add(&s, 90, 'a', &ok);
	long t100 = stubs_target_index(&s, 100, 0), t90a = stubs_target_index(&s, 90, 'a');
	cr_assert(stubs_trap_paths(&s, s.nk - 2, (size_t)t100), "119 traps in 4,848 instructions");
	cr_assert_not(stubs_trap_paths(&s, s.nk - 1, (size_t)t90a), "10 traps in 2,296 instructions");
	cr_assert(stubs_traps_fewer(7, 119));
	cr_assert_not(stubs_traps_fewer(60, 119));
	cr_assert_not(stubs_traps_fewer(0, 7), "below the minimum");
	cr_assert_not(stubs_real_over(1152, 384));
	cr_assert_not(stubs_real_over(600, 100), "4 times but not 512 bytes more");
	stubs_release(&s);
}

Test(stubs, kernel_names_for_people)
{
	char *n = stubs_kernel_name("_Z7guardedPKfPfi");
	cr_assert_str_eq(n, "guarded(float const*, float*, int)");
	free(n);
	n = stubs_kernel_name("_ZN7cutlass13device_kernelINS_4gemm6kernel13GemmUniversalIN4cute5tupleIJiiiEEEvvvEEEEvNT_6ParamsE");
	cr_assert(!strncmp(n, "cutlass::device_kernel<...>", 27) || strlen(n) <= 60, "%s", n);
	free(n);
	n = stubs_kernel_name("not_mangled");
	cr_assert_str_eq(n, "not_mangled");
	free(n);
}

/* Damaged input: errors, never a read past the data. */
Test(stubs, damaged_objects)
{
	free(test_write(dir, "k.cu", source));
	sh("'" NVSHIM_TEST_NVCC "' -c k.cu -o k.o -arch=sm_80");
	char *path = concat(dir, "/k.o", NULL), *why = NULL;
	struct elf_map m;
	cr_assert_eq(elf_map_file(path, &m, &why), 0);
	for (size_t cut = 0; cut < m.size; cut += 61) {
		unsigned char *copy = xmalloc(cut + 1);
		memcpy(copy, m.data, cut);
		struct stubs s;
		stubs_init(&s);
		char *w = NULL;
		stubs_read_data(&s, copy, cut, &w);
		free(w);
		stubs_release(&s);
		free(copy);
	}
	elf_unmap(&m);
	free(path);
	struct stubs s;
	stubs_init(&s);
	cr_assert_eq(stubs_read(&s, "/nonexistent/k.o", &why), -1);
	cr_assert_not_null(why);
	free(why);
	stubs_release(&s);
}

/* What only the f form compiles, found again in an object. A header guards an int8 MMA atom as
 * CuTe 4.2 does (the a form's macro; for f an assert, a print and a breakpoint), and two kernels:
 * one that never calls the atom, one that does. Both texts come from the machine's nvcc -E. */
static const char own_source[] =
	"#include <cstdio>\n"
	"#include <cassert>\n"
	"__device__ void mma_s8(unsigned *c) {\n"
	"#if defined(__CUDA_ARCH_FEAT_SM100_ALL)\n"
	"  asm volatile(\"tcgen05.fence::before_thread_sync;\\n\");\n  c[0] = 1;\n"
	"#else\n"
	"  assert(0 && \"Attempting to use MMA_S8 without its a-form macro\");\n"
	"  printf(\"Attempting to use MMA_S8 without its a-form macro\"); __brkpt();\n"
	"#endif\n}\n"
	"__global__ void fmha(unsigned *c) { c[threadIdx.x] += 3; }\n"
	"#ifdef CALLS\n__global__ void gemm_s8(unsigned *c) { mma_s8(c); }\n#endif\n";

static char *preprocessed(const char *form, const char *defs)
{
	char *cmd = concat("'" NVSHIM_TEST_NVCC "' -E ", defs, " -gencode arch=compute_", form, ",code=sm_", form,
			   " own.cu -o ", form, ".ii", NULL);
	sh(cmd);
	free(cmd);
	char *path = concat(dir, "/", form, ".ii", NULL);
	char *text = test_read(path);
	free(path);
	return text;
}

Test(stubs, code_only_one_form_compiles)
{
	free(test_write(dir, "own.cu", own_source));
	char *f = preprocessed("100f", ""), *a = preprocessed("100a", "");
	struct argv lits = ARGV_INIT;
	cr_assert_eq(stubs_own_literals(f, a, &lits), 0);
	int message = 0;
	for (size_t k = 0; k < lits.n; k++)
		message |= !strcmp(lits.v[k], "Attempting to use MMA_S8 without its a-form macro");
	cr_assert(message, "the fallback's message is f's own (%zu literals)", lits.n);
	/* the same text: nothing of its own */
	struct argv none = ARGV_INIT;
	cr_assert_eq(stubs_own_literals(f, f, &none), 0);
	cr_assert_eq(none.n, 0);
	/* the atom in no kernel: its message is in no image; called, it is */
	sh("'" NVSHIM_TEST_NVCC "' -c own.cu -o no.o -gencode arch=compute_100f,code=sm_100f");
	sh("'" NVSHIM_TEST_NVCC "' -c own.cu -DCALLS -o yes.o -gencode arch=compute_100f,code=sm_100f");
	char *no = concat(dir, "/no.o", NULL), *yes = concat(dir, "/yes.o", NULL), *why = NULL;
	struct elf_map mn, my;
	cr_assert_eq(elf_map_file(no, &mn, &why), 0);
	cr_assert_eq(elf_map_file(yes, &my, &why), 0);
	cr_assert_eq(stubs_object_has(mn.data, mn.size, 100, 'f', &lits), 0);
	cr_assert_eq(stubs_object_has(my.data, my.size, 100, 'f', &lits), 1);
	cr_assert_eq(stubs_object_has(my.data, my.size, 100, 'a', &lits), 0, "only the images of the target asked for");
	/* an object cut short cannot be read */
	cr_assert_eq(stubs_object_has(my.data, 100, 100, 'f', &lits), -1);
	elf_unmap(&mn);
	elf_unmap(&my);
	free(no);
	free(yes);
	argv_release(&lits);
	free(f);
	free(a);
}

Test(stubs, own_code_found_by_nothing)
{
	/* a trap of f's own with no literal, or only one the other form has too: unknown */
	const char *a = "# 1 \"x.cu\"\nvoid g() {\n  asm(\"tcgen05.fence::before_thread_sync;\");\n}\n"
			"void h() { printf(\"a message both forms have\"); }\n";
	const char *bare = "# 1 \"x.cu\"\nvoid g() {\n  __trap();\n}\nvoid h() { printf(\"a message both forms have\"); }\n";
	const char *shared = "# 1 \"x.cu\"\nvoid g() {\n  printf(\"a message both forms have\"); __brkpt();\n}\n"
			     "void h() { printf(\"a message both forms have\"); }\n";
	const char *quiet = "# 1 \"x.cu\"\nvoid g() {\n  int unused = 2;\n}\nvoid h() { printf(\"a message both forms have\"); }\n";
	struct argv lits = ARGV_INIT;
	cr_assert_eq(stubs_own_literals(bare, a, &lits), -1);
	argv_release(&lits);
	cr_assert_eq(stubs_own_literals(shared, a, &lits), -1);
	argv_release(&lits);
	cr_assert_eq(stubs_own_literals(quiet, a, &lits), 0, "code of its own that does not trap is not asked about");
	cr_assert_eq(lits.n, 0);
	argv_release(&lits);
}
