#include "model/invocation.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libiberty.h>

#include "base/cache.h"
#include "base/diag.h"

/* Nested --options-file files deeper than this are left unexpanded (a file that includes
 * itself would otherwise never end); nvcc reports such a file itself. */
#define OPTIONS_FILE_DEPTH 16
/* Files read for one command line at most: a file that names itself twice would otherwise
 * double the work at every level. */
#define OPTIONS_FILES_MAX 256

/* The index in argv of the command-line argument being expanded, while it is. */
static size_t current_index = INVOCATION_NOT_IN_ARGV;

static void push(struct invocation *inv, const char *s, enum arg_source src)
{
	argv_push(&inv->expanded, s);
	/* Grown as `expanded` grows (doubling): growing by one per argument is quadratic where
	 * realloc moves the block, as under ASan, and 100,000 arguments took minutes. */
	if (inv->meta_alloc < inv->expanded.n) {
		inv->meta_alloc = inv->expanded.alloc > inv->expanded.n ? inv->expanded.alloc : inv->expanded.n;
		inv->sources = XRESIZEVEC(enum arg_source, inv->sources, inv->meta_alloc);
		inv->argv_index = XRESIZEVEC(size_t, inv->argv_index, inv->meta_alloc);
	}
	inv->sources[inv->expanded.n - 1] = src;
	inv->argv_index[inv->expanded.n - 1] = src == SOURCE_COMMAND_LINE ? current_index
									 : INVOCATION_NOT_IN_ARGV;
}

static void push_split(struct invocation *inv, const char *text, enum arg_source src)
{
	if (!text || !*text)
		return;
	char **v = buildargv(text);
	for (char **p = v; p && *p; p++)
		push(inv, *p, src);
	freeargv(v);
}

static int is_options_file(const char *arg, const char **value)
{
	static const char *const names[] = { "--options-file", "-optf" };
	for (size_t i = 0; i < 2; i++) {
		size_t len = strlen(names[i]);
		if (strncmp(arg, names[i], len))
			continue;
		if (arg[len] == '\0') {
			*value = NULL;
			return 1;
		}
		if (arg[len] == '=') {
			*value = arg + len + 1;
			return 1;
		}
	}
	return 0;
}

static void expand_arg(struct invocation *inv, char *const *args, size_t n, size_t *i,
		       enum arg_source src, int depth);

/* Expands one file of arguments (quoted as libiberty's buildargv() reads them) into the
 * analysed line, nested files included, up to OPTIONS_FILE_DEPTH deep and OPTIONS_FILES_MAX
 * files in all (a file that names itself stops there). Returns -1, expanding nothing, when it is not a readable regular file. */
static int expand_file(struct invocation *inv, const char *path, enum arg_source src, int depth)
{
	struct stat sb;
	if (depth >= OPTIONS_FILE_DEPTH || inv->files_read >= OPTIONS_FILES_MAX || stat(path, &sb) ||
	    !S_ISREG(sb.st_mode))
		return -1;
	inv->files_read++;
	char *text = cache_read(path);
	if (!text)
		return -1;
	char **v = *text ? buildargv(text) : NULL;
	free(text);
	size_t vn = 0;
	while (v && v[vn])
		vn++;
	for (size_t j = 0; j < vn; j++)
		expand_arg(inv, v, vn, &j, src, depth + 1);
	freeargv(v);
	return 0;
}

/* Expands the files of one --options-file value (a comma list) into the analysed line. */
static void expand_options_files(struct invocation *inv, const char *list, int depth)
{
	struct argv files = ARGV_INIT;
	invocation_split_list(&files, list);
	for (size_t f = 0; f < files.n; f++)
		expand_file(inv, files.v[f], SOURCE_OPTIONS_FILE, depth);
	argv_release(&files);
}

static void expand_arg(struct invocation *inv, char *const *args, size_t n, size_t *i,
		       enum arg_source src, int depth)
{
	const char *arg = args[*i];
	const char *value;

	/* nvcc itself does not read @file; it is expanded for analysis only, and kept as it is
	 * when it is no file. */
	if (arg[0] == '@' && arg[1]) {
		if (expand_file(inv, arg + 1, SOURCE_RESPONSE_FILE, depth))
			push(inv, arg, src);
		return;
	}
	if (is_options_file(arg, &value)) {
		push(inv, arg, src);
		if (!value && *i + 1 < n) {
			value = args[++*i];
			if (src == SOURCE_COMMAND_LINE)
				current_index = *i;
			push(inv, value, src);
		}
		if (value)
			expand_options_files(inv, value, depth);
		return;
	}
	push(inv, arg, src);
}

enum input_kind invocation_input_kind(const char *path, const char *language)
{
	static const struct {
		const char *suffix;
		enum input_kind kind;
	} suffixes[] = {
		{ ".cu", INPUT_CUDA },	   { ".c", INPUT_C },
		{ ".cc", INPUT_CXX },	   { ".cxx", INPUT_CXX },
		{ ".cpp", INPUT_CXX },	   { ".c++", INPUT_CXX },
		{ ".C", INPUT_CXX },	   { ".i", INPUT_PREPROCESSED },
		{ ".ii", INPUT_PREPROCESSED }, { ".cup", INPUT_PREPROCESSED },
		{ ".ptx", INPUT_PTX },	   { ".cubin", INPUT_CUBIN },
		{ ".fatbin", INPUT_FATBIN }, { ".ltoir", INPUT_LTOIR },
		{ ".o", INPUT_OBJECT },	   { ".obj", INPUT_OBJECT },
		{ ".a", INPUT_ARCHIVE },   { ".lib", INPUT_ARCHIVE },
		{ ".so", INPUT_SHARED },
	};
	enum input_kind kind = INPUT_OTHER;
	const char *dot = strrchr(path, '.');
	const char *slash = strrchr(path, '/');
	if (dot && (!slash || dot > slash)) {
		for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
			if (!strcmp(dot, suffixes[i].suffix))
				kind = suffixes[i].kind;
	}
	if (strstr(path, ".so.") && (!slash || strstr(path, ".so.") > slash))
		kind = INPUT_SHARED;
	/* -x names the language of the sources; binaries keep their kind. */
	if (language && (kind <= INPUT_PREPROCESSED || kind == INPUT_OTHER)) {
		if (!strcmp(language, "cu"))
			kind = INPUT_CUDA;
		else if (!strcmp(language, "c"))
			kind = INPUT_C;
		else if (!strcmp(language, "c++"))
			kind = INPUT_CXX;
	}
	return kind;
}

/* Classifies one element of the analysed line: which option, and its value if it is written
 * in the same element. Follows nvcc: "--long[=v]", "-short[=v]", "-sVALUE" for OPT_ATTACHED. */
static const struct nvcc_option *classify(const char *arg, const char **value)
{
	const struct nvcc_option *opt;
	const char *name = arg + 1 + (arg[1] == '-');
	const char *eq = strchr(name, '=');
	int is_long = arg[1] == '-';

	*value = NULL;
	opt = is_long ? options_find_long(name, strlen(name)) : options_find_short(name, strlen(name));
	if (opt)
		return opt;
	if (eq) {
		size_t len = (size_t)(eq - name);
		opt = is_long ? options_find_long(name, len) : options_find_short(name, len);
		if (opt) {
			*value = eq + 1;
			return opt;
		}
	}
	if (is_long)
		return NULL;
	for (size_t i = 0; i < options_count; i++) {
		const struct nvcc_option *o = &options_table[i];
		if (!(o->flags & OPT_ATTACHED))
			continue;
		size_t len = strlen(o->short_name);
		if (!strncmp(name, o->short_name, len) && name[len]) {
			*value = name + len;
			return o;
		}
	}
	return NULL;
}

static const struct {
	const char *name;
	enum inv_mode mode;
} mode_options[] = {
	{ "compile", MODE_COMPILE },
	{ "cubin", MODE_CUBIN },
	{ "cuda", MODE_CUDA },
	{ "device-c", MODE_DEVICE_C },
	{ "device-link", MODE_DEVICE_LINK },
	{ "device-w", MODE_DEVICE_W },
	{ "fatbin", MODE_FATBIN },
	{ "generate-dependencies", MODE_DEPENDENCIES },
	{ "generate-nonsystem-dependencies", MODE_DEPENDENCIES },
	{ "lib", MODE_LIB },
	{ "link", MODE_LINK },
	{ "ltoir", MODE_LTOIR },
	{ "optix-ir", MODE_OPTIX_IR },
	{ "preprocess", MODE_PREPROCESS },
	{ "ptx", MODE_PTX },
	{ "run", MODE_RUN },
};

static void note_option(struct invocation *inv, const struct inv_arg *a, int *modes_seen)
{
	const char *name = a->opt->name;
	switch (a->opt->kind) {
	case OPT_KIND_MODE:
		for (size_t i = 0; i < sizeof(mode_options) / sizeof(mode_options[0]); i++) {
			if (strcmp(name, mode_options[i].name))
				continue;
			if (*modes_seen && inv->mode != mode_options[i].mode)
				inv->modes_conflict = 1;
			inv->mode = mode_options[i].mode;
			(*modes_seen)++;
		}
		break;
	case OPT_KIND_INFO:
		inv->info = 1;
		break;
	default:
		break;
	}
	if (!strcmp(name, "output-file"))
		inv->output = a->value;
	else if (!strcmp(name, "x"))
		inv->language = a->value;
	else if (!strcmp(name, "dryrun"))
		inv->dryrun = 1;
	else if (!strcmp(name, "verbose"))
		inv->verbose = 1;
}

void invocation_parse(struct invocation *inv, char *const *args, size_t n, invocation_getenv_fn env)
{
	int modes_seen = 0;

	memset(inv, 0, sizeof(*inv));
	argv_init(&inv->argv);
	argv_init(&inv->expanded);
	argv_pushn(&inv->argv, args, n);

	push_split(inv, env ? env("NVCC_PREPEND_FLAGS") : NULL, SOURCE_PREPEND);
	for (size_t i = 0; i < n; i++) {
		current_index = i;
		expand_arg(inv, args, n, &i, SOURCE_COMMAND_LINE, 0);
	}
	current_index = INVOCATION_NOT_IN_ARGV;
	push_split(inv, env ? env("NVCC_APPEND_FLAGS") : NULL, SOURCE_APPEND);

	inv->args = XNEWVEC(struct inv_arg, inv->expanded.n ? inv->expanded.n : 1);
	for (size_t i = 0; i < inv->expanded.n; i++) {
		const char *arg = inv->expanded.v[i];
		struct inv_arg *a = &inv->args[inv->nargs++];
		memset(a, 0, sizeof(*a));
		a->pos = i;
		a->span = 1;
		a->source = inv->sources[i];
		if (arg[0] != '-' || arg[1] == '\0') {
			a->what = ARG_INPUT;
			inv->ninputs++;
			continue;
		}
		a->opt = classify(arg, &a->value);
		if (!a->opt) {
			a->what = ARG_UNKNOWN;
			inv->nunknown++;
			continue;
		}
		a->what = ARG_OPTION;
		if ((a->opt->flags & OPT_VALUE) && !a->value && i + 1 < inv->expanded.n) {
			a->value = inv->expanded.v[++i];
			a->span = 2;
		}
		note_option(inv, a, &modes_seen);
	}
	/* -x applies to every input wherever it stands, so kinds are set once it is known. */
	for (size_t i = 0; i < inv->nargs; i++)
		if (inv->args[i].what == ARG_INPUT)
			inv->args[i].input = invocation_input_kind(inv->expanded.v[inv->args[i].pos],
								   inv->language);
}

void invocation_release(struct invocation *inv)
{
	argv_release(&inv->argv);
	argv_release(&inv->expanded);
	free(inv->sources);
	free(inv->argv_index);
	free(inv->args);
	memset(inv, 0, sizeof(*inv));
	argv_init(&inv->argv);
	argv_init(&inv->expanded);
}

const struct inv_arg *invocation_find(const struct invocation *inv, const char *long_name)
{
	for (size_t i = inv->nargs; i-- > 0;)
		if (inv->args[i].what == ARG_OPTION && !strcmp(inv->args[i].opt->name, long_name))
			return &inv->args[i];
	return NULL;
}

void invocation_split_list(struct argv *out, const char *value)
{
	while (value && *value) {
		const char *comma = strchr(value, ',');
		size_t len = comma ? (size_t)(comma - value) : strlen(value);
		if (len)
			argv_push_owned(out, xstrndup(value, len));
		value = comma ? comma + 1 : NULL;
	}
}

const char *invocation_mode_name(enum inv_mode mode)
{
	static const char *const names[] = {
		[MODE_LINK] = "link",	      [MODE_COMPILE] = "compile",
		[MODE_DEVICE_C] = "device-c",	      [MODE_DEVICE_W] = "device-w",
		[MODE_DEVICE_LINK] = "device-link", [MODE_LIB] = "lib",
		[MODE_RUN] = "run",	      [MODE_PREPROCESS] = "preprocess",
		[MODE_DEPENDENCIES] = "dependencies", [MODE_CUDA] = "cuda",
		[MODE_CUBIN] = "cubin",	      [MODE_FATBIN] = "fatbin",
		[MODE_PTX] = "ptx",		      [MODE_OPTIX_IR] = "optix-ir",
		[MODE_LTOIR] = "ltoir",
	};
	return names[mode];
}

const char *invocation_input_kind_name(enum input_kind kind)
{
	static const char *const names[] = {
		[INPUT_CUDA] = "cuda",     [INPUT_C] = "c",	   [INPUT_CXX] = "c++",
		[INPUT_PREPROCESSED] = "preprocessed", [INPUT_PTX] = "ptx", [INPUT_CUBIN] = "cubin",
		[INPUT_FATBIN] = "fatbin", [INPUT_LTOIR] = "ltoir", [INPUT_OBJECT] = "object",
		[INPUT_ARCHIVE] = "archive", [INPUT_SHARED] = "shared-library", [INPUT_OTHER] = "other",
	};
	return names[kind];
}

const char *invocation_source_name(enum arg_source source)
{
	static const char *const names[] = {
		[SOURCE_COMMAND_LINE] = "command line", [SOURCE_PREPEND] = "NVCC_PREPEND_FLAGS",
		[SOURCE_APPEND] = "NVCC_APPEND_FLAGS",  [SOURCE_RESPONSE_FILE] = "@file",
		[SOURCE_OPTIONS_FILE] = "--options-file",
	};
	return names[source];
}

void invocation_flatten(const struct invocation *inv, struct argv *out)
{
	char *skip = xcalloc(inv->expanded.n + 1, 1);
	for (size_t i = 0; i < inv->nargs; i++) {
		const struct inv_arg *a = &inv->args[i];
		if (a->what == ARG_OPTION && !strcmp(a->opt->name, "options-file"))
			memset(skip + a->pos, 1, a->span);
	}
	for (size_t i = 0; i < inv->expanded.n; i++)
		if (!skip[i] && inv->sources[i] != SOURCE_PREPEND && inv->sources[i] != SOURCE_APPEND)
			argv_push(out, inv->expanded.v[i]);
	free(skip);
}
