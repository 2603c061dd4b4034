#include "buildwide/slots.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

int slots_open(const char *dir, unsigned i)
{
	char path[4096];
	if (!dir || !*dir || snprintf(path, sizeof(path), "%s/slot.%u", dir, i) >= (int)sizeof(path))
		return -1;
	int fd;
	do
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	while (fd < 0 && errno == EINTR);
	return fd;
}

unsigned slots_held(const char *dir, unsigned n)
{
	unsigned held = 0;
	for (unsigned i = 0; i < n && i < SLOTS_MAX; i++) {
		int fd = slots_open(dir, i);
		if (fd < 0)
			break;
		if (flock(fd, LOCK_SH | LOCK_NB))
			held++;
		close(fd);
	}
	return held;
}

/* One round over slot.0 .. slot.<n-1> from `start` on, each opened, tried and closed unless
 * taken (a waiting stage keeps no descriptor: nvcc runs many of them at once). The description
 * of the slot taken, or -1; *opened counts the files that could be opened. */
static int round_try(const char *dir, unsigned n, unsigned start, unsigned *opened)
{
	*opened = 0;
	for (unsigned k = 0; k < n; k++) {
		int fd = slots_open(dir, (start + k) % n);
		if (fd < 0)
			continue;
		++*opened;
		if (!flock(fd, LOCK_EX | LOCK_NB))
			return fd;
		close(fd);
	}
	return -1;
}

static int take(const char *dir, unsigned n, unsigned start, int wait, unsigned *waited_ms)
{
	int saved = errno;
	if (waited_ms)
		*waited_ms = 0;
	if (n > SLOTS_MAX)
		n = SLOTS_MAX;
	struct timespec t0;
	long nap_ns = 500 * 1000;
	unsigned opened;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int fd;
	/* none could be opened: the slots cannot be used, and the caller goes on without one */
	while ((fd = round_try(dir, n, start % n, &opened)) < 0 && opened && wait) {
		struct timespec nap = { 0, nap_ns };
		while (nanosleep(&nap, &nap) && errno == EINTR)
			;
		if (nap_ns < 8 * 1000 * 1000)
			nap_ns *= 2;
	}
	if (waited_ms && fd >= 0) {
		struct timespec t1;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		*waited_ms = (unsigned)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
	}
	errno = saved;
	return fd;
}

int slots_wait(const char *dir, unsigned n, unsigned start, unsigned *waited_ms)
{
	return n ? take(dir, n, start, 1, waited_ms) : -1;
}

int slots_try(const char *dir, unsigned n, unsigned start)
{
	return n ? take(dir, n, start, 0, NULL) : -1;
}

void slots_give(int fd)
{
	if (fd < 0)
		return;
	int saved = errno;
	flock(fd, LOCK_UN);
	close(fd);
	errno = saved;
}

int slots_gate_format(char *buf, size_t size, unsigned n, const char *dir)
{
	int len = snprintf(buf, size, "%u:%s", n, dir ? dir : "");
	return len < 0 || (size_t)len >= size ? -1 : 0;
}

int slots_gate_parse(const char *text, unsigned *n, char *dir, size_t size)
{
	if (!text)
		return -1;
	unsigned v = 0;
	const char *p = text;
	while (*p >= '0' && *p <= '9' && v <= SLOTS_MAX)
		v = v * 10 + (unsigned)(*p++ - '0');
	if (p == text || *p != ':' || v < 1 || v > SLOTS_MAX)
		return -1;
	p++;
	size_t len = strlen(p);
	if (*p != '/' || len >= size)
		return -1;
	memcpy(dir, p, len + 1);
	*n = v;
	return 0;
}
