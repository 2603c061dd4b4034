/* stats: the record of what nvshim did, for `nvshim stats`, kept without a log file.
 *
 * The record lives in <cache_dir>/stats/ and is bounded:
 *
 *   journal   one line per invocation, appended with a single write() under a shared flock:
 *             cheap enough for every compile, pass-through ones included. Its first line,
 *             when there is one, names its generation:  nvshim-stats-journal<TAB>GEN
 *             i<TAB>TIME<TAB>BUILD<TAB>TOOL<TAB>DIR<TAB>ADDED_MS<TAB>REWRITTEN<TAB>PROBES
 *               <TAB>HITS<TAB>QUIETED{<TAB>K:NAME}        K: r rule, d dropped, n renamed,
 *                                                          u upgraded, s source, m method,
 *                                                          o not built (targets_only)
 *   summary   the merged counters, totals and the last STATS_MAX_BUILDS builds:
 *             nvshim-stats<TAB>1
 *             since<TAB>TIME
 *             merged<TAB>GEN<TAB>OFFSET                 how much of the journal is in here
 *             build<TAB>ID<TAB>FIRST<TAB>LAST<TAB>TOOL<TAB>DIR     (builds numbered from 0)
 *             count<TAB>SCOPE<TAB>INVOCATIONS<TAB>REWRITTEN<TAB>PROBES<TAB>HITS<TAB>QUIETED
 *               <TAB>ADDED_MS                           SCOPE: total or a build's number
 *             item<TAB>SCOPE<TAB>KIND<TAB>N<TAB>NAME      KIND: rule dropped renamed upgraded source
 *                                                          method not_built
 *             end
 *   lock      held (flock) by whoever merges the journal into the summary.
 *
 * Merging (stats_compact()) runs when the journal passes STATS_JOURNAL_MERGE bytes, and before
 * `nvshim stats` reads the record: under the lock and an exclusive flock of the journal (which
 * waits for appends in flight), the summary absorbs the journal, is written whole under a new
 * name and renamed into place, and the journal is emptied with a new generation. A crash
 * between the two leaves the summary's `merged` line pointing past what it absorbed, so nothing
 * is counted twice; a crash before leaves the old summary and the whole journal.
 * A summary that does not parse is started again (its counts are lost, never the build); a
 * journal line that does not parse is skipped. Each scope keeps at most STATS_MAX_ITEMS names
 * per kind (more are counted under "(other)"), names are cut to STATS_MAX_NAME bytes, the
 * journal stops growing at STATS_JOURNAL_MAX bytes when it cannot be merged.
 */
#ifndef NVSHIM_STATS_H
#define NVSHIM_STATS_H

#include <stddef.h>
#include <stdio.h>

#include "base/argv.h"

#define STATS_MAX_BUILDS 16
#define STATS_MAX_ITEMS 64
#define STATS_MAX_NAME 160
#define STATS_JOURNAL_MERGE (64 * 1024)
#define STATS_JOURNAL_MAX (4 * 1024 * 1024)
#define STATS_OTHER "(other)"

enum stats_kind { STATS_RULE, STATS_DROPPED, STATS_RENAMED, STATS_UPGRADED, STATS_SOURCE, STATS_METHOD,
		  STATS_NOT_BUILT, STATS_NKINDS };

struct stats_item {
	char *name;
	unsigned long long n;
};

struct stats_counts {
	unsigned long long invocations, rewritten, probes, hits, quieted;
	double added_ms;
	struct stats_item *items[STATS_NKINDS];
	size_t nitems[STATS_NKINDS];
};

struct stats_build {
	char *id, *tool, *dir;
	long long first, last; /* seconds since the epoch */
	struct stats_counts c;
};

struct stats {
	long long since;
	char *gen;                 /* the journal generation merged, "" none */
	unsigned long long offset; /* and how far */
	struct stats_counts total;
	struct stats_build *builds; /* oldest first */
	size_t nbuilds;
};

/* One invocation. The strings are borrowed. */
struct stats_entry {
	long long time;
	const char *build_id, *tool, *dir; /* build_id "" or NULL: not part of a build */
	double added_ms;                   /* nvshim's own time before the tool started */
	int rewritten;
	unsigned long probes, hits, quieted;
	struct argv items[STATS_NKINDS];
};

/* The kind's name in the summary and in `nvshim stats --json`. */
const char *stats_kind_name(enum stats_kind k);

void stats_init(struct stats *st, long long since);
void stats_release(struct stats *st);

void stats_entry_init(struct stats_entry *e);
void stats_entry_release(struct stats_entry *e);
/* What the plan's notes ("<text> [<rule>]") say: the rules (once each), the targets dropped,
 * renamed and upgraded, the sources with per-source decisions, how each source's targets were
 * decided (method: "preprocessing" from [modules.method], "object" from [modules.stubs], "probe"
 * from [modules.probe]), and the targets targets_only left out. Sets rewritten when a note other
 * than the routine ones ([cc.nvcc], [cc.translate], [modules.method]) is there. */
void stats_entry_from_notes(struct stats_entry *e, const struct argv *notes);

/* Adds one invocation: to the totals and to its build (the oldest build goes past
 * STATS_MAX_BUILDS). */
void stats_add(struct stats *st, const struct stats_entry *e);

/* The journal line of an entry (xmalloc'ed, ends with a newline). */
char *stats_entry_format(const struct stats_entry *e);
/* Adds the journal text's lines from `offset` (a damaged line is skipped). Returns the number
 * of lines added. */
size_t stats_add_journal(struct stats *st, const char *text, size_t len, size_t offset);
/* The journal's generation from its first line, "none" without one (static or in text). */
void stats_journal_gen(const char *text, size_t len, char *gen, size_t size);

/* The summary's text (xmalloc'ed), and back. stats_parse() returns 0, or -1 when the text is
 * not a whole summary (st is then as stats_init(st, 0) left it). */
char *stats_format(const struct stats *st);
int stats_parse(struct stats *st, const char *text, size_t len);

/* In this process: probes run and cache hits, for the record of the invocation. */
void stats_count_probes(unsigned long n);
void stats_count_hit(void);
void stats_count_quieted(void);
void stats_process_counts(unsigned long *probes, unsigned long *hits, unsigned long *quieted);

/* Appends the entry to <cache_dir>/stats/journal, and merges the journal when it is large.
 * Returns 0, or -1 (nothing is said: the record never gets in a build's way). */
int stats_record(const char *cache_dir, const struct stats_entry *e);
/* Merges the journal into the summary. wait: block for the lock (else give up when another
 * process holds it). Returns 0, 1 when another process is merging, -1 on failure. *damaged
 * (may be NULL) is set when the summary had to be started again. */
int stats_compact(const char *cache_dir, int wait, int *damaged);
/* The record as it stands (summary and journal, merged in memory). Returns 0, or -1 when
 * there is none. *damaged as above. */
int stats_load(struct stats *st, const char *cache_dir, int *damaged);
/* Starts the record again: the summary empty since now, the journal emptied. Returns 0 or -1. */
int stats_zero(const char *cache_dir);

/* `nvshim stats`: the totals and each build, newest first; and as JSON, with `more` (NULL or
 * JSON members, "\"name\":value,...") added to the object. */
void stats_print(const struct stats *st, const char *where, FILE *out);
void stats_print_json(const struct stats *st, const char *more, FILE *out);

#endif
