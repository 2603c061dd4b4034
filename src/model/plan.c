#include "model/plan.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libiberty.h>

#include "base/diag.h"

void plan_init(struct plan *p, const char *tool, char *const *args, size_t n)
{
	memset(p, 0, sizeof(*p));
	argv_init(&p->argv);
	argv_init(&p->notes);
	p->tool = xstrdup(tool);
	argv_push(&p->argv, tool);
	argv_pushn(&p->argv, args, n);
}

void plan_release(struct plan *p)
{
	if (p->options_file)
		unlink(p->options_file);
	if (p->options_dir)
		rmdir(p->options_dir);
	free(p->options_file);
	free(p->options_dir);
	free(p->tool);
	argv_release(&p->argv);
	argv_release(&p->notes);
	memset(p, 0, sizeof(*p));
	argv_init(&p->argv);
	argv_init(&p->notes);
}

void plan_note(struct plan *p, const char *rule, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = xvasprintf(fmt, ap);
	va_end(ap);
	argv_pushf(&p->notes, "%s [%s]", text, rule);
	free(text);
}

int plan_rewritten(const struct plan *p, char *const *args, size_t n)
{
	if (p->argv.n != n + 1)
		return 1;
	for (size_t i = 0; i < n; i++)
		if (strcmp(p->argv.v[i + 1], args[i]))
			return 1;
	return 0;
}

int plan_finalize(struct plan *p, size_t threshold, const char *tmp_base)
{
	if (argv_size(&p->argv) <= threshold || p->argv.n < 2)
		return 0;
	for (size_t i = 1; i < p->argv.n; i++)
		if (strpbrk(p->argv.v[i], "\"\\\n"))
			return 0;
	if (!tmp_base) {
		tmp_base = getenv("TMPDIR");
		if (!tmp_base || !*tmp_base)
			tmp_base = "/tmp";
	}
	char *dir = concat(tmp_base, "/nvshim-XXXXXX", NULL);
	if (!mkdtemp(dir)) {
		warning("cannot create a directory for an options file in %s: %s", tmp_base,
			strerror(errno));
		free(dir);
		return -1;
	}
	char *file = concat(dir, "/args-XXXXXX", NULL);
	int fd = mkstemp(file);
	FILE *fp = fd < 0 ? NULL : fdopen(fd, "w");
	if (fp) {
		/* nvcc's options files group a double-quoted string into one argument. */
		for (size_t i = 1; i < p->argv.n; i++)
			fprintf(fp, "\"%s\"\n", p->argv.v[i]);
	}
	if (!fp || fclose(fp)) {
		warning("cannot write an options file in %s: %s", dir, strerror(errno));
		if (fd >= 0 && !fp)
			close(fd);
		unlink(file);
		rmdir(dir);
		free(file);
		free(dir);
		return -1;
	}
	char *argv0 = xstrdup(p->argv.v[0]);
	argv_release(&p->argv);
	argv_push_owned(&p->argv, argv0);
	argv_push(&p->argv, "--options-file");
	argv_push(&p->argv, file);
	p->options_dir = dir;
	p->options_file = file;
	return 1;
}
