// The modules pass on a GPU: the cp.async kernel whose sm_75 stub throws, built from a list with
// sm_75 (dropped by the probe), launched and checked.
#include <cstdio>

#include "../e2e/fixtures/modules/cpasync_exc.cu"

int main()
{
	const int n = 1 << 16;
	float *in, *out;
	cudaMallocManaged(&in, n * sizeof(float));
	cudaMallocManaged(&out, n * sizeof(float));
	for (int i = 0; i < n; i++) {
		in[i] = (float)(i % 1000);
		out[i] = -1.0f;
	}
	copy_async<<<n / 256, 256>>>(out, in, n);
	cudaError_t e = cudaDeviceSynchronize();
	if (e != cudaSuccess) {
		printf("copy_async: %s\n", cudaGetErrorString(e));
		return 2;
	}
	int wrong = 0;
	for (int i = 0; i < n; i++)
		wrong += out[i] != 2.0f * (float)(i % 1000);
	printf("copy_async: %d of %d wrong\n", wrong, n);
	return wrong != 0;
}
