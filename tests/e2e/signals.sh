#!/bin/bash
# Signals and process lifetime. A five-target compile is signalled in the middle, at its own pid
# alone (as kill, a build tool's timeout, a CI cancel or Popen.terminate() do), once run by the
# real nvcc and once through nvshim, on each path nvshim has: a compile with stderr held (the
# default), a compile that probes (signalled during nvcc and during the probes), CC mode, the
# exec path and `nvshim run`. For each signal (TERM, INT, HUP, QUIT): the exit status and the
# stderr are plain nvcc's, the object exists only where plain nvcc wrote it, no compiler process
# is left a second later, and no temporary of nvshim's is left in TMPDIR or the cache. SIGKILL of
# nvshim: no compiler process survives (the parent-death signal), no object appears.
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"
# Serial nvcc is the reference: with nvshim's --threads (a multi-target compile), nvcc exits 255
# on SIGINT or SIGQUIT where serial nvcc ignores them and finishes, and nvshim waits for it
# (holding its slots) instead of exec'ing it (docs/threads.md).
export NVSHIM_THREADS=off
FIX=$(cd "$(dirname "$0")/fixtures/signals" && pwd)
B=${NVSHIM_BUILD_DIR:-$(dirname "$NVSHIM")}
CC_DIR="$B/libexec/nvshim/cc"
export NVSHIM_NVCC="$NVCC"
REAL_NVCC=$(readlink -f "$NVCC")
GEN=()
for a in 75 80 86 89 90; do GEN+=(-gencode "arch=compute_$a,code=sm_$a"); done
# The probe's source fails for sm_75 only, the last target, after the others' work.
PGEN=()
for a in 80 86 89 90 75; do PGEN+=(-gencode "arch=compute_$a,code=sm_$a"); done
SIGNALS=(TERM INT HUP QUIT)
N=0

# sig_run SIGNAL PATTERN -- CMD...: CMD in a fresh folder $D (its own TMPDIR and cache; %D in
# PATTERN and CMD is $D), signalled when a process matching PATTERN runs. Sets ST, EXE, LEFT
# (EARLY when CMD ended before PATTERN appeared). Sources are named relative to $D, as in
# nvcc's messages; the object is %D/k.o, so that every compiler process names $D.
sig_run() {
	local sig=$1 pat=$2 out a
	shift 3
	N=$((N + 1))
	D="$WORK/r$N"
	mkdir -p "$D/tmp" "$D/cache"
	cp "$FIX"/*.cu "$D/"
	pat=${pat//%D/$D}
	local cmd=()
	for a; do cmd+=("${a//%D/$D}"); done
	out=$(cd "$D" && TMPDIR="$D/tmp" XDG_CACHE_HOME="$D/cache" \
		python3 "$FIX/sigrun.py" "$sig" "$pat" "$D" "$D/err" -- "${cmd[@]}")
	ST=$(sed -n 's/^status //p' <<<"$out")
	EXE=$(sed -n 's/^exe //p' <<<"$out")
	LEFT=$(sed -n 's/^left //p' <<<"$out")
	LEFT_LATER=$(sed -n 's/^left_later //p' <<<"$out")
	EARLY=$(sed -n 's/^early //p' <<<"$out")
	[ -z "$EARLY" ] || echo "# ${cmd[*]} ended (status $EARLY) before a process matched $pat"
}
CICC='nvvm/bin/cicc .*%D/tmp/'
# nvshim_temps: nvshim's temporaries in $D's TMPDIR and cache (cache files are written to NAME.XXXXXX
# and renamed; a verdict is the record of a probe).
nvshim_temps() {
	find "$D/tmp" -name 'nvshim-*'
	find "$D/cache" -type f -regex '.*\.[A-Za-z0-9]\{6\}'
}
# verify WHAT SIGNAL PLAIN-STATUS PLAIN-OBJECT PLAIN-ERR: the checks after a run of nvshim
verify() {
	local what=$1 sig=$2 pst=$3 pobj=$4 perr=$5
	check "$what, SIG$sig: signalled mid-compile" test -z "$EARLY" -a -n "$ST"
	check "$what, SIG$sig: the exit status is plain nvcc's ($pst)" test "$ST" = "$pst"
	# What a stage still running prints after nvcc's "nvcc: Terminated" depends on the moment.
	check "$what, SIG$sig: stderr is nvcc's own, first line as plain nvcc's" \
		test -z "$(grep '^nvshim ' "$D/err")" -a "$(head -n 1 "$D/err" | normalise)" = "$(head -n 1 "$perr" | normalise)"

	# SIGHUP kills nvcc at once, without stopping the stage it runs (plain nvcc does the same):
	# that stage ends on its own, writing only into nvcc's temporary files.
	if [ "$sig" = HUP ] && [ "$LEFT" != 0 ]; then
		echo "# $what, SIGHUP: $LEFT process(es) of the stage nvcc was running, a second later"
		check "$what, SIGHUP: nvcc's last stage ended on its own" test "$LEFT_LATER" = 0
	else
		check "$what, SIG$sig: no compiler process left after a second" test "$LEFT" = 0
	fi
	if [ "$pobj" = yes ]; then
		check "$what, SIG$sig: the object is written, as plain nvcc writes it" test -s "$D/k.o"
	else
		check "$what, SIG$sig: no object, as with plain nvcc" test ! -e "$D/k.o"
	fi
	check "$what, SIG$sig: no temporary of nvshim's in TMPDIR or the cache" test -z "$(nvshim_temps)"
}
OBJ_DIRS=() # folders where no object may appear later

# 1. Plain nvcc under each signal: what nvshim must give.
declare -A PST POBJ PERR
for sig in "${SIGNALS[@]}"; do
	sig_run "$sig" "$CICC" -- "$NVCC" -c slow.cu "${GEN[@]}" -o %D/k.o
	PST[$sig]=$ST PERR[$sig]="$D/err"
	POBJ[$sig]=$([ -s "$D/k.o" ] && echo yes || echo no)
	check "plain nvcc, SIG$sig: signalled mid-compile" test -z "$EARLY" -a -n "$ST"
	echo "# plain nvcc, SIG$sig: status $ST, object: ${POBJ[$sig]}, stderr: $(tr '\n' '|' <"$D/err")"
done
check "plain nvcc, SIGTERM: 255 after its own clean-up, no object" test "${PST[TERM]}" = 255 -a "${POBJ[TERM]}" = no
check "plain nvcc, SIGTERM: says 'nvcc: Terminated'" grep -qx 'nvcc: Terminated' "${PERR[TERM]}"

# 2. nvshim, stderr held (a compile it watches for crashes: the default), each signal.
for sig in "${SIGNALS[@]}"; do
	sig_run "$sig" "$CICC" -- "$NVSHIM" -c slow.cu "${GEN[@]}" -o %D/k.o
	verify "held stderr" "$sig" "${PST[$sig]}" "${POBJ[$sig]}" "${PERR[$sig]}"
	check "held stderr, SIG$sig: nvshim waited (its own pid was signalled)" test "$EXE" = "$(readlink -f "$NVSHIM")"
	[ "${POBJ[$sig]}" = no ] && OBJ_DIRS+=("$D")
done
# With a log: the line records the signal.
sig_run TERM "$CICC" -- env NVSHIM_LOG_FILE="$WORK/log.jsonl" "$NVSHIM" -c slow.cu "${GEN[@]}" -o %D/k.o
verify "held stderr and a log" TERM "${PST[TERM]}" "${POBJ[TERM]}" "${PERR[TERM]}"
check "the log line has the status and the signal" \
	grep -q '"nvshim received signal 15 (Terminated) while nvcc ran: .*\[runner.signal\]".*"status":255' "$WORK/log.jsonl"

# 3. The exec path (nothing to do after nvcc): nvshim is nvcc, the signal reaches nvcc itself.
for sig in "${SIGNALS[@]}"; do
	sig_run "$sig" "$CICC" -- env NVSHIM_CRASH_BUNDLES=false NVSHIM_EXPLAIN_RESOURCES=false NVSHIM_EXPLAIN_API=false NVSHIM_MODULES=false \
		"$NVSHIM" -c slow.cu "${GEN[@]}" -o %D/k.o
	verify "exec" "$sig" "${PST[$sig]}" "${POBJ[$sig]}" "${PERR[$sig]}"
	check "exec, SIG$sig: the pid signalled was nvcc's (nvshim had exec'd it)" test "$EXE" = "$REAL_NVCC"
done

# 4. CC mode: nvshim as gcc, a .cu file, each signal.
for sig in "${SIGNALS[@]}"; do
	sig_run "$sig" "$CICC" -- "$CC_DIR/gcc" -c slow.cu -o %D/k.o "${GEN[@]}"
	verify "CC mode" "$sig" "${PST[$sig]}" "${POBJ[$sig]}" "${PERR[$sig]}"
	[ "${POBJ[$sig]}" = no ] && OBJ_DIRS+=("$D")
done

# 5. nvshim run -- nvcc: nvshim execs the command, which gets the signal itself.
LIB="$B/libexec/nvshim/libnvshim-preload.so"
if [ ! -f "$LIB" ]; then
	skip "nvshim run" "no libnvshim-preload.so beside nvshim"
elif readelf -d "$LIB" | grep -q 'NEEDED.*libasan'; then
	# The sanitized library inside nvcc's stages: LeakSanitizer fails the first stage on the
	# toolkit's own memory, and with leak checks off a later stage crashes (with or without a
	# signal). nvshim run execs the command either way: the plain build's run covers it.
	skip "nvshim run" "a sanitized build (the sanitizers inside nvcc's stages)"
else
	for sig in "${SIGNALS[@]}"; do
		sig_run "$sig" "$CICC" -- "$NVSHIM" run -- "$NVCC" -c slow.cu "${GEN[@]}" -o %D/k.o
		verify "nvshim run" "$sig" "${PST[$sig]}" "${POBJ[$sig]}" "${PERR[$sig]}"
		check "nvshim run, SIG$sig: the pid signalled was the command's" test "$EXE" = "$REAL_NVCC"
	done
fi

# 6. A compile that probes. Plain nvcc fails on probe.cu (sm_75); signalled during that compile,
# nvshim ends as nvcc did and probes nothing; signalled during the probes, the probes stop, no
# verdict is recorded, nothing is retried, and the compile's own failure stands, as plain nvcc
# reported it before the signal.
(mkdir -p "$WORK/plainprobe" && cd "$WORK/plainprobe" && cp "$FIX"/*.cu . &&
	"$NVCC" -c probe.cu "${PGEN[@]}" -o k.o 2>err)
PROBE_ST=$?
check "probe.cu: plain nvcc fails on it" test "$PROBE_ST" -ne 0
for sig in TERM HUP; do
	sig_run "$sig" "$CICC" -- "$NVSHIM" -c probe.cu "${PGEN[@]}" -o %D/k.o
	verify "probe, during nvcc" "$sig" "${PST[$sig]}" "${POBJ[$sig]}" "${PERR[$sig]}"
	check "probe, during nvcc, SIG$sig: nothing probed, no verdict" test -z "$(find "$D/cache" -name '*.verdict')"
	OBJ_DIRS+=("$D")
done
for sig in "${SIGNALS[@]}"; do
	sig_run "$sig" '%D/tmp/nvshim-probe-' -- "$NVSHIM" -c probe.cu "${PGEN[@]}" -o %D/k.o
	verify "probe, during the probes" "$sig" "$PROBE_ST" no "$WORK/plainprobe/err"
	check "probe, during the probes, SIG$sig: no verdict recorded" test -z "$(find "$D/cache" -name '*.verdict')"
	OBJ_DIRS+=("$D")
done

# 7. SIGKILL of nvshim: it cannot pass anything on; its children get the parent-death signal.
for path in held cc probe; do
	case $path in
	held) sig_run KILL "$CICC" -- "$NVSHIM" -c slow.cu "${GEN[@]}" -o %D/k.o ;;
	cc) sig_run KILL "$CICC" -- "$CC_DIR/gcc" -c slow.cu -o %D/k.o "${GEN[@]}" ;;
	probe) sig_run KILL '%D/tmp/nvshim-probe-' -- "$NVSHIM" -c probe.cu "${PGEN[@]}" -o %D/k.o ;;
	esac
	check "SIGKILL, $path: signalled mid-compile" test -z "$EARLY" -a "$ST" = 137
	check "SIGKILL, $path: no compiler process survives nvshim" test "$LEFT" = 0
	check "SIGKILL, $path: no object" test ! -e "$D/k.o"
	OBJ_DIRS+=("$D")
done

# No object appeared later in any folder where none was written.
late=
for d in "${OBJ_DIRS[@]}"; do [ -e "$d/k.o" ] && late="$late $d"; done
check "no object appeared afterwards (${#OBJ_DIRS[@]} runs)" test -z "$late"
finish
