/* nvshim compatibility layer: the CUDA runtime APIs that CUDA 13.0 removed or changed, as CUDA
 * 12 had them.
 *
 * Force-included by nvshim only in the retry of a compile that failed on one of them (see
 * common.h and docs/compat.md); the lasting fix is `nvshim migrate`. What each one does:
 *   - removed functions (cudaThreadSynchronize, ...): inline functions doing what the old one
 *     did (CUDA 12 documents each as identical to its cudaDevice* form);
 *   - old signatures: C++ overloads taking the old arguments and calling the new form the way
 *     CUDA 12 documented them as equal (an int device d is the cudaMemLocation
 *     {cudaMemLocationTypeDevice, d}, cudaCpuDeviceId is {cudaMemLocationTypeHost, 0}; no edge
 *     data is NULL edge data); in C, a macro where the old form has another number of
 *     arguments, or _Generic where only the type tells (cudaMemAdvise);
 *   - removed cudaDeviceProp fields: nvshim_compat_FIELD(&prop), which nvshim writes in a
 *     private copy of the source for prop.FIELD; it reads the attribute CUDA 12's
 *     cudaGetDeviceProperties read to fill FIELD, for the device whose PCI domain, bus and
 *     device (fields the struct still has) are the struct's: the device the program passed to
 *     cudaGetDeviceProperties, also for a copy of the struct. A struct no device filled reads 0.
 */
#ifndef NVSHIM_COMPAT_RUNTIME_H
#define NVSHIM_COMPAT_RUNTIME_H

#ifdef __cplusplus
#include <cuda_runtime.h> /* its C++ forms first: cudaGraphExecUpdate's old one is there */
#else
#include <cuda_runtime_api.h>
#endif

#include "common.h"

#if defined(CUDART_VERSION) && CUDART_VERSION >= 13000

/* ---- removed cudaDeviceProp fields ---- */

/* The device a cudaDeviceProp was filled for, or -1. */
static inline int nvshim_compat_prop_device(const struct cudaDeviceProp *p)
{
	int n = 0;
	if (!p || cudaGetDeviceCount(&n) != cudaSuccess) {
		(void)cudaGetLastError();
		return -1;
	}
	for (int d = 0; d < n; d++) {
		int dom = -1, bus = -1, dev = -1;
		if (cudaDeviceGetAttribute(&dom, cudaDevAttrPciDomainId, d) == cudaSuccess &&
		    cudaDeviceGetAttribute(&bus, cudaDevAttrPciBusId, d) == cudaSuccess &&
		    cudaDeviceGetAttribute(&dev, cudaDevAttrPciDeviceId, d) == cudaSuccess &&
		    dom == p->pciDomainID && bus == p->pciBusID && dev == p->pciDeviceID)
			return d;
	}
	return -1;
}

/* The attribute CUDA 12 put in a field, for the struct's device; 0 when no device filled it. */
static inline int nvshim_compat_prop_attribute(const struct cudaDeviceProp *p, enum cudaDeviceAttr a)
{
	int d = nvshim_compat_prop_device(p), v = 0;
	if (d < 0 || cudaDeviceGetAttribute(&v, a, d) != cudaSuccess)
		return 0;
	return v;
}

#define NVSHIM_COMPAT_PROP_FIELD(field, attribute)                                            \
	static inline int nvshim_compat_##field(const struct cudaDeviceProp *p)                  \
	{                                                                                    \
		return nvshim_compat_prop_attribute(p, attribute);                                 \
	}
NVSHIM_COMPAT_PROP_FIELD(clockRate, cudaDevAttrClockRate)                  /* kHz */
NVSHIM_COMPAT_PROP_FIELD(memoryClockRate, cudaDevAttrMemoryClockRate)      /* kHz */
NVSHIM_COMPAT_PROP_FIELD(computeMode, cudaDevAttrComputeMode)              /* enum cudaComputeMode */
NVSHIM_COMPAT_PROP_FIELD(deviceOverlap, cudaDevAttrGpuOverlap)
NVSHIM_COMPAT_PROP_FIELD(kernelExecTimeoutEnabled, cudaDevAttrKernelExecTimeout)
NVSHIM_COMPAT_PROP_FIELD(singleToDoublePrecisionPerfRatio, cudaDevAttrSingleToDoublePrecisionPerfRatio)
NVSHIM_COMPAT_PROP_FIELD(maxTexture1DLinear, cudaDevAttrMaxTexture1DLinearWidth)
/* CUDA 12's cudaDevAttrCooperativeMultiDeviceLaunch (96): gone from 13.0's runtime header, still
 * answered by its runtime and the driver (CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH,
 * deprecated): on an H200, 1 from 13.0 as from 12.9's field. */
NVSHIM_COMPAT_PROP_FIELD(cooperativeMultiDeviceLaunch, (enum cudaDeviceAttr)96)
#undef NVSHIM_COMPAT_PROP_FIELD

/* ---- removed functions and names ---- */

static inline cudaError_t cudaThreadSynchronize(void) { return cudaDeviceSynchronize(); }
static inline cudaError_t cudaThreadExit(void) { return cudaDeviceReset(); }
static inline cudaError_t cudaThreadGetCacheConfig(enum cudaFuncCache *c) { return cudaDeviceGetCacheConfig(c); }
static inline cudaError_t cudaThreadSetCacheConfig(enum cudaFuncCache c) { return cudaDeviceSetCacheConfig(c); }
static inline cudaError_t cudaThreadGetLimit(size_t *v, enum cudaLimit l) { return cudaDeviceGetLimit(v, l); }
static inline cudaError_t cudaThreadSetLimit(enum cudaLimit l, size_t v) { return cudaDeviceSetLimit(l, v); }
/* CUDA 12: "if the device natively supports doubles, this function does nothing"; every GPU
 * CUDA 13 runs on does. */
static inline cudaError_t cudaSetDoubleForDevice(double *d) { (void)d; return cudaSuccess; }
static inline cudaError_t cudaSetDoubleForHost(double *d) { (void)d; return cudaSuccess; }
/* CUDA 12's _v2 forms are CUDA 13's plain ones. */
static inline cudaError_t cudaEventElapsedTime_v2(float *ms, cudaEvent_t a, cudaEvent_t b)
{
	return cudaEventElapsedTime(ms, a, b);
}
static inline cudaError_t cudaGetDeviceProperties_v2(struct cudaDeviceProp *p, int device)
{
	return cudaGetDeviceProperties(p, device);
}
static inline cudaError_t cudaSignalExternalSemaphoresAsync_v2(const cudaExternalSemaphore_t *s,
							       const struct cudaExternalSemaphoreSignalParams *p,
							       unsigned int n, cudaStream_t stream)
{
	return cudaSignalExternalSemaphoresAsync(s, p, n, stream);
}
static inline cudaError_t cudaWaitExternalSemaphoresAsync_v2(const cudaExternalSemaphore_t *s,
							     const struct cudaExternalSemaphoreWaitParams *p,
							     unsigned int n, cudaStream_t stream)
{
	return cudaWaitExternalSemaphoresAsync(s, p, n, stream);
}
/* The same attribute (114) under its CUDA 12 name. */
#define cudaDevAttrMaxTimelineSemaphoreInteropSupported cudaDevAttrTimelineSemaphoreInteropSupported

/* ---- changed signatures: the old forms ---- */

/* CUDA 12's int device as a location: cudaCpuDeviceId is the host. */
static inline struct cudaMemLocation nvshim_compat_location(int device)
{
	struct cudaMemLocation l;
	l.type = device == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
	l.id = device == cudaCpuDeviceId ? 0 : device;
	return l;
}

static inline cudaError_t nvshim_compat_cudaMemPrefetchAsync_4(const void *p, size_t n, int device, cudaStream_t s)
{
	return cudaMemPrefetchAsync(p, n, nvshim_compat_location(device), 0, s);
}
static inline cudaError_t nvshim_compat_cudaMemAdvise_int(const void *p, size_t n, enum cudaMemoryAdvise a, int device)
{
	return cudaMemAdvise(p, n, a, nvshim_compat_location(device));
}
static inline cudaError_t nvshim_compat_cudaGraphAddDependencies_4(cudaGraph_t g, const cudaGraphNode_t *from,
								    const cudaGraphNode_t *to, size_t n)
{
	return cudaGraphAddDependencies(g, from, to, NVSHIM_COMPAT_NULL, n);
}
static inline cudaError_t nvshim_compat_cudaGraphRemoveDependencies_4(cudaGraph_t g, const cudaGraphNode_t *from,
								       const cudaGraphNode_t *to, size_t n)
{
	return cudaGraphRemoveDependencies(g, from, to, NVSHIM_COMPAT_NULL, n);
}
static inline cudaError_t nvshim_compat_cudaGraphGetEdges_4(cudaGraph_t g, cudaGraphNode_t *from, cudaGraphNode_t *to,
							     size_t *n)
{
	return cudaGraphGetEdges(g, from, to, NVSHIM_COMPAT_NULL, n);
}
static inline cudaError_t nvshim_compat_cudaGraphNodeGetDependencies_3(cudaGraphNode_t node, cudaGraphNode_t *deps,
									size_t *n)
{
	return cudaGraphNodeGetDependencies(node, deps, NVSHIM_COMPAT_NULL, n);
}
static inline cudaError_t nvshim_compat_cudaGraphNodeGetDependentNodes_3(cudaGraphNode_t node, cudaGraphNode_t *deps,
									  size_t *n)
{
	return cudaGraphNodeGetDependentNodes(node, deps, NVSHIM_COMPAT_NULL, n);
}
static inline cudaError_t nvshim_compat_cudaGraphAddNode_5(cudaGraphNode_t *node, cudaGraph_t g,
							    const cudaGraphNode_t *deps, size_t n,
							    struct cudaGraphNodeParams *params)
{
	return cudaGraphAddNode(node, g, deps, NVSHIM_COMPAT_NULL, n, params);
}
static inline cudaError_t nvshim_compat_cudaStreamGetCaptureInfo_6(cudaStream_t s, enum cudaStreamCaptureStatus *st,
								    unsigned long long *id, cudaGraph_t *g,
								    const cudaGraphNode_t **deps, size_t *n)
{
	return cudaStreamGetCaptureInfo(s, st, id, g, deps, NVSHIM_COMPAT_NULL, n);
}
static inline cudaError_t nvshim_compat_cudaStreamUpdateCaptureDependencies_4(cudaStream_t s, cudaGraphNode_t *deps,
									       size_t n, unsigned int flags)
{
	return cudaStreamUpdateCaptureDependencies(s, deps, NVSHIM_COMPAT_NULL, n, flags);
}
/* CUDA 11 and 12.0's form: the error node and the result apart (C; cuda_runtime.h has it for
 * C++). */
static inline cudaError_t nvshim_compat_cudaGraphExecUpdate_4(cudaGraphExec_t e, cudaGraph_t g, cudaGraphNode_t *node,
							       enum cudaGraphExecUpdateResult *result)
{
	cudaGraphExecUpdateResultInfo info;
	cudaError_t rc = cudaGraphExecUpdate(e, g, &info);
	if (node)
		*node = info.errorNode;
	if (result)
		*result = info.result;
	return rc;
}
/* CUDA 11's form with the error node and a log buffer (C; cuda_runtime.h has it for C++, where it
 * instantiates with flags 0 and leaves the node and the log as they are: the same here). */
static inline cudaError_t nvshim_compat_cudaGraphInstantiate_5(cudaGraphExec_t *e, cudaGraph_t g,
							       cudaGraphNode_t *node, char *log, size_t size)
{
	(void)node;
	(void)log;
	(void)size;
	return cudaGraphInstantiate(e, g, 0);
}
static inline cudaError_t nvshim_compat_cudaGraphInstantiate_3(cudaGraphExec_t *e, cudaGraph_t g,
							       unsigned long long flags)
{
	return cudaGraphInstantiate(e, g, flags);
}

#ifdef __cplusplus
/* C++: overloads, which the old calls pick by their arguments. */
#if NVSHIM_COMPAT_WANTS(cudaMemPrefetchAsync)
static inline cudaError_t cudaMemPrefetchAsync(const void *p, size_t n, int device, cudaStream_t s = 0)
{
	return nvshim_compat_cudaMemPrefetchAsync_4(p, n, device, s);
}
#endif
#if NVSHIM_COMPAT_WANTS(cudaMemAdvise)
static inline cudaError_t cudaMemAdvise(const void *p, size_t n, enum cudaMemoryAdvise a, int device)
{
	return nvshim_compat_cudaMemAdvise_int(p, n, a, device);
}
#endif
#if NVSHIM_COMPAT_WANTS(cudaGraphAddDependencies)
static inline cudaError_t cudaGraphAddDependencies(cudaGraph_t g, const cudaGraphNode_t *from, const cudaGraphNode_t *to,
						   size_t n)
{
	return nvshim_compat_cudaGraphAddDependencies_4(g, from, to, n);
}
#endif
#if NVSHIM_COMPAT_WANTS(cudaGraphRemoveDependencies)
static inline cudaError_t cudaGraphRemoveDependencies(cudaGraph_t g, const cudaGraphNode_t *from,
						      const cudaGraphNode_t *to, size_t n)
{
	return nvshim_compat_cudaGraphRemoveDependencies_4(g, from, to, n);
}
#endif
#if NVSHIM_COMPAT_WANTS(cudaGraphGetEdges)
static inline cudaError_t cudaGraphGetEdges(cudaGraph_t g, cudaGraphNode_t *from, cudaGraphNode_t *to, size_t *n)
{
	return nvshim_compat_cudaGraphGetEdges_4(g, from, to, n);
}
#endif
#if NVSHIM_COMPAT_WANTS(cudaGraphNodeGetDependencies)
static inline cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t *deps, size_t *n)
{
	return nvshim_compat_cudaGraphNodeGetDependencies_3(node, deps, n);
}
#endif
#if NVSHIM_COMPAT_WANTS(cudaGraphNodeGetDependentNodes)
static inline cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t node, cudaGraphNode_t *deps, size_t *n)
{
	return nvshim_compat_cudaGraphNodeGetDependentNodes_3(node, deps, n);
}
#endif
#if NVSHIM_COMPAT_WANTS(cudaGraphAddNode)
static inline cudaError_t cudaGraphAddNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps, size_t n,
					   struct cudaGraphNodeParams *params)
{
	return nvshim_compat_cudaGraphAddNode_5(node, g, deps, n, params);
}
#endif
#if NVSHIM_COMPAT_WANTS(cudaStreamGetCaptureInfo)
static inline cudaError_t cudaStreamGetCaptureInfo(cudaStream_t s, enum cudaStreamCaptureStatus *st,
						   unsigned long long *id, cudaGraph_t *g, const cudaGraphNode_t **deps,
						   size_t *n)
{
	return nvshim_compat_cudaStreamGetCaptureInfo_6(s, st, id, g, deps, n);
}
#endif
#if NVSHIM_COMPAT_WANTS(cudaStreamUpdateCaptureDependencies)
static inline cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t s, cudaGraphNode_t *deps, size_t n,
							      unsigned int flags)
{
	return nvshim_compat_cudaStreamUpdateCaptureDependencies_4(s, deps, n, flags);
}
#endif
/* cudaGraphExecUpdate's old form: cuda_runtime.h has it for C++. */
#else
/* C: the number of arguments tells the old form from the new one; for cudaMemAdvise only the
 * last argument's type does (_Generic). A function-like macro: a call's name alone (taking the
 * function's address) is the new form. */
static inline cudaError_t nvshim_compat_cudaMemPrefetchAsync_5(const void *p, size_t n, struct cudaMemLocation l,
								unsigned int f, cudaStream_t s)
{
	return cudaMemPrefetchAsync(p, n, l, f, s);
}
#define NVSHIM_COMPAT_NEW(f, n, params, args)                                                         \
	static inline cudaError_t nvshim_compat_##f##_##n params { return f args; }
NVSHIM_COMPAT_NEW(cudaGraphAddDependencies, 5,
		  (cudaGraph_t g, const cudaGraphNode_t *a, const cudaGraphNode_t *b, const cudaGraphEdgeData *e, size_t n),
		  (g, a, b, e, n))
NVSHIM_COMPAT_NEW(cudaGraphRemoveDependencies, 5,
		  (cudaGraph_t g, const cudaGraphNode_t *a, const cudaGraphNode_t *b, const cudaGraphEdgeData *e, size_t n),
		  (g, a, b, e, n))
NVSHIM_COMPAT_NEW(cudaGraphGetEdges, 5,
		  (cudaGraph_t g, cudaGraphNode_t *a, cudaGraphNode_t *b, cudaGraphEdgeData *e, size_t *n), (g, a, b, e, n))
NVSHIM_COMPAT_NEW(cudaGraphNodeGetDependencies, 4,
		  (cudaGraphNode_t x, cudaGraphNode_t *d, cudaGraphEdgeData *e, size_t *n), (x, d, e, n))
NVSHIM_COMPAT_NEW(cudaGraphNodeGetDependentNodes, 4,
		  (cudaGraphNode_t x, cudaGraphNode_t *d, cudaGraphEdgeData *e, size_t *n), (x, d, e, n))
NVSHIM_COMPAT_NEW(cudaGraphAddNode, 6,
		  (cudaGraphNode_t *x, cudaGraph_t g, const cudaGraphNode_t *d, const cudaGraphEdgeData *e, size_t n,
		   struct cudaGraphNodeParams *p),
		  (x, g, d, e, n, p))
NVSHIM_COMPAT_NEW(cudaStreamGetCaptureInfo, 7,
		  (cudaStream_t s, enum cudaStreamCaptureStatus *st, unsigned long long *id, cudaGraph_t *g,
		   const cudaGraphNode_t **d, const cudaGraphEdgeData **e, size_t *n),
		  (s, st, id, g, d, e, n))
NVSHIM_COMPAT_NEW(cudaStreamUpdateCaptureDependencies, 5,
		  (cudaStream_t s, cudaGraphNode_t *d, const cudaGraphEdgeData *e, size_t n, unsigned int f),
		  (s, d, e, n, f))
NVSHIM_COMPAT_NEW(cudaGraphExecUpdate, 3, (cudaGraphExec_t x, cudaGraph_t g, cudaGraphExecUpdateResultInfo *i),
		  (x, g, i))
#undef NVSHIM_COMPAT_NEW
#if NVSHIM_COMPAT_WANTS(cudaMemPrefetchAsync)
#undef cudaMemPrefetchAsync
#define cudaMemPrefetchAsync(...) NVSHIM_COMPAT_BY_ARITY(nvshim_compat_cudaMemPrefetchAsync, __VA_ARGS__)
#endif
#if NVSHIM_COMPAT_WANTS(cudaMemAdvise)
#define cudaMemAdvise(p, n, a, d)                                                                     \
	_Generic((d), struct cudaMemLocation: cudaMemAdvise, default: nvshim_compat_cudaMemAdvise_int)(p, n, a, d)
#endif
#if NVSHIM_COMPAT_WANTS(cudaGraphAddDependencies)
#define cudaGraphAddDependencies(...) NVSHIM_COMPAT_BY_ARITY(nvshim_compat_cudaGraphAddDependencies, __VA_ARGS__)
#endif
#if NVSHIM_COMPAT_WANTS(cudaGraphRemoveDependencies)
#define cudaGraphRemoveDependencies(...) NVSHIM_COMPAT_BY_ARITY(nvshim_compat_cudaGraphRemoveDependencies, __VA_ARGS__)
#endif
#if NVSHIM_COMPAT_WANTS(cudaGraphGetEdges)
#define cudaGraphGetEdges(...) NVSHIM_COMPAT_BY_ARITY(nvshim_compat_cudaGraphGetEdges, __VA_ARGS__)
#endif
#if NVSHIM_COMPAT_WANTS(cudaGraphNodeGetDependencies)
#define cudaGraphNodeGetDependencies(...) NVSHIM_COMPAT_BY_ARITY(nvshim_compat_cudaGraphNodeGetDependencies, __VA_ARGS__)
#endif
#if NVSHIM_COMPAT_WANTS(cudaGraphNodeGetDependentNodes)
#define cudaGraphNodeGetDependentNodes(...)                                                           \
	NVSHIM_COMPAT_BY_ARITY(nvshim_compat_cudaGraphNodeGetDependentNodes, __VA_ARGS__)
#endif
#if NVSHIM_COMPAT_WANTS(cudaGraphAddNode)
#define cudaGraphAddNode(...) NVSHIM_COMPAT_BY_ARITY(nvshim_compat_cudaGraphAddNode, __VA_ARGS__)
#endif
#if NVSHIM_COMPAT_WANTS(cudaStreamGetCaptureInfo)
#undef cudaStreamGetCaptureInfo
#define cudaStreamGetCaptureInfo(...) NVSHIM_COMPAT_BY_ARITY(nvshim_compat_cudaStreamGetCaptureInfo, __VA_ARGS__)
#endif
#if NVSHIM_COMPAT_WANTS(cudaStreamUpdateCaptureDependencies)
#undef cudaStreamUpdateCaptureDependencies
#define cudaStreamUpdateCaptureDependencies(...)                                                      \
	NVSHIM_COMPAT_BY_ARITY(nvshim_compat_cudaStreamUpdateCaptureDependencies, __VA_ARGS__)
#endif
#if NVSHIM_COMPAT_WANTS(cudaGraphExecUpdate)
#define cudaGraphExecUpdate(...) NVSHIM_COMPAT_BY_ARITY(nvshim_compat_cudaGraphExecUpdate, __VA_ARGS__)
#endif
#if NVSHIM_COMPAT_WANTS(cudaGraphInstantiate)
#define cudaGraphInstantiate(...) NVSHIM_COMPAT_BY_ARITY(nvshim_compat_cudaGraphInstantiate, __VA_ARGS__)
#endif
#endif /* __cplusplus */

#endif /* CUDART_VERSION >= 13000 */
#endif
