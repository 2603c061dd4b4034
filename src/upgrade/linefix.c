/* linefix: upgrade breaks that one changed option fixes, after a failed run (linefix.h). */
#include "upgrade/linefix.h"

#include <ctype.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libiberty.h>

#include "base/diag.h"
#include "base/fault.h"
#include "machine/locate.h"
#include "machine/toolkit.h"

void linefix_found_init(struct linefix_found *f)
{
	memset(f, 0, sizeof(*f));
	argv_init(&f->names);
	argv_init(&f->headers);
}

void linefix_found_release(struct linefix_found *f)
{
	free(f->vector_type);
	argv_release(&f->names);
	argv_release(&f->headers);
	linefix_found_init(f);
}

/* ---- reading the errors ---- */

/* Thrust's public names and the header that declares each (CCCL 3). */
static const struct {
	const char *name, *header;
} thrust_headers[] = {
	{ "adjacent_difference", "thrust/adjacent_difference.h" },
	{ "advance", "thrust/advance.h" },
	{ "all_of", "thrust/logical.h" },
	{ "any_of", "thrust/logical.h" },
	{ "binary_search", "thrust/binary_search.h" },
	{ "complex", "thrust/complex.h" },
	{ "constant_iterator", "thrust/iterator/constant_iterator.h" },
	{ "copy", "thrust/copy.h" },
	{ "copy_if", "thrust/copy.h" },
	{ "copy_n", "thrust/copy.h" },
	{ "count", "thrust/count.h" },
	{ "count_if", "thrust/count.h" },
	{ "counting_iterator", "thrust/iterator/counting_iterator.h" },
	{ "device", "thrust/execution_policy.h" },
	{ "device_malloc", "thrust/device_malloc.h" },
	{ "device_free", "thrust/device_free.h" },
	{ "device_pointer_cast", "thrust/device_ptr.h" },
	{ "device_ptr", "thrust/device_ptr.h" },
	{ "device_vector", "thrust/device_vector.h" },
	{ "discard_iterator", "thrust/iterator/discard_iterator.h" },
	{ "distance", "thrust/distance.h" },
	{ "divides", "thrust/functional.h" },
	{ "equal", "thrust/equal.h" },
	{ "equal_to", "thrust/functional.h" },
	{ "exclusive_scan", "thrust/scan.h" },
	{ "exclusive_scan_by_key", "thrust/scan.h" },
	{ "fill", "thrust/fill.h" },
	{ "fill_n", "thrust/fill.h" },
	{ "find", "thrust/find.h" },
	{ "find_if", "thrust/find.h" },
	{ "for_each", "thrust/for_each.h" },
	{ "for_each_n", "thrust/for_each.h" },
	{ "gather", "thrust/gather.h" },
	{ "generate", "thrust/generate.h" },
	{ "get", "thrust/tuple.h" },
	{ "greater", "thrust/functional.h" },
	{ "host", "thrust/execution_policy.h" },
	{ "host_vector", "thrust/host_vector.h" },
	{ "inclusive_scan", "thrust/scan.h" },
	{ "inclusive_scan_by_key", "thrust/scan.h" },
	{ "inner_product", "thrust/inner_product.h" },
	{ "less", "thrust/functional.h" },
	{ "lower_bound", "thrust/binary_search.h" },
	{ "make_constant_iterator", "thrust/iterator/constant_iterator.h" },
	{ "make_counting_iterator", "thrust/iterator/counting_iterator.h" },
	{ "make_discard_iterator", "thrust/iterator/discard_iterator.h" },
	{ "make_pair", "thrust/pair.h" },
	{ "make_permutation_iterator", "thrust/iterator/permutation_iterator.h" },
	{ "make_reverse_iterator", "thrust/iterator/reverse_iterator.h" },
	{ "make_transform_iterator", "thrust/iterator/transform_iterator.h" },
	{ "make_tuple", "thrust/tuple.h" },
	{ "make_zip_iterator", "thrust/iterator/zip_iterator.h" },
	{ "max_element", "thrust/extrema.h" },
	{ "maximum", "thrust/functional.h" },
	{ "merge", "thrust/merge.h" },
	{ "min_element", "thrust/extrema.h" },
	{ "minimum", "thrust/functional.h" },
	{ "minmax_element", "thrust/extrema.h" },
	{ "minus", "thrust/functional.h" },
	{ "mismatch", "thrust/mismatch.h" },
	{ "multiplies", "thrust/functional.h" },
	{ "negate", "thrust/functional.h" },
	{ "none_of", "thrust/logical.h" },
	{ "pair", "thrust/pair.h" },
	{ "partition", "thrust/partition.h" },
	{ "permutation_iterator", "thrust/iterator/permutation_iterator.h" },
	{ "plus", "thrust/functional.h" },
	{ "raw_pointer_cast", "thrust/memory.h" },
	{ "reduce", "thrust/reduce.h" },
	{ "reduce_by_key", "thrust/reduce.h" },
	{ "remove", "thrust/remove.h" },
	{ "remove_if", "thrust/remove.h" },
	{ "replace", "thrust/replace.h" },
	{ "replace_if", "thrust/replace.h" },
	{ "reverse", "thrust/reverse.h" },
	{ "reverse_iterator", "thrust/iterator/reverse_iterator.h" },
	{ "scatter", "thrust/scatter.h" },
	{ "seq", "thrust/execution_policy.h" },
	{ "sequence", "thrust/sequence.h" },
	{ "set_difference", "thrust/set_operations.h" },
	{ "set_intersection", "thrust/set_operations.h" },
	{ "set_union", "thrust/set_operations.h" },
	{ "sort", "thrust/sort.h" },
	{ "sort_by_key", "thrust/sort.h" },
	{ "stable_sort", "thrust/sort.h" },
	{ "stable_sort_by_key", "thrust/sort.h" },
	{ "swap", "thrust/swap.h" },
	{ "tabulate", "thrust/tabulate.h" },
	{ "transform", "thrust/transform.h" },
	{ "transform_iterator", "thrust/iterator/transform_iterator.h" },
	{ "transform_reduce", "thrust/transform_reduce.h" },
	{ "tuple", "thrust/tuple.h" },
	{ "uninitialized_fill", "thrust/uninitialized_fill.h" },
	{ "unique", "thrust/unique.h" },
	{ "unique_by_key", "thrust/unique.h" },
	{ "upper_bound", "thrust/binary_search.h" },
	{ "zip_iterator", "thrust/iterator/zip_iterator.h" },
};

const char *linefix_thrust_header(const char *name)
{
	for (size_t i = 0; i < sizeof(thrust_headers) / sizeof(thrust_headers[0]); i++)
		if (!strcmp(thrust_headers[i].name, name))
			return thrust_headers[i].header;
	return NULL;
}

/* CUDA 13's deprecated vector types. */
static const char *const vector_types[] = { "double4", "long4", "ulong4", "longlong4", "ulonglong4" };

/* `needle` in [line, end). */
static const char *find(const char *line, const char *end, const char *needle)
{
	return memmem(line, (size_t)(end - line), needle, strlen(needle));
}

/* The identifier at p (a quote of any kind skipped first), into buf. */
static int ident_at(const char *p, const char *end, char *buf, size_t size)
{
	/* ' " and UTF-8's ‘ ’ (3 bytes each) */
	while (p < end && (*p == '\'' || *p == '"' || (unsigned char)*p >= 0x80))
		p++;
	size_t n = 0;
	while (p + n < end && (isalnum((unsigned char)p[n]) || p[n] == '_'))
		n++;
	if (!n || n >= size)
		return 0;
	memcpy(buf, p, n);
	buf[n] = '\0';
	return 1;
}

/* A line that reports an error (not a summary of errors already reported). */
static int error_line(const char *line, const char *end)
{
	static const char *const summaries[] = { "error detected in the compilation", "errors detected in the compilation",
						 "warnings being treated as errors", "compilation terminated",
						 "aborted due to errors" };
	for (size_t i = 0; i < sizeof(summaries) / sizeof(summaries[0]); i++)
		if (find(line, end, summaries[i]))
			return 0;
	return find(line, end, ": error") || find(line, end, ": fatal error") || find(line, end, "error #") ||
	       find(line, end, "catastrophic error") || find(line, end, "error   :") || find(line, end, "fatal   :");
}

/* The Thrust name an error says is not declared: EDG's `namespace "thrust" has no member "X"`,
 * gcc's `'X' is not a member of 'thrust'`, clang's `no member named 'X' in namespace 'thrust'`. */
static int thrust_missing(const char *line, const char *end, char *name, size_t size)
{
	const char *p;
	if ((p = find(line, end, "namespace \"thrust\" has no member ")))
		return ident_at(p + 34, end, name, size);
	if ((p = find(line, end, "no member named ")) && find(p, end, "in namespace") && find(p, end, "thrust"))
		return ident_at(p + 16, end, name, size);
	if ((p = find(line, end, " is not a member of ")) && find(p + 20, end, "thrust")) {
		const char *e = find(line, end, "error: ");
		return e && ident_at(e + 7, p, name, size);
	}
	return 0;
}

/* The number after `after` in [line, end), 0 if none. */
static unsigned number_after(const char *line, const char *end, const char *after)
{
	const char *p = find(line, end, after);
	return p && p + strlen(after) < end ? (unsigned)strtoul(p + strlen(after), NULL, 10) : 0;
}

/* "9.5" at p as 95. */
static unsigned isa_at(const char *p)
{
	char *e;
	unsigned long major = strtoul(p, &e, 10);
	if (e == p || *e != '.' || !isdigit((unsigned char)e[1]))
		return 0;
	return (unsigned)(major * 10 + (unsigned long)(e[1] - '0'));
}

static void push_once(struct argv *a, const char *s)
{
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->v[i], s))
			return;
	argv_push(a, s);
}

/* One error line: the need it shows (recorded in f), or 0. */
static unsigned read_error(const char *line, const char *end, struct linefix_found *f)
{
	const char *p;
	char name[128];
	if (find(line, end, "requires at least C++") && find(line, end, "#error"))
		return LINEFIX_DIALECT;
	if ((p = find(line, end, "unsupported GNU version!"))) {
		f->host_family = 'g';
		f->host_max = number_after(p, end, "later than ");
		return f->host_max ? LINEFIX_HOSTCC : 0;
	}
	if ((p = find(line, end, "clang version!"))) {
		unsigned lt = number_after(p, end, "less than ");
		const char *to = find(p, end, ".x to ");
		f->host_family = 'c';
		f->host_max = lt ? lt - 1 : to ? (unsigned)strtoul(to + 6, NULL, 10) : 0;
		return f->host_max ? LINEFIX_HOSTCC : 0;
	}
	if ((p = find(line, end, "Unsupported .version "))) {
		const char *cur = find(p, end, "current version is '");
		f->ptx_isa = isa_at(p + 21);
		f->ptxas_isa = cur ? isa_at(cur + 20) : 0;
		return f->ptx_isa ? LINEFIX_PTXAS : 0;
	}
	if (find(line, end, "deprecated") && (p = find(line, end, "use ")) && find(p, end, "_16a or ")) {
		if (!ident_at(p + 4, end, name, sizeof(name)))
			return 0;
		char *u = strstr(name, "_16a");
		if (u)
			*u = '\0';
		for (size_t i = 0; i < sizeof(vector_types) / sizeof(vector_types[0]); i++)
			if (!strcmp(name, vector_types[i])) {
				if (!f->vector_type)
					f->vector_type = xstrdup(name);
				return LINEFIX_VECTOR;
			}
		return 0;
	}
	if (thrust_missing(line, end, name, sizeof(name))) {
		const char *h = linefix_thrust_header(name);
		if (!h)
			return 0;
		push_once(&f->names, name);
		push_once(&f->headers, h);
		return LINEFIX_INCLUDE;
	}
	return 0;
}

/* An error located in CCCL's own headers (a host compiler goes on after CCCL's dialect #error
 * and fails on the C++17 it then parses as C++14). */
static int in_cccl(const char *line, const char *end)
{
	const char *colon = find(line, end, ": error");
	const char *paren = find(line, end, "): error");
	const char *at = paren ? paren : colon;
	return at && (find(line, at, "/cccl/") || find(line, at, "/thrust/") || find(line, at, "/cub/") ||
		      find(line, at, "/cuda/std/"));
}

unsigned linefix_read(const char *held, struct linefix_found *f)
{
	unsigned need = 0;
	int other = 0, cccl = 0;
	for (const char *line = held; line && *line;) {
		const char *end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		if (error_line(line, end)) {
			unsigned n = read_error(line, end, f);
			need |= n;
			if (!n && in_cccl(line, end))
				cccl = 1;
			else
				other |= !n;
		}
		line = *end ? end + 1 : NULL;
	}
	/* errors inside CCCL's headers follow from its dialect #error, and from nothing else known */
	if (cccl && !(need & LINEFIX_DIALECT))
		other = 1;
	f->need = other ? 0 : need;
	return f->need;
}

/* ---- the line ---- */

static int old_std(const char *v)
{
	static const char *const old[] = { "c++98", "c++03", "c++0x", "c++11", "c++1y", "c++14",
					   "gnu++98", "gnu++03", "gnu++0x", "gnu++11", "gnu++1y", "gnu++14" };
	for (size_t i = 0; i < sizeof(old) / sizeof(old[0]); i++)
		if (!strcmp(v, old[i]))
			return 1;
	return 0;
}

const char *linefix_old_dialect(const struct argv *line, size_t *at, int *split)
{
	const char *found = NULL;
	for (size_t i = 1; i < line->n; i++) {
		const char *a = line->v[i];
		const char *v = NULL;
		int sp = 0;
		if (!strncmp(a, "-std=", 5))
			v = a + 5;
		else if (!strncmp(a, "--std=", 6))
			v = a + 6;
		else if ((!strcmp(a, "-std") || !strcmp(a, "--std")) && i + 1 < line->n)
			v = line->v[i + 1], sp = 1;
		if (v && old_std(v)) {
			found = v;
			*at = i;
			*split = sp;
		}
		i += (size_t)sp;
	}
	return found;
}

unsigned linefix_apply(const struct argv *line, const struct linefix_found *f, int dialect, struct argv *out,
		       struct argv *added)
{
	unsigned done = 0;
	argv_copy(out, line);
	if (f->need & LINEFIX_DIALECT && dialect) {
		size_t at;
		int split;
		for (const char *v; (v = linefix_old_dialect(out, &at, &split));) {
			const char *to = !strncmp(v, "gnu", 3) ? "gnu++17" : "c++17";
			if (split) {
				argv_replace(out, at + 1, to);
			} else {
				char *a = xasprintf("%.*s%s", (int)(v - out->v[at]), out->v[at], to);
				argv_replace(out, at, a);
				free(a);
			}
			if (!(done & LINEFIX_DIALECT))
				argv_pushf(added, "-std=%s", to);
			done |= LINEFIX_DIALECT;
		}
	}
	if (f->need & LINEFIX_VECTOR) {
		argv_insert(out, 1, "-D__NV_NO_VECTOR_DEPRECATION_DIAG");
		argv_push(added, "-D__NV_NO_VECTOR_DEPRECATION_DIAG");
		done |= LINEFIX_VECTOR;
	}
	if (f->need & LINEFIX_INCLUDE) {
		for (size_t i = f->headers.n; i-- > 0;) {
			argv_insert(out, 1, f->headers.v[i]);
			argv_insert(out, 1, "-include");
		}
		for (size_t i = 0; i < f->headers.n; i++)
			argv_pushf(added, "-include %s", f->headers.v[i]);
		done |= LINEFIX_INCLUDE;
	}
	return done;
}

const char *linefix_isa_toolkit(unsigned isa)
{
	static char buf[16];
	/* 8.x: 12.0 to 12.5 read 8.0 to 8.5, 12.7 8.6, 12.8 8.7, 12.9 8.8; 7.x: 11.x; 9.x: 13.x */
	static const char *const eight[] = { "12.0", "12.1", "12.2", "12.3", "12.4", "12.5", "12.7", "12.8", "12.9" };
	if (isa >= 90 && isa < 100)
		snprintf(buf, sizeof(buf), "13.%u", isa - 90);
	else if (isa >= 80 && isa < 89)
		snprintf(buf, sizeof(buf), "%s", eight[isa - 80]);
	else if (isa >= 70 && isa < 79)
		snprintf(buf, sizeof(buf), "11.%u", isa - 70);
	else
		snprintf(buf, sizeof(buf), "newer");
	return buf;
}

/* The newest PTX ISA a toolkit's ptxas reads ("13.5.37": 95). */
static unsigned toolkit_isa(const char *version)
{
	unsigned major = 0, minor = 0;
	if (!version || sscanf(version, "%u.%u", &major, &minor) != 2)
		return 0;
	static const unsigned eight[] = { 80, 81, 82, 83, 84, 85, 85, 86, 87, 88 };
	if (major == 13)
		return 90 + minor;
	if (major == 12)
		return minor < 10 ? eight[minor] : 88;
	if (major == 11)
		return 70 + minor;
	return major > 13 ? 99 : 0;
}

/* ---- the machine ---- */

/* The newest accepted host compiler of f's family on PATH (xmalloc'ed), or NULL. */
static char *accepted_host_compiler(const struct linefix_found *f)
{
	const char *path = getenv("PATH");
	for (unsigned n = f->host_max; n >= 6 && n + 12 > f->host_max; n--) {
		char name[32];
		snprintf(name, sizeof(name), "%s%u", f->host_family == 'g' ? "g++-" : "clang++-", n);
		char *p = runner_which(name, path);
		if (p)
			return p;
	}
	return NULL;
}

/* The inputs of the line are all .ptx files (nothing else for a front end). */
static int ptx_only(const struct argv *line)
{
	int ptx = 0;
	for (size_t i = 1; i < line->n; i++) {
		const char *a = line->v[i];
		size_t n = strlen(a);
		const char *dot = strrchr(a, '.');
		if (*a == '-' || !dot)
			continue;
		if (n > 4 && !strcmp(a + n - 4, ".ptx"))
			ptx = 1;
		else if (!strcmp(dot, ".cu") || !strcmp(dot, ".cpp") || !strcmp(dot, ".cc") || !strcmp(dot, ".c") ||
			 !strcmp(dot, ".cxx") || !strcmp(dot, ".C"))
			return 0;
	}
	return ptx;
}

/* A newer nvcc on the machine whose ptxas reads ISA `isa` (xmalloc'ed, its version in *version),
 * other than `current`: the newest of /usr/local/cuda-X.Y and the package index's nvidia-cuda-nvcc
 * under a python prefix of PATH (PREFIX/bin on PATH: PREFIX/lib/python3.N/site-packages) or
 * ~/.local. */
static char *newer_nvcc(unsigned isa, const char *current, char **version)
{
	struct argv patterns = ARGV_INIT, sites = ARGV_INIT;
	argv_push(&patterns, "/usr/local/cuda-*/bin/nvcc");
	locate_python_sites(&sites);
	for (size_t i = 0; i < sites.n; i++) {
		argv_pushf(&patterns, "%s/nvidia/cu1*/bin/nvcc", sites.v[i]);
		argv_pushf(&patterns, "%s/nvidia/cuda_nvcc/bin/nvcc", sites.v[i]);
	}
	argv_release(&sites);
	char *cur = current ? realpath(current, NULL) : NULL;
	char *best = NULL;
	unsigned best_isa = 0;
	for (size_t i = 0; i < patterns.n; i++) {
		glob_t g;
		if (glob(patterns.v[i], 0, NULL, &g))
			continue;
		for (size_t k = 0; k < g.gl_pathc; k++) {
			char *real = realpath(g.gl_pathv[k], NULL);
			if (!real || (cur && !strcmp(real, cur)) || access(real, X_OK)) {
				free(real);
				continue;
			}
			char *v = toolkit_version(g.gl_pathv[k]);
			unsigned vi = toolkit_isa(v);
			if (vi >= isa && vi > best_isa) {
				free(best);
				free(*version);
				best = xstrdup(g.gl_pathv[k]);
				*version = v;
				v = NULL;
				best_isa = vi;
			}
			free(v);
			free(real);
		}
		globfree(&g);
	}
	free(cur);
	argv_release(&patterns);
	return best;
}

/* ---- after a failed run ---- */

/* "13.0.88": "13.0" */
static char *major_minor(const char *v)
{
	const char *dot = v ? strchr(v, '.') : NULL;
	const char *dot2 = dot ? strchr(dot + 1, '.') : NULL;
	return v ? xstrndup(v, dot2 ? (size_t)(dot2 - v) : strlen(v)) : xstrdup("in use");
}

/* The note of each cause fixed; `then`: ": the build goes on". */
static void note_fixed(const struct compat_context *ctx, struct plan *plan, unsigned done, const struct linefix_found *f,
		       const char *dialect, const char *nvcc_version, const char *ccbin, const char *newer,
		       const char *newer_version, const char *source)
{
	char *mm = major_minor(nvcc_version);
	if (done & LINEFIX_DIALECT) {
		plan_note(plan, "compat.dialect", "`%s`: CCCL 3 (CUDA 13's Thrust, CUB and libcu++, which "
			  "cooperative_groups.h includes) compiles only as C++17 or newer; ran again with -std=%s (GCC "
			  "and Clang keep one ABI across C++ dialects): the build goes on; the lasting fix: C++17 in "
			  "the build (CMAKE_CUDA_STANDARD 17 and CMAKE_CXX_STANDARD 17 in CMake, -std=c++17 in a "
			  "Makefile or setup.py; `nvshim migrate` rewrites them)",
			  dialect, strstr(dialect, "gnu++") ? "gnu++17" : "c++17");
		compat_say_once(ctx, "[compat.dialect]", plan->notes.v[plan->notes.n - 1], "");
	}
	if (done & LINEFIX_VECTOR) {
		plan_note(plan, "compat.vector", "`%s` is deprecated in CUDA 13 (for %s_16a and %s_32a) and "
			  "-Werror makes the warning fatal; ran again with -D__NV_NO_VECTOR_DEPRECATION_DIAG, the "
			  "toolkit's own switch for it (the types are unchanged): the build goes on; the lasting fix: "
			  "%s_16a where the code relies on CUDA 12's 16-byte alignment, %s_32a for 32 bytes, or "
			  "-D__NV_NO_VECTOR_DEPRECATION_DIAG in the build",
			  f->vector_type, f->vector_type, f->vector_type, f->vector_type, f->vector_type);
		compat_say_once(ctx, "[compat.vector]", plan->notes.v[plan->notes.n - 1], "");
	}
	if (done & LINEFIX_INCLUDE) {
		char *names = NULL, *heads = NULL;
		for (size_t i = 0; i < f->names.n; i++) {
			char *n2 = xasprintf("%s%sthrust::%s", names ? names : "", names ? ", " : "", f->names.v[i]);
			free(names);
			names = n2;
		}
		for (size_t i = 0; i < f->headers.n; i++) {
			char *h2 = xasprintf("%s%s#include <%s>", heads ? heads : "", heads ? ", " : "", f->headers.v[i]);
			free(heads);
			heads = h2;
		}
		plan_note(plan, "compat.include", "%s: not declared by the Thrust headers %s includes (CCCL 3 no "
			  "longer includes every header's dependencies); ran again with the public header%s "
			  "force-included: the build goes on; the lasting fix: %s in %s",
			  names, source ? source : "the source", f->headers.n > 1 ? "s" : "", heads,
			  source ? source : "the source");
		compat_say_once(ctx, "[compat.include]", plan->notes.v[plan->notes.n - 1], "");
		free(names);
		free(heads);
	}
	if (done & LINEFIX_HOSTCC) {
		plan_note(plan, "compat.hostcc", "the host compiler is newer than nvcc %s accepts (%s %u and "
			  "older); ran again with -ccbin %s, the newest accepted one on PATH: the build goes on; the "
			  "lasting fix: -ccbin %s (CMake: CMAKE_CUDA_HOST_COMPILER; or NVCC_CCBIN)",
			  mm, f->host_family == 'g' ? "GCC" : "Clang", f->host_max, ccbin, ccbin);
		compat_say_once(ctx, "[compat.hostcc]", plan->notes.v[plan->notes.n - 1], "");
	}
	if (done & LINEFIX_PTXAS) {
		plan_note(plan, "compat.ptxas", "the PTX input is ISA %u.%u, newer than the ptxas of nvcc %s reads "
			  "(%u.%u); ran again with nvcc %s (%s), whose ptxas reads it: the build goes on; the lasting "
			  "fix: compile the PTX with the toolkit that wrote it (CUDA %s or newer), or write the PTX "
			  "with nvcc %s",
			  f->ptx_isa / 10, f->ptx_isa % 10, mm, f->ptxas_isa / 10, f->ptxas_isa % 10, newer_version, newer,
			  linefix_isa_toolkit(f->ptx_isa), mm);
		compat_say_once(ctx, "[compat.ptxas]", plan->notes.v[plan->notes.n - 1], "");
	}
	free(mm);
}

/* The source the line compiles (its first .cu/.cpp/... argument), for the notes; NULL if none. */
static const char *line_source(const struct argv *line)
{
	for (size_t i = 1; i < line->n; i++) {
		const char *dot = strrchr(line->v[i], '.');
		if (line->v[i][0] != '-' && dot &&
		    (!strcmp(dot, ".cu") || !strcmp(dot, ".cpp") || !strcmp(dot, ".cc") || !strcmp(dot, ".cxx")))
			return line->v[i];
	}
	return NULL;
}

/* Replaces or adds -ccbin on an nvcc line. */
static void set_ccbin(struct argv *line, const char *ccbin)
{
	for (size_t i = 1; i < line->n; i++) {
		const char *a = line->v[i];
		if ((!strcmp(a, "-ccbin") || !strcmp(a, "--compiler-bindir")) && i + 1 < line->n) {
			argv_replace(line, i + 1, ccbin);
			return;
		}
		if (!strncmp(a, "-ccbin=", 7) || !strncmp(a, "--compiler-bindir=", 18)) {
			char *v = xasprintf("%.*s%s", (int)(strchr(a, '=') + 1 - a), a, ccbin);
			argv_replace(line, i, v);
			free(v);
			return;
		}
	}
	argv_insert(line, 1, ccbin);
	argv_insert(line, 1, "-ccbin");
}

int linefix_after_failure(const struct compat_context *ctx, struct plan *plan, struct run_result *res,
			  char **held)
{
	const struct config *cfg = ctx->api->cfg;
	if (!cfg->compat || strcmp(cfg->compat, "auto") || !*held || res->signal || runner_signal())
		return 0;
	struct linefix_found f;
	linefix_found_init(&f);
	if (!linefix_read(*held, &f)) {
		linefix_found_release(&f);
		return 0;
	}
	if (fault_inject("linefix")) {
		warning("the line was not fixed for the toolkit: injected fault (NVSHIM_FAULT); the compile's "
			"result stands");
		linefix_found_release(&f);
		return 0;
	}
	struct argv flat, line = ARGV_INIT, added = ARGV_INIT;
	const struct argv *given = compat_flat_line(ctx, &plan->argv, &flat);
	int dialect_on = !cfg->cxx_dialect || strcmp(cfg->cxx_dialect, "off");
	size_t at;
	int split;
	const char *old = linefix_old_dialect(given, &at, &split);
	/* as the line spells it: -std=c++14, --std=c++14, -std c++14 */
	char *dialect = !old ? NULL : split ? xasprintf("%s %s", given->v[at], old) : xstrdup(given->v[at]);
	unsigned done = linefix_apply(given, &f, dialect_on, &line, &added);
	char *tool = xstrdup(plan->tool);
	char *ccbin = NULL, *newer = NULL, *newer_version = NULL;
	const char *nvcc = ctx->host ? NULL : plan->tool;
	char *version = nvcc ? toolkit_version(nvcc) : NULL;
	if (f.need & LINEFIX_HOSTCC && !ctx->host && (ccbin = accepted_host_compiler(&f))) {
		set_ccbin(&line, ccbin);
		argv_pushf(&added, "-ccbin %s", ccbin);
		done |= LINEFIX_HOSTCC;
	}
	if (f.need & LINEFIX_PTXAS && !ctx->host && ptx_only(given) &&
	    (newer = newer_nvcc(f.ptx_isa, plan->tool, &newer_version))) {
		free(tool);
		tool = xstrdup(newer);
		argv_replace(&line, 0, newer);
		argv_pushf(&added, "nvcc %s", newer);
		done |= LINEFIX_PTXAS;
	}
	int fixed = 0;
	/* every cause of the errors fixed, or nothing is run */
	if (done == f.need) {
		struct run_result again = { 127, 0, 0 };
		char *held2 = NULL;
		char *shell = argv_to_shell(&line);
		diag_note(VERBOSITY_VERBOSE, "running again for the toolkit: %s", shell);
		free(shell);
		if (!runner_run_held(tool, &line, &again, &held2) && again.status == 0) {
			free(*held);
			*held = held2;
			*res = again;
			fixed = 1;
			note_fixed(ctx, plan, done, &f, dialect ? dialect : "-std=c++14", version, ccbin, newer, newer_version,
				   line_source(given));
		} else {
			diag_note(VERBOSITY_VERBOSE, "the run again failed too (status %d); the first run's errors "
				  "stand:\n%s", again.status, held2 ? held2 : "");
			free(held2);
		}
	} else {
		/* a cause nothing here fixes: said after the compiler's errors (compat.none) */
		char *mm = major_minor(version);
		if (f.need & LINEFIX_HOSTCC && !(done & LINEFIX_HOSTCC) && !ctx->host)
			plan_note(plan, "compat.none", "the host compiler is newer than nvcc %s accepts (%s %u and "
				  "older), and no accepted %s%u (or older) is on PATH: install one (Debian and "
				  "Ubuntu: apt install %s%u) and give it as -ccbin (CMake: CMAKE_CUDA_HOST_COMPILER)",
				  mm, f.host_family == 'g' ? "GCC" : "Clang", f.host_max,
				  f.host_family == 'g' ? "g++-" : "clang++-", f.host_max,
				  f.host_family == 'g' ? "g++-" : "clang-", f.host_max);
		if (f.need & LINEFIX_PTXAS && !(done & LINEFIX_PTXAS) && !ctx->host) {
			const char *tk = linefix_isa_toolkit(f.ptx_isa);
			plan_note(plan, "compat.none", "the PTX input is ISA %u.%u, newer than the ptxas of nvcc %s reads "
				  "(%u.%u), and no newer toolkit is on this machine: compile it with CUDA %s or newer "
				  "(pip install nvidia-cuda-nvcc==%s.*), or write the PTX with nvcc %s",
				  f.ptx_isa / 10, f.ptx_isa % 10, mm, f.ptxas_isa / 10, f.ptxas_isa % 10, tk, tk, mm);
		}
		free(mm);
	}
	free(version);
	free(tool);
	free(ccbin);
	free(newer);
	free(newer_version);
	free(dialect);
	argv_release(&flat);
	argv_release(&line);
	argv_release(&added);
	linefix_found_release(&f);
	return fixed;
}
