/* libcu++ alone: CCCL, nothing of the runtime headers. */
#include <cuda/std/type_traits>
extern "C" __global__ void k(float *x) {
  static_assert(cuda::std::is_same<float, float>::value, "float");
  x[0] = 1.0f;
}
