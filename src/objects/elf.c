#include "objects/elf.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libiberty.h>

#include "objects/unpack.h"

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_ELFDATA ELFDATA2LSB
#else
#define HOST_ELFDATA ELFDATA2MSB
#endif

#define AR_MAGIC "!<arch>\n"
#define AR_THIN_MAGIC "!<thin>\n"
#define AR_HEADER 60


enum elf_kind elf_identify(const void *data, size_t size)
{
	const unsigned char *p = data;
	Elf64_Ehdr eh;

	if (size >= 8 && !memcmp(p, AR_MAGIC, 8))
		return ELF_KIND_ARCHIVE;
	if (size >= 8 && !memcmp(p, AR_THIN_MAGIC, 8))
		return ELF_KIND_THIN_ARCHIVE;
	if (size < SELFMAG || memcmp(p, ELFMAG, SELFMAG))
		return ELF_KIND_OTHER;
	if (size < sizeof(eh) || p[EI_CLASS] != ELFCLASS64 || p[EI_DATA] != HOST_ELFDATA)
		return ELF_KIND_ELF_OTHER;
	memcpy(&eh, p, sizeof(eh));
	if (eh.e_type == ET_REL)
		return ELF_KIND_OBJECT;
	if (eh.e_type == ET_DYN)
		return ELF_KIND_SHARED;
	return ELF_KIND_ELF_OTHER;
}

const char *elf_kind_name(enum elf_kind kind)
{
	static const char *const names[] = {
		[ELF_KIND_OTHER] = "not ELF",
		[ELF_KIND_OBJECT] = "object",
		[ELF_KIND_SHARED] = "shared object",
		[ELF_KIND_ELF_OTHER] = "ELF of another kind",
		[ELF_KIND_ARCHIVE] = "archive",
		[ELF_KIND_THIN_ARCHIVE] = "thin archive",
	};
	return (unsigned)kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "?";
}

int elf_map_file(const char *path, struct elf_map *m, char **why)
{
	struct stat sb;
	m->data = NULL;
	m->size = 0;
	/* O_NONBLOCK: a FIFO without a writer is refused below instead of waiting for one. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return unpack_fail(why, "cannot open: %s", strerror(errno));
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return unpack_fail(why, "not a regular file");
	}
	if (sb.st_size > 0) {
		void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			int e = errno;
			close(fd);
			return unpack_fail(why, "cannot map: %s", strerror(e));
		}
		m->data = p;
		m->size = (size_t)sb.st_size;
	}
	close(fd);
	return 0;
}

void elf_unmap(struct elf_map *m)
{
	if (m->data)
		munmap((void *)m->data, m->size);
	m->data = NULL;
	m->size = 0;
}

static int read_shdr(const unsigned char *p, size_t size, const Elf64_Ehdr *eh, uint64_t shnum,
		     uint64_t index, Elf64_Shdr *sh, char **why)
{
	if (index >= shnum)
		return unpack_fail(why, "section index %llu out of range", (unsigned long long)index);
	uint64_t off = eh->e_shoff + index * sizeof(Elf64_Shdr);
	if (!unpack_in_bounds(size, off, sizeof(*sh)))
		return unpack_fail(why, "section header %llu runs past the end", (unsigned long long)index);
	memcpy(sh, p + off, sizeof(*sh));
	return 0;
}

int elf_symbols(const void *data, size_t size, elf_symbol_fn fn, void *arg, char **why)
{
	const unsigned char *p = data;
	Elf64_Ehdr eh;
	Elf64_Shdr sh, strsh;

	*why = NULL;
	switch (elf_identify(data, size)) {
	case ELF_KIND_OBJECT:
	case ELF_KIND_SHARED:
		break;
	case ELF_KIND_OTHER:
		if (size >= SELFMAG && !memcmp(p, ELFMAG, SELFMAG))
			return unpack_fail(why, "truncated ELF header");
		return unpack_fail(why, "not an ELF file");
	default:
		return unpack_fail(why, "not a 64-bit ELF object or shared object of this machine");
	}
	memcpy(&eh, p, sizeof(eh));
	if (!eh.e_shoff)
		return 0;
	if (eh.e_shentsize != sizeof(Elf64_Shdr))
		return unpack_fail(why, "unexpected section header size %u", eh.e_shentsize);
	if (!unpack_in_bounds(size, eh.e_shoff, sizeof(Elf64_Shdr)))
		return unpack_fail(why, "section header table at offset %llu is past the end (%zu bytes)",
			    (unsigned long long)eh.e_shoff, size);
	uint64_t shnum = eh.e_shnum;
	if (shnum == 0) {
		/* More than SHN_LORESERVE sections: the count is in section 0. */
		memcpy(&sh, p + eh.e_shoff, sizeof(sh));
		shnum = sh.sh_size;
	}
	if (shnum > (size - eh.e_shoff) / sizeof(Elf64_Shdr))
		return unpack_fail(why, "section header table (%llu entries) runs past the end",
			    (unsigned long long)shnum);

	Elf64_Word want = eh.e_type == ET_REL ? SHT_SYMTAB : SHT_DYNSYM;
	uint64_t found = shnum;
	for (uint64_t i = 0; i < shnum; i++) {
		memcpy(&sh, p + eh.e_shoff + i * sizeof(sh), sizeof(sh));
		if (sh.sh_type == want) {
			found = i;
			break;
		}
	}
	if (found == shnum)
		return 0;
	uint64_t entsize = sh.sh_entsize ? sh.sh_entsize : sizeof(Elf64_Sym);
	if (entsize != sizeof(Elf64_Sym))
		return unpack_fail(why, "unexpected symbol size %llu", (unsigned long long)entsize);
	if (!unpack_in_bounds(size, sh.sh_offset, sh.sh_size))
		return unpack_fail(why, "symbol table runs past the end");
	if (read_shdr(p, size, &eh, shnum, sh.sh_link, &strsh, why))
		return -1;
	if (strsh.sh_type != SHT_STRTAB)
		return unpack_fail(why, "symbol table's string table is not a string table");
	if (!unpack_in_bounds(size, strsh.sh_offset, strsh.sh_size))
		return unpack_fail(why, "string table runs past the end");
	const char *strtab = (const char *)p + strsh.sh_offset;
	uint64_t strsize = strsh.sh_size;
	uint64_t count = sh.sh_size / sizeof(Elf64_Sym);

	for (uint64_t i = 1; i < count; i++) {
		Elf64_Sym sym;
		memcpy(&sym, p + sh.sh_offset + i * sizeof(sym), sizeof(sym));
		unsigned bind = ELF64_ST_BIND(sym.st_info), type = ELF64_ST_TYPE(sym.st_info);
		if ((bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE) || !sym.st_name ||
		    type == STT_SECTION || type == STT_FILE)
			continue;
		if (sym.st_name >= strsize)
			return unpack_fail(why, "symbol %llu's name is outside the string table",
				    (unsigned long long)i);
		const char *name = strtab + sym.st_name;
		if (!memchr(name, '\0', strsize - sym.st_name))
			return unpack_fail(why, "symbol %llu's name runs past the string table",
				    (unsigned long long)i);
		if (!*name)
			continue;
		fn(name, sym.st_shndx != SHN_UNDEF, bind == STB_WEAK, arg);
	}
	return 0;
}

/* ---- ar archives ---- */

struct ar_header {
	char name[16];
	char date[12];
	char uid[6];
	char gid[6];
	char mode[8];
	char size[10];
	char fmag[2];
};

/* A decimal field, space padded. */
static int parse_decimal(const char *f, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;
	while (i < len && f[i] >= '0' && f[i] <= '9') {
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(f[i] - '0');
		i++;
	}
	if (!i)
		return -1;
	for (; i < len; i++)
		if (f[i] != ' ')
			return -1;
	*out = v;
	return 0;
}

static int is_thin(const unsigned char *p, size_t size)
{
	return size >= 8 && !memcmp(p, AR_THIN_MAGIC, 8);
}

/* The special members: the symbol index and the long-name table are stored even in thin
 * archives. */
static int name_is(const struct ar_header *h, const char *name)
{
	size_t len = strlen(name);
	if (memcmp(h->name, name, len))
		return 0;
	for (size_t i = len; i < sizeof(h->name); i++)
		if (h->name[i] != ' ')
			return 0;
	return 1;
}

static int is_index(const struct ar_header *h)
{
	return name_is(h, "/") || name_is(h, "/SYM64/") || name_is(h, "__.SYMDEF") ||
	       name_is(h, "__.SYMDEF SORTED");
}

static int is_special(const struct ar_header *h)
{
	return is_index(h) || name_is(h, "//");
}

/* Reads the header at off: its size, where its data start, and where the next member starts. */
static int read_member(const unsigned char *p, size_t size, size_t off, struct ar_header *h,
		       uint64_t *msize, size_t *next, char **why)
{
	if (off < 8 || !unpack_in_bounds(size, off, AR_HEADER))
		return unpack_fail(why, "member header at offset %zu runs past the end (%zu bytes)", off, size);
	memcpy(h, p + off, sizeof(*h));
	if (memcmp(h->fmag, "`\n", 2))
		return unpack_fail(why, "member header at offset %zu is damaged", off);
	if (parse_decimal(h->size, sizeof(h->size), msize))
		return unpack_fail(why, "member header at offset %zu has a bad size", off);
	size_t start = off + AR_HEADER;
	/* In a thin archive only the index and the name table are stored. */
	int stored = !is_thin(p, size) || is_special(h);
	if (stored && !unpack_in_bounds(size, start, *msize))
		return unpack_fail(why, "member at offset %zu (%llu bytes) runs past the end", off,
			    (unsigned long long)*msize);
	*next = stored ? start + (size_t)*msize + (*msize & 1) : start;
	return 0;
}

static int check_archive(const unsigned char *p, size_t size, char **why)
{
	*why = NULL;
	if (size < 8 || (memcmp(p, AR_MAGIC, 8) && memcmp(p, AR_THIN_MAGIC, 8)))
		return unpack_fail(why, "not an archive");
	return 0;
}

/* Finds the long-name table ("//"), which comes before any ordinary member. */
static void find_long_names(const unsigned char *p, size_t size, const char **table, size_t *len)
{
	size_t off = 8;
	*table = NULL;
	*len = 0;
	while (off < size) {
		struct ar_header h;
		uint64_t msize;
		size_t next;
		char *why = NULL;
		if (read_member(p, size, off, &h, &msize, &next, &why)) {
			free(why);
			return;
		}
		if (name_is(&h, "//")) {
			*table = (const char *)p + off + AR_HEADER;
			*len = (size_t)msize;
			return;
		}
		if (!is_special(&h))
			return;
		off = next;
	}
}

static void set_name(struct ar_member *m, const char *s, size_t len)
{
	if (len >= sizeof(m->name))
		len = sizeof(m->name) - 1;
	memcpy(m->name, s, len);
	m->name[len] = '\0';
}

/* Fills m from the header at off. */
static int member_at(const unsigned char *p, size_t size, size_t off, const char *long_names,
		     size_t long_len, struct ar_member *m, size_t *next, char **why)
{
	struct ar_header h;
	uint64_t msize = 0;
	if (read_member(p, size, off, &h, &msize, next, why))
		return -1;
	m->header = off;
	m->size = (size_t)msize;
	m->data = is_thin(p, size) && !is_special(&h) ? NULL : p + off + AR_HEADER;
	if (h.name[0] == '/' && h.name[1] >= '0' && h.name[1] <= '9') {
		/* GNU long name: an offset into "//", the name ending with "/\n". */
		uint64_t at;
		size_t digits = 1;
		while (digits < sizeof(h.name) - 1 && h.name[1 + digits] >= '0' && h.name[1 + digits] <= '9')
			digits++;
		if (parse_decimal(h.name + 1, digits, &at) || !long_names || at >= long_len)
			return unpack_fail(why, "member at offset %zu names a missing long name", off);
		const char *s = long_names + at;
		size_t left = long_len - (size_t)at, len = 0;
		while (len < left && s[len] != '\n' && s[len] != '\0')
			len++;
		if (len && s[len - 1] == '/')
			len--;
		set_name(m, s, len);
	} else if (!memcmp(h.name, "#1/", 3)) {
		/* BSD: the name is the first bytes of the data. */
		uint64_t len;
		if (parse_decimal(h.name + 3, sizeof(h.name) - 3, &len) || len > msize || !m->data)
			return unpack_fail(why, "member at offset %zu has a bad BSD name", off);
		set_name(m, (const char *)m->data, (size_t)len);
		m->data += len;
		m->size -= (size_t)len;
	} else {
		size_t len = sizeof(h.name);
		while (len && h.name[len - 1] == ' ')
			len--;
		if (len > 1 && h.name[len - 1] == '/')
			len--;
		set_name(m, h.name, len);
	}
	return 0;
}

int ar_member_at(const void *data, size_t size, size_t offset, struct ar_member *m, char **why)
{
	const unsigned char *p = data;
	const char *long_names;
	size_t long_len, next;
	if (check_archive(p, size, why))
		return -1;
	find_long_names(p, size, &long_names, &long_len);
	return member_at(p, size, offset, long_names, long_len, m, &next, why);
}

int ar_members(const void *data, size_t size, int (*fn)(const struct ar_member *m, void *arg),
	       void *arg, char **why)
{
	const unsigned char *p = data;
	const char *long_names;
	size_t long_len;
	if (check_archive(p, size, why))
		return -1;
	find_long_names(p, size, &long_names, &long_len);
	size_t off = 8;
	struct ar_member *m = XNEW(struct ar_member);
	int rc = 0;
	while (off < size) {
		/* A final padding byte. */
		if (off + 1 == size && p[off] == '\n')
			break;
		struct ar_header h;
		uint64_t msize;
		size_t next;
		if (read_member(p, size, off, &h, &msize, &next, why)) {
			rc = -1;
			break;
		}
		if (!is_special(&h)) {
			if (member_at(p, size, off, long_names, long_len, m, &next, why)) {
				rc = -1;
				break;
			}
			if (fn(m, arg))
				break;
		}
		off = next;
	}
	free(m);
	return rc;
}

static uint64_t read_be(const unsigned char *p, unsigned width)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < width; i++)
		v = v << 8 | p[i];
	return v;
}

int ar_index(const void *data, size_t size, struct ar_symbol **syms, size_t *n, char **why)
{
	const unsigned char *p = data;
	struct ar_header h;
	uint64_t msize;
	size_t next;

	*syms = NULL;
	*n = 0;
	if (check_archive(p, size, why))
		return -1;
	if (size == 8)
		return 0;
	if (read_member(p, size, 8, &h, &msize, &next, why))
		return -1;
	unsigned width;
	if (name_is(&h, "/"))
		width = 4;
	else if (name_is(&h, "/SYM64/"))
		width = 8;
	else
		return 0; /* no index, or a BSD one: the members are read instead */
	const unsigned char *d = p + 8 + AR_HEADER;
	if (msize < width)
		return unpack_fail(why, "symbol index is too short");
	uint64_t count = read_be(d, width);
	if (count > (msize - width) / width)
		return unpack_fail(why, "symbol index claims %llu symbols, more than it holds",
			    (unsigned long long)count);
	const char *names = (const char *)d + width + count * width;
	size_t left = (size_t)(msize - width - count * width);
	struct ar_symbol *v = XNEWVEC(struct ar_symbol, count ? count : 1);
	for (uint64_t i = 0; i < count; i++) {
		const char *end = memchr(names, '\0', left);
		if (!end) {
			free(v);
			return unpack_fail(why, "symbol index names run past the index");
		}
		uint64_t off = read_be(d + width + i * width, width);
		if (off > size) {
			free(v);
			return unpack_fail(why, "symbol index points past the end of the archive");
		}
		v[i].name = names;
		v[i].member = (size_t)off;
		left -= (size_t)(end - names) + 1;
		names = end + 1;
	}
	*syms = v;
	*n = (size_t)count;
	return 0;
}

#ifndef EM_CUDA
#define EM_CUDA 190
#endif
#define SHT_CUDA_INFO 0x70000000u
#define STO_CUDA_ENTRY 0x10
#define EIFMT_SVAL 4
#define EIATTR_FRAME_SIZE 0x11
#define EIATTR_MIN_STACK_SIZE 0x12
#define FATBIN_MAGIC 0xBA55ED50u
#define FATBIN_KIND_ELF 2
#define FATBIN_FLAG_COMPRESS 0x2000u
#define FATBIN_FLAG_COMPRESS_ZSTD 0x8000u

/* The ELF header and the section-header count of a 64-bit ELF of this machine's byte order. */
static int elf_header(const unsigned char *p, size_t size, Elf64_Ehdr *eh, uint64_t *shnum, char **why)
{
	if (size < sizeof(*eh) || memcmp(p, ELFMAG, SELFMAG) || p[EI_CLASS] != ELFCLASS64 ||
	    p[EI_DATA] != HOST_ELFDATA)
		return unpack_fail(why, "not a 64-bit ELF file of this machine");
	memcpy(eh, p, sizeof(*eh));
	if (eh->e_shentsize != sizeof(Elf64_Shdr) && eh->e_shnum)
		return unpack_fail(why, "unexpected section header size %u", (unsigned)eh->e_shentsize);
	*shnum = eh->e_shnum;
	if (!*shnum && eh->e_shoff) {
		Elf64_Shdr first;
		if (read_shdr(p, size, eh, 1, 0, &first, why))
			return -1;
		*shnum = first.sh_size;
	}
	return 0;
}

/* A section's bytes, checked against the data. */
static int section_data(size_t size, const Elf64_Shdr *sh, char **why)
{
	if (sh->sh_type == SHT_NOBITS)
		return 0;
	if (!unpack_in_bounds(size, sh->sh_offset, sh->sh_size))
		return unpack_fail(why, "a section runs past the end of the file");
	return 0;
}

/* The NUL-terminated name at `off` in the string table `st`, or NULL. */
static const char *string_at(const unsigned char *p, size_t size, const Elf64_Shdr *st, uint64_t off)
{
	if (st->sh_type == SHT_NOBITS || !unpack_in_bounds(size, st->sh_offset, st->sh_size) || off >= st->sh_size)
		return NULL;
	const char *s = (const char *)p + st->sh_offset + off;
	return memchr(s, '\0', (size_t)(st->sh_size - off)) ? s : NULL;
}

/* ---- CUDA images ---- */

#define EIATTR_REGCOUNT 0x2f
#define FATBIN_KIND_PTX 1
#define FATBIN_FLAG_ARCH_SPECIFIC 0x100000u
#define FATBIN_FLAG_FAMILY 0x200000u
#define FATBIN_ENTRY_HEADER 64
#define IMAGE_LIMIT (1ULL << 31)

/* A cubin's sections, read once. */
struct cubin {
	const unsigned char *p;
	size_t size;
	Elf64_Ehdr eh;
	uint64_t shnum;
	Elf64_Shdr symtab, strtab, names;
	int have_symtab, have_names;
	unsigned sm;
};

static int cubin_open(struct cubin *c, const unsigned char *p, size_t size, char **why)
{
	memset(c, 0, sizeof(*c));
	c->p = p;
	c->size = size;
	if (elf_header(p, size, &c->eh, &c->shnum, why))
		return -1;
	if (c->eh.e_machine != EM_CUDA)
		return unpack_fail(why, "not a CUDA image");
	c->sm = p[EI_ABIVERSION] >= 8 ? (c->eh.e_flags >> 8) & 0xff : c->eh.e_flags & 0xff;
	if (c->shnum && (c->eh.e_shoff > size || c->shnum > (size - c->eh.e_shoff) / sizeof(Elf64_Shdr)))
		return unpack_fail(why, "section header table (%llu entries) runs past the end",
			    (unsigned long long)c->shnum);
	Elf64_Shdr sh;
	for (uint64_t i = 0; i < c->shnum; i++) {
		/* Only the sections read are checked against the data (each where it is read). */
		if (read_shdr(p, size, &c->eh, c->shnum, i, &sh, why))
			return -1;
		if (sh.sh_type == SHT_SYMTAB && !c->have_symtab) {
			if (sh.sh_entsize != sizeof(Elf64_Sym))
				return unpack_fail(why, "unexpected symbol size");
			if (section_data(size, &sh, why))
				return -1;
			c->symtab = sh;
			c->have_symtab = 1;
		}
	}
	if (c->have_symtab && (read_shdr(p, size, &c->eh, c->shnum, c->symtab.sh_link, &c->strtab, why) ||
			       section_data(size, &c->strtab, why)))
		return -1;
	if (c->shnum && c->eh.e_shstrndx < c->shnum &&
	    !read_shdr(p, size, &c->eh, c->shnum, c->eh.e_shstrndx, &c->names, why) &&
	    !section_data(size, &c->names, why))
		c->have_names = 1;
	free(*why);
	*why = NULL;
	return 0;
}

/* SASS opcodes (the low 9 bits of an instruction of sm_70 and newer). */
#define OP_MOV 0x002
#define OP_IMAD 0x024
#define OP_NOP 0x118
#define OP_BRA 0x147
#define OP_EXIT 0x14d
#define OP_BPT 0x15c
#define OP_LDC 0x182

static int code_is_stub(const unsigned char *c, size_t n)
{
	if (!n || n % 16)
		return -1;
	size_t body = 0, setup = 0, exits = 0, traps = 0, branches = 0;
	int last_branch = -1;
	/* The counts do not depend on the order, so the code is read from its end, where a kernel
	 * with a body has its EXIT: most kernels are decided within a few instructions. */
	for (size_t at = n; at;) {
		at -= 16;
		unsigned op = (unsigned)(c[at] | c[at + 1] << 8) & 0x1ff;
		if (op == OP_NOP)
			continue;
		if (last_branch < 0)
			last_branch = op == OP_BRA; /* the last instruction that is not a NOP */
		if (op == OP_BRA) {
			if (++branches > 1)
				return 0; /* decided: the test below fails whatever follows */
			continue;
		}
		body++;
		if (op == OP_EXIT)
			exits++;
		else if (op == OP_BPT)
			traps++;
		else if (op == OP_MOV || op == OP_LDC || op == OP_IMAD)
			setup++;
		/* Every count only grows: once there is an exit and more than the one-exit stub allows,
		 * neither kind of stub can follow. */
		if (exits && (exits > 1 || traps || body > exits + setup || setup > 2))
			return 0;
	}
	/* Every kernel ends with a branch to itself after its last instruction. */
	if (branches > 1 || (branches && last_branch != 1))
		return 0;
	if (!exits && traps)
		return 1; /* it can only trap */
	return exits == 1 && !traps && body == exits + setup && setup <= 2;
}

/* The trap instructions (BPT) of a kernel's code, or 0 before sm_70 (8-byte instructions). */
static unsigned code_traps(const unsigned char *c, size_t len)
{
	unsigned n = 0;
	for (size_t at = 0; at + 16 <= len; at += 16)
		n += ((unsigned)(c[at] | c[at + 1] << 8) & 0x1ff) == OP_BPT;
	return n;
}

/* A kernel's code in its cubin (sm_70 and newer: 16-byte instructions). Returns 0, or -1. */
static int kernel_code(const struct cubin *c, const Elf64_Sym *sym, const unsigned char **code, size_t *len)
{
	Elf64_Shdr text;
	char *why = NULL;
	if (c->sm < 70 || sym->st_shndx == SHN_UNDEF || sym->st_shndx >= c->shnum ||
	    read_shdr(c->p, c->size, &c->eh, c->shnum, sym->st_shndx, &text, &why) || text.sh_type == SHT_NOBITS ||
	    !unpack_in_bounds(c->size, text.sh_offset, text.sh_size)) {
		free(why);
		return -1;
	}
	uint64_t off = sym->st_value, n = sym->st_size;
	if (!n || off > text.sh_size || n > text.sh_size - off) {
		off = 0;
		n = text.sh_size;
	}
	*code = c->p + text.sh_offset + off;
	*len = (size_t)n;
	return 0;
}

static unsigned kernel_traps(const struct cubin *c, const Elf64_Sym *sym)
{
	const unsigned char *code;
	size_t len;
	return kernel_code(c, sym, &code, &len) ? 0 : code_traps(code, len);
}

static int kernel_stub(const struct cubin *c, const Elf64_Sym *sym)
{
	const unsigned char *code;
	size_t len;
	return kernel_code(c, sym, &code, &len) ? -1 : code_is_stub(code, len);
}

struct kernel_attrs {
	unsigned regs;
	uint64_t frame, min, shared;
	unsigned char has_frame, has_min;
};

static int cubin_kernels(const struct cubin *c, const char *only, cuda_kernel_fn fn, void *arg, int *stub,
			 char **why)
{
	const unsigned char *p = c->p;
	if (!c->have_symtab)
		return 0;
	uint64_t nsyms = c->symtab.sh_size / sizeof(Elf64_Sym);
	if (!nsyms)
		return 0;
	struct kernel_attrs *a = XCNEWVEC(struct kernel_attrs, nsyms);
	/* Shared memory per text section: .nv.shared.<kernel> names its kernel's section in sh_info. */
	uint64_t *shared = XCNEWVEC(uint64_t, c->shnum ? c->shnum : 1);
	int rc = 0;
	Elf64_Shdr sh;
	for (uint64_t i = 0; i < c->shnum && !rc; i++) {
		if (read_shdr(p, c->size, &c->eh, c->shnum, i, &sh, why)) {
			rc = -1;
			break;
		}
		if (sh.sh_type == SHT_NOBITS && c->have_names && sh.sh_info < c->shnum) {
			const char *name = string_at(p, c->size, &c->names, sh.sh_name);
			if (name && !strncmp(name, ".nv.shared.", 11) && strncmp(name, ".nv.shared.reserved", 19))
				shared[sh.sh_info] += sh.sh_size;
		}
		if (sh.sh_type != SHT_CUDA_INFO || sh.sh_info || !unpack_in_bounds(c->size, sh.sh_offset, sh.sh_size))
			continue; /* a kernel's own .nv.info.<name> (sh_info: its section) */
		const unsigned char *d = p + sh.sh_offset;
		for (uint64_t at = 0; at + 4 <= sh.sh_size;) {
			unsigned fmt = d[at], attr = d[at + 1];
			uint64_t len = 4;
			if (fmt != EIFMT_SVAL) {
				at += len;
				continue;
			}
			uint16_t vs;
			memcpy(&vs, d + at + 2, 2);
			len = 4 + (uint64_t)vs;
			if (at + len > sh.sh_size) {
				rc = unpack_fail(why, ".nv.info: an attribute runs past its section");
				break;
			}
			if ((attr == EIATTR_FRAME_SIZE || attr == EIATTR_MIN_STACK_SIZE || attr == EIATTR_REGCOUNT) &&
			    vs >= 8) {
				uint32_t sym, val;
				memcpy(&sym, d + at + 4, 4);
				memcpy(&val, d + at + 8, 4);
				if (sym < nsyms) {
					if (attr == EIATTR_FRAME_SIZE)
						a[sym].frame = val, a[sym].has_frame = 1;
					else if (attr == EIATTR_MIN_STACK_SIZE)
						a[sym].min = val, a[sym].has_min = 1;
					else
						a[sym].regs = val;
				}
			}
			at += len;
		}
	}
	/* what the image's relocations name: bit 0 vprintf, bit 1 __assertfail (a call to either
	 * goes through the constant bank, so it belongs to the image, not to one kernel) */
	unsigned calls = 0;
	for (uint64_t i = 0; i < c->shnum && !rc && !only; i++) {
		if (read_shdr(p, c->size, &c->eh, c->shnum, i, &sh, why)) {
			rc = -1;
			break;
		}
		size_t esize = sh.sh_type == SHT_REL ? sizeof(Elf64_Rel) : sh.sh_type == SHT_RELA ? sizeof(Elf64_Rela) : 0;
		if (!esize || !unpack_in_bounds(c->size, sh.sh_offset, sh.sh_size))
			continue;
		for (uint64_t off = 0; off + esize <= sh.sh_size; off += esize) {
			Elf64_Rel r;
			Elf64_Sym rs;
			memcpy(&r, p + sh.sh_offset + off, sizeof(r));
			if (ELF64_R_SYM(r.r_info) >= nsyms)
				continue;
			memcpy(&rs, p + c->symtab.sh_offset + ELF64_R_SYM(r.r_info) * sizeof(rs), sizeof(rs));
			const char *rname = string_at(p, c->size, &c->strtab, rs.st_name);
			if (rname && !strcmp(rname, "vprintf"))
				calls |= 1;
			else if (rname && !strcmp(rname, "__assertfail"))
				calls |= 2;
		}
	}
	for (uint64_t i = 1; i < nsyms && !rc; i++) {
		Elf64_Sym sym;
		memcpy(&sym, p + c->symtab.sh_offset + i * sizeof(sym), sizeof(sym));
		if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || !(sym.st_other & STO_CUDA_ENTRY))
			continue;
		const char *name = string_at(p, c->size, &c->strtab, sym.st_name);
		if (!name) {
			rc = unpack_fail(why, "symbol %llu's name is outside the string table", (unsigned long long)i);
			break;
		}
		if (only) {
			if (!strcmp(name, only)) {
				*stub = kernel_stub(c, &sym);
				break;
			}
			continue;
		}
		Elf64_Shdr text = { 0 };
		if (sym.st_shndx && sym.st_shndx < c->shnum && read_shdr(p, c->size, &c->eh, c->shnum, sym.st_shndx, &text, why)) {
			rc = -1;
			break;
		}
		struct cuda_kernel k = { name, a[i].regs, sym.st_shndx < c->shnum ? shared[sym.st_shndx] : 0,
					 a[i].has_min ? a[i].min : a[i].frame, a[i].has_min || a[i].has_frame,
					 kernel_stub(c, &sym), text.sh_size, calls, kernel_traps(c, &sym) };
		fn(&k, arg);
	}
	free(shared);
	free(a);
	return rc;
}

int elf_cubin_kernels(const void *cubin, size_t size, cuda_kernel_fn fn, void *arg, char **why)
{
	struct cubin c;
	*why = NULL;
	if (cubin_open(&c, cubin, size, why))
		return -1;
	return cubin_kernels(&c, NULL, fn, arg, NULL, why);
}

int elf_kernel_is_stub(const void *cubin, size_t size, const char *kernel)
{
	struct cubin c;
	char *why = NULL;
	int stub = -1;
	if (!kernel || cubin_open(&c, cubin, size, &why) || cubin_kernels(&c, kernel, NULL, NULL, &stub, &why))
		stub = -1;
	free(why);
	return stub;
}

size_t elf_fatbin_size(const void *data, size_t size)
{
	const unsigned char *d = data;
	uint32_t magic;
	uint16_t hsize;
	uint64_t fsize;
	if (size < 16)
		return 0;
	memcpy(&magic, d, 4);
	memcpy(&hsize, d + 6, 2);
	memcpy(&fsize, d + 8, 8);
	if (magic != FATBIN_MAGIC || hsize < 16 || hsize > size || fsize > size - hsize)
		return 0;
	return (size_t)(hsize + fsize);
}

/* The images of the fatbin containers in [d, d + size). */
static int fatbin_images(const unsigned char *d, uint64_t size, cuda_image_fn fn, void *arg, unsigned *ncont,
			 int *stop, char **why)
{
	uint64_t at = 0;
	while (at + 16 <= size && !*stop) {
		uint32_t magic;
		uint16_t hsize;
		uint64_t fsize;
		memcpy(&magic, d + at, 4);
		if (magic != FATBIN_MAGIC) {
			at += 8; /* padding between containers */
			continue;
		}
		memcpy(&hsize, d + at + 6, 2);
		memcpy(&fsize, d + at + 8, 8);
		if (hsize < 16 || at + hsize > size || fsize > size - at - hsize)
			return unpack_fail(why, "a fatbin container runs past its section");
		uint64_t e = at + hsize, end = at + hsize + fsize;
		unsigned container = (*ncont)++;
		while (e + FATBIN_ENTRY_HEADER <= end && !*stop) {
			uint16_t kind, minor, major;
			uint32_t ehsize, sm, csize;
			uint64_t psize, flags, full;
			memcpy(&kind, d + e, 2);
			memcpy(&ehsize, d + e + 4, 4);
			memcpy(&psize, d + e + 8, 8);
			memcpy(&csize, d + e + 16, 4);
			memcpy(&minor, d + e + 24, 2);
			memcpy(&major, d + e + 26, 2);
			memcpy(&sm, d + e + 28, 4);
			memcpy(&flags, d + e + 40, 8);
			memcpy(&full, d + e + 56, 8);
			if (ehsize < FATBIN_ENTRY_HEADER || ehsize > end - e || psize > end - e - ehsize)
				return unpack_fail(why, "a fatbin entry runs past its container");
			struct cuda_image img = { 0 };
			img.kind = kind == FATBIN_KIND_ELF ? CUDA_IMAGE_SASS : kind == FATBIN_KIND_PTX ? CUDA_IMAGE_PTX
												: CUDA_IMAGE_OTHER;
			img.sm = sm < 10000 ? sm : 0;
			img.variant = flags & FATBIN_FLAG_ARCH_SPECIFIC ? 'a' : flags & FATBIN_FLAG_FAMILY ? 'f' : 0;
			if (img.kind == CUDA_IMAGE_PTX) {
				img.ptx_major = major;
				img.ptx_minor = minor;
			}
			img.data = d + e + ehsize;
			img.size = (size_t)psize;
			img.full_size = psize;
			img.container = container;
			if (flags & (FATBIN_FLAG_COMPRESS | FATBIN_FLAG_COMPRESS_ZSTD)) {
				img.compression = flags & FATBIN_FLAG_COMPRESS_ZSTD ? 2 : 1;
				if (!csize || csize > psize)
					return unpack_fail(why, "a compressed fatbin entry has a bad size");
				img.size = csize;
				img.full_size = full;
			}
			if (fn(&img, arg))
				*stop = 1;
			e += ehsize + psize;
		}
		at = end;
	}
	return 0;
}

/* PTX text (a .ptx file, NVRTC's output given to cuModuleLoadData): one PTX image with the ISA
 * of its `.version` and the target of its `.target`, both before the first function; 1 when
 * data are such text, 0 when not. Only the first 64 KiB are read for the two directives. */
static int ptx_text_image(const unsigned char *p, size_t size, struct cuda_image *img)
{
	size_t n = size < 65536 ? size : 65536, i = 0;
	int have_version = 0, have_target = 0;
	memset(img, 0, sizeof(*img));
	while (i < n && p[i]) {
		/* one line: blanks, then a directive or a comment */
		while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
			i++;
		size_t end = i;
		while (end < n && p[end] && p[end] != '\n')
			end++;
		const char *line = (const char *)p + i;
		size_t len = end - i;
		if (len >= 2 && line[0] == '/' && line[1] == '/') {
			/* a comment */
		} else if (len > 9 && !memcmp(line, ".version", 8) && (line[8] == ' ' || line[8] == '\t')) {
			unsigned major = 0, minor = 0;
			size_t k = 9;
			while (k < len && (line[k] == ' ' || line[k] == '\t'))
				k++;
			int digits = 0;
			while (k < len && line[k] >= '0' && line[k] <= '9' && major < 100) {
				major = major * 10 + (unsigned)(line[k++] - '0');
				digits++;
			}
			if (!digits || k >= len || line[k] != '.')
				return 0;
			k++;
			digits = 0;
			while (k < len && line[k] >= '0' && line[k] <= '9' && minor < 100) {
				minor = minor * 10 + (unsigned)(line[k++] - '0');
				digits++;
			}
			if (!digits)
				return 0;
			img->ptx_major = major;
			img->ptx_minor = minor;
			have_version = 1;
		} else if (len > 10 && !memcmp(line, ".target", 7) && (line[7] == ' ' || line[7] == '\t')) {
			size_t k = 8;
			while (k < len && (line[k] == ' ' || line[k] == '\t'))
				k++;
			if (k + 3 >= len || memcmp(line + k, "sm_", 3))
				return 0;
			k += 3;
			unsigned sm = 0;
			while (k < len && line[k] >= '0' && line[k] <= '9' && sm < 10000)
				sm = sm * 10 + (unsigned)(line[k++] - '0');
			if (!sm)
				return 0;
			img->sm = sm;
			if (k < len && (line[k] == 'a' || line[k] == 'f'))
				img->variant = line[k];
			have_target = 1;
		} else if (len && line[0] == '.' && have_version) {
			/* .address_size and the rest: the two come first */
		} else {
			break;
		}
		if (have_version && have_target)
			break;
		i = end;
	}
	if (!have_version || !have_target)
		return 0;
	img->kind = CUDA_IMAGE_PTX;
	img->data = p;
	img->size = size;
	img->full_size = size;
	return 1;
}

int elf_is_ptx_text(const void *data, size_t size)
{
	struct cuda_image img;
	const unsigned char *p = data;
	return size >= 4 && p[0] != 0x7f && ptx_text_image(p, size, &img);
}

int elf_cuda_images(const void *data, size_t size, cuda_image_fn fn, void *arg, unsigned *ncontainers,
		    char **why)
{
	const unsigned char *p = data;
	Elf64_Ehdr eh;
	uint64_t shnum = 0;
	unsigned n = 0;
	int stop = 0, rc = 0;
	*why = NULL;
	if (ncontainers)
		*ncontainers = 0;
	if (size >= 4) {
		uint32_t magic;
		memcpy(&magic, p, 4);
		if (magic == FATBIN_MAGIC) {
			rc = fatbin_images(p, size, fn, arg, &n, &stop, why);
			goto out;
		}
		struct cuda_image text;
		if (p[0] != 0x7f && ptx_text_image(p, size, &text)) {
			n = 1;
			fn(&text, arg);
			goto out;
		}
	}
	if (elf_header(p, size, &eh, &shnum, why))
		return -1;
	if (eh.e_machine == EM_CUDA) {
		struct cubin c;
		if (cubin_open(&c, p, size, why))
			return -1;
		struct cuda_image img = { 0 };
		img.kind = CUDA_IMAGE_SASS;
		img.sm = c.sm;
		img.data = p;
		img.size = size;
		img.full_size = size;
		n = 1;
		fn(&img, arg);
		goto out;
	}
	Elf64_Shdr sh = { 0 }, names = { 0 };
	uint64_t strndx = eh.e_shstrndx;
	if (strndx == SHN_XINDEX) {
		if (read_shdr(p, size, &eh, shnum, 0, &sh, why))
			return -1;
		strndx = sh.sh_link;
	}
	if (!shnum)
		goto out;
	if (read_shdr(p, size, &eh, shnum, strndx, &names, why))
		return -1;
	if (names.sh_type == SHT_NOBITS || !unpack_in_bounds(size, names.sh_offset, names.sh_size))
		return unpack_fail(why, "its section names (section %llu) run past the end of the file",
				   (unsigned long long)strndx);
	/* Only the sections read are checked against the data, as readelf -S does: a library may
	 * hold sections whose bytes are not in the file, which do not matter here. */
	for (uint64_t i = 0; i < shnum && !stop && !rc; i++) {
		if (read_shdr(p, size, &eh, shnum, i, &sh, why))
			return -1;
		if (sh.sh_type == SHT_NOBITS)
			continue;
		const char *name = string_at(p, size, &names, sh.sh_name);
		if (!name || (strcmp(name, ".nv_fatbin") && strcmp(name, "__nv_relfatbin")))
			continue;
		if (!unpack_in_bounds(size, sh.sh_offset, sh.sh_size))
			return unpack_fail(why, "its %s section runs past the end of the file", name);
		rc = fatbin_images(p + sh.sh_offset, sh.sh_size, fn, arg, &n, &stop, why);
	}
out:
	if (ncontainers)
		*ncontainers = n;
	return rc;
}

int elf_image_payload(const struct cuda_image *img, unsigned long long limit, const unsigned char **out,
		      size_t *len, void **owned, char **why)
{
	return elf_image_payload_with(img, NULL, limit, out, len, owned, why);
}

int elf_image_payload_with(const struct cuda_image *img, struct unpacker *u, unsigned long long limit,
			   const unsigned char **out, size_t *len, void **owned, char **why)
{
	*why = NULL;
	*owned = NULL;
	if (!img->compression) {
		*out = img->data;
		*len = img->size;
		return 0;
	}
	unsigned char *buf;
	if (unpack_image_with(u, img->compression == 2 ? UNPACK_ZSTD : UNPACK_LZ4, img->data, img->size,
			      img->full_size, limit, &buf, why))
		return -1;
	*out = buf;
	*len = (size_t)img->full_size;
	*owned = buf;
	return 0;
}

const char *elf_image_target(const struct cuda_image *img, char *buf, size_t size)
{
	const char *v = img->variant == 'a' ? "a" : img->variant == 'f' ? "f" : "";
	if (img->kind == CUDA_IMAGE_OTHER)
		snprintf(buf, size, "other_%u%s", img->sm, v);
	else
		snprintf(buf, size, "%s_%u%s", img->kind == CUDA_IMAGE_PTX ? "compute" : "sm", img->sm, v);
	return buf;
}

/* ---- stacks (the crash layer's check), on top of the images and kernels ---- */

struct stacks_walk {
	elf_stack_fn fn;
	void *arg;
	unsigned sm;
	char *why;
};

static void stack_of(const struct cuda_kernel *k, void *arg)
{
	struct stacks_walk *w = arg;
	if (k->has_stack)
		w->fn(k->name, w->sm, k->stack, w->arg);
}

static int stacks_image(const struct cuda_image *img, void *arg)
{
	struct stacks_walk *w = arg;
	const unsigned char *code;
	size_t len;
	void *owned;
	if (img->kind != CUDA_IMAGE_SASS)
		return 0;
	if (elf_image_payload(img, IMAGE_LIMIT, &code, &len, &owned, &w->why))
		return 1;
	struct cubin c;
	if (cubin_open(&c, code, len, &w->why)) {
		free(owned);
		return 1;
	}
	w->sm = img->sm ? img->sm : c.sm;
	int rc = cubin_kernels(&c, NULL, stack_of, w, NULL, &w->why);
	free(owned);
	return rc != 0;
}

int elf_cuda_stacks(const void *data, size_t size, elf_stack_fn fn, void *arg, char **why)
{
	struct stacks_walk w = { fn, arg, 0, NULL };
	if (elf_cuda_images(data, size, stacks_image, &w, NULL, why))
		return -1;
	if (w.why) {
		*why = w.why;
		return -1;
	}
	return 0;
}

/* ---- programs, and the kernels of one image ---- */

int elf_is_program(const void *data, size_t size)
{
	const unsigned char *p = data;
	Elf64_Ehdr eh;
	switch (elf_identify(data, size)) {
	case ELF_KIND_SHARED:
		break;
	case ELF_KIND_ELF_OTHER:
		if (size < sizeof(eh) || p[EI_CLASS] != ELFCLASS64 || p[EI_DATA] != HOST_ELFDATA)
			return 0;
		memcpy(&eh, p, sizeof(eh));
		return eh.e_type == ET_EXEC && eh.e_machine != EM_CUDA;
	default:
		return 0;
	}
	memcpy(&eh, p, sizeof(eh));
	if (eh.e_machine == EM_CUDA || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > size ||
	    eh.e_phnum > (size - eh.e_phoff) / sizeof(Elf64_Phdr))
		return 0;
	int interp = 0, soname = 0;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, p + eh.e_phoff + (size_t)i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_INTERP)
			interp = 1;
		if (ph.p_type != PT_DYNAMIC || !unpack_in_bounds(size, ph.p_offset, ph.p_filesz))
			continue;
		for (uint64_t at = 0; at + sizeof(Elf64_Dyn) <= ph.p_filesz; at += sizeof(Elf64_Dyn)) {
			Elf64_Dyn dyn;
			memcpy(&dyn, p + ph.p_offset + at, sizeof(dyn));
			if (dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag == DT_FLAGS_1 && (dyn.d_un.d_val & DF_1_PIE))
				return 1;
			if (dyn.d_tag == DT_SONAME)
				soname = 1;
		}
	}
	return interp && !soname;
}

/* The kernels a PTX text declares: ".entry NAME(" (after ".visible" or ".weak"). */
static int ptx_entries(const unsigned char *t, size_t len, elf_name_fn fn, void *arg)
{
	int n = 0;
	for (size_t at = 0; at + 7 <= len;) {
		const unsigned char *e = memchr(t + at, '.', len - at);
		if (!e)
			break;
		at = (size_t)(e - t) + 1;
		if (len - (size_t)(e - t) < 7 || memcmp(e, ".entry", 6) || (e > t && !strchr(" \t\n", e[-1])) ||
		    !strchr(" \t\n", e[6]))
			continue;
		size_t s = (size_t)(e - t) + 6;
		while (s < len && strchr(" \t\n", t[s]) && t[s])
			s++;
		size_t end = s;
		while (end < len && t[end] && !strchr(" \t\n(", t[end]))
			end++;
		if (end > s) {
			n++;
			if (fn)
				fn((const char *)t + s, end - s, arg);
		}
		at = end;
	}
	return n;
}

/* The entry functions of a cubin's .symtab; returns how many, or -1 with *why. */
static int cubin_entries(const struct cubin *c, elf_name_fn fn, void *arg, char **why)
{
	int n = 0;
	if (!c->have_symtab)
		return 0;
	uint64_t nsyms = c->symtab.sh_size / sizeof(Elf64_Sym);
	for (uint64_t i = 1; i < nsyms; i++) {
		Elf64_Sym sym;
		memcpy(&sym, c->p + c->symtab.sh_offset + i * sizeof(sym), sizeof(sym));
		if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || !(sym.st_other & STO_CUDA_ENTRY))
			continue;
		const char *name = string_at(c->p, c->size, &c->strtab, sym.st_name);
		if (!name)
			return unpack_fail(why, "symbol %llu's name is outside the string table", (unsigned long long)i);
		if (fn)
			fn(name, strlen(name), arg);
		n++;
	}
	return n;
}

int elf_image_kernel_names(const struct cuda_image *img, struct unpacker *u, unsigned long long limit,
			   elf_name_fn fn, void *arg, char **why)
{
	const unsigned char *payload;
	size_t len;
	void *owned;
	*why = NULL;
	if (img->kind == CUDA_IMAGE_OTHER)
		return unpack_fail(why, "an LTO image: its kernels are not listed");
	if (elf_image_payload_with(img, u, limit, &payload, &len, &owned, why))
		return -1;
	int n = 0;
	if (img->kind == CUDA_IMAGE_PTX) {
		n = ptx_entries(payload, len, fn, arg);
	} else {
		struct cubin c;
		n = cubin_open(&c, payload, len, why) ? -1 : cubin_entries(&c, fn, arg, why);
	}
	free(owned);
	return n;
}
