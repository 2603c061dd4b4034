/* once: a note said once per build, whichever compile of the build comes first.
 *
 * Each build (build.h) has a directory <cache_dir>/notes/<build id>/ and each note said in it a
 * marker file named by the note's hash. The compile that creates the marker (open with O_CREAT
 * | O_EXCL, which exactly one of any number of parallel compiles wins) says the note; the others
 * do not. Nothing is lost when the marker cannot be made (no cache, a full disk): the note is
 * then said, as before.
 *
 * The directory of a build whose tool has ended is removed when a new build starts; so is one
 * of an NVSHIM_BUILD_ID build a day after its last note, and the oldest ones past ONCE_MAX_BUILDS.
 */
#ifndef NVSHIM_ONCE_H
#define NVSHIM_ONCE_H

#include <time.h>

#define ONCE_MAX_BUILDS 64

/* Whether this compile is the first of build `build_id` to say `text`: 1 yes (say it), 0 no
 * (said already), -1 cannot tell (say it). */
int once_first(const char *cache_dir, const char *build_id, const char *text);

/* Removes the markers of builds that have ended (see above), the current one excepted. `now` is
 * the time a directory's age is measured against. Returns the number of builds removed. */
int once_prune(const char *cache_dir, const char *current_id, time_t now);

#endif
