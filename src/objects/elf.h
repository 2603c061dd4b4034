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

/* 1 when an ELF file is a program: an executable (ET_EXEC), or a position-independent one (an
 * ET_DYN whose dynamic section's DT_FLAGS_1 has DF_1_PIE, or that has an interpreter (PT_INTERP)
 * and no DT_SONAME); 0 for a shared library, a cubin or anything else. */
int elf_is_program(const void *data, size_t size);

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

/* ---- CUDA images ----------------------------------------------------------------------------
 * A fatbin is a run of containers (magic 0xBA55ED50, one per translation unit in a library or
 * program), each a list of entries: an entry header (kind, target, PTX ISA version, flags,
 * sizes) and its payload. nvcc 13.0 writes these entry flags: 0x1 64-bit, 0x10 Linux,
 * 0x2000 LZ4-compressed, 0x8000 Zstandard-compressed, 0x100000 an arch-specific target
 * (sm_90a), 0x200000 a family target (sm_100f); a compressed entry records its compressed size
 * at offset 16 and its full size at offset 56. */
enum cuda_image_kind { CUDA_IMAGE_SASS, CUDA_IMAGE_PTX, CUDA_IMAGE_OTHER };

struct cuda_image {
	enum cuda_image_kind kind;
	unsigned sm;                 /* 90 for sm_90 / compute_90; 0 when unknown */
	char variant;                /* 'a', 'f', or 0 for a plain target */
	unsigned ptx_major, ptx_minor; /* a PTX image's ISA version (9.0); SASS: 0 */
	int compression;             /* enum unpack_method (unpack.h): 0 none, 1 lz4, 2 zstd */
	const unsigned char *data;   /* the payload as stored */
	size_t size;                 /* its stored size */
	unsigned long long full_size; /* its size once decompressed */
	unsigned container;          /* which fatbin container (0, 1, ...) it is in */
};

/* Calls fn for every image of a file: the fatbin containers in the .nv_fatbin and
 * __nv_relfatbin sections of a host object, program or shared object, a fatbin itself (a
 * .fatbin file, or one in memory), a cubin (one SASS image; its target from e_flags), or PTX
 * text (a .ptx file, NVRTC's output: one PTX image, its ISA from `.version`, its target from
 * `.target`, both before anything but comments and other directives). fn
 * returns non-zero to stop. *ncontainers (may be NULL) gets the number of fatbin containers
 * (1 for a cubin; 0 when the file has no CUDA code). Returns 0, or -1 with *why. */
typedef int (*cuda_image_fn)(const struct cuda_image *img, void *arg);
int elf_cuda_images(const void *data, size_t size, cuda_image_fn fn, void *arg, unsigned *ncontainers,
		    char **why);

/* 1 if data are PTX text (`.version` and `.target` first): one image for elf_cuda_images(). */
int elf_is_ptx_text(const void *data, size_t size);

/* The size of the fatbin container at data (its header and entries), or 0 when data do not start
 * with one; at most `size` bytes are read. For images in memory whose size nobody recorded. */
size_t elf_fatbin_size(const void *data, size_t size);

/* An image's payload, decompressed when it is compressed: *out and *len, with *owned the buffer
 * to free() (NULL when *out points into the image). Images above `limit` bytes are refused.
 * Returns 0, or -1 with *why. */
int elf_image_payload(const struct cuda_image *img, unsigned long long limit, const unsigned char **out,
		      size_t *len, void **owned, char **why);

/* elf_image_payload(), decompressing with u's context (unpack.h; NULL: one for this image). */
struct unpacker;
int elf_image_payload_with(const struct cuda_image *img, struct unpacker *u, unsigned long long limit,
			   const unsigned char **out, size_t *len, void **owned, char **why);

/* The kernels of one image, without reading what they need: fn (may be NULL) gets each one's
 * name (not NUL-terminated: len bytes), a cubin's entry functions or the `.entry` directives of
 * PTX, decompressed with u's context (NULL: one for this image). Returns how many kernels, or -1
 * with *why when the image cannot be read, or is LTO IR (whose kernels are not listed). */
typedef void (*elf_name_fn)(const char *name, size_t len, void *arg);
int elf_image_kernel_names(const struct cuda_image *img, struct unpacker *u, unsigned long long limit,
			   elf_name_fn fn, void *arg, char **why);

/* "sm_90a" for a SASS image, "compute_90a" for PTX, into buf. */
const char *elf_image_target(const struct cuda_image *img, char *buf, size_t size);

/* What one kernel of a cubin needs, from the image. */
struct cuda_kernel {
	const char *name;            /* the symbol (mangled), points into the cubin */
	unsigned regs;               /* registers per thread (EIATTR_REGCOUNT); 0 when not recorded */
	unsigned long long shared;   /* static shared memory: the size of .nv.shared.<kernel> */
	unsigned long long stack;    /* EIATTR_MIN_STACK_SIZE, else EIATTR_FRAME_SIZE */
	int has_stack;               /* one of those was recorded */
	int stub;                    /* elf_kernel_is_stub() */
	unsigned long long code;     /* the size of its code section */
	unsigned calls;              /* the image calls vprintf (bit 0) or __assertfail (bit 1): such
					calls go through its constant bank, so they cannot be told apart
					by kernel */
	unsigned traps;              /* its trap instructions (BPT: __trap(), __brkpt(), CUTLASS's
					CUTE_INVALID_CONTROL_PATH); 0 before sm_70 */
};

/* Calls fn for every kernel (an entry function of the .symtab) of a cubin, in symbol order.
 * Returns 0, or -1 with *why when the cubin is damaged (fn may have been called before). */
typedef void (*cuda_kernel_fn)(const struct cuda_kernel *k, void *arg);
int elf_cubin_kernels(const void *cubin, size_t size, cuda_kernel_fn fn, void *arg, char **why);

/* Whether a kernel of a cubin is a stub: its body was compiled out for this target (an
 * `#if __CUDA_ARCH__` guard, CUTLASS's arch-conditional kernels), so that it does nothing, or
 * only traps. Read off the machine code (sm_70 and newer, 16-byte instructions): after
 * setting up the stack pointer it only exits (EXIT), or it never exits and ends in a trap
 * (BPT.TRAP: `__trap()`, an `assert(0)`, CUTLASS's printf("... Aborting.") then trap).
 * Returns 1 for a stub, 0 for a kernel with a body, -1 when it cannot tell (no such kernel, an
 * older target, a damaged cubin). Self-contained: it reads nothing but the cubin. */
int elf_kernel_is_stub(const void *cubin, size_t size, const char *kernel);

#endif
