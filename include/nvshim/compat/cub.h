/* nvshim compat: what CCCL 3.0 (CUDA 13.0) removed from CUB, restored exactly as CCCL 2.8
 * (CUDA 12.9) defined it: the operator aliases cub::Sum, Max, Min, Equality, Inequality,
 * Difference, Division (in 2.8 they were aliases of cuda::std::plus<> and the others, as here)
 * and the macros CUB_MAX, CUB_MIN, CUB_QUOTIENT_FLOOR, CUB_QUOTIENT_CEILING,
 * CUB_ROUND_UP_NEAREST, CUB_ROUND_DOWN_NEAREST (2.8's text, operands evaluated as often).
 *
 * Force-included (-include) by nvshim only into the retry of a compile that failed on one of
 * these (config/api.ini: compat = cub.h). The macros are defined for C and C++ alike, each only
 * when not defined; the aliases only with a CUB of 3.0 or newer, in C++.
 */
#ifndef NVSHIM_COMPAT_CUB_H
#define NVSHIM_COMPAT_CUB_H

#ifndef CUB_MAX
#define CUB_MAX(a, b) (((b) > (a)) ? (b) : (a))
#endif
#ifndef CUB_MIN
#define CUB_MIN(a, b) (((b) < (a)) ? (b) : (a))
#endif
#ifndef CUB_QUOTIENT_FLOOR
#define CUB_QUOTIENT_FLOOR(x, y) ((x) / (y))
#endif
#ifndef CUB_QUOTIENT_CEILING
#define CUB_QUOTIENT_CEILING(x, y) (((x) + (y) - 1) / (y))
#endif
#ifndef CUB_ROUND_UP_NEAREST
#define CUB_ROUND_UP_NEAREST(x, y) (CUB_QUOTIENT_CEILING(x, y) * y)
#endif
#ifndef CUB_ROUND_DOWN_NEAREST
#define CUB_ROUND_DOWN_NEAREST(x, y) (((x) / (y)) * y)
#endif

#if defined(__cplusplus) && defined(__has_include)
#if __has_include(<cub/version.cuh>)
#include <cub/version.cuh>
#if CUB_MAJOR_VERSION >= 3
#include <cuda/functional>
#include <cuda/std/functional>

namespace cub
{
using Equality   = ::cuda::std::equal_to<>;
using Inequality = ::cuda::std::not_equal_to<>;
using Sum        = ::cuda::std::plus<>;
using Difference = ::cuda::std::minus<>;
using Division   = ::cuda::std::divides<>;
using Max        = ::cuda::maximum<>;
using Min        = ::cuda::minimum<>;
} // namespace cub
#endif /* CUB_MAJOR_VERSION >= 3 */
#endif /* __has_include(<cub/version.cuh>) */
#endif /* __cplusplus */

#endif /* NVSHIM_COMPAT_CUB_H */
