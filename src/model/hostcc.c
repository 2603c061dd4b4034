#include "model/hostcc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libiberty.h>

#include "base/cache.h"

#define SEP HC_SEPARATE
#define JOIN HC_JOINED

/* gcc's options that need more than "nvcc knows it, else -Xcompiler", sorted by name. */
const struct hostcc_option hostcc_options[] = {
	{ "--help", 0, HC_INFO },
	{ "--param", SEP, HC_XCOMPILER },
	{ "--sysroot", SEP, HC_XCOMPILER },
	{ "--sysroot=", JOIN, HC_XCOMPILER },
	{ "--version", 0, HC_INFO },
	{ "-B", SEP | JOIN, HC_XCOMPILER },
	{ "-D", SEP | JOIN, HC_LIST },
	{ "-I", SEP | JOIN, HC_LIST },
	{ "-L", SEP | JOIN, HC_LIST },
	{ "-MF", SEP | JOIN, HC_SPLIT },
	{ "-MQ", SEP | JOIN, HC_MQ },
	{ "-MT", SEP | JOIN, HC_SPLIT },
	{ "-O", JOIN, HC_OPTIMIZE },
	{ "-S", 0, HC_NATIVE },
	{ "-T", SEP | JOIN, HC_LINKER_PAIR },
	{ "-U", SEP | JOIN, HC_LIST },
	{ "-Wa,", JOIN, HC_XCOMPILER },
	{ "-Werror", JOIN, HC_XCOMPILER },
	{ "-Wl,", JOIN, HC_WL },
	{ "-Wp,", JOIN, HC_XCOMPILER },
	{ "-Xassembler", SEP, HC_XCOMPILER },
	{ "-Xclang", SEP, HC_XCOMPILER },
	{ "-Xlinker", SEP, HC_XLINKER },
	{ "-Xpreprocessor", SEP, HC_XCOMPILER },
	{ "-aux-info", SEP, HC_XCOMPILER },
	{ "-dumpbase", SEP, HC_XCOMPILER },
	{ "-dumpbase-ext", SEP, HC_XCOMPILER },
	{ "-dumpdir", SEP, HC_XCOMPILER },
	{ "-dumpfullversion", 0, HC_INFO },
	{ "-dumpmachine", 0, HC_INFO },
	{ "-dumpspecs", 0, HC_INFO },
	{ "-dumpversion", 0, HC_INFO },
	{ "-e", SEP, HC_LINKER_PAIR },
	{ "-idirafter", SEP | JOIN, HC_XCOMPILER },
	{ "-imacros", SEP | JOIN, HC_XCOMPILER },
	{ "-imultiarch", SEP, HC_XCOMPILER },
	{ "-imultilib", SEP, HC_XCOMPILER },
	{ "-include", SEP, HC_SPLIT },
	{ "-iprefix", SEP | JOIN, HC_XCOMPILER },
	{ "-iquote", SEP | JOIN, HC_XCOMPILER },
	{ "-isysroot", SEP | JOIN, HC_XCOMPILER },
	{ "-isystem", SEP | JOIN, HC_SPLIT },
	{ "-iwithprefix", SEP | JOIN, HC_XCOMPILER },
	{ "-iwithprefixbefore", SEP | JOIN, HC_XCOMPILER },
	{ "-l", SEP | JOIN, HC_LIST },
	{ "-mllvm", SEP, HC_XCOMPILER },
	{ "-o", SEP | JOIN, HC_SPLIT },
	{ "-print-", JOIN, HC_INFO },
	{ "-std=", JOIN, HC_STD },
	{ "-target", SEP, HC_XCOMPILER },
	{ "-time", 0, HC_XCOMPILER },
	{ "-u", SEP, HC_LINKER_PAIR },
	{ "-x", SEP | JOIN, HC_LANGUAGE },
	{ "-z", SEP, HC_LINKER_PAIR },
};
const size_t hostcc_noptions = sizeof(hostcc_options) / sizeof(hostcc_options[0]);

const struct hostcc_option *hostcc_find(const char *arg, const char **attached)
{
	const struct hostcc_option *best = NULL;
	size_t best_len = 0;
	*attached = NULL;
	for (size_t i = 0; i < hostcc_noptions; i++) {
		const struct hostcc_option *o = &hostcc_options[i];
		size_t len = strlen(o->name);
		if (!strcmp(arg, o->name))
			return o;
		if ((o->flags & HC_JOINED) && !strncmp(arg, o->name, len) && len > best_len) {
			best = o;
			best_len = len;
		}
	}
	if (best)
		*attached = arg + best_len;
	return best;
}

/* An nvcc option named exactly by arg ("-name" or "-name=value"), with its value. */
static const struct nvcc_option *nvcc_exact(const char *arg, const char **value)
{
	const struct nvcc_option *o = options_find(arg);
	*value = NULL;
	if (!o) {
		const char *eq = strchr(arg, '=');
		if (eq && arg[0] == '-') {
			const char *name = arg + 1 + (arg[1] == '-');
			size_t len = (size_t)(eq - name);
			o = arg[1] == '-' ? options_find_long(name, len) : options_find_short(name, len);
			if (o && (o->flags & OPT_VALUE))
				*value = eq + 1;
			else
				o = NULL;
		}
	}
	if (o && (o->flags & OPT_DROPPED))
		return NULL;
	return o;
}

static enum input_kind kind_of(const char *path, const char *language)
{
	if (language && (!strcmp(language, "cu") || !strcmp(language, "cuda")))
		return INPUT_CUDA;
	if (language && strcmp(language, "c") && strcmp(language, "c++"))
		return INPUT_OTHER; /* assembler, headers, ...: the host compiler's business */
	return invocation_input_kind(path, language);
}

#define RESPONSE_DEPTH 16      /* nested @files */
#define RESPONSE_FILES_MAX 256 /* @files read for one command line */

/* The arguments with @file response files expanded as gcc reads them (quoted as libiberty's
 * buildargv() reads them, nested ones too): regular files only, RESPONSE_DEPTH deep and
 * RESPONSE_FILES_MAX files at most. Anything else (a directory, a missing file, one too many)
 * stays as written, for the real compiler to judge: libiberty's expandargv() would end the
 * process on "@dir". */
static void expand_responses(struct argv *out, char *const *args, size_t n, int depth, size_t *files)
{
	for (size_t i = 0; i < n; i++) {
		const char *a = args[i];
		struct stat sb;
		char *text = NULL;
		if (a[0] == '@' && a[1] && depth < RESPONSE_DEPTH && *files < RESPONSE_FILES_MAX &&
		    !stat(a + 1, &sb) && S_ISREG(sb.st_mode))
			text = cache_read(a + 1);
		if (!text) {
			argv_push(out, a);
			continue;
		}
		(*files)++;
		char **v = *text ? buildargv(text) : NULL;
		size_t vn = 0;
		while (v && v[vn])
			vn++;
		expand_responses(out, v, vn, depth + 1, files);
		freeargv(v);
		free(text);
	}
}

void hostcc_parse(struct hostcc *hc, char *const *args, size_t n)
{
	const char *language = NULL;
	int compile = 0, assemble = 0, preprocess = 0, deps_only = 0, info = 0;
	size_t files = 0;

	memset(hc, 0, sizeof(*hc));
	argv_init(&hc->args);
	expand_responses(&hc->args, args, n, 0, &files);
	hc->expanded = files > 0;

	hc->v = XNEWVEC(struct hostcc_arg, hc->args.n ? hc->args.n : 1);
	for (size_t i = 0; i < hc->args.n; i++) {
		const char *arg = hc->args.v[i];
		struct hostcc_arg *a = &hc->v[hc->n++];
		memset(a, 0, sizeof(*a));
		a->pos = i;
		a->span = 1;
		if (arg[0] != '-' || !arg[1]) {
			a->input = 1;
			a->kind = kind_of(arg, language);
			hc->ninputs++;
			hc->ncuda += a->kind == INPUT_CUDA;
			continue;
		}
		const char *attached;
		a->opt = hostcc_find(arg, &attached);
		if (a->opt) {
			if (attached && *attached)
				a->value = attached;
			else if ((a->opt->flags & HC_SEPARATE) && i + 1 < hc->args.n) {
				a->value = hc->args.v[++i];
				a->span = 2;
			} else if (attached)
				a->value = attached;
			switch (a->opt->action) {
			case HC_LANGUAGE:
				language = a->value && strcmp(a->value, "none") ? a->value : NULL;
				break;
			case HC_INFO:
				info = 1;
				break;
			default:
				break;
			}
			if (!strcmp(a->opt->name, "-o"))
				hc->output = a->value;
			else if (!strcmp(a->opt->name, "-MF"))
				hc->deps_file = 1;
			else if (!strcmp(a->opt->name, "-S"))
				assemble = 1;
			continue;
		}
		a->nvcc = nvcc_exact(arg, &a->value);
		if (a->nvcc) {
			if ((a->nvcc->flags & OPT_VALUE) && !a->value && i + 1 < hc->args.n) {
				a->value = hc->args.v[++i];
				a->span = 2;
			}
			const char *name = a->nvcc->name;
			if (!strcmp(name, "compile"))
				compile = 1;
			else if (!strcmp(name, "preprocess"))
				preprocess = 1;
			else if (!strcmp(name, "generate-dependencies") ||
				 !strcmp(name, "generate-nonsystem-dependencies"))
				deps_only = 1;
			else if (!strcmp(name, "generate-dependencies-with-compile") ||
				 !strcmp(name, "generate-nonsystem-dependencies-with-compile"))
				hc->deps = 1;
			else if (!strcmp(name, "shared"))
				hc->shared = 1;
			else if (!strcmp(name, "compiler-bindir"))
				hc->ccbin = 1;
			continue;
		}
		if (!strcmp(arg, "-static"))
			hc->is_static = 1;
		else if (!strcmp(arg, "-fsyntax-only"))
			compile = 1;
	}
	if (preprocess)
		hc->mode = HOSTCC_PREPROCESS;
	else if (deps_only && !hc->deps)
		hc->mode = HOSTCC_DEPENDENCIES;
	else if (info || !hc->ninputs)
		hc->mode = HOSTCC_INFO;
	else if (assemble)
		hc->mode = HOSTCC_ASSEMBLE;
	else if (compile)
		hc->mode = HOSTCC_COMPILE;
	else
		hc->mode = HOSTCC_LINK;
}

void hostcc_release(struct hostcc *hc)
{
	argv_release(&hc->args);
	free(hc->v);
	memset(hc, 0, sizeof(*hc));
	argv_init(&hc->args);
}

const char *hostcc_mode_name(enum hostcc_mode mode)
{
	static const char *const names[] = {
		[HOSTCC_LINK] = "link",		   [HOSTCC_COMPILE] = "compile (-c)",
		[HOSTCC_ASSEMBLE] = "assemble (-S)", [HOSTCC_PREPROCESS] = "preprocess (-E)",
		[HOSTCC_DEPENDENCIES] = "dependencies (-M)", [HOSTCC_INFO] = "information",
	};
	return names[mode];
}

/* ---- quoting for nvcc ---- */

static int shell_safe(const char *s, const char *also)
{
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:./,^-", *s) &&
		    !strchr(also, *s))
			return 0;
	return 1;
}

/* Commas escaped for nvcc's list splitting. */
static char *escape_commas(const char *s)
{
	size_t len = strlen(s), commas = 0;
	for (const char *p = s; *p; p++)
		commas += *p == ',';
	char *out = XNEWVEC(char, len + commas + 1), *q = out;
	for (const char *p = s; *p; p++) {
		if (*p == ',')
			*q++ = '\\';
		*q++ = *p;
	}
	*q = '\0';
	return out;
}

char *hostcc_quote_xcompiler(const char *value)
{
	if (strpbrk(value, "'\"\\`\n"))
		return NULL;
	char *esc = escape_commas(value);
	if (shell_safe(value, ""))
		return esc;
	char *quoted = concat("'", esc, "'", NULL);
	free(esc);
	return quoted;
}

char *hostcc_quote_xlinker(const char *value)
{
	if (strpbrk(value, "'\"\\`\n"))
		return NULL;
	/* nvcc escapes $ in linker options itself. */
	if (shell_safe(value, "$") && !strchr(value, ','))
		return xstrdup(value);
	return concat("\"", value, "\"", NULL);
}

/* ---- translation ---- */

struct tr {
	struct argv *out;
	struct argv *notes;
	struct argv xcompiler; /* what went through -Xcompiler, as given */
	struct argv xlinker;
	struct argv unsafe;
	struct argv std;
};

static void push_quoted(struct tr *t, const char *via, const char *value, char *(*quote)(const char *))
{
	char *q = quote(value);
	if (!q) {
		/* The best that can be done; the note says it may not arrive intact. */
		argv_push(&t->unsafe, value);
		q = escape_commas(value);
	}
	argv_push(t->out, via);
	argv_push_owned(t->out, q);
}

static void xcompiler(struct tr *t, const char *opt, const char *value)
{
	push_quoted(t, "-Xcompiler", opt, hostcc_quote_xcompiler);
	if (value)
		push_quoted(t, "-Xcompiler", value, hostcc_quote_xcompiler);
}

static void xlinker(struct tr *t, const char *item)
{
	push_quoted(t, "-Xlinker", item, hostcc_quote_xlinker);
}

/* "c++17" for gnu++17, c++1z and the like; NULL for a C standard. */
static char *cxx_standard(const char *v, int *changed)
{
	static const struct {
		const char *from, *to;
	} names[] = {
		{ "98", "03" }, { "03", "03" }, { "0x", "11" }, { "11", "11" }, { "1y", "14" }, { "14", "14" },
		{ "1z", "17" }, { "17", "17" }, { "2a", "20" }, { "20", "20" }, { "2b", "23" }, { "23", "23" },
		{ "2c", "26" }, { "26", "26" },
	};
	const char *num = NULL;
	*changed = 0;
	if (!strncmp(v, "c++", 3))
		num = v + 3;
	else if (!strncmp(v, "gnu++", 5))
		num = v + 5;
	if (!num)
		return NULL;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(num, names[i].from)) {
			char *s = concat("c++", names[i].to, NULL);
			*changed = strcmp(s, v) != 0;
			return s;
		}
	return xstrdup(v);
}

static char *make_quote(const char *target)
{
	size_t dollars = 0;
	for (const char *p = target; *p; p++)
		dollars += *p == '$';
	char *out = XNEWVEC(char, strlen(target) + dollars + 1), *q = out;
	for (const char *p = target; *p; p++) {
		if (*p == '$')
			*q++ = '$';
		*q++ = *p;
	}
	*q = '\0';
	return out;
}

/* The dependency file gcc writes for -MD without -MF: the output with its suffix replaced by
 * .d, or the input's base name with .d. */
static char *default_deps_file(const struct hostcc *hc)
{
	const char *base = hc->output;
	const char *input = NULL;
	for (size_t i = 0; i < hc->n; i++)
		if (hc->v[i].input)
			input = hc->args.v[hc->v[i].pos];
	if (!base)
		base = input ? lbasename(input) : NULL;
	if (!base)
		return NULL;
	const char *slash = strrchr(base, '/');
	const char *dot = strrchr(base, '.');
	size_t len = dot && (!slash || dot > slash) ? (size_t)(dot - base) : strlen(base);
	char *stem = xstrndup(base, len);
	char *d = concat(stem, ".d", NULL);
	free(stem);
	return d;
}

static char *joined(const struct argv *a) { return argv_join(a, " "); }

/* gcc's dependency options: -MD -MMD -MP -MG, and -MF -MT -MQ with their values. */
static int dependency_option(const char *arg)
{
	static const char *const flags[] = { "-MD", "-MMD", "-MP", "-MG" };
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (!strcmp(arg, flags[i]))
			return 1;
	return !strncmp(arg, "-MF", 3) || !strncmp(arg, "-MT", 3) || !strncmp(arg, "-MQ", 3);
}

void hostcc_translate(const struct hostcc *hc, const char *ccbin, struct argv *out, struct argv *notes)
{
	struct tr t = { out, notes, ARGV_INIT, ARGV_INIT, ARGV_INIT, ARGV_INIT };
	char *deps = NULL;

	if (ccbin && !hc->ccbin) {
		argv_push(out, "-ccbin");
		argv_push(out, ccbin);
	}
	/* -E with -MD or -MMD (a compiler cache's preprocessing run): nvcc refuses the pair, but
	 * its -E is one run of the host preprocessor, which writes the file as gcc would. */
	int deps_to_host = hc->mode == HOSTCC_PREPROCESS && hc->deps;
	int has_mt = 0;
	for (size_t i = 0; i < hc->n; i++) {
		const struct hostcc_arg *a = &hc->v[i];
		const char *arg = hc->args.v[a->pos];
		if (a->input) {
			argv_push(out, arg);
			continue;
		}
		if (deps_to_host && dependency_option(arg)) {
			has_mt |= !strncmp(arg, "-MT", 3) || !strncmp(arg, "-MQ", 3);
			xcompiler(&t, arg, a->span == 2 ? hc->args.v[a->pos + 1] : NULL);
			argv_push_owned(&t.xcompiler, a->span == 2 ? concat(arg, " ", hc->args.v[a->pos + 1], NULL)
								   : xstrdup(arg));
			continue;
		}
		if (a->nvcc) {
			argv_pushn(out, hc->args.v + a->pos, a->span);
			continue;
		}
		if (!a->opt) {
			/* One word nvcc does not know: the host compiler's. */
			xcompiler(&t, arg, NULL);
			argv_push(&t.xcompiler, arg);
			continue;
		}
		const char *name = a->opt->name, *v = a->value;
		switch (a->opt->action) {
		case HC_NATIVE:
		case HC_INFO:
			argv_pushn(out, hc->args.v + a->pos, a->span);
			break;
		case HC_SPLIT:
			argv_push(out, name);
			if (v)
				argv_push(out, v);
			break;
		case HC_LIST: {
			if (!v) {
				argv_push(out, name);
				break;
			}
			char *e = escape_commas(v);
			char *attached = concat(name, e, NULL);
			/* "-lib" would be nvcc's -lib: keep such values apart. */
			if (options_find(attached)) {
				argv_push(out, name);
				argv_push_owned(out, e);
				free(attached);
			} else {
				argv_push_owned(out, attached);
				free(e);
			}
			break;
		}
		case HC_XCOMPILER: {
			if (a->span == 2)
				xcompiler(&t, name, v);
			else
				xcompiler(&t, arg, NULL);
			char *shown = a->span == 2 ? concat(name, " ", v, NULL) : xstrdup(arg);
			argv_push_owned(&t.xcompiler, shown);
			break;
		}
		case HC_WL: {
			struct argv items = ARGV_INIT;
			invocation_split_list(&items, v);
			for (size_t k = 0; k < items.n; k++)
				xlinker(&t, items.v[k]);
			argv_release(&items);
			argv_push(&t.xlinker, arg);
			break;
		}
		case HC_XLINKER:
			if (v) {
				xlinker(&t, v);
				argv_pushf(&t.xlinker, "%s %s", name, v);
			}
			break;
		case HC_LINKER_PAIR:
			if (a->span == 2) {
				xlinker(&t, name);
				xlinker(&t, v);
				argv_pushf(&t.xlinker, "%s %s", name, v);
			} else {
				xlinker(&t, arg);
				argv_push(&t.xlinker, arg);
			}
			break;
		case HC_STD: {
			int changed;
			char *s = cxx_standard(v ? v : "", &changed);
			if (!s) {
				argv_pushf(&t.std, "%s dropped: the CUDA sources are compiled as CUDA C++", arg);
			} else {
				argv_push_owned(out, concat("-std=", s, NULL));
				if (changed)
					argv_pushf(&t.std, "%s passed to nvcc as -std=%s (nvcc accepts no GNU "
						   "or draft names)", arg, s);
				free(s);
			}
			break;
		}
		case HC_OPTIMIZE:
			if (!v || !*v) {
				argv_push(out, "-O1");
			} else if (strlen(v) == 1 && v[0] >= '0' && v[0] <= '3') {
				argv_push(out, arg);
			} else {
				xcompiler(&t, arg, NULL);
				argv_push(&t.xcompiler, arg);
			}
			break;
		case HC_MQ:
			argv_push(out, "-MT");
			argv_push_owned(out, make_quote(v ? v : ""));
			break;
		case HC_LANGUAGE:
			if (v && !strcmp(v, "none"))
				break;
			argv_push(out, "-x");
			argv_push(out, v && !strcmp(v, "cuda") ? "cu" : v ? v : "");
			break;
		}
	}
	if (deps_to_host && !hc->deps_file && (deps = default_deps_file(hc))) {
		/* the host preprocessor's own -o is nvcc's temporary file: the names gcc would use */
		xcompiler(&t, "-MF", deps);
		if (!has_mt) {
			char *target = NULL;
			for (size_t i = 0; i < hc->n && !target; i++)
				if (hc->v[i].input)
					target = concat(lbasename(hc->args.v[hc->v[i].pos]), NULL);
			if (target) {
				char *dot = strrchr(target, '.');
				if (dot)
					*dot = '\0';
				char *obj = concat(target, ".o", NULL);
				xcompiler(&t, "-MT", obj);
				free(obj);
				free(target);
			}
		}
	} else if (hc->deps && !hc->deps_file && hc->ninputs == 1 && (deps = default_deps_file(hc))) {
		argv_push(out, "-MF");
		argv_push(out, deps);
	}

	/* The notes. */
	const char *cuda = NULL;
	for (size_t i = 0; i < hc->n && !cuda; i++)
		if (hc->v[i].input && hc->v[i].kind == INPUT_CUDA)
			cuda = hc->args.v[hc->v[i].pos];
	argv_pushf(notes, "%s%s is CUDA: nvcc compiles it%s%s [cc.nvcc]", cuda ? cuda : "the input", hc->ncuda > 1 ? " (and more)" : "",
		   ccbin && !hc->ccbin ? ", with host compiler " : "", ccbin && !hc->ccbin ? ccbin : "");
	struct argv parts = ARGV_INIT;
	if (t.xcompiler.n) {
		char *s = joined(&t.xcompiler);
		argv_pushf(&parts, "%s through -Xcompiler", s);
		free(s);
	}
	if (t.xlinker.n) {
		char *s = joined(&t.xlinker);
		argv_pushf(&parts, "%s through -Xlinker", s);
		free(s);
	}
	if (deps)
		argv_pushf(&parts, "-MF %s added (the dependency file gcc writes for -MD)", deps);
	if (parts.n) {
		char *s = xstrdup("");
		for (size_t i = 0; i < parts.n; i++) {
			char *n = concat(s, i ? "; " : "", parts.v[i], NULL);
			free(s);
			s = n;
		}
		argv_pushf(notes, "gcc options for nvcc: %s [cc.translate]", s);
		free(s);
	}
	for (size_t i = 0; i < t.std.n; i++)
		argv_pushf(notes, "%s [cc.std]", t.std.v[i]);
	for (size_t i = 0; i < t.unsafe.n; i++)
		argv_pushf(notes, "'%s' holds a quote or backslash that nvcc's shell may change; passed "
			   "as it is [cc.quote]", t.unsafe.v[i]);
	free(deps);
	argv_release(&parts);
	argv_release(&t.xcompiler);
	argv_release(&t.xlinker);
	argv_release(&t.unsafe);
	argv_release(&t.std);
}

void hostcc_quote_dirs(const struct hostcc *hc, struct argv *dirs)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < hc->n; i++) {
			const struct hostcc_arg *a = &hc->v[i];
			if (a->opt && a->value && *a->value && !strcmp(a->opt->name, pass ? "-I" : "-iquote"))
				argv_push(dirs, a->value);
		}
}
