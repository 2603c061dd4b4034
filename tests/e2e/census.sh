#!/bin/bash
# The census of upgrade breaks (tests/e2e/census/*.case, docs/compat.md's table): one reproducer
# per cause users report, each plainly and through nvshim, with the notes nvshim gives checked
# exactly (tests/e2e/census.py says what each answer must do). Then the table in docs/compat.md
# is checked against the cases. Extra arguments run those cases only.
NVSHIM=$1 NVCC=$2
shift 2
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
bash "$ROOT/scripts/fetch-cccl12.sh" >/dev/null 2>&1
export TMPDIR=$WORK
python3 "$ROOT/tests/e2e/census.py" "$NVSHIM" "$NVCC" "$@"; rc=$?
python3 "$ROOT/tests/e2e/census.py" --check-docs "$ROOT/docs/compat.md" || rc=1
exit $rc
