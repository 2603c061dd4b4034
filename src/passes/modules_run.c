/* modules_run(): the commands the modules pass planned, the probe, and the held stderr. */
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
#include "buildwide/threads.h"
#include "buildwide/build.h"
#include "buildwide/stats.h"
#include "diagnose/diagnose.h"
#include "passes/link.h"
#include "passes/stubs.h"

unsigned modules_jobs_of(const struct config *cfg)
{
	if (cfg->jobs)
		return (unsigned)cfg->jobs;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}


/* A private directory under TMPDIR for the commands nvshim runs itself (xmalloc'ed), or NULL
 * after a warning that says what it was for (NULL `what`: nothing said). */
char *modules_private_dir(const char *name, const char *what)
{
	const char *base = getenv("TMPDIR");
	char *dir = concat(base && *base ? base : "/tmp", "/nvshim-", name, "-XXXXXX", NULL);
	if (mkdtemp(dir))
		return dir;
	if (what)
		warning("modules: cannot make a directory %s: %s", what, strerror(errno));
	free(dir);
	return NULL;
}

/* Takes the lock of source s's verdict and reads it again: another build may have learnt
 * something meanwhile. Returns the lock, for verdict_unlock(). */
int modules_verdict_relock(struct module_source *s, const char *cache_dir)
{
	int fd = verdict_lock(cache_dir, s->key);
	struct verdict fresh;
	verdict_init(&fresh);
	if (!verdict_load(&fresh, cache_dir, s->key)) {
		verdict_release(&s->verdict);
		s->verdict = fresh;
	}
	return fd;
}

/* Why a probe failed, and its first error line, from its stderr. Returns -1 when it printed no
 * error at all (it could not run, it was killed): nothing is learnt, nothing is recorded. */
static int probe_reason(const char *err_file, int status, char **reason, char **first)
{
	char *text = cache_read(err_file);
	struct diagnosis d;
	diagnose_init(&d);
	diagnose_stderr(&d, text ? text : "");
	const struct diagnose_finding *f = NULL;
	for (size_t i = 0; i < d.n && !f; i++)
		if (d.v[i].kind != DIAGNOSE_ERROR)
			f = &d.v[i];
	const struct diagnose_finding *any = d.n ? &d.v[0] : NULL;
	if (f || any) {
		const char *line = (f ? f : any)->text;
		const char *e = strstr(line, "; error   : ");
		*reason = diagnose_reason(f ? f : any);
		/* "ptxas /tmp/tmpxft_..ptx, line 26; error   : X": the temporary file says nothing */
		*first = !strncmp(line, "ptxas ", 6) && e ? concat("ptxas error   : ", e + 12, NULL) : xstrdup(line);
	}
	(void)status;
	diagnose_release(&d);
	free(text);
	return f || any ? 0 : -1;
}

/* The files nvcc -E read, from its line markers. */
void modules_deps_of(const char *ii, struct argv *deps)
{
	char *text = cache_read(ii);
	struct argv seen = ARGV_INIT;
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (line[0] == '#' && line[1] == ' ' && line[2] >= '0' && line[2] <= '9') {
			char *q = strchr(line, '"');
			char *e = q ? strrchr(q + 1, '"') : NULL;
			if (e && q[1] != '<') {
				*e = '\0';
				int dup = 0;
				for (size_t i = 0; i < seen.n && !dup; i++)
					dup = !strcmp(seen.v[i], q + 1);
				if (!dup) {
					argv_push(&seen, q + 1);
					char *dep = verdict_dep(q + 1);
					if (dep)
						argv_push_owned(deps, dep);
				}
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	argv_release(&seen);
	free(text);
}

struct probe {
	char *unit;
	struct target t;
	struct argv args;
	char *err;
	char *out;
};

static void probe_command(const struct modules_plan *mp, const char *nvcc, const struct module_source *s,
			  const struct target *t, const char *dir, size_t k, struct probe *p)
{
	char v[32], c[32];
	struct target u = *t;
	int ptx = mp->mode == MODE_PTX;
	if (u.code.kind != ARCH_REAL || ptx)
		u.code = ptx ? u.virt : arch_as(&u.virt, ARCH_REAL);
	argv_init(&p->args);
	argv_push(&p->args, nvcc);
	argv_pushn(&p->args, mp->base.v, mp->base.n);
	if (mp->rdc && (mp->mode == MODE_DEVICE_C || mp->mode == MODE_DEVICE_W))
		argv_push(&p->args, "-rdc=true");
	argv_push(&p->args, ptx ? "-ptx" : "-cubin");
	argv_pushf(&p->args, "-gencode=arch=%s,code=%s", arch_format(&u.virt, v, sizeof(v)),
		   arch_format(&u.code, c, sizeof(c)));
	argv_push(&p->args, "-o");
	argv_pushf(&p->args, "%s/u%lu.%s", dir, (unsigned long)k, ptx ? "ptx" : "cubin");
	argv_push(&p->args, s->path);
	p->err = xasprintf("%s/u%lu.err", dir, (unsigned long)k);
	p->out = NULL;
}

/* Runs the probes of one round; records each unit in the verdict. */
static void run_round(struct probe *pv, size_t n, const struct config *cfg, struct verdict *v,
		      const char *nvcc, const char *dir, const char *src_path, struct argv *pp_deps,
		      const struct argv *pp_base)
{
	struct runner_job *jobs = XCNEWVEC(struct runner_job, n + 1);
	struct argv pp = ARGV_INIT;
	char *ii = NULL;
	for (size_t i = 0; i < n; i++) {
		jobs[i].path = nvcc;
		jobs[i].args = &pv[i].args;
		jobs[i].err_file = pv[i].err;
	}
	size_t total = n;
	if (pp_deps) {
		/* the preprocessed source names every file it came from */
		ii = xasprintf("%s/pp.ii", dir);
		argv_push(&pp, nvcc);
		argv_pushn(&pp, pp_base->v, pp_base->n);
		argv_push(&pp, "-E");
		argv_push(&pp, src_path);
		jobs[total].path = nvcc;
		jobs[total].args = &pp;
		jobs[total].out_file = ii;
		total++;
	}
	double t0 = runner_now_ms();
	runner_run_many(jobs, total, (unsigned)(cfg->jobs ? cfg->jobs : modules_jobs_of(cfg)));
	diag_note(VERBOSITY_VERBOSE, "modules: %zu probe compile%s in %.0f ms", n, n == 1 ? "" : "s",
		  runner_now_ms() - t0);
	/* Probes a signal stopped say nothing about the source: none is recorded. */
	for (size_t i = 0; i < n && !runner_signal(); i++) {
		if (!jobs[i].res.status) {
			verdict_set(v, pv[i].unit, 1, "", "");
			continue;
		}
		char *reason = NULL, *first = NULL;
		if (!jobs[i].res.signal && !probe_reason(pv[i].err, jobs[i].res.status, &reason, &first))
			verdict_set(v, pv[i].unit, 0, reason, first);
		else
			diag_note(VERBOSITY_VERBOSE, "modules: the probe of %s for %s said nothing (status %d); "
				  "not recorded", src_path, pv[i].unit, jobs[i].res.status);
		free(reason);
		free(first);
	}
	if (pp_deps && !jobs[n].res.status && !runner_signal())
		modules_deps_of(ii, pp_deps);
	free(ii);
	argv_release(&pp);
	free(jobs);
}

static void free_probes(struct probe *pv, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(pv[i].unit);
		argv_release(&pv[i].args);
		free(pv[i].err);
		free(pv[i].out);
	}
	free(pv);
}

static int has_unit(struct probe *pv, size_t n, const char *unit)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(pv[i].unit, unit))
			return 1;
	return 0;
}

/* Probes every unit of the list source i was built with, and then the upgrades of those that
 * fail, unless the verdict has them. Returns the number of probes run. */
static size_t probe_source(struct modules_plan *mp, size_t i, const struct modules_context *ctx, const char *nvcc)
{
	struct module_source *s = &mp->src[i];
	const struct config *cfg = ctx->cfg;
	size_t ran = 0;
	if (!s->key[0])
		return 0;
	if (fault_inject("probe")) {
		warning("modules: cannot probe %s: injected fault (NVSHIM_FAULT)", s->path);
		return 0;
	}
	char *dir = modules_private_dir("probe", "for probes");
	if (!dir)
		return 0;
	int fd = modules_verdict_relock(s, cfg->cache_dir);
	for (int round = 0; round < 2 && !runner_signal(); round++) {
		struct probe *pv = NULL;
		size_t n = 0;
		for (size_t k = 0; k < s->list.n; k++) {
			struct target cand[3];
			size_t nc = 1;
			cand[0] = s->list.v[k];
			if (round == 1) {
				char *u = modules_unit(&s->list.v[k]);
				const struct verdict_unit *vu = u ? verdict_find(&s->verdict, u) : NULL;
				free(u);
				nc = vu && !vu->pass ? modules_candidates(&s->list.v[k], ctx->tk, cand) : 0;
			}
			for (size_t c = 0; c < nc; c++) {
				char *u = modules_unit(&cand[c]);
				if (!u || verdict_find(&s->verdict, u) || has_unit(pv, n, u)) {
					free(u);
					continue;
				}
				pv = XRESIZEVEC(struct probe, pv, n + 1);
				pv[n].unit = u;
				pv[n].t = cand[c];
				probe_command(mp, nvcc, s, &cand[c], dir, ran + n, &pv[n]);
				n++;
			}
		}
		int want_deps = round == 0 && !s->verdict.deps.n;
		if (n || want_deps)
			run_round(pv, n, cfg, &s->verdict, nvcc, dir, s->path, want_deps ? &s->verdict.deps : NULL,
				  &mp->base);
		ran += n;
		free_probes(pv, n);
	}
	if (ran && !runner_signal() && verdict_store(&s->verdict, cfg->cache_dir, s->key))
		warning("modules: cannot store the verdict for %s in %s: %s", s->path, cfg->cache_dir,
			strerror(errno));
	verdict_unlock(fd);
	cache_remove_dir(dir);
	free(dir);
	return ran;
}

/* One finding of check_stubs(), to be recorded in the verdict. */
struct stub_finding {
	char *unit;
	int pass;
	char *reason;
};

static void add_finding(struct stub_finding **v, size_t *n, char *unit, int pass, char *reason)
{
	*v = XRESIZEVEC(struct stub_finding, *v, *n + 1);
	(*v)[(*n)++] = (struct stub_finding){ unit, pass, reason };
}

/* "A, B and 3 more" for the kernels of rows[0..n), demangled. */
static char *kernel_list(const struct stubs *st, const size_t *rows, size_t n)
{
	char *out = xstrdup("");
	for (size_t i = 0; i < n && i < 3; i++) {
		char *name = stubs_kernel_name(st->kernel[rows[i]]);
		char *more = concat(out, i ? ", " : "", name, NULL);
		free(name);
		free(out);
		out = more;
	}
	if (n > 3) {
		char *more = xasprintf("%s and %lu more", out, (unsigned long)(n - 3));
		free(out);
		out = more;
	}
	return out;
}

/* Plain sm_NN of source i has trivial kernels in col: builds the source for the f and a forms
 * of the target (-cubin, in parallel, with `nvcc -E` for the verdict's files when it has none)
 * and says which form builds real bodies for them. Adds the findings; returns 1 when a form
 * does (the list changes). */
static int compare_specific(struct modules_plan *mp, size_t i, const struct modules_context *ctx,
			    const struct target *t, const struct stubs *st, size_t col,
			    struct stub_finding **found, size_t *nfound, const struct target *only)
{
	struct module_source *s = &mp->src[i];
	struct target cand[3], forms[2];
	size_t nc = only ? 0 : modules_candidates(t, ctx->tk, cand), nf = 0;
	if (only)
		forms[nf++] = *only;
	for (size_t c = 0; c < nc; c++)
		if (cand[c].code.suffix)
			forms[nf++] = cand[c];
	if (!nf)
		return 0;
	size_t *rows = XNEWVEC(size_t, st->nk + 1), nrows = 0;
	for (size_t k = 0; k < st->nk; k++)
		if (stubs_trivial(st, k, col) || stubs_trap_paths(st, k, col))
			rows[nrows++] = k;
	char *dir = modules_private_dir("stubs", "to compare targets");
	if (!dir) {
		free(rows);
		return 0;
	}
	struct probe *pv = XCNEWVEC(struct probe, nf);
	for (size_t c = 0; c < nf; c++) {
		pv[c].unit = modules_unit(&forms[c]);
		pv[c].t = forms[c];
		probe_command(mp, ctx->nvcc, s, &forms[c], dir, c, &pv[c]);
	}
	char v[32], c0[32];
	diag_note(VERBOSITY_VERBOSE, "modules: %s has %lu kernel%s that plain %s may compile out (trivial, or "
		  "with trap paths): building its "
		  "arch-specific form%s to compare", s->path, (unsigned long)nrows, nrows == 1 ? "" : "s",
		  arch_format(&t->code, c0, sizeof(c0)), nf == 1 ? "" : "s");
	run_round(pv, nf, ctx->cfg, &s->verdict, ctx->nvcc, dir, s->path,
		  s->verdict.deps.n ? NULL : &s->verdict.deps, &mp->base);
	size_t gained[2] = { 0, 0 }, best = 0;
	size_t *won[2] = { XNEWVEC(size_t, nrows + 1), XNEWVEC(size_t, nrows + 1) };
	for (size_t c = 0; c < nf; c++) {
		char *cubin = xasprintf("%s/u%lu.cubin", dir, (unsigned long)c), *why = NULL;
		struct stubs cs;
		stubs_init(&cs);
		int ok = !stubs_read(&cs, cubin, &why);
		for (size_t r = 0; ok && r < nrows; r++) {
			unsigned long long plain = st->code[rows[r] * st->nt + col];
			unsigned traps = st->traps[rows[r] * st->nt + col];
			for (size_t k = 0; k < cs.nk; k++)
				if (!strcmp(cs.kernel[k], st->kernel[rows[r]]) &&
				    (stubs_trivial(st, rows[r], col) ? stubs_real_over(cs.code[k], plain)
								     : stubs_traps_fewer(cs.traps[k], traps))) {
					won[c][gained[c]++] = rows[r];
					break;
				}
		}
		if (gained[c] > gained[best])
			best = c;
		free(why);
		stubs_release(&cs);
		free(cubin);
	}
	/* candidates come f first: f wins where it builds as much as a ("the same code") */
	int changed = gained[best] > 0;
	/* only: t is the f form decided before compiling, and a builds what it compiles out */
	struct target plain = { { ARCH_VIRTUAL, t->code.num, 0 }, { ARCH_REAL, t->code.num, 0 } };
	char *plain_unit = modules_stub_unit("specific", only ? &plain : t);
	if (only) {
		if (changed) {
			add_finding(found, nfound, modules_stub_unit("specific", t), 0, xstrdup(""));
			add_finding(found, nfound, xstrdup("method:specific"), 1, xstrdup("preprocess, then the object"));
		} else {
			free(plain_unit);
			plain_unit = NULL;
		}
		add_finding(found, nfound, modules_stub_unit("specific", only), changed, xstrdup(""));
	}
	if (!plain_unit) {
		/* the f form stays */
	} else if (changed) {
		char *names = kernel_list(st, won[best], gained[best]);
		add_finding(found, nfound, plain_unit,
			    0, xasprintf("%lu kernel%s compiled out on %s%s that %s builds (code behind "
					 "arch-specific feature macros: an empty body, or paths reduced to traps): %s", (unsigned long)gained[best],
					 gained[best] == 1 ? " is" : "s are", only ? "" : "plain ", arch_format(&t->code, c0, sizeof(c0)),
					 arch_format(&forms[best].code, v, sizeof(v)), names));
		free(names);
		for (size_t c = 0; c < nf && !only; c++)
			add_finding(found, nfound, modules_stub_unit("specific", &forms[c]),
				    gained[c] == gained[best], xstrdup(""));
	} else if (!only) {
		add_finding(found, nfound, plain_unit, 1, xstrdup(""));
	} else {
		free(plain_unit);
	}
	free(won[0]);
	free(won[1]);
	free(rows);
	free_probes(pv, nf);
	cache_remove_dir(dir);
	free(dir);
	return changed;
}

/* The trapping code only the f form `f` compiles (its text against the a form's): the strings
 * that find it in an object (stubs_own_literals()), in the verdict as units "own:sm_100f" (pass:
 * known; fail: some of it has no string to find it by) and "own:sm_100f:K", each string up to
 * its first control character (the verdict's fields are tab-separated lines). */
void modules_own_code_store(struct verdict *v, const struct target *f, const char *f_text, const char *a_text)
{
	char c[32], *head = xasprintf("own:%s", arch_format(&f->code, c, sizeof(c)));
	struct argv lits = ARGV_INIT, kept = ARGV_INIT;
	int known = !stubs_own_literals(f_text, a_text, &lits);
	for (size_t k = 0; known && k < lits.n; k++) {
		size_t n = 0;
		while (lits.v[k][n] && (unsigned char)lits.v[k][n] >= ' ')
			n++;
		char *cut = xstrndup(lits.v[k], n);
		int seen = n < 12;
		for (size_t j = 0; !seen && j < kept.n; j++)
			seen = !strcmp(kept.v[j], cut);
		if (!seen)
			argv_push(&kept, cut);
		free(cut);
	}
	known = known && kept.n <= 64;
	verdict_set(v, head, known, "", "");
	for (size_t k = 0; known && k < kept.n; k++) {
		char *u = xasprintf("%s:%lu", head, (unsigned long)k);
		verdict_set(v, u, 1, kept.v[k], "");
		free(u);
	}
	argv_release(&lits);
	argv_release(&kept);
	free(head);
}

/* modules_own_code_store()'s strings for the f form t; 1 when they are known (possibly none). */
static int own_code_load(const struct verdict *v, const struct target *t, struct argv *out)
{
	char c[32], *head = xasprintf("own:%s", arch_format(&t->code, c, sizeof(c)));
	const struct verdict_unit *vu = verdict_find(v, head);
	int known = vu && vu->pass;
	for (unsigned long k = 0; known; k++) {
		char *u = xasprintf("%s:%lu", head, k);
		const struct verdict_unit *lit = verdict_find(v, u);
		free(u);
		if (!lit)
			break;
		argv_push(out, lit->reason);
	}
	free(head);
	return known;
}

/* After source i built: the kernels in what nvcc wrote (stubs.h). With `learn` (and a verdict
 * key), a plain target whose kernels only its f/a form builds is compared and upgraded, and a
 * target on which every kernel is a stub is dropped: the findings go into the verdict and 1 is
 * returned when the list changes (the caller plans again). Kernels that are stubs on a target
 * whose other kernels are real get a warning. */
/* The member of an archive that nvcc -lib made of a source: <stem>.o, or nvcc's temporary name
 * for it (tmpxft_0000389d_00000000-9_<stem>.o). */
struct member_of {
	const char *name; /* the source's base name */
	const unsigned char *data;
	size_t size;
};

static int find_member(const struct ar_member *m, void *arg)
{
	struct member_of *w = arg;
	const char *dot = strrchr(w->name, '.');
	size_t n = dot ? (size_t)(dot - w->name) : strlen(w->name);
	const char *mn = lbasename(m->name);
	size_t ml = strlen(mn);
	if (!strncmp(mn, "tmpxft_", 7) && ml > n + 3 && mn[ml - n - 3] == '_')
		mn += ml - n - 2;
	if (strncmp(mn, w->name, n) || strcmp(mn + n, ".o") || !m->data)
		return 0;
	w->data = m->data;
	w->size = m->size;
	return 1;
}

/* Records findings (taken) in source i's verdict: merged into what the cache holds now, under
 * its lock, with the files the source came from when the verdict has none yet. */
static void store_findings(struct modules_plan *mp, size_t i, const struct modules_context *ctx,
			   struct stub_finding *found, size_t nfound)
{
	struct module_source *s = &mp->src[i];
	if (nfound && !s->verdict.deps.n) {
		/* the files the source came from, so that a changed library header makes it stale */
		char *dir = modules_private_dir("stubs", NULL);
		if (dir) {
			run_round(NULL, 0, ctx->cfg, &s->verdict, ctx->nvcc, dir, s->path, &s->verdict.deps, &mp->base);
			cache_remove_dir(dir);
		}
		free(dir);
	}
	if (nfound) {
		int fd = verdict_lock(ctx->cfg->cache_dir, s->key);
		struct verdict fresh;
		verdict_init(&fresh);
		if (!verdict_load(&fresh, ctx->cfg->cache_dir, s->key)) {
			for (size_t d = 0; !fresh.deps.n && d < s->verdict.deps.n; d++)
				argv_push(&fresh.deps, s->verdict.deps.v[d]);
			for (size_t u = 0; u < s->verdict.n; u++)
				if (!verdict_find(&fresh, s->verdict.v[u].name))
					verdict_set(&fresh, s->verdict.v[u].name, s->verdict.v[u].pass,
						    s->verdict.v[u].reason, s->verdict.v[u].first);
			verdict_release(&s->verdict);
			s->verdict = fresh;
		}
		for (size_t f = 0; f < nfound; f++) {
			verdict_set(&s->verdict, found[f].unit, found[f].pass, found[f].reason, "");
			free(found[f].unit);
			free(found[f].reason);
		}
		if (verdict_store(&s->verdict, ctx->cfg->cache_dir, s->key))
			warning("modules: cannot store the verdict for %s in %s: %s", s->path, ctx->cfg->cache_dir,
				strerror(errno));
		verdict_unlock(fd);
	}
	free(found);
}

/* check_stubs() of the object at obj (taken). */
int modules_check_stubs_in(struct modules_plan *mp, size_t i, const struct modules_context *ctx, struct plan *plan,
			   int learn, char *obj)
{
	struct module_source *s = &mp->src[i];
	char *why = NULL;
	if (!obj)
		return 0;
	struct stubs st;
	struct elf_map map;
	stubs_init(&st);
	/* mapped once: the kernels, and the strings of the code only an f form compiles (below) */
	int bad = elf_map_file(obj, &map, &why);
	const unsigned char *data = map.data;
	size_t size = map.size;
	/* an archive (-lib): the source's member */
	if (!bad && map.size >= 8 && !memcmp(map.data, "!<arch>\n", 8)) {
		struct member_of want = { NULL, NULL, 0 };
		want.name = lbasename(s->path);
		if (ar_members(map.data, map.size, find_member, &want, &why) || !want.data) {
			if (!why)
				why = xasprintf("no member for %s", s->path);
			elf_unmap(&map);
			bad = 1;
		} else {
			data = want.data;
			size = want.size;
		}
	}
	if (!bad && stubs_read_data(&st, data, size, &why)) {
		elf_unmap(&map);
		bad = 1;
	}
	if (bad) {
		diag_debug("modules: cannot read the kernels of %s: %s", obj, why ? why : "?");
		free(why);
		free(obj);
		stubs_release(&st);
		return 0;
	}
	learn = learn && s->key[0] && ctx->cfg->cache_dir && *ctx->cfg->cache_dir;
	struct stub_finding *found = NULL;
	size_t nfound = 0;
	int changed = 0;
	const char *base = lbasename(s->path);
	size_t *rows = XNEWVEC(size_t, st.nk + 1);
	for (size_t k = 0; k < s->list.n; k++) {
		const struct target *t = &s->list.v[k];
		char c0[32], c1[32];
		if (t->code.kind != ARCH_REAL)
			continue;
		long col = stubs_target_index(&st, t->code.num, t->code.suffix);
		if (col < 0)
			continue;
		size_t present = 0, ntriv = 0, nstub = 0, ntrap = 0;
		long real_on = -1;
		for (size_t r = 0; r < st.nk; r++) {
			present += st.code[r * st.nt + (size_t)col] != 0;
			ntriv += stubs_trivial(&st, r, (size_t)col);
			ntrap += stubs_trap_paths(&st, r, (size_t)col);
			long y = stubs_real_on(&st, r, (size_t)col);
			if (y >= 0) {
				rows[nstub++] = r;
				real_on = y;
			}
		}
		/* plain sm_NN with trivial kernels: would its f/a form build them? */
		if (learn && (ntriv || ntrap) && !t->code.suffix && !t->virt.suffix && t->virt.num == t->code.num) {
			char *unit = modules_stub_unit("specific", t);
			int known = verdict_find(&s->verdict, unit) != NULL;
			free(unit);
			if (!known && compare_specific(mp, i, ctx, t, &st, (size_t)col, &found, &nfound, NULL)) {
				changed = 1;
				continue;
			}
		}
		/* the f form, decided before compiling where f and a preprocess differently: does a
		 * build kernels that f compiled out? (the object tells; f runs on more GPUs) */
		if (learn && (ntriv || ntrap) && t->code.suffix == 'f' && t->virt.suffix == 'f' &&
		    modules_decided_early(&s->verdict)) {
			struct target a = { { ARCH_VIRTUAL, t->code.num, 'a' }, { ARCH_REAL, t->code.num, 'a' } };
			char *unit = modules_stub_unit("specific", &a);
			int known = verdict_find(&s->verdict, unit) != NULL;
			/* no kernel trivial, and none of the trapping code only f compiles in the object:
			 * the kernels' traps are a's too, and a builds nothing f compiles out */
			struct argv own = ARGV_INIT;
			if (!known && !ntriv && own_code_load(&s->verdict, t, &own) &&
			    !stubs_object_has(data, size, t->code.num, 'f', &own)) {
				plan_note(plan, "modules.confirm", "%s: %lu kernel%s of %s with trap paths, but none of "
					  "the code only %s compiles that traps (found by %lu string%s) is in the "
					  "object: the a form builds the same kernels, not compared",
					  base, (unsigned long)ntrap, ntrap == 1 ? "" : "s",
					  arch_format(&t->code, c0, sizeof(c0)), c0, (unsigned long)own.n,
					  own.n == 1 ? "" : "s");
				diag_note(VERBOSITY_VERBOSE, "%s", plan->notes.v[plan->notes.n - 1]);
				add_finding(&found, &nfound, unit, 0, xstrdup(""));
				unit = NULL;
				known = 1;
			}
			argv_release(&own);
			free(unit);
			if (!known && toolkit_accepts(ctx->tk, &a.code) &&
			    compare_specific(mp, i, ctx, t, &st, (size_t)col, &found, &nfound, &a)) {
				changed = 1;
				continue;
			}
		}
		if (!nstub)
			continue;
		struct arch real = { ARCH_REAL, st.t[real_on].sm, st.t[real_on].suffix };
		arch_format(&real, c1, sizeof(c1));
		char *names = kernel_list(&st, rows, nstub);
		if (nstub == present && learn) {
			char *reason = xasprintf("every kernel is compiled out there (an empty body, a trap or a "
						 "print; %s has the code): %s", c1, names);
			/* (the PTX of the same arch goes too: modules.c) */
			add_finding(&found, &nfound, modules_stub_unit("stubs", t), 0, reason);
			changed = 1;
		} else if (nstub < present) {
			plan_note(plan, "modules.stubs", "%s: %lu kernel%s compiled out on %s (an empty body, a trap "
				  "or a print; %s has the code), so a launch on a GPU that runs %s computes nothing: %s",
				  base, (unsigned long)nstub, nstub == 1 ? " is" : "s are",
				  arch_format(&t->code, c0, sizeof(c0)), c1, c0, names);
			diag_rewrite("%s", plan->notes.v[plan->notes.n - 1]);
		}
		free(names);
	}
	free(rows);
	stubs_release(&st);
	elf_unmap(&map);
	free(obj);
	store_findings(mp, i, ctx, found, nfound);
	return changed;
}

void modules_mark_checked(struct modules_plan *mp, size_t i, const struct modules_context *ctx, const char *reason)
{
	struct module_source *s = &mp->src[i];
	struct stub_finding *found = NULL;
	size_t nfound = 0;
	if (!s->key[0] || !ctx->cfg->cache_dir || !*ctx->cfg->cache_dir)
		return;
	for (size_t k = 0; k < s->list.n; k++) {
		const struct target *t = &s->list.v[k];
		if (t->code.kind != ARCH_REAL)
			continue;
		char *unit = modules_stub_unit("stubs", t);
		if (verdict_find(&s->verdict, unit))
			free(unit);
		else
			add_finding(&found, &nfound, unit, 1, xstrdup(reason));
	}
	store_findings(mp, i, ctx, found, nfound);
}

static int check_stubs(struct modules_plan *mp, size_t i, const struct modules_context *ctx, struct plan *plan,
		       int learn)
{
	return modules_check_stubs_in(mp, i, ctx, plan, learn, modules_object(mp, i));
}

/* What ptxas refused in a failed compile (its diagnosis): `what`, for the notes ("Instruction
 * 'X'", NULL when it refused nothing for a target: the failure is another one), and the targets
 * it refused instructions for ("... not supported on .target 'sm_120f'"), each once. */
struct refusal {
	const char *what;
	struct arch targets[8];
	size_t n;
};

static void refusal_of(const struct diagnosis *d, struct refusal *rf)
{
	const struct diagnose_finding *f = diagnose_find(d, DIAGNOSE_ARCH_SPECIFIC);
	if (!f)
		f = diagnose_find(d, DIAGNOSE_ARCH_MIN);
	rf->what = f ? (f->what ? f->what : "an instruction") : NULL;
	rf->n = 0;
	for (size_t i = 0; i < d->n; i++) {
		const char *at = d->v[i].kind == DIAGNOSE_ARCH_SPECIFIC && d->v[i].text ?
					 strstr(d->v[i].text, ".target '") : NULL;
		struct arch a;
		if (!at)
			continue;
		at += strlen(".target '");
		char *name = xstrndup(at, strcspn(at, "'"));
		int seen = arch_parse(name, &a) != 0;
		free(name);
		for (size_t k = 0; !seen && k < rf->n; k++)
			seen = arch_equal(&rf->targets[k], &a);
		if (!seen && rf->n < sizeof(rf->targets) / sizeof(rf->targets[0]))
			rf->targets[rf->n++] = a;
	}
}

/* Verdict unit vu is a form decided before compiling that holds ("specific:compute_100f:
 * sm_100f", passing): 1, with its target in *t. */
static int decided_form(const struct verdict_unit *vu, struct target *t)
{
	if (!vu->pass || strncmp(vu->name, "specific:", 9))
		return 0;
	const char *v = vu->name + 9, *colon = strchr(v, ':');
	if (!colon)
		return 0;
	char *vs = xstrndup(v, (size_t)(colon - v));
	int bad = arch_parse(vs, &t->virt) || arch_parse(colon + 1, &t->code);
	free(vs);
	return !bad && t->code.suffix;
}

/* Unit `from` fails (with the reason and first line), unit `to` passes. */
static void move_unit(struct verdict *v, const char *from, const char *to, const char *reason, const char *first)
{
	verdict_set(v, from, 0, reason, first);
	verdict_set(v, to, 1, "", "");
}

/* Source s, whose f form (decided before compiling) ptxas refused: the a form instead, where it
 * is not known to fail. The family form builds the code of the a form only where ptxas accepts
 * every instruction for the family (CUTLASS 4.2's block-scaled sparse MMA is sm_100a's alone,
 * its block-scaled MMA sm_120a's). Returns 1 when a target moved. */
static int f_to_a(struct module_source *s, const char *what, const char *first)
{
	struct target forms[8];
	size_t nf = 0;
	for (size_t u = 0; u < s->verdict.n && nf < 8; u++)
		if (decided_form(&s->verdict.v[u], &forms[nf]) && forms[nf].code.suffix == 'f')
			nf++;
	int moved = 0;
	for (size_t k = 0; k < nf; k++) {
		struct target f = forms[k], a = f, plain = f;
		a.virt.suffix = a.code.suffix = 'a';
		plain.virt.suffix = plain.code.suffix = 0;
		char *fn = modules_stub_unit("specific", &f), *an = modules_stub_unit("specific", &a),
		     *pn = modules_stub_unit("specific", &plain);
		const struct verdict_unit *au = verdict_find(&s->verdict, an);
		if (!au || au->pass) {
			char cf[32], ca[32], cp[32];
			char *reason = xasprintf("the device code differs when compiled for %s (code behind "
						 "arch-specific feature macros, which plain %s builds without), and "
						 "ptxas refuses %s for the family form %s; decided before compiling "
						 "and by the failed compile",
						 arch_format(&a.code, ca, sizeof(ca)), arch_format(&plain.code, cp, sizeof(cp)),
						 what, arch_format(&f.code, cf, sizeof(cf)));
			move_unit(&s->verdict, fn, an, reason, first);
			if (verdict_find(&s->verdict, pn))
				verdict_set(&s->verdict, pn, 0, reason, "");
			/* where the plain PTX went to the f form too (plain_refused()), the a form's */
			char *fp = modules_unit(&f), *ap = modules_unit(&a);
			const struct verdict_unit *fv = verdict_find(&s->verdict, fp);
			if (fv && fv->pass)
				move_unit(&s->verdict, fp, ap, reason, first);
			free(fp);
			free(ap);
			free(reason);
			moved = 1;
		}
		free(fn);
		free(an);
		free(pn);
	}
	return moved;
}

/* Source s, whose machine code for sm_N built in a form decided before compiling, while ptxas
 * refused instructions for plain sm_N itself: the plain PTX (compute_N, which nvcc checks with
 * ptxas for sm_N) holds code of the form only (CUTLASS's sm_120 block-scaled MMA, sm_103's
 * tcgen05 MMA), and plain nvcc cannot build the request either. The plain target fails (the
 * probe's unit), its form passes: the PTX becomes the form's (modules.probe), which costs nothing
 * (it is the cicc output the machine code is built from). Returns 1 when a target moved. */
static int plain_refused(struct module_source *s, const struct refusal *rf, const char *first)
{
	int moved = 0;
	for (size_t r = 0; r < rf->n; r++) {
		struct target t;
		size_t u = 0;
		if (rf->targets[r].suffix || rf->targets[r].kind != ARCH_REAL)
			continue;
		while (u < s->verdict.n && !(decided_form(&s->verdict.v[u], &t) && t.code.num == rf->targets[r].num))
			u++;
		if (u == s->verdict.n)
			continue;
		struct target plain = { { ARCH_VIRTUAL, t.code.num, 0 }, { ARCH_REAL, t.code.num, 0 } };
		char *pu = modules_unit(&plain), *fu = modules_unit(&t), c[32];
		char *reason = xasprintf("ptxas refuses %s for plain %s, so the requested plain target cannot be "
					 "built (plain nvcc fails too)", rf->what,
					 arch_format(&rf->targets[r], c, sizeof(c)));
		move_unit(&s->verdict, pu, fu, reason, first);
		free(reason);
		free(pu);
		free(fu);
		moved = 1;
	}
	return moved;
}

/* Source s has a form decided before compiling that holds. */
static int has_decided_form(const struct module_source *s)
{
	struct target t;
	if (!s->key[0] || !modules_decided_early(&s->verdict))
		return 0;
	for (size_t u = 0; u < s->verdict.n; u++)
		if (decided_form(&s->verdict.v[u], &t))
			return 1;
	return 0;
}

/* 1 when ptxas refused an instruction for a target in group k's failed compile (its stderr,
 * held) and a source
 * there has a form decided before compiling: undo_decided() takes it from there, and the
 * compile is not run once more without --threads for nvcc's own messages first. */
static int form_refused(const struct modules_plan *mp, size_t k, const char *held)
{
	struct diagnosis d;
	struct refusal rf;
	diagnose_init(&d);
	diagnose_stderr(&d, held ? held : "");
	refusal_of(&d, &rf);
	int found = 0;
	for (size_t i = 0; rf.what && !found && i < mp->nsrc; i++)
		found = (!mp->split || mp->src[i].group == (int)k) && has_decided_form(&mp->src[i]);
	diagnose_release(&d);
	return found;
}

/* The compile of group k failed: a source whose target an earlier decision moved to its f form,
 * where ptxas refused an instruction for it, goes to the a form (f_to_a), and one whose plain
 * target ptxas refused beside a form takes the form's PTX (plain_refused); else a source whose
 * target an earlier decision moved to its f or a form goes back to the plain target (fail open:
 * plain nvcc built it). Returns 1 when one did. */
static int undo_decided(struct modules_plan *mp, size_t k, const struct modules_context *ctx, const char *held,
			const struct refusal *rf)
{
	int undone = 0, f_refused = 0;
	for (size_t r = 0; r < rf->n; r++)
		f_refused |= rf->targets[r].suffix == 'f';
	for (size_t i = 0; i < mp->nsrc; i++) {
		struct module_source *s = &mp->src[i];
		if ((mp->split && s->group != (int)k) || !has_decided_form(s))
			continue;
		char *first = xstrndup(held ? held : "", held ? strcspn(held, "\n") : 0);
		/* an f form refused: its a form; the plain target refused beside a form that built: the
		 * form's PTX (both can show in one failure, nvcc's passes running side by side) */
		int to_a = rf->what && f_refused && f_to_a(s, rf->what, first);
		int ptx = rf->what && plain_refused(s, rf, first);
		struct target t;
		if (!to_a && !ptx)
			for (size_t u = 0; u < s->verdict.n; u++)
				if (decided_form(&s->verdict.v[u], &t))
					s->verdict.v[u].pass = 0; /* only the forms, never a plain target kept */
		verdict_set(&s->verdict, "method:specific", 1,
			    to_a || ptx ? "preprocess, f refused" : "preprocess, form failed", first);
		if (to_a && !ptx)
			warning("%s: the family form chosen before compiling did not build (ptxas refuses %s for it): "
				"building the arch-specific form [modules.decide]", s->path, rf->what);
		else if (ptx)
			warning("%s: the target chosen before compiling did not build (ptxas refuses %s): building the "
				"forms ptxas takes [modules.decide]", s->path, rf->what);
		else
			warning("%s: the arch-specific form chosen before compiling did not build (%s): building the "
				"requested target as it is [modules.decide]", s->path, first);
		free(first);
		int fd = verdict_lock(ctx->cfg->cache_dir, s->key);
		if (verdict_store(&s->verdict, ctx->cfg->cache_dir, s->key))
			warning("modules: cannot store the verdict for %s in %s: %s", s->path, ctx->cfg->cache_dir,
				strerror(errno));
		verdict_unlock(fd);
		undone = 1;
	}
	return undone;
}

/* Runs one command, through an options file when it is long. */
static int run_one(const struct argv *argv, const struct config *cfg, int hold, struct run_result *res,
		   char **held)
{
	struct plan p;
	plan_init(&p, argv->v[0], argv->v + 1, argv->n - 1);
	if (plan_finalize(&p, cfg->options_file_threshold, NULL) > 0)
		diag_note(VERBOSITY_VERBOSE, "the command line is passed in %s", p.options_file);
	int rc = hold ? runner_run_held(p.tool, &p.argv, res, held) : runner_run(p.tool, &p.argv, res);
	plan_release(&p);
	return rc;
}

/* Only the messages nvcc printed, with its temporary names made alike. */
static char *normalised(const char *line)
{
	char *s = xstrdup(line);
	for (char *p = strstr(s, "tmpxft_"); p; p = strstr(p + 1, "tmpxft_"))
		for (char *q = p + 7; *q && *q != '-' && *q != '.' && *q != ' '; q++)
			*q = 'X';
	return s;
}

/* The error for a source none of whose requested targets builds; nothing when every target
 * failed the same way (a plain error, which nvcc's own output says best). */
static void say_impossible(const struct modules_plan *mp, size_t i, const struct modules_context *ctx)
{
	struct argv lines = ARGV_INIT;
	int certain;
	if (!modules_source_impossible(mp, i, ctx, &lines, &certain) || lines.n < 1) {
		argv_release(&lines);
		return;
	}
	int differ = 0;
	char *first = NULL;
	for (size_t k = 0; k < lines.n; k++) {
		const char *colon = strchr(lines.v[k], ':');
		char *n = normalised(colon ? colon + 1 : lines.v[k]);
		if (!first)
			first = n;
		else {
			differ |= strcmp(first, n) != 0;
			free(n);
		}
	}
	free(first);
	if (differ || certain || lines.n == 1) {
		error("%s supports none of the requested targets [modules.probe]", mp->src[i].path);
		for (size_t k = 0; k < lines.n; k++)
			error("  %s", lines.v[k]);
	}
	argv_release(&lines);
}

/* Passes a failed command's held stderr on, through the context's hook when it has one. */
static void pass_on_failure(const struct modules_context *ctx, const struct argv *ran,
			    struct run_result *res, char **held)
{
	/* what runs from now on (a crash's replay) runs as nvcc would: no K, no gate (threads.h) */
	threads_env_undo();
	if (ctx->failed)
		ctx->failed(ctx->failed_arg, ran, res, held);
	else
		runner_write_stderr(*held);
}

/* A link that failed on an undefined driver symbol: once more with the link pass's retry. */
static int link_retry(struct argv *argv, const char *held, const struct argv *retry, struct plan *plan,
		      const struct config *cfg, struct run_result *res)
{
	char *sym = retry && retry->n ? link_undefined_driver_symbol(held) : NULL;
	if (!sym)
		return 0;
	char *added = argv_to_shell(retry);
	plan_note(plan, "link.retry", "the link failed on an undefined reference to %s: running it again with %s",
		  sym, added);
	diag_rewrite("%s", plan->notes.v[plan->notes.n - 1]);
	free(added);
	free(sym);
	argv_pushn(argv, retry->v, retry->n);
	run_one(argv, cfg, 0, res, NULL);
	return 1;
}

enum modules_outcome modules_run(struct modules_plan *mp, struct plan *plan, const struct modules_context *ctx,
				 int allow_probe, const struct argv *retry, struct run_result *res)
{
	size_t ncmd = mp->split ? mp->ngroups + (mp->link.n ? 1 : 0) : 1;
	int links = retry && retry->n;
	mp->undone = 0;
	res->status = 0;
	for (size_t k = 0; k < ncmd; k++) {
		int is_link = mp->split && k == mp->ngroups;
		struct argv *argv = mp->split ? (is_link ? &mp->link : &mp->groups[k].argv) : &plan->argv;
		int probe = mp->hold && !is_link;
		int threaded = threads_env_added() > 1;
		int hold = probe || threaded || (links && (is_link || !mp->split));
		char *held = NULL;
		fflush(NULL);
		run_one(argv, ctx->cfg, hold, res, &held);
		if (res->status && threaded && !runner_signal() && !(probe && allow_probe && form_refused(mp, k, held))) {
			/* nvcc exits 255 for every failure under nvshim's --threads (threads.h): once
			 * more, one pass at a time, for its own messages, status and diagnosis */
			plan_note(plan, "threads.serial", "nvcc failed with --threads %u (status %d): running it "
				  "again one pass at a time for nvcc's own messages and status",
				  threads_env_added(), res->status);
			diag_note(VERBOSITY_VERBOSE, "%s", plan->notes.v[plan->notes.n - 1]);
			threads_env_undo();
			free(held);
			held = NULL;
			run_one(argv, ctx->cfg, hold, res, &held);
		}
		/* Stopped by a signal: what nvcc printed, and nothing more is run (runner.h). */
		if (runner_signal()) {
			if (held)
				runner_write_stderr(held);
			free(held);
			return MODULES_DONE;
		}
		if (!res->status || !hold) {
			if (held)
				runner_write_stderr(held);
			free(held);
			if (res->status)
				return MODULES_DONE;
			/* what it built: kernels compiled out on some target (stubs.h) */
			int changed = 0;
			for (size_t i = 0; probe && ctx->cfg->modules_stubs && !runner_signal() && i < mp->nsrc; i++)
				if (!mp->split || mp->src[i].group == (int)k)
					changed |= check_stubs(mp, i, ctx, plan, allow_probe);
			if (changed && allow_probe)
				return MODULES_RETRY;
			continue;
		}
		if (!probe) {
			if (!link_retry(argv, held, retry, plan, ctx->cfg, res))
				pass_on_failure(ctx, argv, res, &held);
			free(held);
			if (res->status)
				return MODULES_DONE;
			continue;
		}
		/* A failure: which sources, and is it about the targets? */
		struct diagnosis d;
		struct refusal rf;
		diagnose_init(&d);
		diagnose_stderr(&d, held);
		int arch = diagnose_arch_related(&d);
		refusal_of(&d, &rf);
		/* A form chosen before compiling that does not build: its a form, the form's PTX, or the
		 * plain target, once more. */
		int undone = allow_probe && !runner_signal() && undo_decided(mp, k, ctx, held, &rf);
		diagnose_release(&d);
		if (undone) {
			free(held);
			mp->undone = 1;
			return MODULES_RETRY;
		}
		if (arch && allow_probe && ctx->cfg->modules_probe) {
			int changed = 0;
			for (size_t i = 0; i < mp->nsrc; i++) {
				struct module_source *s = &mp->src[i];
				struct argv lines = ARGV_INIT;
				int impossible = modules_source_impossible(mp, i, ctx, &lines, NULL);
				argv_release(&lines);
				/* what is known already (nothing builds) needs no probe */
				if ((mp->split && s->group != (int)k) || impossible)
					continue;
				diag_note(VERBOSITY_VERBOSE, "modules: nvcc failed on %s with an architecture-related "
					  "error: building each target on its own", s->path);
				stats_count_probes(probe_source(mp, i, ctx, ctx->nvcc));
				if (runner_signal())
					break;
				struct arch_list now;
				modules_source_list(mp, i, ctx, &now, NULL);
				int same = now.n == s->list.n;
				for (size_t t = 0; same && t < now.n; t++)
					same = arch_equal(&now.v[t].virt, &s->list.v[t].virt) &&
					       arch_equal(&now.v[t].code, &s->list.v[t].code);
				changed |= !same;
				arch_list_release(&now);
			}
			if (changed && !runner_signal()) {
				free(held);
				return MODULES_RETRY;
			}
		}
		if (runner_signal()) {
			/* the probes were stopped: the compile's own failure, as nvcc printed it */
			runner_write_stderr(held);
			free(held);
			return MODULES_DONE;
		}
		if (!arch && link_retry(argv, held, retry, plan, ctx->cfg, res)) {
			free(held);
			if (res->status)
				return MODULES_DONE;
			continue;
		}
		pass_on_failure(ctx, argv, res, &held);
		free(held);
		/* Built after all (the compatibility layer's retry of this compile, crash.h): the
		 * commands after it (the other groups, the link) still run. */
		if (!res->status && !runner_signal())
			continue;
		if (arch)
			for (size_t i = 0; i < mp->nsrc; i++)
				if (!mp->split || mp->src[i].group == (int)k)
					say_impossible(mp, i, ctx);
		return MODULES_DONE;
	}
	return MODULES_DONE;
}
