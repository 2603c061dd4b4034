/* NVRTC to relocatable PTX (or CUBIN), then the CUDA driver's JIT linker or loader, the way
 * CuPy's RawModule(options=("--device-c",)) does it. Prints on stdout:
 *   compile <nvrtcResult>
 *   <call> <CUresult> <cuGetErrorName>: <cuGetErrorString>
 *   log-begin / <the caller's error log> / log-end        (with --log)
 *
 *   link_driver [--load=direct|dlopen|procaddress] [--mode=link|file|module|ex|library] [--log]
 *               [--cubin] [--arch=ARCH] [--proc-version=N] FILE
 *
 * --load: how the driver's functions are found: linked (link_driver_direct), dlopen("libcuda.so.1")
 * and dlsym on the handle, or cuGetProcAddress_v2 with CUDA version N (13000 by default; with
 * 3020 the driver hands out the first forms of cuLinkCreate/AddData/AddFile). --mode: cuLinkCreate +
 * cuLinkAddData (+1 byte, as CuPy passes it) + cuLinkComplete; the same with cuLinkAddFile;
 * cuModuleLoadData; cuModuleLoadDataEx; cuLibraryLoadData. --log passes an error log buffer.
 * Without a GPU, run it against tests/preload/fake_cuda.c's libcuda.so.1; on a GPU, against the
 * driver. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>
#include <nvrtc.h>

static struct {
	CUresult (*init)(unsigned);
	CUresult (*device_get)(CUdevice *, int);
	CUresult (*retain)(CUcontext *, CUdevice);
	CUresult (*set_current)(CUcontext);
	CUresult (*link_create)(unsigned, CUjit_option *, void **, CUlinkState *);
	CUresult (*link_add_data)(CUlinkState, CUjitInputType, void *, size_t, const char *, unsigned, CUjit_option *,
				  void **);
	CUresult (*link_add_file)(CUlinkState, CUjitInputType, const char *, unsigned, CUjit_option *, void **);
	CUresult (*link_complete)(CUlinkState, void **, size_t *);
	CUresult (*link_destroy)(CUlinkState);
	CUresult (*load_data)(CUmodule *, const void *);
	CUresult (*load_data_ex)(CUmodule *, const void *, unsigned, CUjit_option *, void **);
	CUresult (*library_load)(CUlibrary *, const void *, CUjit_option *, void **, unsigned, CUlibraryOption *,
				 void **, unsigned);
	CUresult (*error_name)(CUresult, const char **);
	CUresult (*error_string)(CUresult, const char **);
} cu;

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		exit(2);
	}
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

__attribute__((unused)) static void set(void *field, void *f, const char *name)
{
	if (!f) {
		fprintf(stderr, "link_driver: no %s\n", name);
		exit(2);
	}
	memcpy(field, &f, sizeof(f));
}

static int proc_version = 13000;

static void load(const char *how)
{
#ifdef LINK_DIRECT
	(void)how;
	cu.init = cuInit;
	cu.device_get = cuDeviceGet;
	cu.retain = cuDevicePrimaryCtxRetain;
	cu.set_current = cuCtxSetCurrent;
	cu.link_create = cuLinkCreate;
	cu.link_add_data = cuLinkAddData;
	cu.link_add_file = cuLinkAddFile;
	cu.link_complete = cuLinkComplete;
	cu.link_destroy = cuLinkDestroy;
	cu.load_data = cuModuleLoadData;
	cu.load_data_ex = cuModuleLoadDataEx;
	cu.library_load = cuLibraryLoadData;
	cu.error_name = cuGetErrorName;
	cu.error_string = cuGetErrorString;
#else
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h) {
		fprintf(stderr, "link_driver: %s\n", dlerror());
		exit(2);
	}
	CUresult (*proc)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *) = NULL;
	set(&proc, dlsym(h, "cuGetProcAddress_v2"), "cuGetProcAddress_v2");
	int by_proc = !strcmp(how, "procaddress");
#define GET(field, name, v2)                                                                       \
	do {                                                                                       \
		void *f = NULL;                                                                    \
		if (by_proc)                                                                       \
			proc(name, &f, proc_version, CU_GET_PROC_ADDRESS_DEFAULT, NULL);           \
		else                                                                               \
			f = dlsym(h, v2 ? name "_v2" : name);                                      \
		set(&cu.field, f, name);                                                           \
	} while (0)
	GET(init, "cuInit", 0);
	GET(device_get, "cuDeviceGet", 0);
	GET(retain, "cuDevicePrimaryCtxRetain", 0);
	GET(set_current, "cuCtxSetCurrent", 0);
	GET(link_create, "cuLinkCreate", 1);
	GET(link_add_data, "cuLinkAddData", 1);
	GET(link_add_file, "cuLinkAddFile", 1);
	GET(link_complete, "cuLinkComplete", 0);
	GET(link_destroy, "cuLinkDestroy", 0);
	GET(load_data, "cuModuleLoadData", 0);
	GET(load_data_ex, "cuModuleLoadDataEx", 0);
	GET(library_load, "cuLibraryLoadData", 0);
	GET(error_name, "cuGetErrorName", 0);
	GET(error_string, "cuGetErrorString", 0);
#endif
}

static void report(const char *call, CUresult r)
{
	const char *name = "?", *text = "?";
	cu.error_name(r, &name);
	cu.error_string(r, &text);
	printf("%s %d %s: %s\n", call, (int)r, name, text);
}

int main(int argc, char **argv)
{
	const char *how = "dlopen", *mode = "link", *arch = NULL;
	int with_log = 0, cubin = 0, i = 1;
	for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strncmp(argv[i], "--load=", 7))
			how = argv[i] + 7;
		else if (!strncmp(argv[i], "--mode=", 7))
			mode = argv[i] + 7;
		else if (!strncmp(argv[i], "--arch=", 7))
			arch = argv[i] + 7;
		else if (!strcmp(argv[i], "--log"))
			with_log = 1;
		else if (!strcmp(argv[i], "--cubin"))
			cubin = 1;
		else if (!strncmp(argv[i], "--proc-version=", 15))
			proc_version = atoi(argv[i] + 15);
	}
	if (i != argc - 1) {
		fprintf(stderr, "usage: link_driver [--load=direct|dlopen|procaddress] [--mode=link|file|module|ex|library] "
				"[--log] [--cubin] [--arch=ARCH] FILE\n");
		return 2;
	}
	const char *path = argv[i];
	char *src = slurp(path);
	char archopt[64];
	snprintf(archopt, sizeof(archopt), "-arch=%s", arch ? arch : cubin ? "sm_90" : "compute_90");
	const char *opts[] = { archopt, "-rdc=true" };
	nvrtcProgram prog;
	nvrtcCreateProgram(&prog, src, strrchr(path, '/') ? strrchr(path, '/') + 1 : path, 0, NULL, NULL);
	nvrtcResult nr = nvrtcCompileProgram(prog, 2, opts);
	printf("compile %d\n", (int)nr);
	if (nr != NVRTC_SUCCESS)
		return 1;
	size_t size;
	char *image;
	if (cubin) {
		nvrtcGetCUBINSize(prog, &size);
		image = malloc(size + 1);
		nvrtcGetCUBIN(prog, image);
	} else {
		nvrtcGetPTXSize(prog, &size);
		image = malloc(size + 1);
		nvrtcGetPTX(prog, image);
	}
	image[size] = '\0';
	/* Programs destroy their NVRTC program once they have its output. */
	nvrtcDestroyProgram(&prog);

	load(how);
	CUdevice dev;
	CUcontext ctx;
	CUresult r = cu.init(0);
	if (r == CUDA_SUCCESS)
		r = cu.device_get(&dev, 0);
	if (r == CUDA_SUCCESS)
		r = cu.retain(&ctx, dev);
	if (r == CUDA_SUCCESS)
		r = cu.set_current(ctx);
	if (r != CUDA_SUCCESS) {
		report("init", r);
		return 1;
	}
	static char log[8192];
	CUjit_option lopts[] = { CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *lvals[] = { log, (void *)(uintptr_t)sizeof(log) };
	unsigned nl = with_log ? 2 : 0;
	CUjitInputType type = cubin ? CU_JIT_INPUT_CUBIN : CU_JIT_INPUT_PTX;
	if (!strcmp(mode, "link") || !strcmp(mode, "file")) {
		CUlinkState state;
		r = cu.link_create(nl, nl ? lopts : NULL, nl ? lvals : NULL, &state);
		if (r != CUDA_SUCCESS) {
			report("cuLinkCreate", r);
			return 1;
		}
		if (!strcmp(mode, "file")) {
			char out[4096];
			snprintf(out, sizeof(out), "%s/link_driver_%d.%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
				 (int)getpid(), cubin ? "cubin" : "ptx");
			FILE *f = fopen(out, "wb");
			fwrite(image, 1, size, f);
			fclose(f);
			r = cu.link_add_file(state, type, out, 0, NULL, NULL);
			if (r == CUDA_SUCCESS) {
				void *bin;
				size_t binsize;
				r = cu.link_complete(state, &bin, &binsize);
			}
			report(r == CUDA_SUCCESS ? "cuLinkComplete" : "cuLinkComplete", r);
			remove(out);
		} else {
			/* CuPy passes len(data) + 1 bytes. */
			r = cu.link_add_data(state, type, image, size + 1, "jit.ptx", 0, NULL, NULL);
			if (r != CUDA_SUCCESS) {
				report("cuLinkAddData", r);
			} else {
				void *bin;
				size_t binsize;
				r = cu.link_complete(state, &bin, &binsize);
				report("cuLinkComplete", r);
			}
		}
		if (with_log)
			printf("log-begin\n%s\nlog-end\n", log);
		cu.link_destroy(state);
	} else {
		CUmodule mod;
		CUlibrary lib;
		if (!strcmp(mode, "module")) {
			r = cu.load_data(&mod, image);
			report("cuModuleLoadData", r);
		} else if (!strcmp(mode, "ex")) {
			r = cu.load_data_ex(&mod, image, nl, nl ? lopts : NULL, nl ? lvals : NULL);
			report("cuModuleLoadDataEx", r);
		} else {
			r = cu.library_load(&lib, image, nl ? lopts : NULL, nl ? lvals : NULL, nl, NULL, NULL, 0);
			report("cuLibraryLoadData", r);
		}
		if (with_log)
			printf("log-begin\n%s\nlog-end\n", log);
	}
	free(image);
	return r == CUDA_SUCCESS ? 0 : 1;
}
