/* stubs: kernels whose body a target compiles out, read from the object nvcc wrote.
 *
 * Library code guards kernel bodies by architecture, and such a build succeeds:
 *   - a Marlin-style kernel is empty (or only traps) below sm_80: `#if __CUDA_ARCH__ >= 800`
 *     around the body in a header, so an sm_75 build computes nothing;
 *   - a CUTLASS sm90 GEMM built for plain sm_90 only prints "Arch conditional MMA instruction
 *     used without targeting appropriate compute capability": its code needs the feature
 *     macros of sm_90a (__CUDA_ARCH_FEAT_SM90_ALL, through CUTLASS's own derived macros).
 * A kernel is a stub on target X when its code there is trivial — at most STUBS_TRIVIAL bytes
 * (an empty body, a trap), or at most STUBS_TRIVIAL_CALL bytes in an image that calls vprintf
 * or __assertfail (print, then trap; an assert), or code that only exits or ends in a trap
 * (elf_kernel_is_stub(), read off the instructions) — while on another target Y its code is real:
 * at least STUBS_RATIO times as large and STUBS_MARGIN bytes more. A kernel that is small everywhere (a
 * tiny kernel) is never a stub, nor one whose targets differ by tuned code (neither trivial).
 * Library code may also keep a kernel's frame and compile only its inner paths out, into traps:
 * CUTLASS's sm100 GEMM built for plain sm_100 reaches CUTE_INVALID_CONTROL_PATH (assert, print,
 * __brkpt) wherever a tcgen05 atom needs the a/f form: 77,568 bytes with 119 trap instructions,
 * against 56,576 bytes with 7 on sm_100a or sm_100f. Such a kernel has trap paths: at least
 * STUBS_TRAPS traps, and one per 64 instructions or more; its a/f form builds the code when it
 * has at most half as many (less STUBS_TRAPS).
 * The sizes are those of each kernel's own code section in the CUDA images (elf.h); nvcc 13.0
 * writes an empty or trap-only kernel in 128 (sm_75) or 256 bytes (sm_80 and up), print and
 * trap in 256 or 384, an assert in 384 or 512, `y[i] *= 2` in 256 or 384, and a CUTLASS sm90
 * GEMM in 384 bytes on plain sm_90 and 36,736 on sm_90a.
 */
#ifndef NVSHIM_STUBS_H
#define NVSHIM_STUBS_H

#include <stddef.h>

#include "base/argv.h"
#include "objects/elf.h"

#define STUBS_TRIVIAL 256ull
#define STUBS_TRIVIAL_CALL 512ull
#define STUBS_RATIO 4ull
#define STUBS_MARGIN 512ull
#define STUBS_TRAPS 8u

struct stubs_target {
	unsigned sm;
	char suffix; /* 'a', 'f' or 0 */
};

/* Every kernel of a build by every target: code[k * nt + t] is kernel k's size on target t (0:
 * not in that image), calls[...] bit 0 vprintf, bit 1 __assertfail. */
struct stubs {
	struct stubs_target *t;
	size_t nt;
	char **kernel;
	size_t nk;
	unsigned long long *code;
	unsigned char *calls;
	unsigned *traps;
};

void stubs_init(struct stubs *s);
void stubs_release(struct stubs *s);

/* Adds one kernel of the image of target sm_<sm><variant> (a new target or kernel makes a new
 * column or row). */
void stubs_add(struct stubs *s, unsigned sm, char variant, const struct cuda_kernel *k);
/* Adds every kernel of the machine-code images of a file in memory or on disk (an object, a
 * program, a shared object, a fatbin, a cubin; compressed images decompressed, elf.h). Returns 0,
 * or -1 with *why (xmalloc'ed) when it cannot be read or is damaged. */
int stubs_read_data(struct stubs *s, const void *data, size_t size, char **why);
int stubs_read(struct stubs *s, const char *path, char **why);

/* The column of a target, or -1. */
long stubs_target_index(const struct stubs *s, unsigned sm, char suffix);
/* 1 if kernel k's code on target t is trivial (and present). */
int stubs_trivial(const struct stubs *s, size_t k, size_t t);
/* 1 if kernel k's code on target t has trap paths (above). */
int stubs_trap_paths(const struct stubs *s, size_t k, size_t t);
/* 1 if `traps` (of another target's code) is few enough against `plain` trap paths (above). */
int stubs_traps_fewer(unsigned traps, unsigned plain);
/* 1 if code `real` is a real body where `stub` is trivial code (the size rule above). */
int stubs_real_over(unsigned long long real, unsigned long long stub);
/* The target on which kernel k has the real body it lacks on t (a stub there), or -1. */
long stubs_real_on(const struct stubs *s, size_t k, size_t t);

/* A kernel's name for people: demangled, without its template arguments and parameters when
 * they are long (xmalloc'ed). */
char *stubs_kernel_name(const char *mangled);

/* The code one form compiles and another does not, found again in an object. `mine` and `other`
 * are a source's device code preprocessed for two forms (CuTe 4.2 compiles its int8 tcgen05
 * atoms for sm_100a alone: for sm_100f they are "Attempting to use SM100_MMA_S8_SS without
 * CUTE_ARCH_TCGEN05_S8_MMA_ENABLED", an assert, a print and a breakpoint). The lines only `mine`
 * has are those a shortest edit script (Myers' difference of the two, line markers and blank
 * lines aside) deletes; each run of them that traps (`__brkpt`, `__trap`, `__assert_fail`,
 * `trap;`) gives `out` its string literals (12 bytes or more, unescaped as the object stores
 * them) that `other` does not have. Where none of them is in an object of `mine`, none of that
 * code is in a kernel, and the other form builds no kernel that `mine` compiles out. Returns 0, or -1
 * when some trapping run of such lines has no literal (nothing to find it by) or the texts
 * differ in more than 1,000 lines. */
int stubs_own_literals(const char *mine, const char *other, struct argv *out);
/* 1 when one of the literals is in an image for sm_<sm><variant> (decompressed) of the object in
 * memory (data, size: elf_map_file()), 0 when none is; -1 when it cannot be read. */
int stubs_object_has(const void *data, size_t size, unsigned sm, char variant, const struct argv *literals);

#endif
