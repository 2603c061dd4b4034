#!/bin/bash
# CMake with nvshim as the CUDA compiler: through CUDACXX, and through PATH. CMake identifies
# the compiler as NVIDIA with nvcc's version, builds, and its --options-file response files work.
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"
LIBEXEC="${NVSHIM_BUILD_DIR:-$(dirname "$NVSHIM")}/libexec/nvshim/bin"
unset CUDACXX CMAKE_CUDA_COMPILER
version=$("$NVCC" --version | sed -n 's/.*, V\([0-9.]*\).*/\1/p')
mkdir -p "$WORK/p/inc dir"
cp "$(dirname "$0")/fixtures/kernel.cu" "$WORK/p/main.cu"
printf '#define FROM_INCLUDE 1\n' >"$WORK/p/inc dir/extra.h"
printf '#include "extra.h"\nint helper() { return FROM_INCLUDE; }\n' >"$WORK/p/helper.cu"
cat >"$WORK/p/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(nvshim_e2e LANGUAGES CXX CUDA)
add_library(helper STATIC helper.cu)
target_include_directories(helper PRIVATE "inc dir")
add_executable(app main.cu)
target_link_libraries(app helper)
CM

logged() { # logged LOG CONDITION: some logged argv_in has an argument a for which CONDITION holds
	python3 -c 'import json, sys
sys.exit(not any(eval(sys.argv[2]) for l in open(sys.argv[1]) for a in json.loads(l)["argv_in"]))' "$1" "$2"
}

build() { # build NAME ENV... : configure, build and run in $WORK/b-NAME
	local name=$1; shift
	local b="$WORK/b-$name"
	env "$@" NVSHIM_LOG_FILE="$WORK/$name.log" cmake -S "$WORK/p" -B "$b" -G "Unix Makefiles" \
		-DCMAKE_CUDA_USE_RESPONSE_FILE_FOR_INCLUDES=ON -DCMAKE_CUDA_USE_RESPONSE_FILE_FOR_OBJECTS=ON \
		>"$WORK/$name.configure" 2>&1 || { not_ok "$name: configure" "$(tail -20 "$WORK/$name.configure")"; return; }
	ok "$name: configure"
	local id ver
	id=$(sed -n 's/^CMAKE_CUDA_COMPILER_ID:.*=//p; s/^set(CMAKE_CUDA_COMPILER_ID "\(.*\)")/\1/p' "$b"/CMakeFiles/*/CMakeCUDACompiler.cmake | head -1)
	ver=$(sed -n 's/^set(CMAKE_CUDA_COMPILER_VERSION "\(.*\)")/\1/p' "$b"/CMakeFiles/*/CMakeCUDACompiler.cmake | head -1)
	check "$name: compiler id is NVIDIA" test "$id" = NVIDIA
	check "$name: compiler version $ver equals nvcc's $version" test "$ver" = "$version"
	env "$@" NVSHIM_LOG_FILE="$WORK/$name.log" cmake --build "$b" -- VERBOSE=1 >"$WORK/$name.build" 2>&1
	check "$name: build" test $? -eq 0
	check "$name: the program runs" sh -c "'$b/app' | grep -q 'host part ran'"
	check "$name: compiles went through nvshim" logged "$WORK/$name.log" 'a.endswith("main.cu")'
	check "$name: --options-file response files reached nvcc" logged "$WORK/$name.log" 'a == "--options-file"'
}

if ! command -v cmake >/dev/null; then skip "cmake" "cmake is not installed"; finish; exit; fi
build cudacxx CUDACXX="$NVSHIM"
build path PATH="$LIBEXEC:$PATH"
check "path: CMake found nvcc in nvshim's directory" grep -q "CMAKE_CUDA_COMPILER:FILEPATH=$LIBEXEC/nvcc" "$WORK/b-path/CMakeCache.txt"
finish
