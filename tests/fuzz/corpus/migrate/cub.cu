// CUDA 12 era CUB operators and macros on the host side of a Thrust program (CCCL 2.x): fails
// with CUDA 13.0 (CCCL 3.0); nvshim builds it through the compatibility layer (cub.h), and
// `nvshim migrate` rewrites it for both. tests/e2e/migrate.sh runs it with Thrust's CPP system.
#include <cstdio>
#include <thrust/host_vector.h>
#include <thrust/reduce.h>
#include <cub/thread/thread_operators.cuh>
#include <cub/util_macro.cuh>

int main()
{
  thrust::host_vector<int> z(3);
  z[0] = 10;
  z[1] = 2;
  z[2] = 6;
  int m = thrust::reduce(z.begin(), z.end(), 0, cub::Max());
  int s = thrust::reduce(z.begin(), z.end(), 0, cub::Sum());
  int lo = cub::Min()(s, 7);
  bool eq = cub::Equality()(m, 10) && cub::Inequality()(m, s);
  int d = cub::Difference()(m, 3) * cub::Division()(s, 6);
  int b = CUB_QUOTIENT_CEILING(1000, 256) + CUB_MAX(2, 5) + CUB_MIN(2, 5) + CUB_ROUND_DOWN_NEAREST(13, 4) +
          CUB_ROUND_UP_NEAREST(13, 4) + CUB_QUOTIENT_FLOOR(9, 2);
  printf("%d %d %d %d %d %d\n", m, s, lo, (int)eq, d, b);
  return 0;
}
