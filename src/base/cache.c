#include "base/cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libiberty.h>

int cache_dir_check(const char *dir, const char **why)
{
	struct stat sb;
	/* A missing directory is made now (0700), so that what is checked is what nvshim will
	 * write to: one that another user makes at that path first (a predictable name under
	 * /tmp) is then seen and refused. One that cannot be made is left to the writes, which
	 * fail and say so. */
	if (lstat(dir, &sb)) {
		if (errno == ENOENT && (cache_mkdirs(dir) || lstat(dir, &sb)))
			return 0;
		if (lstat(dir, &sb)) {
			*why = "cannot be read";
			return -1;
		}
	}
	if (S_ISLNK(sb.st_mode) && sb.st_uid != geteuid()) {
		*why = "is a symbolic link owned by another user";
		return -1;
	}
	/* a link: what it points to is checked */
	if (S_ISLNK(sb.st_mode) && stat(dir, &sb)) {
		*why = "cannot be read";
		return -1;
	}
	if (!S_ISDIR(sb.st_mode))
		*why = "is not a directory";
	else if (sb.st_uid != geteuid())
		*why = "is owned by another user";
	else if (sb.st_mode & (S_IWGRP | S_IWOTH))
		*why = "can be written by other users";
	else
		return 0;
	return -1;
}

int cache_mkdirs(const char *dir)
{
	char *d = xstrdup(dir);
	for (char *p = d + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(d, 0700) && errno != EEXIST) {
			free(d);
			return -1;
		}
		*p = '/';
	}
	int rc = mkdir(d, 0700) && errno != EEXIST ? -1 : 0;
	free(d);
	return rc;
}

void cache_remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char *p = concat(dir, "/", e->d_name, NULL);
		struct stat sb;
		/* A directory (never a link to one) is emptied the same way. */
		if (unlink(p) && !lstat(p, &sb) && S_ISDIR(sb.st_mode))
			cache_remove_dir(p);
		free(p);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

char *cache_read_len(const char *path, size_t *lenp)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	/* One read for a file whose size fstat() tells (the installed settings, every run). */
	struct stat sb;
	size_t alloc = !fstat(fd, &sb) && S_ISREG(sb.st_mode) && sb.st_size > 0 ? (size_t)sb.st_size + 2 : 4096;
	char *text = XNEWVEC(char, alloc);
	size_t len = 0;
	for (;;) {
		if (len + 1 >= alloc) {
			alloc *= 2;
			text = XRESIZEVEC(char, text, alloc);
		}
		ssize_t got = read(fd, text + len, alloc - len - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int saved = errno;
			free(text);
			close(fd);
			errno = saved;
			return NULL;
		}
		if (got == 0)
			break;
		len += (size_t)got;
	}
	close(fd);
	text[len] = '\0';
	*lenp = len;
	return text;
}

char *cache_read(const char *path)
{
	size_t len;
	return cache_read_len(path, &len);
}

int cache_write(const char *dir, const char *path, const char *text)
{
	char *tmp = concat(path, ".XXXXXX", NULL);
	int fd = cache_mkdirs(dir) ? -1 : mkstemp(tmp);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
	int rc = 0;
	if (!f || fputs(text, f) < 0 || fclose(f) || rename(tmp, path)) {
		int saved = errno;
		if (fd >= 0 && !f)
			close(fd);
		unlink(tmp);
		errno = saved;
		rc = -1;
	}
	free(tmp);
	return rc;
}

char *cache_file_key(const char *path)
{
	struct stat sb;
	char *real = lrealpath(path);
	if (!real || stat(real, &sb)) {
		free(real);
		return NULL;
	}
	char *key = xasprintf("%s %lld %lld.%09ld", real, (long long)sb.st_size,
			      (long long)sb.st_mtim.tv_sec, (long)sb.st_mtim.tv_nsec);
	free(real);
	return key;
}
