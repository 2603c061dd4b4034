/* nvshim compat: what CCCL 3.0 (CUDA 13.0) removed from Thrust, restored exactly as CCCL 2.8
 * (CUDA 12.9) defined it: thrust::unary_function, thrust::binary_function (empty bases that
 * declare the adaptable-function aliases) and thrust::identity<T> (returns its argument as a T).
 *
 * Force-included (-include) by nvshim only into the retry of a compile that failed on one of
 * these (config/api.ini: compat = thrust.h); a source that compiles never sees it. With a
 * Thrust older than 3.0 (which still has them) or in C it declares nothing.
 */
#ifndef NVSHIM_COMPAT_THRUST_H
#define NVSHIM_COMPAT_THRUST_H

#if defined(__cplusplus) && defined(__has_include)
#if __has_include(<thrust/version.h>)
#include <thrust/version.h>
#if THRUST_MAJOR_VERSION >= 3
#include <cuda/std/functional>
#include <cuda/std/utility>

#if defined(__CUDACC__)
#define NVSHIM_COMPAT_HD __host__ __device__
#else
#define NVSHIM_COMPAT_HD
#endif

namespace thrust
{
template <typename Argument, typename Result>
struct unary_function
{
  using argument_type = Argument;
  using result_type   = Result;
};

template <typename Argument1, typename Argument2, typename Result>
struct binary_function
{
  using first_argument_type  = Argument1;
  using second_argument_type = Argument2;
  using result_type          = Result;
};

template <typename T = void>
struct identity
{
  using argument_type = T;
  using result_type   = T;

#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
  NVSHIM_COMPAT_HD constexpr const T& operator()(const T& x) const { return x; }
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
  NVSHIM_COMPAT_HD constexpr T& operator()(T& x) const { return x; }
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
  NVSHIM_COMPAT_HD constexpr T&& operator()(T&& x) const { return ::cuda::std::move(x); }
};

template <>
struct identity<void> : ::cuda::std::identity
{};
} // namespace thrust

#undef NVSHIM_COMPAT_HD
#endif /* THRUST_MAJOR_VERSION >= 3 */
#endif /* __has_include(<thrust/version.h>) */
#endif /* __cplusplus */

#endif /* NVSHIM_COMPAT_THRUST_H */
