/* api: names the replacement for a CUDA API that the toolkit in use removed or changed, when a
 * compile fails on it.
 *
 * The facts are a table (config/api.ini, installed as <prefix>/etc/nvshim/api.ini and built
 * into nvshim; the api_file setting names another), one [api NAME] section per API:
 *   version = 13.0        the toolkit that removed or changed it
 *   change = removed      or changed
 *   what = TEXT           what changed (changed entries)
 *   use = TEXT            the replacement
 *   example = TEXT        a short example
 *   also = NAME ...       other spellings errors show for the same API (cuCtxCreate_v4)
 *   compat = FILE.h       the compatibility layer restores it with include/nvshim/compat/FILE.h
 *   compat = rewrite FILE.h   the same, STRUCT::FIELD reads rewritten in a private copy
 *   nocompat = TEXT       why nothing faithful can restore it
 * NAME is a function, type, enum value or macro, or STRUCT::FIELD (cudaDeviceProp::clockRate).
 *
 * After a compile that failed, api_read_errors() reads the errors it printed: nvcc's front end
 *   old.cu(9): error: class "cudaDeviceProp" has no member "clockRate"
 *      printf("%d\n", prop.clockRate);
 *                          ^
 * and gcc's or clang's ("old.cpp:9:24: error: ...", the line echoed with or without gcc's
 * "  9 | " margin, then the caret line). Each error gives the name it is about: the member
 * (STRUCT::FIELD) or undeclared identifier the message names, the function a gcc "too few
 * arguments to function 'R f(...)'" names, or, for a message that names no API ("too few
 * arguments in function call", "no suitable constructor exists to convert from "int" to
 * "cudaMemLocation"", "argument of type ... is incompatible with parameter of type ...", gcc's
 * "could not convert" and "invalid conversion"), the function called at the caret: the name
 * before the innermost '(' left of the caret column that is not closed before it; when that line
 * has none (a call written over several lines: the compiler reports the argument's line), the
 * file's lines before it (at most 24 lines, 4 KiB) are read back to the call still open at the
 * caret. Without a
 * caret line, or when the echoed line holds no call there (nvcc echoes a line with a macro in it
 * from the macro's expansion on), the source line is read from the file (the column from gcc's
 * message; nvcc gives none: then the first function of the table called on that line).
 *
 * An error that only follows from the one before it on the same line ("class or struct definition
 * is missing" after `namespace "thrust" has no member class "unary_function"`, "type name is not
 * allowed", "expected an expression", gcc's "expected '{' before '<' token") is about the same
 * name.
 *
 * api_notes() turns the errors whose name is in the table, for an entry whose version is not
 * newer than the toolkit's, into one note each (the same API on the same line once):
 *   old.cu:9: cudaDeviceProp::clockRate was removed in CUDA 13.0: use
 *     cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, device) [api.removed]
 *   old.cu:15: cuCtxCreate changed in CUDA 13.0: it is cuCtxCreate_v4, ...; use ... [api.changed]
 * Nothing here runs a process or changes what the compiler printed; a table that cannot be read
 * costs one warning, a bad line one warning naming it.
 */
#ifndef NVSHIM_API_H
#define NVSHIM_API_H

#include <stddef.h>

#include "base/argv.h"
#include "model/config.h"
#include "model/hostcc.h"

struct api_entry {
	char *name;
	char *version; /* "13.0" */
	int changed;   /* 0: removed */
	char *what;
	char *use;
	char *example;
	struct argv also;
	char *compat;       /* "runtime.h": a header under include/nvshim/compat/; NULL: none */
	int compat_rewrite; /* compat = rewrite FILE.h: field reads become nvshim_compat_FIELD() */
	char *nocompat;     /* why nothing faithful restores it; NULL: not said */
};

struct api_table {
	struct api_entry *v;
	size_t n;
};

void api_table_init(struct api_table *t);
void api_table_release(struct api_table *t);

/* Parses a table. Problems ("ORIGIN:LINE: what") are appended to `problems`; an entry without
 * version or use is one of them and is left out. A compat header name that is not a relative
 * path of letters, digits and _ - . / ending in .h (or holds "..") is a problem and left out;
 * so is a compat in an entry that has nocompat. Returns the number of entries. */
size_t api_parse(struct api_table *t, const char *text, const char *origin, struct argv *problems);

/* 1 if `h` may be a compat header: a relative path of letters, digits, _ - . / ending in .h,
 * without "..", "//" or a leading '.' or '/'. */
int api_compat_header_ok(const char *h);

/* The entry for a name or one of its `also` spellings, or NULL; a removed field of cudaDeviceProp
 * also by its bare name (read unqualified in a class derived from the struct). */
const struct api_entry *api_find(const struct api_table *t, const char *name);

/* The table's text (xmalloc'ed): the file `file` when it is set (NULL after a warning when it
 * cannot be read), else <exe_dir>/../etc/nvshim/api.ini, else the built-in one. *origin names
 * where it came from (xmalloc'ed). */
char *api_table_text(const char *file, const char *exe_dir, char **origin);

/* One error of a compiler's output. */
struct api_error {
	char *file;
	unsigned long line;
	char *name;   /* what it is about, as api_find() takes it; NULL when none was found */
	int by_call;  /* the name is the function called at the caret (or on the line) */
};

struct api_errors {
	struct api_error *v;
	size_t n;
};

void api_errors_release(struct api_errors *e);
/* Reads every error of nvcc's, gcc's or clang's output. `t` (may be NULL) is only used where the
 * source line has to be read from the file and has no column: the first of its functions called
 * there. */
void api_read_errors(const char *text, const struct api_table *t, struct api_errors *out);
/* 1 if an error in `text` names anything at all (a name, or a call it is about): the cheap
 * test before the table is read. */
int api_errors_name_any(const char *text);
/* The function called at column `col` (0-based) of a source line (xmalloc'ed), or NULL. */
char *api_callee_at(const char *line, size_t col);

/* The name a note gives for an error about `found` (may be NULL) that matched entry e: `found`
 * where it is one of the entry's `also` spellings a user writes (cusparseDcsrsv2_solve, tex2D),
 * else the entry's name (for its versioned forms, cuCtxCreate_v4, and headers). */
const char *api_shown_name(const struct api_entry *e, const char *found);

/* Appends "FILE:LINE: NAME was removed in CUDA X.Y: use ... [api.removed]" (or "changed ...
 * [api.changed]") to notes for each error caused by an entry of the table whose version is not
 * newer than toolkit_version ("13.0.88"; NULL: every entry). Returns how many it appended. */
size_t api_notes(const struct api_table *t, const char *text, const char *toolkit_version,
		 struct argv *notes);

/* `nvshim explain-api NAME`: the entry's text, several lines (xmalloc'ed). */
char *api_describe(const struct api_entry *e);

/* 1 if a host compiler's line compiles a C or C++ source whose first 64 KiB #include a CUDA
 * header the table covers (<cuda.h>, <cuda_runtime.h>, <cuda_runtime_api.h>, <cufft.h>,
 * <cublas*.h>, <cusparse.h>, <cub/...>, <thrust/...>, <cuda/...>), directly or through the
 * "quoted" includes of project headers (found beside the including file, then in the -iquote
 * and -I directories), two levels deep, reading at most 16 files' first 64 KiB (CC mode then
 * holds its stderr). */
int api_host_wanted(const struct hostcc *hc);

struct api_context {
	const struct config *cfg;
	const char *nvcc;    /* the toolkit's nvcc, for its version; NULL: find_nvcc, or not known */
	const char *exe_dir; /* where nvshim runs from, to find <prefix>/etc/nvshim/api.ini */
	/* Finds the nvcc (xmalloc'ed, or NULL) when `nvcc` is NULL, only once a note is due: CC
	 * mode looks for it only after a failed compile. May be NULL. */
	char *(*find_nvcc)(void *arg);
	void *find_arg;
};

/* The table (problems said as warnings) and the toolkit's version (*version xmalloc'ed, NULL when
 * not known: every entry applies). */
void api_context_load(const struct api_context *ctx, struct api_table *t, char **version);

/* After a failed compile whose stderr was `text`: the notes (said with diag_note and appended to
 * notes when it is not NULL). Reads the table only when an error names something. Never fails.
 * Returns how many notes it gave. */
size_t api_explain(const struct api_context *ctx, const char *text, struct argv *notes);

#endif
