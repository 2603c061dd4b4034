/* cc: CC/CXX mode, nvshim as the host compiler (cc, c++, gcc, g++, clang, clang++).
 *
 * CUDA inputs are compiled by nvcc with gcc's options translated (hostcc.h) and go through nvcc
 * mode's whole flow (nvcc.h: every pass, the gates, crash watching, the launcher); everything
 * else runs the real compiler (host_cc / host_cxx, else `name` on PATH past nvshim) with the
 * arguments unchanged, and links get the link pass. Run by a tool nvshim started (NVSHIM_DEPTH
 * set), or as one of nvcc's own host compiler steps (they pass -D__CUDA_ARCH_LIST__=, nvcc
 * having found CC mode on PATH), it only runs the real compiler.
 */
#ifndef NVSHIM_CC_H
#define NVSHIM_CC_H

#include "model/hostcc.h"
#include "modes/nvcc.h"

/* What CC mode will run for these arguments: the plan, and what a failed link would add. */
struct cc_run {
	char *real;        /* the real host compiler */
	const char *how;   /* where it came from */
	char *nvcc;        /* set when CUDA inputs go to nvcc */
	char *nvcc_how;
	struct hostcc hc;
	struct argv nvargs; /* the arguments for nvcc (CUDA inputs) */
	struct nvcc_passes ps;   /* nvcc mode's passes over them */
	struct plan plan;
	struct link_result link;
};

/* 1 for the names CC mode answers to: cc, c++, gcc, g++, clang, clang++ and the versioned
 * ones (cc_is_versioned). */
int cc_is_name(const char *name);

/* 1 for gcc-N, g++-N, clang-N, clang++-N (N: digits, dot-separated: g++-12, gcc-9.5). */
int cc_is_versioned(const char *name);

/* Plans CC mode as `name` for the session's arguments. Returns 0, or -1 after an error (no real
 * compiler, no nvcc for CUDA inputs); r is to be released either way. */
int cc_plan(struct session *s, const char *name, struct cc_run *r);
void cc_run_release(struct cc_run *r);

/* CC mode as `name` on args[0..n): returns the exit status. */
int cc_main(const char *name, int n, char **args);

#endif
