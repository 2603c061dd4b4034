/* compat: the compatibility layer. A compile that failed on CUDA APIs the toolkit removed or
 * changed which the API table (api.h) says the layer restores (`compat = FILE.h`,
 * `compat = rewrite FILE.h`), and on no entry the layer does not restore (errors that name
 * nothing in the table do not count: they may follow from the removal), is compiled once more
 * with the layer: the headers
 * include/nvshim/compat/FILE.h force-included (-include), and for removed struct fields a
 * private copy of the source where each EXPR.FIELD / EXPR->FIELD at the lines the compiler
 * reported reads nvshim_compat_FIELD(&(EXPR)) / nvshim_compat_FIELD(EXPR), an unqualified FIELD
 * that the compiler reported alone (in a class derived from the struct) nvshim_compat_FIELD(this) (its first line
 * `#line 1 "SOURCE"`: errors, __FILE__ and the dependency file name the user's file). Reads in
 * project headers (under the source's directory or an -I / -iquote one, not the toolkit's or
 * /usr) get private copies too, and the retry compiles through a mirror of the tree that holds
 * them (overlay.h), its paths mapped back in the dependency file and the messages. If that
 * compile passes, the build goes on with its output and one note (rule compat.restored, said
 * once per build) names what was restored and the lasting fix (`nvshim migrate`); if it fails,
 * or an error names an entry the layer does not restore, the first compile's stderr and status
 * stand, and a note (compat.none) says why when an entry has `nocompat`. Code that compiles never gets here.
 *
 * The setting `compat` (auto, off) switches it. The headers are found at
 * <exe_dir>/../include/nvshim/compat (the installed layout and the build tree), else in the
 * source tree nvshim was built from.
 */
#ifndef NVSHIM_COMPAT_H
#define NVSHIM_COMPAT_H

#include <stddef.h>

#include "base/argv.h"
#include "base/runner.h"
#include "diagnose/api.h"
#include "model/plan.h"

/* One field read to rewrite: FIELD of the struct at LINE of FILE (as the compiler named it). */
struct compat_site {
	char *file;
	unsigned long line;
	char *field;
	int bare;     /* the error named FIELD alone: read unqualified, in a class derived from the
		       * struct; FIELD alone on the line reads nvshim_compat_FIELD(this) */
};

struct compat_decision {
	int retry;            /* an error the layer restores, none it cannot: compile again with it */
	struct argv headers;  /* "runtime.h", each once */
	struct argv entries;  /* the entries restored, each once */
	struct argv why_not;  /* "NAME: TEXT" for each entry with nocompat that an error hit */
	struct compat_site *sites;
	size_t nsites;
	size_t errors;        /* errors read */
	size_t others;        /* errors the layer does not restore (not in the table, or no compat) */
	size_t blocked;       /* of those, errors on an entry without compat (nocompat or none) */
	struct argv files;    /* the files the errors name, each once */
	unsigned layout;      /* compat_dryrun's check: CUDA 13's moved files (LAYOUT_*, layout.h) the
			       * line needs before anything else */
	char *layout_header;  /* the header the front end did not find, for the note */
};

void compat_decision_init(struct compat_decision *d);
void compat_decision_release(struct compat_decision *d);

/* Whether API table version `entry` ("12.0") is newer than toolkit version `toolkit`
 * ("13.0.88"), by major and minor. */
int compat_version_newer(const char *entry, const char *toolkit);

/* Reads a failed compile's stderr against the table (entries newer than toolkit_version, which
 * may be NULL, do not apply). Pure. */
void compat_decide(const struct api_table *t, const char *held, const char *toolkit_version,
		   struct compat_decision *d);

/* The private copy's text (xmalloc'ed) of source text `text` named `name`: `#line 1 "name"`,
 * then the text with every read of a site's field on the site's line rewritten. NULL when a site
 * of that file has no EXPR.FIELD or EXPR->FIELD on its line. In C++ (a name not ending in .c)
 * every other read of a site's field in the text is rewritten too (a template's reads are
 * reported only once it is instantiated). *count: the reads rewritten. Pure. */
char *compat_rewrite(const char *text, const char *name, const struct compat_site *sites, size_t nsites,
		     size_t *count);

/* compat_rewrite() for a file of a compile in C (cplusplus 0: only the sites' lines) or C++ (1),
 * whatever its name: a project header. Pure. */
char *compat_rewrite_as(const char *text, const char *name, int cplusplus, const struct compat_site *sites,
			size_t nsites, size_t *count);

/* The directory that holds nvshim/compat/ (xmalloc'ed), or NULL. */
char *compat_include_dir(const char *exe_dir);

/* After a retry with nvshim's headers passed: the dependency file `line` writes (-MF, -MD) no
 * longer names them (<include>/nvshim/...), so that the build does not depend on nvshim's
 * install (make would stop on a removed header). */
void compat_drop_own_deps(const struct argv *line, const char *exe_dir);

/* The compile with the layer: its command line, and the private copy it compiles. */
struct headers_copy;

struct compat_layered {
	struct argv argv;  /* the command line with the layer */
	char *copy;        /* the private copy, or NULL (no field read rewritten) */
	char *dir;         /* its directory */
	char *source;      /* the source argument it stands for */
	size_t rewritten;  /* field reads rewritten */
	int temp;          /* the copy is temporary: compat_layered_release() removes it */
	struct headers_copy *headers; /* reads in project headers: their private copies and the
				       * mirror the compile goes through (temporary), or NULL */
};

/* Builds the command line `argv` with the layer of `d` (a decision to retry) into *l: -include
 * <inc>/nvshim/compat/H for each header; with field sites (all in one source), the source
 * argument replaced by a private copy rewritten at them (compat_rewrite()), with -iquote of the
 * source's directory (nvcc: -Xcompiler -iquote,DIR; host: -iquote DIR first) so that its "x.h"
 * is found as before. The copy goes to a new $TMPDIR/nvshim-compat-XXXXXX (removed by
 * compat_layered_release()) when cache_dir is NULL; else it is a lasting one, for steps that run
 * after nvshim ended: <cache_dir>/compat/copies/HASH/NAME (HASH of its text and the source's
 * absolute directory, which -iquote then names), written once. With sites in project headers
 * the source includes (not all in the one source argument), those headers are copied and
 * rewritten in a temporary mirror of their tree that the compile goes through (overlay.h;
 * header and toolkit directories of `nvcc`, which may be NULL, are never copied): only with
 * cache_dir NULL (a mirror does not outlive nvshim). Returns 0, or -1 when the copy cannot be
 * made (*l is to be released either way). */
int compat_layer(const struct argv *argv, const struct compat_decision *d, const char *inc, const char *cache_dir,
		 int host, const char *nvcc, struct compat_layered *l);
void compat_layered_release(struct compat_layered *l);

/* "CUDA NAMES restored by nvshim's compatibility layer (...): GOES; the lasting fix is
 * `nvshim migrate SOURCE`, ..." for a layered compile of argv (xmalloc'ed); GOES: "the build
 * goes on", or what a --dryrun does. */
char *compat_restored_text(const struct compat_decision *d, const struct compat_layered *l, const struct argv *argv,
			   const char *goes);

struct compat_context {
	const struct api_context *api; /* the table, the toolkit, the settings */
	const char *(*env)(const char *name); /* for the build a note is said once in */
	int host;                       /* the tool is a host compiler (CC mode), not nvcc */
};

/* An nvcc line with its options files' words in their place (invocation_flatten), built in
 * buf, which the caller releases; the line itself where it reads none (or in CC mode). */
const struct argv *compat_flat_line(const struct compat_context *ctx, const struct argv *line, struct argv *buf);

/* After a compile `plan` ran and failed (res, *held: its stderr, not yet passed on): decides,
 * and compiles again with the layer where it applies. Returns 1 when that compile passed: *res
 * and *held are then the retry's; 0 otherwise, with both as they were. Adds its notes to plan.
 * Fail open: anything that goes wrong leaves the first compile's result. Notes that belong after
 * the compiler's stderr are only added: compat_say_after() says them. */
int compat_after_failure(const struct compat_context *ctx, struct plan *plan, struct run_result *res,
			 char **held);

/* Says a note of the upgrade layer (rule `key`, "[compat.restored]") once per build, at verbosity
 * verbose for the build's other compiles (counted for nvshim stats), every time outside a build;
 * `tail` follows "said once for this TOOL build" in the first. */
void compat_say_once(const struct compat_context *ctx, const char *key, const char *note, const char *tail);

/* After a C compile that passed with warnings `implicit declaration of function 'NAME'` (*held),
 * NAME a function CUDA 13 removed that the layer restores (cudaThreadSynchronize from C: the
 * compile passes, the link fails on an undefined reference): those warnings are read as the
 * errors they are in C++, and the layer's retry runs as after a failure. Returns 1 when it
 * passed (*res and *held are the retry's); 0 otherwise, with both and the notes as they were. */
int compat_after_implicit(const struct compat_context *ctx, struct plan *plan, struct run_result *res, char **held);

/* Says the notes from plan->notes.v[from] on that are said after the compiler's stderr: why
 * the layer did not restore (compat.none), or failed (compat.failed). */
void compat_say_after(const struct plan *plan, size_t from);

/* For `nvshim fingerprint` (a compiler cache's key): with compat = auto, the layer's version,
 * every header under nvshim/compat (name, size, mtime) and the API table in use; "" when off. */
char *compat_identity(const struct config *cfg, const char *exe_dir);

/* `nvshim explain`: what the layer would do (one line, xmalloc'ed). */
char *compat_explain(const struct config *cfg, const char *exe_dir);

#endif
