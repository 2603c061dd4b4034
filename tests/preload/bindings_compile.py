"""cuda.bindings' raw NVRTC, the way cuda-python programs compile: python3 bindings_compile.py
NVRTC-LIBRARY FILE OPTION...  The library is loaded first (RTLD_GLOBAL), so that cuda.bindings,
which finds NVRTC through cuda-pathfinder, takes that one, as it does the wheel's in a
site-packages directory. Prints "result N" and the program log between log-begin and log-end."""
import ctypes
import os
import sys

ctypes.CDLL(sys.argv[1], mode=os.RTLD_GLOBAL)
from cuda.bindings import nvrtc  # noqa: E402

src = open(sys.argv[2], "rb").read()
opts = [o.encode() for o in sys.argv[3:]]
err, prog = nvrtc.nvrtcCreateProgram(src, os.path.basename(sys.argv[2]).encode(), 0, [], [])
r, = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
err, n = nvrtc.nvrtcGetProgramLogSize(prog)
log = b" " * max(n, 2)  # a 1-byte bytes object is a shared singleton: never write into one
nvrtc.nvrtcGetProgramLog(prog, log)
print("result", int(r))
print("log-begin")
print(log.split(b"\0", 1)[0].decode(errors="replace"))
print("log-end")
