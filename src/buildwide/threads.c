#include "buildwide/threads.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <libiberty.h>

#include "base/cache.h"
#include "buildwide/memgate.h"
#include "buildwide/slots.h"

/* ---- the decision ---- */

unsigned threads_gate_slots(const struct threads_input *in)
{
	const struct threads_machine *m = &in->m;
	unsigned cpus = m->cpus ? m->cpus : 1;
	/* the stages nvshim's compiles run hold the slots: the other compilers are someone else's */
	unsigned others = m->compilers > m->held ? m->compilers - m->held : 0;
	unsigned n = cpus > others ? cpus - others : 1;
	if (m->mem_avail_mb >= 0 && in->pass_mb > 0) {
		/* the stages running now already have their memory */
		long long by_mem = m->mem_avail_mb / in->pass_mb + m->held;
		if (by_mem < (long long)n)
			n = by_mem > 1 ? (unsigned)by_mem : 1;
	}
	return n > SLOTS_MAX ? SLOTS_MAX : n;
}

unsigned threads_decide(const struct threads_input *in, char **why)
{
	const struct threads_machine *m = &in->m;
	unsigned cpus = m->cpus ? m->cpus : 1;
	unsigned busy = m->compilers > m->held ? m->compilers : m->held;
	unsigned free_cpus = cpus > busy ? cpus - busy : 0;
	unsigned others = m->compilers > m->held ? m->compilers - m->held : 0;
	unsigned slots = in->gate ? threads_gate_slots(in) : 0;
	/* With the gate, the stages take turns in the slots: K is what this compile could use if
	 * the others ended, the slots decide what runs. */
	unsigned room = in->gate ? slots : free_cpus;
	unsigned want = in->units < room ? in->units : room;
	char mem[64] = "";
	if (m->mem_avail_mb >= 0 && in->pass_mb > 0) {
		long long by_mem = m->mem_avail_mb / in->pass_mb;
		if (!in->gate && by_mem < (long long)want)
			want = (unsigned)(by_mem > 0 ? by_mem : 0);
		snprintf(mem, sizeof(mem), ", memory for %lld pass%s", by_mem, by_mem == 1 ? "" : "es");
	}
	char cap[48] = "";
	if (in->setting == THREADS_OFF) {
		want = 1;
		snprintf(cap, sizeof(cap), ", threads = off");
	} else if (in->setting && want > in->setting) {
		want = (unsigned)in->setting;
		snprintf(cap, sizeof(cap), ", threads = %zu", in->setting);
	}
	if (want < 1)
		want = 1;
	if (why && in->gate)
		*why = xasprintf("%u target%s, %u CPU%s, %u other compiler%s running, %u slot%s held by nvshim's "
				 "stages%s%s",
				 in->units, in->units == 1 ? "" : "s", cpus, cpus == 1 ? "" : "s", others,
				 others == 1 ? "" : "s", m->held, m->held == 1 ? "" : "s", mem, cap);
	else if (why)
		*why = xasprintf("%u target%s, %u of %u CPU%s free (%u compiler%s running, %u slot%s held)%s%s",
				 in->units, in->units == 1 ? "" : "s", free_cpus, cpus, cpus == 1 ? "" : "s",
				 m->compilers, m->compilers == 1 ? "" : "s", m->held, m->held == 1 ? "" : "s",
				 mem, cap);
	return want;
}

unsigned threads_settle(unsigned want, unsigned extra_slots, enum threads_js js, unsigned tokens)
{
	unsigned k = want ? want : 1;
	if (k > extra_slots + 1)
		k = extra_slots + 1;
	if (js == THREADS_JS_BROKEN)
		return 1;
	if ((js == THREADS_JS_PIPE || js == THREADS_JS_FIFO) && k > tokens + 1)
		k = tokens + 1;
	return k;
}

/* ---- parsers ---- */

/* A decimal number at *p (digits only); advances *p. Returns -1 when there are none or it
 * overflows. */
static long long number(const char **p)
{
	long long n = 0;
	if (!isdigit((unsigned char)**p))
		return -1;
	while (isdigit((unsigned char)**p)) {
		if (n > (LLONG_MAX - 9) / 10)
			return -1;
		n = n * 10 + (**p - '0');
		(*p)++;
	}
	return n;
}

static const char *skip_blank(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static int at_end(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return !*p;
}

double threads_parse_cpu_max(const char *text)
{
	const char *p = skip_blank(text);
	long long quota;
	if (!strncmp(p, "max", 3)) {
		p += 3;
		quota = 0;
	} else if ((quota = number(&p)) <= 0) {
		return -1;
	}
	if (*p != ' ' && *p != '\t')
		return at_end(p) && !quota ? 0 : -1;
	p = skip_blank(p);
	long long period = number(&p);
	if (period <= 0 || !at_end(p))
		return -1;
	return quota ? (double)quota / (double)period : 0;
}

double threads_parse_cfs(const char *quota, const char *period)
{
	const char *q = skip_blank(quota);
	if (!strncmp(q, "-1", 2) && at_end(q + 2))
		return 0;
	long long nq = number(&q);
	if (nq <= 0 || !at_end(q))
		return -1;
	const char *p = skip_blank(period);
	long long np = number(&p);
	if (np <= 0 || !at_end(p))
		return -1;
	return (double)nq / (double)np;
}

long long threads_parse_meminfo(const char *text)
{
	const char *p = text;
	while (p && *p) {
		if (!strncmp(p, "MemAvailable:", 13)) {
			const char *q = skip_blank(p + 13);
			long long kb = number(&q);
			return kb < 0 ? -1 : kb / 1024;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

long long threads_parse_bytes(const char *text)
{
	const char *p = skip_blank(text);
	if (!strncmp(p, "max", 3) && at_end(p + 3))
		return 0;
	long long n = number(&p);
	return n >= 0 && at_end(p) ? n : -1;
}

unsigned threads_parse_cpulist(const char *text)
{
	const char *p = skip_blank(text);
	unsigned long long count = 0;
	while (*p && !at_end(p)) {
		long long a = number(&p), b = a;
		if (a < 0)
			return 0;
		if (*p == '-') {
			p++;
			b = number(&p);
			if (b < a)
				return 0;
		}
		count += (unsigned long long)(b - a) + 1;
		if (count > 1u << 20)
			return 0;
		if (*p == ',')
			p++;
		else if (!at_end(p))
			return 0;
	}
	return (unsigned)count;
}

void threads_jobserver_release(struct threads_jobserver *js)
{
	free(js->fifo);
	memset(js, 0, sizeof(*js));
	js->rfd = js->wfd = -1;
}

/* "R,W" with two non-negative fds. */
static int parse_fds(const char *v, size_t len, int *r, int *w)
{
	char *s = xstrndup(v, len);
	const char *p = s;
	long long a = number(&p), b = -1;
	if (a >= 0 && *p == ',') {
		p++;
		b = number(&p);
	}
	int ok = a >= 0 && b >= 0 && !*p && a <= INT_MAX && b <= INT_MAX;
	free(s);
	if (ok) {
		*r = (int)a;
		*w = (int)b;
	}
	return ok ? 0 : -1;
}

void threads_parse_makeflags(const char *text, struct threads_jobserver *js)
{
	free(js->fifo);
	memset(js, 0, sizeof(*js));
	js->rfd = js->wfd = -1;
	const char *p = text;
	int first = 1;
	while (p && *p) {
		while (*p == ' ' || *p == '\t')
			p++;
		size_t len = 0;
		/* make escapes blanks in words with a backslash */
		while (p[len] && p[len] != ' ' && p[len] != '\t')
			len += p[len] == '\\' && p[len + 1] ? 2 : 1;
		if (!len)
			break;
		/* The first word holds the single-letter flags ("ks", "-j4", " -j"): -j with no
		 * number or N > 1 is a parallel make. */
		if (!strncmp(p, "-j", 2) || (first && p[0] != '-' && memchr(p, 'j', len))) {
			const char *j = memchr(p, 'j', len);
			const char *q = j + 1;
			long long n = q < p + len ? number(&q) : -1;
			if (n < 0 || n > 1)
				js->parallel = 1;
		}
		static const char *const keys[] = { "--jobserver-auth=", "--jobserver-fds=" };
		for (size_t k = 0; k < 2; k++) {
			size_t kl = strlen(keys[k]);
			if (len < kl || strncmp(p, keys[k], kl))
				continue;
			const char *v = p + kl;
			size_t vl = len - kl;
			free(js->fifo);
			js->fifo = NULL;
			js->parallel = 1;
			if (vl > 5 && !strncmp(v, "fifo:", 5)) {
				js->kind = THREADS_JS_FIFO;
				js->fifo = xstrndup(v + 5, vl - 5);
			} else if (!parse_fds(v, vl, &js->rfd, &js->wfd)) {
				js->kind = THREADS_JS_PIPE;
			} else {
				js->kind = THREADS_JS_BROKEN;
				js->rfd = js->wfd = -1;
			}
		}
		first = 0;
		p += len;
	}
}

int threads_is_compiler(const char *comm)
{
	static const char *const names[] = { "cicc", "ptxas", "cudafe++", "cc1plus", "cc1", "nvlink",
					     "fatbinary", "nvptxcompiler" };
	size_t len = strcspn(comm, "\n");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == len && !strncmp(comm, names[i], len))
			return 1;
	return 0;
}

int threads_stat_is_compiler(const char *text)
{
	/* "pid (comm) S ...": comm may hold any byte, so the last ')' ends it */
	const char *open = strchr(text, '(');
	const char *close = strrchr(text, ')');
	if (!open || !close || close < open || close - open - 1 > 64 || close[1] != ' ')
		return 0;
	char comm[72];
	memcpy(comm, open + 1, (size_t)(close - open - 1));
	comm[close - open - 1] = '\0';
	char state = close[2];
	if (!state || state == 'Z' || state == 'X' || state == 'T' || state == 't')
		return 0;
	return threads_is_compiler(comm);
}

int threads_parse_override(const char *text, struct threads_machine *m)
{
	struct threads_machine t = *m;
	const char *p = text;
	while (*p) {
		size_t len = strcspn(p, "=,");
		if (p[len] != '=')
			return -1;
		const char *v = p + len + 1;
		long long n = number(&v);
		if (n < 0 || n > INT_MAX || (*v && *v != ','))
			return -1;
		if (len == 4 && !strncmp(p, "cpus", 4) && n > 0) {
			t.cpus = t.affinity = (unsigned)n;
			t.quota = 0;
		} else if (len == 4 && !strncmp(p, "busy", 4)) {
			t.compilers = (unsigned)n;
		} else if (len == 6 && !strncmp(p, "mem_mb", 6)) {
			t.mem_avail_mb = n;
		} else {
			return -1;
		}
		p = *v ? v + 1 : v;
	}
	t.overridden = 1;
	*m = t;
	return 0;
}

/* ---- the machine ---- */

/* A small file's text (at most 64 KiB), or NULL. */
static char *read_small(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 4096, len = 0;
	char *buf = XNEWVEC(char, cap + 1);
	for (;;) {
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len == cap) {
			if (cap >= 65536)
				break;
			cap *= 2;
			buf = XRESIZEVEC(char, buf, cap + 1);
		}
	}
	close(fd);
	buf[len] = '\0';
	return buf;
}

/* The cgroup path of this process: the v2 line ("0::/path"), else the v1 line naming
 * `controller`; NULL when there is none. */
static char *cgroup_path(const char *controller)
{
	char *text = read_small("/proc/self/cgroup");
	char *found = NULL;
	for (char *line = text; line && *line && !found;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (c2) {
			*c2 = '\0';
			const char *ctls = c1 + 1;
			if (controller ? strstr(ctls, controller) != NULL : !*ctls)
				found = xstrdup(c2 + 1);
		}
		line = nl ? nl + 1 : NULL;
	}
	free(text);
	return found;
}

/* Reads base/<path>/file and its parents up to base, and calls fn on each text found. */
static void cgroup_walk(const char *base, const char *path, const char *file,
			void (*fn)(const char *dir, const char *text, void *arg), void *arg)
{
	char *rel = xstrdup(path ? path : "");
	for (;;) {
		char *dir = concat(base, rel, NULL);
		char *f = concat(dir, "/", file, NULL);
		char *text = read_small(f);
		if (text)
			fn(dir, text, arg);
		free(text);
		free(f);
		free(dir);
		char *slash = strrchr(rel, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
	free(rel);
}

static void on_cpu_max(const char *dir, const char *text, void *arg)
{
	(void)dir;
	double *q = arg, v = threads_parse_cpu_max(text);
	if (v > 0 && (*q == 0 || v < *q))
		*q = v;
}

struct mem_walk {
	long long avail_mb; /* -1: no limit seen */
};

static void on_memory_max(const char *dir, const char *text, void *arg)
{
	struct mem_walk *w = arg;
	long long limit = threads_parse_bytes(text);
	if (limit <= 0)
		return;
	char *cur = concat(dir, "/memory.current", NULL);
	char *t = read_small(cur);
	long long used = t ? threads_parse_bytes(t) : 0;
	free(t);
	free(cur);
	long long mb = (limit - (used > 0 ? used : 0)) / (1024 * 1024);
	if (mb < 0)
		mb = 0;
	if (w->avail_mb < 0 || mb < w->avail_mb)
		w->avail_mb = mb;
}

static unsigned count_compilers(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	unsigned n = 0;
	char path[64];
	pid_t self = getpid();
	while (d && (e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]) || atol(e->d_name) == (long)self)
			continue;
		snprintf(path, sizeof(path), "/proc/%.20s/stat", e->d_name);
		char *text = read_small(path);
		if (text && threads_stat_is_compiler(text))
			n++;
		free(text);
	}
	if (d)
		closedir(d);
	return n;
}

void threads_machine_read(struct threads_machine *m, const char *override)
{
	memset(m, 0, sizeof(*m));
	m->mem_avail_mb = -1;
	struct threads_machine o = *m;
	o.cpus = 0;
	o.compilers = UINT_MAX;
	o.mem_avail_mb = LLONG_MIN;
	if (override && *override && threads_parse_override(override, &o))
		o = (struct threads_machine){ 0, 0, 0, UINT_MAX, 0, LLONG_MIN, 0 };

	cpu_set_t set;
	if (!sched_getaffinity(0, sizeof(set), &set))
		m->affinity = (unsigned)CPU_COUNT(&set);
	else
		m->affinity = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	char *v2 = cgroup_path(NULL);
	if (v2) {
		cgroup_walk("/sys/fs/cgroup", v2, "cpu.max", on_cpu_max, &m->quota);
	} else {
		char *v1 = cgroup_path("cpu");
		const char *bases[] = { "/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu" };
		for (size_t i = 0; i < 2 && !m->quota; i++) {
			char *dir = concat(bases[i], v1 ? v1 : "", NULL);
			char *qf = concat(dir, "/cpu.cfs_quota_us", NULL), *pf = concat(dir, "/cpu.cfs_period_us", NULL);
			char *q = read_small(qf), *p = read_small(pf);
			double v = q && p ? threads_parse_cfs(q, p) : 0;
			if (v > 0)
				m->quota = v;
			free(q);
			free(p);
			free(qf);
			free(pf);
			free(dir);
		}
		free(v1);
	}
	m->cpus = m->affinity ? m->affinity : 1;
	if (m->quota > 0 && m->quota < m->cpus)
		m->cpus = m->quota >= 1 ? (unsigned)m->quota : 1;

	if (o.compilers != UINT_MAX)
		m->compilers = o.compilers;
	else
		m->compilers = count_compilers();

	char *mi = read_small("/proc/meminfo");
	m->mem_avail_mb = mi ? threads_parse_meminfo(mi) : -1;
	free(mi);
	struct mem_walk w = { -1 };
	if (v2) {
		cgroup_walk("/sys/fs/cgroup", v2, "memory.max", on_memory_max, &w);
	} else {
		char *v1 = cgroup_path("memory");
		char *dir = concat("/sys/fs/cgroup/memory", v1 ? v1 : "", NULL);
		char *lf = concat(dir, "/memory.limit_in_bytes", NULL), *uf = concat(dir, "/memory.usage_in_bytes", NULL);
		char *l = read_small(lf), *u = read_small(uf);
		long long limit = l ? threads_parse_bytes(l) : -1, used = u ? threads_parse_bytes(u) : 0;
		/* v1 says "no limit" with a huge number */
		if (limit > 0 && limit < (1LL << 50))
			w.avail_mb = (limit - (used > 0 ? used : 0)) / (1024 * 1024);
		free(l);
		free(u);
		free(lf);
		free(uf);
		free(dir);
		free(v1);
	}
	free(v2);
	if (w.avail_mb >= 0 && (m->mem_avail_mb < 0 || w.avail_mb < m->mem_avail_mb))
		m->mem_avail_mb = w.avail_mb;

	if (o.cpus) {
		m->cpus = m->affinity = o.cpus;
		m->quota = 0;
	}
	if (o.mem_avail_mb != LLONG_MIN)
		m->mem_avail_mb = o.mem_avail_mb;
	m->overridden = o.overridden;
}

/* ---- slots and tokens ---- */

/* What a signal handler needs to give the tokens back. */
static volatile sig_atomic_t token_count;
static int token_wfd = -1;
static char token_store[256];
static struct sigaction token_old[3];
static const int token_signals[3] = { SIGINT, SIGTERM, SIGHUP };

static void tokens_give_back(void)
{
	/* taken in one step: a signal arriving here finds nothing left to give twice */
	int n = (int)__atomic_exchange_n(&token_count, 0, __ATOMIC_SEQ_CST);
	int saved = errno;
	if (n > 0 && token_wfd >= 0) {
		ssize_t w;
		do
			w = write(token_wfd, token_store, (size_t)n);
		while (w < 0 && errno == EINTR);
	}
	errno = saved;
}

static void on_fatal_signal(int sig)
{
	int saved = errno;
	tokens_give_back();
	for (int i = 0; i < 3; i++)
		if (token_signals[i] == sig)
			sigaction(sig, &token_old[i], NULL);
	raise(sig);
	errno = saved;
}

static unsigned env_k;     /* --threads K in NVCC_APPEND_FLAGS (0: none) */
static int env_flags;      /* NVCC_APPEND_FLAGS is nvshim's (threads_env_add()) */
static char *env_saved; /* NVCC_APPEND_FLAGS before, NULL: it was unset */
static int env_gate;    /* LD_PRELOAD and SLOTS_GATE_ENV set by threads_env_gate() */
static char *env_preload_saved; /* LD_PRELOAD before, NULL: it was unset */

/* Puts a variable back as it was (saved NULL: it was unset) and forgets the saved value. */
static void env_restore(const char *name, char **saved)
{
	if (*saved)
		setenv(name, *saved, 1);
	else
		unsetenv(name);
	free(*saved);
	*saved = NULL;
}

/* NVCC_APPEND_FLAGS as the user had it (the gate, if set, stays). */
static void env_undo_k(void)
{
	if (env_flags) {
		env_restore("NVCC_APPEND_FLAGS", &env_saved);
		unsetenv(SLOTS_SPLIT_ENV);
		env_k = 0;
		env_flags = 0;
	}
}

void threads_env_add(unsigned k, unsigned split)
{
	env_undo_k();
	if (k < 2 && split < 2)
		return;
	const char *old = getenv("NVCC_APPEND_FLAGS");
	env_saved = old ? xstrdup(old) : NULL;
	char threads[32] = "", splits[40] = "";
	if (k > 1)
		snprintf(threads, sizeof(threads), "--threads %u", k);
	if (split > 1)
		snprintf(splits, sizeof(splits), "%s--split-compile %u", k > 1 ? " " : "", split);
	char *flags = xasprintf("%s%s%s%s", old ? old : "", old && *old ? " " : "", threads, splits);
	setenv("NVCC_APPEND_FLAGS", flags, 1);
	free(flags);
	if (split > 1)
		setenv(SLOTS_SPLIT_ENV, "1", 1);
	env_k = k > 1 ? k : 0;
	env_flags = 1;
}

int threads_env_gate(const char *lib, unsigned n, const char *dir)
{
	char spec[PATH_MAX + 16];
	if (env_gate || !threads_gate_possible(lib, dir) || getenv(SLOTS_GATE_ENV) ||
	    slots_gate_format(spec, sizeof(spec), n, dir))
		return -1;
	const char *old = getenv("LD_PRELOAD");
	env_preload_saved = old ? xstrdup(old) : NULL;
	char *preload = old && *old ? concat(lib, " ", old, NULL) : xstrdup(lib);
	if (old)
		setenv(SLOTS_GATE_PRELOAD_ENV, old, 1);
	else
		unsetenv(SLOTS_GATE_PRELOAD_ENV);
	setenv(SLOTS_GATE_ENV, spec, 1);
	setenv("LD_PRELOAD", preload, 1);
	free(preload);
	env_gate = 1;
	return 0;
}

static int env_mem;      /* MEMGATE_ENV set by threads_env_memgate() */
static int env_mem_preload; /* and LD_PRELOAD with it */

int threads_env_memgate(const char *lib, const char *spec)
{
	if (env_mem || !lib || !spec || getenv(MEMGATE_ENV) || strpbrk(lib, " \t\n:"))
		return -1;
	if (!env_gate) {
		const char *old = getenv("LD_PRELOAD");
		env_preload_saved = old ? xstrdup(old) : NULL;
		char *preload = old && *old ? concat(lib, " ", old, NULL) : xstrdup(lib);
		if (old)
			setenv(SLOTS_GATE_PRELOAD_ENV, old, 1);
		else
			unsetenv(SLOTS_GATE_PRELOAD_ENV);
		setenv("LD_PRELOAD", preload, 1);
		free(preload);
		env_mem_preload = 1;
	}
	setenv(MEMGATE_ENV, spec, 1);
	env_mem = 1;
	return 0;
}

unsigned threads_env_added(void)
{
	return env_k;
}

void threads_env_undo(void)
{
	env_undo_k();
	if (env_gate) {
		env_restore("LD_PRELOAD", &env_preload_saved);
		unsetenv(SLOTS_GATE_ENV);
		unsetenv(SLOTS_GATE_PRELOAD_ENV);
		env_gate = 0;
	}
	if (env_mem) {
		if (env_mem_preload) {
			env_restore("LD_PRELOAD", &env_preload_saved);
			unsetenv(SLOTS_GATE_PRELOAD_ENV);
		}
		unsetenv(MEMGATE_ENV);
		env_mem = env_mem_preload = 0;
	}
}

void threads_hold_init(struct threads_hold *h)
{
	memset(h, 0, sizeof(*h));
	h->js.rfd = h->js.wfd = -1;
	h->js_rfd = h->js_wfd = -1;
}

int threads_fs_is_network(long type)
{
	/* NFS, SMB/CIFS (three), Lustre, GPFS, Ceph, AFS (two), OCFS2, GFS2, 9p, Coda */
	static const unsigned long types[] = { 0x6969, 0x517b, 0xff534d42, 0xfe534d42, 0x0bd00bd0,
					       0x47504653, 0x00c36400, 0x5346414f, 0x6b414653,
					       0x7461636f, 0x01161970, 0x01021997, 0x73757245 };
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		/* f_type is 32 bits wide, sign-extended in a long on some ABIs */
		if (((unsigned long)type & 0xffffffffUL) == types[i])
			return 1;
	return 0;
}

/* The file system type of `path`, or of its nearest existing parent; 0 when unknown. */
static long fs_type(const char *path)
{
	char *p = xstrdup(path);
	long type = 0;
	for (;;) {
		struct statfs sf;
		if (!statfs(p, &sf)) {
			type = (long)sf.f_type;
			break;
		}
		char *slash = strrchr(p, '/');
		if (errno != ENOENT || !slash || slash == p)
			break;
		*slash = '\0';
	}
	free(p);
	return type;
}

char *threads_slot_dir_on(const char *cache_dir, long fstype)
{
	if (!cache_dir || !*cache_dir)
		return NULL;
	char *dir;
	if (cache_dir[0] == '/') {
		dir = concat(cache_dir, "/threads", NULL);
	} else {
		char *cwd = getpwd();
		if (!cwd)
			return NULL;
		dir = concat(cwd, "/", cache_dir, "/threads", NULL);
	}
	if (!threads_fs_is_network(fstype))
		return dir;
	const char *run = getenv("XDG_RUNTIME_DIR");
	char *local = run && run[0] == '/' ? concat(run, "/nvshim-threads", NULL)
					   : xasprintf("/tmp/nvshim-threads-%u", (unsigned)geteuid());
	const char *why = NULL;
	/* made now, 0700, and refused when someone else made it first */
	if (cache_dir_check(local, &why)) {
		free(local);
		return dir;
	}
	free(dir);
	return local;
}

char *threads_slot_dir(const char *cache_dir)
{
	return cache_dir && *cache_dir ? threads_slot_dir_on(cache_dir, fs_type(cache_dir)) : NULL;
}

int threads_gate_possible(const char *lib, const char *dir)
{
	return lib && *lib && !strpbrk(lib, " \t\n:") && dir && dir[0] == '/' && strlen(dir) < PATH_MAX;
}

int threads_slots_usable(const char *dir)
{
	if (!dir || !*dir || (cache_mkdirs(dir) && errno != EEXIST))
		return 0;
	int fd = slots_open(dir, 0);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

int threads_slots_take(struct threads_hold *h, const char *dir, unsigned total, unsigned extra)
{
	if (!total || !threads_slots_usable(dir))
		return -1;
	if (total > SLOTS_MAX)
		total = SLOTS_MAX;
	/* Start at a slot of our own, so that compiles starting together spread out. */
	unsigned start = (unsigned)getpid();
	int fd = slots_wait(dir, total, start, &h->waited_ms);
	if (fd < 0)
		return -1;
	h->slot_fds[h->nslots++] = fd;
	while (h->nslots < extra + 1 && h->nslots < total && (fd = slots_try(dir, total, start)) >= 0)
		h->slot_fds[h->nslots++] = fd;
	return (int)h->nslots - 1;
}

void threads_slots_keep(struct threads_hold *h, unsigned k)
{
	if (k < 1)
		k = 1;
	while (h->nslots > k)
		close(h->slot_fds[--h->nslots]);
}

/* 1 if fd is an open pipe or FIFO. */
static int is_fifo(int fd, struct stat *sb)
{
	return fd >= 0 && fcntl(fd, F_GETFD) >= 0 && !fstat(fd, sb) && S_ISFIFO(sb->st_mode);
}

unsigned threads_tokens_take(struct threads_hold *h, const char *makeflags, unsigned n)
{
	threads_parse_makeflags(makeflags ? makeflags : "", &h->js);
	if (h->js.kind == THREADS_JS_ABSENT || h->js.kind == THREADS_JS_BROKEN)
		return 0;
	if (h->js.kind == THREADS_JS_PIPE) {
		struct stat r, w;
		char path[64];
		/* make passes the fds to recursive rules only; elsewhere they are closed, or are
		 * other files by now: both must be the same pipe. */
		if (!is_fifo(h->js.rfd, &r) || !is_fifo(h->js.wfd, &w) || r.st_ino != w.st_ino ||
		    r.st_dev != w.st_dev) {
			h->js.kind = THREADS_JS_BROKEN;
			return 0;
		}
		/* A description of our own, non-blocking, so that make's stays as it is. */
		snprintf(path, sizeof(path), "/proc/self/fd/%d", h->js.rfd);
		h->js_rfd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		/* close-on-exec: nvcc and its stages must not keep make's pipe open */
		h->js_wfd = fcntl(h->js.wfd, F_DUPFD_CLOEXEC, 0);
	} else {
		struct stat sb;
		h->js_rfd = open(h->js.fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (h->js_rfd >= 0 && (fstat(h->js_rfd, &sb) || !S_ISFIFO(sb.st_mode))) {
			close(h->js_rfd);
			h->js_rfd = -1;
		}
		h->js_wfd = h->js_rfd >= 0 ? fcntl(h->js_rfd, F_DUPFD_CLOEXEC, 0) : -1;
	}
	if (h->js_rfd < 0 || h->js_wfd < 0) {
		h->js.kind = THREADS_JS_BROKEN;
		return 0;
	}
	if (n > sizeof(h->token_bytes))
		n = sizeof(h->token_bytes);
	ssize_t got = 0;
	if (n) {
		do
			got = read(h->js_rfd, h->token_bytes, n);
		while (got < 0 && errno == EINTR);
	}
	if (got <= 0)
		return 0;
	h->tokens = (unsigned)got;
	/* Given back even when nvshim is stopped by a signal. */
	memcpy(token_store, h->token_bytes, (size_t)got);
	token_wfd = h->js_wfd;
	token_count = (sig_atomic_t)got;
	struct sigaction sa = { 0 };
	sa.sa_handler = on_fatal_signal;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 3; i++)
		sigaddset(&sa.sa_mask, token_signals[i]);
	for (int i = 0; i < 3; i++) {
		/* an ignored signal stays ignored (nohup make, make & in a script): nvcc inherits it */
		sigaction(token_signals[i], NULL, &token_old[i]);
		if (token_old[i].sa_handler != SIG_IGN)
			sigaction(token_signals[i], &sa, NULL);
	}
	return h->tokens;
}

int threads_hold_apply(struct threads_hold *h)
{
	int rc = 0;
	if (h->gate_lib && threads_env_gate(h->gate_lib, h->gate_n, h->gate_dir)) {
		free(h->gate_lib);
		h->gate_lib = NULL;
		/* K was chosen for stages that take turns: without the gate, one pass at a time, and no
		 * split (nothing would count its threads) */
		h->k = 1;
		h->split = 0;
		rc = -1;
	}
	if (h->mem_spec && threads_env_memgate(h->mem_lib, h->mem_spec)) {
		free(h->mem_spec);
		h->mem_spec = NULL;
	}
	threads_env_add(h->k, h->split);
	return rc;
}

void threads_hold_release(struct threads_hold *h)
{
	free(h->gate_lib);
	free(h->gate_dir);
	h->gate_lib = h->gate_dir = NULL;
	free(h->mem_spec);
	free(h->mem_lib);
	h->mem_spec = h->mem_lib = NULL;
	if (h->tokens) {
		tokens_give_back();
		for (int i = 0; i < 3; i++)
			sigaction(token_signals[i], &token_old[i], NULL);
		token_wfd = -1;
		h->tokens = 0;
	}
	if (h->js_rfd >= 0)
		close(h->js_rfd);
	if (h->js_wfd >= 0)
		close(h->js_wfd);
	h->js_rfd = h->js_wfd = -1;
	for (unsigned i = 0; i < h->nslots; i++)
		close(h->slot_fds[i]);
	h->nslots = 0;
	threads_jobserver_release(&h->js);
}
