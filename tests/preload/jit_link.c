/* NVRTC to relocatable CUBIN (or PTX), then nvJitLink for sm_90, as a program that links JIT
 * code without a GPU would. Prints on stdout:
 *   compile <nvrtcResult>
 *   <call> <nvJitLinkResult>
 *   errlog-begin / nvJitLinkGetErrorLog / errlog-end      (with --errlog; else the log is
 *                                                          never read, as many programs do)
 *
 *   jit_link [--load=direct|dlopen] [--ptx] [--errlog] FILE
 *
 * jit_link_direct calls what nvJitLink.h makes of nvJitLinkCreate: the versioned
 * __nvJitLinkCreate_13_0 and friends; jit_link looks up the plain names with dlsym. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvJitLink.h>
#include <nvrtc.h>

static struct {
	nvJitLinkResult (*create)(nvJitLinkHandle *, uint32_t, const char **);
	nvJitLinkResult (*add_data)(nvJitLinkHandle, nvJitLinkInputType, const void *, size_t, const char *);
	nvJitLinkResult (*complete)(nvJitLinkHandle);
	nvJitLinkResult (*log_size)(nvJitLinkHandle, size_t *);
	nvJitLinkResult (*log)(nvJitLinkHandle, char *);
	nvJitLinkResult (*destroy)(nvJitLinkHandle *);
} jl;

#ifdef JIT_DIRECT
static nvJitLinkResult create(nvJitLinkHandle *h, uint32_t n, const char **o) { return nvJitLinkCreate(h, n, o); }
static nvJitLinkResult add_data(nvJitLinkHandle h, nvJitLinkInputType t, const void *d, size_t s, const char *n)
{
	return nvJitLinkAddData(h, t, d, s, n);
}
static nvJitLinkResult complete(nvJitLinkHandle h) { return nvJitLinkComplete(h); }
static nvJitLinkResult log_size(nvJitLinkHandle h, size_t *s) { return nvJitLinkGetErrorLogSize(h, s); }
static nvJitLinkResult get_log(nvJitLinkHandle h, char *l) { return nvJitLinkGetErrorLog(h, l); }
static nvJitLinkResult destroy(nvJitLinkHandle *h) { return nvJitLinkDestroy(h); }
#endif

static void load(void)
{
#ifdef JIT_DIRECT
	jl.create = create;
	jl.add_data = add_data;
	jl.complete = complete;
	jl.log_size = log_size;
	jl.log = get_log;
	jl.destroy = destroy;
#else
	void *h = dlopen("libnvJitLink.so.13", RTLD_NOW);
	if (!h) {
		fprintf(stderr, "jit_link: %s\n", dlerror());
		exit(2);
	}
	void *f;
#define GET(field, name)                                                                           \
	if (!(f = dlsym(h, name))) {                                                               \
		fprintf(stderr, "jit_link: no %s\n", name);                                        \
		exit(2);                                                                           \
	}                                                                                          \
	memcpy(&jl.field, &f, sizeof(f));
	GET(create, "nvJitLinkCreate");
	GET(add_data, "nvJitLinkAddData");
	GET(complete, "nvJitLinkComplete");
	GET(log_size, "nvJitLinkGetErrorLogSize");
	GET(log, "nvJitLinkGetErrorLog");
	GET(destroy, "nvJitLinkDestroy");
#endif
}

int main(int argc, char **argv)
{
	int ptx = 0, errlog = 0, i = 1;
	for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strcmp(argv[i], "--ptx"))
			ptx = 1;
		else if (!strcmp(argv[i], "--errlog"))
			errlog = 1;
	}
	if (i != argc - 1) {
		fprintf(stderr, "usage: jit_link [--ptx] [--errlog] FILE\n");
		return 2;
	}
	FILE *f = fopen(argv[i], "rb");
	if (!f)
		return 2;
	static char src[1 << 20];
	src[fread(src, 1, sizeof(src) - 1, f)] = '\0';
	fclose(f);
	const char *opts[] = { ptx ? "-arch=compute_90" : "-arch=sm_90", "-rdc=true" };
	nvrtcProgram prog;
	nvrtcCreateProgram(&prog, src, "jit.cu", 0, NULL, NULL);
	nvrtcResult nr = nvrtcCompileProgram(prog, 2, opts);
	printf("compile %d\n", (int)nr);
	if (nr != NVRTC_SUCCESS)
		return 1;
	size_t size;
	char *image;
	if (ptx) {
		nvrtcGetPTXSize(prog, &size);
		image = malloc(size);
		nvrtcGetPTX(prog, image);
	} else {
		nvrtcGetCUBINSize(prog, &size);
		image = malloc(size);
		nvrtcGetCUBIN(prog, image);
	}
	nvrtcDestroyProgram(&prog);

	load();
	nvJitLinkHandle h;
	const char *lopts[] = { "-arch=sm_90" };
	nvJitLinkResult r = jl.create(&h, 1, lopts);
	printf("nvJitLinkCreate %d\n", (int)r);
	if (r != NVJITLINK_SUCCESS)
		return 1;
	r = jl.add_data(h, ptx ? NVJITLINK_INPUT_PTX : NVJITLINK_INPUT_CUBIN, image, size, "jit");
	printf("nvJitLinkAddData %d\n", (int)r);
	if (r == NVJITLINK_SUCCESS) {
		r = jl.complete(h);
		printf("nvJitLinkComplete %d\n", (int)r);
	}
	if (errlog) {
		size_t n = 0;
		jl.log_size(h, &n);
		char *log = calloc(1, n + 1);
		jl.log(h, log);
		printf("errlog-begin\n%serrlog-end\n", log);
		free(log);
	}
	jl.destroy(&h);
	free(image);
	return r == NVJITLINK_SUCCESS ? 0 : 1;
}
