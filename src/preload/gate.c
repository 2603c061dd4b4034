/* libnvshim-gate.so: one slot for each of nvcc's stages (gate.h). */
#include "preload/gate.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buildwide/memgate.h"
#include "buildwide/slots.h"

extern char **environ;

static int (*real_system)(const char *);
static int gate_on;
static unsigned gate_n;
static char gate_dir[PATH_MAX];
static unsigned gate_next;
static int gate_split; /* nvshim gave nvcc --split-compile (SLOTS_SPLIT_ENV) */
static int gate_slots; /* CPU slots (SLOTS_GATE_ENV) */
static int gate_mem;   /* the memory budget (MEMGATE_ENV) */
static struct memgate gate_mg;
static int gate_fault_kill; /* NVSHIM_FAULT names memory_kill: each stage's first run is killed */
/* One of nvcc's threads looks for a free slot at a time; the others wait here, asleep. So a
 * compile under --threads K keeps one poller, not K, and its descriptors, however many stages
 * wait. */
static pthread_mutex_t gate_waiting = PTHREAD_MUTEX_INITIALIZER;

/* Whether this process is nvcc itself, not a script or a cache on the way to it. */
static int gate_in_nvcc(void)
{
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		return 0;
	exe[len] = '\0';
	const char *base = strrchr(exe, '/');
	return !strcmp(base ? base + 1 : exe, "nvcc");
}

/* Whether NVSHIM_FAULT names a step (a comma-separated list). */
static int gate_fault(const char *step)
{
	const char *v = getenv("NVSHIM_FAULT");
	size_t n = strlen(step);
	for (const char *p = v; p && *p;) {
		const char *c = strchr(p, ',');
		size_t len = c ? (size_t)(c - p) : strlen(p);
		if (len == n && !strncmp(p, step, n))
			return 1;
		p = c ? c + 1 : NULL;
	}
	return 0;
}

__attribute__((constructor)) static void gate_init(void)
{
	real_system = (int (*)(const char *))dlsym(RTLD_NEXT, "system");
	const char *spec = getenv(SLOTS_GATE_ENV), *mem = getenv(MEMGATE_ENV);
	if ((!spec && !mem) || !gate_in_nvcc())
		return;
	gate_slots = real_system && spec && !slots_gate_parse(spec, &gate_n, gate_dir, sizeof(gate_dir));
	gate_mem = real_system && mem && !memgate_parse_spec(mem, &gate_mg);
	gate_fault_kill = gate_fault("memory_kill");
	/* nvcc's stages get the environment the user gave: LD_PRELOAD as it was */
	const char *user = getenv(SLOTS_GATE_PRELOAD_ENV);
	if (user)
		setenv("LD_PRELOAD", user, 1);
	else
		unsetenv("LD_PRELOAD");
	unsetenv(SLOTS_GATE_PRELOAD_ENV);
	unsetenv(SLOTS_GATE_ENV);
	unsetenv(MEMGATE_ENV);
	gate_split = getenv(SLOTS_SPLIT_ENV) != NULL;
	unsetenv(SLOTS_SPLIT_ENV);
	gate_on = gate_slots || gate_mem;
}

/* system() as glibc's, with the stage's rusage (its peak resident memory, and its children's):
 * SIGINT and SIGQUIT ignored while it runs (counted across nvcc's threads), SIGCHLD blocked in
 * this thread, /bin/sh -c. `kill_it`: the stage is killed at once with SIGKILL (the failure
 * injection of an out-of-memory kill). */
static pthread_mutex_t gate_sig_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned gate_sig_refs;
static struct sigaction gate_old_int, gate_old_quit;

static int gate_spawn(const char *command, struct rusage *ru, int kill_it, struct memgate_ticket *t)
{
	struct sigaction ign;
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigset_t block, omask;
	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &block, &omask);
	pthread_mutex_lock(&gate_sig_lock);
	if (!gate_sig_refs++) {
		sigaction(SIGINT, &ign, &gate_old_int);
		sigaction(SIGQUIT, &ign, &gate_old_quit);
	}
	pthread_mutex_unlock(&gate_sig_lock);
	posix_spawnattr_t attr;
	posix_spawnattr_init(&attr);
	sigset_t reset;
	sigemptyset(&reset);
	if (gate_old_int.sa_handler != SIG_IGN)
		sigaddset(&reset, SIGINT);
	if (gate_old_quit.sa_handler != SIG_IGN)
		sigaddset(&reset, SIGQUIT);
	posix_spawnattr_setsigdefault(&attr, &reset);
	posix_spawnattr_setsigmask(&attr, &omask);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	char *argv[] = { (char *)"sh", (char *)"-c", (char *)"--", (char *)command, NULL };
	pid_t pid;
	int status = -1;
	int rc = posix_spawn(&pid, "/bin/sh", NULL, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	memset(ru, 0, sizeof(*ru));
	if (!rc) {
		if (t)
			memgate_running(t, (long)pid);
		if (kill_it)
			kill(pid, SIGKILL);
		while (wait4(pid, &status, 0, ru) < 0) {
			if (errno != EINTR) {
				status = -1;
				break;
			}
		}
	} else {
		status = 127 << 8;
	}
	int e = errno;
	pthread_mutex_lock(&gate_sig_lock);
	if (!--gate_sig_refs) {
		sigaction(SIGINT, &gate_old_int, NULL);
		sigaction(SIGQUIT, &gate_old_quit, NULL);
	}
	pthread_mutex_unlock(&gate_sig_lock);
	pthread_sigmask(SIG_SETMASK, &omask, NULL);
	errno = e;
	return status;
}

/* A stage with its CPU slots: the slot logic of the gate, then the stage. */
static int gate_stage(const char *command, struct rusage *ru, int measured, int kill_it, struct memgate_ticket *t)
{
	int slot = -1;
	int extra[SLOTS_MAX];
	unsigned nextra = 0;
	if (gate_slots) {
		/* Each stage starts its search at another slot, so that stages starting together spread. */
		unsigned start = __atomic_fetch_add(&gate_next, 1, __ATOMIC_RELAXED) + (unsigned)getpid();
		int locked = !pthread_mutex_lock(&gate_waiting);
		slot = slots_wait(gate_dir, gate_n, start, NULL);
		/* A stage that splits its optimizations (nvshim's --split-compile S) gets one thread
		 * for its slot and one for each other slot free now, up to S: in a full build, one. */
		unsigned want = gate_split ? slots_split_wanted(command) : 0;
		while (slot >= 0 && nextra + 1 < want && nextra + 1 < gate_n) {
			int fd = slots_try(gate_dir, gate_n, start + 1 + nextra);
			if (fd < 0)
				break;
			extra[nextra++] = fd;
		}
		if (locked)
			pthread_mutex_unlock(&gate_waiting);
	}
	char *split = gate_split ? slots_split_command(command, 1 + nextra) : NULL;
	const char *run = split ? split : command;
	int status = measured ? gate_spawn(run, ru, kill_it, t) : real_system(run);
	free(split);
	for (unsigned i = 0; i < nextra; i++)
		slots_give(extra[i]);
	slots_give(slot);
	return status;
}

/* Whether a stage's status is a kill for memory: SIGKILL (to the stage, or to the command the
 * shell ran: 128 + 9) while the kernel's count of out-of-memory kills rose, or injected. */
static int gate_oom_killed(int status, long long kills_before, int injected)
{
	int killed = (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) ||
		     (WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGKILL);
	if (!killed)
		return 0;
	if (injected)
		return 1;
	long long after = memgate_oom_kills();
	return kills_before >= 0 && after > kills_before;
}

/* A heavy stage under the memory budget: waits until its expected peak fits, runs it, learns
 * its peak; killed for memory, it runs again alone (at most twice). */
static int gate_memory_stage(const char *command, enum memgate_kind kind)
{
	uint64_t by_name, by_source;
	uint64_t key = memgate_stage_key(command, kind, &by_name, &by_source);
	long long learned = memgate_recall(&gate_mg, kind, key);
	if (learned <= 0)
		learned = memgate_recall(&gate_mg, kind, by_name);
	long long similar = memgate_similar(&gate_mg, kind);
	long long est = memgate_estimate(learned, similar, memgate_default_peak(kind));
	unsigned cold = learned <= 0 && similar <= 0 ? MEMGATE_COLD : 0;
	int status = 0;
	for (int attempt = 0; attempt < 3; attempt++) {
		struct memgate_ticket t;
		memgate_admit(&gate_mg, est, attempt > 0 ? MEMGATE_ALONE : cold, &t);
		struct memgate_entry e;
		memset(&e, 0, sizeof(e));
		e.start_ms = memgate_now_ms();
		long long kills = memgate_oom_kills();
		int inject = gate_fault_kill && attempt == 0 && kind == MEMGATE_CICC;
		struct rusage ru;
		status = gate_stage(command, &ru, 1, inject, &t);
		memgate_leave(&t);
		e.end_ms = memgate_now_ms();
		long long peak = (long long)ru.ru_maxrss * 1024;
		int oom = status != -1 && gate_oom_killed(status, kills, inject);
		if (!oom && attempt == 0 && status != -1 && WIFEXITED(status) && WEXITSTATUS(status) != 0) {
			/* a stage's own out-of-memory failure (an allocation that failed): it ended in
			 * error while memory was nearly gone (a twentieth of it left) */
			long long total, avail;
			memgate_machine(&total, &avail);
			oom = total > 0 && avail >= 0 && avail < total / 20;
		}
		snprintf(e.kind, sizeof(e.kind), "%s", memgate_kind_name(kind));
		e.peak_kb = peak / 1024;
		e.est_kb = t.est / 1024;
		e.waited_ms = t.waited_ms;
		e.budget_kb = t.budget / 1024;
		e.pid = (long long)getppid();
		snprintf(e.flags, sizeof(e.flags), "%s%s%s", t.over ? "o" : "", attempt ? "r" : "", oom ? "k" : "");
		memgate_journal(&gate_mg, &e);
		if (t.over)
			fprintf(stderr, "nvshim note    : %s ran alone over the memory budget (expected peak %lld MiB, "
				"budget %lld MiB): nothing else of nvshim's was running [memory.over]\n",
				memgate_kind_name(kind), t.est >> 20, t.budget >> 20);
		if (!oom) {
			if (peak > 0) {
				memgate_learn(&gate_mg, kind, key, peak);
				memgate_learn(&gate_mg, kind, by_name, peak);
				memgate_seen(&gate_mg, kind, peak, by_source);
			}
			return status;
		}
		/* killed for memory: once more, alone, expecting at least twice what it reached */
		if (attempt < 2)
			fprintf(stderr, "nvshim note    : %s was killed for memory (peak %lld MiB so far); it runs "
				"again alone once memory is free [memory.rerun]\n",
				memgate_kind_name(kind), peak >> 20);
		if (peak * 2 > est)
			est = peak * 2;
	}
	return status;
}

__attribute__((visibility("default"))) int system(const char *command)
{
	if (!real_system) {
		real_system = (int (*)(const char *))dlsym(RTLD_NEXT, "system");
		if (!real_system) {
			errno = ENOSYS;
			return -1;
		}
	}
	if (!gate_on || !command)
		return real_system(command);
	if (gate_mem) {
		enum memgate_kind kind = memgate_stage_kind(command);
		if (kind != MEMGATE_OTHER)
			return gate_memory_stage(command, kind);
	}
	struct rusage ru;
	return gate_stage(command, &ru, 0, 0, NULL);
}
