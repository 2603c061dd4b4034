/* gates: known-bad combinations of toolkit, host compiler and libraries, checked before nvcc
 * runs, each reported as one warning with its advice.
 *
 * The table is an INI file (config/gates.ini, installed as <prefix>/etc/nvshim/gates.ini and
 * built into nvshim as well; the gates_file setting names another). Each [gate NAME] section
 * is one gate; it holds when every condition in it holds:
 *   includes = WORD ...       an -I / -isystem directory has a path component WORD (or WORD-x.y),
 *                             or a source file #includes <WORD/...> or "WORD/..."
 *   nvcc_below = X.Y          the nvcc is older than X.Y
 *   nvcc_at_least = X.Y       the nvcc is X.Y or newer
 *   host_compiler = too_new   the host compiler (-ccbin, else NVCC_CCBIN, else gcc) is newer than
 *                             the nvcc accepts, and -allow-unsupported-compiler is not given
 * and its text is `message` and `advice`, with %nvcc% (nvcc's version), %host% (the host
 * compiler and its version), %max% (the newest host compiler the nvcc accepts) and %ccbin%
 * (" (g++-13 is on PATH)" when an accepted one is) filled in. The warning reads
 *   nvshim warning : MESSAGE: ADVICE [gate NAME]
 * and the silence_gates setting (names, or all) turns gates off.
 *
 * What the nvcc accepts is read from its own crt/host_config.h ("#if __GNUC__ > 15", "#if
 * (__clang_major__ >= 21) || ..."), else from the table's [host_compilers] section
 * ("13.0 = gcc 15, clang 20"). What `CC --version` and `nvcc --version` print is cached in
 * <cache_dir>/hostcc/, keyed by the program's path, size and modification time.
 *
 * Gates run for command lines that compile a source (not --dryrun, not information options).
 * Facts are gathered only when a gate's cheaper conditions hold, and a fact that cannot be had
 * makes the gate not hold: gates never stop a build.
 */
#ifndef NVSHIM_GATES_H
#define NVSHIM_GATES_H

#include <stddef.h>

#include "base/argv.h"
#include "model/config.h"
#include "model/invocation.h"

struct gate {
	char *name;
	struct argv includes;
	char *nvcc_below;
	char *nvcc_at_least;
	int host_too_new;
	char *message;
	char *advice;
};

struct host_limit {
	char *toolkit; /* "13.0" */
	unsigned gcc;  /* newest major accepted, 0 when not said */
	unsigned clang;
};

struct gates {
	struct gate *v;
	size_t n;
	struct host_limit *limits;
	size_t nlimits;
};

void gates_init(struct gates *g);
void gates_release(struct gates *g);

/* Parses a table. Problems ("ORIGIN:LINE: what") are appended to `problems`. Returns the number
 * of gates. */
size_t gates_parse(struct gates *g, const char *text, const char *origin, struct argv *problems);

/* Compares versions "11.7", "11.8.89": <0, 0, >0. */
int gates_version_cmp(const char *a, const char *b);
/* 1 if a directory path has a component WORD, or WORD followed by '-', '_' or '.' and more. */
int gates_path_mentions(const char *path, const char *word);
/* 1 if source text has an #include of <WORD/...> or "WORD/...". */
int gates_source_includes(const char *text, const char *word);
/* Reads the newest GCC and clang majors an nvcc accepts from its crt/host_config.h text (0 for
 * one it does not say). Returns 0 if it said anything, else -1. */
int gates_host_config_max(const char *text, unsigned *gcc, unsigned *clang);
/* Reads `CC --version` output: *family "gcc" or "clang", *version "12.2.0" (xmalloc'ed).
 * Returns 0, or -1 for a compiler it does not know. */
int gates_host_version(const char *text, char **family, char **version);

struct gates_context {
	const struct config *cfg;
	const struct invocation *inv;
	const char *nvcc;
	const char *exe_dir; /* where nvshim runs from, to find <prefix>/etc/nvshim/gates.ini */
};

/* Checks every gate that is not silenced; prints one warning per gate that holds. Returns how
 * many held. */
int gates_check(const struct gates_context *ctx);

#endif
