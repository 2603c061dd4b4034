/* nvshim compatibility layer: the CUDA driver APIs whose signatures CUDA 13.0 changed, in their
 * CUDA 12 forms.
 *
 * Force-included by nvshim only in the retry of a compile that failed on one of them (see
 * common.h and docs/compat.md); the lasting fix is `nvshim migrate`. Each old form calls the new
 * one as CUDA 12 documented them equal: cuCtxCreate(&ctx, flags, dev) is
 * cuCtxCreate_v4(&ctx, NULL, flags, dev) (no create parameters: the same context); a CUdevice d
 * is the CUmemLocation {CU_MEM_LOCATION_TYPE_DEVICE, d}, CU_DEVICE_CPU is
 * {CU_MEM_LOCATION_TYPE_HOST, 0}; no edge data is NULL edge data. C++ gets overloads; C gets a
 * macro where the old form has another number of arguments, and _Generic for cuMemAdvise, whose
 * forms differ only in the last argument's type.
 */
#ifndef NVSHIM_COMPAT_DRIVER_H
#define NVSHIM_COMPAT_DRIVER_H

#include <cuda.h>

#include "common.h"

#if defined(CUDA_VERSION) && CUDA_VERSION >= 13000

static inline CUmemLocation nvshim_compat_cu_location(CUdevice device)
{
	CUmemLocation l;
	l.type = device == CU_DEVICE_CPU ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE;
	l.id = device == CU_DEVICE_CPU ? 0 : device;
	return l;
}

static inline CUresult nvshim_compat_cuCtxCreate_3(CUcontext *ctx, unsigned int flags, CUdevice dev)
{
	return cuCtxCreate(ctx, (CUctxCreateParams *)NVSHIM_COMPAT_NULL, flags, dev);
}
static inline CUresult nvshim_compat_cuMemPrefetchAsync_4(CUdeviceptr p, size_t n, CUdevice dev, CUstream s)
{
	return cuMemPrefetchAsync(p, n, nvshim_compat_cu_location(dev), 0, s);
}
static inline CUresult nvshim_compat_cuMemAdvise_dev(CUdeviceptr p, size_t n, CUmem_advise a, CUdevice dev)
{
	return cuMemAdvise(p, n, a, nvshim_compat_cu_location(dev));
}
static inline CUresult nvshim_compat_cuGraphAddDependencies_4(CUgraph g, const CUgraphNode *from, const CUgraphNode *to,
							       size_t n)
{
	return cuGraphAddDependencies(g, from, to, NVSHIM_COMPAT_NULL, n);
}
static inline CUresult nvshim_compat_cuGraphRemoveDependencies_4(CUgraph g, const CUgraphNode *from,
								  const CUgraphNode *to, size_t n)
{
	return cuGraphRemoveDependencies(g, from, to, NVSHIM_COMPAT_NULL, n);
}
static inline CUresult nvshim_compat_cuGraphGetEdges_4(CUgraph g, CUgraphNode *from, CUgraphNode *to, size_t *n)
{
	return cuGraphGetEdges(g, from, to, NVSHIM_COMPAT_NULL, n);
}
static inline CUresult nvshim_compat_cuGraphNodeGetDependencies_3(CUgraphNode x, CUgraphNode *d, size_t *n)
{
	return cuGraphNodeGetDependencies(x, d, NVSHIM_COMPAT_NULL, n);
}
static inline CUresult nvshim_compat_cuGraphNodeGetDependentNodes_3(CUgraphNode x, CUgraphNode *d, size_t *n)
{
	return cuGraphNodeGetDependentNodes(x, d, NVSHIM_COMPAT_NULL, n);
}
static inline CUresult nvshim_compat_cuGraphAddNode_5(CUgraphNode *x, CUgraph g, const CUgraphNode *d, size_t n,
						       CUgraphNodeParams *p)
{
	return cuGraphAddNode(x, g, d, NVSHIM_COMPAT_NULL, n, p);
}
static inline CUresult nvshim_compat_cuStreamGetCaptureInfo_6(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id,
							       CUgraph *g, const CUgraphNode **d, size_t *n)
{
	return cuStreamGetCaptureInfo(s, st, id, g, d, NVSHIM_COMPAT_NULL, n);
}
static inline CUresult nvshim_compat_cuStreamUpdateCaptureDependencies_4(CUstream s, CUgraphNode *d, size_t n,
									  unsigned int flags)
{
	return cuStreamUpdateCaptureDependencies(s, d, NVSHIM_COMPAT_NULL, n, flags);
}
static inline CUresult nvshim_compat_cuGraphExecUpdate_4(CUgraphExec e, CUgraph g, CUgraphNode *node,
							  CUgraphExecUpdateResult *result)
{
	CUgraphExecUpdateResultInfo info;
	CUresult rc = cuGraphExecUpdate(e, g, &info);
	if (node)
		*node = info.errorNode;
	if (result)
		*result = info.result;
	return rc;
}

/* CUDA 11's cuGetProcAddress without the symbol status (12.0 made the name the 5-argument form):
 * the status is optional, NULL for none. */
static inline CUresult nvshim_compat_cuGetProcAddress_4(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
	return cuGetProcAddress(symbol, pfn, version, flags, NVSHIM_COMPAT_NULL);
}
static inline CUresult nvshim_compat_cuGetProcAddress_5(const char *symbol, void **pfn, int version, cuuint64_t flags,
							 CUdriverProcAddressQueryResult *status)
{
	return cuGetProcAddress(symbol, pfn, version, flags, status);
}

#ifdef __cplusplus
/* cuCtxCreate, cuMemPrefetchAsync, ... are macros naming the new entry points (cuCtxCreate_v4):
 * these overloads get the same names. */
#if NVSHIM_COMPAT_WANTS(cuCtxCreate)
static inline CUresult cuCtxCreate(CUcontext *ctx, unsigned int flags, CUdevice dev)
{
	return nvshim_compat_cuCtxCreate_3(ctx, flags, dev);
}
#endif
#if NVSHIM_COMPAT_WANTS(cuMemPrefetchAsync)
static inline CUresult cuMemPrefetchAsync(CUdeviceptr p, size_t n, CUdevice dev, CUstream s)
{
	return nvshim_compat_cuMemPrefetchAsync_4(p, n, dev, s);
}
#endif
#if NVSHIM_COMPAT_WANTS(cuMemAdvise)
static inline CUresult cuMemAdvise(CUdeviceptr p, size_t n, CUmem_advise a, CUdevice dev)
{
	return nvshim_compat_cuMemAdvise_dev(p, n, a, dev);
}
#endif
#if NVSHIM_COMPAT_WANTS(cuGraphAddDependencies)
static inline CUresult cuGraphAddDependencies(CUgraph g, const CUgraphNode *from, const CUgraphNode *to, size_t n)
{
	return nvshim_compat_cuGraphAddDependencies_4(g, from, to, n);
}
#endif
#if NVSHIM_COMPAT_WANTS(cuGraphRemoveDependencies)
static inline CUresult cuGraphRemoveDependencies(CUgraph g, const CUgraphNode *from, const CUgraphNode *to, size_t n)
{
	return nvshim_compat_cuGraphRemoveDependencies_4(g, from, to, n);
}
#endif
#if NVSHIM_COMPAT_WANTS(cuGraphGetEdges)
static inline CUresult cuGraphGetEdges(CUgraph g, CUgraphNode *from, CUgraphNode *to, size_t *n)
{
	return nvshim_compat_cuGraphGetEdges_4(g, from, to, n);
}
#endif
#if NVSHIM_COMPAT_WANTS(cuGraphNodeGetDependencies)
static inline CUresult cuGraphNodeGetDependencies(CUgraphNode x, CUgraphNode *d, size_t *n)
{
	return nvshim_compat_cuGraphNodeGetDependencies_3(x, d, n);
}
#endif
#if NVSHIM_COMPAT_WANTS(cuGraphNodeGetDependentNodes)
static inline CUresult cuGraphNodeGetDependentNodes(CUgraphNode x, CUgraphNode *d, size_t *n)
{
	return nvshim_compat_cuGraphNodeGetDependentNodes_3(x, d, n);
}
#endif
#if NVSHIM_COMPAT_WANTS(cuGraphAddNode)
static inline CUresult cuGraphAddNode(CUgraphNode *x, CUgraph g, const CUgraphNode *d, size_t n, CUgraphNodeParams *p)
{
	return nvshim_compat_cuGraphAddNode_5(x, g, d, n, p);
}
#endif
#if NVSHIM_COMPAT_WANTS(cuStreamGetCaptureInfo)
static inline CUresult cuStreamGetCaptureInfo(CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *g,
					      const CUgraphNode **d, size_t *n)
{
	return nvshim_compat_cuStreamGetCaptureInfo_6(s, st, id, g, d, n);
}
#endif
#if NVSHIM_COMPAT_WANTS(cuStreamUpdateCaptureDependencies)
static inline CUresult cuStreamUpdateCaptureDependencies(CUstream s, CUgraphNode *d, size_t n, unsigned int flags)
{
	return nvshim_compat_cuStreamUpdateCaptureDependencies_4(s, d, n, flags);
}
#endif
#if NVSHIM_COMPAT_WANTS(cuGraphExecUpdate)
static inline CUresult cuGraphExecUpdate(CUgraphExec e, CUgraph g, CUgraphNode *node, CUgraphExecUpdateResult *result)
{
	return nvshim_compat_cuGraphExecUpdate_4(e, g, node, result);
}
#endif
#if NVSHIM_COMPAT_WANTS(cuGetProcAddress)
static inline CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
	return nvshim_compat_cuGetProcAddress_4(symbol, pfn, version, flags);
}
#endif
#else
/* C: the new forms under numbered names, then the names as macros choosing by arity. */
#define NVSHIM_COMPAT_NEW(f, n, params, args)                                                         \
	static inline CUresult nvshim_compat_##f##_##n params { return f args; }
NVSHIM_COMPAT_NEW(cuCtxCreate, 4, (CUcontext * c, CUctxCreateParams *p, unsigned int f, CUdevice d), (c, p, f, d))
NVSHIM_COMPAT_NEW(cuMemPrefetchAsync, 5, (CUdeviceptr p, size_t n, CUmemLocation l, unsigned int f, CUstream s),
		  (p, n, l, f, s))
NVSHIM_COMPAT_NEW(cuGraphAddDependencies, 5,
		  (CUgraph g, const CUgraphNode *a, const CUgraphNode *b, const CUgraphEdgeData *e, size_t n),
		  (g, a, b, e, n))
NVSHIM_COMPAT_NEW(cuGraphRemoveDependencies, 5,
		  (CUgraph g, const CUgraphNode *a, const CUgraphNode *b, const CUgraphEdgeData *e, size_t n),
		  (g, a, b, e, n))
NVSHIM_COMPAT_NEW(cuGraphGetEdges, 5, (CUgraph g, CUgraphNode *a, CUgraphNode *b, CUgraphEdgeData *e, size_t *n),
		  (g, a, b, e, n))
NVSHIM_COMPAT_NEW(cuGraphNodeGetDependencies, 4, (CUgraphNode x, CUgraphNode *d, CUgraphEdgeData *e, size_t *n),
		  (x, d, e, n))
NVSHIM_COMPAT_NEW(cuGraphNodeGetDependentNodes, 4, (CUgraphNode x, CUgraphNode *d, CUgraphEdgeData *e, size_t *n),
		  (x, d, e, n))
NVSHIM_COMPAT_NEW(cuGraphAddNode, 6,
		  (CUgraphNode * x, CUgraph g, const CUgraphNode *d, const CUgraphEdgeData *e, size_t n,
		   CUgraphNodeParams *p),
		  (x, g, d, e, n, p))
NVSHIM_COMPAT_NEW(cuStreamGetCaptureInfo, 7,
		  (CUstream s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *g, const CUgraphNode **d,
		   const CUgraphEdgeData **e, size_t *n),
		  (s, st, id, g, d, e, n))
NVSHIM_COMPAT_NEW(cuStreamUpdateCaptureDependencies, 5,
		  (CUstream s, CUgraphNode *d, const CUgraphEdgeData *e, size_t n, unsigned int f), (s, d, e, n, f))
NVSHIM_COMPAT_NEW(cuGraphExecUpdate, 3, (CUgraphExec x, CUgraph g, CUgraphExecUpdateResultInfo *i), (x, g, i))
#undef NVSHIM_COMPAT_NEW
/* cuMemAdvise's new entry point, before its name becomes the macro below. */
static inline CUresult nvshim_compat_cuMemAdvise_location(CUdeviceptr p, size_t n, CUmem_advise a, CUmemLocation l)
{
	return cuMemAdvise(p, n, a, l);
}
#if NVSHIM_COMPAT_WANTS(cuCtxCreate)
#undef cuCtxCreate
#define cuCtxCreate(...) NVSHIM_COMPAT_BY_ARITY(nvshim_compat_cuCtxCreate, __VA_ARGS__)
#endif
#if NVSHIM_COMPAT_WANTS(cuMemPrefetchAsync)
#undef cuMemPrefetchAsync
#define cuMemPrefetchAsync(...) NVSHIM_COMPAT_BY_ARITY(nvshim_compat_cuMemPrefetchAsync, __VA_ARGS__)
#endif
#if NVSHIM_COMPAT_WANTS(cuMemAdvise)
#undef cuMemAdvise
#define cuMemAdvise(p, n, a, d)                                                                      \
	_Generic((d), CUmemLocation: nvshim_compat_cuMemAdvise_location, default: nvshim_compat_cuMemAdvise_dev)(p, n, a, d)
#endif
#if NVSHIM_COMPAT_WANTS(cuGraphAddDependencies)
#undef cuGraphAddDependencies
#define cuGraphAddDependencies(...) NVSHIM_COMPAT_BY_ARITY(nvshim_compat_cuGraphAddDependencies, __VA_ARGS__)
#endif
#if NVSHIM_COMPAT_WANTS(cuGraphRemoveDependencies)
#undef cuGraphRemoveDependencies
#define cuGraphRemoveDependencies(...) NVSHIM_COMPAT_BY_ARITY(nvshim_compat_cuGraphRemoveDependencies, __VA_ARGS__)
#endif
#if NVSHIM_COMPAT_WANTS(cuGraphGetEdges)
#undef cuGraphGetEdges
#define cuGraphGetEdges(...) NVSHIM_COMPAT_BY_ARITY(nvshim_compat_cuGraphGetEdges, __VA_ARGS__)
#endif
#if NVSHIM_COMPAT_WANTS(cuGraphNodeGetDependencies)
#undef cuGraphNodeGetDependencies
#define cuGraphNodeGetDependencies(...) NVSHIM_COMPAT_BY_ARITY(nvshim_compat_cuGraphNodeGetDependencies, __VA_ARGS__)
#endif
#if NVSHIM_COMPAT_WANTS(cuGraphNodeGetDependentNodes)
#undef cuGraphNodeGetDependentNodes
#define cuGraphNodeGetDependentNodes(...) NVSHIM_COMPAT_BY_ARITY(nvshim_compat_cuGraphNodeGetDependentNodes, __VA_ARGS__)
#endif
#if NVSHIM_COMPAT_WANTS(cuGraphAddNode)
#undef cuGraphAddNode
#define cuGraphAddNode(...) NVSHIM_COMPAT_BY_ARITY(nvshim_compat_cuGraphAddNode, __VA_ARGS__)
#endif
#if NVSHIM_COMPAT_WANTS(cuStreamGetCaptureInfo)
#undef cuStreamGetCaptureInfo
#define cuStreamGetCaptureInfo(...) NVSHIM_COMPAT_BY_ARITY(nvshim_compat_cuStreamGetCaptureInfo, __VA_ARGS__)
#endif
#if NVSHIM_COMPAT_WANTS(cuStreamUpdateCaptureDependencies)
#undef cuStreamUpdateCaptureDependencies
#define cuStreamUpdateCaptureDependencies(...)                                                        \
	NVSHIM_COMPAT_BY_ARITY(nvshim_compat_cuStreamUpdateCaptureDependencies, __VA_ARGS__)
#endif
#if NVSHIM_COMPAT_WANTS(cuGraphExecUpdate)
#undef cuGraphExecUpdate
#define cuGraphExecUpdate(...) NVSHIM_COMPAT_BY_ARITY(nvshim_compat_cuGraphExecUpdate, __VA_ARGS__)
#endif
#if NVSHIM_COMPAT_WANTS(cuGetProcAddress)
#undef cuGetProcAddress
#define cuGetProcAddress(...) NVSHIM_COMPAT_BY_ARITY(nvshim_compat_cuGetProcAddress, __VA_ARGS__)
#endif
#endif /* __cplusplus */

#endif /* CUDA_VERSION >= 13000 */
#endif
