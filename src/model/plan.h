/* plan: the command that will run, and why.
 *
 * `argv` is the final command line for the real tool (argv[0] is the tool's path); `notes`
 * are the explanations of every rewrite, each naming its rule
 * ("dropped sm_70, sm_72: not supported by nvcc 13.0 [targets.unsupported]").
 * With nothing to rewrite the arguments are the user's, in the user's order.
 *
 * plan_finalize() moves a command line longer than a threshold into a private options file
 * (a fresh 0700 directory made with mkdtemp, the file inside it with mkstemp), passed as
 * `--options-file FILE`; plan_release() removes both.
 */
#ifndef NVSHIM_PLAN_H
#define NVSHIM_PLAN_H

#include <stddef.h>

#include "base/argv.h"

struct plan {
	char *tool;         /* what is executed */
	struct argv argv;   /* argv[0] and the arguments */
	struct argv notes;  /* "<text> [<rule>]" */
	char *options_dir;  /* private directory of the options file, or NULL */
	char *options_file; /* the options file, or NULL */
};

void plan_init(struct plan *p, const char *tool, char *const *args, size_t n);
void plan_release(struct plan *p);

void plan_note(struct plan *p, const char *rule, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* 1 if the plan's arguments differ from args[0..n), the command line nvshim was given. */
int plan_rewritten(const struct plan *p, char *const *args, size_t n);

/* If the arguments take more than `threshold` bytes, writes them to an options file under
 * tmp_base (a directory; $TMPDIR or /tmp when NULL) and passes that instead. Arguments that an
 * options file cannot carry exactly (a double quote, a backslash, a newline) keep the command
 * line as it is. Returns 1 if an options file is used, 0 if not, -1 on failure (the plan is
 * then unchanged). */
int plan_finalize(struct plan *p, size_t threshold, const char *tmp_base);

#endif
