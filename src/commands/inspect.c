/* nvshim inspect [--gpu sm_NN[,...]] [--driver X.Y] [--json] [--no-kernels] FILE...
 *
 * Which GPUs can run these files? For each object, archive, shared library, program, fatbin,
 * cubin or Python wheel (the shared libraries inside it): the CUDA images it holds (elf.h), for
 * each GPU (--gpu, else this machine's) whether every fatbin container of the file has an image
 * the GPU runs and how (images.h), and per kernel and target its registers, shared memory, stack
 * and whether it is a stub. Output on stdout: a table, or JSON with --json. Exit status: 0 when
 * every file runs on every GPU, 1 when one does not, 2 when a file cannot be read.
 */
#include "commands/commands.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <demangle.h>
#include <libiberty.h>

#include "core/devices.h"
#include "core/diag.h"
#include "core/elf.h"
#include "core/images.h"
#include "core/logfile.h"
#include "core/unpack.h"
#include "modes/session.h"

/* Images larger than this are not decompressed (a damaged header must not allocate more). */
#define PAYLOAD_LIMIT (1ULL << 31)
#define MEMBER_LIMIT (1ULL << 34)

struct kernel_row {
	char *name;
	char target[24];
	unsigned regs;
	unsigned long long shared, stack;
	int has_stack, stub;
};

/* One file, or one shared library inside a wheel. */
struct unit {
	char *name;
	const char *kind;
	struct image_list images;
	unsigned compressed[3]; /* images by compression */
	struct kernel_row *kernels;
	size_t nk, ak;
	char *error;
};

struct inspect {
	struct unit *units;
	size_t n, alloc;
	int kernels;
	/* While reading a unit. */
	struct unit *u;
	unsigned base;
	char *why;
};

static struct unit *unit_new(struct inspect *in, const char *name, const char *kind)
{
	if (in->n == in->alloc)
		in->units = XRESIZEVEC(struct unit, in->units, in->alloc = in->alloc ? 2 * in->alloc : 8);
	struct unit *u = &in->units[in->n++];
	memset(u, 0, sizeof(*u));
	u->name = xstrdup(name);
	u->kind = kind;
	image_list_init(&u->images);
	return u;
}

static void unit_release(struct unit *u)
{
	free(u->name);
	image_list_release(&u->images);
	for (size_t i = 0; i < u->nk; i++)
		free(u->kernels[i].name);
	free(u->kernels);
	free(u->error);
}

struct kernel_ctx {
	struct unit *u;
	const char *target;
};

static void on_kernel(const struct cuda_kernel *k, void *arg)
{
	struct kernel_ctx *c = arg;
	struct unit *u = c->u;
	if (u->nk == u->ak)
		u->kernels = XRESIZEVEC(struct kernel_row, u->kernels, u->ak = u->ak ? 2 * u->ak : 16);
	struct kernel_row *r = &u->kernels[u->nk++];
	r->name = xstrdup(k->name);
	snprintf(r->target, sizeof(r->target), "%s", c->target);
	r->regs = k->regs;
	r->shared = k->shared;
	r->stack = k->stack;
	r->has_stack = k->has_stack;
	r->stub = k->stub;
}

static int on_image(const struct cuda_image *img, void *arg)
{
	struct inspect *in = arg;
	struct unit *u = in->u;
	image_list_add(&u->images, img, in->base);
	if (img->compression >= 0 && img->compression < 3)
		u->compressed[img->compression]++;
	if (!in->kernels || img->kind != CUDA_IMAGE_SASS)
		return 0;
	const unsigned char *code;
	size_t len;
	void *owned;
	char target[24];
	if (elf_image_payload(img, PAYLOAD_LIMIT, &code, &len, &owned, &in->why))
		return 1;
	struct kernel_ctx c = { u, elf_image_target(img, target, sizeof(target)) };
	int rc = elf_cubin_kernels(code, len, on_kernel, &c, &in->why);
	free(owned);
	return rc != 0;
}

/* The images (and kernels) of one ELF file, fatbin or cubin, added to the current unit. */
static int read_bytes(struct inspect *in, const void *data, size_t size, const char *what)
{
	unsigned n = 0;
	in->why = NULL;
	char *why = NULL;
	int rc = elf_cuda_images(data, size, on_image, in, &n, &why);
	if (!rc && in->why) {
		why = in->why;
		rc = -1;
	} else {
		free(in->why);
	}
	in->why = NULL;
	in->base += n;
	if (rc && !in->u->error)
		in->u->error = what ? xasprintf("%s: %s", what, why) : xstrdup(why);
	free(why);
	return rc;
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
	free(owned);
	return 0;
}

static void read_file(struct inspect *in, const char *path)
{
	struct elf_map m;
	char *why = NULL;
	if (elf_map_file(path, &m, &why)) {
		in->u = unit_new(in, path, "unreadable");
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
	} else if (k == ELF_KIND_OTHER && magic != 0xBA55ED50u) {
		in->u = unit_new(in, path, "not ELF");
		in->u->error = xstrdup("not an object, archive, shared library, program, fatbin, cubin or wheel");
	} else {
		const char *kind = magic == 0xBA55ED50u	    ? "fatbin"
				   : k == ELF_KIND_OBJECT   ? "object"
				   : k == ELF_KIND_SHARED   ? "shared object"
							    : "program or cubin";
		in->u = unit_new(in, path, kind);
		in->base = 0;
		read_bytes(in, m.data, m.size, NULL);
	}
	elf_unmap(&m);
}

/* ---- output ---- */

static char *demangled(const char *name)
{
	char *d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
	return d ? d : xstrdup(name);
}

static void how_text(const struct image_verdict *v, int runs, char *buf, size_t size)
{
	struct cuda_image img = { 0 };
	char t[32];
	if (!runs) {
		buf[0] = '\0';
		return;
	}
	if (v->sass && !v->ptx) {
		img.kind = CUDA_IMAGE_SASS, img.sm = v->best_sass.sm, img.variant = v->best_sass.variant;
		snprintf(buf, size, "machine code %s", elf_image_target(&img, t, sizeof(t)));
	} else if (v->ptx) {
		img.kind = CUDA_IMAGE_PTX, img.sm = v->best_ptx.sm, img.variant = v->best_ptx.variant;
		snprintf(buf, size, "%sPTX %s (ISA %u.%u), compiled by the driver at load%s",
			 v->sass ? "machine code and " : "", elf_image_target(&img, t, sizeof(t)), v->best_ptx.ptx_major,
			 v->best_ptx.ptx_minor, v->sass ? " for some of it" : "");
	} else {
		snprintf(buf, size, "no CUDA code");
	}
}

static void why_not_text(const struct unit *u, const struct image_verdict *v, char *buf, size_t size)
{
	char *targets = images_targets_text(&u->images);
	if (v->none) {
		snprintf(buf, size, "%zu of %u fatbin%s no image for sm_%u (it holds %s)", v->none, u->images.containers,
			 u->images.containers == 1 ? " has" : "s have", v->gpu, targets);
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
		fprintf(out, ", %u fatbin%s\n  images: %s\n", u->images.containers, u->images.containers == 1 ? "" : "s",
			targets);
		free(targets);
		if (u->compressed[1] || u->compressed[2])
			fprintf(out, "  compressed: %u of %zu images (%u zstd, %u lz4)\n", u->compressed[1] + u->compressed[2],
				u->images.n, u->compressed[2], u->compressed[1]);
		for (size_t g = 0; g < gpus->n; g++) {
			struct image_verdict v;
			char text[512];
			int runs = images_verdict(&u->images, gpus->v[g].cc, driver, &v);
			if (runs) {
				how_text(&v, runs, text, sizeof(text));
				fprintf(out, "  sm_%u: runs: %s\n", gpus->v[g].cc, text);
			} else {
				why_not_text(u, &v, text, sizeof(text));
				char *fix = images_fix_text(gpus->v[g].cc);
				fprintf(out, "  sm_%u: does not run: %s; rebuild with %s\n", gpus->v[g].cc, text, fix);
				free(fix);
			}
		}
		if (!u->nk)
			continue;
		size_t width = 6, stubs = 0;
		char **names = XNEWVEC(char *, u->nk);
		for (size_t k = 0; k < u->nk; k++) {
			names[k] = demangled(u->kernels[k].name);
			if (strlen(names[k]) > width)
				width = strlen(names[k]);
			stubs += u->kernels[k].stub == 1;
		}
		if (width > 60)
			width = 60;
		fprintf(out, "  %-*s  %-8s %5s %8s %8s  %s\n", (int)width, "kernel", "target", "regs", "shared", "stack",
			"stub");
		for (size_t k = 0; k < u->nk; k++) {
			const struct kernel_row *r = &u->kernels[k];
			char stack[24];
			if (r->has_stack)
				snprintf(stack, sizeof(stack), "%llu", r->stack);
			else
				snprintf(stack, sizeof(stack), "-");
			fprintf(out, "  %-*s  %-8s %5u %8llu %8s  %s\n", (int)width, names[k], r->target, r->regs, r->shared,
				stack, r->stub == 1 ? "stub" : r->stub < 0 ? "?" : "");
			free(names[k]);
		}
		free(names);
		if (stubs)
			fprintf(out, "  %zu stub kernel%s: compiled out for that target (an #if __CUDA_ARCH__ guard): "
				"they do nothing, or only trap\n", stubs, stubs == 1 ? "" : "s");
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
			char text[512];
			int runs = images_verdict(&u->images, gpus->v[g].cc, driver, &v);
			if (runs)
				how_text(&v, runs, text, sizeof(text));
			else
				why_not_text(u, &v, text, sizeof(text));
			fprintf(out, "%s{\"gpu\":\"sm_%u\",\"runs\":%s,\"fatbins_machine_code\":%zu,\"fatbins_ptx\":%zu,"
				"\"fatbins_ptx_too_new\":%zu,\"fatbins_without_image\":%zu,\"how\":",
				g ? "," : "", gpus->v[g].cc, runs ? "true" : "false", v.sass, v.ptx, v.ptx_too_new, v.none);
			json_str(out, text);
			if (!runs) {
				char *fix = images_fix_text(gpus->v[g].cc);
				fprintf(out, ",\"fix\":");
				json_str(out, fix);
				free(fix);
			}
			fprintf(out, "}");
		}
		fprintf(out, "],\"kernels\":[");
		for (size_t k = 0; k < u->nk; k++) {
			const struct kernel_row *r = &u->kernels[k];
			char *d = demangled(r->name);
			fprintf(out, "%s{\"name\":", k ? "," : "");
			json_str(out, r->name);
			fprintf(out, ",\"demangled\":");
			json_str(out, d);
			fprintf(out, ",\"target\":\"%s\",\"registers\":%u,\"shared\":%llu,\"stack\":", r->target, r->regs,
				r->shared);
			if (r->has_stack)
				fprintf(out, "%llu", r->stack);
			else
				fprintf(out, "null");
			fprintf(out, ",\"stub\":%s}", r->stub == 1 ? "true" : r->stub == 0 ? "false" : "null");
			free(d);
		}
		fprintf(out, "]}");
	}
	fprintf(out, "]}\n");
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
				if (!rc)
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
	devices_release(&gpus);
	session_devices_release(&sd);
	session_release(&s);
	return rc;
}
