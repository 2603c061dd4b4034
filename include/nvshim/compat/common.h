/* nvshim compatibility layer: what runtime.h and driver.h share.
 *
 * These headers are not meant to be included by hand. nvshim force-includes them (-include) only
 * when a compile failed on a CUDA API that CUDA 13.0 removed or changed and the API table
 * (config/api.ini) says the layer restores it; a source that compiles never sees them. Each
 * restored API does what the old toolkit's did (docs/compat.md). The lasting fix: nvshim migrate.
 */
#ifndef NVSHIM_COMPAT_COMMON_H
#define NVSHIM_COMPAT_COMMON_H

#define NVSHIM_COMPAT_VERSION 1

/* The number of a macro's arguments (1 to 9), for the C forms that differ in arity. */
#define NVSHIM_COMPAT_NARGS(...) NVSHIM_COMPAT_NARGS_(__VA_ARGS__, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define NVSHIM_COMPAT_NARGS_(a1, a2, a3, a4, a5, a6, a7, a8, a9, n, ...) n
#define NVSHIM_COMPAT_CAT(a, b) NVSHIM_COMPAT_CAT_(a, b)
#define NVSHIM_COMPAT_CAT_(a, b) a##b
/* f(...) calls f_N(...), N the number of arguments. */
/* NVSHIM_COMPAT_WANTS(NAME): whether the old form of NAME is restored. nvshim's retry defines
 * NVSHIM_COMPAT_SELECTED and NVSHIM_COMPAT_WANT_NAME for each API its errors named, so that an old
 * form the source did not use never overloads a name it uses as it is (`constexpr auto f =
 * cuGraphAddNode;` names one function, not an overload set); without NVSHIM_COMPAT_SELECTED every
 * form is restored. */
#ifdef NVSHIM_COMPAT_SELECTED
#define NVSHIM_COMPAT_WANTS(name) NVSHIM_COMPAT_WANT_##name
#else
#define NVSHIM_COMPAT_WANTS(name) 1
#endif
#define NVSHIM_COMPAT_BY_ARITY(f, ...) NVSHIM_COMPAT_CAT(f##_, NVSHIM_COMPAT_NARGS(__VA_ARGS__))(__VA_ARGS__)

#ifdef __cplusplus
#define NVSHIM_COMPAT_NULL 0
#else
#define NVSHIM_COMPAT_NULL ((void *)0)
#endif

#endif
