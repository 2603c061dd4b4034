/* session: what every mode and command starts from.
 *
 * A session is who nvshim is (locate.h: its executable and directory), the settings (config.h,
 * every layer read, `--nvshim-*` options taken out) and the arguments left for the tool. Around
 * it, the pieces every mode shares:
 *   - the files of libexec/nvshim (the GPU helper, the preload library);
 *   - the GPUs, read only when a pass first asks (session_devices_load());
 *   - the loop guard: the depth exported to the tools nvshim starts, and the error when an
 *     nvshim finds itself started by its own nvcc;
 *   - the launcher setting put in front of nvcc;
 *   - after a run: the log line (log_file) and the exit status strict mode makes of it;
 *   - the record for `nvshim stats` (stats.h), written after the run or, when nvshim replaces
 *     itself with the tool, just before.
 */
#ifndef NVSHIM_SESSION_H
#define NVSHIM_SESSION_H

#include <time.h>

#include "base/argv.h"
#include "model/config.h"
#include "machine/devices.h"
#include "machine/locate.h"
#include "model/plan.h"

struct session {
	double start_ms;
	struct self self;
	struct config cfg;
	struct argv path_store;
	struct config_paths paths;
	struct argv args; /* args[0..n) less nvshim's own options */
	int no_record;    /* an information query (--version, --help): no stats record */
	/* The guard on every success (session_guard()): the files the user's command names as
	 * its outputs, the command that writes them as the real tool would (empty: no guard), and
	 * the moment this invocation started, on the clock file times come from. */
	struct argv outputs;
	struct argv fallback;
	struct timespec started;
};

/* getenv(), as the loaders that take an environment function want it. */
const char *session_env(const char *name);

/* Reads the settings for args[0..n) and reports their problems (warnings). A cache_dir that
 * cannot be used is emptied, with a warning. */
void session_init(struct session *s, int n, char **args);
/* The real nvcc, found without a word when there is none (NULL then; xmalloc'ed): a C/C++
 * compile or link must not complain about a missing toolkit. `arg` is the session. */
char *session_quiet_nvcc(void *arg);
/* The same; with report 0, nothing is said (a tool nvshim started runs quietly). */
void session_init_report(struct session *s, int n, char **args, int report);
void session_release(struct session *s);

/* A file of libexec/nvshim that access() allows for `mode`: beside nvshim in a build tree, in
 * <prefix>/libexec/nvshim when installed. Its resolved path (xmalloc'ed), or NULL. */
char *session_libexec_file(const struct self *self, const char *name, int mode);
/* libexec/nvshim/nvshim-devices and libexec/nvshim/libnvshim-preload.so, or NULL. */
char *session_devices_helper(const struct self *self);
char *session_preload_library(const struct self *self);
/* libexec/nvshim/libnvshim-gate.so (preload/gate.h), or NULL. */
char *session_gate_library(const struct self *self);

/* The GPUs, read at the first session_devices_load(&sd) (devices.h: the override, the cache,
 * the helper). */
struct session_devices {
	const struct session *s;
	struct devices d;
	int loaded;
};
void session_devices_init(struct session_devices *sd, const struct session *s);
void session_devices_release(struct session_devices *sd);
/* arg: a struct session_devices (the shape the passes' contexts take). */
const struct devices *session_devices_load(void *arg);

/* Exports the depth the tools nvshim starts will see (locate.h: LOCATE_DEPTH_VAR). */
void session_enter_child(void);
/* 0, or -1 after an error when this nvshim was started by an nvcc nvshim started. */
int session_loop_guard(void);

/* Puts the launcher setting's program in front of nvcc when `wanted`. Returns 0, or -1 after a
 * warning when the launcher cannot be found (nvcc then runs without it). */
int session_add_launcher(const struct session *s, int wanted, struct plan *plan);

/* Marks the moment the real tool is about to start (the first call counts): the time before it
 * is the time nvshim added. */
void session_tool_starting(void);
/* The record of this invocation for `nvshim stats` (the stats setting, cache_dir): its notes,
 * probes, cache hits, time added and build. Never fails a build. Information queries
 * (no_record) have none: nvshim changes nothing in them, and the build lookup and the journal's
 * lock are most of what nvshim adds before it becomes nvcc. */
void session_record(const struct session *s, const struct plan *plan);

/* The guard on every success of a command nvshim changed (rewritten, split, retried: `changed`):
 * when `status` is 0 and an output of s->outputs is missing or older than s->started, that is
 * nvshim's fault. It says so in one error line naming the file and the layer that acted last
 * (from the plan's notes, else `hint`: the rule of a layer that acted without a note, such as
 * "modules.split"; a note `outputs.missing` goes to the log and `nvshim stats`), runs
 * s->fallback (the user's command, as the real tool would run it) and returns its status.
 * Otherwise returns `status`. A stat() per output is all it costs. */
int session_guard(struct session *s, struct plan *plan, int changed, int status, const char *hint);
/* Whether the guard would look at this plan's run: something changed and there is a fallback.
 * Such a run is waited for (nvshim does not replace itself with the tool). */
int session_guarded(const struct session *s, const struct plan *plan, int changed);

/* After the tool ran: the log line (log_file) for the command nvshim was given (argv_in) and
 * the one it ran; returns the exit status (1 when strict made a warning an error). */
int session_ran(const struct session *s, const struct plan *plan, const struct argv *argv_in, int status);

#endif
