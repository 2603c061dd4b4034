# Cross-compiling nvshim with zig's C compiler (scripts/build-wheels.sh): the wheels' builds for
# an old glibc (2.17) on x86_64 and aarch64. The script sets, in the environment:
#   NVSHIM_ZIG_TARGET   zig's target, e.g. aarch64-linux-gnu.2.17
#   NVSHIM_ZIG_BIN      a folder with the wrappers TARGET-cc, TARGET-ar, TARGET-ranlib
#   NVSHIM_DEPS_PREFIX  zstd, lz4 and zlib built for that target (include/, lib/)
set(_target "$ENV{NVSHIM_ZIG_TARGET}")
if(NOT _target)
  message(FATAL_ERROR "zig-toolchain.cmake: NVSHIM_ZIG_TARGET is not set (see scripts/build-wheels.sh)")
endif()
string(REGEX REPLACE "-.*" "" _arch "${_target}")
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ${_arch})
set(CMAKE_C_COMPILER "$ENV{NVSHIM_ZIG_BIN}/${_target}-cc")
set(CMAKE_AR "$ENV{NVSHIM_ZIG_BIN}/${_target}-ar" CACHE FILEPATH "zig ar")
set(CMAKE_RANLIB "$ENV{NVSHIM_ZIG_BIN}/${_target}-ranlib" CACHE FILEPATH "zig ranlib")
# The host's strip knows the host's machine only: the files are stripped by the linker (-s).
set(CMAKE_STRIP "$ENV{NVSHIM_ZIG_BIN}/strip-nothing" CACHE FILEPATH "no strip: the linker strips")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-s")
# -z defs: a symbol the target glibc lacks fails the link, as in the executables.
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-s -Wl,-z,defs")
set(CMAKE_FIND_ROOT_PATH "$ENV{NVSHIM_DEPS_PREFIX}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
