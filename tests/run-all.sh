#!/bin/bash
# The test suite.
#
#   bash tests/run-all.sh          quick: a -Werror release build and every ctest suite that is
#                                  not labelled `full` (unit, e2e, hardening, ...), run in parallel;
#                                  at most about 12 minutes on 2 cores. It ends by naming what it
#                                  did not run.
#   bash tests/run-all.sh --full   what CI runs (.ci/run): the release build (the quick start's
#                                  Release, -O3) with every suite (the two labelled `alternate`
#                                  one a day), the suites again in an AddressSanitizer +
#                                  UndefinedBehaviorSanitizer build (the heavy e2e ones half a
#                                  day), valgrind (e2e_valgrind, labelled `full`) and fuzzing;
#                                  NVSHIM_ROTATE=off runs all of it, the differential matrix
#                                  its whole product (hours; docs/tests.md).
#
# Suites are found through ctest (a new add_test() is run without a change here) and fuzz
# targets by their names (build-test-fuzz/tests/fuzz/fuzz_*). A failing run ends with one line
# naming every suite that failed and how to run one again.
set -uo pipefail
cd "$(dirname "$0")/.."
full=0
case "${1:-}" in
--full) full=1 ;;
"") ;;
*)
	echo "usage: bash tests/run-all.sh [--full]" >&2
	exit 2
	;;
esac
jobs=$(nproc)
# ctest runs this many suites at once: most of an end-to-end suite's time is spent waiting for
# nvcc's processes, so one more than the cores keeps them busy.
ctest_jobs=${NVSHIM_TEST_JOBS:-$((jobs + 1))}
started=$(date +%s)
# "12 min in": each step's start, for a run that was slow
since() { echo "$(( ($(date +%s) - started) / 60 )) min in"; }
failed=()  # "suite (variant)"
rerun=""   # the command that runs the first failed suite again

# Older nvcc drivers for tests/e2e/toolkits.sh (skipped if they cannot be fetched).
bash scripts/fetch-toolkits.sh
# nvcc 13.5 for tests/e2e/toolkit135.sh and api.sh (skipped if it cannot be fetched).
bash scripts/fetch-nvcc135.sh
# aarch64's nvcc and glibc for the aarch64 wheel's checks under qemu (e2e_wheel, --full only).
[ $full = 1 ] && bash scripts/fetch-aarch64.sh

# build DIR CMAKE-ARGS...: configures and builds; any warning fails it.
build() {
	local dir=$1
	shift
	cmake -S . -B "$dir" "$@" >/dev/null || return 1
	cmake --build "$dir" -j"$jobs" 2>&1 | grep -E 'warning|error' && return 1
	[ "${PIPESTATUS[0]}" -eq 0 ]
}

# suites VARIANT DIR CTEST-ARGS...: runs the build's suites; records those that failed.
suites() {
	local variant=$1 dir=$2 log name before=${#failed[@]}
	shift 2
	log="$dir/ctest.log"
	echo "== $variant tests ($(since))"
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --test-dir "$dir" --output-on-failure --timeout 1500 -j"$ctest_jobs" "$@" 2>&1 | tee "$log"
	local rc=${PIPESTATUS[0]}
	# every suite's whole output (each e2e suite ends with its processor time, `# cpu: N s`),
	# kept before a later ctest call replaces LastTest.log
	cp "$dir/Testing/Temporary/LastTest.log" "$dir/ctest-output.log" 2>/dev/null
	[ "$rc" -eq 0 ] && return 0
	# ctest's list: "	 12 - e2e_signals (Failed)"
	for name in $(sed -n '/tests FAILED:/,$s/^[[:space:]]*[0-9]* - \([^ ]*\) .*/\1/p' "$log"); do
		failed+=("$name ($variant)")
		[ -n "$rerun" ] || rerun="ctest --test-dir $dir -R '^$name\$' --output-on-failure"
	done
	[ -n "$rerun" ] || rerun="ctest --test-dir $dir --output-on-failure"
	[ "${#failed[@]}" -gt "$before" ] || failed+=("ctest ($variant)")
}

# build_or_fail VARIANT DIR CMAKE-ARGS...
build_or_fail() {
	local variant=$1
	echo "== $variant build ($(since))"
	shift
	build "$@" && return 0
	failed+=("the $variant build")
	[ -n "$rerun" ] || rerun="cmake --build $1"
	return 1
}

# rotated DIR MIN CTEST-ARGS...: of the suites CTEST-ARGS select whose COST is MIN or more (all
# of them for an empty MIN), the half that today (the day of the year's parity) leaves out, as
# two lines: a regular expression for ctest -E (empty: none), and what it says of the halves. The
# halves are of about equal cost (longest first, each to the lighter half). NVSHIM_ROTATE=off
# leaves none out; NVSHIM_TEST_DAY=N takes day N of the year for today.
rotated() {
	local dir=$1 min=$2
	shift 2
	ctest --test-dir "$dir" --show-only=json-v1 "$@" 2>/dev/null |
		python3 -c '
import json, os, re, sys
day, low = int(sys.argv[1]), float(sys.argv[2] or 0)
tests = []
try:
    listed = json.load(sys.stdin)["tests"]
except (ValueError, KeyError):
    listed = []  # no list: nothing left out
for t in listed:
    cost = float({q["name"]: q["value"] for q in t.get("properties", [])}.get("COST", 0))
    if cost >= low:
        tests.append((cost, t["name"]))
halves, load = [[], []], [0.0, 0.0]
for cost, name in sorted(tests, reverse=True):
    h = 0 if load[0] <= load[1] else 1
    halves[h].append(name)
    load[h] += cost
run, left = halves[day % 2], halves[1 - day % 2]
if os.environ.get("NVSHIM_ROTATE") == "off" or not left:
    print("")
    sys.exit()
print("^(" + "|".join(re.escape(n) for n in sorted(left)) + ")$")
print("today (day %d) %s; the other day %s (NVSHIM_ROTATE=off runs both)" % (day, " ".join(sorted(run)), " ".join(sorted(left))))
' "$(( 10#${NVSHIM_TEST_DAY:-$(date +%j)} ))" "$min"
}

# The release build is the quick start's (Release, -O3, which warns where -O2 does not) with
# debug information added for a failing suite's backtrace: one build for both.
if build_or_fail release build-test-release -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS=-g; then
	if [ $full = 1 ]; then
		# E2E_FULL: the suites that sample in the quick run run all their cases here (the
		# differential matrix's pairs, the identity suite's option table); the ASan pass
		# samples as the quick run does
		# samples as the quick run does. The two suites labelled `alternate` run one a day
		# (below).
		alternating=()
		mapfile -t alternating < <(rotated build-test-release "" -L alternate)
		E2E_FULL=1 suites release build-test-release ${alternating[0]:+-E "${alternating[0]}"}
		[ -n "${alternating[1]:-}" ] && echo "== release: ${alternating[1]}"
	else
		suites release build-test-release -LE full
	fi
fi

if [ $full = 1 ]; then
	if build_or_fail asan build-test-asan -DCMAKE_BUILD_TYPE=Debug -DNVSHIM_SANITIZE=ON; then
		# The sanitizer pass is there for nvshim's own code (tests/e2e/lib.sh): every suite
		# but the heavy end-to-end ones (a sanitizer COST of 40 s and more, tests/CMakeLists.txt),
		# which are cut into two halves of about equal cost, run on alternate days. The release
		# pass runs them every time.
		heavy=()
		mapfile -t heavy < <(rotated build-test-asan 40 -L e2e -LE nosan)
		suites asan build-test-asan -LE nosan ${heavy[0]:+-E "${heavy[0]}"}
		[ -n "${heavy[1]:-}" ] && echo "== asan: ${heavy[1]}"
	fi

	# Fuzzing: every parser of outside input under libFuzzer with ASan+UBSan,
	# NVSHIM_FUZZ_SECONDS (default 20) each, starting from its corpus in tests/fuzz/corpus
	# (copied: the run's new inputs stay out of the tree). Any crash, leak or sanitizer report
	# fails the run; the input that caused it is left in build-test-fuzz/findings/ to add to the
	# corpus once fixed.
	dir=build-test-fuzz
	if ! command -v clang >/dev/null; then
		echo "fuzz: no clang"
		failed+=("the fuzz build (no clang)")
	elif CC=clang build_or_fail fuzz "$dir" -DCMAKE_BUILD_TYPE=Debug -DNVSHIM_FUZZ=ON; then
		echo "== fuzz ($(since))"
		seconds=${NVSHIM_FUZZ_SECONDS:-20}
		mkdir -p "$dir/findings"
		# One target: mutates a copy of its corpus; prints one ok / not ok line.
		fuzz_one() {
			local target=$1 dir=$2 seconds=$3 name work log
			name=$(basename "$target")
			work=$(mktemp -d)
			cp -r "tests/fuzz/corpus/${name#fuzz_}/." "$work/"
			log="$dir/findings/$name.log"
			if "$target" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
				-artifact_prefix="$dir/findings/$name-" "$work" >"$log" 2>&1; then
				echo "ok - $name: $(grep -E '^Done [0-9]+ runs' "$log" | sed 's/^Done //')"
			else
				echo "not ok - $name: a finding, see $log"
				grep -E 'ERROR|SUMMARY' "$log" | head -5
			fi
			rm -rf "$work"
		}
		export -f fuzz_one
		# As many targets at once as there are cores.
		ls "$dir"/tests/fuzz/fuzz_* | xargs -P "$jobs" -I{} bash -c 'fuzz_one "$@"' _ {} "$dir" "$seconds" |
			tee "$dir/findings/summary"
		for name in $(sed -n 's/^not ok - \([^:]*\):.*/\1/p' "$dir/findings/summary"); do
			failed+=("$name (fuzz)")
			[ -n "$rerun" ] || rerun="$dir/tests/fuzz/$name -max_total_time=$seconds $dir/findings/$name-*"
		done
	fi
fi

minutes=$(( ($(date +%s) - started + 59) / 60 ))
echo
if [ $full = 0 ]; then
	left=$(ctest --test-dir build-test-release -N -L full 2>/dev/null | sed -n 's/^ *Test *#[0-9]*: //p' | tr '\n' ' ')
	echo "Not run here (bash tests/run-all.sh --full runs them, as CI does, in about 35 minutes):"
	echo "  - the ASan+UBSan build and the suites again under it (build-test-asan)"
	echo "  - the suites labelled full: ${left:-none} (ctest --test-dir build-test-release -L full)"
	echo "  - fuzzing: each tests/fuzz target for NVSHIM_FUZZ_SECONDS (20) s under libFuzzer (the corpus replays, fuzz_replay_*, did run)"
	echo "  - the GPU checks need a GPU (the gpu suite skips without one): tests/gpu/run.sh"
fi
if [ "${#failed[@]}" -gt 0 ]; then
	list=$(printf '%s, ' "${failed[@]}")
	echo "FAILED after $minutes min: ${list%, }; rerun one: $rerun"
	exit 1
fi
echo "PASSED after $minutes min ($([ $full = 1 ] && echo full || echo quick))"
exit 0
