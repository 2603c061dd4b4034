// CUDA 12 era driver API code in a C++ source (built by the host compiler, or by nvcc).
// CUDA 13.0 changed every call marked below; tests/e2e/migrate.sh migrates it.
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>

int main()
{
	CUdevice dev;
	CUcontext ctx;
	cuInit(0);
	cuDeviceGet(&dev, 0);
	cuCtxCreate(&ctx, 0, dev);                                          // changed in 13.0
	CUdeviceptr p;
	size_t n = 1 << 20;
	cuMemAllocManaged(&p, n, CU_MEM_ATTACH_GLOBAL);
	cuMemAdvise(p, n, CU_MEM_ADVISE_SET_READ_MOSTLY, dev);              // changed in 13.0
	cuMemPrefetchAsync(p, n, dev, 0);                                   // changed in 13.0
	CUgraph graph;
	cuGraphCreate(&graph, 0);
	CUgraphNode a, b;
	cuGraphAddEmptyNode(&a, graph, NULL, 0);
	cuGraphAddEmptyNode(&b, graph, NULL, 0);
	cuGraphAddDependencies(graph, &a, &b, 1);                           // changed in 13.0
	cudaDeviceProp prop;
	cudaGetDeviceProperties(&prop, 0);
	printf("%d\n", prop.memoryClockRate);                               // removed in 13.0
	cuCtxDestroy(ctx);
	return 0;
}
