/* A test double of the CUDA driver (libcuda.so.1) for machines without a GPU: just enough of
 * the driver API for a JIT link. Its linker and loaders fail the way the real driver does on
 * relocatable code that uses too much shared memory when the caller passed no log buffer:
 * CUDA_ERROR_INVALID_SOURCE (300) and an empty log.
 *
 *   FAKE_CUDA_CC=90       the device's compute capability (default 90)
 *   FAKE_CUDA_LOG=text    what the linker writes into a caller's error log buffer (default "")
 *   FAKE_CUDA_OK=1        links and loads succeed (for benchmarks)
 */
#include <stdint.h>
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

EXPORT int cuInit(unsigned flags) { (void)flags; initialised = 1; return 0; }
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
static int load(void **mod, const void *image, unsigned n, int *opts, void **vals)
{
	if (!image)
		return 1;
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
EXPORT int cuModuleUnload(void *mod) { return mod == &module ? 0 : 400; }
EXPORT int cuLibraryLoadData(void **lib, const void *code, int *jit_opts, void **jit_vals, unsigned njit,
			     int *lib_opts, void **lib_vals, unsigned nlib)
{
	(void)lib_opts, (void)lib_vals, (void)nlib;
	return load(lib, code, njit, jit_opts, jit_vals);
}

EXPORT int cuGetErrorString(int code, const char **s)
{
	*s = code == 0 ? "no error" : code == 300 ? "device kernel image is invalid" : "unknown error";
	return 0;
}
EXPORT int cuGetErrorName(int code, const char **s)
{
	*s = code == 0 ? "CUDA_SUCCESS" : code == 300 ? "CUDA_ERROR_INVALID_SOURCE" : "CUDA_ERROR_UNKNOWN";
	return 0;
}

static int get_proc(const char *symbol, void **pfn, int version, int *status);
EXPORT int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, unsigned long long flags, int *status)
{
	(void)flags;
	return get_proc(symbol, pfn, version, status);
}
EXPORT int cuGetProcAddress(const char *symbol, void **pfn, int version, unsigned long long flags)
{
	(void)flags;
	return get_proc(symbol, pfn, version, NULL);
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
	{ "cuGetErrorString", (void *)cuGetErrorString, NULL, 0 },
	{ "cuGetErrorName", (void *)cuGetErrorName, NULL, 0 },
	{ "cuGetProcAddress", (void *)cuGetProcAddress, (void *)cuGetProcAddress_v2, 12000 },
};

static int get_proc(const char *symbol, void **pfn, int version, int *status)
{
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
