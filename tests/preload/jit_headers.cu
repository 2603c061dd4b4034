/* Cooperative groups, libcu++ and CUB with no include directory: NVRTC needs the runtime
 * headers and CCCL of the CUDA it came from (tests/e2e/jit_wheels.sh). */
#include <cooperative_groups.h>
#include <cuda/std/type_traits>
#include <cuda/std/array>
#include <cub/block/block_reduce.cuh>
namespace cg = cooperative_groups;
extern "C" __global__ void k(float *x) {
  using R = cub::BlockReduce<float, 128>;
  __shared__ typename R::TempStorage t;
  static_assert(cuda::std::is_same<float, float>::value, "float");
  cuda::std::array<float, 2> a{1.0f, 2.0f};
  cg::thread_block b = cg::this_thread_block();
  float s = R(t).Sum(x[b.thread_rank()] * a[1]);
  if (b.thread_rank() == 0) x[0] = s;
}
