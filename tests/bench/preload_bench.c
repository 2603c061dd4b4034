/* What libnvshim-preload.so costs on the happy path, measured inside one process; run it with
 * and without the library (tests/bench/preload_bench.py alternates the two). Prints one line per
 * measurement on stdout: "<name> <nanoseconds>", the median of its samples.
 *
 *   compile             nvrtcCompileProgram of a one-line kernel with -arch=compute_90 (the
 *                       rules look and change nothing)
 *   create+destroy      nvrtcCreateProgram + nvrtcDestroyProgram (the registry copies the source)
 *   get_ptx             nvrtcGetPTX (the output's fingerprint is taken)
 *   log_size            nvrtcGetProgramLogSize (the registry is asked for notes)
 *   cuLinkCreate+Destroy, cuLinkAddData, cuModuleLoadDataEx   against the test double of the
 *                       driver with FAKE_CUDA_OK=1, whose own functions take nanoseconds, so what
 *                       remains is nvshim's
 *   dlsym_hooked        dlsym(handle, "nvrtcGetPTX"), answered with a wrapper
 *   dlsym_other         dlsym(handle, "nvrtcVersion"), forwarded to glibc
 *   cuGetProcAddress    cuGetProcAddress_v2("cuLinkAddData")
 *   cuModuleGetFunction, cuLaunchKernel   a kernel looked up and launched (the test double with
 *                       FAKE_CUDA_IMAGES=1 answers both at once): what every program pays for
 *                       the "no kernel image" explanations when nothing fails
 *
 *   preload_bench [COMPILES [CALLS]]       (10 and 20000 by default) */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>
#include <nvrtc.h>

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Times `calls` calls in batches of 100 and prints the median per call. */
#define PER_CALL(label, calls, body)                                                               \
	do {                                                                                       \
		int batches = (calls) / 100;                                                       \
		double *bt = malloc(sizeof(double) * (size_t)batches);                              \
		for (int b = 0; b < batches; b++) {                                                \
			double t0 = now_ns();                                                      \
			for (int k = 0; k < 100; k++) {                                            \
				body;                                                              \
			}                                                                          \
			bt[b] = (now_ns() - t0) / 100;                                             \
		}                                                                                  \
		printf("%s %.1f\n", label, median(bt, batches));                                    \
		free(bt);                                                                          \
	} while (0)

static const char src[] = "extern \"C\" __global__ void scale(float *x, float a, int n)\n"
			  "{\n"
			  "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
			  "    if (i < n) x[i] *= a;\n"
			  "}\n";

int main(int argc, char **argv)
{
	int compiles = argc > 1 ? atoi(argv[1]) : 10, calls = argc > 2 ? atoi(argv[2]) : 20000;
	const char *opts[] = { "-arch=compute_90" };
	double *t = malloc(sizeof(double) * (size_t)compiles);
	nvrtcProgram prog;
	/* Warm-up: NVRTC loads its builtins on the first compile. */
	nvrtcCreateProgram(&prog, src, "scale.cu", 0, NULL, NULL);
	nvrtcCompileProgram(prog, 1, opts);
	nvrtcDestroyProgram(&prog);
	for (int i = 0; i < compiles; i++) {
		nvrtcCreateProgram(&prog, src, "scale.cu", 0, NULL, NULL);
		double t0 = now_ns();
		if (nvrtcCompileProgram(prog, 1, opts) != NVRTC_SUCCESS)
			return 1;
		t[i] = now_ns() - t0;
		nvrtcDestroyProgram(&prog);
	}
	printf("compile %.1f\n", median(t, compiles));
	free(t);

	PER_CALL("create+destroy", calls / 4, {
		nvrtcCreateProgram(&prog, src, "scale.cu", 0, NULL, NULL);
		nvrtcDestroyProgram(&prog);
	});
	nvrtcCreateProgram(&prog, src, "scale.cu", 0, NULL, NULL);
	nvrtcCompileProgram(prog, 1, opts);
	size_t ptx_size, log_size;
	nvrtcGetPTXSize(prog, &ptx_size);
	char *ptx = malloc(ptx_size);
	PER_CALL("get_ptx", calls, nvrtcGetPTX(prog, ptx));
	PER_CALL("log_size", calls, nvrtcGetProgramLogSize(prog, &log_size));

	CUdevice dev;
	CUcontext ctx;
	cuInit(0);
	cuDeviceGet(&dev, 0);
	cuDevicePrimaryCtxRetain(&ctx, dev);
	cuCtxSetCurrent(ctx);
	CUlinkState state;
	PER_CALL("cuLinkCreate+Destroy", calls, {
		cuLinkCreate(0, NULL, NULL, &state);
		cuLinkDestroy(state);
	});
	cuLinkCreate(0, NULL, NULL, &state);
	PER_CALL("cuLinkAddData", calls, cuLinkAddData(state, CU_JIT_INPUT_PTX, ptx, ptx_size, "scale", 0, NULL, NULL));
	cuLinkDestroy(state);
	CUmodule mod;
	PER_CALL("cuModuleLoadDataEx", calls, {
		cuModuleLoadDataEx(&mod, ptx, 0, NULL, NULL);
		cuModuleUnload(mod);
	});
	cuModuleLoadDataEx(&mod, ptx, 0, NULL, NULL);
	CUfunction kfn;
	PER_CALL("cuModuleGetFunction", calls, cuModuleGetFunction(&kfn, mod, "scale"));
	PER_CALL("cuLaunchKernel", calls, cuLaunchKernel(kfn, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
	void *h = dlopen("libnvrtc.so.13", RTLD_NOW | RTLD_NOLOAD);
	void *volatile sink;
	PER_CALL("dlsym_hooked", calls, sink = dlsym(h, "nvrtcGetPTX"));
	PER_CALL("dlsym_other", calls, sink = dlsym(h, "nvrtcVersion"));
	void *fn;
	PER_CALL("cuGetProcAddress", calls, cuGetProcAddress("cuLinkAddData", &fn, 13000, 0, NULL));
	(void)sink;
	dlclose(h);
	free(ptx);
	nvrtcDestroyProgram(&prog);
	return 0;
}
