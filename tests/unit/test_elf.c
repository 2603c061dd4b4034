#include <criterion/criterion.h>

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "objects/elf.h"

/* Objects, shared objects and archives are made by the machine's gcc, nvcc and ar at test
 * time, then read, whole, truncated and damaged. */

static char *dir;

static void setup(void) { dir = test_tmpdir(); }
static void teardown(void)
{
	test_rmtree(dir);
	free(dir);
}

static void sh(const char *cmd)
{
	char *full = concat("cd '", dir, "' && ", cmd, NULL);
	int rc = system(full);
	cr_assert_eq(rc, 0, "failed: %s", cmd);
	free(full);
}

struct syms {
	char text[16384]; /* "+name" defined, "-name" undefined, "~name" weak undefined; sorted */
	size_t len;
};

static void collect(const char *name, int defined, int weak, void *arg)
{
	struct syms *s = arg;
	int n = snprintf(s->text + s->len, sizeof(s->text) - s->len, "%c%s ",
			 defined ? '+' : weak ? '~' : '-', name);
	if (n > 0 && (size_t)n < sizeof(s->text) - s->len)
		s->len += (size_t)n;
}

static int has(const struct syms *s, const char *entry)
{
	char *needle = concat(entry, " ", NULL);
	int found = strstr(s->text, needle) != NULL;
	free(needle);
	return found;
}

/* A reader run on a copy of exactly `size` bytes (so that the sanitizers see any read past
 * it), its result `out` cleared first. */
static int read_exact(const unsigned char *data, size_t size, int (*read)(const void *, size_t, void *, char **),
		      void *out, size_t out_size, char **why)
{
	unsigned char *copy = xmalloc(size ? size : 1);
	memcpy(copy, data, size);
	memset(out, 0, out_size);
	int rc = read(copy, size, out, why);
	free(copy);
	return rc;
}

static int symbols_into(const void *data, size_t size, void *s, char **why)
{
	return elf_symbols(data, size, collect, s, why);
}

/* Reads the symbols of a file. Returns elf_symbols' result. */
static int read_syms(const unsigned char *data, size_t size, struct syms *s, char **why)
{
	return read_exact(data, size, symbols_into, s, sizeof(*s), why);
}

static struct elf_map map(const char *name)
{
	struct elf_map m;
	char *why = NULL;
	char *path = concat(dir, "/", name, NULL);
	cr_assert_eq(elf_map_file(path, &m, &why), 0, "%s: %s", path, why);
	free(path);
	return m;
}

static const char c_source[] =
	"int cuInit(unsigned);\n"
	"extern int cuWeakOne(void) __attribute__((weak));\n"
	"int shared_counter = 3;\n"
	"static int hidden(void) { return 1; }\n"
	"int uses_driver(void) { return cuInit(0) + hidden() + (cuWeakOne ? cuWeakOne() : 0); }\n";

TestSuite(elf, .init = setup, .fini = teardown);

Test(elf, object_made_by_gcc)
{
	free(test_write(dir, "a.c", c_source));
	sh("cc -c -fPIC a.c -o a.o");
	struct elf_map m = map("a.o");
	struct syms s;
	char *why = NULL;
	cr_assert_eq(elf_identify(m.data, m.size), ELF_KIND_OBJECT);
	cr_assert_eq(read_syms(m.data, m.size, &s, &why), 0, "%s", why);
	cr_assert(has(&s, "+uses_driver"), "%s", s.text);
	cr_assert(has(&s, "+shared_counter"), "%s", s.text);
	cr_assert(has(&s, "-cuInit"), "%s", s.text);
	cr_assert(has(&s, "~cuWeakOne"), "%s", s.text);
	cr_assert_null(strstr(s.text, "hidden"), "local symbols are not reported: %s", s.text);
	elf_unmap(&m);
}

Test(elf, object_made_by_nvcc)
{
	free(test_write(dir, "k.cu",
			"#include <cuda.h>\n"
			"__global__ void scale(float *x) { x[threadIdx.x] *= 2; }\n"
			"int encode(CUtensorMap *m, void *g) {\n"
			"  cuuint64_t d[1] = {64}; cuuint64_t s[1] = {256}; cuuint32_t b[1] = {8}, e[1] = {1};\n"
			"  return cuTensorMapEncodeTiled(m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 1, g, d, s, b, e,\n"
			"    CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,\n"
			"    CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE); }\n"));
	sh("'" NVSHIM_TEST_NVCC "' -c -Xcompiler -fPIC k.cu -o k.o");
	struct elf_map m = map("k.o");
	struct syms s;
	char *why = NULL;
	cr_assert_eq(read_syms(m.data, m.size, &s, &why), 0, "%s", why);
	cr_assert(has(&s, "-cuTensorMapEncodeTiled"), "%s", s.text);
	cr_assert(has(&s, "+_Z6encodeP14CUtensorMap_stPv"), "%s", s.text);
	cr_assert(has(&s, "-__cudaRegisterFatBinary"), "%s", s.text);
	elf_unmap(&m);
}

Test(elf, shared_objects_dynamic_symbols)
{
	free(test_write(dir, "a.c", c_source));
	sh("cc -shared -fPIC a.c -o liba.so");
	struct elf_map m = map("liba.so");
	struct syms s;
	char *why = NULL;
	cr_assert_eq(elf_identify(m.data, m.size), ELF_KIND_SHARED);
	cr_assert_eq(read_syms(m.data, m.size, &s, &why), 0, "%s", why);
	cr_assert(has(&s, "+uses_driver"), "%s", s.text);
	cr_assert(has(&s, "-cuInit"), "%s", s.text);
	elf_unmap(&m);

	/* The toolkit's stub of the driver defines the driver API. */
	struct elf_map stub;
	const char *stub_path = NVSHIM_CUDA_STUBS "/libcuda.so";
	if (elf_map_file(stub_path, &stub, &why)) {
		free(why);
		cr_skip_test("no %s", stub_path);
	}
	cr_assert_eq(read_syms(stub.data, stub.size, &s, &why), 0, "%s", why);
	cr_assert(has(&s, "+cuTensorMapEncodeTiled"));
	cr_assert(has(&s, "+cuGetProcAddress_v2"));
	elf_unmap(&stub);
}

struct members {
	char names[1024];
	size_t count;
	int thin;
};

static int each_member(const struct ar_member *m, void *arg)
{
	struct members *ms = arg;
	strcat(ms->names, m->name);
	strcat(ms->names, " ");
	ms->count++;
	if (!m->data)
		ms->thin = 1;
	return 0;
}

Test(elf, archives_index_and_members)
{
	free(test_write(dir, "a.c", c_source));
	free(test_write(dir, "b.c", "int from_b(void) { return 2; }\n"));
	free(test_write(dir, "c.c", "int only_in_c(void) { return 3; }\n"));
	sh("cc -c a.c -o a.o && cc -c b.c -o b.o && cc -c c.c -o a_member_with_a_long_name.o && "
	   "ar rcs lib.a a.o b.o a_member_with_a_long_name.o");
	struct elf_map m = map("lib.a");
	char *why = NULL;
	cr_assert_eq(elf_identify(m.data, m.size), ELF_KIND_ARCHIVE);
	struct ar_symbol *syms;
	size_t n;
	cr_assert_eq(ar_index(m.data, m.size, &syms, &n, &why), 0, "%s", why);
	cr_assert_eq(n, 4, "index of %zu symbols", n); /* shared_counter, uses_driver, from_b, only_in_c */
	int seen = 0;
	for (size_t i = 0; i < n; i++) {
		struct ar_member mem;
		cr_assert_eq(ar_member_at(m.data, m.size, syms[i].member, &mem, &why), 0, "%s", why);
		if (!strcmp(syms[i].name, "from_b")) {
			cr_assert_str_eq(mem.name, "b.o");
			seen++;
		}
		if (!strcmp(syms[i].name, "only_in_c")) {
			cr_assert_str_eq(mem.name, "a_member_with_a_long_name.o");
			struct syms s;
			cr_assert_eq(read_syms(mem.data, mem.size, &s, &why), 0, "%s", why);
			cr_assert(has(&s, "+only_in_c"), "%s", s.text);
			seen++;
		}
	}
	cr_assert_eq(seen, 2);
	free(syms);
	struct members ms = { "", 0, 0 };
	cr_assert_eq(ar_members(m.data, m.size, each_member, &ms, &why), 0, "%s", why);
	cr_assert_str_eq(ms.names, "a.o b.o a_member_with_a_long_name.o ");
	elf_unmap(&m);
}

Test(elf, archive_without_index_and_thin_archive)
{
	free(test_write(dir, "b.c", "int from_b(void) { return 2; }\n"));
	sh("cc -c b.c -o b.o && ar rcS noindex.a b.o && ar rcsT thin.a b.o");
	struct elf_map m = map("noindex.a");
	char *why = NULL;
	struct ar_symbol *syms;
	size_t n;
	cr_assert_eq(ar_index(m.data, m.size, &syms, &n, &why), 0, "%s", why);
	cr_assert_eq(n, 0);
	free(syms);
	elf_unmap(&m);

	m = map("thin.a");
	cr_assert_eq(elf_identify(m.data, m.size), ELF_KIND_THIN_ARCHIVE);
	cr_assert_eq(ar_index(m.data, m.size, &syms, &n, &why), 0, "%s", why);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(syms[0].name, "from_b");
	struct ar_member mem;
	cr_assert_eq(ar_member_at(m.data, m.size, syms[0].member, &mem, &why), 0, "%s", why);
	cr_assert_str_eq(mem.name, "b.o");
	cr_assert_null(mem.data);
	free(syms);
	struct members ms = { "", 0, 0 };
	cr_assert_eq(ar_members(m.data, m.size, each_member, &ms, &why), 0, "%s", why);
	cr_assert_eq(ms.count, 1);
	cr_assert(ms.thin);
	elf_unmap(&m);
}

static int count_member(const struct ar_member *m, void *arg)
{
	struct syms s;
	char *why = NULL;
	(void)arg;
	if (m->data && read_syms(m->data, m->size, &s, &why))
		free(why);
	return 0;
}

/* Every prefix of a file, read in every way: errors are fine, crashes and reads past the end
 * (the sanitizers) are not. */
static void read_every_prefix(const unsigned char *data, size_t size, size_t step)
{
	for (size_t len = 0; len <= size; len += len < 256 ? 1 : step) {
		unsigned char *copy = xmalloc(len ? len : 1);
		memcpy(copy, data, len);
		struct syms s;
		char *why = NULL;
		memset(&s, 0, sizeof(s));
		if (elf_symbols(copy, len, collect, &s, &why))
			cr_assert_not_null(why);
		free(why);
		why = NULL;
		struct ar_symbol *syms;
		size_t n;
		if (ar_index(copy, len, &syms, &n, &why) == 0) {
			for (size_t i = 0; i < n; i++) {
				struct ar_member mem;
				char *w = NULL;
				if (ar_member_at(copy, len, syms[i].member, &mem, &w))
					free(w);
			}
			free(syms);
		}
		free(why);
		why = NULL;
		if (ar_members(copy, len, count_member, NULL, &why))
			cr_assert_not_null(why);
		free(why);
		free(copy);
	}
}

Test(elf, truncated_files_give_errors_not_crashes)
{
	free(test_write(dir, "a.c", c_source));
	free(test_write(dir, "b.c", "int from_b(void) { return 2; }\n"));
	sh("cc -c a.c -o a.o && cc -c b.c -o a_member_with_a_long_name.o && cc -shared a.o -o liba.so && "
	   "ar rcs lib.a a.o a_member_with_a_long_name.o");
	const char *files[] = { "a.o", "liba.so", "lib.a" };
	for (size_t i = 0; i < 3; i++) {
		struct elf_map m = map(files[i]);
		read_every_prefix(m.data, m.size, 13);
		/* A truncated object is an error, not an empty symbol table. */
		struct syms s;
		char *why = NULL;
		if (i < 2) {
			cr_assert_eq(read_syms(m.data, m.size / 2, &s, &why), -1, "%s cut in half", files[i]);
			cr_assert_not_null(why);
			free(why);
		}
		elf_unmap(&m);
	}
}

static unsigned char *copy_of(const struct elf_map *m)
{
	unsigned char *c = xmalloc(m->size);
	memcpy(c, m->data, m->size);
	return c;
}

Test(elf, damaged_headers_and_tables)
{
	free(test_write(dir, "a.c", c_source));
	sh("cc -c a.c -o a.o");
	struct elf_map m = map("a.o");
	struct syms s;
	char *why = NULL;
	Elf64_Ehdr eh;
	memcpy(&eh, m.data, sizeof(eh));

	/* The section header table moved past the end. */
	unsigned char *c = copy_of(&m);
	Elf64_Ehdr bad = eh;
	bad.e_shoff = (Elf64_Off)m.size - 10;
	memcpy(c, &bad, sizeof(bad));
	cr_assert_eq(read_syms(c, m.size, &s, &why), -1);
	cr_assert_not_null(strstr(why, "past the end"), "%s", why);
	free(why);
	why = NULL;
	free(c);

	/* An absurd section count. */
	c = copy_of(&m);
	bad = eh;
	bad.e_shnum = 60000;
	memcpy(c, &bad, sizeof(bad));
	cr_assert_eq(read_syms(c, m.size, &s, &why), -1);
	free(why);
	why = NULL;
	free(c);

	/* Every symbol name offset out of range, and the string table's size cut to nothing. */
	for (unsigned k = 0; k < eh.e_shnum; k++) {
		Elf64_Shdr sec;
		memcpy(&sec, m.data + eh.e_shoff + k * sizeof(sec), sizeof(sec));
		if (sec.sh_type != SHT_SYMTAB)
			continue;
		c = copy_of(&m);
		for (size_t off = sec.sh_offset; off + sizeof(Elf64_Sym) <= sec.sh_offset + sec.sh_size;
		     off += sizeof(Elf64_Sym)) {
			Elf64_Sym sym;
			memcpy(&sym, c + off, sizeof(sym));
			sym.st_name = 0x7fffffff;
			memcpy(c + off, &sym, sizeof(sym));
		}
		cr_assert_eq(read_syms(c, m.size, &s, &why), -1);
		cr_assert_not_null(strstr(why, "outside the string table"), "%s", why);
		free(why);
		why = NULL;
		free(c);

		c = copy_of(&m);
		Elf64_Shdr strsec;
		size_t at = eh.e_shoff + sec.sh_link * sizeof(strsec);
		memcpy(&strsec, c + at, sizeof(strsec));
		strsec.sh_size = 2;
		memcpy(c + at, &strsec, sizeof(strsec));
		cr_assert_eq(read_syms(c, m.size, &s, &why), -1);
		free(why);
		why = NULL;
		/* The symbol table's link to a section that does not exist. */
		free(c);
		c = copy_of(&m);
		Elf64_Shdr symsec = sec;
		symsec.sh_link = 9999;
		memcpy(c + eh.e_shoff + k * sizeof(symsec), &symsec, sizeof(symsec));
		cr_assert_eq(read_syms(c, m.size, &s, &why), -1);
		cr_assert_not_null(strstr(why, "out of range"), "%s", why);
		free(why);
		why = NULL;
		free(c);
	}

	/* Random damage anywhere: errors or symbols, never a crash. */
	srand(5);
	for (int round = 0; round < 300; round++) {
		c = copy_of(&m);
		for (int k = 0; k < 4; k++)
			c[(size_t)rand() % m.size] = (unsigned char)rand();
		if (read_syms(c, m.size, &s, &why))
			free(why);
		why = NULL;
		free(c);
	}
	elf_unmap(&m);

	/* Not ELF at all. */
	cr_assert_eq(elf_identify("int x;\n", 7), ELF_KIND_OTHER);
	cr_assert_eq(read_syms((const unsigned char *)"int x;\n", 7, &s, &why), -1);
	cr_assert_str_eq(why, "not an ELF file");
	free(why);
}

Test(elf, damaged_archives)
{
	free(test_write(dir, "b.c", "int from_b(void) { return 2; }\n"));
	sh("cc -c b.c -o b.o && ar rcs lib.a b.o");
	struct elf_map m = map("lib.a");
	char *why = NULL;
	struct ar_symbol *syms;
	size_t n;

	/* The index claims more symbols than it holds. */
	unsigned char *c = copy_of(&m);
	memcpy(c + 8 + 60, "\x7f\xff\xff\xff", 4);
	cr_assert_eq(ar_index(c, m.size, &syms, &n, &why), -1);
	cr_assert_not_null(strstr(why, "more than it holds"), "%s", why);
	free(why);
	why = NULL;
	free(c);

	/* A member size past the end. */
	c = copy_of(&m);
	memcpy(c + 8 + 48, "9999999999", 10);
	cr_assert_eq(ar_index(c, m.size, &syms, &n, &why), -1);
	cr_assert_not_null(strstr(why, "runs past the end"), "%s", why);
	free(why);
	why = NULL;
	free(c);

	/* A bad size field and a bad header end. */
	c = copy_of(&m);
	memcpy(c + 8 + 48, "12x4      ", 10);
	cr_assert_eq(ar_index(c, m.size, &syms, &n, &why), -1);
	free(why);
	why = NULL;
	free(c);
	c = copy_of(&m);
	c[8 + 58] = 'X';
	cr_assert_eq(ar_members(c, m.size, count_member, NULL, &why), -1);
	cr_assert_not_null(strstr(why, "damaged"), "%s", why);
	free(why);
	why = NULL;
	free(c);

	/* A member pointed at by the index that is not a member. */
	cr_assert_eq(ar_index(m.data, m.size, &syms, &n, &why), 0);
	struct ar_member mem;
	cr_assert_eq(ar_member_at(m.data, m.size, syms[0].member + 1, &mem, &why), -1);
	free(why);
	free(syms);

	srand(7);
	for (int round = 0; round < 300; round++) {
		c = copy_of(&m);
		for (int k = 0; k < 3; k++)
			c[(size_t)rand() % m.size] = (unsigned char)rand();
		read_every_prefix(c, m.size, m.size);
		free(c);
	}
	elf_unmap(&m);
}

/* Kernels' stacks, from objects, programs and cubins nvcc makes here. */
struct stacks {
	char text[4096]; /* "kernel sm stack;" in the order found */
	size_t len;
};

static void on_stack(const char *kernel, unsigned sm, unsigned long long stack, void *arg)
{
	struct stacks *s = arg;
	int n = snprintf(s->text + s->len, sizeof(s->text) - s->len, "%s %u %llu;", kernel, sm, stack);
	if (n > 0 && (size_t)n < sizeof(s->text) - s->len)
		s->len += (size_t)n;
}

static int stacks_into(const void *data, size_t size, void *s, char **why)
{
	return elf_cuda_stacks(data, size, on_stack, s, why);
}

static int read_stacks(const unsigned char *data, size_t size, struct stacks *s, char **why)
{
	return read_exact(data, size, stacks_into, s, sizeof(*s), why);
}

static const char stack_source[] =
	"__device__ __noinline__ void fill(volatile int *a, const int *d, int n)\n"
	"{ for (int i = 0; i < n; i++) a[(i * 7919) & 4095] = d[i]; }\n"
	"__global__ void big(int *d, int n) { volatile int a[1 << 16];\n"
	"  for (int i = 0; i < n; i++) a[(i * 7919) & 65535] = d[i]; d[0] = a[d[1] & 65535]; }\n"
	"__global__ void small(int *d, int n) { volatile int a[4096]; fill(a, d, n); d[0] = a[d[1] & 4095]; }\n"
	"__global__ void none(int *d) { d[threadIdx.x] = 1; }\n"
	"int main() { return 0; }\n";

Test(elf, cuda_stacks_of_objects_programs_and_cubins)
{
	free(test_write(dir, "s.cu", stack_source));
	sh("'" NVSHIM_TEST_NVCC "' -c s.cu -o s.o -gencode arch=compute_80,code=sm_80 "
	   "-gencode arch=compute_90,code=sm_90 && '" NVSHIM_TEST_NVCC "' s.cu -o s.out -arch=sm_90 && "
	   "'" NVSHIM_TEST_NVCC "' -cubin s.cu -o s.cubin -arch=sm_90");
	struct stacks s;
	char *why = NULL;
	struct elf_map m = map("s.o");
	cr_assert_eq(read_stacks(m.data, m.size, &s, &why), 0, "%s", why);
	/* Both targets; big's 256 KiB array; small's 16 KiB and what fill() adds to it. */
	cr_assert(strstr(s.text, "_Z3bigPii 80 262144;"), "%s", s.text);
	cr_assert(strstr(s.text, "_Z3bigPii 90 262144;"), "%s", s.text);
	cr_assert(strstr(s.text, "_Z5smallPii 90 "), "%s", s.text);
	unsigned long long small = strtoull(strstr(s.text, "_Z5smallPii 90 ") + 15, NULL, 10);
	cr_assert(small >= 16384 && small < 32768, "%s", s.text);
	cr_assert_null(strstr(s.text, "fill"), "device functions are no kernels: %s", s.text);
	/* A kernel with no stack records none, or 0. */
	cr_assert(!strstr(s.text, "_Z4nonePi") || strstr(s.text, "_Z4nonePi 90 0;"), "%s", s.text);
	/* Every prefix: an error or fewer kernels, never a read past the data (ASan). */
	for (size_t cut = 0; cut < m.size; cut += 97) {
		struct stacks t;
		char *w = NULL;
		read_stacks(m.data, cut, &t, &w);
		free(w);
	}
	elf_unmap(&m);
	m = map("s.out");
	cr_assert_eq(read_stacks(m.data, m.size, &s, &why), 0, "%s", why);
	cr_assert(strstr(s.text, "_Z3bigPii 90 262144;"), "a program: %s", s.text);
	elf_unmap(&m);
	m = map("s.cubin");
	cr_assert_eq(read_stacks(m.data, m.size, &s, &why), 0, "%s", why);
	cr_assert(strstr(s.text, "_Z3bigPii 90 262144;"), "a cubin: %s", s.text);
	cr_assert_eq(elf_is_program(m.data, m.size), 0, "a cubin (ET_EXEC for the GPU) is no program");
	elf_unmap(&m);
	/* Not ELF; a host object without device code: no kernels. */
	cr_assert_eq(read_stacks((const unsigned char *)"int x;", 6, &s, &why), -1);
	free(why);
	why = NULL;
	free(test_write(dir, "a.c", c_source));
	sh("cc -c a.c -o a.o");
	m = map("a.o");
	cr_assert_eq(read_stacks(m.data, m.size, &s, &why), 0, "%s", why);
	cr_assert_eq(s.len, 0);
	elf_unmap(&m);
}

/* A damaged fatbin: sizes past the section, an attribute past .nv.info. */
Test(elf, cuda_stacks_damaged)
{
	free(test_write(dir, "s.cu", stack_source));
	sh("'" NVSHIM_TEST_NVCC "' -c s.cu -o s.o -arch=sm_90");
	struct elf_map m = map("s.o");
	/* After the fatbin container's magic: its size (offset 8), then the first image's entry
	 * size (16 + 8), made huge. */
	static const struct {
		size_t at;
		const char *says;
	} cases[] = { { 8, "fatbin container runs past" }, { 16 + 8, "fatbin entry runs past" } };
	const unsigned char magic[4] = { 0x50, 0xed, 0x55, 0xba };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned char *c = copy_of(&m);
		unsigned char *at = memmem(c, m.size, magic, 4);
		cr_assert_not_null(at);
		memset(at + cases[i].at, 0x7f, 8);
		struct stacks s;
		char *why = NULL;
		cr_assert_eq(read_stacks(c, m.size, &s, &why), -1);
		cr_assert(strstr(why, cases[i].says), "%s", why);
		free(why);
		free(c);
	}
	elf_unmap(&m);
}

/* Images, kernels and stubs of every target nvcc 13.0 builds plain, read from nvcc's own output. */
static const char stub_source[] =
	"__global__ void body(float *x, int n) { int i = threadIdx.x; if (i < n) x[i] *= 2; }\n"
	"__global__ void empty(float *x) {\n#if __CUDA_ARCH__ >= 9990\n  x[0] = 1;\n#endif\n}\n"
	"__global__ void traps(float *x) {\n#if __CUDA_ARCH__ < 9990\n  __trap();\n#else\n  x[0] = 2;\n#endif\n}\n"
	"__global__ void asserts(float *x) { if (x[0] > 1) __trap(); x[1] = 0; }\n";

struct image_count {
	size_t sass, ptx, compressed;
	char targets[256];
};

static int count_image(const struct cuda_image *img, void *arg)
{
	struct image_count *c = arg;
	char t[32];
	c->sass += img->kind == CUDA_IMAGE_SASS;
	c->ptx += img->kind == CUDA_IMAGE_PTX;
	c->compressed += img->compression != 0;
	size_t len = strlen(c->targets);
	snprintf(c->targets + len, sizeof(c->targets) - len, "%s ", elf_image_target(img, t, sizeof(t)));
	return 0;
}

struct stub_check {
	const unsigned char *cubin;
	size_t size;
	unsigned sm;
};

static int check_stubs(const struct cuda_image *img, void *arg)
{
	(void)arg;
	if (img->kind != CUDA_IMAGE_SASS)
		return 0;
	const unsigned char *code;
	size_t len;
	void *owned;
	char *why = NULL;
	cr_assert_eq(elf_image_payload(img, 1 << 30, &code, &len, &owned, &why), 0, "%s", why);
	cr_assert_eq(elf_kernel_is_stub(code, len, "_Z4bodyPfi"), 0, "sm_%u: body", img->sm);
	cr_assert_eq(elf_kernel_is_stub(code, len, "_Z5emptyPf"), 1, "sm_%u: compiled out", img->sm);
	cr_assert_eq(elf_kernel_is_stub(code, len, "_Z5trapsPf"), 1, "sm_%u: only traps", img->sm);
	cr_assert_eq(elf_kernel_is_stub(code, len, "_Z7assertsPf"), 0, "sm_%u: traps on one path only", img->sm);
	cr_assert_eq(elf_kernel_is_stub(code, len, "no_such_kernel"), -1);
	free(owned);
	return 0;
}

Test(elf, cuda_images_kernels_and_stubs_of_every_target)
{
	free(test_write(dir, "k.cu", stub_source));
	sh("'" NVSHIM_TEST_NVCC "' -c k.cu -o k.o -gencode arch=compute_75,code=sm_75 "
	   "-gencode arch=compute_80,code=sm_80 -gencode arch=compute_86,code=sm_86 "
	   "-gencode arch=compute_89,code=sm_89 -gencode arch=compute_90,code=sm_90 "
	   "-gencode 'arch=compute_90a,code=sm_90a' -gencode arch=compute_100,code=sm_100 "
	   "-gencode arch=compute_120,code=[sm_120,compute_120] -t 2 && "
	   "'" NVSHIM_TEST_NVCC "' -c k.cu -o z.o -gencode 'arch=compute_80,code=[sm_80,compute_80]' "
	   "--compress-mode=size && '" NVSHIM_TEST_NVCC "' -fatbin k.cu -o k.fatbin -arch=sm_80");
	struct elf_map m = map("k.o");
	struct image_count c = { 0 };
	unsigned n = 0;
	char *why = NULL;
	cr_assert_eq(elf_cuda_images(m.data, m.size, count_image, &c, &n, &why), 0, "%s", why);
	cr_assert_eq(n, 1);
	cr_assert_eq(c.sass, 8, "%s", c.targets);
	cr_assert_eq(c.ptx, 1, "%s", c.targets);
	cr_assert(strstr(c.targets, "sm_90a ") && strstr(c.targets, "sm_120 ") && strstr(c.targets, "compute_120 "),
		  "%s", c.targets);
	cr_assert_eq(elf_cuda_images(m.data, m.size, check_stubs, NULL, NULL, &why), 0, "%s", why);
	elf_unmap(&m);
	/* Zstd-compressed machine code reads the same. */
	m = map("z.o");
	memset(&c, 0, sizeof(c));
	cr_assert_eq(elf_cuda_images(m.data, m.size, count_image, &c, &n, &why), 0, "%s", why);
	cr_assert_eq(c.compressed, 2, "%s", c.targets);
	cr_assert_eq(elf_cuda_images(m.data, m.size, check_stubs, NULL, NULL, &why), 0, "%s", why);
	elf_unmap(&m);
	/* A fatbin file, and its size as the preload library reads one in memory. */
	m = map("k.fatbin");
	memset(&c, 0, sizeof(c));
	cr_assert_eq(elf_cuda_images(m.data, m.size, count_image, &c, &n, &why), 0, "%s", why);
	cr_assert_eq(c.sass, 1, "%s", c.targets);
	cr_assert_eq(elf_fatbin_size(m.data, m.size), m.size);
	cr_assert_eq(elf_fatbin_size(m.data, 100), 0, "a fatbin longer than what may be read");
	elf_unmap(&m);
}

struct names {
	char text[4096];
	size_t len;
};

static void add_name(const char *name, size_t len, void *arg)
{
	struct names *n = arg;
	int w = snprintf(n->text + n->len, sizeof(n->text) - n->len, "%.*s ", (int)len, name);
	if (w > 0 && (size_t)w < sizeof(n->text) - n->len)
		n->len += (size_t)w;
}

struct per_container {
	int kernels[4]; /* elf_image_kernel_names() of each container's images, summed */
	struct names names;
};

static int names_of_image(const struct cuda_image *img, void *arg)
{
	struct per_container *p = arg;
	char *why = NULL;
	int n = elf_image_kernel_names(img, NULL, 1 << 30, add_name, &p->names, &why);
	cr_assert_geq(n, 0, "%s", why ? why : "");
	if (img->container < 4)
		p->kernels[img->container] += n;
	return 0;
}

/* nvcc 13 links every program with nvlink: a second fatbin, for the machine-code targets only,
 * that holds no kernel (and an empty one when there are none); the program is a PIE. */
Test(elf, programs_and_the_kernels_of_each_fatbin)
{
	free(test_write(dir, "k.cu", "__global__ void setk(int *x) { x[5] = 6; }\nint main() { return 0; }\n"));
	sh("'" NVSHIM_TEST_NVCC "' k.cu -o prog -gencode 'arch=compute_80,code=[sm_80,compute_80]' && "
	   "'" NVSHIM_TEST_NVCC "' k.cu -o ptxonly -gencode arch=compute_80,code=compute_80 && "
	   "gcc -shared -fPIC -x c /dev/null -o libnone.so && gcc -x c - -no-pie -o nopie <<'C'\nint main(void) { return 0; }\nC");
	struct elf_map m = map("prog");
	cr_assert_eq(elf_identify(m.data, m.size), ELF_KIND_SHARED, "a PIE is ET_DYN");
	cr_assert_eq(elf_is_program(m.data, m.size), 1);
	struct per_container p;
	memset(&p, 0, sizeof(p));
	unsigned n = 0;
	char *why = NULL;
	cr_assert_eq(elf_cuda_images(m.data, m.size, names_of_image, &p, &n, &why), 0, "%s", why);
	cr_assert_eq(n, 2, "the program's fatbin and the device-link one");
	cr_assert(p.kernels[0] + p.kernels[1] == 2, "setk in the sm_80 code and in the PTX: %s", p.names.text);
	cr_assert(p.kernels[0] == 0 || p.kernels[1] == 0, "one fatbin holds no kernel");
	cr_assert_str_eq(p.names.text, "_Z4setkPi _Z4setkPi ");
	elf_unmap(&m);
	m = map("ptxonly");
	memset(&p, 0, sizeof(p));
	cr_assert_eq(elf_cuda_images(m.data, m.size, names_of_image, &p, &n, &why), 0, "%s", why);
	cr_assert_eq(n, 2, "an empty device-link fatbin too");
	cr_assert_str_eq(p.names.text, "_Z4setkPi ", "the PTX's .entry");
	elf_unmap(&m);
	m = map("libnone.so");
	cr_assert_eq(elf_is_program(m.data, m.size), 0, "a shared library");
	elf_unmap(&m);
	m = map("nopie");
	cr_assert_eq(elf_is_program(m.data, m.size), 1, "ET_EXEC");
	elf_unmap(&m);
	cr_assert_eq(elf_is_program("int x;", 6), 0);
}

/* A section the reader does not need may run past the end of the file (NCCL's cubins have a
 * .nv_debug.shared of type SHT_LOPROC+0xa whose bytes are not in the file): the file is read, as
 * readelf -S reads it; a .nv_fatbin that runs past the end is still an error. */
Test(elf, sections_not_read_may_run_past_the_end)
{
	free(test_write(dir, "k.cu", "__global__ void k(float *x) { x[0] = 1; }\n"));
	sh("'" NVSHIM_TEST_NVCC "' -c k.cu -o k.o -arch=sm_80");
	struct elf_map m = map("k.o");
	unsigned char *copy = xmalloc(m.size);
	memcpy(copy, m.data, m.size);
	Elf64_Ehdr eh;
	memcpy(&eh, copy, sizeof(eh));
	Elf64_Shdr names, sh;
	memcpy(&names, copy + eh.e_shoff + eh.e_shstrndx * sizeof(sh), sizeof(sh));
	int other = 0, fatbin = 0;
	for (unsigned i = 1; i < eh.e_shnum; i++) {
		memcpy(&sh, copy + eh.e_shoff + i * sizeof(sh), sizeof(sh));
		const char *name = (const char *)copy + names.sh_offset + sh.sh_name;
		if (!strcmp(name, ".nv_fatbin"))
			fatbin = (int)i;
		else if (!other && sh.sh_type == SHT_PROGBITS && strcmp(name, ".nv_fatbin"))
			other = (int)i;
	}
	cr_assert(other && fatbin);
	struct image_count c = { 0 };
	unsigned n = 0;
	char *why = NULL;
	Elf64_Shdr *o = (Elf64_Shdr *)(copy + eh.e_shoff + (size_t)other * sizeof(sh));
	o->sh_size = (uint64_t)m.size * 4;
	cr_assert_eq(elf_cuda_images(copy, m.size, count_image, &c, &n, &why), 0, "%s", why);
	cr_assert_eq(c.sass, 1);
	Elf64_Shdr *f = (Elf64_Shdr *)(copy + eh.e_shoff + (size_t)fatbin * sizeof(sh));
	f->sh_size = (uint64_t)m.size * 4;
	cr_assert_eq(elf_cuda_images(copy, m.size, count_image, &c, &n, &why), -1);
	cr_assert(why && strstr(why, ".nv_fatbin section runs past the end of the file"), "%s", why ? why : "");
	free(why);
	free(copy);
	elf_unmap(&m);
}

static int keep_image(const struct cuda_image *img, void *arg)
{
	*(struct cuda_image *)arg = *img;
	return 0;
}

Test(elf, ptx_text_is_one_ptx_image_with_its_isa_and_target)
{
	const char *ptx = "//\n// Generated by NVIDIA NVVM Compiler\n//\n\n.version 9.5\n.target sm_90a\n"
			  ".address_size 64\n\n.visible .entry k()\n{\n\tret;\n}\n";
	struct cuda_image img;
	unsigned n = 0;
	char *why = NULL;
	memset(&img, 0, sizeof(img));
	cr_assert(elf_is_ptx_text(ptx, strlen(ptx)));
	cr_assert_eq(elf_cuda_images(ptx, strlen(ptx), keep_image, &img, &n, &why), 0);
	cr_assert_eq(n, 1);
	cr_assert_eq(img.kind, CUDA_IMAGE_PTX);
	cr_assert_eq(img.sm, 90);
	cr_assert_eq(img.variant, 'a');
	cr_assert_eq(img.ptx_major, 9);
	cr_assert_eq(img.ptx_minor, 5);
	/* a source, a linker script, a .target before nothing: not PTX */
	const char *not_ptx[] = { "int main() { return 0; }\n", ".version 9.0\n", "int x;\n.version 9.0\n.target sm_80\n",
				  "// only a comment\n", ".version x.y\n.target sm_80\n", "" };
	for (size_t i = 0; i < sizeof(not_ptx) / sizeof(not_ptx[0]); i++)
		cr_assert(!elf_is_ptx_text(not_ptx[i], strlen(not_ptx[i])), "%s", not_ptx[i]);
	/* .target first is PTX too (the order nvcc writes is .version first) */
	cr_assert(elf_is_ptx_text(".target sm_80\n.version 9.0\n", 27));
}
