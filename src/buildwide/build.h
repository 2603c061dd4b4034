/* build: which build a compile belongs to.
 *
 * A build is the build tool process that started the compiles: the outermost of the build tools
 * among nvshim's ancestors, reached through shells and wrappers only. Measured (make 4.3,
 * ninja 1.11, CMake 3.25, setuptools 65, pip 23):
 *
 *   make -j          nvcc <- make                       (make runs a simple recipe itself)
 *   ninja -j         nvcc <- sh -c <- ninja
 *   cmake --build    nvcc <- sh -c <- ninja <- cmake;   nvcc <- gmake <- gmake <- gmake <- cmake
 *   setup.py build   nvcc <- python setup.py
 *   pip install .    nvcc <- python _in_process.py <- python pip <- bash (pyenv's shim)
 *
 * so `cmake --build` is one build however many makes it nests, and `pip install` one however
 * many Python processes it starts. The walk goes up through shells and wrappers (sh, bash, env,
 * nice, time, ccache, nvshim, ...) and build tools, and stops at anything else (a terminal, ssh,
 * ctest, a test runner): a compile typed at a shell, or run by a script, has no build.
 * Environment variables do not tell builds apart (MAKEFLAGS and MAKELEVEL are inherited by
 * everything below a make; ninja sets none).
 *
 * A build tool is identified by its pid and start time (/proc/PID/stat) and the boot, so that
 * two builds never share an identity, even after the pid is reused. NVSHIM_BUILD_ID=TEXT names
 * the build outright (a CI script that runs nvcc itself, many times).
 */
#ifndef NVSHIM_BUILD_H
#define NVSHIM_BUILD_H

enum build_kind {
	BUILD_OTHER, /* stops the walk */
	BUILD_PASS,  /* a shell or wrapper: walked through */
	BUILD_TOOL,  /* a build tool */
};

struct build {
	char *id;   /* safe as a file name: "<boot>-<pid>-<start>", or "env-<hash>" */
	char *tool; /* "ninja", "make", "cmake", "pip", "setup.py", "NVSHIM_BUILD_ID" */
	char *dir;  /* the build tool's working directory, or "" */
	long pid;   /* 0 for NVSHIM_BUILD_ID */
};

/* The environment variable that names the build outright. */
#define BUILD_ID_VAR "NVSHIM_BUILD_ID"

/* What a process is, from its name (/proc/PID/comm) and its first arguments. *tool is set to
 * the name a build tool is shown with. */
enum build_kind build_classify(const char *comm, char *const *args, int nargs, const char **tool);

/* Finds the build this process belongs to. env: getenv-like (for BUILD_ID_VAR). Returns 0 and
 * fills *b, or -1 when there is none (b is then empty: every field NULL or 0). */
int build_identify(struct build *b, const char *(*env)(const char *name));
void build_release(struct build *b);
/* build_identify() once per process: the build, or NULL when there is none. */
const struct build *build_current(const char *(*env)(const char *name));

/* Whether the build of an identity is still running: 1 yes, 0 no (its tool has ended, or the
 * machine was restarted since), -1 cannot tell (an NVSHIM_BUILD_ID build). */
int build_alive(const char *id);

/* 64-bit FNV-1a of a string, as 16 hex digits into out[17]. */
void build_hash(const char *s, char out[17]);

#endif
