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

# The C++17 floor's lasting fix: `nvshim migrate --apply` on a Makefile and a CMakeLists.txt that
# ask for C++14, then plain nvcc builds with the Makefile's flags.
if [ $# -eq 0 ]; then
	mkdir -p "$WORK/dialect" && cd "$WORK/dialect" || exit 1
	printf '#include <thrust/host_vector.h>\nint main() { thrust::host_vector<int> v(2, 1); return v[0] - 1; }\n' >sum.cu
	printf 'NVCCFLAGS = -std=c++14 -arch=sm_80\nsum: sum.cu\n\t"$(NVCC)" $(NVCCFLAGS) sum.cu -o sum\n' >Makefile
	printf 'project(p LANGUAGES CUDA)\nset(CMAKE_CUDA_STANDARD 14)\nadd_executable(sum sum.cu)\ntarget_compile_features(sum PRIVATE cuda_std_14)\n' >CMakeLists.txt
	"$NVSHIM" migrate Makefile CMakeLists.txt >mig.diff 2>mig.err
	if grep -q '^+NVCCFLAGS = -std=c++17 -arch=sm_80$' mig.diff && grep -q '^+set(CMAKE_CUDA_STANDARD 17)$' mig.diff &&
		grep -q '^+target_compile_features(sum PRIVATE cuda_std_17)$' mig.diff; then
		echo "ok - migrate: C++17 for the Makefile's -std=c++14 and CMake's CMAKE_CUDA_STANDARD 14 and cuda_std_14"
	else
		echo "not ok - migrate: C++17 for the Makefile's -std=c++14 and CMake's CMAKE_CUDA_STANDARD 14"
		sed 's/^/#   /' mig.diff mig.err
		rc=1
	fi
	"$NVSHIM" migrate --apply Makefile >/dev/null 2>&1
	if make -s NVCC="$NVCC" >make.out 2>&1 && ./sum; then
		echo "ok - migrate --apply: plain nvcc builds with the Makefile's flags"
	else
		echo "not ok - migrate --apply: plain nvcc builds with the Makefile's flags"
		sed 's/^/#   /' make.out
		rc=1
	fi
fi
finish >/dev/null
exit $rc
