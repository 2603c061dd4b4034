/* arch: GPU architectures and the (virtual arch, code) pairs nvcc compiles for.
 *
 * An arch is a kind (compute_ = virtual/PTX, sm_ = real/SASS, lto_ = LTO-IR), a number (80,
 * 90, 100, 121) and a suffix: none, 'a' (arch-specific, sm_90a) or 'f' (family, sm_100f).
 *
 * A target is one pair nvcc builds: the virtual arch the front end compiles for, and one code
 * it embeds from it (SASS for an sm_, PTX for a compute_, LTO-IR for an lto_). Every spelling of
 * -arch, -code and -gencode/--generate-code becomes a list of targets, and a list becomes
 * -gencode arguments again. The rules for which pairs nvcc 13.0 accepts were read off nvcc
 * itself (its --dryrun), and a unit test keeps them honest against the machine's nvcc:
 *   code compute_X : X is the arch exactly
 *   arch compute_N  -> sm_M or sm_Ma with M >= N (lto_ codes alike)
 *   arch compute_Na -> sm_Ma with M >= N
 *   arch compute_Nf -> sm_M, sm_Mf or sm_Ma with M >= N and the same major (sm_M is built as
 *                      sm_Mf); lto_Mf or lto_Ma likewise
 */
#ifndef NVSHIM_ARCH_H
#define NVSHIM_ARCH_H

#include <stddef.h>

#include "base/argv.h"
#include "model/invocation.h"

enum arch_kind { ARCH_VIRTUAL, ARCH_REAL, ARCH_LTO };

struct arch {
	enum arch_kind kind;
	unsigned num;  /* 80, 90, 100, 121 */
	char suffix;   /* '\0', 'a' or 'f' */
};

/* "sm_90a", "compute_100f", "lto_80". Returns 0, or -1 if it is not an arch name. */
int arch_parse(const char *s, struct arch *out);
/* Writes the name into buf (at least 16 bytes); returns buf. */
char *arch_format(const struct arch *a, char *buf, size_t size);
/* Orders by number, then suffix (none < f < a), then kind. */
int arch_cmp(const struct arch *a, const struct arch *b);
int arch_equal(const struct arch *a, const struct arch *b);
/* The same number and suffix with another kind. */
struct arch arch_as(const struct arch *a, enum arch_kind kind);

struct target {
	struct arch virt; /* always ARCH_VIRTUAL */
	struct arch code;
};

/* 0 if nvcc accepts code from virt; else -1 and *why says what nvcc would (static text). */
int target_check(const struct target *t, const char **why);
/* What nvcc embeds for the pair: sm_103 from compute_100f is embedded as sm_103f. */
struct arch target_embedded(const struct target *t);

struct arch_list {
	struct target *v;
	size_t n, alloc;
	unsigned native : 1;    /* -arch=native */
	unsigned all : 1;       /* -arch=all */
	unsigned all_major : 1; /* -arch=all-major */
	unsigned given : 1;     /* any target option was given */
};

void arch_list_init(struct arch_list *l);
void arch_list_release(struct arch_list *l);
/* Adds a pair unless it is there already; keeps the order of first appearance. */
void arch_list_add(struct arch_list *l, const struct target *t);
/* 1 if a and b hold the same targets in the same order. */
int arch_list_equal(const struct arch_list *a, const struct arch_list *b);

/* Parses one -gencode value, keyword=value items in any order: "arch=compute_80,code=sm_80",
 * "arch=compute_90,code=[sm_90,compute_90]", "arch=compute_86,code=\"sm_86,compute_86\"" (the
 * quotes reach nvcc; without them nvcc rejects the list). Returns 0, or -1 with *why
 * (xmalloc'ed) in nvcc's words. */
int arch_list_parse_gencode(struct arch_list *l, const char *value, char **why);

/* Every target of an invocation, as nvcc expands them: -arch=sm_NN is compute_NN with
 * [sm_NN, compute_NN]; -arch=sm_NNa/f also run a plain compute_NN pass (PTX); -arch=compute_NN
 * alone is PTX only; -arch with -code pairs the arch with each code; -gencode as written; the
 * last -arch and the last -code win, as in nvcc. Returns 0, or -1 with *why (xmalloc'ed). */
int arch_list_from_invocation(struct arch_list *l, const struct invocation *inv, char **why);

/* One "-gencode=arch=compute_NN,code=[a,b]" argument per virtual arch, in list order. */
void arch_list_to_args(const struct arch_list *l, struct argv *out);
/* For a mode that writes one code instance (-cubin: `kind` ARCH_REAL; -ptx and -optix-ir:
 * ARCH_VIRTUAL; -ltoir: ARCH_LTO, or PTX): of the entries of one virtual architecture, keeps
 * those whose code is of that kind, when one is (nvcc's -arch=sm_80 -cubin is the sm_80 SASS
 * alone, where the same list written as -gencode pairs would be two instances, which nvcc
 * refuses there). Other architectures stay: a list nvcc refuses stays one it refuses. */
void arch_list_one_code(struct arch_list *l, enum arch_kind kind);

#endif
