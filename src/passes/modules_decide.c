/* modules_decide(): a source's targets decided before its compile (modules.h): plain sm_NN
 * targets whose device code differs for their arch-specific forms, preprocessed and compared;
 * and, for a --dryrun whose compile a caller runs itself (sccache), targets on which every
 * kernel is compiled out, read from a private compile. */
#include "passes/modules.h"
#include "passes/modules_run.h"

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
#include "buildwide/build.h"
#include "buildwide/stats.h"

/* ---- deciding before compiling: the device code preprocessed for each form ---- */

/* The plain sm_NN targets of source i that have an f or a form and no decision yet. */
static size_t undecided(const struct modules_plan *mp, size_t i, const struct modules_context *ctx,
			struct target *out, size_t max)
{
	const struct module_source *s = &mp->src[i];
	size_t n = 0;
	for (size_t k = 0; k < s->list.n && n < max; k++) {
		const struct target *t = &s->list.v[k];
		if (t->code.kind != ARCH_REAL || t->code.suffix || t->virt.suffix || t->virt.num != t->code.num)
			continue;
		struct target cand[3];
		size_t nc = modules_candidates(t, ctx->tk, cand), forms = 0;
		for (size_t c = 0; c < nc; c++)
			forms += cand[c].code.suffix != 0;
		char *unit = modules_stub_unit("specific", t), *done = modules_stub_unit("decided", t);
		int known = verdict_find(&s->verdict, unit) || verdict_find(&s->verdict, done);
		free(unit);
		free(done);
		if (forms && !known)
			out[n++] = *t;
	}
	return n;
}

/* Words that make device code depend on the arch-specific form: the feature macros nvcc
 * defines for it, and the names libraries and the toolkit give them. */
static const char *const feature_words[] = { "__CUDA_ARCH_FEAT_SM", "__CUDA_ARCH_SPECIFIC__",
					     "__CUDA_ARCH_FAMILY_SPECIFIC__", "NV_HAS_FEATURE_SM_",
					     NULL };

/* Walks dir (files of at most 8 MiB, 16 levels, links to directories not followed) for a feature
 * word; counts what it read in *files. Returns 1 at the first one found. */
static int tree_mentions(const char *dir, int depth, size_t *files)
{
	DIR *d = depth < 16 ? opendir(dir) : NULL;
	if (!d)
		return 0;
	int found = 0;
	struct dirent *e;
	while (!found && (e = readdir(d)) && *files < 100000) {
		if (e->d_name[0] == '.')
			continue;
		char *p = concat(dir, "/", e->d_name, NULL);
		struct stat sb;
		if (!lstat(p, &sb) && S_ISDIR(sb.st_mode)) {
			found = tree_mentions(p, depth + 1, files);
		} else if (!stat(p, &sb) && S_ISREG(sb.st_mode) && sb.st_size < 8 * 1024 * 1024) {
			char *text = cache_read(p);
			(*files)++;
			for (size_t w = 0; text && feature_words[w] && !found; w++)
				found = strstr(text, feature_words[w]) != NULL;
			free(text);
		}
		free(p);
	}
	closedir(d);
	return found;
}

/* Whether a header directory (a library's) names a feature word anywhere below it. The answer is
 * cached under cache_dir/modules/libdirs, keyed by the identity (cache_file_key) of the directory
 * and of its subdirectories one level down (a library installed again changes them); a library
 * that names none (PyTorch's headers) costs one walk per version. */
static int libdir_mentions(const char *dir, const char *cache_dir)
{
	struct stat sb;
	char *key = !stat(dir, &sb) && S_ISDIR(sb.st_mode) ? cache_file_key(dir) : NULL;
	if (!key)
		return 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char *p = e->d_name[0] != '.' ? concat(dir, "/", e->d_name, NULL) : NULL;
		struct stat cb;
		char *sub = p && !lstat(p, &cb) && S_ISDIR(cb.st_mode) ? cache_file_key(p) : NULL;
		if (sub) {
			char *more = concat(key, "\t", sub, NULL);
			free(key);
			key = more;
		}
		free(sub);
		free(p);
	}
	if (d)
		closedir(d);
	char name[17];
	build_hash(dir, name);
	char *cdir = cache_dir && *cache_dir ? concat(cache_dir, "/modules/libdirs", NULL) : NULL;
	char *file = cdir ? concat(cdir, "/", name, NULL) : NULL;
	char *text = file ? cache_read(file) : NULL;
	size_t klen = strlen(key);
	int found;
	if (text && !strncmp(text, key, klen) && (text[klen] == '\n') && (text[klen + 1] == '0' || text[klen + 1] == '1')) {
		found = text[klen + 1] == '1';
	} else {
		size_t files = 0;
		double t0 = runner_now_ms();
		found = tree_mentions(dir, 0, &files);
		diag_debug("modules: %s %s the arch-specific feature macros (%lu files read, %.0f ms)", dir,
			   found ? "names" : "does not name", (unsigned long)files, runner_now_ms() - t0);
		char *entry = xasprintf("%s\n%d\n", key, found);
		if (file && cache_write(cdir, file, entry))
			diag_debug("cannot write %s: %s", file, strerror(errno));
		free(entry);
	}
	free(text);
	free(file);
	free(cdir);
	free(key);
	return found;
}

/* Whether the preprocessed text of source i could differ between a target's plain and
 * arch-specific forms, so that preprocessing both is worth its cost: the source or a project
 * header the scan read names a feature macro, or the compile takes headers from a directory
 * outside the toolkit (-I, -isystem: a library such as CUTLASS, CuTe, PyTorch's headers). A
 * source that includes only its own project's headers and the toolkit's builds the same code for
 * both forms unless its text says otherwise; the object of its compile is still read. */
/* 1 if a scanned file of source i holds `word`. */
static int scanned_mentions(const struct module_source *s, const char *word)
{
	for (size_t f = 0; f < s->scan.nfiles; f++)
		if (s->scan.files[f].text && memmem(s->scan.files[f].text, s->scan.files[f].len, word, strlen(word)))
			return 1;
	return 0;
}

/* The include directories (-I, -isystem) of the line outside the toolkit, each through `each`
 * until it returns 1; returns that. */
static int outside_libdirs(const struct modules_plan *mp, const struct modules_context *ctx,
			   int (*each)(const char *dir, const struct modules_context *ctx))
{
	char *real = lrealpath(ctx->nvcc);
	char *root = real ? toolkit_root(real) : NULL;
	free(real);
	/* a toolkit's root has its headers (a wrapper's directory is none) */
	char *runtime = root ? concat(root, "/include/cuda_runtime.h", NULL) : NULL;
	if (runtime && access(runtime, R_OK)) {
		free(root);
		root = NULL;
	}
	free(runtime);
	int found = 0;
	for (size_t k = 0; k < mp->libdirs.n && !found; k++) {
		char *dir = lrealpath(mp->libdirs.v[k]);
		size_t n = root ? strlen(root) : 0;
		int in_toolkit = root && !strncmp(dir, root, n) && (!dir[n] || dir[n] == '/');
		found = !in_toolkit && each(dir, ctx);
		free(dir);
	}
	free(root);
	return found;
}

static int libdir_has_feature_words(const char *dir, const struct modules_context *ctx)
{
	return libdir_mentions(dir, ctx->cfg->cache_dir);
}

static int decide_worth(const struct modules_plan *mp, size_t i, const struct modules_context *ctx)
{
	const struct module_source *s = &mp->src[i];
	if (!s->scanned || s->scan.truncated)
		return 1;
	for (size_t w = 0; feature_words[w]; w++)
		if (scanned_mentions(s, feature_words[w]))
			return 1;
	return outside_libdirs(mp, ctx, libdir_has_feature_words);
}

/* Source i, target t (plain sm_NN): the device code preprocessed for sm_NN and for its f and a
 * forms (`nvcc -E`, in parallel). The same text for a form means the same code; a different one
 * means code that only the form compiles (a library's feature macros: CUTLASS's
 * CUTLASS_ARCH_MMA_SM90A_ENABLED), and the target becomes that form: f where it preprocesses
 * as a does (it also runs on the family's other GPUs), else a. Records the decision in the
 * verdict; returns 1 when the target changes, 0 when it stays, 2 when the object of the compile
 * decides (f preprocesses as plain does, a does not), -1 when nothing was learnt. */
static int decide_target(struct modules_plan *mp, size_t i, const struct modules_context *ctx,
			 const struct target *t, const char *dir, size_t slot, double *ms)
{
	struct module_source *s = &mp->src[i];
	struct target cand[3], forms[3];
	size_t nc = modules_candidates(t, ctx->tk, cand), nf = 0;
	forms[nf++] = *t;
	for (size_t c = 0; c < nc; c++)
		if (cand[c].code.suffix)
			forms[nf++] = cand[c];
	struct runner_job jobs[4];
	struct argv args[3];
	char *ii[3], *err[3];
	memset(jobs, 0, sizeof(jobs));
	for (size_t f = 0; f < nf; f++) {
		char v[32], c[32];
		argv_init(&args[f]);
		argv_push(&args[f], ctx->nvcc);
		argv_pushn(&args[f], mp->base.v, mp->base.n);
		argv_push(&args[f], "-E");
		argv_pushf(&args[f], "-gencode=arch=%s,code=%s", arch_format(&forms[f].virt, v, sizeof(v)),
			   arch_format(&forms[f].code, c, sizeof(c)));
		argv_push(&args[f], s->path);
		ii[f] = xasprintf("%s/s%lu-%lu.ii", dir, (unsigned long)slot, (unsigned long)f);
		err[f] = xasprintf("%s/s%lu-%lu.err", dir, (unsigned long)slot, (unsigned long)f);
		jobs[f].path = ctx->nvcc;
		jobs[f].args = &args[f];
		jobs[f].out_file = ii[f];
		jobs[f].err_file = err[f];
	}
	double t0 = runner_now_ms();
	runner_run_many(jobs, nf, modules_jobs_of(ctx->cfg));
	*ms += runner_now_ms() - t0;
	int ok = !runner_signal();
	for (size_t f = 0; f < nf; f++)
		ok &= !jobs[f].res.status;
	int result = -1;
	char c0[32], c1[32];
	arch_format(&t->code, c0, sizeof(c0));
	/* each text read once; a form's text that cannot be read decides nothing */
	char *text[3] = { NULL, NULL, NULL };
	int broken = 0;
	for (size_t f = 0; ok && f < nf; f++)
		broken |= !(text[f] = cache_read(ii[f]));
	if (ok) {
		if (!s->verdict.deps.n)
			modules_deps_of(ii[0], &s->verdict.deps);
		/* same[f]: form f preprocesses as plain does; fa: f as a does */
		int same[3] = { 1, 1, 1 }, differ = 0;
		for (size_t f = 1; !broken && f < nf; f++)
			differ |= !(same[f] = !strcmp(text[0], text[f]));
		int fa = !broken && nf == 3 && !strcmp(text[1], text[2]);
		char *plain_unit = modules_stub_unit("specific", t), *done = modules_stub_unit("decided", t);
		if (!broken)
			verdict_set(&s->verdict, done, 1, "", "");
		free(done);
		if (broken) {
			result = -1;
		} else if (!differ) {
			verdict_set(&s->verdict, plain_unit, 1, "", "");
			result = 0;
		} else if (nf == 3 && same[1] == 1) {
			/* f as plain, a not: only the object can tell whether a kernel needs a (which would
			 * cost sm_103 / sm_121 their code); the check after the compile decides */
			result = 2;
		} else {
			/* forms[1] is f when there are three (modules_candidates: f before a): f where it
			 * preprocesses as a does; where they differ too, f, and the object of the compile
			 * says whether a builds kernels f compiled out (check_stubs) */
			size_t best = nf == 3 ? 1 : nf - 1;
			char *reason = xasprintf("the device code differs when compiled for %s (code behind "
						 "arch-specific feature macros, which plain %s builds without); "
						 "decided before compiling",
						 arch_format(&forms[best].code, c1, sizeof(c1)), c0);
			verdict_set(&s->verdict, plain_unit, 0, reason, "");
			/* f chosen where a preprocesses otherwise: what only f compiles that traps, for the
			 * object to show whether a kernel holds it (check_stubs) */
			if (nf == 3 && fa != 1)
				modules_own_code_store(&s->verdict, &forms[1], text[1], text[2]);
			for (size_t f = 1; f < nf; f++) {
				char *u = modules_stub_unit("specific", &forms[f]);
				/* a as well where it preprocesses as f; left to the object where not */
				if (f == best || fa == 1 || nf == 2)
					verdict_set(&s->verdict, u, f == best || fa == 1, "", "");
				free(u);
			}
			free(reason);
			result = 1;
		}
		free(plain_unit);
	} else if (!runner_signal()) {
		diag_note(VERBOSITY_VERBOSE, "modules: %s: the device code could not be preprocessed for %s and "
			  "its arch-specific forms; the object decides after the compile", s->path, c0);
	}
	for (size_t f = 0; f < nf; f++) {
		argv_release(&args[f]);
		free(ii[f]);
		free(err[f]);
		free(text[f]);
	}
	return result;
}


static int decide_forms(struct modules_plan *mp, size_t i, const struct modules_context *ctx, struct plan *plan,
			char **pdir);

/* Whether a decision before compiling of source `path` goes ahead: 1, with the private
 * directory made (*pdir); 0 when it is not worth it (`unworthy` said at debug level) or a fault
 * is injected (NVSHIM_FAULT=probe: "cannot <what> before compiling", what holding one %s for the
 * path); -1 when no directory could be made. */
static int decide_start(int worth, const char *path, const char *unworthy, const char *what, char **pdir)
{
	if (!worth) {
		diag_debug("modules: %s: %s", path, unworthy);
		return 0;
	}
	if (fault_inject("probe")) {
		char *w = xasprintf(what, path);
		warning("modules: cannot %s before compiling: injected fault (NVSHIM_FAULT)", w);
		free(w);
		return 0;
	}
	if (!*pdir && !(*pdir = modules_private_dir("decide", "to decide targets")))
		return -1;
	return 1;
}

static int libdir_exists(const char *dir, const struct modules_context *ctx)
{
	(void)ctx;
	struct stat sb;
	return !stat(dir, &sb) && S_ISDIR(sb.st_mode);
}

/* Whether source i may hold kernels that a target compiles out: its text names __CUDA_ARCH__,
 * or it includes headers the scan does not read (a library's, through -I or -isystem outside
 * the toolkit), or it was not scanned whole. */
static int stubs_worth(const struct modules_plan *mp, size_t i, const struct modules_context *ctx)
{
	const struct module_source *s = &mp->src[i];
	if (!s->scanned || s->scan.truncated || scanned_mentions(s, "__CUDA_ARCH__"))
		return 1;
	return outside_libdirs(mp, ctx, libdir_exists);
}

/* The machine-code targets of source s: how many (*real), how many known to compile every
 * kernel out (*failing, a failing "stubs:" unit); returns how many have no "stubs:" unit yet. */
static size_t stubs_open(const struct module_source *s, size_t *real, size_t *failing)
{
	size_t open = 0;
	*real = *failing = 0;
	for (size_t k = 0; k < s->list.n; k++) {
		const struct target *t = &s->list.v[k];
		if (t->code.kind != ARCH_REAL)
			continue;
		(*real)++;
		char *unit = modules_stub_unit("stubs", t);
		const struct verdict_unit *u = verdict_find(&s->verdict, unit);
		open += u == NULL;
		*failing += u && !u->pass;
		free(unit);
	}
	return open;
}

/* Source i of a --dryrun, whose compile a caller runs itself from the steps nvcc prints
 * (sccache): the object is never nvshim's to read after it, so whether a target compiles every
 * kernel out (stubs.h) is decided before it, by a private compile of the source for the same
 * targets read as check_stubs() reads a compile's object. Its findings, and every other target
 * of the compile as checked (modules_mark_checked()), are recorded in the verdict, so that the
 * next --dryrun of the same source compiles nothing. Only for a source with two machine-code targets or more (a stub is told by
 * another target's code), one of them not yet checked, that may hold such kernels
 * (stubs_worth()). Returns 1 when a target goes. */
static int stubs_before(struct modules_plan *mp, size_t i, const struct modules_context *ctx, struct plan *plan,
			char **pdir)
{
	struct module_source *s = &mp->src[i];
	size_t real, failing;
	if (!s->key[0] || stubs_open(s, &real, &failing) == 0 || real < 2)
		return 0;
	if (decide_start(stubs_worth(mp, i, ctx), s->path,
			 "no __CUDA_ARCH__ in its text and no library headers: no target of it is compiled for "
			 "stubs before a --dryrun",
			 "check the targets of %s for stubs", pdir) <= 0)
		return 0;
	/* checked meanwhile by a --dryrun of the same source that held the lock (sccache-dist runs
	 * two at once): its findings are this one's */
	int fd = modules_verdict_relock(s, ctx->cfg->cache_dir);
	size_t open = stubs_open(s, &real, &failing);
	verdict_unlock(fd);
	if (!open)
		return failing > 0;
	struct argv args = ARGV_INIT, list = ARGV_INIT;
	argv_push(&args, ctx->nvcc);
	argv_pushn(&args, mp->base.v, mp->base.n);
	for (size_t k = 0; k < s->list.n; k++) {
		char v[32], c[32];
		const struct target *t = &s->list.v[k];
		argv_pushf(&args, "-gencode=arch=%s,code=%s", arch_format(&t->virt, v, sizeof(v)),
			   arch_format(&t->code, c, sizeof(c)));
		argv_push(&list, c);
	}
	char *obj = xasprintf("%s/stubs%lu.o", *pdir, (unsigned long)i);
	char *err = xasprintf("%s/stubs%lu.err", *pdir, (unsigned long)i);
	argv_push(&args, mp->rdc ? "-dc" : "-c");
	argv_push(&args, "-o");
	argv_push(&args, obj);
	argv_push(&args, s->path);
	struct runner_job job;
	memset(&job, 0, sizeof(job));
	job.path = ctx->nvcc;
	job.args = &args;
	job.err_file = err;
	double t0 = runner_now_ms();
	runner_run_many(&job, 1, 1);
	double ms = runner_now_ms() - t0;
	int changed = 0;
	char *targets = argv_join(&list, ", ");
	if (!runner_signal() && !job.res.status) {
		stats_count_probes(1);
		plan_note(plan, "modules.method", "%s: its targets checked for kernels compiled out before compiling "
			  "(a --dryrun: its caller runs the compile, whose object nvshim does not read): built "
			  "for %s (%.0f ms)", lbasename(s->path), targets, ms);
		changed = modules_check_stubs_in(mp, i, ctx, plan, 1, xstrdup(obj));
		/* what it left open (targets with their code, some kernels compiled out, no kernel, an
		 * object it could not read) is checked: the next --dryrun compiles nothing */
		modules_mark_checked(mp, i, ctx, "checked before a --dryrun");
	} else if (!runner_signal()) {
		/* a compile that fails fails the same way in the caller's steps, with nvcc's words; an
		 * edit that mends it is another verdict */
		diag_note(VERBOSITY_VERBOSE, "modules: %s could not be compiled privately for %s (status %d): its "
			  "targets are left as they are", s->path, targets, job.res.status);
		modules_mark_checked(mp, i, ctx, "not checked: the private compile before a --dryrun failed");
	}
	free(targets);
	unlink(obj);
	unlink(err);
	free(obj);
	free(err);
	argv_release(&args);
	argv_release(&list);
	return changed;
}

int modules_decide(struct modules_plan *mp, const struct modules_context *ctx, struct plan *plan)
{
	const struct config *cfg = ctx->cfg;
	int changed = 0;
	if (!mp->active || !mp->decide || !cfg->modules_stubs || !cfg->modules_probe || !cfg->cache_dir ||
	    !*cfg->cache_dir || mp->mode == MODE_PREPROCESS)
		return 0;
	char *dir = NULL;
	for (size_t i = 0; i < mp->nsrc && !runner_signal(); i++) {
		int forms = decide_forms(mp, i, ctx, plan, &dir);
		if (forms < 0)
			return changed;
		changed |= forms & 1;
		/* a --dryrun's stub targets, where no form moved (the list is as it compiles) */
		if (mp->dryrun && !(forms & 2) && !runner_signal())
			changed |= stubs_before(mp, i, ctx, plan, &dir);
	}
	if (dir) {
		cache_remove_dir(dir);
		free(dir);
	}
	return changed;
}

/* modules_decide() for source i's plain targets that have arch-specific forms: bit 0 of the
 * result when the list changes, bit 1 when a form moved; -1 when no private directory could be
 * made. */
static int decide_forms(struct modules_plan *mp, size_t i, const struct modules_context *ctx, struct plan *plan,
			char **pdir)
{
	const struct config *cfg = ctx->cfg;
	int changed = 0;
	struct module_source *s = &mp->src[i];
	struct target todo[8];
	size_t before = s->key[0] ? undecided(mp, i, ctx, todo, 8) : 0;
	if (!before)
		return 0;
	int ready = decide_start(decide_worth(mp, i, ctx), s->path,
				 "no library headers and no feature macro in its own text: its targets are not "
				 "preprocessed for their arch-specific forms",
				 "decide the targets of %s", pdir);
	if (ready <= 0)
		return ready;
	char *dir = *pdir;
	{
		int fd = modules_verdict_relock(s, cfg->cache_dir);
		size_t n = undecided(mp, i, ctx, todo, 8);
		/* Targets decided meanwhile by a compile of the same source and options that held the
		 * lock (sccache-dist runs two nvcc --dryrun at once): its verdict is this one's. */
		changed |= n < before;
		double ms = 0;
		int learnt = 0, moved = 0, left = 0;
		for (size_t k = 0; k < n && !runner_signal(); k++) {
			int r = decide_target(mp, i, ctx, &todo[k], dir, k, &ms);
			learnt |= r >= 0;
			moved |= r == 1;
			left |= r == 2;
		}
		if (learnt) {
			char c0[32];
			verdict_set(&s->verdict, "method:specific", 1,
				    moved ? "preprocess" : left ? "preprocess, then the object" : "preprocess, no change", "");
			if (verdict_store(&s->verdict, cfg->cache_dir, s->key))
				warning("modules: cannot store the verdict for %s in %s: %s", s->path, cfg->cache_dir,
					strerror(errno));
			plan_note(plan, "modules.method", "%s: targets decided before compiling by preprocessing the "
				  "device code for %s and its arch-specific forms: %s (%.0f ms)", lbasename(s->path),
				  arch_format(&todo[0].code, c0, sizeof(c0)),
				  moved ? "they differ" : left ? "only the a form differs, the object decides" : "the same", ms);
			stats_count_probes(1);
		}
		changed |= moved;
		verdict_unlock(fd);
		return changed | (moved ? 2 : 0);
	}
}

