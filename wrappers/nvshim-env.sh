#!/bin/sh
# Puts nvshim in front of nvcc for the current shell:
#   . /path/to/share/nvshim/nvshim-env.sh
# The same as `eval "$(nvshim env)"`, which it runs: nvshim's libexec directory (whose `nvcc` is
# nvshim) first on PATH; CUDACXX, PYTORCH_NVCC and CUDA_NVCC_EXECUTABLE pointing at that nvcc;
# CUDA_HOME, CUDA_PATH and CUDAToolkit_ROOT at the toolkit view (the real toolkit with nvshim as
# its bin/nvcc), so CMake (FindCUDA too), PyTorch extensions, CuPy, Meson, Makefiles and scripts
# that run $CUDA_HOME/bin/nvcc all go through nvshim. nvshim finds the real nvcc past itself.
_nvshim_here=$(cd "$(dirname "${BASH_SOURCE:-$0}")" 2>/dev/null && pwd)
_nvshim_exe="$_nvshim_here/../../bin/nvshim"
if [ -x "$_nvshim_exe" ] && _nvshim_lines=$("$_nvshim_exe" env); then
    eval "$_nvshim_lines"
else
    echo "nvshim-env.sh: no working nvshim at $_nvshim_exe" >&2
fi
unset _nvshim_here _nvshim_exe _nvshim_lines
