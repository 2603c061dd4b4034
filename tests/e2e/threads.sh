#!/bin/bash
# nvcc's --threads, chosen by nvshim (rule threads.auto): K goes to the real nvcc in
# NVCC_APPEND_FLAGS (a recording stand-in for nvcc shows what it got), never for one target or
# when the line has --threads/-t, capped or turned off by the setting; the objects hold the same
# targets and the same code with and without it; ccache behind and in front of nvshim keys on
# the command line, so the K of one machine does not change a key; GNU make's jobserver gives
# tokens to a rule with '+' and gives K = 1 to one without; a fault in the accounting is K = 1.
# The gate (libnvshim-gate.so in front of nvcc): nvcc's stages wait while every slot is held,
# compiles started together run no more host-compiler stages at once than slots, the stages
# see the user's environment, and without the library (or its slots) nvshim falls back.
# NVSHIM_MACHINE fixes the CPUs and the compilers running (this machine is shared).
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"
B=${NVSHIM_BUILD_DIR:-$(dirname "$NVSHIM")}
NV=$B/libexec/nvshim/bin/nvcc
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$WORK" || exit 1
cp "$HERE/fixtures/kernel.cu" k.cu
unset CUDACXX NVCC_CCBIN MAKEFLAGS MFLAGS
THREE=(-gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90)
export NVSHIM_MACHINE=cpus=4,busy=0,mem_mb=64000

# The real nvcc behind a script that records NVCC_APPEND_FLAGS.
mkdir -p rec
cat >rec/nvcc <<EOF
#!/bin/sh
case " \$* " in *" -c "*) printf '%s\n' "\${NVCC_APPEND_FLAGS-unset}" >>"$WORK/appended";; esac
exec "$NVCC" "\$@"
EOF
chmod +x rec/nvcc
export NVSHIM_NVCC=$WORK/rec/nvcc
appended() { [ -f appended ] && tr '\n' ' ' <appended | sed 's/ $//'; rm -f appended; }

out=$(NVSHIM_LOG_FILE=$WORK/log "$NV" -c k.cu -o auto.o "${THREE[@]}" 2>&1)
check "three targets, four CPUs free: --threads 3 in NVCC_APPEND_FLAGS" test "$(appended)" = "--threads 3"
check "... said at verbosity verbose only" test -z "$out"
check "... and recorded in the log with its reason" \
	grep -q '"compiles with --threads 3 (in NVCC_APPEND_FLAGS), nvcc.s stages taking turns in 4 slots: 3 targets, 4 CPUs, 0 other compilers running, 0 slots held by nvshim.s stages, memory for 62 passes \[threads.auto\]"' log
check "... the arguments nvcc got are the user's" \
	grep -q "\"argv_out\":\[\"$WORK/rec/nvcc\",\"-c\",\"k.cu\",\"-o\",\"auto.o\",\"-gencode\",\"arch=compute_75,code=sm_75\"" log
out=$(NVSHIM_VERBOSITY=verbose "$NV" -c k.cu -o auto.o "${THREE[@]}" 2>&1)
check "verbose shows the decision" contains "$out" "^nvshim info    : compiles with --threads 3 (in NVCC_APPEND_FLAGS), nvcc's stages taking turns in 4 slots: 3 targets"
appended >/dev/null
NVCC_APPEND_FLAGS="-DX=1" "$NV" -c k.cu -o auto.o "${THREE[@]}"
check "a user's NVCC_APPEND_FLAGS is kept, --threads after it" test "$(appended)" = "-DX=1 --threads 3"
NVSHIM_MACHINE=cpus=2,busy=0 "$NV" -c k.cu -o auto.o "${THREE[@]}"
check "two CPUs: --threads 2" test "$(appended)" = "--threads 2"
NVSHIM_MACHINE=cpus=4,busy=3 "$NV" -c k.cu -o auto.o "${THREE[@]}"
check "four CPUs, three compilers running: one pass at a time, nothing added" test "$(appended)" = "unset"
NVSHIM_MACHINE=cpus=16,busy=0,mem_mb=2500 "$NV" -c k.cu -o auto.o "${THREE[@]}"
check "memory for two passes: --threads 2" test "$(appended)" = "--threads 2"
NVSHIM_THREADS=2 "$NV" -c k.cu -o auto.o "${THREE[@]}"
check "threads = 2 caps it" test "$(appended)" = "--threads 2"
NVSHIM_THREADS=off "$NV" -c k.cu -o off.o "${THREE[@]}"
check "threads = off: nothing added" test "$(appended)" = "unset"
"$NV" -c k.cu -o one.o -arch=sm_80
check "one target: nothing added" test "$(appended)" = "unset"
"$NV" -c k.cu -o user.o "${THREE[@]}" -t 1
check "the user's -t 1 is left as given" test "$(appended)" = "unset"
NVCC_APPEND_FLAGS="--threads 1" "$NV" -c k.cu -o user.o "${THREE[@]}"
check "... so is --threads in NVCC_APPEND_FLAGS" test "$(appended)" = "--threads 1"
"$NV" -E k.cu -arch=sm_80 >/dev/null
"$NV" --dryrun -c k.cu "${THREE[@]}" 2>/dev/null
check "-E and --dryrun: nothing added" test "$(appended)" = "unset"
out=$(NVSHIM_FAULT=threads NVSHIM_LOG_FILE=$WORK/log2 "$NV" -c k.cu -o fault.o "${THREE[@]}" 2>&1)
check "a failure of the accounting: one pass at a time, the build passes (fail open)" \
	test "$(appended)" = "unset" -a -s fault.o -a -z "$out"
check "... and the log says why" grep -q 'the accounting failed (injected fault' log2

out=$("$NVSHIM" explain -c k.cu -o auto.o "${THREE[@]}")
check "explain shows what it would choose" contains "$out" \
	'^threads   : --threads 3 in NVCC_APPEND_FLAGS' 'would compile with --threads 3'
out=$(NVSHIM_THREADS=off "$NVSHIM" explain -c k.cu -o auto.o "${THREE[@]}")
check "... and nothing with threads = off" bash -c '! grep -q threads <<<"$1"' _ "$out"
out=$(NVSHIM_THREADS=3 "$NVSHIM" config)
check "nvshim config shows the setting and its origin" contains "$out" '^threads *= 3 *# env NVSHIM_THREADS'

# The same targets and the same code, with and without --threads.
export CUOBJDUMP=${CUOBJDUMP:-$(find_cuobjdump)}
if [ -z "$CUOBJDUMP" ]; then
	skip "objects with and without threads" "no cuobjdump"
else
	check "the same targets with and without threads" test "$(elf_targets auto.o)" = "sm_75 sm_80 sm_90" -a \
		"$(elf_targets off.o)" = "sm_75 sm_80 sm_90"
	mkdir -p xa xo
	(cd xa && "$CUOBJDUMP" -xelf all ../auto.o >/dev/null) && (cd xo && "$CUOBJDUMP" -xelf all ../off.o >/dev/null)
	same=1
	# cuobjdump names them OBJECT.N.sm_NN.cubin
	for f in xo/off.*.cubin; do cmp -s "$f" "xa/auto.${f#xo/off.}" || same=0; done
	check "... and the same machine code (each cubin byte for byte)" test "$same" = 1 -a "$(ls xa | wc -l)" = 3
fi

# Caches: the key is the command line's, whatever K is.
if ! command -v ccache >/dev/null; then
	skip "ccache" "ccache is not installed"
else
	for v in $(env | sed -n 's/^\(CCACHE_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
	export CCACHE_DIR=$WORK/ccache CCACHE_CONFIGPATH=$WORK/ccache.conf
	: >"$CCACHE_CONFIGPATH"
	hits() { ccache --print-stats | awk -F'\t' '$1 ~ /cache_hit$/ { h += $2 } $1 == "cache_miss" { m += $2 } END { print "hit=" h+0, "miss=" m+0 }'; ccache -z >/dev/null; }
	ccache -z >/dev/null
	NVSHIM_LAUNCHER=ccache NVSHIM_THREADS=off "$NV" -c k.cu -o c1.o "${THREE[@]}"
	NVSHIM_LAUNCHER=ccache NVSHIM_MACHINE=cpus=2,busy=0 "$NV" -c k.cu -o c1.o "${THREE[@]}"
	NVSHIM_LAUNCHER=ccache NVSHIM_MACHINE=cpus=16,busy=0 "$NV" -c k.cu -o c1.o "${THREE[@]}"
	r=$(hits)
	check "ccache behind nvshim: K = 1, 2, 3 give one key, nvcc ran once ($r)" \
		test "$(appended)" = "unset" -a "$r" = "hit=2 miss=1"
	NVSHIM_THREADS=off ccache "$NV" -c k.cu -o c2.o "${THREE[@]}"
	NVSHIM_MACHINE=cpus=2,busy=0 ccache "$NV" -c k.cu -o c2.o "${THREE[@]}"
	r=$(hits)
	check "ccache in front of nvshim: one key for any K ($r)" test "$r" = "hit=1 miss=1"
	appended >/dev/null
fi

# GNU make's jobserver: a rule with '+' gets the fds, one without does not.
cat >Makefile <<EOF
all: plus.o plain.o
plus.o: k.cu
	+"$NV" -c k.cu -o plus.o ${THREE[*]}
plain.o: k.cu
	"$NV" -c k.cu -o plain.o ${THREE[*]}
EOF
if make --version 2>/dev/null | grep -q 'GNU Make'; then
	NVSHIM_LOG_FILE=$WORK/mlog make -j3 plus.o >make.out 2>&1
	check "make -j3, a rule with '+': two tokens taken, --threads 3" \
		grep -q 'compiles with --threads 3 (in NVCC_APPEND_FLAGS), .*; 2 tokens from make.s jobserver' mlog
	rm -f mlog
	NVSHIM_LOG_FILE=$WORK/mlog make -j3 plain.o >>make.out 2>&1
	check "make -j3, a rule without '+': the jobserver cannot be used, one pass at a time" \
		grep -q 'one pass at a time, .*: .*MAKEFLAGS names a jobserver this command cannot use' mlog
	rm -f mlog plus.o
	NVSHIM_LOG_FILE=$WORK/mlog make -j1 plus.o >>make.out 2>&1
	check "make -j1 (no jobserver): the machine decides" grep -q 'compiles with --threads 3' mlog
	rm -f mlog plus.o
	# Every token make gave is back: a second parallel make in the same jobserver finishes.
	printf 'top:\n\t+$(MAKE) -f Makefile plus.o plain.o\n' >Top.mk
	timeout 120 make -j2 -f Top.mk >>make.out 2>&1
	check "tokens are given back (a recursive make -j2 finishes, no warning)" \
		test $? -eq 0 -a -s plus.o -a -s plain.o
	check "... and make says nothing about the jobserver" bash -c '! grep -qi "jobserver\|token" make.out'
else
	skip "make's jobserver" "GNU make is not installed"
fi
appended >/dev/null

# The gate. nvcc's stages see the environment the user gave: a host compiler that records it.
cat >envcc <<EOF
#!/bin/sh
echo "LD_PRELOAD=\${LD_PRELOAD-unset} NVSHIM_GATE=\${NVSHIM_GATE-unset} NVSHIM_GATE_LD_PRELOAD=\${NVSHIM_GATE_LD_PRELOAD-unset}" >>"$WORK/envs"
exec g++ "\$@"
EOF
chmod +x envcc
"$NV" -c k.cu -o env.o "${THREE[@]}" -ccbin "$WORK/envcc"
check "the gate: nvcc's stages see no LD_PRELOAD and no NVSHIM_GATE where the user had none" \
	test "$(sort -u envs)" = "LD_PRELOAD=unset NVSHIM_GATE=unset NVSHIM_GATE_LD_PRELOAD=unset"
rm -f envs
# (a sanitized nvshim, itself dynamic, would refuse a library loaded before its runtime)
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
	LD_PRELOAD=libm.so.6 "$NV" -c k.cu -o env.o "${THREE[@]}" -ccbin "$WORK/envcc"
check "... and the user's LD_PRELOAD as it was" \
	test "$(sort -u envs)" = "LD_PRELOAD=libm.so.6 NVSHIM_GATE=unset NVSHIM_GATE_LD_PRELOAD=unset"
appended >/dev/null

# Every slot held by another process: the compile's stages wait for one.
SLOTS=$XDG_CACHE_HOME/nvshim/threads
if command -v flock >/dev/null; then
	rm -f held.o
	# The slots stay held until released, however slow the machine: no clock decides.
	mkdir -p "$SLOTS"
	hold_lock "$SLOTS/slot.0" && hold_lock "$SLOTS/slot.1" || not_ok "two slots held elsewhere" "flock did not take them"
	NVSHIM_MACHINE=cpus=2,busy=0 NVSHIM_LOG_FILE=$WORK/glog "$NV" -c k.cu -o held.o "${THREE[@]}" &
	c=$!
	sleep 2.5
	check "both slots held elsewhere: after 2.5 s the compile has written nothing" test ! -e held.o
	stages=$(ps -e -o ppid=,comm= | awk -v p="$(pgrep -d' ' -P "$c")" 'BEGIN { n = split(p, a, " "); for (i = 1; i <= n; i++) k[a[i]] = 1 } ($1 in k) { print $2 }')
	check "... and runs no stage below it (${stages:-none})" test -z "$stages"
	release_locks
	wait $c
	check "... once they are given back it finishes" test $? -eq 0 -a -s held.o
	check "... the log says the stages took turns in 2 slots, 2 held" \
		grep -q "taking turns in 2 slots: 3 targets, 2 CPUs, 0 other compilers running, 2 slots held by nvshim's stages" glog
else
	skip "the gate waits for a slot" "flock(1) is not installed"
fi
appended >/dev/null

# A relative cache directory (NVSHIM_CACHE_DIR=relcache): the gate's slots are found from where
# nvcc's stages run all the same, so held slots still hold the stages back.
if command -v flock >/dev/null; then
	mkdir -p relcache/threads
	rm -f rel.o
	hold_lock relcache/threads/slot.0 && hold_lock relcache/threads/slot.1 || not_ok "two slots held elsewhere" "flock did not take them"
	NVSHIM_CACHE_DIR=relcache NVSHIM_MACHINE=cpus=2,busy=0 "$NV" -c k.cu -o rel.o "${THREE[@]}" &
	c=$!
	sleep 2
	check "a relative cache directory: its slots held, the stages wait" test ! -e rel.o
	release_locks
	wait $c
	check "... and run once they are given back" test $? -eq 0 -a -s rel.o
fi
appended >/dev/null

# Three compiles at once with two slots: never more than two host-compiler stages at once. The
# host compiler counts the stages running beside it, and waits for a third one to come (up to
# 2 s: they overlap however slow the machine, where plain nvcc runs three at once).
cat >countcc <<EOF
#!/bin/bash
# nvcc's stages (system()), not its own first look at the host compiler (fork and exec)
case " \$* " in *" -D__CUDA"*) ;; *) exec g++ "\$@";; esac
exec 9>>"$WORK/count.lock"
flock 9; n=\$((\$(cat "$WORK/count.now" 2>/dev/null || echo 0) + 1)); echo \$n >"$WORK/count.now"
[ \$n -gt \$(cat "$WORK/count.max" 2>/dev/null || echo 0) ] && echo \$n >"$WORK/count.max"; flock -u 9
for i in \$(seq 40); do [ "\$(cat "$WORK/count.now")" -ge 3 ] 2>/dev/null && break; sleep 0.05; done
flock 9; echo \$((\$(cat "$WORK/count.now") - 1)) >"$WORK/count.now"; flock -u 9
exec 9>&-
exec g++ "\$@"
EOF
chmod +x countcc
concurrent() { # concurrent NVCC: three 3-target compiles at once; prints the peak
	rm -f count.now count.max
	local p=() i
	for i in 1 2 3; do "$1" -c k.cu -o "c$i.o" "${THREE[@]}" -ccbin "$WORK/countcc" & p+=($!); done
	wait "${p[@]}"
	cat count.max
}
if command -v flock >/dev/null; then
	peak=$(NVSHIM_MACHINE=cpus=2,busy=0 concurrent "$NV")
	plain=$(concurrent "$NVCC")
	echo "# three compiles at once: peak host-compiler stages through nvshim (2 slots) $peak, plain nvcc $plain"
	check "three compiles, two slots: at most two stages at once ($peak; plain nvcc: $plain)" \
		test "$peak" -le 2 -a "$plain" -ge 3
	check "... and all three objects are there" test -s c1.o -a -s c2.o -a -s c3.o
else
	skip "two slots, three compiles" "flock(1) is not installed"
fi
appended >/dev/null

# Fail open: slots that cannot be used (a file where their directory should be), or no gate
# library beside nvshim.
mkdir -p nocache/nvshim
: >nocache/nvshim/threads
out=$(XDG_CACHE_HOME=$WORK/nocache NVSHIM_LOG_FILE=$WORK/nolog "$NV" -c k.cu -o noslots.o "${THREE[@]}" 2>&1)
check "no usable slots: one pass at a time, and the build passes" \
	test -s noslots.o -a -z "$out" -a "$(appended)" = "unset"
check "... the log says why" grep -q "one pass at a time: .*the slots in $WORK/nocache/nvshim/threads cannot be used" nolog
mkdir -p lone/bin
cp "$NVSHIM" lone/bin/nvshim
NVSHIM_LOG_FILE=$WORK/lonelog lone/bin/nvshim -c k.cu -o lone.o "${THREE[@]}"
check "no gate library: nvshim holds the slots itself, K from the CPUs free now" \
	grep -q '"compiles with --threads 3 (in NVCC_APPEND_FLAGS): 3 targets, 4 of 4 CPUs free' lonelog
appended >/dev/null

# Under an nvshim further up that set a gate (its NVSHIM_GATE and LD_PRELOAD reach this nvshim,
# named nvshim, so the library is inert in it): that gate counts for this compile's nvcc, and
# this nvshim holds no slot its stages would wait for. One CPU, so one slot: a slot held for the
# whole of nvcc would leave its stages waiting forever.
GATELIB=$B/libexec/nvshim/libnvshim-gate.so
if [ -f "$GATELIB" ] && command -v timeout >/dev/null; then
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 NVSHIM_MACHINE=cpus=1,busy=0 \
		NVSHIM_GATE="1:$SLOTS" LD_PRELOAD=$GATELIB NVSHIM_LOG_FILE=$WORK/uplog \
		timeout 120 "$NVSHIM" -c k.cu -o up.o "${THREE[@]}"
	st=$?
	check "a gate set further up: the compile ends (status $st) and writes its object" test $st -eq 0 -a -s up.o
	check "... the log says whose slots the stages take turns in" \
		grep -q "one pass at a time, nvcc's stages taking turns in the slots of an nvshim further up: 3 targets, 1 CPU" uplog
else
	skip "a gate set further up" "no $GATELIB or no timeout(1)"
fi
appended >/dev/null

# A failing compile: nvcc with --threads exits 255 for every failure, serial nvcc 1 or 2. nvshim
# runs it again one pass at a time, so the caller sees serial nvcc's stderr and status.
printf '__global__ void k(float *y) { y[0] = not_declared; }\n' >bad.cu
"$NVCC" -c bad.cu -o bad.o "${THREE[@]}" >plain.out 2>plain.err
plain=$?
"$NVCC" -c bad.cu -o bad.o "${THREE[@]}" --threads 3 >/dev/null 2>&1
threaded=$?
NVSHIM_LOG_FILE=$WORK/badlog "$NV" -c bad.cu -o bad.o "${THREE[@]}" >shim.out 2>shim.err
st=$?
echo "# failing compile: serial nvcc $plain, nvcc --threads 3 $threaded, nvshim $st"
check "a failing compile: nvshim's status is serial nvcc's ($plain), not --threads' ($threaded)" test $st -eq $plain -a $plain -ne $threaded
check "... its stderr and stdout byte for byte serial nvcc's" sh -c "cmp -s plain.err shim.err && cmp -s plain.out shim.out"
check "... the second run is in the log" grep -q 'running it again one pass at a time.*\[threads.serial\]' badlog
check "... and got no --threads" test "$(appended)" = "--threads 3 unset"
finish
