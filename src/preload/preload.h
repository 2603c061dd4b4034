/* preload: libnvshim-preload.so, the library `nvshim run -- CMD` puts in front of a program
 * (LD_PRELOAD) to fix its NVRTC compiles and explain its JIT link failures without changing it.
 *
 * Interception. The library defines the functions of PRELOAD_HOOKS below, so a program linked
 * against libnvrtc, libnvJitLink or libcuda calls them first (symbol interposition); each calls
 * the real function of the library that comes next in the lookup order. It also defines dlsym
 * and dlvsym: a lookup of one of those names on a dlopen handle (CuPy 14, PyTorch, Jitify 2) or
 * with RTLD_DEFAULT (cuda-bindings 13) gets a wrapper bound to the library the real lookup found,
 * and cuGetProcAddress/_v2 hands out wrappers for the driver functions (the driver picks the
 * version from the caller's cudaVersion; nvshim maps what it returned). Every other lookup, and
 * every RTLD_NEXT lookup, is forwarded to glibc's dlsym as a tail call, so glibc still sees the
 * caller's return address (RTLD_NEXT and RTLD_DEFAULT depend on it); that takes a few lines of
 * assembly on x86-64 (elsewhere the forward is an ordinary call, and lookups relative to the
 * caller become relative to the library). glibc's own dlsym is found without dlsym: glibc 2.34
 * removed __libc_dlsym, and the library's dlvsym shadows glibc's for its own calls too, so it
 * reads libc's dynamic symbol table (dlsym@GLIBC_*) from the loaded objects, with no call and
 * no allocation. Forwarding allocates nothing and takes no lock, so a malloc that calls dlsym is
 * safe.
 *
 * Libraries. Each real library (an NVRTC, a libnvJitLink, libcuda) gets a slot: the library
 * opens it itself (dlopen RTLD_NOLOAD, which also keeps it loaded) and looks up every function
 * it needs there, so several NVRTC versions in one process each get their own wrappers. With
 * more libraries than slots, later ones are left alone (their functions pass through).
 *
 * NVRTC rules, in nvrtcCompileProgram, each named and with a setting (config.h):
 *   nvrtc.no_arch      no -arch: the GPU's compute_NN (NVSHIM_DEVICES, else the driver when the
 *                      program has initialised it, else nvshim-devices, else fallback_archs),
 *                      when it is newer than NVRTC's default
 *   nvrtc.clamp_arch   an -arch this NVRTC does not support: its nearest supported one
 *   nvrtc.include_dirs the compile failed on a CUDA header: one retry with the include directories
 *                      of the CUDA this NVRTC came from (headers.h: a toolkit, the cu12 or cu13
 *                      wheels, conda), or a complete set of the same version elsewhere when those
 *                      lack a part; when there is none, a note names the package to install
 *   nvrtc.retry_arch   the compile failed in an arch-classified way (rtc.h) and the GPU is newer
 *                      than the target (or needs its arch-specific form): one retry for the GPU
 * A compile that works as given is compiled once, with the caller's options untouched. Every
 * rule that fires is said on stderr (once per distinct message whatever the program's name;
 * every time at verbose) and
 * appended to the program's log (nvrtcGetProgramLogSize/nvrtcGetProgramLog). When a retry fails
 * too, the log is the first attempt's, with the notes, and the first result is returned.
 *
 * Link diagnostics (link.diagnose): cuLinkCreate(_v2) and cuModuleLoadDataEx/cuLibraryLoadData
 * get an error log buffer when the caller passed none; a failed cuModuleLoadData is loaded once
 * more through cuModuleLoadDataEx to read its log; nvJitLink's error log is read after a failed
 * nvJitLinkComplete. A log the caller did not ask for is printed on stderr. When the log is
 * empty or vague, the NVRTC programs whose outputs went into the link (registry.h) are compiled
 * again for the GPU's real target (the link's CU_JIT_TARGET or -arch, else the current context's
 * device, else the GPUs) without relocatable code, so that ptxas checks them, and what it says is
 * printed, appended to the caller's log buffer and to nvJitLink's error log, and (link.error_string)
 * added to cuGetErrorString's text for that error on that thread. The original result is always
 * returned.
 *
 * Fail open: any internal problem leaves the call as the program made it.
 */
#ifndef NVSHIM_PRELOAD_H
#define NVSHIM_PRELOAD_H

#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "base/argv.h"
#include "model/config.h"
#include "preload/headers.h"

#define NVSHIM_EXPORT __attribute__((visibility("default")))

enum preload_kind { PRELOAD_NVRTC, PRELOAD_DRIVER, PRELOAD_NVJITLINK, PRELOAD_NKINDS };

/* ---- publication without a lock ----------------------------------------------------------------
 * What the hooks read on every call (the library slots, which library each caller binds to, the
 * NVRTC facts, glibc's dlsym) is written once, then published by a release store or a
 * compare-and-swap and read by an acquire load: no lock on the fast path, and none held across
 * dlopen or dlsym. Helgrind does not see the order C11 atomics give (nor pthread_once's), so the
 * same places tell it through valgrind's client requests: PL_HG_BEFORE where a value is
 * published, PL_HG_AFTER where it is seen, and each published word is kept out of its race checks
 * (every access to it is atomic). Outside valgrind a client request is a few register
 * instructions; without valgrind's headers they are nothing. */
#if defined(__has_include)
#if __has_include(<valgrind/helgrind.h>)
#include <valgrind/helgrind.h>
#define PL_HG_BEFORE(p) ANNOTATE_HAPPENS_BEFORE(p)
#define PL_HG_AFTER(p) ANNOTATE_HAPPENS_AFTER(p)
#define PL_HG_ATOMIC(p) VALGRIND_HG_DISABLE_CHECKING((p), sizeof(*(p)))
#endif
#endif
#ifndef PL_HG_BEFORE
#define PL_HG_BEFORE(p) ((void)(p))
#define PL_HG_AFTER(p) ((void)(p))
#define PL_HG_ATOMIC(p) ((void)(p))
#endif

/* *p = v, and everything this thread wrote before is seen by a thread that reads v with PL_SEEN. */
#define PL_PUBLISH(p, v)                                                                            \
	do {                                                                                          \
		PL_HG_ATOMIC(p);                                                                      \
		PL_HG_BEFORE(p);                                                                      \
		__atomic_store_n((p), (v), __ATOMIC_RELEASE);                                         \
	} while (0)
/* *p (acquire): a value published with PL_PUBLISH or PL_PUBLISH_ONCE. */
#define PL_SEEN(p)                                                                                  \
	__extension__({                                                                               \
		__typeof__(*(p)) pl_seen_ = __atomic_load_n((p), __ATOMIC_ACQUIRE);                    \
		PL_HG_AFTER(p);                                                                       \
		pl_seen_;                                                                             \
	})
/* *p = v unless *p is set (nonzero) already: the first value published stays. Evaluates to the
 * value *p holds. */
#define PL_PUBLISH_ONCE(p, v)                                                                       \
	__extension__({                                                                               \
		__typeof__(*(p)) pl_new_ = (v), pl_old_ = 0;                                          \
		PL_HG_ATOMIC(p);                                                                      \
		PL_HG_BEFORE(p);                                                                      \
		if (__atomic_compare_exchange_n((p), &pl_old_, pl_new_, 0, __ATOMIC_ACQ_REL,          \
						__ATOMIC_ACQUIRE))                                    \
			pl_old_ = pl_new_;                                                            \
		PL_HG_AFTER(p);                                                                       \
		pl_old_;                                                                              \
	})
/* pthread_once(o, init), its order told to helgrind: init ends with PL_HG_BEFORE(o). */
#define PL_ONCE(o, init)                                                                            \
	do {                                                                                          \
		pthread_once((o), (init));                                                            \
		PL_HG_AFTER(o);                                                                       \
	} while (0)

/* Result codes nvshim needs (the libraries' ABI, so that no toolkit header is needed). */
#define PL_NVRTC_SUCCESS 0
#define PL_NVRTC_ERROR_COMPILATION 6
#define PL_NVRTC_ERROR_BUILTIN 7 /* NVRTC_ERROR_BUILTIN_OPERATION_FAILURE */
#define PL_NVRTC_ERROR_INTERNAL 11
#define PL_CUDA_SUCCESS 0
#define PL_CUDA_ERROR_NOT_INITIALIZED 3
#define PL_NVJITLINK_SUCCESS 0
#define PL_NVJITLINK_ERROR_INTERNAL 6
/* CUjit_option values. */
#define PL_CU_JIT_ERROR_LOG_BUFFER 5
#define PL_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6
#define PL_CU_JIT_TARGET 9

#define PL_UNPACK(...) __VA_ARGS__

/* cuLaunchKernel's parameters (and its _ptsz form's). */
#define PL_LAUNCH_PARAMS                                                                            \
	(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,       \
	 unsigned shared, void *stream, void **params, void **extra)
#define PL_LAUNCH_ARGS (f, gx, gy, gz, bx, by, bz, shared, stream, params, extra)

/* The versioned names of nvJitLink's functions (nvJitLink.h calls __nvJitLinkCreate_13_0). */
#define PL_NVJITLINK_VERSIONS(X, HOOK)                                                              \
	X(HOOK, 12_0) X(HOOK, 12_1) X(HOOK, 12_2) X(HOOK, 12_3) X(HOOK, 12_4) X(HOOK, 12_5)         \
	X(HOOK, 12_6) X(HOOK, 12_7) X(HOOK, 12_8) X(HOOK, 12_9) X(HOOK, 13_0) X(HOOK, 13_1)         \
	X(HOOK, 13_2)

#define PL_NVJITLINK_NAMED(HOOK, v)                                                                 \
	HOOK(PRELOAD_NVJITLINK, __nvJitLinkCreate_##v, preload_nvJitLinkCreate, int,                \
	     PL_NVJITLINK_ERROR_INTERNAL, (void **h, uint32_t n, const char *const *o), (h, n, o))    \
	HOOK(PRELOAD_NVJITLINK, __nvJitLinkDestroy_##v, preload_nvJitLinkDestroy, int,              \
	     PL_NVJITLINK_ERROR_INTERNAL, (void **h), (h))                                            \
	HOOK(PRELOAD_NVJITLINK, __nvJitLinkAddData_##v, preload_nvJitLinkAddData, int,              \
	     PL_NVJITLINK_ERROR_INTERNAL,                                                             \
	     (void *h, int type, const void *data, size_t size, const char *name),                    \
	     (h, type, data, size, name))                                                             \
	HOOK(PRELOAD_NVJITLINK, __nvJitLinkAddFile_##v, preload_nvJitLinkAddFile, int,              \
	     PL_NVJITLINK_ERROR_INTERNAL, (void *h, int type, const char *file), (h, type, file))     \
	HOOK(PRELOAD_NVJITLINK, __nvJitLinkComplete_##v, preload_nvJitLinkComplete, int,            \
	     PL_NVJITLINK_ERROR_INTERNAL, (void *h), (h))                                             \
	HOOK(PRELOAD_NVJITLINK, __nvJitLinkGetErrorLogSize_##v, preload_nvJitLinkGetErrorLogSize,   \
	     int, PL_NVJITLINK_ERROR_INTERNAL, (void *h, size_t *size), (h, size))                    \
	HOOK(PRELOAD_NVJITLINK, __nvJitLinkGetErrorLog_##v, preload_nvJitLinkGetErrorLog, int,      \
	     PL_NVJITLINK_ERROR_INTERNAL, (void *h, char *log), (h, log))

/* Every intercepted function: HOOK(kind, name, implementation, return type, result when no real
 * library is there, (parameters), (arguments)); and the functions nvshim only calls:
 * REAL(kind, name). */
#define PRELOAD_HOOKS(HOOK, REAL)                                                                   \
	HOOK(PRELOAD_NVRTC, nvrtcCreateProgram, preload_nvrtcCreateProgram, int,                     \
	     PL_NVRTC_ERROR_INTERNAL,                                                                 \
	     (void **prog, const char *src, const char *name, int n, const char *const *headers,      \
	      const char *const *include_names),                                                      \
	     (prog, src, name, n, headers, include_names))                                            \
	HOOK(PRELOAD_NVRTC, nvrtcDestroyProgram, preload_nvrtcDestroyProgram, int,                   \
	     PL_NVRTC_ERROR_INTERNAL, (void **prog), (prog))                                          \
	HOOK(PRELOAD_NVRTC, nvrtcCompileProgram, preload_nvrtcCompileProgram, int,                   \
	     PL_NVRTC_ERROR_INTERNAL, (void *prog, int n, const char *const *options),                \
	     (prog, n, options))                                                                      \
	HOOK(PRELOAD_NVRTC, nvrtcAddNameExpression, preload_nvrtcAddNameExpression, int,             \
	     PL_NVRTC_ERROR_INTERNAL, (void *prog, const char *const expr), (prog, expr))             \
	HOOK(PRELOAD_NVRTC, nvrtcGetPTX, preload_nvrtcGetPTX, int, PL_NVRTC_ERROR_INTERNAL,          \
	     (void *prog, char *out), (prog, out))                                                    \
	HOOK(PRELOAD_NVRTC, nvrtcGetCUBIN, preload_nvrtcGetCUBIN, int, PL_NVRTC_ERROR_INTERNAL,      \
	     (void *prog, char *out), (prog, out))                                                    \
	HOOK(PRELOAD_NVRTC, nvrtcGetLTOIR, preload_nvrtcGetLTOIR, int, PL_NVRTC_ERROR_INTERNAL,      \
	     (void *prog, char *out), (prog, out))                                                    \
	HOOK(PRELOAD_NVRTC, nvrtcGetProgramLogSize, preload_nvrtcGetProgramLogSize, int,             \
	     PL_NVRTC_ERROR_INTERNAL, (void *prog, size_t *size), (prog, size))                       \
	HOOK(PRELOAD_NVRTC, nvrtcGetProgramLog, preload_nvrtcGetProgramLog, int,                     \
	     PL_NVRTC_ERROR_INTERNAL, (void *prog, char *log), (prog, log))                           \
	REAL(PRELOAD_NVRTC, nvrtcGetPTXSize)                                                          \
	REAL(PRELOAD_NVRTC, nvrtcGetCUBINSize)                                                        \
	REAL(PRELOAD_NVRTC, nvrtcGetLTOIRSize)                                                        \
	REAL(PRELOAD_NVRTC, nvrtcVersion)                                                             \
	REAL(PRELOAD_NVRTC, nvrtcGetNumSupportedArchs)                                                \
	REAL(PRELOAD_NVRTC, nvrtcGetSupportedArchs)                                                   \
	HOOK(PRELOAD_DRIVER, cuLinkCreate, preload_cuLinkCreate, int, PL_CUDA_ERROR_NOT_INITIALIZED, \
	     (unsigned n, int *options, void **values, void **state), (n, options, values, state))    \
	HOOK(PRELOAD_DRIVER, cuLinkCreate_v2, preload_cuLinkCreate, int,                             \
	     PL_CUDA_ERROR_NOT_INITIALIZED,                                                           \
	     (unsigned n, int *options, void **values, void **state), (n, options, values, state))    \
	HOOK(PRELOAD_DRIVER, cuLinkAddData, preload_cuLinkAddData, int,                              \
	     PL_CUDA_ERROR_NOT_INITIALIZED,                                                           \
	     (void *state, int type, void *data, size_t size, const char *name, unsigned n,           \
	      int *options, void **values),                                                           \
	     (state, type, data, size, name, n, options, values))                                     \
	HOOK(PRELOAD_DRIVER, cuLinkAddData_v2, preload_cuLinkAddData, int,                           \
	     PL_CUDA_ERROR_NOT_INITIALIZED,                                                           \
	     (void *state, int type, void *data, size_t size, const char *name, unsigned n,           \
	      int *options, void **values),                                                           \
	     (state, type, data, size, name, n, options, values))                                     \
	HOOK(PRELOAD_DRIVER, cuLinkAddFile, preload_cuLinkAddFile, int,                              \
	     PL_CUDA_ERROR_NOT_INITIALIZED,                                                           \
	     (void *state, int type, const char *path, unsigned n, int *options, void **values),      \
	     (state, type, path, n, options, values))                                                 \
	HOOK(PRELOAD_DRIVER, cuLinkAddFile_v2, preload_cuLinkAddFile, int,                           \
	     PL_CUDA_ERROR_NOT_INITIALIZED,                                                           \
	     (void *state, int type, const char *path, unsigned n, int *options, void **values),      \
	     (state, type, path, n, options, values))                                                 \
	HOOK(PRELOAD_DRIVER, cuLinkComplete, preload_cuLinkComplete, int,                            \
	     PL_CUDA_ERROR_NOT_INITIALIZED, (void *state, void **cubin, size_t *size),                \
	     (state, cubin, size))                                                                    \
	HOOK(PRELOAD_DRIVER, cuLinkDestroy, preload_cuLinkDestroy, int,                              \
	     PL_CUDA_ERROR_NOT_INITIALIZED, (void *state), (state))                                   \
	HOOK(PRELOAD_DRIVER, cuModuleLoadData, preload_cuModuleLoadData, int,                        \
	     PL_CUDA_ERROR_NOT_INITIALIZED, (void **module, const void *image), (module, image))      \
	HOOK(PRELOAD_DRIVER, cuModuleLoadDataEx, preload_cuModuleLoadDataEx, int,                    \
	     PL_CUDA_ERROR_NOT_INITIALIZED,                                                           \
	     (void **module, const void *image, unsigned n, int *options, void **values),             \
	     (module, image, n, options, values))                                                     \
	HOOK(PRELOAD_DRIVER, cuLibraryLoadData, preload_cuLibraryLoadData, int,                      \
	     PL_CUDA_ERROR_NOT_INITIALIZED,                                                           \
	     (void **library, const void *code, int *jit_options, void **jit_values, unsigned njit,   \
	      int *lib_options, void **lib_values, unsigned nlib),                                    \
	     (library, code, jit_options, jit_values, njit, lib_options, lib_values, nlib))           \
	HOOK(PRELOAD_DRIVER, cuModuleLoad, preload_cuModuleLoad, int, PL_CUDA_ERROR_NOT_INITIALIZED,  \
	     (void **module, const char *path), (module, path))                                       \
	HOOK(PRELOAD_DRIVER, cuModuleLoadFatBinary, preload_cuModuleLoadFatBinary, int,              \
	     PL_CUDA_ERROR_NOT_INITIALIZED, (void **module, const void *image), (module, image))      \
	HOOK(PRELOAD_DRIVER, cuLibraryLoadFromFile, preload_cuLibraryLoadFromFile, int,              \
	     PL_CUDA_ERROR_NOT_INITIALIZED,                                                           \
	     (void **library, const char *path, int *jit_options, void **jit_values, unsigned njit,   \
	      int *lib_options, void **lib_values, unsigned nlib),                                    \
	     (library, path, jit_options, jit_values, njit, lib_options, lib_values, nlib))           \
	HOOK(PRELOAD_DRIVER, cuModuleUnload, preload_cuModuleUnload, int,                            \
	     PL_CUDA_ERROR_NOT_INITIALIZED, (void *handle), (handle))                                 \
	HOOK(PRELOAD_DRIVER, cuLibraryUnload, preload_cuLibraryUnload, int,                          \
	     PL_CUDA_ERROR_NOT_INITIALIZED, (void *handle), (handle))                                 \
	HOOK(PRELOAD_DRIVER, cuModuleGetFunction, preload_cuModuleGetFunction, int,                  \
	     PL_CUDA_ERROR_NOT_INITIALIZED, (void **function, void *module, const char *name),        \
	     (function, module, name))                                                                \
	HOOK(PRELOAD_DRIVER, cuLibraryGetKernel, preload_cuLibraryGetKernel, int,                    \
	     PL_CUDA_ERROR_NOT_INITIALIZED, (void **kernel, void *library, const char *name),         \
	     (kernel, library, name))                                                                 \
	HOOK(PRELOAD_DRIVER, cuKernelGetFunction, preload_cuKernelGetFunction, int,                  \
	     PL_CUDA_ERROR_NOT_INITIALIZED, (void **function, void *kernel), (function, kernel))      \
	HOOK(PRELOAD_DRIVER, cuLaunchKernel, preload_cuLaunchKernel, int,                            \
	     PL_CUDA_ERROR_NOT_INITIALIZED, PL_LAUNCH_PARAMS, PL_LAUNCH_ARGS)                         \
	HOOK(PRELOAD_DRIVER, cuLaunchKernel_ptsz, preload_cuLaunchKernel, int,                       \
	     PL_CUDA_ERROR_NOT_INITIALIZED, PL_LAUNCH_PARAMS, PL_LAUNCH_ARGS)                         \
	HOOK(PRELOAD_DRIVER, cuLaunchKernelEx, preload_cuLaunchKernelEx, int,                        \
	     PL_CUDA_ERROR_NOT_INITIALIZED, (const void *config, void *f, void **params, void **extra), \
	     (config, f, params, extra))                                                              \
	HOOK(PRELOAD_DRIVER, cuLaunchKernelEx_ptsz, preload_cuLaunchKernelEx, int,                   \
	     PL_CUDA_ERROR_NOT_INITIALIZED, (const void *config, void *f, void **params, void **extra), \
	     (config, f, params, extra))                                                              \
	HOOK(PRELOAD_DRIVER, cuGetProcAddress, preload_cuGetProcAddress, int,                        \
	     PL_CUDA_ERROR_NOT_INITIALIZED,                                                           \
	     (const char *symbol, void **pfn, int version, uint64_t flags),                           \
	     (symbol, pfn, version, flags))                                                           \
	HOOK(PRELOAD_DRIVER, cuGetProcAddress_v2, preload_cuGetProcAddress_v2, int,                  \
	     PL_CUDA_ERROR_NOT_INITIALIZED,                                                           \
	     (const char *symbol, void **pfn, int version, uint64_t flags, int *status),              \
	     (symbol, pfn, version, flags, status))                                                   \
	HOOK(PRELOAD_DRIVER, cuGetErrorString, preload_cuGetErrorString, int,                        \
	     PL_CUDA_ERROR_NOT_INITIALIZED, (int error, const char **text), (error, text))            \
	REAL(PRELOAD_DRIVER, cuGetErrorName)                                                          \
	REAL(PRELOAD_DRIVER, cuCtxGetDevice)                                                          \
	REAL(PRELOAD_DRIVER, cuDeviceGetAttribute)                                                    \
	REAL(PRELOAD_DRIVER, cuDeviceGetCount)                                                        \
	REAL(PRELOAD_DRIVER, cuDriverGetVersion)                                                      \
	REAL(PRELOAD_DRIVER, cuFuncGetModule)                                                         \
	REAL(PRELOAD_DRIVER, cuKernelGetLibrary)                                                      \
	HOOK(PRELOAD_NVJITLINK, nvJitLinkCreate, preload_nvJitLinkCreate, int,                       \
	     PL_NVJITLINK_ERROR_INTERNAL, (void **h, uint32_t n, const char *const *o), (h, n, o))    \
	HOOK(PRELOAD_NVJITLINK, nvJitLinkDestroy, preload_nvJitLinkDestroy, int,                     \
	     PL_NVJITLINK_ERROR_INTERNAL, (void **h), (h))                                            \
	HOOK(PRELOAD_NVJITLINK, nvJitLinkAddData, preload_nvJitLinkAddData, int,                     \
	     PL_NVJITLINK_ERROR_INTERNAL,                                                             \
	     (void *h, int type, const void *data, size_t size, const char *name),                    \
	     (h, type, data, size, name))                                                             \
	HOOK(PRELOAD_NVJITLINK, nvJitLinkAddFile, preload_nvJitLinkAddFile, int,                     \
	     PL_NVJITLINK_ERROR_INTERNAL, (void *h, int type, const char *file), (h, type, file))     \
	HOOK(PRELOAD_NVJITLINK, nvJitLinkComplete, preload_nvJitLinkComplete, int,                   \
	     PL_NVJITLINK_ERROR_INTERNAL, (void *h), (h))                                             \
	HOOK(PRELOAD_NVJITLINK, nvJitLinkGetErrorLogSize, preload_nvJitLinkGetErrorLogSize, int,     \
	     PL_NVJITLINK_ERROR_INTERNAL, (void *h, size_t *size), (h, size))                         \
	HOOK(PRELOAD_NVJITLINK, nvJitLinkGetErrorLog, preload_nvJitLinkGetErrorLog, int,             \
	     PL_NVJITLINK_ERROR_INTERNAL, (void *h, char *log), (h, log))                             \
	PL_NVJITLINK_VERSIONS(PL_NVJITLINK_NAMED, HOOK)

/* Indices of every function in PRELOAD_HOOKS. */
#define PL_ENUM_HOOK(kind, name, impl, ret, fail, params, args) PL_##name,
#define PL_ENUM_REAL(kind, name) PL_##name,
enum preload_fn { PRELOAD_HOOKS(PL_ENUM_HOOK, PL_ENUM_REAL) PL_NFUNCTIONS };

#define PRELOAD_SLOTS 8

/* One real library. Slots are filled once and never freed; `used` is set last (PL_PUBLISH), and
 * a function missing from `real` may be filled in later (PL_PUBLISH_ONCE, read with PL_REAL). */
struct preload_lib {
	int used;
	enum preload_kind kind;
	int active;            /* 0: a stand-in for a library without a slot: calls pass through */
	void *handle;          /* nvshim's own reference to it */
	const void *base;      /* its load address */
	char path[PATH_MAX];   /* as the dynamic loader names it */
	void *real[PL_NFUNCTIONS];
	/* NVRTC facts, read once under facts_lock, then published by facts_ready. */
	pthread_mutex_t facts_lock;
	int facts_ready;
	int major, minor;      /* nvrtcVersion */
	int archs[64];         /* nvrtcGetSupportedArchs, ascending */
	size_t narchs;
	/* The include directories of the CUDA this NVRTC came from (headers.h): looked for once,
	 * at the first compile that misses a header, then published (PL_PUBLISH_ONCE). */
	struct headers *headers;
};

extern struct preload_lib preload_libs[PRELOAD_SLOTS];

/* The real function `fn` of a library, as type T (NULL if none). Relaxed: what it points to is code,
 * and the slot was published before L was handed out. */
#define PL_REAL(L, fn, T) ((T)__atomic_load_n(&(L)->real[fn], __ATOMIC_RELAXED))

/* The implementations: the real library comes first, then the intercepted arguments. */
#define PL_DECLARE_IMPL(kind, name, impl, ret, fail, params, args)                                  \
	ret impl(struct preload_lib *L, int fn, PL_UNPACK params);
#define PL_DECLARE_NOTHING(kind, name)
PRELOAD_HOOKS(PL_DECLARE_IMPL, PL_DECLARE_NOTHING)

/* The settings, loaded once: installed defaults relative to the library
 * (<prefix>/libexec/nvshim/ -> <prefix>/etc/nvshim.ini), system, user, project, NVSHIM_*. */
const struct config *preload_config(void);

/* The GPU nvshim compiles for: the lowest compute capability among NVSHIM_DEVICES, else the
 * device of the current context (or device 0) when the program has initialised the driver, else
 * the GPUs nvshim-devices finds, else fallback_archs. Returns it (90 for 9.0), or 0 when there is
 * none; *source says where it came from (static text). */
unsigned preload_gpu(const char **source);

/* The library's own path (resolved), or "" when unknown. */
const char *preload_self_path(void);

/* Says a rule's note on stderr at verbosity normal: once per distinct text (not counting the
 * label it starts with, the program's name: the same fix for many programs is said once), every
 * time at verbose and above. */
void preload_note(const char *text, const char *label);
/* Writes text (lines) to stderr as it is, in one write. */
void preload_raw(const char *text);

/* A function's name, and the wrapper of slot L for it (NULL when L is not a slot). */
const char *preload_fn_name(int fn);
void *preload_wrapper(int fn, const struct preload_lib *L);

/* The driver library's real function, from its slot (NULL when the driver is not loaded). */
void *preload_driver_fn(enum preload_fn fn);

/* Per-thread explanation of the last failure, for cuGetErrorString (link.error_string). */
void preload_explain_set(int code, const char *text);
void preload_explain_clear(void);
/* The explanation for this code on this thread, or NULL. */
const char *preload_explain_get(int code);
/* "<driver_text> (nvshim: <text>)", kept alive for the thread until its next call. */
const char *preload_explain_message(const char *driver_text, const char *text);

/* "No kernel image" explanations (preload_image.c). */
#define PL_CUDA_ERROR_NO_BINARY_FOR_GPU 209
#define PL_CUDA_ERROR_UNSUPPORTED_PTX_VERSION 222
/* A module or library was loaded from `image` (in memory) or `path` (a file): remembered so that
 * a later failure can name where its code came from. */
void preload_image_loaded(struct preload_lib *L, const void *handle, int library, const void *image,
			  const char *path);
/* A load failed with `code`: when it is 209 or 222 (and explain_no_image), says which file the
 * image came from, its targets, the GPU's and the fix. Returns 1 if it said so. */
int preload_image_load_failed(struct preload_lib *L, const char *call, int code, const void *image,
			      const char *path);

/* NVRTC helpers for the link diagnostics (preload_nvrtc.c). */
/* Reads an NVRTC library's version and supported targets once. */
void preload_nvrtc_facts(struct preload_lib *L);
/* Compiles a registered program again for sm_<cc> without relocatable code, with the real
 * functions of its library; returns NVRTC's result and the log in *log (xmalloc'ed). */
int preload_nvrtc_recompile(unsigned id, unsigned cc, char **log, char **name, unsigned *used_cc);
/* The target a registered program was compiled for (its -arch number, else NVRTC's default),
 * or 0. */
unsigned preload_nvrtc_program_arch(unsigned id);

#endif
