/* locate: finding the real nvcc, and never nvshim itself.
 *
 * Order: the real_nvcc setting (NVSHIM_NVCC or NVSHIM_REAL_NVCC in the environment), else
 * $CUDA_HOME/bin/nvcc, else $CUDA_PATH/bin/nvcc, else the first nvcc on PATH, else
 * /usr/local/cuda/bin/nvcc. Every candidate that is nvshim itself (the same file by inode, which
 * covers symlinks and hard links to it) is skipped; when its toolkit root is a toolkit view
 * (view.h: what `nvshim env` sets CUDA_HOME and CUDA_PATH to), the real nvcc that view stands
 * for is taken in its place. A real_nvcc that is missing, not executable or nvshim itself is
 * an error: an explicit choice is never silently replaced.
 *
 * nvshim is installed twice: <prefix>/bin/nvshim and <prefix>/libexec/nvshim/bin/nvcc (a hard
 * link, so that tools which follow symlinks to learn a compiler's name, such as ccache 4.7, see
 * "nvcc"; a copy when the prefix was copied without its links). Each knows the other, its
 * twin: neither is ever taken for the real nvcc, and run as the second, `exe_dir` is still the
 * directory of the first, from which the settings and helper programs are found. The host
 * compilers' names, <prefix>/libexec/nvshim/cc/NAME, have <prefix>/bin/nvshim for twin too.
 * A file of the same size and bytes as the running nvshim is nvshim as well: a prefix that
 * holds copies, not links (a copied prefix, or pip's install of the wheel, which has no links),
 * never runs one of its copies as the real nvcc or host compiler.
 *
 * The loop guard: nvshim puts NVSHIM_DEPTH in the environment of the nvcc it runs. An nvshim
 * that acts as nvcc and finds NVSHIM_DEPTH already set was started, directly or through a
 * wrapper script, by the nvcc its parent chose: it stops at once with an error.
 */
#ifndef NVSHIM_LOCATE_H
#define NVSHIM_LOCATE_H

#include <sys/types.h>

#include "model/config.h"

#define LOCATE_DEPTH_VAR "NVSHIM_DEPTH"

struct self {
	char *exe;     /* resolved path of the running nvshim, or NULL */
	char *exe_dir; /* its directory; <prefix>/bin also when run as libexec/nvshim/bin/nvcc */
	dev_t dev;
	ino_t ino;
	int known;     /* dev/ino are valid */
	dev_t twin_dev; /* the other installed name of nvshim, when it is there */
	ino_t twin_ino;
	int twin_known;
	off_t size;     /* the running file's size, when known: a copy of it is nvshim too */
};

void locate_self(struct self *self);
void locate_self_release(struct self *self);

/* 1 if path names an executable regular file that is not nvshim itself (or its twin). */
int locate_is_candidate(const struct self *self, const char *path, int *is_self);

/* Finds the real nvcc. Returns 0 with *path and *how (where it came from; both xmalloc'ed) set,
 * or -1 after printing one error line. */
int locate_nvcc(const struct config *c, config_getenv_fn env, const struct self *self, char **path,
		char **how);

/* The first `name` in the directories of $PATH that is an executable file and not nvshim
 * itself (xmalloc'ed), or NULL. For the real host compiler in CC/CXX mode. */
char *locate_on_path(const struct self *self, config_getenv_fn env, const char *name);

/* The directory whose nvcc is nvshim: <prefix>/libexec/nvshim/bin, or libexec/nvshim/bin of a
 * build tree (resolved, xmalloc'ed), or NULL. */
char *locate_shim_dir(const struct self *self);

/* The first `name` in the directories of $PATH that is an executable file, nvshim itself or
 * not (*is_self says; xmalloc'ed), or NULL: what a tool that runs `name` gets. */
char *locate_first_on_path(const struct self *self, config_getenv_fn env, const char *name,
			   int *is_self);

/* The current depth from the environment (0 when unset or malformed). */
int locate_depth(config_getenv_fn env);

/* The site-packages directories where the package index's CUDA wheels may be: of each Python
 * prefix on PATH (PREFIX/bin on PATH, a virtual environment: PREFIX/lib/python3.N/site-packages)
 * and of ~/.local, those that exist, appended to *out in that order. Reads PATH and HOME. */
void locate_python_sites(struct argv *out);

#endif
