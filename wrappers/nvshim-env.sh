#!/bin/sh
# Puts nvshim in front of nvcc for the current shell:
#   . /path/to/share/nvshim/nvshim-env.sh
# It prepends nvshim's libexec directory (which holds an `nvcc` that is nvshim) to PATH and
# points CUDACXX and PYTORCH_NVCC at it, so CMake, PyTorch extensions and Makefiles that call
# `nvcc` all go through nvshim. nvshim finds the real nvcc past itself.
_nvshim_here=$(cd "$(dirname "${BASH_SOURCE:-$0}")" 2>/dev/null && pwd)
_nvshim_prefix=$(cd "$_nvshim_here/../.." && pwd)
if [ -x "$_nvshim_prefix/libexec/nvshim/bin/nvcc" ]; then
    PATH="$_nvshim_prefix/libexec/nvshim/bin:$PATH"
    CUDACXX="$_nvshim_prefix/libexec/nvshim/bin/nvcc"
    PYTORCH_NVCC="$CUDACXX"
    export PATH CUDACXX PYTORCH_NVCC
else
    echo "nvshim-env.sh: no nvshim under $_nvshim_prefix" >&2
fi
unset _nvshim_here _nvshim_prefix
