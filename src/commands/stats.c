#include "commands/commands.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

#include "base/diag.h"
#include "base/cache.h"
#include "buildwide/memgate.h"
#include "buildwide/stats.h"
#include "buildwide/threads.h"
#include "modes/session.h"

static void print_memory_line(const char *what, const struct memgate_summary *m)
{
	if (!m->stages) {
		printf("  %-11s no heavy stage recorded\n", what);
		return;
	}
	printf("  %-11s %llu heavy stages; at most %.2f GiB at once (the peaks of the stages running together), "
	       "budget %.2f GiB; largest %s %.2f GiB\n", what, m->stages, (double)m->peak_sum_kb / 1048576.0,
	       (double)m->budget_kb / 1048576.0, m->largest_kind, (double)m->largest_kb / 1048576.0);
	printf("  %-11s %llu waited for memory (%.1f s in all); %llu killed for memory and run again; %llu ran "
	       "alone over the budget\n", "", m->waits, (double)m->waited_ms / 1000.0, m->kills, m->over);
}

/* One summary as a JSON object. */
static char *memory_json(const struct memgate_summary *m)
{
	return xasprintf("{\"stages\":%llu,\"peak_sum_kib\":%lld,\"budget_kib\":%lld,\"largest_kib\":%lld,"
			 "\"largest_kind\":\"%s\",\"waits\":%llu,\"waited_ms\":%lld,\"reruns\":%llu,\"kills\":%llu,"
			 "\"over\":%llu}", m->stages, m->peak_sum_kb, m->budget_kb, m->largest_kb,
			 m->largest_kind[0] ? m->largest_kind : "", m->waits, m->waited_ms, m->reruns, m->kills, m->over);
}

/* The memory budget's record (memgate.h): what the journal says of the last build (*has_last:
 * there is one) and of everything recorded. Returns the journal's path (xmalloc'ed), or NULL
 * when there is no journal. */
static char *memory_record(const struct session *s, const struct stats *st, struct memgate_summary *last,
			   int *has_last, struct memgate_summary *all)
{
	char *dir = threads_slot_dir(s->cfg.cache_dir);
	char *path = dir ? concat(dir, "/mem/journal", NULL) : NULL;
	char *text = path ? cache_read(path) : NULL;
	free(dir);
	*has_last = 0;
	if (!text) {
		free(path);
		return NULL;
	}
	if (st->nbuilds) {
		memgate_summarize(text, st->builds[st->nbuilds - 1].first * 1000, LLONG_MAX, last);
		*has_last = 1;
	}
	memgate_summarize(text, 0, LLONG_MAX, all);
	free(text);
	return path;
}

/* `nvshim stats [--json] [--zero]`: the record of what nvshim did (stats.h), like ccache -s and
 * -z. The journal is merged into the summary first, so that the record stays small. */
int cmd_stats(int n, char **args)
{
	struct session s;
	int json = 0, zero = 0, rc = 0;
	session_init(&s, n, args);
	for (size_t i = 0; i < s.args.n; i++) {
		if (!strcmp(s.args.v[i], "--json"))
			json = 1;
		else if (!strcmp(s.args.v[i], "--zero") || !strcmp(s.args.v[i], "-z"))
			zero = 1;
		else
			rc = error("stats: unknown option '%s' (nvshim stats [--json] [--zero])", s.args.v[i]);
	}
	const char *dir = s.cfg.cache_dir;
	if (!rc && (!dir || !*dir))
		rc = error("stats: no cache_dir, so no record");
	if (rc || diag_strict_errors()) {
		session_release(&s);
		return 1;
	}
	char *where = concat(dir, "/stats", NULL);
	if (zero) {
		if (stats_zero(dir))
			rc = error("stats: cannot start the record in %s again", where);
		else if (!json)
			fprintf(stderr, "nvshim statistics zeroed (%s)\n", where);
	}
	if (!rc && (json || !zero)) {
		struct stats st;
		int damaged = 0;
		/* merged first; a record this user cannot write is still read */
		stats_compact(dir, 1, &damaged);
		if (stats_load(&st, dir, &damaged) && !json)
			fprintf(stderr, "nvshim stats: nothing recorded yet in %s\n", where);
		if (damaged)
			warning("stats: the record in %s was damaged; it was started again", where);
		if (!s.cfg.stats)
			warning("stats = false (%s): nothing new is recorded",
				s.cfg.origin[config_item_find("stats") - config_items]);
		struct memgate_summary last, all;
		int has_last;
		char *journal = memory_record(&s, &st, &last, &has_last, &all);
		if (json) {
			char *l = has_last ? memory_json(&last) : NULL, *a = journal ? memory_json(&all) : NULL;
			char *memory = journal ? xasprintf("\"memory\":{%s%s%s\"recorded\":%s}", l ? "\"last_build\":" : "",
							   l ? l : "", l ? "," : "", a)
					       : NULL;
			stats_print_json(&st, memory, stdout);
			free(memory);
			free(l);
			free(a);
		} else {
			stats_print(&st, where, stdout);
			if (journal) {
				printf("memory (nvcc's heavy stages under the budget, %s):\n", journal);
				if (has_last)
					print_memory_line("last build", &last);
				print_memory_line("recorded", &all);
			}
		}
		free(journal);
		stats_release(&st);
	}
	free(where);
	if (diag_strict_errors())
		rc = 1;
	session_release(&s);
	return rc ? 1 : 0;
}
