/* commands: what the nvshim executable does, by the name it runs under and its first word.
 *
 *   nvcc ARGS... (any name but nvshim)   act as nvcc (modes/nvcc.h)
 *   nvshim NVCC-ARGS...                  act as nvcc (also `nvshim nvcc ARGS...`)
 *   nvshim help [--man] | version | config | explain ARGS... | doctor | env | fingerprint
 *   nvshim stats [--json] [--zero]        what nvshim did, per build and in total
 *   nvshim toolkit-view                  the toolkit view `nvshim env` sets CUDA_HOME to
 *   nvshim explain-api NAME... | --list  (also `nvshim explain api NAME...`)
 *   nvshim migrate [--apply] FILE...     the lasting fix for removed CUDA APIs, as a diff
 *   nvcc --nvshim-fingerprint            `nvshim fingerprint` under any name (for ccache)
 *   cc, c++, gcc, g++, clang, clang++ ARGS...  (by name, or `nvshim cc ARGS...`)
 *                                        act as the host compiler (modes/cc.h)
 *   nvshim run [--nvshim-<setting>=<value>...] -- CMD ARGS...   CMD with libnvshim-preload.so
 *   nvshim inspect [--gpu sm_NN,...] [--json] FILE...   which GPUs can run these files
 *
 * Under the name nvshim, --help, -h and a bare `nvshim` give nvshim's short usage, --version
 * and -V nvshim's version followed by the real nvcc's --version text (commands.c); under the
 * name nvcc, and as `nvshim nvcc --help`, nvcc answers them, byte for byte.
 *
 * nvshim's own commands are bare words, so they never collide with nvcc's options; a file
 * named like a command can be compiled with `nvshim nvcc FILE`. Each command is a file of this
 * folder, `cmd_<name>(n, args)` with the arguments after its word, returning the exit status.
 */
#ifndef NVSHIM_COMMANDS_H
#define NVSHIM_COMMANDS_H

#include <stdio.h>

/* The whole program: returns the exit status. */
int commands_main(int argc, char **argv);

int cmd_config(int n, char **args);      /* config.c */
int cmd_doctor(int n, char **args);      /* doctor.c */
int cmd_env(int n, char **args);         /* env.c */
int cmd_explain(int n, char **args);     /* explain.c */
int cmd_explain_api(int n, char **args); /* explain_api.c */
int cmd_fingerprint(int n, char **args); /* fingerprint.c */
int cmd_migrate(int n, char **args);     /* migrate.c */
int cmd_help(int n, char **args);        /* help.c (and the man page) */
void cmd_help_front(FILE *out);          /* help.c: `nvshim --help`, the short usage */
int cmd_inspect(int n, char **args);     /* inspect.c */
int cmd_run(int n, char **args);         /* run.c */
int cmd_stats(int n, char **args);       /* stats.c */
int cmd_toolkit_view(int n, char **args); /* env.c */
/* env.c: what `nvshim env` exports, printed for sh (bash, zsh) or fish, or set in this process
 * (for `nvshim run`). -1 when there is no libexec/nvshim/bin/nvcc beside nvshim. */
struct session;
enum { ENV_SH, ENV_FISH, ENV_SET };
int cmd_env_apply(struct session *s, int how);
/* env.c: CC mode's directory, <prefix>/libexec/nvshim/cc (resolved, xmalloc'ed), or NULL. */
char *cmd_env_cc_dir(const struct session *s);
int cmd_version(int n, char **args);     /* version.c */
int cmd_version_front(void);             /* version.c: `nvshim --version` */

#endif
