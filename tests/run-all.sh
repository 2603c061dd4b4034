#!/bin/bash
# The whole test suite: a -Werror build with every unit and end-to-end suite, then the same
# suites again in an AddressSanitizer + UndefinedBehaviorSanitizer build.
set -uo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
status=0
# Older nvcc drivers for tests/e2e/toolkits.sh (skipped if they cannot be fetched).
bash scripts/fetch-toolkits.sh
# nvcc 13.5 for tests/e2e/toolkit135.sh and api.sh (skipped if it cannot be fetched).
bash scripts/fetch-nvcc135.sh
# The quick start's build (Release, -O3) warns where -O2 does not: it must build clean too.
echo "== quick-start build (Release)"
cmake -S . -B build-test-o3 -DCMAKE_BUILD_TYPE=Release >/dev/null || exit 1
cmake --build build-test-o3 -j"$jobs" 2>&1 | grep -E 'warning|error' && exit 1
[ ${PIPESTATUS[0]} -eq 0 ] || exit 1
for variant in release asan; do
	dir=build-test-$variant
	flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
	[ $variant = asan ] && flags=(-DCMAKE_BUILD_TYPE=Debug -DNVSHIM_SANITIZE=ON)
	echo "== $variant build"
	cmake -S . -B "$dir" "${flags[@]}" >/dev/null || exit 1
	cmake --build "$dir" -j"$jobs" 2>&1 | grep -E 'warning|error' && exit 1
	[ ${PIPESTATUS[0]} -eq 0 ] || exit 1
	echo "== $variant tests"
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --test-dir "$dir" --output-on-failure --timeout 1500 -j"$jobs" || status=1
done

# Fuzzing: every parser of outside input under libFuzzer with ASan+UBSan, NVSHIM_FUZZ_SECONDS
# (default 45) each, starting from its corpus in tests/fuzz/corpus (copied: the run's new
# inputs stay out of the tree). Any crash, leak or sanitizer report fails the run; the input
# that caused it is left in build-test-fuzz/findings/ to add to the corpus once fixed.
echo "== fuzz build"
dir=build-test-fuzz
if ! CC=clang cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DNVSHIM_FUZZ=ON >/dev/null; then
	echo "fuzz: cannot configure with clang"
	exit 1
fi
cmake --build "$dir" -j"$jobs" 2>&1 | grep -E 'warning|error' && exit 1
[ ${PIPESTATUS[0]} -eq 0 ] || exit 1
echo "== fuzz"
seconds=${NVSHIM_FUZZ_SECONDS:-45}
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
ls "$dir"/tests/fuzz/fuzz_* | xargs -P "$jobs" -I{} bash -c 'fuzz_one "$@"' _ {} "$dir" "$seconds" | tee "$dir/findings/summary"
grep -q '^not ok' "$dir/findings/summary" && status=1
exit $status
