/* Compiles a CUDA source with NVRTC, the way programs that JIT-compile do, and prints what
 * NVRTC gave back on stdout:
 *   result <nvrtcResult>
 *   target <the PTX's .target>        (when it compiled)
 *   log-begin / <the program log> / log-end
 *
 *   rtc_compile [--load=dlopen|dlvsym|default] [--lib=LIB]... FILE [OPTION...]
 *   rtc_compile --archs          prints "archs <nvrtcGetSupportedArchs>" and "version X.Y"
 *
 * Built twice: rtc_compile_direct calls the functions it is linked with (symbol interposition);
 * rtc_compile finds them at run time: dlopen + dlsym on the handle (CuPy 14, PyTorch), dlopen +
 * dlvsym with NVRTC's symbol version, or dlopen(RTLD_GLOBAL) + dlsym(RTLD_DEFAULT) (cuda-bindings).
 * With several --lib, the same source is compiled through each library in turn (several NVRTC
 * libraries in one process). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvrtc.h>

struct nvrtc {
	nvrtcResult (*create)(nvrtcProgram *, const char *, const char *, int, const char *const *,
			      const char *const *);
	nvrtcResult (*compile)(nvrtcProgram, int, const char *const *);
	nvrtcResult (*log_size)(nvrtcProgram, size_t *);
	nvrtcResult (*log)(nvrtcProgram, char *);
	nvrtcResult (*ptx_size)(nvrtcProgram, size_t *);
	nvrtcResult (*ptx)(nvrtcProgram, char *);
	nvrtcResult (*destroy)(nvrtcProgram *);
	nvrtcResult (*num_archs)(int *);
	nvrtcResult (*archs)(int *);
	nvrtcResult (*version)(int *, int *);
};

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		exit(2);
	}
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	size_t got;
	while ((got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += got;
		if (len + 1 == cap)
			buf = realloc(buf, cap *= 2);
	}
	buf[len] = '\0';
	fclose(f);
	return buf;
}

#ifdef RTC_DIRECT
static int load(struct nvrtc *n, const char *how, const char *lib)
{
	(void)how;
	(void)lib;
	n->create = nvrtcCreateProgram;
	n->compile = nvrtcCompileProgram;
	n->log_size = nvrtcGetProgramLogSize;
	n->log = nvrtcGetProgramLog;
	n->ptx_size = nvrtcGetPTXSize;
	n->ptx = nvrtcGetPTX;
	n->destroy = nvrtcDestroyProgram;
	n->num_archs = nvrtcGetNumSupportedArchs;
	n->archs = nvrtcGetSupportedArchs;
	n->version = nvrtcVersion;
	return 0;
}
#else
static int load(struct nvrtc *n, const char *how, const char *lib)
{
	int global = !strcmp(how, "default");
	void *h = dlopen(lib, RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
	if (!h) {
		fprintf(stderr, "rtc_compile: %s\n", dlerror());
		return -1;
	}
	/* The version node of NVRTC's symbols: the soname, libnvrtc.so.13. */
	const char *version = getenv("RTC_VERSION") ? getenv("RTC_VERSION") : "libnvrtc.so.13";
#define LOOK(field, name)                                                                          \
	do {                                                                                       \
		void *f = !strcmp(how, "dlvsym")    ? dlvsym(h, name, version)                      \
			  : !strcmp(how, "default") ? dlsym(RTLD_DEFAULT, name)                     \
						    : dlsym(h, name);                                \
		if (!f) {                                                                          \
			fprintf(stderr, "rtc_compile: no %s: %s\n", name, dlerror());              \
			return -1;                                                                 \
		}                                                                                  \
		memcpy(&n->field, &f, sizeof(f));                                                  \
	} while (0)
	LOOK(create, "nvrtcCreateProgram");
	LOOK(compile, "nvrtcCompileProgram");
	LOOK(log_size, "nvrtcGetProgramLogSize");
	LOOK(log, "nvrtcGetProgramLog");
	LOOK(ptx_size, "nvrtcGetPTXSize");
	LOOK(ptx, "nvrtcGetPTX");
	LOOK(destroy, "nvrtcDestroyProgram");
	LOOK(num_archs, "nvrtcGetNumSupportedArchs");
	LOOK(archs, "nvrtcGetSupportedArchs");
	LOOK(version, "nvrtcVersion");
	return 0;
}
#endif

static int run(const struct nvrtc *n, const char *src, const char *name, int nopts, const char *const *opts)
{
	nvrtcProgram prog;
	nvrtcResult r = n->create(&prog, src, name, 0, NULL, NULL);
	if (r != NVRTC_SUCCESS) {
		printf("create %d\n", r);
		return 1;
	}
	r = n->compile(prog, nopts, opts);
	printf("result %d\n", r);
	if (r == NVRTC_SUCCESS) {
		size_t size;
		n->ptx_size(prog, &size);
		char *ptx = malloc(size);
		n->ptx(prog, ptx);
		const char *t = strstr(ptx, ".target ");
		if (t)
			printf("target %.*s\n", (int)strcspn(t + 8, " \n,"), t + 8);
		free(ptx);
	}
	size_t size = 0;
	n->log_size(prog, &size);
	char *log = malloc(size + 1);
	n->log(prog, log);
	log[size] = '\0';
	if (strlen(log) + 1 != size)
		printf("log size %zu does not match the log's length %zu\n", size, strlen(log) + 1);
	printf("log-begin\n%s%slog-end\n", log, *log && log[strlen(log) - 1] != '\n' ? "\n" : "");
	free(log);
	n->destroy(&prog);
	return r == NVRTC_SUCCESS ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *how = "dlopen", *libs[8];
	int nlibs = 0, i = 1;
	for (; i < argc && !strncmp(argv[i], "--", 2) && strcmp(argv[i], "--archs"); i++) {
		if (!strncmp(argv[i], "--load=", 7))
			how = argv[i] + 7;
		else if (!strncmp(argv[i], "--lib=", 6) && nlibs < 8)
			libs[nlibs++] = argv[i] + 6;
	}
	if (i < argc && !strcmp(argv[i], "--archs")) {
		struct nvrtc n;
		int count = 0, archs[64], major = 0, minor = 0;
		if (load(&n, how, nlibs ? libs[0] : "libnvrtc.so.13"))
			return 2;
		n.num_archs(&count);
		n.archs(archs);
		n.version(&major, &minor);
		printf("archs");
		for (int k = 0; k < count && k < 64; k++)
			printf(" %d", archs[k]);
		printf("\nversion %d.%d\n", major, minor);
		return 0;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: rtc_compile [--load=dlopen|dlvsym|default] [--lib=LIB]... FILE [OPTION...]\n");
		return 2;
	}
	if (!nlibs)
		libs[nlibs++] = "libnvrtc.so.13";
	char *src = slurp(argv[i]);
	const char *name = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
	int status = 0;
	for (int k = 0; k < nlibs; k++) {
		struct nvrtc n;
		if (load(&n, how, libs[k]))
			return 2;
		if (nlibs > 1)
			printf("library %s\n", libs[k]);
		status |= run(&n, src, name, argc - i - 1, (const char *const *)argv + i + 1);
#ifdef RTC_DIRECT
		break;
#endif
	}
	free(src);
	return status;
}
