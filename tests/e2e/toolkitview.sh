#!/bin/bash
# The toolkit view (src/machine/view.h): after `eval "$(nvshim env)"` every route to nvcc that a
# tool takes reaches nvshim: $CUDA_HOME/bin/nvcc, $CUDA_PATH/bin/nvcc, CMake's FindCUDA
# (cuda_add_executable) and FindCUDAToolkit, enable_language(CUDA). The view is the real
# toolkit otherwise (the same nvcc --dryrun), made once by 16 concurrent first uses, remade when
# the toolkit changes; nvshim run through it runs the real nvcc, never itself.
NVSHIM=$(realpath "$1") NVCC=$2
. "$(dirname "$0")/lib.sh"
LIBEXEC=$(realpath "${NVSHIM_BUILD_DIR:-$(dirname "$NVSHIM")}/libexec/nvshim/bin")
unset CUDA_HOME CUDA_PATH CUDAToolkit_ROOT CUDA_NVCC_EXECUTABLE CUDACXX PYTORCH_NVCC
REAL=$(realpath "$NVCC")
ROOT=$(dirname "$(dirname "$REAL")")
VIEWS="$XDG_CACHE_HOME/nvshim/toolkit-view"
cp "$(dirname "$0")/fixtures/kernel.cu" "$WORK/k.cu"
# A CUDA-12 target list: nvcc 13 refuses compute_52 ("Unsupported gpu architecture").
LIST12="-gencode arch=compute_52,code=sm_52 -gencode arch=compute_80,code=sm_80"

# logged LOG CONDITION: some log line l (its argv_in as a) makes the Python CONDITION true
logged() {
	python3 -c 'import json, sys
sys.exit(not any(eval(sys.argv[2]) for l in map(json.loads, open(sys.argv[1])) for a in [l["argv_in"]]))' "$1" "$2"
}

# --- nvshim env and the view.
out=$("$NVSHIM" env)
check "env: exit 0" test $? -eq 0
view=$("$NVSHIM" toolkit-view)
check "toolkit-view prints a directory under the cache, named as the toolkit's root" \
	test -d "$view" -a "$(dirname "$(dirname "$view")")" = "$VIEWS" -a "$(basename "$view")" = "$(basename "$ROOT")"
check "env: CUDA_HOME, CUDA_PATH name the view; CUDA_NVCC_EXECUTABLE names nvshim; no CUDAToolkit_ROOT" \
	contains "$out" "^CUDA_HOME=$view; export CUDA_HOME\$" "^CUDA_PATH=$view; export CUDA_PATH\$" \
	"^CUDA_NVCC_EXECUTABLE=$LIBEXEC/nvcc; export CUDA_NVCC_EXECUTABLE\$"
check "env: CUDAToolkit_ROOT is left unset (FindCUDAToolkit keeps it in CMakeCache.txt)" \
	test -z "$(grep CUDAToolkit_ROOT <<<"$out")"
check "env: a CUDAToolkit_ROOT an earlier env set to a view is unset" \
	test "$(CUDAToolkit_ROOT=$view "$NVSHIM" env | grep CUDAToolkit_ROOT)" = "unset CUDAToolkit_ROOT"
check "view: bin/nvcc is nvshim's nvcc" test "$view/bin/nvcc" -ef "$LIBEXEC/nvcc"
same=1
# include/ and lib64/ are directories of links where CUDA 13.0 moved files (view.h): their entries
# are links then, and the view's own additions are CUDA 12's names (layout.sh checks them).
split=
[ -d "$view/include" ] && [ ! -L "$view/include" ] && split="$split include"
[ -d "$view/lib64" ] && [ ! -L "$view/lib64" ] && split="$split lib64"
for e in "$ROOT"/* "$ROOT"/bin/* $(for d in $split; do echo "$ROOT/$d/"*; done); do
	rel=${e#"$ROOT"/}
	[ "$rel" = bin ] || [ "$rel" = bin/nvcc ] && continue
	case " $split " in *" $rel "*) continue ;; esac
	[ -L "$view/$rel" ] && [ "$(readlink "$view/$rel")" = "$e" ] || { same=0; echo "# $view/$rel is not a link to $e"; }
done
check "view: every other entry of the toolkit and of its bin/ is a link to the real one" test $same = 1
check "view: as many entries as the toolkit, and a link to the real nvcc" \
	test "$(ls -A "$view" | wc -l)" = "$(($(ls -A "$ROOT" | wc -l) + 1))" -a \
	"$(ls -A "$view/bin" | wc -l)" = "$(ls -A "$ROOT/bin" | wc -l)" -a "$view/.nvshim-real-nvcc" -ef "$REAL"
again=$(eval "$out" && "$NVSHIM" env)
check "env run again in the set-up shell: the same view, nvshim once on PATH" \
	test "$(grep ^CUDA_HOME= <<<"$again")" = "$(grep ^CUDA_HOME= <<<"$out")" -a \
	"$(grep ^PATH= <<<"$again" | tr ':' '\n' | grep -c "^\(PATH=\)\?$LIBEXEC\$")" = 1

# --- The loop guard: nvshim run through the view runs the real nvcc, which finds its own
# include/, nvvm/ and host compiler as when it is run directly.
(
	eval "$out"
	cd "$WORK" || exit 1
	NVSHIM_LOG_FILE="$WORK/guard.log" "$CUDA_HOME/bin/nvcc" --version >"$WORK/v.view" 2>&1
	echo $? >"$WORK/v.status"
	"$CUDA_HOME/bin/nvcc" --dryrun -c k.cu -arch=sm_80 2>&1 | normalise >"$WORK/d.view"
	# the real nvcc by the name PATH gives it (/usr/local/cuda/bin/nvcc), as a user runs it
	"$NVCC" --dryrun -c k.cu -arch=sm_80 2>&1 | normalise >"$WORK/d.real"
	"$NVSHIM" doctor >"$WORK/doctor.view" 2>&1
)
"$REAL" --version >"$WORK/v.real" 2>&1
check "loop guard: \$CUDA_HOME/bin/nvcc --version is the real nvcc's, status 0" \
	test "$(cat "$WORK/v.view")" = "$(cat "$WORK/v.real")" -a "$(cat "$WORK/v.status")" = 0
check "loop guard: the log names the real nvcc as the tool, by the name PATH gives it" grep -q "\"tool\":\"$NVCC\"" "$WORK/guard.log"
check "through the view, nvcc --dryrun is the real nvcc's, byte for byte" cmp "$WORK/d.view" "$WORK/d.real"
check "doctor: the real nvcc is found through the view" \
	grep -q "^real nvcc : $NVCC (found through \$CUDA_HOME (nvshim's toolkit view of $ROOT))" "$WORK/doctor.view"
check "doctor after nvshim env: every route leads to nvshim" \
	test "$(sed -n '/^routes to nvcc:/,/^[^ ]/p' "$WORK/doctor.view" | grep -c '^  [A-Za-z_]* *nvshim: ')" = 6 -a \
	-z "$(grep 'around nvshim' "$WORK/doctor.view")"
out2=$(CUDA_HOME=$ROOT CUDA_NVCC_EXECUTABLE=$REAL "$NVSHIM" doctor)
check "doctor without it: CUDA_HOME and CUDA_NVCC_EXECUTABLE go around nvshim, said, exit 0" \
	test $? -eq 0 -a -n "$(contains "$out2" "^  CUDA_HOME  *around nvshim: $ROOT/bin/nvcc is not nvshim" \
	"^  CUDA_NVCC_EXECUTABLE around nvshim: $REAL is not nvshim" "^  CUDA_PATH  *unset" \
	"^note: 3 route(s) go around nvshim" && echo y)"
# No real nvcc on PATH and none at CUDA_PATH: the view alone leads to the real nvcc.
out2=$(cd "$WORK" && CUDA_HOME=$view PATH="$LIBEXEC:/usr/bin:/bin" NVSHIM_LOG_FILE="$WORK/guard2.log" \
	timeout 60 "$view/bin/nvcc" -c k.cu -o k0.o -arch=sm_80 2>&1)
check "loop guard: with only the view, a compile runs the real nvcc (status 0, no output)" \
	test $? -eq 0 -a -z "$out2" -a -s "$WORK/k0.o"
check "loop guard: once, by the real nvcc" test "$(wc -l <"$WORK/guard2.log")" = 1 -a \
	"$(grep -c "\"tool\":\"$REAL\"" "$WORK/guard2.log")" = 1
out2=$(NVSHIM_NVCC="$view/bin/nvcc" "$NVSHIM" nvcc --version 2>&1)
check "loop guard: real_nvcc set to the view's nvcc is refused" \
	test $? -eq 1 -a -n "$(grep 'is nvshim itself' <<<"$out2")"
# A view of the second toolkit: nvshim runs that toolkit's nvcc, not the first one on PATH.
R135=${NVSHIM_TOOLKITS:-/var/tmp/nvshim-toolkits}/13.5/nvidia/cu13
if [ -x "$R135/bin/nvcc" ]; then
	v135=$(NVSHIM_NVCC="$R135/bin/nvcc" "$NVSHIM" toolkit-view)
	out2=$(CUDA_HOME=$v135 "$v135/bin/nvcc" --version 2>&1)
	check "a view of nvcc 13.5 runs nvcc 13.5 (the first nvcc on PATH is $("$REAL" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p'))" \
		grep -q 'release 13.5' <<<"$out2"
	check "the two toolkits have two views" test "$v135" != "$view"
else
	skip "a view of nvcc 13.5" "no $R135/bin/nvcc"
fi

# --- Scripts that compile with $CUDA_HOME/bin/nvcc and $CUDA_PATH/bin/nvcc, with a CUDA-12 list.
(cd "$WORK" && "$REAL" -c k.cu -o plain.o $LIST12 >"$WORK/plain.out" 2>&1)
check "control: the real nvcc refuses the CUDA-12 list" grep -q "Unsupported gpu architecture 'compute_52'" "$WORK/plain.out"
for var in CUDA_HOME CUDA_PATH; do
	cat >"$WORK/build-$var.sh" <<SH
#!/bin/sh
set -e
cd "$WORK"
"\$$var/bin/nvcc" -c k.cu -o $var.o $LIST12
"\$$var/bin/nvcc" $var.o -o $var.app
SH
	(eval "$out" && NVSHIM_LOG_FILE="$WORK/$var.log" sh "$WORK/build-$var.sh" >"$WORK/$var.out" 2>&1)
	check "script with \$$var/bin/nvcc: exit 0" test $? -eq 0
	check "script with \$$var/bin/nvcc: the compile went through nvshim, with the CUDA-12 list" \
		logged "$WORK/$var.log" "'arch=compute_52,code=sm_52' in a and '$var.o' in a"
	check "script with \$$var/bin/nvcc: the link went through nvshim" logged "$WORK/$var.log" "'$var.app' in a"
	check "script with \$$var/bin/nvcc: the object holds sm_80" test "$(elf_targets "$WORK/$var.o")" = sm_80
	check "script with \$$var/bin/nvcc: the program runs" sh -c "'$WORK/$var.app' | grep -q 'host part ran'"
done

# --- CMake: FindCUDA (cuda_add_executable, CUDA_NVCC_FLAGS), FindCUDAToolkit, enable_language.
if ! command -v cmake >/dev/null; then
	skip "cmake" "cmake is not installed"
	finish
	exit
fi
mkdir -p "$WORK/findcuda" "$WORK/toolkit" "$WORK/lang"
cp "$WORK/k.cu" "$WORK/findcuda/main.cu"
printf '__global__ void twice(float *x) { x[0] *= 2; }\nvoid helper() { twice<<<1, 1>>>(nullptr); }\n' >"$WORK/findcuda/helper.cu"
# FindCUDA left CMake in 3.27 (policy CMP0146): OLD brings it back.
cat >"$WORK/findcuda/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.10)
if(POLICY CMP0146)
  cmake_policy(SET CMP0146 OLD)
endif()
project(findcuda CXX)
find_package(CUDA REQUIRED)
set(CUDA_NVCC_FLAGS -gencode arch=compute_52,code=sm_52 -gencode arch=compute_80,code=sm_80)
cuda_add_executable(app main.cu helper.cu)
CM
cmake_build() { # cmake_build NAME SRC ENVFILE: configure and build SRC in $WORK/b-NAME, log $WORK/NAME.log
	local name=$1 src=$2 envfile=$3
	(
		[ -n "$envfile" ] && eval "$(cat "$envfile")"
		export NVSHIM_LOG_FILE="$WORK/$name.log"
		cmake -S "$src" -B "$WORK/b-$name" -G "Unix Makefiles" >"$WORK/$name.configure" 2>&1 &&
			cmake --build "$WORK/b-$name" >"$WORK/$name.build" 2>&1
	)
}
echo "$out" >"$WORK/env.sh"
cmake_build findcuda-plain "$WORK/findcuda" ""
check "control: FindCUDA without nvshim stops at compute_52" \
	grep -q "Unsupported gpu architecture 'compute_52'" "$WORK/findcuda-plain.build"
cmake_build findcuda "$WORK/findcuda" "$WORK/env.sh"
check "FindCUDA after nvshim env: configure and build, exit 0" test $? -eq 0
check "FindCUDA: CUDA_NVCC_EXECUTABLE is nvshim's nvcc" \
	grep -q "^CUDA_NVCC_EXECUTABLE:FILEPATH=$LIBEXEC/nvcc\$" "$WORK/b-findcuda/CMakeCache.txt"
check "FindCUDA: main.cu compiled through nvshim, with the CUDA-12 list" \
	logged "$WORK/findcuda.log" "any(x.endswith('main.cu') for x in a) and 'arch=compute_52,code=sm_52' in a"
check "FindCUDA: helper.cu compiled through nvshim" logged "$WORK/findcuda.log" "any(x.endswith('helper.cu') for x in a)"
check "FindCUDA: the program runs" sh -c "'$WORK/b-findcuda/app' | grep -q 'host part ran'"

# FindCUDAToolkit alone: the project compiles with CUDAToolkit_NVCC_EXECUTABLE.
cp "$WORK/k.cu" "$WORK/toolkit/main.cu"
cat >"$WORK/toolkit/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(findtoolkit CXX)
find_package(CUDAToolkit REQUIRED)
add_custom_command(OUTPUT main.o
  COMMAND ${CUDAToolkit_NVCC_EXECUTABLE} -c ${CMAKE_CURRENT_SOURCE_DIR}/main.cu -o main.o
          -gencode arch=compute_52,code=sm_52 -gencode arch=compute_80,code=sm_80
  DEPENDS main.cu)
add_executable(app main.o)
set_target_properties(app PROPERTIES LINKER_LANGUAGE CXX)
target_link_libraries(app CUDA::cudart)
CM
cmake_build toolkit "$WORK/toolkit" "$WORK/env.sh"
check "FindCUDAToolkit after nvshim env: configure and build, exit 0" test $? -eq 0
check "FindCUDAToolkit: CUDAToolkit_NVCC_EXECUTABLE is nvshim's nvcc (from PATH), the libraries the real toolkit's" \
	sh -c "grep -q '^CUDAToolkit_NVCC_EXECUTABLE:FILEPATH=$LIBEXEC/nvcc\$' '$WORK/b-toolkit/CMakeCache.txt' &&
		! grep '^CUDA_cudart_LIBRARY' '$WORK/b-toolkit/CMakeCache.txt' | grep -q toolkit-view"
check "FindCUDAToolkit: the compile went through nvshim" logged "$WORK/toolkit.log" "any(x.endswith('/main.cu') for x in a)"
check "FindCUDAToolkit: the program runs" sh -c "'$WORK/b-toolkit/app' | grep -q 'host part ran'"

# enable_language(CUDA) with FindCUDAToolkit and a CUDA-12 architecture list.
cp "$WORK/k.cu" "$WORK/lang/main.cu"
cat >"$WORK/lang/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(lang CXX)
set(CMAKE_CUDA_ARCHITECTURES 52 80)
enable_language(CUDA)
find_package(CUDAToolkit REQUIRED)
add_executable(app main.cu)
target_link_libraries(app CUDA::cudart)
CM
cmake_build lang "$WORK/lang" "$WORK/env.sh"
check "enable_language(CUDA) after nvshim env: configure and build, exit 0" test $? -eq 0
check "enable_language(CUDA): CMAKE_CUDA_COMPILER is nvshim's nvcc" \
	grep -q "^CMAKE_CUDA_COMPILER:FILEPATH=$LIBEXEC/nvcc\$" "$WORK/b-lang/CMakeCache.txt"
check "enable_language(CUDA): the compile went through nvshim, with compute_52 asked for" \
	logged "$WORK/lang.log" "any(x.endswith('/main.cu') for x in a) and any('compute_52' in x for x in a)"
check "enable_language(CUDA): the program runs" sh -c "'$WORK/b-lang/app' | grep -q 'host part ran'"

# CMAKE_CUDA_ARCHITECTURES=native on this machine without a GPU: CMake decides it by running
# its own test program, which finds no GPU; with the architectures OFF and -arch=native in the
# flags, nvshim decides (fallback_archs here).
mkdir -p "$WORK/native"
cp "$WORK/k.cu" "$WORK/native/main.cu"
cat >"$WORK/native/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(native CXX CUDA)
add_executable(app main.cu)
CM
if ! nvidia-smi -L >/dev/null 2>&1; then
	(eval "$out" && cmake -S "$WORK/native" -B "$WORK/b-native1" -DCMAKE_CUDA_ARCHITECTURES=native >"$WORK/native1.out" 2>&1)
	st=$?
	if [ "$(printf '%s\n' 3.24 "$(cmake --version | sed -n 's/^cmake version //p')" | sort -V | head -1)" = 3.24 ]; then
		check "native without a GPU: CMake itself stops ('no GPU was detected'), as the docs say" \
			test $st -ne 0 -a -n "$(grep 'is set to "native", but no GPU was detected' "$WORK/native1.out")"
	fi
	(eval "$out" && export NVSHIM_LOG_FILE="$WORK/native.log" NVSHIM_FALLBACK_ARCHS=86 &&
		cmake -S "$WORK/native" -B "$WORK/b-native" -DCMAKE_CUDA_ARCHITECTURES=OFF -DCMAKE_CUDA_FLAGS=-arch=native >"$WORK/native.out" 2>&1 &&
		cmake --build "$WORK/b-native" >>"$WORK/native.out" 2>&1)
	check "native without a GPU: architectures OFF and -arch=native build through nvshim" test $? -eq 0
	check "native without a GPU: nvshim built for fallback_archs (sm_86)" \
		test "$(elf_targets "$WORK/b-native/CMakeFiles/app.dir/main.cu.o")" = sm_86
else
	skip "native without a GPU" "this machine has a GPU"
fi

# --- Meson: dependency('cuda') takes $CUDA_PATH (the view) for the toolkit; nvcc from PATH.
if command -v meson >/dev/null; then
	mkdir -p "$WORK/ms"
	cp "$WORK/k.cu" "$WORK/ms/main.cu"
	cat >"$WORK/ms/meson.build" <<'EOF'
project('p', 'cpp', 'cuda')
executable('app', 'main.cu', dependencies: dependency('cuda'),
           cuda_args: ['-gencode', 'arch=compute_52,code=sm_52', '-gencode', 'arch=compute_80,code=sm_80'])
EOF
	(eval "$out" && export NVSHIM_LOG_FILE="$WORK/meson.log" &&
		meson setup "$WORK/b-meson" "$WORK/ms" >"$WORK/meson.out" 2>&1 && ninja -C "$WORK/b-meson" >>"$WORK/meson.out" 2>&1)
	check "Meson after nvshim env: sets up and builds, exit 0" test $? -eq 0
	check "Meson: dependency('cuda') is the view, with the toolkit's version, no warning" \
		test -n "$(grep "^Run-time dependency CUDA (modules: cudart) found: YES [0-9.]* ($view)" "$WORK/meson.out")" -a \
		-z "$(grep -i "doesn't match" "$WORK/meson.out")"
	check "Meson: the compile went through nvshim" logged "$WORK/meson.log" "any(x.endswith('main.cu') for x in a) and 'arch=compute_52,code=sm_52' in a"
	check "Meson: the program runs" sh -c "'$WORK/b-meson/app' | grep -q 'host part ran'"
else
	skip "meson" "meson is not installed"
fi

# --- 16 concurrent first uses of a fresh cache: one view, whole, no temporary left.
export XDG_CACHE_HOME="$WORK/cache16"
for i in $(seq 16); do
	("$NVSHIM" toolkit-view >"$WORK/tv.$i" 2>&1; echo $? >>"$WORK/tv.status") &
done
wait
check "16 concurrent first uses: all exit 0" test "$(sort -u "$WORK/tv.status")" = 0 -a "$(wc -l <"$WORK/tv.status")" = 16
check "16 concurrent first uses: all print the same view" test "$(cat "$WORK"/tv.* | grep -v '^0$' | sort -u | wc -l)" = 1
v16=$(cat "$WORK/tv.1")
check "16 concurrent first uses: the view is whole" \
	test "$v16/bin/nvcc" -ef "$LIBEXEC/nvcc" -a "$v16/.nvshim-real-nvcc" -ef "$REAL" -a "$(ls -A "$v16/bin" | wc -l)" = "$(ls -A "$ROOT/bin" | wc -l)"
check "16 concurrent first uses: one directory in toolkit-view/, no temporary left" \
	test "$(ls -A "$XDG_CACHE_HOME/nvshim/toolkit-view" | wc -l)" = 1
# 16 concurrent compiles through $CUDA_HOME/bin/nvcc, each making the view first.
export XDG_CACHE_HOME="$WORK/cache16b"
for i in $(seq 16); do
	(eval "$("$NVSHIM" env)" && cd "$WORK" && NVSHIM_LOG_FILE="$WORK/par.log" "$CUDA_HOME/bin/nvcc" -c k.cu -o "par$i.o" $LIST12; echo $? >>"$WORK/par.status") >/dev/null 2>&1 &
done
wait
check "16 concurrent eval-and-compile: all exit 0, 16 compiles logged" \
	test "$(sort -u "$WORK/par.status")" = 0 -a "$(grep -c '"status":0' "$WORK/par.log")" = 16
check "16 concurrent eval-and-compile: one view" test "$(ls -A "$XDG_CACHE_HOME/nvshim/toolkit-view" | wc -l)" = 1
# A damaged view is replaced.
rm "$v16/bin/ptxas" "$v16/bin/nvcc"
XDG_CACHE_HOME="$WORK/cache16" "$NVSHIM" toolkit-view >/dev/null
check "a damaged view is made again" test "$v16/bin/nvcc" -ef "$LIBEXEC/nvcc" -a -L "$v16/bin/ptxas"

# --- A toolkit that changes gets a new view: a toolkit whose bin/nvcc is a copy of the real one.
mkdir -p "$WORK/tk/bin"
for e in "$ROOT"/*; do [ "${e##*/}" = bin ] || ln -s "$e" "$WORK/tk/${e##*/}"; done
for e in "$ROOT"/bin/*; do [ "${e##*/}" = nvcc ] || ln -s "$e" "$WORK/tk/bin/${e##*/}"; done
cp "$REAL" "$WORK/tk/bin/nvcc"
export XDG_CACHE_HOME="$WORK/cache-tk"
t1=$(NVSHIM_NVCC="$WORK/tk/bin/nvcc" "$NVSHIM" toolkit-view)
touch -d '2001-01-01' "$WORK/tk/bin/nvcc"
t2=$(NVSHIM_NVCC="$WORK/tk/bin/nvcc" "$NVSHIM" toolkit-view)
mkdir "$WORK/tk/extras-new"
t3=$(NVSHIM_NVCC="$WORK/tk/bin/nvcc" "$NVSHIM" toolkit-view)
check "a changed nvcc gets a new view" test -n "$t1" -a -n "$t2" -a "$t1" != "$t2"
check "a new entry in the toolkit gets a new view that has it" test "$t3" != "$t2" -a -L "$t3/extras-new"
check "a view of the copy runs the copy" test "$t3/.nvshim-real-nvcc" -ef "$WORK/tk/bin/nvcc"
out2=$(CUDA_HOME=$t1 "$NVSHIM" doctor)
check "doctor: a view made before the toolkit changed is an older view" \
	contains "$out2" "^  CUDA_HOME  *nvshim: the toolkit view of $WORK/tk (.*); an older view: the toolkit changed since"
out2=$(CUDA_HOME=$t3 "$NVSHIM" doctor)
check "doctor: the current view is not called older" \
	test -n "$(grep "^  CUDA_HOME  *nvshim: the toolkit view of $WORK/tk (" <<<"$out2")" -a -z "$(grep 'an older view' <<<"$out2")"

# --- Failing open: no view, the rest of the set-up still printed.
out2=$(NVSHIM_FAULT=view "$NVSHIM" env 2>"$WORK/fault.err")
check "env without a view: exit 0, PATH and CUDACXX still set, CUDA_HOME left alone" \
	test $? -eq 0 -a -n "$(grep '^CUDACXX=' <<<"$out2")" -a -z "$(grep '^CUDA_HOME=' <<<"$out2")"
check "env without a view: one warning says why" grep -q "^nvshim warning : no toolkit view of .*failure injected" "$WORK/fault.err"
finish
