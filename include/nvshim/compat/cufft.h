/* nvshim compat: the cufftResult values cuFFT 12 (CUDA 13.0) removed, with the values cuFFT 11
 * (CUDA 12.x) gave them: CUFFT_INCOMPLETE_PARAMETER_LIST 0xA, CUFFT_PARSE_ERROR 0xC,
 * CUFFT_LICENSE_ERROR 0xF. cuFFT 12 never returns these values (no value of its cufftResult is
 * 0xA, 0xC or 0xF), so a comparison or a case with them behaves as it did whenever CUDA 12's
 * cuFFT did not return them. Defined as constants of type cufftResult, each only when the name
 * is not defined (and cufft.h is included first, for the type).
 *
 * Force-included (-include) by nvshim only into the retry of a compile that failed on one of
 * these (config/api.ini: compat = cufft.h).
 */
#ifndef NVSHIM_COMPAT_CUFFT_H
#define NVSHIM_COMPAT_CUFFT_H

#if defined(__has_include)
#if __has_include(<cufft.h>)
#include <cufft.h>
#if defined(CUFFT_VER_MAJOR) && CUFFT_VER_MAJOR >= 12
#ifndef CUFFT_INCOMPLETE_PARAMETER_LIST
#define CUFFT_INCOMPLETE_PARAMETER_LIST ((cufftResult)0xA)
#endif
#ifndef CUFFT_PARSE_ERROR
#define CUFFT_PARSE_ERROR ((cufftResult)0xC)
#endif
#ifndef CUFFT_LICENSE_ERROR
#define CUFFT_LICENSE_ERROR ((cufftResult)0x0F)
#endif
#endif /* CUFFT_VER_MAJOR >= 12 */
#endif /* __has_include(<cufft.h>) */
#endif /* __has_include */

#endif /* NVSHIM_COMPAT_CUFFT_H */
