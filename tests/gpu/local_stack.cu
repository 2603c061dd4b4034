// A kernel whose stack per thread is past what a launch allows (512 KiB): nvcc builds it, every
// launch fails with cudaErrorInvalidValue. A kernel with 256 KiB launches. Prints one line each.
#include <cstdio>
template <int N> __global__ void scratch(int *d, int n)
{
	volatile int a[N];
	for (int i = 0; i < n; i++)
		a[(i * 7919) % N] = d[i];
	d[0] = a[d[1] % N];
}
template <int N> static void launch(const char *name, int *d)
{
	scratch<N><<<1, 32>>>(d, 4);
	cudaError_t e = cudaGetLastError();
	cudaError_t s = cudaDeviceSynchronize();
	printf("%s: launch %s, sync %s\n", name, cudaGetErrorName(e), cudaGetErrorName(s));
}
int main()
{
	int *d;
	cudaMalloc(&d, 64 * sizeof(int));
	cudaMemset(d, 0, 64 * sizeof(int));
	launch<(256 << 10) / 4>("256 KiB", d);
	launch<(4 << 20) / 4>("4 MiB", d);
	return 0;
}
