#!/bin/bash
# The layers of src/ (CMakeLists.txt, src/README.md) include only from layers below them, or
# from their own folder; folders of one rank (model, objects, buildwide; passes, preload) never
# include each other. Every folder of src/ must have a rank here. Prints each include that
# breaks this; exit 1 if any.
cd "$(dirname "$0")/../src" || exit 2
rank() {
	case $1 in
	base) echo 0 ;; model | objects | buildwide) echo 1 ;; machine) echo 2 ;;
	diagnose) echo 3 ;; upgrade) echo 4 ;; passes | preload) echo 5 ;; modes) echo 6 ;;
	commands) echo 7 ;; tools) echo 8 ;; *) echo 99 ;;
	esac
}
bad=0 n=0
for d in */; do
	d=${d%/}
	if [ "$(rank "$d")" = 99 ]; then
		echo "layers: src/$d/ has no rank in tests/layers.sh"
		bad=1
	fi
done
for f in */*.c */*.h; do
	layer=${f%%/*}
	mine=$(rank "$layer")
	while IFS= read -r inc; do
		n=$((n + 1))
		other=${inc%%/*}
		theirs=$(rank "$other")
		if [ "$other" != "$layer" ] && { [ "$theirs" -ge "$mine" ] || [ "$theirs" = 99 ]; }; then
			echo "layers: $f includes $inc ($other is not below $layer)"
			bad=1
		fi
	done < <(sed -n 's/^#include "\([a-z_]*\/[a-z_]*\.h\)".*/\1/p' "$f")
done
# libiberty's xasprintf/xvasprintf size their buffer with a parser of their own that knows no
# z, j or t length modifier (a %zu before a %s reads past the arguments): print sizes with %lu.
if grep -n -E '\b(xasprintf|xvasprintf)\(.*%[-+ #0-9.]*[zjt]' */*.c; then
	echo "layers: a size_t format (%z, %j, %t) given to libiberty's xasprintf above"
	bad=1
fi
[ $bad = 0 ] && echo "layers: $n includes in $(ls -d */ | wc -l) folders, each from its own folder or a layer below"
exit $bad
