#include <criterion/criterion.h>

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "base/runner.h"
#include "buildwide/slots.h"
#include "buildwide/threads.h"

/* A machine: CPUs, compilers running, slots held, MiB available (-1 unknown). */
static struct threads_input input(unsigned units, size_t setting, unsigned cpus, unsigned compilers,
				  unsigned held, long long mem_mb)
{
	struct threads_input in = { units, setting, { cpus, 0, cpus, compilers, held, mem_mb, 0 },
				    THREADS_PASS_MB, 0 };
	return in;
}

/* The same machine, with nvcc's stages taking turns in the slots (libnvshim-gate.so). */
static struct threads_input gated(unsigned units, size_t setting, unsigned cpus, unsigned compilers,
				  unsigned held, long long mem_mb)
{
	struct threads_input in = input(units, setting, cpus, compilers, held, mem_mb);
	in.gate = 1;
	return in;
}

static unsigned decide(struct threads_input in)
{
	char *why = NULL;
	unsigned k = threads_decide(&in, &why);
	cr_assert(why && *why);
	free(why);
	return k;
}

Test(threads, a_lone_compile_gets_the_idle_cores)
{
	cr_assert_eq(decide(input(7, 0, 2, 0, 0, 64000)), 2);
	cr_assert_eq(decide(input(7, 0, 16, 0, 0, 64000)), 7);
	cr_assert_eq(decide(input(3, 0, 16, 0, 0, -1)), 3, "unknown memory does not limit");
}

Test(threads, one_target_or_a_full_machine_gets_one)
{
	cr_assert_eq(decide(input(1, 0, 16, 0, 0, 64000)), 1);
	cr_assert_eq(decide(input(7, 0, 2, 2, 0, 64000)), 1, "as many compilers as CPUs");
	cr_assert_eq(decide(input(7, 0, 2, 5, 0, 64000)), 1, "more compilers than CPUs");
	cr_assert_eq(decide(input(7, 0, 16, 0, 16, 64000)), 1, "every slot held by nvshim");
	cr_assert_eq(decide(input(7, 0, 0, 0, 0, 64000)), 1, "CPUs unknown");
}

Test(threads, running_compilers_and_slots_take_their_cpus)
{
	cr_assert_eq(decide(input(7, 0, 16, 12, 0, 64000)), 4);
	cr_assert_eq(decide(input(7, 0, 16, 0, 13, 64000)), 3);
	/* a compile holding a slot also shows as a compiler: the larger count, not the sum */
	cr_assert_eq(decide(input(7, 0, 16, 10, 12, 64000)), 4);
}

Test(threads, memory_bounds_the_passes)
{
	cr_assert_eq(decide(input(7, 0, 16, 0, 0, 3 * THREADS_PASS_MB + 10)), 3);
	cr_assert_eq(decide(input(7, 0, 16, 0, 0, THREADS_PASS_MB / 2)), 1, "less than one pass: one");
	cr_assert_eq(decide(input(7, 0, 16, 0, 0, 0)), 1);
}

Test(threads, the_setting_caps_or_turns_it_off)
{
	cr_assert_eq(decide(input(7, 3, 16, 0, 0, 64000)), 3);
	cr_assert_eq(decide(input(2, 3, 16, 0, 0, 64000)), 2, "a cap above the targets changes nothing");
	cr_assert_eq(decide(input(7, THREADS_OFF, 16, 0, 0, 64000)), 1);
	cr_assert_eq(decide(input(7, 1, 16, 0, 0, 64000)), 1);
}

Test(threads, the_reason_names_the_inputs)
{
	struct threads_input in = input(7, 3, 16, 3, 2, 5000);
	char *why = NULL;
	cr_assert_eq(threads_decide(&in, &why), 3);
	cr_assert_str_eq(why, "7 targets, 13 of 16 CPUs free (3 compilers running, 2 slots held), "
			      "memory for 4 passes, threads = 3");
	free(why);
	/* a cap that does not bind is not named */
	in.setting = 8;
	cr_assert_eq(threads_decide(&in, &why), 4);
	cr_assert_str_eq(why, "7 targets, 13 of 16 CPUs free (3 compilers running, 2 slots held), "
			      "memory for 4 passes");
	free(why);
	in = input(2, THREADS_OFF, 1, 0, 0, -1);
	cr_assert_eq(threads_decide(&in, &why), 1);
	cr_assert_str_eq(why, "2 targets, 1 of 1 CPU free (0 compilers running, 0 slots held), threads = off");
	free(why);
}

Test(threads, with_the_gate_a_busy_build_still_asks_for_every_target)
{
	/* every compiler running is a stage of nvshim's, holding a slot: the slots decide */
	struct threads_input in = gated(7, 0, 16, 16, 16, 64000);
	cr_assert_eq(decide(in), 7);
	cr_assert_eq(threads_gate_slots(&in), 16);
	in = gated(7, 0, 2, 2, 2, 64000);
	cr_assert_eq(decide(in), 2, "no more than the CPUs");
	cr_assert_eq(threads_gate_slots(&in), 2);
	cr_assert_eq(decide(gated(3, 0, 16, 0, 0, 64000)), 3, "no more than the targets");
}

Test(threads, with_the_gate_other_compilers_and_memory_take_slots)
{
	/* 12 compilers, 4 of them nvshim's stages: 8 are someone else's */
	struct threads_input in = gated(7, 0, 16, 12, 4, 64000);
	cr_assert_eq(threads_gate_slots(&in), 8);
	cr_assert_eq(decide(in), 7);
	in = gated(7, 0, 16, 20, 0, 64000);
	cr_assert_eq(threads_gate_slots(&in), 1, "a machine full of others: one slot, never none");
	cr_assert_eq(decide(in), 1);
	/* memory for 3 more passes beside the 2 running */
	in = gated(7, 0, 16, 2, 2, 3 * THREADS_PASS_MB + 10);
	cr_assert_eq(threads_gate_slots(&in), 5);
	cr_assert_eq(decide(in), 5);
	in = gated(7, 0, 16, 0, 0, 0);
	cr_assert_eq(threads_gate_slots(&in), 1);
	in = gated(7, 0, 16, 0, 0, -1);
	cr_assert_eq(threads_gate_slots(&in), 16, "unknown memory does not limit");
	in = gated(7, 0, 1000, 0, 0, -1);
	cr_assert_eq(threads_gate_slots(&in), SLOTS_MAX);
	cr_assert_eq(decide(gated(7, 2, 16, 0, 0, 64000)), 2, "the setting caps K");
	cr_assert_eq(decide(gated(7, THREADS_OFF, 16, 0, 0, 64000)), 1);
}

Test(threads, with_the_gate_the_reason_names_the_inputs)
{
	struct threads_input in = gated(7, 0, 16, 5, 2, 5000);
	char *why = NULL;
	cr_assert_eq(threads_decide(&in, &why), 6);
	cr_assert_str_eq(why, "7 targets, 16 CPUs, 3 other compilers running, 2 slots held by nvshim's stages, "
			      "memory for 4 passes");
	free(why);
}

Test(threads, settle_with_and_without_a_jobserver)
{
	cr_assert_eq(threads_settle(4, 3, THREADS_JS_ABSENT, 0), 4);
	cr_assert_eq(threads_settle(4, 1, THREADS_JS_ABSENT, 0), 2, "only the slots got");
	cr_assert_eq(threads_settle(4, 3, THREADS_JS_PIPE, 0), 1, "no free token");
	cr_assert_eq(threads_settle(4, 3, THREADS_JS_PIPE, 2), 3);
	cr_assert_eq(threads_settle(4, 3, THREADS_JS_FIFO, 3), 4);
	cr_assert_eq(threads_settle(4, 3, THREADS_JS_BROKEN, 3), 1, "a broken jobserver: one");
	cr_assert_eq(threads_settle(0, 0, THREADS_JS_ABSENT, 0), 1);
}

Test(threads, cgroup_cpu_quota)
{
	cr_assert_float_eq(threads_parse_cpu_max("max 100000\n"), 0, 1e-9);
	cr_assert_float_eq(threads_parse_cpu_max("max\n"), 0, 1e-9);
	cr_assert_float_eq(threads_parse_cpu_max("150000 100000\n"), 1.5, 1e-9);
	cr_assert_float_eq(threads_parse_cpu_max("400000 100000"), 4, 1e-9);
	cr_assert_lt(threads_parse_cpu_max(""), 0);
	cr_assert_lt(threads_parse_cpu_max("150000"), 0);
	cr_assert_lt(threads_parse_cpu_max("150000 0"), 0);
	cr_assert_lt(threads_parse_cpu_max("abc 100000"), 0);
	cr_assert_lt(threads_parse_cpu_max("99999999999999999999999 1"), 0);
	cr_assert_float_eq(threads_parse_cfs("-1\n", "100000\n"), 0, 1e-9);
	cr_assert_float_eq(threads_parse_cfs("200000\n", "100000\n"), 2, 1e-9);
	cr_assert_lt(threads_parse_cfs("x", "100000"), 0);
	cr_assert_lt(threads_parse_cfs("100", "0"), 0);
}

Test(threads, memory_texts)
{
	cr_assert_eq(threads_parse_meminfo("MemTotal:       16000000 kB\nMemFree:  100 kB\n"
					   "MemAvailable:    8388608 kB\n"), 8192);
	cr_assert_eq(threads_parse_meminfo("MemTotal: 1 kB\n"), -1);
	cr_assert_eq(threads_parse_meminfo("MemAvailable: x kB\n"), -1);
	cr_assert_eq(threads_parse_bytes("max\n"), 0);
	cr_assert_eq(threads_parse_bytes("1073741824\n"), 1073741824LL);
	cr_assert_eq(threads_parse_bytes("12k"), -1);
	cr_assert_eq(threads_parse_bytes(""), -1);
}

Test(threads, cpu_lists)
{
	cr_assert_eq(threads_parse_cpulist("0-3,8,10-11\n"), 7);
	cr_assert_eq(threads_parse_cpulist("0"), 1);
	cr_assert_eq(threads_parse_cpulist("3-1"), 0);
	cr_assert_eq(threads_parse_cpulist("a"), 0);
	cr_assert_eq(threads_parse_cpulist("0-99999999"), 0);
}

static struct threads_jobserver parse_mf(const char *text)
{
	struct threads_jobserver js = { 0 };
	threads_parse_makeflags(text, &js);
	return js;
}

Test(threads, makeflags)
{
	struct threads_jobserver js = parse_mf("");
	cr_assert_eq(js.kind, THREADS_JS_ABSENT);
	cr_assert_eq(js.parallel, 0);
	js = parse_mf("k");
	cr_assert_eq(js.kind, THREADS_JS_ABSENT);
	cr_assert_eq(js.parallel, 0);
	js = parse_mf(" -j4 --jobserver-auth=3,4");
	cr_assert_eq(js.kind, THREADS_JS_PIPE);
	cr_assert_eq(js.rfd, 3);
	cr_assert_eq(js.wfd, 4);
	cr_assert_eq(js.parallel, 1);
	js = parse_mf("-j --jobserver-fds=5,6");
	cr_assert_eq(js.kind, THREADS_JS_PIPE);
	cr_assert_eq(js.rfd, 5);
	js = parse_mf("kj -- V=1");
	cr_assert_eq(js.kind, THREADS_JS_ABSENT);
	cr_assert_eq(js.parallel, 1, "a bare j among the letters: -j without a number");
	js = parse_mf(" -j8 --jobserver-auth=fifo:/tmp/GMfifo123");
	cr_assert_eq(js.kind, THREADS_JS_FIFO);
	cr_assert_str_eq(js.fifo, "/tmp/GMfifo123");
	threads_jobserver_release(&js);
	js = parse_mf("--jobserver-auth=fifo:/a --jobserver-auth=7,8");
	cr_assert_eq(js.kind, THREADS_JS_PIPE, "the last one wins");
	cr_assert_null(js.fifo);
	cr_assert_eq(js.rfd, 7);
	js = parse_mf(" -j2 --jobserver-auth=abc");
	cr_assert_eq(js.kind, THREADS_JS_BROKEN);
	js = parse_mf("--jobserver-auth=3,");
	cr_assert_eq(js.kind, THREADS_JS_BROKEN);
	js = parse_mf("--jobserver-auth=99999999999,4");
	cr_assert_eq(js.kind, THREADS_JS_BROKEN);
	js = parse_mf("-j1");
	cr_assert_eq(js.parallel, 0);
}

Test(threads, compiler_processes)
{
	cr_assert(threads_is_compiler("cicc\n"));
	cr_assert(threads_is_compiler("ptxas"));
	cr_assert(threads_is_compiler("cc1plus"));
	cr_assert_not(threads_is_compiler("nvcc"));
	cr_assert_not(threads_is_compiler("ciccx"));
	cr_assert(threads_stat_is_compiler("123 (cicc) R 1 2 3"));
	cr_assert(threads_stat_is_compiler("123 (ptxas) S 1 2 3"));
	cr_assert_not(threads_stat_is_compiler("123 (cicc) Z 1 2 3"), "a zombie");
	cr_assert_not(threads_stat_is_compiler("123 (cicc) T 1 2 3"), "stopped");
	cr_assert_not(threads_stat_is_compiler("123 (a) cicc) R 1"));
	cr_assert_not(threads_stat_is_compiler("123 cicc R"));
	cr_assert_not(threads_stat_is_compiler("123 (cicc)"));
}

Test(threads, machine_override)
{
	struct threads_machine m = { 8, 0, 8, 0, 0, -1, 0 };
	cr_assert_eq(threads_parse_override("cpus=3,busy=1,mem_mb=100", &m), 0);
	cr_assert_eq(m.cpus, 3);
	cr_assert_eq(m.compilers, 1);
	cr_assert_eq(m.mem_avail_mb, 100);
	cr_assert(m.overridden);
	struct threads_machine before = m;
	cr_assert_eq(threads_parse_override("cpus=x", &m), -1);
	cr_assert_eq(threads_parse_override("gpus=2", &m), -1);
	cr_assert_eq(threads_parse_override("cpus=0", &m), -1);
	cr_assert_eq(threads_parse_override("cpus", &m), -1);
	cr_assert_eq(memcmp(&m, &before, sizeof(m)), 0, "unchanged when malformed");

	threads_machine_read(&m, "cpus=5,busy=2,mem_mb=4096");
	cr_assert_eq(m.cpus, 5);
	cr_assert_eq(m.compilers, 2);
	cr_assert_eq(m.mem_avail_mb, 4096);
	threads_machine_read(&m, "busy=0");
	cr_assert_geq(m.cpus, 1, "the CPUs read from the machine");
	cr_assert_eq(m.compilers, 0);
	threads_machine_read(&m, NULL);
	cr_assert_geq(m.cpus, 1);
	cr_assert_leq(m.cpus, (unsigned)sysconf(_SC_NPROCESSORS_ONLN));
}

Test(threads, slots_are_taken_counted_and_given_back)
{
	char *dir = test_tmpdir();
	char *slots = concat(dir, "/threads", NULL);
	struct threads_hold a, b;
	threads_hold_init(&a);
	threads_hold_init(&b);
	cr_assert_eq(slots_held(slots, 3), 0);
	cr_assert_eq(threads_slots_take(&a, slots, 3, 1), 1);
	cr_assert_eq(a.nslots, 2);
	cr_assert_eq(slots_held(slots, 3), 2);
	/* another compile: one slot is left, and it does not wait for it */
	cr_assert_eq(threads_slots_take(&b, slots, 3, 2), 0);
	cr_assert_eq(slots_held(slots, 3), 3);
	threads_slots_keep(&a, 1);
	cr_assert_eq(slots_held(slots, 3), 2);
	threads_hold_release(&a);
	threads_hold_release(&b);
	threads_hold_release(&b);
	cr_assert_eq(slots_held(slots, 3), 0);
	cr_assert_eq(threads_slots_take(&a, NULL, 3, 1), -1, "no directory: no slots");
	cr_assert_eq(threads_slots_take(&a, "/proc/nvshim-no-such/threads", 3, 1), -1);
	threads_hold_release(&a);
	free(slots);
	free(dir);
}

Test(threads, the_first_slot_is_waited_for)
{
	char *dir = test_tmpdir();
	char *slots = concat(dir, "/threads", NULL);
	struct threads_hold a;
	threads_hold_init(&a);
	cr_assert_eq(threads_slots_take(&a, slots, 1, 0), 0);
	/* Events, not a clock (a loaded machine may start the child late): the child says it
	 * starts, and reports when it had the slot, which must be after the parent gave it back. */
	int ready[2], got[2];
	cr_assert_eq(pipe(ready), 0);
	cr_assert_eq(pipe(got), 0);
	pid_t pid = fork();
	if (!pid) {
		/* the child holds copies of the locked descriptions: close them, as exec would */
		threads_hold_release(&a);
		struct threads_hold b;
		threads_hold_init(&b);
		ssize_t w = write(ready[1], "", 1);
		int extra = threads_slots_take(&b, slots, 1, 0);
		double when = runner_now_ms();
		w += write(got[1], &when, sizeof(when));
		(void)w;
		_exit(extra == 0 ? 0 : 1);
	}
	char c;
	cr_assert_eq(read(ready[0], &c, 1), 1);
	usleep(300 * 1000);
	double released = runner_now_ms();
	threads_hold_release(&a);
	double when = 0;
	cr_assert_eq(read(got[0], &when, sizeof(when)), (ssize_t)sizeof(when));
	int st = 0;
	waitpid(pid, &st, 0);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the second compile got the slot");
	cr_assert_geq(when, released, "the second compile had the slot before it was given back");
	for (int i = 0; i < 2; i++) {
		close(ready[i]);
		close(got[i]);
	}
	free(slots);
	free(dir);
}

Test(threads, a_slot_dies_with_its_holder)
{
	char *dir = test_tmpdir();
	int fds[2];
	cr_assert_eq(pipe(fds), 0);
	pid_t pid = fork();
	if (!pid) {
		int fd = slots_try(dir, 1, 0);
		char c = fd >= 0 ? 'y' : 'n';
		if (write(fds[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	char c = 0;
	cr_assert_eq(read(fds[0], &c, 1), 1);
	cr_assert_eq(c, 'y', "the child took the slot");
	cr_assert_eq(slots_held(dir, 1), 1);
	cr_assert_lt(slots_try(dir, 1, 0), 0, "held by the child: nothing without waiting");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	unsigned waited = 1234;
	int fd = slots_wait(dir, 1, 0, &waited);
	cr_assert_geq(fd, 0, "a killed holder gave its slot back");
	cr_assert_lt(waited, 1000);
	slots_give(fd);
	cr_assert_eq(slots_held(dir, 1), 0);
	close(fds[0]);
	close(fds[1]);
	free(dir);
}

Test(threads, two_descriptions_of_one_process_are_two_holders)
{
	/* nvcc's threads each take a slot: one process can hold two, never one twice */
	char *dir = test_tmpdir();
	int a = slots_try(dir, 2, 0), b = slots_try(dir, 2, 0);
	cr_assert(a >= 0 && b >= 0);
	cr_assert_lt(slots_try(dir, 2, 1), 0);
	cr_assert_eq(slots_held(dir, 2), 2);
	slots_give(a);
	int c = slots_try(dir, 2, 1);
	cr_assert_geq(c, 0);
	slots_give(b);
	slots_give(c);
	slots_give(-1);
	cr_assert_eq(slots_held(dir, 2), 0);
	cr_assert_lt(slots_wait("/proc/nvshim-no-such", 2, 0, NULL), 0, "unusable: the caller goes on");
	cr_assert_lt(slots_wait(dir, 0, 0, NULL), 0);
	free(dir);
}

Test(threads, the_gate_spec_is_written_and_read)
{
	char buf[64], dir[32];
	unsigned n = 0;
	cr_assert_eq(slots_gate_format(buf, sizeof(buf), 16, "/c/threads"), 0);
	cr_assert_str_eq(buf, "16:/c/threads");
	cr_assert_eq(slots_gate_parse(buf, &n, dir, sizeof(dir)), 0);
	cr_assert_eq(n, 16);
	cr_assert_str_eq(dir, "/c/threads");
	cr_assert_eq(slots_gate_parse("2:/a:b c", &n, dir, sizeof(dir)), 0, "the rest is the directory");
	cr_assert_str_eq(dir, "/a:b c");
	cr_assert_eq(slots_gate_format(buf, 8, 16, "/c/threads"), -1, "too long");
	static const char *const bad[] = { "", ":/a", "0:/a", "257:/a", "99999999999:/a", "2/a", "2:a", "2:",
					   "x:/a", "-1:/a" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(slots_gate_parse(bad[i], &n, dir, sizeof(dir)), -1, "%s", bad[i]);
	cr_assert_eq(slots_gate_parse("2:/a-directory-too-long-for-the-buffer", &n, dir, sizeof(dir)), -1);
	cr_assert_eq(slots_gate_parse(NULL, &n, dir, sizeof(dir)), -1);
}

Test(threads, the_gate_environment_is_set_and_undone)
{
	unsetenv(SLOTS_GATE_ENV);
	unsetenv("LD_PRELOAD");
	cr_assert_eq(threads_env_gate("/x/libnvshim-gate.so", 4, "/c/threads"), 0);
	cr_assert_str_eq(getenv("LD_PRELOAD"), "/x/libnvshim-gate.so");
	cr_assert_str_eq(getenv(SLOTS_GATE_ENV), "4:/c/threads");
	cr_assert_null(getenv(SLOTS_GATE_PRELOAD_ENV), "LD_PRELOAD was unset");
	threads_env_add(3, 0);
	cr_assert_str_eq(getenv("NVCC_APPEND_FLAGS"), "--threads 3");
	cr_assert_null(getenv(SLOTS_SPLIT_ENV), "no split: the gate leaves a --split-compile of the user's alone");
	threads_env_add(1, 8);
	cr_assert_str_eq(getenv("NVCC_APPEND_FLAGS"), "--split-compile 8", "added once, not on top of the last");
	cr_assert_str_eq(getenv(SLOTS_SPLIT_ENV), "1");
	cr_assert_eq(threads_env_added(), 0, "no --threads: nothing to run again serially");
	threads_env_undo();
	setenv("NVCC_APPEND_FLAGS", "-lineinfo", 1);
	threads_env_add(2, 4);
	cr_assert_str_eq(getenv("NVCC_APPEND_FLAGS"), "-lineinfo --threads 2 --split-compile 4");
	threads_env_undo();
	cr_assert_str_eq(getenv("NVCC_APPEND_FLAGS"), "-lineinfo", "the user's flags, as they were");
	cr_assert_null(getenv(SLOTS_SPLIT_ENV));
	unsetenv("NVCC_APPEND_FLAGS");
	threads_env_add(1, 1);
	cr_assert_null(getenv("NVCC_APPEND_FLAGS"), "one thread, no split: nothing set");
	threads_env_undo();
	cr_assert_null(getenv("LD_PRELOAD"));
	cr_assert_null(getenv(SLOTS_GATE_ENV));
	cr_assert_null(getenv("NVCC_APPEND_FLAGS"));

	setenv("LD_PRELOAD", "libm.so.6", 1);
	cr_assert_eq(threads_env_gate("/x/libnvshim-gate.so", 4, "/c/threads"), 0);
	cr_assert_str_eq(getenv("LD_PRELOAD"), "/x/libnvshim-gate.so libm.so.6");
	cr_assert_str_eq(getenv(SLOTS_GATE_PRELOAD_ENV), "libm.so.6");
	cr_assert_eq(threads_env_gate("/x/libnvshim-gate.so", 4, "/c/threads"), -1, "set once");
	threads_env_undo();
	cr_assert_str_eq(getenv("LD_PRELOAD"), "libm.so.6");
	cr_assert_null(getenv(SLOTS_GATE_PRELOAD_ENV));
	setenv("LD_PRELOAD", "", 1);
	cr_assert_eq(threads_env_gate("/x/libnvshim-gate.so", 4, "/c/threads"), 0);
	cr_assert_str_eq(getenv(SLOTS_GATE_PRELOAD_ENV), "", "set but empty stays set");
	threads_env_undo();
	cr_assert_str_eq(getenv("LD_PRELOAD"), "");
	unsetenv("LD_PRELOAD");
	/* an nvshim further up set the gate: that one counts */
	setenv(SLOTS_GATE_ENV, "2:/up/threads", 1);
	cr_assert_eq(threads_env_gate("/x/libnvshim-gate.so", 4, "/c/threads"), -1);
	cr_assert_null(getenv("LD_PRELOAD"));
	unsetenv(SLOTS_GATE_ENV);
	cr_assert_eq(threads_env_gate(NULL, 4, "/c/threads"), -1);
	/* what LD_PRELOAD cannot hold, or a directory nvcc's stages cannot find from elsewhere */
	cr_assert_eq(threads_env_gate("/x y/libnvshim-gate.so", 4, "/c/threads"), -1);
	cr_assert_eq(threads_env_gate("/x/libnvshim-gate.so", 4, "c/threads"), -1);
	cr_assert_null(getenv("LD_PRELOAD"));
	cr_assert_null(getenv(SLOTS_GATE_ENV));
}

/* A jobserver pipe with n tokens; its MAKEFLAGS in mf. */
static void jobserver(int fds[2], unsigned n, char *mf, size_t len)
{
	cr_assert_eq(pipe(fds), 0);
	for (unsigned i = 0; i < n; i++)
		cr_assert_eq(write(fds[1], "+", 1), 1);
	snprintf(mf, len, " -j%u --jobserver-auth=%d,%d", n + 1, fds[0], fds[1]);
}

/* Tokens in the pipe, read out without waiting. */
static unsigned tokens_left(int rfd)
{
	int fl = fcntl(rfd, F_GETFL);
	fcntl(rfd, F_SETFL, fl | O_NONBLOCK);
	char buf[64];
	ssize_t n = read(rfd, buf, sizeof(buf));
	fcntl(rfd, F_SETFL, fl);
	return n > 0 ? (unsigned)n : 0;
}

Test(threads, jobserver_tokens_are_taken_and_given_back)
{
	int fds[2];
	char mf[96];
	jobserver(fds, 3, mf, sizeof(mf));
	struct threads_hold h;
	threads_hold_init(&h);
	cr_assert_eq(threads_tokens_take(&h, mf, 2), 2);
	cr_assert_eq(h.js.kind, THREADS_JS_PIPE);
	int fl = fcntl(fds[0], F_GETFL);
	cr_assert_eq(fl & O_NONBLOCK, 0, "make's own description stays blocking");
	threads_hold_release(&h);
	cr_assert_eq(tokens_left(fds[0]), 3, "all three are back");
	close(fds[0]);
	close(fds[1]);
}

Test(threads, jobserver_descriptions_are_not_inherited_and_ignored_signals_stay_ignored)
{
	int fds[2];
	char mf[96];
	jobserver(fds, 2, mf, sizeof(mf));
	struct sigaction ign = { 0 }, was, now;
	ign.sa_handler = SIG_IGN;
	sigaction(SIGHUP, &ign, &was);
	struct threads_hold h;
	threads_hold_init(&h);
	cr_assert_eq(threads_tokens_take(&h, mf, 2), 2);
	cr_assert(fcntl(h.js_rfd, F_GETFD) & FD_CLOEXEC, "nvcc does not inherit the read end");
	cr_assert(fcntl(h.js_wfd, F_GETFD) & FD_CLOEXEC, "nor the write end");
	sigaction(SIGHUP, NULL, &now);
	cr_assert(now.sa_handler == SIG_IGN, "nohup: SIGHUP stays ignored while tokens are held");
	sigaction(SIGTERM, NULL, &now);
	cr_assert(now.sa_handler != SIG_DFL, "SIGTERM gives the tokens back");
	threads_hold_release(&h);
	sigaction(SIGHUP, NULL, &now);
	cr_assert(now.sa_handler == SIG_IGN);
	sigaction(SIGHUP, &was, NULL);
	cr_assert_eq(tokens_left(fds[0]), 2);
	close(fds[0]);
	close(fds[1]);
}

Test(threads, jobserver_without_free_tokens_does_not_wait)
{
	int fds[2];
	char mf[96];
	jobserver(fds, 0, mf, sizeof(mf));
	struct threads_hold h;
	threads_hold_init(&h);
	cr_assert_eq(threads_tokens_take(&h, mf, 3), 0);
	cr_assert_eq(h.js.kind, THREADS_JS_PIPE);
	threads_hold_release(&h);
	cr_assert_eq(tokens_left(fds[0]), 0);
	close(fds[0]);
	close(fds[1]);
}

Test(threads, jobserver_absent_or_broken)
{
	struct threads_hold h;
	threads_hold_init(&h);
	cr_assert_eq(threads_tokens_take(&h, NULL, 2), 0);
	cr_assert_eq(h.js.kind, THREADS_JS_ABSENT);
	threads_hold_release(&h);
	/* the fds make names were not passed to this command (a rule without '+') */
	int fds[2];
	char mf[96];
	jobserver(fds, 2, mf, sizeof(mf));
	close(fds[0]);
	close(fds[1]);
	cr_assert_eq(threads_tokens_take(&h, mf, 2), 0);
	cr_assert_eq(h.js.kind, THREADS_JS_BROKEN);
	threads_hold_release(&h);
	/* ... or are other files by now */
	char *dir = test_tmpdir();
	char *file = test_write(dir, "f", "x");
	int a = open(file, O_RDONLY), b = open(file, O_RDONLY);
	snprintf(mf, sizeof(mf), "-j2 --jobserver-auth=%d,%d", a, b);
	cr_assert_eq(threads_tokens_take(&h, mf, 2), 0);
	cr_assert_eq(h.js.kind, THREADS_JS_BROKEN);
	threads_hold_release(&h);
	cr_assert_eq(threads_tokens_take(&h, "-j2 --jobserver-auth=garbage", 2), 0);
	cr_assert_eq(h.js.kind, THREADS_JS_BROKEN);
	threads_hold_release(&h);
	snprintf(mf, sizeof(mf), "-j2 --jobserver-auth=fifo:%s/no-such-fifo", dir);
	cr_assert_eq(threads_tokens_take(&h, mf, 2), 0);
	cr_assert_eq(h.js.kind, THREADS_JS_BROKEN);
	threads_hold_release(&h);
	close(a);
	close(b);
	unlink(file);
	free(file);
	rmdir(dir);
	free(dir);
}

Test(threads, jobserver_fifo)
{
	char *dir = test_tmpdir();
	char *fifo = concat(dir, "/jobserver", NULL);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	int keep = open(fifo, O_RDWR);
	cr_assert_eq(write(keep, "ab", 2), 2);
	char mf[256];
	snprintf(mf, sizeof(mf), " -j3 --jobserver-auth=fifo:%s", fifo);
	struct threads_hold h;
	threads_hold_init(&h);
	cr_assert_eq(threads_tokens_take(&h, mf, 4), 2);
	cr_assert_eq(h.js.kind, THREADS_JS_FIFO);
	threads_hold_release(&h);
	char buf[8];
	fcntl(keep, F_SETFL, O_NONBLOCK);
	cr_assert_eq(read(keep, buf, sizeof(buf)), 2, "both tokens are back");
	close(keep);
	unlink(fifo);
	rmdir(dir);
	free(fifo);
	free(dir);
}

Test(threads, tokens_come_back_when_a_signal_stops_nvshim)
{
	int fds[2];
	char mf[96];
	jobserver(fds, 3, mf, sizeof(mf));
	pid_t pid = fork();
	if (!pid) {
		struct threads_hold h;
		threads_hold_init(&h);
		if (threads_tokens_take(&h, mf, 3) != 3)
			_exit(3);
		raise(SIGTERM);
		_exit(4);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "killed by the signal, as before");
	cr_assert_eq(tokens_left(fds[0]), 3);
	close(fds[0]);
	close(fds[1]);
}

/* Open descriptors of this process. */
static unsigned open_fds(void)
{
	unsigned n = 0;
	for (int fd = 0; fd < 4096; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

Test(threads, a_waiting_stage_keeps_no_descriptor_but_the_one_it_takes)
{
	char *dir = test_tmpdir();
	char *slots = concat(dir, "/threads", NULL);
	cr_assert(threads_slots_usable(slots));
	int held[64];
	for (unsigned i = 0; i < 64; i++)
		cr_assert_geq(held[i] = slots_try(slots, 64, 0), 0);
	int pipefd[2];
	cr_assert_eq(pipe(pipefd), 0);
	pid_t pid = fork();
	if (!pid) {
		/* a stage of the gate: every slot is held by the parent's descriptions */
		for (unsigned i = 0; i < 64; i++)
			close(held[i]);
		close(pipefd[0]);
		unsigned before = open_fds();
		pid_t waiter = fork();
		if (!waiter)
			_exit(slots_wait(slots, 64, 7, NULL) >= 0 ? 0 : 1);
		usleep(200 * 1000);
		/* the waiter's descriptors, counted from here */
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/fd", (int)waiter);
		unsigned n = 0;
		DIR *d = opendir(path);
		for (struct dirent *e; d && (e = readdir(d));)
			n += e->d_name[0] != '.';
		if (d)
			closedir(d);
		/* what the waiter holds beyond what it inherited (the proc listing's own is not counted:
		 * it belongs to this process) */
		n = n > before ? n - before : 0;
		ssize_t w = write(pipefd[1], &n, sizeof(n));
		(void)w;
		int st = 0;
		waitpid(waiter, &st, 0);
		_exit(WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : 1);
	}
	close(pipefd[1]);
	unsigned waiting_fds = 0;
	cr_assert_eq(read(pipefd[0], &waiting_fds, sizeof(waiting_fds)), (ssize_t)sizeof(waiting_fds));
	close(pipefd[0]);
	slots_give(held[41]);
	int st = 0;
	waitpid(pid, &st, 0);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the waiting stage took the slot given back");
	/* beyond what it inherited, at most the one being tried */
	cr_assert_leq(waiting_fds, 1, "a waiting stage holds %u more descriptors", waiting_fds);
	for (unsigned i = 0; i < 64; i++)
		if (i != 41)
			slots_give(held[i]);
	free(slots);
	free(dir);
}

Test(threads, the_slots_directory_is_absolute_and_local)
{
	char *dir = test_tmpdir();
	cr_assert_null(threads_slot_dir(NULL));
	cr_assert_null(threads_slot_dir(""));
	char *d = threads_slot_dir(dir);
	char *want = concat(dir, "/threads", NULL);
	cr_assert_str_eq(d, want, "a local cache: its threads directory");
	free(d);
	free(want);
	/* relative (NVSHIM_CACHE_DIR=build/cache): from the working directory */
	char cwd[4096];
	cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
	d = threads_slot_dir("rel/cache");
	want = concat(cwd, "/rel/cache/threads", NULL);
	cr_assert_str_eq(d, want);
	free(d);
	free(want);
	cr_assert(threads_fs_is_network(0x6969), "NFS");
	cr_assert(threads_fs_is_network((long)(int)0xff534d42), "CIFS, sign-extended");
	cr_assert(threads_fs_is_network(0x0bd00bd0), "Lustre");
	cr_assert(!threads_fs_is_network(0xef53), "ext4");
	cr_assert(!threads_fs_is_network(0x01021994), "tmpfs");
	cr_assert(!threads_fs_is_network(0), "unknown");
	/* on NFS: this user's runtime directory, else a private one under /tmp */
	char *run = concat(dir, "/run", NULL);
	cr_assert_eq(mkdir(run, 0700), 0);
	char *old = getenv("XDG_RUNTIME_DIR") ? strdup(getenv("XDG_RUNTIME_DIR")) : NULL;
	setenv("XDG_RUNTIME_DIR", run, 1);
	d = threads_slot_dir_on("/nfs/home/u/.cache/nvshim", 0x6969);
	want = concat(run, "/nvshim-threads", NULL);
	cr_assert_str_eq(d, want);
	struct stat sb;
	cr_assert_eq(stat(d, &sb), 0, "made");
	cr_assert_eq(sb.st_mode & 0777, 0700);
	free(d);
	free(want);
	unsetenv("XDG_RUNTIME_DIR");
	d = threads_slot_dir_on("/nfs/home/u/.cache/nvshim", 0x6969);
	char tmp[64];
	snprintf(tmp, sizeof(tmp), "/tmp/nvshim-threads-%u", (unsigned)geteuid());
	cr_assert_str_eq(d, tmp);
	cr_assert_eq(lstat(d, &sb), 0);
	cr_assert(S_ISDIR(sb.st_mode) && sb.st_uid == geteuid() && !(sb.st_mode & 077));
	free(d);
	if (old) {
		setenv("XDG_RUNTIME_DIR", old, 1);
		free(old);
	}
	free(run);
	free(dir);
}

Test(threads, the_gate_needs_a_path_ld_so_can_preload)
{
	cr_assert(threads_gate_possible("/opt/nvshim/libexec/nvshim/libnvshim-gate.so", "/c/threads"));
	cr_assert(!threads_gate_possible("/opt/my tools/libnvshim-gate.so", "/c/threads"), "a blank");
	cr_assert(!threads_gate_possible("/opt/a:b/libnvshim-gate.so", "/c/threads"), "a colon");
	cr_assert(!threads_gate_possible("/opt/libnvshim-gate.so", "c/threads"), "a relative directory");
	cr_assert(!threads_gate_possible(NULL, "/c/threads"));
	cr_assert(!threads_gate_possible("/opt/libnvshim-gate.so", NULL));
}

/* The stage commands are nvcc 13.0's own (nvcc --dryrun --split-compile 8). */
Test(threads, the_gate_gives_a_split_stage_the_threads_it_got)
{
	const char *cicc = "\"$CICC_PATH/cicc\" --c++17 --orig_src_file_name \"sc.cu\" -arch compute_90 -m64 "
			   "-split-compile 8 -tused --module_id_file_name \"/tmp/x.module_id\"";
	const char *ptxas = "ptxas -split-compile=8 -arch=sm_90 -m64  -split-compile=8 \"/tmp/x.ptx\"  -o \"/tmp/x.cubin\" ";
	cr_assert_eq(slots_split_wanted(cicc), 8);
	cr_assert_eq(slots_split_wanted(ptxas), 8);
	char *c = slots_split_command(cicc, 3);
	cr_assert_str_eq(c, "\"$CICC_PATH/cicc\" --c++17 --orig_src_file_name \"sc.cu\" -arch compute_90 -m64 "
			    "-split-compile 3 -tused --module_id_file_name \"/tmp/x.module_id\"");
	free(c);
	c = slots_split_command(ptxas, 12);
	cr_assert_str_eq(c, "ptxas -split-compile=12 -arch=sm_90 -m64  -split-compile=12 \"/tmp/x.ptx\"  -o \"/tmp/x.cubin\" ");
	free(c);
	c = slots_split_command(ptxas, 0);
	cr_assert(strstr(c, "-split-compile=1 "), "at least one thread");
	free(c);
	/* fatbinary: the object records what it would without the option */
	static const char *const fat[][2] = {
		{ "fatbinary -64 --cmdline=\" -split-compile=8 \" --cicc-cmdline=\"-split-compile 8 -ftz=0 -fmad=1 \" "
		  "\"--image3=kind=elf,sm=90,file=/tmp/a.cubin\"",
		  "fatbinary -64 --cicc-cmdline=\"-ftz=0 -fmad=1 \" \"--image3=kind=elf,sm=90,file=/tmp/a.cubin\"" },
		{ "fatbinary -64 --cmdline=\"-v  -split-compile=8 \" --cicc-cmdline=\"-split-compile 8 -ftz=0 \"",
		  "fatbinary -64 --cmdline=\"-v  \" --cicc-cmdline=\"-ftz=0 \"" },
		{ "fatbinary -64 --cmdline=\" -split-compile=8 -g --dont-merge-basicblocks --return-at-end \" "
		  "--cicc-cmdline=\"-split-compile 8 -ftz=0 \"",
		  "fatbinary -64 --cmdline=\" -g --dont-merge-basicblocks --return-at-end \" --cicc-cmdline=\"-ftz=0 \"" },
	};
	for (size_t i = 0; i < sizeof(fat) / sizeof(fat[0]); i++) {
		cr_assert_eq(slots_split_wanted(fat[i][0]), 0, "fatbinary runs no optimizer");
		c = slots_split_command(fat[i][0], 4);
		cr_assert_str_eq(c, fat[i][1]);
		free(c);
	}
	/* nothing to change: the command runs as it is */
	static const char *const same[] = {
		"\"$CICC_PATH/cicc\" --c++17 -arch compute_90 -m64",
		"ptxas -arch=sm_90 -m64 -split-compile-extended=4 x.ptx",
		"gcc -D__CUDA_ARCH__=900 -E x.cu -o x.ii",
		"\"/usr/bin/gcc\" -c x.cpp -DNAME=-split-compile=8",
		"ptxas -arch=sm_90 x-split-compile=8.ptx",
		"",
	};
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		cr_assert_null(slots_split_command(same[i], 4), "%s", same[i]);
		cr_assert_eq(slots_split_wanted(same[i]), 0, "%s", same[i]);
	}
	cr_assert_null(slots_split_command(NULL, 4));
	cr_assert_eq(slots_split_wanted("ptxas -split-compile=99999999999999 x.ptx"), 999999, "capped, not wrapped");
}
