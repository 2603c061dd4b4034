/* nvshim-devices: lists the GPUs of this machine for nvshim, one "device CC UUID" line each.
 *
 * A separate, dynamically linked program, so that nvshim itself can stay one static
 * executable: it runs only when nvshim's device cache is cold. It tries NVML
 * (libnvidia-ml.so.1), then the driver API (libcuda.so.1), both with dlopen; with neither, or
 * no GPU, it lists nothing and still succeeds. All GPUs are listed, whatever
 * CUDA_VISIBLE_DEVICES says: nvshim applies that itself, so the cache serves every value.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*fn_void)(void);
typedef int (*fn_uint_p)(unsigned *);
typedef int (*fn_handle)(unsigned, void **);
typedef int (*fn_cc)(void *, int *, int *);
typedef int (*fn_uuid)(void *, char *, unsigned);

static int from_nvml(void)
{
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return -1;
	fn_void init = (fn_void)dlsym(h, "nvmlInit_v2");
	fn_void shutdown = (fn_void)dlsym(h, "nvmlShutdown");
	fn_uint_p count = (fn_uint_p)dlsym(h, "nvmlDeviceGetCount_v2");
	fn_handle handle = (fn_handle)dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
	fn_cc cc = (fn_cc)dlsym(h, "nvmlDeviceGetCudaComputeCapability");
	fn_uuid uuid = (fn_uuid)dlsym(h, "nvmlDeviceGetUUID");
	unsigned n = 0;
	if (!init || !count || !handle || !cc || init() != 0 || count(&n) != 0)
		return -1;
	printf("source NVML\n");
	for (unsigned i = 0; i < n; i++) {
		void *dev;
		int major, minor;
		char id[96] = "";
		if (handle(i, &dev) || cc(dev, &major, &minor))
			continue;
		if (uuid)
			uuid(dev, id, sizeof(id));
		printf("device %d %s\n", major * 10 + minor, id);
	}
	if (shutdown)
		shutdown();
	return 0;
}

typedef int (*fn_init)(unsigned);
typedef int (*fn_count)(int *);
typedef int (*fn_get)(int *, int);
typedef int (*fn_attr)(int *, int, int);
typedef int (*fn_cuuuid)(unsigned char *, int);

static int from_driver(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return -1;
	fn_init init = (fn_init)dlsym(h, "cuInit");
	fn_count count = (fn_count)dlsym(h, "cuDeviceGetCount");
	fn_get get = (fn_get)dlsym(h, "cuDeviceGet");
	fn_attr attr = (fn_attr)dlsym(h, "cuDeviceGetAttribute");
	fn_cuuuid uuid = (fn_cuuuid)dlsym(h, "cuDeviceGetUuid_v2");
	int n = 0;
	if (!init || !count || !get || !attr || init(0) != 0 || count(&n) != 0)
		return -1;
	printf("source driver API\n");
	for (int i = 0; i < n; i++) {
		int dev, major, minor;
		/* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75, _MINOR = 76 */
		if (get(&dev, i) || attr(&major, 75, dev) || attr(&minor, 76, dev))
			continue;
		unsigned char u[16];
		char id[64] = "";
		if (uuid && !uuid(u, dev))
			snprintf(id, sizeof(id),
				 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
				 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
				 u[12], u[13], u[14], u[15]);
		printf("device %d %s\n", major * 10 + minor, id);
	}
	return 0;
}

int main(void)
{
	/* Every GPU, not the visible ones: see above. */
	unsetenv("CUDA_VISIBLE_DEVICES");
	if (from_nvml() && from_driver())
		printf("source none (no NVIDIA driver library)\n");
	printf("end\n");
	return 0;
}
