/* libiberty's config.h for the subset nvshim builds (third_party/README.md): written by hand for
 * Linux with glibc or musl, in place of the one libiberty's configure script writes. */
#define HAVE_LIMITS_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRING_H 1
#define HAVE_STRINGS_H 1
#define HAVE_UNISTD_H 1
#define HAVE_SYS_PARAM_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_STDINT_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_DECL_CALLOC 1
#define HAVE_DECL_MALLOC 1
#define HAVE_DECL_REALLOC 1
#define HAVE_GETCWD 1
#define HAVE_REALPATH 1
#define HAVE_STRERROR 1
#define HAVE_STRSIGNAL 1
#define HAVE_VASPRINTF 1
#define STDC_HEADERS 1
