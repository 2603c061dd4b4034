#include "upgrade/layout.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libiberty.h>

#include "base/cinclude.h"
#include "base/diag.h"
#include "base/fault.h"
#include "buildwide/build.h"
#include "buildwide/once.h"
#include "buildwide/stats.h"

/* NVTX 2's headers, each of which NVTX 3 has under include/nvtx3 with the same API. */
static const char *const nvtx2_headers[] = { "nvToolsExt.h", "nvToolsExtCuda.h", "nvToolsExtCudaRt.h",
					     "nvToolsExtOpenCL.h", "nvToolsExtSync.h" };

/* Headers 13.0 removed with texture and surface references (cudaTextureObject_t and
 * cudaSurfaceObject_t stay, in texture_types.h and surface_types.h). */
static const char *const gone_headers[] = { "texture_fetch_functions.h", "surface_functions.h" };
static const char *const types_headers[] = { "cuda_texture_types.h", "cuda_surface_types.h" };

static int types_header(const char *h)
{
	for (size_t i = 0; i < sizeof(types_headers) / sizeof(types_headers[0]); i++)
		if (!strcmp(h, types_headers[i]))
			return 1;
	return 0;
}

static int gone_header(const char *h)
{
	for (size_t i = 0; i < sizeof(gone_headers) / sizeof(gone_headers[0]); i++)
		if (!strcmp(h, gone_headers[i]))
			return 1;
	return 0;
}

static int cccl_header(const char *h)
{
	return !strncmp(h, "thrust/", 7) || !strncmp(h, "cub/", 4) || !strncmp(h, "cuda/", 5) ||
	       !strncmp(h, "nv/", 3);
}

static int nvtx_header(const char *h)
{
	for (size_t i = 0; i < sizeof(nvtx2_headers) / sizeof(nvtx2_headers[0]); i++)
		if (!strcmp(h, nvtx2_headers[i]))
			return 1;
	return 0;
}

/* The header named between `open` and `close` after `at` on this line (xmalloc'ed), or NULL. */
static char *quoted_after(const char *at, const char *eol, char open, char close)
{
	const char *b = memchr(at, open, (size_t)(eol - at));
	if (!b)
		return NULL;
	const char *e = memchr(b + 1, close, (size_t)(eol - b - 1));
	if (!e || e == b + 1 || e - b > PATH_MAX)
		return NULL;
	return xstrndup(b + 1, (size_t)(e - b - 1));
}

/* The header a "not found" line names, or NULL: gcc's "fatal error: H: No such file or
 * directory", clang's "fatal error: 'H' file not found", EDG's "cannot open source file "H"". */
static char *missing_header(const char *l, const char *eol)
{
	size_t n = (size_t)(eol - l);
	char *line = xstrndup(l, n);
	char *h = NULL, *p;
	if ((p = strstr(line, "fatal error: ")) && strstr(p, ": No such file or directory")) {
		p += 13;
		char *e = strstr(p, ": No such file or directory");
		if (e > p)
			h = xstrndup(p, (size_t)(e - p));
	} else if ((p = strstr(line, "fatal error: '")) && strstr(p, "' file not found")) {
		h = quoted_after(p, line + n, '\'', '\'');
	} else if ((p = strstr(line, "cannot open source file \""))) {
		h = quoted_after(p, line + n, '"', '"');
	}
	free(line);
	return h;
}

unsigned layout_missing(const char *held, char **header)
{
	unsigned need = 0;
	if (header)
		*header = NULL;
	for (const char *l = held ? held : ""; *l;) {
		const char *eol = strchr(l, '\n');
		if (!eol)
			eol = l + strlen(l);
		char *h = missing_header(l, eol);
		unsigned now = 0;
		if (h && cccl_header(h))
			now = LAYOUT_CCCL;
		else if (h && nvtx_header(h))
			now = LAYOUT_NVTX;
		else if (h && gone_header(h))
			now = LAYOUT_GONE;
		else if (h && types_header(h))
			now = LAYOUT_TYPES;
		else if (!h) {
			char *line = xstrndup(l, (size_t)(eol - l));
			char *p = strstr(line, "cannot find -lnvToolsExt");
			if (p && (!p[24] || p[24] == ':' || p[24] == ' '))
				now = LAYOUT_NVTX_LIB;
			free(line);
		}
		if (now && header && !*header && h)
			*header = xstrdup(h);
		need |= now;
		free(h);
		l = *eol ? eol + 1 : eol;
	}
	return need;
}

/* How many words the -lnvToolsExt at line->v[i] takes (1 or 2), 0 when it is none. */
static int nvtx_lib_at(const struct argv *line, size_t i)
{
	const char *a = line->v[i];
	if (!strcmp(a, "-lnvToolsExt") || !strcmp(a, "--library=nvToolsExt"))
		return 1;
	if ((!strcmp(a, "-l") || !strcmp(a, "--library")) && i + 1 < line->n &&
	    !strcmp(line->v[i + 1], "nvToolsExt"))
		return 2;
	return 0;
}

int layout_links_nvtx(const struct argv *line)
{
	for (size_t i = 1; i < line->n; i++)
		if (nvtx_lib_at(line, i))
			return 1;
	return 0;
}

static int is_dir(const char *p)
{
	struct stat sb;
	return !stat(p, &sb) && S_ISDIR(sb.st_mode);
}

static int is_file(const char *p)
{
	struct stat sb;
	return !stat(p, &sb) && S_ISREG(sb.st_mode);
}

/* The include-directory option at line->v[i]: its kind ("-I", "-isystem", "-idirafter") and its
 * directory, with *words 1 (joined) or 2 (separate); NULL when it is none. */
static const char *include_option(const struct argv *line, size_t i, const char **dir, int *words)
{
	static const char *const kinds[] = { "-isystem", "-idirafter", "-I" };
	const char *a = line->v[i];
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		size_t n = strlen(kinds[k]);
		if (strncmp(a, kinds[k], n))
			continue;
		if (a[n]) {
			*dir = a[n] == '=' && k < 2 ? a + n + 1 : a + n;
			*words = 1;
		} else if (i + 1 < line->n) {
			*dir = line->v[i + 1];
			*words = 2;
		} else {
			return NULL;
		}
		return kinds[k];
	}
	return NULL;
}

int layout_host_may_need(const struct argv *line)
{
	int found = 0;
	for (size_t i = 1; i < line->n && !found; i++) {
		const char *dir;
		int words;
		if (!include_option(line, i, &dir, &words))
			continue;
		char *thrust = concat(dir, "/cccl/thrust", NULL);
		found = is_dir(thrust);
		free(thrust);
		i += (size_t)words - 1;
	}
	return found;
}

/* The position after the toolkit's include directory on a host compiler's line, its option's
 * kind and the directory as the line spells it (*spelled, xmalloc'ed), or 0 when it is not
 * there. */
static size_t after_toolkit_include(const struct argv *line, const char *inc, const char **kind, char **spelled)
{
	char *want = realpath(inc, NULL);
	size_t at = 0;
	for (size_t i = 1; want && i < line->n && !at; i++) {
		const char *dir;
		int words;
		const char *k = include_option(line, i, &dir, &words);
		if (!k)
			continue;
		char *got = realpath(dir, NULL);
		if (got && !strcmp(got, want)) {
			at = i + (size_t)words;
			*kind = k;
			*spelled = xstrdup(dir);
			size_t n = strlen(*spelled);
			while (n > 1 && (*spelled)[n - 1] == '/')
				(*spelled)[--n] = '\0';
		}
		free(got);
		i += (size_t)words - 1;
	}
	free(want);
	return at;
}

/* Puts KIND DIR/SUB at *at (one word for -I) and says so in added. */
static void insert_dir(struct argv *out, size_t *at, const char *kind, const char *dir, const char *sub,
		       int host, struct argv *added)
{
	char *path = concat(dir, "/", sub, NULL);
	if (!strcmp(kind, "-I")) {
		char *w = concat("-I", path, NULL);
		argv_insert(out, (*at)++, w);
		free(w);
	} else {
		argv_insert(out, (*at)++, kind);
		argv_insert(out, (*at)++, path);
	}
	if (host)
		argv_pushf(added, "%s%s%s after %s", kind, strcmp(kind, "-I") ? " " : "", path, dir);
	else
		argv_pushf(added, "%s%s", kind, path);
	free(path);
}

int layout_fix(const struct argv *line, unsigned need, const char *root, const char *cuda12, int host,
	       struct argv *out, struct argv *added)
{
	char *inc = concat(root, "/include", NULL);
	char *cccl = concat(inc, "/cccl", NULL);
	char *nvtx = concat(inc, "/nvtx3", NULL);
	char *lib = concat(root, "/lib64/libnvToolsExt.so", NULL);
	char *spelled = NULL;
	int did = 0;
	argv_init(out);
	argv_copy(out, line);
	/* a program that includes NVTX 2's headers on NVTX 3 links no library either */
	if (need & (LAYOUT_NVTX_LIB | LAYOUT_NVTX) && !is_file(lib)) {
		for (size_t i = 1; i < out->n;) {
			int w = nvtx_lib_at(out, i);
			if (!w) {
				i++;
				continue;
			}
			while (w--)
				argv_remove(out, i);
			if (!did)
				argv_push(added, "-lnvToolsExt taken out (NVTX 3 needs no library)");
			did = 1;
		}
	}
	if (layout_links_nvtx(line))
		need |= LAYOUT_NVTX;
	const char *kind = "-I";
	size_t at = host ? after_toolkit_include(out, inc, &kind, &spelled) : out->n;
	if (!spelled)
		spelled = xstrdup(inc);
	if (at && need & LAYOUT_CCCL && host && is_dir(cccl)) {
		insert_dir(out, &at, kind, spelled, "cccl", host, added);
		did = 1;
	}
	if (at && need & LAYOUT_NVTX && is_dir(nvtx)) {
		insert_dir(out, &at, kind, spelled, "nvtx3", host, added);
		did = 1;
	}
	if (need & LAYOUT_TYPES && cuda12 && is_dir(cuda12)) {
		/* last, so that it never hides a header of the toolkit's or the project's */
		argv_push(out, host ? "-idirafter" : "-I");
		argv_push(out, cuda12);
		argv_pushf(added, "%s %s (CUDA 12's cuda_texture_types.h and cuda_surface_types.h: the two "
			   "includes they held)", host ? "-idirafter" : "-I", cuda12);
		did = 1;
	}
	free(inc);
	free(cccl);
	free(nvtx);
	free(lib);
	free(spelled);
	if (!did) {
		argv_release(out);
		argv_init(out);
	}
	return did ? 0 : -1;
}

/* The toolkit's root: the directory above the real nvcc's bin/ (xmalloc'ed), or NULL. */
static char *toolkit_root(const struct compat_context *ctx)
{
	const struct api_context *api = ctx->api;
	char *found = NULL;
	const char *nvcc = api->nvcc;
	if (!nvcc && api->find_nvcc)
		nvcc = found = api->find_nvcc(api->find_arg);
	size_t n = nvcc ? strlen(nvcc) : 0;
	/* the path as the build named it, for the notes; else resolved */
	char *real = n > 9 && !strcmp(nvcc + n - 9, "/bin/nvcc") ? xstrdup(nvcc) : nvcc ? realpath(nvcc, NULL) : NULL;
	free(found);
	char *slash = real ? strrchr(real, '/') : NULL;
	if (slash) {
		*slash = '\0';
		slash = strrchr(real, '/');
	}
	if (!slash || strcmp(slash, "/bin")) {
		free(real);
		return NULL;
	}
	*slash = '\0';
	return real;
}

static void say_fixed(const struct compat_context *ctx, const char *note)
{
	compat_say_once(ctx, "[compat.layout]", note, "");
}

/* The lasting fix, for the note. */
static const char *lasting(unsigned need, int host)
{
	if (!(need & (LAYOUT_CCCL | LAYOUT_NVTX | LAYOUT_NVTX_LIB)))
		return "drop the #include (cuda_runtime.h declares texture and surface objects)";
	if (need & LAYOUT_CCCL && host)
		return "in CMake, target_include_directories(T PRIVATE ${CUDAToolkit_INCLUDE_DIRS}/cccl) (on 12.x "
		       "the directory is not there and is skipped) or the toolkit's CCCL package (CCCL::CCCL); in "
		       "a Makefile or setup.py, -I$(CUDA_HOME)/include/cccl after -I$(CUDA_HOME)/include "
		       "(`nvshim migrate` writes it)";
	return "#include <nvtx3/nvToolsExt.h> (NVTX 3, in CUDA since 10.0), and no -lnvToolsExt "
	       "(CMake: CUDA::nvtx3 from 3.25; `nvshim migrate` writes it)";
}

/* layout_fix() on the toolkit of ctx's nvcc, with nvshim's CUDA 12 type headers where `need`
 * asks for them; out and added are always initialised. */
static int fix_on_toolkit(const struct compat_context *ctx, const struct argv *line, unsigned need, int host,
			  struct argv *out, struct argv *added)
{
	argv_init(out);
	argv_init(added);
	char *root = toolkit_root(ctx);
	char *compat_inc = root && need & LAYOUT_TYPES ? compat_include_dir(ctx->api->exe_dir) : NULL;
	char *cuda12 = compat_inc ? concat(compat_inc, "/nvshim/compat/cuda12", NULL) : NULL;
	int rc = root ? layout_fix(line, need, root, cuda12, host, out, added) : -1;
	free(compat_inc);
	free(cuda12);
	free(root);
	return rc;
}

/* The note's text: what was missing, what CUDA 13.0 did, `done` (what nvshim did with it),
 * `then` and the lasting fix. */
static char *note_text(unsigned need, const char *header, const char *done, const char *then, int host)
{
	return xasprintf("%s%s%s: CUDA 13.0 %s; %s%s%s; the lasting fix: %s", header ? "`" : "",
			 header ? header : "-lnvToolsExt", header ? "` not found" : " not found",
			 need & LAYOUT_CCCL ? "moved CCCL (Thrust, CUB, libcu++) to include/cccl, which nvcc adds "
					      "itself and a host compiler does not"
			 : need & (LAYOUT_NVTX | LAYOUT_NVTX_LIB)
				 ? "moved NVTX 2 out for NVTX 3 (include/nvtx3, header-only, the same API)"
				 : "removed cuda_texture_types.h and cuda_surface_types.h, empty since 12.0 but "
				   "for two includes",
			 done, need & LAYOUT_CCCL ? " (the headers nvcc 13 compiles against)" : "", then,
			 lasting(need, host));
}

int layout_after_failure(const struct compat_context *ctx, struct plan *plan, struct run_result *res,
			 char **held)
{
	const struct config *cfg = ctx->api->cfg;
	if (!cfg->compat || strcmp(cfg->compat, "auto") || !*held || res->signal || runner_signal())
		return 0;
	char *header = NULL;
	unsigned need = layout_missing(*held, &header);
	if (!need) {
		free(header);
		return 0;
	}
	if (fault_inject("layout")) {
		warning("CUDA 13's moved files were not looked for: injected fault (NVSHIM_FAULT); the "
			"compile's result stands");
		free(header);
		return 0;
	}
	if (need == LAYOUT_GONE) {
		plan_note(plan, "compat.none", "`%s` is gone from CUDA 13.0, with the texture and surface "
			  "references it declared; nothing restores them faithfully; the build fails as before; "
			  "the lasting fix: drop the #include (cuda_runtime.h declares texture and surface "
			  "objects) and use objects for references (`nvshim migrate` rewrites the simple ones)",
			  header ? header : "a texture header");
		free(header);
		return 0;
	}
	need &= ~(unsigned)LAYOUT_GONE;
	struct argv line, added;
	/* an -lnvToolsExt or -I in an options file: the retry's line has it on the command line */
	struct argv flat;
	const struct argv *given = compat_flat_line(ctx, &plan->argv, &flat);
	int ok = !fix_on_toolkit(ctx, given, need, ctx->host, &line, &added);
	argv_release(&flat);
	int fixed = 0;
	if (ok) {
		struct run_result again = { 127, 0, 0 };
		char *held2 = NULL;
		char *shell = argv_to_shell(&line);
		diag_note(VERBOSITY_VERBOSE, "running again with CUDA 13's moved files: %s", shell);
		free(shell);
		if (!runner_run_held(plan->tool, &line, &again, &held2) && again.status == 0) {
			free(*held);
			*held = held2;
			*res = again;
			fixed = 1;
			/* nvshim's CUDA 12 headers (cuda_texture_types.h) are not the build's */
			compat_drop_own_deps(&line, ctx->api->exe_dir);
			char *what = argv_join(&added, "; ");
			char *ran = concat("ran again with ", what, NULL);
			char *text = note_text(need, header, ran, ": the build goes on", ctx->host);
			plan_note(plan, "compat.layout", "%s", text);
			free(text);
			free(ran);
			free(what);
			say_fixed(ctx, plan->notes.v[plan->notes.n - 1]);
		} else {
			diag_note(VERBOSITY_VERBOSE, "the run with CUDA 13's moved files failed too (status %d); "
				  "the first run's errors stand:\n%s", again.status, held2 ? held2 : "");
			free(held2);
		}
	}
	argv_release(&line);
	argv_release(&added);
	free(header);
	return fixed;
}

/* ---- a compile whose steps a caller runs (compat_dryrun.h) ---- */

int layout_dryrun_gate(const char *text)
{
	for (const char *p = text; p && *p; p = cinclude_next_line(p)) {
		const char *h;
		size_t n;
		int angle;
		if (cinclude_parse(p, &h, &n, &angle) && n && n < 64) {
			char name[64];
			memcpy(name, h, n);
			name[n] = '\0';
			if (nvtx_header(name) || types_header(name))
				return 1;
		}
	}
	return 0;
}

int layout_dryrun_fix(const struct compat_context *ctx, const struct argv *line, unsigned need,
		      struct argv *out, struct argv *added)
{
	need &= LAYOUT_NVTX | LAYOUT_TYPES;
	if (!need) {
		argv_init(out);
		argv_init(added);
		return -1;
	}
	return fix_on_toolkit(ctx, line, need, 0, out, added);
}

char *layout_dryrun_note(unsigned need, const char *header, const struct argv *added, const char *goes,
			 const char *then)
{
	char *what = argv_join(added, "; ");
	char *done = concat(goes, " ", what, NULL);
	char *text = note_text(need, header, done, then, 0);
	free(done);
	free(what);
	return text;
}

int layout_dryrun_moved(const struct compat_context *ctx)
{
	char *root = toolkit_root(ctx);
	char *old = root ? concat(root, "/include/nvToolsExt.h", NULL) : NULL;
	int moved = old && !is_file(old);
	free(old);
	free(root);
	return moved;
}
