/* Small helpers shared by the unit tests. */
#ifndef NVSHIM_TEST_HELPERS_H
#define NVSHIM_TEST_HELPERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libiberty.h>

/* A fake environment for code that takes a getenv-like function: NAME, VALUE pairs. */
static const char *test_envv[16][2];
static inline const char *test_env(const char *name)
{
	for (size_t i = 0; i < 16 && test_envv[i][0]; i++)
		if (!strcmp(test_envv[i][0], name))
			return test_envv[i][1];
	return NULL;
}

/* A fresh private directory under TMPDIR (xmalloc'ed). */
static inline char *test_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char *d = concat(base && *base ? base : "/tmp", "/nvshim-test-XXXXXX", NULL);
	if (!mkdtemp(d))
		abort();
	return d;
}

static inline char *test_write(const char *dir, const char *name, const char *text)
{
	char *path = concat(dir, "/", name, NULL);
	FILE *f = fopen(path, "w");
	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
	return path;
}

static inline char *test_read(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int c;
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(f);
	fclose(m);
	return buf;
}

static inline void test_rmtree(const char *dir)
{
	char *cmd = concat("rm -rf '", dir, "'", NULL);
	if (system(cmd))
		abort();
	free(cmd);
}

#endif
