#!/bin/bash
# The layers of src/ (CMakeLists.txt, src/README.md) include only from layers below them, or
# from their own folder. Prints each include that breaks this; exit 1 if any.
cd "$(dirname "$0")/../src" || exit 2
rank() {
	case $1 in
	core) echo 0 ;; diagnose) echo 1 ;; passes | preload) echo 2 ;; modes) echo 3 ;;
	commands) echo 4 ;; tools) echo 5 ;; *) echo 99 ;;
	esac
}
bad=0 n=0
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
[ $bad = 0 ] && echo "layers: $n includes, each from its own layer or one below"
exit $bad
