/* The pass-through path against its floor, in one process: runs command A and command B in
 * turn (A B, B A, ... alternating which goes first), ROUNDS pairs, each with posix_spawn and
 * waitpid, stdout and stderr to /dev/null; prints each one's median wall time and the median of
 * the per-pair differences A - B, in microseconds.
 *
 *   cc -O2 -o floor_bench tests/bench/floor_bench.c
 *   ./floor_bench ROUNDS -- A ARGS... -- B ARGS...
 *
 * For nvshim's `nvcc --version` against a bare execv of nvcc (docs/speed.md): A is nvshim's
 * nvcc name, B a static program that only execv()s nvcc (tests/bench/bench.py builds one). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* One run of argv: its wall time in microseconds, or -1. */
static double run_once(char **argv)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	double t0 = now_us();
	pid_t pid;
	int status;
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ)) {
		posix_spawn_file_actions_destroy(&fa);
		return -1;
	}
	while (waitpid(pid, &status, 0) < 0)
		;
	double t = now_us() - t0;
	posix_spawn_file_actions_destroy(&fa);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? t : -1;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	int sep[2], ns = 0;
	for (int i = 2; i < argc && ns < 2; i++)
		if (!strcmp(argv[i], "--")) {
			sep[ns++] = i;
			argv[i] = NULL;
		}
	int rounds = argc > 1 ? atoi(argv[1]) : 0;
	if (ns != 2 || rounds < 1 || sep[0] != 2 || sep[1] == sep[0] + 1 || sep[1] + 1 >= argc) {
		fprintf(stderr, "usage: floor_bench ROUNDS -- A ARGS... -- B ARGS...\n");
		return 2;
	}
	char **a = argv + sep[0] + 1, **b = argv + sep[1] + 1;
	for (int w = 0; w < 20; w++)
		if (run_once(a) < 0 || run_once(b) < 0) {
			fprintf(stderr, "floor_bench: a command failed\n");
			return 1;
		}
	double *ta = malloc(sizeof(double) * (size_t)rounds), *tb = malloc(sizeof(double) * (size_t)rounds);
	double *d = malloc(sizeof(double) * (size_t)rounds);
	for (int r = 0; r < rounds; r++) {
		if (r % 2) {
			tb[r] = run_once(b);
			ta[r] = run_once(a);
		} else {
			ta[r] = run_once(a);
			tb[r] = run_once(b);
		}
		if (ta[r] < 0 || tb[r] < 0) {
			fprintf(stderr, "floor_bench: a command failed\n");
			return 1;
		}
		d[r] = ta[r] - tb[r];
	}
	double md = median(d, rounds), ma = median(ta, rounds), mb = median(tb, rounds);
	printf("%d pairs: A median %.1f us, B median %.1f us, per-pair A - B median %+.1f us\n", rounds, ma, mb, md);
	free(ta);
	free(tb);
	free(d);
	return 0;
}
