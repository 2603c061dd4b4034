// CUDA 12 era CUB fancy iterators with an offset type (CCCL 2.x), and cub::DiscardOutputIterator,
// which CCCL 3.0 removed: tests/e2e/migrate.sh migrates them to Thrust's and runs the host
// program on 13.0 and with CCCL 2.8: the same values, and counting_iterator keeps the offset type
// as its difference type.
#include <cstdio>
#include <cub/cub.cuh>

struct twice { __host__ __device__ int operator()(int x) const { return 2 * x; } };

int main()
{
  int h[4] = { 1, 2, 3, 4 };
  cub::CountingInputIterator<int, long long> c(5);
  cub::ConstantInputIterator<float, int> k(2.5f);
  cub::TransformInputIterator<int, twice, int *, int> t(h, twice());
  cub::DiscardOutputIterator<> d;
  cub::DiscardOutputIterator<long long> e(3);
  *d = 4;
  e[2] = 5;
  printf("%d %g %d %d %d %d %d\n", c[3], k[100], t[2], (int)((c + 7) - c), (int)((d + 5) - d),
         (int)((k + 9) - k), (int)sizeof((c + 1) - c));
  return 0;
}
