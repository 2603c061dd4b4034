#include "upgrade/compat_dryrun.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libiberty.h>

#include "base/cinclude.h"
#include "base/cache.h"
#include "base/diag.h"
#include "base/fault.h"
#include "base/hash.h"
#include "base/runner.h"
#include "machine/steps.h"
#include "upgrade/layout.h"

extern char **environ;

/* The verdict file's format (2: with CUDA 13's moved files, the `layout` line; a version's
 * verdicts are apart from another's, since the magic is in the key). */
#define VERDICT_MAGIC "nvshim-compat-verdict 2"

/* How much the gate reads: the source whole up to 8 MiB, its quoted headers' first 1 MiB, two
 * levels deep, 16 files in all. */
#define GATE_SOURCE_BYTES (8u << 20)
#define GATE_HEADER_BYTES (1u << 20)
#define GATE_DEPTH 2
#define GATE_FILES 16

/* ---- the gate ---- */

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void push_last_part(struct argv *names, const char *name)
{
	const char *p = name, *q;
	while ((q = strstr(p, "::")))
		p = q + 2;
	if (*p)
		argv_push(names, p);
}

void compat_dryrun_names(const struct api_table *t, const char *toolkit_version, struct argv *names)
{
	struct argv all = ARGV_INIT;
	for (size_t i = 0; i < t->n; i++) {
		const struct api_entry *e = &t->v[i];
		if (!e->compat || e->nocompat || (toolkit_version && e->version && compat_version_newer(e->version, toolkit_version)))
			continue;
		push_last_part(&all, e->name);
		for (size_t k = 0; k < e->also.n; k++)
			push_last_part(&all, e->also.v[k]);
	}
	if (all.n)
		qsort(all.v, all.n, sizeof(all.v[0]), by_name);
	for (size_t i = 0; i < all.n; i++)
		if (!i || strcmp(all.v[i], all.v[i - 1]))
			argv_push(names, all.v[i]);
	argv_release(&all);
}

static int ident(int c) { return isalnum((unsigned char)c) || c == '_'; }

int compat_dryrun_gate(const char *text, const struct argv *names)
{
	if (!names->n)
		return 0;
	char word[256];
	for (const char *p = text; *p;) {
		if (!ident(*p)) {
			p++;
			continue;
		}
		const char *s = p;
		while (ident(*p))
			p++;
		size_t n = (size_t)(p - s);
		if (isdigit((unsigned char)*s) || n >= sizeof(word))
			continue;
		memcpy(word, s, n);
		word[n] = '\0';
		const char *key = word;
		if (bsearch(&key, names->v, names->n, sizeof(names->v[0]), by_name))
			return 1;
	}
	return 0;
}

/* ---- the front end's arguments ---- */

int compat_dryrun_front_args(const struct invocation *inv, struct argv *out, size_t *source)
{
	size_t sources = 0;
	const char *mode = "-c";
	if (inv->info || inv->files_read || inv->mode == MODE_DEPENDENCIES || inv->mode == MODE_RUN ||
	    inv->mode == MODE_LIB || inv->mode == MODE_DEVICE_LINK)
		return -1;
	for (size_t i = 0; i < inv->nargs; i++) {
		const struct inv_arg *a = &inv->args[i];
		if (a->what == ARG_INPUT) {
			if (a->input != INPUT_CUDA && a->input != INPUT_C && a->input != INPUT_CXX)
				return -1;
			sources++;
		} else if (a->what == ARG_OPTION && a->opt->kind == OPT_KIND_MODE) {
			if (!strcmp(a->opt->name, "device-c"))
				mode = "-dc";
			else if (!strcmp(a->opt->name, "device-w"))
				mode = "-dw";
		}
	}
	if (sources != 1)
		return -1;
	/* -x first: nvcc applies it to every input wherever it is, and sccache puts it first in its
	 * --dryrun, after the flags in its -E; left out where the source's name says the same
	 * (sccache's -x cu for k.cu) */
	const char *path = NULL;
	for (size_t i = 0; i < inv->nargs; i++)
		if (inv->args[i].what == ARG_INPUT)
			path = inv->expanded.v[inv->args[i].pos];
	if (inv->language && invocation_input_kind(path, inv->language) != invocation_input_kind(path, NULL)) {
		argv_push(out, "-x");
		argv_push(out, inv->language);
	}
	for (size_t i = 0; i < inv->nargs; i++) {
		const struct inv_arg *a = &inv->args[i];
		if (a->what == ARG_OPTION && a->opt->kind == OPT_KIND_INPUT && !strcmp(a->opt->name, "x"))
			continue;
		if (a->what == ARG_OPTION) {
			enum option_kind k = a->opt->kind;
			if (k == OPT_KIND_MODE || k == OPT_KIND_OUTPUT || k == OPT_KIND_TARGET ||
			    k == OPT_KIND_DEPENDENCY || k == OPT_KIND_DRIVER || k == OPT_KIND_INFO)
				continue;
			/* sccache's -Xcompiler=-P (-EP): no line markers, and errors without their file */
			if (!strcmp(a->opt->name, "compiler-options") && a->value &&
			    (!strcmp(a->value, "-P") || !strcmp(a->value, "-EP")))
				continue;
		}
		if (a->what == ARG_INPUT)
			*source = out->n;
		for (unsigned k = 0; k < a->span; k++)
			argv_push(out, inv->expanded.v[a->pos + k]);
	}
	argv_push(out, mode);
	return 0;
}

/* ---- the verdict file ---- */

static int word_ok(const char *s);

char *compat_dryrun_verdict_format(const char *key, const struct compat_decision *d, const char *why)
{
	struct argv lines = ARGV_INIT;
	argv_push(&lines, VERDICT_MAGIC);
	argv_pushf(&lines, "key %s", key);
	if (d->retry) {
		argv_push(&lines, "layer");
	} else {
		/* one line: a newline in the reason would end it */
		char *w = xstrdup(why ? why : "");
		for (char *p = w; *p; p++)
			if (*p == '\n' || *p == '\r')
				*p = ' ';
		argv_pushf(&lines, "plain %s", w);
		free(w);
	}
	if (d->layout)
		argv_pushf(&lines, "layout %u %s", d->layout,
			   d->layout_header && word_ok(d->layout_header) ? d->layout_header : "-");
	for (size_t i = 0; d->retry && i < d->headers.n; i++)
		argv_pushf(&lines, "header %s", d->headers.v[i]);
	for (size_t i = 0; d->retry && i < d->entries.n; i++)
		argv_pushf(&lines, "entry %s", d->entries.v[i]);
	for (size_t i = 0; d->retry && i < d->nsites; i++)
		argv_pushf(&lines, "site %lu %s", d->sites[i].line, d->sites[i].field);
	argv_push(&lines, "end");
	argv_push(&lines, "");
	char *text = argv_join(&lines, "\n");
	argv_release(&lines);
	return text;
}

/* A field's or an entry's name: no blanks, not empty. */
static int word_ok(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (isspace((unsigned char)*s) || !isprint((unsigned char)*s))
			return 0;
	return 1;
}

int compat_dryrun_verdict_parse(const char *text, const char *key, struct compat_decision *d, char **why)
{
	compat_decision_init(d);
	*why = NULL;
	int state = 0; /* 0 magic, 1 key, 2 verdict, 3 body, 4 ended */
	size_t alloc = 0;
	int ok = 1;
	for (const char *p = text; *p && ok;) {
		const char *e = strchr(p, '\n');
		if (!e) {
			ok = 0; /* the last line ends with a newline */
			break;
		}
		char *line = xstrndup(p, (size_t)(e - p));
		p = e + 1;
		if (state == 0) {
			ok = !strcmp(line, VERDICT_MAGIC);
			state = 1;
		} else if (state == 1) {
			ok = !strncmp(line, "key ", 4) && !strcmp(line + 4, key);
			state = 2;
		} else if (state == 2) {
			if (!strcmp(line, "layer"))
				d->retry = 1;
			else if (!strncmp(line, "plain ", 6))
				*why = xstrdup(line + 6);
			else
				ok = 0;
			state = 3;
		} else if (state == 3) {
			if (!strcmp(line, "end")) {
				state = 4;
			} else if (!strncmp(line, "layout ", 7) && !d->layout) {
				/* "layout N HEADER": CUDA 13's moved files, with a plain verdict or the layer */
				char *end = NULL;
				errno = 0;
				unsigned long n = isdigit((unsigned char)line[7]) ? strtoul(line + 7, &end, 10) : 0;
				ok = n && errno == 0 && !(n & ~(unsigned long)(LAYOUT_NVTX | LAYOUT_TYPES)) && end &&
				     *end == ' ' && word_ok(end + 1);
				if (ok) {
					d->layout = (unsigned)n;
					d->layout_header = xstrdup(end + 1);
				}
			} else if (!d->retry) {
				ok = 0;
			} else if (!strncmp(line, "header ", 7)) {
				ok = api_compat_header_ok(line + 7);
				if (ok)
					argv_push(&d->headers, line + 7);
			} else if (!strncmp(line, "entry ", 6)) {
				ok = word_ok(line + 6);
				if (ok)
					argv_push(&d->entries, line + 6);
			} else if (!strncmp(line, "site ", 5)) {
				char *end = NULL;
				errno = 0;
				unsigned long n = isdigit((unsigned char)line[5]) ? strtoul(line + 5, &end, 10) : 0;
				ok = n > 0 && errno == 0 && end && *end == ' ' && word_ok(end + 1);
				for (const char *f = ok ? end + 1 : ""; *f && ok; f++)
					ok = ident(*f);
				if (ok) {
					if (d->nsites == alloc) {
						alloc = alloc ? alloc * 2 : 8;
						d->sites = XRESIZEVEC(struct compat_site, d->sites, alloc);
					}
					d->sites[d->nsites++] = (struct compat_site){ xstrdup(""), n, xstrdup(end + 1), 0 };
				}
			} else {
				ok = 0;
			}
		} else {
			ok = 0; /* nothing after end */
		}
		free(line);
	}
	ok &= state == 4 && (!d->retry || d->headers.n);
	if (!ok) {
		compat_decision_release(d);
		free(*why);
		*why = NULL;
		return -1;
	}
	return 0;
}

/* ---- reading the source and its project headers ---- */

struct gate_read {
	const struct argv *dirs; /* -I directories, in order */
	unsigned files;
	struct argv texts;       /* "PATH\nTEXT" of each file read, for the key */
	int hit;
	int moved;               /* a file #includes a header CUDA 13 moved (layout_dryrun_gate()) */
};

static int is_regular(const char *path)
{
	struct stat sb;
	return !stat(path, &sb) && S_ISREG(sb.st_mode);
}

static char *read_head(const char *path, size_t max)
{
	FILE *fp = fopen(path, "r");
	if (!fp)
		return NULL;
	char *buf = XNEWVEC(char, max + 1);
	size_t got = fread(buf, 1, max, fp);
	buf[got] = '\0';
	fclose(fp);
	/* a NUL inside ends the text: what follows is not read by the gate */
	return buf;
}

static void gate_file(const char *path, struct gate_read *g, int depth, const struct argv *names, size_t max)
{
	if (g->files >= GATE_FILES)
		return;
	char *text = read_head(path, max);
	if (!text)
		return;
	g->files++;
	char *real = realpath(path, NULL);
	argv_push_owned(&g->texts, concat(real ? real : path, "\n", text, NULL));
	free(real);
	g->hit |= compat_dryrun_gate(text, names);
	g->moved |= layout_dryrun_gate(text);
	struct argv local = ARGV_INIT;
	for (const char *p = text; p && *p && depth > 0; p = cinclude_next_line(p)) {
		const char *name;
		size_t n;
		int angle;
		if (cinclude_parse(p, &name, &n, &angle) && !angle && n)
			argv_push_owned(&local, xstrndup(name, n));
	}
	free(text);
	for (size_t i = 0; i < local.n && g->files < GATE_FILES; i++) {
		const char *name = local.v[i];
		char *found = NULL;
		if (name[0] == '/') {
			found = is_regular(name) ? xstrdup(name) : NULL;
		} else {
			const char *slash = strrchr(path, '/');
			found = slash ? xasprintf("%.*s%s", (int)(slash - path + 1), path, name) : xstrdup(name);
			for (size_t k = 0; found && !is_regular(found); k++) {
				free(found);
				found = k < g->dirs->n ? concat(g->dirs->v[k], "/", name, NULL) : NULL;
			}
		}
		if (found)
			gate_file(found, g, depth - 1, names, GATE_HEADER_BYTES);
		free(found);
	}
	argv_release(&local);
}

/* ---- the check: the front end of a compile ---- */

/* environ with TMPDIR=priv and, when settings is not NULL, nvcc's settings over it. */
static void make_env(struct argv *env, const char *priv, const struct argv *settings)
{
	for (char **e = environ; *e; e++) {
		size_t len = strcspn(*e, "=");
		int replaced = len == 6 && !strncmp(*e, "TMPDIR", 6);
		for (size_t i = 0; settings && i < settings->n && !replaced; i++)
			replaced = !strncmp(settings->v[i], *e, len) && settings->v[i][len] == '=';
		if (!replaced)
			argv_push(env, *e);
	}
	for (size_t i = 0; settings && i < settings->n; i++)
		argv_push(env, settings->v[i]);
	argv_pushf(env, "TMPDIR=%s", priv);
}

/* Runs the front end of `args` (argv[0] first, nvcc's line of a compile) in priv: nvcc's
 * --dryrun, then its steps in order up to and including cudafe++ (all of them when there is
 * none). Returns the failing step's status with its stderr in *held, 0 when they passed, or -1
 * when the check could not be made. */
static int front_end(const char *nvcc, const struct argv *args, const char *priv, char **held)
{
	*held = NULL;
	struct argv a = ARGV_INIT, env = ARGV_INIT;
	argv_copy(&a, args);
	argv_push(&a, "--dryrun");
	argv_push(&a, "-o");
	argv_push_owned(&a, concat(priv, "/check.o", NULL));
	make_env(&env, priv, NULL);
	char *out = concat(priv, "/dryrun.txt", NULL), *err = concat(priv, "/stderr.txt", NULL);
	struct run_result res = { 127, 0, 0 };
	int rc = -1;
	char *dry = NULL;
	if (!runner_run_env(nvcc, &a, env.v, NULL, out, &res) && res.status == 0 && !res.signal)
		dry = cache_read(out);
	argv_release(&env);
	struct steps st;
	steps_init(&st);
	if (dry && steps_parse(&st, dry)) {
		make_env(&env, priv, &st.settings);
		rc = 0;
		for (size_t i = 0; i < st.n && rc == 0; i++) {
			const struct step *s = &st.v[i];
			if (!s->simple || !s->argv.n)
				continue;
			if (runner_signal()) {
				rc = -1;
				break;
			}
			const char *name = s->argv.v[0];
			char *prog = strchr(name, '/') ? xstrdup(name) : runner_which(name, steps_setting(&st, "PATH"));
			if (!prog) {
				rc = -1;
				break;
			}
			unlink(err);
			if (runner_run_env(prog, &s->argv, env.v, NULL, err, &res) || res.signal) {
				rc = -1;
			} else if (res.status) {
				*held = cache_read(err);
				if (!*held)
					*held = xstrdup("");
				rc = res.status;
			}
			free(prog);
			if (s->stage && !strcmp(s->stage, "cudafe++"))
				break;
		}
	}
	steps_release(&st);
	free(dry);
	unlink(out);
	unlink(err);
	free(out);
	free(err);
	argv_release(&env);
	argv_release(&a);
	return rc;
}

/* CC mode's check: the host compiler on `args` (argv[0] first, with -fsyntax-only) in priv.
 * Returns its status with its stderr in *held when it fails, 0 when it passes, -1 when it could
 * not be run. */
static int host_front_end(const char *cc, const struct argv *args, const char *priv, char **held)
{
	*held = NULL;
	struct argv env = ARGV_INIT;
	make_env(&env, priv, NULL);
	char *err = concat(priv, "/stderr.txt", NULL);
	struct run_result res = { 127, 0, 0 };
	int rc = -1;
	if (!runner_signal() && !runner_run_env(cc, args, env.v, NULL, err, &res) && !res.signal) {
		rc = res.status;
		if (rc) {
			*held = cache_read(err);
			if (!*held)
				*held = xstrdup("");
		}
	}
	unlink(err);
	free(err);
	argv_release(&env);
	return rc;
}

/* ---- the flow ---- */

static const char *no_env(const char *name)
{
	(void)name;
	return NULL;
}

/* The verdict's key: 32 hex digits (two FNV-1a hashes of everything that decides it). */
static void verdict_key(const char *nvcc, const struct argv *front, size_t source, const char *identity,
			const struct argv *texts, char out[33])
{
	uint64_t h[2] = { HASH_INIT, HASH_INIT ^ 0x5bd1e9955bd1e995ULL };
	char *cwd = getcwd(NULL, 0);
	char *nk = cache_file_key(nvcc);
	char *real = realpath(front->v[source], NULL);
	const char *pre = getenv("NVCC_PREPEND_FLAGS"), *app = getenv("NVCC_APPEND_FLAGS");
	for (int k = 0; k < 2; k++) {
		h[k] = hash_str(h[k], VERDICT_MAGIC);
		h[k] = hash_bytes(h[k], "", 1);
		const char *fixed[] = { nk ? nk : nvcc, cwd ? cwd : "", identity, pre ? pre : "", app ? app : "",
					real ? real : front->v[source] };
		for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
			h[k] = hash_str(h[k], fixed[i]);
			h[k] = hash_bytes(h[k], "", 1);
		}
		for (size_t i = 0; i < front->n; i++) {
			h[k] = hash_str(h[k], i == source ? "(the source)" : front->v[i]);
			h[k] = hash_bytes(h[k], "", 1);
		}
		for (size_t i = 0; i < texts->n; i++) {
			h[k] = hash_str(h[k], texts->v[i]);
			h[k] = hash_bytes(h[k], "", 1);
		}
	}
	snprintf(out, 33, "%016llx%016llx", (unsigned long long)h[0], (unsigned long long)h[1]);
	free(cwd);
	free(nk);
	free(real);
}

/* Decides by running the front end: *d and *why get the verdict. */
static void check(const struct compat_context *ctx, const char *nvcc, const struct argv *line, size_t source,
		  const struct api_table *t, const char *version, const char *inc, struct compat_decision *d,
		  char **why)
{
	const struct config *cfg = ctx->api->cfg;
	const char *tmp = getenv("TMPDIR");
	char *priv = concat(tmp && *tmp == '/' ? tmp : "/tmp", "/nvshim-compat-check-XXXXXX", NULL);
	if (!mkdtemp(priv)) {
		*why = xasprintf("no private directory for the check: %s", strerror(errno));
		free(priv);
		return;
	}
	char *held = NULL;
	double t0 = runner_now_ms();
	int rc = ctx->host ? host_front_end(nvcc, line, priv, &held) : front_end(nvcc, line, priv, &held);
	if (rc < 0) {
		*why = xstrdup(ctx->host ? "the compiler's -fsyntax-only could not be run"
				 : "the front end could not be run (nvcc --dryrun or a step did not start)");
	} else if (rc == 0) {
		*why = xstrdup("its front end passes");
	} else {
		/* CUDA 13's moved files first (layout.h): the front end stops on them before any API */
		char *header = NULL;
		unsigned need = ctx->host ? 0 : layout_missing(held, &header) & (LAYOUT_NVTX | LAYOUT_TYPES);
		struct argv fixed = ARGV_INIT, added = ARGV_INIT;
		int moved = 0; /* 1: the front end passes with the moved files; 2: it fails further on */
		if (need && !layout_dryrun_fix(ctx, line, need, &fixed, &added)) {
			char *held1 = NULL;
			int rc1 = front_end(nvcc, &fixed, priv, &held1);
			if (rc1 >= 0)
				moved = rc1 == 0 ? 1 : 2;
			if (moved == 2) {
				free(held);
				held = held1;
				held1 = NULL;
			}
			free(held1);
		}
		const struct argv *base = moved == 2 ? &fixed : line;
		if (moved) {
			d->layout = need;
			d->layout_header = header;
			header = NULL;
		}
		if (moved != 1)
			compat_decide(t, held, version, d);
		if (moved == 1) {
			*why = xstrdup("its front end passes with CUDA 13's moved files");
		} else if (!d->retry) {
			*why = xasprintf("its front end fails on %s", d->blocked ? "an API the layer does not restore"
								     : "errors the layer does not restore");
			/* the moved files alone do not make it pass: nvcc's answer */
			d->layout = 0;
		} else {
			struct compat_layered l;
			int ok = !compat_layer(base, d, inc, cfg->cache_dir, ctx->host, NULL, &l);
			char *held2 = NULL;
			int rc2 = !ok ? -1 : ctx->host ? host_front_end(nvcc, &l.argv, priv, &held2)
						       : front_end(nvcc, &l.argv, priv, &held2);
			if (!ok)
				*why = xstrdup("no private copy of the source (its reads not on the lines reported)");
			else if (rc2 != 0)
				*why = xstrdup(rc2 < 0 ? "the layered front end could not be run"
						       : "its front end fails with the layer too");
			if (rc2 != 0)
				d->retry = d->layout = 0;
			free(held2);
			compat_layered_release(&l);
		}
		argv_release(&fixed);
		argv_release(&added);
		free(header);
	}
	diag_note(VERBOSITY_VERBOSE, "compat: checked the front end of %s in %.0f ms: %s%s%s", line->v[source],
		  runner_now_ms() - t0, d->layout ? "CUDA 13's moved files" : "", d->layout && d->retry ? " and " : "",
		  d->retry ? "the layer" : d->layout ? "" : *why);
	free(held);
	cache_remove_dir(priv);
	free(priv);
}

/* The decision for `front` (argv[0] the tool, nvcc or the host compiler; source: the index of
 * the source; dirs: the -I directories) and, where the compile needs the layer, the layered line
 * in plan->argv; in CC mode (ctx->host) the mark for sccache's preprocessor cache mode, also with
 * compat = off. preprocess: an -E (not a --dryrun), for the messages. */
static int apply(const struct compat_context *ctx, struct plan *plan, const struct argv *front, size_t source,
		 const struct argv *dirs, int preprocess, int run_check, char **what)
{
	const struct config *cfg = ctx->api->cfg;
	const char *word = ctx->host ? "-E (sccache's key)" : preprocess ? "-E" : "--dryrun";
	const char *theirs = ctx->host ? "the compiler's answer" : "nvcc's answer";
	int off = !cfg->compat || strcmp(cfg->compat, "auto");
	const char *tool = front->v[0];
	int layered = 0;
	struct api_table t;
	char *version = NULL;
	api_table_init(&t);
	struct argv names = ARGV_INIT;
	struct gate_read g = { dirs, 0, ARGV_INIT, 0, 0 };
	struct compat_decision d;
	compat_decision_init(&d);
	char *why = NULL, *inc = NULL, *identity = NULL, *vdir = NULL, *vfile = NULL;
	int fd = -1;
	if (fault_inject("compat")) {
		if (!off)
			warning("the compatibility layer did not run: injected fault (NVSHIM_FAULT); %s stands",
				theirs);
		goto out;
	}
	/* The gate with every entry's names (no toolkit facts read: a superset); the table again
	 * with the toolkit's version only for a source it lets through. */
	struct api_context quick = *ctx->api;
	quick.nvcc = NULL;
	quick.find_nvcc = NULL;
	api_context_load(&quick, &t, &version);
	compat_dryrun_names(&t, NULL, &names);
	gate_file(front->v[source], &g, GATE_DEPTH, &names, GATE_SOURCE_BYTES);
	/* and CUDA 13's moved files (layout.h, nvcc mode): an NVTX 2 header by its bare name, on a
	 * toolkit that no longer has it */
	int moved = !ctx->host && g.moved && layout_dryrun_moved(ctx);
	if ((g.hit || moved) && !off) {
		api_table_release(&t);
		api_table_init(&t);
		free(version);
		version = NULL;
		api_context_load(ctx->api, &t, &version);
	}
	if (!g.hit && !moved) {
		if (what)
			*what = xasprintf("compat = %s, %s: %s names no API the layer restores: %s as it is",
					  off ? "off" : "auto", word, front->v[source], theirs);
		goto out;
	}
	inc = compat_include_dir(ctx->api->exe_dir);
	if (off) {
		if (what)
			*what = xasprintf("compat = off, %s: %s as it is%s", word, theirs,
					  ctx->host && inc ? ", marked for sccache (nvshim/compat/sccache.h: no "
							     "preprocessor cache entry)" : "");
		goto out;
	}
	const char *bad = NULL;
	if (!inc || !cfg->cache_dir || !*cfg->cache_dir || cache_dir_check(cfg->cache_dir, &bad)) {
		diag_note(VERBOSITY_VERBOSE, "compat: %s names APIs the layer restores, but %s: %s as it is",
			  front->v[source], !inc ? "its headers are not installed" : "there is no usable cache_dir",
			  theirs);
		goto out;
	}
	identity = compat_identity(cfg, ctx->api->exe_dir);
	char key[33];
	verdict_key(tool, front, source, identity, &g.texts, key);
	if (diag_verbosity() >= VERBOSITY_DEBUG) {
		char *l = argv_to_shell(front);
		diag_debug("compat: verdict %s for the front end %s", key, l);
		free(l);
	}
	vdir = concat(cfg->cache_dir, "/compat/verdicts", NULL);
	vfile = concat(vdir, "/", key, NULL);
	char *lock = concat(vfile, ".lock", NULL);
	if (run_check && !cache_mkdirs(vdir) && (fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) >= 0)
		while (flock(fd, LOCK_EX) && errno == EINTR)
			;
	free(lock);
	char *text = cache_read(vfile);
	int have = text && !compat_dryrun_verdict_parse(text, key, &d, &why);
	free(text);
	const char *from = "cached";
	if (!have && run_check) {
		compat_decision_release(&d);
		free(why);
		why = NULL;
		check(ctx, tool, front, source, &t, version, inc, &d, &why);
		from = "checked now";
		char *v = compat_dryrun_verdict_format(key, &d, why);
		if (cache_write(vdir, vfile, v))
			diag_note(VERBOSITY_VERBOSE, "compat: cannot store the verdict in %s: %s", vfile, strerror(errno));
		free(v);
		have = 1;
	}
	if (!have) {
		if (what)
			*what = xasprintf("compat = auto, %s: %s names APIs the layer restores; no verdict yet: the "
					  "first %s of this compile checks its front end", word, front->v[source],
					  ctx->host ? "-E" : "--dryrun or -E");
		goto out;
	}
	if (!d.retry && !d.layout) {
		if (what)
			*what = xasprintf("compat = auto, %s: verdict (%s): plain, %s: %s as it is", word, from,
					  why ? why : "", theirs);
		goto out;
	}
	if (d.layout) {
		/* CUDA 13's moved files: the line runs with them (under the layer, if it needs it) */
		struct argv fixed, added;
		if (!layout_dryrun_fix(ctx, &plan->argv, d.layout, &fixed, &added)) {
			char *then = xasprintf(" (a caller that runs them, such as sccache, builds it; verdict %s)", from);
			char *text2 = layout_dryrun_note(d.layout, d.layout_header && strcmp(d.layout_header, "-") ? d.layout_header : NULL,
							 &added, preprocess ? "-E prints the source with"
									    : "the steps --dryrun prints compile with",
							 preprocess ? "" : then);
			plan_note(plan, "compat.layout", "%s", text2);
			if (what && !d.retry)
				*what = xasprintf("compat = auto, %s: verdict (%s): CUDA 13's moved files: %s", word,
						  from, text2);
			free(text2);
			free(then);
			argv_release(&plan->argv);
			argv_copy(&plan->argv, &fixed);
			layered = 1;
		} else {
			/* the check passed the fix and the layer together: neither alone */
			if (what)
				*what = xasprintf("compat = auto, %s: verdict (%s): CUDA 13's moved files, but the "
						  "files that restore them are not there now: %s as it is", word, from,
						  theirs);
			argv_release(&fixed);
			argv_release(&added);
			goto out;
		}
		argv_release(&fixed);
		argv_release(&added);
		if (!d.retry)
			goto out;
	}
	/* the sites are in the source: the argument of this line names it */
	for (size_t i = 0; i < d.nsites; i++) {
		free(d.sites[i].file);
		d.sites[i].file = xstrdup(front->v[source]);
	}
	struct compat_layered l;
	if (!compat_layer(&plan->argv, &d, inc, cfg->cache_dir, ctx->host, NULL, &l)) {
		char *goes = ctx->host ? xasprintf("sccache's -E prints the source with it, so that its cache key "
						   "covers the layer (verdict %s)", from)
			     : xasprintf(preprocess ? "-E prints the source with it" :
					 "the steps --dryrun prints compile with it (a caller that runs them, such "
					 "as sccache, builds it; verdict %s)", from);
		char *text2 = compat_restored_text(&d, &l, &plan->argv, goes);
		plan_note(plan, "compat.dryrun", "%s", text2);
		if (what)
			*what = xasprintf("compat = auto, %s: verdict (%s): the layer: %s", word, from, text2);
		free(text2);
		free(goes);
		argv_release(&plan->argv);
		argv_copy(&plan->argv, &l.argv);
		layered = 1;
	} else if (what) {
		*what = xasprintf("compat = auto, %s: verdict (%s): the layer, but no private copy of %s could be "
				  "made: %s%s", word, from, front->v[source],
				  layered ? "CUDA 13's moved files only" : theirs, layered ? "" : " as it is");
	}
	compat_layered_release(&l);
out:
	/* CC mode: no preprocessor cache entry for a source the gate lets through (the header's
	 * line marker names a file that does not exist), whatever the verdict and the setting */
	if (ctx->host && g.hit && inc) {
		argv_push(&plan->argv, "-include");
		argv_push_owned(&plan->argv, concat(inc, "/nvshim/compat/sccache.h", NULL));
		diag_note(VERBOSITY_VERBOSE, "compat: sccache's -E of %s force-includes nvshim/compat/sccache.h "
			  "(no preprocessor cache entry for a source the layer may change)", front->v[source]);
	}
	if (fd >= 0)
		close(fd);
	free(vdir);
	free(vfile);
	free(identity);
	free(inc);
	free(why);
	free(version);
	compat_decision_release(&d);
	argv_release(&g.texts);
	argv_release(&names);
	api_table_release(&t);
	return layered;
}

int compat_dryrun_apply(const struct compat_context *ctx, struct plan *plan, int run_check, char **what)
{
	const struct config *cfg = ctx->api->cfg;
	if (what)
		*what = NULL;
	if (!cfg->compat || strcmp(cfg->compat, "auto") || plan->argv.n < 2)
		return 0;
	struct invocation inv;
	invocation_parse(&inv, plan->argv.v + 1, plan->argv.n - 1, no_env);
	int preprocess = inv.mode == MODE_PREPROCESS;
	/* An -E that keeps its compile's -c (-dc, -dw), or has sccache's -Xcompiler=-P (-EP for
	 * MSVC; its compile-and-link has no -c), is a compile's key; an -E alone (a user's, ccache's
	 * preprocessor mode) is nvcc's, untouched. */
	int compile = 0;
	for (size_t i = 0; i < inv.nargs; i++) {
		const struct inv_arg *a = &inv.args[i];
		if (a->what == ARG_OPTION && a->opt->kind == OPT_KIND_MODE &&
		    (!strcmp(a->opt->name, "compile") || !strcmp(a->opt->name, "device-c") ||
		     !strcmp(a->opt->name, "device-w")))
			compile = 1;
		if (a->what == ARG_OPTION && !strcmp(a->opt->name, "compiler-options") && a->value &&
		    (!strcmp(a->value, "-P") || !strcmp(a->value, "-EP")))
			compile = 1;
	}
	if (preprocess && !inv.dryrun && !compile) {
		invocation_release(&inv);
		return 0;
	}
	struct argv front = ARGV_INIT;
	size_t source = 0;
	if ((!inv.dryrun && !preprocess) || compat_dryrun_front_args(&inv, &front, &source)) {
		invocation_release(&inv);
		argv_release(&front);
		return 0;
	}
	/* -I directories, for the gate's quoted includes */
	struct argv dirs = ARGV_INIT;
	for (size_t i = 0; i < inv.nargs; i++)
		if (inv.args[i].what == ARG_OPTION && !strcmp(inv.args[i].opt->name, "include-path") &&
		    inv.args[i].value)
			invocation_split_list(&dirs, inv.args[i].value);
	invocation_release(&inv);
	argv_insert(&front, 0, plan->argv.v[0]);
	source++;
	int layered = apply(ctx, plan, &front, source, &dirs, preprocess, run_check, what);
	argv_release(&dirs);
	argv_release(&front);
	return layered;
}

/* ---- CC mode: sccache's -E of a host compile ---- */

int compat_dryrun_host_is_key(const struct argv *args)
{
	return args->n >= 3 && !strcmp(args->v[0], "-x") && !strcmp(args->v[2], "-E");
}

int compat_dryrun_host_front_args(const struct hostcc *hc, struct argv *out, size_t *source)
{
	static const char *const drop[] = { "-E", "-P", "-fdirectives-only", "-frewrite-includes", "-M", "-MM",
					    "-MD", "-MMD", "-MG", "-MP", "-c", "-S" };
	static const char *const drop_value[] = { "-o", "-MF", "-MT", "-MQ" };
	size_t sources = 0;
	if (hc->expanded || hc->mode != HOSTCC_PREPROCESS)
		return -1;
	for (size_t i = 0; i < hc->n; i++) {
		const struct hostcc_arg *a = &hc->v[i];
		const char *first = hc->args.v[a->pos];
		if (a->input) {
			if ((a->kind != INPUT_C && a->kind != INPUT_CXX) || !strcmp(first, "-"))
				return -1;
			sources++;
			*source = out->n;
			argv_push(out, first);
			continue;
		}
		int skip = 0;
		for (size_t k = 0; k < sizeof(drop) / sizeof(drop[0]) && !skip; k++)
			skip = !strcmp(first, drop[k]);
		for (size_t k = 0; k < sizeof(drop_value) / sizeof(drop_value[0]) && !skip; k++)
			skip = a->opt && !strcmp(a->opt->name, drop_value[k]);
		for (unsigned k = 0; k < a->span && !skip; k++)
			argv_push(out, hc->args.v[a->pos + k]);
	}
	if (sources != 1)
		return -1;
	argv_push(out, "-fsyntax-only");
	return 0;
}

int compat_dryrun_host_apply(const struct compat_context *ctx, const struct hostcc *hc, struct plan *plan,
			     int run_check, char **what)
{
	if (what)
		*what = NULL;
	if (!ctx->host || plan->argv.n < 2 || !compat_dryrun_host_is_key(&hc->args))
		return 0;
	struct argv front = ARGV_INIT;
	size_t source = 0;
	if (compat_dryrun_host_front_args(hc, &front, &source)) {
		argv_release(&front);
		return 0;
	}
	/* quoted includes: -iquote directories, then -I ones */
	struct argv dirs = ARGV_INIT;
	hostcc_quote_dirs(hc, &dirs);
	argv_insert(&front, 0, plan->argv.v[0]);
	source++;
	int layered = apply(ctx, plan, &front, source, &dirs, 1, run_check, what);
	argv_release(&dirs);
	argv_release(&front);
	return layered;
}
