// The modules pass on a GPU: the sm_90a-only kernel of the test suite, launched and checked.
// Built with a plain sm_90 list, nvshim upgrades it to sm_90a (plain nvcc fails).
#include <cstdio>

#include "../e2e/fixtures/modules/wgmma.cu"

int main()
{
	const int n = 4096;
	float *x, *y;
	cudaMallocManaged(&x, n * sizeof(float));
	cudaMallocManaged(&y, n * sizeof(float));
	for (int i = 0; i < n; i++) {
		x[i] = (float)i;
		y[i] = -1.0f;
	}
	wgmma_scale<<<n / 128, 128>>>(y, x, n);
	cudaError_t e = cudaDeviceSynchronize();
	if (e != cudaSuccess) {
		printf("wgmma_scale: %s\n", cudaGetErrorString(e));
		return 2;
	}
	int wrong = 0;
	for (int i = 0; i < n; i++)
		wrong += y[i] != 2.0f * i + 1.0f;
	printf("wgmma_scale: %d of %d wrong\n", wrong, n);
	return wrong != 0;
}
