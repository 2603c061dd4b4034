/* overlay: a private mirror of a directory tree of the user's, for the compatibility layer's
 * retry (compat.h) when removed struct fields are read in project headers.
 *
 * A header cannot be replaced by putting a copy first on the include path: a quoted include is
 * looked for in the including file's own directory first, so a sibling would still find the
 * original. The retry therefore compiles through a mirror of the smallest directory that holds
 * the source and those headers: its directories are real directories (so that `..` stays in the
 * mirror), its files symbolic links to the user's files, except the rewritten headers and the
 * source, which are private copies (each starting `#line 1 "ORIGINAL"`). The compile line names
 * the copy of the source, and each -I / -iquote directory inside the mirrored tree names its
 * mirror, in the same place; the compiler then finds every file where it found it before, the
 * rewritten ones in their copies. The paths the compiler writes (dependency files, messages)
 * are mapped back to the user's spelling with overlay_unmap().
 *
 * Never written: any file of the user's (the mirror holds links to them and new files only);
 * the mirror is removed afterwards, links unlinked, never followed.
 */
#ifndef NVSHIM_OVERLAY_H
#define NVSHIM_OVERLAY_H

#include <stddef.h>

#include "base/argv.h"

/* 1 if `path` is `dir` or lies below it (absolute, normalised paths, as realpath gives). Pure. */
int overlay_under(const char *path, const char *dir);

/* The deepest directory that holds each of the n directories `dirs` (absolute, normalised),
 * xmalloc'ed: "/" at worst. Pure. */
char *overlay_common_dir(char *const *dirs, size_t n);

/* `text` with each occurrence of from->v[i] replaced by to->v[i]; where several match at one
 * place, the longest (xmalloc'ed). Pure. */
char *overlay_unmap(const char *text, const struct argv *from, const struct argv *to);

/* A dependency file's text with the repeated prerequisites of its first rule left out (one a
 * line, as nvcc writes them: nvcc names a file again for the `#line` at the top of a private
 * copy), xmalloc'ed. Pure. */
char *overlay_dedupe_deps(const char *text);

/* overlay_dedupe_deps(), with every prerequisite that starts with prefix left out too: nvshim's
 * own headers (<prefix>/include/nvshim/...), which a restored compile includes and the build
 * must not depend on (a dependency file naming them stops make once nvshim is removed). */
char *overlay_drop_deps(const char *text, const char *prefix);

/* The include directories of a compile line: for each directory a -I or -iquote names (nvcc:
 * -I DIR, -IDIR, --include-path[=]DIR, comma lists, and -Xcompiler values "-iquote,DIR" or
 * "-IDIR"; a host compiler: -I DIR, -IDIR, -iquote DIR, -iquoteDIR,
 * --include-directory[=]DIR), map(dir, arg) may return another directory (xmalloc'ed), which
 * the argument then names in its place; NULL keeps it. Returns how many were replaced. Pure but
 * for map. */
size_t overlay_map_includes(struct argv *argv, int host, char *(*map)(const char *dir, void *arg), void *arg);

/* 1 if the language of a compile of `source` is C (a .c file compiled by a C compiler, or
 * `-x c`), 0 for C++ and CUDA. host: argv is a host compiler's line (its tool's name ends in
 * "++": C++). Pure. */
int overlay_is_c(const struct argv *argv, const char *source, int host);

struct overlay {
	char *top;       /* $TMPDIR/nvshim-compat-XXXXXX */
	char *root;      /* the user's directory mirrored (absolute, normalised) */
	char *dir;       /* its mirror: top + "/m" */
	struct argv made; /* what was created, in order: removed in reverse */
	size_t budget;   /* entries left before directories are linked instead of mirrored */
};

void overlay_init(struct overlay *o);

/* Mirrors `root` under a new directory of `tmp`: directories as directories (up to 16 levels and
 * 10000 entries in all; beyond that, and for names starting with '.', links to the directory;
 * the directories that hold a placed file always), files and everything else as links to the
 * user's, except the files rel->v[i] (paths relative to root), which are written new with the
 * text texts->v[i]. 0 on success; -1 with nothing left behind. */
int overlay_build(struct overlay *o, const char *root, const char *tmp, const struct argv *rel,
		  const struct argv *texts);

/* Removes the mirror (links unlinked, never followed) and frees o. */
void overlay_remove(struct overlay *o);

#endif
