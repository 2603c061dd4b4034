/* memgate: heavy stages start when their expected peak fits the memory budget (memgate.h).
 * libc only: libnvshim-gate.so contains it. */
#include "buildwide/memgate.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/hash.h"

/* Paths are built in fixed buffers; one cut short names no file, and the step fails open. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

#define MIB (1024LL * 1024)
#define GIB (1024LL * MIB)

static const char *const kind_names[MEMGATE_NKINDS] = { "other", "cicc", "ptxas", "nvlink", "cudafe++", "host",
							  "host-E" };

const char *memgate_kind_name(enum memgate_kind k)
{
	return (unsigned)k < MEMGATE_NKINDS ? kind_names[k] : "other";
}

enum memgate_kind memgate_stage_kind(const char *command)
{
	if (!command)
		return MEMGATE_OTHER;
	const char *p = command;
	/* nvcc's stages may start with variable assignments ("_NVVM_BRANCH_=nvvm ...") */
	for (;;) {
		p += strspn(p, " \t");
		const char *end = p + strcspn(p, " \t");
		const char *eq = memchr(p, '=', (size_t)(end - p));
		if (!eq || *p == '"' || eq == p)
			break;
		p = end;
	}
	char prog[256];
	size_t n = 0;
	if (*p == '"') {
		p++;
		while (*p && *p != '"' && n + 1 < sizeof(prog))
			prog[n++] = *p++;
	} else {
		while (*p && *p != ' ' && *p != '\t' && n + 1 < sizeof(prog))
			prog[n++] = *p++;
	}
	prog[n] = '\0';
	const char *base = strrchr(prog, '/');
	base = base ? base + 1 : prog;
	if (!strcmp(base, "cicc"))
		return MEMGATE_CICC;
	if (!strcmp(base, "ptxas"))
		return MEMGATE_PTXAS;
	if (!strcmp(base, "nvlink"))
		return MEMGATE_NVLINK;
	if (!strcmp(base, "cudafe++"))
		return MEMGATE_CUDAFE;
	/* the host compiler: gcc, g++, c++, cc, clang, clang++, versioned (g++-13) or prefixed
	 * (x86_64-linux-gnu-g++); its preprocessing runs count too (cheap, and learned as such) */
	static const char *const hosts[] = { "gcc", "g++", "c++", "cc", "clang", "clang++", "icpx", "nvc++" };
	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		const char *h = strstr(base, hosts[i]);
		size_t hl = strlen(hosts[i]);
		if (h && (h == base || h[-1] == '-') && (!h[hl] || h[hl] == '-'))
			return strstr(p, " -E ") ? MEMGATE_HOST_PP : MEMGATE_HOST;
	}
	return MEMGATE_OTHER;
}

long long memgate_default_peak(enum memgate_kind k)
{
	switch (k) {
	case MEMGATE_CICC:
		/* flash-attn 2.8.3's backward kernels: 6.05 GiB (on an H200 machine); a budget must
		 * hold a build's first wave, before any peak is known */
		return 6 * GIB;
	case MEMGATE_PTXAS:
		return 1 * GIB;
	case MEMGATE_CUDAFE:
		return 3 * GIB / 2; /* a CUTLASS Hopper GEMM's: 1.31 GiB */
	case MEMGATE_NVLINK:
	case MEMGATE_HOST:
		return 1 * GIB;
	case MEMGATE_HOST_PP:
		return 512 * MIB;
	default:
		return 0;
	}
}

long long memgate_estimate(long long learned, long long similar, long long dflt)
{
	if (learned > 0)
		return learned;
	if (similar > 0)
		return similar;
	return dflt > 0 ? dflt : 0;
}

long long memgate_default_budget(long long avail)
{
	if (avail <= 0)
		return 0;
	long long reserve = avail / 10;
	if (reserve < 256 * MIB)
		reserve = 256 * MIB;
	if (reserve > 2 * GIB)
		reserve = 2 * GIB;
	long long b = avail - reserve;
	return b < 256 * MIB ? 256 * MIB : b;
}

/* ---- parsers ---- */

int memgate_parse_budget(const char *text, long long total, long long *bytes)
{
	if (!text)
		return -1;
	while (*text == ' ' || *text == '\t')
		text++;
	char buf[64];
	size_t n = strlen(text);
	while (n && (text[n - 1] == ' ' || text[n - 1] == '\t' || text[n - 1] == '\n' || text[n - 1] == '\r'))
		n--;
	if (n >= sizeof(buf))
		return -1;
	memcpy(buf, text, n);
	buf[n] = '\0';
	if (!n || !strcasecmp(buf, "auto")) {
		*bytes = 0;
		return 0;
	}
	if (!strcasecmp(buf, "off")) {
		*bytes = -1;
		return 0;
	}
	if (!isdigit((unsigned char)buf[0]))
		return -1;
	char *end;
	errno = 0;
	double v = strtod(buf, &end);
	if (errno || end == buf || v < 0 || v != v)
		return -1;
	while (*end == ' ')
		end++;
	double mult = 1;
	if (*end == '%') {
		if (end[1] || total <= 0 || v > 100 || v <= 0)
			return -1;
		*bytes = (long long)((double)total * v / 100.0);
		return 0;
	}
	switch (toupper((unsigned char)*end)) {
	case 'K': mult = 1024.0; end++; break;
	case 'M': mult = 1024.0 * 1024; end++; break;
	case 'G': mult = 1024.0 * 1024 * 1024; end++; break;
	case 'T': mult = 1024.0 * 1024 * 1024 * 1024; end++; break;
	default: break;
	}
	if (mult > 1 && (*end == 'i' || *end == 'I'))
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end)
		return -1;
	double b = v * mult;
	if (b < 1 || b > 9.0e18)
		return -1;
	*bytes = (long long)b;
	return 0;
}

/* The number after "Name:" at the start of a line of text, in kB, as bytes; -1 when absent. */
static long long meminfo_field(const char *text, const char *name)
{
	size_t nl = strlen(name);
	for (const char *p = text; p && *p;) {
		if (!strncmp(p, name, nl) && p[nl] == ':') {
			const char *q = p + nl + 1;
			while (*q == ' ' || *q == '\t')
				q++;
			if (!isdigit((unsigned char)*q))
				return -1;
			errno = 0;
			char *end;
			long long kb = strtoll(q, &end, 10);
			if (errno || kb < 0 || kb > LLONG_MAX / 1024)
				return -1;
			return kb * 1024;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

int memgate_parse_meminfo(const char *text, long long *total, long long *avail)
{
	*total = *avail = -1;
	if (!text)
		return -1;
	*total = meminfo_field(text, "MemTotal");
	*avail = meminfo_field(text, "MemAvailable");
	return *total < 0 && *avail < 0 ? -1 : 0;
}

double memgate_parse_psi(const char *text)
{
	for (const char *p = text; p && *p;) {
		if (!strncmp(p, "full ", 5)) {
			const char *a = strstr(p, "avg10=");
			const char *nl = strchr(p, '\n');
			if (!a || (nl && a > nl))
				return -1;
			char *end;
			errno = 0;
			double v = strtod(a + 6, &end);
			if (errno || end == a + 6 || v < 0 || v > 100 || v != v)
				return -1;
			return v;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

long long memgate_parse_bytes(const char *text)
{
	if (!text)
		return -1;
	while (*text == ' ' || *text == '\t')
		text++;
	if (!strncmp(text, "max", 3) && (!text[3] || text[3] == '\n'))
		return 0;
	if (!isdigit((unsigned char)*text))
		return -1;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno || (*end && *end != '\n'))
		return -1;
	if (v >= (1ULL << 50))
		return 0;
	return (long long)v;
}

void memgate_parse_cgroup(const char *text, char *v2, size_t v2size, char *v1, size_t v1size)
{
	if (v2size)
		*v2 = '\0';
	if (v1size)
		*v1 = '\0';
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		const char *c1 = memchr(line, ':', len);
		const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
		if (c2) {
			size_t plen = len - (size_t)(c2 + 1 - line);
			size_t clen = (size_t)(c2 - c1 - 1);
			char *dst = NULL;
			size_t size = 0;
			if (!clen && c1 - line == 1 && line[0] == '0') {
				dst = v2;
				size = v2size;
			} else {
				/* a controller list holding "memory" */
				for (const char *c = c1 + 1; c < c2;) {
					const char *comma = memchr(c, ',', (size_t)(c2 - c));
					size_t n = comma ? (size_t)(comma - c) : (size_t)(c2 - c);
					if (n == 6 && !memcmp(c, "memory", 6)) {
						dst = v1;
						size = v1size;
					}
					c = comma ? comma + 1 : c2;
				}
			}
			if (dst && size && plen < size && *(c2 + 1) == '/') {
				memcpy(dst, c2 + 1, plen);
				dst[plen] = '\0';
			}
		}
		line = nl ? nl + 1 : NULL;
	}
}

long long memgate_parse_vmstat(const char *text)
{
	for (const char *p = text; p && *p;) {
		if (!strncmp(p, "oom_kill ", 9)) {
			errno = 0;
			char *end;
			long long v = strtoll(p + 9, &end, 10);
			if (errno || end == p + 9 || v < 0)
				return -1;
			return v;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

/* A peak in KiB at *q (digits, 1 to 2^40), *q moved past it; -1 when there is none. */
static long long peak_kb(const char **q)
{
	if (!isdigit((unsigned char)**q))
		return -1;
	errno = 0;
	char *end;
	long long v = strtoll(*q, &end, 10);
	if (errno || v <= 0 || v > (1LL << 40))
		return -1;
	*q = end;
	return v;
}

int memgate_parse_record(const char *text, long long *kb)
{
	if (!text || strncmp(text, "nvshim-peak 1 ", 14))
		return -1;
	const char *q = text + 14;
	long long v = peak_kb(&q);
	if (v < 0 || (*q && *q != '\n'))
		return -1;
	*kb = v;
	return 0;
}

int memgate_parse_peaks(const char *text, long long *kb, uint64_t *source, int max)
{
	if (!text || max <= 0)
		return -1;
	/* version 1: peaks alone (each its own source); 2: KB/SOURCE, the source 16 hex digits */
	int version = !strncmp(text, "nvshim-peaks 1", 14) ? 1 : !strncmp(text, "nvshim-peaks 2", 14) ? 2 : 0;
	if (!version)
		return -1;
	const char *q = text + 14;
	int n = 0;
	while (*q == ' ') {
		q++;
		long long v = peak_kb(&q);
		if (v < 0)
			return -1;
		uint64_t src = 0;
		if (version == 2) {
			if (*q != '/')
				return -1;
			q++;
			int digits = 0;
			for (; digits < 16 && isxdigit((unsigned char)*q); digits++, q++)
				src = src << 4 | (uint64_t)(isdigit((unsigned char)*q) ? *q - '0' : (*q | 0x20) - 'a' + 10);
			if (digits != 16)
				return -1;
		}
		if (n < max) {
			kb[n] = v;
			if (source)
				source[n] = src;
			n++;
		}
	}
	return (*q && *q != '\n') || !n ? -1 : n;
}

int memgate_parse_spec(const char *text, struct memgate *g)
{
	if (!text || !isdigit((unsigned char)*text))
		return -1;
	errno = 0;
	char *end;
	long long b = strtoll(text, &end, 10);
	if (errno || b < 0 || *end != ':' || end[1] != '/')
		return -1;
	const char *d = end + 1, *c = strchr(d, ':');
	if (!c || c[1] != '/' || (size_t)(c - d) >= sizeof(g->ledger) || strlen(c + 1) >= sizeof(g->learn) ||
	    strchr(c + 1, ':'))
		return -1;
	g->budget = b;
	memcpy(g->ledger, d, (size_t)(c - d));
	g->ledger[c - d] = '\0';
	strcpy(g->learn, c + 1);
	return 0;
}

int memgate_parse_journal_line(const char *line, struct memgate_entry *e)
{
	char kind[32], flags[32];
	long long v[6];
	int used = 0;
	if (!line || strlen(line) > 400)
		return -1;
	if (sscanf(line, "%lld\t%lld\t%31[^\t]\t%lld\t%lld\t%lld\t%lld\t%31[^\t\n]%n", &v[0], &v[1], kind, &v[2],
		   &v[3], &v[4], &v[5], flags, &used) != 8)
		return -1;
	e->pid = 0;
	if (line[used] == '\t') {
		char *end;
		errno = 0;
		long long pid = strtoll(line + used + 1, &end, 10);
		if (errno || end == line + used + 1 || pid < 0 || (*end && *end != '\n'))
			return -1;
		e->pid = pid;
	} else if (line[used] && line[used] != '\n') {
		return -1;
	}
	/* times in ms up to 2^50, sizes in KiB up to 2^40 (a petabyte): sums of a journal's lines
	 * cannot overflow */
	for (int i = 0; i < 6; i++)
		if (v[i] < 0 || v[i] > (i == 2 || i == 3 || i == 5 ? (1LL << 40) : (1LL << 50)))
			return -1;
	if (v[1] < v[0] || strlen(kind) >= sizeof(e->kind) || strlen(flags) >= sizeof(e->flags))
		return -1;
	e->start_ms = v[0];
	e->end_ms = v[1];
	e->peak_kb = v[2];
	e->est_kb = v[3];
	e->waited_ms = v[4];
	e->budget_kb = v[5];
	strcpy(e->kind, kind);
	strcpy(e->flags, flags);
	return 0;
}

/* ---- the machine ---- */

/* A small file's text into buf (NUL-terminated); 0, or -1. */
static int read_into(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t len = 0;
	for (;;) {
		ssize_t n = read(fd, buf + len, size - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len + 1 >= size)
			break;
	}
	close(fd);
	buf[len] = '\0';
	return len ? 0 : -1;
}

static long long cg_number(const char *dir, const char *file)
{
	char path[4200], buf[64];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return read_into(path, buf, sizeof(buf)) ? -1 : memgate_parse_bytes(buf);
}

/* The tightest limit (and what is used under it) of a cgroup and its parents below base. */
static void cg_limit(const char *base, const char *path, const char *limit_file, const char *usage_file,
		     long long *limit, long long *room)
{
	char rel[4096];
	snprintf(rel, sizeof(rel), "%s", path);
	for (;;) {
		char dir[4200];
		snprintf(dir, sizeof(dir), "%s%s", base, rel);
		long long l = cg_number(dir, limit_file);
		if (l > 0) {
			long long u = cg_number(dir, usage_file);
			long long r = l - (u > 0 ? u : 0);
			if (r < 0)
				r = 0;
			if (*limit < 0 || l < *limit)
				*limit = l;
			if (*room < 0 || r < *room)
				*room = r;
		}
		char *slash = strrchr(rel, '/');
		if (!slash || !rel[0])
			break;
		*slash = '\0';
	}
}

void memgate_machine(long long *total, long long *avail)
{
	char buf[8192];
	*total = *avail = -1;
	if (!read_into("/proc/meminfo", buf, sizeof(buf)))
		memgate_parse_meminfo(buf, total, avail);
	char v2[2048], v1[2048];
	v2[0] = v1[0] = '\0';
	if (!read_into("/proc/self/cgroup", buf, sizeof(buf)))
		memgate_parse_cgroup(buf, v2, sizeof(v2), v1, sizeof(v1));
	long long limit = -1, room = -1;
	if (v2[0])
		cg_limit("/sys/fs/cgroup", strcmp(v2, "/") ? v2 : "", "memory.max", "memory.current", &limit, &room);
	if (limit < 0) {
		/* v1: the memory controller's own path, or its root (a container's namespace) */
		cg_limit("/sys/fs/cgroup/memory", strcmp(v1, "/") ? v1 : "", "memory.limit_in_bytes",
			 "memory.usage_in_bytes", &limit, &room);
		if (limit < 0 && v1[0])
			cg_limit("/sys/fs/cgroup/memory", "", "memory.limit_in_bytes", "memory.usage_in_bytes", &limit,
				 &room);
	}
	if (limit > 0 && (*total < 0 || limit < *total))
		*total = limit;
	if (room >= 0 && (*avail < 0 || room < *avail))
		*avail = room;
}

double memgate_pressure(void)
{
	char buf[512];
	return read_into("/proc/pressure/memory", buf, sizeof(buf)) ? -1 : memgate_parse_psi(buf);
}

long long memgate_oom_kills(void)
{
	static char buf[16384];
	return read_into("/proc/vmstat", buf, sizeof(buf)) ? -1 : memgate_parse_vmstat(buf);
}

long long memgate_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the ledger ---- */

long long memgate_parse_statm(const char *text)
{
	long long size, resident;
	if (!text || sscanf(text, "%lld %lld", &size, &resident) != 2 || resident < 0)
		return -1;
	return resident;
}

/* A process's resident bytes, or 0. */
static long long resident_of(long pid)
{
	char path[64], buf[128];
	snprintf(path, sizeof(path), "/proc/%ld/statm", pid);
	if (read_into(path, buf, sizeof(buf)))
		return 0;
	long long pages = memgate_parse_statm(buf);
	return pages > 0 ? pages * sysconf(_SC_PAGESIZE) : 0;
}

/* The resident bytes of a stage's process and its children (the shell, the stage program, what
 * that one starts), two levels through /proc/PID/task/PID/children. */
static long long tree_resident(long pid, int depth)
{
	long long sum = resident_of(pid);
	char path[96], buf[1024];
	snprintf(path, sizeof(path), "/proc/%ld/task/%ld/children", pid, pid);
	if (depth <= 0 || read_into(path, buf, sizeof(buf)))
		return sum;
	for (char *p = buf, *end; *p; p = end) {
		long child = strtol(p, &end, 10);
		if (end == p)
			break;
		if (child > 0)
			sum += tree_resident(child, depth - 1);
	}
	return sum;
}

/* Sums what the stages running take: each one's expected peak, or its resident memory now when
 * larger; removes stale entries. */
static long long ledger_sum(const char *dir, unsigned *running)
{
	DIR *d = opendir(dir);
	long long sum = 0;
	*running = 0;
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "run.", 4))
			continue;
		char path[4400], buf[64];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		if (!flock(fd, LOCK_EX | LOCK_NB)) {
			/* nobody holds it: its stage is gone */
			unlink(path);
			close(fd);
			continue;
		}
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
		close(fd);
		buf[n > 0 ? n : 0] = '\0';
		long long v = memgate_parse_bytes(buf);
		char *nl = strchr(buf, '\n');
		/* (a pid line not yet whole counts for nothing) */
		long pid = nl && strchr(nl + 1, '\n') ? strtol(nl + 1, NULL, 10) : 0;
		if (pid > 0) {
			long long now = tree_resident(pid, 2);
			if (now > v)
				v = now;
		}
		sum += v > 0 ? v : 0;
		(*running)++;
	}
	closedir(d);
	return sum;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

void memgate_admit(const struct memgate *g, long long est, unsigned flags, struct memgate_ticket *t)
{
	int alone = (flags & MEMGATE_ALONE) != 0;
	memset(t, 0, sizeof(*t));
	t->fd = -1;
	t->est = est; /* (a ticket that fails open keeps it too) */
	char lockpath[4200];
	snprintf(lockpath, sizeof(lockpath), "%s/lock", g->ledger);
	mkdir(g->ledger, 0700);
	long long start = memgate_now_ms();
	unsigned pause = 2;
	static unsigned serial;
	for (;;) {
		int lfd = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (lfd < 0 || flock(lfd, LOCK_EX)) {
			if (lfd >= 0)
				close(lfd);
			return; /* fail open */
		}
		unsigned running;
		long long sum = ledger_sum(g->ledger, &running);
		long long budget = g->budget;
		char bpath[4200], buf[64];
		snprintf(bpath, sizeof(bpath), "%s/budget", g->ledger);
		if (budget <= 0) {
			/* auto: the memory available when the ledger was last empty (the build's start) */
			long long stored = read_into(bpath, buf, sizeof(buf)) ? -1 : memgate_parse_bytes(buf);
			if (!running || stored <= 0) {
				long long total, avail;
				memgate_machine(&total, &avail);
				budget = memgate_default_budget(avail);
				int bfd = open(bpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
				if (bfd >= 0) {
					int len = snprintf(buf, sizeof(buf), "%lld\n", budget);
					if (write(bfd, buf, (size_t)len) < 0)
						budget = budget + 0;
					close(bfd);
				}
			} else {
				budget = stored;
			}
		}
		if (flags & MEMGATE_COLD && budget > 0 && est > budget / 2)
			est = budget / 2;
		int fits;
		if (!running) {
			fits = 1;
		} else if (alone) {
			fits = 0;
		} else {
			fits = budget <= 0 || sum + est <= budget;
			if (fits) {
				/* the live brake */
				long long total, avail;
				memgate_machine(&total, &avail);
				double psi = memgate_pressure();
				if ((avail >= 0 && avail < est / 2 + 128 * MIB) || psi > MEMGATE_PSI_BRAKE)
					fits = 0;
			}
		}
		if (fits) {
			t->budget = budget;
			t->est = est;
			t->over = budget > 0 && est > budget && !running ? 1 : 0;
			unsigned n = __atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED);
			snprintf(t->path, sizeof(t->path), "%s/run.%ld.%u", g->ledger, (long)getpid(), n);
			int fd = open(t->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
			if (fd >= 0 && !flock(fd, LOCK_EX)) {
				int len = snprintf(buf, sizeof(buf), "%lld\n", est);
				if (write(fd, buf, (size_t)len) != len) {
					/* an entry without its number counts as nothing: still the stage runs */
				}
				t->fd = fd;
			} else if (fd >= 0) {
				close(fd);
				unlink(t->path);
			}
			close(lfd);
			long long w = memgate_now_ms() - start;
			t->waited_ms = w > 0 ? (unsigned)w : 0;
			return;
		}
		close(lfd);
		sleep_ms(pause);
		if (pause < 64)
			pause *= 2;
	}
}

void memgate_running(struct memgate_ticket *t, long pid)
{
	if (t->fd < 0 || pid <= 0)
		return;
	char buf[64];
	int len = snprintf(buf, sizeof(buf), "%lld\n%ld\n", t->est, pid);
	if (pwrite(t->fd, buf, (size_t)len, 0) != len) {
		/* the entry keeps its estimate alone */
	}
}

void memgate_leave(struct memgate_ticket *t)
{
	if (t->fd < 0)
		return;
	int e = errno;
	unlink(t->path);
	close(t->fd);
	t->fd = -1;
	errno = e;
}

/* ---- learning ---- */

/* The bytes of a file into h (words at a time: a preprocessed source is megabytes); 0, or -1. */
static int hash_file(const char *path, uint64_t *h)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	if (fd < 0)
		return -1;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return -1;
	}
	static __thread unsigned char buf[65536];
	uint64_t x = *h;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		size_t i = 0;
		for (; i + 8 <= (size_t)n; i += 8) {
			uint64_t w;
			memcpy(&w, buf + i, 8);
			x = (x ^ w) * HASH_PRIME;
			x ^= x >> 29;
		}
		x = hash_bytes(x, buf + i, (size_t)n - i);
	}
	close(fd);
	*h = x;
	return 0;
}

/* An input's name without nvcc's temporary prefix ("/tmp/tmpxft_000050e9_00000000-6_k.ptx":
 * "k.ptx"). */
static const char *stable_name(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (!strncmp(base, "tmpxft_", 7)) {
		const char *dash = strchr(base, '-');
		const char *us = dash ? strchr(dash, '_') : NULL;
		if (us)
			return us + 1;
	}
	return path;
}

/* h with an input's stable name, less the target nvcc writes into the names of one line's
 * intermediate files for each of its targets ("k.compute_80.cpp1.ii", "k.sm_90a.cubin": "k.",
 * ".cpp1.ii"), so that a source's stages for each target name one source. */
static uint64_t hash_source_name(uint64_t h, const char *name)
{
	const char *p = name, *dot;
	while ((dot = strchr(p, '.'))) {
		h = hash_bytes(h, p, (size_t)(dot - p) + 1);
		p = dot + 1;
		size_t n = !strncmp(p, "compute_", 8) ? 8 : !strncmp(p, "sm_", 3) ? 3 : 0;
		const char *q = p + n;
		if (!n || !isdigit((unsigned char)*q))
			continue;
		while (isdigit((unsigned char)*q))
			q++;
		q += *q == 'a' || *q == 'f';
		if (!*q || *q == '.')
			p = q; /* the target's part: left out */
	}
	return hash_bytes(h, p, strlen(p) + 1);
}

uint64_t memgate_stage_key(const char *command, enum memgate_kind kind, uint64_t *by_name, uint64_t *by_source)
{
	if (by_name)
		*by_name = 0;
	if (by_source)
		*by_source = 0;
	if (!command)
		return 0;
	const uint64_t of_kind = hash_str(HASH_INIT, memgate_kind_name(kind));
	uint64_t h = of_kind, name = of_kind, source = of_kind, src = 0;
	int inputs = 0, after_o = 0, names = 0, orig = 0;
	for (const char *p = command; *p;) {
		p += strspn(p, " \t");
		if (!*p)
			break;
		char tok[4096];
		size_t n = 0;
		int quoted = *p == '"';
		if (quoted) {
			p++;
			while (*p && *p != '"') {
				if (n + 1 < sizeof(tok))
					tok[n++] = *p;
				p++;
			}
			if (*p)
				p++;
		} else {
			while (*p && *p != ' ' && *p != '\t') {
				if (n + 1 < sizeof(tok))
					tok[n++] = *p;
				p++;
			}
		}
		tok[n] = '\0';
		if (orig) {
			src = hash_bytes(HASH_INIT, tok, n + 1);
			orig = 0;
			continue;
		}
		orig = !strcmp(tok, "--orig_src_path_name");
		if (!strncmp(tok, "-arch", 5) || !strncmp(tok, "--gpu-name", 10) || !strncmp(tok, "compute_", 8) ||
		    !strncmp(tok, "sm_", 3) || !strncmp(tok, "-O", 2) || !strncmp(tok, "-G", 2)) {
			h = hash_bytes(h, tok, n + 1);
			name = hash_bytes(name, tok, n + 1);
		}
		int is_o = !strcmp(tok, "-o") || !strcmp(tok, "--output-file") || !strcmp(tok, "-o=");
		if (!after_o && n && !is_o && tok[0] != '-') {
			const char *dot = strrchr(tok, '.');
			if (dot && (!strcmp(dot, ".ii") || !strcmp(dot, ".ptx") || !strcmp(dot, ".cpp") ||
				    !strcmp(dot, ".cu") || !strcmp(dot, ".cubin") || !strcmp(dot, ".c") ||
				    !strcmp(dot, ".cc") || !strcmp(dot, ".cxx")) &&
			    !hash_file(tok, &h)) {
				inputs++;
				const char *stable = stable_name(tok);
				name = hash_bytes(name, stable, strlen(stable) + 1);
				source = hash_source_name(source, stable);
				names++;
			}
		}
		after_o = is_o;
	}
	if (src || names) {
		if (src) {
			name = hash_bytes(name, &src, sizeof(src));
			/* the source itself, whatever its intermediate files are called */
			source = hash_bytes(of_kind, &src, sizeof(src));
		} else {
			char cwd[4096];
			if (getcwd(cwd, sizeof(cwd))) {
				name = hash_str(name, cwd);
				source = hash_str(source, cwd);
			}
		}
		if (by_name)
			*by_name = (name ? name : 1) ^ 0x6e616d65ULL; /* apart from content keys */
		if (by_source)
			*by_source = source ? source : 1;
	}
	return inputs ? (h ? h : 1) : 0;
}

static void learn_path(const struct memgate *g, enum memgate_kind kind, uint64_t key, char *path, size_t size)
{
	snprintf(path, size, "%s/%s-%016llx", g->learn, memgate_kind_name(kind), (unsigned long long)key);
}

long long memgate_recall(const struct memgate *g, enum memgate_kind kind, uint64_t key)
{
	if (!key)
		return -1;
	char path[4200], buf[64];
	long long kb;
	learn_path(g, kind, key, path, sizeof(path));
	if (read_into(path, buf, sizeof(buf)) || memgate_parse_record(buf, &kb))
		return -1;
	return kb * 1024;
}

/* Writes text to path under a temporary name, renamed into place. */
static void write_file(const char *path, const char *text)
{
	char tmp[4300];
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return;
	size_t len = strlen(text);
	int ok = write(fd, text, len) == (ssize_t)len;
	close(fd);
	if (!ok || rename(tmp, path))
		unlink(tmp);
}

void memgate_learn(const struct memgate *g, enum memgate_kind kind, uint64_t key, long long peak)
{
	if (!key || peak <= 0)
		return;
	char path[4200], text[64];
	mkdir(g->learn, 0700);
	learn_path(g, kind, key, path, sizeof(path));
	snprintf(text, sizeof(text), "nvshim-peak 1 %lld\n", (peak + 1023) / 1024);
	write_file(path, text);
}

/* The peaks of a kind seen in the last hour, oldest first, with their sources: their count
 * (0 none). */
static int seen_read(const struct memgate *g, enum memgate_kind kind, long long *kb, uint64_t *source, char *path,
		     size_t size)
{
	char buf[MEMGATE_SEEN_MAX * 40 + 64];
	snprintf(path, size, "%s/seen.%s", g->ledger, memgate_kind_name(kind));
	struct stat sb;
	if (stat(path, &sb) || sb.st_mtime + 3600 < time(NULL) || read_into(path, buf, sizeof(buf)))
		return 0;
	int n = memgate_parse_peaks(buf, kb, source, MEMGATE_SEEN_MAX);
	return n > 0 ? n : 0;
}

static int ll_cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

long long memgate_peaks_estimate(const long long *kb, const uint64_t *source, int n)
{
	if (n <= 0)
		return -1;
	if (n > MEMGATE_SEEN_MAX)
		n = MEMGATE_SEEN_MAX;
	/* one figure per source, its largest (a source's targets peak alike); a source of 0 is
	 * one of its own */
	long long v[MEMGATE_SEEN_MAX];
	uint64_t of[MEMGATE_SEEN_MAX];
	int d = 0;
	for (int i = 0; i < n; i++) {
		uint64_t s = source ? source[i] : 0;
		int j = 0;
		while (s && j < d && of[j] != s)
			j++;
		if (s && j < d) {
			if (kb[i] > v[j])
				v[j] = kb[i];
			continue;
		}
		of[d] = s;
		v[d++] = kb[i];
	}
	if (d < MEMGATE_SEEN_SOURCES)
		return -1;
	qsort(v, (size_t)d, sizeof(v[0]), ll_cmp);
	/* the one a fifth of them exceed */
	return v[(d * 4 + 4) / 5 - 1] * 1024;
}

long long memgate_similar(const struct memgate *g, enum memgate_kind kind)
{
	long long kb[MEMGATE_SEEN_MAX];
	uint64_t source[MEMGATE_SEEN_MAX];
	char path[4200];
	return memgate_peaks_estimate(kb, source, seen_read(g, kind, kb, source, path, sizeof(path)));
}

void memgate_seen(const struct memgate *g, enum memgate_kind kind, long long peak, uint64_t source)
{
	if (peak <= 0)
		return;
	long long kb[MEMGATE_SEEN_MAX];
	uint64_t src[MEMGATE_SEEN_MAX];
	char path[4200], text[MEMGATE_SEEN_MAX * 40 + 64];
	int n = seen_read(g, kind, kb, src, path, sizeof(path));
	if (n == MEMGATE_SEEN_MAX) {
		memmove(kb, kb + 1, (size_t)(n - 1) * sizeof(kb[0]));
		memmove(src, src + 1, (size_t)(n - 1) * sizeof(src[0]));
		n--;
	}
	kb[n] = (peak + 1023) / 1024;
	src[n++] = source;
	size_t len = (size_t)snprintf(text, sizeof(text), "nvshim-peaks 2");
	for (int i = 0; i < n && len < sizeof(text); i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, " %lld/%016llx", kb[i],
					(unsigned long long)src[i]);
	if (len + 1 < sizeof(text)) {
		text[len] = '\n';
		text[len + 1] = '\0';
		write_file(path, text);
	}
}

void memgate_journal(const struct memgate *g, const struct memgate_entry *e)
{
	char path[4200], line[512];
	snprintf(path, sizeof(path), "%s/journal", g->ledger);
	int len = snprintf(line, sizeof(line), "%lld\t%lld\t%s\t%lld\t%lld\t%lld\t%lld\t%s\t%lld\n", e->start_ms,
			   e->end_ms, e->kind, e->peak_kb, e->est_kb, e->waited_ms, e->budget_kb,
			   e->flags[0] ? e->flags : "-", e->pid);
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return;
	struct stat sb;
	if (!fstat(fd, &sb) && sb.st_size > MEMGATE_JOURNAL_MAX && !flock(fd, LOCK_EX | LOCK_NB)) {
		/* cut to nothing: the record is for the builds of the last while */
		if (ftruncate(fd, 0)) {
		}
		flock(fd, LOCK_UN);
	}
	if (write(fd, line, (size_t)len) < 0) {
	}
	close(fd);
}

/* ---- the summary ---- */

struct span {
	long long start, end, kb;
};

static int span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

void memgate_summarize(const char *journal, long long from_ms, long long to_ms, struct memgate_summary *sum)
{
	memset(sum, 0, sizeof(*sum));
	size_t n = 0, cap = 0;
	struct span *sp = NULL;
	for (const char *p = journal; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char line[512];
		struct memgate_entry e;
		if (len < sizeof(line)) {
			memcpy(line, p, len);
			line[len] = '\0';
			if (!memgate_parse_journal_line(line, &e) && e.start_ms >= from_ms && e.start_ms < to_ms) {
				sum->stages++;
				if (e.peak_kb > sum->largest_kb) {
					sum->largest_kb = e.peak_kb;
					snprintf(sum->largest_kind, sizeof(sum->largest_kind), "%s", e.kind);
				}
				sum->budget_kb = e.budget_kb;
				if (e.waited_ms >= MEMGATE_WAIT_MS) {
					sum->waits++;
					sum->waited_ms += e.waited_ms;
				}
				sum->reruns += strchr(e.flags, 'r') != NULL;
				sum->kills += strchr(e.flags, 'k') != NULL;
				sum->over += strchr(e.flags, 'o') != NULL;
				if (n == cap) {
					size_t ncap = cap ? cap * 2 : 64;
					struct span *m = realloc(sp, ncap * sizeof(*sp));
					if (!m)
						break;
					sp = m;
					cap = ncap;
				}
				sp[n++] = (struct span){ e.start_ms, e.end_ms, e.peak_kb };
			}
		}
		p = nl ? nl + 1 : NULL;
	}
	/* the most at once: at each start, the peaks of the stages running then */
	if (n)
		qsort(sp, n, sizeof(*sp), span_cmp);
	for (size_t i = 0; i < n; i++) {
		long long at = sp[i].start, total = 0;
		for (size_t j = 0; j < n && sp[j].start <= at; j++)
			if (sp[j].end > at || j == i)
				total += sp[j].kb;
		if (total > sum->peak_sum_kb)
			sum->peak_sum_kb = total;
	}
	free(sp);
}
