#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "helpers.h"
#include "machine/devices.h"

Test(devices, parse_forms)
{
	struct devices d;
	const char *why;
	devices_init(&d);
	cr_assert_eq(devices_parse(&d, "90,80", &why), 0);
	cr_assert_eq(d.n, 2);
	cr_assert_eq(d.v[0].cc, 90);
	cr_assert_eq(d.v[1].cc, 80);
	cr_assert_eq(devices_parse(&d, "sm_86 9.0, 12.0", &why), 0);
	cr_assert_eq(d.n, 3);
	cr_assert_eq(d.v[0].cc, 86);
	cr_assert_eq(d.v[1].cc, 90);
	cr_assert_eq(d.v[2].cc, 120);
	cr_assert_eq(devices_parse(&d, "", &why), 0);
	cr_assert_eq(d.n, 0, "empty: no GPU");
	cr_assert_eq(devices_parse(&d, "ninety", &why), -1);
	cr_assert_eq(d.n, 0);
	devices_release(&d);
}

static struct devices three(void)
{
	struct devices d;
	devices_init(&d);
	static const unsigned cc[] = { 90, 80, 86 };
	static const char *const uuid[] = { "GPU-aaaa-1111", "GPU-bbbb-2222", "GPU-abcd-3333" };
	for (size_t i = 0; i < 3; i++) {
		d.v[i].cc = cc[i];
		strcpy(d.v[i].uuid, uuid[i]);
	}
	d.n = 3;
	return d;
}

Test(devices, cuda_visible_devices)
{
	struct devices d = three();
	devices_select(&d, "2,0");
	cr_assert_eq(d.n, 2);
	cr_assert_eq(d.v[0].cc, 86);
	cr_assert_eq(d.v[1].cc, 90);
	d = three();
	devices_select(&d, "GPU-bbbb");
	cr_assert_eq(d.n, 1);
	cr_assert_eq(d.v[0].cc, 80);
	d = three();
	devices_select(&d, "abcd-3333,1");
	cr_assert_eq(d.n, 2, "UUID without GPU-, then an index");
	cr_assert_eq(d.v[0].cc, 86);
	d = three();
	devices_select(&d, "1,7,0");
	cr_assert_eq(d.n, 1, "CUDA stops at the first entry that matches nothing");
	d = three();
	devices_select(&d, "GPU-a");
	cr_assert_eq(d.n, 0, "an ambiguous prefix selects nothing");
	d = three();
	devices_select(&d, "");
	cr_assert_eq(d.n, 0);
	d = three();
	devices_select(&d, NULL);
	cr_assert_eq(d.n, 3);
}


Test(devices, override_cache_and_detector)
{
	char *dir = test_tmpdir();
	char *cache = concat(dir, "/cache", NULL);
	char *text = xasprintf("#!/bin/sh\necho x >>'%s/runs'\nprintf 'source fake\\ndevice 90 GPU-1\\n"
			       "device 80 GPU-2\\nend\\n'\n", dir);
	char *helper = test_write(dir, "nvshim-devices", text);
	chmod(helper, 0755);
	struct devices d;
	devices_init(&d);

	test_envv[0][0] = "NVSHIM_DEVICES";
	test_envv[0][1] = "75";
	devices_load(&d, test_env, cache, helper);
	cr_assert_eq(d.n, 1);
	cr_assert_str_eq(d.source, "NVSHIM_DEVICES");

	memset(test_envv, 0, sizeof(test_envv));
	devices_load(&d, test_env, cache, helper);
	cr_assert_eq(d.n, 2);
	cr_assert_str_eq(d.source, "nvshim-devices (fake)");
	devices_load(&d, test_env, cache, helper);
	cr_assert_eq(d.n, 2);
	cr_assert_eq(strncmp(d.source, "cache ", 6), 0, "%s", d.source);
	char *runs_path = concat(dir, "/runs", NULL);
	char *runs = test_read(runs_path);
	cr_assert_str_eq(runs, "x\n", "the detector ran once");
	free(runs);

	/* CUDA_VISIBLE_DEVICES applies to the cached list. */
	test_envv[0][0] = "CUDA_VISIBLE_DEVICES";
	test_envv[0][1] = "1";
	devices_load(&d, test_env, cache, helper);
	cr_assert_eq(d.n, 1);
	cr_assert_eq(d.v[0].cc, 80);

	/* Another library path is another key. */
	test_envv[0][0] = "LD_LIBRARY_PATH";
	test_envv[0][1] = "/elsewhere";
	devices_load(&d, test_env, cache, helper);
	runs = test_read(runs_path);
	cr_assert_str_eq(runs, "x\nx\n");
	free(runs);

	/* No detector at all: no GPU, not an error. */
	memset(test_envv, 0, sizeof(test_envv));
	devices_load(&d, test_env, NULL, NULL);
	cr_assert_eq(d.n, 0);
	devices_release(&d);
	test_rmtree(dir);
	free(runs_path);
	free(helper);
	free(text);
	free(cache);
	free(dir);
}
