#include <cstdio>
template <int N> __global__ void k(int *d, int n) {
  volatile int a[N];
  for (int i = 0; i < n; i++) a[(i * 7919) % N] = d[i];
  d[0] = a[d[1] % N];
}
template <int KB> void run(int *d) {
  constexpr int N = KB * 1024 / 4 - 16;
  cudaFuncAttributes at; cudaFuncGetAttributes(&at, k<N>);
  k<N><<<1, 32>>>(d, 4);
  cudaError_t e = cudaGetLastError();
  cudaError_t s = cudaDeviceSynchronize();
  printf("%d KiB - 64: localSizeBytes=%zu launch=%s sync=%s\n", KB, at.localSizeBytes, cudaGetErrorString(e), cudaGetErrorString(s));
}
int main() {
  int *d; cudaMalloc(&d, 64 * sizeof(int)); cudaMemset(d, 0, 64 * sizeof(int));
  run<256>(d); run<384>(d); run<448>(d); run<480>(d); run<496>(d); run<504>(d); run<508>(d); run<510>(d); run<511>(d); run<512>(d);
  size_t lim; cudaDeviceGetLimit(&lim, cudaLimitStackSize); printf("stack limit now %zu\n", lim);
  cudaError_t r = cudaDeviceSetLimit(cudaLimitStackSize, 600 * 1024); printf("set 600KiB: %s\n", cudaGetErrorString(r));
  r = cudaDeviceSetLimit(cudaLimitStackSize, 512 * 1024); printf("set 512KiB: %s\n", cudaGetErrorString(r));
  r = cudaDeviceSetLimit(cudaLimitStackSize, 510 * 1024); printf("set 510KiB: %s\n", cudaGetErrorString(r));
  return 0;
}
