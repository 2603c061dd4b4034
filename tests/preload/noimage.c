/* A program that loads CUDA code the way programs and the CUDA runtime do, for the "no kernel
 * image" explanations (tests/e2e/preload.sh, with the test driver's FAKE_CUDA_IMAGES).
 *
 *   noimage [--via=dlsym|proc] module|library|fatbin LIB SYMBOL KERNEL
 *   noimage [--via=dlsym|proc] file PATH KERNEL
 *
 * LIB is a shared library that holds an image (a fatbin or cubin) at SYMBOL; the program loads it
 * (cuModuleLoadData, cuLibraryLoadData or cuModuleLoadFatBinary), or the file PATH
 * (cuModuleLoad), looks KERNEL up and launches it, and prints each call's result. The driver's
 * functions come from dlsym on libcuda.so.1, or from cuGetProcAddress as the CUDA runtime gets
 * them (--via=proc, the launch on the per-thread default stream); NOIMAGE_DIRECT builds call the
 * functions linked in.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef int (*init_fn)(unsigned);
typedef int (*retain_fn)(void **, int);
typedef int (*set_fn)(void *);
typedef int (*load_fn)(void **, const void *);
typedef int (*lib_fn)(void **, const void *, int *, void **, unsigned, int *, void **, unsigned);
typedef int (*file_fn)(void **, const char *);
typedef int (*get_fn)(void **, void *, const char *);
typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
			 void **, void **);
typedef int (*proc_fn)(const char *, void **, int, unsigned long long, int *);

#ifdef NOIMAGE_DIRECT
int cuInit(unsigned);
int cuDevicePrimaryCtxRetain(void **, int);
int cuCtxSetCurrent(void *);
int cuModuleLoadData(void **, const void *);
int cuModuleLoadFatBinary(void **, const void *);
int cuLibraryLoadData(void **, const void *, int *, void **, unsigned, int *, void **, unsigned);
int cuModuleLoad(void **, const char *);
int cuModuleGetFunction(void **, void *, const char *);
int cuLibraryGetKernel(void **, void *, const char *);
int cuLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **,
		   void **);
#endif

static void *cuda;
static proc_fn proc;

static void *fn(const char *name, unsigned long long flags)
{
	void *f = NULL;
	int status = 0;
	if (proc) {
		if (proc(name, &f, 13000, flags, &status) || status)
			return NULL;
		return f;
	}
	return dlsym(cuda, name);
}

int main(int argc, char **argv)
{
	int i = 1;
	const char *via = "dlsym";
	if (i < argc && !strncmp(argv[i], "--via=", 6))
		via = argv[i++] + 6;
	if (argc - i < 3) {
		fprintf(stderr, "usage: noimage [--via=dlsym|proc] module|library|fatbin LIB SYMBOL KERNEL | file PATH KERNEL\n");
		return 2;
	}
	const char *mode = argv[i];
	int file = !strcmp(mode, "file");
	if (!file && argc - i < 4)
		return 2;
	const char *kernel = file ? argv[i + 2] : argv[i + 3];
	const void *image = NULL;
	if (!file) {
		void *h = dlopen(argv[i + 1], RTLD_NOW | RTLD_LOCAL);
		image = h ? dlsym(h, argv[i + 2]) : NULL;
		if (!image) {
			fprintf(stderr, "noimage: %s\n", dlerror());
			return 2;
		}
	}
#ifdef NOIMAGE_DIRECT
	(void)via, (void)fn, (void)cuda, (void)proc;
	init_fn init = cuInit;
	retain_fn retain = cuDevicePrimaryCtxRetain;
	set_fn set = cuCtxSetCurrent;
	load_fn load = cuModuleLoadData, fat = cuModuleLoadFatBinary;
	lib_fn lib = cuLibraryLoadData;
	file_fn loadfile = cuModuleLoad;
	get_fn getf = cuModuleGetFunction, getk = cuLibraryGetKernel;
	launch_fn launch = cuLaunchKernel;
#else
	cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (!cuda) {
		fprintf(stderr, "noimage: %s\n", dlerror());
		return 2;
	}
	if (!strcmp(via, "proc"))
		proc = (proc_fn)dlsym(cuda, "cuGetProcAddress_v2");
	init_fn init = (init_fn)fn("cuInit", 0);
	retain_fn retain = (retain_fn)fn("cuDevicePrimaryCtxRetain", 0);
	set_fn set = (set_fn)fn("cuCtxSetCurrent", 0);
	load_fn load = (load_fn)fn("cuModuleLoadData", 0), fat = (load_fn)fn("cuModuleLoadFatBinary", 0);
	lib_fn lib = (lib_fn)fn("cuLibraryLoadData", 0);
	file_fn loadfile = (file_fn)fn("cuModuleLoad", 0);
	get_fn getf = (get_fn)fn("cuModuleGetFunction", 0), getk = (get_fn)fn("cuLibraryGetKernel", 0);
	launch_fn launch = (launch_fn)fn("cuLaunchKernel", proc ? 2 : 0);
#endif
	void *ctx = NULL, *handle = NULL, *f = NULL;
	if (init(0) || retain(&ctx, 0) || set(ctx)) {
		fprintf(stderr, "noimage: no context\n");
		return 2;
	}
	int r;
	if (file)
		r = loadfile(&handle, argv[i + 1]);
	else if (!strcmp(mode, "library"))
		r = lib(&handle, image, NULL, NULL, 0, NULL, NULL, 0);
	else if (!strcmp(mode, "fatbin"))
		r = fat(&handle, image);
	else
		r = load(&handle, image);
	printf("load %d\n", r);
	if (r)
		return 0;
	r = !strcmp(mode, "library") ? getk(&f, handle, kernel) : getf(&f, handle, kernel);
	printf("get %d\n", r);
	if (r)
		return 0;
	r = launch(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
	printf("launch %d\n", r);
	return 0;
}
