/* config: nvshim's settings, with the origin of every value.
 *
 * Layers, lowest first; a later layer overrides an earlier one:
 *   built-in defaults
 *   <prefix>/etc/nvshim.ini     the installed defaults, found relative to the executable
 *   /etc/nvshim.ini             the machine
 *   $XDG_CONFIG_HOME/nvshim/nvshim.ini (else ~/.config/nvshim/nvshim.ini)   the user
 *   .nvshim.ini                 the project: the first one found from the working directory up
 *   NVSHIM_<NAME>               the environment
 *   --nvshim-<name>=<value>     options on the command line, removed before delegation
 *
 * Settings live in one item table (config_items) that drives the INI loader, the environment
 * loader, `nvshim config` and the documentation. INI files hold `name = value` lines, outside
 * any section or in [nvshim]; [module "GLOB"] sections hold rules for the modules pass (rules.h),
 * kept in module_rules in the order read. Items that choose which programs run (CONF_PROGRAM) are ignored in
 * a project file unless a user-level layer sets trust_project = true; CONF_NOT_PROJECT items
 * (trust_project, launcher) are ignored there always. CONF_NEUTRAL items cannot change what
 * nvcc builds (verbosity, the log, ...), so `nvshim fingerprint` leaves them out.
 *
 * Loading never fails: every problem becomes a warning, kept until config_report() prints
 * them once the final value of `strict` (which turns them into errors) is known.
 */
#ifndef NVSHIM_CONFIG_H
#define NVSHIM_CONFIG_H

#include <stddef.h>
#include <stdio.h>

#include "base/argv.h"
#include "base/diag.h"

enum config_layer {
	LAYER_DEFAULT,
	LAYER_INSTALL,
	LAYER_SYSTEM,
	LAYER_USER,
	LAYER_PROJECT,
	LAYER_ENV,
	LAYER_FLAG,
};

/* CONF_COUNT: auto, off or a number, in a size_t: 0 auto, (size_t)-1 off. */
enum config_type { CONF_STRING, CONF_PATH, CONF_BOOL, CONF_VERBOSITY, CONF_SIZE, CONF_CHOICE, CONF_COUNT };

enum config_item_flags {
	CONF_PROGRAM = 1 << 0,    /* names a program to run: not from a project file unless trusted */
	CONF_NOT_PROJECT = 1 << 1, /* never from a project file */
	CONF_NEUTRAL = 1 << 2,     /* cannot change what nvcc builds: left out of the fingerprint */
};

struct config {
	char *real_nvcc;
	char *launcher; /* ccache, sccache, a path: runs nvcc; never from a project file */
	enum verbosity verbosity;
	char *log_file;
	char *repeat_notes; /* once or always */
	int stats;
	int strict;
	char *cache_dir;
	int trust_project;
	size_t options_file_threshold;
	/* The targets pass. */
	int targets_unsupported;
	int targets_native;
	int targets_arch_specific;
	char *ensure_devices; /* sass, ptx or off */
	char *fallback_archs; /* "80,90" */
	char *driver_cuda;    /* "13.0", "off", or NULL/empty: this machine's (passes/targets.c) */
	char *when_no_arch;   /* keep or devices */
	char *targets_only;   /* "": off; "devices"; "80,90" */
	char *forward_ptx;    /* off or highest */
	char *split_compile;  /* auto, on or off (threads.h) */
	/* The link pass and CC/CXX mode. */
	int link_lcuda;
	char *host_cc;
	char *host_cxx;
	char *host_compilers;       /* auto or off (commands/env.c) */
	/* Crashes, resource errors and toolkit gates. */
	char *crash_dir;            /* "": <cache_dir>/crashes */
	int crash_bundles;
	char *crash_retry;          /* off or once */
	size_t crash_bundle_max_size;
	size_t crash_keep;
	int explain_resources;
	char *gates_file;           /* "": <prefix>/etc/nvshim/gates.ini, else the built-in table */
	char *silence_gates;        /* "name,name" or "all" */
	int explain_api;
	char *api_file;             /* "": <prefix>/etc/nvshim/api.ini, else the built-in table */
	char *compat;               /* auto or off (upgrade/compat.h) */
	char *cxx_dialect;          /* auto or off (upgrade/linefix.h) */
	/* The preload library (libnvshim-preload.so). */
	int nvrtc_no_arch;
	int nvrtc_clamp_arch;
	int nvrtc_retry_arch;
	int nvrtc_include_dirs;
	int nvrtc_builtins;
	char *nvrtc_header_roots;   /* "": $CUDA_HOME, $CUDA_PATH, $CONDA_PREFIX, $PYTHONPATH, /usr/local/cuda */
	int link_diagnose;
	int link_error_string;
	int explain_no_image;
	int explain_stub_kernels;
	/* The modules pass. */
	int modules;
	int modules_rules;
	int modules_scan;
	int modules_probe;
	int modules_stubs;
	size_t jobs;          /* probes at once; 0: the number of CPUs */
	char *rules_dir;      /* empty: <prefix>/etc/nvshim/modules.d */
	/* nvcc's --threads (threads.h). */
	size_t threads;       /* 0 auto, (size_t)-1 off (THREADS_OFF), N at most N */
	/* The memory budget of nvcc's heavy stages (buildwide/memgate.h): "" auto, "off", bytes,
	 * "24G", "60%". */
	char *memory_budget;

	/* Bookkeeping: not settings. */
	char *origin[64];          /* per item, "default", "FILE:LINE", "env NVSHIM_X", "option --nvshim-x" */
	enum config_layer layer[64];
	struct argv files;         /* config files that were read, in order */
	struct argv problems;      /* warnings not yet reported */
	struct argv module_rules;  /* [module "GLOB"] entries of the files read: GLOB, KEY, VALUE, ORIGIN */
};

struct config_item {
	const char *name;
	enum config_type type;
	size_t offset;
	unsigned flags;
	const char *env_alias; /* a second environment name, or NULL */
	const char *choices;   /* CONF_CHOICE: "a|b|c", the first is the default */
	const char *help;
};

extern const struct config_item config_items[];
extern const size_t config_nitems;

const struct config_item *config_item_find(const char *name);

/* Where the files of each layer are; NULL skips the layer. */
struct config_paths {
	const char *install;
	const char *system;
	const char *user;
	const char *project_start; /* the directory the project search starts from */
};

typedef const char *(*config_getenv_fn)(const char *name);
/* The process's environment (getenv). config_load_env() given this one reads the environment
 * once and looks nothing up when no NVSHIM_ variable is set. */
const char *config_getenv(const char *name);

/* Built-in defaults (cache_dir from XDG_CACHE_HOME or HOME). */
void config_init(struct config *c, config_getenv_fn env);
void config_release(struct config *c);

/* Loads one INI file as `layer`. Returns 1 if the file was read, 0 if absent. */
int config_load_file(struct config *c, const char *path, enum config_layer layer);
void config_load_env(struct config *c, config_getenv_fn env);
/* Removes every --nvshim-* argument from args, applying it. */
void config_take_flags(struct config *c, struct argv *args);
/* Everything above in order. */
void config_load(struct config *c, const struct config_paths *paths, config_getenv_fn env,
		 struct argv *args);
/* The default paths: install from the executable's directory, user from XDG/HOME. The strings
 * are xmalloc'ed into `store`, which owns them. */
void config_default_paths(struct config_paths *p, struct argv *store, const char *exe_dir,
			  config_getenv_fn env);

/* Sets diag's verbosity and strictness and prints the pending warnings. Returns the number of
 * problems reported. */
int config_report(struct config *c);

/* Sets one item from text, as the given layer would; returns 0, or -1 with *why set. */
int config_set(struct config *c, const struct config_item *item, const char *value,
	       enum config_layer layer, const char *origin, const char *base_dir, char **why);

/* The value of an item as text (xmalloc'ed). */
char *config_format(const struct config *c, const struct config_item *item);
/* `nvshim config`: every item, its value and its origin. */
void config_print(const struct config *c, FILE *out);
/* The documented INI file of every item and its default: config/nvshim.ini. */
void config_write_template(FILE *out);

#endif
