#include "passes/targets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

#include "base/diag.h"
#include "objects/elf.h"
#include "objects/images.h"

static int is_target_option(const struct inv_arg *a)
{
	return a->what == ARG_OPTION && a->opt->kind == OPT_KIND_TARGET;
}

int targets_wanted(const struct invocation *inv, const struct config *cfg)
{
	if (inv->info || !inv->ninputs)
		return 0;
	for (size_t i = 0; i < inv->nargs; i++) {
		const struct inv_arg *a = &inv->args[i];
		/* CMake's compiler identification: its archs become the project's default. */
		if (a->what == ARG_INPUT && strstr(lbasename(inv->expanded.v[a->pos]), "CMakeCUDACompilerId"))
			return 0;
	}
	for (size_t i = 0; i < inv->nargs; i++)
		if (is_target_option(&inv->args[i]))
			return 1;
	return !strcmp(cfg->when_no_arch, "devices");
}

/* 1 if a GPU of compute capability cc can run the code e (an embedded arch; LTO-IR counts as
 * the machine code it becomes): the rules `nvshim inspect` judges images by (images.h). */
static int code_runs_on(struct arch e, unsigned cc)
{
	return e.kind == ARCH_VIRTUAL ? images_ptx_runs(e.num, e.suffix, cc)
				      : images_sass_runs(e.num, e.suffix, cc);
}

int targets_run_on(const struct arch_list *l, unsigned cc)
{
	for (size_t i = 0; i < l->n; i++) {
		struct arch e = target_embedded(&l->v[i]);
		if (e.kind != ARCH_LTO && code_runs_on(e, cc))
			return 1;
	}
	return 0;
}

/* A mode that writes one code instance (-cubin, -ptx, -optix-ir, -ltoir): nvcc gives it a single
 * pass and rejects a second code. */
static int one_code_mode(const struct invocation *inv)
{
	return inv->mode == MODE_CUBIN || inv->mode == MODE_PTX || inv->mode == MODE_OPTIX_IR ||
	       inv->mode == MODE_LTOIR;
}

enum arch_kind one_code_kind(enum inv_mode mode)
{
	return mode == MODE_CUBIN ? ARCH_REAL : mode == MODE_LTOIR ? ARCH_LTO : ARCH_VIRTUAL;
}

static void add_sass(struct arch_list *l, unsigned cc)
{
	struct target t = { { ARCH_VIRTUAL, cc, 0 }, { ARCH_REAL, cc, 0 } };
	arch_list_add(l, &t);
}

static char *names_of(const struct argv *names) { return argv_join(names, ", "); }

/* Adds targets for the compute capabilities of a comma list ("80,90", "sm_90"). */
static int add_fallback(struct arch_list *l, const struct config *cfg, const struct toolkit *tk)
{
	struct devices d;
	const char *why;
	devices_init(&d);
	if (!cfg->fallback_archs || !*cfg->fallback_archs || devices_parse(&d, cfg->fallback_archs, &why))
		return 0;
	size_t before = l->n;
	for (size_t i = 0; i < d.n; i++) {
		struct arch a = { ARCH_REAL, d.v[i].cc, 0 };
		if (toolkit_accepts(tk, &a))
			add_sass(l, d.v[i].cc);
	}
	devices_release(&d);
	return l->n > before;
}

/* Adds the GPUs' targets; returns how many the toolkit accepts. Unsupported GPUs are named. */
static int add_devices(struct arch_list *l, const struct devices *d, const struct toolkit *tk,
		       struct argv *unsupported)
{
	size_t before = l->n;
	for (size_t i = 0; d && i < d->n; i++) {
		struct arch a = { ARCH_REAL, toolkit_renamed(tk, d->v[i].cc), 0 };
		if (toolkit_accepts(tk, &a))
			add_sass(l, a.num);
		else if (unsupported)
			argv_pushf(unsupported, "sm_%u", d->v[i].cc);
	}
	return (int)(l->n - before);
}

static struct arch renamed(const struct toolkit *tk, struct arch a)
{
	a.num = toolkit_renamed(tk, a.num);
	return a;
}

/* Drops what the toolkit does not accept; returns the list of dropped names in *dropped. */
/* 1 if nvcc would reject a target of the list: it does so in -E and -M too. */
static int any_rejected(const struct arch_list *l, const struct toolkit *tk)
{
	for (size_t i = 0; i < l->n; i++)
		if (!toolkit_accepts(tk, &l->v[i].virt) || !toolkit_accepts(tk, &l->v[i].code))
			return 1;
	return 0;
}

static void drop_unsupported(struct arch_list *l, const struct toolkit *tk, struct argv *dropped,
			     struct argv *mapped)
{
	struct arch_list out;
	char a[32], b[32];
	arch_list_init(&out);
	for (size_t i = 0; i < l->n; i++) {
		struct target t = l->v[i];
		struct target r = { renamed(tk, t.virt), renamed(tk, t.code) };
		if (!arch_equal(&r.code, &t.code) && toolkit_accepts(tk, &r.code))
			argv_pushf(mapped, "%s -> %s", arch_format(&t.code, a, sizeof(a)),
				   arch_format(&r.code, b, sizeof(b)));
		t = r;
		const char *why;
		if (!toolkit_accepts(tk, &t.code)) {
			arch_format(&l->v[i].code, a, sizeof(a));
			int seen = 0;
			for (size_t k = 0; k < dropped->n; k++)
				seen |= !strcmp(dropped->v[k], a);
			if (!seen)
				argv_push(dropped, a);
			continue;
		}
		if (!toolkit_accepts(tk, &t.virt)) {
			/* The code survives: compile it from the lowest virtual arch the toolkit has. */
			struct target raised = t;
			int found = 0;
			for (unsigned n = t.virt.num + 1; n <= t.code.num && !found; n++) {
				raised.virt.num = n;
				found = toolkit_accepts(tk, &raised.virt) && !target_check(&raised, &why);
			}
			if (!found) {
				arch_format(&l->v[i].virt, a, sizeof(a));
				argv_push(dropped, a);
				continue;
			}
			if (t.code.kind == ARCH_VIRTUAL)
				continue;
			t = raised;
		}
		if (target_check(&t, &why))
			continue;
		arch_list_add(&out, &t);
	}
	arch_list_release(l);
	*l = out;
}

static const char *devices_source(const struct devices *d) { return d && d->source ? d->source : "none"; }

int targets_only_active(const struct config *cfg)
{
	return (cfg->targets_only && *cfg->targets_only) || (cfg->forward_ptx && !strcmp(cfg->forward_ptx, "highest"));
}

/* The GPUs targets_only names, in *g (renamed for the toolkit), and where they came from in
 * *src. Returns 0, or -1 after a note when the setting gives no GPU. */
static int only_gpus(const struct targets_context *ctx, const struct devices **devs, struct plan *plan,
		     struct devices *g, const char **src)
{
	const struct config *cfg = ctx->cfg;
	const char *why = NULL;
	if (!strcmp(cfg->targets_only, "devices")) {
		if (!*devs)
			*devs = ctx->devices(ctx->devices_arg);
		const struct devices *d = *devs;
		if (d && d->n) {
			memcpy(g->v, d->v, d->n * sizeof(d->v[0]));
			g->n = d->n;
			*src = devices_source(d);
		} else if (cfg->fallback_archs && *cfg->fallback_archs &&
			   !devices_parse(g, cfg->fallback_archs, &why) && g->n) {
			*src = "fallback_archs";
		} else {
			plan_note(plan, "targets.only", "targets_only = devices: no GPU found (%s) and "
				  "fallback_archs is unset: the requested targets are kept",
				  devices_source(d));
			return -1;
		}
	} else if (devices_parse(g, cfg->targets_only, &why) || !g->n) {
		plan_note(plan, "targets.only", "targets_only = %s: %s; the requested targets are kept",
			  cfg->targets_only, why ? why : "no compute capability");
		return -1;
	} else {
		*src = NULL;
	}
	for (size_t i = 0; i < g->n; i++)
		g->v[i].cc = toolkit_renamed(ctx->tk, g->v[i].cc);
	return 0;
}

/* The CUDA version of the driver the build is for (13000 for 13.0): driver_cuda, else this
 * machine's, 0 when unknown or off. *from says where it came from. A driver branch newer than
 * images.c's table is unknown (its CUDA version could be any newer one). */
static unsigned driver_version(const struct config *cfg, const char **from)
{
	const char *v = cfg->driver_cuda;
	unsigned major, minor;
	char tail;
	if (v && !strcmp(v, "off"))
		return 0;
	if (v && *v) {
		*from = "driver_cuda";
		if (sscanf(v, "%u.%u%c", &major, &minor, &tail) == 2 && minor < 10 && major < 100)
			return major * 1000 + minor * 10;
		if (sscanf(v, "%u%c", &major, &tail) == 1 && major < 100)
			return major * 1000;
		return 0;
	}
	*from = "this machine's driver, /proc/driver/nvidia/version";
	unsigned cuda = images_installed_driver_cuda(NULL);
	/* the newest branch images.c knows maps to its CUDA version and any newer branch too */
	return cuda && cuda < images_driver_cuda(100000) ? cuda : 0;
}

/* A GPU whose only code in the list is PTX (nvcc's own ISA) that its driver cannot compile
 * (the toolkit newer than the driver): its machine code is added, which a driver of the
 * toolkit's major version loads (CUDA's minor version compatibility); a driver of an older
 * major version loads neither, which a note says (rule targets.driver). */
static void driver_apply(struct arch_list *out, const struct config *cfg, const struct toolkit *tk,
			 const struct targets_context *ctx, const struct devices **devs, struct plan *plan)
{
	const char *from = NULL;
	unsigned tkv = tk->major * 1000 + tk->minor * 10, drv = 0;
	if (!tkv || (cfg->driver_cuda && !strcmp(cfg->driver_cuda, "off")))
		return;
	if (!*devs)
		*devs = ctx->devices(ctx->devices_arg);
	const struct devices *d = *devs;
	for (size_t i = 0; d && i < d->n; i++) {
		unsigned cc = toolkit_renamed(tk, d->v[i].cc);
		int dup = 0, sass = 0;
		for (size_t j = 0; j < i; j++)
			dup |= toolkit_renamed(tk, d->v[j].cc) == cc;
		for (size_t k = 0; k < out->n; k++) {
			struct arch e = target_embedded(&out->v[k]);
			sass |= (e.kind == ARCH_REAL || e.kind == ARCH_LTO) && code_runs_on(e, cc);
		}
		struct arch a = { ARCH_REAL, cc, 0 };
		if (dup || sass || !targets_run_on(out, cc) || !toolkit_accepts(tk, &a))
			continue;
		/* the driver is read only for a GPU whose only code is PTX */
		if (!drv)
			drv = driver_version(cfg, &from);
		if (!drv || tkv <= drv)
			return;
		if (tk->major == drv / 1000) {
			add_sass(out, cc);
			plan_note(plan, "targets.driver", "added sm_%u: the only code for the GPU of compute "
				  "capability %u.%u (%s) is PTX of nvcc %u.%u, which its driver (CUDA %u.%u: %s) "
				  "cannot compile; that driver loads the machine code", cc, cc / 10, cc % 10,
				  devices_source(d), tk->major, tk->minor, drv / 1000, drv % 1000 / 10, from);
		} else {
			plan_note(plan, "targets.driver", "the GPU of compute capability %u.%u (%s) gets only PTX "
				  "of nvcc %u.%u, which its driver (CUDA %u.%u: %s) cannot compile, nor can it load "
				  "nvcc %u's machine code: the program needs a CUDA %u.%u driver there, or a "
				  "CUDA %u toolkit", cc / 10, cc % 10, devices_source(d), tk->major, tk->minor,
				  drv / 1000, drv % 1000 / 10, from, tk->major, tk->major, tk->minor, drv / 1000);
		}
	}
}

/* targets_only: keeps, for each GPU, the targets it would load: its best machine code (the
 * highest number that runs on it, LTO-IR counted as machine code), else its best PTX. A GPU
 * that no target runs on gets its own target (as ensure_devices would add it). Says what the
 * build is for. */
static void only_apply(struct arch_list *out, const struct targets_context *ctx, const struct devices **devs,
		       struct plan *plan)
{
	struct devices g;
	const char *src;
	devices_init(&g);
	if (only_gpus(ctx, devs, plan, &g, &src)) {
		devices_release(&g);
		return;
	}
	char *keep = XCNEWVEC(char, out->n + 1);
	struct argv gpus = ARGV_INIT, gone = ARGV_INIT, added = ARGV_INIT, cannot = ARGV_INIT;
	struct arch_list own;
	arch_list_init(&own);
	for (size_t k = 0; k < g.n; k++) {
		unsigned cc = g.v[k].cc;
		int dup = 0;
		for (size_t j = 0; j < k; j++)
			dup |= g.v[j].cc == cc;
		if (dup)
			continue;
		argv_pushf(&gpus, "sm_%u", cc);
		unsigned best[2] = { 0, 0 }; /* [0] machine code, [1] PTX */
		for (size_t i = 0; i < out->n; i++) {
			struct arch e = target_embedded(&out->v[i]);
			int ptx = e.kind == ARCH_VIRTUAL;
			if (code_runs_on(e, cc) && e.num > best[ptx])
				best[ptx] = e.num;
		}
		int ptx = best[0] == 0;
		for (size_t i = 0; i < out->n; i++) {
			struct arch e = target_embedded(&out->v[i]);
			if ((e.kind == ARCH_VIRTUAL) == ptx && best[ptx] && e.num == best[ptx] && code_runs_on(e, cc))
				keep[i] = 1;
		}
		if (best[0] || best[1])
			continue;
		struct arch a = { ARCH_REAL, cc, 0 };
		if (toolkit_accepts(ctx->tk, &a)) {
			add_sass(&own, cc);
			argv_pushf(&added, "sm_%u", cc);
		} else {
			argv_pushf(&cannot, "sm_%u", cc);
		}
	}
	size_t kept = 0;
	for (size_t i = 0; i < out->n; i++) {
		kept += keep[i];
		if (!keep[i]) {
			char a[32];
			arch_format(&out->v[i].code, a, sizeof(a));
			int seen = 0;
			for (size_t k = 0; k < gone.n; k++)
				seen |= !strcmp(gone.v[k], a);
			if (!seen)
				argv_push(&gone, a);
		}
	}
	char *what = src ? xasprintf("devices (%s)", src) : xstrdup(ctx->cfg->targets_only);
	char *for_gpus = argv_join(&gpus, ", ");
	char *not_built = argv_join(&gone, ", ");
	char *own_list = argv_join(&added, ", ");
	char *unbuildable = argv_join(&cannot, ", ");
	char version[32];
	snprintf(version, sizeof(version), "%u.%u", ctx->tk->major, ctx->tk->minor);
	if (!kept && !own.n) {
		plan_note(plan, "targets.only", "targets_only = %s: no requested target runs on %s and nvcc %s "
			  "cannot build for it: the requested targets are kept", what, for_gpus, version);
	} else if (kept < out->n || own.n) {
		size_t n = 0;
		for (size_t i = 0; i < out->n; i++)
			if (keep[i])
				out->v[n++] = out->v[i];
		out->n = n;
		for (size_t i = 0; i < own.n; i++)
			arch_list_add(out, &own.v[i]);
		char *extra = cannot.n ? xasprintf(" (nvcc %s cannot build for %s)", version, unbuildable) : xstrdup("");
		char *tail = gone.n ? concat("; not built: ", not_built, NULL) : xstrdup("");
		if (!kept)
			plan_note(plan, "targets.only", "targets_only = %s: no requested target runs on %s: "
				  "building for %s instead%s%s", what, for_gpus, own_list, extra, tail);
		else if (own.n)
			plan_note(plan, "targets.only", "targets_only = %s: this build's code runs only on %s "
				  "(%s added: no requested target runs on it)%s%s", what, for_gpus, own_list,
				  extra, tail);
		else
			plan_note(plan, "targets.only", "targets_only = %s: this build's code runs only on %s%s%s",
				  what, for_gpus, extra, tail);
		free(tail);
		free(extra);
	}
	free(what);
	free(for_gpus);
	free(not_built);
	free(own_list);
	free(unbuildable);
	free(keep);
	arch_list_release(&own);
	argv_release(&gpus);
	argv_release(&gone);
	argv_release(&added);
	argv_release(&cannot);
	devices_release(&g);
}

/* forward_ptx = highest: machine code without PTX for its highest target gets that target's
 * plain PTX, for GPUs newer than the list. */
static void forward_apply(struct arch_list *out, const struct toolkit *tk, struct plan *plan)
{
	unsigned hi = 0;
	for (size_t i = 0; i < out->n; i++) {
		struct arch e = target_embedded(&out->v[i]);
		if (e.kind != ARCH_VIRTUAL && e.num > hi)
			hi = e.num;
	}
	if (!hi)
		return;
	for (size_t i = 0; i < out->n; i++) {
		struct arch e = target_embedded(&out->v[i]);
		if (e.kind == ARCH_VIRTUAL && !e.suffix && e.num >= hi)
			return;
	}
	struct target t = { { ARCH_VIRTUAL, hi, 0 }, { ARCH_VIRTUAL, hi, 0 } };
	if (!toolkit_accepts(tk, &t.virt))
		return;
	arch_list_add(out, &t);
	plan_note(plan, "targets.forward_ptx", "added compute_%u PTX: GPUs newer than sm_%u can run this "
		  "build's code (the driver compiles the PTX) (forward_ptx = highest)", hi, hi);
}

/* A list of machine code only, for GPUs nvshim does not know (none detected, no NVSHIM_DEVICES):
 * a GPU it has no code for gets "no kernel image is available" at run time. Says which of the
 * toolkit's GPUs those are, and what adds PTX for the newer ones (rule targets.sass_only, a
 * routine note: the build is what was asked for). */
static void sass_only_noted(const struct arch_list *out, const struct toolkit *tk, const struct devices *d,
			    struct plan *plan)
{
	unsigned hi = 0;
	if (d && d->n)
		return;
	for (size_t i = 0; i < out->n; i++) {
		struct arch e = target_embedded(&out->v[i]);
		if (e.kind != ARCH_REAL)
			return;
		if (e.num > hi)
			hi = e.num;
	}
	struct argv none = ARGV_INIT;
	/* in the order of their numbers (the toolkit lists its names as text) */
	for (unsigned num = 10, next; num; num = next) {
		next = 0;
		for (size_t i = 0; i < tk->targets.n; i++) {
			struct arch a;
			if (!arch_parse(tk->targets.v[i], &a) && a.kind == ARCH_REAL && !a.suffix && a.num > num &&
			    (!next || a.num < next))
				next = a.num;
		}
		if (next && !targets_run_on(out, next))
			argv_pushf(&none, "sm_%u", next);
	}
	if (none.n) {
		char *list = argv_join(&none, ", ");
		plan_note(plan, "targets.sass_only", "machine code only, and no GPU known to nvshim (%s): "
			  "GPUs %s get no kernel image from this build; forward_ptx = highest adds compute_%u "
			  "PTX for those newer than sm_%u (CMake: CMAKE_CUDA_ARCHITECTURES %u; PyTorch: "
			  "TORCH_CUDA_ARCH_LIST \"%u.%u+PTX\"); NVSHIM_DEVICES names the build's GPUs",
			  devices_source(d), list, hi, hi, hi, hi / 10, hi % 10);
		free(list);
	}
	argv_release(&none);
}

/* drop_unsupported() on l, with its notes: what was renamed, what was dropped. */
static void unsupported_noted(struct arch_list *l, const struct toolkit *tk, struct plan *plan, const char *version)
{
	struct argv dropped = ARGV_INIT, mapped = ARGV_INIT;
	drop_unsupported(l, tk, &dropped, &mapped);
	if (mapped.n) {
		char *list = names_of(&mapped);
		plan_note(plan, "targets.unsupported", "renamed %s for nvcc %s", list, version);
		free(list);
	}
	if (dropped.n && !l->n) {
		/* every GPU the user named is out of this toolkit's reach: say so, and who serves them */
		char *list = names_of(&dropped);
		struct argv gpus = ARGV_INIT, last = ARGV_INIT;
		for (size_t i = 0; i < dropped.n; i++) {
			const char *d = strchr(dropped.v[i], '_');
			unsigned num = d ? (unsigned)strtoul(d + 1, NULL, 10) : 0;
			if (!num)
				continue;
			char *cc = xasprintf("%u.%u", num / 10, num % 10);
			const char *tk_last = num >= 50 && num <= 72 ? "12.9" : num >= 35 ? "11.8" : num >= 30 ? "10.2" : "8.0";
			int seen = 0;
			for (size_t k = 0; k < gpus.n; k++)
				seen |= !strcmp(gpus.v[k], cc);
			if (!seen) {
				argv_push(&gpus, cc);
				seen = 0;
				for (size_t k = 0; k < last.n; k++)
					seen |= !strcmp(last.v[k], tk_last);
				if (!seen)
					argv_push(&last, tk_last);
			}
			free(cc);
		}
		char *g = argv_join(&gpus, ", "), *t = argv_join(&last, " or ");
		plan_note(plan, "targets.unsupported", "dropped %s: not supported by nvcc %s, which builds for no GPU "
			  "of compute capability %s: the program will not run on the GPU%s requested (CUDA %s is the "
			  "newest toolkit that builds for %s)", list, version, g, gpus.n == 1 ? "" : "s", t,
			  gpus.n == 1 ? "it" : "them");
		free(g);
		free(t);
		free(list);
		argv_release(&gpus);
		argv_release(&last);
	} else if (dropped.n) {
		char *list = names_of(&dropped);
		plan_note(plan, "targets.unsupported", "dropped %s: not supported by nvcc %s", list, version);
		free(list);
	}
	argv_release(&dropped);
	argv_release(&mapped);
}

/* The SASS forms of one target in a device link's objects: bit 0 plain, 1 'a', 2 'f'. */
struct dlink_forms {
	unsigned sm;
	unsigned forms;
	unsigned any; /* SASS images of any target */
};

static int dlink_image(const struct cuda_image *img, void *arg)
{
	struct dlink_forms *f = arg;
	f->any += img->kind == CUDA_IMAGE_SASS;
	if (img->kind == CUDA_IMAGE_SASS && img->sm == f->sm)
		f->forms |= img->variant == 'a' ? 2u : img->variant == 'f' ? 4u : 1u;
	return 0;
}

/* A device link (-dlink) links what its objects hold: where a plain sm_NN is asked for and the
 * objects hold that target only in its a (or f) form (the modules pass upgraded their compile),
 * the link gets that form too, as a user fixing the line by hand would write it. */
static void dlink_forms(const struct invocation *inv, struct arch_list *out, struct plan *plan)
{
	if (inv->mode != MODE_DEVICE_LINK)
		return;
	for (size_t t = 0; t < out->n; t++) {
		struct target *tg = &out->v[t];
		if (tg->code.kind != ARCH_REAL || tg->code.suffix)
			continue;
		struct dlink_forms f = { tg->code.num, 0, 0 };
		size_t read = 0;
		for (size_t i = 0; i < inv->nargs; i++) {
			const struct inv_arg *a = &inv->args[i];
			struct elf_map m;
			char *why = NULL;
			if (a->what != ARG_INPUT || a->input != INPUT_OBJECT ||
			    elf_map_file(inv->expanded.v[a->pos], &m, &why)) {
				free(why);
				continue;
			}
			elf_cuda_images(m.data, m.size, dlink_image, &f, NULL, &why);
			free(why);
			elf_unmap(&m);
			read++;
		}
		if (read && f.any && !f.forms && out->n > 1) {
			/* none of the objects has it (their compile dropped it): nvlink would only warn
			 * and embed an empty image */
			plan_note(plan, "targets.dlink", "dropped sm_%u: none of this device link's objects "
				  "has sm_%u code", f.sm, f.sm);
			memmove(out->v + t, out->v + t + 1, (out->n - t - 1) * sizeof(out->v[0]));
			out->n--;
			t--;
			continue;
		}
		char suffix = f.forms == 2 ? 'a' : f.forms == 4 ? 'f' : 0;
		if (!read || !suffix)
			continue;
		tg->code.suffix = suffix;
		tg->virt.suffix = suffix;
		plan_note(plan, "targets.dlink", "sm_%u -> sm_%u%c: the objects of this device link hold "
			  "sm_%u%c code only", f.sm, f.sm, suffix, f.sm, suffix);
	}
}

int targets_pass(const struct invocation *inv, const struct targets_context *ctx, struct plan *plan,
		 struct argv *before, struct argv *after)
{
	const struct config *cfg = ctx->cfg;
	const struct toolkit *tk = ctx->tk;
	struct arch_list req, out;
	char *why = NULL;
	int changed = 0;
	const struct devices *devs = NULL;
#define DEVICES() (devs ? devs : (devs = ctx->devices(ctx->devices_arg)))

	if (!tk || !tk->targets.n || !targets_wanted(inv, cfg))
		return 0;
	arch_list_init(&req);
	arch_list_init(&out);
	if (arch_list_from_invocation(&req, inv, &why)) {
		/* nvcc reports its own errors best. */
		diag_debug("targets left alone: %s", why);
		free(why);
		goto done;
	}
	if (before)
		arch_list_to_args(&req, before);
	/* -E and -M keep their targets unless nvcc would reject them there as in a compile (compiler
	 * caches run nvcc -E or -M before each compile, and so do some Makefiles); then they get
	 * the compile's list, whose __CUDA_ARCH_LIST__ the preprocessed text depends on. */
	/* targets_only and forward_ptx change the list whatever it is: -E and -M get the compile's
	 * list then too. */
	if ((inv->mode == MODE_PREPROCESS || inv->mode == MODE_DEPENDENCIES) &&
	    (!cfg->targets_unsupported || !any_rejected(&req, tk)) &&
	    (req.native || req.all || req.all_major || !targets_only_active(cfg)))
		goto done;

	/* Where target options stand; all must be on the command line for a rewrite. */
	for (size_t i = 0; i < inv->nargs; i++)
		if (is_target_option(&inv->args[i]) && inv->argv_index[inv->args[i].pos] == INVOCATION_NOT_IN_ARGV) {
			/* nvcc_plan() puts a file's arguments on the command line when they need a
			 * change; the environment's flags are nvcc's to apply */
			diag_debug("target options from %s are left alone",
				   invocation_source_name(inv->args[i].source));
			goto done;
		}

	char version[32];
	snprintf(version, sizeof(version), "%u.%u", tk->major, tk->minor);
	if (!req.given) {
		/* Only when_no_arch = devices gets here. */
		if (!add_devices(&out, DEVICES(), tk, NULL)) {
			arch_list_release(&out);
			goto done;
		}
		struct argv args = ARGV_INIT;
		arch_list_to_args(&out, &args);
		char *list = names_of(&args);
		plan_note(plan, "targets.no_arch", "no target given: building for the GPUs (%s): %s",
			  devices_source(devs), list);
		free(list);
		argv_release(&args);
	} else if (req.native) {
		if (!cfg->targets_native)
			goto done;
		/* nvcc builds -arch=native's GPUs and every -gencode beside it (those nvcc has) */
		for (size_t i = 0; i < req.n; i++)
			arch_list_add(&out, &req.v[i]);
		if (cfg->targets_unsupported && out.n)
			unsupported_noted(&out, tk, plan, version);
		struct argv bad = ARGV_INIT;
		int n = add_devices(&out, DEVICES(), tk, &bad);
		if (bad.n) {
			char *list = names_of(&bad);
			plan_note(plan, "targets.native", "GPU %s not supported by nvcc %s; skipped", list,
				  version);
			free(list);
		}
		argv_release(&bad);
		if (n) {
			plan_note(plan, "targets.native", "-arch=native: building for the GPUs found (%s)",
				  devices_source(devs));
		} else if (add_fallback(&out, cfg, tk)) {
			plan_note(plan, "targets.native", "-arch=native: no GPU found (%s); building for "
				  "fallback_archs = %s", devices_source(devs), cfg->fallback_archs);
		} else {
			warning("-arch=native: no GPU found (%s) and fallback_archs is unset: nvcc builds "
				"for its default target [targets.native]", devices_source(devs));
			goto done;
		}
	} else if (req.all || req.all_major) {
		/* Every target nvcc has: with targets_only, each GPU's best is its own (all-major: its
		 * major's, when nvcc has it). */
		struct devices g;
		const char *src;
		devices_init(&g);
		if (!cfg->targets_only || !*cfg->targets_only || only_gpus(ctx, &devs, plan, &g, &src)) {
			devices_release(&g);
			goto done;
		}
		struct argv gpus = ARGV_INIT;
		for (size_t k = 0; k < g.n; k++) {
			struct arch a = { ARCH_REAL, req.all_major ? g.v[k].cc / 10 * 10 : g.v[k].cc, 0 };
			if (!toolkit_accepts(tk, &a))
				a.num = g.v[k].cc;
			if (toolkit_accepts(tk, &a)) {
				add_sass(&out, a.num);
				argv_pushf(&gpus, "sm_%u", g.v[k].cc);
			}
		}
		devices_release(&g);
		if (out.n) {
			char *list = names_of(&gpus);
			char *what = src ? xasprintf("devices (%s)", src) : xstrdup(cfg->targets_only);
			plan_note(plan, "targets.only", "targets_only = %s: -arch=%s builds for every GPU; this "
				  "build's code runs only on %s", what, req.all ? "all" : "all-major", list);
			free(what);
			free(list);
		}
		argv_release(&gpus);
		if (!out.n)
			goto done;
	} else {
		for (size_t i = 0; i < req.n; i++)
			arch_list_add(&out, &req.v[i]);
		/* -arch=sm_NNa: one arch-specific pass, not also a plain one. A mode that writes one
		 * code instance (-cubin, -ptx, -optix-ir, -ltoir) already gets a single pass from nvcc,
		 * and nvcc rejects it with two codes. */
		const struct inv_arg *arch_opt = invocation_find(inv, "gpu-architecture");
		struct arch a;
		if (cfg->targets_arch_specific && !one_code_mode(inv) && arch_opt && arch_opt->value && !invocation_find(inv, "gpu-code") &&
		    !arch_parse(arch_opt->value, &a) && a.kind == ARCH_REAL && a.suffix == 'a') {
			struct arch plain = { ARCH_VIRTUAL, a.num, 0 };
			struct arch_list gencodes;
			arch_list_init(&gencodes);
			for (size_t i = 0; i < inv->nargs; i++) {
				const struct inv_arg *g = &inv->args[i];
				char *w = NULL;
				if (g->what == ARG_OPTION && !strcmp(g->opt->name, "generate-code") && g->value)
					arch_list_parse_gencode(&gencodes, g->value, &w);
				free(w);
			}
			struct target implicit = { plain, plain };
			int wanted = 0;
			for (size_t i = 0; i < gencodes.n; i++)
				wanted |= arch_equal(&gencodes.v[i].virt, &plain) && arch_equal(&gencodes.v[i].code, &plain);
			arch_list_release(&gencodes);
			for (size_t i = 0; i < out.n && !wanted; i++)
				if (arch_equal(&out.v[i].virt, &implicit.virt) && arch_equal(&out.v[i].code, &implicit.code)) {
					memmove(out.v + i, out.v + i + 1, (out.n - i - 1) * sizeof(out.v[0]));
					out.n--;
					plan_note(plan, "targets.arch_specific",
						  "-arch=%s: one pass for compute_%ua, without nvcc's extra plain "
						  "compute_%u pass", arch_opt->value, a.num, a.num);
					break;
				}
		}
		if (cfg->targets_unsupported) {
			unsupported_noted(&out, tk, plan, version);
			if (!out.n) {
				if (add_devices(&out, DEVICES(), tk, NULL))
					plan_note(plan, "targets.unsupported", "no requested target remains: "
						  "building for the GPUs (%s)", devices_source(devs));
				else if (add_fallback(&out, cfg, tk))
					plan_note(plan, "targets.unsupported", "no requested target remains: "
						  "building for fallback_archs = %s", cfg->fallback_archs);
				else
					plan_note(plan, "targets.unsupported", "no requested target remains and "
						  "no GPU or fallback_archs is known: nvcc builds for its default");
			}
		}
	}

	/* Only the GPUs the build is for; they then decide, not the machine's (ensure_devices). */
	int only = cfg->targets_only && *cfg->targets_only;
	if (out.n && only)
		only_apply(&out, ctx, &devs, plan);
	/* Every GPU should find something it can run. */
	/* (not in a mode that writes one code instance: a second one is a line nvcc refuses) */
	if (out.n && !only && strcmp(cfg->ensure_devices, "off") && !req.native && !one_code_mode(inv)) {
		const struct devices *d = DEVICES();
		for (size_t i = 0; d && i < d->n; i++) {
			unsigned cc = toolkit_renamed(tk, d->v[i].cc);
			struct arch a = { ARCH_REAL, cc, 0 };
			if (targets_run_on(&out, cc) || !toolkit_accepts(tk, &a))
				continue;
			int ptx = !strcmp(cfg->ensure_devices, "ptx");
			struct target t = { { ARCH_VIRTUAL, cc, 0 }, { ptx ? ARCH_VIRTUAL : ARCH_REAL, cc, 0 } };
			arch_list_add(&out, &t);
			plan_note(plan, "targets.ensure_devices", "added %s%u: no requested target runs on "
				  "the GPU of compute capability %u.%u (%s)", ptx ? "compute_" : "sm_", cc,
				  cc / 10, cc % 10, devices_source(d));
		}
	}

	/* PTX newer than the driver of the machines the build is for: their machine code */
	if (out.n && !one_code_mode(inv) && !req.native)
		driver_apply(&out, cfg, tk, ctx, &devs, plan);

	if (out.n && !one_code_mode(inv) && cfg->forward_ptx && !strcmp(cfg->forward_ptx, "highest"))
		forward_apply(&out, tk, plan);
	else if (out.n && !one_code_mode(inv) && !req.native && strcmp(cfg->ensure_devices, "off"))
		sass_only_noted(&out, tk, DEVICES(), plan);

	dlink_forms(inv, &out, plan);
	if (req.given && !req.native && arch_list_equal(&out, &req))
		goto done;
	/* A mode that writes one code instance: -arch=sm_80 -cubin is nvcc's sm_80 SASS alone and
	 * -arch=sm_80 -ptx its compute_80 PTX, but written out as -gencode pairs the same list is
	 * two instances, which nvcc refuses there; only the mode's kind of code stays. */
	if (one_code_mode(inv) && invocation_find(inv, "gpu-architecture") && !invocation_find(inv, "gpu-code"))
		arch_list_one_code(&out, one_code_kind(inv->mode));

	/* Replace the target options where the first one stood. */
	struct argv args = ARGV_INIT, rewritten = ARGV_INIT;
	arch_list_to_args(&out, &args);
	char *drop = XCNEWVEC(char, inv->argv.n + 1);
	size_t first = inv->argv.n;
	for (size_t i = 0; i < inv->nargs; i++) {
		const struct inv_arg *a = &inv->args[i];
		if (!is_target_option(a))
			continue;
		for (unsigned k = 0; k < a->span; k++) {
			size_t idx = inv->argv_index[a->pos + k];
			drop[idx] = 1;
			if (idx < first)
				first = idx;
		}
	}
	argv_push(&rewritten, plan->argv.v[0]);
	for (size_t i = 0; i <= inv->argv.n; i++) {
		if (i == first)
			argv_pushn(&rewritten, args.v, args.n);
		if (i < inv->argv.n && !drop[i])
			argv_push(&rewritten, inv->argv.v[i]);
	}
	argv_release(&plan->argv);
	plan->argv = rewritten;
	if (after)
		argv_pushn(after, args.v, args.n);
	free(drop);
	argv_release(&args);
	changed = 1;
done:
	arch_list_release(&req);
	arch_list_release(&out);
	return changed;
#undef DEVICES
}
