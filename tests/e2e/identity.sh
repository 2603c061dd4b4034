#!/bin/bash
# Identity: for each invocation, nvshim and the real nvcc give the same stdout, stderr, exit
# status and output files (byte for byte, once nvcc's random tmpxft_ names are normalised).
# Both run in the same directory, one after the other, so paths in their output agree.
# nvshim runs under the name nvcc (libexec/nvshim/bin/nvcc), as builds run it; under the name
# nvshim, --help, -h, --version and no arguments are nvshim's own, and `nvshim nvcc ARGS` is nvcc
# again (the last cases).
NVSHIM=$1 NVCC=$2
DAY=$((10#${NVSHIM_TEST_DAY:-$(date +%j)})) ROTATE=${NVSHIM_ROTATE:-} # before lib.sh clears NVSHIM_*
. "$(dirname "$0")/lib.sh"
SHIM_NVCC="${NVSHIM_BUILD_DIR:-$(dirname "$NVSHIM")}/libexec/nvshim/bin/nvcc"
[ -x "$SHIM_NVCC" ] || { not_ok "nvshim's nvcc name" "no $SHIM_NVCC"; finish; }
# The tool's words before the arguments: none for the nvcc name, `nvcc` for `nvshim nvcc`.
SHIM=("$SHIM_NVCC")
FIXTURES=$(cd "$(dirname "$0")/fixtures" && pwd)
RUN="$WORK/run"

# run_side TOOL STDIN: runs "${ARGS[@]}" in a fresh copy of the fixtures, results in $WORK/$side.
run_side() {
	local side=$1 tool=$2 stdin=$3
	rm -rf "$RUN" "$WORK/$side"
	mkdir -p "$WORK/$side/files"
	cp -r "$FIXTURES" "$RUN"
	local words=("$tool")
	[ "$side" = nvshim ] && words=("${SHIM[@]}")
	( cd "$RUN" && env "${ENVS[@]}" "${words[@]}" "${ARGS[@]}" <"$stdin" >"$WORK/$side/stdout" 2>"$WORK/$side/stderr"; echo $? >"$WORK/$side/status" )
	# Every file the run created.
	( cd "$RUN" && find . -type f | sort | while read -r f; do
		[ -e "$FIXTURES/$f" ] && cmp -s "$f" "$FIXTURES/$f" && continue
		mkdir -p "$WORK/$side/files/$(dirname "$f")"
		normalise "$f" >"$WORK/$side/files/$f"
	done )
	normalise "$WORK/$side/stdout" >"$WORK/$side/stdout.n"
	# ptxas -v's compile times differ between any two runs
	normalise "$WORK/$side/stderr" | sed 's/Compile time = [0-9.]* ms/Compile time = N ms/' >"$WORK/$side/stderr.n"
}

# same NAME [--stdin FILE] [--env VAR=VALUE]... -- ARGS...
same() {
	local name=$1 stdin=/dev/null
	shift
	ENVS=()
	while [ "$1" != "--" ]; do
		case $1 in
		--stdin) stdin="$FIXTURES/$2"; shift 2 ;;
		--env) ENVS+=("$2"); shift 2 ;;
		esac
	done
	shift
	ARGS=("$@")
	run_side nvcc "$NVCC" "$stdin"
	run_side nvshim "${SHIM[0]}" "$stdin"
	local why=()
	cmp -s "$WORK/nvcc/status" "$WORK/nvshim/status" ||
		why+=("status: nvcc $(cat "$WORK/nvcc/status"), nvshim $(cat "$WORK/nvshim/status")")
	cmp -s "$WORK/nvcc/stdout.n" "$WORK/nvshim/stdout.n" ||
		why+=("stdout differs: $(diff "$WORK/nvcc/stdout.n" "$WORK/nvshim/stdout.n" | head -5 | tr '\n' '|')")
	cmp -s "$WORK/nvcc/stderr.n" "$WORK/nvshim/stderr.n" ||
		why+=("stderr differs: $(diff "$WORK/nvcc/stderr.n" "$WORK/nvshim/stderr.n" | head -5 | tr '\n' '|')")
	diff -r "$WORK/nvcc/files" "$WORK/nvshim/files" >/dev/null ||
		why+=("output files differ: $(diff -rq "$WORK/nvcc/files" "$WORK/nvshim/files" | head -3 | tr '\n' '|')")
	if [ ${#why[@]} -eq 0 ]; then
		local nfiles
		nfiles=$(cd "$WORK/nvcc/files" && find . -type f | wc -l)
		ok "$name (status $(cat "$WORK/nvcc/status"), $nfiles output file(s))"
	else
		not_ok "$name" "${why[@]}"
	fi
	# A case that is meant to produce files must produce them.
	if [ -n "${EXPECT_FILES:-}" ] && [ "$(cd "$WORK/nvcc/files" && find . -type f | wc -l)" -eq 0 ]; then
		not_ok "$name produced output files" "nvcc produced none: the case tests nothing"
	fi
}

same "--version" -- --version
same "-V" -- -V
same "--help" -- --help
same "-h" -- -h
same "no arguments" --
same "--list-gpu-code" -- --list-gpu-code
same "--list-gpu-arch" -- --list-gpu-arch
SHIM=("$NVSHIM" nvcc)
same "nvshim nvcc --help" -- --help
same "nvshim nvcc --version" -- --version
same "nvshim nvcc -h" -- -h
same "nvshim nvcc (no arguments)" --
SHIM=("$SHIM_NVCC")
EXPECT_FILES=1
same "compile -c -o" -- -c kernel.cu -o kernel.o
same "compile with default output name" -- -c kernel.cu
same "-v compile" -- -v -c kernel.cu -o kernel.o
same "-dc relocatable compile" -- -dc kernel.cu -o kernel_dc.o
same "-MD -MF dependency file with compile" -- -c -MD -MF kernel.d kernel.cu -o kernel.o
same "link an executable" -- kernel.cu -o prog
# After `nvshim env`: CUDA_HOME is the toolkit view, and the user's PATH names the toolkit by
# its own link (/usr/local/cuda/bin): nvshim runs nvcc by that name, so the device code and
# every path nvcc derives from its location are plain's; -rpath and -L into the view are the
# real toolkit's in the program
VIEW=$("$NVSHIM" toolkit-view 2>/dev/null)
if [ -n "$VIEW" ]; then
	VIEWPATH="PATH=$(dirname "$NVCC"):$PATH"
	same "through the toolkit view: a compile" --env "CUDA_HOME=$VIEW" --env "$VIEWPATH" -- -c kernel.cu -o view.o
	same "through the toolkit view: a link" --env "CUDA_HOME=$VIEW" --env "$VIEWPATH" -- kernel.cu -o viewprog
	ENVS=("CUDA_HOME=$VIEW" "$VIEWPATH")
	( cd "$FIXTURES" && env "${ENVS[@]}" "$SHIM_NVCC" kernel.cu -o "$WORK/viewrpath" -L"$VIEW/lib64" \
		-Xlinker -rpath="$VIEW/lib64" -Xcompiler -g -I"$VIEW/include" ) >"$WORK/viewrpath.log" 2>&1
	check "through the toolkit view: -rpath, -L and -I into the view name the real toolkit in the program" \
		test -s "$WORK/viewrpath" -a -n "$(readelf -d "$WORK/viewrpath" | grep -F "$(cd "$(dirname "$NVCC")/.." && pwd -P)/lib64")" \
		-a -z "$(strings -a "$WORK/viewrpath" | grep -F "$VIEW")" -a -z "$(strings -a "$WORK/viewrpath" | grep toolkit-view)"
else
	not_ok "the toolkit view" "nvshim toolkit-view made none"
fi
same "-ptx" -- -ptx kernel.cu -o kernel.ptx
same "-cubin for sm_80" -- -cubin -arch=sm_80 kernel.cu -o kernel.cubin
same "-fatbin" -- -fatbin kernel.cu -o kernel.fatbin
same "-lib" -- -lib kernel.cu -o libkernel.a
same "-gencode in several spellings" -- -c kernel.cu -o g.o -gencode arch=compute_80,code=sm_80 \
	"-gencode=arch=compute_90,code=[sm_90,compute_90]" "--generate-code=arch=compute_86,code=\"sm_86,compute_86\""
same "host options and comma defines" -- -c kernel.cu -o h.o -Xcompiler -fPIC,-O2 -DFOO=1,BAR -I. -O3 -std=c++17
same "--options-file" -- --options-file opts.txt
same "host C++ source" -- -c host.cpp -o host.o
same "-x cu from stdin" --stdin kernel.cu -- -x cu -c - -o stdin.o
same "NVCC_APPEND_FLAGS applied once" --env NVCC_APPEND_FLAGS=-DAPPENDED=1 -- -c kernel.cu -o app.o -Xcompiler -Werror
# (-lineinfo would not do here: nvcc itself does not give the same object twice with it)
same "NVCC_PREPEND_FLAGS applied once" --env "NVCC_PREPEND_FLAGS=-DPREPENDED=1 -Xcompiler=-Wall" -- -c kernel.cu -o pre.o
same "a warning" -- -c warn.cu -o warn.o
# The compatibility layer (compat = auto, the default) leaves a source that compiles alone.
same "a CUDA 13 source beside the layer's APIs (compat = auto)" -- -c compat/clean.cu -o clean.o
same "the CUDA 13 forms the layer restores, hand-fixed (compat = auto)" -- compat/memadvise_fixed.cu -o memadvise
EXPECT_FILES=
same "--dryrun" -- --dryrun -c kernel.cu -o kernel.o
same "-E to stdout" -- -E kernel.cu
same "-M to stdout" -- -M kernel.cu
# A --dryrun and an -E of a source that names APIs the layer restores, in their CUDA 13 forms: the
# front end is checked (compat_dryrun.h) and passes: nvcc's answers.
same "--dryrun of the CUDA 13 forms the layer restores (checked, plain)" -- --dryrun -c compat/memadvise_fixed.cu -o m.o
same "sccache's -c -E of the CUDA 13 forms the layer restores (checked, plain)" -- -c -E -Xcompiler=-P compat/memadvise_fixed.cu
same "--run the host part" -- --run kernel.cu -o runprog
same "a syntax error" -- -c bad.cu -o bad.o
same "an error beside a removed field: no retry (compat = auto, explain_api off)" --env NVSHIM_EXPLAIN_API=false -- -c compat/unrelated.cu -o u.o
same "an unknown option" -- -c kernel.cu --no-such-option
same "a missing file" -- -c missing.cu -o missing.o
# With their rules off, nvshim leaves what the targets pass would fix to nvcc (tests/e2e/targets.sh
# covers the rules on).
same "an unsupported target (rule off)" --env NVSHIM_TARGETS_UNSUPPORTED=false -- -c kernel.cu -arch=sm_70
same "an invalid -code" -- -c kernel.cu -arch=compute_80 -code=sm_72
same "-arch=native without a GPU (rule off)" --env NVSHIM_TARGETS_NATIVE=false -- -c kernel.cu -o native.o -arch=native
same "repeated -arch" -- -c kernel.cu -o twice.o -arch=sm_80 -arch=sm_86
same "a @response file (nvcc does not read it)" -- @opts.txt
same "-dlink of a missing object" -- -dlink missing.o -o dl.o

# -dlink needs an object from a previous step: build it once, then compare the -dlink step.
"$NVCC" -dc "$FIXTURES/kernel.cu" -o "$WORK/dc.o"
FIXTURES_ORIG=$FIXTURES
FIXTURES="$WORK/fixtures2"
cp -r "$FIXTURES_ORIG" "$FIXTURES"
cp "$WORK/dc.o" "$FIXTURES/dc.o"
EXPECT_FILES=1
same "-dlink" -- -dlink dc.o -o dlink.o
same "link relocatable objects" -- dc.o -o prog_rdc

# Lines drawn from the option table (src/model/options.c): a compile of kernel.cu with each
# option nvcc 13.0 lists that is not a mode, a target or an information query, flags as they
# are and options with a value with a sample value (the others are counted as not drawn).
# Nothing is to be fixed in any of them: nvcc's output, byte for byte. The quick run takes every
# fifth (a different fifth each day, said below); E2E_FULL=1 (run-all.sh --full, CI) every
# second (a different half each day: two days' runs draw every line); the sanitizer pass,
# where each line is nvshim's exec path again, every tenth; NVSHIM_ROTATE=off every line,
# NVSHIM_TEST_DAY=N day N's share.
unset EXPECT_FILES
SHIM=("$SHIM_NVCC")
mapfile -t DRAWN < <(python3 - "${NVSHIM_SOURCE_DIR:-$(dirname "$0")/../..}/src/model/options.c" <<'PY'
import re, sys
values = {"Werror": "all-warnings", "brief-diagnostics": "true", "compiler-options": "-Wall",
          "compress-mode": "size", "default-stream": "per-thread", "define-macro": "NVSHIM_X=1",
          "diag-error": "177", "diag-suppress": "177", "diag-warn": "177", "dlink-time-opt": None,
          "dopt": "on", "extensible-whole-program": None, "fmad": "false", "ftz": "true",
          "include-path": ".", "linker-options": "--as-needed", "maxrregcount": "32",
          "optimize": "2", "prec-div": "false", "prec-sqrt": "false", "ptxas-options": "-v",
          "std": "c++17", "system-include": ".", "threads": "2", "undefine-macro": "NVSHIM_Y",
          "use_fast_math": None, "pre-include": "cstdio", "relocatable-device-code": "true",
          "extra-device-vectorization": None, "device-debug": None, "generate-line-info": None,
          "Ofast-compile": "max", "split-compile": "2", "library": "m", "library-path": ".",
          "cudart": "shared", "dependency-output": "opt.d", "dependency-target-name": "opt.o",
          "output-directory": ".", "keep-dir": ".", "nvlink-options": "-v", "time": "opt.csv",
          "device-stack-protector": "true", "frandom-seed": "1", "jump-table-density": "50",
          "restrict": None, "source-in-ptx": None}
skip_kinds = ("OPT_KIND_MODE", "OPT_KIND_TARGET", "OPT_KIND_INFO", "OPT_KIND_INPUT")
# the line's own output, and options that change what nvcc runs or where (a host compiler, an
# archiver, a dry run answered by nvshim's compatibility check, stages kept in the directory)
skip = {"output-file", "compiler-bindir", "archiver-binary", "dryrun", "keep", "clean-targets",
        "save-temps", "run-args", "options-file", "input-drive-prefix", "dependency-drive-prefix",
        "drive-prefix", "forward-unknown-to-host-compiler", "forward-unknown-to-host-linker",
        "list-gpu-arch", "list-gpu-code", "no-host-device-initializer-list", "generate-dependency-targets",
        # debug and line information hold nvcc's random temporary names, and --time's table
        # the times: two plain runs differ
        "debug", "device-debug", "generate-line-info", "time"}
text = open(sys.argv[1]).read()
for name, short, flags, kind in re.findall(r'\{ "([^"]+)", (NULL|"[^"]*"), ([^,]+), (OPT_KIND_\w+) \}', text):
    if kind in skip_kinds or name in skip or "H" in flags or "X" in flags:
        continue
    if "V" not in flags:
        print("--" + name)
    elif name in values and values[name]:
        print("--%s=%s" % (name, values[name]))
    else:
        print("#" + name)
PY
)
drawn=0 not_drawn=()
every=5
[ -n "${E2E_FULL:-}" ] && every=2
[ -n "$SANITIZED" ] && every=10
[ "$ROTATE" = off ] && every=1
day=$((DAY % every))
for i in "${!DRAWN[@]}"; do
	opt=${DRAWN[$i]}
	if [ "${opt:0:1}" = "#" ]; then
		not_drawn+=("${opt:1}")
		continue
	fi
	[ $((i % every)) -eq $day ] || continue
	drawn=$((drawn + 1))
	same "option table: $opt" -- -c kernel.cu -o opt.o "$opt"
done
echo "# option table: $drawn lines drawn of ${#DRAWN[@]} options (${#not_drawn[@]} without a sample value: ${not_drawn[*]})"

finish
