/* libnvshim-preload.so: "no kernel image is available for execution on the device", explained.
 *
 * The driver answers CUDA_ERROR_NO_BINARY_FOR_GPU (209) when a module has neither machine code
 * for the GPU nor PTX it can compile for it: at the load (CUDA_MODULE_LOADING=EAGER), or, with
 * lazy loading (the default since CUDA 12.2), at the first lookup or launch of a kernel, far
 * from the library at fault. nvshim remembers where each module and library came from when it
 * is loaded (a file name, or dladdr on the image: the library or program whose .nv_fatbin the
 * CUDA runtime registered; loads are rare, so this costs nothing that shows), and when a load,
 * lookup or launch fails with 209 (or 222: PTX too new for the driver) it reads that image's
 * targets and says once: where the code came from, what it holds, the GPU's target and the
 * -gencode to add (rule noimage.explain). The CUDA runtime, shared or static, reaches these
 * functions through cuGetProcAddress, which hands out nvshim's wrappers (preload_link.c).
 * A launch that succeeds costs one comparison.
 *
 * Stubs (rule noimage.stub): when a kernel is looked up, the machine code the driver runs for the
 * GPU is read once per module (file-backed images only) and a kernel whose body was compiled
 * out for that target is said once: one that only exits or only traps there
 * (elf_kernel_is_stub) and has a body on another target of the same module; one trivial on
 * every target is by design (cuBLAS's no-op kernels) and is not said.
 *
 * The program's own results are always returned unchanged.
 */
#include "preload/preload.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <demangle.h>
#include <libiberty.h>

#include "base/hash.h"
#include "base/diag.h"
#include "objects/elf.h"
#include "objects/images.h"

typedef int (*module_load_fn)(void **, const char *);
typedef int (*fatbin_load_fn)(void **, const void *);
typedef int (*library_file_fn)(void **, const char *, int *, void **, unsigned, int *, void **, unsigned);
typedef int (*get_function_fn)(void **, void *, const char *);
typedef int (*kernel_function_fn)(void **, void *);
typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
			 void **, void **);
typedef int (*launch_ex_fn)(const void *, void *, void **, void **);
typedef int (*version_fn)(int *);
typedef int (*parent_fn)(void **, void *);
typedef int (*name_fn)(int, const char **);
typedef int (*attribute_fn)(int *, int, int);
typedef int (*unload_fn)(void *);

#define FATBIN_WRAPPER_MAGIC 0x466243b1u
#define READ_LIMIT (1ULL << 31)

/* One loaded module or library. */
struct loaded {
	struct loaded *next;
	const void *handle;
	int library;
	const unsigned char *image; /* inside a loaded file, else NULL (nvshim does not keep copies) */
	size_t avail;               /* bytes readable from image (to the end of its segment) */
	char *path;                 /* the file it came from, NULL if memory nvshim cannot name */
	int explained;
	int stubs_read;
	struct argv stubs;          /* its stub kernels on the GPU */
	unsigned stubs_gpu;
};

/* Loads by handle: a chained hash table, so that a process with thousands of modules (one per
 * translation unit of each library the runtime registers) finds one at once. */
#define LOADED_BUCKETS 4096
static pthread_mutex_t loaded_lock = PTHREAD_MUTEX_INITIALIZER;
static struct loaded *loads[LOADED_BUCKETS];

static size_t bucket(const void *handle) { return ((uintptr_t)handle >> 4) % LOADED_BUCKETS; }

static int enabled(void)
{
	const struct config *c = preload_config();
	return c->explain_no_image || c->explain_stub_kernels;
}

struct segment_query {
	uintptr_t addr, end;
	int found;
};

static int find_segment(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct segment_query *q = arg;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		/* Only the bytes the file backs (p_filesz) are sure to be readable. */
		if (ph->p_type == PT_LOAD && q->addr >= lo && q->addr < lo + ph->p_filesz) {
			q->end = lo + ph->p_filesz;
			q->found = 1;
			return 1;
		}
	}
	return 0;
}

/* The loaded file that holds addr, and how many bytes are readable from it; NULL if none. */
static char *file_of(const void *addr, size_t *avail)
{
	Dl_info info;
	struct segment_query q = { (uintptr_t)addr, 0, 0 };
	*avail = 0;
	if (!addr || !dladdr(addr, &info) || !info.dli_fbase)
		return NULL;
	dl_iterate_phdr(find_segment, &q);
	if (!q.found)
		return NULL;
	*avail = q.end - (uintptr_t)addr;
	if (info.dli_fname && *info.dli_fname && strchr(info.dli_fname, '/'))
		return xstrdup(info.dli_fname);
	/* The main program: the loader names it "" (or by argv[0]). */
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return info.dli_fname && *info.dli_fname ? xstrdup(info.dli_fname) : NULL;
	exe[n] = '\0';
	return xstrdup(exe);
}

/* A fatbin wrapper (what nvcc registers with the runtime) points at the fatbin itself. */
static const unsigned char *unwrap(const void *image)
{
	uint32_t magic;
	const unsigned char *p = image;
	memcpy(&magic, p, 4);
	if (magic == FATBIN_WRAPPER_MAGIC) {
		const void *data;
		memcpy(&data, p + 8, sizeof(data));
		return data;
	}
	return p;
}

void preload_image_loaded(struct preload_lib *L, const void *handle, int library, const void *image,
			  const char *path)
{
	if (!L->active || !handle || !enabled())
		return;
	struct loaded *d = XCNEW(struct loaded);
	d->handle = handle;
	d->library = library;
	argv_init(&d->stubs);
	if (path) {
		d->path = xstrdup(path);
	} else if (image) {
		size_t avail;
		char *file = file_of(image, &avail);
		if (file && avail >= 16) {
			const unsigned char *real = unwrap(image);
			if (real != image) {
				free(file);
				file = file_of(real, &avail);
			}
			d->image = file ? real : NULL;
			d->avail = avail;
		}
		d->path = file;
	}
	if (!d->path) {
		/* Memory nvshim cannot name (a JIT's output): nothing to say later that needs a record. */
		argv_release(&d->stubs);
		free(d);
		return;
	}
	pthread_mutex_lock(&loaded_lock);
	/* A handle the driver hands out again belongs to its newest load. */
	struct loaded **b = &loads[bucket(handle)];
	d->next = *b;
	*b = d;
	pthread_mutex_unlock(&loaded_lock);
}

/* An unloaded module or library: its record goes (the driver may reuse the handle). */
static void forget(const void *handle)
{
	pthread_mutex_lock(&loaded_lock);
	struct loaded **pp = &loads[bucket(handle)], *d = NULL;
	while (*pp && (*pp)->handle != handle)
		pp = &(*pp)->next;
	if (*pp) {
		d = *pp;
		*pp = d->next;
	}
	pthread_mutex_unlock(&loaded_lock);
	if (d) {
		argv_release(&d->stubs);
		free(d->path);
		free(d);
	}
}

/* The record of a handle, or NULL; it lives until the handle is unloaded. */
static struct loaded *find_loaded(const void *handle)
{
	pthread_mutex_lock(&loaded_lock);
	struct loaded *d = loads[bucket(handle)];
	while (d && d->handle != handle)
		d = d->next;
	pthread_mutex_unlock(&loaded_lock);
	return d;
}

static int add_image(const struct cuda_image *img, void *arg)
{
	image_list_add(arg, img, 0);
	return 0;
}

/* The images of a load: from its memory (a fatbin, a cubin) or its file. Returns 0 or -1. */
static int read_images(const unsigned char *image, size_t avail, const char *path, struct image_list *l)
{
	char *why = NULL;
	int rc = -1;
	if (image) {
		size_t size = elf_fatbin_size(image, avail);
		rc = elf_cuda_images(image, size ? size : avail, add_image, l, NULL, &why);
	} else if (path) {
		struct elf_map m;
		if (!elf_map_file(path, &m, &why)) {
			rc = elf_cuda_images(m.data, m.size, add_image, l, NULL, &why);
			elf_unmap(&m);
		}
	}
	if (rc)
		diag_debug("cannot read the images of %s: %s", path ? path : "an image", why ? why : "");
	free(why);
	return rc;
}

/* The GPU of the current context, else the one nvshim would compile for. */
static unsigned gpu_now(struct preload_lib *L, const char **source)
{
	typedef int (*ctx_fn)(int *);
	ctx_fn ctx = PL_REAL(L, PL_cuCtxGetDevice, ctx_fn);
	attribute_fn attr = PL_REAL(L, PL_cuDeviceGetAttribute, attribute_fn);
	int dev = 0, major = 0, minor = 0;
	if (ctx && attr && ctx(&dev) == PL_CUDA_SUCCESS && attr(&major, 75, dev) == PL_CUDA_SUCCESS &&
	    attr(&minor, 76, dev) == PL_CUDA_SUCCESS) {
		*source = "the CUDA driver";
		return (unsigned)(major * 10 + minor);
	}
	return preload_gpu(source);
}

static unsigned driver_cuda(struct preload_lib *L)
{
	version_fn v = PL_REAL(L, PL_cuDriverGetVersion, version_fn);
	int version = 0;
	return v && v(&version) == PL_CUDA_SUCCESS && version > 0 ? (unsigned)version : 0;
}

/* Says why code from `where` does not run, once per load (d may be NULL: a failed load). */
static void explain(struct preload_lib *L, const char *call, int code, struct loaded *d, const unsigned char *image,
		    size_t avail, const char *path, const char *kernel)
{
	const struct config *c = preload_config();
	if (!c->explain_no_image)
		return;
	pthread_mutex_lock(&loaded_lock);
	int said;
	if (d) {
		said = d->explained;
		d->explained = 1;
	} else {
		/* No record: once per call, file and kernel. */
		static uint64_t seen[64];
		static size_t nseen;
		uint64_t h = hash_str(hash_str(hash_str(HASH_INIT, call), path), kernel);
		said = 0;
		for (size_t i = 0; i < nseen && !said; i++)
			said = seen[i] == h;
		if (!said && nseen < sizeof(seen) / sizeof(seen[0]))
			seen[nseen++] = h;
	}
	pthread_mutex_unlock(&loaded_lock);
	if (said)
		return;
	name_fn getname = PL_REAL(L, PL_cuGetErrorName, name_fn);
	const char *name = NULL;
	if (!getname || getname(code, &name) != PL_CUDA_SUCCESS || !name)
		name = code == PL_CUDA_ERROR_NO_BINARY_FOR_GPU ? "CUDA_ERROR_NO_BINARY_FOR_GPU"
							       : "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
	const char *source;
	unsigned gpu = gpu_now(L, &source), cuda = driver_cuda(L);
	struct image_list l;
	image_list_init(&l);
	int known = !read_images(image, avail, path, &l);
	char *targets = known ? images_targets_text(&l) : xstrdup("targets nvshim cannot read");
	char *fix = images_fix_text(gpu);
	char *what = kernel ? cplus_demangle(kernel, DMGL_PARAMS | DMGL_ANSI) : NULL;
	char *subject = kernel ? xasprintf("kernel '%s' of %s", what ? what : kernel,
					   path ? path : "an image loaded from memory")
			       : xstrdup(path ? path : "an image loaded from memory");
	char *text;
	struct image_verdict v;
	if (known && gpu && images_verdict(&l, gpu, cuda, &v) == 0 && !v.none && v.ptx_too_new)
		text = xasprintf("%s has no machine code for this GPU (sm_%u), and its PTX (ISA %u.%u) needs a CUDA "
				 "%u.%u driver, newer than this one (CUDA %u.%u); it holds %s: update the driver, or "
				 "rebuild it with %s",
				 subject, gpu, v.newest_ptx.ptx_major, v.newest_ptx.ptx_minor, v.need_cuda / 1000,
				 v.need_cuda % 1000 / 10, cuda / 1000, cuda % 1000 / 10, targets, fix);
	else if (gpu)
		text = xasprintf("%s has no kernel image for this GPU (sm_%u): it holds %s; rebuild it with %s", subject,
				 gpu, targets, fix);
	else
		text = xasprintf("%s has no kernel image for this GPU: it holds %s", subject, targets);
	error("%s failed with %s (%d): %s [noimage.explain]", call, name, code, text);
	if (c->link_error_string)
		preload_explain_set(code, text);
	image_list_release(&l);
	free(text);
	free(subject);
	free(what);
	free(fix);
	free(targets);
}

static int image_failure(int code)
{
	return code == PL_CUDA_ERROR_NO_BINARY_FOR_GPU || code == PL_CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
}

/* The size of a fatbin or cubin in memory that no file backs, from its own header (the driver
 * has just read the same header); 0 when it is neither. */
static size_t memory_image_size(const unsigned char *p)
{
	uint32_t magic;
	memcpy(&magic, p, 4);
	if (magic == 0xBA55ED50u) {
		uint16_t hsize;
		uint64_t fsize;
		memcpy(&hsize, p + 6, 2);
		memcpy(&fsize, p + 8, 8);
		return hsize >= 16 && fsize < READ_LIMIT ? (size_t)(hsize + fsize) : 0;
	}
	if (!memcmp(p, "\177ELF", 4) && p[4] == 2) {
		uint64_t shoff;
		uint16_t shentsize, shnum;
		memcpy(&shoff, p + 0x28, 8);
		memcpy(&shentsize, p + 0x3a, 2);
		memcpy(&shnum, p + 0x3c, 2);
		if (shentsize == 64 && shnum && shoff < READ_LIMIT)
			return (size_t)(shoff + (uint64_t)shnum * 64);
	}
	/* PTX text (NVRTC's output): the driver reads it up to its NUL */
	if (p[0] == '/' || p[0] == '.' || p[0] == ' ' || p[0] == '\t' || p[0] == '\n' || p[0] == '\r')
		return strnlen((const char *)p, READ_LIMIT);
	return 0;
}

int preload_image_load_failed(struct preload_lib *L, const char *call, int code, const void *image,
			      const char *path)
{
	if (!L->active || !image_failure(code) || !preload_config()->explain_no_image)
		return 0;
	size_t avail = 0;
	char *file = path ? xstrdup(path) : image ? file_of(image, &avail) : NULL;
	const unsigned char *real = image && !path ? unwrap(image) : NULL;
	if (real && file && real != image) {
		free(file);
		file = file_of(real, &avail);
	}
	if (real && !file)
		avail = memory_image_size(real); /* the caller's memory, valid during its call */
	explain(L, call, code, NULL, path ? NULL : real, avail, file, NULL);
	free(file);
	return 1;
}

/* A lookup or launch failed: the load its code came from. */
static void use_failed(struct preload_lib *L, const char *call, int code, struct loaded *d, const char *kernel)
{
	if (!image_failure(code))
		return;
	if (d) {
		/* The library the image is in may have been unloaded since. */
		size_t avail = 0;
		char *still = d->image ? file_of(d->image, &avail) : NULL;
		explain(L, call, code, d, still ? d->image : NULL, still ? d->avail : 0, d->path, kernel);
		free(still);
		return;
	}
	explain(L, call, code, NULL, NULL, 0, NULL, kernel);
}

/* ---- stubs ---- */

struct stub_scan {
	unsigned gpu;
	const unsigned char *best;
	size_t best_len;
	struct cuda_image img;
	int have, exact;
};

static int pick_sass(const struct cuda_image *img, void *arg)
{
	struct stub_scan *s = arg;
	if (img->kind != CUDA_IMAGE_SASS || !images_sass_runs(img->sm, img->variant, s->gpu))
		return 0;
	int exact = img->sm == s->gpu;
	if (!s->have || (exact && !s->exact) || (exact == s->exact && img->sm > s->img.sm)) {
		s->img = *img;
		s->have = 1;
		s->exact = exact;
	}
	return 0;
}

static void collect_stub(const struct cuda_kernel *k, void *arg)
{
	if (k->stub == 1)
		argv_push(arg, k->name);
}

/* The other machine-code images of a load: where a stub's evidence is looked for. */
struct other_images {
	const unsigned char *skip;
	struct cuda_image *v;
	size_t n, alloc;
};

static int other_sass(const struct cuda_image *img, void *arg)
{
	struct other_images *o = arg;
	if (img->kind != CUDA_IMAGE_SASS || img->data == o->skip)
		return 0;
	if (o->n == o->alloc)
		o->v = XRESIZEVEC(struct cuda_image, o->v, o->alloc = o->alloc ? 2 * o->alloc : 8);
	o->v[o->n++] = *img;
	return 0;
}

/* Keeps the stubs that have evidence: a body on another target of the same load (elf.h). A
 * kernel that only exits or only traps on every target (cuBLAS's no-op kernels) is by design. */
static void keep_evidenced(const unsigned char *image, size_t size, const struct cuda_image *chosen,
			   struct argv *stubs)
{
	struct other_images o = { chosen->data, NULL, 0, 0 };
	char *why = NULL;
	unsigned char *real = XCNEWVEC(unsigned char, stubs->n ? stubs->n : 1);
	if (!elf_cuda_images(image, size, other_sass, &o, NULL, &why)) {
		for (size_t i = 0; i < o.n; i++) {
			const unsigned char *code;
			size_t len;
			void *owned;
			char *w = NULL;
			if (elf_image_payload(&o.v[i], READ_LIMIT, &code, &len, &owned, &w)) {
				free(w);
				continue;
			}
			for (size_t k = 0; k < stubs->n; k++)
				if (!real[k] && elf_kernel_is_stub(code, len, stubs->v[k]) == 0)
					real[k] = 1;
			free(owned);
		}
	}
	free(why);
	struct argv kept = ARGV_INIT;
	for (size_t k = 0; k < stubs->n; k++)
		if (real[k])
			argv_push(&kept, stubs->v[k]);
	argv_release(stubs);
	*stubs = kept;
	free(real);
	free(o.v);
}

/* Reads the stubs of a file-backed load for the GPU, once. */
static void read_stubs(struct preload_lib *L, struct loaded *d)
{
	pthread_mutex_lock(&loaded_lock);
	int done = d->stubs_read;
	d->stubs_read = 1;
	pthread_mutex_unlock(&loaded_lock);
	size_t avail = 0;
	char *still = done || !d->image ? NULL : file_of(d->image, &avail);
	if (!still)
		return;
	free(still);
	const char *source;
	struct stub_scan s;
	memset(&s, 0, sizeof(s));
	s.gpu = gpu_now(L, &source);
	char *why = NULL;
	size_t size = elf_fatbin_size(d->image, d->avail);
	struct argv stubs = ARGV_INIT;
	if (s.gpu && !elf_cuda_images(d->image, size ? size : d->avail, pick_sass, &s, NULL, &why) && s.have) {
		const unsigned char *code;
		size_t len;
		void *owned;
		if (!elf_image_payload(&s.img, READ_LIMIT, &code, &len, &owned, &why)) {
			if (elf_cubin_kernels(code, len, collect_stub, &stubs, &why))
				diag_debug("stubs of %s: %s", d->path, why);
			free(owned);
			if (stubs.n)
				keep_evidenced(d->image, size ? size : d->avail, &s.img, &stubs);
		}
	}
	free(why);
	pthread_mutex_lock(&loaded_lock);
	argv_copy(&d->stubs, &stubs);
	d->stubs_gpu = s.gpu;
	pthread_mutex_unlock(&loaded_lock);
	argv_release(&stubs);
}

static void check_stub(struct preload_lib *L, struct loaded *d, const char *kernel)
{
	if (!d || !kernel || !d->image || !preload_config()->explain_stub_kernels)
		return;
	read_stubs(L, d);
	int stub = 0;
	unsigned gpu;
	pthread_mutex_lock(&loaded_lock);
	for (size_t i = 0; i < d->stubs.n && !stub; i++)
		stub = !strcmp(d->stubs.v[i], kernel);
	gpu = d->stubs_gpu;
	pthread_mutex_unlock(&loaded_lock);
	if (!stub)
		return;
	char *what = cplus_demangle(kernel, DMGL_PARAMS | DMGL_ANSI);
	char *text = xasprintf("kernel '%s' of %s is a stub on sm_%u: its body was compiled out for this "
			       "target (an #if __CUDA_ARCH__ guard), so it does nothing or only traps; build "
			       "it for the target its code needs (an sm_%ua form for arch-specific "
			       "instructions) [noimage.stub]",
			       what ? what : kernel, d->path ? d->path : "an image", gpu, gpu);
	preload_note(text, NULL);
	free(text);
	free(what);
}

/* ---- the hooks ---- */

int preload_cuModuleUnload(struct preload_lib *L, int fn, void *handle)
{
	int r = PL_REAL(L, fn, unload_fn)(handle);
	if (r == PL_CUDA_SUCCESS && L->active)
		forget(handle);
	return r;
}

int preload_cuLibraryUnload(struct preload_lib *L, int fn, void *handle)
{
	int r = PL_REAL(L, fn, unload_fn)(handle);
	if (r == PL_CUDA_SUCCESS && L->active)
		forget(handle);
	return r;
}

int preload_cuModuleLoad(struct preload_lib *L, int fn, void **module, const char *path)
{
	int r = PL_REAL(L, fn, module_load_fn)(module, path);
	if (r == PL_CUDA_SUCCESS && module)
		preload_image_loaded(L, *module, 0, NULL, path);
	else if (r != PL_CUDA_SUCCESS)
		preload_image_load_failed(L, "cuModuleLoad", r, NULL, path);
	return r;
}

int preload_cuModuleLoadFatBinary(struct preload_lib *L, int fn, void **module, const void *image)
{
	int r = PL_REAL(L, fn, fatbin_load_fn)(module, image);
	if (r == PL_CUDA_SUCCESS && module)
		preload_image_loaded(L, *module, 0, image, NULL);
	else if (r != PL_CUDA_SUCCESS)
		preload_image_load_failed(L, "cuModuleLoadFatBinary", r, image, NULL);
	return r;
}

int preload_cuLibraryLoadFromFile(struct preload_lib *L, int fn, void **library, const char *path, int *jit_options,
				  void **jit_values, unsigned njit, int *lib_options, void **lib_values, unsigned nlib)
{
	int r = PL_REAL(L, fn, library_file_fn)(library, path, jit_options, jit_values, njit, lib_options, lib_values,
						nlib);
	if (r == PL_CUDA_SUCCESS && library)
		preload_image_loaded(L, *library, 1, NULL, path);
	else if (r != PL_CUDA_SUCCESS)
		preload_image_load_failed(L, "cuLibraryLoadFromFile", r, NULL, path);
	return r;
}

int preload_cuModuleGetFunction(struct preload_lib *L, int fn, void **function, void *module, const char *name)
{
	int r = PL_REAL(L, fn, get_function_fn)(function, module, name);
	if (!L->active)
		return r;
	if (r == PL_CUDA_SUCCESS)
		check_stub(L, find_loaded(module), name);
	else if (image_failure(r))
		use_failed(L, "cuModuleGetFunction", r, find_loaded(module), name);
	return r;
}

int preload_cuLibraryGetKernel(struct preload_lib *L, int fn, void **kernel, void *library, const char *name)
{
	int r = PL_REAL(L, fn, get_function_fn)(kernel, library, name);
	if (!L->active)
		return r;
	if (r == PL_CUDA_SUCCESS)
		check_stub(L, find_loaded(library), name);
	else if (image_failure(r))
		use_failed(L, "cuLibraryGetKernel", r, find_loaded(library), name);
	return r;
}

/* The load a function or kernel handle belongs to, as the driver tells. */
static struct loaded *owner(struct preload_lib *L, void *f)
{
	parent_fn module_of = PL_REAL(L, PL_cuFuncGetModule, parent_fn);
	parent_fn library_of = PL_REAL(L, PL_cuKernelGetLibrary, parent_fn);
	void *parent = NULL;
	struct loaded *d = NULL;
	if (module_of && module_of(&parent, f) == PL_CUDA_SUCCESS && parent)
		d = find_loaded(parent);
	parent = NULL;
	/* The runtime launches a CUkernel through cuLaunchKernel. */
	if (!d && library_of && library_of(&parent, f) == PL_CUDA_SUCCESS && parent)
		d = find_loaded(parent);
	return d;
}

int preload_cuKernelGetFunction(struct preload_lib *L, int fn, void **function, void *kernel)
{
	int r = PL_REAL(L, fn, kernel_function_fn)(function, kernel);
	if (r != PL_CUDA_SUCCESS && L->active && image_failure(r))
		use_failed(L, "cuKernelGetFunction", r, owner(L, kernel), NULL);
	return r;
}

int preload_cuLaunchKernel(struct preload_lib *L, int fn, void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			   unsigned by, unsigned bz, unsigned shared, void *stream, void **params, void **extra)
{
	int r = PL_REAL(L, fn, launch_fn)(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
	if (r != PL_CUDA_SUCCESS && image_failure(r) && L->active)
		use_failed(L, preload_fn_name(fn), r, owner(L, f), NULL);
	return r;
}

int preload_cuLaunchKernelEx(struct preload_lib *L, int fn, const void *config, void *f, void **params, void **extra)
{
	int r = PL_REAL(L, fn, launch_ex_fn)(config, f, params, extra);
	if (r != PL_CUDA_SUCCESS && image_failure(r) && L->active)
		use_failed(L, preload_fn_name(fn), r, owner(L, f), NULL);
	return r;
}
