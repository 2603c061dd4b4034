// CUDA 12 era device-info code: the struct filled in one place and read in others (by reference,
// through a pointer, as a member of a context), where the device it was filled for is not in
// sight, as moderngpu, MAGMA and many others write it; and cuBLAS in the same unit.
// tests/e2e/migrate.sh migrates it and builds it with 13.0 and with CUDA 12.9's headers
// (cuBLAS's included).
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
#include <cublas_v2.h>

struct context {
	int ordinal;
	cudaDeviceProp props;
};

static void show(const cudaDeviceProp &p)
{
	printf("%s: %d kHz, memory %d kHz, mode %d\n", p.name, p.clockRate, p.memoryClockRate, p.computeMode);
}

static int overlap(const cudaDeviceProp *p) { return p->deviceOverlap && p->kernelExecTimeoutEnabled >= 0; }

int main()
{
	int n = 0;
	cudaGetDeviceCount(&n);
	std::vector<cudaDeviceProp> all(n);
	for (int d = 0; d < n; d++)
		cudaGetDeviceProperties(&all[d], d);
	context ctx;
	ctx.ordinal = 0;
	if (n)
		ctx.props = all[0];
	for (int d = 0; d < n; d++)
		show(all[d]);
	if (n)
		printf("overlap %d, ratio %d\n", overlap(&ctx.props), ctx.props.singleToDoublePrecisionPerfRatio);
	int v = 0;
	cublasHandle_t h;
	if (cublasCreate(&h) == CUBLAS_STATUS_SUCCESS) {
		cublasGetVersion(h, &v);
		cublasDestroy(h);
	}
	printf("cuBLAS %d\n", v);
	return 0;
}
