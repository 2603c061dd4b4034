#include "model/outputs.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libiberty.h>

/* The value of the last occurrence of an option, or NULL. */
static const char *value_of(const struct invocation *inv, const char *name)
{
	const struct inv_arg *a = invocation_find(inv, name);
	return a ? a->value : NULL;
}

/* A source input nvcc compiles (objects, archives and libraries are only linked). */
static int compiled(enum input_kind k)
{
	switch (k) {
	case INPUT_OBJECT:
	case INPUT_ARCHIVE:
	case INPUT_SHARED:
	case INPUT_OTHER:
		return 0;
	default:
		return 1;
	}
}

/* "<odir>/<stem><suffix>", the stem being the input's name without its directory and its last
 * extension (nvcc's k.cu -> k.o). */
static char *derived(const char *odir, const char *input, const char *suffix)
{
	const char *base = lbasename(input);
	const char *dot = strrchr(base, '.');
	size_t stem = dot && dot != base ? (size_t)(dot - base) : strlen(base);
	if (odir && *odir)
		return xasprintf("%s%s%.*s%s", odir, odir[strlen(odir) - 1] == '/' ? "" : "/", (int)stem, base,
				 suffix);
	return xasprintf("%.*s%s", (int)stem, base, suffix);
}

/* The path with its last extension replaced (x.o -> x.d), as nvcc names -MD's file. */
static char *with_suffix(const char *path, const char *suffix)
{
	const char *base = lbasename(path);
	const char *dot = strrchr(base, '.');
	size_t len = dot && dot != base ? (size_t)(dot - path) : strlen(path);
	return xasprintf("%.*s%s", (int)len, path, suffix);
}

static void push_owned(struct argv *paths, char *p)
{
	argv_push(paths, p);
	free(p);
}

/* Outputs named one per compiled source: -o for one, else <odir>/<stem><suffix>. */
static void per_source(const struct invocation *inv, const char *suffix, int use_odir, struct argv *paths,
		       struct argv *objects)
{
	const char *odir = use_odir ? value_of(inv, "output-directory") : NULL;
	size_t n = 0;
	for (size_t i = 0; i < inv->nargs; i++)
		n += inv->args[i].what == ARG_INPUT && compiled(inv->args[i].input);
	if (inv->output && n == 1) {
		argv_push(paths, inv->output);
		if (objects)
			argv_push(objects, inv->output);
		return;
	}
	if (inv->output) /* nvcc refuses -o with several inputs here */
		return;
	for (size_t i = 0; i < inv->nargs; i++) {
		const struct inv_arg *a = &inv->args[i];
		if (a->what != ARG_INPUT || !compiled(a->input))
			continue;
		char *p = derived(odir, inv->expanded.v[a->pos], suffix);
		if (objects)
			argv_push(objects, p);
		push_owned(paths, p);
	}
}

void outputs_of(const struct invocation *inv, struct argv *paths)
{
	if (inv->info || inv->dryrun || inv->modes_conflict)
		return;
	struct argv objects = ARGV_INIT;
	int deps_with_compile = invocation_find(inv, "generate-dependencies-with-compile") ||
				invocation_find(inv, "generate-nonsystem-dependencies-with-compile");
	const char *mf = value_of(inv, "dependency-output");
	switch (inv->mode) {
	case MODE_LINK:
		argv_push(paths, inv->output ? inv->output : "a.out");
		break;
	case MODE_COMPILE:
	case MODE_DEVICE_C:
	case MODE_DEVICE_W:
		per_source(inv, ".o", 1, paths, &objects);
		break;
	case MODE_DEVICE_LINK:
		argv_push(paths, inv->output ? inv->output : "a_dlink.o");
		break;
	case MODE_LIB:
		argv_push(paths, inv->output ? inv->output : "a.a");
		break;
	case MODE_PTX:
		per_source(inv, ".ptx", 1, paths, NULL);
		break;
	case MODE_CUBIN:
		per_source(inv, ".cubin", 1, paths, NULL);
		break;
	case MODE_FATBIN:
		per_source(inv, ".fatbin", 1, paths, NULL);
		break;
	case MODE_LTOIR:
		per_source(inv, ".ltoir", 1, paths, NULL);
		break;
	case MODE_OPTIX_IR:
		per_source(inv, ".optixir", 1, paths, NULL);
		break;
	case MODE_CUDA:
		per_source(inv, ".cu.cpp.ii", 0, paths, NULL);
		break;
	case MODE_PREPROCESS:
		if (inv->output)
			argv_push(paths, inv->output);
		break;
	case MODE_DEPENDENCIES:
		if (mf)
			argv_push(paths, mf);
		else if (inv->output)
			argv_push(paths, inv->output);
		break;
	case MODE_RUN:
		break;
	}
	/* -MD / -MMD beside a compile */
	if (deps_with_compile && (inv->mode == MODE_COMPILE || inv->mode == MODE_DEVICE_C)) {
		if (mf)
			argv_push(paths, mf);
		else
			for (size_t i = 0; i < objects.n; i++)
				push_owned(paths, with_suffix(objects.v[i], ".d"));
	}
	argv_release(&objects);
}

void outputs_of_host(const struct hostcc *hc, struct argv *paths)
{
	struct argv objects = ARGV_INIT;
	switch (hc->mode) {
	case HOSTCC_LINK:
		argv_push(paths, hc->output ? hc->output : "a.out");
		break;
	case HOSTCC_COMPILE:
	case HOSTCC_ASSEMBLE: {
		const char *suffix = hc->mode == HOSTCC_COMPILE ? ".o" : ".s";
		if (hc->output) {
			if (hc->ninputs == 1) {
				argv_push(paths, hc->output);
				argv_push(&objects, hc->output);
			}
			break;
		}
		for (size_t i = 0; i < hc->n; i++)
			if (hc->v[i].input) {
				char *p = derived(NULL, hc->args.v[hc->v[i].pos], suffix);
				argv_push(&objects, p);
				push_owned(paths, p);
			}
		break;
	}
	case HOSTCC_PREPROCESS:
	case HOSTCC_DEPENDENCIES:
		if (hc->output)
			argv_push(paths, hc->output);
		break;
	case HOSTCC_INFO:
		break;
	}
	if (hc->deps && hc->mode == HOSTCC_COMPILE && !hc->deps_file)
		for (size_t i = 0; i < objects.n; i++)
			push_owned(paths, with_suffix(objects.v[i], ".d"));
	argv_release(&objects);
}

struct timespec outputs_now(void)
{
	struct timespec t = { 0, 0 };
#ifdef CLOCK_REALTIME_COARSE
	if (clock_gettime(CLOCK_REALTIME_COARSE, &t))
#endif
		clock_gettime(CLOCK_REALTIME, &t);
	return t;
}

const char *outputs_check(const struct argv *paths, struct timespec since, const char **why)
{
	for (size_t i = 0; i < paths->n; i++) {
		struct stat st;
		const char *w = NULL;
		if (stat(paths->v[i], &st))
			w = "missing";
		/* the inode's change time: a write, a rename into place and a hard link from a
		 * cache (ccache's hard_link) each set it, where the modification time of a linked
		 * file stays the cached one's */
		else if (st.st_ctim.tv_sec < since.tv_sec ||
			 (st.st_ctim.tv_sec == since.tv_sec && st.st_ctim.tv_nsec < since.tv_nsec))
			w = "not written by this run";
		if (w) {
			if (why)
				*why = w;
			return paths->v[i];
		}
	}
	return NULL;
}
