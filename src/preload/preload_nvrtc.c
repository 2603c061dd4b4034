/* libnvshim-preload.so: the NVRTC functions and the nvrtc.* rules (preload.h). */
#include "preload/preload.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libiberty.h>

#include "model/arch.h"
#include "diagnose/diagnose.h"
#include "preload/headers.h"
#include "preload/registry.h"
#include "preload/rtc.h"

typedef int (*create_fn)(void **, const char *, const char *, int, const char *const *, const char *const *);
typedef int (*destroy_fn)(void **);
typedef int (*compile_fn)(void *, int, const char *const *);
typedef int (*name_expr_fn)(void *, const char *);
typedef int (*get_fn)(void *, char *);
typedef int (*size_fn)(void *, size_t *);
typedef int (*version_fn)(int *, int *);
typedef int (*count_fn)(int *);

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

void preload_nvrtc_facts(struct preload_lib *L)
{
	if (PL_SEEN(&L->facts_ready))
		return;
	pthread_mutex_lock(&L->facts_lock);
	if (!L->facts_ready) {
		version_fn version = PL_REAL(L, PL_nvrtcVersion, version_fn);
		count_fn num = PL_REAL(L, PL_nvrtcGetNumSupportedArchs, count_fn);
		count_fn archs = PL_REAL(L, PL_nvrtcGetSupportedArchs, count_fn);
		int n = 0;
		if (version)
			version(&L->major, &L->minor);
		/* NVRTC 11.2 and later; without them the arch rules have nothing to go by. */
		if (num && archs && num(&n) == PL_NVRTC_SUCCESS && n > 0 && n <= 64 &&
		    archs(L->archs) == PL_NVRTC_SUCCESS) {
			L->narchs = (size_t)n;
			qsort(L->archs, L->narchs, sizeof(int), cmp_int);
		}
		PL_PUBLISH(&L->facts_ready, 1);
	}
	pthread_mutex_unlock(&L->facts_lock);
}

/* The program's log from NVRTC itself (xmalloc'ed, "" when there is none). */
static char *real_log(struct preload_lib *L, void *prog)
{
	size_fn size = PL_REAL(L, PL_nvrtcGetProgramLogSize, size_fn);
	get_fn get = PL_REAL(L, PL_nvrtcGetProgramLog, get_fn);
	size_t n = 0;
	if (!size || !get || size(prog, &n) != PL_NVRTC_SUCCESS || !n)
		return xstrdup("");
	char *log = XNEWVEC(char, n + 1);
	if (get(prog, log) != PL_NVRTC_SUCCESS)
		log[0] = '\0';
	log[n] = '\0';
	return log;
}

int preload_nvrtcCreateProgram(struct preload_lib *L, int fn, void **prog, const char *src, const char *name,
			       int n, const char *const *headers, const char *const *include_names)
{
	int r = PL_REAL(L, fn, create_fn)(prog, src, name, n, headers, include_names);
	if (r == PL_NVRTC_SUCCESS && L->active && prog && *prog)
		registry_create(*prog, L, src, name, n, headers, include_names);
	return r;
}

int preload_nvrtcDestroyProgram(struct preload_lib *L, int fn, void **prog)
{
	void *handle = prog ? *prog : NULL;
	int r = PL_REAL(L, fn, destroy_fn)(prog);
	if (r == PL_NVRTC_SUCCESS && L->active && handle)
		registry_destroy(handle);
	return r;
}

int preload_nvrtcAddNameExpression(struct preload_lib *L, int fn, void *prog, const char *const expr)
{
	int r = PL_REAL(L, fn, name_expr_fn)(prog, expr);
	if (r == PL_NVRTC_SUCCESS && L->active)
		registry_name_expr(prog, expr);
	return r;
}

static int get_output(struct preload_lib *L, int fn, int size_fn_index, enum registry_output kind, void *prog,
		      char *out)
{
	int r = PL_REAL(L, fn, get_fn)(prog, out);
	size_fn size = PL_REAL(L, size_fn_index, size_fn);
	size_t n = 0;
	if (r == PL_NVRTC_SUCCESS && L->active && out && size && size(prog, &n) == PL_NVRTC_SUCCESS)
		registry_output(prog, kind, out, n);
	return r;
}

int preload_nvrtcGetPTX(struct preload_lib *L, int fn, void *prog, char *out)
{
	return get_output(L, fn, PL_nvrtcGetPTXSize, REGISTRY_PTX, prog, out);
}

int preload_nvrtcGetCUBIN(struct preload_lib *L, int fn, void *prog, char *out)
{
	return get_output(L, fn, PL_nvrtcGetCUBINSize, REGISTRY_CUBIN, prog, out);
}

int preload_nvrtcGetLTOIR(struct preload_lib *L, int fn, void *prog, char *out)
{
	return get_output(L, fn, PL_nvrtcGetLTOIRSize, REGISTRY_LTOIR, prog, out);
}

int preload_nvrtcGetProgramLogSize(struct preload_lib *L, int fn, void *prog, size_t *size)
{
	int r = PL_REAL(L, fn, size_fn)(prog, size);
	char *notes, *replacement;
	if (r != PL_NVRTC_SUCCESS || !L->active || !size || !registry_log(prog, &notes, &replacement))
		return r;
	if (replacement)
		*size = strlen(replacement) + 1;
	if (notes)
		*size += strlen(notes);
	free(notes);
	free(replacement);
	return r;
}

int preload_nvrtcGetProgramLog(struct preload_lib *L, int fn, void *prog, char *log)
{
	char *notes = NULL, *replacement = NULL;
	if (!L->active || !log || !registry_log(prog, &notes, &replacement))
		return PL_REAL(L, fn, get_fn)(prog, log);
	int r = PL_NVRTC_SUCCESS;
	if (replacement)
		strcpy(log, replacement);
	else
		r = PL_REAL(L, fn, get_fn)(prog, log);
	if (r == PL_NVRTC_SUCCESS && notes)
		strcat(log, notes);
	free(notes);
	free(replacement);
	return r;
}

/* L's header sets (headers.h), looked for once per library and process. */
static const struct headers *nvrtc_headers(struct preload_lib *L)
{
	struct headers *h = PL_SEEN(&L->headers);
	if (h)
		return h;
	struct headers *mine = XNEW(struct headers);
	headers_find(mine, L->path, L->major, L->minor, preload_config()->nvrtc_header_roots);
	char *own = argv_join(&mine->own.dirs, " "), *full = argv_join(&mine->full.dirs, " ");
	diag_debug("NVRTC %d.%d (%s): headers beside it: %s (no %s); a complete set elsewhere: %s",
		   L->major, L->minor, L->path, *own ? own : "none",
		   headers_parts_name(headers_needed(L->major) & ~mine->own.parts),
		   *full ? full : "none looked for or found");
	free(own);
	free(full);
	h = PL_PUBLISH_ONCE(&L->headers, mine);
	if (h != mine) {
		headers_release(mine);
		free(mine);
	}
	return h;
}

/* What a set of headers is called in a note. */
static char *set_label(const struct headers_set *s, int major, int minor)
{
	switch (s->layout) {
	case HEADERS_TOOLKIT:
		return xasprintf("the headers of NVRTC %d.%d's toolkit", major, minor);
	case HEADERS_CONDA:
		return xasprintf("the headers of NVRTC %d.%d's conda environment, %s", major, minor, s->where);
	case HEADERS_WHEEL:
	case HEADERS_WHEEL_SPLIT:
		return xasprintf("the headers of NVRTC %d.%d's wheels, in %s", major, minor, s->where);
	default:
		return xasprintf("the headers of CUDA %d.%d", major, minor);
	}
}

static void note(struct argv *notes, const char *rule, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note(struct argv *notes, const char *rule, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = xvasprintf(fmt, ap);
	va_end(ap);
	argv_pushf(notes, "%s [%s]", text, rule);
	free(text);
}

static char *arch_name(const struct arch *a)
{
	char buf[32];
	return xstrdup(arch_format(a, buf, sizeof(buf)));
}

/* What the program is called in notes. */
static char *label_of(void *prog)
{
	char *name = registry_name(prog);
	char *label = xasprintf("NVRTC program '%s'", name ? name : "(no name)");
	free(name);
	return label;
}

/* The first line of a log, for a note (xmalloc'ed). */
static char *first_error(const char *log)
{
	char *msgs = rtc_log_messages(log);
	msgs[strcspn(msgs, "\n")] = '\0';
	return msgs;
}

/* A retry: compiles prog with `next`, which becomes the options in use (*use, *cur_n, *cur);
 * the program's label is looked up for the note. Returns NVRTC's result. */
static int compile_again(compile_fn compile, void *prog, const struct argv *next, struct argv *use,
			 int *cur_n, const char *const **cur, char **label)
{
	int r = compile(prog, (int)next->n, (const char *const *)next->v);
	argv_copy(use, next);
	*cur_n = (int)use->n;
	*cur = (const char *const *)use->v;
	if (!*label)
		*label = label_of(prog);
	return r;
}

/* NVRTC could not open its builtins library (NVRTC_ERROR_BUILTIN_OPERATION_FAILURE, its log
 * `failed to open libnvrtc-builtins.so.13.5`): the file of that version, found on the machine
 * (headers_find_builtins), loaded by its full path, and the program compiled again; NVRTC's own
 * lookup by name then finds it loaded. None found: the note names the package. Returns NVRTC's
 * result. */
static int builtins_again(struct preload_lib *L, compile_fn compile, void *prog, int n, const char *const *opts,
			  struct argv *notes, char **label)
{
	char *log = real_log(L, prog);
	int found_msg = strstr(log, "failed to open libnvrtc-builtins") != NULL;
	free(log);
	if (!found_msg)
		return PL_NVRTC_ERROR_BUILTIN;
	char name[64];
	snprintf(name, sizeof(name), "libnvrtc-builtins.so.%d.%d", L->major, L->minor);
	const char *ldp = getenv("LD_LIBRARY_PATH");
	char *why = xasprintf("NVRTC %d.%d (%s) opens %s by name, and the loader did not find it (LD_LIBRARY_PATH=%s)",
			      L->major, L->minor, *L->path ? L->path : "its library", name, ldp && *ldp ? ldp : "unset");
	char *file = headers_find_builtins(L->path, L->major, L->minor, preload_config()->nvrtc_header_roots);
	if (!*label)
		*label = label_of(prog);
	int r = PL_NVRTC_ERROR_BUILTIN;
	if (file) {
		void *h = dlopen(file, RTLD_NOW | RTLD_GLOBAL);
		if (h) {
			r = compile(prog, n, opts);
			note(notes, "nvrtc.builtins", "%s: %s: loaded %s by its full path and compiled again: %s", *label,
			     why, file, r == PL_NVRTC_SUCCESS ? "that worked" : "that failed too");
		} else {
			const char *e = dlerror();
			note(notes, "nvrtc.builtins", "%s: %s; %s could not be loaded either (%s)", *label, why, file,
			     e ? e : "dlopen failed");
		}
	} else {
		char *hint = headers_builtins_hint(L->major, L->minor);
		note(notes, "nvrtc.builtins", "%s: %s, and there is no %s beside it or elsewhere on this machine: "
		     "install it: %s", *label, why, name, hint);
		free(hint);
	}
	free(file);
	free(why);
	return r;
}

/* ptxas's resource errors in a failed program's log (a compile to SASS: -arch=sm_NN), each
 * explained as nvcc mode explains them. */
static void resource_notes(struct preload_lib *L, void *prog, int n, const char *const *options,
			   char **label, struct argv *notes)
{
	char *log = real_log(L, prog);
	struct diagnosis d;
	diagnose_init(&d);
	diagnose_stderr(&d, log);
	if (diagnose_find(&d, DIAGNOSE_RESOURCE)) {
		struct rtc_options o;
		rtc_options_scan(&o, n, options);
		struct argv why = ARGV_INIT;
		diagnose_resource_notes(&d, o.arch_parsed ? o.arch_value : NULL, &why);
		if (!*label)
			*label = label_of(prog);
		for (size_t i = 0; i < why.n; i++)
			argv_pushf(notes, "%s: %s", *label, why.v[i]);
		argv_release(&why);
	}
	diagnose_release(&d);
	free(log);
}

int preload_nvrtcCompileProgram(struct preload_lib *L, int fn, void *prog, int n, const char *const *options)
{
	compile_fn compile = PL_REAL(L, fn, compile_fn);
	if (!L->active)
		return compile(prog, n, options);
	const struct config *c = preload_config();
	struct rtc_options o;
	struct argv use = ARGV_INIT, next = ARGV_INIT, notes = ARGV_INIT;
	char *label = NULL;
	int rewritten = 0;
	rtc_options_scan(&o, n, options);
	preload_nvrtc_facts(L);
	const unsigned oldest = L->narchs ? (unsigned)L->archs[0] : 0;

	if (!o.narch && c->nvrtc_no_arch && L->narchs) {
		const char *source;
		unsigned gpu = preload_gpu(&source);
		unsigned cc = gpu ? rtc_clamp(gpu, L->archs, L->narchs) : 0;
		if (cc > oldest) {
			char arch[32];
			snprintf(arch, sizeof(arch), "compute_%u", cc);
			rtc_options_with_arch(&use, n, options, arch);
			rewritten = 1;
			label = label_of(prog);
			note(&notes, "nvrtc.no_arch",
			     "%s: no -arch given: compiling for compute_%u, the GPU's (%s), instead of NVRTC's "
			     "default compute_%u",
			     label, cc, source, oldest);
		}
	} else if (o.arch_parsed && o.arch.kind != ARCH_LTO && c->nvrtc_clamp_arch && L->narchs &&
		   !rtc_supported(o.arch.num, L->archs, L->narchs)) {
		struct arch to = { o.arch.kind, rtc_clamp(o.arch.num, L->archs, L->narchs), '\0' };
		char *name = arch_name(&to);
		rtc_options_with_arch(&use, n, options, name);
		rewritten = 1;
		label = label_of(prog);
		note(&notes, "nvrtc.clamp_arch",
		     "%s: -arch=%s is %s the targets NVRTC %d.%d supports (%u to %u): compiling for %s", label,
		     o.arch_value, o.arch.num > to.num ? "newer than" : "older than", L->major, L->minor,
		     oldest, (unsigned)L->archs[L->narchs - 1], name);
		free(name);
	}

	int cur_n = rewritten ? (int)use.n : n;
	const char *const *cur = rewritten ? (const char *const *)use.v : options;
	int r = compile(prog, cur_n, cur);
	if (r == PL_NVRTC_ERROR_BUILTIN && c->nvrtc_builtins)
		r = builtins_again(L, compile, prog, cur_n, cur, &notes, &label);
	int first = r, retried = 0;
	char *first_log = NULL;

	if (r == PL_NVRTC_ERROR_COMPILATION && (c->nvrtc_include_dirs || c->nvrtc_retry_arch)) {
		char *log = real_log(L, prog);
		first_log = xstrdup(log);
		char *header = c->nvrtc_include_dirs ? rtc_log_missing_header(log) : NULL;
		const struct headers *h = header ? nvrtc_headers(L) : NULL;
		const unsigned need = headers_needed(L->major);
		/* The set beside NVRTC, else a complete one elsewhere when it lacks a part. */
		const struct headers_set *set = h ? &h->own : NULL;
		const int alt = h && (h->own.parts & need) != need && h->full.layout != HEADERS_NONE;
		if (alt)
			set = &h->full;
		/* What to install when the header's part is nowhere: the parts the set beside NVRTC lacks. */
		const unsigned lacking = h ? need & ~h->own.parts : 0;
		if (header && headers_set_has(set, header)) {
			char *added = NULL;
			argv_release(&next);
			argv_pushn(&next, (char *const *)cur, (size_t)cur_n);
			for (size_t i = 0; i < set->dirs.n; i++) {
				if (rtc_options_has_include(cur_n, cur, set->dirs.v[i]))
					continue;
				argv_pushf(&next, "-I%s", set->dirs.v[i]);
				char *more = concat(added ? added : "", added ? " " : "", "-I", set->dirs.v[i], NULL);
				free(added);
				added = more;
			}
			if (added) {
				r = compile_again(compile, prog, &next, &use, &cur_n, &cur, &label);
				retried = 1;
				free(log);
				log = r == PL_NVRTC_SUCCESS ? NULL : real_log(L, prog);
				char *still = log ? rtc_log_missing_header(log) : NULL;
				char *e = log ? first_error(log) : xstrdup("");
				char *what = set_label(set, L->major, L->minor);
				char *instead = alt ? xasprintf(", since %s has no %s", h->own.where ? h->own.where
											: "NVRTC's directory",
								headers_parts_name(lacking))
						    : xstrdup("");
				if (alt) {
					free(what);
					what = xasprintf("CUDA %d.%d's headers in %s", set->version / 1000,
							 set->version % 1000 / 10, set->where);
				}
				/* A part that is nowhere: the package, not a second compiler error. */
				char *hint = still && headers_part_of(still) && !headers_set_has(set, still) &&
							     !(set->parts & headers_part_of(still))
						     ? headers_install_hint(h->own.layout, lacking ? lacking : headers_part_of(still),
									    L->major, L->minor)
						     : NULL;
				if (hint)
					note(&notes, "nvrtc.include_dirs",
					     "%s: \"%s\" was not found: compiled again with %s (%s%s), then \"%s\" "
					     "was not found: there are no %s of CUDA %d beside NVRTC %d.%d or elsewhere "
					     "on this machine; install them: %s",
					     label, header, added, what, instead, still,
					     headers_parts_name(lacking ? lacking : headers_part_of(still)), L->major,
					     L->major, L->minor, hint);
				else
					note(&notes, "nvrtc.include_dirs",
					     "%s: \"%s\" was not found: compiled again with %s (%s%s): %s%s%s",
					     label, header, added, what, instead,
					     r == PL_NVRTC_SUCCESS ? "that worked"
					     : still		   ? "that failed too ("
							   : "the headers were found, then the compile failed (",
					     r == PL_NVRTC_SUCCESS ? "" : e, r == PL_NVRTC_SUCCESS ? "" : ")");
				free(hint);
				free(instead);
				free(what);
				free(still);
				free(e);
			}
			free(added);
		} else if (header && headers_part_of(header) && !(set->parts & headers_part_of(header))) {
			/* A CUDA header of a part that no set on this machine has: no retry, the package. */
			unsigned missing = lacking ? lacking : headers_part_of(header);
			char *hint = headers_install_hint(h->own.layout, missing, L->major, L->minor);
			if (!label)
				label = label_of(prog);
			note(&notes, "nvrtc.include_dirs",
			     "%s: \"%s\" was not found: there are no %s of CUDA %d beside NVRTC %d.%d (%s) or "
			     "elsewhere on this machine; install them: %s",
			     label, header, headers_parts_name(missing), L->major, L->major, L->minor,
			     h->own.where ? h->own.where : L->path, hint);
			free(hint);
		}
		free(header);

		if (r == PL_NVRTC_ERROR_COMPILATION && c->nvrtc_retry_arch && log) {
			struct rtc_arch_failure f;
			rtc_log_arch_failure(log, &f);
			struct rtc_options now;
			rtc_options_scan(&now, cur_n, cur);
			struct arch from = { ARCH_VIRTUAL, oldest, '\0' };
			if (now.arch_parsed)
				from = now.arch;
			const char *source = NULL;
			unsigned gpu = f.need != RTC_NEED_NONE && from.kind != ARCH_LTO ? preload_gpu(&source) : 0;
			struct arch to = from;
			int go = 0;
			if (gpu && f.need == RTC_NEED_NEWER && (!f.min || gpu >= f.min)) {
				to.num = rtc_clamp(gpu, L->archs, L->narchs);
				to.suffix = '\0';
				go = to.num > from.num;
			} else if (gpu && f.need == RTC_NEED_SPECIFIC && !from.suffix && gpu >= from.num &&
				   gpu >= 90 && rtc_supported(gpu, L->archs, L->narchs)) {
				to.num = gpu;
				to.suffix = 'a';
				go = 1;
			}
			if (go) {
				char *was = arch_name(&from), *name = arch_name(&to);
				argv_release(&next);
				rtc_options_with_arch(&next, cur_n, cur, name);
				r = compile_again(compile, prog, &next, &use, &cur_n, &cur, &label);
				retried = 1;
				char *why = first_error(f.line);
				char *again = NULL;
				if (r != PL_NVRTC_SUCCESS) {
					char *log2 = real_log(L, prog);
					char *e = first_error(log2);
					again = *e ? concat(" (", e, ")", NULL) : NULL;
					free(e);
					free(log2);
				}
				note(&notes, "nvrtc.retry_arch",
				     "%s: failed for %s with an error a newer target cures (%s): compiled again "
				     "for %s, the GPU's (%s): %s%s",
				     label, was, *why ? why : f.line, name, source,
				     r == PL_NVRTC_SUCCESS ? "that worked" : "that failed too",
				     again ? again : "");
				free(again);
				free(why);
				free(was);
				free(name);
			}
			rtc_arch_failure_release(&f);
		}
		free(log);
	}

	if (r != PL_NVRTC_SUCCESS && c->explain_resources)
		resource_notes(L, prog, cur_n, cur, &label, &notes);
	registry_compiled(prog, cur_n, cur);
	if (notes.n) {
		char *text = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&text, &len);
		for (size_t i = 0; i < notes.n; i++)
			fprintf(m, "nvshim warning : %s\n", notes.v[i]);
		fclose(m);
		/* When a retry failed too, the program sees what it would have seen without nvshim. */
		registry_set_log(prog, text, r != PL_NVRTC_SUCCESS && retried ? first_log : NULL);
		free(text);
		for (size_t i = 0; i < notes.n; i++)
			preload_note(notes.v[i], label);
	}
	if (r != PL_NVRTC_SUCCESS && retried)
		r = first;
	free(first_log);
	free(label);
	argv_release(&use);
	argv_release(&next);
	argv_release(&notes);
	return r;
}

unsigned preload_nvrtc_program_arch(unsigned id)
{
	struct registry_program p;
	if (registry_get(id, &p))
		return 0;
	struct preload_lib *L = p.owner;
	struct rtc_options o;
	rtc_options_scan(&o, (int)p.options.n, (const char *const *)p.options.v);
	unsigned num = o.arch_parsed ? o.arch.num : 0;
	if (!num && L) {
		preload_nvrtc_facts(L);
		num = L->narchs ? (unsigned)L->archs[0] : 0;
	}
	registry_program_release(&p);
	return num;
}

int preload_nvrtc_recompile(unsigned id, unsigned cc, char **log, char **name, unsigned *used_cc)
{
	struct registry_program p;
	*log = NULL;
	*name = NULL;
	*used_cc = cc;
	if (registry_get(id, &p))
		return -1;
	struct preload_lib *L = p.owner;
	create_fn create = L ? PL_REAL(L, PL_nvrtcCreateProgram, create_fn) : NULL;
	compile_fn compile = L ? PL_REAL(L, PL_nvrtcCompileProgram, compile_fn) : NULL;
	destroy_fn destroy = L ? PL_REAL(L, PL_nvrtcDestroyProgram, destroy_fn) : NULL;
	name_expr_fn expr = L ? PL_REAL(L, PL_nvrtcAddNameExpression, name_expr_fn) : NULL;
	*name = xstrdup(p.name ? p.name : "(no name)");
	if (!create || !compile || !destroy) {
		registry_program_release(&p);
		return -1;
	}
	preload_nvrtc_facts(L);
	*used_cc = rtc_clamp(cc, L->archs, L->narchs);
	struct argv opts = ARGV_INIT;
	rtc_options_for_sass(&opts, (int)p.options.n, (const char *const *)p.options.v, *used_cc);
	void *prog = NULL;
	int r = create(&prog, p.source, p.name, (int)p.headers.n, (const char *const *)p.headers.v,
		       (const char *const *)p.include_names.v);
	if (r == PL_NVRTC_SUCCESS) {
		for (size_t i = 0; expr && i < p.name_exprs.n; i++)
			expr(prog, p.name_exprs.v[i]);
		r = compile(prog, (int)opts.n, (const char *const *)opts.v);
		*log = real_log(L, prog);
		destroy(&prog);
	}
	argv_release(&opts);
	registry_program_release(&p);
	return r;
}
