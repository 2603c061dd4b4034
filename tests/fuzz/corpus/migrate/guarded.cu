#if CCCL_MAJOR_VERSION >= 3 /* nvshim migrate */
int m = cuda::maximum<>()(1, 2);
#else
int m = cub::Max()(1, 2);
#endif
prop->clockRate; cudaGetDeviceProperties(prop, 0); int k = prop->clockRate