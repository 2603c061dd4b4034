/* inifile: nvshim's one way to read INI text, over inih.
 *
 * Every table nvshim reads is read here: nvshim.ini and its layers (model/config.c), the
 * modules rules directory (model/rules.c), the API table (diagnose/api.c) and the toolkit gates
 * (passes/gates.c). inih does the parsing, as Debian builds it: lines of at most 197
 * characters, ';' or '#' at the start of a line and " ;" inside one start a comment, and with
 * `multiline` set an indented line continues the setting before it (how a table writes a
 * value longer than a line). This module adds what inih leaves unsaid:
 *
 *   - the line each setting comes from: `f->line` while a handler runs;
 *   - a line longer than inih's buffer is skipped whole, with
 *     "ORIGIN:LINE: line longer than N characters; ignored";
 *   - a line that is neither a setting, a section, a comment nor (with `multiline`) a
 *     continuation is skipped, with "ORIGIN:LINE: expected 'name = value', found 'TEXT'";
 *   - each section line is handed to `on_section` before inih sees it, at its own line number,
 *     so a table can start an entry there, or say that the section is unknown, and may rewrite
 *     the line in place (to a shorter one) for inih.
 *
 * The messages go to `problems`. The handler is inih's (section, name, value; return 1 to go
 * on); `f->continued` says that this call continues the value of the call before it.
 *
 *   struct inifile f = INIFILE_INIT("gates.ini", &problems);
 *   f.multiline = 1;
 *   f.on_section = my_section;
 *   inifile_read_text(&f, text, my_setting, &state);
 */
#ifndef NVSHIM_INIFILE_H
#define NVSHIM_INIFILE_H

#include <stdio.h>

#include "base/argv.h"

struct inifile;
/* A section line ("[...]" after blanks, with its newline); may be rewritten in place, to at
 * most 16 bytes (inih's buffer is 200). */
typedef void (*inifile_section_fn)(struct inifile *f, char *line, void *user);
/* inih's handler: one call per setting (and per continuation line). */
typedef int (*inifile_setting_fn)(void *user, const char *section, const char *name, const char *value);

struct inifile {
	const char *origin;    /* the file's name in messages */
	struct argv *problems; /* where the messages go */
	int multiline;         /* an indented line continues the setting before it */
	inifile_section_fn on_section;
	int line;      /* the line being read, from 1 */
	int continued; /* this setting continues the one before it (multiline) */
	/* private */
	FILE *fp;
	const char *text;
	void *user;
	int in_setting;
};
#define INIFILE_INIT(origin, problems) { (origin), (problems), 0, NULL, 0, 0, NULL, NULL, NULL, 0 }

/* For on_section: the section line trimmed in place (for messages), and the name between its
 * brackets, trimmed (xmalloc'ed), or NULL when there is no ']'. */
char *inifile_section_name(char *line);
/* For a handler: sets *slot to value, or appends it (after one space) when this call continues
 * the setting before it. */
void inifile_store(const struct inifile *f, char **slot, const char *value);

/* Reads an open file, or a NUL-terminated text. Returns inih's answer: 0, or the first line
 * inih itself could not read (the caller says so), or -1 when out of memory. */
int inifile_read_file(struct inifile *f, FILE *fp, inifile_setting_fn fn, void *user);
int inifile_read_text(struct inifile *f, const char *text, inifile_setting_fn fn, void *user);

#endif
