#include "passes/modules.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libiberty.h>

#include "base/cache.h"
#include "base/diag.h"
#include "base/fault.h"
#include "buildwide/stats.h"
#include "machine/toolkit.h"
#include "passes/targets.h"

void modules_plan_init(struct modules_plan *mp)
{
	memset(mp, 0, sizeof(*mp));
	arch_list_init(&mp->requested);
	argv_init(&mp->link);
	argv_init(&mp->base);
	argv_init(&mp->defines);
	argv_init(&mp->libdirs);
	argv_init(&mp->explain);
}


void modules_plan_release(struct modules_plan *mp)
{
	for (size_t i = 0; i < mp->nsrc; i++) {
		struct module_source *s = &mp->src[i];
		free(s->path);
		free(s->abs);
		arch_list_release(&s->list);
		argv_release(&s->flags);
		rules_effect_release(&s->rules);
		scan_release(&s->scan);
		verdict_release(&s->verdict);
	}
	free(mp->src);
	for (size_t i = 0; i < mp->ngroups; i++) {
		struct modules_group *g = &mp->groups[i];
		if (g->objdir)
			cache_remove_dir(g->objdir);
		argv_release(&g->argv);
		arch_list_release(&g->list);
		argv_release(&g->flags);
		free(g->objdir);
	}
	free(mp->groups);
	if (mp->tmpdir)
		cache_remove_dir(mp->tmpdir);
	free(mp->tmpdir);
	free(mp->output);
	free(mp->odir);
	arch_list_release(&mp->requested);
	argv_release(&mp->link);
	argv_release(&mp->base);
	argv_release(&mp->defines);
	argv_release(&mp->libdirs);
	argv_release(&mp->explain);
	modules_plan_init(mp);
}

static int compiles(enum inv_mode m)
{
	switch (m) {
	case MODE_LINK:
	case MODE_COMPILE:
	case MODE_DEVICE_C:
	case MODE_DEVICE_W:
	case MODE_LIB:
	case MODE_RUN:
	case MODE_CUBIN:
	case MODE_FATBIN:
	case MODE_PTX:
		return 1;
	default:
		return 0;
	}
}

static int links(enum inv_mode m) { return m == MODE_LINK || m == MODE_LIB || m == MODE_RUN; }

int modules_wanted(const struct invocation *inv, const struct config *cfg)
{
	if (!cfg->modules || inv->info || inv->modes_conflict || !compiles(inv->mode))
		return 0;
	size_t cuda = 0;
	int targets = 0;
	for (size_t i = 0; i < inv->nargs; i++) {
		const struct inv_arg *a = &inv->args[i];
		if (a->what == ARG_INPUT && a->input == INPUT_CUDA) {
			if (strstr(lbasename(inv->expanded.v[a->pos]), "CMakeCUDACompilerId"))
				return 0;
			cuda++;
		}
		if (a->what == ARG_OPTION && a->opt->kind == OPT_KIND_TARGET) {
			if (a->source == SOURCE_PREPEND || a->source == SOURCE_APPEND)
				return 0;
			targets = 1;
		}
	}
	/* nvcc refuses -o with several inputs outside a link: its own error, unchanged. */
	if (inv->output && inv->ninputs > 1 && !links(inv->mode))
		return 0;
	return cuda && targets;
}

char *modules_unit(const struct target *t)
{
	char v[32], c[32];
	struct arch code = t->code;
	if (code.kind == ARCH_LTO)
		return NULL;
	if (code.kind == ARCH_VIRTUAL)
		code = arch_as(&t->virt, ARCH_REAL);
	return xasprintf("%s:%s", arch_format(&t->virt, v, sizeof(v)), arch_format(&code, c, sizeof(c)));
}

size_t modules_candidates(const struct target *t, const struct toolkit *tk, struct target out[3])
{
	size_t n = 0;
	unsigned num = t->code.kind == ARCH_VIRTUAL ? t->virt.num : t->code.num;
	const char *why;
	if (t->code.kind == ARCH_REAL && !t->code.suffix && t->virt.num < t->code.num && !t->virt.suffix) {
		struct target r = { { ARCH_VIRTUAL, t->code.num, 0 }, t->code };
		if (!target_check(&r, &why))
			out[n++] = r;
	}
	if (t->code.kind == ARCH_LTO || t->code.suffix || t->virt.suffix)
		return n;
	static const char suffixes[] = { 'f', 'a' };
	for (int k = 0; k < 2; k++) {
		struct target r = { { ARCH_VIRTUAL, num, suffixes[k] }, { t->code.kind, num, suffixes[k] } };
		if (tk && (!toolkit_accepts(tk, &r.virt) || !toolkit_accepts(tk, &r.code)))
			continue;
		if (!target_check(&r, &why))
			out[n++] = r;
	}
	return n;
}

int modules_decided_early(const struct verdict *v)
{
	const struct verdict_unit *how = verdict_find(v, "method:specific");
	return how && !strncmp(how->reason, "preprocess", 10);
}

char *modules_stub_unit(const char *kind, const struct target *t)
{
	char v[32], c[32];
	return xasprintf("%s:%s:%s", kind, arch_format(&t->virt, v, sizeof(v)), arch_format(&t->code, c, sizeof(c)));
}

static char *code_name(const struct target *t)
{
	char b[32];
	return xstrdup(arch_format(&t->code, b, sizeof(b)));
}

/* The arguments every probe of this invocation shares: the analysed command line without what
 * nvcc adds itself (NVCC_*_FLAGS), options files (their contents are in line), targets, modes,
 * outputs, dependency files, link options, driver options and inputs. */
static void probe_base(const struct invocation *inv, struct argv *base, struct argv *defines,
		       struct argv *includes, struct argv *libdirs)
{
	for (size_t i = 0; i < inv->nargs; i++) {
		const struct inv_arg *a = &inv->args[i];
		if (a->source == SOURCE_PREPEND || a->source == SOURCE_APPEND || a->what == ARG_INPUT)
			continue;
		if (a->what == ARG_OPTION) {
			const char *name = a->opt->name;
			switch (a->opt->kind) {
			case OPT_KIND_TARGET:
			case OPT_KIND_MODE:
			case OPT_KIND_OUTPUT:
			case OPT_KIND_DEPENDENCY:
			case OPT_KIND_LINK:
			case OPT_KIND_DRIVER:
			case OPT_KIND_INFO:
				continue;
			case OPT_KIND_INPUT:
				if (!strcmp(name, "options-file"))
					continue;
				break;
			default:
				break;
			}
			if (a->value && !strcmp(name, "define-macro"))
				invocation_split_list(defines, a->value);
			if (a->value && !strcmp(name, "undefine-macro")) {
				struct argv u = ARGV_INIT;
				invocation_split_list(&u, a->value);
				for (size_t k = 0; k < u.n; k++)
					argv_pushf(defines, "-%s", u.v[k]);
				argv_release(&u);
			}
			if (a->value && !strcmp(name, "include-path"))
				invocation_split_list(includes, a->value);
			if (a->value && (!strcmp(name, "include-path") || !strcmp(name, "system-include")))
				invocation_split_list(libdirs, a->value);
		}
		argv_pushn(base, inv->expanded.v + a->pos, a->span);
	}
}

/* The project of a source: the nearest directory above it with a .git, else the working
 * directory when the source is below it, else the source's directory. */
static char *project_root(const char *abs, const char *cwd)
{
	char *d = xstrdup(abs);
	for (char *slash = strrchr(d, '/'); slash && slash != d; slash = strrchr(d, '/')) {
		*slash = '\0';
		char *git = concat(d, "/.git", NULL);
		struct stat sb;
		int found = !stat(git, &sb);
		free(git);
		if (found)
			return d;
	}
	free(d);
	size_t n = strlen(cwd);
	if (!strncmp(abs, cwd, n) && abs[n] == '/')
		return xstrdup(cwd);
	const char *slash = strrchr(abs, '/');
	return xstrndup(abs, slash > abs ? (size_t)(slash - abs) : 1);
}

static char *absolute_path(const char *path, const char *cwd)
{
	if (path[0] == '/')
		return xstrdup(path);
	if (path[0] == '.' && path[1] == '/')
		path += 2;
	return concat(cwd, "/", path, NULL);
}

/* The toolkit's root: two levels above bin/nvcc (resolved). */
static char *real_toolkit_root(const char *nvcc)
{
	char *real = lrealpath(nvcc);
	char *root = real ? toolkit_root(real) : NULL;
	free(real);
	return root;
}

static void make_key(struct module_source *s, const struct modules_plan *mp, const struct modules_context *ctx,
		     const char *cwd)
{
	struct hash128 h;
	struct stat sb;
	hash_init(&h);
	hash_string(&h, "nvshim-modules 1");
	hash_string(&h, ctx->nvcc);
	if (!stat(ctx->nvcc, &sb)) {
		char buf[64];
		snprintf(buf, sizeof(buf), "%lld %lld.%09ld", (long long)sb.st_size, (long long)sb.st_mtim.tv_sec,
			 (long)sb.st_mtim.tv_nsec);
		hash_string(&h, buf);
	}
	hash_string(&h, cwd);
	hash_string(&h, mp->rdc ? "rdc" : "whole");
	for (size_t i = 0; i < mp->base.n; i++)
		hash_string(&h, mp->base.v[i]);
	hash_string(&h, s->abs);
	for (size_t i = 0; i < s->scan.nfiles; i++) {
		hash_string(&h, s->scan.files[i].path);
		hash_update(&h, s->scan.files[i].text, s->scan.files[i].len);
	}
	hash_hex(&h, s->key);
}

static int has_arch(const struct toolkit *tk, const struct target *t)
{
	return !tk || !tk->targets.n || (toolkit_accepts(tk, &t->virt) && toolkit_accepts(tk, &t->code));
}

enum decision { KEEP, DROP, UPGRADE };

/* One requested pair of one source: keep, drop or upgrade, and why. */
static enum decision decide(const struct module_source *s, const struct modules_plan *mp,
			    const struct modules_context *ctx, const struct target *t, struct target *out,
			    char **why, const char **rule)
{
	const struct config *cfg = ctx->cfg;
	const struct toolkit *tk = ctx->tk;
	struct target cand[3];
	size_t nc;
	char b[32];
	*out = *t;
	*why = NULL;
	*rule = NULL;

	if (cfg->modules_rules && s->rules.matched) {
		const struct rule_effect *e = &s->rules;
		*rule = "modules.rules";
		if (rules_drops(e, &t->code)) {
			*why = xasprintf("dropped by %s", e->origin[3]);
			return DROP;
		}
		if (e->max_arch && t->code.num > e->max_arch) {
			*why = xasprintf("above max_arch = %u of %s", e->max_arch, e->origin[1]);
			return DROP;
		}
		if (e->min_arch && t->virt.num < e->min_arch) {
			if (t->code.kind == ARCH_REAL && t->code.num >= e->min_arch && !t->code.suffix) {
				out->virt = (struct arch){ ARCH_VIRTUAL, t->code.num, 0 };
				*why = xasprintf("compiled from compute_%u: min_arch = %u of %s", t->code.num,
						 e->min_arch, e->origin[0]);
				return UPGRADE;
			}
			*why = xasprintf("below min_arch = %u of %s", e->min_arch, e->origin[0]);
			return DROP;
		}
		for (size_t i = 0; i < e->require.n; i++) {
			struct arch r;
			unsigned num = t->code.kind == ARCH_VIRTUAL ? t->virt.num : t->code.num;
			if (arch_parse(e->require.v[i], &r) || r.num != num || t->code.suffix || t->code.kind == ARCH_LTO)
				continue;
			struct target u = { { ARCH_VIRTUAL, num, r.suffix }, { t->code.kind, num, r.suffix } };
			if (!has_arch(tk, &u))
				continue;
			*out = u;
			*why = xasprintf("require = %s of %s", e->require.v[i], e->origin[2]);
			return UPGRADE;
		}
	}

	const struct verdict_unit *vu = NULL;
	char *unit = modules_unit(t);
	if (unit && cfg->modules_probe)
		vu = verdict_find(&s->verdict, unit);
	free(unit);
	nc = t->code.kind == ARCH_LTO ? 0 : modules_candidates(t, tk, cand);

	if (cfg->modules_scan && s->scanned) {
		char *w = NULL;
		if (scan_fails(&s->scan, &t->virt, &mp->defines, &w)) {
			*rule = "modules.scan";
			for (size_t i = 0; i < nc; i++) {
				char *w2 = NULL;
				char *cu = modules_unit(&cand[i]);
				const struct verdict_unit *cv = cu && cfg->modules_probe ? verdict_find(&s->verdict, cu) : NULL;
				free(cu);
				int bad = scan_fails(&s->scan, &cand[i].virt, &mp->defines, &w2) || (cv && !cv->pass);
				free(w2);
				if (!bad) {
					*out = cand[i];
					*why = w;
					return UPGRADE;
				}
			}
			*why = w;
			return DROP;
		}
		free(w);
	}

	if (vu && !vu->pass) {
		*rule = "modules.probe";
		int unknown = 0;
		for (size_t i = 0; i < nc; i++) {
			char *cu = modules_unit(&cand[i]);
			const struct verdict_unit *cv = verdict_find(&s->verdict, cu);
			free(cu);
			if (cv && cv->pass) {
				*out = cand[i];
				*why = xstrdup(vu->reason);
				return UPGRADE;
			}
			unknown |= !cv;
		}
		if (unknown) {
			*rule = NULL;
			return KEEP;
		}
		*why = xstrdup(vu->reason);
		return DROP;
	}

	/* Kernels compiled out on this target, read from an earlier build's object (stubs.h). */
	if (cfg->modules_stubs && cfg->modules_probe && t->code.kind != ARCH_LTO) {
		char *su = modules_stub_unit("specific", t);
		const struct verdict_unit *sv = verdict_find(&s->verdict, su);
		free(su);
		for (size_t i = 0; sv && !sv->pass && i < nc; i++) {
			char *cu = modules_stub_unit("specific", &cand[i]);
			const struct verdict_unit *cv = verdict_find(&s->verdict, cu);
			free(cu);
			if (cv && cv->pass) {
				*out = cand[i];
				*why = xstrdup(sv->reason);
				*rule = modules_decided_early(&s->verdict) ? "modules.decide" : "modules.stubs";
				return UPGRADE;
			}
		}
		/* a PTX code holds what the machine code of its own arch holds */
		struct target sass = *t;
		if (t->code.kind == ARCH_VIRTUAL)
			sass.code = arch_as(&t->virt, ARCH_REAL);
		su = modules_stub_unit("stubs", &sass);
		sv = verdict_find(&s->verdict, su);
		free(su);
		if (sv && !sv->pass) {
			*why = xstrdup(sv->reason);
			*rule = "modules.stubs";
			return DROP;
		}
	}

	/* Code that only the arch-specific form compiles: plain sm_NN would build without it. */
	if (cfg->modules_scan && s->scanned && t->code.kind == ARCH_REAL && !t->code.suffix &&
	    t->virt.num == t->code.num && !t->virt.suffix) {
		static const char suffixes[] = { 'f', 'a' };
		for (int k = 0; k < 2; k++) {
			struct target u = { { ARCH_VIRTUAL, t->code.num, suffixes[k] }, { ARCH_REAL, t->code.num, suffixes[k] } };
			char *w = NULL;
			if (!has_arch(tk, &u) || !scan_specific_code(&s->scan, t->code.num, suffixes[k], &mp->defines, &w)) {
				free(w);
				continue;
			}
			*out = u;
			*why = w;
			*rule = "modules.scan";
			(void)b;
			return UPGRADE;
		}
	}
	return KEEP;
}

/* The list of one source, with notes for its changes (notes may be NULL): one note per rule and
 * reason, naming every target it dropped or upgraded. */
static void source_list(const struct module_source *s, const struct modules_plan *mp,
			const struct modules_context *ctx, struct arch_list *out, struct plan *notes)
{
	struct arch_list list;
	/* per note: rule, reason, dropped names, upgraded names */
	struct argv rule = ARGV_INIT, reason = ARGV_INIT, dropped = ARGV_INIT, upgraded = ARGV_INIT;
	arch_list_init(&list);
	for (size_t i = 0; i < mp->requested.n; i++) {
		const struct target *t = &mp->requested.v[i];
		struct target u;
		char *why = NULL;
		const char *r = NULL;
		enum decision d = decide(s, mp, ctx, t, &u, &why, &r);
		if (d != KEEP) {
			size_t k;
			for (k = 0; k < rule.n; k++)
				if (!strcmp(rule.v[k], r) && !strcmp(reason.v[k], why))
					break;
			if (k == rule.n) {
				argv_push(&rule, r);
				argv_push(&reason, why);
				argv_push(&dropped, "");
				argv_push(&upgraded, "");
			}
			char *from = code_name(t), *item;
			struct argv *into = d == DROP ? &dropped : &upgraded;
			if (d == DROP) {
				item = xasprintf("%s%s%s", into->v[k], *into->v[k] ? ", " : "", from);
			} else {
				char c2[32], v1[32];
				/* sm_80 from compute_75 built from compute_80: name the arch too */
				int virt_only = arch_equal(&u.code, &t->code);
				item = xasprintf("%s%s%s -> %s", into->v[k], *into->v[k] ? ", " : "",
						 virt_only ? arch_format(&t->virt, v1, sizeof(v1)) : from,
						 virt_only ? arch_format(&u.virt, c2, sizeof(c2))
							   : arch_format(&u.code, c2, sizeof(c2)));
			}
			argv_replace(into, k, item);
			free(item);
			free(from);
		}
		if (d != DROP)
			arch_list_add(&list, &u);
		free(why);
	}
	const char *base = lbasename(s->path);
	if (!list.n) {
		/* Never an empty build: as requested, and nvcc's own failure says why. */
		for (size_t i = 0; i < mp->requested.n; i++)
			arch_list_add(&list, &mp->requested.v[i]);
		if (notes)
			plan_note(notes, "modules", "%s: no requested target is known to build; building them "
				  "as requested", base);
	} else if (notes) {
		for (size_t k = 0; k < rule.n; k++) {
			if (*dropped.v[k])
				plan_note(notes, rule.v[k], "%s: dropped %s: %s", base, dropped.v[k], reason.v[k]);
			if (*upgraded.v[k])
				plan_note(notes, rule.v[k], "%s: %s: %s", base, upgraded.v[k], reason.v[k]);
		}
	}
	argv_release(&rule);
	argv_release(&reason);
	argv_release(&dropped);
	argv_release(&upgraded);
	*out = list;
}

void modules_source_list(const struct modules_plan *mp, size_t i, const struct modules_context *ctx,
			 struct arch_list *out, struct plan *notes)
{
	source_list(&mp->src[i], mp, ctx, out, notes);
}

int modules_source_impossible(const struct modules_plan *mp, size_t i, const struct modules_context *ctx,
			      struct argv *lines, int *certain)
{
	const struct module_source *s = &mp->src[i];
	int kept = 0;
	if (certain)
		*certain = 0;
	for (size_t k = 0; k < mp->requested.n; k++) {
		const struct target *t = &mp->requested.v[k];
		struct target u;
		char *why = NULL;
		const char *rule = NULL;
		if (decide(s, mp, ctx, t, &u, &why, &rule) != DROP) {
			kept = 1;
		} else {
			char *unit = modules_unit(t);
			const struct verdict_unit *vu = unit ? verdict_find(&s->verdict, unit) : NULL;
			char *name = code_name(t);
			argv_pushf(lines, "%s: %s", name, vu && vu->first[0] ? vu->first : why);
			if (certain && strcmp(rule, "modules.probe"))
				*certain = 1;
			free(name);
			free(unit);
		}
		free(why);
	}
	return !kept;
}

static int same_argv(const struct argv *a, const struct argv *b) { return argv_equal(a, b); }

/* Whether every element the commands must change is on the command line itself (else the
 * analysed line is written out in full, options files included in line). */
static int all_in_argv(const struct invocation *inv)
{
	for (size_t i = 0; i < inv->nargs; i++) {
		const struct inv_arg *a = &inv->args[i];
		int matters = (a->what == ARG_OPTION && a->opt->kind == OPT_KIND_TARGET) ||
			      (a->what == ARG_INPUT && a->input == INPUT_CUDA);
		if (matters && inv->argv_index[a->pos] == INVOCATION_NOT_IN_ARGV)
			return 0;
	}
	return 1;
}

enum role { KEEP_ARG, DROP_ARG, TARGET_ARG, SOURCE_ARG, OTHER_INPUT, MODE_ARG, OUTPUT_ARG };

/* Builds one command: the user's arguments with the target options replaced by `list` (where
 * the first one stood) and only the sources `want` (by index into mp->src; NULL: all). With
 * objdir set, the command compiles (-c or -dc) into objdir and keeps no other input, no mode and
 * no output. */
static void build_command(const struct invocation *inv, const char *nvcc, const struct modules_plan *mp,
			  const struct arch_list *list, const struct argv *flags, const int *want,
			  const char *objdir, struct argv *out)
{
	int inline_all = !all_in_argv(inv);
	/* the user's own spelling of the targets when the list is theirs */
	int keep_targets = !inline_all && arch_list_equal(list, &mp->requested);
	size_t n = inline_all ? inv->expanded.n : inv->argv.n;
	enum role *role = XCNEWVEC(enum role, n + 1);
	for (size_t i = 0; i < inv->nargs; i++) {
		const struct inv_arg *a = &inv->args[i];
		enum role r = KEEP_ARG;
		if (a->source == SOURCE_PREPEND || a->source == SOURCE_APPEND)
			continue;
		if (a->what == ARG_OPTION && a->opt->kind == OPT_KIND_TARGET)
			r = keep_targets ? KEEP_ARG : TARGET_ARG;
		else if (a->what == ARG_INPUT && a->input == INPUT_CUDA)
			r = SOURCE_ARG;
		else if (a->what == ARG_INPUT)
			r = OTHER_INPUT;
		else if (a->what == ARG_OPTION && (a->opt->kind == OPT_KIND_MODE || a->opt->kind == OPT_KIND_LINK))
			r = MODE_ARG; /* neither belongs to a compile into objdir */
		else if (a->what == ARG_OPTION && (!strcmp(a->opt->name, "output-file") ||
						    !strcmp(a->opt->name, "output-directory")))
			r = OUTPUT_ARG;
		else if (inline_all && a->what == ARG_OPTION && !strcmp(a->opt->name, "options-file"))
			r = DROP_ARG;
		for (unsigned k = 0; k < a->span; k++) {
			size_t idx = inline_all ? a->pos + k : inv->argv_index[a->pos + k];
			if (idx == INVOCATION_NOT_IN_ARGV)
				continue;
			if (r == SOURCE_ARG && want) {
				size_t s;
				for (s = 0; s < mp->nsrc && mp->src[s].pos != a->pos; s++)
					;
				role[idx] = s < mp->nsrc && want[s] ? SOURCE_ARG : DROP_ARG;
			} else {
				role[idx] = r;
			}
		}
	}
	if (inline_all) {
		/* @file contents and options files are written out; what came from NVCC_*_FLAGS is not */
		for (size_t i = 0; i < n; i++)
			if (inv->sources[i] == SOURCE_PREPEND || inv->sources[i] == SOURCE_APPEND)
				role[i] = DROP_ARG;
	}
	struct argv targets = ARGV_INIT;
	/* (a list the user wrote as -gencode pairs stays as written: nvcc judges it) */
	if ((inv->mode == MODE_CUBIN || inv->mode == MODE_PTX || inv->mode == MODE_OPTIX_IR ||
	     inv->mode == MODE_LTOIR) &&
	    invocation_find(inv, "gpu-architecture") && !invocation_find(inv, "gpu-code")) {
		struct arch_list one;
		arch_list_init(&one);
		for (size_t i = 0; i < list->n; i++)
			arch_list_add(&one, &list->v[i]);
		arch_list_one_code(&one, one_code_kind(inv->mode));
		arch_list_to_args(&one, &targets);
		arch_list_release(&one);
	} else {
		arch_list_to_args(list, &targets);
	}
	argv_push(out, nvcc);
	int placed = 0;
	for (size_t i = 0; i < n; i++) {
		const char *arg = inline_all ? inv->expanded.v[i] : inv->argv.v[i];
		switch (role[i]) {
		case TARGET_ARG:
			if (!placed)
				argv_pushn(out, targets.v, targets.n);
			placed = 1;
			break;
		case DROP_ARG:
			break;
		case OTHER_INPUT:
		case MODE_ARG:
		case OUTPUT_ARG:
			if (!objdir)
				argv_push(out, arg);
			break;
		default:
			argv_push(out, arg);
		}
	}
	if (!placed && !keep_targets)
		argv_pushn(out, targets.v, targets.n);
	if (objdir) {
		argv_push(out, mp->rdc ? "-dc" : "-c");
		argv_push(out, "-odir");
		argv_push(out, objdir);
	}
	for (size_t i = 0; flags && i < flags->n; i++)
		argv_push(out, flags->v[i]);
	argv_release(&targets);
	free(role);
}

static int rdc_of(const struct invocation *inv)
{
	if (inv->mode == MODE_DEVICE_C || inv->mode == MODE_DEVICE_W)
		return 1;
	const struct inv_arg *a = invocation_find(inv, "relocatable-device-code");
	return a && a->value && !strcmp(a->value, "true");
}

/* The object nvcc writes for a source compiled with -odir: DIR/<name without .cu>.o */
static char *object_of(const char *dir, const char *src);
static char *with_suffix(const char *dir, const char *src, const char *suffix);

char *modules_object(const struct modules_plan *mp, size_t i)
{
	const struct module_source *s = &mp->src[i];
	if (mp->split && mp->groups[s->group].objdir)
		return object_of(mp->groups[s->group].objdir, s->path);
	switch (mp->mode) {
	case MODE_COMPILE:
	case MODE_DEVICE_C:
		if (mp->output)
			return mp->nsrc == 1 ? xstrdup(mp->output) : NULL;
		return object_of(mp->odir ? mp->odir : ".", s->path);
	case MODE_LINK:
		return mp->nsrc == 1 ? xstrdup(mp->output ? mp->output : "a.out") : NULL;
	case MODE_FATBIN:
		/* a fatbin file: its images are read as an object's */
		if (mp->nsrc != 1)
			return NULL;
		if (mp->output)
			return xstrdup(mp->output);
		return with_suffix(mp->odir ? mp->odir : ".", s->path, ".fatbin");
	case MODE_LIB:
		/* the archive: check_stubs() reads the source's member in it */
		return xstrdup(mp->output ? mp->output : "a.a");
	default:
		return NULL;
	}
}

static char *with_suffix(const char *dir, const char *src, const char *suffix)
{
	const char *base = lbasename(src);
	const char *dot = strrchr(base, '.');
	size_t n = dot ? (size_t)(dot - base) : strlen(base);
	return xasprintf("%s/%.*s%s", dir, (int)n, base, suffix);
}

static char *object_of(const char *dir, const char *src) { return with_suffix(dir, src, ".o"); }

int modules_pass(const struct invocation *inv, const struct modules_context *ctx, struct plan *plan,
		 struct modules_plan *mp)
{
	const struct config *cfg = ctx->cfg;
	char *why = NULL;
	char *cwd = ctx->cwd ? xstrdup(ctx->cwd) : getcwd(NULL, 0);
	int changed = 0;

	if (!cwd || !modules_wanted(inv, cfg))
		goto out;
	if (arch_list_from_invocation(&mp->requested, inv, &why) || mp->requested.native || mp->requested.all ||
	    mp->requested.all_major || !mp->requested.n) {
		diag_debug("modules: targets left to nvcc%s%s", why ? ": " : "", why ? why : "");
		goto out;
	}
	mp->active = 1;
	mp->mode = inv->mode;
	mp->output = inv->output ? xstrdup(inv->output) : NULL;
	const struct inv_arg *odir = invocation_find(inv, "output-directory");
	mp->odir = odir && odir->value ? xstrdup(odir->value) : NULL;
	mp->rdc = rdc_of(inv);
	mp->hold = cfg->modules_probe && !inv->dryrun && inv->mode != MODE_RUN;
	mp->decide = cfg->modules_probe && inv->mode != MODE_RUN;
	mp->dryrun = inv->dryrun;

	struct argv includes = ARGV_INIT, dir_rules = ARGV_INIT, problems = ARGV_INIT;
	probe_base(inv, &mp->base, &mp->defines, &includes, &mp->libdirs);
	if (cfg->modules_rules) {
		char *dir = rules_dir_path(cfg->rules_dir, ctx->exe_dir);
		rules_load_dir(&dir_rules, dir, &problems);
		free(dir);
		for (size_t i = 0; i < problems.n; i++)
			warning("%s", problems.v[i]);
	}
	char *tk_root = real_toolkit_root(ctx->nvcc);

	for (size_t i = 0; i < inv->nargs; i++) {
		const struct inv_arg *a = &inv->args[i];
		if (a->what != ARG_INPUT || a->input != INPUT_CUDA)
			continue;
		mp->src = XRESIZEVEC(struct module_source, mp->src, mp->nsrc + 1);
		struct module_source *s = &mp->src[mp->nsrc++];
		memset(s, 0, sizeof(*s));
		s->path = xstrdup(inv->expanded.v[a->pos]);
		s->abs = absolute_path(s->path, cwd);
		s->pos = a->pos;
		arch_list_init(&s->list);
		argv_init(&s->flags);
		rules_effect_init(&s->rules);
		scan_init(&s->scan);
		verdict_init(&s->verdict);
		if (cfg->modules_rules)
			rules_resolve(&dir_rules, &cfg->module_rules, s->abs, &s->rules);
		argv_copy(&s->flags, &s->rules.flags);
		char *root = project_root(s->abs, cwd);
		struct scan_options so = { &includes, root, tk_root, 0, 0 };
		if (fault_inject("scan"))
			warning("modules: cannot scan %s: injected fault (NVSHIM_FAULT)", s->path);
		else
			s->scanned = !scan_file(&s->scan, s->path, &so);
		free(root);
		if (s->scanned && cfg->modules_probe) {
			make_key(s, mp, ctx, cwd);
			if (!verdict_load(&s->verdict, cfg->cache_dir, s->key))
				stats_count_hit();
		}
	}
	free(tk_root);
	argv_release(&includes);
	argv_release(&dir_rules);
	argv_release(&problems);

	/* Each source's list, then groups of equal lists and flags. */
	const struct devices *devs = NULL;
	for (size_t i = 0; i < mp->nsrc; i++) {
		struct module_source *s = &mp->src[i];
		source_list(s, mp, ctx, &s->list, plan);
		struct argv args = ARGV_INIT;
		arch_list_to_args(&s->list, &args);
		char *line = argv_to_shell(&args);
		argv_pushf(&mp->explain, "%s: %s%s", s->path, line,
			   arch_list_equal(&s->list, &mp->requested) && !s->flags.n ? " (as requested)" : "");
		free(line);
		argv_release(&args);
		/* A GPU of this machine that loses its code. */
		if (!arch_list_equal(&s->list, &mp->requested) && ctx->devices) {
			if (!devs)
				devs = ctx->devices(ctx->devices_arg);
			for (size_t d = 0; devs && d < devs->n; d++) {
				unsigned cc = devs->v[d].cc;
				if (targets_run_on(&mp->requested, cc) && !targets_run_on(&s->list, cc))
					plan_note(plan, "modules", "%s: no code left for the installed GPU of compute "
						  "capability %u.%u: it cannot run this file's kernels", lbasename(s->path),
						  cc / 10, cc % 10);
			}
		}
		s->group = -1;
		for (size_t g = 0; g < mp->ngroups; g++)
			if (arch_list_equal(&mp->groups[g].list, &s->list) && same_argv(&mp->groups[g].flags, &s->flags))
				s->group = (int)g;
		if (s->group < 0) {
			mp->groups = XRESIZEVEC(struct modules_group, mp->groups, mp->ngroups + 1);
			struct modules_group *g = &mp->groups[mp->ngroups];
			memset(g, 0, sizeof(*g));
			argv_init(&g->argv);
			arch_list_init(&g->list);
			argv_init(&g->flags);
			for (size_t k = 0; k < s->list.n; k++)
				arch_list_add(&g->list, &s->list.v[k]);
			argv_copy(&g->flags, &s->flags);
			s->group = (int)mp->ngroups++;
		}
	}

	if (mp->ngroups == 1 && !(ctx->split_link && links(inv->mode) && inv->mode != MODE_RUN)) {
		struct modules_group *g = &mp->groups[0];
		if (arch_list_equal(&g->list, &mp->requested) && !g->flags.n)
			goto out;
		build_command(inv, plan->argv.v[0], mp, &g->list, &g->flags, NULL, NULL, &g->argv);
		argv_release(&plan->argv);
		argv_copy(&plan->argv, &g->argv);
		changed = 1;
		goto out;
	}

	/* Several lists (or a compile and its link): one command each. */
	mp->split = 1;
	int *want = XCNEWVEC(int, mp->nsrc);
	int split_link = links(inv->mode);
	if (split_link) {
		const char *base = getenv("TMPDIR");
		mp->tmpdir = concat(base && *base ? base : "/tmp", "/nvshim-link-XXXXXX", NULL);
		if (!mkdtemp(mp->tmpdir)) {
			warning("cannot make a directory for objects in %s: %s; nvcc builds every source for the "
				"requested list", base && *base ? base : "/tmp", strerror(errno));
			free(mp->tmpdir);
			mp->tmpdir = NULL;
			free(want);
			for (size_t g = 0; g < mp->ngroups; g++)
				argv_release(&mp->groups[g].argv);
			mp->ngroups = 0;
			mp->split = 0;
			goto out;
		}
	}
	for (size_t g = 0; g < mp->ngroups; g++) {
		struct modules_group *gr = &mp->groups[g];
		for (size_t i = 0; i < mp->nsrc; i++)
			want[i] = mp->src[i].group == (int)g;
		if (split_link) {
			gr->objdir = xasprintf("%s/g%lu", mp->tmpdir, (unsigned long)g);
			mkdir(gr->objdir, 0700);
		}
		build_command(inv, plan->argv.v[0], mp, &gr->list, &gr->flags, want, gr->objdir, &gr->argv);
	}
	free(want);
	if (mp->ngroups > 1)
		plan_note(plan, "modules", "%lu sources, %lu different target lists: one nvcc command per list%s",
			  (unsigned long)mp->nsrc, (unsigned long)mp->ngroups, split_link ? ", then one to link" : "");
	else
		diag_note(VERBOSITY_VERBOSE, "modules: the compile and the link run as two commands, so that a "
			  "link run again (link.retry) runs the link alone");
	if (split_link) {
		/* The link: the user's command with each source replaced by its object; with relocatable
		 * device code the device link gets the targets every object has. */
		struct arch_list common;
		arch_list_init(&common);
		for (size_t k = 0; k < mp->groups[0].list.n; k++) {
			int everywhere = 1;
			for (size_t g = 1; g < mp->ngroups; g++) {
				int found = 0;
				for (size_t m = 0; m < mp->groups[g].list.n; m++)
					found |= arch_equal(&mp->groups[g].list.v[m].code, &mp->groups[0].list.v[k].code);
				everywhere &= found;
			}
			if (everywhere)
				arch_list_add(&common, &mp->groups[0].list.v[k]);
		}
		struct argv tmp = ARGV_INIT;
		/* one list (a compile and its link): the link gets that list, as nvcc's own
		 * compile-and-link would (its device link embeds an image per machine code target) */
		build_command(inv, plan->argv.v[0], mp,
			      (mp->rdc || mp->ngroups == 1) && common.n ? &common : &mp->requested, NULL, NULL,
			      NULL, &tmp);
		/* sources -> objects, in place */
		for (size_t i = 1; i < tmp.n; i++)
			for (size_t s = 0; s < mp->nsrc; s++)
				if (!strcmp(tmp.v[i], mp->src[s].path)) {
					char *obj = object_of(mp->groups[mp->src[s].group].objdir, mp->src[s].path);
					argv_replace(&tmp, i, obj);
					free(obj);
					break;
				}
		mp->link = tmp;
		arch_list_release(&common);
	}
	argv_release(&plan->argv);
	argv_copy(&plan->argv, &mp->groups[0].argv);
	changed = 1;
out:
	free(why);
	free(cwd);
	return changed;
}
