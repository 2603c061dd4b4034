/* registry: the NVRTC programs of a process, for the preload library.
 *
 * When a JIT link fails, nvshim recompiles the programs whose output went into it. NVRTC keeps
 * no copy a caller can get back, and callers destroy their programs as soon as they have the
 * PTX or CUBIN, so the registry keeps its own: the source, name, headers, name expressions and
 * the options of the compile that counted, from nvrtcCreateProgram on, and for a while after
 * nvrtcDestroyProgram. Each output the program handed out (nvrtcGetPTX, nvrtcGetCUBIN,
 * nvrtcGetLTOIR) is remembered by a fingerprint, and an input to a linker is matched against
 * those fingerprints.
 *
 * A fingerprint is the length of the data without trailing NUL bytes (callers pass PTX with or
 * without its NUL, and CuPy passes len(data) + 1 for a CUBIN) and a hash of a fixed number of
 * 8-byte words sampled across it: its cost does not grow with the size of the data, so it
 * stays well under a microsecond on the linker's path. Two different outputs that collide
 * only make nvshim recompile one program too many when a link has already failed.
 *
 * Memory is bounded: beyond registry_limits(), the oldest destroyed programs go first, then the
 * oldest live ones (whose later calls then pass through untouched). Every function is
 * thread-safe. Nothing here calls NVRTC.
 */
#ifndef NVSHIM_REGISTRY_H
#define NVSHIM_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "base/argv.h"

struct fingerprint {
	size_t len;
	uint64_t hash;
};

void registry_fingerprint(struct fingerprint *fp, const void *data, size_t size);

/* The size of a module image as cuModuleLoadData gets it, without a size: an ELF file (CUBIN)
 * from its headers, a fatbin from its header, otherwise NUL-terminated text (PTX). */
size_t registry_image_size(const void *image);

enum registry_output { REGISTRY_PTX, REGISTRY_CUBIN, REGISTRY_LTOIR, REGISTRY_NOUTPUTS };

/* A copy of one program's record, owned by the caller. */
struct registry_program {
	unsigned id;
	void *owner; /* the NVRTC library that made it (opaque to the registry) */
	char *source;
	char *name;
	struct argv headers;       /* header sources ... */
	struct argv include_names; /* ... and the names they are included by */
	struct argv name_exprs;
	struct argv options;       /* of the compile that counted */
};

void registry_program_release(struct registry_program *p);

/* nvrtcCreateProgram succeeded. name may be NULL; n headers with their include names. */
void registry_create(const void *handle, void *owner, const char *source, const char *name, int n,
		     const char *const *headers, const char *const *include_names);
/* nvrtcDestroyProgram: the handle is gone; the record stays while the limits allow. */
void registry_destroy(const void *handle);
void registry_name_expr(const void *handle, const char *expr);
/* The options a compile used (after nvshim's rules); the notes of the last compile are reset. */
void registry_compiled(const void *handle, int n, const char *const *options);
/* What nvshim appends to the program log, and a log that replaces NVRTC's (NULL: none). */
void registry_set_log(const void *handle, const char *notes, const char *replacement);
/* Copies of those (xmalloc'ed, NULL when none). Returns 1 if the handle is known. */
int registry_log(const void *handle, char **notes, char **replacement);
/* The name a live program was created with (xmalloc'ed), or NULL. */
char *registry_name(const void *handle);
/* An output handed to the caller. */
void registry_output(const void *handle, enum registry_output kind, const void *data, size_t size);

/* The ids of the programs (newest first) that handed out data with this fingerprint; returns
 * how many, at most max. */
size_t registry_match(const struct fingerprint *fp, unsigned *ids, size_t max);
/* A copy of a program's record. Returns 0, or -1 if it is no longer kept. */
int registry_get(unsigned id, struct registry_program *out);

/* How many programs and bytes of copies are kept; the defaults are 256 and 32 MiB (a linker input is
 * matched against every program kept). */
void registry_limits(size_t max_programs, size_t max_bytes);
/* Programs kept and bytes they take (for tests). */
void registry_stats(size_t *programs, size_t *bytes);
/* Forgets everything (for tests). */
void registry_clear(void);

#endif
