#!/bin/bash
# Quick start: install the dependencies, build nvshim, install it to a prefix (default ./_install,
# or $PREFIX), and compile the bundled example through it, showing what nvshim did.
set -euo pipefail
cd "$(dirname "$0")/.."
PREFIX=${PREFIX:-$PWD/_install}
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
cmake --install build >/dev/null
echo "== installed to $PREFIX:"
( cd "$PREFIX" && find bin libexec etc -maxdepth 3 \( -type f -o -type l \) | sort | sed 's/^/   /' )
echo
echo "== $PREFIX/bin/nvshim doctor"
"$PREFIX/bin/nvshim" doctor || true
echo
out=$(mktemp -d)
echo "== nvshim explain: what nvshim would run for the example, and why"
"$PREFIX/bin/nvshim" explain -c examples/saxpy.cu -o "$out/saxpy.o"
echo
echo "== compiling examples/saxpy.cu with the nvcc in $PREFIX/libexec/nvshim/bin (nvshim), verbose"
PATH="$PREFIX/libexec/nvshim/bin:$PATH" NVSHIM_VERBOSITY=verbose NVSHIM_LOG_FILE="$out/nvshim.log" \
	nvcc examples/saxpy.cu -o "$out/saxpy"
echo
echo "== the log line nvshim wrote ($out/nvshim.log):"
cat "$out/nvshim.log"
echo
LIST=(-gencode arch=compute_52,code=sm_52 -gencode arch=compute_70,code=sm_70 -gencode arch=compute_80,code=sm_80)
echo "== a CUDA 12 architecture list: ${LIST[*]}"
echo "-- plain nvcc:"
nvcc=$("$PREFIX/bin/nvshim" version | sed -n 's/^nvcc .*(\(.*\), found through.*/\1/p')
"$nvcc" -c examples/saxpy.cu -o "$out/plain.o" "${LIST[@]}" || true
echo "-- through nvshim:"
PATH="$PREFIX/libexec/nvshim/bin:$PATH" nvcc -c examples/saxpy.cu -o "$out/shim.o" "${LIST[@]}" && ls -l "$out/shim.o"
echo
echo "== running the example"
"$out/saxpy" || true
