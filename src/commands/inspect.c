/* nvshim inspect [--gpu sm_NN[,...]] [--driver X.Y] [--json] [--no-kernels] FILE...
 *
 * Which GPUs can run these files? For each object, archive, shared library, program, fatbin,
 * cubin or Python wheel (the shared libraries inside it): the CUDA images it holds (elf.h), for
 * each GPU (--gpu, else this machine's) whether the fatbin containers that hold kernels have an
 * image the GPU runs: runs, partly or does not run, and how (images.h); and per kernel and target
 * its registers, shared memory, stack and whether it is a stub (trivial there, with a body on
 * another target) or trivial everywhere. Output on stdout: a table, or JSON with --json. Exit
 * status: 0 when no file "does not run" on a GPU, 1 when one does, 2 when a file cannot be read.
 * The kernels of a file's machine-code images are read by up to one thread per CPU, and added
 * in image order: the output does not depend on the threads (docs/inspect.md, "What it costs").
 */
#include "commands/commands.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <demangle.h>
#include <hashtab.h>
#include <libiberty.h>

#include "machine/devices.h"
#include "base/diag.h"
#include "objects/elf.h"
#include "base/fault.h"
#include "objects/images.h"
#include "base/logfile.h"
#include "objects/unpack.h"
#include "modes/session.h"

/* Images larger than this are not decompressed (a damaged header must not allocate more). */
#define PAYLOAD_LIMIT (1ULL << 31)
#define MEMBER_LIMIT (1ULL << 34)
/* The most threads that read images at once, and the most bytes of decompressed images they
 * hold at once (a worker holds one image at a time; together they wait below this). */
#define WORKERS_MAX 32
#define IN_FLIGHT_LIMIT PAYLOAD_LIMIT

/* A kernel's name, once per worker: the symbol and its demangled form (the same kernel is in the
 * image of every target, so most names come back). */
struct kname {
	char *name, *demangled;
	size_t dlen;
	unsigned real_in; /* the unit (seq) where this worker last saw it with a body */
};

struct kernel_row {
	const struct kname *name;
	unsigned regs;
	unsigned long long shared, stack;
	int has_stack, stub; /* stub: elf_kernel_is_stub(), then 2 when it has a body on no target */
};

/* The kernels of one machine-code image, in symbol order. */
struct image_kernels {
	char target[24];
	struct kernel_row *rows;
	size_t n, alloc;
};

/* One file, or one shared library inside a wheel. */
struct unit {
	char *name;
	const char *kind;
	unsigned seq; /* 1, 2, ...: which unit */
	struct image_list images;
	unsigned compressed[3]; /* images by compression */
	struct image_kernels *blocks; /* the kernel rows, image by image, in image order */
	size_t nb, ab, nk;
	char *error;
};

/* What one thread keeps from image to image: its decompressor and its names. */
struct worker {
	struct unpacker unpack;
	htab_t names;
};

struct inspect {
	struct unit *units;
	size_t n, alloc;
	int kernels;
	struct worker workers[WORKERS_MAX];
	unsigned nworkers; /* CPUs this process may use, at most WORKERS_MAX */
	/* While reading a unit. */
	struct unit *u;
	unsigned base;
	struct cuda_image *jobs; /* its machine-code images, whose kernels are read after the walk */
	size_t njobs, ajobs;
	struct cuda_image *all; /* every image of the file being walked */
	size_t nall, aall;
	const struct devices *gpus; /* the GPUs judged */
};

static hashval_t kname_hash(const void *p) { return htab_hash_string(((const struct kname *)p)->name); }
static int kname_eq(const void *entry, const void *key)
{
	return !strcmp(((const struct kname *)entry)->name, key);
}
static void kname_free(void *p)
{
	struct kname *k = p;
	free(k->name);
	free(k->demangled);
	free(k);
}

static struct kname *intern(struct worker *w, const char *name)
{
	if (!w->names)
		w->names = htab_create_alloc(1024, kname_hash, kname_eq, kname_free, xcalloc, free);
	void **slot = htab_find_slot_with_hash(w->names, name, htab_hash_string(name), INSERT);
	if (!*slot) {
		struct kname *k = XCNEW(struct kname);
		k->name = xstrdup(name);
		k->demangled = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
		if (!k->demangled)
			k->demangled = xstrdup(name);
		k->dlen = strlen(k->demangled);
		*slot = k;
	}
	return *slot;
}

static struct unit *unit_new(struct inspect *in, const char *name, const char *kind)
{
	if (in->n == in->alloc)
		in->units = XRESIZEVEC(struct unit, in->units, in->alloc = in->alloc ? 2 * in->alloc : 8);
	struct unit *u = &in->units[in->n++];
	memset(u, 0, sizeof(*u));
	u->name = xstrdup(name);
	u->kind = kind;
	u->seq = (unsigned)in->n;
	image_list_init(&u->images);
	return u;
}

static void unit_release(struct unit *u)
{
	free(u->name);
	image_list_release(&u->images);
	for (size_t i = 0; i < u->nb; i++)
		free(u->blocks[i].rows);
	free(u->blocks);
	free(u->error);
}

/* ---- the kernels of the machine-code images, read by several threads ----
 * The walk over a file's images (cheap: headers only) lists its machine-code images; then up to
 * nworkers threads (this one among them) take the next image in turn, decompress it, read its
 * kernels into that image's own result and free the image; the results are then added to the unit
 * in image order, so the output does not depend on which thread read what. A thread that cannot
 * be started leaves its share to the others (with none, this thread reads every image). */

struct job_result {
	struct image_kernels k;
	char *why; /* the image could not be read */
};

struct kernels_run {
	struct inspect *in;
	const struct cuda_image *jobs;
	struct job_result *res;
	size_t n;
	atomic_size_t next;   /* the next job to take */
	atomic_size_t failed; /* the first job that failed so far (n: none): later ones are not needed */
	int locked;           /* the lock below is in use (more than one thread) */
	pthread_mutex_t lock;
	pthread_cond_t freed;
	unsigned long long in_flight; /* decompressed bytes held now */
};

struct kernel_ctx {
	struct worker *w;
	struct image_kernels *k;
	unsigned seq;
};

static void on_kernel(const struct cuda_kernel *k, void *arg)
{
	struct kernel_ctx *c = arg;
	struct image_kernels *b = c->k;
	if (b->n == b->alloc)
		b->rows = XRESIZEVEC(struct kernel_row, b->rows, b->alloc = b->alloc ? 2 * b->alloc : 16);
	struct kernel_row *r = &b->rows[b->n++];
	struct kname *name = intern(c->w, k->name);
	if (k->stub == 0)
		name->real_in = c->seq;
	r->name = name;
	r->regs = k->regs;
	r->shared = k->shared;
	r->stack = k->stack;
	r->has_stack = k->has_stack;
	r->stub = k->stub;
}

static unsigned long long take_bytes(struct kernels_run *run, const struct cuda_image *img)
{
	unsigned long long want = img->compression ? img->full_size : 0;
	if (want > IN_FLIGHT_LIMIT)
		want = 0; /* refused by the limit before anything is allocated */
	if (!run->locked || !want)
		return 0;
	pthread_mutex_lock(&run->lock);
	while (run->in_flight && run->in_flight + want > IN_FLIGHT_LIMIT)
		pthread_cond_wait(&run->freed, &run->lock);
	run->in_flight += want;
	pthread_mutex_unlock(&run->lock);
	return want;
}

static void give_bytes(struct kernels_run *run, unsigned long long bytes)
{
	if (!bytes)
		return;
	pthread_mutex_lock(&run->lock);
	run->in_flight -= bytes;
	pthread_cond_broadcast(&run->freed);
	pthread_mutex_unlock(&run->lock);
}

static void read_job(struct kernels_run *run, struct worker *w, size_t j)
{
	const struct cuda_image *img = &run->jobs[j];
	struct job_result *r = &run->res[j];
	const unsigned char *code;
	size_t len;
	void *owned;
	elf_image_target(img, r->k.target, sizeof(r->k.target));
	unsigned long long held = take_bytes(run, img);
	int rc = elf_image_payload_with(img, &w->unpack, PAYLOAD_LIMIT, &code, &len, &owned, &r->why);
	if (!rc) {
		struct kernel_ctx c = { w, &r->k, run->in->u->seq };
		rc = elf_cubin_kernels(code, len, on_kernel, &c, &r->why);
		free(owned);
	}
	give_bytes(run, held);
	if (!rc) {
		free(r->why);
		r->why = NULL;
		return;
	}
	if (!r->why)
		r->why = xstrdup("an image cannot be read");
	size_t f = atomic_load(&run->failed);
	while (j < f && !atomic_compare_exchange_weak(&run->failed, &f, j))
		;
}

struct worker_arg {
	struct kernels_run *run;
	struct worker *w;
};

static void *work(void *arg)
{
	struct worker_arg *a = arg;
	for (;;) {
		size_t j = atomic_fetch_add(&a->run->next, 1);
		if (j >= a->run->n)
			break;
		if (j < atomic_load(&a->run->failed))
			read_job(a->run, a->w, j);
	}
	return NULL;
}

/* Reads the kernels of in->jobs into the current unit; returns the first image's error
 * (xmalloc'ed), or NULL. */
static char *read_kernels(struct inspect *in)
{
	struct kernels_run run;
	size_t n = in->njobs;
	memset(&run, 0, sizeof(run));
	run.in = in;
	run.jobs = in->jobs;
	run.n = n;
	run.res = XCNEWVEC(struct job_result, n ? n : 1);
	atomic_init(&run.next, 0);
	atomic_init(&run.failed, n);
	unsigned want = in->nworkers < n ? in->nworkers : (unsigned)n;
	pthread_t tid[WORKERS_MAX];
	struct worker_arg args[WORKERS_MAX];
	unsigned started = 0;
	if (want > 1 && !fault_inject("inspect_threads") && !pthread_mutex_init(&run.lock, NULL)) {
		if (!pthread_cond_init(&run.freed, NULL))
			run.locked = 1;
		else
			pthread_mutex_destroy(&run.lock);
	}
	for (unsigned t = 1; run.locked && t < want; t++) {
		args[t] = (struct worker_arg){ &run, &in->workers[t] };
		if (pthread_create(&tid[t], NULL, work, &args[t]))
			break; /* the threads started so far, and this one, do the rest */
		started = t;
	}
	args[0] = (struct worker_arg){ &run, &in->workers[0] };
	work(&args[0]);
	for (unsigned t = 1; t <= started; t++)
		pthread_join(tid[t], NULL);
	if (run.locked) {
		pthread_cond_destroy(&run.freed);
		pthread_mutex_destroy(&run.lock);
	}
	struct unit *u = in->u;
	char *why = NULL;
	size_t j = 0;
	for (; j < n && !run.res[j].why; j++) {
		if (u->nb == u->ab)
			u->blocks = XRESIZEVEC(struct image_kernels, u->blocks, u->ab = u->ab ? 2 * u->ab : 16);
		u->blocks[u->nb++] = run.res[j].k;
		u->nk += run.res[j].k.n;
	}
	if (j < n)
		why = run.res[j].why;
	for (; j < n; j++) {
		free(run.res[j].k.rows);
		if (run.res[j].why != why)
			free(run.res[j].why);
	}
	free(run.res);
	return why;
}

static int on_image(const struct cuda_image *img, void *arg)
{
	struct inspect *in = arg;
	struct unit *u = in->u;
	image_list_add(&u->images, img, in->base);
	if (in->nall == in->aall)
		in->all = XRESIZEVEC(struct cuda_image, in->all, in->aall = in->aall ? 2 * in->aall : 64);
	in->all[in->nall++] = *img;
	if (img->compression >= 0 && img->compression < 3)
		u->compressed[img->compression]++;
	if (in->kernels && img->kind == CUDA_IMAGE_SASS) {
		if (in->njobs == in->ajobs)
			in->jobs = XRESIZEVEC(struct cuda_image, in->jobs, in->ajobs = in->ajobs ? 2 * in->ajobs : 64);
		in->jobs[in->njobs++] = *img;
	}
	return 0;
}

/* The first kernel an image names (the name is copied: it points into the decompressed image). */
static void first_name(const char *name, size_t len, void *arg)
{
	char **first = arg;
	if (!*first)
		*first = xstrndup(name, len);
}

/* Whether the containers of the file just walked hold kernels, for those that lack an image for
 * one of the GPUs (the others count whatever they hold). The kernels come from the rows of one of
 * its machine-code images: read already (from block `first` on, one per machine-code image of the
 * walk, in order) unless --no-kernels, else read here by the threads and dropped. A container
 * with PTX alone is read off its smallest PTX (its .entry directives). One that cannot be read
 * counts. A container's images are next to each other in the walk. */
static void read_container_kernels(struct inspect *in, size_t first)
{
	struct unit *u = in->u;
	struct image_list *l = &u->images;
	if (!in->gpus || !in->gpus->n)
		return;
	size_t nsass = 0, nlack = 0;
	size_t *block = XNEWVEC(size_t, in->nall ? in->nall : 1); /* per lacking container: its block */
	unsigned *lacking = XNEWVEC(unsigned, in->nall ? in->nall : 1);
	const struct cuda_image **ptx = XCNEWVEC(const struct cuda_image *, in->nall ? in->nall : 1);
	if (!in->kernels)
		in->njobs = 0;
	for (size_t i = 0, j; i < in->nall; i = j) {
		unsigned c = in->all[i].container;
		const struct cuda_image *sass = NULL;
		size_t sass_at = nsass;
		for (j = i; j < in->nall && in->all[j].container == c; j++) {
			const struct cuda_image *img = &in->all[j];
			if (img->kind == CUDA_IMAGE_SASS && (!sass || (!in->kernels && img->size < sass->size))) {
				sass = img;
				sass_at = in->kernels ? nsass : sass_at;
			}
			if (img->kind == CUDA_IMAGE_PTX && (!ptx[nlack] || img->size < ptx[nlack]->size))
				ptx[nlack] = img;
			nsass += img->kind == CUDA_IMAGE_SASS;
		}
		int lacks = 0;
		for (size_t g = 0; g < in->gpus->n && !lacks; g++) {
			int runs = 0;
			for (size_t k = i; k < j && !runs; k++)
				runs = images_image_runs(&in->all[k], in->gpus->v[g].cc);
			lacks = !runs;
		}
		if (!lacks || (!sass && !ptx[nlack])) {
			ptx[nlack] = NULL;
			continue; /* it runs everywhere, or holds LTO IR only */
		}
		if (sass && !in->kernels) {
			if (in->njobs == in->ajobs)
				in->jobs = XRESIZEVEC(struct cuda_image, in->jobs, in->ajobs = in->ajobs ? 2 * in->ajobs : 64);
			in->jobs[in->njobs] = *sass;
			sass_at = in->njobs++;
		}
		block[nlack] = sass ? first + sass_at : (size_t)-1;
		lacking[nlack++] = c;
	}
	size_t nb = u->nb, nk = u->nk;
	char *why = in->njobs && !in->kernels ? read_kernels(in) : NULL;
	for (size_t k = 0; k < nlack; k++) {
		unsigned c = in->base + lacking[k];
		if (block[k] != (size_t)-1 && block[k] < u->nb) {
			const struct image_kernels *blk = &u->blocks[block[k]];
			const char *name = blk->n ? blk->rows[0].name->name : NULL;
			image_list_kernels(l, c, (int)blk->n, name, name ? strlen(name) : 0);
		} else if (ptx[k]) {
			char *first_name_read = NULL, *w = NULL;
			int count = elf_image_kernel_names(ptx[k], &in->workers[0].unpack, PAYLOAD_LIMIT, first_name,
							   &first_name_read, &w);
			image_list_kernels(l, c, count, first_name_read, first_name_read ? strlen(first_name_read) : 0);
			free(first_name_read);
			free(w);
		}
	}
	free(why);
	if (!in->kernels) {
		/* --no-kernels: the rows read here only said which containers hold kernels */
		for (size_t i = nb; i < u->nb; i++)
			free(u->blocks[i].rows);
		u->nb = nb;
		u->nk = nk;
	}
	free(ptx);
	free(lacking);
	free(block);
}

/* The images (and kernels) of one ELF file, fatbin or cubin, added to the current unit. An image
 * whose kernels cannot be read is the error (the first one, in image order), else a damaged
 * file. */
static int read_bytes(struct inspect *in, const void *data, size_t size, const char *what)
{
	unsigned n = 0;
	char *why = NULL;
	in->njobs = 0;
	in->nall = 0;
	size_t first = in->u->nb;
	int rc = elf_cuda_images(data, size, on_image, in, &n, &why);
	char *image_why = in->njobs ? read_kernels(in) : NULL;
	if (image_why) {
		free(why);
		why = image_why;
		rc = -1;
	}
	if (!rc) {
		image_list_containers(&in->u->images, in->base + n);
		read_container_kernels(in, first);
	}
	in->base += n;
	if (rc && !in->u->error)
		in->u->error = what ? xasprintf("%s: %s", what, why) : xstrdup(why);
	free(why);
	return rc;
}

/* A kernel is said to be a stub only with evidence: trivial here and with a body on another
 * target of the same file (elf.h). One trivial on every target (cuBLAS's no-op kernels) is 2. */
static void settle_stubs(struct inspect *in, struct unit *u)
{
	for (size_t b = 0; b < u->nb; b++)
		for (size_t k = 0; k < u->blocks[b].n; k++) {
			struct kernel_row *r = &u->blocks[b].rows[k];
			if (r->stub != 1)
				continue;
			int real = 0;
			for (unsigned t = 0; t < WORKERS_MAX && !real; t++) {
				const struct kname *kn =
					in->workers[t].names ? htab_find_with_hash(in->workers[t].names, r->name->name,
										   htab_hash_string(r->name->name))
							     : NULL;
				real = kn && kn->real_in == u->seq;
			}
			if (!real)
				r->stub = 2;
		}
}

static int on_member(const struct ar_member *m, void *arg)
{
	struct inspect *in = arg;
	if (!m->data) {
		if (!in->u->error)
			in->u->error = xasprintf("thin archive member '%s': inspect the file itself", m->name);
		return 1;
	}
	enum elf_kind k = elf_identify(m->data, m->size);
	if (k == ELF_KIND_OBJECT || k == ELF_KIND_SHARED || k == ELF_KIND_ELF_OTHER)
		return read_bytes(in, m->data, m->size, m->name) != 0;
	return 0; /* not an object: nothing to run */
}

/* A shared library inside a wheel: "lib/libx.so" or "libx.so.12". */
static int is_shared_name(const char *name)
{
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	const char *so = strstr(base, ".so");
	return so && (so[3] == '\0' || so[3] == '.');
}

struct wheel_ctx {
	struct inspect *in;
	const char *path;
	size_t libs;
	int failed;
};

static int on_zip_member(const struct zip_member *m, void *arg)
{
	struct wheel_ctx *w = arg;
	if (!is_shared_name(m->name))
		return 0;
	w->libs++;
	char *name = concat(w->path, "!", m->name, NULL);
	w->in->u = unit_new(w->in, name, "shared object in a wheel");
	w->in->base = 0;
	free(name);
	const unsigned char *data;
	void *owned;
	char *why = NULL;
	if (unpack_zip_member(m, MEMBER_LIMIT, &data, &owned, &why)) {
		w->in->u->error = why;
		w->failed = 1;
		return 0;
	}
	if (elf_identify(data, (size_t)m->full_size) != ELF_KIND_SHARED)
		w->in->u->error = xstrdup("not a shared object of this machine");
	else if (read_bytes(w->in, data, (size_t)m->full_size, NULL))
		w->failed = 1;
	else
		w->in->u->kind = elf_is_program(data, (size_t)m->full_size) ? "program in a wheel" : w->in->u->kind;
	settle_stubs(w->in, w->in->u);
	free(owned);
	return 0;
}

static void read_file(struct inspect *in, const char *path)
{
	struct elf_map m;
	char *why = NULL;
	if (elf_map_file(path, &m, &why)) {
		in->u = unit_new(in, path, "file");
		in->u->error = why;
		return;
	}
	uint32_t magic = 0;
	if (m.size >= 4)
		memcpy(&magic, m.data, 4);
	enum elf_kind k = elf_identify(m.data, m.size);
	if (unpack_is_zip(m.data, m.size)) {
		struct wheel_ctx w = { in, path, 0, 0 };
		size_t first = in->n;
		if (unpack_zip_members(m.data, m.size, on_zip_member, &w, &why)) {
			in->u = unit_new(in, path, "zip archive");
			in->u->error = why;
		} else if (in->n == first) {
			in->u = unit_new(in, path, "wheel without shared libraries");
		}
	} else if (k == ELF_KIND_ARCHIVE || k == ELF_KIND_THIN_ARCHIVE) {
		in->u = unit_new(in, path, "archive");
		in->base = 0;
		if (ar_members(m.data, m.size, on_member, in, &why) && !in->u->error)
			in->u->error = why;
		else
			free(why);
		settle_stubs(in, in->u);
	} else if (k == ELF_KIND_OTHER && magic != 0xBA55ED50u && !elf_is_ptx_text(m.data, m.size)) {
		in->u = unit_new(in, path, "not ELF");
		in->u->error = xstrdup("not an object, archive, shared library, program, fatbin, cubin, PTX or wheel");
	} else {
		const char *kind = magic == 0xBA55ED50u		? "fatbin"
				   : k == ELF_KIND_OTHER		? "PTX"
				   : m.size > 19 && m.data[18] == 190	? "cubin" /* e_machine EM_CUDA */
				   : k == ELF_KIND_OBJECT		? "object"
				   : elf_is_program(m.data, m.size)	? "program"
				   : k == ELF_KIND_SHARED		? "shared object"
									: "ELF file";
		in->u = unit_new(in, path, kind);
		in->base = 0;
		read_bytes(in, m.data, m.size, NULL);
		settle_stubs(in, in->u);
	}
	elf_unmap(&m);
}

/* ---- output ---- */

/* The kernel tables, written through a buffer of their own (a library has 100,000s of rows): the
 * same bytes as printf's %-*s, %*u and %*llu would write. */
struct obuf {
	FILE *f;
	size_t n;
	char b[1 << 16];
};

static void ob_flush(struct obuf *o)
{
	if (o->n)
		fwrite(o->b, 1, o->n, o->f);
	o->n = 0;
}

static void ob_put(struct obuf *o, const char *s, size_t len)
{
	if (len > sizeof(o->b) - o->n) {
		ob_flush(o);
		if (len > sizeof(o->b)) {
			fwrite(s, 1, len, o->f);
			return;
		}
	}
	memcpy(o->b + o->n, s, len);
	o->n += len;
}

static void ob_str(struct obuf *o, const char *s) { ob_put(o, s, strlen(s)); }

static void ob_pad(struct obuf *o, size_t k)
{
	static const char spaces[] = "                                ";
	while (k) {
		size_t c = k < sizeof(spaces) - 1 ? k : sizeof(spaces) - 1;
		ob_put(o, spaces, c);
		k -= c;
	}
}

/* s, then spaces up to width (%-*s) */
static void ob_left(struct obuf *o, const char *s, size_t len, size_t width)
{
	ob_put(o, s, len);
	if (len < width)
		ob_pad(o, width - len);
}

/* spaces, then s, up to width (%*s) */
static void ob_right(struct obuf *o, const char *s, size_t len, size_t width)
{
	if (len < width)
		ob_pad(o, width - len);
	ob_put(o, s, len);
}

static size_t ull_text(unsigned long long v, char buf[24])
{
	char t[24];
	size_t n = 0, i = 0;
	do
		t[n++] = (char)('0' + v % 10);
	while (v /= 10);
	while (n)
		buf[i++] = t[--n];
	buf[i] = '\0';
	return i;
}

static void ob_ull(struct obuf *o, unsigned long long v, size_t width)
{
	char t[24];
	ob_right(o, t, ull_text(v, t), width);
}

/* A JSON string, as logfile_json_string() writes it. */
static void ob_json(struct obuf *o, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p && *p >= 0x20 && *p != '"' && *p != '\\')
		p++;
	if (!*p) {
		ob_put(o, "\"", 1);
		ob_put(o, s, (size_t)((const char *)p - s));
		ob_put(o, "\"", 1);
		return;
	}
	char *buf = NULL;
	size_t len = 0;
	logfile_json_string(&buf, &len, s);
	ob_put(o, buf, len);
	free(buf);
}

/* How the fatbins that count run (the machine code or PTX of the first of them). */
static void how_text(const struct image_verdict *v, char *buf, size_t size)
{
	struct cuda_image img = { 0 };
	char t[32];
	if (v->sass && !v->ptx) {
		img.kind = CUDA_IMAGE_SASS, img.sm = v->best_sass.sm, img.variant = v->best_sass.variant;
		snprintf(buf, size, "machine code %s", elf_image_target(&img, t, sizeof(t)));
	} else if (v->ptx) {
		img.kind = CUDA_IMAGE_PTX, img.sm = v->best_ptx.sm, img.variant = v->best_ptx.variant;
		snprintf(buf, size, "%sPTX %s (ISA %u.%u), compiled by the driver at load%s",
			 v->sass ? "machine code and " : "", elf_image_target(&img, t, sizeof(t)), v->best_ptx.ptx_major,
			 v->best_ptx.ptx_minor, v->sass ? " for some of it" : "");
	} else {
		snprintf(buf, size, v->empty ? "no CUDA kernels" : "no CUDA code");
	}
	if (v->empty && (v->sass || v->ptx)) {
		size_t n = strlen(buf);
		snprintf(buf + n, size - n, " (%zu fatbin%s no kernel: not counted)", v->empty,
			 v->empty == 1 ? " holds" : "s hold");
	}
}

/* "'a(int)', 'b()' and 3 more": the kernels of the fatbins without code for the GPU (the one
 * example read of each, demangled). */
static void missing_text(const struct unit *u, const struct image_verdict *v, char *buf, size_t size)
{
	const struct image_list *l = &u->images;
	size_t n = v->none + v->ptx_too_new, shown = 0, at = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n && i < IMAGES_MISSING_SHOWN; i++) {
		unsigned c = v->missing[i];
		const char *name = c < l->known ? l->example[c] : NULL;
		if (!name)
			continue;
		char *d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
		const char *t = d ? d : name;
		int len = strlen(t) > 100 ? 97 : (int)strlen(t);
		at += (size_t)snprintf(buf + at, at < size ? size - at : 0, "%s'%.*s%s'", shown ? ", " : "", len, t,
				       len < (int)strlen(t) ? "..." : "");
		free(d);
		shown++;
		if (at >= size)
			break;
	}
	if (at < size && shown && n > shown)
		snprintf(buf + at, size - at, " and the kernels of %zu more fatbin%s", n - shown, n - shown == 1 ? "" : "s");
}

static void why_not_text(const struct unit *u, const struct image_verdict *v, char *buf, size_t size)
{
	char *targets = images_targets_text(&u->images);
	size_t counted = v->sass + v->ptx + v->ptx_too_new + v->none;
	if (v->answer == IMAGES_PARTLY) {
		char how[256], which[1024];
		how_text(v, how, sizeof(how));
		missing_text(u, v, which, sizeof(which));
		snprintf(buf, size, "%zu of %zu fatbins with kernels have no code for sm_%u%s%s%s; the rest: %s. It runs "
			 "there as long as it launches none of those (a library with a kernel set per GPU loads its "
			 "GPU's)", v->none + v->ptx_too_new, counted, v->gpu, v->ptx_too_new ? " (or PTX too new for the driver)" : "",
			 which[0] ? ": " : "", which, how);
	} else if (v->none) {
		snprintf(buf, size, "%zu of %zu fatbin%s no image for sm_%u (it holds %s)", v->none, counted,
			 counted == 1 ? " has" : "s have", v->gpu, targets);
	} else {
		snprintf(buf, size, "its PTX (ISA %u.%u) needs a CUDA %u.%u driver, this one has an older one",
			 v->newest_ptx.ptx_major, v->newest_ptx.ptx_minor, v->need_cuda / 1000, v->need_cuda % 1000 / 10);
	}
	free(targets);
}

static void json_str(FILE *out, const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	logfile_json_string(&buf, &len, s);
	fwrite(buf, 1, len, out);
	free(buf);
}

static void print_table(FILE *out, const struct inspect *in, const struct devices *gpus, unsigned driver)
{
	for (size_t i = 0; i < in->n; i++) {
		const struct unit *u = &in->units[i];
		fprintf(out, "%s: %s", u->name, u->kind);
		if (u->error) {
			fprintf(out, ", unreadable: %s\n", u->error);
			continue;
		}
		char *targets = images_targets_text(&u->images);
		if (strcmp(u->kind, "PTX"))
			fprintf(out, ", %u fatbin%s", u->images.containers, u->images.containers == 1 ? "" : "s");
		fprintf(out, "\n  images: %s\n", targets);
		free(targets);
		if (u->compressed[1] || u->compressed[2])
			fprintf(out, "  compressed: %u of %zu images (%u zstd, %u lz4)\n", u->compressed[1] + u->compressed[2],
				u->images.n, u->compressed[2], u->compressed[1]);
		for (size_t g = 0; g < gpus->n; g++) {
			struct image_verdict v;
			char text[2048];
			if (images_verdict(&u->images, gpus->v[g].cc, driver, &v)) {
				how_text(&v, text, sizeof(text));
				fprintf(out, "  sm_%u: runs: %s\n", gpus->v[g].cc, text);
			} else if (v.answer == IMAGES_PARTLY) {
				why_not_text(u, &v, text, sizeof(text));
				fprintf(out, "  sm_%u: partly: %s\n", gpus->v[g].cc, text);
			} else {
				why_not_text(u, &v, text, sizeof(text));
				char *fix = images_fix_text(gpus->v[g].cc);
				fprintf(out, "  sm_%u: does not run: %s; rebuild with %s\n", gpus->v[g].cc, text, fix);
				free(fix);
			}
		}
		if (!u->nk)
			continue;
		size_t width = 6, stubs = 0, trivial = 0;
		for (size_t b = 0; b < u->nb; b++)
			for (size_t k = 0; k < u->blocks[b].n; k++) {
				const struct kernel_row *r = &u->blocks[b].rows[k];
				if (r->name->dlen > width)
					width = r->name->dlen;
				stubs += r->stub == 1;
				trivial += r->stub == 2;
			}
		if (width > 60)
			width = 60;
		fprintf(out, "  %-*s  %-8s %5s %8s %8s  %s\n", (int)width, "kernel", "target", "regs", "shared", "stack",
			"stub");
		struct obuf *o = XNEW(struct obuf);
		o->f = out;
		o->n = 0;
		for (size_t b = 0; b < u->nb; b++) {
			const struct image_kernels *blk = &u->blocks[b];
			size_t tlen = strlen(blk->target);
			for (size_t k = 0; k < blk->n; k++) {
				const struct kernel_row *r = &blk->rows[k];
				ob_put(o, "  ", 2);
				ob_left(o, r->name->demangled, r->name->dlen, width);
				ob_put(o, "  ", 2);
				ob_left(o, blk->target, tlen, 8);
				ob_put(o, " ", 1);
				ob_ull(o, r->regs, 5);
				ob_put(o, " ", 1);
				ob_ull(o, r->shared, 8);
				ob_put(o, " ", 1);
				if (r->has_stack)
					ob_ull(o, r->stack, 8);
				else
					ob_right(o, "-", 1, 8);
				ob_put(o, "  ", 2);
				ob_str(o, r->stub == 1 ? "stub\n" : r->stub == 2 ? "trivial\n" : r->stub < 0 ? "?\n" : "\n");
			}
		}
		ob_flush(o);
		free(o);
		if (stubs)
			fprintf(out, "  %zu stub kernel%s: compiled out for that target (an #if __CUDA_ARCH__ guard; "
				"each has a body on another target): they do nothing, or only trap\n", stubs,
				stubs == 1 ? "" : "s");
		if (trivial)
			fprintf(out, "  %zu trivial kernel%s: they only exit or only trap on every target here (by "
				"design, or compiled out everywhere): not called stubs\n", trivial, trivial == 1 ? "" : "s");
	}
}

static void print_json(FILE *out, const struct inspect *in, const struct devices *gpus, unsigned driver, int all)
{
	fprintf(out, "{\"runs\":%s,\"gpus\":[", all ? "true" : "false");
	for (size_t g = 0; g < gpus->n; g++)
		fprintf(out, "%s\"sm_%u\"", g ? "," : "", gpus->v[g].cc);
	if (driver)
		fprintf(out, "],\"driver_cuda\":\"%u.%u\",\"files\":[", driver / 1000, driver % 1000 / 10);
	else
		fprintf(out, "],\"driver_cuda\":null,\"files\":[");
	for (size_t i = 0; i < in->n; i++) {
		const struct unit *u = &in->units[i];
		fprintf(out, "%s{\"path\":", i ? "," : "");
		json_str(out, u->name);
		fprintf(out, ",\"kind\":");
		json_str(out, u->kind);
		if (u->error) {
			fprintf(out, ",\"error\":");
			json_str(out, u->error);
			fprintf(out, "}");
			continue;
		}
		fprintf(out, ",\"error\":null,\"fatbins\":%u,\"images\":[", u->images.containers);
		for (size_t k = 0; k < u->images.n; k++) {
			const struct image_rec *r = &u->images.v[k];
			struct cuda_image img = { 0 };
			char t[32];
			img.kind = r->kind, img.sm = r->sm, img.variant = r->variant;
			fprintf(out, "%s{\"fatbin\":%u,\"target\":\"%s\",\"kind\":\"%s\"", k ? "," : "", r->container,
				elf_image_target(&img, t, sizeof(t)),
				r->kind == CUDA_IMAGE_SASS ? "sass" : r->kind == CUDA_IMAGE_PTX ? "ptx" : "other");
			if (r->kind == CUDA_IMAGE_PTX)
				fprintf(out, ",\"ptx_isa\":\"%u.%u\"", r->ptx_major, r->ptx_minor);
			fprintf(out, ",\"compression\":\"%s\"}", unpack_method_name((enum unpack_method)r->compression));
		}
		fprintf(out, "],\"verdicts\":[");
		for (size_t g = 0; g < gpus->n; g++) {
			struct image_verdict v;
			char text[2048];
			int runs = images_verdict(&u->images, gpus->v[g].cc, driver, &v);
			if (runs)
				how_text(&v, text, sizeof(text));
			else
				why_not_text(u, &v, text, sizeof(text));
			fprintf(out, "%s{\"gpu\":\"sm_%u\",\"runs\":%s,\"verdict\":\"%s\",\"fatbins_machine_code\":%zu,"
				"\"fatbins_ptx\":%zu,\"fatbins_ptx_too_new\":%zu,\"fatbins_without_image\":%zu,"
				"\"fatbins_without_kernels\":%zu,\"kernels_without_code\":[",
				g ? "," : "", gpus->v[g].cc, runs ? "true" : "false", images_answer_name(v.answer), v.sass,
				v.ptx, v.ptx_too_new, v.none, v.empty);
			for (size_t m = 0, shown = 0; m < v.none + v.ptx_too_new && m < IMAGES_MISSING_SHOWN; m++) {
				unsigned c = v.missing[m];
				if (c < u->images.known && u->images.example[c]) {
					fprintf(out, shown++ ? "," : "");
					json_str(out, u->images.example[c]);
				}
			}
			fprintf(out, "],\"how\":");
			json_str(out, text);
			if (v.answer == IMAGES_DO_NOT_RUN) {
				char *fix = images_fix_text(gpus->v[g].cc);
				fprintf(out, ",\"fix\":");
				json_str(out, fix);
				free(fix);
			}
			fprintf(out, "}");
		}
		fprintf(out, "],\"kernels\":[");
		struct obuf *o = XNEW(struct obuf);
		o->f = out;
		o->n = 0;
		for (size_t b = 0, k = 0; b < u->nb; b++) {
			const struct image_kernels *blk = &u->blocks[b];
			for (size_t e = 0; e < blk->n; e++, k++) {
				const struct kernel_row *r = &blk->rows[e];
				ob_str(o, k ? ",{\"name\":" : "{\"name\":");
				ob_json(o, r->name->name);
				ob_str(o, ",\"demangled\":");
				ob_json(o, r->name->demangled);
				ob_str(o, ",\"target\":\"");
				ob_str(o, blk->target);
				ob_str(o, "\",\"registers\":");
				ob_ull(o, r->regs, 0);
				ob_str(o, ",\"shared\":");
				ob_ull(o, r->shared, 0);
				ob_str(o, ",\"stack\":");
				if (r->has_stack)
					ob_ull(o, r->stack, 0);
				else
					ob_str(o, "null");
				ob_str(o, r->stub == 1	 ? ",\"stub\":true}"
					  : r->stub == 2 ? ",\"stub\":false,\"trivial\":true}"
					  : r->stub == 0 ? ",\"stub\":false}"
							 : ",\"stub\":null}");
			}
		}
		ob_flush(o);
		free(o);
		fprintf(out, "]}");
	}
	fprintf(out, "]}\n");
}

/* The threads that read images: the CPUs this process may use, at most WORKERS_MAX. */
static unsigned cpus(void)
{
	cpu_set_t set;
	int n = sched_getaffinity(0, sizeof(set), &set) ? 1 : CPU_COUNT(&set);
	return n < 1 ? 1 : n > WORKERS_MAX ? WORKERS_MAX : (unsigned)n;
}

static int usage(void)
{
	error("usage: nvshim inspect [--gpu sm_NN[,...]] [--driver X.Y] [--json] [--no-kernels] FILE...");
	return 2;
}

int cmd_inspect(int n, char **args)
{
	struct inspect in;
	struct devices gpus;
	const char *gpu_list = NULL, *driver_text = NULL;
	int json = 0, files = 0;
	memset(&in, 0, sizeof(in));
	in.kernels = 1;
	in.nworkers = cpus();
	devices_init(&gpus);
	for (int i = 0; i < n; i++) {
		const char *a = args[i];
		if (!strcmp(a, "--json"))
			json = 1;
		else if (!strcmp(a, "--no-kernels"))
			in.kernels = 0;
		else if (!strcmp(a, "--gpu") && i + 1 < n)
			gpu_list = args[++i];
		else if (!strncmp(a, "--gpu=", 6))
			gpu_list = a + 6;
		else if (!strcmp(a, "--driver") && i + 1 < n)
			driver_text = args[++i];
		else if (!strncmp(a, "--driver=", 9))
			driver_text = a + 9;
		else if (!strcmp(a, "--")) {
			files += n - i - 1;
			break;
		}
		else if (a[0] == '-' && a[1])
			return usage();
		else
			files++;
	}
	if (!files)
		return usage();
	unsigned driver = 0;
	if (driver_text) {
		unsigned major = 0, minor = 0;
		if (sscanf(driver_text, "%u.%u", &major, &minor) < 1 || minor > 9) {
			error("nvshim inspect: --driver '%s': expected a CUDA version such as 12.8", driver_text);
			return 2;
		}
		driver = major * 1000 + minor * 10;
	} else {
		driver = images_installed_driver_cuda(NULL);
	}
	struct session s;
	struct session_devices sd;
	session_init(&s, 0, NULL);
	session_devices_init(&sd, &s);
	if (gpu_list) {
		const char *why;
		if (devices_parse(&gpus, gpu_list, &why)) {
			error("nvshim inspect: --gpu '%s': %s", gpu_list, why);
			session_devices_release(&sd);
			session_release(&s);
			return 2;
		}
	} else {
		const struct devices *found = session_devices_load(&sd);
		for (size_t i = 0; i < found->n && gpus.n < DEVICES_MAX; i++) {
			size_t j = 0;
			while (j < gpus.n && gpus.v[j].cc != found->v[i].cc)
				j++;
			if (j == gpus.n)
				gpus.v[gpus.n++] = found->v[i];
		}
		if (!gpus.n)
			diag_note(VERBOSITY_NORMAL, "no GPU given (--gpu) or found on this machine: the images only");
	}
	in.gpus = &gpus;
	int dashdash = 0;
	for (int i = 0; i < n; i++) {
		const char *a = args[i];
		if (!dashdash && (!strcmp(a, "--gpu") || !strcmp(a, "--driver"))) {
			i++;
			continue;
		}
		if (!dashdash && !strcmp(a, "--")) {
			dashdash = 1;
			continue;
		}
		if (!dashdash && a[0] == '-' && a[1])
			continue;
		read_file(&in, a);
	}
	int rc = 0, all = 1;
	for (size_t i = 0; i < in.n; i++) {
		const struct unit *u = &in.units[i];
		if (u->error) {
			rc = 2;
			all = 0;
			continue;
		}
		for (size_t g = 0; g < gpus.n; g++) {
			struct image_verdict v;
			if (!images_verdict(&u->images, gpus.v[g].cc, driver, &v)) {
				all = 0;
				/* "partly" is not a failure: which kernels run depends on the program */
				if (!rc && v.answer == IMAGES_DO_NOT_RUN)
					rc = 1;
			}
		}
	}
	if (json)
		print_json(stdout, &in, &gpus, driver, all);
	else
		print_table(stdout, &in, &gpus, driver);
	if (fflush(stdout) && errno != EPIPE)
		rc = 2;
	for (size_t i = 0; i < in.n; i++)
		unit_release(&in.units[i]);
	free(in.units);
	free(in.jobs);
	free(in.all);
	for (unsigned t = 0; t < WORKERS_MAX; t++) {
		unpacker_release(&in.workers[t].unpack);
		if (in.workers[t].names)
			htab_delete(in.workers[t].names);
	}
	devices_release(&gpus);
	session_devices_release(&sd);
	session_release(&s);
	return rc;
}
