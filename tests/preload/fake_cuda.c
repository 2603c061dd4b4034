/* A test double of the CUDA driver (libcuda.so.1) for machines without a GPU: just enough of
 * the driver API for a JIT link. Its linker and loaders fail the way the real driver does on
 * relocatable code that uses too much shared memory when the caller passed no log buffer:
 * CUDA_ERROR_INVALID_SOURCE (300) and an empty log.
 *
 *   FAKE_CUDA_CC=90       the device's compute capability (default 90)
 *   FAKE_CUDA_LOG=text    what the linker writes into a caller's error log buffer (default "")
 *   FAKE_CUDA_OK=1        links and loads succeed (for benchmarks)
 *   FAKE_CUDA_IMAGES=1    loaders judge the image as the driver does for "no kernel image": a
 *                         fatbin or cubin with neither machine code of the device's major (at or
 *                         below its minor) nor PTX at or below its target gives
 *                         CUDA_ERROR_NO_BINARY_FOR_GPU (209): at the load with
 *                         CUDA_MODULE_LOADING=EAGER; otherwise (lazy, the default) at
 *                         cuModuleGetFunction, and for a library's kernel at cuKernelGetFunction
 *                         or the launch. A fatbin is read by its own small loop here, not by
 *                         nvshim's reader.
 *   FAKE_CUDA_PTX_ISA=90  the newest PTX ISA the driver compiles (9.0: a CUDA 13.0 driver): PTX
 *                         text of a newer `.version` given to a loader gives
 *                         CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222) at the load.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static int initialised;
static void *current;

static int cc(void)
{
	const char *v = getenv("FAKE_CUDA_CC");
	return v && *v ? atoi(v) : 90;
}

static int ok(void) { return getenv("FAKE_CUDA_OK") != NULL; }

/* Writes the configured log into an options array's error log buffer, if there is one. */
static void write_log(unsigned n, const int *opts, void **vals)
{
	char *buf = NULL;
	size_t size = 0;
	for (unsigned i = 0; opts && vals && i < n; i++) {
		if (opts[i] == 5)
			buf = vals[i];
		else if (opts[i] == 6)
			size = (size_t)(uintptr_t)vals[i];
	}
	if (!buf || !size)
		return;
	const char *text = getenv("FAKE_CUDA_LOG") ? getenv("FAKE_CUDA_LOG") : "";
	strncpy(buf, text, size - 1);
	buf[size - 1] = '\0';
}

/* NVRTC itself opens libcuda.so.1 and asks for the driver's private tables: there are none. */
EXPORT int cuGetExportTable(const void **table, const void *id)
{
	(void)id;
	*table = NULL;
	return 500; /* CUDA_ERROR_NOT_FOUND */
}

/* FAKE_CUDA_INIT_ERROR=N: cuInit answers N (100: no device; 999: a driver that fails).
 * FAKE_CUDA_INIT_LOG=FILE: each call appends a line to FILE. */
EXPORT int cuInit(unsigned flags)
{
	(void)flags;
	const char *log = getenv("FAKE_CUDA_INIT_LOG");
	FILE *f = log && *log ? fopen(log, "a") : NULL;
	if (f) {
		fputs("cuInit\n", f);
		fclose(f);
	}
	const char *error = getenv("FAKE_CUDA_INIT_ERROR");
	if (error && *error)
		return atoi(error);
	initialised = 1;
	return 0;
}
EXPORT int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
EXPORT int cuDeviceGetCount(int *n)
{
	if (!initialised)
		return 3; /* CUDA_ERROR_NOT_INITIALIZED */
	*n = 1;
	return 0;
}
EXPORT int cuDeviceGet(int *d, int i) { *d = i; return initialised && i == 0 ? 0 : 101; }
EXPORT int cuDeviceGetAttribute(int *v, int attr, int dev)
{
	(void)dev;
	*v = attr == 75 ? cc() / 10 : attr == 76 ? cc() % 10 : 0;
	return initialised ? 0 : 3;
}
EXPORT int cuDevicePrimaryCtxRetain(void **ctx, int dev) { (void)dev; *ctx = &current; return 0; }
EXPORT int cuCtxSetCurrent(void *ctx) { current = ctx; return 0; }
EXPORT int cuCtxGetDevice(int *dev)
{
	if (!current)
		return 201; /* CUDA_ERROR_INVALID_CONTEXT */
	*dev = 0;
	return 0;
}

struct link {
	unsigned n;
	int *opts;
	void **vals;
};

/* The functions call each other through static helpers, as the driver does, never through
 * their exported names (which an interposer would catch twice). */
static int link_create(unsigned n, int *opts, void **vals, void **state)
{
	struct link *l = calloc(1, sizeof(*l));
	l->n = n;
	l->opts = opts;
	l->vals = vals;
	*state = l;
	return 0;
}
EXPORT int cuLinkCreate_v2(unsigned n, int *opts, void **vals, void **state) { return link_create(n, opts, vals, state); }
EXPORT int cuLinkCreate(unsigned n, int *opts, void **vals, void **state) { return link_create(n, opts, vals, state); }
static int add_data(void *state, int type, void *data, size_t size, const char *name, unsigned n, int *opts,
		    void **vals)
{
	(void)state, (void)type, (void)name, (void)n, (void)opts, (void)vals;
	return data && size ? 0 : 1;
}
EXPORT int cuLinkAddData_v2(void *state, int type, void *data, size_t size, const char *name, unsigned n,
			    int *opts, void **vals)
{
	return add_data(state, type, data, size, name, n, opts, vals);
}
EXPORT int cuLinkAddData(void *state, int type, void *data, size_t size, const char *name, unsigned n, int *opts,
			 void **vals)
{
	return add_data(state, type, data, size, name, n, opts, vals);
}
static int add_file(void *state, int type, const char *path, unsigned n, int *opts, void **vals)
{
	(void)state, (void)type, (void)n, (void)opts, (void)vals;
	return path ? 0 : 1;
}
EXPORT int cuLinkAddFile_v2(void *state, int type, const char *path, unsigned n, int *opts, void **vals)
{
	return add_file(state, type, path, n, opts, vals);
}
EXPORT int cuLinkAddFile(void *state, int type, const char *path, unsigned n, int *opts, void **vals)
{
	return add_file(state, type, path, n, opts, vals);
}
EXPORT int cuLinkComplete(void *state, void **cubin, size_t *size)
{
	static const char image[] = "\177ELF fake cubin";
	struct link *l = state;
	if (ok()) {
		*cubin = (void *)image;
		*size = sizeof(image);
		return 0;
	}
	write_log(l->n, l->opts, l->vals);
	return 300; /* CUDA_ERROR_INVALID_SOURCE */
}
EXPORT int cuLinkDestroy(void *state) { free(state); return 0; }

static int module;

static int judging(void) { return getenv("FAKE_CUDA_IMAGES") != NULL; }
static int eager(void)
{
	const char *v = getenv("CUDA_MODULE_LOADING");
	return v && !strcmp(v, "EAGER");
}

/* 1 if a fatbin (or cubin) has code this device can run. */
static int runs_here(const unsigned char *p)
{
	uint32_t magic;
	memcpy(&magic, p, 4);
	if (magic == 0x466243b1u) { /* the runtime's wrapper */
		const unsigned char *d;
		memcpy(&d, p + 8, sizeof(d));
		p = d;
		memcpy(&magic, p, 4);
	}
	int dev = cc();
	if (!memcmp(p, "\177ELF", 4)) {
		uint32_t flags;
		memcpy(&flags, p + 0x30, 4);
		int sm = (int)((flags >> 8) & 0xff);
		return sm / 10 == dev / 10 && sm <= dev;
	}
	if (magic != 0xBA55ED50u)
		return 1; /* PTX text and the like: not judged */
	uint16_t hsize;
	uint64_t fsize;
	memcpy(&hsize, p + 6, 2);
	memcpy(&fsize, p + 8, 8);
	for (uint64_t e = hsize; e + 64 <= (uint64_t)hsize + fsize;) {
		uint16_t kind;
		uint32_t ehsize, sm;
		uint64_t psize;
		memcpy(&kind, p + e, 2);
		memcpy(&ehsize, p + e + 4, 4);
		memcpy(&psize, p + e + 8, 8);
		memcpy(&sm, p + e + 28, 4);
		if (kind == 2 && (int)sm / 10 == dev / 10 && (int)sm <= dev)
			return 1;
		if (kind == 1 && (int)sm <= dev)
			return 1;
		e += ehsize + psize;
	}
	return 0;
}

/* Modules and libraries handed out: their image and whether it runs here. */
struct handle {
	int runs;
	int library;
};
struct function {
	struct handle *parent;
	int kernel; /* a CUkernel, else a CUfunction */
};

/* PTX text whose .version is newer than FAKE_CUDA_PTX_ISA allows. */
static int ptx_too_new(const char *p)
{
	const char *max = getenv("FAKE_CUDA_PTX_ISA"), *v;
	unsigned major, minor;
	if (!max || (p[0] != '/' && p[0] != '.') || !(v = strstr(p, ".version ")) ||
	    sscanf(v + 9, "%u.%u", &major, &minor) != 2)
		return 0;
	return major * 10 + minor > (unsigned)atoi(max);
}

static int load(void **mod, const void *image, unsigned n, int *opts, void **vals)
{
	if (!image)
		return 1;
	if (ptx_too_new(image))
		return 222;
	if (judging()) {
		int runs = runs_here(image);
		if (!runs && eager())
			return 209;
		struct handle *h = calloc(1, sizeof(*h));
		h->runs = runs;
		*mod = h;
		return 0;
	}
	if (ok()) {
		*mod = &module;
		return 0;
	}
	write_log(n, opts, vals);
	return 300;
}
EXPORT int cuModuleLoadDataEx(void **mod, const void *image, unsigned n, int *opts, void **vals)
{
	return load(mod, image, n, opts, vals);
}
EXPORT int cuModuleLoadData(void **mod, const void *image) { return load(mod, image, 0, NULL, NULL); }
EXPORT int cuModuleUnload(void *mod) { return mod == &module || judging() ? 0 : 400; }
EXPORT int cuModuleLoadFatBinary(void **mod, const void *image) { return load(mod, image, 0, NULL, NULL); }
EXPORT int cuModuleLoad(void **mod, const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return 301; /* CUDA_ERROR_FILE_NOT_FOUND */
	static unsigned char buf[1 << 20];
	size_t got = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (got < 64)
		return 200;
	return load(mod, buf, 0, NULL, NULL);
}
static int get_function(void **f, void *mod, const char *name, int kernel)
{
	struct handle *h = mod;
	if (!judging() || !h || !name)
		return 400;
	if (!h->runs && !kernel)
		return 209; /* lazy loading: the function is loaded now */
	struct function *fn = calloc(1, sizeof(*fn));
	fn->parent = h;
	fn->kernel = kernel;
	*f = fn;
	return 0;
}
EXPORT int cuModuleGetFunction(void **f, void *mod, const char *name) { return get_function(f, mod, name, 0); }
EXPORT int cuLibraryGetKernel(void **k, void *lib, const char *name) { return get_function(k, lib, name, 1); }
EXPORT int cuKernelGetFunction(void **f, void *k)
{
	struct function *kernel = k;
	if (!kernel || !kernel->kernel)
		return 400;
	if (!kernel->parent->runs)
		return 209;
	*f = kernel; /* the same object serves as its function here */
	return 0;
}
EXPORT int cuFuncGetModule(void **mod, void *f)
{
	struct function *fn = f;
	if (!fn || fn->kernel)
		return 400;
	*mod = fn->parent;
	return 0;
}
EXPORT int cuKernelGetLibrary(void **lib, void *k)
{
	struct function *fn = k;
	if (!fn || !fn->kernel)
		return 400;
	*lib = fn->parent;
	return 0;
}
static int launch(void *f)
{
	struct function *fn = f;
	if (!fn)
		return 400;
	return fn->parent->runs ? 0 : 209;
}
EXPORT int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
			  unsigned shared, void *stream, void **params, void **extra)
{
	(void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)stream, (void)params, (void)extra;
	return launch(f);
}
EXPORT int cuLaunchKernel_ptsz(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
			       unsigned shared, void *stream, void **params, void **extra)
{
	(void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)stream, (void)params, (void)extra;
	return launch(f);
}
EXPORT int cuLaunchKernelEx(const void *config, void *f, void **params, void **extra)
{
	(void)config, (void)params, (void)extra;
	return launch(f);
}
EXPORT int cuLibraryLoadData(void **lib, const void *code, int *jit_opts, void **jit_vals, unsigned njit,
			     int *lib_opts, void **lib_vals, unsigned nlib)
{
	(void)lib_opts, (void)lib_vals, (void)nlib;
	return load(lib, code, njit, jit_opts, jit_vals);
}

EXPORT int cuGetErrorString(int code, const char **s)
{
	*s = code == 0 ? "no error" : code == 300 ? "device kernel image is invalid"
		: code == 209 ? "no kernel image is available for execution on the device" : "unknown error";
	return 0;
}
EXPORT int cuGetErrorName(int code, const char **s)
{
	*s = code == 0 ? "CUDA_SUCCESS" : code == 300 ? "CUDA_ERROR_INVALID_SOURCE"
		: code == 209 ? "CUDA_ERROR_NO_BINARY_FOR_GPU" : code == 222 ? "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"
		: "CUDA_ERROR_UNKNOWN";
	return 0;
}

static int get_proc(const char *symbol, void **pfn, int version, unsigned long long flags, int *status);
EXPORT int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, unsigned long long flags, int *status)
{
	return get_proc(symbol, pfn, version, flags, status);
}
EXPORT int cuGetProcAddress(const char *symbol, void **pfn, int version, unsigned long long flags)
{
	return get_proc(symbol, pfn, version, flags, NULL);
}

/* The driver's table: each name, and the CUDA version from which its _v2 form is handed out. */
static const struct {
	const char *name;
	void *v1, *v2;
	int since;
} table[] = {
	{ "cuInit", (void *)cuInit, NULL, 0 },
	{ "cuDeviceGet", (void *)cuDeviceGet, NULL, 0 },
	{ "cuDeviceGetCount", (void *)cuDeviceGetCount, NULL, 0 },
	{ "cuDeviceGetAttribute", (void *)cuDeviceGetAttribute, NULL, 0 },
	{ "cuDevicePrimaryCtxRetain", (void *)cuDevicePrimaryCtxRetain, NULL, 0 },
	{ "cuCtxSetCurrent", (void *)cuCtxSetCurrent, NULL, 0 },
	{ "cuCtxGetDevice", (void *)cuCtxGetDevice, NULL, 0 },
	{ "cuLinkCreate", (void *)cuLinkCreate, (void *)cuLinkCreate_v2, 6050 },
	{ "cuLinkAddData", (void *)cuLinkAddData, (void *)cuLinkAddData_v2, 6050 },
	{ "cuLinkAddFile", (void *)cuLinkAddFile, (void *)cuLinkAddFile_v2, 6050 },
	{ "cuLinkComplete", (void *)cuLinkComplete, NULL, 0 },
	{ "cuLinkDestroy", (void *)cuLinkDestroy, NULL, 0 },
	{ "cuModuleLoadData", (void *)cuModuleLoadData, NULL, 0 },
	{ "cuModuleLoadDataEx", (void *)cuModuleLoadDataEx, NULL, 0 },
	{ "cuModuleUnload", (void *)cuModuleUnload, NULL, 0 },
	{ "cuLibraryLoadData", (void *)cuLibraryLoadData, NULL, 0 },
	{ "cuModuleLoad", (void *)cuModuleLoad, NULL, 0 },
	{ "cuModuleLoadFatBinary", (void *)cuModuleLoadFatBinary, NULL, 0 },
	{ "cuModuleGetFunction", (void *)cuModuleGetFunction, NULL, 0 },
	{ "cuLibraryGetKernel", (void *)cuLibraryGetKernel, NULL, 0 },
	{ "cuKernelGetFunction", (void *)cuKernelGetFunction, NULL, 0 },
	{ "cuFuncGetModule", (void *)cuFuncGetModule, NULL, 0 },
	{ "cuKernelGetLibrary", (void *)cuKernelGetLibrary, NULL, 0 },
	{ "cuLaunchKernel", (void *)cuLaunchKernel, NULL, 0 },
	{ "cuLaunchKernelEx", (void *)cuLaunchKernelEx, NULL, 0 },
	{ "cuDriverGetVersion", (void *)cuDriverGetVersion, NULL, 0 },
	{ "cuGetErrorString", (void *)cuGetErrorString, NULL, 0 },
	{ "cuGetErrorName", (void *)cuGetErrorName, NULL, 0 },
	{ "cuGetProcAddress", (void *)cuGetProcAddress, (void *)cuGetProcAddress_v2, 12000 },
};

static int get_proc(const char *symbol, void **pfn, int version, unsigned long long flags, int *status)
{
	/* CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM */
	if ((flags & 2) && !strcmp(symbol, "cuLaunchKernel")) {
		*pfn = (void *)cuLaunchKernel_ptsz;
		if (status)
			*status = 0;
		return 0;
	}
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(table[i].name, symbol)) {
			*pfn = table[i].v2 && version >= table[i].since ? table[i].v2 : table[i].v1;
			if (status)
				*status = 0;
			return 0;
		}
	*pfn = NULL;
	if (status)
		*status = 1;
	return 500; /* CUDA_ERROR_NOT_FOUND */
}
