/* NVRTC from several threads at once, linked directly: THREADS threads share TOTAL compiles of
 * tiny programs, every other one without -arch (so that nvshim's nvrtc.no_arch rule fires and
 * its note goes into the log). Each compile must succeed, and its log must be exactly as long as
 * nvrtcGetProgramLogSize says. Prints "ok <compiles> compiles in <ms> ms".
 *
 *   rtc_threads [THREADS [TOTAL]]        (8 and 1000 by default) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nvrtc.h>

static int total = 1000, threads = 8;
static int next_job, failures, with_notes;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&lock);
		int job = next_job < total ? next_job++ : -1;
		pthread_mutex_unlock(&lock);
		if (job < 0)
			return NULL;
		char src[160], name[32];
		snprintf(src, sizeof(src), "extern \"C\" __global__ void k%d(float *x) { x[threadIdx.x] += %d.0f; }\n",
			 job, job);
		snprintf(name, sizeof(name), "k%d.cu", job);
		const char *opts[] = { "-arch=compute_80" };
		nvrtcProgram prog;
		int ok = nvrtcCreateProgram(&prog, src, name, 0, NULL, NULL) == NVRTC_SUCCESS;
		ok = ok && nvrtcCompileProgram(prog, job % 2, opts) == NVRTC_SUCCESS;
		size_t size = 0, log_size = 0;
		ok = ok && nvrtcGetPTXSize(prog, &size) == NVRTC_SUCCESS && size > 1;
		char *ptx = ok ? malloc(size) : NULL;
		ok = ok && nvrtcGetPTX(prog, ptx) == NVRTC_SUCCESS && strstr(ptx, ".entry");
		ok = ok && nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS;
		char *log = ok ? malloc(log_size) : NULL;
		ok = ok && nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS && strlen(log) + 1 == log_size;
		pthread_mutex_lock(&lock);
		failures += !ok;
		with_notes += ok && strstr(log, "[nvrtc.no_arch]") != NULL;
		pthread_mutex_unlock(&lock);
		free(ptx);
		free(log);
		nvrtcDestroyProgram(&prog);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1)
		threads = atoi(argv[1]);
	if (argc > 2)
		total = atoi(argv[2]);
	pthread_t t[64];
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < threads && i < 64; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < threads && i < 64; i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	printf("%s %d compiles in %.0f ms, %d failed, %d logs with nvshim's note\n", failures ? "not ok" : "ok",
	       total, ms, failures, with_notes);
	return failures ? 1 : 0;
}
