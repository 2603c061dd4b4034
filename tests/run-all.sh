#!/bin/bash
# The whole test suite: a -Werror build with every unit and end-to-end suite, then the same
# suites again in an AddressSanitizer + UndefinedBehaviorSanitizer build.
set -uo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
status=0
# Older nvcc drivers for tests/e2e/toolkits.sh (skipped if they cannot be fetched).
bash scripts/fetch-toolkits.sh
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
		ctest --test-dir "$dir" --output-on-failure -j"$jobs" || status=1
done
exit $status
