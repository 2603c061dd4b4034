/* upgrade: the room of old code on the new toolkit. A CUDA 12 project that CUDA 13 stops (an API
 * the toolkit removed or changed, a header or library that moved or went) builds through nvshim,
 * faithfully, and is told the lasting fix; `nvshim migrate` writes that fix.
 *
 *   compat         after a failed compile: one more compile with the compatibility headers
 *                  (include/nvshim/compat/), private copies for removed fields read
 *   compat_dryrun  the same decided beforehand, for a compile nvshim does not run itself
 *                  (a compiler cache's -E, --dryrun)
 *   overlay        the mirror of a project's tree that holds those private copies
 *   layout         after a failed run: CUDA 13's moved files (CCCL for host compilers, NVTX 2 on
 *                  NVTX 3, the removed texture headers), the line run once more
 *   migrate        the lasting fix as a rewrite of a source's text (with migrate_scan, its
 *                  tokens; migrate_helpers, the text it inserts; migrate_diff, its diff), and
 *                  migrate_build, the same for build files (CUDA 13's moved files)
 *
 * It reads what diagnose/ found in a failed run (diagnose/api.h: which API an error is about)
 * and never the other way round: diagnose/ explains failures, upgrade/ repairs the ones it can.
 * The modes (modes/nvcc.c, modes/cc.c) call it between running a compile and reporting on it.
 * This header declares nothing: each module has its own.
 */
#ifndef NVSHIM_UPGRADE_H
#define NVSHIM_UPGRADE_H
#endif
