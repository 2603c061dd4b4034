#!/bin/bash
# The differential matrix (matrix.py; docs/tests.md#the-differential-matrix): every path through
# nvshim against plain nvcc. The quick run samples 24 of the pairwise cases (every shape and
# every layer among them); E2E_FULL=1 (run-all.sh --full, the release pass) runs every shape and
# layer and half of the other pairwise cases, the day of the year's parity choosing (two days'
# runs are every pair); NVSHIM_ROTATE=off the whole product (--all: 4,140 cases, about two and a
# half hours on 2 cores, with as many cases at once as CPUs), NVSHIM_TEST_DAY=N day N's half.
NVSHIM=$1 NVCC=$2
DAY=$((10#${NVSHIM_TEST_DAY:-$(date +%j)})) ROTATE=${NVSHIM_ROTATE:-} # before lib.sh clears NVSHIM_*
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
how=(--sample 24) jobs=2
[ -n "${E2E_FULL:-}" ] && how=(--pairs --half "$DAY")
[ -n "${E2E_FULL:-}" ] && [ "$ROTATE" = off ] && how=(--all) jobs=$(nproc)
echo "# matrix.py ${how[*]}"
cd "$WORK" || exit 1
python3 "$HERE/matrix.py" "$NVSHIM" "$NVCC" "${how[@]}" --jobs "$jobs"
rc=$?
t=${TMPDIR:-/tmp}/nvshim-times.$$
times >"$t"
awk 'function s(t) { split(t, a, "m"); return a[1] * 60 + a[2] } { c += s($1) + s($2) } END { printf "# cpu: %.0f s\n", c }' "$t"
rm -f "$t"
exit $rc
