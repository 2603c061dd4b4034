#include "base/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

#include <libiberty.h>

#include "base/diag.h"

/* getrandom(2) through syscall(): glibc has the wrapper only from 2.25, and the wheels are built
 * for 2.17 (docs/packaging.md). A kernel without it (before 3.17) fails it, and the caller falls
 * back. */
#define NVSHIM_GRND_NONBLOCK 0x0001

extern char **environ;

double runner_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void decode_status(int wstatus, struct run_result *res)
{
	res->signal = 0;
	if (WIFEXITED(wstatus)) {
		res->status = WEXITSTATUS(wstatus);
	} else if (WIFSIGNALED(wstatus)) {
		res->signal = WTERMSIG(wstatus);
		res->status = 128 + res->signal;
	} else {
		res->status = 1;
	}
}

/* ---- termination signals: passed on to the children, remembered for the end ---- */

static const int term_signals[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT };
#define NTERM (sizeof(term_signals) / sizeof(term_signals[0]))

/* The dispositions before nvshim's handlers, for the children (an ignored signal stays ignored
 * in them, as it would have been without nvshim) and for runner_end(). */
static struct sigaction before[NTERM];
static int caught[NTERM];   /* the handler is installed for term_signals[i] */
static int catch_depth;     /* catch_begin() calls not yet ended; 1 more while held for good */
static volatile sig_atomic_t received;  /* the first termination signal, or 0 */
static volatile sig_atomic_t forwarded; /* it reached at least one child */
/* The children being waited for. Changed only while the termination signals are blocked, so
 * the handler always sees a consistent list; a reaped child leaves it before its pid is freed
 * (see wait_pid()), so a signal never goes to a stranger that got the pid again. */
static pid_t *live;
static size_t nlive, live_alloc;
/* The tool's runs (runner_run(), runner_run_held(): the compile the caller asked for, not
 * nvshim's own probes, replays and queries): how the first one that was running when the
 * signal came ended (a wait status), and whether one had ended before it. */
static int outcome, outcome_set, tool_done;

static void on_term(int sig)
{
	int saved = errno;
	if (!received)
		received = sig;
	for (size_t i = 0; i < nlive; i++) {
		kill(live[i], sig);
		forwarded = 1;
	}
	errno = saved;
}

static void block_term(sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < NTERM; i++)
		sigaddset(&set, term_signals[i]);
	sigprocmask(SIG_BLOCK, &set, old);
}

static void catch_begin(void)
{
	if (catch_depth++)
		return;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	/* SA_RESTART: reads and waits go on after the handler; the children end the wait. */
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NTERM; i++)
		sigaddset(&sa.sa_mask, term_signals[i]);
	for (size_t i = 0; i < NTERM; i++) {
		sigaction(term_signals[i], NULL, &before[i]);
		/* A signal nvshim was told to ignore stays ignored, for it and its children. */
		caught[i] = before[i].sa_handler != SIG_IGN;
		if (caught[i])
			sigaction(term_signals[i], &sa, NULL);
	}
}

static void catch_end(void)
{
	if (--catch_depth)
		return;
	for (size_t i = 0; i < NTERM; i++)
		if (caught[i])
			sigaction(term_signals[i], &before[i], NULL);
	memset(caught, 0, sizeof(caught));
}

void runner_catch_signals(void)
{
	static int held;
	if (!held) {
		held = 1;
		catch_begin();
	}
}

int runner_signal(void)
{
	return received;
}

/* Ends nvshim by the signal's default action; returns only when that does not end it. */
static void die_of(int sig)
{
	fflush(NULL);
	runner_lifeline_end();
	/* the child's core (if any) is the one worth having, not nvshim's */
	struct rlimit none = { 0, 0 };
	setrlimit(RLIMIT_CORE, &none);
	signal(sig, SIG_DFL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
}

int runner_end(int status)
{
	if (!received)
		return status;
	if (outcome_set) {
		/* The flow's status is the tool's (nvcc's 255 after SIGTERM, or its own result when
		 * it carried on); a tool that died of a signal is shown dying of it. */
		if (WIFSIGNALED(outcome))
			die_of(WTERMSIG(outcome));
		return status;
	}
	/* The tool had ended before the signal came, which stopped nvshim's own work after it
	 * (probes, replays): the tool's result stands. */
	if (tool_done)
		return status;
	/* The tool had not started: nvshim ends as the signal's default would have ended it. */
	die_of(received);
	return status;
}

/* A run asked for after a termination signal: nothing is started. nvshim is ending: the
 * warnings of the fail-open paths that the refusal leads to (a toolkit whose version could not
 * be read) would be noise a plain nvcc never prints, so from here on only errors are said. */
static int refused(const char *path, struct run_result *res)
{
	res->status = 128 + received;
	res->signal = 0;
	res->wall_ms = 0;
	if (diag_verbosity() > VERBOSITY_QUIET) {
		diag_note(VERBOSITY_VERBOSE, "did not run %s: nvshim received signal %d (%s); from here "
			  "on only errors are said", path, (int)received, strsignal(received));
		diag_set_verbosity(VERBOSITY_QUIET);
	}
	return -1;
}

/* ---- the lifeline: every process nvshim started, however deep, ends when nvshim dies ----
 *
 * The parent-death signal reaches only the child nvshim forked (nvcc), and nvcc, sent SIGTERM,
 * removes its temporary files and exits without stopping the stage it runs: a stage that has
 * read its input (cicc, ptxas, the host compiler's assembler writing the object) goes on,
 * reparented to init, and may write the object after the caller saw nvshim killed. So before
 * its first child, nvshim forks a watcher that holds the reading end of a pipe only nvshim
 * writes to. Every child gets RUNNER_LIFELINE_VAR=<token> added to its environment (after the
 * tokens of the nvshims above it, if any), which every process below it inherits. nvshim
 * writes one byte before any orderly end (exit, dying of a signal it passes on, exec); when
 * the pipe closes without it (SIGKILL, a crash), the watcher sends SIGTERM to every process
 * of nvshim's session whose environment holds the token, again to new ones, SIGKILL to those
 * left after two seconds, and exits when none is left. A process that cleared its environment
 * or left the session (a daemon) is left alone. */

#define RUNNER_LIFELINE_VAR "NVSHIM_LIFELINE"

static int lifeline_fd = -1;   /* nvshim's writing end, or -1 */
static pid_t lifeline_pid;     /* the watcher */
static char lifeline_token[48]; /* "<pid>.<16 hex digits>" */

/* Async-signal-safe helpers for the watcher, a fork of a process that may have had threads. */
static int ll_read_file(const char *path, char *buf, size_t size, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	*len = 0;
	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t n = read(fd, buf + *len, size - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		*len += (size_t)n;
		if (*len == size)
			break;
	}
	close(fd);
	return 0;
}

/* Does pid's environment hold the token (streamed: an environment may be large)? */
static int ll_marked(const char *pid, const char *token, size_t toklen)
{
	char path[64] = "/proc/", buf[8192];
	size_t keep = 0;
	strcat(strcat(path, pid), "/environ");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int found = 0;
	for (;;) {
		ssize_t n = read(fd, buf + keep, sizeof(buf) - keep);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		size_t len = keep + (size_t)n;
		/* memchr to each candidate start: a sweep reads every environment of the session, and
		 * a memcmp at every offset made it slow enough to matter (see lifeline_watch) */
		for (const char *c = buf; !found && (c = memchr(c, token[0], len - (size_t)(c - buf)));
		     c++) {
			if ((size_t)(c - buf) + toklen > len)
				break;
			found = !memcmp(c, token, toklen);
		}
		if (found)
			break;
		keep = len < toklen ? len : toklen - 1;
		memmove(buf, buf + len - keep, keep);
	}
	close(fd);
	return found;
}

/* The session of /proc/<pid>/stat, or -1. */
static long ll_session(const char *pid)
{
	char path[64] = "/proc/", buf[1024];
	size_t len;
	strcat(strcat(path, pid), "/stat");
	if (ll_read_file(path, buf, sizeof(buf) - 1, &len) || !len)
		return -1;
	buf[len] = '\0';
	char *p = strrchr(buf, ')');
	/* ") state ppid pgrp session" */
	for (int field = 0; p && field < 4; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return -1;
	long sid = 0;
	for (p++; *p >= '0' && *p <= '9'; p++)
		sid = sid * 10 + (*p - '0');
	return sid;
}

/* One pass over /proc: sends sig to each marked process of the session (SIGTERM once per pid:
 * `sent` remembers them). Returns how many marked processes were found. */
/* A record of getdents64(2), the kernel's layout: glibc calls it struct dirent64, musl (which
 * the wheels' static nvshim is linked with) no longer has that name. */
struct ll_dirent64 {
	unsigned long long d_ino;
	long long d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static int ll_sweep(const char *token, size_t toklen, long sid, pid_t self, int sig, pid_t *sent,
		    size_t *nsent, size_t maxsent)
{
	int found = 0;
	int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return 0;
	char ents[8192];
	for (;;) {
		long n = syscall(SYS_getdents64, dir, ents, sizeof(ents));
		if (n <= 0)
			break;
		for (long off = 0; off < n;) {
			struct ll_dirent64 *d = (struct ll_dirent64 *)(void *)(ents + off);
			off += d->d_reclen;
			const char *name = d->d_name;
			pid_t pid = 0;
			const char *c = name;
			for (; *c >= '0' && *c <= '9'; c++)
				pid = pid * 10 + (*c - '0');
			if (*c || !pid || pid == self)
				continue;
			if (ll_session(name) != sid || !ll_marked(name, token, toklen))
				continue;
			found++;
			size_t i = 0;
			while (i < *nsent && sent[i] != pid)
				i++;
			if (sig == SIGTERM && i < *nsent)
				continue;
			kill(pid, sig);
			if (i == *nsent && *nsent < maxsent)
				sent[(*nsent)++] = pid;
		}
	}
	close(dir);
	return found;
}

/* CLOCK_MONOTONIC in milliseconds (clock_gettime is async-signal-safe). */
static long ll_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void ll_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* The watcher: waits for nvshim's end; after a death without the orderly byte, ends the
 * processes that hold the token. Never returns. */
static void lifeline_watch(int rfd, pid_t parent, const char *token)
{
	/* Nothing of nvshim's but the pipe: a caller waiting for the end of nvshim's stdout or
	 * stderr is not kept waiting by the watcher. */
	/* Standard input, output and error become /dev/null rather than closed: a file the watcher
	 * opens later must not take their numbers (under ASan+UBSan a watcher whose fd 2 was a
	 * file of /proc ended nothing). */
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int fd = 0; fd < 1024; fd++) {
		if (fd == rfd || fd == null)
			continue;
		if (fd <= 2 && null >= 0)
			dup2(null, fd);
		else
			close(fd);
	}
	if (null > 2)
		close(null);
#ifdef __linux__
	/* what ps -o comm and top show for it */
	prctl(PR_SET_NAME, "nvshim-lifeline");
#endif
	/* nvshim passes the termination signals on; the watcher lives until nvshim's end. They
	 * were blocked before the fork: ignored, then unblocked, none reaches nvshim's handler. */
	for (size_t i = 0; i < NTERM; i++)
		signal(term_signals[i], SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	char c;
	int orderly = 0;
	for (;;) {
		ssize_t n = read(rfd, &c, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 1) {
			orderly = 1;
			continue;
		}
		break;
	}
	if (orderly)
		_exit(0);
	/* A dying process's files are closed before its children are given to another parent:
	 * the end of the pipe can come while getppid() still names nvshim. So wait for the
	 * reparenting (up to two seconds); a parent still there after that closed the pipe in some
	 * other way, and nothing is ended. (Deciding at once ended nothing now and then: the
	 * watcher exited, a stage of a killed nvshim lived on; seen under ASan and on a loaded
	 * machine.) */
	for (int i = 0; i < 200 && getppid() == parent; i++)
		ll_sleep_ms(10);
	if (getppid() == parent)
		_exit(0);
	size_t toklen = strlen(token);
	long sid = (long)getsid(0);
	pid_t self = getpid();
	pid_t sent[512];
	size_t nsent = 0;
	/* The phases go by the clock, not by sweeps: one sweep reads the stat file of every process
	 * of the machine, and on a busy machine (or under ASan) a hundred sweeps took far longer
	 * than two seconds, so a stage that ignores SIGTERM outlived nvshim by tens of seconds. */
	const long start = ll_now_ms();
	for (;;) {
		long waited = ll_now_ms() - start;
		if (waited >= 30000)
			_exit(1);
		int sig = waited < 2000 ? SIGTERM : SIGKILL;
		if (!ll_sweep(token, toklen, sid, self, sig, sent, &nsent, sizeof(sent) / sizeof(sent[0])))
			_exit(0);
		ll_sleep_ms(20);
	}
}

/* Starts the watcher before nvshim's first child. Without it (fork failed), children still
 * get the parent-death signal. */
static void lifeline_start(void)
{
	static int tried;
	if (tried)
		return;
	tried = 1;
#ifdef __linux__
	unsigned long long nonce = 0;
	if (syscall(SYS_getrandom, &nonce, sizeof(nonce), NVSHIM_GRND_NONBLOCK) != (ssize_t)sizeof(nonce))
		nonce = (unsigned long long)runner_now_ms() * 2654435761u ^ (unsigned long long)getpid();
	snprintf(lifeline_token, sizeof(lifeline_token), "%ld.%016llx", (long)getpid(), nonce);
	int p[2];
	if (pipe2(p, O_CLOEXEC))
		return;
	pid_t parent = getpid();
	/* The watcher starts with the termination signals blocked (nvshim's handler would pass
	 * them on from it too) and ignores them from then on. No stdio is flushed: it never uses
	 * stdio and ends with _exit(). */
	sigset_t old;
	block_term(&old);
	pid_t pid = fork();
	if (pid == 0)
		lifeline_watch(p[0], parent, lifeline_token);
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		return;
	}
	lifeline_fd = p[1];
	lifeline_pid = pid;
	atexit(runner_lifeline_end);
#endif
}

void runner_lifeline_end(void)
{
	if (lifeline_fd < 0)
		return;
	ssize_t w;
	do
		w = write(lifeline_fd, "", 1);
	while (w < 0 && errno == EINTR);
	close(lifeline_fd);
	lifeline_fd = -1;
}

/* Before an exec: the watcher ends and is reaped, so that the program nvshim becomes has no
 * child it did not start. */
static void lifeline_close(void)
{
	if (lifeline_fd < 0)
		return;
	runner_lifeline_end();
	while (waitpid(lifeline_pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* The environment for a child: `base` (NULL: nvshim's) with the lifeline's token appended to
 * RUNNER_LIFELINE_VAR. Returns an xmalloc'ed array (its new entry in *entry, to free), or NULL
 * without a watcher. */
static char **lifeline_env(char *const *base, char **entry)
{
	*entry = NULL;
	if (lifeline_fd < 0)
		return NULL;
	if (!base)
		base = environ;
	const size_t vlen = strlen(RUNNER_LIFELINE_VAR "=");
	size_t n = 0;
	const char *old = NULL;
	while (base[n]) {
		if (!strncmp(base[n], RUNNER_LIFELINE_VAR "=", vlen))
			old = base[n] + vlen;
		n++;
	}
	char **env = XNEWVEC(char *, n + 2);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(base[i], RUNNER_LIFELINE_VAR "=", vlen))
			env[k++] = base[i];
	*entry = old && *old ? concat(RUNNER_LIFELINE_VAR "=", old, " ", lifeline_token, NULL)
			     : concat(RUNNER_LIFELINE_VAR "=", lifeline_token, NULL);
	env[k++] = *entry;
	env[k] = NULL;
	return env;
}

/* ---- starting and waiting ---- */

struct spawn {
	const char *path;
	char *const *argv;
	char *const *env; /* NULL: nvshim's own */
	int out_fd;       /* -1: nvshim's stdout */
	int err_fd;       /* -1: nvshim's stderr */
	int close_fd;     /* the child closes this one (the reading end of a pipe), or -1 */
};

/* In the child, between fork and exec: only async-signal-safe calls. */
static void child_exec(const struct spawn *sp, pid_t parent, const sigset_t *mask, int report)
{
	for (size_t i = 0; i < NTERM; i++) {
		if (caught[i]) {
			struct sigaction sa;
			memset(&sa, 0, sizeof(sa));
			sa.sa_handler = SIG_DFL;
			sigemptyset(&sa.sa_mask);
			sigaction(term_signals[i], &sa, NULL);
		}
	}
#ifdef __linux__
	/* When nvshim dies (SIGKILL, a crash), the child gets SIGTERM (SIGKILL where nvshim was
	 * started with SIGTERM ignored): nvcc then stops its stages and writes nothing, as it does
	 * when it is sent SIGTERM itself. If nvshim is gone already, it died before the request
	 * was made: stop here. */
	prctl(PR_SET_PDEATHSIG, caught[0] ? SIGTERM : SIGKILL);
	if (getppid() != parent)
		_exit(128 + SIGTERM);
#else
	(void)parent;
#endif
	if (sp->close_fd >= 0)
		close(sp->close_fd);
	if (sp->out_fd >= 0 && sp->out_fd != STDOUT_FILENO)
		dup2(sp->out_fd, STDOUT_FILENO);
	if (sp->err_fd >= 0 && sp->err_fd != STDERR_FILENO)
		dup2(sp->err_fd, STDERR_FILENO);
	sigprocmask(SIG_SETMASK, mask, NULL);
	execve(sp->path, sp->argv, sp->env ? sp->env : environ);
	int e = errno;
	ssize_t w = write(report, &e, sizeof(e));
	(void)w;
	_exit(127);
}

/* Starts the program and puts it on the live list. Returns its pid, or -1 with *err set. The
 * caller has called catch_begin(). */
static pid_t spawn_start(const struct spawn *sp, int *err)
{
	int report[2];
	*err = 0;
	if (pipe2(report, O_CLOEXEC)) {
		*err = errno;
		return -1;
	}
	lifeline_start();
	char *entry;
	char **env = lifeline_env(sp->env, &entry);
	struct spawn with = *sp;
	if (env) {
		with.env = env;
		sp = &with;
	}
	sigset_t old;
	block_term(&old);
	if (nlive == live_alloc) {
		live_alloc = live_alloc ? 2 * live_alloc : 8;
		live = XRESIZEVEC(pid_t, live, live_alloc);
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0)
		child_exec(sp, parent, &old, report[1]);
	if (pid > 0)
		live[nlive++] = pid;
	else
		*err = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(report[1]);
	free(env);
	free(entry);
	if (pid > 0) {
		/* EOF: the exec happened; an errno: it did not, and the child has exited. */
		int e = 0;
		ssize_t n;
		do
			n = read(report[0], &e, sizeof(e));
		while (n < 0 && errno == EINTR);
		if (n == (ssize_t)sizeof(e)) {
			int ws;
			sigset_t o2;
			while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
				;
			block_term(&o2);
			for (size_t i = 0; i < nlive; i++)
				if (live[i] == pid)
					live[i] = live[--nlive];
			sigprocmask(SIG_SETMASK, &o2, NULL);
			*err = e;
			pid = -1;
		}
	}
	close(report[0]);
	return pid;
}

/* Waits for a started child, takes it off the live list and returns its wait status. `tool`:
 * a run of the tool, whose end after a signal decides how nvshim ends. */
static int wait_pid(pid_t pid, int tool)
{
	siginfo_t info;
	/* Waits without reaping: until the pid is off the live list it stays this child's. */
	while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) < 0 && errno == EINTR)
		;
	sigset_t old;
	block_term(&old);
	for (size_t i = 0; i < nlive; i++)
		if (live[i] == pid)
			live[i] = live[--nlive];
	sigprocmask(SIG_SETMASK, &old, NULL);
	int ws = 0;
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	if (tool && !received)
		tool_done = 1;
	else if (tool && !outcome_set) {
		outcome = ws;
		outcome_set = 1;
	}
	return ws;
}

/* Reads a whole descriptor into an xmalloc'ed, NUL-terminated string. */
static char *read_all(int fd)
{
	size_t len = 0, alloc = 256;
	char *text = XNEWVEC(char, alloc);
	char buf[4096];
	for (;;) {
		ssize_t got = read(fd, buf, sizeof(buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		if (len + (size_t)got + 1 > alloc) {
			alloc = (len + (size_t)got + 1) * 2;
			text = XRESIZEVEC(char, text, alloc);
		}
		memcpy(text + len, buf, (size_t)got);
		len += (size_t)got;
	}
	text[len] = '\0';
	return text;
}

/* Opens a file for a child's stdout or stderr, as a shell's `>` does. */
static int open_out(const char *file)
{
	int fd;
	do
		fd = open(file ? file : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	while (fd < 0 && errno == EINTR);
	return fd;
}

/* Runs one program to its end. `held`: its stderr, read into *held; `out`: its stdout, read
 * into *out. Returns 0 with res filled in, or -1 (res->status 127) when it could not be
 * started, with *err the reason (0 when a run was refused). */
static int run_one(struct spawn *sp, int tool, struct run_result *res, char **held, char **out, int *err)
{
	double start = runner_now_ms();
	int pipefd[2] = { -1, -1 };
	res->status = 127;
	res->signal = 0;
	res->wall_ms = 0;
	*err = 0;
	if (received)
		return refused(sp->path, res);
	if ((held || out) && pipe2(pipefd, O_CLOEXEC)) {
		*err = errno;
		return -1;
	}
	if (held)
		sp->err_fd = pipefd[1];
	if (out)
		sp->out_fd = pipefd[1];
	sp->close_fd = pipefd[0];
	catch_begin();
	pid_t pid = spawn_start(sp, err);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	if (pid < 0) {
		if (pipefd[0] >= 0)
			close(pipefd[0]);
		catch_end();
		return -1;
	}
	/* The pipe must be drained before the status can be had. */
	if (pipefd[0] >= 0) {
		char *text = read_all(pipefd[0]);
		close(pipefd[0]);
		*(held ? held : out) = text;
	}
	int ws = wait_pid(pid, tool);
	catch_end();
	res->wall_ms = runner_now_ms() - start;
	decode_status(ws, res);
	return 0;
}

static int cannot_run(const char *path, int err)
{
	return error("cannot run '%s': %s", path, strerror(err));
}

int runner_run(const char *path, const struct argv *args, struct run_result *res)
{
	struct spawn sp = { path, args->v, NULL, -1, -1, -1 };
	int err;
	int rc = run_one(&sp, 1, res, NULL, NULL, &err);
	return rc && err ? cannot_run(path, err) : rc;
}

int runner_run_held(const char *path, const struct argv *args, struct run_result *res, char **held)
{
	struct spawn sp = { path, args->v, NULL, -1, -1, -1 };
	int err;
	*held = NULL;
	int rc = run_one(&sp, 1, res, held, NULL, &err);
	if (!*held)
		*held = xstrdup("");
	return rc && err ? cannot_run(path, err) : rc;
}

int runner_run_many(struct runner_job *jobs, size_t n, unsigned parallel)
{
	pid_t *pid = XCNEWVEC(pid_t, n ? n : 1);
	double *start = XCNEWVEC(double, n ? n : 1);
	size_t next = 0, done = 0;
	int rc = 0;
	if (!parallel)
		parallel = 1;
	catch_begin();
	while (done < n) {
		/* start as many as allowed, then wait for the oldest */
		while (next < n && next - done < parallel) {
			struct runner_job *j = &jobs[next];
			int err = 0;
			j->res.status = 127;
			j->res.signal = 0;
			start[next] = runner_now_ms();
			pid[next] = -1;
			if (received) {
				refused(j->path, &j->res);
				rc = -1;
				next++;
				continue;
			}
			int out = open_out(j->out_file), errfd = out < 0 ? -1 : open_out(j->err_file);
			if (out < 0 || errfd < 0) {
				err = errno;
			} else {
				struct spawn sp = { j->path, j->args->v, NULL, out, errfd, -1 };
				pid[next] = spawn_start(&sp, &err);
			}
			if (out >= 0)
				close(out);
			if (errfd >= 0)
				close(errfd);
			if (pid[next] < 0)
				rc = cannot_run(j->path, err);
			next++;
		}
		struct runner_job *j = &jobs[done];
		if (pid[done] > 0) {
			decode_status(wait_pid(pid[done], 0), &j->res);
			j->res.wall_ms = runner_now_ms() - start[done];
		}
		done++;
	}
	catch_end();
	free(pid);
	free(start);
	return rc;
}

void runner_write_stderr(const char *text)
{
	size_t len = strlen(text);
	fflush(stderr);
	while (len) {
		ssize_t n = write(STDERR_FILENO, text, len);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			break;
		}
		text += n;
		len -= (size_t)n;
	}
}

int runner_run_env(const char *path, const struct argv *args, char *const *env, const char *out_file,
		   const char *err_file, struct run_result *res)
{
	res->status = 127;
	res->signal = 0;
	if (received)
		return refused(path, res);
	int out = open_out(out_file), errfd = out < 0 ? -1 : open_out(err_file);
	int rc = -1, err;
	if (out >= 0 && errfd >= 0) {
		struct spawn sp = { path, args->v, env, out, errfd, -1 };
		rc = run_one(&sp, 0, res, NULL, NULL, &err);
	}
	if (out >= 0)
		close(out);
	if (errfd >= 0)
		close(errfd);
	return rc;
}

int runner_exec(const char *path, const struct argv *args)
{
	if (received)
		die_of(received);
	lifeline_close();
	execv(path, args->v);
	return error("cannot run '%s': %s", path, strerror(errno));
}

int runner_execvp(const struct argv *args)
{
	if (!args->n)
		return error("no command to run");
	if (received)
		die_of(received);
	lifeline_close();
	execvp(args->v[0], args->v);
	return error("cannot run '%s': %s", args->v[0], strerror(errno));
}

int runner_capture(const char *path, const struct argv *args, char **out)
{
	*out = NULL;
	int null = open_out(NULL);
	if (null < 0)
		return -1;
	struct spawn sp = { path, args->v, NULL, -1, null, -1 };
	struct run_result res;
	char *text = NULL;
	int err;
	int rc = run_one(&sp, 0, &res, NULL, &text, &err);
	close(null);
	if (rc) {
		free(text);
		return -1;
	}
	*out = text ? text : xstrdup("");
	return res.status;
}

char *runner_which(const char *name, const char *path)
{
	if (strchr(name, '/'))
		return xstrdup(name);
	if (!path)
		path = getenv("PATH");
	for (const char *p = path; p && *p;) {
		size_t len = strcspn(p, ":");
		char *cand = len ? xasprintf("%.*s/%s", (int)len, p, name) : xstrdup(name);
		if (!access(cand, X_OK))
			return cand;
		free(cand);
		p += len + (p[len] == ':');
	}
	return NULL;
}
