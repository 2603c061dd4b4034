/* Text the memory budget reads (buildwide/memgate.h): /proc/meminfo, /proc/pressure/memory,
 * /proc/vmstat, /proc/self/cgroup, cgroup number files, the learned-peak records, the journal
 * (and its summary), the gate's spec (NVSHIM_GATE_MEM), memory_budget's values, and the stage
 * commands the gate classifies. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "buildwide/memgate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size);
	long long total, avail, b, kb;
	if (!memgate_parse_meminfo(s, &total, &avail) && total < -1)
		abort();
	double psi = memgate_parse_psi(s);
	if (psi != -1 && (psi < 0 || psi > 100))
		abort();
	(void)memgate_parse_vmstat(s);
	(void)memgate_parse_statm(s);
	if (memgate_parse_bytes(s) < -1)
		abort();
	char v2[64], v1[64];
	memgate_parse_cgroup(s, v2, sizeof(v2), v1, sizeof(v1));
	if (strlen(v2) >= sizeof(v2) || strlen(v1) >= sizeof(v1) || (v2[0] && v2[0] != '/') || (v1[0] && v1[0] != '/'))
		abort();
	if (!memgate_parse_record(s, &kb) && kb <= 0)
		abort();
	long long peaks[MEMGATE_SEEN_MAX];
	uint64_t sources[MEMGATE_SEEN_MAX];
	int np = memgate_parse_peaks(s, peaks, sources, MEMGATE_SEEN_MAX);
	if (np == 0 || np > MEMGATE_SEEN_MAX)
		abort();
	long long most = 0;
	for (int i = 0; i < np; i++) {
		if (peaks[i] <= 0)
			abort();
		most = peaks[i] > most ? peaks[i] : most;
	}
	/* an estimate is one of the peaks (none from fewer than MEMGATE_SEEN_SOURCES sources) */
	long long est = np > 0 ? memgate_peaks_estimate(peaks, sources, np) : -1;
	if (est == 0 || est < -1 || est > most * 1024 || (np < MEMGATE_SEEN_SOURCES && est != -1))
		abort();
	if (!memgate_parse_budget(s, 1LL << 34, &b) && b < -1)
		abort();
	struct memgate g;
	if (!memgate_parse_spec(s, &g) && (g.budget < 0 || g.ledger[0] != '/' || g.learn[0] != '/'))
		abort();
	struct memgate_entry e;
	if (!memgate_parse_journal_line(s, &e) && (e.end_ms < e.start_ms || e.peak_kb < 0))
		abort();
	struct memgate_summary sum;
	memgate_summarize(s, 0, LLONG_MAX, &sum);
	if (sum.peak_sum_kb < sum.largest_kb)
		abort();
	enum memgate_kind k = memgate_stage_kind(s);
	if ((unsigned)k >= MEMGATE_NKINDS || !memgate_kind_name(k))
		abort();
	free(s);
	return 0;
}
