#!/bin/bash
# Configuration seen from a build: a bad config never breaks a build plain nvcc would pass
# (fail open) but says so; strict = true makes it fail; a project file cannot choose nvcc.
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"
mkdir -p "$WORK/proj/src"
printf '__global__ void k(){}\n' >"$WORK/proj/src/k.cu"
cd "$WORK/proj/src" || exit 1

"$NVCC" -c k.cu -o plain.o
printf 'verbosity = normal\nthis is not a setting\nstrict = perhaps\n' >"$WORK/proj/.nvshim.ini"
"$NVSHIM" -c k.cu -o shim.o 2>"$WORK/err"
st=$?
check "bad project config: the build still succeeds" test $st -eq 0
check "bad project config: same object as plain nvcc" cmp -s <(normalise plain.o) <(normalise shim.o)
check "bad project config: one warning per bad line, with file and line" test "$(cat "$WORK/err")" = \
"nvshim warning : $WORK/proj/.nvshim.ini:2: expected 'name = value', found 'this is not a setting'
nvshim warning : $WORK/proj/.nvshim.ini:3: 'strict' must be true or false, not 'perhaps'"

rm -f shim.o
NVSHIM_STRICT=true "$NVSHIM" -c k.cu -o shim.o 2>"$WORK/err"
st=$?
check "strict: the same problems fail the command" test $st -eq 1 -a ! -e shim.o
check "strict: reported as errors" test "$(grep -c '^nvshim error   : ' "$WORK/err")" -eq 2

rm -f shim.o
NVSHIM_VERBOSITY=quiet "$NVSHIM" -c k.cu -o shim.o 2>"$WORK/err"
check "quiet: warnings are not shown" test ! -s "$WORK/err" -a -s shim.o

printf 'real_nvcc = /bin/false\n' >"$WORK/proj/.nvshim.ini"
"$NVSHIM" -c k.cu -o shim2.o 2>"$WORK/err"
st=$?
check "project file cannot choose nvcc: build succeeds with the real one" test $st -eq 0 -a -s shim2.o
check "project file cannot choose nvcc: warns" grep -q "'real_nvcc' chooses a program to run" "$WORK/err"

mkdir -p "$XDG_CONFIG_HOME/nvshim"
printf 'trust_project = true\n' >"$XDG_CONFIG_HOME/nvshim/nvshim.ini"
"$NVSHIM" -c k.cu -o shim3.o 2>"$WORK/err"
check "a trusting user file lets the project choose nvcc" test $? -eq 1 -a ! -e shim3.o
rm -f "$XDG_CONFIG_HOME/nvshim/nvshim.ini" "$WORK/proj/.nvshim.ini"

# The installed defaults file next to the executable is read (relative install).
out=$("$NVSHIM" config)
check "config lists no files when there are none" grep -q '(none)' <<<"$out"
printf '[nvshim]\nverbosity = verbose\n' >"$XDG_CONFIG_HOME/nvshim/nvshim.ini"
out=$("$NVSHIM" config)
check "user file is read and named as origin" grep -q "^verbosity *= verbose *# $XDG_CONFIG_HOME/nvshim/nvshim.ini:2" <<<"$out"

finish
