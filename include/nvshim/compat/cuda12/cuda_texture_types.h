/* nvshim's compatibility layer: CUDA 12's cuda_texture_types.h, which CUDA 13.0 removed. Since CUDA
 * 12.0 removed texture references, all it did was this: in CUDA C++, include the channel
 * descriptors and the runtime API (cudaTextureObject_t and its functions are there, unchanged).
 * Put on the include path last (-idirafter), only by a compile that failed for want of it. */
#ifndef NVSHIM_COMPAT_CUDA_TEXTURE_TYPES_H
#define NVSHIM_COMPAT_CUDA_TEXTURE_TYPES_H
#if defined(__cplusplus) && defined(__CUDACC__)
#if !defined(__CUDACC_RTC__)
#include "channel_descriptor.h"
#endif
#include "cuda_runtime_api.h"
#endif
#endif
