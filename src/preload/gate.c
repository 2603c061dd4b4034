/* libnvshim-gate.so: one slot for each of nvcc's stages (gate.h). */
#include "preload/gate.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buildwide/slots.h"

static int (*real_system)(const char *);
static int gate_on;
static unsigned gate_n;
static char gate_dir[PATH_MAX];
static unsigned gate_next;
static int gate_split; /* nvshim gave nvcc --split-compile (SLOTS_SPLIT_ENV) */
/* One of nvcc's threads looks for a free slot at a time; the others wait here, asleep. So a
 * compile under --threads K keeps one poller, not K, and its descriptors, however many stages
 * wait. */
static pthread_mutex_t gate_waiting = PTHREAD_MUTEX_INITIALIZER;

/* Whether this process is nvcc itself, not a script or a cache on the way to it. */
static int gate_in_nvcc(void)
{
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0)
		return 0;
	exe[len] = '\0';
	const char *base = strrchr(exe, '/');
	return !strcmp(base ? base + 1 : exe, "nvcc");
}

__attribute__((constructor)) static void gate_init(void)
{
	real_system = (int (*)(const char *))dlsym(RTLD_NEXT, "system");
	const char *spec = getenv(SLOTS_GATE_ENV);
	if (!spec || !gate_in_nvcc())
		return;
	int ok = real_system && !slots_gate_parse(spec, &gate_n, gate_dir, sizeof(gate_dir));
	/* nvcc's stages get the environment the user gave: LD_PRELOAD as it was */
	const char *user = getenv(SLOTS_GATE_PRELOAD_ENV);
	if (user)
		setenv("LD_PRELOAD", user, 1);
	else
		unsetenv("LD_PRELOAD");
	unsetenv(SLOTS_GATE_PRELOAD_ENV);
	unsetenv(SLOTS_GATE_ENV);
	gate_split = getenv(SLOTS_SPLIT_ENV) != NULL;
	unsetenv(SLOTS_SPLIT_ENV);
	gate_on = ok;
}

__attribute__((visibility("default"))) int system(const char *command)
{
	if (!real_system) {
		real_system = (int (*)(const char *))dlsym(RTLD_NEXT, "system");
		if (!real_system) {
			errno = ENOSYS;
			return -1;
		}
	}
	if (!gate_on || !command)
		return real_system(command);
	/* Each stage starts its search at another slot, so that stages starting together spread. */
	unsigned start = __atomic_fetch_add(&gate_next, 1, __ATOMIC_RELAXED) + (unsigned)getpid();
	int locked = !pthread_mutex_lock(&gate_waiting);
	int slot = slots_wait(gate_dir, gate_n, start, NULL);
	/* A stage that splits its optimizations (nvshim's --split-compile S) gets one thread for its
	 * slot and one for each other slot free now, up to S: in a full build, one. */
	int extra[SLOTS_MAX];
	unsigned nextra = 0, want = gate_split ? slots_split_wanted(command) : 0;
	while (slot >= 0 && nextra + 1 < want && nextra + 1 < gate_n) {
		int fd = slots_try(gate_dir, gate_n, start + 1 + nextra);
		if (fd < 0)
			break;
		extra[nextra++] = fd;
	}
	if (locked)
		pthread_mutex_unlock(&gate_waiting);
	char *split = gate_split ? slots_split_command(command, 1 + nextra) : NULL;
	int status = real_system(split ? split : command);
	free(split);
	for (unsigned i = 0; i < nextra; i++)
		slots_give(extra[i]);
	slots_give(slot);
	return status;
}
