#!/bin/bash
# Signals and process lifetime. A five-target compile is signalled in the middle, at its own pid
# alone (as kill, a build tool's timeout, a CI cancel or Popen.terminate() do), once run by the
# real nvcc and once through nvshim, on each path nvshim has: a compile with stderr held (the
# default), a compile that probes (signalled during nvcc and during the probes), CC mode, the
# exec path and `nvshim run`. For each signal (TERM, INT, HUP, QUIT): the exit status and the
# stderr are plain nvcc's, the object exists only where plain nvcc wrote it, nvcc ended before
# nvshim did, every process of the run ends, and no temporary of nvshim's is left in TMPDIR or
# the cache. SIGKILL of nvshim: no process of the run survives it (the parent-death signal and
# the lifeline), not even a stage that goes on after nvcc's end; no object appears.
# The runs are started together (SIGNALS_JOBS at a time, 4 by default) and checked in order; a
# run's processes are those whose environment holds its mark (fixtures/signals/sigrun.py), and
# every wait is for an event, up to LIMIT seconds, never a fixed time.
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
# (The sanitizer pass: TERM and INT, one of each behaviour: nvshim's one handler takes all four,
# and serial nvcc ends on TERM and HUP, and finishes through INT and QUIT.)
# The signals that end nvcc, for a compile signalled during nvcc's run of a probing compile.
ENDING=(TERM HUP)
[ -n "$SANITIZED" ] && SIGNALS=(TERM INT) ENDING=(TERM)
N=0

LIMIT=${SIGNALS_LIMIT:-60}
PAR=${SIGNALS_JOBS:-4}
# start_run SIGNAL PATTERN -- CMD...: starts CMD in the background in a fresh folder $D (its own
# TMPDIR and cache; %D in PATTERN and CMD is $D), signalled when a process of its own matching
# PATTERN runs; the result goes to $D/result. Sources are named relative to $D, as in nvcc's
# messages; the object is %D/k.o.
start_run() {
	local sig=$1 pat=$2 a
	shift 3
	N=$((N + 1))
	D="$WORK/r$N"
	mkdir -p "$D/tmp" "$D/cache"
	cp "$FIX"/*.cu "$D/"
	pat=${pat//%D/$D}
	local cmd=()
	for a; do cmd+=("${a//%D/$D}"); done
	echo "${cmd[*]}" >"$D/cmd"
	while [ "$(jobs -rp | wc -l)" -ge "$PAR" ]; do wait -n; done
	(cd "$D" && TMPDIR="$D/tmp" XDG_CACHE_HOME="$D/cache" \
		python3 "$FIX/sigrun.py" "$sig" "$pat" "$LIMIT" "$D/err" -- "${cmd[@]}" >"$D/result") &
}
# load_run DIR: a finished run's results: D, ST, EXE, NVCC_LEFT, LEFT, ENDED, LEFT_LATER, EARLY
load_run() {
	D=$1
	local out
	out=$(cat "$D/result")
	ST=$(sed -n 's/^status //p' <<<"$out")
	EXE=$(sed -n 's/^exe //p' <<<"$out")
	NVCC_LEFT=$(sed -n 's/^nvcc //p' <<<"$out")
	LEFT=$(sed -n 's/^left //p' <<<"$out")
	ENDED=$(sed -n 's/^ended //p' <<<"$out")
	LEFT_LATER=$(sed -n 's/^left_later //p' <<<"$out")
	EARLY=$(sed -n 's/^early //p' <<<"$out")
	[ -z "$EARLY" ] || echo "# $(cat "$D/cmd") ended (status $EARLY) before its stage to signal ran"
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

	# nvshim waits for nvcc: when nvshim has ended, nvcc has. nvcc does not stop the stage it
	# runs (SIGHUP kills nvcc at once; after SIGTERM a stage that has read its input goes on, as
	# with plain nvcc): those end on their own, writing only into nvcc's temporary files.
	check "$what, SIG$sig: nvcc had ended when nvshim ended" test "$NVCC_LEFT" = 0
	[ "$LEFT" = 0 ] || echo "# $what, SIG$sig: $LEFT process(es) of the run when it ended, all gone ${ENDED}s later"
	check "$what, SIG$sig: every process of the run ended (within ${LIMIT}s)" test "$LEFT_LATER" = 0
	if [ "$pobj" = yes ]; then
		check "$what, SIG$sig: the object is written, as plain nvcc writes it" test -s "$D/k.o"
	else
		check "$what, SIG$sig: no object, as with plain nvcc" test ! -e "$D/k.o"
	fi
	check "$what, SIG$sig: no temporary of nvshim's in TMPDIR or the cache" test -z "$(nvshim_temps)"
}
OBJ_DIRS=() # folders where no object may appear later
LIB="$B/libexec/nvshim/libnvshim-preload.so"
RUN_PATH=yes
if [ ! -f "$LIB" ]; then
	RUN_PATH="no libnvshim-preload.so beside nvshim"
elif readelf -d "$LIB" | grep -q 'NEEDED.*libasan'; then
	# The sanitized library inside nvcc's stages: LeakSanitizer fails the first stage on the
	# toolkit's own memory, and with leak checks off a later stage crashes (with or without a
	# signal). nvshim run execs the command either way: the plain build's run covers it.
	RUN_PATH="a sanitized build (the sanitizers inside nvcc's stages)"
fi
# (threads off too: with the machine idle, threads.auto passes --threads and nvshim waits to
# give a failure back one pass at a time, which is not the exec path)
EXEC_ENV=(env NVSHIM_CRASH_BUNDLES=false NVSHIM_EXPLAIN_RESOURCES=false NVSHIM_EXPLAIN_API=false NVSHIM_COMPAT=off NVSHIM_MODULES=false NVSHIM_THREADS=off)

# A toolkit whose ptxas is a stage that goes on after nvcc has ended (as a cicc or ptxas that has
# read its input does, or the host compiler's assembler writing the object): it runs for two
# minutes, far past LIMIT, then writes a file. Only the lifeline can end it early.
TK="$WORK/lingering"
CUDA=$(dirname "$(dirname "$REAL_NVCC")")
mkdir -p "$TK/bin" "$TK/nvvm/bin"
ln -s "$CUDA/bin/nvcc" "$TK/bin/nvcc"
cp "$CUDA/bin/nvcc.profile" "$TK/bin/"
for f in "$CUDA"/bin/*; do [ -e "$TK/bin/${f##*/}" ] || ln -s "$f" "$TK/bin/${f##*/}"; done
for f in "$CUDA"/nvvm/bin/*; do ln -s "$f" "$TK/nvvm/bin/${f##*/}"; done
for f in libdevice lib64; do [ -e "$CUDA/nvvm/$f" ] && ln -s "$CUDA/nvvm/$f" "$TK/nvvm/$f"; done
ln -s "$CUDA/targets" "$TK/targets"
ln -s "$CUDA/lib64" "$TK/lib"
rm "$TK/bin/ptxas"
cat >"$TK/bin/ptxas" <<SH
#!/bin/sh
sleep 120
echo late >"\$PWD/late.\$\$"
exec "$CUDA/bin/ptxas" "\$@"
SH
chmod +x "$TK/bin/ptxas"

# Every run is started first (PAR at a time), then each is checked in order.
declare -A R
for sig in "${SIGNALS[@]}"; do
	start_run "$sig" "$CICC" -- "$NVCC" -c slow.cu "${GEN[@]}" -o %D/k.o
	R[plain.$sig]=$D
	start_run "$sig" "$CICC" -- "$NVSHIM" -c slow.cu "${GEN[@]}" -o %D/k.o
	R[held.$sig]=$D
	start_run "$sig" "$CICC" -- "${EXEC_ENV[@]}" "$NVSHIM" -c slow.cu "${GEN[@]}" -o %D/k.o
	R[exec.$sig]=$D
	start_run "$sig" "$CICC" -- "$CC_DIR/gcc" -c slow.cu -o %D/k.o "${GEN[@]}"
	R[cc.$sig]=$D
	if [ "$RUN_PATH" = yes ]; then
		start_run "$sig" "$CICC" -- "$NVSHIM" run -- "$NVCC" -c slow.cu "${GEN[@]}" -o %D/k.o
		R[run.$sig]=$D
	fi
	start_run "$sig" '%D/tmp/nvshim-probe-' -- "$NVSHIM" -c probe.cu "${PGEN[@]}" -o %D/k.o
	R[probes.$sig]=$D
done
start_run TERM "$CICC" -- env NVSHIM_LOG_FILE="$WORK/log.jsonl" "$NVSHIM" -c slow.cu "${GEN[@]}" -o %D/k.o
R[log]=$D
for sig in "${ENDING[@]}"; do
	start_run "$sig" "$CICC" -- "$NVSHIM" -c probe.cu "${PGEN[@]}" -o %D/k.o
	R[probenvcc.$sig]=$D
done
start_run KILL "$CICC" -- "$NVSHIM" -c slow.cu "${GEN[@]}" -o %D/k.o
R[kill.held]=$D
start_run KILL "$CICC" -- "$CC_DIR/gcc" -c slow.cu -o %D/k.o "${GEN[@]}"
R[kill.cc]=$D
start_run KILL '%D/tmp/nvshim-probe-' -- "$NVSHIM" -c probe.cu "${PGEN[@]}" -o %D/k.o
R[kill.probe]=$D
start_run KILL 'bin/ptxas .*%D/tmp/' -- env NVSHIM_NVCC="$TK/bin/nvcc" "$NVSHIM" -c slow.cu "${GEN[@]}" -o %D/k.o
R[kill.lingering]=$D
start_run KILL 'bin/ptxas .*%D/tmp/' -- env NVSHIM_NVCC="$TK/bin/nvcc" "$CC_DIR/gcc" -c slow.cu -o %D/k.o "${GEN[@]}"
R[kill.lingering_cc]=$D
(mkdir -p "$WORK/plainprobe" && cd "$WORK/plainprobe" && cp "$FIX"/*.cu . &&
	"$NVCC" -c probe.cu "${PGEN[@]}" -o k.o 2>err)
PROBE_ST=$?
wait

# 1. Plain nvcc under each signal: what nvshim must give.
declare -A PST POBJ PERR
for sig in "${SIGNALS[@]}"; do
	load_run "${R[plain.$sig]}"
	PST[$sig]=$ST PERR[$sig]="$D/err"
	POBJ[$sig]=$([ -s "$D/k.o" ] && echo yes || echo no)
	check "plain nvcc, SIG$sig: signalled mid-compile" test -z "$EARLY" -a -n "$ST"
	echo "# plain nvcc, SIG$sig: status $ST, object: ${POBJ[$sig]}, stderr: $(tr '\n' '|' <"$D/err")"
	check "plain nvcc, SIG$sig: every process of the run ended (within ${LIMIT}s)" test "$LEFT_LATER" = 0
done
check "plain nvcc, SIGTERM: 255 after its own clean-up, no object" test "${PST[TERM]}" = 255 -a "${POBJ[TERM]}" = no
check "plain nvcc, SIGTERM: says 'nvcc: Terminated'" grep -qx 'nvcc: Terminated' "${PERR[TERM]}"

# 2. nvshim, stderr held (a compile it watches for crashes: the default), each signal.
for sig in "${SIGNALS[@]}"; do
	load_run "${R[held.$sig]}"
	verify "held stderr" "$sig" "${PST[$sig]}" "${POBJ[$sig]}" "${PERR[$sig]}"
	check "held stderr, SIG$sig: nvshim waited (its own pid was signalled)" test "$EXE" = "$(readlink -f "$NVSHIM")"
	[ "${POBJ[$sig]}" = no ] && OBJ_DIRS+=("$D")
done
# With a log: the line records the signal.
load_run "${R[log]}"
verify "held stderr and a log" TERM "${PST[TERM]}" "${POBJ[TERM]}" "${PERR[TERM]}"
check "the log line has the status and the signal" \
	grep -q '"nvshim received signal 15 (Terminated) while nvcc ran: .*\[runner.signal\]".*"status":255' "$WORK/log.jsonl"

# 3. The exec path (nothing to do after nvcc): nvshim is nvcc, the signal reaches nvcc itself.
for sig in "${SIGNALS[@]}"; do
	load_run "${R[exec.$sig]}"
	verify "exec" "$sig" "${PST[$sig]}" "${POBJ[$sig]}" "${PERR[$sig]}"
	check "exec, SIG$sig: the pid signalled was nvcc's (nvshim had exec'd it)" test "$EXE" = "$REAL_NVCC"
done

# 4. CC mode: nvshim as gcc, a .cu file, each signal.
for sig in "${SIGNALS[@]}"; do
	load_run "${R[cc.$sig]}"
	verify "CC mode" "$sig" "${PST[$sig]}" "${POBJ[$sig]}" "${PERR[$sig]}"
	[ "${POBJ[$sig]}" = no ] && OBJ_DIRS+=("$D")
done

# 5. nvshim run -- nvcc: nvshim execs the command, which gets the signal itself.
if [ "$RUN_PATH" != yes ]; then
	skip "nvshim run" "$RUN_PATH"
else
	for sig in "${SIGNALS[@]}"; do
		load_run "${R[run.$sig]}"
		verify "nvshim run" "$sig" "${PST[$sig]}" "${POBJ[$sig]}" "${PERR[$sig]}"
		check "nvshim run, SIG$sig: the pid signalled was the command's" test "$EXE" = "$REAL_NVCC"
	done
fi

# 6. A compile that probes. Plain nvcc fails on probe.cu (sm_75); signalled during that compile,
# nvshim ends as nvcc did and probes nothing; signalled during the probes, the probes stop, no
# verdict is recorded, nothing is retried, and the compile's own failure stands, as plain nvcc
# reported it before the signal.
check "probe.cu: plain nvcc fails on it" test "$PROBE_ST" -ne 0
for sig in "${ENDING[@]}"; do
	load_run "${R[probenvcc.$sig]}"
	verify "probe, during nvcc" "$sig" "${PST[$sig]}" "${POBJ[$sig]}" "${PERR[$sig]}"
	check "probe, during nvcc, SIG$sig: nothing probed, no verdict" test -z "$(find "$D/cache" -name '*.verdict')"
	OBJ_DIRS+=("$D")
done
for sig in "${SIGNALS[@]}"; do
	load_run "${R[probes.$sig]}"
	verify "probe, during the probes" "$sig" "$PROBE_ST" no "$WORK/plainprobe/err"
	check "probe, during the probes, SIG$sig: no verdict recorded" test -z "$(find "$D/cache" -name '*.verdict')"
	OBJ_DIRS+=("$D")
done

# 7. SIGKILL of nvshim: it cannot pass anything on; nvcc gets the parent-death signal, and
# every process below it, nvcc's stages included, is ended by the lifeline's watcher.
for path in held cc probe lingering lingering_cc; do
	load_run "${R[kill.$path]}"
	check "SIGKILL, $path: signalled mid-compile" test -z "$EARLY" -a "$ST" = 137
	[ "$LEFT" = 0 ] || echo "# SIGKILL, $path: $LEFT process(es) of the run when nvshim was killed, all gone ${ENDED}s later"
	check "SIGKILL, $path: no process of the run survives nvshim (all ended within ${LIMIT}s)" test "$LEFT_LATER" = 0
	check "SIGKILL, $path: no object" test ! -e "$D/k.o"
	OBJ_DIRS+=("$D")
done
for path in lingering lingering_cc; do
	D=${R[kill.$path]}
	check "SIGKILL, $path: the stage that outlives nvcc was ended before the limit, not by the test" \
		awk -v e="$(sed -n 's/^ended //p' "$D/result")" -v l="$LIMIT" 'BEGIN { exit !(e != "" && e < l) }'
	check "SIGKILL, $path: it wrote nothing" test -z "$(find "$D" -name 'late.*')"
done

# No object appeared later in any folder where none was written.
late=
for d in "${OBJ_DIRS[@]}"; do [ -e "$d/k.o" ] && late="$late $d"; done
check "no object appeared afterwards (${#OBJ_DIRS[@]} runs)" test -z "$late"
finish
