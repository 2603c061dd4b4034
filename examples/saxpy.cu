// The bundled example: y = a*x + y on the GPU, checked on the host.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void saxpy(int n, float a, const float *x, float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}

int main()
{
	const int n = 1 << 20;
	float *x, *y;
	if (cudaMallocManaged(&x, n * sizeof(float)) != cudaSuccess ||
	    cudaMallocManaged(&y, n * sizeof(float)) != cudaSuccess) {
		std::printf("saxpy: built; no usable GPU here (%s)\n", cudaGetErrorString(cudaGetLastError()));
		return 0;
	}
	for (int i = 0; i < n; i++) {
		x[i] = 1.0f;
		y[i] = 2.0f;
	}
	saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
	cudaError_t err = cudaGetLastError(); /* a launch error, such as no kernel image */
	if (err == cudaSuccess)
		err = cudaDeviceSynchronize();
	if (err != cudaSuccess) {
		std::printf("saxpy: kernel failed: %s\n", cudaGetErrorString(err));
		return 1;
	}
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad += y[i] != 4.0f;
	std::printf("saxpy: %d of %d results wrong\n", bad, n);
	cudaFree(x);
	cudaFree(y);
	return bad != 0;
}
