# Shared helpers for the end-to-end suites. Source it; it expects NVSHIM and NVCC set.
set -u
export LC_ALL=C
# SANITIZED: set when the nvshim under test is the ASan+UBSan build (run-all.sh --full runs
# every suite on the release build first, then again on that one). That pass is there for
# nvshim's own code; a step that runs no nvshim process (plain nvcc's side of a comparison, a
# fixture's own build) gives the same answer as in the release pass, so a suite may leave such
# steps out and repeat a path fewer times there, never leave out a path of nvshim's.
SANITIZED=
grep -q '^NVSHIM_SANITIZE:BOOL=ON' "${NVSHIM_BUILD_DIR:-.}/CMakeCache.txt" 2>/dev/null && SANITIZED=1
# An nvcc that nvshim runs has libnvshim-gate.so (never sanitized) in LD_PRELOAD; where it starts
# nvshim again (a wrapper loop, nvshim as the host compiler) ASan would refuse to run after it.
[ -n "$SANITIZED" ] && export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
# Each suite runs with nvshim's own environment cleared and a private HOME.
for v in $(env | sed -n 's/^\(NVSHIM_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
unset NVCC_PREPEND_FLAGS NVCC_APPEND_FLAGS
# The nvcc under test is the first on PATH, so that nvshim, which looks there, finds that one
# (not a script on PATH that starts some toolkit's nvcc).
[ -n "${NVCC:-}" ] && [ -x "$NVCC" ] && PATH="$(dirname "$NVCC"):$PATH"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/nvshim-e2e-XXXXXX")
[ -n "${KEEP_WORK:-}" ] || trap 'rm -rf "$WORK"' EXIT
export HOME="$WORK/home" XDG_CONFIG_HOME="$WORK/home/.config" XDG_CACHE_HOME="$WORK/home/.cache"
mkdir -p "$HOME"
PASSED=0
FAILED=0
SKIPPED=0
ok() { PASSED=$((PASSED + 1)); echo "ok - $1"; }
not_ok() { FAILED=$((FAILED + 1)); echo "not ok - $1"; shift; for l in "$@"; do echo "#   $l"; done; }
skip() { SKIPPED=$((SKIPPED + 1)); echo "ok - $1 # SKIP $2"; }
check() { # check NAME COMMAND... : passes when the command succeeds
	local name=$1; shift
	if "$@"; then ok "$name"; else not_ok "$name" "failed: $*"; fi
}
finish() {
	echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
	# The processor time of the suite and of every process it waited for (docs/tests.md's
	# table of time per suite: wall clock depends on what runs beside, this much less).
	# (`times` in this shell: in a pipe or $(...) it would be a subshell's.)
	local t=${TMPDIR:-/tmp}/nvshim-times.$$
	times >"$t"
	awk 'function s(t) { split(t, a, "m"); return a[1] * 60 + a[2] }
		{ c += s($1) + s($2) } END { printf "# cpu: %.0f s\n", c }' "$t"
	rm -f "$t"
	[ "$FAILED" -eq 0 ]
}
# The random parts of nvcc's temporary file names, which differ between any two runs.
normalise() { perl -0777 -pe 's/tmpxft_[0-9a-f]{8}_[0-9a-f]{8}/tmpxft_XXXXXXXX_XXXXXXXX/g' "$@"; }
# contains TEXT PATTERN...: every (grep) pattern matches some line of TEXT
contains() {
	local text=$1 p
	shift
	for p; do grep -q -- "$p" <<<"$text" || return 1; done
}
# cuobjdump (from the Python package index's nvidia-cuda-cuobjdump), to read an object's targets.
find_cuobjdump() {
	command -v cuobjdump || python3 -c 'import glob, sys, site
for d in site.getsitepackages() + [site.getusersitepackages()]:
    for p in glob.glob(d + "/nvidia/*/bin/cuobjdump"):
        print(p); sys.exit()' 2>/dev/null
}
# elf_targets OBJECT: the SASS targets in an object, sorted, on one line: "sm_80 sm_90"
elf_targets() {
	"${CUOBJDUMP:=$(find_cuobjdump)}" --list-elf "$1" 2>/dev/null |
		sed -n 's/^ELF file.*\.\(sm_[0-9a-z]*\)\.cubin/\1/p' | sort -u | tr '\n' ' ' | sed 's/ $//'
}
# free_port: a TCP port on 127.0.0.1 that nothing listens on now.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# hold_lock FILE: another process takes an flock on FILE and keeps it until release_locks; returns
# once the lock is held (an event, waited for up to a minute), 1 if it never was.
HELD_PIDS=()
hold_lock() {
	local ready="$WORK/.held.${#HELD_PIDS[@]}" i
	rm -f "$ready" "$WORK/.release"
	flock -o -x "$1" sh -c 'touch "$1"; while [ ! -e "$2" ]; do sleep 0.05; done' _ "$ready" "$WORK/.release" &
	HELD_PIDS+=($!)
	for i in $(seq 1200); do
		[ -e "$ready" ] && return 0
		sleep 0.05
	done
	return 1
}
# release_locks: the locks of hold_lock are given back; returns once their holders have ended.
release_locks() {
	touch "$WORK/.release"
	[ ${#HELD_PIDS[@]} -eq 0 ] || wait "${HELD_PIDS[@]}"
	HELD_PIDS=()
	rm -f "$WORK/.release" "$WORK"/.held.*
}
# run_groups FUNCTION...: runs independent groups of checks at once (E2E_JOBS at a time, the
# cores by default), each in a subshell of its own; their lines are printed in the order given
# once all have ended, and their counts added to this suite's. A group that does not finish
# counts as a failure.
run_groups() {
	local dir="$WORK/.groups" f i=0 j p f2 s names=("$@")
	mkdir -p "$dir"
	for f; do
		while [ "$(jobs -rp | wc -l)" -ge "${E2E_JOBS:-$(nproc)}" ]; do wait -n; done
		# The counts go to descriptor 9, opened here: a group may use any variable name.
		(
			PASSED=0 FAILED=0 SKIPPED=0
			"$f" 9>&-
			echo "$PASSED $FAILED $SKIPPED" >&9
		) >"$dir/$i.out" 9>"$dir/$i.counts" 2>&1 </dev/null &
		i=$((i + 1))
	done
	wait
	for ((j = 0; j < i; j++)); do
		cat "$dir/$j.out"
		if read -r p f2 s <"$dir/$j.counts" && [ -n "$s" ]; then
			PASSED=$((PASSED + p)) FAILED=$((FAILED + f2)) SKIPPED=$((SKIPPED + s))
		else
			not_ok "group ${names[j]}: did not finish"
		fi
	done
}
# make_toolkit DIR: the machine's toolkit ($CUDA, the caller's) with every program linked, to
# replace one of them (the crash and guard suites).
make_toolkit() {
	local d=$1 f
	mkdir -p "$d/bin" "$d/nvvm/bin"
	ln -s "$CUDA/bin/nvcc" "$d/bin/nvcc"
	cp "$CUDA/bin/nvcc.profile" "$d/bin/"
	for f in "$CUDA"/bin/*; do [ -e "$d/bin/${f##*/}" ] || ln -s "$f" "$d/bin/${f##*/}"; done
	for f in "$CUDA"/nvvm/bin/*; do ln -s "$f" "$d/nvvm/bin/${f##*/}"; done
	for f in libdevice lib64; do [ -e "$CUDA/nvvm/$f" ] && ln -s "$CUDA/nvvm/$f" "$d/nvvm/$f"; done
	ln -s "$CUDA/targets" "$d/targets"
	ln -s "$CUDA/lib64" "$d/lib"
}
