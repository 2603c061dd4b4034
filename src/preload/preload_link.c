/* libnvshim-preload.so: the driver's JIT linker and loader, nvJitLink, cuGetProcAddress and
 * cuGetErrorString, and the link.* diagnostics (preload.h). */
#include "preload/preload.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libiberty.h>

#include "model/arch.h"
#include "base/diag.h"
#include "diagnose/diagnose.h"
#include "preload/registry.h"
#include "preload/rtc.h"

typedef int (*link_create_fn)(unsigned, int *, void **, void **);
typedef int (*link_add_data_fn)(void *, int, void *, size_t, const char *, unsigned, int *, void **);
typedef int (*link_add_file_fn)(void *, int, const char *, unsigned, int *, void **);
typedef int (*link_complete_fn)(void *, void **, size_t *);
typedef int (*link_destroy_fn)(void *);
typedef int (*load_data_fn)(void **, const void *);
typedef int (*load_data_ex_fn)(void **, const void *, unsigned, int *, void **);
typedef int (*library_load_fn)(void **, const void *, int *, void **, unsigned, int *, void **, unsigned);
typedef int (*proc_fn)(const char *, void **, int, uint64_t);
typedef int (*proc2_fn)(const char *, void **, int, uint64_t, int *);
typedef int (*error_string_fn)(int, const char **);
typedef int (*unload_fn)(void *);
typedef int (*count_fn)(int *);
typedef int (*attribute_fn)(int *, int, int);
typedef int (*jl_create_fn)(void **, uint32_t, const char *const *);
typedef int (*jl_destroy_fn)(void **);
typedef int (*jl_add_data_fn)(void *, int, const void *, size_t, const char *);
typedef int (*jl_add_file_fn)(void *, int, const char *);
typedef int (*jl_complete_fn)(void *);
typedef int (*jl_size_fn)(void *, size_t *);
typedef int (*jl_log_fn)(void *, char *);

#define LOG_SIZE (64 * 1024)
#define MAX_IDS 16
#define MAX_INPUTS 32
#define MAX_RECOMPILES 4

/* A link in progress: a CUlinkState or an nvJitLinkHandle. */
struct link {
	struct link *next;
	const void *handle;
	int jit;                  /* nvJitLink, else the driver's linker */
	struct preload_lib *L;
	char *log;                /* nvshim's error log buffer, NULL when the caller gave one */
	char *caller_log;         /* the caller's */
	size_t caller_log_size;
	unsigned n;               /* the caller's options ... */
	int *caller_opts;
	void **caller_vals;
	int *opts;                /* ... and the arrays the driver got (the caller's + nvshim's log) */
	void **vals;
	unsigned target;          /* CU_JIT_TARGET or nvJitLink's -arch number, 0 when not given */
	struct fingerprint inputs[MAX_INPUTS]; /* matched against the registry when the link fails */
	size_t ninputs;
	struct argv files;
	char *extra;              /* nvJitLink: what nvshim adds to its error log */
};

static pthread_mutex_t links_lock = PTHREAD_MUTEX_INITIALIZER;
static struct link *links;

static void link_free(struct link *k)
{
	free(k->log);
	free(k->opts);
	free(k->vals);
	argv_release(&k->files);
	free(k->extra);
	free(k);
}

static void link_add(struct link *k)
{
	pthread_mutex_lock(&links_lock);
	k->next = links;
	links = k;
	pthread_mutex_unlock(&links_lock);
}

/* Call with links_lock held. */
static struct link *link_find(const void *handle, int jit)
{
	for (struct link *k = links; k; k = k->next)
		if (k->handle == handle && k->jit == jit)
			return k;
	return NULL;
}

static void link_remove(const void *handle, int jit)
{
	pthread_mutex_lock(&links_lock);
	struct link **pp = &links;
	while (*pp && !((*pp)->handle == handle && (*pp)->jit == jit))
		pp = &(*pp)->next;
	struct link *k = *pp;
	if (k)
		*pp = k->next;
	pthread_mutex_unlock(&links_lock);
	if (k)
		link_free(k);
}

static void ids_add(unsigned *ids, size_t *n, const unsigned *more, size_t m)
{
	for (size_t i = 0; i < m; i++) {
		int seen = 0;
		for (size_t j = 0; j < *n && !seen; j++)
			seen = ids[j] == more[i];
		if (!seen && *n < MAX_IDS)
			ids[(*n)++] = more[i];
	}
}

static size_t match(const void *data, size_t size, unsigned *ids, size_t max)
{
	struct fingerprint fp;
	if (!data || !size)
		return 0;
	registry_fingerprint(&fp, data, size);
	return registry_match(&fp, ids, max);
}

/* The programs an input came from, for a call that failed right away. */
static size_t match_fp(const struct fingerprint *fp, unsigned *ids, size_t max)
{
	return fp ? registry_match(fp, ids, max) : 0;
}

/* The programs a file's contents came from (read only when a link has failed). */
static size_t file_match(const char *path, unsigned *ids, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	size_t n = 0;
	if (fd < 0)
		return 0;
	if (!fstat(fd, &sb) && S_ISREG(sb.st_mode) && sb.st_size > 0 && sb.st_size < (256 << 20)) {
		char *buf = XNEWVEC(char, (size_t)sb.st_size);
		ssize_t got = read(fd, buf, (size_t)sb.st_size);
		if (got == sb.st_size)
			n = match(buf, (size_t)got, ids, max);
		free(buf);
	}
	close(fd);
	return n;
}

/* Output options (CU_JIT_WALL_TIME, CU_JIT_INFO/ERROR_LOG_BUFFER_SIZE_BYTES) write their value
 * back into the option values: into nvshim's copy, which goes back to the caller's. */
static int output_option(int opt) { return opt == 2 || opt == 4 || opt == 6; }

static void sync_values(unsigned n, const int *caller_opts, void **caller_vals, void *const *vals)
{
	if (!caller_opts || !caller_vals || !vals || (const void *)caller_vals == (const void *)vals)
		return;
	for (unsigned i = 0; i < n; i++)
		if (output_option(caller_opts[i]))
			caller_vals[i] = vals[i];
}

/* Option arrays with an error log buffer added when the caller passed none. Returns 1 if it
 * added one (into *log, xmalloc'ed). */
static int with_log(unsigned n, int *opts, void **vals, int **out_opts, void ***out_vals, char **log,
		    char **caller_log, size_t *caller_log_size, unsigned *target)
{
	int have = 0;
	*caller_log = NULL;
	*caller_log_size = 0;
	for (unsigned i = 0; opts && vals && i < n; i++) {
		if (opts[i] == PL_CU_JIT_ERROR_LOG_BUFFER) {
			have = 1;
			*caller_log = vals[i];
		} else if (opts[i] == PL_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) {
			*caller_log_size = (size_t)(uintptr_t)vals[i];
		} else if (opts[i] == PL_CU_JIT_TARGET && target) {
			*target = (unsigned)(uintptr_t)vals[i];
		}
	}
	*log = NULL;
	*out_opts = opts;
	*out_vals = vals;
	if (have || (n && (!opts || !vals)))
		return 0;
	*out_opts = XNEWVEC(int, n + 2);
	*out_vals = XNEWVEC(void *, n + 2);
	if (n) {
		memcpy(*out_opts, opts, n * sizeof(int));
		memcpy(*out_vals, vals, n * sizeof(void *));
	}
	*log = XNEWVEC(char, LOG_SIZE);
	(*log)[0] = '\0';
	(*out_opts)[n] = PL_CU_JIT_ERROR_LOG_BUFFER;
	(*out_vals)[n] = *log;
	(*out_opts)[n + 1] = PL_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;
	(*out_vals)[n + 1] = (void *)(uintptr_t)LOG_SIZE;
	return 1;
}

/* Errors about the code itself, for which compiling it again can tell more. */
static int image_error(int code, int jit)
{
	if (jit)
		return code != 1 && code != 2 && code != 10; /* not an option or a null input */
	return code == 200 || code == 209 || code == 218 || code == 222 || code == 300;
}

static const char *jit_result_name(int code)
{
	static const char *const names[] = {
		"NVJITLINK_SUCCESS",		 "NVJITLINK_ERROR_UNRECOGNIZED_OPTION",
		"NVJITLINK_ERROR_MISSING_ARCH",	 "NVJITLINK_ERROR_INVALID_INPUT",
		"NVJITLINK_ERROR_PTX_COMPILE",	 "NVJITLINK_ERROR_NVVM_COMPILE",
		"NVJITLINK_ERROR_INTERNAL",	 "NVJITLINK_ERROR_THREADPOOL",
		"NVJITLINK_ERROR_UNRECOGNIZED_INPUT", "NVJITLINK_ERROR_FINALIZE",
		"NVJITLINK_ERROR_NULL_INPUT",	 "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS",
		"NVJITLINK_ERROR_INCORRECT_INPUT_TYPE", "NVJITLINK_ERROR_ARCH_MISMATCH",
		"NVJITLINK_ERROR_OUTDATED_LIBRARY", "NVJITLINK_ERROR_MISSING_FATBIN",
		"NVJITLINK_ERROR_UNRECOGNIZED_ARCH", "NVJITLINK_ERROR_UNSUPPORTED_ARCH",
		"NVJITLINK_ERROR_LTO_NOT_ENABLED",
	};
	return code >= 0 && (size_t)code < sizeof(names) / sizeof(names[0]) ? names[code] : "an nvJitLink error";
}

/* The compute capability of the current context's device, if the driver can tell. */
static unsigned context_cc(struct preload_lib *L)
{
	if (!L)
		return 0;
	count_fn ctx = PL_REAL(L, PL_cuCtxGetDevice, count_fn);
	attribute_fn attr = PL_REAL(L, PL_cuDeviceGetAttribute, attribute_fn);
	int dev = 0, major = 0, minor = 0;
	if (!ctx || !attr || ctx(&dev) != PL_CUDA_SUCCESS)
		return 0;
	if (attr(&major, 75, dev) != PL_CUDA_SUCCESS || attr(&minor, 76, dev) != PL_CUDA_SUCCESS)
		return 0;
	return (unsigned)(major * 10 + minor);
}

static void append(char **buf, const char *text)
{
	char *more = concat(*buf ? *buf : "", text, NULL);
	free(*buf);
	*buf = more;
}

static char *with_newline(const char *text)
{
	size_t len = strlen(text);
	return len && text[len - 1] == '\n' ? xstrdup(text) : concat(text, "\n", NULL);
}

/* Appends text to a caller's NUL-terminated log buffer of `size` bytes, as far as it fits. */
static void append_to_buffer(char *buf, size_t size, const char *text)
{
	if (!buf || !size)
		return;
	size_t used = strnlen(buf, size);
	if (used >= size)
		return;
	size_t room = size - used - 1, len = strlen(text);
	if (len > room)
		len = room;
	memcpy(buf + used, text, len);
	buf[used + len] = '\0';
}

struct failure {
	const char *call;      /* "cuLinkComplete" */
	int code;
	int jit;
	struct preload_lib *L; /* the library that failed */
	const char *log;       /* the linker's error log, NULL when none */
	int log_asked;         /* the caller has that log in its own buffer */
	const unsigned *ids;   /* the NVRTC programs that went in */
	size_t nids;
	unsigned target;       /* the target the link is for, 0 when it did not say */
	char *caller_log;      /* where the explanation goes too */
	size_t caller_log_size;
	char **extra;          /* nvJitLink: added to its error log */
};

/* The explanation of each ptxas resource error in msgs, as nvcc mode gives it: a note on
 * stderr and a line in *text (for the caller's log). cc: the target, 0 when unknown. */
static void explain_resource_errors(const char *msgs, unsigned cc, char **text)
{
	if (!preload_config()->explain_resources)
		return;
	struct diagnosis d;
	diagnose_init(&d);
	diagnose_stderr(&d, msgs);
	if (diagnose_find(&d, DIAGNOSE_RESOURCE)) {
		char target[24];
		snprintf(target, sizeof(target), "sm_%u", cc);
		struct argv why = ARGV_INIT;
		diagnose_resource_notes(&d, cc ? target : NULL, &why);
		for (size_t i = 0; i < why.n; i++) {
			diag_note(VERBOSITY_NORMAL, "%s", why.v[i]);
			char *line = concat("nvshim: note: ", why.v[i], "\n", NULL);
			append(text, line);
			free(line);
		}
		argv_release(&why);
	}
	diagnose_release(&d);
}

/* Says why a link or load failed, as well as nvshim can tell. */
static void explain(const struct failure *f)
{
	const struct config *c = preload_config();
	const char *name = NULL;
	char *what;
	if (f->jit) {
		what = xasprintf("%s failed with %s (%d)", f->call, jit_result_name(f->code), f->code);
	} else {
		error_string_fn getname = f->L ? PL_REAL(f->L, PL_cuGetErrorName, error_string_fn) : NULL;
		if (!getname || getname(f->code, &name) != PL_CUDA_SUCCESS)
			name = NULL;
		what = xasprintf("%s failed with %s (%d)", f->call, name ? name : "CUDA error", f->code);
	}
	char *text = NULL;     /* for the caller's buffer and nvJitLink's log */
	char *summary = NULL;  /* for cuGetErrorString */
	const char *log = f->log ? f->log : "";

	if (!rtc_log_vague(log)) {
		if (!f->log_asked) {
			char *shown = with_newline(log);
			if (f->jit)
				error("%s; nvJitLink's error log says: [link.diagnose]", what);
			else
				error("%s; the JIT linker's error log, which the program did not ask for: "
				      "[link.diagnose]",
				      what);
			preload_raw(shown);
			free(shown);
		}
		summary = rtc_log_messages(log);
		explain_resource_errors(summary, f->target ? f->target : context_cc(f->jit ? NULL : f->L), &text);
		summary[strcspn(summary, "\n")] = '\0';
	} else if (!image_error(f->code, f->jit)) {
		/* Nothing nvshim can add: not about the code. */
	} else if (!f->nids) {
		error("%s and %s; none of its inputs is the output of an NVRTC program of this process, so "
		      "nvshim has nothing to compile again [link.diagnose]",
		      what, *log ? "a log that gives no reason" : "an empty log");
	} else {
		unsigned cc = f->target ? f->target : context_cc(f->jit ? NULL : f->L);
		const char *source = NULL;
		if (!cc)
			cc = preload_gpu(&source);
		for (size_t i = 0; i < f->nids && i < MAX_RECOMPILES; i++) {
			unsigned want = cc ? cc : preload_nvrtc_program_arch(f->ids[i]), used = 0;
			char *rlog = NULL, *pname = NULL;
			int r = want ? preload_nvrtc_recompile(f->ids[i], want, &rlog, &pname, &used) : -1;
			char *msgs = rtc_log_messages(rlog ? rlog : "");
			if (*msgs) {
				error("%s and %s; NVRTC program '%s', compiled again for sm_%u without -rdc, says: "
				      "[link.diagnose]",
				      what, *log ? "a log that gives no reason" : "an empty log", pname, used);
				preload_raw(msgs);
				char *head = xasprintf("nvshim: NVRTC program '%s', compiled for sm_%u without -rdc, says:\n",
						       pname, used);
				append(&text, head);
				append(&text, msgs);
				free(head);
				explain_resource_errors(msgs, used, &text);
				if (!summary) {
					summary = xstrdup(msgs);
					summary[strcspn(summary, "\n")] = '\0';
				}
			} else if (r == PL_NVRTC_SUCCESS) {
				error("%s and %s; NVRTC program '%s' compiles for sm_%u without -rdc with no message: "
				      "the cause is in the link itself (symbols, a mix of targets) or the driver "
				      "[link.diagnose]",
				      what, *log ? "a log that gives no reason" : "an empty log", pname, used);
			} else if (pname) {
				diag_note(VERBOSITY_VERBOSE, "NVRTC program '%s' could not be compiled again (%d)", pname, r);
			}
			free(msgs);
			free(rlog);
			free(pname);
		}
	}
	if (text) {
		char *t = concat("\n", text, NULL);
		append_to_buffer(f->caller_log, f->caller_log_size, t);
		free(t);
		if (f->extra)
			append(f->extra, text);
	}
	if (summary && *summary && !f->jit && c->link_error_string)
		preload_explain_set(f->code, summary);
	free(summary);
	free(text);
	free(what);
}

static int diagnosing(const struct preload_lib *L)
{
	return L->active && preload_config()->link_diagnose;
}

/* ---- the driver's linker ------------------------------------------------------------------ */

int preload_cuLinkCreate(struct preload_lib *L, int fn, unsigned n, int *options, void **values, void **state)
{
	link_create_fn real = PL_REAL(L, fn, link_create_fn);
	preload_explain_clear();
	if (!diagnosing(L) || !state)
		return real(n, options, values, state);
	struct link *k = XCNEW(struct link);
	int *opts;
	void **vals;
	argv_init(&k->files);
	int added = with_log(n, options, values, &opts, &vals, &k->log, &k->caller_log, &k->caller_log_size,
			     &k->target);
	if (added) {
		/* The driver may write output options at any call on the link: they stay alive. */
		k->opts = opts;
		k->vals = vals;
	}
	int r = real(added ? n + 2 : n, opts, vals, state);
	if (added)
		sync_values(n, options, values, vals);
	if (r != PL_CUDA_SUCCESS || !*state) {
		link_free(k);
		return r;
	}
	k->handle = *state;
	k->L = L;
	k->n = n;
	k->caller_opts = options;
	k->caller_vals = values;
	link_add(k);
	return r;
}

/* Copies what a failed link call needs, under the lock. */
struct link_view {
	char *log;
	int log_asked;
	char *caller_log;
	size_t caller_log_size;
	unsigned target;
	struct fingerprint inputs[MAX_INPUTS];
	size_t ninputs;
	unsigned ids[MAX_IDS];
	size_t nids;
	struct argv files;
};

static int link_view(const void *handle, int jit, struct link_view *v)
{
	memset(v, 0, sizeof(*v));
	argv_init(&v->files);
	pthread_mutex_lock(&links_lock);
	struct link *k = link_find(handle, jit);
	if (k) {
		if (!jit) {
			sync_values(k->n, k->caller_opts, k->caller_vals, k->vals);
			v->log = k->log ? xstrdup(k->log) : k->caller_log ? xstrndup(k->caller_log, k->caller_log_size ? k->caller_log_size : LOG_SIZE) : NULL;
			v->log_asked = !k->log;
			v->caller_log = k->caller_log;
			v->caller_log_size = k->caller_log_size;
		}
		v->target = k->target;
		memcpy(v->inputs, k->inputs, sizeof(v->inputs));
		v->ninputs = k->ninputs;
		argv_copy(&v->files, &k->files);
	}
	pthread_mutex_unlock(&links_lock);
	for (size_t i = 0; k && i < v->ninputs; i++) {
		unsigned more[MAX_IDS];
		size_t m = registry_match(&v->inputs[i], more, MAX_IDS);
		ids_add(v->ids, &v->nids, more, m);
	}
	for (size_t i = 0; k && i < v->files.n; i++) {
		unsigned more[MAX_IDS];
		size_t m = file_match(v->files.v[i], more, MAX_IDS);
		ids_add(v->ids, &v->nids, more, m);
	}
	return k ? 0 : -1;
}

static void link_view_release(struct link_view *v)
{
	free(v->log);
	argv_release(&v->files);
}

/* An input went into a link: its fingerprint (data), or its file. */
static void link_note_input(const void *handle, int jit, const struct fingerprint *fp, const char *file)
{
	pthread_mutex_lock(&links_lock);
	struct link *k = link_find(handle, jit);
	if (k) {
		if (fp && k->ninputs < MAX_INPUTS)
			k->inputs[k->ninputs++] = *fp;
		if (file)
			argv_push(&k->files, file);
		if (!jit)
			sync_values(k->n, k->caller_opts, k->caller_vals, k->vals);
	}
	pthread_mutex_unlock(&links_lock);
}

static void link_failed(struct preload_lib *L, const char *call, int code, const void *handle, int jit,
			const unsigned *only, size_t nonly, const char *jit_log, char **extra)
{
	struct link_view v;
	if (link_view(handle, jit, &v))
		return;
	struct failure f = { call, code, jit, L, jit ? jit_log : v.log, jit ? 0 : v.log_asked,
			     only ? only : v.ids, only ? nonly : v.nids, v.target, v.caller_log,
			     v.caller_log_size, extra };
	explain(&f);
	link_view_release(&v);
}

/* Records an input added from memory to a link (driver: jit 0, nvJitLink: 1); when the add
 * failed, fills ids with the NVRTC programs its bytes came from and returns their number. */
static size_t note_data_input(void *state, int jit, const void *data, size_t size, int failed,
			      unsigned ids[MAX_IDS])
{
	struct fingerprint fp, *have = NULL;
	if (data && size) {
		registry_fingerprint(&fp, data, size);
		have = &fp;
	}
	link_note_input(state, jit, have, NULL);
	return failed ? match_fp(have, ids, MAX_IDS) : 0;
}

int preload_cuLinkAddData(struct preload_lib *L, int fn, void *state, int type, void *data, size_t size,
			  const char *name, unsigned n, int *options, void **values)
{
	preload_explain_clear();
	int r = PL_REAL(L, fn, link_add_data_fn)(state, type, data, size, name, n, options, values);
	if (!diagnosing(L))
		return r;
	unsigned ids[MAX_IDS];
	size_t m = note_data_input(state, 0, data, size, r != PL_CUDA_SUCCESS, ids);
	if (r != PL_CUDA_SUCCESS)
		link_failed(L, "cuLinkAddData", r, state, 0, ids, m, NULL, NULL);
	return r;
}

int preload_cuLinkAddFile(struct preload_lib *L, int fn, void *state, int type, const char *path, unsigned n,
			  int *options, void **values)
{
	preload_explain_clear();
	int r = PL_REAL(L, fn, link_add_file_fn)(state, type, path, n, options, values);
	if (!diagnosing(L))
		return r;
	link_note_input(state, 0, NULL, path);
	if (r != PL_CUDA_SUCCESS) {
		unsigned ids[MAX_IDS];
		size_t m = path ? file_match(path, ids, MAX_IDS) : 0;
		link_failed(L, "cuLinkAddFile", r, state, 0, ids, m, NULL, NULL);
	}
	return r;
}

int preload_cuLinkComplete(struct preload_lib *L, int fn, void *state, void **cubin, size_t *size)
{
	preload_explain_clear();
	int r = PL_REAL(L, fn, link_complete_fn)(state, cubin, size);
	if (r != PL_CUDA_SUCCESS && diagnosing(L))
		link_failed(L, "cuLinkComplete", r, state, 0, NULL, 0, NULL, NULL);
	else if (diagnosing(L))
		link_note_input(state, 0, NULL, NULL);
	return r;
}

int preload_cuLinkDestroy(struct preload_lib *L, int fn, void *state)
{
	int r = PL_REAL(L, fn, link_destroy_fn)(state);
	if (L->active)
		link_remove(state, 0);
	return r;
}

/* ---- the driver's loaders ----------------------------------------------------------------- */

static void load_failed(struct preload_lib *L, const char *call, int code, const void *image, const char *log,
			int log_asked, char *caller_log, size_t caller_log_size, unsigned target)
{
	unsigned ids[MAX_IDS];
	size_t m = image_error(code, 0) ? match(image, registry_image_size(image), ids, MAX_IDS) : 0;
	struct failure f = { call, code, 0, L, log, log_asked, ids, m, target, caller_log, caller_log_size, NULL };
	explain(&f);
}

/* A loader's JIT options, with a log buffer of nvshim's added when the caller gave none. */
struct loader_log {
	int *opts;
	void **vals;
	char *log, *caller_log;
	size_t caller_log_size;
	unsigned target;
	int added;
};

static void loader_log_begin(struct loader_log *j, unsigned n, int *options, void **values)
{
	j->target = 0;
	j->added = with_log(n, options, values, &j->opts, &j->vals, &j->log, &j->caller_log,
			    &j->caller_log_size, &j->target);
}

/* After the load: the caller's output values brought up to date, a failure explained, nvshim's
 * copies freed. */
static void loader_log_end(struct loader_log *j, struct preload_lib *L, const char *call, int r,
			   const void *image, unsigned n, const int *options, void **values, void **handle,
			   int library)
{
	if (j->added)
		sync_values(n, options, values, j->vals);
	if (r == PL_CUDA_SUCCESS && handle)
		preload_image_loaded(L, *handle, library, image, NULL);
	if (r != PL_CUDA_SUCCESS && !preload_image_load_failed(L, call, r, image, NULL))
		load_failed(L, call, r, image, j->added ? j->log : j->caller_log, !j->added, j->caller_log,
			    j->caller_log_size, j->target);
	if (j->added) {
		free(j->opts);
		free(j->vals);
		free(j->log);
	}
}

int preload_cuModuleLoadData(struct preload_lib *L, int fn, void **module, const void *image)
{
	preload_explain_clear();
	int r = PL_REAL(L, fn, load_data_fn)(module, image);
	if (r == PL_CUDA_SUCCESS && module)
		preload_image_loaded(L, *module, 0, image, NULL);
	if (r == PL_CUDA_SUCCESS || preload_image_load_failed(L, "cuModuleLoadData", r, image, NULL) ||
	    !diagnosing(L))
		return r;
	/* No log without options: load once more through cuModuleLoadDataEx to read it. */
	char *log = NULL;
	load_data_ex_fn ex = PL_REAL(L, PL_cuModuleLoadDataEx, load_data_ex_fn);
	if (ex && image && image_error(r, 0)) {
		int opts[2] = { PL_CU_JIT_ERROR_LOG_BUFFER, PL_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
		log = XNEWVEC(char, LOG_SIZE);
		log[0] = '\0';
		void *vals[2] = { log, (void *)(uintptr_t)LOG_SIZE };
		void *again = NULL;
		if (ex(&again, image, 2, opts, vals) == PL_CUDA_SUCCESS && again) {
			unload_fn unload = PL_REAL(L, PL_cuModuleUnload, unload_fn);
			if (unload)
				unload(again);
			log[0] = '\0';
		}
	}
	load_failed(L, "cuModuleLoadData", r, image, log, 0, NULL, 0, 0);
	free(log);
	return r;
}

int preload_cuModuleLoadDataEx(struct preload_lib *L, int fn, void **module, const void *image, unsigned n,
			       int *options, void **values)
{
	load_data_ex_fn real = PL_REAL(L, fn, load_data_ex_fn);
	preload_explain_clear();
	if (!diagnosing(L)) {
		int r = real(module, image, n, options, values);
		if (r == PL_CUDA_SUCCESS && module)
			preload_image_loaded(L, *module, 0, image, NULL);
		else if (r != PL_CUDA_SUCCESS)
			preload_image_load_failed(L, "cuModuleLoadDataEx", r, image, NULL);
		return r;
	}
	struct loader_log j;
	loader_log_begin(&j, n, options, values);
	int r = real(module, image, j.added ? n + 2 : n, j.opts, j.vals);
	loader_log_end(&j, L, "cuModuleLoadDataEx", r, image, n, options, values, module, 0);
	return r;
}

int preload_cuLibraryLoadData(struct preload_lib *L, int fn, void **library, const void *code, int *jit_options,
			      void **jit_values, unsigned njit, int *lib_options, void **lib_values, unsigned nlib)
{
	library_load_fn real = PL_REAL(L, fn, library_load_fn);
	preload_explain_clear();
	if (!diagnosing(L)) {
		int r = real(library, code, jit_options, jit_values, njit, lib_options, lib_values, nlib);
		if (r == PL_CUDA_SUCCESS && library)
			preload_image_loaded(L, *library, 1, code, NULL);
		else if (r != PL_CUDA_SUCCESS)
			preload_image_load_failed(L, "cuLibraryLoadData", r, code, NULL);
		return r;
	}
	struct loader_log j;
	loader_log_begin(&j, njit, jit_options, jit_values);
	int r = real(library, code, j.opts, j.vals, j.added ? njit + 2 : njit, lib_options, lib_values, nlib);
	loader_log_end(&j, L, "cuLibraryLoadData", r, code, njit, jit_options, jit_values, library, 1);
	return r;
}

/* ---- cuGetProcAddress and cuGetErrorString -------------------------------------------------- */

/* The CUDA version from which cuGetProcAddress returns the _v2 form of a function. */
static int v2_since(const char *name)
{
	return !strcmp(name, "cuGetProcAddress_v2") ? 12000 : 6050;
}

/* Replaces a driver function handed out by cuGetProcAddress with nvshim's wrapper for it: the
 * one whose real function it is, else the form the caller's CUDA version gets. */
/* The functions of the "no kernel image" explanations (preload_image.c): handed out wrapped
 * only when the driver's answer is the function nvshim's slot calls, so that a wrapper never
 * calls another form (a launch on the per-thread default stream stays one). */
static int image_fn(int fn)
{
	return fn >= PL_cuModuleLoad && fn <= PL_cuLaunchKernelEx_ptsz;
}

static void wrap_proc(struct preload_lib *L, const char *symbol, void **pfn, int version, uint64_t flags)
{
	int base = -1, v2 = -1, ptsz = -1, same = -1;
	/* cudart asks for hundreds of functions at start: most are none of nvshim's. */
	if (strncmp(symbol, "cuLink", 6) && strncmp(symbol, "cuModuleLoad", 12) &&
	    strncmp(symbol, "cuLibraryLoad", 13) && strncmp(symbol, "cuGetProcAddress", 16) &&
	    strcmp(symbol, "cuGetErrorString") && strcmp(symbol, "cuModuleGetFunction") &&
	    strcmp(symbol, "cuLibraryGetKernel") && strcmp(symbol, "cuKernelGetFunction") &&
	    strcmp(symbol, "cuModuleUnload") && strcmp(symbol, "cuLibraryUnload") &&
	    strncmp(symbol, "cuLaunchKernel", 14))
		return;
	size_t len = strlen(symbol);
	for (int fn = PL_cuLinkCreate; fn <= PL_cuGetErrorString && same < 0; fn++) {
		const char *name = preload_fn_name(fn);
		if (!preload_wrapper(fn, L) || strncmp(name, symbol, len))
			continue;
		if (!name[len])
			base = fn;
		else if (!strcmp(name + len, "_v2"))
			v2 = fn;
		else if (!strcmp(name + len, "_ptsz"))
			ptsz = fn;
		else
			continue;
		if (PL_REAL(L, fn, void *) == *pfn)
			same = fn;
	}
	/* CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (2) asks for the _ptsz form. */
	if (same < 0 && ptsz >= 0 && (flags & 2))
		base = ptsz;
	int fn = same >= 0 ? same : v2 >= 0 && (base < 0 || version >= v2_since(preload_fn_name(v2))) ? v2 : base;
	if (fn < 0)
		return;
	if (image_fn(fn) && same < 0 && PL_REAL(L, fn, void *) && PL_REAL(L, fn, void *) != *pfn)
		return;
	if (image_fn(fn) && !preload_config()->explain_no_image && !preload_config()->explain_stub_kernels)
		return;
	/* A function the slot lacked (the driver may hand out one dlsym does not): the first answer
	 * stays. */
	PL_PUBLISH_ONCE(&L->real[fn], *pfn);
	*pfn = preload_wrapper(fn, L);
}

int preload_cuGetProcAddress(struct preload_lib *L, int fn, const char *symbol, void **pfn, int version,
			     uint64_t flags)
{
	int r = PL_REAL(L, fn, proc_fn)(symbol, pfn, version, flags);
	if (r == PL_CUDA_SUCCESS && L->active && symbol && pfn && *pfn)
		wrap_proc(L, symbol, pfn, version, flags);
	return r;
}

int preload_cuGetProcAddress_v2(struct preload_lib *L, int fn, const char *symbol, void **pfn, int version,
				uint64_t flags, int *status)
{
	int r = PL_REAL(L, fn, proc2_fn)(symbol, pfn, version, flags, status);
	if (r == PL_CUDA_SUCCESS && L->active && symbol && pfn && *pfn && (!status || *status == 0))
		wrap_proc(L, symbol, pfn, version, flags);
	return r;
}

int preload_cuGetErrorString(struct preload_lib *L, int fn, int code, const char **text)
{
	int r = PL_REAL(L, fn, error_string_fn)(code, text);
	const char *why;
	if (r == PL_CUDA_SUCCESS && L->active && text && (why = preload_explain_get(code)) &&
	    preload_config()->link_error_string)
		*text = preload_explain_message(*text, why);
	return r;
}

/* ---- nvJitLink ---------------------------------------------------------------------------- */

/* The first of L's functions named like base (any version). */
static void *jit_fn(struct preload_lib *L, int base, const char *versioned_prefix)
{
	void *f = PL_REAL(L, base, void *);
	size_t len = strlen(versioned_prefix);
	for (int fn = 0; !f && fn < PL_NFUNCTIONS; fn++)
		if (!strncmp(preload_fn_name(fn), versioned_prefix, len))
			f = PL_REAL(L, fn, void *);
	return f;
}

/* nvJitLink's own error log (xmalloc'ed, "" when none). */
static char *jit_log(struct preload_lib *L, void *handle)
{
	jl_size_fn size = jit_fn(L, PL_nvJitLinkGetErrorLogSize, "__nvJitLinkGetErrorLogSize_");
	jl_log_fn get = jit_fn(L, PL_nvJitLinkGetErrorLog, "__nvJitLinkGetErrorLog_");
	size_t n = 0;
	if (!size || !get || size(handle, &n) != PL_NVJITLINK_SUCCESS || !n)
		return xstrdup("");
	char *log = XNEWVEC(char, n + 1);
	if (get(handle, log) != PL_NVJITLINK_SUCCESS)
		log[0] = '\0';
	log[n] = '\0';
	return log;
}

int preload_nvJitLinkCreate(struct preload_lib *L, int fn, void **h, uint32_t n, const char *const *o)
{
	int r = PL_REAL(L, fn, jl_create_fn)(h, n, o);
	if (r != PL_NVJITLINK_SUCCESS || !h || !*h || !diagnosing(L))
		return r;
	struct link *k = XCNEW(struct link);
	argv_init(&k->files);
	k->handle = *h;
	k->jit = 1;
	k->L = L;
	for (uint32_t i = 0; o && i < n; i++) {
		struct arch a;
		if (o[i] && !strncmp(o[i], "-arch=", 6) && !arch_parse(o[i] + 6, &a))
			k->target = a.num;
	}
	link_add(k);
	return r;
}

int preload_nvJitLinkDestroy(struct preload_lib *L, int fn, void **h)
{
	void *handle = h ? *h : NULL;
	int r = PL_REAL(L, fn, jl_destroy_fn)(h);
	if (L->active && handle)
		link_remove(handle, 1);
	return r;
}

static void jit_failed(struct preload_lib *L, const char *call, int code, void *h, const unsigned *only, size_t n)
{
	char *log = jit_log(L, h);
	char *extra = NULL;
	link_failed(L, call, code, h, 1, only, n, log, &extra);
	if (extra) {
		pthread_mutex_lock(&links_lock);
		struct link *k = link_find(h, 1);
		if (k)
			append(&k->extra, extra);
		pthread_mutex_unlock(&links_lock);
	}
	free(extra);
	free(log);
}

int preload_nvJitLinkAddData(struct preload_lib *L, int fn, void *h, int type, const void *data, size_t size,
			     const char *name)
{
	int r = PL_REAL(L, fn, jl_add_data_fn)(h, type, data, size, name);
	if (!diagnosing(L))
		return r;
	unsigned ids[MAX_IDS];
	size_t m = note_data_input(h, 1, data, size, r != PL_NVJITLINK_SUCCESS, ids);
	if (r != PL_NVJITLINK_SUCCESS)
		jit_failed(L, "nvJitLinkAddData", r, h, ids, m);
	return r;
}

int preload_nvJitLinkAddFile(struct preload_lib *L, int fn, void *h, int type, const char *file)
{
	int r = PL_REAL(L, fn, jl_add_file_fn)(h, type, file);
	if (!diagnosing(L))
		return r;
	link_note_input(h, 1, NULL, file);
	if (r != PL_NVJITLINK_SUCCESS) {
		unsigned ids[MAX_IDS];
		size_t m = file ? file_match(file, ids, MAX_IDS) : 0;
		jit_failed(L, "nvJitLinkAddFile", r, h, ids, m);
	}
	return r;
}

int preload_nvJitLinkComplete(struct preload_lib *L, int fn, void *h)
{
	int r = PL_REAL(L, fn, jl_complete_fn)(h);
	if (r != PL_NVJITLINK_SUCCESS && diagnosing(L))
		jit_failed(L, "nvJitLinkComplete", r, h, NULL, 0);
	return r;
}

/* What nvshim adds to an nvJitLink error log (xmalloc'ed), or NULL. */
static char *jit_extra(const void *h)
{
	pthread_mutex_lock(&links_lock);
	struct link *k = link_find(h, 1);
	char *extra = k && k->extra ? xstrdup(k->extra) : NULL;
	pthread_mutex_unlock(&links_lock);
	return extra;
}

int preload_nvJitLinkGetErrorLogSize(struct preload_lib *L, int fn, void *h, size_t *size)
{
	int r = PL_REAL(L, fn, jl_size_fn)(h, size);
	char *extra = r == PL_NVJITLINK_SUCCESS && L->active && size ? jit_extra(h) : NULL;
	if (extra)
		*size += strlen(extra) + (*size ? 0 : 1);
	free(extra);
	return r;
}

int preload_nvJitLinkGetErrorLog(struct preload_lib *L, int fn, void *h, char *log)
{
	char *extra = L->active && log ? jit_extra(h) : NULL;
	jl_size_fn size = extra ? jit_fn(L, PL_nvJitLinkGetErrorLogSize, "__nvJitLinkGetErrorLogSize_") : NULL;
	size_t n = 1;
	if (size && size(h, &n) != PL_NVJITLINK_SUCCESS)
		n = 1;
	int r = PL_REAL(L, fn, jl_log_fn)(h, log);
	if (r == PL_NVJITLINK_SUCCESS && extra) {
		if (!n)
			log[0] = '\0';
		strcat(log, extra);
	}
	free(extra);
	return r;
}
