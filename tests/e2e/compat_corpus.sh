#!/bin/bash
# The compatibility layer and `nvshim migrate` on real code nobody here wrote: the package-index
# rows of tests/corpus/projects.tsv, sources written for CUDA <= 12 that fail on CUDA 13.0 because
# an API they use was removed or changed. For each row (one translation unit, compiled with its
# project's own flags, -c, one target):
#   - plain (nvcc 13, or the host compiler for c++/c rows) fails, and prints each removed API the
#     manifest names;
#   - through nvshim (nvshim c++ / nvshim cc for host rows) it builds with the note the manifest
#     names (compat.restored), or, where no faithful compat exists, fails with that note
#     (compat.none) and exit status 1;
#   - `nvshim migrate --apply` on the files the manifest names, in a fresh copy of the package,
#     and the plain compile again builds (or, where migrate has no recipe, still fails), with nvcc
#     13.0's headers and with CUDA 12.9's runtime headers, cuBLAS, cuFFT, cuSPARSE, cuSOLVER and
#     cuRAND headers and CCCL 2.8 first on the include path
#     (pinned wheels: scripts/fetch-cccl12.sh, scripts/fetch-cu12-libheaders.py).
# A row's "gap" column names what nvshim does not do yet: a check of that row that fails is
# reported as TODO (not a failure), one that passes says the gap is closed.
#   bash tests/e2e/compat_corpus.sh NVSHIM [NVCC]
# The sdists are taken from COMPAT_CORPUS_SDISTS (a folder) when they are there, else downloaded
# with pip (pinned, sha256-checked; into that folder when it is writable); a row whose sdist
# cannot be had is skipped, and so is the pycuda row without Python's headers.
NVSHIM=$(readlink -f "$1") NVCC=${2:-/usr/local/cuda/bin/nvcc}
SDISTS=${COMPAT_CORPUS_SDISTS:-}
TOOLKITS=${NVSHIM_TOOLKITS:-/var/tmp/nvshim-toolkits} # read before lib.sh clears NVSHIM_*
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MANIFEST=$(cd "$(dirname "$0")/../corpus" && pwd)/projects.tsv
. "$(dirname "$0")/lib.sh"
cd "$WORK" || exit 1
CUDA_INCLUDE=$(cd "$(dirname "$(readlink -f "$NVCC")")/../include" 2>/dev/null && pwd)
PYTHON_INCLUDE=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)
[ -n "$SDISTS" ] && mkdir -p "$SDISTS" 2>/dev/null
# CUDA 12.9's runtime headers and CCCL 2.8 (pinned wheels), for migrate's "builds on 12.x too".
NVSHIM_TOOLKITS=$TOOLKITS bash "$ROOT/scripts/fetch-cccl12.sh"
R12=$TOOLKITS/cu12-runtime/nvidia/cuda_runtime/include
C12=$TOOLKITS/cu12-cccl/nvidia/cuda_cccl/include
# and its cuBLAS, cuFFT, cuSPARSE, cuSOLVER and cuRAND headers (out of the pinned wheels, headers only), for the
# units that include them: 13.0's cublas_api.h does not build with 12.9's runtime headers.
NVSHIM_TOOLKITS=$TOOLKITS python3 "$ROOT/scripts/fetch-cu12-libheaders.py"
L12=$TOOLKITS/cu12-libs/nvidia
LIB12=
for lib in cublas cufft cusparse cusolver curand; do
	[ -d "$L12/$lib/include" ] || { LIB12=; break; }
	LIB12="$LIB12 -I$L12/$lib/include"
done

# sdist SPEC SHA256: the path of the pinned sdist (NAME==VERSION), or nothing.
sdist() {
	local name=${1%%==*} version=${1#*==} f d
	for d in "$SDISTS" "$WORK/sdists"; do
		[ -n "$d" ] || continue
		for f in "$d/$name-$version".tar.gz "$d/${name//-/_}-$version".tar.gz; do
			[ -f "$f" ] && [ "$(sha256sum <"$f" | cut -d' ' -f1)" = "$2" ] && { echo "$f"; return; }
		done
	done
	d=$WORK/sdists
	[ -n "$SDISTS" ] && [ -w "$SDISTS" ] && d=$SDISTS
	mkdir -p "$d"
	timeout 300 python3 -m pip download --quiet --retries 1 --timeout 20 --no-deps --no-binary "$name" "$1" -d "$d" >/dev/null 2>&1
	for f in "$d/$name-$version".tar.gz "$d/${name//-/_}-$version".tar.gz; do
		[ -f "$f" ] && [ "$(sha256sum <"$f" | cut -d' ' -f1)" = "$2" ] && { echo "$f"; return; }
	done
}

# unpack TARBALL DIR: a fresh copy of the package in DIR, its top folder's contents
unpack() {
	rm -rf "$2" && mkdir -p "$2" && tar xzf "$1" -C "$2" --strip-components=1
}

# compile DIR LANG FILE FLAGS [nvshim|12]: the compile of one row, in DIR (through nvshim, or
# plain with CUDA 12.9's headers first); its output in $out, status in $st
compile() {
	local dir=$1 lang=$2 file=$3 flags=$4 via=${5:-} f
	f=${flags//\$CUDA_INCLUDE/$CUDA_INCLUDE}
	[ "$via" = 12 ] && f="-I$R12 $LIB12 -I$C12 $f" && via=
	f=${f//\$PYTHON_INCLUDE/$PYTHON_INCLUDE}
	local -a args cmd
	read -ra args <<<"$f"
	case $lang in
	cu) cmd=("$NVCC") ;;
	c++) cmd=(c++) ;;
	c) cmd=(cc) ;;
	esac
	if [ -n "$via" ]; then
		case $lang in
		cu) cmd=("$NVSHIM") ;;
		c++) cmd=("$NVSHIM" c++) ;;
		c) cmd=("$NVSHIM" cc) ;;
		esac
	fi
	rm -f "$dir/corpus.o"
	out=$(cd "$dir" && "${cmd[@]}" "${args[@]}" "$file" -o corpus.o 2>&1)
	st=$?
	[ $st = 0 ] && [ ! -s "$dir/corpus.o" ] && st=99
	return 0
}

# verdict NAME GAP OUTPUT COMMAND...: check, where a failure of a row with a known gap is a TODO
verdict() {
	local name=$1 gap=$2 text=$3
	shift 3
	if "$@"; then
		ok "$name"
		[ "$gap" = - ] || echo "# gap closed? this check passes although the manifest names a gap: $gap"
	elif [ "$gap" != - ]; then
		SKIPPED=$((SKIPPED + 1))
		echo "not ok - $name # TODO $gap"
	else
		not_ok "$name" "$(tail -n 15 <<<"$text")"
	fi
}

# all_in TEXT LIST: every |-separated fixed string of LIST is in TEXT
all_in() {
	local text=$1 s
	local -a want
	IFS='|' read -ra want <<<"$2"
	for s in "${want[@]}"; do grep -qF -- "$s" <<<"$text" || return 1; done
}

n=0
while IFS=$'\t' read -r project version source sha lang file flags plain nvshim migrate gap; do
	case $project in '#'* | project | '') continue ;; esac
	case $source in pypi:*) ;; *) continue ;; esac
	n=$((n + 1))
	tag="$project $version $file"
	tarball=$(sdist "${source#pypi:}" "$sha")
	if [ -z "$tarball" ]; then
		skip "$tag" "${source#pypi:} not in COMPAT_CORPUS_SDISTS and pip could not download it (sha256 $sha)"
		continue
	fi
	if grep -q PYTHON_INCLUDE <<<"$flags" && [ ! -f "$PYTHON_INCLUDE/Python.h" ]; then
		skip "$tag" "no Python.h in '$PYTHON_INCLUDE' (python3-dev)"
		continue
	fi
	dir=$WORK/row$n
	unpack "$tarball" "$dir"

	# Plain: fails, on the removed APIs. (Plain builds are left out of the sanitizer pass, lib.sh.)
	if [ -z "$SANITIZED" ]; then
		compile "$dir" "$lang" "$file" "$flags"
		check "$tag: plain $lang fails (exit $st)" test "$st" != 0 -a "$st" != 99
		check "$tag: plain names the removed APIs ($plain)" all_in "$out" "$plain"
	fi

	# Through nvshim: builds with the layer, or fails saying why there is none.
	want=${nvshim%% *} rule=${nvshim#* }
	compile "$dir" "$lang" "$file" "$flags" nvshim
	if [ "$want" = builds ]; then
		verdict "$tag: through nvshim it builds (exit $st)" "$gap" "$out" test "$st" = 0
		verdict "$tag: through nvshim the note [$rule] says what was restored" "$gap" "$out" grep -qF "[$rule]" <<<"$out"
	else
		verdict "$tag: through nvshim it fails as before (exit $st)" "$gap" "$out" test "$st" = 1
		verdict "$tag: through nvshim the note [$rule] says why nothing is restored" "$gap" "$out" \
			grep -qF "[$rule]" <<<"$out"
	fi
	verdict "$tag: through nvshim the source file is untouched" - "$out" \
		cmp -s <(tar xzf "$tarball" -O --wildcards "*/$file") "$dir/$file"

	# migrate --apply in a fresh copy, then plain again.
	files=${migrate%% -> *} after=${migrate##* -> }
	mdir=$WORK/migrate$n
	unpack "$tarball" "$mdir"
	read -ra mfiles <<<"$files"
	(cd "$mdir" && "$NVSHIM" migrate --apply "${mfiles[@]}") >"$WORK/migrate$n.log" 2>&1
	mst=$?
	if [ -n "$SANITIZED" ]; then
		# (what the migrated text builds to is plain nvcc's: the release pass checks it)
		check "$tag: nvshim migrate --apply $files: status 0 or 1, no sanitizer report" eval \
			'test $mst -le 1 && ! grep -q "Sanitizer\|runtime error:" "$WORK/migrate$n.log"'
		rm -rf "$dir" "$mdir"
		continue
	fi
	compile "$mdir" "$lang" "$file" "$flags"
	if [ "$after" = builds ]; then
		verdict "$tag: after nvshim migrate --apply $files, plain builds (exit $st)" "$gap" \
			"$(cat "$WORK/migrate$n.log")$out" test "$st" = 0
		if [ -d "$R12" ] && [ -d "$C12" ]; then
			compile "$mdir" "$lang" "$file" "$flags" 12
			verdict "$tag: migrated, it builds with CUDA 12.9's runtime headers and CCCL 2.8 (exit $st)" \
				- "$out" test "$st" = 0
		else
			skip "$tag: migrated, with CUDA 12.9's headers" "scripts/fetch-cccl12.sh could not fetch them"
		fi
	else
		verdict "$tag: after nvshim migrate --apply $files, plain still fails (no recipe: exit $st)" "$gap" \
			"$out" test "$st" != 0
	fi
	rm -rf "$dir" "$mdir"
done <"$MANIFEST"
check "the manifest has package-index rows" test "$n" -gt 0
finish
