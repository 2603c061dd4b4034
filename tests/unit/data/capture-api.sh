#!/bin/bash
# Captures what the compilers print for the CUDA 12 era fixtures of tests/e2e/fixtures/api on
# CUDA 13 (tests/unit/test_api.c reads them): nvcc 13.0's front end on the runtime (.cu) and
# driver (.cpp) fixtures, and g++ and clang++ on the driver fixture, run in the fixtures' folder
# so that the file names are as a build prints them.
#   tests/unit/data/capture-api.sh [NVCC]
set -u
here=$(cd "$(dirname "$0")" && pwd)
nvcc=${1:-/usr/local/cuda/bin/nvcc}
inc=$(dirname "$(dirname "$nvcc")")/include
cd "$here/../../e2e/fixtures/api" || exit 1
v=$("$nvcc" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
LC_ALL=C "$nvcc" -c old_runtime.cu -o /dev/null 2>"$here/api-nvcc-$v-runtime.txt"
LC_ALL=C "$nvcc" -c old_driver.cpp -o /dev/null 2>"$here/api-nvcc-$v-driver.txt"
# C (gcc): managed memory calls with an int device, cuFFT's removed result codes
{ LC_ALL=C gcc -I"$inc" -c ../compat/advise_c.c -o /dev/null; LC_ALL=C gcc -I"$inc" -c ../compat/fft_c.c -o /dev/null; } 2>"$here/api-gcc-c.txt"
# calls written over several lines (a fixture of the compatibility layer's)
LC_ALL=C "$nvcc" -c -arch=sm_90 ../compat/multiline.cu -o /dev/null 2>"$here/api-nvcc-$v-multiline.txt"
LC_ALL=C g++ -I"$inc" -c old_driver.cpp -o /dev/null 2>"$here/api-gcc-driver.txt"
LC_ALL=C clang++ -I"$inc" -c old_driver.cpp -o /dev/null 2>"$here/api-clang-driver.txt"
# gcc as a UTF-8 terminal shows it: its quotes are ‘’.
LC_ALL=C.UTF-8 g++ -I"$inc" -c old_driver.cpp -o /dev/null 2>"$here/api-gcc-utf8-driver.txt"
exit 0
