#!/bin/bash
# The suites on a loaded machine: the release and the ASan+UBSan suites, ROUNDS times in a row
# (2 by default), while another CUDA build runs beside them (plain nvcc compiling a five-target
# source in a loop, as many at once as there are cores, in a folder of its own). Every round must
# be green. Prints one line per round and a table of the figures (for docs/tests.md). The
# release round runs the quick command's suites (not those labelled `full`), the ASan+UBSan
# round those of `--full` (not those labelled `nosan`), as tests/run-all.sh does.
#
#   bash tests/stress.sh [ROUNDS]
#   NVSHIM_STRESS_SUITES='e2e_signals|e2e_hardening' bash tests/stress.sh   # some suites only
#   NVSHIM_STRESS_VARIANTS=release bash tests/stress.sh                      # one build only
#   NVSHIM_STRESS_BESIDE=1 NVSHIM_STRESS_NICE=10 bash tests/stress.sh        # one loop beside, niced
#
# The builds are those of tests/run-all.sh (build-test-release, build-test-asan), made or brought
# up to date here (NVSHIM_STRESS_BUILD_PREFIX=build-x- uses build-x-release and build-x-asan).
set -uo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-2}
suites=${NVSHIM_STRESS_SUITES:-}
variants=${NVSHIM_STRESS_VARIANTS:-release asan}
jobs=$(nproc)
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}

for variant in $variants; do
	dir=${NVSHIM_STRESS_BUILD_PREFIX:-build-test-}$variant
	flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
	[ "$variant" = asan ] && flags=(-DCMAKE_BUILD_TYPE=Debug -DNVSHIM_SANITIZE=ON)
	echo "== $variant build"
	cmake -S . -B "$dir" "${flags[@]}" >/dev/null && cmake --build "$dir" -j"$jobs" >/dev/null || {
		echo "FAILED: the $variant build"
		exit 1
	}
done

# The build beside: plain nvcc, five targets, in a loop until the stop file appears.
load=$(mktemp -d "${TMPDIR:-/tmp}/nvshim-stress-XXXXXX")
trap 'touch "$load/stop"; wait; rm -rf "$load"' EXIT
cp tests/e2e/fixtures/signals/slow.cu "$load/"
GEN=()
for a in 75 80 86 89 90; do GEN+=(-gencode "arch=compute_$a,code=sm_$a"); done
beside() {
	local n=0
	mkdir -p "$load/$1"
	while [ ! -e "$load/stop" ]; do
		(cd "$load/$1" && TMPDIR="$load/$1" "$NVCC" -c ../slow.cu "${GEN[@]}" -o k.o 2>/dev/null)
		n=$((n + 1))
		echo $n >"$load/$1.count"
	done
}
for i in $(seq "${NVSHIM_STRESS_BESIDE:-$jobs}"); do
	if [ "${NVSHIM_STRESS_NICE:-0}" -gt 0 ]; then
		(renice -n "$NVSHIM_STRESS_NICE" -p $BASHPID >/dev/null && beside "b$i") &
	else
		beside "b$i" &
	fi
done
beside_count() { cat "$load"/b*.count 2>/dev/null | awk '{ n += $1 } END { print n + 0 }'; }

status=0
rows=()
for round in $(seq "$rounds"); do
	for variant in $variants; do
		dir=${NVSHIM_STRESS_BUILD_PREFIX:-build-test-}$variant
		log="$dir/stress-$round.log"
		args=(--test-dir "$dir" --output-on-failure --timeout 1500 -j"$((jobs + 1))")
		[ -n "$suites" ] && args+=(-R "$suites")
		if [ "$variant" = asan ]; then args+=(-LE nosan); else args+=(-LE full); fi
		start=$(date +%s)
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
			ctest "${args[@]}" >"$log" 2>&1
		rc=$?
		secs=$(($(date +%s) - start))
		summary=$(grep -E 'tests passed, [0-9]+ tests failed' "$log" | tail -1)
		avg=$(cut -d' ' -f1 /proc/loadavg)
		builds=$(beside_count)
		echo "round $round, $variant: $summary in ${secs}s (load average $avg; $builds builds beside so far)"
		rows+=("| $round | $variant | $summary | $secs s | $avg |")
		if [ $rc -ne 0 ]; then
			status=1
			sed -n '/tests FAILED:/,$p' "$log"
		fi
	done
done
touch "$load/stop"
wait
echo
echo "| round | build | result | time | load average (1 min) at the end |"
echo "|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo "builds beside: $(beside_count) five-target compiles of tests/e2e/fixtures/signals/slow.cu with plain nvcc, ${NVSHIM_STRESS_BESIDE:-$jobs} at a time (nice ${NVSHIM_STRESS_NICE:-0})"
[ $status -eq 0 ] && echo "PASSED: every round green" || echo "FAILED: see the logs named above (build-test-*/stress-*.log)"
exit $status
