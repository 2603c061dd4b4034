/* Text the threads module reads from the machine and the environment: cgroup cpu.max,
 * cpu.cfs_*, memory.max, /proc/meminfo, cpulists, /proc/<pid>/stat, MAKEFLAGS and
 * NVSHIM_MACHINE, the gate's spec (NVSHIM_GATE), nvcc's stage commands the gate rewrites for
 * --split-compile; then the decision on what the override gave,
 * with and without the gate. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "buildwide/slots.h"
#include "buildwide/threads.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size);
	(void)threads_parse_cpu_max(s);
	(void)threads_parse_cfs(s, "100000");
	(void)threads_parse_cfs("200000", s);
	(void)threads_parse_meminfo(s);
	(void)threads_parse_bytes(s);
	(void)threads_parse_cpulist(s);
	(void)threads_stat_is_compiler(s);
	(void)threads_is_compiler(s);
	struct threads_jobserver js = { 0 };
	threads_parse_makeflags(s, &js);
	threads_jobserver_release(&js);
	unsigned n = 0;
	char dir[64];
	if (!slots_gate_parse(s, &n, dir, sizeof(dir))) {
		char again[96];
		/* what is read is written back the same */
		if (n < 1 || n > SLOTS_MAX || dir[0] != '/' || slots_gate_format(again, sizeof(again), n, dir) ||
		    strcmp(again, s + strspn(s, "0")) != 0)
			abort();
	}
	/* a stage command: what the gate runs is the command with only the numbers (or, for
	 * fatbinary, the option) changed */
	unsigned want = slots_split_wanted(s);
	char *split = slots_split_command(s, (unsigned)(size % 300));
	if (split) {
		if (strlen(split) > strlen(s) + 12 * (size_t)(strlen(s) / 13 + 1))
			abort();
		free(split);
	}
	if (want && !strstr(s, "split-compile"))
		abort();
	struct threads_machine m = { 4, 0, 4, 0, 0, -1, 0 };
	if (!threads_parse_override(s, &m)) {
		struct threads_input in = { (unsigned)(size % 9), size % 5, m, THREADS_PASS_MB, (int)(size % 2) };
		char *why = NULL;
		unsigned k = threads_decide(&in, &why);
		if (k < 1)
			abort();
		free(why);
		unsigned slots = threads_gate_slots(&in);
		if (slots < 1 || slots > SLOTS_MAX)
			abort();
		(void)threads_settle(k, (unsigned)(size % 3), (enum threads_js)(size % 4), (unsigned)(size % 7));
	}
	free(s);
	return 0;
}
