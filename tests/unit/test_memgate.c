#include <criterion/criterion.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buildwide/memgate.h"

#define MIB (1024LL * 1024)
#define GIB (1024 * MIB)

static long long budget(const char *text, long long total)
{
	long long b = -2;
	cr_assert_eq(memgate_parse_budget(text, total, &b), 0, "'%s' parses", text);
	return b;
}

Test(memgate, budget_values)
{
	cr_assert_eq(budget("", 0), 0, "empty: auto");
	cr_assert_eq(budget("auto", 0), 0);
	cr_assert_eq(budget("off", 0), -1);
	cr_assert_eq(budget("1073741824", 0), GIB);
	cr_assert_eq(budget("24G", 0), 24 * GIB);
	cr_assert_eq(budget("24g", 0), 24 * GIB);
	cr_assert_eq(budget("24GiB", 0), 24 * GIB);
	cr_assert_eq(budget("512M", 0), 512 * MIB);
	cr_assert_eq(budget("512MB", 0), 512 * MIB);
	cr_assert_eq(budget("1.5T", 0), 1536 * GIB);
	cr_assert_eq(budget(" 48G \n", 0), 48 * GIB);
	cr_assert_eq(budget("50%", 64 * GIB), 32 * GIB);
	cr_assert_eq(budget("100%", 64 * GIB), 64 * GIB);
	long long b;
	const char *bad[] = { "lots", "-1G", "24X", "G", "24G5", "150%", "0%", "0", "1e30", "nan", "24 G B" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(memgate_parse_budget(bad[i], 64 * GIB, &b), -1, "'%s' is refused", bad[i]);
	cr_assert_eq(memgate_parse_budget("50%", -1, &b), -1, "a percentage needs the machine's memory");
	cr_assert_eq(memgate_parse_budget(NULL, 0, &b), -1);
}

Test(memgate, default_budget)
{
	cr_assert_eq(memgate_default_budget(100 * GIB), 98 * GIB, "a reserve of at most 2 GiB");
	cr_assert_eq(memgate_default_budget(10 * GIB), 9 * GIB, "a tenth");
	cr_assert_eq(memgate_default_budget(1 * GIB), 768 * MIB, "at least 256 MiB of reserve");
	cr_assert_eq(memgate_default_budget(100 * MIB), 256 * MIB, "never below 256 MiB");
	cr_assert_eq(memgate_default_budget(-1), 0, "unknown: no figure");
}

Test(memgate, estimate_selection)
{
	cr_assert_eq(memgate_estimate(3 * GIB, 5 * GIB, 2 * GIB), 3 * GIB, "learned first");
	cr_assert_eq(memgate_estimate(-1, 5 * GIB, 2 * GIB), 5 * GIB, "then similar stages");
	cr_assert_eq(memgate_estimate(-1, -1, 2 * GIB), 2 * GIB, "then the default");
	cr_assert_eq(memgate_estimate(0, 0, 0), 0);
	cr_assert_gt(memgate_default_peak(MEMGATE_CICC), memgate_default_peak(MEMGATE_PTXAS));
	cr_assert_eq(memgate_default_peak(MEMGATE_OTHER), 0);
}

Test(memgate, stage_kinds)
{
	cr_assert_eq(memgate_stage_kind("\"/usr/local/cuda/bin/../nvvm/bin/cicc\" --c++17 -arch compute_80 x.ii"),
		     MEMGATE_CICC);
	cr_assert_eq(memgate_stage_kind("_NVVM_BRANCH_=nvvm cicc -arch compute_80"), MEMGATE_CICC);
	cr_assert_eq(memgate_stage_kind("ptxas -arch=sm_80 -m64 \"x.ptx\" -o \"x.cubin\""), MEMGATE_PTXAS);
	cr_assert_eq(memgate_stage_kind("\"/c/bin/nvlink\" -o x"), MEMGATE_NVLINK);
	cr_assert_eq(memgate_stage_kind("cudafe++ --c++17 x"), MEMGATE_CUDAFE);
	cr_assert_eq(memgate_stage_kind("gcc -E -x c++ x.cu"), MEMGATE_HOST_PP, "preprocessing, apart");
	cr_assert_eq(memgate_stage_kind("gcc -c -x c++ x.cudafe1.cpp -o x.o"), MEMGATE_HOST);
	cr_assert_eq(memgate_stage_kind("/usr/bin/g++-13 -c x"), MEMGATE_HOST);
	cr_assert_eq(memgate_stage_kind("x86_64-linux-gnu-g++ -c x"), MEMGATE_HOST);
	cr_assert_eq(memgate_stage_kind("fatbinary --create x"), MEMGATE_OTHER);
	cr_assert_eq(memgate_stage_kind("rm x"), MEMGATE_OTHER);
	cr_assert_eq(memgate_stage_kind(""), MEMGATE_OTHER);
	cr_assert_eq(memgate_stage_kind(NULL), MEMGATE_OTHER);
}

Test(memgate, meminfo_psi_vmstat)
{
	long long total, avail;
	cr_assert_eq(memgate_parse_meminfo("MemTotal:       24634440 kB\nMemFree:  1 kB\nMemAvailable:   20000000 kB\n",
					   &total, &avail), 0);
	cr_assert_eq(total, 24634440LL * 1024);
	cr_assert_eq(avail, 20000000LL * 1024);
	cr_assert_eq(memgate_parse_meminfo("MemFree: 1 kB\n", &total, &avail), -1);
	cr_assert_eq(memgate_parse_meminfo("MemTotal: x kB\n", &total, &avail), -1);
	cr_assert_float_eq(memgate_parse_psi("some avg10=1.00 avg60=0 avg300=0 total=5\n"
					     "full avg10=12.50 avg60=0.00 avg300=0.00 total=0\n"), 12.5, 1e-9);
	cr_assert_eq(memgate_parse_psi("some avg10=1.00\n"), -1);
	cr_assert_eq(memgate_parse_psi("full avg10=x\n"), -1);
	cr_assert_eq(memgate_parse_vmstat("nr_free_pages 5\noom_kill 3\n"), 3);
	cr_assert_eq(memgate_parse_vmstat("nr_free_pages 5\n"), -1);
	cr_assert_eq(memgate_parse_statm("231270 1598 1127 1 0 98304 0\n"), 1598);
	cr_assert_eq(memgate_parse_statm("231270"), -1);
	cr_assert_eq(memgate_parse_statm(""), -1);
}

Test(memgate, cgroup_files)
{
	cr_assert_eq(memgate_parse_bytes("max\n"), 0);
	cr_assert_eq(memgate_parse_bytes("1073741824\n"), GIB);
	cr_assert_eq(memgate_parse_bytes("9223372036854771712\n"), 0, "v1's no limit");
	cr_assert_eq(memgate_parse_bytes("12x"), -1);
	cr_assert_eq(memgate_parse_bytes(""), -1);
	char v2[64], v1[64];
	memgate_parse_cgroup("12:memory:/user.slice/a\n4:cpu,cpuacct:/b\n0::/system.slice/x.service\n", v2, sizeof(v2),
			     v1, sizeof(v1));
	cr_assert_str_eq(v2, "/system.slice/x.service");
	cr_assert_str_eq(v1, "/user.slice/a");
	memgate_parse_cgroup("4:cpu,memory:/c\n", v2, sizeof(v2), v1, sizeof(v1));
	cr_assert_str_eq(v2, "");
	cr_assert_str_eq(v1, "/c");
	memgate_parse_cgroup("0::relative\n", v2, sizeof(v2), v1, sizeof(v1));
	cr_assert_str_eq(v2, "", "a path that is not absolute is none");
}

Test(memgate, records_and_spec)
{
	long long kb = 0;
	cr_assert_eq(memgate_parse_record("nvshim-peak 1 1843200\n", &kb), 0);
	cr_assert_eq(kb, 1843200);
	cr_assert_eq(memgate_parse_record("nvshim-peak 2 1\n", &kb), -1, "another version");
	cr_assert_eq(memgate_parse_record("nvshim-peak 1 0\n", &kb), -1);
	long long peaks[3];
	uint64_t srcs[3];
	cr_assert_eq(memgate_parse_peaks("nvshim-peaks 1 5 7 9\n", peaks, srcs, 3), 3);
	cr_assert_eq(peaks[2], 9);
	cr_assert_eq(srcs[2], 0, "version 1: no source");
	cr_assert_eq(memgate_parse_peaks("nvshim-peaks 1 5 7 9 11\n", peaks, NULL, 3), 3, "the first max kept");
	cr_assert_eq(memgate_parse_peaks("nvshim-peaks 1\n", peaks, srcs, 3), -1, "none");
	cr_assert_eq(memgate_parse_peaks("nvshim-peaks 1 5 x\n", peaks, srcs, 3), -1);
	cr_assert_eq(memgate_parse_peaks("nvshim-peaks 1 5  7\n", peaks, srcs, 3), -1);
	cr_assert_eq(memgate_parse_peaks("nvshim-peaks 3 5\n", peaks, srcs, 3), -1, "another version");
	cr_assert_eq(memgate_parse_peaks("nvshim-peaks 2 5/00000000000000ab 7/FFFFFFFFFFFFFFFF\n", peaks, srcs, 3), 2);
	cr_assert_eq(srcs[0], 0xab);
	cr_assert_eq(srcs[1], UINT64_MAX);
	cr_assert_eq(peaks[1], 7);
	cr_assert_eq(memgate_parse_peaks("nvshim-peaks 2 5\n", peaks, srcs, 3), -1, "version 2 names a source");
	cr_assert_eq(memgate_parse_peaks("nvshim-peaks 2 5/ab\n", peaks, srcs, 3), -1, "of 16 digits");
	cr_assert_eq(memgate_parse_peaks("nvshim-peaks 2 5/00000000000000abc\n", peaks, srcs, 3), -1);
	long long eight[] = { 8, 1, 7, 2, 6, 3, 5, 4 };
	cr_assert_eq(memgate_peaks_estimate(eight, NULL, 3), -1, "fewer than four sources: none");
	cr_assert_eq(memgate_peaks_estimate(eight, NULL, 4), 8 * 1024, "four: the 80th percentile, the 4th");
	cr_assert_eq(memgate_peaks_estimate(eight, NULL, 8), 7 * 1024, "the 80th percentile of 8");
	cr_assert_eq(memgate_peaks_estimate(eight, NULL, 0), -1);
	/* one small source's four targets finished first (a file of stubs): no estimate from it */
	long long stub[] = { 530000, 531000, 532000, 529000 };
	uint64_t one[] = { 7, 7, 7, 7 };
	cr_assert_eq(memgate_peaks_estimate(stub, one, 4), -1, "one source is not four");
	/* four sources, two targets each: each source's largest */
	long long two[] = { 100, 900, 200, 300, 400, 500, 600, 700 };
	uint64_t of[] = { 1, 1, 2, 2, 3, 3, 4, 4 };
	cr_assert_eq(memgate_peaks_estimate(two, of, 8), 900 * 1024, "the largest of 300, 500, 700, 900");
	of[1] = 5;
	cr_assert_eq(memgate_peaks_estimate(two, of, 8), 700 * 1024, "five sources: 100, 300, 500, 700, 900");
	of[1] = 1;
	two[1] = 50;
	cr_assert_eq(memgate_peaks_estimate(two, of, 8), 700 * 1024, "100, 300, 500, 700: the 4th");
	cr_assert_eq(memgate_parse_record("nvshim-peak 1 12x\n", &kb), -1);
	struct memgate g;
	cr_assert_eq(memgate_parse_spec("25769803776:/c/threads/mem:/c/threads/peaks", &g), 0);
	cr_assert_eq(g.budget, 24 * GIB);
	cr_assert_str_eq(g.ledger, "/c/threads/mem");
	cr_assert_str_eq(g.learn, "/c/threads/peaks");
	cr_assert_eq(memgate_parse_spec("0:rel:/x", &g), -1);
	cr_assert_eq(memgate_parse_spec("-1:/a:/b", &g), -1);
	cr_assert_eq(memgate_parse_spec("1:/a", &g), -1);
}

Test(memgate, journal_summary)
{
	const char *j = "1000\t2000\tcicc\t1048576\t2097152\t0\t4194304\t-\n"
			"1500\t2500\tcicc\t2097152\t2097152\t120\t4194304\t-\n"
			"garbage line\n"
			"3000\t4000\tptxas\t524288\t1048576\t10\t4194304\tkr\n"
			"5000\t6000\tcicc\t3145728\t3145728\t0\t4194304\to\n";
	struct memgate_summary s;
	memgate_summarize(j, 0, LLONG_MAX, &s);
	cr_assert_eq(s.stages, 4);
	cr_assert_eq(s.peak_sum_kb, 3145728, "the two overlapping ciccs (3 GiB) and the lone 3 GiB one");
	cr_assert_eq(s.largest_kb, 3145728);
	cr_assert_str_eq(s.largest_kind, "cicc");
	cr_assert_eq(s.waits, 1, "only the 120 ms wait counts");
	cr_assert_eq(s.waited_ms, 120);
	cr_assert_eq(s.kills, 1);
	cr_assert_eq(s.reruns, 1);
	cr_assert_eq(s.over, 1);
	struct memgate_entry e;
	cr_assert_eq(memgate_parse_journal_line("1\t2\tcicc\t3\t4\t5\t6\tkr\t4242", &e), 0, "with nvcc's parent");
	cr_assert_eq(e.pid, 4242);
	cr_assert_str_eq(e.flags, "kr");
	cr_assert_eq(memgate_parse_journal_line("1\t2\tcicc\t3\t4\t5\t6\t-", &e), 0, "an older line");
	cr_assert_eq(e.pid, 0);
	cr_assert_eq(memgate_parse_journal_line("1\t2\tcicc\t3\t4\t5\t6\t-\tx", &e), -1);
	cr_assert_eq(memgate_parse_journal_line("2\t1\tcicc\t3\t4\t5\t6\t-", &e), -1, "ends before it starts");
	memgate_summarize(j, 1200, 4500, &s);
	cr_assert_eq(s.stages, 2, "the window");
	cr_assert_eq(s.peak_sum_kb, 2097152);
}

Test(memgate, ledger_and_learning)
{
	char dir[] = "/tmp/nvshim-memgate-XXXXXX";
	cr_assert(mkdtemp(dir));
	struct memgate g;
	memset(&g, 0, sizeof(g));
	g.budget = 3 * GIB;
	snprintf(g.ledger, sizeof(g.ledger), "%s/mem", dir);
	snprintf(g.learn, sizeof(g.learn), "%s/peaks", dir);
	struct memgate_ticket a, b;
	memgate_admit(&g, 2 * GIB, 0, &a);
	cr_assert_geq(a.fd, 0, "the first stage runs");
	cr_assert_eq(a.over, 0);
	memgate_leave(&a);
	memgate_admit(&g, 5 * GIB, 0, &b);
	cr_assert_eq(b.over, 1, "alone over the budget: it runs, noted");
	memgate_leave(&b);
	/* a cold stage (its kind's default) counts as half the budget at most: two side by side */
	memgate_admit(&g, 6 * GIB, MEMGATE_COLD, &a);
	cr_assert_eq(a.est, 3 * GIB / 2, "capped at half the budget");
	cr_assert_eq(a.over, 0);
	memgate_admit(&g, 6 * GIB, MEMGATE_COLD, &b);
	cr_assert_geq(b.fd, 0, "the second runs beside the first");
	cr_assert_eq(b.est, 3 * GIB / 2);
	memgate_leave(&a);
	memgate_leave(&b);
	/* learning: a key needs an input file */
	char src[4200], cmd[4400];
	snprintf(src, sizeof(src), "%s/x.ii", dir);
	FILE *f = fopen(src, "w");
	cr_assert(f);
	fputs("int x;\n", f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cicc -arch compute_80 \"%s\" -o \"%s/x.ptx\"", src, dir);
	uint64_t s80, s90, n80, n90;
	uint64_t key = memgate_stage_key(cmd, MEMGATE_CICC, &n80, &s80);
	cr_assert_neq(key, 0);
	snprintf(cmd, sizeof(cmd), "cicc -arch compute_90 \"%s\" -o \"%s/x.ptx\"", src, dir);
	cr_assert_neq(memgate_stage_key(cmd, MEMGATE_CICC, &n90, &s90), key, "the target is in the key");
	cr_assert_neq(n80, n90, "and in the name key");
	cr_assert(s80 && s80 == s90, "not in the source key");
	/* one line's targets: nvcc names each target's intermediate files after it */
	char a80[4200], a90[4200];
	snprintf(a80, sizeof(a80), "%s/tmpxft_00001234_00000000-8_k.compute_80.cpp1.ii", dir);
	snprintf(a90, sizeof(a90), "%s/tmpxft_00001234_00000000-10_k.compute_90a.cpp1.ii", dir);
	for (int w = 0; w < 2; w++) {
		FILE *fa = fopen(w ? a90 : a80, "w");
		cr_assert(fa);
		fputs(w ? "int b;\n" : "int a;\n", fa);
		fclose(fa);
	}
	uint64_t t80, t90, o80, o90;
	snprintf(cmd, sizeof(cmd), "cicc -arch compute_80 \"%s\" -o x.ptx", a80);
	memgate_stage_key(cmd, MEMGATE_CICC, NULL, &t80);
	snprintf(cmd, sizeof(cmd), "cicc -arch compute_90a \"%s\" -o x.ptx", a90);
	memgate_stage_key(cmd, MEMGATE_CICC, NULL, &t90);
	cr_assert(t80 && t80 == t90, "a line's targets name one source");
	snprintf(cmd, sizeof(cmd), "cicc -arch compute_80 --orig_src_path_name \"/p/k.cu\" \"%s\" -o x.ptx", a80);
	memgate_stage_key(cmd, MEMGATE_CICC, NULL, &o80);
	snprintf(cmd, sizeof(cmd), "cicc -arch compute_90a --orig_src_path_name \"/p/k.cu\" \"%s\" -o x.ptx", a90);
	memgate_stage_key(cmd, MEMGATE_CICC, NULL, &o90);
	cr_assert(o80 && o80 == o90, "nvcc's name of the source decides");
	snprintf(cmd, sizeof(cmd), "cicc -arch compute_80 --orig_src_path_name \"/p/j.cu\" \"%s\" -o x.ptx", a80);
	memgate_stage_key(cmd, MEMGATE_CICC, NULL, &o90);
	cr_assert_neq(o80, o90, "another source");
	cr_assert_eq(memgate_stage_key("cicc -arch compute_80 /nonexistent.ii", MEMGATE_CICC, NULL, NULL), 0);
	cr_assert_eq(memgate_recall(&g, MEMGATE_CICC, key), -1);
	memgate_learn(&g, MEMGATE_CICC, key, 700 * MIB);
	cr_assert_eq(memgate_recall(&g, MEMGATE_CICC, key), 700 * MIB);
	cr_assert_eq(memgate_similar(&g, MEMGATE_PTXAS), -1);
	memgate_seen(&g, MEMGATE_PTXAS, 300 * MIB, 1);
	memgate_seen(&g, MEMGATE_PTXAS, 100 * MIB, 2);
	cr_assert_eq(memgate_similar(&g, MEMGATE_PTXAS), -1, "nothing from fewer than four sources");
	for (int i = 0; i < 8; i++)
		memgate_seen(&g, MEMGATE_PTXAS, (i + 1) * 10 * MIB, 3 + (uint64_t)i);
	/* 10 sources: 10..80 MiB, 100, 300: the 8th of them sorted */
	cr_assert_eq(memgate_similar(&g, MEMGATE_PTXAS), 80 * MIB, "the 80th percentile");
	for (int i = 0; i < MEMGATE_SEEN_MAX; i++)
		memgate_seen(&g, MEMGATE_PTXAS, 5 * MIB, 100 + (uint64_t)(i % 4));
	cr_assert_eq(memgate_similar(&g, MEMGATE_PTXAS), 5 * MIB, "the last MEMGATE_SEEN_MAX");
	for (int i = 0; i < MEMGATE_SEEN_MAX; i++)
		memgate_seen(&g, MEMGATE_PTXAS, 5 * MIB, 200);
	cr_assert_eq(memgate_similar(&g, MEMGATE_PTXAS), -1, "all of one source: nothing to go by");
	/* by name: nvcc's --orig_src_path_name, the same after an edit changed the content key */
	uint64_t n1, n2, n3;
	snprintf(cmd, sizeof(cmd), "cicc --orig_src_path_name \"/p/a.cu\" -arch compute_80 \"%s\" -o x.ptx", src);
	uint64_t k1 = memgate_stage_key(cmd, MEMGATE_CICC, &n1, NULL);
	f = fopen(src, "w");
	fputs("int y;\n", f);
	fclose(f);
	uint64_t k2 = memgate_stage_key(cmd, MEMGATE_CICC, &n2, NULL);
	cr_assert_neq(k1, k2, "the content changed");
	cr_assert_eq(n1, n2, "the name did not");
	cr_assert_neq(n1, 0);
	snprintf(cmd, sizeof(cmd), "cicc --orig_src_path_name \"/p/b.cu\" -arch compute_80 \"%s\" -o x.ptx", src);
	memgate_stage_key(cmd, MEMGATE_CICC, &n3, NULL);
	cr_assert_neq(n1, n3, "another source");
	/* ptxas: nvcc's temporary names differ from run to run, the name after the prefix does not */
	snprintf(cmd, sizeof(cmd), "%s/tmpxft_000050e9_00000000-6_k.ptx", dir);
	f = fopen(cmd, "w");
	fputs(".version 8.0\n", f);
	fclose(f);
	char cmd2[4200];
	snprintf(cmd2, sizeof(cmd2), "%s/tmpxft_00001234_00000000-6_k.ptx", dir);
	cr_assert_eq(rename(cmd, cmd2), 0);
	snprintf(cmd, sizeof(cmd), "ptxas -arch=sm_80 \"%s\" -o out.cubin", cmd2);
	memgate_stage_key(cmd, MEMGATE_PTXAS, &n1, NULL);
	snprintf(cmd2, sizeof(cmd2), "%s/tmpxft_000050e9_00000000-6_k.ptx", dir);
	char old_name[4200];
	snprintf(old_name, sizeof(old_name), "%s/tmpxft_00001234_00000000-6_k.ptx", dir);
	cr_assert_eq(rename(old_name, cmd2), 0);
	snprintf(cmd, sizeof(cmd), "ptxas -arch=sm_80 \"%s\" -o out.cubin", cmd2);
	memgate_stage_key(cmd, MEMGATE_PTXAS, &n2, NULL);
	cr_assert_eq(n1, n2, "nvcc's temporary prefix is not in the name");
	cr_assert_neq(n1, 0);
	char rm[4200];
	snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
	cr_assert_eq(system(rm), 0);
}
