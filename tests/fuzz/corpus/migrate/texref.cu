// CUDA 11 era texture references (removed in CUDA 12.0), the common simple pattern: a file-scope
// 1D reference bound to linear memory with cudaBindTexture and read with tex1Dfetch.
// tests/e2e/migrate.sh migrates it to a texture object in a __device__ variable and builds it
// with 13.0 and with CUDA 12.9's headers (what it prints needs a GPU).
#include <cstdio>
#include <cuda_runtime.h>

texture<float, 1, cudaReadModeElementType> src_tex;
static texture<int2> pair_tex;

__global__ void gather(float *out, const int *idx, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = tex1Dfetch(src_tex, idx[i]) + tex1Dfetch(pair_tex, i).y;
}

int main()
{
	const int n = 256;
	float *src, *out;
	int2 *pairs;
	int *idx;
	cudaMallocManaged(&src, n * sizeof(float));
	cudaMallocManaged(&out, n * sizeof(float));
	cudaMallocManaged(&pairs, n * sizeof(int2));
	cudaMallocManaged(&idx, n * sizeof(int));
	for (int i = 0; i < n; i++) {
		src[i] = 0.5f * i;
		idx[i] = n - 1 - i;
		pairs[i] = make_int2(i, 2 * i);
	}
	cudaBindTexture(0, src_tex, src, n * sizeof(float));
	cudaBindTexture(NULL, pair_tex, pairs, n * sizeof(int2));
	gather<<<1, n>>>(out, idx, n);
	cudaError_t e = cudaDeviceSynchronize();
	printf("%s %g %g\n", cudaGetErrorString(e), out[0], out[n - 1]);
	cudaUnbindTexture(src_tex);
	cudaUnbindTexture(pair_tex);
	return 0;
}
