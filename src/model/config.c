#include "model/config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stddef.h>
#include <strings.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libiberty.h>

#include "model/rules.h"
#include "base/cache.h"
#include "base/fault.h"
#include "base/inifile.h"

#define ITEM(n, t, f, alias, h) { #n, t, offsetof(struct config, n), f, alias, NULL, h }
#define CHOICE(n, choices, h) { #n, CONF_CHOICE, offsetof(struct config, n), 0, NULL, choices, h }

const struct config_item config_items[] = {
	ITEM(real_nvcc, CONF_PATH, CONF_PROGRAM, "NVSHIM_NVCC",
	     "The nvcc to run. Empty: $CUDA_HOME or $CUDA_PATH/bin/nvcc, else the first nvcc on PATH "
	     "that is not nvshim, else /usr/local/cuda/bin/nvcc."),
	ITEM(launcher, CONF_STRING, CONF_PROGRAM | CONF_NOT_PROJECT | CONF_NEUTRAL, NULL,
	     "A compiler cache or distributor that runs nvcc: ccache, sccache, distcc (found on PATH) "
	     "or a path. nvshim runs LAUNCHER NVCC ARGS with the rewritten arguments for every "
	     "compilation (not for links, -E, -M, dry runs or information options), so the cache "
	     "sees the final target list. Never from a project file. Empty: nvcc runs directly."),
	ITEM(verbosity, CONF_VERBOSITY, CONF_NEUTRAL, NULL,
	     "How much nvshim says on stderr: quiet (errors only), normal (warnings and every "
	     "rewrite), verbose (also what it decided and why), debug."),
	ITEM(log_file, CONF_PATH, CONF_NEUTRAL, NULL,
	     "Append one JSON line per invocation here: argv in and out, notes, exit status, wall "
	     "time. Empty: no log."),
	{ "repeat_notes", CONF_CHOICE, offsetof(struct config, repeat_notes), CONF_NEUTRAL, NULL, "once|always",
	  "A note about the whole build (a target dropped or renamed: the targets rules) is said by "
	  "the first compile of a build that makes it, with a hint, and not by the others (once), "
	  "or by every compile (always). Notes about one source are always said; the log keeps "
	  "every note. A build is the build tool that started the compiles (make, ninja, cmake "
	  "--build, setup.py, pip), or NVSHIM_BUILD_ID." },
	ITEM(stats, CONF_BOOL, CONF_NEUTRAL, NULL,
	     "Keep a record of what nvshim did in cache_dir/stats (bounded), for `nvshim stats`: "
	     "invocations, rewrites by rule, targets dropped, renamed and upgraded, sources with "
	     "per-source decisions, probes, cache hits and the time nvshim added, per build and in "
	     "total."),
	ITEM(strict, CONF_BOOL, CONF_NEUTRAL, NULL,
	     "Turn every nvshim warning (a bad config line, an internal problem) into an error that "
	     "fails the command, for CI. Off: nvshim warns and runs nvcc unchanged (fail open)."),
	ITEM(cache_dir, CONF_PATH, CONF_NEUTRAL, NULL,
	     "Where nvshim keeps its caches and temporary files. Default: $XDG_CACHE_HOME/nvshim, "
	     "else ~/.cache/nvshim."),
	ITEM(trust_project, CONF_BOOL, CONF_NOT_PROJECT | CONF_NEUTRAL, NULL,
	     "Let a project's .nvshim.ini choose the nvcc to run (real_nvcc; never the launcher). Only "
	     "the system or user file, the environment or an option can set this."),
	ITEM(options_file_threshold, CONF_SIZE, CONF_NEUTRAL, NULL,
	     "A rewritten command line longer than this many bytes is passed to nvcc through a "
	     "private --options-file, removed afterwards."),
	ITEM(targets_unsupported, CONF_BOOL, 0, NULL,
	     "Drop GPU targets the installed nvcc does not accept, mapping renamed ones (sm_101 -> "
	     "sm_110 on 13.0); when none would remain, build for the GPUs or fallback_archs instead "
	     "(rule targets.unsupported)."),
	ITEM(targets_native, CONF_BOOL, 0, NULL,
	     "Turn -arch=native into explicit targets for the detected GPUs, or fallback_archs when "
	     "there are none (rule targets.native)."),
	ITEM(targets_arch_specific, CONF_BOOL, 0, NULL,
	     "Build -arch=sm_NNa as the single pass -gencode arch=compute_NNa,code=[sm_NNa,compute_NNa] "
	     "(nvcc also runs a plain compute_NN pass, which lacks the arch-specific features) "
	     "(rule targets.arch_specific)."),
	CHOICE(ensure_devices, "sass|ptx|off",
	       "When no requested target can run on an installed GPU, add that GPU's target: as SASS, "
	       "as PTX, or not at all (rule targets.ensure_devices)."),
	ITEM(driver_cuda, CONF_STRING, 0, NULL,
	     "The CUDA version of the GPU driver on the machines the build is for (13.0; empty: this "
	     "machine's driver, read from /proc/driver/nvidia/version when nvshim knows its branch). "
	     "A target list whose only code for a GPU (the detected ones, NVSHIM_DEVICES) is PTX "
	     "newer than that driver compiles gets the GPU's machine code added, which such a driver "
	     "loads (rule targets.driver); off: never."),
	ITEM(fallback_archs, CONF_STRING, 0, NULL,
	     "Targets to build when the GPUs are needed and there are none (a build machine): compute "
	     "capabilities such as 80,90."),
	CHOICE(when_no_arch, "keep|devices",
	       "A command line without any target option: keep nvcc's default, or build for the "
	       "detected GPUs (rule targets.no_arch)."),
	ITEM(targets_only, CONF_STRING, 0, NULL,
	     "Build only for these GPUs, whatever targets the project asks for: devices (the GPUs of "
	     "this machine, as nvshim doctor lists them; fallback_archs when there are none) or "
	     "compute capabilities such as 90 or 80,90. Each compile keeps, for each of these GPUs, "
	     "the requested targets the GPU would load (its best machine code, else its best PTX); "
	     "a GPU that no requested target runs on gets its own target. For a development build; "
	     "the modules pass still applies. Empty: off (rule targets.only)."),
	CHOICE(forward_ptx, "off|highest",
	       "highest: a compile whose targets have machine code but no PTX for the highest of them "
	       "also embeds that target's PTX (compute_NN, plain form), so that GPUs newer than the "
	       "list can run the code through the driver's JIT; off: the list as given (rule "
	       "targets.forward_ptx)."),
	CHOICE(split_compile, "auto|on|off",
	       "nvcc's --split-compile: cicc and ptxas split their optimizations over threads, each "
	       "stage taking as many as the CPUs free when it starts (it counts them with nvshim's other "
	       "compiles). auto: for the compiles whose targets targets_only chose (a build for this "
	       "machine, where a compile has one or two targets and most CPUs would wait); on: every "
	       "compile that leaves CPUs free; off: never. The code is the same (nvcc: minimal, if any, "
	       "impact); the machine code records the threads ptxas had, so such objects differ in "
	       "that note from build to build (rule threads.split)."),
	ITEM(link_lcuda, CONF_BOOL, 0, NULL,
	     "Add -lcuda to a link whose objects call the CUDA driver API (cuTensorMapEncodeTiled, "
	     "cuGetProcAddress, ...) and nothing on the line provides it, with the toolkit's stubs "
	     "directory when no libcuda.so is found (rule link.lcuda); run a link that fails on an "
	     "undefined driver symbol once more with -lcuda (rule link.retry)."),
	ITEM(host_cc, CONF_PATH, CONF_PROGRAM, NULL,
	     "The C compiler nvshim runs as cc, gcc or clang (CC mode). Empty: the same name on PATH, "
	     "past nvshim itself."),
	ITEM(host_cxx, CONF_PATH, CONF_PROGRAM, NULL,
	     "The C++ compiler nvshim runs as c++, g++ or clang++ (CXX mode), and gives nvcc as -ccbin "
	     "for CUDA sources. Empty: the same name on PATH, past nvshim itself."),
	CHOICE(host_compilers, "auto|off",
	       "What `nvshim env` and `nvshim run` put in front of the host compilers a build runs by "
	       "name: auto: CC mode (<prefix>/libexec/nvshim/cc on PATH after nvshim's nvcc: cc, c++, "
	       "gcc, g++, clang, clang++; the versioned gcc-N, g++-N, clang-N, clang++-N found on "
	       "PATH as links in $XDG_DATA_HOME/nvshim/cc, after it), so host sources compiled by a "
	       "Makefile's, Meson's, CMake's or configure's own compiler get what CC mode fixes; "
	       "off: only nvcc."),
	ITEM(crash_dir, CONF_PATH, 0, NULL,
	     "Where a crash of nvcc or one of its stages leaves a reproducer bundle, one private "
	     "folder per crash. Empty: <cache_dir>/crashes."),
	ITEM(crash_bundles, CONF_BOOL, 0, NULL,
	     "Write a reproducer bundle when nvcc or one of its stages (cicc, cudafe++, ptxas, "
	     "nvlink, fatbinary) dies of a signal: command lines, environment, versions, settings, "
	     "the preprocessed source, nvcc's stderr and repro.sh. nvshim replays nvcc's steps to "
	     "find the one that crashed, which takes about as long as the compile did."),
	CHOICE(crash_retry, "off|once",
	       "When a stage was killed by the system (SIGKILL, as the out-of-memory killer sends, or "
	       "SIGTERM), run nvcc once more, with a warning that says so."),
	ITEM(crash_bundle_max_size, CONF_SIZE, 0, NULL,
	     "The most bytes one reproducer bundle may take; files that would go over it (large "
	     "preprocessed sources first) are left out and listed in its README.txt."),
	ITEM(crash_keep, CONF_SIZE, 0, NULL,
	     "How many reproducer bundles to keep in crash_dir (at least the newest); older ones are "
	     "removed."),
	ITEM(explain_resources, CONF_BOOL, 0, NULL,
	     "When ptxas or cicc rejects a kernel for asking too much (shared memory, registers, "
	     "local memory, constant memory, parameter space), explain it: the kernel, the value, "
	     "the limit, the target and the usual remedy; so does a kernel that builds but whose "
	     "stack no launch accepts, and the preload library for NVRTC and JIT link logs."),
	ITEM(gates_file, CONF_PATH, 0, NULL,
	     "The table of known-bad combinations (toolkit gates) checked before nvcc runs. Empty: "
	     "<prefix>/etc/nvshim/gates.ini, else the table built into nvshim."),
	ITEM(silence_gates, CONF_STRING, 0, NULL,
	     "Toolkit gates not to check, by name (cutlass_old_toolkit,host_compiler_too_new), or "
	     "all."),
	ITEM(explain_api, CONF_BOOL, CONF_NEUTRAL, NULL,
	     "When a compile fails on a runtime or driver API that the toolkit in use removed or "
	     "changed (cudaDeviceProp::clockRate, cuCtxCreate, cudaMemPrefetchAsync, texture "
	     "references, ...), add one note per error naming the toolkit that changed it and the "
	     "replacement (rule api.removed, api.changed); CC mode then holds the host compiler's "
	     "stderr for C/C++ sources that include a CUDA header (cuda.h, cuda_runtime.h, cufft.h, "
	     "cublas, cusparse, cub, thrust), directly or through a project header."),
	ITEM(api_file, CONF_PATH, CONF_NEUTRAL, NULL,
	     "The table of removed and changed CUDA APIs. Empty: <prefix>/etc/nvshim/api.ini, else "
	     "the table built into nvshim."),
	CHOICE(compat, "auto|off",
	       "The compatibility layer (docs/compat.md): a compile that fails on CUDA APIs the "
	       "toolkit removed or changed that the API table marks `compat` (and on no entry "
	       "without it) is compiled once more with nvshim's headers force-included (removed struct fields read through a "
	       "private copy of the source and of the project headers that read them); if that passes, the build goes on, with a note (rule "
	       "compat.restored) naming the lasting fix. off: such a compile fails as nvcc's does."),
	CHOICE(cxx_dialect, "auto|off",
	       "CCCL 3's C++17 floor (docs/compat.md): a compile whose only errors are CCCL's "
	       "`requires at least C++17` (Thrust, CUB, libcu++, cooperative_groups.h under "
	       "-std=c++14 or older) runs once more with -std=c++17 (gnu++17 for a gnu++ dialect): "
	       "CCCL 3 compiles in no other dialect, and GCC and Clang keep one ABI across them; a "
	       "note (rule compat.dialect) names the lasting fix. Under compat = auto only. off: such "
	       "a compile fails as nvcc's does."),
	ITEM(nvrtc_no_arch, CONF_BOOL, 0, NULL,
	     "Preload library: an NVRTC compile without -arch is compiled for the GPU (NVSHIM_DEVICES, the "
	     "driver, detection, else fallback_archs) instead of NVRTC's oldest target (rule "
	     "nvrtc.no_arch)."),
	ITEM(nvrtc_clamp_arch, CONF_BOOL, 0, NULL,
	     "Preload library: an NVRTC -arch that the NVRTC in use does not support (newer than its "
	     "newest, older than its oldest) is replaced by the nearest one it supports (rule "
	     "nvrtc.clamp_arch)."),
	ITEM(nvrtc_retry_arch, CONF_BOOL, 0, NULL,
	     "Preload library: an NVRTC compile that fails because its target is too old for the code "
	     "(a bf16 wmma fragment, 'requires .target sm_NN', an arch-specific instruction) while the "
	     "GPU is newer is compiled once more for the GPU (rule nvrtc.retry_arch)."),
	ITEM(nvrtc_include_dirs, CONF_BOOL, 0, NULL,
	     "Preload library: an NVRTC compile that fails on a CUDA header is compiled once more with "
	     "the include directories of the CUDA that NVRTC came from (a toolkit's include and "
	     "include/cccl, the pip wheels' nvidia/cu13/include or nvidia/cuda_runtime and cuda_cccl, "
	     "conda's targets/<arch>/include); when those lack a part (CCCL), a complete set of the "
	     "same version from nvrtc_header_roots; when there is none, a note names the package to "
	     "install (rule nvrtc.include_dirs)."),
	ITEM(nvrtc_builtins, CONF_BOOL, 0, NULL,
	     "Preload library: an NVRTC compile that fails because NVRTC cannot open its builtins "
	     "library (libnvrtc-builtins.so of its own exact version, looked up by name: a copied or "
	     "bundled libnvrtc, LD_LIBRARY_PATH pointing at another toolkit) is compiled once more "
	     "after loading that file by its full path, found beside NVRTC, in nvrtc_header_roots, "
	     "the toolkits, conda and the package index's wheels under a Python prefix on PATH or "
	     "~/.local; when none is found, a note names the package to install (rule "
	     "nvrtc.builtins)."),
	ITEM(nvrtc_header_roots, CONF_STRING, 0, NULL,
	     "Preload library: where a complete set of CUDA headers may be when the ones beside NVRTC "
	     "lack a part: directories separated by ':', each a toolkit, a conda prefix or a "
	     "site-packages directory. Empty: $CUDA_HOME, $CUDA_PATH, $CONDA_PREFIX, the entries of "
	     "$PYTHONPATH, /usr/local/cuda-M.m, /usr/local/cuda."),
	ITEM(link_diagnose, CONF_BOOL, 0, NULL,
	     "Preload library: capture the JIT linker's error log (cuLink*, cuModuleLoadData*, "
	     "cuLibraryLoadData, nvJitLink) even when the program asks for none, and when it says "
	     "nothing useful, compile the NVRTC programs that went into the link for the GPU without "
	     "-rdc and show what ptxas says (rule link.diagnose)."),
	ITEM(link_error_string, CONF_BOOL, 0, NULL,
	     "Preload library: right after a link or load that nvshim explained, cuGetErrorString for "
	     "that error on that thread adds the explanation, so that programs that raise the "
	     "driver's message (CuPy, cuda-python) show it (rule link.error_string)."),
	ITEM(explain_no_image, CONF_BOOL, 0, NULL,
	     "Preload library: when the driver finds no kernel image for the GPU "
	     "(CUDA_ERROR_NO_BINARY_FOR_GPU, 'no kernel image is available') or PTX too new for it, at "
	     "a load, a kernel lookup or a launch, say once which library or program the code came "
	     "from, the targets it holds, the GPU's and the -gencode (TORCH_CUDA_ARCH_LIST, "
	     "CMAKE_CUDA_ARCHITECTURES) to add (rule noimage.explain)."),
	ITEM(explain_stub_kernels, CONF_BOOL, 0, NULL,
	     "Preload library: when a kernel a program looks up (cuModuleGetFunction, "
	     "cuLibraryGetKernel) is a stub in the machine code for the GPU (its body compiled out by "
	     "an #if __CUDA_ARCH__ guard: it does nothing or only traps there, and has a body on "
	     "another target of the same module), say so once (rule noimage.stub). A kernel trivial "
	     "on every target is by design and is not said."),
	ITEM(modules, CONF_BOOL, 0, NULL,
	     "The modules pass: give each CUDA source the requested targets it can build for, from "
	     "rules, a scan of its text and a probe when nvcc fails; upgrade sm_NN to sm_NNa where the "
	     "source needs it; split a command line whose sources need different lists."),
	ITEM(modules_rules, CONF_BOOL, 0, NULL,
	     "Apply [module \"GLOB\"] rules (min_arch, max_arch, require, drop, flags) from rules_dir "
	     "and the configuration files (rule modules.rules)."),
	ITEM(modules_scan, CONF_BOOL, 0, NULL,
	     "Scan each source and its project headers for what it certainly needs (inline PTX such as "
	     "cp.async or wgmma, bf16 wmma fragments, clusters, guarded #error) (rule modules.scan)."),
	ITEM(modules_probe, CONF_BOOL, 0, NULL,
	     "When nvcc fails with an architecture-related error, build each target on its own, keep "
	     "those that pass and retry once; verdicts are cached in cache_dir (rule modules.probe)."),
	ITEM(modules_stubs, CONF_BOOL, 0, NULL,
	     "After a compile, read the kernels nvcc wrote: a plain target (sm_90) on which kernels are "
	     "compiled out that its a/f form builds (CUTLASS-style feature guards) gets that form, plain "
	     "PTX kept; a target on which every kernel is an empty or trap stub while another target has "
	     "the code is dropped; some stubs get a warning. Needs modules_probe (rule modules.stubs)."),
	ITEM(jobs, CONF_SIZE, CONF_NEUTRAL, NULL,
	     "How many probe compiles run at once. 0: the number of CPUs."),
	ITEM(rules_dir, CONF_PATH, 0, NULL,
	     "A directory of *.ini files with [module] rules, read before the configuration files' own. "
	     "Empty: the installed <prefix>/etc/nvshim/modules.d."),
	ITEM(threads, CONF_COUNT, CONF_NEUTRAL, NULL,
	     "nvcc's --threads for a compile with several targets, when the command line has none: "
	     "auto chooses it from the CPUs, compilers and memory free at that moment (and GNU make's "
	     "jobserver), passed in NVCC_APPEND_FLAGS so that no cache key changes; N: auto, at most "
	     "N; off (or 1): nvcc's default, one pass at a time (rule threads.auto)."),
	ITEM(memory_budget, CONF_STRING, CONF_NEUTRAL, NULL,
	     "The memory nvcc's heavy stages (cicc, ptxas, nvlink, cudafe++, the host compiler) of a "
	     "whole build may use at once: each starts only when its expected peak (learned per source "
	     "content, target and stage, else from similar stages, else a cautious default) fits what is "
	     "left; a stage killed for memory runs again alone. Bytes, 24G, 512M, or a percentage of "
	     "the machine's memory (60%); empty or auto: the memory available when the build starts "
	     "less a reserve; off: no budget (rules memory.over, memory.rerun)."),
};
const size_t config_nitems = sizeof(config_items) / sizeof(config_items[0]);
_Static_assert(sizeof(config_items) / sizeof(config_items[0]) <= sizeof(((struct config *)0)->origin) /
		       sizeof(char *),
	       "struct config's origin[] is too small for the item table");

static const char *const layer_names[] = {
	[LAYER_DEFAULT] = "default", [LAYER_INSTALL] = "install", [LAYER_SYSTEM] = "system",
	[LAYER_USER] = "user",	     [LAYER_PROJECT] = "project", [LAYER_ENV] = "environment",
	[LAYER_FLAG] = "option",
};

static const char *const verbosity_names[] = { "quiet", "normal", "verbose", "debug" };

const struct config_item *config_item_find(const char *name)
{
	for (size_t i = 0; i < config_nitems; i++)
		if (!strcmp(config_items[i].name, name))
			return &config_items[i];
	return NULL;
}

static size_t item_index(const struct config_item *item) { return (size_t)(item - config_items); }

static void problem(struct config *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(struct config *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	argv_push_owned(&c->problems, xvasprintf(fmt, ap));
	va_end(ap);
}

/* The origin of every item at its default: one string, not owned by the config (the items
 * start there on every run; a copy each was a tenth of a pass-through run's instructions). */
static char default_origin[] = "default";

static void set_origin(struct config *c, const struct config_item *item, enum config_layer layer,
		       const char *origin)
{
	size_t i = item_index(item);
	if (c->origin[i] != default_origin)
		free(c->origin[i]);
	c->origin[i] = layer == LAYER_DEFAULT && !strcmp(origin, "default") ? default_origin : xstrdup(origin);
	c->layer[i] = layer;
}

void config_init(struct config *c, config_getenv_fn env)
{
	memset(c, 0, sizeof(*c));
	argv_init(&c->files);
	argv_init(&c->problems);
	c->verbosity = VERBOSITY_NORMAL;
	c->options_file_threshold = 65536;
	c->stats = 1;
	c->targets_unsupported = 1;
	c->targets_native = 1;
	c->targets_arch_specific = 1;
	c->modules = c->modules_rules = c->modules_scan = c->modules_probe = c->modules_stubs = 1;
	argv_init(&c->module_rules);
	c->link_lcuda = 1;
	c->crash_bundles = 1;
	c->crash_bundle_max_size = 64 * 1024 * 1024;
	c->crash_keep = 10;
	c->explain_resources = 1;
	c->explain_api = 1;
	c->nvrtc_no_arch = 1;
	c->nvrtc_clamp_arch = 1;
	c->nvrtc_retry_arch = 1;
	c->nvrtc_include_dirs = 1;
	c->nvrtc_builtins = 1;
	c->link_diagnose = 1;
	c->link_error_string = 1;
	c->explain_no_image = 1;
	c->explain_stub_kernels = 1;
	for (size_t i = 0; i < config_nitems; i++) {
		const struct config_item *item = &config_items[i];
		if (item->type == CONF_CHOICE)
			*(char **)((char *)c + item->offset) =
				xstrndup(item->choices, strcspn(item->choices, "|"));
	}
	const char *xdg = env ? env("XDG_CACHE_HOME") : NULL;
	const char *home = env ? env("HOME") : NULL;
	if (xdg && *xdg == '/')
		c->cache_dir = concat(xdg, "/nvshim", NULL);
	else if (home && *home)
		c->cache_dir = concat(home, "/.cache/nvshim", NULL);
	else
		c->cache_dir = xasprintf("/tmp/nvshim-%lu", (unsigned long)getuid());
	for (size_t i = 0; i < config_nitems; i++)
		set_origin(c, &config_items[i], LAYER_DEFAULT, "default");
}

void config_release(struct config *c)
{
	for (size_t i = 0; i < config_nitems; i++) {
		const struct config_item *item = &config_items[i];
		if (item->type == CONF_STRING || item->type == CONF_PATH || item->type == CONF_CHOICE)
			free(*(char **)((char *)c + item->offset));
	}
	for (size_t i = 0; i < config_nitems; i++)
		if (c->origin[i] != default_origin)
			free(c->origin[i]);
	argv_release(&c->files);
	argv_release(&c->problems);
	argv_release(&c->module_rules);
	memset(c, 0, sizeof(*c));
	argv_init(&c->files);
	argv_init(&c->problems);
	argv_init(&c->module_rules);
}

static int parse_bool(const char *v, int *out)
{
	static const char *const yes[] = { "1", "true", "yes", "on" };
	static const char *const no[] = { "0", "false", "no", "off" };
	for (size_t i = 0; i < 4; i++) {
		if (!strcasecmp(v, yes[i])) {
			*out = 1;
			return 0;
		}
		if (!strcasecmp(v, no[i])) {
			*out = 0;
			return 0;
		}
	}
	return -1;
}

static char *expand_path(const char *v, const char *base_dir)
{
	if (!*v)
		return xstrdup("");
	if (v[0] == '~' && (v[1] == '/' || v[1] == '\0')) {
		const char *home = getenv("HOME");
		if (home)
			return concat(home, v + 1, NULL);
	}
	if (v[0] != '/' && base_dir)
		return concat(base_dir, "/", v, NULL);
	return xstrdup(v);
}

int config_set(struct config *c, const struct config_item *item, const char *value,
	       enum config_layer layer, const char *origin, const char *base_dir, char **why)
{
	void *dest = (char *)c + item->offset;
	*why = NULL;

	if (layer == LAYER_PROJECT && (item->flags & CONF_NOT_PROJECT)) {
		*why = xasprintf("'%s' cannot be set by a project file; ignored", item->name);
		return -1;
	}
	if (layer == LAYER_PROJECT && (item->flags & CONF_PROGRAM) && !c->trust_project) {
		*why = xasprintf("'%s' chooses a program to run and a project file cannot set it "
				 "(trust_project = true in the user file allows it); ignored",
				 item->name);
		return -1;
	}
	switch (item->type) {
	case CONF_STRING:
	case CONF_PATH: {
		char *s = item->type == CONF_PATH ? expand_path(value, base_dir) : xstrdup(value);
		free(*(char **)dest);
		*(char **)dest = s;
		break;
	}
	case CONF_CHOICE: {
		size_t len = strlen(value);
		const char *p = item->choices;
		int ok = 0;
		while (*p) {
			size_t n = strcspn(p, "|");
			ok |= n == len && !strncmp(p, value, n);
			p += n + (p[n] == '|');
		}
		if (!ok) {
			*why = xasprintf("'%s' must be one of %s, not '%s'", item->name, item->choices, value);
			return -1;
		}
		free(*(char **)dest);
		*(char **)dest = xstrdup(value);
		break;
	}
	case CONF_BOOL: {
		int b;
		if (parse_bool(value, &b)) {
			*why = xasprintf("'%s' must be true or false, not '%s'", item->name, value);
			return -1;
		}
		*(int *)dest = b;
		break;
	}
	case CONF_VERBOSITY: {
		size_t i;
		for (i = 0; i < 4; i++)
			if (!strcasecmp(value, verbosity_names[i]) ||
			    (value[0] == (char)('0' + i) && !value[1]))
				break;
		if (i == 4) {
			*why = xasprintf("'%s' must be one of quiet, normal, verbose, debug, not '%s'",
					 item->name, value);
			return -1;
		}
		*(enum verbosity *)dest = (enum verbosity)i;
		break;
	}
	case CONF_COUNT:
		if (!strcasecmp(value, "auto")) {
			*(size_t *)dest = 0;
			break;
		}
		if (!strcasecmp(value, "off")) {
			*(size_t *)dest = (size_t)-1;
			break;
		}
		__attribute__((fallthrough)); /* a number */
	case CONF_SIZE: {
		char *end;
		errno = 0;
		unsigned long long n = strtoull(value, &end, 10);
		if (errno || end == value || *end || value[0] == '-' || n > SIZE_MAX ||
		    (item->type == CONF_COUNT && (!n || n >= SIZE_MAX))) {
			*why = item->type == CONF_COUNT
				       ? xasprintf("'%s' must be auto, off or a number from 1, not '%s'", item->name, value)
				       : xasprintf("'%s' must be a number of bytes, not '%s'", item->name, value);
			return -1;
		}
		*(size_t *)dest = (size_t)n;
		break;
	}
	}
	set_origin(c, item, layer, origin);
	return 0;
}

struct file_state {
	struct config *c;
	struct inifile ini;
	char *dir;
	enum config_layer layer;
	char *glob; /* of the [module "GLOB"] section being read */
};

static void on_section(struct inifile *f, char *line, void *user)
{
	(void)f;
	struct file_state *st = user;
	rules_intercept_section(line, &st->glob);
}

static int on_setting(void *user, const char *section, const char *name, const char *value)
{
	struct file_state *st = user;
	char *origin = xasprintf("%s:%d", st->ini.origin, st->ini.line);
	if (!strcmp(section, "module")) {
		const char *glob = st->glob;
		char *why = NULL;
		if (!glob) {
			problem(st->c, "%s: a [module] section needs a glob: [module \"GLOB\"]; '%s' ignored", origin,
				name);
		} else if (rules_check(name, value, &why)) {
			problem(st->c, "%s: %s", origin, why);
		} else if (st->layer == LAYER_PROJECT && !st->c->trust_project && !strcmp(name, "flags") &&
			   (strstr(value, "ccbin") || strstr(value, "bindir") || strstr(value, "arbin") ||
			    strstr(value, "archiver-binary"))) {
			problem(st->c, "%s: rule flags that choose a program to run cannot come from a project "
				"file (trust_project = true in the user file allows it); ignored", origin);
		} else {
			argv_push(&st->c->module_rules, glob);
			argv_push(&st->c->module_rules, name);
			argv_push(&st->c->module_rules, value);
			argv_push(&st->c->module_rules, origin);
		}
		free(why);
	} else if (*section && strcmp(section, "nvshim")) {
		problem(st->c, "%s: unknown section [%s]; '%s' ignored", origin, section, name);
	} else {
		const struct config_item *item = config_item_find(name);
		char *why = NULL;
		if (!item)
			problem(st->c, "%s: unknown setting '%s'", origin, name);
		else if (config_set(st->c, item, value, st->layer, origin, st->dir, &why))
			problem(st->c, "%s: %s", origin, why);
		free(why);
	}
	free(origin);
	return 1;
}

/* The offset of the first byte that no text file holds (NUL, a control character other than
 * tab, CR and LF), or -1. */
static long binary_offset(const char *text, size_t len, int *byte)
{
	/* control characters but tab, newline and carriage return; a NUL ends strcspn() too */
	static const char bad[] = "\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f\x10\x11\x12\x13\x14"
				  "\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f";
	size_t off = strcspn(text, bad);
	if (off >= len)
		return -1;
	*byte = (unsigned char)text[off];
	return (long)off;
}

/* 1 if the text holds nothing but blank lines, comments and [nvshim] section lines (as the
 * installed file that `nvshim config --template` writes does): there is nothing to parse. */
/* config/nvshim.ini as nvshim was built with it (generated/config_installed.c). */
extern const long long nvshim_installed_ini_size, nvshim_installed_ini_mtime;
extern const int nvshim_installed_ini_empty;

static int nothing_set(const char *text)
{
	for (const char *p = text; *p;) {
		p += strspn(p, " \t\r");
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len && *p != ';' && *p != '#') {
			if (len < 8 || strncmp(p, "[nvshim]", 8) || strspn(p + 8, " \t\r") != len - 8)
				return 0;
		}
		if (!end)
			break;
		p = end + 1;
	}
	return 1;
}

int config_load_file(struct config *c, const char *path, enum config_layer layer)
{
	struct file_state st = { c, INIFILE_INIT(path, &c->problems), NULL, layer, NULL };
	struct stat sb;

	if (!path || stat(path, &sb))
		return 0;
	if (S_ISDIR(sb.st_mode)) {
		problem(c, "%s: is a directory, not a configuration file", path);
		return 0;
	}
	if (fault_inject("config")) {
		problem(c, "%s: cannot read: injected fault (NVSHIM_FAULT)", path);
		return 0;
	}
	/* The installed defaults as installed (install keeps the time; the size and the time are
	 * those of the config/nvshim.ini nvshim was built with, which sets nothing): nothing to read
	 * or parse. An edited file has another time, and is read. */
	if (layer == LAYER_INSTALL && nvshim_installed_ini_empty && S_ISREG(sb.st_mode) &&
	    (long long)sb.st_size == nvshim_installed_ini_size &&
	    (long long)sb.st_mtim.tv_sec == nvshim_installed_ini_mtime) {
		argv_pushf(&c->files, "%s (%s)", path, layer_names[layer]);
		return 1;
	}
	/* Read once, in one piece: every invocation reads the installed file. */
	size_t len = 0;
	char *text = cache_read_len(path, &len);
	if (!text) {
		problem(c, "%s: cannot read: %s", path, strerror(errno));
		return 0;
	}
	int byte = 0;
	long off = binary_offset(text, len, &byte);
	if (off >= 0) {
		problem(c, "%s: not a text file (byte 0x%02x at offset %ld); ignored", path, byte, off);
		free(text);
		return 0;
	}
	const char *slash = strrchr(path, '/');
	st.dir = slash ? xstrndup(path, (size_t)(slash - path + (slash == path))) : NULL;
	st.ini.on_section = on_section;
	int rc = nothing_set(text) ? 0 : inifile_read_text(&st.ini, text, on_setting, &st);
	if (rc > 0)
		problem(c, "%s:%d: not a valid line (expected 'name = value' or '[section]')", path, rc);
	free(text);
	free(st.dir);
	free(st.glob);
	argv_pushf(&c->files, "%s (%s)", path, layer_names[layer]);
	return 1;
}

static char *env_name(const char *item)
{
	char *s = concat("NVSHIM_", item, NULL);
	for (char *p = s; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	return s;
}

const char *config_getenv(const char *name)
{
	return getenv(name);
}

/* Whether the process's environment has a variable whose name starts with NVSHIM_. */
static int environ_has_nvshim(void)
{
	for (char **e = environ; e && *e; e++)
		if (!strncmp(*e, "NVSHIM_", 7))
			return 1;
	return 0;
}

void config_load_env(struct config *c, config_getenv_fn env)
{
	/* Every name looked up starts with NVSHIM_ (the aliases too): with none in the process's
	 * environment there is nothing to look up (about 45,000 instructions on every run). */
	if (env == config_getenv && !environ_has_nvshim())
		return;
	for (size_t i = 0; i < config_nitems; i++) {
		const struct config_item *item = &config_items[i];
		char *name = env_name(item->name);
		const char *names[] = { item->env_alias, name };
		/* The alias first, so the canonical name wins when both are set. */
		for (size_t k = 0; k < 2; k++) {
			const char *v = names[k] ? env(names[k]) : NULL;
			char *why = NULL;
			if (!v)
				continue;
			char *origin = concat("env ", names[k], NULL);
			if (config_set(c, item, v, LAYER_ENV, origin, NULL, &why))
				problem(c, "%s: %s", names[k], why);
			free(why);
			free(origin);
		}
		free(name);
	}
}

void config_take_flags(struct config *c, struct argv *args)
{
	static const char prefix[] = "--nvshim-";
	for (size_t i = 0; i < args->n;) {
		const char *arg = args->v[i];
		if (strncmp(arg, prefix, sizeof(prefix) - 1)) {
			i++;
			continue;
		}
		const char *spec = arg + sizeof(prefix) - 1;
		const char *eq = strchr(spec, '=');
		char *name = eq ? xstrndup(spec, (size_t)(eq - spec)) : xstrdup(spec);
		for (char *p = name; *p; p++)
			if (*p == '-')
				*p = '_';
		const struct config_item *item = config_item_find(name);
		char *why = NULL;
		char *origin = eq ? xstrndup(arg, (size_t)(eq - arg)) : xstrdup(arg);
		char *shown = concat("option ", origin, NULL);
		if (!item)
			problem(c, "unknown option '%s' (nvshim options: --nvshim-<setting>=<value>)", origin);
		else if (!eq && item->type != CONF_BOOL)
			problem(c, "option '%s' needs a value: %s=<value>", arg, arg);
		else if (config_set(c, item, eq ? eq + 1 : "true", LAYER_FLAG, shown, NULL, &why))
			problem(c, "%s: %s", origin, why);
		free(why);
		free(shown);
		free(origin);
		free(name);
		argv_remove(args, i);
	}
}

void config_default_paths(struct config_paths *p, struct argv *store, const char *exe_dir,
			  config_getenv_fn env)
{
	memset(p, 0, sizeof(*p));
	argv_release(store);
	/* exe_dir is resolved (<prefix>/bin), so its parent is the prefix. */
	const char *slash = exe_dir ? strrchr(exe_dir, '/') : NULL;
	if (slash) {
		argv_pushf(store, "%.*s/etc/nvshim.ini", (int)(slash - exe_dir), exe_dir);
		p->install = store->v[store->n - 1];
	}
	p->system = "/etc/nvshim.ini";
	const char *xdg = env("XDG_CONFIG_HOME");
	const char *home = env("HOME");
	if (xdg && *xdg == '/')
		argv_pushf(store, "%s/nvshim/nvshim.ini", xdg);
	else if (home && *home)
		argv_pushf(store, "%s/.config/nvshim/nvshim.ini", home);
	else
		argv_push(store, "");
	p->user = *store->v[store->n - 1] ? store->v[store->n - 1] : NULL;
	char *cwd = getcwd(NULL, 0);
	if (cwd) {
		argv_push_owned(store, cwd);
		p->project_start = cwd;
	}
}

/* The first .nvshim.ini from dir upwards, or NULL (xmalloc'ed). */
static char *find_project_file(const char *dir)
{
	char *d = xstrdup(dir);
	for (;;) {
		char *path = concat(d, strcmp(d, "/") ? "/" : "", ".nvshim.ini", NULL);
		struct stat sb;
		if (!stat(path, &sb) && S_ISREG(sb.st_mode)) {
			free(d);
			return path;
		}
		free(path);
		char *slash = strrchr(d, '/');
		if (!slash || !strcmp(d, "/"))
			break;
		if (slash == d)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	free(d);
	return NULL;
}

/* trust_project decides how the project file is read, and the environment and options that may
 * set it are applied after that file: read them ahead, silently (they are applied, and their
 * problems reported, in their turn). */
static void look_ahead_trust(struct config *c, config_getenv_fn env, const struct argv *args)
{
	const char *v = env ? env("NVSHIM_TRUST_PROJECT") : NULL;
	int b;
	if (v && !parse_bool(v, &b))
		c->trust_project = b;
	for (size_t i = 0; args && i < args->n; i++) {
		const char *a = args->v[i];
		if (strncmp(a, "--nvshim-trust", 14) || (a[14] != '-' && a[14] != '_') ||
		    strncmp(a + 15, "project", 7) || (a[22] && a[22] != '='))
			continue;
		b = 1;
		if (!a[22] || !parse_bool(a + 23, &b))
			c->trust_project = b;
	}
}

void config_load(struct config *c, const struct config_paths *paths, config_getenv_fn env,
		 struct argv *args)
{
	config_load_file(c, paths->install, LAYER_INSTALL);
	config_load_file(c, paths->system, LAYER_SYSTEM);
	config_load_file(c, paths->user, LAYER_USER);
	look_ahead_trust(c, env, args);
	if (paths->project_start) {
		char *project = find_project_file(paths->project_start);
		if (project)
			config_load_file(c, project, LAYER_PROJECT);
		free(project);
	}
	config_load_env(c, env);
	if (args)
		config_take_flags(c, args);
}

int config_report(struct config *c)
{
	diag_set_verbosity(c->verbosity);
	diag_set_strict(c->strict);
	int n = (int)c->problems.n;
	for (size_t i = 0; i < c->problems.n; i++)
		warning("%s", c->problems.v[i]);
	argv_release(&c->problems);
	return n;
}

char *config_format(const struct config *c, const struct config_item *item)
{
	const void *src = (const char *)c + item->offset;
	switch (item->type) {
	case CONF_STRING:
	case CONF_PATH:
	case CONF_CHOICE:
		return xstrdup(*(char *const *)src ? *(char *const *)src : "");
	case CONF_BOOL:
		return xstrdup(*(const int *)src ? "true" : "false");
	case CONF_VERBOSITY:
		return xstrdup(verbosity_names[*(const enum verbosity *)src]);
	case CONF_SIZE:
		return xasprintf("%lu", (unsigned long)*(const size_t *)src);
	case CONF_COUNT:
		if (!*(const size_t *)src)
			return xstrdup("auto");
		if (*(const size_t *)src == (size_t)-1)
			return xstrdup("off");
		return xasprintf("%lu", (unsigned long)*(const size_t *)src);
	}
	BUG("config item %s has no type", item->name);
}

void config_print(const struct config *c, FILE *out)
{
	for (size_t i = 0; i < config_nitems; i++) {
		char *v = config_format(c, &config_items[i]);
		fprintf(out, "%-24s = %-32s # %s\n", config_items[i].name, v, c->origin[i]);
		free(v);
	}
	fprintf(out, "\n# files read, lowest first:\n");
	if (!c->files.n)
		fprintf(out, "#   (none)\n");
	for (size_t i = 0; i < c->files.n; i++)
		fprintf(out, "#   %s\n", c->files.v[i]);
	if (c->module_rules.n)
		fprintf(out, "\n# [module] rules of these files (rules_dir's are read when a compile needs them):\n");
	for (size_t i = 0; i + 3 < c->module_rules.n; i += 4)
		fprintf(out, "#   [module \"%s\"] %s = %s  (%s)\n", c->module_rules.v[i], c->module_rules.v[i + 1],
			c->module_rules.v[i + 2], c->module_rules.v[i + 3]);
}

void config_write_template(FILE *out)
{
	struct config defaults;
	config_init(&defaults, NULL);
	fprintf(out, "; nvshim configuration: the installed defaults (<prefix>/etc/nvshim.ini).\n"
		     ";\n"
		     "; Later files and settings override earlier ones, lowest first:\n"
		     ";   this file < /etc/nvshim.ini < ~/.config/nvshim/nvshim.ini < a project's "
		     ".nvshim.ini\n"
		     ";   < NVSHIM_<NAME> environment variables < --nvshim-<name>=<value> options.\n"
		     "; `nvshim config` prints every value and where it came from. Each setting "
		     "below is\n"
		     "; commented out and shows its built-in default. This file is generated by\n"
		     "; `nvshim config --template` from nvshim's settings table.\n\n[nvshim]\n");
	for (size_t i = 0; i < config_nitems; i++) {
		const struct config_item *item = &config_items[i];
		const char *h = item->help;
		fprintf(out, "\n");
		while (*h) {
			size_t len = strlen(h);
			if (len > 90) {
				len = 90;
				while (len > 0 && h[len] != ' ')
					len--;
			}
			fprintf(out, "; %.*s\n", (int)len, h);
			h += len;
			while (*h == ' ')
				h++;
		}
		char *v = item->offset == offsetof(struct config, cache_dir) ? xstrdup("")
									     : config_format(&defaults, item);
		fprintf(out, ";%s =%s%s\n", item->name, *v ? " " : "", v);
		free(v);
	}
	config_release(&defaults);
}
