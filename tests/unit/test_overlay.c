#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "upgrade/compat.h"
#include "upgrade/overlay.h"
#include "helpers.h"

Test(overlay, under_and_common_dir)
{
	cr_assert(overlay_under("/a/b", "/a"));
	cr_assert(overlay_under("/a", "/a"));
	cr_assert(!overlay_under("/ab", "/a"));
	cr_assert(overlay_under("/x", "/"));
	char *dirs[] = { "/w/p/tests", "/w/p/src/m", "/w/p/src" };
	char *c = overlay_common_dir(dirs, 3);
	cr_assert_str_eq(c, "/w/p");
	free(c);
	char *one[] = { "/w/p/src" };
	c = overlay_common_dir(one, 1);
	cr_assert_str_eq(c, "/w/p/src");
	free(c);
	char *apart[] = { "/w/pa", "/w/pb/x", "/v" };
	c = overlay_common_dir(apart, 3);
	cr_assert_str_eq(c, "/");
	free(c);
	char *prefix[] = { "/w/pa/x", "/w/p" };
	c = overlay_common_dir(prefix, 2);
	cr_assert_str_eq(c, "/w");
	free(c);
}

Test(overlay, unmap_takes_the_longest_prefix)
{
	struct argv from = ARGV_INIT, to = ARGV_INIT;
	argv_push(&from, "/t/m/tests/");
	argv_push(&to, "tests/");
	argv_push(&from, "/t/m/src/");
	argv_push(&to, "src/");
	argv_push(&from, "/t/m/");
	argv_push(&to, "/w/p/");
	char *out = overlay_unmap("x.o: /t/m/tests/x.cu /t/m/src/m/h.hxx \\\n /t/m/src/m/../u.h /t/m/other/y.h /usr/a.h\n",
				  &from, &to);
	cr_assert_str_eq(out, "x.o: tests/x.cu src/m/h.hxx \\\n src/m/../u.h /w/p/other/y.h /usr/a.h\n");
	free(out);
	out = overlay_unmap("", &from, &to);
	cr_assert_str_eq(out, "");
	free(out);
	argv_release(&from);
	argv_release(&to);
}

/* A map that moves each directory named "in..." under /M. */
static char *to_m(const char *dir, void *arg)
{
	(void)arg;
	return !strncmp(dir, "in", 2) ? concat("/M/", dir, NULL) : NULL;
}

static void check_map(int host, const char *const *in, const char *const *want, size_t count)
{
	struct argv a = ARGV_INIT;
	argv_pushv(&a, in);
	cr_assert_eq(overlay_map_includes(&a, host, to_m, NULL), count);
	char *got = argv_join(&a, " ");
	struct argv w = ARGV_INIT;
	argv_pushv(&w, want);
	char *wanted = argv_join(&w, " ");
	cr_assert_str_eq(got, wanted);
	free(got);
	free(wanted);
	argv_release(&a);
	argv_release(&w);
}

Test(overlay, maps_nvcc_include_directories)
{
	const char *in[] = { "nvcc", "-c", "-Iinc", "-I", "inc2", "--include-path", "inc3,other,inc4",
			     "--include-path=inc5", "-Iother", "-o", "-Iinc.o", "-isystem", "inc6", "-Xcompiler",
			     "-iquote,inc7,-Wall,-Iinc8", "-Xcompiler=-iquoteinc9", "x.cu", NULL };
	const char *want[] = { "nvcc", "-c", "-I/M/inc", "-I", "/M/inc2", "--include-path", "/M/inc3,other,/M/inc4",
			       "--include-path=/M/inc5", "-Iother", "-o", "-Iinc.o", "-isystem", "inc6", "-Xcompiler",
			       "-iquote,/M/inc7,-Wall,-I/M/inc8", "-Xcompiler=-iquote/M/inc9", "x.cu", NULL };
	check_map(0, in, want, 8);
}

Test(overlay, maps_host_compiler_include_directories)
{
	/* no comma lists: a gcc directory may hold a comma */
	const char *in[] = { "c++", "-Iinc,x", "-iquote", "inc2", "-iquoteinc3", "--include-directory=inc4",
			     "--include-directory", "inc5", "-MF", "inc.d", "-idirafter", "inc6", "x.cpp", NULL };
	const char *want[] = { "c++", "-I/M/inc,x", "-iquote", "/M/inc2", "-iquote/M/inc3", "--include-directory=/M/inc4",
			       "--include-directory", "/M/inc5", "-MF", "inc.d", "-idirafter", "inc6", "x.cpp", NULL };
	check_map(1, in, want, 5);
}

Test(overlay, tells_c_from_cplusplus)
{
	struct argv a = ARGV_INIT;
	argv_push(&a, "/usr/bin/cc");
	argv_push(&a, "-c");
	cr_assert(overlay_is_c(&a, "x.c", 1));
	cr_assert(!overlay_is_c(&a, "x.cpp", 1));
	argv_replace(&a, 0, "/usr/bin/g++");
	cr_assert(!overlay_is_c(&a, "x.c", 1));
	argv_push(&a, "-x");
	argv_push(&a, "c");
	cr_assert(overlay_is_c(&a, "x.cpp", 1));
	argv_release(&a);
	argv_push(&a, "nvcc");
	cr_assert(overlay_is_c(&a, "dir/x.c", 0));
	cr_assert(!overlay_is_c(&a, "x.cu", 0));
	argv_release(&a);
}

static int is_link(const char *p)
{
	struct stat sb;
	return !lstat(p, &sb) && S_ISLNK(sb.st_mode);
}

static int is_dir(const char *p)
{
	struct stat sb;
	return !lstat(p, &sb) && S_ISDIR(sb.st_mode);
}

Test(overlay, mirrors_a_tree_and_removes_it)
{
	char *root = test_tmpdir();
	char *tmp = concat(root, "/tmp", NULL); /* inside the tree: the mirror must not mirror itself */
	cr_assert_eq(mkdir(tmp, 0700), 0);
	char *d1 = concat(root, "/inc", NULL), *d2 = concat(root, "/inc/lib", NULL), *d3 = concat(root, "/inc/other", NULL);
	cr_assert_eq(mkdir(d1, 0700) | mkdir(d2, 0700) | mkdir(d3, 0700), 0);
	free(test_write(root, "inc/lib/dev.h", "int dev;\n"));
	free(test_write(root, "inc/lib/sib.h", "int sib;\n"));
	free(test_write(root, "inc/other/y.h", "#include \"../lib/dev.h\"\n"));
	free(test_write(root, "x.cu", "#include <lib/dev.h>\n"));
	struct argv rel = ARGV_INIT, texts = ARGV_INIT;
	argv_push(&rel, "x.cu");
	argv_push(&texts, "#line 1 \"x.cu\"\n#include <lib/dev.h>\n");
	argv_push(&rel, "inc/lib/dev.h");
	argv_push(&texts, "#line 1 \"inc/lib/dev.h\"\nint dev2;\n");
	struct overlay o;
	overlay_init(&o);
	cr_assert_eq(overlay_build(&o, root, tmp, &rel, &texts), 0);
	char *p = concat(o.dir, "/inc/lib", NULL);
	cr_assert(is_dir(p), "%s", p);
	free(p);
	/* a directory with no copy is mirrored too: its `..` stays in the mirror */
	p = concat(o.dir, "/inc/other", NULL);
	cr_assert(is_dir(p));
	free(p);
	p = concat(o.dir, "/inc/other/../lib/dev.h", NULL);
	char *text = test_read(p);
	cr_assert_str_eq(text, "#line 1 \"inc/lib/dev.h\"\nint dev2;\n");
	free(text);
	cr_assert(!is_link(p));
	free(p);
	p = concat(o.dir, "/inc/lib/sib.h", NULL);
	cr_assert(is_link(p));
	free(p);
	p = concat(o.dir, "/tmp", NULL);
	cr_assert(is_dir(p));
	char *inner = concat(p, strrchr(o.top, '/'), NULL);
	struct stat sb;
	cr_assert_neq(lstat(inner, &sb), 0, "the mirror holds itself");
	free(inner);
	free(p);
	/* the user's files as they were */
	text = test_read(d2 = concat(root, "/inc/lib/dev.h", NULL));
	cr_assert_str_eq(text, "int dev;\n");
	free(text);
	free(d2);
	char *top = xstrdup(o.top);
	overlay_remove(&o);
	cr_assert_neq(lstat(top, &sb), 0);
	free(top);
	text = test_read(d2 = concat(root, "/inc/lib/sib.h", NULL));
	cr_assert_str_eq(text, "int sib;\n");
	free(text);
	free(d2);
	/* a placed file in a directory the tree does not have: nothing made, nothing left */
	argv_replace(&rel, 1, "inc/none/dev.h");
	cr_assert_eq(overlay_build(&o, root, tmp, &rel, &texts), -1);
	cr_assert_eq(rmdir(tmp), 0, "the failed mirror left something behind");
	argv_release(&rel);
	argv_release(&texts);
	free(tmp);
	free(d1);
	free(d3);
	free(root);
}

/* compat_rewrite_as: a header's language is the compile's. */
Test(overlay, rewrites_a_header_in_the_compiles_language)
{
	const char *h = "static int a(const cudaDeviceProp &p) { return p.clockRate; }\n"
			"static int b(const cudaDeviceProp *p) { return p->clockRate; }\n";
	struct compat_site site = { "inc/x.h", 1, "clockRate", 0 };
	size_t n = 0;
	char *cxx = compat_rewrite_as(h, "inc/x.h", 1, &site, 1, &n);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(cxx, "#line 1 \"inc/x.h\"\n"
			      "static int a(const cudaDeviceProp &p) { return nvshim_compat_clockRate(&(p)); }\n"
			      "static int b(const cudaDeviceProp *p) { return nvshim_compat_clockRate(p); }\n");
	char *c = compat_rewrite_as(h, "inc/x.h", 0, &site, 1, &n);
	cr_assert_eq(n, 1);
	cr_assert_not_null(strstr(c, "return p->clockRate;"));
	free(cxx);
	free(c);
}

Test(overlay, dedupes_a_dependency_files_first_rule)
{
	/* as nvcc writes it after a retry: the copies' #line names the files again */
	const char *in = "a.o : src/a.cu \\\n"
			 "    /x/runtime.h \\\n"
			 "    src/a.cu \\\n"
			 "    inc/lib/devprop.h \\\n"
			 "    inc/lib/devprop.h \\\n"
			 "    src/local.h \\\n"
			 "    src/local.h\n"
			 "\n"
			 "src/local.h :\n";
	char *out = overlay_dedupe_deps(in);
	cr_assert_str_eq(out, "a.o : src/a.cu \\\n"
			      "    /x/runtime.h \\\n"
			      "    inc/lib/devprop.h \\\n"
			      "    src/local.h\n"
			      "\n"
			      "src/local.h :\n");
	free(out);
	/* gcc's, several on a line: as it was */
	const char *gcc = "x.o: x.c a.h \\\n b.h a.h\n";
	out = overlay_dedupe_deps(gcc);
	cr_assert_str_eq(out, gcc);
	free(out);
	out = overlay_dedupe_deps("");
	cr_assert_str_eq(out, "");
	free(out);
}

Test(overlay, drop_deps_leaves_out_nvshims_own_headers_in_both_formats)
{
	/* nvcc: one prerequisite a line */
	char *a = overlay_drop_deps("k.o : k.cu \\\n    /usr/include/stdio.h \\\n    /opt/p/include/nvshim/compat/runtime.h \\\n"
				    "    /opt/p/include/nvshim/compat/common.h \\\n    /usr/include/x.h\n",
				    "/opt/p/include/nvshim/");
	cr_assert_str_eq(a, "k.o : k.cu \\\n    /usr/include/stdio.h \\\n    /usr/include/x.h\n");
	free(a);
	/* gcc: several a line; the last one dropped */
	a = overlay_drop_deps("h.o: h.cpp /usr/include/a.h /opt/p/include/nvshim/compat/runtime.h \\\n /usr/b.h "
			      "/opt/p/include/nvshim/compat/common.h\n",
			      "/opt/p/include/nvshim/");
	cr_assert_str_eq(a, "h.o: h.cpp /usr/include/a.h \\\n /usr/b.h\n");
	free(a);
	/* a path that only contains the prefix in its middle is kept */
	a = overlay_drop_deps("x.o: /src/opt/p/include/nvshim/y.h\n", "/opt/p/include/nvshim/");
	cr_assert_str_eq(a, "x.o: /src/opt/p/include/nvshim/y.h\n");
	free(a);
}
