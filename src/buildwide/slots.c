#include "buildwide/slots.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
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

/* ---- --split-compile in nvcc's stage commands ---- */

/* Whether a stage's command runs `name`: its first word (quotes taken off), last component. */
static int stage_runs(const char *command, const char *name)
{
	const char *p = command;
	while (*p == ' ' || *p == '\t')
		p++;
	char quote = *p == '"' || *p == '\'' ? *p++ : 0;
	const char *base = p;
	while (*p && (quote ? *p != quote : *p != ' ' && *p != '\t')) {
		if (*p == '/')
			base = p + 1;
		p++;
	}
	size_t n = strlen(name);
	return (size_t)(p - base) == n && !strncmp(base, name, n);
}

/* The split-compile option at p, if there is one: "-split-compile N", "-split-compile=N" (or two
 * dashes) starting a word. Sets *digits (N's text), *end (past the option) and *value (N,
 * capped); returns 1, else 0. */
static int split_option_at(const char *command, const char *p, const char **digits, const char **end,
			   unsigned *value)
{
	static const char name[] = "-split-compile";
	const char *q = p;
	if (*q == '-' && q[1] == '-')
		q++;
	if (p != command && p[-1] != ' ' && p[-1] != '\t' && p[-1] != '"')
		return 0;
	if (strncmp(q, name, sizeof(name) - 1))
		return 0;
	q += sizeof(name) - 1;
	if (*q != ' ' && *q != '=')
		return 0;
	const char *d = ++q;
	unsigned v = 0;
	while (*q >= '0' && *q <= '9') {
		if (v < 100000)
			v = v * 10 + (unsigned)(*q - '0');
		q++;
	}
	if (q == d || (*q && *q != ' ' && *q != '\t' && *q != '"'))
		return 0;
	*digits = d;
	*end = q;
	*value = v;
	return 1;
}

unsigned slots_split_wanted(const char *command)
{
	if (!command || !(stage_runs(command, "cicc") || stage_runs(command, "ptxas")))
		return 0;
	unsigned most = 0;
	for (const char *p = command; (p = strchr(p, '-')); p++) {
		const char *d, *end;
		unsigned v;
		if (split_option_at(command, p, &d, &end, &v)) {
			if (v > most)
				most = v;
			p = end - 1;
		}
	}
	return most;
}

char *slots_split_command(const char *command, unsigned k)
{
	if (!command)
		return NULL;
	int strip = stage_runs(command, "fatbinary");
	if (!strip && !stage_runs(command, "cicc") && !stage_runs(command, "ptxas"))
		return NULL;
	size_t len = strlen(command), count = 0;
	for (const char *p = command; (p = strstr(p, "split-compile")); p++)
		count++;
	if (!count)
		return NULL;
	char *out = malloc(len + 1 + count * 12);
	if (!out)
		return NULL;
	char *o = out;
	int changed = 0;
	const char *p = command;
	while (*p) {
		const char *d, *end;
		unsigned v;
		if (*p != '-' || !split_option_at(command, p, &d, &end, &v)) {
			*o++ = *p++;
			continue;
		}
		changed = 1;
		if (strip) {
			/* the option and the blank after it */
			p = *end == ' ' || *end == '\t' ? end + 1 : end;
			continue;
		}
		memcpy(o, p, (size_t)(d - p));
		o += d - p;
		o += sprintf(o, "%u", k ? k : 1);
		p = end;
	}
	*o = '\0';
	if (!changed) {
		free(out);
		return NULL;
	}
	/* a --cmdline that held nothing else goes, with the blank after it */
	char *c = strip ? strstr(out, "--cmdline=\"") : NULL;
	if (c && (c == out || c[-1] == ' ')) {
		char *v = c + 11;
		while (*v == ' ' || *v == '\t')
			v++;
		if (*v == '"') {
			v++;
			if (*v == ' ')
				v++;
			memmove(c, v, strlen(v) + 1);
		}
	}
	return out;
}
