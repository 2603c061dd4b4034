/* linefix: the upgrade breaks one changed option fixes, read from a failed run's stderr. */
#include <criterion/criterion.h>
#include <string.h>

#include "upgrade/linefix.h"

static unsigned read_text(const char *text, struct linefix_found *f)
{
	linefix_found_init(f);
	return linefix_read(text, f);
}

Test(linefix, reads_cccl_dialect_errors_and_their_follow_ons)
{
	struct linefix_found f;
	const char *gcc = "In file included from t.cu:1:\n"
			  "/x/include/cccl/thrust/detail/config/cpp_dialect.h:78:6: error: #error Thrust requires at least "
			  "C++17. Define CCCL_IGNORE_DEPRECATED_CPP_DIALECT to suppress this message.\n"
			  "/x/include/cccl/cuda/std/__internal/cpp_dialect.h:40:6: error: #error libcu++ requires at least C++ "
			  "17. Define CCCL_IGNORE_DEPRECATED_CPP_DIALECT to suppress this message.\n"
			  "/x/include/cccl/cuda/std/detail/libcxx/include/array:491:75: error: expected constructor\n";
	cr_assert_eq(read_text(gcc, &f), LINEFIX_DIALECT);
	linefix_found_release(&f);
	/* an error of the program's own beside them: nothing */
	char *own = NULL;
	cr_assert(asprintf(&own, "%st.cu:3:1: error: 'undeclared' was not declared in this scope\n", gcc) > 0);
	cr_assert_eq(read_text(own, &f), 0);
	linefix_found_release(&f);
	free(own);
	/* CCCL's own errors without the dialect #error: not a dialect matter */
	cr_assert_eq(read_text("/x/include/cccl/cub/a.cuh(3): error: expected a \";\"\n", &f), 0);
	linefix_found_release(&f);
}

Test(linefix, reads_vectors_host_compilers_ptx_and_thrust_names)
{
	struct linefix_found f;
	cr_assert_eq(read_text("d4.cu:1:56: error: 'double4' is deprecated: use double4_16a or double4_32a "
			       "[-Werror=deprecated-declarations]\ncc1plus: all warnings being treated as errors\n", &f),
		     LINEFIX_VECTOR);
	cr_assert_str_eq(f.vector_type, "double4");
	linefix_found_release(&f);
	cr_assert_eq(read_text("v.cu(1): error #1444-D: type \"long4\" was declared deprecated (\"use long4_16a or "
			       "long4_32a\")\n", &f), LINEFIX_VECTOR);
	cr_assert_str_eq(f.vector_type, "long4");
	linefix_found_release(&f);
	/* another deprecated type is not one the toolkit's switch covers */
	cr_assert_eq(read_text("x.cu:1:1: error: 'old' is deprecated: use new_16a or new_32a\n", &f), 0);
	linefix_found_release(&f);
	cr_assert_eq(read_text("/c/crt/host_config.h:137:2: error: #error -- unsupported GNU version! gcc versions later "
			       "than 15 are not supported! The nvcc flag\n", &f), LINEFIX_HOSTCC);
	cr_assert_eq(f.host_family, 'g');
	cr_assert_eq(f.host_max, 15);
	linefix_found_release(&f);
	cr_assert_eq(read_text("h.h:144:2: error: #error -- unsupported HOS clang version! The version must be must be "
			       "less than 21 and greater than 3.2 .\n", &f), LINEFIX_HOSTCC);
	cr_assert_eq(f.host_family, 'c');
	cr_assert_eq(f.host_max, 20);
	linefix_found_release(&f);
	cr_assert_eq(read_text("ptxas k.ptx, line 9; fatal   : Unsupported .version 9.5; current version is '9.0'\n"
			       "ptxas fatal   : Ptx assembly aborted due to errors\n", &f), LINEFIX_PTXAS);
	cr_assert_eq(f.ptx_isa, 95);
	cr_assert_eq(f.ptxas_isa, 90);
	linefix_found_release(&f);
	cr_assert_eq(read_text("s.cu(5): error: namespace \"thrust\" has no member \"distance\"\n"
			       "s.cpp:2:40: error: 'make_zip_iterator' is not a member of 'thrust'\n"
			       "s.cpp:3:1: error: no member named 'distance' in namespace 'thrust'\n", &f), LINEFIX_INCLUDE);
	cr_assert_eq(f.names.n, 2);
	cr_assert_str_eq(f.headers.v[0], "thrust/distance.h");
	cr_assert_str_eq(f.headers.v[1], "thrust/iterator/zip_iterator.h");
	linefix_found_release(&f);
	/* a Thrust name nvshim does not know: nothing */
	cr_assert_eq(read_text("s.cu(5): error: namespace \"thrust\" has no member \"no_such_thing\"\n", &f), 0);
	linefix_found_release(&f);
}

Test(linefix, rewrites_the_line)
{
	struct linefix_found f;
	read_text("t.cu:1:1: error: #error CUB requires at least C++17.\n"
		  "t.cu(2): error: namespace \"thrust\" has no member \"distance\"\n", &f);
	f.need |= LINEFIX_VECTOR;
	f.vector_type = strdup("double4");
	char *in[] = { "nvcc", "-std", "c++14", "-c", "t.cu", "--std=gnu++11", NULL };
	struct argv line = ARGV_INIT, out = ARGV_INIT, added = ARGV_INIT;
	argv_pushv(&line, (const char *const *)in);
	cr_assert_eq(linefix_apply(&line, &f, 1, &out, &added), LINEFIX_DIALECT | LINEFIX_VECTOR | LINEFIX_INCLUDE);
	char *s = argv_join(&out, " ");
	cr_assert_str_eq(s, "nvcc -include thrust/distance.h -D__NV_NO_VECTOR_DEPRECATION_DIAG -std c++17 -c t.cu "
			    "--std=gnu++17");
	free(s);
	argv_release(&out);
	argv_release(&added);
	/* cxx_dialect = off: the dialect stays */
	cr_assert_eq(linefix_apply(&line, &f, 0, &out, &added), LINEFIX_VECTOR | LINEFIX_INCLUDE);
	size_t at;
	int split;
	cr_assert_str_eq(linefix_old_dialect(&out, &at, &split), "gnu++11");
	argv_release(&out);
	argv_release(&added);
	argv_release(&line);
	linefix_found_release(&f);
	cr_assert_str_eq(linefix_isa_toolkit(95), "13.5");
	cr_assert_str_eq(linefix_isa_toolkit(88), "12.9");
	cr_assert_str_eq(linefix_isa_toolkit(78), "11.8");
}
