#include "buildwide/stats.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libiberty.h>

#include "base/cache.h"
#include "base/logfile.h"

/* getrandom(2) through syscall(): glibc has the wrapper only from 2.25, and the wheels are built
 * for 2.17 (docs/packaging.md). A kernel without it (before 3.17) fails it, and the caller falls
 * back. */
#define NVSHIM_GRND_NONBLOCK 0x0001

#define JOURNAL_HEADER "nvshim-stats-journal\t"
/* The most milliseconds one count holds (some 31,000 years): a line that says more is damaged,
 * and a sum stops there. */
#define STATS_MAX_MS 1e15

static const char *const kind_names[STATS_NKINDS] = { "rule", "dropped", "renamed", "upgraded", "source",
							 "method", "not_built" };
static const char kind_letters[STATS_NKINDS + 1] = "rdnusmo";

const char *stats_kind_name(enum stats_kind k) { return kind_names[k]; }

/* ---- counters ---- */

/* A name as the record keeps it: at most STATS_MAX_NAME bytes, no control characters (the
 * record's separators are tabs and newlines). xmalloc'ed. */
static char *clean_name(const char *s)
{
	size_t len = strlen(s);
	if (len > STATS_MAX_NAME)
		len = STATS_MAX_NAME;
	char *c = xstrndup(s, len);
	for (char *p = c; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return c;
}

static void counts_release(struct stats_counts *c)
{
	for (int k = 0; k < STATS_NKINDS; k++) {
		for (size_t i = 0; i < c->nitems[k]; i++)
			free(c->items[k][i].name);
		free(c->items[k]);
	}
	memset(c, 0, sizeof(*c));
}

static void counts_add_item(struct stats_counts *c, int k, const char *name, unsigned long long n)
{
	char *clean = clean_name(name);
	size_t i;
	for (i = 0; i < c->nitems[k]; i++)
		if (!strcmp(c->items[k][i].name, clean))
			break;
	if (i == c->nitems[k] && i >= STATS_MAX_ITEMS) {
		free(clean);
		clean = xstrdup(STATS_OTHER);
		for (i = 0; i < c->nitems[k]; i++)
			if (!strcmp(c->items[k][i].name, clean))
				break;
	}
	if (i == c->nitems[k]) {
		c->items[k] = XRESIZEVEC(struct stats_item, c->items[k], i + 1);
		c->items[k][i].name = clean;
		c->items[k][i].n = 0;
		c->nitems[k]++;
	} else {
		free(clean);
	}
	c->items[k][i].n += n;
}

static void counts_add_entry(struct stats_counts *c, const struct stats_entry *e)
{
	c->invocations++;
	c->rewritten += e->rewritten != 0;
	c->probes += e->probes;
	c->hits += e->hits;
	c->quieted += e->quieted;
	/* held within what a summary may hold (parse_ms()), so that a sum is read back */
	c->added_ms += e->added_ms;
	if (c->added_ms > STATS_MAX_MS)
		c->added_ms = STATS_MAX_MS;
	for (int k = 0; k < STATS_NKINDS; k++)
		for (size_t i = 0; i < e->items[k].n; i++)
			counts_add_item(c, k, e->items[k].v[i], 1);
}

void stats_init(struct stats *st, long long since)
{
	memset(st, 0, sizeof(*st));
	st->since = since;
	st->gen = xstrdup("");
}

static void build_free(struct stats_build *b)
{
	free(b->id);
	free(b->tool);
	free(b->dir);
	counts_release(&b->c);
}

void stats_release(struct stats *st)
{
	for (size_t i = 0; i < st->nbuilds; i++)
		build_free(&st->builds[i]);
	free(st->builds);
	free(st->gen);
	counts_release(&st->total);
	memset(st, 0, sizeof(*st));
}

/* The build of an id, compared as build_new() stores it (clean_name()). */
static struct stats_build *build_find(struct stats *st, const char *id)
{
	char *clean = clean_name(id);
	struct stats_build *b = NULL;
	for (size_t i = 0; i < st->nbuilds && !b; i++)
		if (!strcmp(st->builds[i].id, clean))
			b = &st->builds[i];
	free(clean);
	return b;
}

/* A new build at the end; the one seen least recently goes when there are too many. */
static struct stats_build *build_new(struct stats *st, const char *id, const char *tool, const char *dir)
{
	if (st->nbuilds >= STATS_MAX_BUILDS) {
		size_t old = 0;
		for (size_t i = 1; i < st->nbuilds; i++)
			if (st->builds[i].last < st->builds[old].last)
				old = i;
		build_free(&st->builds[old]);
		memmove(st->builds + old, st->builds + old + 1, (st->nbuilds - old - 1) * sizeof(*st->builds));
		st->nbuilds--;
	}
	st->builds = XRESIZEVEC(struct stats_build, st->builds, st->nbuilds + 1);
	struct stats_build *b = &st->builds[st->nbuilds++];
	memset(b, 0, sizeof(*b));
	b->id = clean_name(id);
	b->tool = clean_name(tool ? tool : "");
	b->dir = clean_name(dir ? dir : "");
	return b;
}

void stats_add(struct stats *st, const struct stats_entry *e)
{
	if (!st->since || e->time < st->since)
		st->since = e->time;
	counts_add_entry(&st->total, e);
	if (!e->build_id || !*e->build_id || !strcmp(e->build_id, "-"))
		return;
	char *id = clean_name(e->build_id);
	struct stats_build *b = build_find(st, id);
	if (!b) {
		b = build_new(st, id, e->tool, e->dir);
		b->first = e->time;
	}
	free(id);
	if (e->time < b->first)
		b->first = e->time;
	if (e->time > b->last)
		b->last = e->time;
	counts_add_entry(&b->c, e);
}

/* ---- one invocation ---- */

void stats_entry_init(struct stats_entry *e)
{
	memset(e, 0, sizeof(*e));
	for (int k = 0; k < STATS_NKINDS; k++)
		argv_init(&e->items[k]);
}

void stats_entry_release(struct stats_entry *e)
{
	for (int k = 0; k < STATS_NKINDS; k++)
		argv_release(&e->items[k]);
}

static void push_unique(struct argv *a, const char *s, size_t len)
{
	char *item = xstrndup(s, len);
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->v[i], item)) {
			free(item);
			return;
		}
	argv_push_owned(a, item);
}

/* "a, b, c" from s[0..len) into a. */
static void push_list(struct argv *a, const char *s, size_t len)
{
	while (len) {
		const char *comma = memmem(s, len, ", ", 2);
		size_t n = comma ? (size_t)(comma - s) : len;
		if (n)
			push_unique(a, s, n);
		if (!comma)
			break;
		len -= n + 2;
		s += n + 2;
	}
}

static int starts(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

void stats_entry_from_notes(struct stats_entry *e, const struct argv *notes)
{
	for (size_t i = 0; i < notes->n; i++) {
		const char *note = notes->v[i];
		size_t len = strlen(note);
		const char *open = NULL;
		for (const char *p = note; (p = strstr(p, " [")); p++)
			open = p;
		if (!len || note[len - 1] != ']' || !open)
			continue;
		size_t tlen = (size_t)(open - note);
		const char *rule = open + 2;
		size_t rlen = (size_t)(note + len - 1 - rule);
		char *r = xstrndup(rule, rlen);
		char *text = xstrndup(note, tlen);
		if (strcmp(r, "cc.nvcc") && strcmp(r, "cc.translate") && strcmp(r, "modules.method") &&
		    strcmp(r, "modules.confirm"))
			e->rewritten = 1;
		/* one per source's note: how its targets were decided */
		if (!strcmp(r, "modules.method"))
			argv_push(&e->items[STATS_METHOD], "preprocessing");
		else if (!strcmp(r, "modules.stubs"))
			argv_push(&e->items[STATS_METHOD], "object");
		else if (!strcmp(r, "modules.probe"))
			argv_push(&e->items[STATS_METHOD], "probe");
		push_unique(&e->items[STATS_RULE], r, rlen);
		const char *end;
		if (!strcmp(r, "targets.unsupported")) {
			if (starts(text, "renamed ") && (end = strstr(text, " for nvcc ")))
				push_list(&e->items[STATS_RENAMED], text + 8, (size_t)(end - text - 8));
			else if (starts(text, "dropped ") && (end = strstr(text, ": not supported")))
				push_list(&e->items[STATS_DROPPED], text + 8, (size_t)(end - text - 8));
		} else if (!strcmp(r, "targets.only") && (end = strstr(text, "; not built: "))) {
			push_list(&e->items[STATS_NOT_BUILT], end + 13, strlen(end + 13));
		} else if (starts(r, "modules") && (end = strstr(text, ": ")) && end > text &&
			   !memchr(text, ' ', (size_t)(end - text))) {
			/* "<source>: dropped A, B: why" and "<source>: A -> B, C -> D: why" */
			push_unique(&e->items[STATS_SOURCE], text, (size_t)(end - text));
			const char *rest = end + 2, *stop = strstr(rest, ": ");
			size_t n = stop ? (size_t)(stop - rest) : strlen(rest);
			if (starts(rest, "dropped "))
				push_list(&e->items[STATS_DROPPED], rest + 8, n - 8);
			else if (memmem(rest, n, " -> ", 4))
				push_list(&e->items[STATS_UPGRADED], rest, n);
		}
		free(text);
		free(r);
	}
}

char *stats_entry_format(const struct stats_entry *e)
{
	char *id = clean_name(e->build_id && *e->build_id ? e->build_id : "-");
	char *tool = clean_name(e->tool ? e->tool : "");
	char *dir = clean_name(e->dir ? e->dir : "");
	char *line = xasprintf("i\t%lld\t%s\t%s\t%s\t%.3f\t%d\t%lu\t%lu\t%lu", e->time, id, tool, dir,
			       e->added_ms >= 0 && isfinite(e->added_ms) ? e->added_ms : 0.0, e->rewritten != 0,
			       e->probes, e->hits, e->quieted);
	free(id);
	free(tool);
	free(dir);
	for (int k = 0; k < STATS_NKINDS; k++)
		for (size_t i = 0; i < e->items[k].n; i++) {
			char *name = clean_name(e->items[k].v[i]);
			char *longer = xasprintf("%s\t%c:%s", line, kind_letters[k], name);
			free(name);
			free(line);
			line = longer;
		}
	char *out = concat(line, "\n", NULL);
	free(line);
	return out;
}

/* ---- reading ---- */

static int parse_ull(const char *s, unsigned long long *out)
{
	if (*s < '0' || *s > '9')
		return -1;
	char *end;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return *end || errno ? -1 : 0;
}

static int parse_ll(const char *s, long long *out)
{
	unsigned long long u;
	if (parse_ull(s, &u) || u > (unsigned long long)1 << 62)
		return -1;
	*out = (long long)u;
	return 0;
}

static int parse_ms(const char *s, double *out)
{
	if (*s < '0' || *s > '9')
		return -1;
	char *end;
	*out = strtod(s, &end);
	return *end || !isfinite(*out) || *out < 0 || *out > STATS_MAX_MS ? -1 : 0;
}

/* Splits line (modified) at tabs into at most max fields; returns the count. */
static size_t split_tabs(char *line, char **f, size_t max)
{
	size_t n = 0;
	char *p = line;
	while (n < max) {
		f[n++] = p;
		p = strchr(p, '\t');
		if (!p)
			break;
		*p++ = '\0';
	}
	return n;
}

/* One journal line (without its newline); 0, or -1 when it is not one. */
static int add_journal_line(struct stats *st, char *line)
{
	char *f[10 + 256] = { 0 };
	size_t n = split_tabs(line, f, sizeof(f) / sizeof(f[0]));
	struct stats_entry e;
	unsigned long long rewritten, probes, hits, quieted;
	if (n < 10 || strcmp(f[0], "i"))
		return -1;
	stats_entry_init(&e);
	if (parse_ll(f[1], &e.time) || !*f[2] || parse_ms(f[5], &e.added_ms) || parse_ull(f[6], &rewritten) ||
	    parse_ull(f[7], &probes) || parse_ull(f[8], &hits) || parse_ull(f[9], &quieted) || rewritten > 1 ||
	    probes > 1000000 || hits > 1000000 || quieted > 1000000)
		goto bad;
	e.build_id = f[2];
	e.tool = f[3];
	e.dir = f[4];
	e.rewritten = (int)rewritten;
	e.probes = (unsigned long)probes;
	e.hits = (unsigned long)hits;
	e.quieted = (unsigned long)quieted;
	for (size_t i = 10; i < n; i++) {
		const char *letter = f[i][0] ? strchr(kind_letters, f[i][0]) : NULL;
		if (!letter || f[i][1] != ':' || !f[i][2])
			goto bad;
		argv_push(&e.items[letter - kind_letters], f[i] + 2);
	}
	stats_add(st, &e);
	stats_entry_release(&e);
	return 0;
bad:
	stats_entry_release(&e);
	return -1;
}

void stats_journal_gen(const char *text, size_t len, char *gen, size_t size)
{
	size_t h = strlen(JOURNAL_HEADER);
	const char *nl = memchr(text, '\n', len);
	snprintf(gen, size, "none");
	if (len > h && !memcmp(text, JOURNAL_HEADER, h) && nl) {
		size_t n = (size_t)(nl - text) - h;
		if (n && n < size && !memchr(text + h, '\t', n) && !memchr(text + h, '\0', n)) {
			memcpy(gen, text + h, n);
			gen[n] = '\0';
		}
	}
}

/* Adds the whole lines of text[offset..len); *end is where the last one ends. */
static size_t add_journal(struct stats *st, const char *text, size_t len, size_t offset, size_t *end)
{
	size_t added = 0, at = offset > len ? len : offset;
	*end = at;
	while (at < len) {
		const char *nl = memchr(text + at, '\n', len - at);
		if (!nl)
			break;
		size_t n = (size_t)(nl - (text + at));
		/* the header line (bounded: the text is not NUL-terminated) */
		int header = n >= strlen(JOURNAL_HEADER) && !memcmp(text + at, JOURNAL_HEADER, strlen(JOURNAL_HEADER));
		if (n && !memchr(text + at, '\0', n) && !header) {
			char *line = xstrndup(text + at, n);
			added += !add_journal_line(st, line);
			free(line);
		}
		at += n + 1;
		*end = at;
	}
	return added;
}

/* The journal's lines that the summary has not merged yet (all of them when the journal is of
 * another generation) added to st; gen gets the journal's generation, *end where its last
 * whole line ends. */
static void merge_journal(struct stats *st, const char *text, size_t len, char *gen, size_t size, size_t *end)
{
	stats_journal_gen(text, len, gen, size);
	add_journal(st, text, len, !strcmp(st->gen, gen) ? st->offset : 0, end);
}

size_t stats_add_journal(struct stats *st, const char *text, size_t len, size_t offset)
{
	size_t end;
	return add_journal(st, text, len, offset, &end);
}

/* A scope of the summary: "total" or a build's number. */
static struct stats_counts *scope_counts(struct stats *st, const char *scope)
{
	unsigned long long i;
	if (!strcmp(scope, "total"))
		return &st->total;
	if (parse_ull(scope, &i) || i >= st->nbuilds)
		return NULL;
	return &st->builds[i].c;
}

static int parse_line(struct stats *st, char *line, int *seen_end)
{
	char *f[8] = { 0 };
	size_t n = split_tabs(line, f, 8);
	struct stats_counts *c;
	if (!strcmp(f[0], "end") && n == 1) {
		*seen_end = 1;
		return 0;
	}
	if (!strcmp(f[0], "since") && n == 2)
		return parse_ll(f[1], &st->since);
	if (!strcmp(f[0], "merged") && n == 3 && strlen(f[1]) < 64) {
		free(st->gen);
		st->gen = xstrdup(f[1]);
		return parse_ull(f[2], &st->offset);
	}
	if (!strcmp(f[0], "build") && n == 6 && *f[1]) {
		long long first, last;
		if (st->nbuilds >= STATS_MAX_BUILDS || build_find(st, f[1]) || parse_ll(f[2], &first) ||
		    parse_ll(f[3], &last))
			return -1;
		struct stats_build *b = build_new(st, f[1], f[4], f[5]);
		b->first = first;
		b->last = last;
		return 0;
	}
	if (!strcmp(f[0], "count") && n == 8 && (c = scope_counts(st, f[1]))) {
		unsigned long long v[5];
		double ms;
		for (int i = 0; i < 5; i++)
			if (parse_ull(f[2 + i], &v[i]))
				return -1;
		if (parse_ms(f[7], &ms))
			return -1;
		c->invocations = v[0];
		c->rewritten = v[1];
		c->probes = v[2];
		c->hits = v[3];
		c->quieted = v[4];
		c->added_ms = ms;
		return 0;
	}
	if (!strcmp(f[0], "item") && n == 5 && (c = scope_counts(st, f[1])) && *f[4]) {
		unsigned long long v;
		for (int k = 0; k < STATS_NKINDS; k++)
			if (!strcmp(f[2], kind_names[k]))
				return parse_ull(f[3], &v) ? -1 : (counts_add_item(c, k, f[4], v), 0);
	}
	return -1;
}

int stats_parse(struct stats *st, const char *text, size_t len)
{
	static const char head[] = "nvshim-stats\t1\n";
	int seen_end = 0, rc = 0;
	stats_release(st);
	stats_init(st, 0);
	if (len < sizeof(head) - 1 || memcmp(text, head, sizeof(head) - 1))
		rc = -1;
	for (size_t at = sizeof(head) - 1; !rc && at < len && !seen_end;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
		if (!nl || memchr(text + at, '\0', n)) {
			rc = -1;
			break;
		}
		char *line = xstrndup(text + at, n);
		rc = parse_line(st, line, &seen_end);
		free(line);
		at += n + 1;
		if (seen_end && at != len)
			rc = -1;
	}
	if (!rc && !seen_end)
		rc = -1;
	if (rc) {
		stats_release(st);
		stats_init(st, 0);
	}
	return rc;
}

/* ---- writing ---- */

struct out {
	char *buf;
	size_t len;
};

static void outf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void outf(struct out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = xvasprintf(fmt, ap);
	va_end(ap);
	size_t n = strlen(s);
	o->buf = XRESIZEVEC(char, o->buf, o->len + n + 1);
	memcpy(o->buf + o->len, s, n + 1);
	o->len += n;
	free(s);
}

static void format_counts(struct out *o, const char *scope, const struct stats_counts *c)
{
	outf(o, "count\t%s\t%llu\t%llu\t%llu\t%llu\t%llu\t%.3f\n", scope, c->invocations, c->rewritten,
	     c->probes, c->hits, c->quieted, c->added_ms);
	for (int k = 0; k < STATS_NKINDS; k++)
		for (size_t i = 0; i < c->nitems[k]; i++)
			outf(o, "item\t%s\t%s\t%llu\t%s\n", scope, kind_names[k], c->items[k][i].n,
			     c->items[k][i].name);
}

char *stats_format(const struct stats *st)
{
	struct out o = { xstrdup(""), 0 };
	outf(&o, "nvshim-stats\t1\nsince\t%lld\nmerged\t%s\t%llu\n", st->since, st->gen, st->offset);
	for (size_t i = 0; i < st->nbuilds; i++)
		outf(&o, "build\t%s\t%lld\t%lld\t%s\t%s\n", st->builds[i].id, st->builds[i].first,
		     st->builds[i].last, st->builds[i].tool, st->builds[i].dir);
	format_counts(&o, "total", &st->total);
	for (size_t i = 0; i < st->nbuilds; i++) {
		char scope[32];
		snprintf(scope, sizeof(scope), "%zu", i);
		format_counts(&o, scope, &st->builds[i].c);
	}
	outf(&o, "end\n");
	return o.buf;
}

/* ---- this process ---- */

static unsigned long process_probes, process_hits, process_quieted;

void stats_count_probes(unsigned long n) { process_probes += n; }
void stats_count_hit(void) { process_hits++; }
void stats_count_quieted(void) { process_quieted++; }

void stats_process_counts(unsigned long *probes, unsigned long *hits, unsigned long *quieted)
{
	*probes = process_probes;
	*hits = process_hits;
	*quieted = process_quieted;
}

/* ---- the files ---- */

static char *record_path(const char *cache_dir, const char *name)
{
	return concat(cache_dir, "/stats/", name, NULL);
}

int stats_record(const char *cache_dir, const struct stats_entry *e)
{
	if (!cache_dir || !*cache_dir)
		return -1;
	char *path = record_path(cache_dir, "journal");
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 && errno == ENOENT) {
		char *dir = concat(cache_dir, "/stats", NULL);
		if (!cache_mkdirs(dir))
			fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
		free(dir);
	}
	free(path);
	if (fd < 0)
		return -1;
	char *line = stats_entry_format(e);
	size_t len = strlen(line);
	struct stat st;
	int rc = -1, merge = 0;
	/* shared: appends run side by side; a merge waits for those in flight */
	if (!flock(fd, LOCK_SH) && !fstat(fd, &st)) {
		if (st.st_size + (off_t)len <= STATS_JOURNAL_MAX)
			rc = write(fd, line, len) == (ssize_t)len ? 0 : -1;
		merge = st.st_size + (off_t)len > STATS_JOURNAL_MERGE;
	}
	close(fd);
	free(line);
	if (merge)
		stats_compact(cache_dir, 0, NULL);
	return rc;
}

/* The whole of an open file, at most max bytes (xmalloc'ed, NUL-terminated); *len its length. */
static char *read_fd(int fd, size_t max, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = XNEWVEC(char, cap + 1);
	while (n < max) {
		if (n == cap) {
			cap = cap * 2 > max ? max : cap * 2;
			buf = XRESIZEVEC(char, buf, cap + 1);
		}
		ssize_t got = pread(fd, buf + n, cap - n, (off_t)n);
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

static void new_gen(char out[17])
{
	unsigned long long r = 0;
	if (syscall(SYS_getrandom, &r, sizeof(r), NVSHIM_GRND_NONBLOCK) != (ssize_t)sizeof(r))
		r = (unsigned long long)time(NULL) * 2654435761u ^ (unsigned long long)getpid() << 32;
	snprintf(out, 17, "%016llx", r);
}

/* The summary as it is on disk; a damaged one is started again (*damaged set). */
static void load_summary(struct stats *st, const char *cache_dir, int *damaged)
{
	char *path = record_path(cache_dir, "summary");
	char *text = cache_read(path);
	free(path);
	stats_init(st, 0);
	if (text && stats_parse(st, text, strlen(text)) && damaged)
		*damaged = 1;
	free(text);
}

/* Empties the journal (an exclusive flock held) and gives it a new generation. */
static int journal_restart(int jfd)
{
	char gen[17];
	new_gen(gen);
	char *head = concat(JOURNAL_HEADER, gen, "\n", NULL);
	size_t n = strlen(head);
	int rc = ftruncate(jfd, 0) || pwrite(jfd, head, n, 0) != (ssize_t)n ? -1 : 0;
	free(head);
	return rc;
}

/* Writes the summary, then empties the journal (jfd, locked): the summary first, so that a
 * crash before the journal is emptied leaves `merged` pointing past what it holds. */
static int write_summary(const char *cache_dir, const struct stats *st, int jfd)
{
	char *summary = stats_format(st), *path = record_path(cache_dir, "summary");
	char *dir = concat(cache_dir, "/stats", NULL);
	int rc = cache_write(dir, path, summary) || journal_restart(jfd) ? -1 : 0;
	free(dir);
	free(path);
	free(summary);
	return rc;
}

/* Takes the record's lock and the journal's exclusive flock. Returns the journal's fd (and
 * *lock_fd), -2 when another process holds the lock and !wait, -1 on failure. */
static int record_lock(const char *cache_dir, int wait, int *lock_fd)
{
	char *dir = concat(cache_dir, "/stats", NULL);
	char *lock = record_path(cache_dir, "lock"), *journal = record_path(cache_dir, "journal");
	int lfd = cache_mkdirs(dir) ? -1 : open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600), jfd = -1;
	free(dir);
	free(lock);
	if (lfd >= 0 && flock(lfd, LOCK_EX | (wait ? 0 : LOCK_NB))) {
		int busy = errno == EWOULDBLOCK;
		close(lfd);
		free(journal);
		return busy ? -2 : -1;
	}
	if (lfd >= 0)
		jfd = open(journal, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	free(journal);
	if (jfd >= 0 && flock(jfd, LOCK_EX)) {
		close(jfd);
		jfd = -1;
	}
	if (jfd < 0 && lfd >= 0)
		close(lfd);
	*lock_fd = lfd;
	return jfd;
}

static void record_unlock(int jfd, int lfd)
{
	close(jfd);
	close(lfd);
}

int stats_compact(const char *cache_dir, int wait, int *damaged)
{
	int lfd, jfd = record_lock(cache_dir, wait, &lfd);
	if (jfd < 0)
		return jfd == -2 ? 1 : -1;
	struct stats st;
	size_t len, end;
	char gen[64];
	char *text = read_fd(jfd, STATS_JOURNAL_MAX + 65536, &len);
	load_summary(&st, cache_dir, damaged);
	merge_journal(&st, text, len, gen, sizeof(gen), &end);
	free(st.gen);
	st.gen = xstrdup(gen);
	st.offset = end;
	if (!st.since)
		st.since = (long long)time(NULL);
	int rc = write_summary(cache_dir, &st, jfd);
	free(text);
	stats_release(&st);
	record_unlock(jfd, lfd);
	return rc;
}

int stats_load(struct stats *st, const char *cache_dir, int *damaged)
{
	char *spath = record_path(cache_dir, "summary"), *jpath = record_path(cache_dir, "journal");
	int have = !access(spath, F_OK) || !access(jpath, F_OK);
	free(spath);
	load_summary(st, cache_dir, damaged);
	int fd = open(jpath, O_RDONLY | O_CLOEXEC);
	free(jpath);
	if (fd >= 0) {
		size_t len, end;
		char gen[64];
		char *text = read_fd(fd, STATS_JOURNAL_MAX + 65536, &len);
		close(fd);
		merge_journal(st, text, len, gen, sizeof(gen), &end);
		free(text);
	}
	return have ? 0 : -1;
}

int stats_zero(const char *cache_dir)
{
	int lfd, jfd = record_lock(cache_dir, 1, &lfd);
	if (jfd < 0)
		return -1;
	struct stats st;
	size_t len;
	char gen[64];
	char *text = read_fd(jfd, STATS_JOURNAL_MAX + 65536, &len);
	stats_journal_gen(text, len, gen, sizeof(gen));
	stats_init(&st, (long long)time(NULL));
	/* what the journal holds now is left out, even if emptying it fails */
	free(st.gen);
	st.gen = xstrdup(gen);
	st.offset = len;
	int rc = write_summary(cache_dir, &st, jfd);
	free(text);
	stats_release(&st);
	record_unlock(jfd, lfd);
	return rc;
}

/* ---- showing ---- */

static void when(long long t, char *buf, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (!t || !localtime_r(&tt, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, size, "-");
}

static int by_count(const void *a, const void *b)
{
	const struct stats_item *x = a, *y = b;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->name, y->name);
}

static const char *const kind_titles[STATS_NKINDS] = { "rewrites by rule", "targets dropped",
						       "targets renamed", "targets upgraded",
						       "sources with per-source decisions",
						       "targets decided by (sources)",
						       "targets not built (targets_only)" };

static void print_counts(const struct stats_counts *c, FILE *out)
{
	fprintf(out, "  %-40s %12llu\n", "invocations", c->invocations);
	fprintf(out, "  %-40s %12llu\n", "rewritten", c->rewritten);
	fprintf(out, "  %-40s %12llu\n", "notes not repeated (said once per build)", c->quieted);
	fprintf(out, "  %-40s %12llu\n", "probe compiles run", c->probes);
	fprintf(out, "  %-40s %12llu\n", "cache hits (toolkit, GPUs, verdicts)", c->hits);
	fprintf(out, "  %-40s %9.1f ms", "time nvshim added", c->added_ms);
	if (c->invocations)
		fprintf(out, " (%.2f ms per invocation)", c->added_ms / (double)c->invocations);
	fputc('\n', out);
	for (int k = 0; k < STATS_NKINDS; k++) {
		if (!c->nitems[k])
			continue;
		struct stats_item *v = XDUPVEC(struct stats_item, c->items[k], c->nitems[k]);
		qsort(v, c->nitems[k], sizeof(*v), by_count);
		fprintf(out, "  %s:\n", kind_titles[k]);
		for (size_t i = 0; i < c->nitems[k]; i++)
			fprintf(out, "    %-38s %12llu\n", v[i].name, v[i].n);
		free(v);
	}
}

void stats_print(const struct stats *st, const char *where, FILE *out)
{
	char t1[64], t2[64];
	when(st->since, t1, sizeof(t1));
	fprintf(out, "nvshim statistics since %s (%s)\n\nAll invocations\n", t1, where);
	print_counts(&st->total, out);
	for (size_t i = st->nbuilds; i-- > 0;) {
		const struct stats_build *b = &st->builds[i];
		when(b->first, t1, sizeof(t1));
		when(b->last, t2, sizeof(t2));
		fprintf(out, "\nBuild by %s in %s, %s to %s\n", b->tool, *b->dir ? b->dir : "?", t1, t2);
		print_counts(&b->c, out);
	}
}

static void json_string(FILE *out, const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	logfile_json_string(&buf, &len, s);
	fputs(buf, out);
	free(buf);
}

static void json_counts(const struct stats_counts *c, FILE *out)
{
	static const char *const keys[STATS_NKINDS] = { "rules", "dropped", "renamed", "upgraded", "sources",
							"methods", "not_built" };
	fprintf(out, "\"invocations\":%llu,\"rewritten\":%llu,\"notes_quieted\":%llu,\"probes\":%llu,"
		"\"cache_hits\":%llu,\"added_ms\":%.3f",
		c->invocations, c->rewritten, c->quieted, c->probes, c->hits, c->added_ms);
	for (int k = 0; k < STATS_NKINDS; k++) {
		fprintf(out, ",\"%s\":{", keys[k]);
		for (size_t i = 0; i < c->nitems[k]; i++) {
			if (i)
				fputc(',', out);
			json_string(out, c->items[k][i].name);
			fprintf(out, ":%llu", c->items[k][i].n);
		}
		fputc('}', out);
	}
}

void stats_print_json(const struct stats *st, const char *more, FILE *out)
{
	fprintf(out, "{\"since\":%lld,\"total\":{", st->since);
	json_counts(&st->total, out);
	fputs("},\"builds\":[", out);
	for (size_t i = st->nbuilds; i-- > 0;) {
		const struct stats_build *b = &st->builds[i];
		fputs("{\"id\":", out);
		json_string(out, b->id);
		fputs(",\"tool\":", out);
		json_string(out, b->tool);
		fputs(",\"dir\":", out);
		json_string(out, b->dir);
		fprintf(out, ",\"first\":%lld,\"last\":%lld,", b->first, b->last);
		json_counts(&b->c, out);
		fputs(i ? "}," : "}", out);
	}
	fprintf(out, "]%s%s}\n", more && *more ? "," : "", more ? more : "");
}
