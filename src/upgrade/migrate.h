/* migrate: the lasting fix for removed and changed CUDA APIs, as a rewrite of a source's text
 * (`nvshim migrate FILE...`).
 *
 * migrate_text() scans a C, C++ or CUDA source (upgrade/migrate_scan.h: comments, string and
 * character literals, raw strings and #include lines skipped; no preprocessor is run and no
 * compiler) for the APIs of the recipe table below and returns the edits that make it build with
 * plain nvcc on CUDA 12.x and 13.x alike:
 *   - a replacement valid on both is written as it is (cudaThreadSynchronize() ->
 *     cudaDeviceSynchronize(), CUB_MAX(a, b) -> 2.8's expansion, a thrust::unary_function base
 *     -> removed, with the aliases it declared added to the class);
 *   - one that needs the new toolkit is version-guarded: the whole lines are kept for the old one
 *       #if CUDA_VERSION >= 13000      (CUDART_VERSION, CCCL_MAJOR_VERSION >= 3)
 *       ...new lines...
 *       #else
 *       ...the lines as they were...
 *       #endif
 *     (never inside a preprocessor directive or a macro's continued lines: those are reported);
 *   - cudaDeviceProp's removed fields are read with cudaDeviceGetAttribute for the device the
 *     program passed to the nearest cudaGetDeviceProperties(&OBJ, DEVICE) before the read, through
 *     a static helper inserted once after the file's leading #include lines; where no such call is
 *     in sight but the file declares the object a cudaDeviceProp (a parameter, a member, an
 *     element), for the device whose PCI domain, bus and device ids are the struct's (as the
 *     compatibility layer does), version-guarded so that CUDA 12 reads the field;
 *   - thrust::identity<T> becomes CCCL 2.8's class, inserted once as nvshim_migrate_identity<T>;
 *   - a texture reference of the simple pattern (file scope, 1D, element reads, bound in the file
 *     with cudaBindTexture(0, REF, ptr[, desc], size), read with tex1Dfetch) becomes a texture
 *     object in a __device__ variable of its name, bound and unbound through inserted helpers.
 * A use it cannot rewrite (a struct not known to be a cudaDeviceProp, a field written to, a call
 * whose arguments it cannot count, a guard inside a directive, other texture and surface
 * references) is a "skipped" message with the line and the reason (for texture references, what
 * to write there), and the text stays as it was. Nothing else changes: the bytes outside the edited lines
 * are the file's own.
 *
 * migrate_diff() prints the change as a unified diff (3 lines of context) of FILE against itself.
 */
#ifndef NVSHIM_MIGRATE_H
#define NVSHIM_MIGRATE_H

#include <stddef.h>

#include "base/argv.h"

struct migrate_result {
	char *text;          /* the migrated text (xmalloc'ed); equal to the input when nothing changed */
	size_t len;
	size_t changes;      /* uses rewritten */
	struct argv skipped; /* "LINE: NAME: why" for each use left as it was */
	struct argv fixed;   /* "LINE: NAME" for each use rewritten */
};

void migrate_result_release(struct migrate_result *r);

/* Migrates `len` bytes of `text` (which need not end in NUL). `known` (may be NULL): the API
 * table's names (entries and their `also` spellings); a use of one that has no recipe is a
 * "skipped" message pointing to `nvshim explain-api` (a header by its #include). Never fails. */
void migrate_text(const char *text, size_t len, const struct argv *known, struct migrate_result *out);

/* The same, where `props` (may be NULL) names what the headers the file includes declare as a
 * cudaDeviceProp (migrate_declarations): a removed field of such an object is read for the
 * device of its PCI ids as if the file declared it. */
void migrate_text_with(const char *text, size_t len, const struct argv *known, const struct argv *props,
		       struct migrate_result *out);

/* What a text declares as a cudaDeviceProp (the names: members, variables, parameters), appended
 * to `props` once each, and the headers it includes with quotes ("x.h", as written), appended
 * to `quoted`. */
void migrate_declarations(const char *text, size_t len, struct argv *props, struct argv *quoted);

/* The unified diff from `old` to `new` (xmalloc'ed, "" when they are equal), both named `path`. */
char *migrate_diff(const char *path, const char *old, size_t old_len, const char *new, size_t new_len);

/* The migrate form of an API table entry (`nvshim explain-api`), or NULL when migrate has no
 * recipe for it. */
const char *migrate_form(const char *name);

/* The names migrate knows, NULL-terminated. */
const char *const *migrate_names(void);

#endif
