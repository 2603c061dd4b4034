struct a : thrust::binary_function<int,
 int, int>, b {
#define X cudaThreadSynchronize()
 const char *s = R"x(cub::Max)x"; int y = CUB_MAX(f(1, 2), 3);
