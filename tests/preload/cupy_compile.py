"""CuPy's own NVRTC path (CuPy 14 loads libnvrtc with dlopen) on a machine without a GPU:
compiles FILE as cupy.RawModule would, for sm_ARCH (which CuPy would read from the device), and
prints "ok" or "error: ...".

    python3 tests/preload/cupy_compile.py FILE ARCH [OPTION...]
"""
import sys

from cupy.cuda import compiler

arch = sys.argv[2]
compiler._get_arch_for_options_for_nvrtc = lambda a=None: (f"-arch=sm_{arch}", "cubin")
src = open(sys.argv[1]).read()
try:
    compiler._compile_using_nvrtc_no_warning(src, options=tuple(sys.argv[3:]), arch=arch, jitify=False)
    print("ok")
except Exception as e:
    print("error:", type(e).__name__, " | ".join(str(e).splitlines()[:3]))
