#include "nvshim/diagnose.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty.h>

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

static void classify(struct diagnosis *d, const char *line, const char *end)
{
	const char *p;
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
		if (d->v[i].kind != DIAGNOSE_ERROR)
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
	case DIAGNOSE_ARCH_GUARD:
	case DIAGNOSE_ERROR:
		break;
	}
	return xasprintf("%s%s", f->what ? f->what : f->text, at);
}

const char *diagnose_kind_name(enum diagnose_kind kind)
{
	static const char *const names[] = { "error", "arch-min", "arch-specific", "arch-guard" };
	return names[kind];
}
