// CUDA 12 era Thrust: thrust::identity<T>, which CCCL 3.0 removed, converts its argument to T.
// tests/e2e/migrate.sh migrates it and runs it (Thrust's CPP system) on 13.0 and with CCCL 2.8.
#include <cstdio>
#include <thrust/functional.h>
#include <thrust/host_vector.h>
#include <thrust/transform.h>

int main()
{
  thrust::host_vector<double> v(2, 3.75);
  thrust::host_vector<int> o(2);
  thrust::transform(v.begin(), v.end(), o.begin(), thrust::identity<int>());
  printf("%d %g %d\n", o[0], thrust::identity<>()(2.5), thrust::identity<long>()(7));
  return 0;
}
