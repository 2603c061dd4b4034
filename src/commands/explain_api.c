#include "commands/commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

#include "base/diag.h"
#include "diagnose/api.h"
#include "upgrade/migrate.h"
#include "modes/session.h"

/* `nvshim explain-api NAME...` (also `nvshim explain api NAME...`): the API table's entry for
 * each NAME, with what the compatibility layer does with it (compat or nocompat) and the form
 * `nvshim migrate` writes for it (a function, type, enum value, macro, or STRUCT::FIELD; a `.FIELD` or `->FIELD` of
 * cudaDeviceProp may be written as cudaDeviceProp.FIELD), from the table nvshim uses (api_file,
 * else the installed one, else the built-in one). `--list` prints every name. Exit status 0, or
 * 1 when a NAME has no entry. */
int cmd_explain_api(int n, char **args)
{
	struct session s;
	session_init(&s, 0, NULL);
	char *origin = NULL;
	char *text = api_table_text(s.cfg.api_file, s.self.exe_dir, &origin);
	struct api_table t;
	struct argv problems = ARGV_INIT;
	api_table_init(&t);
	if (text)
		api_parse(&t, text, origin, &problems);
	for (size_t i = 0; i < problems.n; i++)
		warning("%s", problems.v[i]);
	int status = 0;
	if (n == 0) {
		fprintf(stderr, "usage: nvshim explain-api NAME... | --list\n");
		status = 2;
	}
	for (int i = 0; i < n; i++) {
		if (!strcmp(args[i], "--list")) {
			for (size_t k = 0; k < t.n; k++)
				printf("%s\t%s %s\n", t.v[k].name, t.v[k].changed ? "changed" : "removed",
				       t.v[k].version);
			continue;
		}
		/* cudaDeviceProp.clockRate, prop->clockRate: STRUCT::FIELD */
		char *name = xstrdup(args[i]);
		char *dot = strstr(name, "->");
		if (dot) {
			memmove(dot + 1, dot + 2, strlen(dot + 2) + 1);
			*dot = '.';
		}
		dot = strchr(name, '/') ? NULL : strchr(name, '.');
		if (dot) {
			char *m = xasprintf("%.*s::%s", (int)(dot - name), name, dot + 1);
			free(name);
			name = m;
		}
		const struct api_entry *e = api_find(&t, name);
		if (!e) {
			/* A field alone: the first STRUCT::FIELD with that field. */
			for (size_t k = 0; k < t.n && !e; k++) {
				const char *sep = strstr(t.v[k].name, "::");
				if (sep && !strcmp(sep + 2, name))
					e = &t.v[k];
			}
		}
		if (e) {
			char *d = api_describe(e);
			fputs(d, stdout);
			free(d);
			/* What the compatibility layer does with it, and what `nvshim migrate` writes. */
			if (e->compat)
				printf("  compat:  include/nvshim/compat/%s%s, in the retry of a compile that failed on it\n",
				       e->compat, e->compat_rewrite ? ", the field read rewritten in a private copy of the source or header that reads it" : "");
			else if (e->nocompat)
				printf("  compat:  none: %s\n", e->nocompat);
			/* An `also` spelling may have a recipe of its own (cub::DiscardOutputIterator). */
			const char *form = migrate_form(name) ? migrate_form(name) : migrate_form(e->name);
			printf("  migrate: %s\n", form ? form : "no automatic rewrite (nvshim migrate names the use); write the replacement above");
		} else {
			error("%s: not in the API table, %s; `nvshim explain-api --list` names every entry",
			      args[i], origin ? origin : "none");
			status = 1;
		}
		free(name);
	}
	argv_release(&problems);
	api_table_release(&t);
	free(text);
	free(origin);
	session_release(&s);
	return status;
}
