/* outputs: the files an nvcc command line says it writes, and the check that a run wrote them.
 *
 * The list follows nvcc's own naming (checked against nvcc 13.0 by tests/unit/test_outputs.c and
 * the differential matrix, tests/e2e/matrix.py):
 *   - a link (the default mode, -shared too): -o, else a.out;
 *   - -c, -dc, -dw: one object per source input, -o for a single one, else <odir>/<stem>.o
 *     (object and archive inputs are not compiled);
 *   - -dlink: -o, else a_dlink.o;  -lib: -o, else a.a;
 *   - -ptx, -cubin, -fatbin, -ltoir, -optix-ir: -o, else <odir>/<stem>.<suffix>;
 *   - -cuda: -o, else <stem>.cu.cpp.ii;  -E and -M: -o when given (else standard output);
 *   - -MD/-MMD with a compile: -MF, else the object's path with .d for .o, or <odir>/<stem>.d;
 *     -M with -MF: that file.
 * --dryrun, information queries, -run and lines with conflicting modes name none (nvcc either
 * writes nothing or refuses the line). Nothing is run or read to build the list.
 *
 * The check (outputs_check()) is the guard on every success of a rewritten command: each
 * listed file exists and its inode changed at or after the moment given (the start of this
 * invocation: a write, a rename into place or a cache's hard link each count), so a file an
 * earlier build left does not pass for one this run wrote.
 */
#ifndef NVSHIM_OUTPUTS_H
#define NVSHIM_OUTPUTS_H

#include <time.h>

#include "base/argv.h"
#include "model/hostcc.h"
#include "model/invocation.h"

/* Appends to `paths` the files the invocation names as its outputs (see above). */
void outputs_of(const struct invocation *inv, struct argv *paths);

/* The same for a host compiler's line (CC mode, hostcc.h), in gcc's naming: a link writes -o or
 * a.out; -c one <stem>.o per source in the working directory, or -o; -S <stem>.s or -o; -E and
 * -M -o when given; -MD/-MMD -MF, else the object's path with .d. */
void outputs_of_host(const struct hostcc *hc, struct argv *paths);

/* The clock file modification times are taken from (the kernel's coarse real-time clock), read
 * now: a file written after this moment has an mtime at or after it. */
struct timespec outputs_now(void);

/* The first of `paths` that does not exist or is older than `since`, or NULL when all are
 * there. `why` (may be NULL) receives "missing" or "not written by this run". */
const char *outputs_check(const struct argv *paths, struct timespec since, const char **why);

#endif
