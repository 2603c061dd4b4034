/* Seed 002's shape: cooperative groups and 49,408 bytes (0xc100) of static shared memory,
 * 256 bytes more than a kernel may have without opting in. */
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void reduce(const float *in, float *out) {
  __shared__ float tile[49408 / 4];
  cg::thread_block b = cg::this_thread_block();
  for (unsigned i = b.thread_rank(); i < 49408 / 4; i += b.size())
    tile[i] = in[i];
  b.sync();
  if (b.thread_rank() == 0) {
    float s = 0;
    for (unsigned i = 0; i < 49408 / 4; i++)
      s += tile[i];
    out[0] = s;
  }
}
