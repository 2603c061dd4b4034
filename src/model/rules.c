#include "model/rules.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libiberty.h>

#include "base/inifile.h"
#include "model/invocation.h"

int rules_section(const char *section, char **glob)
{
	if (strncmp(section, "module", 6) || !isspace((unsigned char)section[6]))
		return 0;
	const char *g = section + 6;
	while (isspace((unsigned char)*g))
		g++;
	size_t n = strlen(g);
	while (n && isspace((unsigned char)g[n - 1]))
		n--;
	if (n >= 2 && g[0] == '"' && g[n - 1] == '"') {
		g++;
		n -= 2;
	}
	if (!n)
		return 0;
	*glob = xstrndup(g, n);
	return 1;
}

void rules_intercept_section(char *line, char **glob)
{
	char *p = line;
	while (isspace((unsigned char)*p))
		p++;
	if (*p != '[' || strncmp(p + 1, "module", 6) || (p[7] != ']' && !isspace((unsigned char)p[7])))
		return;
	char *close = strrchr(p, ']');
	if (!close)
		return;
	char *inner = xstrndup(p + 1, (size_t)(close - p - 1));
	free(*glob);
	*glob = NULL;
	rules_section(inner, glob);
	free(inner);
	strcpy(line, "[module]\n");
}

/* An arch number from "90", "sm_90", "compute_90" (no suffix). */
static int arch_number(const char *v, unsigned *num)
{
	struct arch a;
	char *end;
	if (!arch_parse(v, &a) && !a.suffix) {
		*num = a.num;
		return 0;
	}
	unsigned long n = strtoul(v, &end, 10);
	if (end == v || *end || n < 10 || n > 9999)
		return -1;
	*num = (unsigned)n;
	return 0;
}

int rules_check(const char *key, const char *value, char **why)
{
	*why = NULL;
	unsigned num;
	if (!*value)
		return 0;
	if (!strcmp(key, "min_arch") || !strcmp(key, "max_arch")) {
		if (arch_number(value, &num))
			*why = xasprintf("'%s' must be an arch such as 80 or sm_80, not '%s'", key, value);
	} else if (!strcmp(key, "require") || !strcmp(key, "drop")) {
		struct argv items = ARGV_INIT;
		char *copy = xstrdup(value);
		for (char *p = copy; *p; p++)
			if (isspace((unsigned char)*p))
				*p = ',';
		invocation_split_list(&items, copy);
		free(copy);
		for (size_t i = 0; i < items.n && !*why; i++) {
			struct arch a;
			int ok = !strcmp(key, "require")
					 ? !arch_parse(items.v[i], &a) && a.kind == ARCH_REAL && a.suffix
					 : !arch_parse(items.v[i], &a) || !arch_number(items.v[i], &num);
			if (!ok)
				*why = xasprintf(!strcmp(key, "require")
							 ? "'require' takes arch-specific targets such as sm_90a or sm_100f, not '%s'"
							 : "'drop' takes targets such as sm_75, compute_75 or 75, not '%s'",
						 items.v[i]);
		}
		argv_release(&items);
	} else if (strcmp(key, "flags")) {
		*why = xasprintf("unknown rule key '%s' (min_arch, max_arch, require, drop, flags)", key);
	}
	return *why ? -1 : 0;
}

struct dir_state {
	struct argv *quads;
	struct inifile ini;
	char *glob;
};

static void on_section(struct inifile *f, char *line, void *user)
{
	(void)f;
	struct dir_state *st = user;
	rules_intercept_section(line, &st->glob);
}

static int on_entry(void *user, const char *section, const char *name, const char *value)
{
	struct dir_state *st = user;
	int lineno = st->ini.line;
	char *why = NULL;
	const char *glob = strcmp(section, "module") ? NULL : st->glob;
	if (!glob) {
		argv_pushf(st->ini.problems, "%s:%d: only [module \"GLOB\"] sections belong in a rules directory; "
			   "'%s' ignored", st->ini.origin, lineno, name);
	} else if (rules_check(name, value, &why)) {
		argv_pushf(st->ini.problems, "%s:%d: %s", st->ini.origin, lineno, why);
	} else {
		argv_push(st->quads, glob);
		argv_push(st->quads, name);
		argv_push(st->quads, value);
		argv_pushf(st->quads, "%s:%d", st->ini.origin, lineno);
	}
	free(why);
	return 1;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char *rules_dir_path(const char *setting, const char *exe_dir)
{
	if (setting && *setting)
		return xstrdup(setting);
	if (!exe_dir)
		return NULL;
	/* <prefix>/libexec/nvshim/bin (nvshim as nvcc): the prefix's, like <prefix>/bin's */
	static const char libexec[] = "/libexec/nvshim/bin";
	size_t n = strlen(exe_dir), ln = sizeof(libexec) - 1;
	if (n > ln && !strcmp(exe_dir + n - ln, libexec)) {
		char *dir = xasprintf("%.*s/etc/nvshim/modules.d", (int)(n - ln), exe_dir);
		struct stat sb;
		if (!stat(dir, &sb))
			return dir;
		free(dir);
		return NULL;
	}
	const char *slash = strrchr(exe_dir, '/');
	char *installed = xasprintf("%.*s/etc/nvshim/modules.d", (int)(slash ? slash - exe_dir : 0), exe_dir);
	char *build = concat(exe_dir, "/etc/nvshim/modules.d", NULL);
	struct stat sb;
	char *dir = !stat(installed, &sb) ? installed : !stat(build, &sb) ? build : NULL;
	if (dir != installed)
		free(installed);
	if (dir != build)
		free(build);
	return dir;
}

static void ini_files(const char *dir, struct argv *names)
{
	DIR *d = dir && *dir ? opendir(dir) : NULL;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n > 4 && !strcmp(e->d_name + n - 4, ".ini") && e->d_name[0] != '.')
			argv_pushf(names, "%s/%s", dir, e->d_name);
	}
	if (d)
		closedir(d);
	qsort(names->v, names->n, sizeof(char *), by_name);
}

void rules_dir_identity(const char *dir, struct argv *out)
{
	struct argv names = ARGV_INIT;
	ini_files(dir, &names);
	for (size_t i = 0; i < names.n; i++) {
		struct stat sb;
		if (!stat(names.v[i], &sb))
			argv_pushf(out, "rules %s %lld %lld.%09ld", names.v[i], (long long)sb.st_size,
				   (long long)sb.st_mtim.tv_sec, (long)sb.st_mtim.tv_nsec);
	}
	argv_release(&names);
}

void rules_load_dir(struct argv *quads, const char *dir, struct argv *problems)
{
	struct argv names = ARGV_INIT;
	ini_files(dir, &names);
	for (size_t i = 0; i < names.n; i++) {
		FILE *f = fopen(names.v[i], "r");
		if (!f)
			continue;
		struct dir_state st = { quads, INIFILE_INIT(names.v[i], problems), NULL };
		st.ini.on_section = on_section;
		int rc = inifile_read_file(&st.ini, f, on_entry, &st);
		free(st.glob);
		fclose(f);
		if (rc > 0)
			argv_pushf(problems, "%s:%d: not a valid line", names.v[i], rc);
	}
	argv_release(&names);
}

/* Glob matching where '*' and '?' stop at '/', and '**' does not. */
static int match(const char *g, const char *s)
{
	for (; *g; g++, s++) {
		if (g[0] == '*' && g[1] == '*') {
			g += 2;
			if (*g == '/')
				g++; /* "**" + "/" also matches no directory at all */
			for (const char *t = s;; t++) {
				if (match(g, t))
					return 1;
				if (!*t)
					return 0;
			}
		}
		if (*g == '*') {
			for (const char *t = s;; t++) {
				if (match(g + 1, t))
					return 1;
				if (!*t || *t == '/')
					return 0;
			}
		}
		if (!*s)
			return 0;
		if (*g == '?') {
			if (*s == '/')
				return 0;
			continue;
		}
		if (*g == '[') {
			const char *q = g + 1;
			int neg = *q == '!' || *q == '^';
			if (neg)
				q++;
			int hit = 0;
			const char *start = q;
			while (*q && (*q != ']' || q == start)) {
				if (q[1] == '-' && q[2] && q[2] != ']') {
					hit |= *s >= q[0] && *s <= q[2];
					q += 3;
				} else {
					hit |= *s == *q;
					q++;
				}
			}
			if (!*q || hit == neg || *s == '/')
				return 0;
			g = q;
			continue;
		}
		if (*g != *s)
			return 0;
	}
	return !*s;
}

int rules_glob_match(const char *glob, const char *path)
{
	if (glob[0] == '/')
		return match(glob, path);
	if (!strchr(glob, '/'))
		return match(glob, lbasename(path));
	for (const char *p = path; p; p = strchr(p + 1, '/'))
		if (match(glob, p + (*p == '/')))
			return 1;
	return 0;
}

void rules_effect_init(struct rule_effect *e)
{
	memset(e, 0, sizeof(*e));
	argv_init(&e->require);
	argv_init(&e->drop);
	argv_init(&e->flags);
}

void rules_effect_release(struct rule_effect *e)
{
	argv_release(&e->require);
	argv_release(&e->drop);
	argv_release(&e->flags);
	for (int i = 0; i < 5; i++)
		free(e->origin[i]);
	rules_effect_init(e);
}

static void split_items(struct argv *out, const char *value)
{
	char *copy = xstrdup(value);
	for (char *p = copy; *p; p++)
		if (isspace((unsigned char)*p))
			*p = ',';
	invocation_split_list(out, copy);
	free(copy);
}

static void apply(struct rule_effect *e, const struct argv *q)
{
	for (size_t i = 0; i + 3 < q->n; i += 4) {
		const char *key = q->v[i + 1], *value = q->v[i + 2], *origin = q->v[i + 3];
		/* the path is matched by the caller through e->matched's loop */
		int slot = !strcmp(key, "min_arch") ? 0 : !strcmp(key, "max_arch") ? 1 : !strcmp(key, "require") ? 2
			   : !strcmp(key, "drop") ? 3 : !strcmp(key, "flags") ? 4 : -1;
		if (slot < 0 || q->v[i][0] != '\001')
			continue;
		free(e->origin[slot]);
		e->origin[slot] = *value ? xasprintf("[module \"%s\"] at %s", q->v[i] + 1, origin) : NULL;
		unsigned num = 0;
		switch (slot) {
		case 0:
		case 1:
			if (*value && arch_number(value, &num))
				num = 0;
			*(slot ? &e->max_arch : &e->min_arch) = num;
			break;
		case 2:
			argv_release(&e->require);
			split_items(&e->require, value);
			break;
		case 3:
			argv_release(&e->drop);
			split_items(&e->drop, value);
			break;
		case 4: {
			argv_release(&e->flags);
			char **v = *value ? buildargv(value) : NULL;
			for (char **p = v; p && *p; p++)
				argv_push(&e->flags, *p);
			freeargv(v);
			break;
		}
		}
	}
}

void rules_resolve(const struct argv *dir_quads, const struct argv *config_quads, const char *abs_path,
		   struct rule_effect *e)
{
	const struct argv *lists[2] = { dir_quads, config_quads };
	for (int l = 0; l < 2; l++) {
		const struct argv *q = lists[l];
		if (!q)
			continue;
		/* Matching entries only, marked so that apply() takes them. */
		struct argv hits = ARGV_INIT;
		for (size_t i = 0; i + 3 < q->n; i += 4) {
			if (!rules_glob_match(q->v[i], abs_path))
				continue;
			argv_pushf(&hits, "\001%s", q->v[i]);
			argv_push(&hits, q->v[i + 1]);
			argv_push(&hits, q->v[i + 2]);
			argv_push(&hits, q->v[i + 3]);
			e->matched = 1;
		}
		apply(e, &hits);
		argv_release(&hits);
	}
}

int rules_drops(const struct rule_effect *e, const struct arch *code)
{
	for (size_t i = 0; i < e->drop.n; i++) {
		struct arch a;
		unsigned num;
		if (!arch_parse(e->drop.v[i], &a)) {
			if (arch_equal(&a, code))
				return 1;
		} else if (!arch_number(e->drop.v[i], &num) && num == code->num && !code->suffix) {
			return 1;
		}
	}
	return 0;
}
