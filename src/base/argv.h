/* argv: an argument vector that owns its strings.
 *
 * `v` is never NULL and always NULL-terminated (v[n] == NULL), so it can be handed to exec
 * as it is. An empty vector points at a shared static empty array and allocates nothing.
 * Initialise with ARGV_INIT or argv_init(); argv_release() frees everything and leaves an
 * empty, reusable vector.
 */
#ifndef NVSHIM_ARGV_H
#define NVSHIM_ARGV_H

#include <stddef.h>

struct argv {
	char **v;
	size_t n;
	size_t alloc;
};

extern char *argv_empty[];
#define ARGV_INIT { argv_empty, 0, 0 }

void argv_init(struct argv *a);
void argv_release(struct argv *a);

void argv_push(struct argv *a, const char *s);
/* Takes ownership of s (allocated with xmalloc/xstrdup). */
void argv_push_owned(struct argv *a, char *s);
void argv_pushf(struct argv *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Pushes every string of a NULL-terminated vector. */
void argv_pushv(struct argv *a, const char *const *v);
/* Pushes the first n strings of v. */
void argv_pushn(struct argv *a, char *const *v, size_t n);
void argv_insert(struct argv *a, size_t at, const char *s);
void argv_remove(struct argv *a, size_t at);
void argv_replace(struct argv *a, size_t at, const char *s);
void argv_copy(struct argv *dst, const struct argv *src);

int argv_equal(const struct argv *a, const struct argv *b);
/* Total bytes the strings take on an exec command line (each string + its NUL). */
size_t argv_size(const struct argv *a);
/* A single line, each argument quoted for a POSIX shell where it needs it. xmalloc'ed. */
char *argv_to_shell(const struct argv *a);
/* Quotes one string for a POSIX shell, appending to *buf (xrealloc'ed, NUL-terminated). */
void argv_shell_quote(char **buf, size_t *len, const char *s);

/* The strings joined with sep between them (xmalloc'ed; "" for an empty vector). */
char *argv_join(const struct argv *a, const char *sep);

#endif
