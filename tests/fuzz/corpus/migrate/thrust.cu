// CUDA 12 era Thrust and CUB code: builds with CUDA 12.x (CCCL 2.x), not with CUDA 13.0 (CCCL 3.0).
#include <cstdio>
#include <thrust/functional.h>
#include <thrust/host_vector.h>
#include <thrust/transform.h>
#include <thrust/transform_reduce.h>
#include <thrust/reduce.h>
#include <cub/thread/thread_operators.cuh>
#include <cub/util_macro.cuh>

struct square : public thrust::unary_function<float, float>
{
  __host__ __device__ float operator()(float x) const { return x * x; }
};

template <typename T>
struct absdiff : thrust::binary_function<T, T, T>
{
  __host__ __device__ T operator()(T a, T b) const { return a > b ? a - b : b - a; }
};

int main()
{
  thrust::host_vector<float> v(4);
  for (int i = 0; i < 4; i++)
    v[i] = i + 0.5f;
  square::result_type s = thrust::transform_reduce(v.begin(), v.end(), square(), 0.0f, thrust::plus<float>());
  absdiff<int>::first_argument_type a = 3;
  thrust::host_vector<int> x(3), y(3), z(3);
  for (int i = 0; i < 3; i++) {
    x[i] = i * 7;
    y[i] = 10 - i;
  }
  thrust::transform(x.begin(), x.end(), y.begin(), z.begin(), absdiff<int>());
  int m = thrust::reduce(z.begin(), z.end(), 0, cub::Max());
  int sum = cub::Sum()(m, a);
  int lo = cub::Min()(sum, 100);
  int blocks = CUB_QUOTIENT_CEILING(1000, 256) + CUB_MAX(2, 5) + CUB_MIN(2, 5) + CUB_ROUND_UP_NEAREST(5, 4);
  /* cub::Max in a comment and "thrust::unary_function" in a string stay as they are */
  printf("%.3f %d %d %d %d %d thrust::unary_function\n", s, m, sum, lo, blocks, (int)x[2]);
  return 0;
}
