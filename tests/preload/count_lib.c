/* An interposer of nvrtcCompileProgram, preloaded after libnvshim-preload.so: it writes each
 * call's options to stderr ("count_lib: compile -arch=compute_90 ...") and hands the call on
 * with dlsym(RTLD_NEXT). The tests count the lines: the happy path must compile once, with the
 * caller's options. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <nvrtc.h>

__attribute__((visibility("default"))) nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int n,
									 const char *const *options);
nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int n, const char *const *options)
{
	char line[4096] = "count_lib: compile";
	for (int i = 0; i < n; i++) {
		strncat(line, " ", sizeof(line) - strlen(line) - 1);
		strncat(line, options[i], sizeof(line) - strlen(line) - 1);
	}
	fprintf(stderr, "%s\n", line);
	nvrtcResult (*real)(nvrtcProgram, int, const char *const *);
	void *f = dlsym(RTLD_NEXT, "nvrtcCompileProgram");
	memcpy(&real, &f, sizeof(f));
	return real ? real(prog, n, options) : NVRTC_ERROR_INTERNAL_ERROR;
}
