/* hostcc: gcc and clang command lines, for nvshim run as the host compiler (CC / CXX).
 *
 * hostcc_parse() classifies a gcc-style command line (@file response files expanded) with a
 * small table of gcc's options: which take their value in the next argument, which are
 * prefixes with the value attached, and how each one reaches nvcc. Options the table does not
 * know are looked up in nvcc's option table (so nvcc options such as -arch or -Xcompiler keep
 * their values), else they are one-word host options. Inputs get a kind by suffix, or from the
 * -x in force before them (gcc's -x applies to the inputs after it, until -x none; `cu` and
 * clang's `cuda` are CUDA). The mode is link unless -c, -S, -E, -M or -MM is given, and
 * information (nothing compiled) with --version, -dumpversion, -print-* or no inputs.
 *
 * hostcc_translate() writes the nvcc command line for a command with CUDA inputs (Kokkos'
 * nvcc_wrapper does this too; the differences: one nvcc run also for dependency files, commas
 * and spaces kept intact, nothing forwarded blindly):
 *   options nvcc knows with gcc's meaning    as they are: -c -o -E -M -MM -MD -MMD -MP -MF -MT
 *        -I -D -U -L -l -include -isystem -g -O0..3 -w -v -shared -m64, nvcc's own options;
 *        values in the forms nvcc accepts, commas in list values escaped as "\,"
 *   -std=gnu++NN                             -std=c++NN (nvcc accepts no GNU dialect)
 *   -std=c11 and other C standards           dropped: a .cu file is CUDA C++
 *   -Wl,a,b   -Xlinker a                     -Xlinker a -Xlinker b (quoted for nvcc's shell)
 *   -T -u -z -e VALUE                        -Xlinker OPTION -Xlinker VALUE
 *   -MQ TARGET                               -MT TARGET, with $ quoted for make
 *   -MD or -MMD without -MF                  -MF <the file gcc would write: output.d>
 *   -O alone                                 -O1 (nvcc's -O needs a level)
 *   everything else: -f*, -m*, -W*, -g3, -Os, -pthread, -static, -Werror, -iquote DIR, ...
 *                                            -Xcompiler OPTION [-Xcompiler VALUE], quoted
 * plus -ccbin <the real host compiler> unless the line chooses one. nvcc hands -Xcompiler
 * values to a shell and splits them at commas: "\," keeps a comma, single quotes keep spaces
 * and $; -Xlinker values are kept whole by double quotes.
 */
#ifndef NVSHIM_HOSTCC_H
#define NVSHIM_HOSTCC_H

#include <stddef.h>

#include "base/argv.h"
#include "model/invocation.h"

enum hostcc_mode {
	HOSTCC_LINK,
	HOSTCC_COMPILE,      /* -c */
	HOSTCC_ASSEMBLE,     /* -S */
	HOSTCC_PREPROCESS,   /* -E */
	HOSTCC_DEPENDENCIES, /* -M / -MM */
	HOSTCC_INFO,         /* nothing compiled: --version, -print-*, no inputs */
};

enum hostcc_action {
	HC_NATIVE,      /* nvcc takes it as it is */
	HC_SPLIT,       /* nvcc takes it with the value as a separate argument (-o, -MF, -isystem) */
	HC_LIST,        /* nvcc takes it with the value attached, a comma list (-D, -I, -L, -l) */
	HC_XCOMPILER,   /* -Xcompiler OPTION [-Xcompiler VALUE] */
	HC_WL,          /* -Wl,a,b */
	HC_XLINKER,     /* -Xlinker VALUE */
	HC_LINKER_PAIR, /* -T VALUE: -Xlinker -T -Xlinker VALUE */
	HC_STD,         /* -std= */
	HC_OPTIMIZE,    /* -O, -O2, -Os */
	HC_MQ,          /* -MQ TARGET */
	HC_LANGUAGE,    /* -x LANG */
	HC_INFO,        /* --version, -dumpversion, -print-*: prints and compiles nothing */
};

enum hostcc_option_flags {
	HC_SEPARATE = 1 << 0, /* the value may be the next argument */
	HC_JOINED = 1 << 1,   /* the name is a prefix: the value may be attached */
};

/* One entry of the gcc option table. */
struct hostcc_option {
	const char *name; /* as spelled, with its dashes */
	unsigned flags;
	enum hostcc_action action;
};

extern const struct hostcc_option hostcc_options[];
extern const size_t hostcc_noptions;

struct hostcc_arg {
	int input;                       /* an input file (or "-") */
	const struct hostcc_option *opt; /* the gcc table's entry, or NULL */
	const struct nvcc_option *nvcc;  /* not in the gcc table: nvcc's, or NULL (unknown) */
	const char *value;               /* the option's value, NULL when it has none */
	size_t pos;                      /* index of its first element in `args` */
	unsigned span;                   /* 1, or 2 when the value is the next argument */
	enum input_kind kind;            /* inputs: by suffix or -x */
};

struct hostcc {
	struct argv args; /* the arguments, @files expanded */
	int expanded;     /* an @file was expanded */
	struct hostcc_arg *v;
	size_t n;
	enum hostcc_mode mode;
	size_t ninputs;
	size_t ncuda;         /* CUDA inputs */
	const char *output;   /* the last -o, or NULL */
	unsigned shared : 1;  /* -shared */
	unsigned is_static : 1; /* -static */
	unsigned deps : 1;    /* -MD or -MMD */
	unsigned deps_file : 1; /* -MF */
	unsigned ccbin : 1;   /* -ccbin / --compiler-bindir */
};

void hostcc_parse(struct hostcc *hc, char *const *args, size_t n);
void hostcc_release(struct hostcc *hc);

/* The table entry for an argument: exact names first, then the longest prefix of a
 * HC_JOINED entry. *attached receives the value written in the same argument (or NULL). */
const struct hostcc_option *hostcc_find(const char *arg, const char **attached);

const char *hostcc_mode_name(enum hostcc_mode mode);

/* Appends to dirs the directories a quoted #include searches after the including file's own, in
 * order: the -iquote ones, then the -I ones. */
void hostcc_quote_dirs(const struct hostcc *hc, struct argv *dirs);

/* The nvcc arguments (without argv[0]) for hc, which has CUDA inputs. ccbin, when not NULL,
 * is passed as -ccbin unless hc chooses a host compiler itself. Notes ("text [rule]") are
 * appended to notes: rules cc.nvcc and cc.translate (routine), cc.std (a changed meaning),
 * cc.quote (an argument that cannot pass nvcc's shell intact; passed as well as it can be). */
void hostcc_translate(const struct hostcc *hc, const char *ccbin, struct argv *out, struct argv *notes);

/* Quoting for one value of -Xcompiler / -Xlinker (xmalloc'ed); NULL when the value holds a
 * character nvcc's shell would mangle whatever is done (' " \ `). */
char *hostcc_quote_xcompiler(const char *value);
char *hostcc_quote_xlinker(const char *value);

#endif
