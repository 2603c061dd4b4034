// CUDA 12 era CUB fancy iterators (CCCL 2.x), which CCCL 3.0 removed: tests/e2e/migrate.sh migrates
// them to Thrust's (thrust::counting_iterator, constant_iterator, transform_iterator) and runs the
// host program on 13.0 and with CCCL 2.8.
#include <cstdio>
#include <cub/cub.cuh>

struct twice { __host__ __device__ int operator()(int x) const { return 2 * x; } };

int main()
{
  int h[4] = { 1, 2, 3, 4 };
  cub::CountingInputIterator<int> c(5);
  cub::ConstantInputIterator<int> k(7);
  cub::TransformInputIterator<int, twice, int *> t(h, twice());
  printf("%d %d %d %d\n", c[3], k[100], t[2], *(t + 3));
  return 0;
}
