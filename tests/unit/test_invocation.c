#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "model/invocation.h"

static const char *prepend, *append_;
static const char *fake_env(const char *name)
{
	if (!strcmp(name, "NVCC_PREPEND_FLAGS"))
		return prepend;
	if (!strcmp(name, "NVCC_APPEND_FLAGS"))
		return append_;
	return NULL;
}

static void parse(struct invocation *inv, const char *line)
{
	char **v = buildargv(line);
	size_t n = 0;
	while (v && v[n])
		n++;
	invocation_parse(inv, v, n, fake_env);
	freeargv(v);
}

static void reset(void) { prepend = append_ = NULL; }
TestSuite(invocation, .init = reset);

static const struct inv_arg *nth_option(const struct invocation *inv, size_t k)
{
	for (size_t i = 0; i < inv->nargs; i++)
		if (inv->args[i].what == ARG_OPTION && k-- == 0)
			return &inv->args[i];
	return NULL;
}

/* Every value form nvcc accepts, checked one by one: (command line, long name, value). */
Test(invocation, value_forms)
{
	static const struct {
		const char *line, *name, *value;
		unsigned span;
	} cases[] = {
		{ "-o x.o", "output-file", "x.o", 2 },
		{ "-o=x.o", "output-file", "x.o", 1 },
		{ "--output-file x.o", "output-file", "x.o", 2 },
		{ "--output-file=x.o", "output-file", "x.o", 1 },
		{ "-I/inc", "include-path", "/inc", 1 },
		{ "-I /inc", "include-path", "/inc", 2 },
		{ "-I=/inc", "include-path", "/inc", 1 },
		{ "-DFOO=1,BAR", "define-macro", "FOO=1,BAR", 1 },
		{ "-D=X", "define-macro", "X", 1 },
		{ "-lcuda", "library", "cuda", 1 },
		{ "-L/lib", "library-path", "/lib", 1 },
		{ "-Ufoo", "undefine-macro", "foo", 1 },
		{ "-O3", "optimize", "3", 1 },
		{ "-O=3", "optimize", "3", 1 },
		{ "-Ofc 1", "Ofast-compile", "1", 2 },
		{ "-Ofc1", "optimize", "fc1", 1 }, /* nvcc reads this as -O fc1, and rejects it */
		{ "-t2", "threads", "2", 1 },
		{ "-arch sm_80", "gpu-architecture", "sm_80", 2 },
		{ "-arch=sm_80", "gpu-architecture", "sm_80", 1 },
		{ "--gpu-architecture=sm_90a", "gpu-architecture", "sm_90a", 1 },
		{ "-gencode=arch=compute_80,code=sm_80", "generate-code", "arch=compute_80,code=sm_80", 1 },
		{ "-gencode arch=compute_90,code=[sm_90,compute_90]", "generate-code",
		  "arch=compute_90,code=[sm_90,compute_90]", 2 },
		{ "--generate-code=arch=compute_80,code=\"sm_80,compute_80\"", "generate-code",
		  "arch=compute_80,code=sm_80,compute_80", 1 },
		{ "-Xcompiler=-fPIC", "compiler-options", "-fPIC", 1 },
		{ "-Xcompiler -fPIC,-O2", "compiler-options", "-fPIC,-O2", 2 },
		{ "-Xcudafe --diag_suppress=177", "cudafe-options", "--diag_suppress=177", 2 },
		{ "-rdc=true", "relocatable-device-code", "true", 1 },
		{ "-rdc true", "relocatable-device-code", "true", 2 },
		{ "-std=c++17", "std", "c++17", 1 },
		{ "-x cu", "x", "cu", 2 },
		{ "-lineinfo", "generate-line-info", NULL, 1 },
		{ "-MF deps.d", "dependency-output", "deps.d", 2 },
		{ "-ccbin=g++", "compiler-bindir", "g++", 1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct invocation inv;
		parse(&inv, cases[i].line);
		const struct inv_arg *a = nth_option(&inv, 0);
		cr_assert_not_null(a, "%s: no option", cases[i].line);
		cr_assert_str_eq(a->opt->name, cases[i].name, "%s", cases[i].line);
		if (cases[i].value)
			cr_assert_str_eq(a->value, cases[i].value, "%s", cases[i].line);
		else
			cr_assert_null(a->value, "%s", cases[i].line);
		cr_assert_eq(a->span, cases[i].span, "%s", cases[i].line);
		cr_assert_eq(inv.nunknown, 0, "%s", cases[i].line);
		invocation_release(&inv);
	}
}

/* nvcc rejects these as unknown options; nvshim keeps them, in place, as unknown. */
Test(invocation, forms_nvcc_rejects_are_unknown_and_kept)
{
	static const char *const lines[] = { "-ofoo.o", "-archsm_80", "--arch=sm_80", "-xcu",
					     "-MFx.d", "-isystem/usr/include", "-gpu-architecture=sm_80",
					     "-Wfoo", "--bogus-option" };
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct invocation inv;
		parse(&inv, lines[i]);
		cr_assert_eq(inv.nunknown, 1, "%s", lines[i]);
		cr_assert_eq(inv.args[0].what, ARG_UNKNOWN, "%s", lines[i]);
		cr_assert_str_eq(inv.expanded.v[0], lines[i]);
		invocation_release(&inv);
	}
}

Test(invocation, unknown_options_stay_in_place)
{
	struct invocation inv;
	parse(&inv, "-c --weird a.cu -o a.o -Wfoo");
	cr_assert_eq(inv.nunknown, 2);
	cr_assert_str_eq(inv.argv.v[1], "--weird");
	cr_assert_str_eq(inv.argv.v[5], "-Wfoo");
	cr_assert_eq(inv.args[1].what, ARG_UNKNOWN);
	cr_assert_eq(inv.args[1].pos, 1);
	invocation_release(&inv);
}

Test(invocation, modes)
{
	static const struct {
		const char *line;
		enum inv_mode mode;
	} cases[] = {
		{ "a.cu", MODE_LINK },		  { "-c a.cu", MODE_COMPILE },
		{ "-dc a.cu", MODE_DEVICE_C },	  { "--device-c a.cu", MODE_DEVICE_C },
		{ "-dlink a.o", MODE_DEVICE_LINK }, { "-lib a.o", MODE_LIB },
		{ "-E a.cu", MODE_PREPROCESS },	  { "-M a.cu", MODE_DEPENDENCIES },
		{ "-MM a.cu", MODE_DEPENDENCIES },  { "-ptx a.cu", MODE_PTX },
		{ "-cubin a.cu", MODE_CUBIN },	  { "-fatbin a.cu", MODE_FATBIN },
		{ "--run a.cu", MODE_RUN },	  { "-c -MD a.cu", MODE_COMPILE },
		{ "-optix-ir a.cu", MODE_OPTIX_IR }, { "-ltoir a.cu", MODE_LTOIR },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct invocation inv;
		parse(&inv, cases[i].line);
		cr_assert_eq(inv.mode, cases[i].mode, "%s: %s", cases[i].line,
			     invocation_mode_name(inv.mode));
		cr_assert_not(inv.modes_conflict);
		invocation_release(&inv);
	}
	struct invocation inv;
	parse(&inv, "-c -E a.cu");
	cr_assert(inv.modes_conflict);
	invocation_release(&inv);
	parse(&inv, "--version");
	cr_assert(inv.info);
	invocation_release(&inv);
	parse(&inv, "-c a.cu --dryrun -v");
	cr_assert(inv.dryrun && inv.verbose && !inv.info);
	invocation_release(&inv);
}

Test(invocation, inputs_by_suffix_and_language)
{
	struct invocation inv;
	parse(&inv, "a.cu b.c c.cpp d.cc e.cxx f.o g.a h.so i.ptx j.cubin k.fatbin l.ii m.so.1 n.txt -");
	static const enum input_kind want[] = { INPUT_CUDA, INPUT_C, INPUT_CXX, INPUT_CXX,
						INPUT_CXX, INPUT_OBJECT, INPUT_ARCHIVE, INPUT_SHARED,
						INPUT_PTX, INPUT_CUBIN, INPUT_FATBIN, INPUT_PREPROCESSED,
						INPUT_SHARED, INPUT_OTHER, INPUT_OTHER };
	cr_assert_eq(inv.ninputs, 15);
	for (size_t i = 0; i < 15; i++)
		cr_assert_eq(inv.args[i].input, want[i], "%s: %s", inv.expanded.v[i],
			     invocation_input_kind_name(inv.args[i].input));
	invocation_release(&inv);

	/* -x applies to every source wherever it stands; objects keep their kind. */
	parse(&inv, "a.cpp -x cu b.c - x.o");
	cr_assert_eq(inv.args[0].input, INPUT_CUDA);
	cr_assert_eq(inv.args[2].input, INPUT_CUDA);
	cr_assert_eq(inv.args[3].input, INPUT_CUDA, "stdin with -x cu");
	cr_assert_eq(inv.args[4].input, INPUT_OBJECT);
	invocation_release(&inv);

	/* The value of an option is not an input. */
	parse(&inv, "-o a.cu -I inc b.cu");
	cr_assert_eq(inv.ninputs, 1);
	cr_assert_str_eq(inv.output, "a.cu");
	invocation_release(&inv);
}

Test(invocation, repeated_options_are_all_recorded)
{
	struct invocation inv;
	parse(&inv, "-arch=sm_80 -arch=sm_86 -I a -I b -Ic");
	cr_assert_str_eq(invocation_find(&inv, "gpu-architecture")->value, "sm_86");
	int includes = 0;
	for (size_t i = 0; i < inv.nargs; i++)
		if (inv.args[i].what == ARG_OPTION && !strcmp(inv.args[i].opt->name, "include-path"))
			includes++;
	cr_assert_eq(includes, 3);
	invocation_release(&inv);
}

Test(invocation, comma_lists_split)
{
	struct argv out = ARGV_INIT;
	invocation_split_list(&out, "sm_80,,compute_80,");
	cr_assert_eq(out.n, 2);
	cr_assert_str_eq(out.v[0], "sm_80");
	cr_assert_str_eq(out.v[1], "compute_80");
	argv_release(&out);
}

Test(invocation, environment_flags_are_analysed_but_not_part_of_argv)
{
	struct invocation inv;
	prepend = "-DPRE '-DQ=a b'";
	append_ = "-lineinfo";
	parse(&inv, "-c a.cu");
	cr_assert_eq(inv.argv.n, 2);
	cr_assert_eq(inv.expanded.n, 5);
	cr_assert_str_eq(inv.expanded.v[0], "-DPRE");
	cr_assert_str_eq(inv.expanded.v[1], "-DQ=a b");
	cr_assert_eq(inv.sources[0], SOURCE_PREPEND);
	cr_assert_eq(inv.sources[2], SOURCE_COMMAND_LINE);
	cr_assert_str_eq(inv.expanded.v[4], "-lineinfo");
	cr_assert_eq(inv.sources[4], SOURCE_APPEND);
	cr_assert_eq(inv.mode, MODE_COMPILE);
	invocation_release(&inv);
}

Test(invocation, response_files_nested_quoted_and_missing)
{
	char *dir = test_tmpdir();
	char *inner = test_write(dir, "inner.rsp", "-DINNER \"-DSP=a b\" 'x y.cu'\n");
	char *outer_text = xasprintf("-c @%s -o out.o\n", inner);
	char *outer = test_write(dir, "outer.rsp", outer_text);
	char *line = xasprintf("-O2 @%s @%s/missing.rsp", outer, dir);
	struct invocation inv;
	parse(&inv, line);
	const char *want[] = { "-O2", "-c", "-DINNER", "-DSP=a b", "x y.cu", "-o", "out.o", NULL };
	for (size_t i = 0; want[i]; i++)
		cr_assert_str_eq(inv.expanded.v[i], want[i], "element %zu", i);
	cr_assert_eq(inv.sources[0], SOURCE_COMMAND_LINE);
	cr_assert_eq(inv.sources[3], SOURCE_RESPONSE_FILE);
	/* A file that cannot be read stays as written: nvcc will say what it thinks of it. */
	cr_assert_eq(strncmp(inv.expanded.v[7], "@", 1), 0);
	cr_assert_eq(inv.args[inv.nargs - 1].what, ARG_INPUT);
	cr_assert_str_eq(inv.output, "out.o");
	cr_assert_eq(inv.mode, MODE_COMPILE);
	cr_assert_eq(inv.argv.n, 3, "argv keeps the @file arguments as given");
	invocation_release(&inv);
	test_rmtree(dir);
	free(inner);
	free(outer);
	free(outer_text);
	free(line);
	free(dir);
}

Test(invocation, options_files_comma_lists_nested_and_missing)
{
	char *dir = test_tmpdir();
	char *nested = test_write(dir, "nested.opts", "-DNESTED\n");
	char *t1 = xasprintf("-c \"-I/path with space\" --options-file %s\n", nested);
	char *f1 = test_write(dir, "one.opts", t1);
	char *f2 = test_write(dir, "two.opts", "a.cu -o a.o\n");
	char *line = xasprintf("-optf %s,%s --options-file=%s/missing.opts", f1, f2, dir);
	struct invocation inv;
	parse(&inv, line);
	cr_assert_eq(inv.mode, MODE_COMPILE);
	cr_assert_str_eq(inv.output, "a.o");
	cr_assert_eq(inv.ninputs, 1);
	int saw_space = 0, saw_nested = 0;
	for (size_t i = 0; i < inv.nargs; i++) {
		const struct inv_arg *a = &inv.args[i];
		if (a->what == ARG_OPTION && !strcmp(a->opt->name, "include-path"))
			saw_space = !strcmp(a->value, "/path with space") &&
				    a->source == SOURCE_OPTIONS_FILE;
		if (a->what == ARG_OPTION && !strcmp(a->opt->name, "define-macro"))
			saw_nested = !strcmp(a->value, "NESTED");
	}
	cr_assert(saw_space);
	cr_assert(saw_nested);
	cr_assert_eq(inv.nunknown, 0);
	invocation_release(&inv);
	test_rmtree(dir);
	free(nested);
	free(t1);
	free(f1);
	free(f2);
	free(line);
	free(dir);
}

Test(invocation, options_file_that_includes_itself_ends)
{
	char *dir = test_tmpdir();
	char *path = xasprintf("%s/self.opts", dir);
	char *text = xasprintf("-DX --options-file %s\n", path);
	free(test_write(dir, "self.opts", text));
	char *line = xasprintf("--options-file %s", path);
	struct invocation inv;
	parse(&inv, line);
	cr_assert_gt(inv.expanded.n, 2);
	cr_assert_lt(inv.expanded.n, 100);
	invocation_release(&inv);
	test_rmtree(dir);
	free(path);
	free(text);
	free(line);
	free(dir);
}

Test(invocation, empty_command_line)
{
	struct invocation inv;
	invocation_parse(&inv, NULL, 0, fake_env);
	cr_assert_eq(inv.nargs, 0);
	cr_assert_eq(inv.mode, MODE_LINK);
	cr_assert_null(inv.expanded.v[0]);
	invocation_release(&inv);
}

/* Options that older nvcc accepted and 13.0 dropped are known, and marked. */
Test(invocation, dropped_and_hidden_options_are_recognised)
{
	struct invocation inv;
	parse(&inv, "-m32 -Xcudafe --diag_suppress=1 -dQ true -c a.cu");
	cr_assert_eq(inv.nunknown, 0);
	cr_assert_eq(inv.args[0].what, ARG_OPTION);
	cr_assert(inv.args[0].opt->flags & OPT_DROPPED);
	cr_assert(inv.args[1].opt->flags & OPT_HIDDEN);
	cr_assert_str_eq(inv.args[2].opt->name, "version-ident");
	cr_assert_str_eq(inv.args[2].value, "true");
	cr_assert_eq(inv.ninputs, 1);
	invocation_release(&inv);
}

/* Found by tests/fuzz: libiberty's expandargv() exits on "@dir"; and a file that names itself
 * twice must not double the work at every level. */
Test(invocation, response_file_that_is_a_directory_or_names_itself_twice)
{
	char *dir = test_tmpdir();
	char *line = xasprintf("-c @%s k.cu", dir);
	struct invocation inv;
	parse(&inv, line);
	cr_assert_eq(inv.expanded.n, 3);
	cr_assert_eq(inv.expanded.v[1][0], '@', "a directory is kept as written");
	invocation_release(&inv);
	free(line);

	char *path = xasprintf("%s/twice.rsp", dir);
	char *text = xasprintf("-DX @%s @%s\n", path, path);
	free(test_write(dir, "twice.rsp", text));
	line = xasprintf("@%s", path);
	parse(&inv, line);
	cr_assert_eq(inv.files_read, 256);
	cr_assert_lt(inv.expanded.n, 1000);
	invocation_release(&inv);
	test_rmtree(dir);
	free(path);
	free(text);
	free(line);
	free(dir);
}

/* The line with nothing left in a file: an options file's arguments in its place, the
 * environment's flags left to nvcc. */
Test(invocation, flatten_reads_options_files_in_place)
{
	char *dir = test_tmpdir();
	char *opt = test_write(dir, "args.opt", "-gencode arch=compute_80,code=sm_80 -o app\n");
	char *line = xasprintf("-c k.cu -optf %s -DX=1", opt);
	prepend = "-DP=1";
	struct invocation inv;
	parse(&inv, line);
	struct argv out = ARGV_INIT;
	invocation_flatten(&inv, &out);
	char *got = argv_join(&out, " ");
	cr_assert_str_eq(got, "-c k.cu -gencode arch=compute_80,code=sm_80 -o app -DX=1");
	free(got);
	argv_release(&out);
	invocation_release(&inv);
	unlink(opt);
	rmdir(dir);
	free(line);
	free(opt);
	free(dir);
}
