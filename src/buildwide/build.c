#include "buildwide/build.h"
#include "base/hash.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libiberty.h>

/* How far up the walk goes: deeper chains are not builds nvshim knows. */
#define BUILD_MAX_DEPTH 32

void build_hash(const char *s, char out[17])
{
	snprintf(out, 17, "%016llx", (unsigned long long)hash_str(HASH_INIT, s));
}

static int is_one_of(const char *s, const char *const *names)
{
	for (; *names; names++)
		if (!strcmp(s, *names))
			return 1;
	return 0;
}

enum build_kind build_classify(const char *comm, char *const *args, int nargs, const char **tool)
{
	static const char *const tools[] = { "make", "gmake", "bmake", "remake", "ninja", "samu",
					     "cmake", "scons", "waf", NULL };
	static const char *const pass[] = { "sh", "bash", "dash", "zsh", "ksh", "mksh", "busybox",
					    "env", "nice", "ionice", "time", "timeout", "stdbuf",
					    "chrt", "taskset", "nohup", "flock", "ccache", "sccache",
					    "distcc", "nvshim", "nvcc", NULL };
	*tool = NULL;
	if (is_one_of(comm, tools)) {
		*tool = comm;
		return BUILD_TOOL;
	}
	/* pip's own script shows as "pip"; setuptools and pip's build backends as python. */
	if (!strcmp(comm, "pip") || !strcmp(comm, "pip3")) {
		*tool = "pip";
		return BUILD_TOOL;
	}
	if (!strncmp(comm, "python", 6)) {
		for (int i = 1; i < nargs && i < 5; i++) {
			const char *a = args[i], *base = lbasename(a);
			if (!strcmp(base, "setup.py")) {
				*tool = "setup.py";
				return BUILD_TOOL;
			}
			if (!strcmp(base, "_in_process.py") || !strcmp(base, "pip") || !strcmp(base, "pip3")) {
				*tool = "pip";
				return BUILD_TOOL;
			}
			if (!strcmp(base, "scons") || !strcmp(base, "waf")) {
				*tool = base;
				return BUILD_TOOL;
			}
			if (!strcmp(a, "-m") && i + 1 < nargs &&
			    (!strcmp(args[i + 1], "pip") || !strcmp(args[i + 1], "build"))) {
				*tool = !strcmp(args[i + 1], "pip") ? "pip" : "build";
				return BUILD_TOOL;
			}
		}
		return BUILD_OTHER;
	}
	return is_one_of(comm, pass) ? BUILD_PASS : BUILD_OTHER;
}

/* The whole of a small /proc file into buf (NUL-terminated); its length, or -1. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* From /proc/PID/stat: the name, the parent and the start time (clock ticks since boot). */
static int proc_stat(long pid, char *comm, size_t comm_size, long *ppid, unsigned long long *start)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return -1;
	char *open_paren = strchr(buf, '('), *close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren || close_paren < open_paren)
		return -1;
	size_t len = (size_t)(close_paren - open_paren - 1);
	if (len >= comm_size)
		len = comm_size - 1;
	memcpy(comm, open_paren + 1, len);
	comm[len] = '\0';
	/* after ") ": state ppid, then starttime is the 20th field from state */
	char *p = close_paren + 1;
	char state;
	int used = 0;
	if (sscanf(p, " %c %ld%n", &state, ppid, &used) != 2)
		return -1;
	p += used;
	for (int field = 5; field < 22; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -1;
	}
	return sscanf(p, " %llu", start) == 1 ? 0 : -1;
}

/* The first arguments of a process, split at the NUL bytes of /proc/PID/cmdline. */
static int proc_args(long pid, char *buf, size_t size, char **args, int max)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
	ssize_t n = read_small(path, buf, size);
	int nargs = 0;
	for (ssize_t i = 0; n > 0 && i < n && nargs < max; i += (ssize_t)strlen(buf + i) + 1)
		args[nargs++] = buf + i;
	return nargs;
}

static void boot_id(char out[9])
{
	char buf[64];
	size_t k = 0;
	if (read_small("/proc/sys/kernel/random/boot_id", buf, sizeof(buf)) > 0)
		for (const char *p = buf; *p && k < 8; p++)
			if ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))
				out[k++] = *p;
	while (k < 8)
		out[k++] = '0';
	out[8] = '\0';
}

static char *proc_cwd(long pid)
{
	char path[64], dir[PATH_MAX];
	snprintf(path, sizeof(path), "/proc/%ld/cwd", pid);
	ssize_t n = readlink(path, dir, sizeof(dir) - 1);
	if (n < 0)
		return xstrdup("");
	dir[n] = '\0';
	return xstrdup(dir);
}

int build_identify(struct build *b, const char *(*env)(const char *name))
{
	memset(b, 0, sizeof(*b));
	const char *named = env ? env(BUILD_ID_VAR) : NULL;
	if (named && *named) {
		char h[17];
		build_hash(named, h);
		b->id = concat("env-", h, NULL);
		b->tool = xstrdup(BUILD_ID_VAR);
		b->dir = getcwd(NULL, 0);
		if (!b->dir)
			b->dir = xstrdup("");
		return 0;
	}
	long pid = (long)getppid(), found = 0;
	unsigned long long found_start = 0;
	char found_tool[32] = "";
	for (int depth = 0; pid > 1 && depth < BUILD_MAX_DEPTH; depth++) {
		char comm[64], argbuf[4096], *args[8];
		long ppid;
		unsigned long long start;
		const char *tool;
		if (proc_stat(pid, comm, sizeof(comm), &ppid, &start))
			break;
		int nargs = !strncmp(comm, "python", 6) ? proc_args(pid, argbuf, sizeof(argbuf), args, 8) : 0;
		enum build_kind kind = build_classify(comm, args, nargs, &tool);
		if (kind == BUILD_OTHER)
			break;
		if (kind == BUILD_TOOL) {
			found = pid;
			found_start = start;
			snprintf(found_tool, sizeof(found_tool), "%s", tool);
		}
		pid = ppid;
	}
	if (!found)
		return -1;
	char boot[9];
	boot_id(boot);
	b->id = xasprintf("%s-%ld-%llu", boot, found, found_start);
	b->tool = xstrdup(found_tool);
	b->dir = proc_cwd(found);
	b->pid = found;
	return 0;
}

void build_release(struct build *b)
{
	free(b->id);
	free(b->tool);
	free(b->dir);
	memset(b, 0, sizeof(*b));
}

const struct build *build_current(const char *(*env)(const char *name))
{
	static struct build current;
	static int state; /* 0 not looked for, 1 found, -1 none */
	if (!state)
		state = build_identify(&current, env) ? -1 : 1;
	return state > 0 ? &current : NULL;
}

int build_alive(const char *id)
{
	char boot[9], now[9];
	long pid;
	unsigned long long start;
	int used = 0;
	if (strlen(id) < 10 || id[8] != '-')
		return -1;
	memcpy(boot, id, 8);
	boot[8] = '\0';
	if (sscanf(id + 9, "%ld-%llu%n", &pid, &start, &used) != 2 || id[9 + used] != '\0')
		return -1;
	boot_id(now);
	if (strcmp(boot, now))
		return 0;
	char comm[64];
	long ppid;
	unsigned long long s;
	if (proc_stat(pid, comm, sizeof(comm), &ppid, &s))
		return 0;
	return s == start;
}
