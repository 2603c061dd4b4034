/* memgate: nvcc's heavy stages start only when their expected peak memory fits the budget.
 *
 * Every heavy stage (cicc, ptxas, nvlink, cudafe++, the host compiler) of every nvcc of a build
 * passes through libnvshim-gate.so (preload/gate.c), which asks this module before it runs it:
 *
 *   budget    memory_budget (bytes, "24G", "60%" of the machine's memory), given by nvshim in
 *             MEMGATE_ENV; 0 (auto): the memory available (MemAvailable, less under a cgroup v2
 *             memory.max or v1 memory.limit_in_bytes) when the ledger was last empty, that is when
 *             the build started, less a reserve (memgate_default_budget());
 *   ledger    <dir>/run.<pid>.<n>, one file per stage running, holding its expected peak and
 *             the pid of its process, held with flock by its stage (a stage that dies gives its
 *             entry back; an entry whose lock can be taken is stale and removed); a running
 *             stage counts as the larger of its estimate and its resident memory now;
 *             <dir>/lock serializes admissions;
 *   estimate  the peak learned for this stage (the peak resident memory of the stage's process
 *             tree, from wait4()'s rusage, kept in <learn dir>/<kind>-<key> where the key hashes
 *             the stage's input files' bytes and its target), else the peak learned for its
 *             source's name and target (a rebuild after an edit), else the 80th percentile of
 *             the peaks of the same kind of stage seen in the last hour, each source counted once
 *             at its largest (<dir>/seen.<kind>; none while fewer than four sources finished:
 *             a file of small stubs compiled first for four targets says nothing of the kernels
 *             beside it), else a cautious default per kind (memgate_default_peak());
 *   brake     live memory: while other stages run, one waits when MemAvailable is below its
 *             estimate plus a small reserve, or when the kernel's memory pressure (PSI, "full
 *             avg10") is above MEMGATE_PSI_BRAKE;
 *   no deadlock  when no stage is running, the next one runs even over the budget (noted).
 *
 * A stage the kernel killed for memory (SIGKILL while /proc/vmstat's oom_kill count rose, or
 * NVSHIM_FAULT=memory_kill for tests) runs again, alone, with a larger estimate (gate.c).
 * What happened is appended to <dir>/journal, one line per stage, for `nvshim stats`:
 *   START_MS<TAB>END_MS<TAB>KIND<TAB>PEAK_KB<TAB>EST_KB<TAB>WAITED_MS<TAB>BUDGET_KB<TAB>FLAGS<TAB>PID
 * FLAGS: '-' or letters: o (ran alone over the budget), r (a rerun after a kill), k (killed).
 * PID: nvcc's parent (the nvshim that waits for it, for its log line); older lines lack it.
 *
 * This module uses nothing but libc, so that the gate can contain it. The parsers are pure and
 * tolerate any bytes (unit tests, fuzz/fuzz_memgate.c). Any failure fails open: the stage runs.
 */
#ifndef NVSHIM_MEMGATE_H
#define NVSHIM_MEMGATE_H

#include <stddef.h>
#include <stdint.h>

/* "<budget bytes, 0 auto>:<ledger dir>:<learn dir>", set by nvshim for nvcc (the gate). */
#define MEMGATE_ENV "NVSHIM_GATE_MEM"
/* PSI "full avg10" (percent) over which a stage waits while others run. */
#define MEMGATE_PSI_BRAKE 10.0
/* Entries of the journal kept: it is cut to its newer half past this size. */
#define MEMGATE_JOURNAL_MAX (1024 * 1024)

/* MEMGATE_HOST: the host compiler's compile of the generated source; MEMGATE_HOST_PP: its
 * preprocessing runs (-E), a fraction of it, so they are kept apart. */
enum memgate_kind { MEMGATE_OTHER, MEMGATE_CICC, MEMGATE_PTXAS, MEMGATE_NVLINK, MEMGATE_CUDAFE,
		    MEMGATE_HOST, MEMGATE_HOST_PP, MEMGATE_NKINDS };

struct memgate {
	long long budget; /* bytes; 0: auto */
	char ledger[4096];
	char learn[4096];
};

/* The name of a kind ("cicc", "ptxas", "nvlink", "cudafe++", "host", "host-E", "other"). */
const char *memgate_kind_name(enum memgate_kind k);
/* The kind of a stage command (what nvcc gives system()): its program's base name. */
enum memgate_kind memgate_stage_kind(const char *command);
/* A cautious peak for a kind, in bytes, when nothing was learned. */
long long memgate_default_peak(enum memgate_kind k);
/* The estimate: the learned peak, else the similar one, else the default (each <= 0: none). */
long long memgate_estimate(long long learned, long long similar, long long dflt);
/* The default budget: available less a reserve (a tenth of it, from 256 MiB to 2 GiB), at least
 * 256 MiB. */
long long memgate_default_budget(long long avail);

/* ---- parsers of outside bytes (each tolerates any bytes) ---- */

/* memory_budget: "" or "auto" -> 0 (auto); "off" -> -1; bytes ("1073741824", "24G", "512M",
 * "1.5T", K/M/G/T, an optional trailing B or iB); "N%" of `total` (bytes, > 0). Returns 0, or
 * -1 when malformed (or a percentage without a total, or over 100). */
int memgate_parse_budget(const char *text, long long total, long long *bytes);
/* /proc/meminfo: MemTotal and MemAvailable in bytes (-1 each when missing); 0, or -1 when
 * neither is there. */
int memgate_parse_meminfo(const char *text, long long *total, long long *avail);
/* /proc/pressure/memory: the "full avg10" figure, or -1. */
double memgate_parse_psi(const char *text);
/* A cgroup number file (memory.max, memory.current, memory.limit_in_bytes): bytes; 0 for "max"
 * or v1's "no limit" (a number of 2^50 or more); -1 malformed. */
long long memgate_parse_bytes(const char *text);
/* /proc/self/cgroup: the v2 path (the "0::PATH" line) into v2, the v1 memory controller's path
 * into v1 (each "" when absent). */
void memgate_parse_cgroup(const char *text, char *v2, size_t v2size, char *v1, size_t v1size);
/* /proc/vmstat: the oom_kill count, or -1. */
long long memgate_parse_vmstat(const char *text);
/* A learned-peak record "nvshim-peak 1 KB\n": 0 with *kb, else -1. */
int memgate_parse_record(const char *text, long long *kb);
/* The peaks seen of a kind, "nvshim-peaks 2 KB/SOURCE KB/SOURCE ...\n" (SOURCE: 16 hex digits,
 * the stage's source by name, memgate_stage_key()'s by_source; version 1 has peaks alone, each
 * of a source of its own, 0): their count (the first max kept in kb and source, which may be
 * NULL), else -1. */
int memgate_parse_peaks(const char *text, long long *kb, uint64_t *source, int max);
/* From n peaks (KB) and their sources (NULL: each its own): each source's largest peak (one
 * source's targets peak alike, and a build's first finished stages are often one small file's
 * targets); with fewer than MEMGATE_SEEN_SOURCES sources, -1 (nothing to go by: the cautious
 * default); else the one a fifth of them exceed (their 80th percentile), bytes. A build's
 * kernels differ widely, and the ledger counts a stage past its estimate at what it holds now. */
long long memgate_peaks_estimate(const long long *kb, const uint64_t *source, int n);
#define MEMGATE_SEEN_MAX 64
#define MEMGATE_SEEN_SOURCES 4
/* MEMGATE_ENV: 0 with g filled, else -1. */
int memgate_parse_spec(const char *text, struct memgate *g);
/* One journal line (without its newline): 0 with the fields, else -1. */
struct memgate_entry {
	long long start_ms, end_ms, peak_kb, est_kb, waited_ms, budget_kb;
	long long pid; /* 0: not recorded */
	char kind[16];
	char flags[8];
};
int memgate_parse_journal_line(const char *line, struct memgate_entry *e);

/* What the journal says of the stages that started in [from_ms, to_ms), for `nvshim stats`. */
struct memgate_summary {
	unsigned long long stages;
	long long peak_sum_kb;   /* the most, at one moment, of the peaks of the stages running then */
	long long largest_kb;    /* the largest stage's peak */
	char largest_kind[16];
	long long budget_kb;     /* the last budget */
	unsigned long long waits; /* stages that waited MEMGATE_WAIT_MS or more for memory */
	long long waited_ms;      /* and how long, summed */
	unsigned long long reruns, kills, over;
};
/* A wait shorter than this is the ledger's own bookkeeping, not the budget. */
#define MEMGATE_WAIT_MS 50
/* Adds the entries of a journal's text; entries whose line does not parse are skipped. */
void memgate_summarize(const char *journal, long long from_ms, long long to_ms, struct memgate_summary *sum);

/* ---- the machine ---- */

/* Total and available memory, bytes: /proc/meminfo bounded by the cgroup's limit (v2, else v1);
 * -1 each when unknown. */
void memgate_machine(long long *total, long long *avail);
/* PSI full avg10 for memory, or -1. */
double memgate_pressure(void);
/* The kernel's count of out-of-memory kills (/proc/vmstat), or -1. */
long long memgate_oom_kills(void);

/* ---- the ledger ---- */

struct memgate_ticket {
	int fd;           /* the held ledger entry, -1: none */
	char path[4200];
	long long budget; /* the budget it was admitted under, bytes */
	long long est;    /* the estimate it was admitted with (a cold one capped), bytes */
	unsigned waited_ms;
	int over;         /* ran alone over the budget */
};

/* Waits until a stage of `est` bytes fits (alone: until no other stage runs), then registers
 * it. Never fails: when the ledger cannot be used, the ticket holds nothing and the stage runs. */
void memgate_admit(const struct memgate *g, long long est, unsigned flags, struct memgate_ticket *t);
/* memgate_admit()'s flags: ALONE, it waits until no other stage runs (a rerun after a kill);
 * COLD, est is the default of its kind (nothing learned or seen): it counts as half the budget
 * at most, so that a small budget still runs two unknown stages side by side, the ledger
 * counting each at its resident memory as it grows. */
#define MEMGATE_ALONE 1u
#define MEMGATE_COLD 2u
/* Records in the ledger entry the process that runs the stage (the shell of its command): while
 * it runs, the entry counts as the larger of its estimate and that process tree's resident
 * memory now (its own and its children's, /proc), so a stage past its estimate holds back the
 * next ones. */
void memgate_running(struct memgate_ticket *t, long pid);
/* Gives the ledger entry back. */
void memgate_leave(struct memgate_ticket *t);
/* /proc/PID/statm: the resident pages (its second field), or -1. */
long long memgate_parse_statm(const char *text);

/* The learned keys of a stage: its kind, its target option and the bytes of its input files
 * (the paths it names that exist, but the one after -o), 0 when no input was read; in
 * *by_name (may be NULL) its kind, target and source by name (nvcc's --orig_src_path_name,
 * else its inputs' names without nvcc's temporary prefix, with the working directory), 0 when
 * it names none; and in *by_source (may be NULL) the same without the target (the stages of
 * one source for each of its targets), 0 when it names none. */
uint64_t memgate_stage_key(const char *command, enum memgate_kind kind, uint64_t *by_name, uint64_t *by_source);
/* The learned peak in bytes (-1 none), and recording one (bytes). */
long long memgate_recall(const struct memgate *g, enum memgate_kind kind, uint64_t key);
void memgate_learn(const struct memgate *g, enum memgate_kind kind, uint64_t key, long long peak);
/* Peaks of the same kind seen in the last hour (<ledger>/seen.<kind>, the last
 * MEMGATE_SEEN_MAX, with their sources): the estimate of a stage nothing was learned for,
 * bytes (-1 none: memgate_peaks_estimate()); and recording one (bytes, its by_source key). */
long long memgate_similar(const struct memgate *g, enum memgate_kind kind);
void memgate_seen(const struct memgate *g, enum memgate_kind kind, long long peak, uint64_t source);
/* Appends one journal line. */
void memgate_journal(const struct memgate *g, const struct memgate_entry *e);
/* Milliseconds of CLOCK_REALTIME. */
long long memgate_now_ms(void);

#endif
