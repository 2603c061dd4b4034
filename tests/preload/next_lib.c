/* A library that wraps getpid() and finds the real one with dlsym(RTLD_NEXT), as interposers
 * do. Loaded after libnvshim-preload.so (which defines dlsym), its lookup must still be relative
 * to itself: otherwise it finds its own getpid and recurses. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

__attribute__((visibility("default"))) pid_t getpid(void);
pid_t getpid(void)
{
	static int depth;
	pid_t (*real)(void) = (pid_t(*)(void))dlsym(RTLD_NEXT, "getpid");
	if (!real || depth++) {
		fprintf(stderr, "next_lib: dlsym(RTLD_NEXT, \"getpid\") came back to the wrapper\n");
		exit(3);
	}
	pid_t p = real();
	depth--;
	return p;
}
