#include "diagnose/diagnose.h"

#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <demangle.h>
#include <libiberty.h>

#include "model/arch.h"
#include "base/argv.h"

void diagnose_init(struct diagnosis *d)
{
	d->v = NULL;
	d->n = d->alloc = 0;
}

void diagnose_release(struct diagnosis *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].what);
		free(d->v[i].file);
		free(d->v[i].text);
		free(d->v[i].kernel);
	}
	free(d->v);
	diagnose_init(d);
}

static struct diagnose_finding *add(struct diagnosis *d, enum diagnose_kind kind, const char *line,
				    size_t len)
{
	if (d->n == d->alloc) {
		d->alloc = d->alloc ? d->alloc * 2 : 8;
		d->v = XRESIZEVEC(struct diagnose_finding, d->v, d->alloc);
	}
	struct diagnose_finding *f = &d->v[d->n++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->text = xstrndup(line, len);
	return f;
}

/* The text between the first pair of single quotes after `after` in s, or NULL. */
static char *quoted(const char *s, const char *end)
{
	const char *a = memchr(s, '\'', (size_t)(end - s));
	if (!a)
		return NULL;
	const char *b = memchr(a + 1, '\'', (size_t)(end - a - 1));
	return b ? xstrndup(a + 1, (size_t)(b - a - 1)) : NULL;
}

/* The number of "sm_NN" (a/f suffix ignored) at s, or 0. */
static unsigned sm_number(const char *s)
{
	if (strncmp(s, "sm_", 3) || !isdigit((unsigned char)s[3]))
		return 0;
	return (unsigned)strtoul(s + 3, NULL, 10);
}

/* A line contains `needle` before `end`. */
static const char *find(const char *line, const char *end, const char *needle)
{
	size_t n = strlen(needle);
	for (const char *p = line; p + n <= end; p++)
		if (!memcmp(p, needle, n))
			return p;
	return NULL;
}

/* Front-end messages that often depend on the target being built. */
static const char *const guard_shapes[] = {
	"#error",
	"static assertion failed",
	"does not support exception handling",
	"incomplete type \"nvcuda::wmma::fragment",
	"from a __global__ function",
	"from a __device__ function",
	"from a __host__ __device__ function",
	"is not supported in device code",
	"not supported on this architecture",
	"is not supported for this GPU architecture", /* __cluster_dims__ below sm_90 */
	"has no member \"this_cluster\"",           /* cooperative groups' clusters below sm_90 */
	"is undefined in device code",
};

/* Guard shapes that no target causes: CCCL 3's C++ dialect floor, a host compiler nvcc does not
 * accept, a deprecation (each fails the same way for every target). */
static const char *const never_arch[] = {
	"requires at least C++",
	"unsupported GNU version",
	"clang version!",
	"is deprecated",
	"was declared deprecated",
};

/* "file(12): error: msg" (the CUDA front end) or "file:12:3: error: msg" (the host
 * preprocessor): fills file and line, returns where the message starts, or NULL. */
static const char *front_end(const char *line, const char *end, struct diagnose_finding *f)
{
	const char *e = find(line, end, ": error: ");
	const char *skip = ": error: ";
	if (!e) {
		e = find(line, end, ": fatal error: ");
		skip = ": fatal error: ";
	}
	if (!e)
		return NULL;
	const char *p = e;
	/* file(12) */
	if (p > line && p[-1] == ')') {
		const char *open = p - 1;
		while (open > line && *open != '(')
			open--;
		if (*open == '(' && open > line) {
			f->file = xstrndup(line, (size_t)(open - line));
			f->line = (unsigned)strtoul(open + 1, NULL, 10);
		}
	} else {
		/* file:12:3 or file:12 */
		const char *c = p;
		while (c > line && (isdigit((unsigned char)c[-1]) || c[-1] == ':'))
			c--;
		if (c < p && *c == ':') {
			f->file = xstrndup(line, (size_t)(c - line));
			f->line = (unsigned)strtoul(c + 1, NULL, 10);
		}
	}
	return e + strlen(skip);
}

static const struct {
	int sig;
	const char *name;
} signal_names[] = {
	{ SIGHUP, "Hangup" },
	{ SIGINT, "Interrupt" },
	{ SIGQUIT, "Quit" },
	{ SIGILL, "Illegal instruction" },
	{ SIGTRAP, "Trace/breakpoint trap" },
	{ SIGABRT, "Aborted" },
	{ SIGBUS, "Bus error" },
	{ SIGFPE, "Floating point exception" },
	{ SIGKILL, "Killed" },
	{ SIGSEGV, "Segmentation fault" },
	{ SIGPIPE, "Broken pipe" },
	{ SIGTERM, "Terminated" },
	{ SIGXCPU, "CPU time limit exceeded" },
	{ SIGXFSZ, "File size limit exceeded" },
	{ SIGSYS, "Bad system call" },
};

const char *diagnose_signal_name(int sig)
{
	for (size_t i = 0; i < sizeof(signal_names) / sizeof(signal_names[0]); i++)
		if (signal_names[i].sig == sig)
			return signal_names[i].name;
	return NULL;
}

int diagnose_signal_flaky(int sig) { return sig == SIGKILL || sig == SIGTERM; }

/* The stage named between the first pair of single quotes before `end`: '"$CICC_PATH/cicc"'
 * (13.0 names the command as written) and 'cicc' both give "cicc". */
static char *stage_name(const char *line, const char *end)
{
	const char *a = memchr(line, '\'', (size_t)(end - line));
	if (!a || a + 1 >= end)
		return NULL;
	const char *b = end;
	a++;
	if (*a == '"' && b > a + 1 && b[-1] == '"') {
		a++;
		b--;
	}
	for (const char *p = a; p < b; p++)
		if (*p == '/')
			a = p + 1;
	return b > a ? xstrndup(a, (size_t)(b - a)) : NULL;
}

static struct diagnose_finding *find_crash(struct diagnosis *d, const char *stage)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].kind == DIAGNOSE_CRASH && d->v[i].what && stage && !strcmp(d->v[i].what, stage))
			return &d->v[i];
	return NULL;
}

/* nvcc's own crash lines, and a shell's line naming a signal. Returns 1 if the line was one. */
static int crash_line(struct diagnosis *d, const char *line, const char *end)
{
	const char *p;
	if ((p = find(line, end, "' died due to signal "))) {
		struct diagnose_finding *f = add(d, DIAGNOSE_CRASH, line, (size_t)(end - line));
		f->what = stage_name(line, p);
		f->signal = (int)strtol(p + strlen("' died due to signal "), NULL, 10);
		return 1;
	}
	if ((p = find(line, end, "' core dumped")) && p + strlen("' core dumped") == end) {
		char *stage = stage_name(line, p);
		struct diagnose_finding *f = find_crash(d, stage);
		if (!f) {
			f = add(d, DIAGNOSE_CRASH, line, (size_t)(end - line));
			f->what = stage;
			stage = NULL;
		}
		f->core = 1;
		free(stage);
		return 1;
	}
	/* dash and bash print only the signal's name, on a line of their own. */
	const char *e = end;
	while (e > line && (e[-1] == ' ' || e[-1] == '\r'))
		e--;
	size_t len = (size_t)(e - line);
	static const char core[] = " (core dumped)";
	int dumped = len > sizeof(core) - 1 && !memcmp(e - (sizeof(core) - 1), core, sizeof(core) - 1);
	if (dumped)
		len -= sizeof(core) - 1;
	for (size_t i = 0; i < sizeof(signal_names) / sizeof(signal_names[0]); i++) {
		if (strlen(signal_names[i].name) == len && !memcmp(line, signal_names[i].name, len)) {
			struct diagnose_finding *f = add(d, DIAGNOSE_CRASH, line, (size_t)(end - line));
			f->signal = signal_names[i].sig;
			f->core = dumped;
			return 1;
		}
	}
	return 0;
}

/* Reads a number at p: 0x-prefixed hexadecimal or decimal. */
static unsigned long long number(const char *p, const char **after)
{
	int base = p[0] == '0' && (p[1] == 'x' || p[1] == 'X') ? 16 : 10;
	char *e;
	unsigned long long v = strtoull(p, &e, base);
	if (after)
		*after = e;
	return v;
}

/* The numbers of the parenthesised group that opens at or after p, in order (at most max).
 * Returns how many there were. */
static size_t group_numbers(const char *p, const char *end, unsigned long long *v, size_t max)
{
	const char *open = memchr(p, '(', (size_t)(end - p));
	size_t n = 0;
	if (!open)
		return 0;
	for (p = open + 1; p < end && *p != ')';) {
		if (isdigit((unsigned char)*p) && !isalnum((unsigned char)p[-1]) && p[-1] != '_') {
			unsigned long long x = number(p, &p);
			if (n < max)
				v[n] = x;
			n++;
		} else {
			p++;
		}
	}
	return n < max ? n : max;
}

/* The word (a kernel name) at p, up to white space; one trailing '.' or ',' is not part of it. */
static char *word_at(const char *p, const char *end)
{
	const char *e = p;
	while (e < end && !isspace((unsigned char)*e))
		e++;
	if (e > p && (e[-1] == '.' || e[-1] == ','))
		e--;
	return e > p ? xstrndup(p, (size_t)(e - p)) : NULL;
}

static struct diagnose_finding *add_resource(struct diagnosis *d, enum diagnose_resource r,
					     const char *line, const char *end)
{
	struct diagnose_finding *f = add(d, DIAGNOSE_RESOURCE, line, (size_t)(end - line));
	f->resource = r;
	return f;
}

/* ptxas's and cicc's messages for a kernel that asks for too much. Returns 1 if it was one. */
static int resource_line(struct diagnosis *d, const char *line, const char *end)
{
	const char *p, *q;
	unsigned long long v[4];
	size_t n;
	/* Entry function 'K' uses too much shared data (0xc080 bytes, 0xc000 max)
	 *   ... (0xV bytes + 0xS bytes system, 0xL max)   ... constant data (bank N, 0xV bytes, 0xL max)
	 *   ... uses too much parameter space (0xV bytes, 0xL max). */
	if ((p = find(line, end, "Entry function '")) && (q = find(p, end, "' uses too much "))) {
		const char *what = q + strlen("' uses too much ");
		static const struct {
			const char *word;
			enum diagnose_resource r;
		} kinds[] = { { "shared data", RESOURCE_SHARED },
			      { "local data", RESOURCE_LOCAL },
			      { "constant data", RESOURCE_CONSTANT },
			      { "parameter space", RESOURCE_PARAM } };
		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
			if (strncmp(what, kinds[i].word, strlen(kinds[i].word)))
				continue;
			struct diagnose_finding *f = add_resource(d, kinds[i].r, line, end);
			f->kernel = xstrndup(p + strlen("Entry function '"),
					     (size_t)(q - p - strlen("Entry function '")));
			n = group_numbers(what, end, v, 4);
			if (find(what, end, "bytes system") && n == 3) {
				f->value = v[0];
				f->system = v[1];
				f->limit = v[2];
			} else if (find(what, end, "(bank ") && n == 3) {
				f->value = v[1];
				f->limit = v[2];
			} else if (n == 2) {
				f->value = v[0];
				f->limit = v[1];
			}
			return 1;
		}
		return 0;
	}
	/* File uses too much global constant data (0x13880 bytes, 0x10000 max) */
	if ((p = find(line, end, "File uses too much global constant data"))) {
		struct diagnose_finding *f = add_resource(d, RESOURCE_CONSTANT, line, end);
		if (group_numbers(p, end, v, 2) == 2) {
			f->value = v[0];
			f->limit = v[1];
		}
		return 1;
	}
	/* cicc: Formal parameter space overflowed (40008 bytes required, max 32764 bytes allowed)
	 * in function K */
	if ((p = find(line, end, "Formal parameter space overflowed"))) {
		struct diagnose_finding *f = add_resource(d, RESOURCE_PARAM, line, end);
		if (group_numbers(p, end, v, 2) == 2) {
			f->value = v[0];
			f->limit = v[1];
		}
		if ((q = find(p, end, " in function ")))
			f->kernel = word_at(q + strlen(" in function "), end);
		/* "param.cu(2): Error: ..." */
		if ((q = find(line, p, "): ")) && q > line) {
			const char *open = q;
			while (open > line && *open != '(')
				open--;
			if (*open == '(' && open > line) {
				f->file = xstrndup(line, (size_t)(open - line));
				f->line = (unsigned)strtoul(open + 1, NULL, 10);
			}
		}
		return 1;
	}
	/* (C7602) Insufficient registers (64) to compile instruction at line 141 in function K.
	 * Try to compile with register target of 154 or higher. */
	if ((p = find(line, end, "Insufficient registers ("))) {
		struct diagnose_finding *f = add_resource(d, RESOURCE_REGISTERS, line, end);
		f->limit = number(p + strlen("Insufficient registers ("), NULL);
		if ((q = find(p, end, " in function ")))
			f->kernel = word_at(q + strlen(" in function "), end);
		if ((q = find(p, end, "register target of ")))
			f->value = number(q + strlen("register target of "), NULL);
		return 1;
	}
	/* (C7600) Register allocation failed with register count of '64'. Compile the program
	 * with a higher register target */
	if ((p = find(line, end, "Register allocation failed with register count of '"))) {
		struct diagnose_finding *f = add_resource(d, RESOURCE_REGISTERS, line, end);
		f->limit = number(p + strlen("Register allocation failed with register count of '"), NULL);
		return 1;
	}
	/* Function K size requires more registers(V) than available(L) */
	if ((p = find(line, end, "Function ")) && (q = find(p, end, " size requires more registers("))) {
		struct diagnose_finding *f = add_resource(d, RESOURCE_REGISTERS, line, end);
		f->kernel = xstrndup(p + strlen("Function "), (size_t)(q - p - strlen("Function ")));
		if (group_numbers(q, end, v, 1) == 1)
			f->value = v[0];
		if ((q = find(q, end, "than available(")))
			f->limit = number(q + strlen("than available("), NULL);
		return 1;
	}
	return 0;
}

static void classify(struct diagnosis *d, const char *line, const char *end)
{
	const char *p;
	if (crash_line(d, line, end) || resource_line(d, line, end))
		return;
	/* ptxas: "ptxas FILE, line N; error   : Feature 'X' requires .target sm_80 or higher" */
	if ((p = find(line, end, "requires .target sm_")) && find(line, end, "error")) {
		struct diagnose_finding *f = add(d, DIAGNOSE_ARCH_MIN, line, (size_t)(end - line));
		f->arch = sm_number(p + strlen("requires .target "));
		f->what = quoted(line, p);
		return;
	}
	/* ptxas: "Instruction 'X' not supported on .target 'sm_90'" */
	if ((p = find(line, end, "not supported on .target '")) && find(line, end, "error")) {
		struct diagnose_finding *f = add(d, DIAGNOSE_ARCH_SPECIFIC, line, (size_t)(end - line));
		f->arch = sm_number(p + strlen("not supported on .target '"));
		f->what = quoted(line, p);
		return;
	}
	struct diagnose_finding tmp = { 0 };
	const char *msg = front_end(line, end, &tmp);
	if (!msg) {
		free(tmp.file);
		/* Any other error line of a tool: "ptxas error   : ...", "nvcc fatal   : ...". */
		if (find(line, end, "error   :") || find(line, end, "fatal   :") ||
		    find(line, end, "error: "))
			add(d, DIAGNOSE_ERROR, line, (size_t)(end - line));
		return;
	}
	enum diagnose_kind kind = DIAGNOSE_ERROR;
	for (size_t i = 0; i < sizeof(guard_shapes) / sizeof(guard_shapes[0]); i++)
		if (find(msg, end, guard_shapes[i]))
			kind = DIAGNOSE_ARCH_GUARD;
	for (size_t i = 0; kind == DIAGNOSE_ARCH_GUARD && i < sizeof(never_arch) / sizeof(never_arch[0]); i++)
		if (find(msg, end, never_arch[i]))
			kind = DIAGNOSE_ERROR;
	struct diagnose_finding *f = add(d, kind, line, (size_t)(end - line));
	f->file = tmp.file;
	f->line = tmp.line;
	f->what = xstrndup(msg, (size_t)(end - msg));
}

size_t diagnose_stderr(struct diagnosis *d, const char *text)
{
	size_t before = d->n;
	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		classify(d, line, end);
		line = *end ? end + 1 : end;
	}
	return d->n - before;
}

const struct diagnose_finding *diagnose_find(const struct diagnosis *d, enum diagnose_kind kind)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].kind == kind)
			return &d->v[i];
	return NULL;
}

int diagnose_arch_related(const struct diagnosis *d)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].kind == DIAGNOSE_ARCH_MIN || d->v[i].kind == DIAGNOSE_ARCH_SPECIFIC ||
		    d->v[i].kind == DIAGNOSE_ARCH_GUARD)
			return 1;
	return 0;
}

char *diagnose_reason(const struct diagnose_finding *f)
{
	char at[32] = "";
	if (f->line)
		snprintf(at, sizeof(at), " (line %u)", f->line);
	switch (f->kind) {
	case DIAGNOSE_ARCH_MIN:
		return xasprintf("%s requires sm_%u or higher", f->what ? f->what : "a feature", f->arch);
	case DIAGNOSE_ARCH_SPECIFIC:
		return xasprintf("%s is not supported on plain sm_%u (needs an arch-specific target)",
				 f->what ? f->what : "an instruction", f->arch);
	case DIAGNOSE_CRASH: {
		const char *name = diagnose_signal_name(f->signal);
		char sig[64] = "a signal";
		if (f->signal)
			snprintf(sig, sizeof(sig), "signal %d%s%s%s", f->signal, name ? " (" : "",
				 name ? name : "", name ? ")" : "");
		if (f->what)
			return xasprintf("'%s' died of %s%s", f->what, sig, f->core ? ", core dumped" : "");
		return xasprintf("a stage died of %s%s", sig, f->core ? ", core dumped" : "");
	}
	case DIAGNOSE_RESOURCE:
		if (f->kernel)
			return xasprintf("%s uses too much %s (%llu, at most %llu)", f->kernel,
					 diagnose_resource_name(f->resource), f->value, f->limit);
		return xasprintf("too much %s (%llu, at most %llu)", diagnose_resource_name(f->resource),
				 f->value, f->limit);
	case DIAGNOSE_ARCH_GUARD:
	case DIAGNOSE_ERROR:
		break;
	}
	return xasprintf("%s%s", f->what ? f->what : f->text, at);
}

const char *diagnose_kind_name(enum diagnose_kind kind)
{
	static const char *const names[] = { "error", "arch-min", "arch-specific", "arch-guard",
					     "crash", "resource" };
	return names[kind];
}

const char *diagnose_resource_name(enum diagnose_resource r)
{
	static const char *const names[] = { "none", "shared", "local", "constant", "parameter",
					     "registers" };
	return names[r];
}

/* The most shared memory one block may use on a GPU, with the opt-in of
 * cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize): the CUDA C++ Programming
 * Guide's table of compute capabilities ("Maximum amount of shared memory per thread block"). */
static unsigned long long shared_optin_max(unsigned cc)
{
	switch (cc) {
	case 70:
	case 72:
		return 96 * 1024;
	case 75:
		return 64 * 1024;
	case 80:
	case 87:
		return 163 * 1024;
	case 86:
	case 89:
	case 120:
		return 99 * 1024;
	case 90:
	case 100:
	case 103:
		return 227 * 1024;
	default:
		return 0;
	}
}

/* "49152 bytes (48 KiB)" or "49280 bytes" */
static char *bytes(unsigned long long v)
{
	if (v >= 1024 && v % 1024 == 0)
		return xasprintf("%llu bytes (%llu KiB)", v, v / 1024);
	return xasprintf("%llu bytes", v);
}

char *diagnose_explain_resource(const struct diagnose_finding *f, const char *target)
{
	if (!f || f->kind != DIAGNOSE_RESOURCE)
		return NULL;
	char *full = f->kernel ? cplus_demangle(f->kernel, DMGL_PARAMS | DMGL_ANSI) : NULL;
	char *base = f->kernel ? cplus_demangle(f->kernel, DMGL_ANSI) : NULL;
	char *who;
	if (!f->kernel)
		who = xstrdup(f->resource == RESOURCE_CONSTANT ? "the file's __constant__ data" : "a kernel");
	else if (full && strcmp(full, f->kernel))
		who = xasprintf("kernel %s (%s)", full, f->kernel);
	else
		who = xasprintf("kernel %s", f->kernel);
	const char *name = base ? base : f->kernel ? f->kernel : "kernel";
	char on[48] = "";
	struct arch a = { ARCH_REAL, 0, 0 };
	if (target && *target) {
		snprintf(on, sizeof(on), " on %s", target);
		if (arch_parse(target, &a))
			a.num = 0;
	}
	char *value = bytes(f->value), *limit = bytes(f->limit);
	char *text = NULL;
	switch (f->resource) {
	case RESOURCE_SHARED: {
		unsigned long long need = f->value + f->system;
		unsigned long long optin = shared_optin_max(a.num);
		char *sys = f->system ? xasprintf(" (and %llu reserved by the system)", f->system) : xstrdup("");
		char *room;
		if (optin && need > optin)
			room = xasprintf("; even so %s allows at most %llu bytes (%llu KiB) per block, so "
					 "use smaller tiles or fewer pipeline stages",
					 target, optin, optin / 1024);
		else if (optin)
			room = xasprintf(" (%s allows up to %llu bytes, %llu KiB, per block), or use smaller "
					 "tiles", target, optin, optin / 1024);
		else
			room = xstrdup(" (GPUs from sm_70 on allow 64 to 227 KiB per block), or use smaller "
				       "tiles");
		text = xasprintf("%s uses %s of static shared memory%s%s, more than the %s a kernel may "
				 "declare statically: declare the buffer `extern __shared__` and give its "
				 "size at launch (<<<grid, block, %llu>>>) after allowing it once with "
				 "cudaFuncSetAttribute(%s, cudaFuncAttributeMaxDynamicSharedMemorySize, "
				 "%llu)%s",
				 who, value, sys, on, limit, need, name, need, room);
		free(sys);
		free(room);
		break;
	}
	case RESOURCE_LOCAL:
		text = xasprintf("%s uses %s of local memory (its stack) per thread%s, more than the %s "
				 "allowed: keep large per-thread arrays in global memory (one slice per "
				 "thread) or in shared memory, or make them smaller; deep recursion and "
				 "large structs passed by value also grow the stack",
				 who, value, on, limit);
		break;
	case RESOURCE_CONSTANT:
		text = xasprintf("%s takes %s of constant memory%s, more than the %s there is: keep "
				 "large tables in global memory (a __device__ array or a cudaMalloc'ed "
				 "buffer read through a const __restrict__ pointer) and only small data "
				 "that all threads read alike in __constant__",
				 who, value, on, limit);
		break;
	case RESOURCE_PARAM:
		text = xasprintf("%s takes %s of parameters%s, more than the %s allowed: pass large "
				 "structs and arrays by pointer (copy them to device memory, or to a "
				 "__constant__ variable, before the launch) instead of by value%s",
				 who, value, on, limit,
				 f->limit && f->limit <= 4352 ? "; CUDA 12.1 and newer allow 32764 bytes on "
								"sm_70 and newer GPUs" : "");
		break;
	case RESOURCE_REGISTERS: {
		char *lim = f->limit ? xasprintf("%llu", f->limit) : xstrdup("its limit of");
		char *fit = f->value ? xasprintf("%s needs at least %llu registers per thread%s, but is "
						 "held to %s", who, f->value, on, lim)
				     : xasprintf("%s does not fit in %s registers per thread%s", who, lim, on);
		text = xasprintf("%s: raise or drop -maxrregcount (or -Xptxas --maxrregcount), relax "
				 "__launch_bounds__ (fewer threads per block, or a lower minimum of "
				 "blocks per multiprocessor), or use a smaller tile (fewer accumulators "
				 "per thread)",
				 fit);
		free(fit);
		free(lim);
		break;
	}
	case RESOURCE_NONE:
		text = xstrdup(f->text);
		break;
	}
	free(value);
	free(limit);
	free(who);
	free(full);
	free(base);
	return text;
}

size_t diagnose_resource_notes(const struct diagnosis *d, const char *target, struct argv *out)
{
	size_t pushed = 0;
	for (size_t i = 0; i < d->n; i++) {
		const struct diagnose_finding *f = &d->v[i];
		if (f->kind != DIAGNOSE_RESOURCE)
			continue;
		int dup = 0;
		for (size_t k = 0; k < i && !dup; k++)
			dup = d->v[k].kind == DIAGNOSE_RESOURCE && d->v[k].resource == f->resource &&
			      ((!d->v[k].kernel && !f->kernel) ||
			       (d->v[k].kernel && f->kernel && !strcmp(d->v[k].kernel, f->kernel)));
		if (dup)
			continue;
		char *text = diagnose_explain_resource(f, target);
		argv_pushf(out, "%s [resource.%s]", text, diagnose_resource_name(f->resource));
		free(text);
		pushed++;
	}
	return pushed;
}
