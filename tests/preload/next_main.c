/* Calls getpid() (wrapped by next_lib.c) and dlsym(RTLD_DEFAULT) for a symbol of its own. */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

__attribute__((visibility("default"))) int next_main_marker(void);
int next_main_marker(void) { return 42; }

int main(void)
{
	int (*marker)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "next_main_marker");
	printf("pid %s\n", getpid() > 0 ? "ok" : "bad");
	printf("default %s\n", marker && marker() == 42 ? "ok" : "bad");
	void *none = dlsym(RTLD_DEFAULT, "nvrtcCompileProgram");
	printf("nvrtc before dlopen %s\n", none ? "found" : "not found");
	return 0;
}
