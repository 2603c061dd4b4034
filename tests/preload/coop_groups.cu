/* Cooperative groups: on CUDA 13 the header needs include/ and include/cccl. */
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void k(float *x) {
  cg::thread_block b = cg::this_thread_block();
  x[b.thread_rank()] = 1.0f;
  b.sync();
}
