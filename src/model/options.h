/* options: the nvcc option table.
 *
 * One table, sorted by long name (strcmp order, checked by a unit test), of every option nvcc
 * 13.0 accepts (`nvcc --help`, plus the accepted-but-hidden ones) and of those that 11.8 and
 * 12.x accepted and 13.0 dropped. Names are stored without their leading dashes: nvcc spells
 * a long name with two dashes and a short name with one, and accepts no other mix.
 *
 * Value forms nvcc accepts for an option that takes a value:
 *   --long=VALUE   --long VALUE   -short=VALUE   -short VALUE
 *   -sVALUE        only for the options marked OPT_ATTACHED (-I -D -U -L -l -O -t)
 * OPT_LIST options take comma lists and may be repeated; their values accumulate.
 */
#ifndef NVSHIM_OPTIONS_H
#define NVSHIM_OPTIONS_H

#include <stddef.h>

enum option_flags {
	OPT_VALUE = 1 << 0,    /* takes a value */
	OPT_LIST = 1 << 1,     /* the value is a comma list */
	OPT_ATTACHED = 1 << 2, /* -sVALUE accepted */
	OPT_HIDDEN = 1 << 3,   /* accepted by 13.0 but not listed in --help */
	OPT_DROPPED = 1 << 4,  /* accepted by 11.8/12.x, rejected by 13.0 */
};

enum option_kind {
	OPT_KIND_MODE,         /* selects the compilation phase: -c, -dc, -E, -ptx, -lib, ... */
	OPT_KIND_TARGET,       /* -arch, -code, -gencode */
	OPT_KIND_INPUT,        /* how inputs are read: -x, --options-file */
	OPT_KIND_OUTPUT,       /* where outputs and temporaries go: -o, -odir, -keep, ... */
	OPT_KIND_PREPROCESSOR, /* -D, -U, -I, -isystem, -include */
	OPT_KIND_DEPENDENCY,   /* -MD, -MF, -MT, ... */
	OPT_KIND_HOST,         /* host compiler: -ccbin, -Xcompiler, -std, ... */
	OPT_KIND_LINK,         /* host link and archive: -l, -L, -Xlinker, -shared, ... */
	OPT_KIND_PASSTHROUGH,  /* handed to one stage: -Xptxas, -Xnvlink, -Xcudafe, -Xcicc, ... */
	OPT_KIND_DEVICE,       /* device code generation and diagnostics */
	OPT_KIND_DRIVER,       /* how nvcc itself runs: -v, --dryrun, -t, ... */
	OPT_KIND_INFO,         /* prints information and compiles nothing: --help, --version, ... */
};

struct nvcc_option {
	const char *name;       /* long name, without "--" */
	const char *short_name; /* short name, without "-"; NULL when there is none */
	unsigned flags;         /* enum option_flags */
	enum option_kind kind;
};

/* The whole table, sorted by name, and its length. */
extern const struct nvcc_option options_table[];
extern const size_t options_count;

/* Look an option up by long name or by short name (no dashes). NULL if unknown. */
const struct nvcc_option *options_find_long(const char *name, size_t len);
const struct nvcc_option *options_find_short(const char *name, size_t len);

/* The option named by -NAME or --NAME exactly, as spelled on a command line. */
const struct nvcc_option *options_find(const char *arg);

const char *options_kind_name(enum option_kind kind);

#endif
