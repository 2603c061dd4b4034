#include "buildwide/once.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libiberty.h>

#include "buildwide/build.h"
#include "base/cache.h"

/* A build named by NVSHIM_BUILD_ID is over a day after its last note. */
#define ONCE_NAMED_MAX_AGE (24 * 60 * 60)

struct entry {
	char *name;
	time_t mtime;
};

static int by_age(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	return x->mtime < y->mtime ? -1 : x->mtime > y->mtime;
}

int once_prune(const char *cache_dir, const char *current_id, time_t now)
{
	char *top = concat(cache_dir, "/notes", NULL);
	DIR *d = opendir(top);
	struct dirent *e;
	struct entry *kept = NULL;
	size_t nkept = 0;
	int removed = 0;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.' || (current_id && !strcmp(e->d_name, current_id)))
			continue;
		char *p = concat(top, "/", e->d_name, NULL);
		struct stat st;
		int alive = build_alive(e->d_name);
		if (lstat(p, &st) || !S_ISDIR(st.st_mode)) {
			free(p);
			continue;
		}
		if (alive == 0 || (alive < 0 && now - st.st_mtime > ONCE_NAMED_MAX_AGE)) {
			cache_remove_dir(p);
			removed++;
		} else {
			kept = XRESIZEVEC(struct entry, kept, nkept + 1);
			kept[nkept].name = p;
			kept[nkept++].mtime = st.st_mtime;
			continue;
		}
		free(p);
	}
	if (d)
		closedir(d);
	/* Past the limit (builds still running, or named ones): the oldest go. */
	if (nkept)
		qsort(kept, nkept, sizeof(*kept), by_age);
	for (size_t i = 0; i < nkept; i++) {
		if (nkept - i >= ONCE_MAX_BUILDS) {
			cache_remove_dir(kept[i].name);
			removed++;
		}
		free(kept[i].name);
	}
	free(kept);
	free(top);
	return removed;
}

int once_first(const char *cache_dir, const char *build_id, const char *text)
{
	if (!cache_dir || !*cache_dir || !build_id || !*build_id)
		return -1;
	char hash[17];
	build_hash(text, hash);
	char *dir = concat(cache_dir, "/notes/", build_id, NULL);
	char *marker = concat(dir, "/", hash, NULL);
	int rc = -1;
	for (int attempt = 0; attempt < 2; attempt++) {
		int fd = open(marker, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0) {
			/* the note itself, for whoever looks */
			size_t len = strlen(text);
			if (write(fd, text, len) != (ssize_t)len) {
				/* the marker exists: that is what counts */
			}
			close(fd);
			rc = 1;
			break;
		}
		if (errno == EEXIST) {
			rc = 0;
			break;
		}
		if (errno != ENOENT || attempt)
			break;
		/* The first note of this build: its directory, and the ended builds' go. */
		char *top = concat(cache_dir, "/notes", NULL);
		int made = !cache_mkdirs(top) && !mkdir(dir, 0700);
		if (made)
			once_prune(cache_dir, build_id, time(NULL));
		free(top);
	}
	free(marker);
	free(dir);
	return rc;
}
