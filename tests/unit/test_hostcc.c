#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "model/hostcc.h"

struct result {
	char *nvcc;  /* the translated arguments, as one shell line */
	char *notes; /* " | " joined */
	enum hostcc_mode mode;
	size_t ncuda;
};

static struct result translate(const char *line, const char *ccbin)
{
	struct hostcc hc;
	struct result r;
	char **v = buildargv(line);
	size_t n = 0;
	while (v && v[n])
		n++;
	hostcc_parse(&hc, v, n);
	r.mode = hc.mode;
	r.ncuda = hc.ncuda;
	struct argv out = ARGV_INIT, notes = ARGV_INIT;
	if (hc.ncuda)
		hostcc_translate(&hc, ccbin, &out, &notes);
	r.nvcc = argv_to_shell(&out);
	r.notes = xstrdup("");
	for (size_t i = 0; i < notes.n; i++) {
		char *s = concat(r.notes, i ? " | " : "", notes.v[i], NULL);
		free(r.notes);
		r.notes = s;
	}
	argv_release(&out);
	argv_release(&notes);
	hostcc_release(&hc);
	freeargv(v);
	return r;
}

static void release(struct result *r)
{
	free(r->nvcc);
	free(r->notes);
}

#define EXPECT(line, want)                                                                  \
	do {                                                                                \
		struct result r_ = translate(line, NULL);                                   \
		cr_assert_str_eq(r_.nvcc, want, "%s\n  gave %s", line, r_.nvcc);            \
		release(&r_);                                                               \
	} while (0)

Test(hostcc, table_entries_are_well_formed)
{
	for (size_t i = 0; i < hostcc_noptions; i++) {
		cr_assert_eq(hostcc_options[i].name[0], '-');
		if (i)
			cr_assert_lt(strcmp(hostcc_options[i - 1].name, hostcc_options[i].name), 0,
				     "%s is out of order or repeated", hostcc_options[i].name);
	}
	const char *value;
	cr_assert_str_eq(hostcc_find("-Wl,-rpath,x", &value)->name, "-Wl,");
	cr_assert_str_eq(value, "-rpath,x");
	cr_assert_str_eq(hostcc_find("-isystem/usr/x", &value)->name, "-isystem");
	cr_assert_str_eq(value, "/usr/x");
	cr_assert_str_eq(hostcc_find("-include", &value)->name, "-include");
	cr_assert_null(value);
	cr_assert_null(hostcc_find("-fPIC", &value));
}

Test(hostcc, modes)
{
	static const struct {
		const char *line;
		enum hostcc_mode mode;
	} cases[] = {
		{ "-c k.cu -o k.o", HOSTCC_COMPILE },
		{ "k.o -o app", HOSTCC_LINK },
		{ "-shared k.o -o k.so", HOSTCC_LINK },
		{ "--version", HOSTCC_INFO },
		{ "-print-file-name=libc.so", HOSTCC_INFO },
		{ "-v", HOSTCC_INFO },
		{ "-E k.cu", HOSTCC_PREPROCESS },
		{ "-M k.cu", HOSTCC_DEPENDENCIES },
		{ "-MD -MF k.d -c k.cu", HOSTCC_COMPILE },
		{ "-S k.c", HOSTCC_ASSEMBLE },
		{ "-fsyntax-only k.c", HOSTCC_COMPILE },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct result r = translate(cases[i].line, NULL);
		cr_assert_eq(r.mode, cases[i].mode, "%s: mode %s", cases[i].line, hostcc_mode_name(r.mode));
		release(&r);
	}
}

Test(hostcc, inputs_and_languages)
{
	struct result r = translate("-c k.cu a.c", NULL);
	cr_assert_eq(r.ncuda, 1);
	release(&r);
	r = translate("-x cu -c k.cpp", NULL);
	cr_assert_eq(r.ncuda, 1);
	cr_assert_str_eq(r.nvcc, "-x cu -c k.cpp");
	release(&r);
	/* gcc's -x applies to what follows it, until -x none. */
	r = translate("-c a.cpp -x cu b.cpp -x none c.cpp", NULL);
	cr_assert_eq(r.ncuda, 1);
	release(&r);
	r = translate("-x cuda -c k.cpp", NULL);
	cr_assert_eq(r.ncuda, 1);
	cr_assert_str_eq(r.nvcc, "-x cu -c k.cpp");
	release(&r);
	r = translate("-x cu -c -", NULL);
	cr_assert_eq(r.ncuda, 1);
	release(&r);
	/* Values are not inputs. */
	r = translate("-c k.c -o k.cu.o -MF x.cu -include y.cu", NULL);
	cr_assert_eq(r.ncuda, 0);
	release(&r);
}

Test(hostcc, a_gcc_makefile_line)
{
	struct result r = translate("-fPIC -O2 -Wall -MD -MF k.d -c k.cu -o k.o", "/usr/bin/g++");
	cr_assert_str_eq(r.nvcc, "-ccbin /usr/bin/g++ -Xcompiler -fPIC -O2 -Xcompiler -Wall -MD -MF k.d -c k.cu -o k.o");
	cr_assert_not_null(strstr(r.notes, "k.cu is CUDA: nvcc compiles it, with host compiler /usr/bin/g++ [cc.nvcc]"), "%s", r.notes);
	cr_assert_not_null(strstr(r.notes, "gcc options for nvcc: -fPIC -Wall through -Xcompiler [cc.translate]"), "%s", r.notes);
	release(&r);
	/* A host compiler chosen on the line stays. */
	r = translate("-ccbin clang++ -c k.cu", "/usr/bin/g++");
	cr_assert_str_eq(r.nvcc, "-ccbin clang++ -c k.cu");
	release(&r);
}

Test(hostcc, python_sysconfig_flags)
{
	EXPECT("-Wsign-compare -DNDEBUG -g -fwrapv -O3 -Wall -fPIC -I/py/include/python3.11 -c k.cu -o build/k.o",
	       "-Xcompiler -Wsign-compare -DNDEBUG -g -Xcompiler -fwrapv -O3 -Xcompiler -Wall -Xcompiler -fPIC "
	       "-I/py/include/python3.11 -c k.cu -o build/k.o");
}

Test(hostcc, standards)
{
	struct result r = translate("-std=gnu++17 -c k.cu", NULL);
	cr_assert_str_eq(r.nvcc, "-std=c++17 -c k.cu");
	cr_assert_not_null(strstr(r.notes, "-std=gnu++17 passed to nvcc as -std=c++17"), "%s", r.notes);
	cr_assert_not_null(strstr(r.notes, "[cc.std]"));
	release(&r);
	EXPECT("-std=c++1z -c k.cu", "-std=c++17 -c k.cu");
	EXPECT("-std=gnu++2a -c k.cu", "-std=c++20 -c k.cu");
	EXPECT("-std=c++17 -c k.cu", "-std=c++17 -c k.cu");
	r = translate("-std=c11 -c k.cu", NULL);
	cr_assert_str_eq(r.nvcc, "-c k.cu");
	cr_assert_not_null(strstr(r.notes, "-std=c11 dropped"), "%s", r.notes);
	release(&r);
	r = translate("-std=c++17 -c k.cu", NULL);
	cr_assert_null(strstr(r.notes, "cc.std"), "%s", r.notes);
	release(&r);
}

Test(hostcc, linker_options)
{
	EXPECT("-Wl,-rpath,/opt/lib,-z,defs k.cu -o app",
	       "-Xlinker -rpath -Xlinker /opt/lib -Xlinker -z -Xlinker defs k.cu -o app");
	/* Spaces and commas survive nvcc's shell in double quotes; $ is nvcc's to escape. */
	EXPECT("'-Wl,-rpath,/x y' k.cu", "-Xlinker -rpath -Xlinker '\"/x y\"' k.cu");
	EXPECT("'-Wl,-rpath,$ORIGIN/lib' k.cu", "-Xlinker -rpath -Xlinker '$ORIGIN/lib' k.cu");
	EXPECT("-Xlinker --version-script=a,b k.cu", "-Xlinker '\"--version-script=a,b\"' k.cu");
	EXPECT("-T link.ld -u sym -e start k.cu", "-Xlinker -T -Xlinker link.ld -Xlinker -u -Xlinker sym -Xlinker -e -Xlinker start k.cu");
	EXPECT("-Tlink.ld k.cu", "-Xlinker -Tlink.ld k.cu");
	struct result r = translate("\"-Wl,-rpath,it's\" k.cu", NULL);
	cr_assert_not_null(strstr(r.notes, "[cc.quote]"), "%s", r.notes);
	release(&r);
}

Test(hostcc, host_options)
{
	EXPECT("-pthread -static -rdynamic -Werror -Werror=vla -time -march=native -m32 -c k.cu",
	       "-Xcompiler -pthread -Xcompiler -static -Xcompiler -rdynamic -Xcompiler -Werror -Xcompiler "
	       "-Werror=vla -Xcompiler -time -Xcompiler -march=native -Xcompiler -m32 -c k.cu");
	EXPECT("-fsanitize=address,undefined -c k.cu", "-Xcompiler '-fsanitize=address\\,undefined' -c k.cu");
	EXPECT("-iquote 'sp dir' -c k.cu", "-Xcompiler -iquote -Xcompiler ''\\''sp dir'\\''' -c k.cu");
	EXPECT("-Wa,--noexecstack -c k.cu", "-Xcompiler '-Wa\\,--noexecstack' -c k.cu");
	EXPECT("-g3 -ggdb -Os -c k.cu", "-Xcompiler -g3 -Xcompiler -ggdb -Xcompiler -Os -c k.cu");
	EXPECT("-O -c k.cu", "-O1 -c k.cu");
	EXPECT("-m64 -Wreorder -Wno-deprecated-declarations -w -c k.cu",
	       "-m64 -Wreorder -Wno-deprecated-declarations -w -c k.cu");
	EXPECT("--param max-inline-insns-single=100 -c k.cu",
	       "-Xcompiler --param -Xcompiler max-inline-insns-single=100 -c k.cu");
}

Test(hostcc, preprocessor_and_paths)
{
	EXPECT("-DFOO=a,b -D BAR=1 -UBAZ -c k.cu", "'-DFOO=a\\,b' -DBAR=1 -UBAZ -c k.cu");
	EXPECT("'-DMSG=\"a b\"' -c k.cu", "'-DMSG=\"a b\"' -c k.cu");
	EXPECT("-I 'sp dir/inc' -Iinc -isystem/sys -include pre.h -c 'my k.cu' -o 'o u t.o'",
	       "'-Isp dir/inc' -Iinc -isystem /sys -include pre.h -c 'my k.cu' -o 'o u t.o'");
	EXPECT("-ok.o -c k.cu", "-o k.o -c k.cu");
	/* -lib would be nvcc's -lib mode. */
	EXPECT("k.cu -lib -lcudart -L/opt/lib", "k.cu -l ib -lcudart -L/opt/lib");
	/* nvcc's own options keep their values. */
	EXPECT("-arch sm_90 -gencode arch=compute_80,code=sm_80 -Xcompiler -fopenmp --expt-relaxed-constexpr -c k.cu",
	       "-arch sm_90 -gencode arch=compute_80,code=sm_80 -Xcompiler -fopenmp --expt-relaxed-constexpr -c k.cu");
}

Test(hostcc, dependency_files)
{
	/* gcc writes obj/k.d for -MD -o obj/k.o; nvcc would write ./k.d. */
	struct result r = translate("-MD -c k.cu -o obj/k.o", NULL);
	cr_assert_str_eq(r.nvcc, "-MD -c k.cu -o obj/k.o -MF obj/k.d");
	cr_assert_not_null(strstr(r.notes, "-MF obj/k.d added"), "%s", r.notes);
	release(&r);
	EXPECT("-MMD -MP -c src/k.cu", "-MMD -MP -c src/k.cu -MF k.d");
	EXPECT("-MD -MFk.d -MT k.o -c k.cu -o k.o", "-MD -MF k.d -MT k.o -c k.cu -o k.o");
	EXPECT("-MD -MF k.d -MQ '$(OBJ)/k.o' -c k.cu", "-MD -MF k.d -MT '$$(OBJ)/k.o' -c k.cu");
}

Test(hostcc, response_files)
{
	char *dir = test_tmpdir();
	char *rsp = test_write(dir, "args.rsp", "-fPIC -c k.cu\n-o k.o\n");
	char *line = concat("@", rsp, NULL);
	char *args[] = { line, NULL };
	struct hostcc hc;
	hostcc_parse(&hc, args, 1);
	cr_assert(hc.expanded);
	cr_assert_eq(hc.ncuda, 1);
	cr_assert_eq(hc.mode, HOSTCC_COMPILE);
	cr_assert_str_eq(hc.output, "k.o");
	hostcc_release(&hc);
	/* Nested; one that names itself stops at the depth limit; a directory and a missing file
	 * stay as written (libiberty's expandargv() would end the process on the directory). */
	char *outer = test_write(dir, "outer.rsp", "-O2 @args.rsp\n");
	char *self = test_write(dir, "self.rsp", "-g @self.rsp\n");
	char *at_outer = concat("@", outer, NULL), *at_self = concat("@", self, NULL);
	char *at_dir = concat("@", dir, NULL), *at_none = concat("@", dir, "/none.rsp", NULL);
	char *cwd = getcwd(NULL, 0);
	cr_assert_eq(chdir(dir), 0);
	char *more[] = { at_outer, at_self, at_dir, at_none, NULL };
	hostcc_parse(&hc, more, 4);
	cr_assert(chdir(cwd) == 0);
	cr_assert(hc.expanded);
	cr_assert_eq(hc.ncuda, 1);
	cr_assert_str_eq(hc.args.v[0], "-O2");
	cr_assert_str_eq(hc.args.v[1], "-fPIC");
	size_t g = 0;
	for (size_t i = 0; i < hc.args.n; i++)
		g += !strcmp(hc.args.v[i], "-g");
	cr_assert_eq(g, 16, "%zu", g);
	cr_assert_str_eq(hc.args.v[hc.args.n - 2], at_dir);
	cr_assert_str_eq(hc.args.v[hc.args.n - 1], at_none);
	hostcc_release(&hc);
	free(cwd);
	free(at_outer);
	free(at_self);
	free(at_dir);
	free(at_none);
	free(outer);
	free(self);
	free(line);
	free(rsp);
	test_rmtree(dir);
	free(dir);
}

Test(hostcc, quoting)
{
	char *q = hostcc_quote_xcompiler("-fPIC");
	cr_assert_str_eq(q, "-fPIC");
	free(q);
	q = hostcc_quote_xcompiler("-DX=$HOME a");
	cr_assert_str_eq(q, "'-DX=$HOME a'");
	free(q);
	cr_assert_null(hostcc_quote_xcompiler("it's"));
	q = hostcc_quote_xlinker("$ORIGIN");
	cr_assert_str_eq(q, "$ORIGIN");
	free(q);
	q = hostcc_quote_xlinker("a,b");
	cr_assert_str_eq(q, "\"a,b\"");
	free(q);
	cr_assert_null(hostcc_quote_xlinker("a\"b"));
}
