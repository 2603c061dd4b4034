#!/bin/bash
# Hardening: nvshim fails open when any internal step fails, survives hostile and broken input
# with one clear message, and keeps its caches sound under 64 concurrent builds.
NVSHIM=$1 NVCC=$2
SOURCE_DIR=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/lib.sh"
cd "$WORK" || exit 1
printf '__global__ void k(float *x) { x[threadIdx.x] *= 2.0f; }\n' >k.cu
same_object() { cmp -s <(normalise "$1") <(normalise "$2"); }
# Only nvshim's own lines: "nvshim warning : ..." and so on.
shim_lines() { grep -c '^nvshim ' "$1"; }

failopen_and_input() {
# --- Fail open: each internal step fails in turn (NVSHIM_FAULT); the build gives plain nvcc's
# result and one warning, and under strict = true that warning is an error.
"$NVCC" -c k.cu -o plain.o -arch=sm_80 2>/dev/null
mkdir -p proj && printf 'verbosity = normal\n' >proj/.nvshim.ini && cp k.cu proj/
for step in config toolkit devices logfile cache scan; do
	rm -f "f-$step.o"
	# Each line makes the step run: a project file (config), a target list (toolkit, and the
	# GPUs for targets.ensure_devices), a log file, a cache directory.
	(cd proj && NVSHIM_FAULT=$step NVSHIM_LOG_FILE="$WORK/f.jsonl" "$NVSHIM" -c k.cu -o "../f-$step.o" \
		-arch=sm_80) 2>"$WORK/err"
	st=$?
	check "fault in $step: the build succeeds" test $st -eq 0
	check "fault in $step: plain nvcc's object" same_object plain.o "f-$step.o"
	check "fault in $step: exactly one warning, naming the fault" \
		test "$(shim_lines "$WORK/err")" -eq 1 -a "$(grep -c '^nvshim warning : .*injected fault' "$WORK/err")" -eq 1
	(cd proj && NVSHIM_STRICT=1 NVSHIM_FAULT=$step NVSHIM_LOG_FILE="$WORK/f.jsonl" "$NVSHIM" -c k.cu \
		-o "../s-$step.o" -arch=sm_80) 2>"$WORK/err"
	st=$?
	check "fault in $step, strict: the command fails with the warning as an error" \
		test $st -eq 1 -a "$(grep -c '^nvshim error   : .*injected fault' "$WORK/err")" -eq 1
done

# The link pass: a link nvcc passes, with the pass's work (symbol tables) failing.
cp "$SOURCE_DIR/tests/e2e/fixtures/kernel.cu" app.cu && "$NVCC" -c app.cu -o app.o 2>/dev/null
"$NVCC" app.o -o app-plain 2>/dev/null
for extra in "" "NVSHIM_STRICT=1"; do
	rm -f app-shim
	env $extra NVSHIM_FAULT=link "$NVSHIM" app.o -o app-shim 2>"$WORK/err"
	st=$?
	if [ -z "$extra" ]; then
		check "fault in link: the link succeeds, the same program" test $st -eq 0 -a "$(./app-shim)" = "$(./app-plain)"
		check "fault in link: exactly one warning, naming the fault" \
			test "$(shim_lines "$WORK/err")" -eq 1 -a "$(grep -c '^nvshim warning : .*injected fault' "$WORK/err")" -eq 1
	else
		check "fault in link, strict: the command fails with the warning as an error" \
			test $st -eq 1 -a "$(grep -c '^nvshim error   : .*injected fault' "$WORK/err")" -eq 1
	fi
done

# The modules pass's probe: a source whose sm_75 fails a static_assert the scan cannot see. With
# the probe failing, the result is plain nvcc's (the same failure), with one warning more.
printf '%s\n' 'template <int A> struct need { static_assert(A >= 800, "this kernel needs sm_80 or newer"); };' \
	'__global__ void k(float *d) {' '#ifdef __CUDA_ARCH__' '  need<__CUDA_ARCH__> n; (void)n;' '#endif' \
	'  d[0] = 1;' '}' >sa.cu
SA=(-c sa.cu -o sa.o -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80)
"$NVCC" "${SA[@]}" >/dev/null 2>sa-plain.err
pst=$?
NVSHIM_FAULT=probe "$NVSHIM" "${SA[@]}" >/dev/null 2>sa-shim.err
st=$?
check "fault in probe: plain nvcc's status" test $st -eq $pst -a $pst -ne 0
check "fault in probe: plain nvcc's stderr" cmp -s <(grep -v '^nvshim ' sa-shim.err) sa-plain.err
check "fault in probe: one warning, naming the fault" \
	test "$(grep -c '^nvshim ' sa-shim.err)" -eq 1 -a "$(grep -c '^nvshim warning : .*injected fault' sa-shim.err)" -eq 1
NVSHIM_STRICT=1 NVSHIM_FAULT=probe "$NVSHIM" "${SA[@]}" >/dev/null 2>sa-strict.err
st=$?
check "fault in probe, strict: the command fails with the warning as an error" \
	test $st -eq 1 -a "$(grep -c '^nvshim error   : .*injected fault' sa-strict.err)" -eq 1
"$NVSHIM" "${SA[@]}" 2>"$WORK/err"
check "without the fault the probe drops sm_75 and the build succeeds" test $? -eq 0 -a -s sa.o

# --- Hostile and broken input.
# A configuration file that is not text: one warning, the build goes on.
mkdir -p bin1 && head -c 4096 /dev/urandom >bin1/.nvshim.ini && printf '\0' >>bin1/.nvshim.ini
(cd bin1 && "$NVSHIM" -c ../k.cu -o ../garbage.o -arch=sm_80) 2>"$WORK/err"
check "garbage config: the build succeeds" test $? -eq 0 -a -s garbage.o
check "garbage config: one warning, no raw bytes" grep -qx "nvshim warning : $WORK/bin1/.nvshim.ini: not a text file (byte 0x[0-9a-f]* at offset [0-9]*); ignored" "$WORK/err"
check "garbage config: nothing else" test "$(wc -l <"$WORK/err")" -eq 1
# A line longer than inih reads: that line is named and ignored, the next one still counts.
mkdir -p long && { printf 'fallback_archs = '; printf '80,%.0s' $(seq 300); printf '80\nverbosity = verbose\n'; } >long/.nvshim.ini
out=$(cd long && "$NVSHIM" config 2>&1)
check "config line too long: named with file and line" grep -q "^nvshim warning : $WORK/long/.nvshim.ini:1: line longer than [0-9]* characters; ignored" <<<"$out"
check "config line too long: the next line is read" grep -q "^verbosity *= verbose *# $WORK/long/.nvshim.ini:2" <<<"$out"
# A response file that names itself (twice): nvcc does not read @files; nvshim analyses it,
# stops, and nvcc's own answer reaches the user.
printf -- '-DX @%s/self.rsp @%s/self.rsp\n' "$WORK" "$WORK" >self.rsp
"$NVCC" -c k.cu @self.rsp >plain.out 2>plain.err
pst=$?
timeout 20 "$NVSHIM" -c k.cu @self.rsp >shim.out 2>shim.err
check "response file naming itself: nvcc's status" test $? -eq $pst
check "response file naming itself: nvcc's output" cmp -s plain.err shim.err
# A response file that is a directory (libiberty's expandargv exits on it).
"$NVSHIM" -c k.cu "@$WORK" 2>shim.err
check "response file that is a directory: nvcc's answer" grep -q "Don't know what to do with '@$WORK'" shim.err
# 100,000 arguments, and arguments with spaces, quotes and newlines, reach nvcc exactly: on the
# exec path, when nvshim waits (log file), and when the targets pass rewrites the line (an
# options file for the long one; the quoted one stays on the command line). A recording nvcc
# answers the fact queries with the real one's answers.
cat >rec-nvcc <<EOF
#!/bin/bash
case "\$1" in --version|--help|--list-gpu-code|--list-gpu-arch) exec "$NVCC" "\$@";; esac
for a; do
	if [ "\$a" = --options-file ]; then f=1; continue; fi
	if [ -n "\${f:-}" ]; then f=; python3 -c 'import shlex,sys; [print("[%s]" % a) for a in shlex.split(open(sys.argv[1]).read())]' "\$a"; continue; fi
	printf '[%s]\n' "\$a"
done >"$WORK/rec.out"
# the objects nvcc writes for -c (nvshim's guard looks for them after a rewrite; k.cu's line may
# come in nvshim's options file)
: >k.o
for a; do case "\$a" in *.cu) : >"\${a%.cu}.o" ;; esac; done
EOF
chmod +x rec-nvcc
# Short ones: with their pointers, 100,000 arguments must fit the kernel's 2 MiB for an exec.
python3 -c '
import sys
def b36(i):
    d = "0123456789abcdefghijklmnopqrstuvwxyz"; s = ""
    while True:
        s = d[i % 36] + s; i //= 36
        if not i: return s
sys.stdout.write("\n".join("-D" + b36(i) for i in range(100000)))' >many.txt
mapfile -t MANY <many.txt
QUOTED=('-DA="with space and \"quotes\""' $'-DB="line\\none"' $'new\nline.cu' "it's")
for set in MANY QUOTED; do
	declare -n ARGS=$set
	for how in exec wait rewritten; do
		extra=() env=(NVSHIM_NVCC="$WORK/rec-nvcc")
		[ $how = wait ] && env+=(NVSHIM_LOG_FILE="$WORK/rec.jsonl")
		[ $how = rewritten ] && extra=(-gencode arch=compute_70,code=sm_70)
		want=$(printf '[%s]\n' -c k.cu "${ARGS[@]}" -arch=sm_80)
		[ $how = rewritten ] && want=$(printf '[%s]\n' -c k.cu -gencode=arch=compute_80,code=[sm_80,compute_80] "${ARGS[@]}")
		rm -f rec.out
		env "${env[@]}" "$NVSHIM" -c k.cu "${extra[@]}" "${ARGS[@]}" -arch=sm_80 2>"$WORK/err"
		check "$set arguments ($how): reach nvcc exactly" test "$(cat rec.out 2>/dev/null)" = "$want"
	done
	unset -n ARGS
done
# With the real nvcc (which itself mangles quotes on their way to its stages): nvshim's result
# is nvcc's, rewritten or not.
"$NVCC" -c k.cu -o qp.o "${QUOTED[@]:0:2}" -arch=sm_80 >qp.out 2>&1
pst=$?
"$NVSHIM" -c k.cu -o qs.o "${QUOTED[@]:0:2}" -gencode arch=compute_70,code=sm_70 -arch=sm_80 >qs.out 2>&1
check "quoted arguments, real nvcc: the same status" test $? -eq $pst
check "quoted arguments, real nvcc: the same object" same_object qp.o qs.o
# A missing or non-executable real nvcc: one error line, status 1, nothing run.
printf '#!/bin/sh\necho ran\n' >noexec && chmod 644 noexec
out=$(NVSHIM_NVCC="$WORK/noexec" "$NVSHIM" -c k.cu 2>&1)
st=$?
check "non-executable nvcc: status 1 and one line" test $st -eq 1 -a "$(wc -l <<<"$out")" -eq 1
check "non-executable nvcc: says so" grep -q "^nvshim error   : real_nvcc '$WORK/noexec' (env NVSHIM_NVCC) is not an executable file" <<<"$out"
out=$(NVSHIM_NVCC="$WORK/none" "$NVSHIM" -c k.cu 2>&1)
check "missing nvcc: status 1 and one line" test $? -eq 1 -a "$(wc -l <<<"$out")" -eq 1
check "missing nvcc: says so" grep -q "^nvshim error   : real_nvcc '$WORK/none' (env NVSHIM_NVCC) is not an executable file$" <<<"$out"
# A cache directory owned by someone else, or that others can write: refused, build goes on.
mkdir -p other ww && chown nobody other 2>/dev/null && chmod 700 other && chmod 777 ww
for d in other ww; do
	[ "$d" = other ] && [ "$(stat -c %U other)" != nobody ] && { skip "cache_dir of another user" "cannot chown"; continue; }
	NVSHIM_CACHE_DIR="$WORK/$d" "$NVSHIM" -c k.cu -o "c-$d.o" -arch=sm_80 2>"$WORK/err"
	check "cache_dir $d: the build succeeds" test $? -eq 0 -a -s "c-$d.o"
	check "cache_dir $d: refused with one warning" grep -qx "nvshim warning : cache_dir $WORK/$d \(is owned by another user\|can be written by other users\): running without a cache" "$WORK/err"
	check "cache_dir $d: nothing written there" test -z "$(ls -A "$WORK/$d")"
done
# A symbolic link of another user's, even to a private directory of ours: refused.
mkdir -p mine && chmod 700 mine && ln -sfn mine lnk && chown -h nobody lnk 2>/dev/null
if [ "$(stat -c %U lnk)" = nobody ]; then
	NVSHIM_CACHE_DIR="$WORK/lnk" "$NVSHIM" -c k.cu -o c-lnk.o -arch=sm_80 2>"$WORK/err"
	check "cache_dir a link of another user's: the build succeeds" test $? -eq 0 -a -s c-lnk.o
	check "cache_dir a link of another user's: refused with one warning" grep -qx "nvshim warning : cache_dir $WORK/lnk is a symbolic link owned by another user: running without a cache" "$WORK/err"
	check "cache_dir a link of another user's: nothing written through it" test -z "$(ls -A mine)"
else
	skip "cache_dir a link of another user's" "cannot chown"
fi
# A missing cache directory is made at once, private, before anything is cached in it.
NVSHIM_CACHE_DIR="$WORK/fresh/cache" "$NVSHIM" nvcc --version >/dev/null 2>"$WORK/err"
check "cache_dir missing: made, mode 700 and ours, nothing said" \
	test "$(stat -c '%a %u' fresh/cache 2>/dev/null)" = "700 $(id -u)" -a ! -s "$WORK/err"
# A read-only and a full cache directory (tmpfs mounts in a private mount namespace).
if unshare -m true 2>/dev/null; then
	mkdir -p ro full
	unshare -m bash -c '
		mount -t tmpfs -o ro,mode=700 tmpfs ro && mount -t tmpfs -o size=4k,mode=700 tmpfs full || exit 3
		head -c 4096 /dev/zero >full/filler 2>/dev/null
		for d in ro full; do
			NVSHIM_CACHE_DIR=$PWD/$d "$0" -c k.cu -o c-$d.o -gencode arch=compute_70,code=sm_70 -arch=sm_80 2>err-$d
			echo $? >st-$d
		done' "$NVSHIM"
	if [ $? -eq 3 ]; then
		skip "read-only and full cache_dir" "tmpfs cannot be mounted here"
	else
		for d in ro full; do
			check "cache_dir $d: the build succeeds" test "$(cat st-$d)" -eq 0 -a -s c-$d.o
			check "cache_dir $d: the rewrite still happens" grep -q 'targets.unsupported' err-$d
			check "cache_dir $d: one warning about the cache" test "$(grep -c '^nvshim warning : cannot write the toolkit cache' err-$d)" -eq 1
		done
	fi
else
	skip "read-only and full cache_dir" "no mount namespaces here"
fi
# Temporary files: only mkstemp/mkdtemp in private directories, never a guessable name.
check "no tmpnam, tempnam or mktemp in the sources" \
	sh -c "! grep -nE '\\b(tmpnam|tempnam|mktemp)\\s*\\(' '$SOURCE_DIR'/src/*/*.c"

}

concurrency() {
# --- Concurrency: 64 builds at once share one cold cache directory; the objects equal a serial
# build's, and every cache file is whole. (16 in the sanitizer pass: the same paths, a quarter of
# nvcc's work.)
N=64
[ -n "$SANITIZED" ] && N=16
mkdir -p par && for i in $(seq $N); do printf '__global__ void k%d(float *x) { x[threadIdx.x] *= %d.0f; }\n' $i $i >par/s$i.cu; done
LIST="-gencode arch=compute_70,code=sm_70 -gencode arch=compute_80,code=sm_80 -arch=sm_90a"
cat >par/Makefile <<EOF
OBJS := \$(patsubst %.cu,%.o,\$(wildcard s*.cu))
all: \$(OBJS)
%.o: %.cu
	\$(NVCC) -c \$< -o \$@ $LIST
EOF
export NVSHIM_CACHE_DIR=$WORK/sharedcache
make -s -C par -j$N NVCC="$NVSHIM" 2>"$WORK/par.err"
check "$N parallel builds: all succeed" test $? -eq 0 -a "$(ls par/*.o | wc -l)" -eq $N
# The serial build of every fourth source (each source is its own kernel, compiled by the same
# paths): two lanes, each one compile after another on a cache of its own.
mkdir -p serial
for lane in 4 8; do
	for i in $(seq "$lane" 8 $N); do
		NVSHIM_CACHE_DIR=$WORK/serialcache$lane "$NVSHIM" -c par/s$i.cu -o serial/s$i.o $LIST 2>/dev/null
	done &
done
wait
bad=0; for i in $(seq 4 4 $N); do same_object par/s$i.o serial/s$i.o || bad=$((bad + 1)); done
check "$N parallel builds: the same objects as a serial build (every fourth source)" test $bad -eq 0 -a "$(ls serial/*.o | wc -l)" -eq $((N / 4))
# Files written whole end with "end"; the stats journal (appended lines), the locks (empty), the
# once-per-build note markers and the threads slots are no such files.
files=$(find "$WORK/sharedcache" -type f ! -name '*.lock' ! -path '*/notes/*' ! -path '*/threads/*' ! -path '*/stats/journal' ! -path '*/stats/lock')
whole=1; for f in $files; do [ "$(tail -n 1 "$f")" = end ] || whole=0; done
# A cache write's temporary is the file's name plus mkstemp's ".XXXXXX" (src/cache.c); no final
# name ends so (.facts, .verdict, -<hash>, devices).
leftovers() { find "$1" -type f -regextype posix-extended -regex '.*\.[A-Za-z0-9]{6}'; }
check "$N parallel builds: every cache file is whole, no temporaries left" test -n "$files" -a $whole -eq 1 -a -z "$(leftovers "$WORK/sharedcache")"
mkdir -p planted && cp "$(find "$WORK/sharedcache/toolkit" -type f | head -n 1)" planted/ && touch planted/devices.Ab12Zq
check "... (the temporaries check finds a planted one, and only it)" test "$(leftovers planted)" = planted/devices.Ab12Zq
# A corrupt, then a truncated, toolkit cache file is detected and rebuilt.
facts=$(find "$WORK/sharedcache/toolkit" -type f | head -n 1)
good=$(cat "$facts")
for damage in corrupt truncated; do
	if [ $damage = corrupt ]; then head -c 300 /dev/urandom >"$facts"; else head -c 60 <<<"$good" >"$facts"; fi
	"$NVSHIM" -c k.cu -o d-$damage.o $LIST 2>"$WORK/err.conc"
	check "$damage toolkit cache: the build succeeds with the rewrite" test $? -eq 0 -a -s d-$damage.o && grep -q 'targets.unsupported' "$WORK/err.conc"
	check "$damage toolkit cache: rebuilt whole" test "$(cat "$facts")" = "$good"
done
unset NVSHIM_CACHE_DIR
}

# The two parts share nothing (files, caches, stderr files): they run at once.
run_groups failopen_and_input concurrency
finish
