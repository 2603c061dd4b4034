#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "passes/link.h"

/* The link pass on objects, archives and shared objects made by the machine's cc and ar at
 * test time, and the detection of an undefined driver symbol on real linkers' stderr. */

static char *dir;
static const char *const no_dirs[] = { NULL };

static void setup(void) { dir = test_tmpdir(); }
static void teardown(void)
{
	test_rmtree(dir);
	free(dir);
}

static void sh(const char *cmd)
{
	char *full = concat("cd '", dir, "' && ", cmd, NULL);
	cr_assert_eq(system(full), 0, "failed: %s", cmd);
	free(full);
}

static const char *stubs(void)
{
	static int checked, ok;
	if (!checked) {
		ok = !access(NVSHIM_CUDA_STUBS "/libcuda.so", R_OK);
		checked = 1;
	}
	return ok ? NVSHIM_CUDA_STUBS : NULL;
}

struct outcome {
	int changed;
	char *added;  /* what the pass appended, as one line */
	char *notes;
	char *retry;
	char *symbol;
};

static void outcome_release(struct outcome *o)
{
	free(o->added);
	free(o->notes);
	free(o->retry);
	free(o->symbol);
}

static char *join_notes(const struct argv *notes)
{
	char *s = xstrdup("");
	for (size_t i = 0; i < notes->n; i++) {
		char *n = concat(s, i ? " | " : "", notes->v[i], NULL);
		free(s);
		s = n;
	}
	return s;
}

/* Runs the pass in CC mode (a gcc command line) or nvcc mode, in dir, with no system
 * directories (so the machine's own libraries do not matter) unless sys is given. */
static struct outcome run(const char *line, int nvcc, const char *const *sys, const char *settings)
{
	struct config cfg;
	struct outcome o;
	char cwd[4096];
	config_init(&cfg, NULL);
	if (settings) {
		char *w = NULL;
		cr_assert_eq(config_set(&cfg, config_item_find(settings), "false", LAYER_FLAG, "test", NULL, &w), 0);
	}
	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	cr_assert_eq(chdir(dir), 0);
	char **v = buildargv(line);
	size_t n = 0;
	while (v && v[n])
		n++;
	struct link_request req;
	link_request_init(&req);
	struct hostcc hc;
	struct invocation inv;
	int is_link;
	if (nvcc) {
		invocation_parse(&inv, v, n, NULL);
		is_link = link_request_from_nvcc(&req, &inv);
	} else {
		hostcc_parse(&hc, v, n);
		is_link = link_request_from_hostcc(&req, &hc);
	}
	struct plan plan;
	plan_init(&plan, "tool", v, n);
	struct link_result res;
	link_result_init(&res);
	char *lib = nvcc ? link_toolkit_lib(NVSHIM_TEST_NVCC) : NULL;
	struct link_context ctx = { &cfg, stubs(), lib, NULL, sys ? sys : no_dirs };
	o.changed = is_link ? link_pass(&req, &ctx, &plan, &res) : -1;
	struct argv added = ARGV_INIT;
	argv_pushn(&added, plan.argv.v + 1 + n, plan.argv.n - 1 - n);
	o.added = argv_to_shell(&added);
	o.notes = join_notes(&plan.notes);
	o.retry = argv_to_shell(&res.retry);
	o.symbol = res.symbol ? xstrdup(res.symbol) : NULL;
	argv_release(&added);
	free(lib);
	link_result_release(&res);
	plan_release(&plan);
	if (nvcc)
		invocation_release(&inv);
	else
		hostcc_release(&hc);
	link_request_release(&req);
	freeargv(v);
	config_release(&cfg);
	cr_assert_eq(chdir(cwd), 0);
	return o;
}

static const char tma_source[] =
	"typedef int CUresult;\n"
	"CUresult cuTensorMapEncodeTiled(void *, int, unsigned, void *, const void *, const void *,\n"
	"  const void *, const void *, int, int, int, int);\n"
	"int make_map(void) { return cuTensorMapEncodeTiled(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0); }\n";

TestSuite(link, .init = setup, .fini = teardown);

Test(link, shared_library_gets_lcuda_and_the_stubs)
{
	if (!stubs())
		cr_skip_test("no stub libcuda.so");
	free(test_write(dir, "k.c", tma_source));
	sh("cc -c -fPIC k.c -o k.o");
	struct outcome o = run("-shared k.o -o libk.so -lcudart", 0, NULL, NULL);
	cr_assert_eq(o.changed, 1);
	char *want = concat("-L", stubs(), " -lcuda", NULL);
	cr_assert_str_eq(o.added, want);
	free(want);
	cr_assert_not_null(strstr(o.notes, "added -lcuda: cuTensorMapEncodeTiled is undefined in k.o and no "
					  "input provides it [link.lcuda]"), "%s", o.notes);
	cr_assert_not_null(strstr(o.notes, "the toolkit's stub records libcuda.so.1"), "%s", o.notes);
	cr_assert_str_eq(o.symbol, "cuTensorMapEncodeTiled");
	cr_assert_str_eq(o.retry, "");
	outcome_release(&o);
}

Test(link, a_libcuda_on_the_path_needs_no_stubs)
{
	if (!stubs())
		cr_skip_test("no stub libcuda.so");
	free(test_write(dir, "k.c", tma_source));
	sh("cc -c -fPIC k.c -o k.o && mkdir drv && cp '" NVSHIM_CUDA_STUBS "/libcuda.so' drv/");
	struct outcome o = run("-shared k.o -o libk.so -Ldrv", 0, NULL, NULL);
	cr_assert_str_eq(o.added, "-lcuda");
	outcome_release(&o);
	/* A system directory counts too. */
	char *drv = concat(dir, "/drv", NULL);
	const char *sys[] = { drv, NULL };
	o = run("-shared k.o -o libk.so", 0, sys, NULL);
	cr_assert_str_eq(o.added, "-lcuda");
	outcome_release(&o);
	free(drv);
}

Test(link, nothing_to_do)
{
	free(test_write(dir, "k.c", tma_source));
	free(test_write(dir, "plain.c", "int cudaMalloc(void **, unsigned long); int f(void) { return cudaMalloc(0, 0); }\n"));
	free(test_write(dir, "weak.c", "extern int cuInit(unsigned) __attribute__((weak));\n"
				       "int f(void) { return cuInit ? cuInit(0) : 0; }\n"));
	free(test_write(dir, "file.c", "int cuFileDriverOpen(void); int f(void) { return cuFileDriverOpen(); }\n"));
	free(test_write(dir, "shim.c", "int cuTensorMapEncodeTiled(void) { return 0; }\n"));
	sh("cc -c -fPIC k.c && cc -c plain.c && cc -c weak.c && cc -c file.c && cc -c -fPIC shim.c && "
	   "cc -shared shim.o -o libshim.so");
	const char *lines[] = {
		"-shared plain.o -o x.so",          /* cudart's cuda* is not the driver's */
		"-shared weak.o -o x.so",           /* a weak reference is checked at run time */
		"-shared file.o -o x.so",           /* cuFile* is libcufile's */
		"-shared k.o -o x.so -lcuda",       /* already there */
		"-shared k.o -o x.so -l:libcuda.so.1",
		"-shared k.o -o x.so /usr/lib/libcuda.so",
		"-shared k.o shim.o -o x.so",       /* an object defines it */
		"-shared k.o libshim.so -o x.so",   /* a shared library on the line defines it */
		"-shared k.o -o x.so -Wl,-lcuda",
		"-c k.c -o k2.o",                   /* not a link */
	};
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct outcome o = run(lines[i], 0, NULL, NULL);
		cr_assert_neq(o.changed, 1, "%s: %s", lines[i], o.notes);
		cr_assert_str_eq(o.added, "", "%s", lines[i]);
		outcome_release(&o);
	}
	/* The setting turns it off. */
	struct outcome o = run("-shared k.o -o x.so", 0, NULL, "link_lcuda");
	cr_assert_eq(o.changed, 0);
	cr_assert_str_eq(o.retry, "");
	outcome_release(&o);
	/* A symbol the driver does not have (the stub says) is not the driver's. */
	if (stubs()) {
		free(test_write(dir, "fake.c", "int cuNotADriverCall(void); int f(void) { return cuNotADriverCall(); }\n"));
		sh("cc -c fake.c");
		o = run("-shared fake.o -o x.so", 0, NULL, NULL);
		cr_assert_eq(o.changed, 0, "%s", o.notes);
		outcome_release(&o);
	}
}

Test(link, archives_count_when_their_members_are_pulled_in)
{
	if (!stubs())
		cr_skip_test("no stub libcuda.so");
	free(test_write(dir, "k.c", tma_source));
	free(test_write(dir, "main.c", "int make_map(void); int main(void) { return make_map(); }\n"));
	free(test_write(dir, "other.c", "int other(void) { return 1; }\n"));
	free(test_write(dir, "mainother.c", "int other(void); int main(void) { return other(); }\n"));
	sh("cc -c k.c -o tma_member_with_a_long_name.o && cc -c main.c && cc -c other.c && cc -c mainother.c && "
	   "ar rcs libtma.a tma_member_with_a_long_name.o other.o && mkdir lib && cp libtma.a lib/ && "
	   "ar rcS libnoindex.a tma_member_with_a_long_name.o && ar rcsT libthin.a tma_member_with_a_long_name.o");
	struct outcome o = run("main.o libtma.a -o app", 0, NULL, NULL);
	cr_assert_eq(o.changed, 1);
	cr_assert_not_null(strstr(o.notes, "undefined in libtma.a(tma_member_with_a_long_name.o)"), "%s", o.notes);
	outcome_release(&o);
	/* The member with the driver call is not needed. */
	o = run("mainother.o libtma.a -o app", 0, NULL, NULL);
	cr_assert_eq(o.changed, 0, "%s", o.notes);
	outcome_release(&o);
	/* Before the object that needs it, the linker does not look at it again... */
	o = run("libtma.a main.o -o app", 0, NULL, NULL);
	cr_assert_eq(o.changed, 0, "%s", o.notes);
	outcome_release(&o);
	/* ... but nvcc links everything in one group. */
	o = run("libtma.a main.o -o app", 1, NULL, NULL);
	cr_assert_eq(o.changed, 1, "%s", o.notes);
	cr_assert_str_eq(o.added, "-lcuda");
	outcome_release(&o);
	/* -Wl,--whole-archive takes every member. */
	o = run("mainother.o -Wl,--whole-archive libtma.a -Wl,--no-whole-archive -o app", 0, NULL, NULL);
	cr_assert_eq(o.changed, 1, "%s", o.notes);
	outcome_release(&o);
	/* -l through -L; an archive without an index; a thin archive. */
	o = run("main.o -Llib -ltma -o app", 0, NULL, NULL);
	cr_assert_eq(o.changed, 1, "%s", o.notes);
	outcome_release(&o);
	o = run("main.o libnoindex.a -o app", 0, NULL, NULL);
	cr_assert_eq(o.changed, 1, "%s", o.notes);
	outcome_release(&o);
	o = run("main.o libthin.a -o app", 0, NULL, NULL);
	cr_assert_eq(o.changed, 1, "%s", o.notes);
	outcome_release(&o);
	/* Groups. */
	o = run("-Wl,--start-group libtma.a main.o -Wl,--end-group -o app", 0, NULL, NULL);
	cr_assert_eq(o.changed, 1, "%s", o.notes);
	outcome_release(&o);
	/* -Bstatic left on: the driver library is still linked dynamically. */
	o = run("main.o libtma.a -o app -Wl,-Bstatic", 0, NULL, NULL);
	char *want = concat("-L", stubs(), " -Wl,-Bdynamic -lcuda", NULL);
	cr_assert_str_eq(o.added, want);
	free(want);
	outcome_release(&o);
	/* -static: there is no static libcuda. */
	o = run("-static main.o libtma.a -o app", 0, NULL, NULL);
	cr_assert_eq(o.changed, 0);
	cr_assert_not_null(strstr(o.notes, "the link is static"), "%s", o.notes);
	outcome_release(&o);
}

Test(link, nvcc_links)
{
	free(test_write(dir, "k.c", tma_source));
	sh("cc -c -fPIC k.c -o k.o");
	struct outcome o = run("k.o -o app", 1, NULL, NULL);
	cr_assert_eq(o.changed, stubs() ? 1 : 0, "%s", o.notes);
	if (stubs())
		cr_assert_str_eq(o.added, "-lcuda"); /* nvcc's own -L finds the stub */
	outcome_release(&o);
	o = run("-shared k.o -o libk.so -Xcompiler -fPIC", 1, NULL, NULL);
	cr_assert_eq(o.changed, stubs() ? 1 : 0);
	outcome_release(&o);
	o = run("k.o -o app -lcuda", 1, NULL, NULL);
	cr_assert_eq(o.changed, 0);
	outcome_release(&o);
	o = run("k.o -o app -Xlinker -lcuda", 1, NULL, NULL);
	cr_assert_eq(o.changed, 0);
	outcome_release(&o);
	/* Not links. */
	const char *not_links[] = { "-c k.cu", "-dc k.cu", "-lib k.o -o libk.a", "-dlink k.o -o d.o",
				    "--dryrun k.o -o app", "--version" };
	for (size_t i = 0; i < sizeof(not_links) / sizeof(not_links[0]); i++) {
		o = run(not_links[i], 1, NULL, NULL);
		cr_assert_eq(o.changed, -1, "%s", not_links[i]);
		outcome_release(&o);
	}
	/* A source compiled in the same run: read later, from the linker's stderr. */
	free(test_write(dir, "x.cu", "int main() { return 0; }\n"));
	o = run("x.cu -o x", 1, NULL, NULL);
	cr_assert_eq(o.changed, 0);
	cr_assert_str_eq(o.retry, stubs() ? "-lcuda" : "");
	outcome_release(&o);
	/* --run: the program's stderr is not held. */
	o = run("--run x.cu -o x", 1, NULL, NULL);
	cr_assert_str_eq(o.retry, "");
	outcome_release(&o);
}

Test(link, damaged_inputs_are_skipped_with_a_note)
{
	free(test_write(dir, "k.c", tma_source));
	sh("cc -c k.c -o k.o && head -c 300 k.o > cut.o && printf '!<arch>\\nrubbish' > bad.a && "
	   "printf '\\177ELF' > tiny.o");
	struct outcome o = run("cut.o bad.a tiny.o -o app", 0, NULL, NULL);
	cr_assert_eq(o.changed, 0);
	cr_assert_not_null(strstr(o.notes, "skipped cut.o when looking for driver symbols: "), "%s", o.notes);
	cr_assert_not_null(strstr(o.notes, "skipped bad.a"), "%s", o.notes);
	cr_assert_not_null(strstr(o.notes, "skipped tiny.o"), "%s", o.notes);
	cr_assert_not_null(strstr(o.notes, "[link.input]"), "%s", o.notes);
	outcome_release(&o);
	/* Inputs that are not there, or a linker script, are the linker's to report. */
	free(test_write(dir, "libc.so", "GROUP ( /lib/libc.so.6 )\n"));
	o = run("missing.o libc.so -o app", 0, NULL, NULL);
	cr_assert_str_eq(o.notes, "");
	outcome_release(&o);
}

Test(link, no_libcuda_anywhere)
{
	free(test_write(dir, "k.c", tma_source));
	sh("cc -c k.c -o k.o");
	struct config cfg;
	config_init(&cfg, NULL);
	char *args[] = { (char *)"k.o", (char *)"-o", (char *)"app", NULL };
	struct hostcc hc;
	char cwd[4096];
	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	cr_assert_eq(chdir(dir), 0);
	hostcc_parse(&hc, args, 3);
	struct link_request req;
	link_request_init(&req);
	cr_assert(link_request_from_hostcc(&req, &hc));
	struct plan plan;
	plan_init(&plan, "cc", args, 3);
	struct link_result res;
	link_result_init(&res);
	struct link_context ctx = { &cfg, NULL, NULL, NULL, no_dirs };
	cr_assert_eq(link_pass(&req, &ctx, &plan, &res), 0);
	cr_assert_eq(plan.argv.n, 4);
	cr_assert_not_null(strstr(plan.notes.v[0], "no libcuda.so is found"), "%s", plan.notes.v[0]);
	cr_assert_eq(res.retry.n, 0);
	link_result_release(&res);
	plan_release(&plan);
	link_request_release(&req);
	hostcc_release(&hc);
	config_release(&cfg);
	cr_assert_eq(chdir(cwd), 0);
}

/* What linkers print, captured from GNU ld 2.40 (bfd), gold, lld 14 and nvcc 13.0. */
static const char bfd[] =
	"/usr/bin/ld.bfd: tm.o: in function `main':\n"
	"tm.c:(.text+0x36): undefined reference to `cuTensorMapEncodeTiled'\n"
	"/usr/bin/ld.bfd: tm.c:(.text+0x5b): undefined reference to `cuGetProcAddress_v2'\n"
	"collect2: error: ld returned 1 exit status\n";
static const char gold[] =
	"tm.o:tm.c:function main: error: undefined reference to 'cuTensorMapEncodeTiled'\n"
	"tm.o:tm.c:function main: error: undefined reference to 'cuGetProcAddress_v2'\n"
	"collect2: error: ld returned 1 exit status\n";
static const char lld[] =
	"ld.lld: error: undefined symbol: cuTensorMapEncodeTiled\n"
	">>> referenced by tm.c\n"
	">>>               tm.o:(main)\n\n"
	"collect2: error: ld returned 1 exit status\n";
static const char dso_missing[] =
	"/usr/bin/ld: /tmp/ccjJmxwV.o: undefined reference to symbol 'cuInit'\n"
	"/usr/bin/ld: rl/libcuda.so.1: error adding symbols: DSO missing from command line\n"
	"collect2: error: ld returned 1 exit status\n";
static const char nvcc_link[] =
	"/usr/bin/ld: /tmp/tmpxft_00007547_00000000-13_tmx.o: in function `main':\n"
	"tmpxft_00007547_00000000-6_tmx.compute_90a.cudafe1.cpp:(.text+0xdc): undefined reference to "
	"`cuTensorMapEncodeTiled'\n"
	"collect2: error: ld returned 1 exit status\n";
/* A C++ function that happens to be called cu...: -lcuda does not help. */
static const char cxx_name[] =
	"tmpxft_000074b8_00000000-6_tmx.cudafe1.cpp:(.text+0x64): undefined reference to "
	"`cuTensorMapEncodeTiled(void*, int, unsigned int, void*, void const*, void const*, void const*, "
	"void const*, int, int, int, int)'\n";
static const char others[] =
	"nvlink error   : Undefined reference to 'cuDeviceHelper' in '/tmp/a.o'\n"
	"/usr/bin/ld: a.o: undefined reference to `cudaMalloc'\n"
	"/usr/bin/ld: a.o: undefined reference to `cuFileRead'\n"
	"mold: error: undefined symbol: cublasCreate_v2\n";
static const char versioned[] = "/usr/bin/ld: x.o: undefined reference to symbol 'cuInit@@libcuda.so.1'\n";
static const char mold[] = "mold: error: undefined symbol: cuLaunchKernelEx\n>>> referenced by k.o\n";

Test(link, undefined_driver_symbol_in_linker_output)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ bfd, "cuTensorMapEncodeTiled" }, { gold, "cuTensorMapEncodeTiled" },
		{ lld, "cuTensorMapEncodeTiled" }, { dso_missing, "cuInit" },
		{ nvcc_link, "cuTensorMapEncodeTiled" }, { cxx_name, NULL }, { others, NULL },
		{ versioned, "cuInit" }, { mold, "cuLaunchKernelEx" }, { "", NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = link_undefined_driver_symbol(cases[i].text);
		if (cases[i].want)
			cr_assert_str_eq(got, cases[i].want, "case %zu", i);
		else
			cr_assert_null(got, "case %zu gave %s", i, got);
		free(got);
	}
}

/* The same, on what the machine's linkers print now. */
Test(link, undefined_driver_symbol_from_this_machines_linkers)
{
	free(test_write(dir, "k.c", tma_source));
	free(test_write(dir, "main.c", "int make_map(void); int main(void) { return make_map(); }\n"));
	sh("cc -c k.c main.c");
	const char *linkers[] = { "bfd", "gold", "lld" };
	for (size_t i = 0; i < 3; i++) {
		char *cmd = concat("cc main.o k.o -o app -fuse-ld=", linkers[i], " 2> err.txt; true", NULL);
		sh(cmd);
		free(cmd);
		char *path = concat(dir, "/err.txt", NULL);
		char *err = test_read(path);
		free(path);
		if (!err || !strstr(err, "cuTensorMapEncodeTiled")) {
			free(err);
			continue; /* that linker is not installed */
		}
		char *got = link_undefined_driver_symbol(err);
		cr_assert_str_eq(got, "cuTensorMapEncodeTiled", "%s: %s", linkers[i], err);
		free(got);
		free(err);
	}
}

Test(link, driver_names_and_toolkit_directories)
{
	cr_assert(link_is_driver_name("cuTensorMapEncodeTiled"));
	cr_assert(link_is_driver_name("cuGetProcAddress_v2"));
	cr_assert_not(link_is_driver_name("cudaMalloc"));
	cr_assert_not(link_is_driver_name("cublasCreate_v2"));
	cr_assert_not(link_is_driver_name("cuFileRead"));
	cr_assert_not(link_is_driver_name("__cudaRegisterFatBinary"));
	cr_assert_not(link_is_driver_name("cu"));
	char *s = link_find_stubs(NVSHIM_TEST_NVCC, NULL);
	if (stubs()) {
		cr_assert_not_null(s);
		char *lib = concat(s, "/libcuda.so", NULL);
		cr_assert_eq(access(lib, R_OK), 0, "%s", lib);
		free(lib);
	}
	free(s);
	char *lib = link_toolkit_lib(NVSHIM_TEST_NVCC);
	cr_assert_not_null(lib);
	free(lib);
	cr_assert_null(link_toolkit_lib("nvcc"));
}
