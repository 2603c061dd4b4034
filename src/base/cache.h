/* cache: nvshim's small files under cache_dir, safe for concurrent builds.
 *
 * cache_write() writes a whole file under a temporary name in the same directory (mkstemp)
 * and renames it into place, so a reader sees the old file or the new one, never half of one.
 * Directories are made with mode 0700. Readers check what they read (a key line and an end
 * line), so a damaged file is ignored and rewritten.
 */
#ifndef NVSHIM_CACHE_H
#define NVSHIM_CACHE_H

#include <stddef.h>

/* Whether dir may hold nvshim's caches: a directory owned by this user that no one else can
 * write (made now, mode 0700, when absent; one that cannot be made is left to the writes), and
 * not a symbolic link of another user's. A cache that others can write could feed nvshim false
 * facts (which targets a toolkit accepts, which GPUs there are), so such a directory is
 * refused. Returns 0, or -1 with *why (static text). */
int cache_dir_check(const char *dir, const char **why);

/* Creates dir and its parents (mode 0700). Returns 0 or -1 (errno set). */
int cache_mkdirs(const char *dir);
/* Removes a private directory nvshim made (a probe's, a replay's, a toolkit view's) and what
 * is in it, its subdirectories too; symbolic links are removed, never followed; best effort. */
void cache_remove_dir(const char *dir);
/* The whole file (xmalloc'ed), or NULL. */
char *cache_read(const char *path);
/* The same, with its length in *len (it may hold NUL bytes); NULL with errno set. */
char *cache_read_len(const char *path, size_t *len);
/* Writes text to path atomically, making dir first. Returns 0 or -1 (errno set). */
int cache_write(const char *dir, const char *path, const char *text);

/* What identifies a program or file for a cache entry: "REALPATH SIZE MTIME" (the resolved
 * path, the size, the modification time to the nanosecond), xmalloc'ed; NULL when it cannot
 * be read. A rebuilt or replaced file gets another key. */
char *cache_file_key(const char *path);

#endif
