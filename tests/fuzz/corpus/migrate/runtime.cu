// CUDA 12 era runtime API code, as cuda-samples v12.9 writes it. CUDA 13.0 removed or changed
// every API marked below; tests/e2e/migrate.sh migrates it.
#include <cstdio>
#include <cuda_runtime.h>


__global__ void scale(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= 2.0f;
}

int main()
{
	int dev = 0;
	cudaDeviceProp prop;
	cudaGetDeviceProperties(&prop, dev);
	printf("%d kHz, mode %d\n", prop.clockRate, prop.computeMode);     // removed fields
	float *x = NULL;
	size_t n = 1 << 20;
	cudaMallocManaged(&x, n * sizeof(float));
	cudaMemAdvise(x, n * sizeof(float), cudaMemAdviseSetPreferredLocation, dev);
	cudaMemPrefetchAsync(x, n * sizeof(float), dev, 0);
	cudaStream_t s;
	cudaStreamCreate(&s);
	cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
	scale<<<(n + 255) / 256, 256, 0, s>>>(x, (int)n);
	cudaStreamCaptureStatus status;
	unsigned long long id;
	cudaGraph_t g;
	const cudaGraphNode_t *deps;
	size_t ndeps;
	cudaStreamGetCaptureInfo(s, &status, &id, &g, &deps, &ndeps);
	cudaGraph_t graph;
	cudaStreamEndCapture(s, &graph);
	cudaGraphNode_t a, b;
	cudaGraphAddEmptyNode(&a, graph, NULL, 0);
	cudaGraphNodeParams p = {};
	p.type = cudaGraphNodeTypeEmpty;
	cudaGraphAddNode(&b, graph, NULL, 0, &p);
	cudaGraphAddDependencies(graph, &a, &b, 1);
	cudaThreadSynchronize();
	cudaFree(x);
	return 0;
}
