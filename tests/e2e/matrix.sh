#!/bin/bash
# The differential matrix (matrix.py; docs/tests.md#the-differential-matrix): every path through
# nvshim against plain nvcc. The quick run samples 24 of the pairwise cases (every shape and
# every layer among them); E2E_FULL=1 (run-all.sh --full, the release pass) runs all of them.
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"
how=(--sample 24)
[ -n "${E2E_FULL:-}" ] && how=(--pairs)
cd "$WORK" || exit 1
python3 "$(dirname "$0")/matrix.py" "$NVSHIM" "$NVCC" "${how[@]}" --jobs 2
rc=$?
t=${TMPDIR:-/tmp}/nvshim-times.$$
times >"$t"
awk 'function s(t) { split(t, a, "m"); return a[1] * 60 + a[2] } { c += s($1) + s($2) } END { printf "# cpu: %.0f s\n", c }' "$t"
rm -f "$t"
exit $rc
