/* diag: nvshim's own messages, in nvcc's shape, always on stderr.
 *
 *   nvshim warning : <what>      warning()   (an error under strict = true)
 *   nvshim error   : <what>      error()     returns -1
 *   nvshim fatal   : <what>      fatal()     exits with status 1, never returns
 *   nvshim warning : <what>      diag_rewrite(): what nvshim changed and why; not a problem, so
 *                                never an error under strict, and hidden at verbosity quiet
 *   nvshim info    : <what>      diag_note() shown at verbosity >= normal
 *   nvshim debug   : <what>      diag_debug() shown at verbosity debug
 *
 * BUG() reports a broken invariant of nvshim itself and aborts.
 * Nothing here ever writes to stdout: stdout belongs to the real tool.
 */
#ifndef NVSHIM_DIAG_H
#define NVSHIM_DIAG_H

#include <stdarg.h>
#include <stdio.h>

enum verbosity { VERBOSITY_QUIET, VERBOSITY_NORMAL, VERBOSITY_VERBOSE, VERBOSITY_DEBUG };

#define NVSHIM_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* Set by the configuration once it is known; before that: normal, not strict. */
void diag_set_verbosity(enum verbosity v);
enum verbosity diag_verbosity(void);
void diag_set_strict(int strict);

/* A warning, or under strict an error. Counted either way. */
void warning(const char *fmt, ...) NVSHIM_PRINTF(1, 2);
int error(const char *fmt, ...) NVSHIM_PRINTF(1, 2);
void diag_rewrite(const char *fmt, ...) NVSHIM_PRINTF(1, 2);
_Noreturn void fatal(const char *fmt, ...) NVSHIM_PRINTF(1, 2);
void diag_note(enum verbosity at, const char *fmt, ...) NVSHIM_PRINTF(2, 3);
#define diag_debug(...) diag_note(VERBOSITY_DEBUG, __VA_ARGS__)

/* Number of warnings that strict mode turned into errors since start. */
int diag_strict_errors(void);
/* Number of warnings issued (strict or not). */
int diag_warnings(void);

_Noreturn void diag_bug(const char *file, int line, const char *fmt, ...) NVSHIM_PRINTF(3, 4);
#define BUG(...) diag_bug(__FILE__, __LINE__, __VA_ARGS__)

/* Tests capture messages: when set, messages go to this stream instead of stderr. */
void diag_set_stream(FILE *f);

#endif
