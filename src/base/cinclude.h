#ifndef NVSHIM_CINCLUDE_H
#define NVSHIM_CINCLUDE_H
/* cinclude: the #include lines of C and C++ source text, read without a preprocessor.
 *
 * The scans that decide before compiling (the gates' library headers, the compatibility layer's
 * gate, the API diagnosis's header search, CUDA 13's moved files) each look at the headers a
 * source names. A line is a directive when it starts, after blanks, with '#', blanks,
 * `include`, blanks and a name in <...> or "..." closed on the same line; nothing else (a
 * comment, a macro-named include, a directive split over lines) is one. Walk a text's lines
 * with:
 *
 *	for (const char *p = text; p; p = cinclude_next_line(p)) {
 *		const char *name;
 *		size_t len;
 *		int angle;
 *		if (cinclude_parse(p, &name, &len, &angle))
 *			...;
 *	}
 */
#include <stddef.h>

/* Whether the line at `line` is an #include directive: then *name points at the header's name
 * in the text (len bytes, not NUL-terminated; it may be empty) and *angle is 1 for <...>, 0 for
 * "...". Returns 1, else 0. */
int cinclude_parse(const char *line, const char **name, size_t *len, int *angle);

/* The start of the line after the one at p, or NULL at the end of the text. */
const char *cinclude_next_line(const char *p);

#endif
