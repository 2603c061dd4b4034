/* elf: the symbol tables of linker inputs, read by nvshim itself (no libelf, no BFD).
 *
 * What it reads, from a file mapped into memory:
 *   relocatable objects (ET_REL)   .symtab: the global and weak symbols, defined or undefined
 *   shared objects (ET_DYN)        .dynsym: the dynamic symbols
 *   ar archives ("!<arch>\n")      the GNU symbol index ("/" with 32-bit offsets, "/SYM64/"
 *                                  with 64-bit ones), the long-name table ("//") and every
 *                                  member; BSD "#1/len" names are understood
 *   thin archives ("!<thin>\n")    the index and the member names; the members' data are files
 *                                  of their own, named relative to the archive
 * Only 64-bit ELF files in the machine's byte order are read; anything else is "not ELF" or
 * an error. Every offset, size and count is checked against the data before it is used, and
 * every name must end (NUL) inside its string table, so a truncated or damaged file gives an
 * error with a reason, never a read outside the data. Names point into the data: they live as
 * long as the mapping.
 */
#ifndef NVSHIM_ELF_H
#define NVSHIM_ELF_H

#include <stddef.h>

enum elf_kind {
	ELF_KIND_OTHER,       /* not ELF and not an archive: a source, a linker script, ... */
	ELF_KIND_OBJECT,      /* ET_REL */
	ELF_KIND_SHARED,      /* ET_DYN */
	ELF_KIND_ELF_OTHER,   /* ELF, but an executable, 32-bit or of the other byte order */
	ELF_KIND_ARCHIVE,     /* !<arch> */
	ELF_KIND_THIN_ARCHIVE /* !<thin> */
};

/* What the first bytes say; nothing beyond them is checked. */
enum elf_kind elf_identify(const void *data, size_t size);
const char *elf_kind_name(enum elf_kind kind);

/* A file mapped read-only (an empty file has data NULL and size 0). */
struct elf_map {
	const unsigned char *data;
	size_t size;
};

/* Returns 0, or -1 with *why (xmalloc'ed) when the file cannot be opened or mapped. */
int elf_map_file(const char *path, struct elf_map *m, char **why);
void elf_unmap(struct elf_map *m);

/* One symbol: `defined` when it has a section (common symbols count as defined), `weak` for
 * STB_WEAK. Local symbols and symbols without a name are never reported. */
typedef void (*elf_symbol_fn)(const char *name, int defined, int weak, void *arg);

/* Calls fn for every global and weak symbol of an object (.symtab) or shared object
 * (.dynsym). A file without a symbol table has no symbols. Returns 0, or -1 with *why
 * (xmalloc'ed); fn may have been called for some symbols before a problem was found. */
int elf_symbols(const void *data, size_t size, elf_symbol_fn fn, void *arg, char **why);

/* One entry of an archive's symbol index: a symbol and the offset of the header of the member
 * that defines it. */
struct ar_symbol {
	const char *name;
	size_t member;
};

/* One member of an archive. */
struct ar_member {
	size_t header;              /* offset of its header in the archive */
	char name[4096];            /* its name, NUL-terminated (truncated if longer) */
	const unsigned char *data;  /* its bytes, or NULL in a thin archive */
	size_t size;                /* its size (in a thin archive: the external file's) */
};

/* The symbol index of an archive, in its order, as a new array (xmalloc'ed; free() it) in
 * *syms with *n entries; *n is 0 when the archive has no index. Returns 0, or -1 with *why. */
int ar_index(const void *data, size_t size, struct ar_symbol **syms, size_t *n, char **why);

/* The member whose header is at `offset`. Returns 0, or -1 with *why. */
int ar_member_at(const void *data, size_t size, size_t offset, struct ar_member *m, char **why);

/* Calls fn for every member in order, except the index and the long-name table; fn returns
 * non-zero to stop. Returns 0, or -1 with *why. */
int ar_members(const void *data, size_t size, int (*fn)(const struct ar_member *m, void *arg),
	       void *arg, char **why);

/* The stack of every kernel of the CUDA images in a file: the file itself when it is a cubin
 * (an ELF for EM_CUDA), else the images in the .nv_fatbin section of a host object, executable
 * or shared object; compressed images are skipped. For each kernel (an entry function of an
 * image's .symtab), fn gets its name, the image's target (90 for sm_90; 0 when unknown) and
 * its stack per thread: the minimum stack size its image records (EIATTR_MIN_STACK_SIZE), else
 * its frame size (EIATTR_FRAME_SIZE); kernels without either are skipped. Returns 0, or -1
 * with *why when the file or an image is damaged (fn may have been called before). */
typedef void (*elf_stack_fn)(const char *kernel, unsigned sm, unsigned long long stack, void *arg);
int elf_cuda_stacks(const void *data, size_t size, elf_stack_fn fn, void *arg, char **why);

/* The kernels of the CUDA images in a file (the same images as elf_cuda_stacks()), one call
 * per kernel and image, with what tells a compiled-out body from a real one: the size of its
 * code section, and whether the image calls vprintf or __assertfail (its relocations name them;
 * such calls go through the image's constant bank, so they cannot be told apart by kernel). */
struct elf_cuda_kernel {
	const char *name;            /* mangled, as in the image's .symtab */
	unsigned sm;                 /* the image's target: 90 for sm_90 and sm_90a */
	char suffix;                 /* 'a' (sm_90a), 'f' (sm_100f), or 0, from the fatbin entry */
	unsigned long long code;     /* bytes of its code section */
	unsigned printf : 1, assert : 1;
};
typedef void (*elf_kernel_fn)(const struct elf_cuda_kernel *k, void *arg);
int elf_cuda_kernels(const void *data, size_t size, elf_kernel_fn fn, void *arg, char **why);

#endif
