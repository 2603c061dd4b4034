/* link: the link pass, -lcuda for host code that calls the CUDA driver API.
 *
 * Host code that calls cuTensorMapEncodeTiled, cuGetProcAddress, cuLaunchKernelEx, ... needs
 * -lcuda. Without it an executable fails to link (undefined reference) and a shared library,
 * which every Python extension is, links and then fails to load (undefined symbol). libcudart
 * provides cuda* and __cuda*, never cu[A-Z]* driver symbols.
 *
 * For a link (nvcc without -c/-dc/-E/-lib/-dlink/..., with or without -shared, and host
 * compiler links in CC/CXX mode) the pass reads the symbol tables of the inputs (module elf)
 * the way the linker would use them: objects always, archive members only when they would be
 * pulled in (the archive's index against the symbols still undefined at that point, repeated
 * within an archive and within --start-group/--end-group; nvcc links everything in one group;
 * --whole-archive takes every member), -lNAME resolved through -L, $LIBRARY_PATH and the
 * linker's usual directories (-Bstatic and -static honoured). When a driver symbol
 * (cu[A-Z]..., not libcufile's cuFile*, confirmed against the toolkit's stub libcuda.so when
 * it is there) is still undefined and no input or shared library on the line defines it, the
 * pass adds -lcuda once at the end; in CC mode also -L<toolkit>/lib64/stubs when no libcuda.so
 * would be found otherwise (nvcc puts its stubs directory on the linker's path itself). The
 * stub's SONAME is libcuda.so.1, so the result needs libcuda.so.1, the driver's library.
 * Weak references never count (code that uses them checks for NULL). Nothing is added to a
 * -static link (there is no static libcuda) or when no libcuda.so can be found at all.
 *
 * Inputs that are compiled in the same run (nvcc x.cu -o x, gcc main.c -o app) cannot be
 * read before the link: for those, and anything else the pass could not see, the caller runs
 * the link with its stderr held, and when it fails with an undefined reference to a driver
 * symbol (link_undefined_driver_symbol) runs it once more with link_result.retry added.
 *
 * Fail open: a file that cannot be read is skipped (a damaged ELF file or archive with a note
 * naming it), never an error; with nothing to add the command line is unchanged.
 */
#ifndef NVSHIM_LINK_H
#define NVSHIM_LINK_H

#include <stddef.h>

#include "base/argv.h"
#include "model/config.h"
#include "model/hostcc.h"
#include "model/invocation.h"
#include "model/plan.h"

enum link_item_kind {
	LINK_FILE,             /* an input file, read by its contents */
	LINK_SOURCE,           /* a source compiled in the same run: symbols unknown */
	LINK_LIB,              /* -lNAME ("NAME"), -l:FILE (":FILE") */
	LINK_GROUP_START,      /* --start-group, -( */
	LINK_GROUP_END,        /* --end-group, -) */
	LINK_WHOLE_ARCHIVE,    /* --whole-archive */
	LINK_NO_WHOLE_ARCHIVE, /* --no-whole-archive */
	LINK_STATIC,           /* -Bstatic and its synonyms: -l finds archives only */
	LINK_DYNAMIC,          /* -Bdynamic */
};

struct link_item {
	enum link_item_kind kind;
	const char *name;
};

struct link_request {
	struct link_item *v;
	size_t n, alloc;
	struct argv dirs;         /* -L directories, in order */
	struct argv store;        /* owns the names */
	const char *sysroot;      /* --sysroot, or NULL (points into store) */
	unsigned nvcc : 1;        /* an nvcc link: one group; nvcc adds -lcuda's directory itself */
	unsigned is_static : 1;   /* -static: no shared library at all */
	unsigned cuda_named : 1;  /* -lcuda, -l:libcuda.so*, or a libcuda.so* input is on the line */
	unsigned no_retry : 1;    /* nvcc --run: the program's own stderr follows the link's */
};

void link_request_init(struct link_request *r);
void link_request_release(struct link_request *r);
void link_request_add(struct link_request *r, enum link_item_kind kind, const char *name);
/* Feeds words the linker itself sees (from -Wl, / -Xlinker), in order; *skip carries an
 * option's separate value from one word to the next (start it at 0). */
void link_request_linker_word(struct link_request *r, const char *word, int *skip);

/* The link an nvcc invocation does, if it does one (link or --run mode, not a dry run):
 * returns 1 and fills r, else 0. */
int link_request_from_nvcc(struct link_request *r, const struct invocation *inv);
/* The link a gcc/clang command line does (mode link): 1 and r, else 0. */
int link_request_from_hostcc(struct link_request *r, const struct hostcc *hc);

struct link_context {
	const struct config *cfg;
	const char *stubs;          /* the toolkit's directory holding the stub libcuda.so, or NULL */
	const char *toolkit_lib;    /* nvcc links: the toolkit's library directory nvcc searches */
	const char *library_path;   /* $LIBRARY_PATH, or NULL */
	const char *const *system_dirs; /* the linker's own directories; NULL: the usual ones */
};

struct link_result {
	int changed;        /* -lcuda was added */
	char *symbol;       /* the first driver symbol found undefined, or NULL (xmalloc'ed) */
	struct argv retry;  /* what a second run adds when the link fails on a driver symbol;
			     * empty when a retry cannot help */
};

void link_result_init(struct link_result *res);
void link_result_release(struct link_result *res);

/* Adds -lcuda (and the stubs directory) to plan->argv when the inputs need it, with a note
 * [link.lcuda]. Reads files, runs nothing. Returns 1 if the command line changed. */
int link_pass(const struct link_request *req, const struct link_context *ctx, struct plan *plan,
	      struct link_result *res);

/* 1 for a CUDA driver API name: cu[A-Z]..., except libcufile's cuFile*. */
int link_is_driver_name(const char *name);

/* The first driver symbol a linker's stderr reports as undefined (GNU ld: "undefined reference
 * to `cuX'", "undefined reference to symbol 'cuX@@...'"; gold: "undefined reference to 'cuX'";
 * lld and mold: "undefined symbol: cuX"), xmalloc'ed, or NULL. C++ names (with an argument
 * list) and nvlink's device-side messages do not count. */
char *link_undefined_driver_symbol(const char *stderr_text);

/* The toolkit directory holding the stub libcuda.so: next to nvcc (bin/../lib64/stubs,
 * bin/../targets/<arch>/lib/stubs), else under $CUDA_HOME, $CUDA_PATH, /usr/local/cuda.
 * xmalloc'ed, or NULL. */
char *link_find_stubs(const char *nvcc, config_getenv_fn env);
/* The toolkit library directory nvcc links with (bin/../targets/<arch>/lib, else lib64). */
char *link_toolkit_lib(const char *nvcc);

#endif
