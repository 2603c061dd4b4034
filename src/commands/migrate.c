#include "commands/commands.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libiberty.h>

#include "base/diag.h"
#include "diagnose/api.h"
#include "upgrade/migrate.h"
#include "upgrade/migrate_build.h"
#include "modes/session.h"

/* `nvshim migrate [--apply] FILE...`: for each file, the lasting fix of every removed or changed
 * CUDA or CCCL API its text uses (upgrade/migrate.h), printed as a unified diff on stdout; with
 * --apply written back (a temporary file beside it, with its mode, renamed over it). A use left
 * as it was is a warning naming the line and why, and so is a use of an API table entry that has
 * no recipe (the table nvshim uses: api_file, the installed one or the built-in one). The headers
 * a file includes with quotes, found beside it, are read for what they declare a cudaDeviceProp
 * (a member read in the file), never written. A build file (CMakeLists.txt, *.cmake, a Makefile,
 * setup.py) gets the lasting fix for CUDA 13.0's moved files instead (upgrade/migrate_build.h).
 * Exit status 0, 1 when a use was left, 2 for a
 * usage error or a file that cannot be read or written. A file with nothing to change prints
 * nothing. */

static char *read_all(const char *path, size_t *len, mode_t *mode)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	struct stat sb;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		if (!errno)
			errno = EINVAL;
		close(fd);
		errno = S_ISDIR(sb.st_mode) ? EISDIR : EINVAL;
		return NULL;
	}
	*mode = sb.st_mode & 07777;
	size_t cap = (size_t)sb.st_size + 1, n = 0;
	char *buf = XNEWVEC(char, cap);
	for (;;) {
		if (n + 1 >= cap) {
			cap *= 2;
			buf = XRESIZEVEC(char, buf, cap);
		}
		ssize_t got = read(fd, buf + n, cap - n - 1);
		if (got < 0) {
			int e = errno;
			free(buf);
			close(fd);
			errno = e;
			return NULL;
		}
		if (!got)
			break;
		n += (size_t)got;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* Writes text to path through a temporary file beside it, renamed over it; the mode kept. */
static int write_atomic(const char *path, const char *text, size_t len, mode_t mode)
{
	char *tmp = xasprintf("%s.nvshim-migrate.XXXXXX", path);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		free(tmp);
		return -1;
	}
	size_t off = 0;
	int ok = 1;
	while (ok && off < len) {
		ssize_t w = write(fd, text + off, len - off);
		if (w <= 0)
			ok = 0;
		else
			off += (size_t)w;
	}
	ok = ok && !fchmod(fd, mode) && !fsync(fd);
	ok = !close(fd) && ok;
	if (!ok || rename(tmp, path)) {
		int e = errno;
		unlink(tmp);
		free(tmp);
		errno = e;
		return -1;
	}
	free(tmp);
	return 0;
}

/* "NAME" included by `from`: beside it. */
static char *beside(const char *from, const char *name)
{
	const char *slash = strrchr(from, '/');
	if (name[0] == '/' || !slash)
		return xstrdup(name);
	char *dir = xstrndup(from, (size_t)(slash - from));
	char *path = concat(dir, "/", name, NULL);
	free(dir);
	return path;
}

/* What the headers a file includes with quotes declare as a cudaDeviceProp (a struct's member,
 * most often), appended to props: the headers found beside the file that includes them,
 * followed through their own quoted includes, 64 files at most. A header not found is passed
 * over (it may be on an -I path migrate does not know). */
static void header_props(const char *path, const char *text, size_t len, struct argv *props)
{
	struct argv own = ARGV_INIT, quoted = ARGV_INIT, todo = ARGV_INIT, seen = ARGV_INIT;
	migrate_declarations(text, len, &own, &quoted);
	for (size_t k = 0; k < quoted.n; k++)
		argv_push_owned(&todo, beside(path, quoted.v[k]));
	while (todo.n && seen.n < 64) {
		char *h = xstrdup(todo.v[todo.n - 1]);
		argv_remove(&todo, todo.n - 1);
		int was = 0;
		for (size_t k = 0; k < seen.n && !was; k++)
			was = !strcmp(seen.v[k], h);
		if (was) {
			free(h);
			continue;
		}
		argv_push(&seen, h);
		size_t hl = 0;
		mode_t hm;
		char *ht = read_all(h, &hl, &hm);
		if (ht) {
			struct argv q = ARGV_INIT;
			migrate_declarations(ht, hl, props, &q);
			for (size_t k = 0; k < q.n; k++)
				argv_push_owned(&todo, beside(h, q.v[k]));
			argv_release(&q);
			free(ht);
		}
		free(h);
	}
	argv_release(&own);
	argv_release(&quoted);
	argv_release(&todo);
	argv_release(&seen);
}

/* 1 if a changed entry's replacement is spelt with its own name (cuCtxCreate(ctx, params, 0,
 * dev)): a use may be the new form already. __shfl_down's is __shfl_down_sync: every use of the
 * name is the old form. */
static int same_name_form(const struct api_entry *e)
{
	char *call = concat(e->name, "(", NULL);
	int same = !e->use || strstr(e->use, call) != NULL;
	free(call);
	return same;
}

int cmd_migrate(int n, char **args)
{
	int apply = 0, files = 0, status = 0;
	for (int i = 0; i < n; i++) {
		if (!strcmp(args[i], "--apply"))
			apply = 1;
		else if (!strcmp(args[i], "--help") || !strcmp(args[i], "-h")) {
			printf("usage: nvshim migrate [--apply] FILE...\n");
			return 0;
		} else if (args[i][0] == '-' && args[i][1]) {
			error("migrate: unknown option %s; usage: nvshim migrate [--apply] FILE...", args[i]);
			return 2;
		} else
			files++;
	}
	if (!files) {
		fprintf(stderr, "usage: nvshim migrate [--apply] FILE...\n");
		return 2;
	}
	/* The API table's names: a use of one without a recipe is named (the table nvshim uses). */
	struct session sess;
	session_init(&sess, 0, NULL);
	char *origin = NULL;
	char *table = api_table_text(sess.cfg.api_file, sess.self.exe_dir, &origin);
	struct api_table t;
	struct argv problems = ARGV_INIT, known = ARGV_INIT;
	api_table_init(&t);
	if (table)
		api_parse(&t, table, origin, &problems);
	for (size_t k = 0; k < t.n; k++) {
		/* A changed function keeps its name: a use may be the new form already (the texture
		 * fetches excepted, whose reference form has no template argument). */
		if (t.v[k].changed && strncmp(t.v[k].name, "tex", 3) && same_name_form(&t.v[k]))
			continue;
		argv_push(&known, t.v[k].name);
		for (size_t a = 0; a < t.v[k].also.n; a++)
			argv_push(&known, t.v[k].also.v[a]);
	}
	for (int i = 0; i < n; i++) {
		if (args[i][0] == '-' && args[i][1])
			continue;
		const char *path = args[i];
		size_t len = 0;
		mode_t mode = 0644;
		char *text = read_all(path, &len, &mode);
		if (!text) {
			error("migrate: cannot read %s: %s", path, strerror(errno));
			status = 2;
			continue;
		}
		struct migrate_result r;
		struct argv props = ARGV_INIT;
		enum migrate_build_kind kind = migrate_build_kind(path);
		if (kind != MIGRATE_SOURCE) {
			/* a build file: CUDA 13.0's moved files (migrate_build.h) */
			migrate_build_text(text, len, kind, &r);
		} else {
			header_props(path, text, len, &props);
			migrate_text_with(text, len, &known, &props, &r);
		}
		argv_release(&props);
		for (size_t k = 0; k < r.skipped.n; k++)
			warning("migrate: %s:%s", path, r.skipped.v[k]);
		if (r.skipped.n && status < 1)
			status = 1;
		if (r.len != len || memcmp(r.text, text, len)) {
			char *d = migrate_diff(path, text, len, r.text, r.len);
			fputs(d, stdout);
			free(d);
			if (apply) {
				if (write_atomic(path, r.text, r.len, mode)) {
					error("migrate: cannot write %s: %s", path, strerror(errno));
					status = 2;
				} else {
					diag_note(VERBOSITY_NORMAL, "migrate: %s: %zu use%s rewritten", path, r.changes,
						  r.changes == 1 ? "" : "s");
				}
			}
		}
		migrate_result_release(&r);
		free(text);
	}
	argv_release(&problems);
	argv_release(&known);
	api_table_release(&t);
	free(table);
	free(origin);
	session_release(&sess);
	fflush(stdout);
	return status;
}
