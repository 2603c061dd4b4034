#include "diagnose/crash.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <demangle.h>
#include <libiberty.h>

#include "model/arch.h"
#include "base/cache.h"
#include "base/diag.h"
#include "diagnose/api.h"
#include "diagnose/diagnose.h"
#include "objects/elf.h"
#include "machine/steps.h"

extern char **environ;

static const char *env_get(const char *name) { return getenv(name); }

/* ---- detection ---- */

int crash_wanted(const struct invocation *inv, const struct config *cfg)
{
	if (inv->info || inv->dryrun || !inv->ninputs)
		return 0;
	if (inv->mode == MODE_PREPROCESS || inv->mode == MODE_DEPENDENCIES || inv->mode == MODE_RUN)
		return 0;
	return cfg->crash_bundles || cfg->explain_resources || cfg->explain_api ||
	       strcmp(cfg->crash_retry, "off") || (cfg->compat && !strcmp(cfg->compat, "auto"));
}

void crash_release(struct crash *c)
{
	free(c->stage);
	free(c->source);
	free(c->target);
	memset(c, 0, sizeof(*c));
}

static int user_signal(int sig)
{
	return sig == SIGINT || sig == SIGQUIT || sig == SIGHUP || sig == SIGPIPE;
}

int crash_detect(const struct run_result *res, const char *held, struct crash *c)
{
	memset(c, 0, sizeof(*c));
	if (res->signal) {
		if (user_signal(res->signal))
			return 0;
		c->stage = xstrdup("nvcc");
		c->signal = res->signal;
		c->flaky = diagnose_signal_flaky(res->signal);
		return 1;
	}
	if (res->status == 0 || !held)
		return 0;
	struct diagnosis d;
	diagnose_init(&d);
	diagnose_stderr(&d, held);
	const struct diagnose_finding *found = NULL;
	for (size_t i = 0; i < d.n && !found; i++) {
		const struct diagnose_finding *f = &d.v[i];
		if (f->kind != DIAGNOSE_CRASH || user_signal(f->signal))
			continue;
		/* nvcc names the stage itself; a shell's line counts only when nvcc passed the
		 * shell's status on: 128+N. */
		if (f->what || (f->signal && res->status == 128 + f->signal))
			found = f;
	}
	if (found) {
		c->stage = found->what ? xstrdup(found->what) : NULL;
		c->signal = found->signal;
		c->core = found->core;
		c->flaky = diagnose_signal_flaky(found->signal);
	}
	diagnose_release(&d);
	return found != NULL;
}

char *crash_describe(const struct crash *c)
{
	const char *name = diagnose_signal_name(c->signal);
	char sig[64];
	snprintf(sig, sizeof(sig), "signal %d%s%s%s", c->signal, name ? " (" : "", name ? name : "",
		 name ? ")" : "");
	char *who = !c->stage ? xstrdup("a stage of nvcc")
		    : !strcmp(c->stage, "nvcc") ? xstrdup("nvcc itself")
						: xasprintf("'%s'", c->stage);
	char *what = c->flaky ? xasprintf("%s was killed (%s)", who, sig)
			      : xasprintf("%s died of %s", who, sig);
	char *text = xasprintf("%s%s%s%s%s%s", what, c->source ? " compiling " : "",
			       c->source ? c->source : "", c->target ? " for " : "",
			       c->target ? c->target : "", c->core ? ", core dumped" : "");
	free(who);
	free(what);
	return text;
}

char *crash_dir(const struct config *cfg)
{
	if (cfg->crash_dir && *cfg->crash_dir)
		return xstrdup(cfg->crash_dir);
	return concat(cfg->cache_dir, "/crashes", NULL);
}

char *crash_targets_text(char *const *args, size_t n)
{
	struct invocation inv;
	struct arch_list l;
	char *why = NULL, *text = NULL;
	invocation_parse(&inv, args, n, env_get);
	arch_list_init(&l);
	if (!arch_list_from_invocation(&l, &inv, &why)) {
		struct argv names = ARGV_INIT;
		for (size_t i = 0; i < l.n; i++) {
			char buf[32];
			struct arch e = target_embedded(&l.v[i]);
			if (e.kind != ARCH_REAL)
				continue;
			arch_format(&e, buf, sizeof(buf));
			int seen = 0;
			for (size_t k = 0; k < names.n; k++)
				seen |= !strcmp(names.v[k], buf);
			if (!seen)
				argv_push(&names, buf);
		}
		for (size_t i = 0; i < names.n; i++) {
			char *next = xasprintf("%s%s%s", text ? text : "",
					       !i ? "" : i + 1 == names.n ? " or " : ", ", names.v[i]);
			free(text);
			text = next;
		}
		argv_release(&names);
	}
	free(why);
	arch_list_release(&l);
	invocation_release(&inv);
	return text;
}

/* One info line per resource error (the same kernel and resource once). */
static void explain_resources(const struct plan *plan, const char *held)
{
	struct diagnosis d;
	diagnose_init(&d);
	diagnose_stderr(&d, held);
	if (diagnose_find(&d, DIAGNOSE_RESOURCE)) {
		char *target = crash_targets_text(plan->argv.v + 1, plan->argv.n - 1);
		struct argv notes = ARGV_INIT;
		diagnose_resource_notes(&d, target, &notes);
		for (size_t i = 0; i < notes.n; i++)
			diag_note(VERBOSITY_NORMAL, "%s", notes.v[i]);
		argv_release(&notes);
		free(target);
	}
	diagnose_release(&d);
}

static const char *first_source(const struct invocation *inv);

/* Without a replay: the target of a stage when the command line builds only one. */
static char *single_target(const struct plan *plan, const char *stage)
{
	int front = !strcmp(stage, "cicc"), back = !strcmp(stage, "ptxas") || !strcmp(stage, "nvlink");
	if (!front && !back)
		return NULL;
	struct invocation inv;
	struct arch_list l;
	char *why = NULL, *text = NULL;
	invocation_parse(&inv, plan->argv.v + 1, plan->argv.n - 1, env_get);
	arch_list_init(&l);
	if (!arch_list_from_invocation(&l, &inv, &why) && l.n) {
		int one = 1;
		for (size_t i = 1; i < l.n; i++)
			one &= front ? arch_equal(&l.v[i].virt, &l.v[0].virt)
				     : arch_equal(&l.v[i].code, &l.v[0].code) || l.v[i].code.kind != ARCH_REAL;
		struct arch a = front ? l.v[0].virt : l.v[0].code;
		char buf[32];
		if (one && (front || a.kind == ARCH_REAL))
			text = xstrdup(arch_format(&a, buf, sizeof(buf)));
	}
	free(why);
	arch_list_release(&l);
	invocation_release(&inv);
	return text;
}

int crash_run_begin(const struct crash_context *ctx, struct plan *plan, struct run_result *res,
		    char **held, struct crash *c)
{
	if (runner_signal()) {
		/* Stopped by a signal nvshim passed on: not a crash, and nothing is replayed. */
		fputs(*held, stderr);
		fflush(stderr);
		return -1;
	}
	int crashed = crash_detect(res, *held, c);
	if (crashed && c->flaky && !strcmp(ctx->cfg->crash_retry, "once")) {
		char *what = crash_describe(c);
		warning("%s, as the system does when memory runs out; running nvcc once more "
			"(crash_retry = once)", what);
		plan_note(plan, "crash.retry", "%s: ran nvcc once more (crash_retry = once)", what);
		free(what);
		struct run_result again;
		char *held2 = NULL;
		if (!runner_run_held(plan->tool, &plan->argv, &again, &held2)) {
			free(*held);
			*held = held2;
			*res = again;
			crash_release(c);
			crashed = crash_detect(res, *held, c);
		} else {
			free(held2);
		}
	}
	return crashed;
}

void crash_run_end(const struct crash_context *ctx, struct plan *plan, const struct run_result *res,
		   const char *held, int crashed, struct crash *c, int restored)
{
	struct api_context ac = { ctx->cfg, ctx->nvcc, ctx->exe_dir, NULL, NULL };
	if (res->status != 0 && ctx->cfg->explain_resources)
		explain_resources(plan, held);
	if (res->status != 0 && !crashed && !restored)
		api_explain(&ac, held, &plan->notes);
	if (crashed) {
		char *dir = ctx->cfg->crash_bundles ? crash_bundle(ctx, plan, held, c) : NULL;
		if (!c->source && first_source(ctx->inv))
			c->source = xstrdup(first_source(ctx->inv));
		if (!c->target && c->stage)
			c->target = single_target(plan, c->stage);
		char *what = crash_describe(c);
		if (c->flaky)
			diag_note(VERBOSITY_NORMAL,
				  "%s, which the system does when memory runs out: build with fewer "
				  "parallel jobs or more memory, or set crash_retry = once%s%s",
				  what, dir ? "; reproducer in " : "", dir ? dir : "");
		else
			diag_note(VERBOSITY_NORMAL,
				  "%s: a crash of the CUDA toolkit's compiler, which is a bug to report "
				  "to NVIDIA%s%s%s",
				  what, dir ? "; reproducer in " : "", dir ? dir : "",
				  dir ? " (repro.sh reruns the step that crashed)" : "");
		free(what);
		free(dir);
	}
	crash_release(c);
}

/* ---- the bundle ---- */

struct bundle {
	char *dir;
	size_t used, cap;
	struct argv left_out; /* "NAME (N bytes)" */
	int failed;           /* errno of the first failure, or 0 */
};

static char *path_in(const struct bundle *b, const char *name) { return concat(b->dir, "/", name, NULL); }

static int bundle_write(struct bundle *b, const char *name, const char *text, size_t len, int mode)
{
	if (b->used + len > b->cap) {
		argv_pushf(&b->left_out, "%s (%lu bytes)", name, (unsigned long)len);
		return -1;
	}
	char *path = path_in(b, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
	int ok = fd >= 0 && write(fd, text, len) == (ssize_t)len;
	if (fd >= 0 && close(fd))
		ok = 0;
	if (!ok && !b->failed)
		b->failed = errno ? errno : EIO;
	free(path);
	b->used += ok ? len : 0;
	return ok ? 0 : -1;
}

static int bundle_text(struct bundle *b, const char *name, const char *text)
{
	return bundle_write(b, name, text, strlen(text), 0600);
}

static int bundle_copy(struct bundle *b, const char *name, const char *src)
{
	struct stat sb;
	if (stat(src, &sb) || !S_ISREG(sb.st_mode))
		return -1;
	if (b->used + (size_t)sb.st_size > b->cap) {
		argv_pushf(&b->left_out, "%s (%lld bytes)", name, (long long)sb.st_size);
		return -1;
	}
	int in = open(src, O_RDONLY);
	char *path = path_in(b, name);
	int out = in < 0 ? -1 : open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	int ok = in >= 0 && out >= 0;
	char buf[65536];
	ssize_t got;
	while (ok && (got = read(in, buf, sizeof(buf))) != 0) {
		if (got < 0 || write(out, buf, (size_t)got) != got)
			ok = 0;
		else
			b->used += (size_t)got;
	}
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out))
		ok = 0;
	if (!ok && !b->failed)
		b->failed = errno ? errno : EIO;
	free(path);
	return ok ? 0 : -1;
}

/* Text of a memstream-built file. */
struct text {
	char *s;
	size_t len;
	FILE *f;
};

static void text_open(struct text *t)
{
	t->s = NULL;
	t->len = 0;
	t->f = open_memstream(&t->s, &t->len);
}

static char *text_close(struct text *t)
{
	fclose(t->f);
	return t->s;
}

static void print_args(FILE *f, const char *label, const struct argv *a)
{
	char *line = argv_to_shell(a);
	fprintf(f, "%s%s\n", label, line);
	free(line);
}

/* Is path under dir (a directory path without a trailing slash)? */
static int under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return !strncmp(path, dir, n) && path[n] == '/';
}

/* The name a temporary file gets in the bundle: nvcc's "tmpxft_0000a1b2_00000000-8_" prefix
 * goes, and anything but [A-Za-z0-9._+-] becomes '_'. */
static char *bundle_name(const char *path)
{
	const char *base = lbasename(path);
	if (!strncmp(base, "tmpxft_", 7)) {
		const char *dash = strchr(base, '-');
		const char *us = dash ? strchr(dash, '_') : NULL;
		if (us && us[1])
			base = us + 1;
	}
	char *name = xstrdup(base);
	for (char *p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("._+-", *p))
			*p = '_';
	if (!*name || !strcmp(name, ".") || !strcmp(name, "..")) {
		free(name);
		name = xstrdup("file");
	}
	return name;
}

/* ---- replaying nvcc's steps ---- */

struct replay {
	char *priv;          /* private directory: TMPDIR of the steps */
	char *dryrun;        /* nvcc --dryrun's stderr, or NULL */
	struct steps steps;
	char **env;          /* the environment of the steps */
	struct argv envstore;
	long failing;        /* index of the step that crashed, or -1 */
	int reproduced;      /* it was run again and died of the signal */
	int complete;        /* every step before it ran */
	struct argv log;     /* one line per step run */
};

/* Arguments nvcc would keep its temporary files with: the replay wants them in its
 * private directory. */
static int keep_option(const char *a, int *takes_next)
{
	*takes_next = 0;
	if (!strcmp(a, "--keep") || !strcmp(a, "-keep") || !strcmp(a, "--save-temps") ||
	    !strcmp(a, "-save-temps") || !strncmp(a, "--keep-dir=", 11) || !strncmp(a, "-keep-dir=", 10))
		return 1;
	if (!strcmp(a, "--keep-dir") || !strcmp(a, "-keep-dir")) {
		*takes_next = 1;
		return 1;
	}
	return 0;
}

static void build_env(struct replay *r)
{
	argv_init(&r->envstore);
	const struct argv *set = &r->steps.settings;
	for (char **e = environ; *e; e++) {
		size_t len = strcspn(*e, "=");
		int replaced = len == 6 && !strncmp(*e, "TMPDIR", 6);
		for (size_t i = 0; i < set->n && !replaced; i++)
			replaced = !strncmp(set->v[i], *e, len) && set->v[i][len] == '=';
		if (!replaced)
			argv_push(&r->envstore, *e);
	}
	for (size_t i = 0; i < set->n; i++)
		argv_push(&r->envstore, set->v[i]);
	argv_pushf(&r->envstore, "TMPDIR=%s", r->priv);
	r->env = r->envstore.v;
}

/* The program of a step: a path as given, else found on the steps' PATH. xmalloc'ed. */
static char *step_program(const struct replay *r, const char *name)
{
	char *found = runner_which(name, steps_setting(&r->steps, "PATH"));
	return found ? found : xstrdup(name);
}

/* Runs nvcc --dryrun with the arguments of the plan. */
static void replay_dryrun(struct replay *r, const struct plan *plan)
{
	struct argv a = ARGV_INIT;
	argv_push(&a, plan->argv.v[0]);
	argv_push(&a, "--dryrun");
	for (size_t i = 1; i < plan->argv.n; i++) {
		int next;
		if (keep_option(plan->argv.v[i], &next)) {
			i += next;
			continue;
		}
		argv_push(&a, plan->argv.v[i]);
	}
	struct argv env = ARGV_INIT;
	for (char **e = environ; *e; e++)
		if (strncmp(*e, "TMPDIR=", 7))
			argv_push(&env, *e);
	argv_pushf(&env, "TMPDIR=%s", r->priv);
	char *out = concat(r->priv, "/dryrun.txt", NULL);
	struct run_result res;
	if (!runner_run_env(plan->tool, &a, env.v, NULL, out, &res) && res.status == 0) {
		r->dryrun = cache_read(out);
		if (r->dryrun)
			steps_parse(&r->steps, r->dryrun);
	}
	unlink(out);
	free(out);
	argv_release(&env);
	argv_release(&a);
}

/* Runs step i, its outputs outside the private directory sent into it. Returns 0, or -1 when
 * it could not run; *res says how it ended. */
static int replay_step(struct replay *r, size_t i, struct run_result *res)
{
	const struct step *t = &r->steps.v[i];
	struct argv a = ARGV_INIT;
	for (size_t k = 0; k < t->argv.n; k++) {
		const char *w = t->argv.v[k];
		if (k > 0 && (!strcmp(t->argv.v[k - 1], "-o") || !strcmp(t->argv.v[k - 1], "-MF")) &&
		    !under(w, r->priv)) {
			char *name = bundle_name(w);
			argv_pushf(&a, "%s/out-%lu-%s", r->priv, (unsigned long)i, name);
			free(name);
		} else {
			argv_push(&a, w);
		}
	}
	char *prog = step_program(r, t->argv.v[0]);
	char *out = xasprintf("%s/step-%lu.out", r->priv, (unsigned long)i);
	char *err = xasprintf("%s/step-%lu.err", r->priv, (unsigned long)i);
	int rc = runner_run_env(prog, &a, r->env, out, err, res);
	unlink(out);
	unlink(err);
	free(out);
	free(err);
	free(prog);
	argv_release(&a);
	argv_pushf(&r->log, "step %lu (%s%s%s): %s", (unsigned long)i, t->stage, t->target ? " " : "",
		   t->target ? t->target : "",
		   rc ? "could not be run"
		   : res->signal ? "died of a signal"
				 : res->status ? "failed" : "ok");
	if (!rc && res->signal)
		argv_pushf(&r->log, "  signal %d (%s), %.0f ms", res->signal,
			   diagnose_signal_name(res->signal) ? diagnose_signal_name(res->signal) : "?",
			   res->wall_ms);
	return rc;
}

/* Finds the step that crashed (see crash.h). */
static void replay_run(struct replay *r, const struct crash *c)
{
	const char *stage = c->stage;
	int nvcc_itself = stage && !strcmp(stage, "nvcc");
	long last = -1;
	for (size_t i = 0; i < r->steps.n; i++)
		if (r->steps.v[i].simple && stage && !nvcc_itself && !strcmp(r->steps.v[i].stage, stage))
			last = (long)i;
	r->failing = -1;
	r->complete = 1;
	for (size_t i = 0; i < r->steps.n; i++) {
		const struct step *t = &r->steps.v[i];
		if (!t->simple || !strcmp(t->stage, "rm"))
			continue;
		if (nvcc_itself || (stage && last < 0)) {
			/* Only the preprocessed sources are wanted. */
			if (!t->preprocess)
				continue;
		} else if ((long)i == last) {
			r->failing = (long)i;
			argv_pushf(&r->log, "step %lu (%s%s%s): the last %s step, not run again", (unsigned long)i,
				   t->stage, t->target ? " " : "", t->target ? t->target : "", stage);
			return;
		}
		struct run_result res;
		if (replay_step(r, i, &res) || user_signal(res.signal)) {
			r->complete = 0;
			return;
		}
		int candidate = !stage || !strcmp(t->stage, stage);
		if (res.signal && candidate && !nvcc_itself) {
			r->failing = (long)i;
			r->reproduced = 1;
			return;
		}
		if (res.status) {
			r->complete = 0;
			return;
		}
	}
}

static void replay_release(struct replay *r)
{
	if (r->priv) {
		/* The directory holds only what nvshim and the steps wrote. */
		cache_remove_dir(r->priv);
	}
	free(r->priv);
	free(r->dryrun);
	steps_release(&r->steps);
	argv_release(&r->envstore);
	argv_release(&r->log);
}

/* Every path a word mentions: the word, what follows '=' in an option, and "file=" items. */
static void word_paths(const char *w, struct argv *out)
{
	argv_push(out, w);
	const char *eq = w[0] == '-' ? strchr(w, '=') : NULL;
	if (eq && eq[1])
		argv_push(out, eq + 1);
	for (const char *p = strstr(w, "file="); p; p = strstr(p + 5, "file=")) {
		size_t len = strcspn(p + 5, ",");
		if (len)
			argv_push_owned(out, xstrndup(p + 5, len));
	}
}

static int regular_file(const char *path)
{
	struct stat sb;
	return !stat(path, &sb) && S_ISREG(sb.st_mode);
}

/* Files of the build a failing step reads that the bundle carries: objects and device code. */
static int data_file(const char *path)
{
	static const char *const suffixes[] = { ".o", ".obj", ".a", ".lib", ".cubin", ".fatbin",
						".ptx", ".ltoir", ".ii", ".i", ".cup", NULL };
	const char *dot = strrchr(lbasename(path), '.');
	for (const char *const *s = suffixes; dot && *s; s++)
		if (!strcmp(dot, *s))
			return 1;
	return 0;
}

struct carried {
	struct argv from; /* the path a step names */
	struct argv to;   /* its name in the bundle: "inputs/x" or "preprocessed/x" */
};

static const char *carried_name(const struct carried *c, const char *path)
{
	for (size_t i = 0; i < c->from.n; i++)
		if (!strcmp(c->from.v[i], path))
			return c->to.v[i];
	return NULL;
}

/* Adds path to the bundle under folder/, unless it is there already. */
static void carry(struct bundle *b, struct carried *c, const char *folder, const char *path)
{
	if (carried_name(c, path))
		return;
	char *name = bundle_name(path);
	char *rel = concat(folder, "/", name, NULL);
	for (int n = 2; ; n++) {
		int taken = 0;
		for (size_t i = 0; i < c->to.n; i++)
			taken |= !strcmp(c->to.v[i], rel);
		if (!taken)
			break;
		free(rel);
		rel = xasprintf("%s/%d-%s", folder, n, name);
	}
	char *dir = path_in(b, folder);
	mkdir(dir, 0700);
	free(dir);
	if (!bundle_copy(b, rel, path)) {
		argv_push(&c->from, path);
		argv_push(&c->to, rel);
	}
	free(rel);
	free(name);
}

/* The last step before `before` that names path. */
static long producer(const struct replay *r, long before, const char *path)
{
	for (long j = before - 1; j >= 0; j--) {
		const struct step *t = &r->steps.v[j];
		for (size_t k = 0; t->simple && k < t->argv.n; k++) {
			struct argv p = ARGV_INIT;
			word_paths(t->argv.v[k], &p);
			int hit = 0;
			for (size_t m = 0; m < p.n; m++)
				hit |= !strcmp(p.v[m], path);
			argv_release(&p);
			if (hit)
				return j;
		}
	}
	return -1;
}

/* The preprocessed sources a step's inputs come from: its .ii inputs, and those of the steps
 * that made its device code (PTX, cubins). */
static void preprocessed_of(const struct replay *r, long step, struct argv *out, int depth)
{
	const struct step *t = &r->steps.v[step];
	for (size_t k = 1; k < t->argv.n && depth < 8; k++) {
		struct argv p = ARGV_INIT;
		word_paths(t->argv.v[k], &p);
		for (size_t m = 0; m < p.n; m++) {
			const char *path = p.v[m];
			if (!under(path, r->priv) || !regular_file(path))
				continue;
			const char *dot = strrchr(path, '.');
			if (dot && (!strcmp(dot, ".ii") || !strcmp(dot, ".i"))) {
				int seen = 0;
				for (size_t i = 0; i < out->n; i++)
					seen |= !strcmp(out->v[i], path);
				if (!seen)
					argv_push(out, path);
			} else if (dot && (!strcmp(dot, ".ptx") || !strcmp(dot, ".cubin") ||
					   !strcmp(dot, ".fatbin") || !strcmp(dot, ".ltoir"))) {
				long j = producer(r, step, path);
				if (j >= 0)
					preprocessed_of(r, j, out, depth + 1);
			}
		}
		argv_release(&p);
	}
}

static void append_str(char **buf, size_t *len, const char *s)
{
	char *next = concat(*buf ? *buf : "", s, NULL);
	free(*buf);
	*buf = next;
	*len = strlen(next);
}

/* Appends one word of repro.sh to *line: literal text quoted for sh, files of the bundle as
 * "$here/...", the other temporary files of the step as "$tmp/...". */
static void repro_word(char **line, size_t *linelen, const char *w, const struct replay *r,
		       const struct carried *c)
{
	const char *name = carried_name(c, w);
	if (name) {
		char *var = xasprintf("\"$here/%s\"", name);
		append_str(line, linelen, var);
		free(var);
		return;
	}
	char *out = xstrdup("");
	size_t len = 0;
	int any = 0;
	for (const char *p = w; *p;) {
		const char *hit = r->priv ? strstr(p, r->priv) : NULL;
		size_t lit = hit ? (size_t)(hit - p) : strlen(p);
		if (lit) {
			char *text = xstrndup(p, lit);
			argv_shell_quote(&out, &len, text);
			free(text);
			any = 1;
		}
		if (!hit)
			break;
		const char *rest = hit + strlen(r->priv);
		size_t plen = strcspn(rest, ",\"' ");
		char *full = xstrndup(hit, (size_t)(rest - hit) + plen);
		const char *carried = carried_name(c, full);
		char *base = bundle_name(full);
		char *var = carried ? xasprintf("\"$here/%s\"", carried) : xasprintf("\"$tmp/%s\"", base);
		append_str(&out, &len, var);
		free(var);
		free(base);
		free(full);
		any = 1;
		p = rest + plen;
	}
	if (!any)
		argv_shell_quote(&out, &len, "");
	append_str(line, linelen, out);
	free(out);
}

static void repro_header(FILE *f, const char *what, const char *how)
{
	fprintf(f, "#!/bin/sh\n"
		   "# nvshim reproducer: %s.\n"
		   "# %s\n"
		   "# Its exit status is the command's own: 128+N when it dies of signal N, as in the "
		   "build.\n"
		   "here=$(cd \"$(dirname \"$0\")\" && pwd) || exit 1\n"
		   "tmp=$(mktemp -d \"${TMPDIR:-/tmp}/nvshim-repro-XXXXXX\") || exit 1\n"
		   "trap 'rm -rf \"$tmp\"' EXIT\n",
		what, how);
}

static void export_line(FILE *f, const char *assignment)
{
	char *q = NULL;
	size_t len = 0;
	argv_shell_quote(&q, &len, assignment);
	fprintf(f, "export %s\n", q);
	free(q);
}

/* repro.sh for the failing step. */
static char *repro_step(const struct replay *r, const struct carried *c, const char *what)
{
	const struct step *t = &r->steps.v[r->failing];
	struct text s;
	text_open(&s);
	char *how = xasprintf("Reruns the step of nvcc that crashed (%s) on the files in this folder; it "
			      "needs the same CUDA toolkit and nothing else of the build.",
			      t->stage);
	repro_header(s.f, what, how);
	free(how);
	for (size_t i = 0; i < r->steps.settings.n; i++)
		export_line(s.f, r->steps.settings.v[i]);
	fprintf(s.f, "export TMPDIR=\"$tmp\"\ncd \"$tmp\" || exit 1\n");
	char *prog = step_program(r, t->argv.v[0]);
	char *line = NULL;
	size_t len = 0;
	argv_shell_quote(&line, &len, prog);
	free(prog);
	for (size_t k = 1; k < t->argv.n; k++) {
		append_str(&line, &len, " \\\n\t");
		repro_word(&line, &len, t->argv.v[k], r, c);
	}
	fprintf(s.f, "%s\nexit $?\n", line);
	free(line);
	return text_close(&s);
}

/* Is path one of the toolkit's own files (its headers, libdevice, libraries), under root? */
static int toolkit_file(const char *path, const char *root)
{
	if (!root || !under(path, root))
		return 0;
	const char *rest = path + strlen(root);
	if (!strncmp(rest, "/bin/..", 7))
		rest += 7;
	return !strncmp(rest, "/targets/", 9) || !strncmp(rest, "/include/", 9) ||
	       !strncmp(rest, "/nvvm/", 6) || !strncmp(rest, "/lib", 4);
}

/* The sources of a compile, for a crash of nvcc itself: the files its preprocessed sources
 * name in their line markers (# N "path"), the sources and headers it read, as absolute paths
 * (relative ones are the working directory's); the toolkit's and the system's (/usr) are left
 * to the machine. */
static void sources_of(const char *ii, const char *cwd, const char *toolkit, struct argv *out)
{
	FILE *f = fopen(ii, "r");
	char *line = NULL;
	size_t cap = 0;
	while (f && getline(&line, &cap, f) > 0) {
		const char *p = line;
		if (*p++ != '#')
			continue;
		while (*p == ' ')
			p++;
		if (!isdigit((unsigned char)*p))
			continue;
		while (isdigit((unsigned char)*p))
			p++;
		if (*p++ != ' ' || *p != '"')
			continue;
		const char *end = strchr(p + 1, '"');
		if (!end || end == p + 1 || p[1] == '<' || memchr(p + 1, '\\', (size_t)(end - p - 1)))
			continue;
		char *name = xstrndup(p + 1, (size_t)(end - p - 1));
		char *abs = name[0] == '/' ? xstrdup(name) : concat(cwd, "/", name, NULL);
		int seen = !regular_file(abs) || !strncmp(abs, "/usr/", 5) || toolkit_file(abs, toolkit);
		for (size_t i = 0; i < out->n && !seen; i++)
			seen = !strcmp(out->v[i], abs);
		if (!seen)
			argv_push(out, abs);
		free(abs);
		free(name);
	}
	free(line);
	if (f)
		fclose(f);
}

/* Copies each of `files` (absolute paths) to tree/<its path> in the bundle. Returns 0 when all
 * of them are there. */
static int carry_tree(struct bundle *b, const struct argv *files)
{
	int all = 0;
	for (size_t i = 0; i < files->n; i++) {
		char *name = concat("tree", files->v[i], NULL);
		char *path = path_in(b, name);
		char *slash = strrchr(path, '/');
		*slash = '\0';
		if (cache_mkdirs(path) || bundle_copy(b, name, files->v[i]))
			all = -1;
		free(path);
		free(name);
	}
	return all;
}

/* A word of the nvcc command for repro.sh: an absolute path of tree/ (alone, or after an
 * option: "-I/src/inc", "--include-path=/src/inc") points into the bundle's copy. */
static void tree_word(char **line, size_t *len, const char *w, const struct argv *tree)
{
	const char *slash = strchr(w, '/');
	size_t at = slash ? (size_t)(slash - w) : 0;
	int option = slash && (at == 0 || w[at - 1] == '=' || w[0] == '-');
	for (size_t k = 0; option && k < at; k++)
		option = isalpha((unsigned char)w[k]) || strchr("-=_", w[k]);
	for (size_t i = 0; option && i < tree->n; i++) {
		const char *path = w + at;
		size_t n = strlen(path);
		while (n > 1 && path[n - 1] == '/')
			n--;
		if (strncmp(tree->v[i], path, n) || (tree->v[i][n] != '\0' && tree->v[i][n] != '/'))
			continue;
		char *head = xstrndup(w, at);
		argv_shell_quote(line, len, head);
		append_str(line, len, "\"$here/tree\"");
		argv_shell_quote(line, len, path);
		free(head);
		return;
	}
	argv_shell_quote(line, len, w);
}

/* repro.sh that reruns the whole nvcc command: on the bundle's copy of its sources (tree/, in
 * a copy of the directory it ran in) when it holds them all, else in the original directory. */
static char *repro_nvcc(const struct plan *plan, const char *cwd, const char *what, const struct argv *tree)
{
	struct text s;
	text_open(&s);
	repro_header(s.f, what,
		     tree ? "Reruns the nvcc command on the bundle's copy of its sources and headers "
			    "(tree/), its output going to a temporary directory."
			  : "Reruns the nvcc command in the directory it ran in (it needs the sources "
			    "there), its output going to a temporary directory.");
	fprintf(s.f, "unset NVCC_PREPEND_FLAGS NVCC_APPEND_FLAGS\n");
	for (char **e = environ; *e; e++)
		if (!strncmp(*e, "NVCC_", 5) || !strncmp(*e, "CUDA_", 5))
			export_line(s.f, *e);
	char *q = NULL;
	size_t len = 0;
	argv_shell_quote(&q, &len, cwd);
	if (tree)
		fprintf(s.f, "mkdir -p \"$here/tree\"%s && cd \"$here/tree\"%s || exit 1\n", q, q);
	else
		fprintf(s.f, "cd %s || exit 1\n", q);
	free(q);
	char *line = NULL;
	len = 0;
	for (size_t k = 0; k < plan->argv.n; k++) {
		if (k) {
			char *sep = concat(line, " ", NULL);
			free(line);
			line = sep;
			len = strlen(line);
		}
		if (k > 0 && (!strcmp(plan->argv.v[k - 1], "-o") || !strcmp(plan->argv.v[k - 1], "--output-file"))) {
			char *name = bundle_name(plan->argv.v[k]);
			char *next = xasprintf("%s\"$tmp/%s\"", line, name);
			free(line);
			line = next;
			len = strlen(line);
			free(name);
		} else if (tree && k > 0) {
			tree_word(&line, &len, plan->argv.v[k], tree);
		} else {
			argv_shell_quote(&line, &len, plan->argv.v[k]);
		}
	}
	fprintf(s.f, "%s\nexit $?\n", line);
	free(line);
	return text_close(&s);
}

static char *capture_text(const char *prog, const char *arg)
{
	struct argv a = ARGV_INIT;
	argv_push(&a, prog);
	argv_push(&a, arg);
	char *out = NULL;
	int rc = runner_capture(prog, &a, &out);
	argv_release(&a);
	if (rc < 0 || !out) {
		free(out);
		return xasprintf("(%s %s could not be run)\n", prog, arg);
	}
	return out;
}

/* The host compiler nvcc runs: its first preprocessing step's program, else -ccbin, else
 * NVCC_CCBIN, else gcc. xmalloc'ed. */
static char *host_compiler(const struct replay *r, const struct invocation *inv)
{
	for (size_t i = 0; i < r->steps.n; i++)
		if (r->steps.v[i].simple && r->steps.v[i].preprocess)
			return step_program(r, r->steps.v[i].argv.v[0]);
	const struct inv_arg *a = inv ? invocation_find(inv, "compiler-bindir") : NULL;
	if (a && a->value)
		return xstrdup(a->value);
	const char *env = getenv("NVCC_CCBIN");
	return xstrdup(env && *env ? env : "gcc");
}

static const char *const env_names[] = { "PATH", "LD_LIBRARY_PATH", "CC", "CXX", "CUDAHOSTCXX",
					 "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH",
					 "LIBRARY_PATH", "TMPDIR", NULL };

static char *environment_text(void)
{
	struct text s;
	text_open(&s);
	for (char **e = environ; *e; e++) {
		int want = !strncmp(*e, "CUDA", 4) || !strncmp(*e, "NVCC_", 5) ||
			   (!strncmp(*e, "NVSHIM_", 7) && strncmp(*e, "NVSHIM_DEPTH=", 13));
		for (const char *const *n = env_names; *n && !want; n++)
			want = !strncmp(*e, *n, strlen(*n)) && (*e)[strlen(*n)] == '=';
		if (want)
			fprintf(s.f, "%s\n", *e);
	}
	return text_close(&s);
}

/* "20261122-101500-cicc-k.cu-" */
static char *bundle_prefix(const struct crash *c, const char *source)
{
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	strftime(when, sizeof(when), "%Y%m%d-%H%M%S", gmtime_r(&now, &tm));
	char *src = source ? bundle_name(source) : xstrdup("nvcc");
	char *stage = bundle_name(c->stage ? c->stage : "stage");
	char *p = xasprintf("%s-%s-%s-", when, stage, src);
	free(src);
	free(stage);
	return p;
}

static const char *first_source(const struct invocation *inv)
{
	for (size_t i = 0; inv && i < inv->nargs; i++)
		if (inv->args[i].what == ARG_INPUT && inv->args[i].input == INPUT_CUDA)
			return inv->expanded.v[inv->args[i].pos];
	return NULL;
}

char *crash_bundle(const struct crash_context *ctx, const struct plan *plan, const char *held,
		   struct crash *c)
{
	const struct config *cfg = ctx->cfg;
	char *root = crash_dir(cfg);
	struct replay r;
	memset(&r, 0, sizeof(r));
	steps_init(&r.steps);
	argv_init(&r.log);
	argv_init(&r.envstore);
	r.failing = -1;

	/* 1. Find the step that crashed. */
	const char *tmp = getenv("TMPDIR");
	char *priv = concat(tmp && *tmp ? tmp : "/tmp", "/nvshim-replay-XXXXXX", NULL);
	if (mkdtemp(priv)) {
		diag_note(VERBOSITY_VERBOSE, "replaying nvcc's steps in %s to find the one that crashed "
			  "(crash_bundles = false skips this)", priv);
		r.priv = priv;
		replay_dryrun(&r, plan);
		build_env(&r);
		if (r.steps.n)
			replay_run(&r, c);
	} else {
		free(priv);
	}
	if (runner_signal()) {
		/* The replays were stopped: no bundle, and the private directory goes. */
		free(root);
		replay_release(&r);
		return NULL;
	}
	const struct step *fail = r.failing >= 0 ? &r.steps.v[r.failing] : NULL;
	if (fail) {
		if (!c->stage)
			c->stage = xstrdup(fail->stage);
		if (fail->source && !c->source)
			c->source = xstrdup(fail->source);
		if (fail->target && !c->target)
			c->target = xstrdup(fail->target);
	}
	if (!c->source && first_source(ctx->inv))
		c->source = xstrdup(first_source(ctx->inv));

	/* 2. The folder. */
	struct bundle b = { NULL, 0, cfg->crash_bundle_max_size, ARGV_INIT, 0 };
	char *prefix = bundle_prefix(c, c->source);
	b.dir = concat(root, "/", prefix, "XXXXXX", NULL);
	free(prefix);
	if (cache_mkdirs(root) || !mkdtemp(b.dir)) {
		warning("cannot write a crash reproducer in %s: %s", root, strerror(errno));
		free(b.dir);
		free(root);
		argv_release(&b.left_out);
		replay_release(&r);
		return NULL;
	}
	char *what = crash_describe(c);
	char cwd[4096];
	if (!getcwd(cwd, sizeof(cwd)))
		strcpy(cwd, ".");

	/* 3. Small files first, so that a size cap leaves out only the big ones. */
	struct text t;
	text_open(&t);
	fprintf(t.f, "cwd: %s\n", cwd);
	struct argv in = ARGV_INIT;
	argv_push(&in, ctx->nvcc);
	for (size_t i = 0; ctx->args_in && i < ctx->args_in->n; i++)
		argv_push(&in, ctx->args_in->v[i]);
	print_args(t.f, "original: ", &in);
	argv_release(&in);
	print_args(t.f, "ran: ", &plan->argv);
	if (plan->options_file) {
		char *o = cache_read(plan->options_file);
		fprintf(t.f, "\n%s (the options file above):\n%s\n", plan->options_file, o ? o : "");
		free(o);
	}
	char *s = text_close(&t);
	bundle_text(&b, "command.txt", s);
	free(s);
	s = environment_text();
	bundle_text(&b, "environment.txt", s);
	free(s);

	char *host = host_compiler(&r, ctx->inv);
	char *v1 = capture_text(ctx->nvcc, "--version"), *v2 = capture_text(host, "--version");
	s = xasprintf("$ %s --version\n%s\n$ %s --version\n%s", ctx->nvcc, v1, host, v2);
	bundle_text(&b, "versions.txt", s);
	free(s);
	free(v1);
	free(v2);
	free(host);

	text_open(&t);
	config_print(cfg, t.f);
	s = text_close(&t);
	bundle_text(&b, "config.txt", s);
	free(s);
	bundle_text(&b, "stderr.txt", held ? held : "");
	if (r.dryrun)
		bundle_text(&b, "dryrun.txt", r.dryrun);
	text_open(&t);
	for (size_t i = 0; i < r.log.n; i++)
		fprintf(t.f, "%s\n", r.log.v[i]);
	s = text_close(&t);
	bundle_text(&b, "replay.txt", s);
	free(s);

	/* 4. The failing step's inputs, then the preprocessed sources. */
	struct carried car = { ARGV_INIT, ARGV_INIT };
	struct argv pre = ARGV_INIT;
	if (fail) {
		for (size_t k = 1; k < fail->argv.n; k++) {
			struct argv p = ARGV_INIT;
			word_paths(fail->argv.v[k], &p);
			for (size_t m = 0; m < p.n; m++) {
				const char *path = p.v[m];
				if (!regular_file(path) || (!under(path, r.priv) && !data_file(path)))
					continue;
				const char *dot = strrchr(path, '.');
				int ii = dot && (!strcmp(dot, ".ii") || !strcmp(dot, ".i"));
				carry(&b, &car, ii ? "preprocessed" : "inputs", path);
			}
			argv_release(&p);
		}
		preprocessed_of(&r, r.failing, &pre, 0);
	} else {
		/* nvcc itself, or a step not found: every preprocessed source the replay made. */
		for (size_t i = 0; i < r.steps.n; i++) {
			const struct step *st = &r.steps.v[i];
			for (size_t k = 1; st->simple && st->preprocess && k + 1 < st->argv.n; k++)
				if (!strcmp(st->argv.v[k], "-o") && under(st->argv.v[k + 1], r.priv) &&
				    regular_file(st->argv.v[k + 1]))
					argv_push(&pre, st->argv.v[k + 1]);
		}
	}
	for (size_t i = 0; i < pre.n; i++)
		carry(&b, &car, "preprocessed", pre.v[i]);
	/* nvcc itself: the sources and headers too, for repro.sh to run it on. */
	struct argv tree = ARGV_INIT;
	int whole = 0;
	if (!fail) {
		char *real = lrealpath(ctx->nvcc);
		char *bin = real ? xstrdup(real) : NULL;
		char *slash = bin ? strrchr(bin, '/') : NULL;
		if (slash)
			*slash = '\0';
		slash = bin ? strrchr(bin, '/') : NULL;
		if (slash && slash > bin)
			*slash = '\0';
		for (size_t i = 0; i < pre.n; i++)
			sources_of(pre.v[i], cwd, slash && slash > bin ? bin : NULL, &tree);
		for (size_t i = 0; ctx->inv && i < ctx->inv->nargs; i++) {
			const struct inv_arg *a = &ctx->inv->args[i];
			const char *input = ctx->inv->expanded.v[a->pos];
			if (a->what != ARG_INPUT || !regular_file(input))
				continue;
			char *abs = input[0] == '/' ? xstrdup(input) : concat(cwd, "/", input, NULL);
			int seen = 0;
			for (size_t k = 0; k < tree.n && !seen; k++)
				seen = !strcmp(tree.v[k], abs);
			if (!seen)
				argv_push(&tree, abs);
			free(abs);
		}
		whole = tree.n && !carry_tree(&b, &tree);
		free(real);
		free(bin);
	}
	argv_release(&pre);

	/* 5. repro.sh */
	s = fail ? repro_step(&r, &car, what) : repro_nvcc(plan, cwd, what, whole ? &tree : NULL);
	argv_release(&tree);
	bundle_write(&b, "repro.sh", s, strlen(s), 0700);
	free(s);

	/* 6. README.txt, last, with what was left out. */
	text_open(&t);
	time_t now = time(NULL);
	struct tm tm;
	char when[32];
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	fprintf(t.f, "nvshim crash report\n\n"
		     "what:   %s\n"
		     "when:   %s\n"
		     "where:  %s\n"
		     "nvcc:   %s\n",
		what, when, cwd, ctx->nvcc);
	if (fail)
		fprintf(t.f, "step:   %zu of nvcc --dryrun (dryrun.txt), %s; %s\n", (size_t)r.failing,
			fail->stage,
			r.reproduced ? "nvshim ran the steps again and it crashed again"
				     : "the last step of that stage; nvshim did not run it again "
				       "(repro.sh does)");
	else if (c->stage && !strcmp(c->stage, "nvcc"))
		fprintf(t.f, "step:   nvcc itself, not one of its stages\n");
	else
		fprintf(t.f, "step:   not found: %s\n",
			!r.steps.n ? "nvcc --dryrun gave no steps"
			: r.complete ? "nvshim ran nvcc's steps again and none crashed"
				     : "a step before it failed when nvshim ran the steps again");
	fprintf(t.f, "\nrepro:  sh repro.sh   (%s)\n\n",
		fail ? "reruns the failing step on the files in this folder"
		     : "reruns the nvcc command where it ran");
	fprintf(t.f, "files:\n"
		     "  README.txt       this summary\n"
		     "  command.txt      the working directory, the command line as given and as nvshim ran it\n"
		     "  environment.txt  CUDA*, NVCC_*, NVSHIM_*, PATH, LD_LIBRARY_PATH, CC, CXX, ...\n"
		     "  versions.txt     nvcc --version and the host compiler's --version\n"
		     "  config.txt       nvshim's settings in effect (nvshim config)\n"
		     "  stderr.txt       all that nvcc printed on stderr\n"
		     "  dryrun.txt       nvcc --dryrun with the same arguments: every step of the build\n"
		     "  replay.txt       the steps nvshim ran again to find the failing one, and how they ended\n"
		     "  repro.sh         reruns the failing step\n");
	for (size_t i = 0; i < car.to.n; i++)
		fprintf(t.f, "  %-16s %s\n", car.to.v[i],
			!strncmp(car.to.v[i], "preprocessed/", 13) ? "preprocessed source"
								   : "an input of the failing step");
	if (b.left_out.n) {
		fprintf(t.f, "\nleft out (crash_bundle_max_size = %zu bytes):\n", b.cap);
		for (size_t i = 0; i < b.left_out.n; i++)
			fprintf(t.f, "  %s\n", b.left_out.v[i]);
	}
	s = text_close(&t);
	b.cap = (size_t)-1; /* the README always goes in */
	bundle_text(&b, "README.txt", s);
	free(s);

	char *result = NULL;
	if (b.failed)
		warning("cannot write the crash reproducer %s in full: %s", b.dir, strerror(b.failed));
	result = xstrdup(b.dir);
	/* The new bundle is the newest: it stays even with crash_keep = 0. */
	crash_prune(root, cfg->crash_keep ? cfg->crash_keep : 1);

	free(what);
	argv_release(&car.from);
	argv_release(&car.to);
	argv_release(&b.left_out);
	free(b.dir);
	free(root);
	replay_release(&r);
	return result;
}

/* ---- pruning ---- */

/* "YYYYmmdd-HHMMSS-": the start of a bundle's name. */
static int bundle_entry(const char *name)
{
	for (int i = 0; i < 15; i++) {
		if (i == 8 ? name[i] != '-' : !isdigit((unsigned char)name[i]))
			return 0;
	}
	return name[15] == '-';
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t crash_prune(const char *dir, size_t keep)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct argv names = ARGV_INIT;
	struct dirent *e;
	while ((e = readdir(d)))
		if (bundle_entry(e->d_name))
			argv_push(&names, e->d_name);
	closedir(d);
	size_t removed = 0;
	if (names.n > keep) {
		qsort(names.v, names.n, sizeof(char *), by_name);
		for (size_t i = 0; i < names.n - keep; i++) {
			char *p = concat(dir, "/", names.v[i], NULL);
			if (!nftw(p, remove_one, 16, FTW_DEPTH | FTW_PHYS))
				removed++;
			free(p);
		}
	}
	argv_release(&names);
	return removed;
}

struct stacks_seen {
	struct argv said; /* "kernel sm" already noted */
	size_t notes;
};

static void stack_of(const char *kernel, unsigned sm, unsigned long long stack, void *arg)
{
	struct stacks_seen *seen = arg;
	if (stack <= CRASH_STACK_MAX)
		return;
	char *key = xasprintf("%s %u", kernel, sm);
	for (size_t i = 0; i < seen->said.n; i++)
		if (!strcmp(seen->said.v[i], key)) {
			free(key);
			return;
		}
	argv_push(&seen->said, key);
	free(key);
	char *full = cplus_demangle(kernel, DMGL_PARAMS | DMGL_ANSI);
	char *who = full && strcmp(full, kernel) ? xasprintf("kernel %s (%s)", full, kernel)
						 : xasprintf("kernel %s", kernel);
	char on[32] = "";
	if (sm)
		snprintf(on, sizeof(on), " on sm_%u", sm);
	diag_note(VERBOSITY_NORMAL,
		  "%s uses %llu bytes (%llu KiB) of local memory (its stack) per thread%s; a thread may "
		  "have at most 512 KiB, less what the system keeps, so nvcc builds it but every "
		  "launch fails with cudaErrorInvalidValue (invalid argument): keep large per-thread "
		  "arrays in global memory (one slice per thread) or in shared memory, or make them "
		  "smaller [resource.local]",
		  who, stack, stack / 1024, on);
	free(who);
	free(full);
	seen->notes++;
}

/* The stem of a source's file name: "dir/k.cu" -> "k". */
static char *stem_of(const char *path)
{
	const char *base = lbasename(path);
	const char *dot = strrchr(base, '.');
	return dot && dot > base ? xstrndup(base, (size_t)(dot - base)) : xstrdup(base);
}

size_t crash_check_stacks(const struct invocation *inv)
{
	const char *ext = NULL;
	switch (inv->mode) {
	case MODE_COMPILE:
	case MODE_DEVICE_C:
		ext = ".o";
		break;
	case MODE_LINK:
		break;
	case MODE_CUBIN:
		ext = ".cubin";
		break;
	case MODE_FATBIN:
		ext = ".fatbin";
		break;
	default:
		return 0;
	}
	if (inv->info || inv->dryrun)
		return 0;
	struct argv outputs = ARGV_INIT;
	size_t cuda = 0;
	for (size_t i = 0; i < inv->nargs; i++) {
		const struct inv_arg *a = &inv->args[i];
		if (a->what != ARG_INPUT || a->input != INPUT_CUDA)
			continue;
		cuda++;
		if (!inv->output && ext) {
			char *stem = stem_of(inv->expanded.v[a->pos]);
			argv_pushf(&outputs, "%s%s", stem, ext);
			free(stem);
		}
	}
	if (!cuda) {
		argv_release(&outputs);
		return 0;
	}
	if (inv->output)
		argv_push(&outputs, inv->output);
	else if (!ext)
		argv_push(&outputs, "a.out");
	struct stacks_seen seen = { ARGV_INIT, 0 };
	for (size_t i = 0; i < outputs.n; i++) {
		struct elf_map m;
		char *why = NULL;
		if (elf_map_file(outputs.v[i], &m, &why)) {
			free(why);
			continue;
		}
		if (elf_cuda_stacks(m.data, m.size, stack_of, &seen, &why))
			diag_note(VERBOSITY_VERBOSE, "%s: kernels' stacks not read: %s", outputs.v[i], why);
		free(why);
		elf_unmap(&m);
	}
	argv_release(&seen.said);
	argv_release(&outputs);
	return seen.notes;
}
