/* threads: how many of a compile's device passes may run at once (nvcc's --threads K).
 *
 * nvcc runs the per-target passes of a compile (cicc, ptxas) one after another unless it is
 * given --threads K. This module chooses K from what the machine has at that moment:
 *
 *   CPUs      the CPUs this process may use: sched_getaffinity, then the cgroup's CPU quota
 *             (v2 cpu.max, v1 cpu.cfs_quota_us / cpu.cfs_period_us), rounded down, at least 1;
 *   busy      compilers running now (cicc, ptxas, cudafe++, cc1plus, ...: /proc/<pid>/comm),
 *             and the slots nvshim's compiles hold;
 *   memory    MemAvailable (/proc/meminfo) and the cgroup's memory.max less memory.current,
 *             against THREADS_PASS_MB per pass at once;
 *   slots     nvshim's own compiles share <cache_dir>/threads/slot.<i>, one file per CPU
 *             (buildwide/slots.h);
 *   jobserver with GNU make's jobserver in MAKEFLAGS (--jobserver-auth=R,W or fifo:PATH), the
 *             K-1 extra threads are also tokens read from it without waiting, written back when
 *             the compile ends (also on SIGINT, SIGTERM and SIGHUP). A jobserver that MAKEFLAGS
 *             names but that cannot be used gives K = 1.
 *
 * How the slots are used, two ways:
 *
 *   the gate  (libnvshim-gate.so in front of nvcc, preload/gate.h) each of nvcc's stages takes
 *             one slot while it runs. K is then as many targets as the slots this compile may
 *             use (the CPUs less the compilers that are not nvshim's, within memory): the slots
 *             decide what runs, so a full build runs no more stages than CPUs and its tail
 *             gets the CPUs the finished compiles gave back (threads_env_gate());
 *   held      without the gate, the compile itself takes one slot for as long as nvcc runs
 *             (waiting when every slot is held) and up to K-1 more without waiting, and K is
 *             what the free CPUs allow now (threads_slots_take()).
 *
 * The decision itself is pure (threads_decide(), threads_gate_slots(), threads_settle()) and is
 * tested on plain data; the readers parse text (threads_parse_*()), so they are fuzzed. Any
 * failure of the accounting gives K = 1: it never fails a build.
 *
 * NVSHIM_MACHINE="cpus=N,busy=N,mem_mb=N" replaces what is read from the machine (for tests;
 * a field left out is read).
 */
#ifndef NVSHIM_THREADS_H
#define NVSHIM_THREADS_H

#include <stddef.h>

/* Peak memory of one device pass (cicc or ptxas) that threads_decide() reserves, in MiB:
 * measured peaks are 180 MiB (cicc, an unrolled-template kernel, tests/bench/threads_bench.py)
 * and 0.4-1.5 GiB for CUTLASS-sized sources; 1 GiB keeps K within memory for both. */
#define THREADS_PASS_MB 1024

/* The setting: 0 auto, THREADS_OFF off, N at most N threads (1 is off). */
#define THREADS_OFF ((size_t)-1)

enum threads_js {
	THREADS_JS_ABSENT,   /* no jobserver in MAKEFLAGS */
	THREADS_JS_PIPE,     /* --jobserver-auth=R,W (or --jobserver-fds=R,W) */
	THREADS_JS_FIFO,     /* --jobserver-auth=fifo:PATH */
	THREADS_JS_BROKEN,   /* named, but malformed or not usable */
};

struct threads_jobserver {
	enum threads_js kind;
	int rfd, wfd;   /* THREADS_JS_PIPE */
	char *fifo;     /* THREADS_JS_FIFO (xmalloc'ed) */
	int parallel;   /* MAKEFLAGS holds -jN with N > 1, or a jobserver */
};

/* What the machine has, as read (or overridden). A count of 0 for cpus means unknown. */
struct threads_machine {
	unsigned affinity;     /* CPUs in the affinity mask (0: unknown) */
	double quota;          /* CPUs the cgroup quota allows (0: none) */
	unsigned cpus;         /* what this process may use: min(affinity, quota), at least 1 */
	unsigned compilers;    /* compiler processes running now, not this compile's */
	unsigned held;         /* slots other nvshim compiles hold now */
	long long mem_avail_mb; /* MemAvailable, less under a cgroup limit; -1 unknown */
	unsigned overridden : 1; /* NVSHIM_MACHINE gave something */
};

struct threads_input {
	unsigned units;   /* virtual architectures of the compile: what --threads runs in parallel */
	size_t setting;   /* the threads setting */
	struct threads_machine m;
	long long pass_mb; /* memory per pass at once (THREADS_PASS_MB) */
	int gate;          /* nvcc's stages take slots themselves (libnvshim-gate.so) */
};

/* How many threads to ask for (at least 1), and why (a short text for the note, xmalloc'ed). */
unsigned threads_decide(const struct threads_input *in, char **why);
/* With the gate: how many slots nvcc's stages share (1 .. SLOTS_MAX): the CPUs less the
 * compilers that hold no slot, and no more than the passes running now and those that fit in
 * the memory left. */
unsigned threads_gate_slots(const struct threads_input *in);
/* K once slots and tokens were taken: want capped by 1 + extra slots got, and, with a usable
 * jobserver, by 1 + tokens got; a broken jobserver gives 1. */
unsigned threads_settle(unsigned want, unsigned extra_slots, enum threads_js js, unsigned tokens);

/* ---- parsers of outside text (each tolerates any bytes) ---- */

/* cgroup v2 cpu.max ("max 100000", "150000 100000"): CPUs allowed, 0 when unlimited, -1 when
 * malformed. */
double threads_parse_cpu_max(const char *text);
/* cgroup v1 cpu.cfs_quota_us and cpu.cfs_period_us: as above (-1 quota: unlimited). */
double threads_parse_cfs(const char *quota, const char *period);
/* /proc/meminfo: MemAvailable in MiB, or -1. */
long long threads_parse_meminfo(const char *text);
/* memory.max / memory.limit_in_bytes / memory.current: bytes, 0 for "max", -1 malformed. */
long long threads_parse_bytes(const char *text);
/* A cpulist ("0-3,8,10-11", cpuset.cpus.effective): how many CPUs, or 0 when malformed. */
unsigned threads_parse_cpulist(const char *text);
/* MAKEFLAGS: the jobserver it names (the last --jobserver-auth/--jobserver-fds wins), and
 * whether the make is parallel. Nothing is opened or checked. */
void threads_parse_makeflags(const char *text, struct threads_jobserver *js);
void threads_jobserver_release(struct threads_jobserver *js);
/* 1 if a process name is a compiler that keeps a CPU busy (cicc, ptxas, cc1plus, ...). */
int threads_is_compiler(const char *comm);
/* /proc/<pid>/stat: 1 if it is a live (not zombie, not stopped) compiler process, else 0. */
int threads_stat_is_compiler(const char *text);
/* NVSHIM_MACHINE: fills the fields it names; returns 0, or -1 when malformed (m unchanged). */
int threads_parse_override(const char *text, struct threads_machine *m);

/* ---- the machine, read ---- */

/* Reads CPUs, quota, compilers and memory; `override` (NVSHIM_MACHINE, may be NULL) replaces
 * the fields it names. Never fails: what cannot be read stays unknown. The slots others hold
 * (m->held) are counted by slots_held() (buildwide/slots.h). */
void threads_machine_read(struct threads_machine *m, const char *override);

/* ---- what a compile holds while nvcc runs ---- */

struct threads_hold {
	int slot_fds[256]; /* flock'ed slot files (SLOTS_MAX) */
	unsigned nslots;
	unsigned waited_ms; /* how long the first slot took */
	struct threads_jobserver js;
	int js_rfd, js_wfd; /* opened for this compile (-1: none) */
	unsigned tokens;    /* bytes read from the jobserver, to be written back */
	char token_bytes[256];
	/* what threads_hold_apply() puts in the environment */
	unsigned k;         /* --threads K (1: none) */
	unsigned split;     /* --split-compile S, the most threads the gate gives a stage (0: none) */
	char *gate_lib;     /* libnvshim-gate.so, or NULL: no gate */
	char *gate_dir;     /* its slots */
	unsigned gate_n;
	/* the memory budget (buildwide/memgate.h): MEMGATE_ENV's value and the gate library, or
	 * NULL: none */
	char *mem_spec;
	char *mem_lib;
};

void threads_hold_init(struct threads_hold *h);

/* --threads K (K > 1) and --split-compile S (S > 1, with SLOTS_SPLIT_ENV for the gate) for the
 * tools nvshim starts from now on, added to NVCC_APPEND_FLAGS (the command line, and so every
 * cache's key, stays as it is). nvcc given --threads exits with status 255
 * for every failure, where serial nvcc gives 1 or 2 (or the status of a stage's signal), so a
 * compile that fails with it is run again without it: threads_env_added() says whether K > 1
 * is in effect, threads_env_undo() restores the environment as it was (NVCC_APPEND_FLAGS, and
 * what threads_env_gate() set). */
void threads_env_add(unsigned k, unsigned split);
unsigned threads_env_added(void);
/* The memory budget for the tools nvshim starts from now on: MEMGATE_ENV set to spec and, unless
 * threads_env_gate() put it there, `lib` first in LD_PRELOAD (the user's kept as there).
 * Returns 0, or -1 when it cannot be set (one is set already: an nvshim further up, whose gate
 * counts; a lib LD_PRELOAD cannot hold). threads_env_undo() takes it back. */
int threads_env_memgate(const char *lib, const char *spec);
void threads_env_undo(void);
/* The gate for the tools nvshim starts from now on: `lib` first in LD_PRELOAD, SLOTS_GATE_ENV
 * naming n slots in dir, the user's LD_PRELOAD kept in SLOTS_GATE_PRELOAD_ENV (the gate puts it
 * back inside nvcc). Returns 0, or -1 when it cannot be set (a gate already set by an nvshim
 * further up: that one counts; or a lib or dir threads_gate_possible() refuses). */
int threads_env_gate(const char *lib, unsigned n, const char *dir);
/* The slots' directory for a cache directory (NULL: none, or no working directory for a
 * relative one): <cache_dir>/threads, made absolute, since nvcc's stages find it from wherever
 * nvcc runs. On a network file system (NFS, SMB, Lustre, GPFS, Ceph, AFS, ...) a lock is the
 * server's: every host mounting the cache would share one host's CPUs, and a host that crashed
 * could leave its slots held. There it is a local directory of this user's instead:
 * $XDG_RUNTIME_DIR/nvshim-threads, else /tmp/nvshim-threads-<uid> (made 0700, refused when
 * another user made it first: then the cache's own). threads_slot_dir_on() takes the file
 * system type (statfs f_type) as given, for tests. xmalloc'ed. */
char *threads_slot_dir(const char *cache_dir);
char *threads_slot_dir_on(const char *cache_dir, long fstype);
/* 1 for a file system type (statfs f_type) whose locks are held by a server. */
int threads_fs_is_network(long type);
/* Whether the gate can be put in front of nvcc: ld.so splits LD_PRELOAD at blanks and colons,
 * so a library path holding one cannot be preloaded, and the slots' directory must be absolute. */
int threads_gate_possible(const char *lib, const char *dir);
/* Whether <dir> holds usable slots (it is created when missing). */
int threads_slots_usable(const char *dir);
/* Takes one slot of <dir>/slot.0 .. slot.<total-1>, waiting while every one is held, then up to
 * `extra` more without waiting. Returns the extra slots taken, or -1 when the slots cannot be
 * used (no directory: the compile then runs with what it was given, holding nothing). */
int threads_slots_take(struct threads_hold *h, const char *dir, unsigned total, unsigned extra);
/* Keeps the first k slots taken (at least one) and gives back the others. */
void threads_slots_keep(struct threads_hold *h, unsigned k);
/* Reads up to n tokens from the jobserver without waiting; returns how many were read (0 when
 * it cannot be used: h->js.kind is then THREADS_JS_BROKEN). */
unsigned threads_tokens_take(struct threads_hold *h, const char *makeflags, unsigned n);
/* Sets the environment for the tools nvshim starts from now on: --threads h->k and
 * --split-compile h->split (threads_env_add()) and the gate (threads_env_gate()); called just before nvcc runs, so that
 * what nvshim runs before it (a host compiler's --version) sees none of it. Returns 0, or -1 when
 * the gate could not be set (nothing of it is then in effect; h->gate_lib is cleared and K is 1:
 * it was chosen for stages that take turns). */
int threads_hold_apply(struct threads_hold *h);
/* Gives back the tokens and the slots; safe to call twice. */
void threads_hold_release(struct threads_hold *h);

#endif
