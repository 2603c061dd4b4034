/* NVRTC from several threads at once: THREADS threads share TOTAL compiles of tiny programs,
 * every other one without -arch (so that nvshim's nvrtc.no_arch rule fires and its note goes into
 * the log). Even threads call the functions the program is linked with; odd threads look them up
 * with dlopen + dlsym on the handle (nvshim's dlsym hands out wrappers). The threads start
 * together, so that their first calls, which set nvshim's state up, run at the same time. Each
 * compile must succeed, and its log must be exactly as long as nvrtcGetProgramLogSize says.
 * Prints "ok <compiles> compiles in <ms> ms".
 *
 *   rtc_threads [THREADS [TOTAL]]        (8 and 1000 by default) */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nvrtc.h>

struct nvrtc {
	nvrtcResult (*create)(nvrtcProgram *, const char *, const char *, int, const char *const *,
			      const char *const *);
	nvrtcResult (*compile)(nvrtcProgram, int, const char *const *);
	nvrtcResult (*ptx_size)(nvrtcProgram, size_t *);
	nvrtcResult (*ptx)(nvrtcProgram, char *);
	nvrtcResult (*log_size)(nvrtcProgram, size_t *);
	nvrtcResult (*log)(nvrtcProgram, char *);
	nvrtcResult (*destroy)(nvrtcProgram *);
};

static int total = 1000, threads = 8;
static int next_job, failures, with_notes;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t start;

static int load(struct nvrtc *n, int dynamic)
{
	if (!dynamic) {
		*n = (struct nvrtc){ nvrtcCreateProgram, nvrtcCompileProgram, nvrtcGetPTXSize, nvrtcGetPTX,
				     nvrtcGetProgramLogSize, nvrtcGetProgramLog, nvrtcDestroyProgram };
		return 0;
	}
	/* Kept open: the functions are used until the thread ends. */
	void *h = dlopen("libnvrtc.so.13", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return -1;
	*(void **)&n->create = dlsym(h, "nvrtcCreateProgram");
	*(void **)&n->compile = dlsym(h, "nvrtcCompileProgram");
	*(void **)&n->ptx_size = dlsym(h, "nvrtcGetPTXSize");
	*(void **)&n->ptx = dlsym(h, "nvrtcGetPTX");
	*(void **)&n->log_size = dlsym(h, "nvrtcGetProgramLogSize");
	*(void **)&n->log = dlsym(h, "nvrtcGetProgramLog");
	*(void **)&n->destroy = dlsym(h, "nvrtcDestroyProgram");
	return n->create && n->compile && n->ptx_size && n->ptx && n->log_size && n->log && n->destroy ? 0 : -1;
}

static void *worker(void *arg)
{
	struct nvrtc n = { 0 };
	int loaded = load(&n, (int)(size_t)arg % 2) == 0;
	pthread_barrier_wait(&start);
	for (;;) {
		pthread_mutex_lock(&lock);
		int job = next_job < total ? next_job++ : -1;
		failures += job >= 0 && !loaded;
		pthread_mutex_unlock(&lock);
		if (job < 0)
			return NULL;
		if (!loaded)
			continue;
		char src[160], name[32];
		snprintf(src, sizeof(src), "extern \"C\" __global__ void k%d(float *x) { x[threadIdx.x] += %d.0f; }\n",
			 job, job);
		snprintf(name, sizeof(name), "k%d.cu", job);
		const char *opts[] = { "-arch=compute_80" };
		nvrtcProgram prog;
		int ok = n.create(&prog, src, name, 0, NULL, NULL) == NVRTC_SUCCESS;
		ok = ok && n.compile(prog, job % 2, opts) == NVRTC_SUCCESS;
		size_t size = 0, log_size = 0;
		ok = ok && n.ptx_size(prog, &size) == NVRTC_SUCCESS && size > 1;
		char *ptx = ok ? malloc(size) : NULL;
		ok = ok && n.ptx(prog, ptx) == NVRTC_SUCCESS && strstr(ptx, ".entry");
		ok = ok && n.log_size(prog, &log_size) == NVRTC_SUCCESS;
		char *log = ok ? malloc(log_size) : NULL;
		ok = ok && n.log(prog, log) == NVRTC_SUCCESS && strlen(log) + 1 == log_size;
		pthread_mutex_lock(&lock);
		failures += !ok;
		with_notes += ok && strstr(log, "[nvrtc.no_arch]") != NULL;
		pthread_mutex_unlock(&lock);
		free(ptx);
		free(log);
		n.destroy(&prog);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1)
		threads = atoi(argv[1]);
	if (argc > 2)
		total = atoi(argv[2]);
	if (threads < 1 || threads > 64) {
		fprintf(stderr, "rtc_threads: 1 to 64 threads\n");
		return 2;
	}
	pthread_t t[64];
	struct timespec a, b;
	pthread_barrier_init(&start, NULL, (unsigned)threads);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker, (void *)(size_t)i);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	pthread_barrier_destroy(&start);
	double ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	printf("%s %d compiles in %.0f ms, %d failed, %d logs with nvshim's note\n", failures ? "not ok" : "ok",
	       total, ms, failures, with_notes);
	return failures ? 1 : 0;
}
