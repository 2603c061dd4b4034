/* logfile: one JSON line per invocation, appended to the log_file setting.
 *
 * {"time":"2026-11-22T10:00:00Z","pid":1,"cwd":"...","tool":"...","argv_in":[...],
 *  "argv_out":[...],"notes":[...],"status":0,"wall_ms":12.3,"maxrss_kb":1800,
 *  "build":"ninja 9cb4943d-13568-87556","notes_quieted":2}
 *
 * `notes` holds every note, also those repeat_notes = once did not say again (their number is
 * notes_quieted); `build` is the build the invocation belongs to (build.h), or null.
 *
 * The line is written with a single write() on an O_APPEND descriptor, so lines of parallel
 * builds do not mix. A log that cannot be written gives a warning, never a failed build.
 */
#ifndef NVSHIM_LOGFILE_H
#define NVSHIM_LOGFILE_H

#include "base/argv.h"

struct logfile_entry {
	const char *tool;
	const struct argv *argv_in;
	const struct argv *argv_out;
	const struct argv *notes;
	int status;
	double wall_ms;
	const char *build;      /* "<tool> <id>", or NULL */
	unsigned long quieted;  /* notes not said again in this build */
	const struct argv *stages; /* nvcc's heavy stages under the memory budget, or NULL */
};

/* Returns 0, or -1 after a warning. */
int logfile_write(const char *path, const struct logfile_entry *e);

/* nvshim's own peak resident memory in KiB (VmHWM), or -1. */
long logfile_peak_kb(void);

/* Appends s as a JSON string (with quotes) to *buf of length *len (xrealloc'ed). */
void logfile_json_string(char **buf, size_t *len, const char *s);

#endif
