#!/bin/bash
# nvshim's own commands, and the runner seen from outside: argv, stdin, stdout, stderr and exit
# status pass through; nvshim's options are removed; a long command line goes through a private
# options file; the log file gets one JSON line. A fake nvcc (a script) shows what it was given.
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"

FAKE="$WORK/fake/nvcc"
mkdir -p "$WORK/fake"
cat >"$FAKE" <<'SH'
#!/bin/sh
# explain may ask nvcc for facts (--version, --help), never run the command itself.
case ${1:-} in --version | --help | --list-gpu-code | --list-gpu-arch) ;; *) [ -n "${FAKE_MARK:-}" ] && echo ran >"$FAKE_MARK" ;; esac
printf '[%s]\n' "$@"
for a in "$@"; do
	case $a in
	--options-file) shift_next=1 ;;
	*) [ -n "${shift_next:-}" ] && { echo "file:"; cat "$a"; echo "mode:$(stat -c %a "$(dirname "$a")")"; }; shift_next= ;;
	esac
done
echo "depth=${NVSHIM_DEPTH:-unset}"
[ -n "${FAKE_STDIN:-}" ] && cat
[ -n "${FAKE_SIGNAL:-}" ] && kill -"$FAKE_SIGNAL" $$
echo "to stderr" >&2
exit "${FAKE_STATUS:-0}"
SH
chmod +x "$FAKE"
export NVSHIM_NVCC="$FAKE"

out=$("$NVSHIM" -c "a b.cu" "" "quote\"d" 'new
line' '$HOME' 2>"$WORK/err")
check "arguments reach nvcc exactly, in order" test "$out" = "[-c]
[a b.cu]
[]
[quote\"d]
[new
line]
[\$HOME]
depth=1"
check "stderr passes through" test "$(cat "$WORK/err")" = "to stderr"

out=$("$NVSHIM" --nvshim-verbosity=quiet -x --nvshim-strict=false cu 2>/dev/null)
check "--nvshim-* options are removed" test "$out" = "[-x]
[cu]
depth=1"

out=$(NVCC_PREPEND_FLAGS=-DPRE NVCC_APPEND_FLAGS=-DAPP "$NVSHIM" -c k.cu 2>/dev/null)
check "NVCC_PREPEND_FLAGS/NVCC_APPEND_FLAGS are left to nvcc" test "$out" = "[-c]
[k.cu]
depth=1"

FAKE_STATUS=42 "$NVSHIM" -c k.cu >/dev/null 2>&1
check "exit status passes through" test $? -eq 42
FAKE_SIGNAL=SEGV "$NVSHIM" -c k.cu >/dev/null 2>&1
check "a child killed by SIGSEGV gives 139" test $? -eq 139
FAKE_SIGNAL=KILL "$NVSHIM" -c k.cu >/dev/null 2>&1
check "a child killed by SIGKILL gives 137" test $? -eq 137
# When nvshim waits for nvcc (here because of the log file), it reports a signal as 128+N.
NVSHIM_LOG_FILE="$WORK/sig.jsonl" FAKE_SIGNAL=SEGV "$NVSHIM" -c k.cu >/dev/null 2>&1
check "waiting: a child killed by SIGSEGV gives 139" test $? -eq 139
check "waiting: the log records 139" grep -q '"status":139' "$WORK/sig.jsonl"
out=$(echo "from stdin" | FAKE_STDIN=1 "$NVSHIM" -x cu - 2>/dev/null | tail -1)
check "stdin passes through" test "$out" = "from stdin"

# A long rewritten command line goes through a private options file, removed afterwards. (The
# rewrite here is the removal of the --nvshim-* option; a line nvshim did not change is never
# moved: it was short enough for nvshim, so it is for nvcc.)
out=$(NVSHIM_OPTIONS_FILE_THRESHOLD=10 "$NVSHIM" -c "with space.cu" -DX=1 2>&1)
check "an unchanged command line stays on the command line" grep -q '^\[with space.cu\]$' <<<"$out"
mkdir -p "$WORK/tmp"
out=$(TMPDIR="$WORK/tmp" "$NVSHIM" --nvshim-options-file-threshold=10 -c "with space.cu" -DX=1 2>&1)
check "long command line: nvcc gets --options-file" grep -q '^\[--options-file\]$' <<<"$out"
check "long command line: the file holds the arguments, quoted" grep -q '^"with space.cu"$' <<<"$out"
check "long command line: the directory is private" grep -q '^mode:700$' <<<"$out"
check "long command line: the file is removed afterwards" test -z "$(ls -A "$WORK/tmp")"

# The real nvcc reads such a file and compiles exactly the same.
mkdir -p "$WORK/src dir" && printf '__global__ void k(){}\n' >"$WORK/src dir/k.cu"
( cd "$WORK/src dir" && NVSHIM_NVCC= "$NVSHIM" --nvshim-options-file-threshold=10 -c k.cu -o "o 1.o" -DA=1 -I "$WORK/src dir" )
check "long command line: the real nvcc compiles through the options file" test -s "$WORK/src dir/o 1.o"

# Log file: one JSON line per invocation.
NVSHIM_LOG_FILE="$WORK/log.jsonl" FAKE_STATUS=3 "$NVSHIM" -c k.cu >/dev/null 2>&1
NVSHIM_LOG_FILE="$WORK/log.jsonl" "$NVSHIM" nvcc --version >/dev/null 2>&1
check "log file: one line per invocation" test "$(wc -l <"$WORK/log.jsonl")" -eq 2
check "log file: valid JSON with argv, status and time" python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
a = lines[0]
assert a["argv_in"][1:] == ["-c", "k.cu"], a
assert a["argv_out"][1:] == ["-c", "k.cu"], a
assert a["status"] == 3 and a["wall_ms"] > 0 and a["maxrss_kb"] > 0, a
assert lines[1]["argv_in"][1:] == ["--version"]
' "$WORK/log.jsonl"

# A missing nvcc: one line, status 1.
NVSHIM_NVCC=/nonexistent/nvcc "$NVSHIM" -c k.cu >"$WORK/out" 2>"$WORK/err"
st=$?
check "missing nvcc: status 1" test $st -eq 1
check "missing nvcc: one error line on stderr, nothing on stdout" test "$(cat "$WORK/err")" = \
	"nvshim error   : real_nvcc '/nonexistent/nvcc' (env NVSHIM_NVCC) is not an executable file" -a ! -s "$WORK/out"
out=$(env -u NVSHIM_NVCC CUDA_HOME= CUDA_PATH= PATH=/usr/bin:/bin "$NVSHIM" -c k.cu 2>&1)
st=$?
if [ -x /usr/local/cuda/bin/nvcc ]; then
	skip "no nvcc anywhere: one error line" "/usr/local/cuda/bin/nvcc exists on this machine"
else
	check "no nvcc anywhere: one error line" test $st -eq 1 -a "$(wc -l <<<"$out")" -eq 1
fi

# nvshim's own commands.
check "help lists commands and settings" sh -c "'$NVSHIM' help | grep -q 'nvshim explain' && '$NVSHIM' help | grep -q options_file_threshold"
check "version names nvshim and the nvcc it runs" sh -c "'$NVSHIM' version | grep -q '^nvshim ' && '$NVSHIM' version | grep -q '$FAKE'"

# The front door: under the name nvshim, --help, -h, a bare nvshim and --version are nvshim's
# (under the name nvcc and as `nvshim nvcc --help` they are nvcc's: e2e_identity).
help=$("$NVSHIM" --help)
st=$?
check "nvshim --help: status 0, nvshim's short usage" test $st -eq 0 -a "$(head -1 <<<"$help")" = \
	"nvshim $(sed -n 's/^project(nvshim VERSION \([0-9.]*\).*/\1/p' "${NVSHIM_SOURCE_DIR:-$(dirname "$0")/../..}/CMakeLists.txt"): a transparent stand-in for NVIDIA's nvcc"
check "nvshim --help: short, with the commands and where the manual is" test "$(wc -l <<<"$help")" -le 30 -a \
	-n "$(grep -e '^ *env ' <<<"$help")" -a -n "$(grep -e '^ *run ' <<<"$help")" -a -n "$(grep 'man nvshim' <<<"$help")"
check "nvshim --help runs no nvcc" test -z "$(grep -F '[--help]' <<<"$help")"
check "nvshim -h is nvshim --help" test "$("$NVSHIM" -h)" = "$help"
out=$("$NVSHIM" 2>&1 >/dev/null)
st=$?
check "a bare nvshim: the usage on stderr, status 1" test $st -eq 1 -a "$out" = "$help"
out=$("$NVSHIM" --version 2>"$WORK/err")
st=$?
check "nvshim --version: nvshim's line, nvcc's --version text, the nvcc it runs" test $st -eq 0 -a "$out" = \
"nvshim $(sed -n 2p <<<"$help" >/dev/null; head -1 <<<"$help" | sed 's/^nvshim \([^:]*\):.*/\1/'), a stand-in for nvcc (nvshim --help; nvcc's text alone: nvshim nvcc --version)
[--version]
depth=1
nvshim runs $FAKE (found through real_nvcc (env NVSHIM_NVCC))"
check "nvshim -V is nvshim --version" test "$("$NVSHIM" -V 2>/dev/null)" = "$out"
check "nvshim --version with more arguments is nvcc's" test "$("$NVSHIM" --version -v 2>/dev/null)" = "[--version]
[-v]
depth=1"
out=$(NVSHIM_NVCC="$NVSHIM" "$NVSHIM" --version 2>&1)
st=$?
check "nvshim --version without a real nvcc: status 1, says why" test $st -eq 1 -a -n "$(grep 'is nvshim itself' <<<"$out")"
out=$(NVSHIM_VERBOSITY=verbose "$NVSHIM" config)
check "config shows values with origins" grep -q '^verbosity *= verbose *# env NVSHIM_VERBOSITY$' <<<"$out"
check "config shows real_nvcc from NVSHIM_NVCC" grep -q "^real_nvcc *= $FAKE *# env NVSHIM_NVCC$" <<<"$out"
out=$(FAKE_MARK="$WORK/mark" "$NVSHIM" explain -c k.cu -o k.o -arch=sm_90 --bogus)
check "explain runs nothing (nvcc is asked only for its facts)" test ! -e "$WORK/mark"
check "explain shows mode, inputs, output, unknown options and the command" contains "$out" \
	"^mode *: compile" "k.cu (cuda)" "^output *: k.o" "^unknown *: --bogus" \
	"^command *: .*nvcc -c k.cu -o k.o -arch=sm_90 --bogus$"
out=$(NVSHIM_NVCC= "$NVSHIM" doctor)
st=$?
check "doctor on a good setup: status 0" test $st -eq 0
check "doctor shows toolkit version and targets" contains "$out" "^toolkit *: [0-9]" "^real targets *: .*sm_" "no problems found"
out=$(NVSHIM_NVCC=/nonexistent "$NVSHIM" doctor 2>&1)
check "doctor on a broken setup: the problem" contains "$out" "problem: no real nvcc"

# With nothing to fix and the real nvcc, nvshim prints nothing of its own.
( cd "$WORK/src dir" && NVSHIM_NVCC= "$NVSHIM" -c k.cu -o k.o >"$WORK/out" 2>"$WORK/err" )
check "nothing of nvshim's own on stdout or stderr" test ! -s "$WORK/out" -a ! -s "$WORK/err"

finish
