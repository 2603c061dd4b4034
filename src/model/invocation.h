/* invocation: an nvcc command line, parsed and classified. Nothing is run to build it.
 *
 * The analysed command line is what nvcc itself acts on:
 *   NVCC_PREPEND_FLAGS + the arguments (with @file response files and --options-file files
 *   expanded in place) + NVCC_APPEND_FLAGS.
 * Every element of it is classified by the option table: an option with its value, an input
 * file with its kind, or an unknown option (kept, in place). The arguments as given are kept
 * unchanged in `argv`; nvcc applies the environment flags itself, so they never go twice.
 */
#ifndef NVSHIM_INVOCATION_H
#define NVSHIM_INVOCATION_H

#include <stddef.h>

#include "base/argv.h"
#include "model/options.h"

enum inv_mode {
	MODE_LINK, /* the default: compile every source and link */
	MODE_COMPILE,
	MODE_DEVICE_C,
	MODE_DEVICE_W,
	MODE_DEVICE_LINK,
	MODE_LIB,
	MODE_RUN,
	MODE_PREPROCESS,
	MODE_DEPENDENCIES,
	MODE_CUDA,
	MODE_CUBIN,
	MODE_FATBIN,
	MODE_PTX,
	MODE_OPTIX_IR,
	MODE_LTOIR,
};

enum input_kind {
	INPUT_CUDA,
	INPUT_C,
	INPUT_CXX,
	INPUT_PREPROCESSED, /* .i, .ii, .cup */
	INPUT_PTX,
	INPUT_CUBIN,
	INPUT_FATBIN,
	INPUT_LTOIR,
	INPUT_OBJECT,
	INPUT_ARCHIVE,
	INPUT_SHARED,
	INPUT_OTHER,
};

enum arg_source {
	SOURCE_COMMAND_LINE,
	SOURCE_PREPEND,       /* NVCC_PREPEND_FLAGS */
	SOURCE_APPEND,        /* NVCC_APPEND_FLAGS */
	SOURCE_RESPONSE_FILE, /* @file */
	SOURCE_OPTIONS_FILE,  /* --options-file / -optf */
};

enum arg_class { ARG_OPTION, ARG_INPUT, ARG_UNKNOWN };

#define INVOCATION_NOT_IN_ARGV ((size_t)-1)

struct inv_arg {
	enum arg_class what;
	const struct nvcc_option *opt; /* ARG_OPTION only */
	const char *value;             /* the option's value, NULL if it has none (or it is missing) */
	enum input_kind input;         /* ARG_INPUT only */
	size_t pos;                    /* index of its first element in `expanded` */
	unsigned span;                 /* elements it takes in `expanded`: 1, or 2 for "-o file" */
	enum arg_source source;
};

struct invocation {
	struct argv argv;     /* the arguments as given, without the program name */
	struct argv expanded; /* the analysed command line (see above) */
	enum arg_source *sources; /* for each element of `expanded` */
	size_t *argv_index;       /* for each element of `expanded`: its index in `argv`, or
				   * INVOCATION_NOT_IN_ARGV when it came from the environment or a file */
	struct inv_arg *args;
	size_t nargs;
	enum inv_mode mode;
	const char *output;   /* the last -o value, or NULL */
	const char *language; /* the -x value, or NULL */
	unsigned info : 1;    /* --help, --version, --list-gpu-* : prints, compiles nothing */
	unsigned dryrun : 1;
	unsigned verbose : 1;
	unsigned modes_conflict : 1; /* more than one mode option was given */
	size_t ninputs;
	size_t nunknown;
	size_t files_read; /* response and options files expanded */
	size_t meta_alloc; /* elements `sources` and `argv_index` have room for */
};

/* Parses args[0..n) (without the program name). `env` gives NVCC_PREPEND_FLAGS and
 * NVCC_APPEND_FLAGS; pass getenv or a test double. Files that cannot be read are kept as
 * they are written, exactly as nvcc would see them. */
typedef const char *(*invocation_getenv_fn)(const char *name);
void invocation_parse(struct invocation *inv, char *const *args, size_t n, invocation_getenv_fn env);
void invocation_release(struct invocation *inv);

/* The last occurrence of the option with this long name, or NULL. */
const struct inv_arg *invocation_find(const struct invocation *inv, const char *long_name);
/* The kind an input path has, by suffix, or by `language` (-x) for source files. */
enum input_kind invocation_input_kind(const char *path, const char *language);

const char *invocation_mode_name(enum inv_mode mode);
const char *invocation_input_kind_name(enum input_kind kind);
const char *invocation_source_name(enum arg_source source);

/* The analysed line less the environment's flags and the --options-file options, whose files'
 * arguments stand in their place: the line nvcc acts on, with nothing left in a file (appended
 * to `out`). */
void invocation_flatten(const struct invocation *inv, struct argv *out);

/* Splits a comma list value into `out` (appending). Empty items are kept out. */
void invocation_split_list(struct argv *out, const char *value);

#endif
