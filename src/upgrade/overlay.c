#include "upgrade/overlay.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libiberty.h>

#include "base/strbuf.h"

/* How much of the user's tree becomes real directories in the mirror. */
#define OVERLAY_DEPTH 16
#define OVERLAY_ENTRIES 10000

int overlay_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (!strcmp(dir, "/"))
		return path[0] == '/';
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

char *overlay_common_dir(char *const *dirs, size_t n)
{
	char *c = xstrdup(n ? dirs[0] : "/");
	for (size_t i = 1; i < n; i++) {
		while (!overlay_under(dirs[i], c)) {
			char *slash = strrchr(c, '/');
			if (!slash || slash == c) {
				strcpy(c, "/");
				break;
			}
			*slash = '\0';
		}
	}
	return c;
}

char *overlay_unmap(const char *text, const struct argv *from, const struct argv *to)
{
	size_t cap = strlen(text) + 1, len = 0;
	char *out = XNEWVEC(char, cap);
	for (const char *p = text; *p;) {
		size_t best = (size_t)-1, blen = 0;
		for (size_t i = 0; i < from->n && i < to->n; i++) {
			size_t fl = strlen(from->v[i]);
			if (fl > blen && !strncmp(p, from->v[i], fl)) {
				best = i;
				blen = fl;
			}
		}
		const char *add = best != (size_t)-1 ? to->v[best] : p;
		size_t alen = best != (size_t)-1 ? strlen(add) : 1;
		if (len + alen + 1 > cap) {
			cap = (len + alen + 1) * 2;
			out = XRESIZEVEC(char, out, cap);
		}
		memcpy(out + len, add, alen);
		len += alen;
		p += best != (size_t)-1 ? blen : 1;
	}
	out[len] = '\0';
	return out;
}

/* A comma list of directories (nvcc's -I value) with each one mapped; NULL if none was. */
static char *map_list(const char *list, int commas, char *(*map)(const char *, void *), void *arg, size_t *count)
{
	struct argv parts = ARGV_INIT;
	size_t mapped = 0;
	for (const char *p = list;;) {
		size_t n = commas ? strcspn(p, ",") : strlen(p);
		char *dir = xstrndup(p, n);
		char *to = *dir ? map(dir, arg) : NULL;
		if (to) {
			mapped++;
			argv_push_owned(&parts, to);
			free(dir);
		} else {
			argv_push_owned(&parts, dir);
		}
		if (!p[n])
			break;
		p += n + 1;
	}
	char *out = mapped ? argv_join(&parts, ",") : NULL;
	argv_release(&parts);
	*count += mapped;
	return out;
}

/* An -Xcompiler value (a comma list of host options): "-iquote,DIR", "-iquoteDIR", "-IDIR",
 * "-I,DIR" with each DIR mapped; NULL if none was. */
static char *map_xcompiler(const char *value, char *(*map)(const char *, void *), void *arg, size_t *count)
{
	struct argv toks = ARGV_INIT;
	size_t mapped = 0;
	for (const char *p = value;;) {
		size_t n = strcspn(p, ",");
		argv_push_owned(&toks, xstrndup(p, n));
		if (!p[n])
			break;
		p += n + 1;
	}
	for (size_t i = 0; i < toks.n; i++) {
		const char *t = toks.v[i];
		size_t skip = 0;
		if ((!strcmp(t, "-iquote") || !strcmp(t, "-I")) && i + 1 < toks.n) {
			char *to = *toks.v[i + 1] ? map(toks.v[i + 1], arg) : NULL;
			if (to) {
				free(toks.v[i + 1]);
				toks.v[i + 1] = to;
				mapped++;
			}
			i++;
			continue;
		}
		if (!strncmp(t, "-iquote", 7))
			skip = 7;
		else if (!strncmp(t, "-I", 2))
			skip = 2;
		if (skip && t[skip]) {
			char *to = map(t + skip, arg);
			if (to) {
				char *next = xasprintf("%.*s%s", (int)skip, t, to);
				free(to);
				free(toks.v[i]);
				toks.v[i] = next;
				mapped++;
			}
		}
	}
	char *out = mapped ? argv_join(&toks, ",") : NULL;
	argv_release(&toks);
	*count += mapped;
	return out;
}

size_t overlay_map_includes(struct argv *argv, int host, char *(*map)(const char *dir, void *arg), void *arg)
{
	size_t count = 0;
	for (size_t i = 1; i < argv->n; i++) {
		const char *s = argv->v[i];
		char *to = NULL;
		/* an option whose value is the next argument, which is a directory */
		int sep = !strcmp(s, "-I") || (host ? !strcmp(s, "-iquote") || !strcmp(s, "--include-directory")
						    : !strcmp(s, "--include-path"));
		if (sep && i + 1 < argv->n) {
			to = map_list(argv->v[i + 1], !host, map, arg, &count);
			if (to)
				argv_replace(argv, i + 1, to);
			free(to);
			i++;
			continue;
		}
		/* an option whose value is the next argument, which is not a directory */
		static const char *const valued[] = { "-o", "-MF", "-MT", "-MQ", "-x", "-include", "-imacros",
						      "-isystem", "-idirafter", "-Xlinker", "-ccbin", "--output-file",
						      "--dependency-output", "--options-file", "-optf", "-Xptxas",
						      "-Xnvlink", "-Xcudafe", "-Xarchive" };
		int skip = 0;
		for (size_t k = 0; k < sizeof(valued) / sizeof(valued[0]) && !skip; k++)
			skip = !strcmp(s, valued[k]);
		if (skip) {
			i++;
			continue;
		}
		const char *prefix = NULL;
		if (!host && (!strcmp(s, "-Xcompiler") || !strcmp(s, "--compiler-options")) && i + 1 < argv->n) {
			to = map_xcompiler(argv->v[i + 1], map, arg, &count);
			if (to)
				argv_replace(argv, i + 1, to);
			free(to);
			i++;
			continue;
		}
		if (!host && (!strncmp(s, "-Xcompiler=", 11) || !strncmp(s, "--compiler-options=", 19))) {
			size_t n = strchr(s, '=') - s + 1;
			char *v = map_xcompiler(s + n, map, arg, &count);
			to = v ? xasprintf("%.*s%s", (int)n, s, v) : NULL;
			free(v);
		} else if (host && !strncmp(s, "--include-directory=", 20)) {
			prefix = "--include-directory=";
		} else if (!host && !strncmp(s, "--include-path=", 15)) {
			prefix = "--include-path=";
		} else if (host && !strncmp(s, "-iquote", 7) && s[7]) {
			prefix = "-iquote";
		} else if (!strncmp(s, "-I", 2) && s[2]) {
			prefix = "-I";
		}
		if (prefix) {
			size_t n = strlen(prefix);
			char *v = map_list(s + n, !host, map, arg, &count);
			to = v ? concat(prefix, v, NULL) : NULL;
			free(v);
		}
		if (to)
			argv_replace(argv, i, to);
		free(to);
	}
	return count;
}

int overlay_is_c(const struct argv *argv, const char *source, int host)
{
	/* -x LANG / -xLANG (gcc), -x LANG (nvcc: c, c++, cu) */
	const char *lang = NULL;
	for (size_t i = 1; i < argv->n; i++) {
		if ((!strcmp(argv->v[i], "-x") || !strcmp(argv->v[i], "--x")) && i + 1 < argv->n)
			lang = argv->v[++i];
		else if (!strncmp(argv->v[i], "-x", 2) && argv->v[i][2] && host)
			lang = argv->v[i] + 2;
		else if (!strncmp(argv->v[i], "--x=", 4))
			lang = argv->v[i] + 4;
	}
	if (lang && strcmp(lang, "none"))
		return !strcmp(lang, "c") || !strcmp(lang, "c-header");
	size_t n = strlen(source);
	if (n < 2 || strcmp(source + n - 2, ".c"))
		return 0;
	if (host && argv->n) {
		const char *tool = strrchr(argv->v[0], '/');
		tool = tool ? tool + 1 : argv->v[0];
		return strstr(tool, "++") == NULL;
	}
	return 1;
}

void overlay_init(struct overlay *o)
{
	memset(o, 0, sizeof(*o));
	argv_init(&o->made);
}

static int placed_here(const struct argv *rel, const char *r)
{
	for (size_t i = 0; i < rel->n; i++)
		if (!strcmp(rel->v[i], r))
			return 1;
	return 0;
}

/* 1 if a placed file lies below directory r (relative to root). */
static int placed_below(const struct argv *rel, const char *r)
{
	size_t n = strlen(r);
	for (size_t i = 0; i < rel->n; i++)
		if (!strncmp(rel->v[i], r, n) && rel->v[i][n] == '/')
			return 1;
	return 0;
}

/* Mirrors directory r (relative to root; "" the root). needed: it holds a placed file (then
 * anything that goes wrong fails the mirror; elsewhere a directory gone meanwhile is left
 * empty). */
static int mirror_dir(struct overlay *o, const char *r, int depth, const struct argv *rel, const struct stat *top,
		      int needed)
{
	char *src = *r ? concat(o->root, strcmp(o->root, "/") ? "/" : "", r, NULL) : xstrdup(o->root);
	char *dst = *r ? concat(o->dir, "/", r, NULL) : xstrdup(o->dir);
	int rc = mkdir(dst, 0700) ? -1 : 0;
	if (!rc)
		argv_push_owned(&o->made, concat("d", dst, NULL));
	DIR *d = rc ? NULL : opendir(src);
	if (!d && needed)
		rc = -1;
	struct dirent *e;
	while (!rc && d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char *rr = *r ? concat(r, "/", e->d_name, NULL) : xstrdup(e->d_name);
		char *full = concat(src, strcmp(src, "/") ? "/" : "", e->d_name, NULL);
		struct stat sb;
		int below = placed_below(rel, rr);
		if (placed_here(rel, rr) || lstat(full, &sb) || (sb.st_dev == top->st_dev && sb.st_ino == top->st_ino)) {
			/* written later; gone meanwhile; or the mirror itself */
		} else if (S_ISDIR(sb.st_mode) &&
			   (below || (e->d_name[0] != '.' && strncmp(e->d_name, "nvshim-compat-", 14) &&
				      depth < OVERLAY_DEPTH && o->budget > 0))) {
			/* (another compile's mirror, a hidden directory: linked) */
			o->budget -= o->budget > 0;
			rc = mirror_dir(o, rr, depth + 1, rel, top, below);
		} else if (below) {
			rc = -1; /* a placed file must lie in directories of the mirror's own */
		} else {
			char *link = concat(dst, "/", e->d_name, NULL);
			o->budget -= o->budget > 0;
			if (symlink(full, link))
				rc = -1;
			else
				argv_push_owned(&o->made, concat("f", link, NULL));
			free(link);
		}
		free(full);
		free(rr);
	}
	if (d)
		closedir(d);
	free(src);
	free(dst);
	return rc;
}

int overlay_build(struct overlay *o, const char *root, const char *tmp, const struct argv *rel,
		  const struct argv *texts)
{
	o->root = xstrdup(root);
	o->top = concat(tmp, "/nvshim-compat-XXXXXX", NULL);
	o->budget = OVERLAY_ENTRIES;
	if (!mkdtemp(o->top)) {
		free(o->top);
		o->top = NULL;
		return -1;
	}
	argv_push_owned(&o->made, concat("d", o->top, NULL));
	o->dir = concat(o->top, "/m", NULL);
	struct stat top;
	int rc = stat(o->top, &top) ? -1 : mirror_dir(o, "", 0, rel, &top, 1);
	for (size_t i = 0; !rc && i < rel->n && i < texts->n; i++) {
		char *path = concat(o->dir, "/", rel->v[i], NULL);
		/* a new file: never through a link, never over one */
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
		if (fd < 0) {
			rc = -1;
		} else {
			argv_push_owned(&o->made, concat("f", path, NULL));
			size_t n = strlen(texts->v[i]), done = 0;
			while (done < n) {
				ssize_t w = write(fd, texts->v[i] + done, n - done);
				if (w < 0 && errno == EINTR)
					continue;
				if (w <= 0) {
					rc = -1;
					break;
				}
				done += (size_t)w;
			}
			if (close(fd))
				rc = -1;
		}
		free(path);
	}
	if (rc) {
		overlay_remove(o);
		return -1;
	}
	return 0;
}

void overlay_remove(struct overlay *o)
{
	for (size_t i = o->made.n; i-- > 0;) {
		const char *m = o->made.v[i];
		if (m[0] == 'd')
			rmdir(m + 1);
		else
			unlink(m + 1);
	}
	argv_release(&o->made);
	free(o->top);
	free(o->root);
	free(o->dir);
	overlay_init(o);
}

/* A line's prerequisite: the text without leading blanks and the trailing " \\". */
static char *prerequisite(const char *l, size_t n)
{
	while (n && (*l == ' ' || *l == '\t')) {
		l++;
		n--;
	}
	if (n && l[n - 1] == '\\')
		n--;
	while (n && (l[n - 1] == ' ' || l[n - 1] == '\t'))
		n--;
	return xstrndup(l, n);
}

/* text without the words that start with prefix (a word starts the text or follows a blank; it
 * ends at a blank that no backslash escapes), each with the blank before it. */
static char *drop_words(const char *text, const char *prefix)
{
	struct strbuf b = STRBUF_INIT;
	size_t pl = strlen(prefix);
	const char *p = text;
	for (const char *h; (h = strstr(p, prefix));) {
		if (h != text && h[-1] != ' ' && h[-1] != '\t' && h[-1] != '\n') {
			strbuf_add(&b, p, (size_t)(h - p) + pl);
			p = h + pl;
			continue;
		}
		const char *start = h;
		while (start > p && (start[-1] == ' ' || start[-1] == '\t'))
			start--;
		strbuf_add(&b, p, (size_t)(start - p));
		const char *e = h;
		while (*e && !((*e == ' ' || *e == '\t' || *e == '\n') && (e == h || e[-1] != '\\')))
			e++;
		p = e;
	}
	strbuf_addstr(&b, p);
	if (!b.s)
		strbuf_add(&b, "", 0);
	return b.s;
}

char *overlay_dedupe_deps(const char *text)
{
	struct argv lines = ARGV_INIT, seen = ARGV_INIT;
	for (const char *p = text; *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		argv_push_owned(&lines, xstrndup(p, n));
		p += n + (e != NULL);
	}
	int trailing = *text && text[strlen(text) - 1] == '\n';
	/* the first rule: its first line and the continued ones */
	size_t end = 0;
	while (end < lines.n) {
		size_t n = strlen(lines.v[end]);
		end++;
		if (!n || lines.v[end - 1][n - 1] != '\\')
			break;
	}
	struct argv out = ARGV_INIT;
	for (size_t i = 0; i < lines.n; i++) {
		const char *l = lines.v[i];
		if (i == 0 && end > 0) {
			/* "target : first \\": the first prerequisite counts as seen */
			const char *colon = strstr(l, ": ");
			if (colon)
				argv_push_owned(&seen, prerequisite(colon + 2, strlen(colon + 2)));
			argv_push(&out, l);
			continue;
		}
		if (i < end) {
			char *pre = prerequisite(l, strlen(l));
			int dup = 0;
			for (size_t k = 0; *pre && !strchr(pre, ' ') && k < seen.n && !dup; k++)
				dup = !strcmp(seen.v[k], pre);
			if (dup) {
				free(pre);
				/* the rule's last line dropped: the one before it ends the rule now */
				if (i + 1 == end && out.n) {
					char *last = out.v[out.n - 1];
					size_t n = strlen(last);
					if (n && last[n - 1] == '\\') {
						n--;
						while (n && last[n - 1] == ' ')
							n--;
						last[n] = '\0';
					}
				}
				continue;
			}
			argv_push_owned(&seen, pre);
		}
		argv_push(&out, l);
	}
	char *joined = argv_join(&out, "\n");
	char *res = trailing ? concat(joined, "\n", NULL) : xstrdup(joined);
	free(joined);
	argv_release(&out);
	argv_release(&seen);
	argv_release(&lines);
	return res;
}

char *overlay_drop_deps(const char *text, const char *prefix)
{
	char *kept = prefix && *prefix ? drop_words(text, prefix) : xstrdup(text);
	char *res = overlay_dedupe_deps(kept);
	free(kept);
	/* a line that lost its only prerequisite is " \\": gone too (the rule goes on) */
	struct strbuf b = STRBUF_INIT;
	for (const char *p = res; *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) + 1 : strlen(p);
		size_t k = 0;
		while (k < n && (p[k] == ' ' || p[k] == '\t'))
			k++;
		if (!(p[k] == '\\' && k + 1 < n && p[k + 1] == '\n'))
			strbuf_add(&b, p, n);
		p += n;
	}
	free(res);
	if (!b.s)
		strbuf_add(&b, "", 0);
	return b.s;
}
