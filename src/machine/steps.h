/* steps: the commands nvcc runs for a command line, read from its --dryrun output.
 *
 * `nvcc --dryrun ARGS` prints on stderr one "#$ " line per thing it would do: its settings
 * (`#$ PATH=...`, `#$ CICC_PATH=...`, which nvcc exports to every stage) and its commands
 * (`#$ gcc -E ... -o "/tmp/tmpxft_..."`, `#$ "$CICC_PATH/cicc" ...`), each a line that nvcc
 * hands to /bin/sh -c. steps_parse() turns each command into an argument vector the way sh
 * would: words split at blanks, double and single quotes and backslashes honoured, $NAME and
 * ${NAME} replaced by the settings printed above them. A line that needs more of sh than that
 * (a redirection, a pipe, `;`: nvcc's "-- Filter Dependencies -- > x.d") is kept with
 * `simple` = 0; it cannot be run without a shell and nvshim never runs it.
 *
 * Each command is labelled with what a crash report needs: the stage (the program's base
 * name), the source it works on, and its GPU target:
 *   host preprocessing for a target   gcc ... -D__CUDA_ARCH__=900 -E      compute_90 (90a, 100f)
 *   cicc                              -arch compute_90                    compute_90
 *   ptxas, nvlink                     -arch=sm_90, --arch=sm_80           sm_90, sm_80
 * The source is the value of --orig_src_file_name (cicc, cudafe++), or the input of a host
 * preprocessing step, and carries over to the steps that follow. Pure: nothing is run.
 */
#ifndef NVSHIM_STEPS_H
#define NVSHIM_STEPS_H

#include <stddef.h>

#include "base/argv.h"

struct step {
	char *line;       /* the command as nvcc printed it, without "#$ " */
	struct argv argv; /* its words, $NAMEs replaced; empty when !simple */
	int simple;       /* 1 if it is a plain command that can run without a shell */
	char *stage;      /* base name of the program: "gcc", "cudafe++", "cicc", "ptxas", ... */
	char *source;     /* the source file it works on, as nvcc names it, or NULL */
	char *target;     /* "compute_90", "compute_90a", "sm_80", or NULL */
	int preprocess;   /* 1 for a host compiler step with -E */
};

struct steps {
	struct step *v;
	size_t n, alloc;
	struct argv settings; /* "NAME=value" as nvcc printed them (value verbatim), in order */
};

void steps_init(struct steps *s);
void steps_release(struct steps *s);

/* Reads the "#$ " lines of a --dryrun output; other lines are ignored. Returns the number of
 * commands. */
size_t steps_parse(struct steps *s, const char *text);

/* The last value of a setting, or NULL. */
const char *steps_setting(const struct steps *s, const char *name);

/* Splits one line into words as sh would, expanding $NAME from `settings` ("NAME=value";
 * a name that is not there expands to nothing). Returns 0, or -1 if the line needs a shell. */
int steps_split(const char *line, const struct argv *settings, struct argv *out);

#endif
