/* nvshim-devices: lists the GPUs of this machine for nvshim, one "device CC UUID" line each.
 *
 * A separate, dynamically linked program, so that nvshim itself can stay one static
 * executable: it runs only when nvshim's device cache is cold. It tries NVML
 * (libnvidia-ml.so.1), then the driver API (libcuda.so.1), both with dlopen; with neither, or
 * no GPU, it lists nothing and still succeeds. All GPUs are listed, whatever
 * CUDA_VISIBLE_DEVICES says: nvshim applies that itself, so the cache serves every value.
 *
 * An answer it could not complete is no answer: when a driver library is there but neither
 * could be initialised, or a GPU it counted could not be read (both seen with dozens of
 * compiles starting at once on a multi-GPU machine), it tries again a few times, then exits
 * with status 3 and nvshim keeps nothing of it (the next compile asks again).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What a query gave: no library, a library that failed, or a whole listing. */
enum { QUERY_ABSENT = -1, QUERY_FAILED = -2, QUERY_DONE = 0 };

typedef int (*fn_void)(void);
typedef int (*fn_uint_p)(unsigned *);
typedef int (*fn_handle)(unsigned, void **);
typedef int (*fn_cc)(void *, int *, int *);
typedef int (*fn_uuid)(void *, char *, unsigned);

/* Each listing is written to `out` and printed only when whole. */
static int from_nvml(char *out, size_t size)
{
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return QUERY_ABSENT;
	fn_void init = (fn_void)dlsym(h, "nvmlInit_v2");
	fn_void shutdown = (fn_void)dlsym(h, "nvmlShutdown");
	fn_uint_p count = (fn_uint_p)dlsym(h, "nvmlDeviceGetCount_v2");
	fn_handle handle = (fn_handle)dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
	fn_cc cc = (fn_cc)dlsym(h, "nvmlDeviceGetCudaComputeCapability");
	fn_uuid uuid = (fn_uuid)dlsym(h, "nvmlDeviceGetUUID");
	unsigned n = 0;
	if (!init || !count || !handle || !cc)
		return QUERY_ABSENT;
	int st = init();
	/* NVML_ERROR_DRIVER_NOT_LOADED (9), NVML_ERROR_LIBRARY_NOT_FOUND (12): no driver at work */
	if (st == 9 || st == 12)
		return QUERY_ABSENT;
	if (st != 0)
		return QUERY_FAILED;
	int rc = count(&n) != 0 ? QUERY_FAILED : QUERY_DONE;
	size_t used = (size_t)snprintf(out, size, "source NVML\n");
	for (unsigned i = 0; rc == QUERY_DONE && i < n; i++) {
		void *dev;
		int major, minor;
		char id[96] = "";
		if (handle(i, &dev) || cc(dev, &major, &minor)) {
			rc = QUERY_FAILED;
			break;
		}
		if (uuid)
			uuid(dev, id, sizeof(id));
		if (used < size)
			used += (size_t)snprintf(out + used, size - used, "device %d %s\n", major * 10 + minor, id);
	}
	if (used >= size)
		rc = QUERY_FAILED;
	if (shutdown)
		shutdown();
	return rc;
}

typedef int (*fn_init)(unsigned);
typedef int (*fn_count)(int *);
typedef int (*fn_get)(int *, int);
typedef int (*fn_attr)(int *, int, int);
typedef int (*fn_cuuuid)(unsigned char *, int);

static int from_driver(char *out, size_t size)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return QUERY_ABSENT;
	fn_init init = (fn_init)dlsym(h, "cuInit");
	fn_count count = (fn_count)dlsym(h, "cuDeviceGetCount");
	fn_get get = (fn_get)dlsym(h, "cuDeviceGet");
	fn_attr attr = (fn_attr)dlsym(h, "cuDeviceGetAttribute");
	fn_cuuuid uuid = (fn_cuuuid)dlsym(h, "cuDeviceGetUuid_v2");
	int n = 0;
	if (!init || !count || !get || !attr)
		return QUERY_ABSENT;
	int st = init(0);
	/* CUDA_ERROR_NO_DEVICE (100): a driver and no GPU, a whole answer */
	if (st == 100) {
		snprintf(out, size, "source driver API\n");
		return QUERY_DONE;
	}
	/* CUDA_ERROR_STUB_LIBRARY (34), CUDA_ERROR_INSUFFICIENT_DRIVER (35): no driver at work */
	if (st == 34 || st == 35)
		return QUERY_ABSENT;
	if (st != 0 || count(&n) != 0)
		return QUERY_FAILED;
	size_t used = (size_t)snprintf(out, size, "source driver API\n");
	for (int i = 0; i < n; i++) {
		int dev, major, minor;
		/* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75, _MINOR = 76 */
		if (get(&dev, i) || attr(&major, 75, dev) || attr(&minor, 76, dev))
			return QUERY_FAILED;
		unsigned char u[16];
		char id[64] = "";
		if (uuid && !uuid(u, dev))
			snprintf(id, sizeof(id),
				 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
				 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
				 u[12], u[13], u[14], u[15]);
		if (used < size)
			used += (size_t)snprintf(out + used, size - used, "device %d %s\n", major * 10 + minor, id);
	}
	return used < size ? QUERY_DONE : QUERY_FAILED;
}

int main(void)
{
	/* Every GPU, not the visible ones: see above. */
	unsetenv("CUDA_VISIBLE_DEVICES");
	static char listing[64 * 1024];
	for (int attempt = 0; attempt < 5; attempt++) {
		if (attempt) {
			struct timespec pause = { 0, 50000000L * attempt };
			nanosleep(&pause, NULL);
		}
		int nvml = from_nvml(listing, sizeof(listing));
		if (nvml == QUERY_DONE) {
			printf("%send\n", listing);
			return 0;
		}
		int driver = from_driver(listing, sizeof(listing));
		if (driver == QUERY_DONE) {
			printf("%send\n", listing);
			return 0;
		}
		if (nvml == QUERY_ABSENT && driver == QUERY_ABSENT) {
			printf("source none (no NVIDIA driver library)\nend\n");
			return 0;
		}
	}
	fprintf(stderr, "nvshim-devices: the NVIDIA driver library is there, but the GPUs could not be listed\n");
	return 3;
}
