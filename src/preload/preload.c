/* libnvshim-preload.so: interception (dlsym, dlvsym, the exported functions, library slots),
 * settings, the GPU, and messages. The NVRTC rules are in preload_nvrtc.c, the link diagnostics
 * in preload_link.c; preload.h describes the whole library. */
#include "preload/preload.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libiberty.h>

#include "base/hash.h"
#include "machine/devices.h"
#include "base/diag.h"

struct preload_lib preload_libs[PRELOAD_SLOTS];
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;

/* glibc's dlsym and dlvsym, found by nvshim_preload_resolve(). The assembly below reads them. */
typedef void *(*dlsym_fn)(void *, const char *);
typedef void *(*dlvsym_fn)(void *, const char *, const char *);
__attribute__((visibility("hidden"))) dlsym_fn nvshim_real_dlsym;
__attribute__((visibility("hidden"))) dlvsym_fn nvshim_real_dlvsym;

/* ---- glibc's dlsym, without calling dlsym --------------------------------------------------- */

/* A sanitizer runtime preloaded in front of nvshim (a sanitized build's tests) calls dlsym while
 * it initialises itself: what runs then must not be instrumented, nor call a function the
 * runtime intercepts (strcmp included). */
#define PL_EARLY __attribute__((no_sanitize("address", "undefined")))

PL_EARLY static int same(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

PL_EARLY static int starts(const char *s, const char *prefix)
{
	while (*prefix && *s == *prefix)
		s++, prefix++;
	return !*prefix;
}

/* The address of a function symbol `name` with a GLIBC_* version in one loaded object, the
 * default version preferred; NULL if it has none. Reads only memory: callable at any time, even
 * while a sanitizer runtime is being initialised. */
PL_EARLY static void *elf_find(const struct link_map *m, const char *name)
{
	ElfW(Addr) base = m->l_addr;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	const ElfW(Half) *versym = NULL;
	const char *verdef = NULL;
	const uint32_t *hash = NULL, *gnuhash = NULL;

	for (const ElfW(Dyn) *d = m->l_ld; d && d->d_tag != DT_NULL; d++) {
		ElfW(Addr) p = d->d_un.d_ptr;
		/* The loader relocates these in place on most targets, not on all. */
		if (p < base)
			p += base;
		switch (d->d_tag) {
		case DT_SYMTAB: symtab = (const void *)p; break;
		case DT_STRTAB: strtab = (const void *)p; break;
		case DT_VERSYM: versym = (const void *)p; break;
		case DT_VERDEF: verdef = (const void *)p; break;
		case DT_HASH: hash = (const void *)p; break;
		case DT_GNU_HASH: gnuhash = (const void *)p; break;
		default: break;
		}
	}
	if (!symtab || !strtab || !versym || !verdef || (!hash && !gnuhash))
		return NULL;
	size_t nsyms;
	if (hash) {
		nsyms = hash[1];
	} else {
		uint32_t nbuckets = gnuhash[0], symoffset = gnuhash[1], bloom = gnuhash[2];
		const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(gnuhash + 4) + bloom);
		const uint32_t *chain = buckets + nbuckets;
		uint32_t last = 0;
		for (uint32_t b = 0; b < nbuckets; b++)
			if (buckets[b] > last)
				last = buckets[b];
		if (last < symoffset) {
			nsyms = symoffset;
		} else {
			while (!(chain[last - symoffset] & 1))
				last++;
			nsyms = (size_t)last + 1;
		}
	}
	void *hidden = NULL;
	for (size_t i = 1; i < nsyms; i++) {
		const ElfW(Sym) *s = &symtab[i];
		if (s->st_shndx == SHN_UNDEF || (s->st_info & 0xf) != STT_FUNC || !same(strtab + s->st_name, name))
			continue;
		unsigned ndx = versym[i] & 0x7fff;
		const char *vname = NULL;
		for (const char *v = verdef; v;) {
			const ElfW(Verdef) *vd = (const void *)v;
			if (vd->vd_ndx == ndx) {
				const ElfW(Verdaux) *aux = (const void *)(v + vd->vd_aux);
				vname = strtab + aux->vda_name;
				break;
			}
			v = vd->vd_next ? v + vd->vd_next : NULL;
		}
		if (!vname || !starts(vname, "GLIBC_"))
			continue;
		void *addr = (void *)(base + s->st_value);
		if (!(versym[i] & 0x8000))
			return addr;
		hidden = addr;
	}
	return hidden;
}

/* Finds glibc's dlsym and dlvsym (in libc.so.6 since 2.34, in libdl.so.2 before). */
__attribute__((visibility("hidden"))) void nvshim_preload_resolve(void);
PL_EARLY void nvshim_preload_resolve(void)
{
	if (PL_SEEN(&nvshim_real_dlsym))
		return;
	void *s = NULL, *v = NULL;
	for (const struct link_map *m = _r_debug.r_map; m && !(s && v); m = m->l_next) {
		void *fs = elf_find(m, "dlsym"), *fv = elf_find(m, "dlvsym");
		if (fs && fv) {
			s = fs;
			v = fv;
		}
	}
	/* Threads that get here together store the same values; dlvsym is published by dlsym. */
	if (s && v) {
		PL_PUBLISH(&nvshim_real_dlvsym, (dlvsym_fn)v);
		PL_PUBLISH(&nvshim_real_dlsym, (dlsym_fn)s);
	}
}

/* glibc's dlsym and dlvsym once nvshim_preload_resolve() found them, else NULL. */
static dlsym_fn real_dlsym(void) { return __atomic_load_n(&nvshim_real_dlsym, __ATOMIC_ACQUIRE); }
static dlvsym_fn real_dlvsym(void) { return __atomic_load_n(&nvshim_real_dlvsym, __ATOMIC_ACQUIRE); }

/* ---- the hook table ----------------------------------------------------------------------- */

struct hook {
	const char *name;
	enum preload_kind kind;
	int wrapped;                  /* 0: only looked up */
	void *exported;
	void *slots[PRELOAD_SLOTS];
};

/* The library an exported function stands for, for the object that called it. */
static struct preload_lib *caller_lib(int fn, const void *ret);

#define PL_SLOT(i, name, impl, ret, params, args)                                                   \
	static ret name##_s##i(PL_UNPACK params) { return impl(&preload_libs[i], PL_##name, PL_UNPACK args); }
#define PL_DEFINE_HOOK(kind, name, impl, ret, fail, params, args)                                   \
	NVSHIM_EXPORT ret name(PL_UNPACK params);                                                     \
	ret name(PL_UNPACK params)                                                                    \
	{                                                                                             \
		struct preload_lib *L = caller_lib(PL_##name, __builtin_return_address(0));          \
		return L && PL_REAL(L, PL_##name, void *) ? impl(L, PL_##name, PL_UNPACK args) : (fail); \
	}                                                                                             \
	PL_SLOT(0, name, impl, ret, params, args) PL_SLOT(1, name, impl, ret, params, args)           \
	PL_SLOT(2, name, impl, ret, params, args) PL_SLOT(3, name, impl, ret, params, args)           \
	PL_SLOT(4, name, impl, ret, params, args) PL_SLOT(5, name, impl, ret, params, args)           \
	PL_SLOT(6, name, impl, ret, params, args) PL_SLOT(7, name, impl, ret, params, args)
#define PL_DEFINE_NOTHING(kind, name)
PRELOAD_HOOKS(PL_DEFINE_HOOK, PL_DEFINE_NOTHING)
_Static_assert(PRELOAD_SLOTS == 8, "PL_DEFINE_HOOK makes one wrapper per slot");

#define PL_TABLE_HOOK(kind, name, impl, ret, fail, params, args)                                    \
	{ #name, kind, 1, (void *)name,                                                               \
	  { (void *)name##_s0, (void *)name##_s1, (void *)name##_s2, (void *)name##_s3,                \
	    (void *)name##_s4, (void *)name##_s5, (void *)name##_s6, (void *)name##_s7 } },
#define PL_TABLE_REAL(kind, name) { #name, kind, 0, NULL, { NULL } },
static const struct hook hooks[PL_NFUNCTIONS] = { PRELOAD_HOOKS(PL_TABLE_HOOK, PL_TABLE_REAL) };

const char *preload_fn_name(int fn) { return fn >= 0 && fn < PL_NFUNCTIONS ? hooks[fn].name : ""; }

void *preload_wrapper(int fn, const struct preload_lib *L)
{
	if (fn < 0 || fn >= PL_NFUNCTIONS || !hooks[fn].wrapped || L < preload_libs ||
	    L >= preload_libs + PRELOAD_SLOTS)
		return NULL;
	return hooks[fn].slots[L - preload_libs];
}

/* The wrapped hook of this name, or -1. No allocation, no lock. */
PL_EARLY static int hook_find(const char *name)
{
	int kind;
	if (starts(name, "nvrtc"))
		kind = PRELOAD_NVRTC;
	else if (starts(name, "nvJitLink") || starts(name, "__nvJitLink"))
		kind = PRELOAD_NVJITLINK;
	else if (name[0] == 'c' && name[1] == 'u')
		kind = PRELOAD_DRIVER;
	else
		return -1;
	/* The table lists each kind's functions together. */
	static const int first[PRELOAD_NKINDS] = { PL_nvrtcCreateProgram, PL_cuLinkCreate, PL_nvJitLinkCreate };
	static const int end[PRELOAD_NKINDS] = { PL_cuLinkCreate, PL_nvJitLinkCreate, PL_NFUNCTIONS };
	for (int i = first[kind]; i < end[kind]; i++)
		if (hooks[i].wrapped && same(hooks[i].name, name))
			return i;
	return -1;
}

static const void *self_base;
static char self_path[PATH_MAX];
static pthread_once_t self_path_once = PTHREAD_ONCE_INIT;

/* This library's load address, NULL if the loader cannot tell. Threads that ask first each look
 * it up (the same answer): no lock, and dladdr takes none that a library constructor holds. */
static const void *own_base(void)
{
	const void *base = PL_SEEN(&self_base);
	if (base)
		return base;
	/* hook_find() relies on each kind's functions being listed together. */
	for (int i = 1; i < PL_NFUNCTIONS; i++)
		if (hooks[i].kind < hooks[i - 1].kind)
			BUG("PRELOAD_HOOKS lists %s apart from the other functions of its kind", hooks[i].name);
	Dl_info info;
	if (dladdr((void *)own_base, &info) && info.dli_fbase)
		base = PL_PUBLISH_ONCE(&self_base, info.dli_fbase);
	return base;
}

/* The path is written once: realpath() fills its buffer bit by bit, which no other thread may
 * read meanwhile. */
static void self_path_init(void)
{
	Dl_info info;
	if (!dladdr((void *)self_path_init, &info) || !info.dli_fname || !realpath(info.dli_fname, self_path))
		self_path[0] = '\0';
	PL_HG_BEFORE(&self_path_once);
}

const char *preload_self_path(void)
{
	PL_ONCE(&self_path_once, self_path_init);
	return self_path;
}

/* The slot of the library that holds `real`, set up on first sight; NULL if there is none (the
 * main program, nvshim itself, no slot left). */
static struct preload_lib *lib_for(void *real, enum preload_kind kind)
{
	Dl_info info;
	if (!dladdr(real, &info) || !info.dli_fbase || info.dli_fbase == own_base() || !info.dli_fname ||
	    !*info.dli_fname)
		return NULL;
	for (int i = 0; i < PRELOAD_SLOTS; i++) {
		struct preload_lib *L = &preload_libs[i];
		if (PL_SEEN(&L->used) && L->base == info.dli_fbase)
			return L->kind == kind ? L : NULL;
	}
	/* Everything that can take the loader's lock (dlopen, dlsym) runs before slots_lock is
	 * taken: a library constructor that looks a function up while another thread sets up a
	 * slot must not deadlock. */
	dlsym_fn look = real_dlsym();
	void *h = look ? dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD) : NULL;
	if (!h)
		return NULL;
	void *real_fns[PL_NFUNCTIONS] = { NULL };
	for (int f = 0; f < PL_NFUNCTIONS; f++)
		if (hooks[f].kind == kind)
			real_fns[f] = look(h, hooks[f].name);
	/* An interposer of a few functions (a profiler, a test) gets the rest from the library that
	 * comes after nvshim. */
	for (int f = 0; f < PL_NFUNCTIONS; f++)
		if (hooks[f].kind == kind && !real_fns[f])
			real_fns[f] = look(RTLD_NEXT, hooks[f].name);

	pthread_mutex_lock(&slots_lock);
	struct preload_lib *found = NULL;
	int i, fresh = 0;
	for (i = 0; i < PRELOAD_SLOTS; i++)
		if (preload_libs[i].used && preload_libs[i].base == info.dli_fbase)
			break;
	if (i < PRELOAD_SLOTS) {
		found = preload_libs[i].kind == kind ? &preload_libs[i] : NULL;
	} else {
		for (i = 0; i < PRELOAD_SLOTS && preload_libs[i].used; i++)
			;
		if (i < PRELOAD_SLOTS) {
			struct preload_lib *L = &preload_libs[i];
			L->kind = kind;
			L->handle = h;
			L->base = info.dli_fbase;
			snprintf(L->path, sizeof(L->path), "%s", info.dli_fname);
			pthread_mutex_init(&L->facts_lock, NULL);
			memcpy(L->real, real_fns, sizeof(real_fns));
			L->active = 1;
			PL_PUBLISH(&L->used, 1);
			found = L;
			fresh = 1;
		}
	}
	pthread_mutex_unlock(&slots_lock);
	if (!fresh) {
		/* Another thread set the slot up first, or there is none left. */
		dlclose(h);
	} else {
		preload_config();
		diag_debug("%s is library slot %d", found->path, i);
	}
	return found;
}

/* Stand-ins for libraries that got no slot: their functions pass through. Only `real` changes
 * (PL_PUBLISH_ONCE). */
static struct preload_lib passthrough[PRELOAD_NKINDS] = {
	[PRELOAD_NVRTC] = { .kind = PRELOAD_NVRTC },
	[PRELOAD_DRIVER] = { .kind = PRELOAD_DRIVER },
	[PRELOAD_NVJITLINK] = { .kind = PRELOAD_NVJITLINK },
};
/* The first slot of each kind a caller was bound to (PL_PUBLISH_ONCE). */
static struct preload_lib *defaults[PRELOAD_NKINDS];

/* Which library each function an object calls binds to, by the object's address range: a
 * program may link one NVRTC into one library and another NVRTC into another, each loaded
 * RTLD_LOCAL (their dependencies are then not in the global scope, and RTLD_NEXT from here
 * cannot see them), and another interposer may sit between nvshim and the library for some
 * functions. Entries are added under callers_lock and never removed; ncallers and fn[] are
 * published (PL_PUBLISH), and the hooks read them without the lock. */
struct caller {
	uintptr_t lo, hi;
	struct preload_lib *fn[PL_NFUNCTIONS];
};
#define MAX_CALLERS 32
static struct caller callers[MAX_CALLERS];
static int ncallers;
static pthread_mutex_t callers_lock = PTHREAD_MUTEX_INITIALIZER;

struct range_query {
	uintptr_t addr, lo, hi;
	int found;
};

static int find_range(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct range_query *q = arg;
	(void)size;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	if (q->addr >= lo && q->addr < hi) {
		q->lo = lo;
		q->hi = hi;
		q->found = 1;
		return 1;
	}
	return 0;
}

/* Looks a function up as the object at `ret` sees it: in its own scope (itself and its
 * dependencies), else, and when that finds the caller itself (an interposer that comes before
 * nvshim) or nvshim, after nvshim in the global scope. */
static void *lookup_for(const void *ret, const char *name, uintptr_t *lo, uintptr_t *hi)
{
	Dl_info info, where;
	struct link_map *map = NULL;
	void *real = NULL, *h = NULL;
	struct range_query q = { (uintptr_t)ret, 0, 0, 0 };
	const void *me = own_base();
	dlsym_fn look = real_dlsym();
	*lo = *hi = 0;
	if (!look)
		return NULL;
	if (ret && dladdr1(ret, &info, (void **)&map, RTLD_DL_LINKMAP) && info.dli_fbase != me) {
		dl_iterate_phdr(find_range, &q);
		if (q.found) {
			*lo = q.lo;
			*hi = q.hi;
		}
		/* The main program's scope is the global one, which starts with this library. */
		if (map && map != _r_debug.r_map && map->l_name && *map->l_name)
			h = dlopen(map->l_name, RTLD_LAZY | RTLD_NOLOAD);
		if (h) {
			real = look(h, name);
			dlclose(h);
		}
		if (real && dladdr(real, &where) && where.dli_fbase == info.dli_fbase)
			real = NULL;
	}
	if (!real || (dladdr(real, &where) && where.dli_fbase == me))
		real = look(RTLD_NEXT, name);
	return real;
}

static struct preload_lib *caller_lib(int fn, const void *ret)
{
	enum preload_kind kind = hooks[fn].kind;
	int n = PL_SEEN(&ncallers);
	for (int i = 0; i < n; i++) {
		if ((uintptr_t)ret < callers[i].lo || (uintptr_t)ret >= callers[i].hi)
			continue;
		struct preload_lib *L = PL_SEEN(&callers[i].fn[fn]);
		if (L)
			return L;
		break;
	}
	nvshim_preload_resolve();
	uintptr_t lo, hi;
	void *real = lookup_for(ret, hooks[fn].name, &lo, &hi);
	if (!real)
		return NULL;
	struct preload_lib *L = lib_for(real, kind);
	if (!L) {
		L = &passthrough[kind];
		PL_PUBLISH_ONCE(&L->real[fn], real);
		return L;
	}
	if (!PL_SEEN(&defaults[kind]))
		PL_PUBLISH_ONCE(&defaults[kind], L);
	if (hi > lo && PL_REAL(L, fn, void *) == real) {
		pthread_mutex_lock(&callers_lock);
		int m = ncallers, i;
		for (i = 0; i < m && callers[i].lo != lo; i++)
			;
		if (i == m && m < MAX_CALLERS) {
			callers[m].lo = lo;
			callers[m].hi = hi;
			PL_PUBLISH(&ncallers, m + 1);
		}
		if (i < MAX_CALLERS)
			PL_PUBLISH(&callers[i].fn[fn], L);
		pthread_mutex_unlock(&callers_lock);
	}
	return L;
}

void *preload_driver_fn(enum preload_fn fn)
{
	for (int i = 0; i < PRELOAD_SLOTS; i++) {
		struct preload_lib *L = &preload_libs[i];
		void *f = PL_SEEN(&L->used) && L->kind == PRELOAD_DRIVER ? PL_REAL(L, fn, void *) : NULL;
		if (f)
			return f;
	}
	struct preload_lib *L = PL_SEEN(&defaults[PRELOAD_DRIVER]);
	void *f = L ? PL_REAL(L, fn, void *) : NULL;
	if (f)
		return f;
	/* The driver is there only if the program loaded it. */
	nvshim_preload_resolve();
	dlsym_fn look = real_dlsym();
	void *h = look ? dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD) : NULL;
	if (!h)
		return NULL;
	f = look(h, hooks[fn].name);
	dlclose(h);
	return f;
}

/* ---- dlsym and dlvsym ----------------------------------------------------------------------- */

struct pl_answer {
	void *value;
	uintptr_t forward; /* nonzero: let glibc answer the caller */
};

__attribute__((visibility("hidden"))) struct pl_answer nvshim_dlsym_decide(void *handle, const char *name,
									    const char *version);
/* The names nvshim answers for go on to wrap(); every other lookup is forwarded from here, which
 * a sanitizer runtime may reach while it initialises itself. */
static struct pl_answer wrap(void *handle, const char *name, const char *version, int fn);

PL_EARLY struct pl_answer nvshim_dlsym_decide(void *handle, const char *name, const char *version)
{
	struct pl_answer forward = { NULL, 1 };
	nvshim_preload_resolve();
	if (!name || !real_dlsym())
		return forward;
	int fn = hook_find(name);
	if (fn < 0)
		return forward;
	return wrap(handle, name, version, fn);
}

static struct pl_answer wrap(void *handle, const char *name, const char *version, int fn)
{
	struct pl_answer forward = { NULL, 1 };
	void *real = NULL;
	dlsym_fn look = real_dlsym();
	dlvsym_fn vlook = real_dlvsym();
	if (handle != RTLD_DEFAULT)
		real = version ? vlook(handle, name, version) : look(handle, name);
	Dl_info info;
	if (handle == RTLD_DEFAULT || (real && dladdr(real, &info) && info.dli_fbase == own_base())) {
		/* The lookup found (or would find) this library's own definition: what comes after it
		 * is what the caller would have had without nvshim; nothing means not loaded. */
		real = version ? vlook(RTLD_NEXT, name, version) : look(RTLD_NEXT, name);
		if (!real)
			return (struct pl_answer){ NULL, 0 };
	}
	if (!real)
		return forward;
	struct preload_lib *L = lib_for(real, hooks[fn].kind);
	if (!L)
		return handle == RTLD_DEFAULT ? (struct pl_answer){ real, 0 } : forward;
	return (struct pl_answer){ hooks[fn].slots[L - preload_libs], 0 };
}

#if defined(__x86_64__)
#if defined(__CET__) && (__CET__ & 1)
#define PL_ENDBR "	endbr64\n" /* built with -fcf-protection: mark the entries */
#else
#define PL_ENDBR ""
#endif
/* dlsym and dlvsym in assembly, so that a forwarded lookup is a tail jump into glibc with the
 * caller's return address still on the stack: glibc resolves RTLD_NEXT and RTLD_DEFAULT relative
 * to the object that called. RTLD_NEXT ((void *)-1) is forwarded without looking at the name. */
__asm__(".text\n"
	".globl dlsym\n"
	".type dlsym, @function\n"
	"dlsym:\n"
	"	.cfi_startproc\n"
	PL_ENDBR
	"	cmpq $-1, %rdi\n"
	"	je 1f\n"
	"	pushq %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rsi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	subq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	xorl %edx, %edx\n"
	"	call nvshim_dlsym_decide\n"
	"	movq %rdx, %r11\n"
	"	addq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rsi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	testq %r11, %r11\n"
	"	jnz 1f\n"
	"	ret\n"
	"1:	movq nvshim_real_dlsym(%rip), %rax\n"
	"	testq %rax, %rax\n"
	"	jz 2f\n"
	"	jmp *%rax\n"
	"2:	pushq %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rsi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	subq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call nvshim_preload_resolve\n"
	"	addq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rsi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	movq nvshim_real_dlsym(%rip), %rax\n"
	"	testq %rax, %rax\n"
	"	jz 3f\n"
	"	jmp *%rax\n"
	"3:	xorl %eax, %eax\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size dlsym, .-dlsym\n"
	"\n"
	".globl dlvsym\n"
	".type dlvsym, @function\n"
	"dlvsym:\n"
	"	.cfi_startproc\n"
	PL_ENDBR
	"	cmpq $-1, %rdi\n"
	"	je 1f\n"
	"	pushq %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rsi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rdx\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call nvshim_dlsym_decide\n"
	"	movq %rdx, %r11\n"
	"	popq %rdx\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rsi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	testq %r11, %r11\n"
	"	jnz 1f\n"
	"	ret\n"
	"1:	movq nvshim_real_dlvsym(%rip), %rax\n"
	"	testq %rax, %rax\n"
	"	jz 2f\n"
	"	jmp *%rax\n"
	"2:	pushq %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rsi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rdx\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call nvshim_preload_resolve\n"
	"	popq %rdx\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rsi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	movq nvshim_real_dlvsym(%rip), %rax\n"
	"	testq %rax, %rax\n"
	"	jz 3f\n"
	"	jmp *%rax\n"
	"3:	xorl %eax, %eax\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size dlvsym, .-dlvsym\n");
#else
/* Elsewhere the forward is an ordinary call: lookups relative to the caller (RTLD_NEXT) are then
 * made relative to this library, which comes first, so they find the same definitions except
 * those of objects loaded before it. */
NVSHIM_EXPORT void *dlsym(void *handle, const char *name)
{
	struct pl_answer a = nvshim_dlsym_decide(handle, name, NULL);
	if (!a.forward)
		return a.value;
	nvshim_preload_resolve();
	dlsym_fn look = real_dlsym();
	return look ? look(handle, name) : NULL;
}

NVSHIM_EXPORT void *dlvsym(void *handle, const char *name, const char *version)
{
	struct pl_answer a = nvshim_dlsym_decide(handle, name, version);
	if (!a.forward)
		return a.value;
	nvshim_preload_resolve();
	dlvsym_fn look = real_dlvsym();
	return look ? look(handle, name, version) : NULL;
}
#endif

/* ---- settings, the GPU, messages ---------------------------------------------------------- */


static struct config cfg;
static pthread_once_t cfg_once = PTHREAD_ONCE_INIT;

static void load_config(void)
{
	struct config_paths paths;
	struct argv store = ARGV_INIT;
	config_init(&cfg, config_getenv);
	/* <prefix>/libexec/nvshim/libnvshim-preload.so: config_default_paths takes the parent of the
	 * directory it is given as the prefix. */
	const char *self = preload_self_path();
	char *dir = NULL;
	const char *slash = strrchr(self, '/');
	if (slash && slash != self) {
		dir = xstrndup(self, (size_t)(slash - self));
		char *up = strrchr(dir, '/');
		if (up && up != dir)
			*up = '\0';
	}
	config_default_paths(&paths, &store, dir, config_getenv);
	config_load(&cfg, &paths, config_getenv, NULL);
	config_report(&cfg);
	argv_release(&store);
	free(dir);
	PL_HG_BEFORE(&cfg_once);
}

const struct config *preload_config(void)
{
	PL_ONCE(&cfg_once, load_config);
	return &cfg;
}

static struct devices found;
static pthread_once_t devices_once = PTHREAD_ONCE_INIT;

static void load_devices(void)
{
	const struct config *c = preload_config();
	devices_init(&found);
	char *helper = NULL;
	const char *self = preload_self_path();
	const char *slash = strrchr(self, '/');
	if (slash)
		helper = xasprintf("%.*s/nvshim-devices", (int)(slash - self), self);
	devices_load(&found, config_getenv, c->cache_dir, helper);
	free(helper);
	PL_HG_BEFORE(&devices_once);
}

typedef int (*count_fn)(int *);
typedef int (*ctx_device_fn)(int *);
typedef int (*attribute_fn)(int *, int, int);

/* The device of the current context (or device 0), if the program has initialised the driver:
 * nvshim never initialises it itself. */
static unsigned driver_gpu(void)
{
	count_fn count = (count_fn)preload_driver_fn(PL_cuDeviceGetCount);
	ctx_device_fn ctx = (ctx_device_fn)preload_driver_fn(PL_cuCtxGetDevice);
	attribute_fn attr = (attribute_fn)preload_driver_fn(PL_cuDeviceGetAttribute);
	int n = 0, dev = 0, major = 0, minor = 0;
	if (!count || !attr || count(&n) != PL_CUDA_SUCCESS || n < 1)
		return 0;
	if (!ctx || ctx(&dev) != PL_CUDA_SUCCESS)
		dev = 0;
	/* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR and _MINOR. */
	if (attr(&major, 75, dev) != PL_CUDA_SUCCESS || attr(&minor, 76, dev) != PL_CUDA_SUCCESS)
		return 0;
	return (unsigned)(major * 10 + minor);
}

static unsigned lowest(const struct devices *d)
{
	unsigned cc = 0;
	for (size_t i = 0; i < d->n; i++)
		if (!cc || d->v[i].cc < cc)
			cc = d->v[i].cc;
	return cc;
}

unsigned preload_gpu(const char **source)
{
	const struct config *c = preload_config();
	*source = "none";
	if (!getenv("NVSHIM_DEVICES")) {
		unsigned cc = driver_gpu();
		if (cc) {
			*source = "the CUDA driver";
			return cc;
		}
	}
	PL_ONCE(&devices_once, load_devices);
	if (found.n) {
		*source = getenv("NVSHIM_DEVICES") ? "NVSHIM_DEVICES" : "nvshim-devices";
		return lowest(&found);
	}
	if (c->fallback_archs && *c->fallback_archs) {
		struct devices fb;
		const char *why;
		devices_init(&fb);
		unsigned cc = devices_parse(&fb, c->fallback_archs, &why) ? 0 : lowest(&fb);
		devices_release(&fb);
		if (cc) {
			*source = "fallback_archs";
			return cc;
		}
	}
	return 0;
}

/* Notes already said, by hash: each is said once at verbosity normal. */
static pthread_mutex_t said_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t said[256];
static size_t nsaid;

void preload_note(const char *text, const char *label)
{
	preload_config();
	if (diag_verbosity() < VERBOSITY_VERBOSE) {
		size_t skip = label && !strncmp(text, label, strlen(label)) ? strlen(label) : 0;
		uint64_t h = hash_str(HASH_INIT, text + skip);
		int seen = 0;
		pthread_mutex_lock(&said_lock);
		for (size_t i = 0; i < nsaid && !seen; i++)
			seen = said[i] == h;
		if (!seen && nsaid < sizeof(said) / sizeof(said[0]))
			said[nsaid++] = h;
		pthread_mutex_unlock(&said_lock);
		if (seen)
			return;
	}
	diag_rewrite("%s", text);
}

void preload_raw(const char *text)
{
	size_t len = strlen(text);
	while (len) {
		ssize_t w = write(STDERR_FILENO, text, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		text += w;
		len -= (size_t)w;
	}
}

/* ---- the explanation for cuGetErrorString ----------------------------------------------- */

struct explanation {
	int code;
	int pending;
	char *text;    /* the explanation */
	char *message; /* the driver's message with it, handed out */
};

static pthread_key_t explain_key;
static pthread_once_t explain_once = PTHREAD_ONCE_INIT;

static void explanation_free(void *p)
{
	struct explanation *e = p;
	if (e) {
		free(e->text);
		free(e->message);
		free(e);
	}
}

static void explain_init(void)
{
	pthread_key_create(&explain_key, explanation_free);
	PL_HG_BEFORE(&explain_once);
}

static struct explanation *explanation(int create)
{
	PL_ONCE(&explain_once, explain_init);
	struct explanation *e = pthread_getspecific(explain_key);
	if (!e && create) {
		e = XCNEW(struct explanation);
		pthread_setspecific(explain_key, e);
	}
	return e;
}

void preload_explain_set(int code, const char *text)
{
	struct explanation *e = explanation(1);
	free(e->text);
	e->text = xstrdup(text);
	e->code = code;
	e->pending = 1;
}

void preload_explain_clear(void)
{
	struct explanation *e = explanation(0);
	if (e)
		e->pending = 0;
}

const char *preload_explain_get(int code)
{
	struct explanation *e = explanation(0);
	return e && e->pending && e->code == code ? e->text : NULL;
}

/* Keeps a message alive for the thread (cuGetErrorString hands out a pointer). */
__attribute__((visibility("hidden"))) const char *preload_explain_message(const char *driver_text,
									   const char *text);
const char *preload_explain_message(const char *driver_text, const char *text)
{
	struct explanation *e = explanation(1);
	free(e->message);
	e->message = xasprintf("%s (nvshim: %s)", driver_text ? driver_text : "", text);
	return e->message;
}
