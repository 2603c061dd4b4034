#!/bin/sh
# Puts libnvshim-preload.so in front of programs that compile CUDA at run time (NVRTC, JIT links):
#   /path/to/share/nvshim/nvshim-run.sh CMD ARGS...   runs one command with it, as
#                                                      `nvshim run -- CMD ARGS...` does
#   . /path/to/share/nvshim/nvshim-run.sh              (bash, zsh) adds it to LD_PRELOAD in this
#                                                      shell, for every program it starts
# Both find the library relative to this script (<prefix>/libexec/nvshim), so a moved prefix
# still works. Settings reach the library as NVSHIM_* variables or through nvshim's INI files.
_nvshim_here=$(cd "$(dirname "${BASH_SOURCE:-$0}")" 2>/dev/null && pwd)
_nvshim_prefix=$(cd "$_nvshim_here/../.." && pwd)
_nvshim_lib="$_nvshim_prefix/libexec/nvshim/libnvshim-preload.so"
if [ $# -gt 0 ]; then
    if [ -x "$_nvshim_prefix/bin/nvshim" ]; then
        exec "$_nvshim_prefix/bin/nvshim" run -- "$@"
    fi
    echo "nvshim-run.sh: no nvshim under $_nvshim_prefix" >&2
    exit 127
elif [ ! -r "$_nvshim_lib" ]; then
    echo "nvshim-run.sh: no libnvshim-preload.so under $_nvshim_prefix" >&2
else
    case ":${LD_PRELOAD:-}:" in
    *":$_nvshim_lib:"*) ;;
    *) LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$_nvshim_lib"; export LD_PRELOAD ;;
    esac
fi
unset _nvshim_here _nvshim_prefix _nvshim_lib
