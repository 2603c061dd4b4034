"""JIT clients beyond CuPy, one case a run (tests/gpu/jit_clients.sh runs each plain and under
`nvshim run` and compares):  python3 jit_clients.py CLIENT CASE

CLIENT: core (cuda.core Program, Linker, ObjectCode), bindings (cuda.bindings' raw NVRTC and
nvJitLink), numba (numba-cuda's C++ and LTO paths), jiterator (torch.cuda.jiterator).
CASE: seed (seed 002: cooperative groups + 49,408 bytes of static shared memory, no include
directory), good (cooperative groups, no include directory: fixed and runs), plain (a kernel
that needs nothing: nvshim says nothing).
Prints "ok ..." when it compiled (and ran), "error: <the exception or log>" when not."""
import sys

SEED = r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void k(const float *in, float *out) {
  __shared__ float tile[49408 / 4];
  cg::thread_block b = cg::this_thread_block();
  for (unsigned i = b.thread_rank(); i < 49408 / 4; i += b.size()) tile[i] = in[i];
  b.sync();
  if (b.thread_rank() == 0) { float s = 0; for (unsigned i = 0; i < 49408 / 4; i++) s += tile[i]; out[0] = s; }
}
'''
GOOD = r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void k(const float *in, float *out) {
  cg::thread_block b = cg::this_thread_block();
  out[b.thread_rank()] = in[b.thread_rank()] * 2.0f;
  b.sync();
}
'''
PLAIN = r'''
extern "C" __global__ void k(const float *in, float *out) { out[threadIdx.x] = in[threadIdx.x] * 2.0f; }
'''
# numba's ABI for a foreign device function: the result through the first pointer.
NUMBA_SEED = r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __device__ int twice(float *ret, float x) {
  __shared__ float tile[49408 / 4];
  cg::thread_block b = cg::this_thread_block();
  tile[b.thread_rank()] = x;
  b.sync();
  *ret = tile[(b.thread_rank() + 12351) % (49408 / 4)] * 2.0f;
  return 0;
}
'''
NUMBA_GOOD = r'''
#include <cooperative_groups.h>
extern "C" __device__ int twice(float *ret, float x) {
  cooperative_groups::this_thread_block().sync();
  *ret = x * 2.0f;
  return 0;
}
'''
NUMBA_PLAIN = r'''
extern "C" __device__ int twice(float *ret, float x) { *ret = x * 2.0f; return 0; }
'''


def say_error(e):
    text = str(e).replace("\n", " | ")
    # PyTorch puts the whole generated source first: keep the start and the end (the log).
    print("error: " + (text if len(text) <= 6000 else text[:1000] + " ... " + text[-5000:]))


def core(case):
    try:
        from cuda.core import Device, Program, ProgramOptions, Linker, LinkerOptions, ObjectCode
    except ImportError:
        from cuda.core.experimental import Device, Program, ProgramOptions, Linker, LinkerOptions, ObjectCode
    dev = Device()
    dev.set_current()
    arch = "sm_" + "".join(str(x) for x in dev.compute_capability)
    src = {"seed": SEED, "good": GOOD, "plain": PLAIN}[case]
    # Program -> cubin -> ObjectCode's kernel
    try:
        obj = Program(src, code_type="c++", options=ProgramOptions(arch=arch)).compile("cubin")
        obj.get_kernel("k")
        print("ok cubin", arch)
    except Exception as e:
        say_error(e)
    # relocatable PTX -> Linker (nvJitLink) -> cubin
    try:
        ptx = Program(src, code_type="c++", options=ProgramOptions(arch=arch, relocatable_device_code=True)).compile("ptx")
        linked = Linker(ptx, options=LinkerOptions(arch=arch)).link("cubin")
        linked.get_kernel("k")
        print("ok linked", arch)
    except Exception as e:
        say_error(e)


def bindings(case):
    from cuda.bindings import nvrtc, driver
    try:
        from cuda.bindings import nvjitlink
    except ImportError:
        nvjitlink = None
    err, = driver.cuInit(0)
    err, dev = driver.cuDeviceGet(0)
    err, major = driver.cuDeviceGetAttribute(driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)
    err, minor = driver.cuDeviceGetAttribute(driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)
    cc = "%d%d" % (major, minor)
    src = {"seed": SEED, "good": GOOD, "plain": PLAIN}[case].encode()

    def compile_(opts):
        err, prog = nvrtc.nvrtcCreateProgram(src, b"k.cu", 0, [], [])
        r, = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        err, n = nvrtc.nvrtcGetProgramLogSize(prog)
        log = b" " * max(n, 2)  # a 1-byte bytes object is a shared singleton
        nvrtc.nvrtcGetProgramLog(prog, log)
        return r, prog, log.decode(errors="replace").rstrip("\x00")

    r, prog, log = compile_([b"-arch=sm_" + cc.encode()])
    if r == nvrtc.nvrtcResult.NVRTC_SUCCESS:
        print("ok nvrtc cubin sm_" + cc)
    else:
        say_error("nvrtc %s: %s" % (r, log))
    if nvjitlink is None:
        return
    r, prog, log = compile_([b"-arch=compute_" + cc.encode(), b"-rdc=true"])
    if r != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        say_error("nvrtc rdc %s: %s" % (r, log))
        return
    err, n = nvrtc.nvrtcGetPTXSize(prog)
    ptx = b" " * max(n, 2)
    nvrtc.nvrtcGetPTX(prog, ptx)
    h = nvjitlink.create(1, ["-arch=sm_" + cc])
    try:
        nvjitlink.add_data(h, nvjitlink.InputType.PTX, ptx, len(ptx), "k.ptx")
        nvjitlink.complete(h)
        print("ok nvjitlink sm_" + cc)
    except Exception as e:
        n = nvjitlink.get_error_log_size(h)
        log = bytearray(n)
        nvjitlink.get_error_log(h, log)
        say_error("nvjitlink %s: %s" % (e, bytes(log).decode(errors="replace").rstrip("\x00")))
    finally:
        nvjitlink.destroy(h)


def numba(case):
    import os
    import tempfile
    import numpy as np
    if not hasattr(np, "row_stack"):
        # numba-cuda 0.30 with NumPy 2.5, which removed row_stack: not what is tested here.
        np.row_stack = np.vstack
    from numba import cuda
    src = {"seed": NUMBA_SEED, "good": NUMBA_GOOD, "plain": NUMBA_PLAIN}[case]
    d = tempfile.mkdtemp()
    path = os.path.join(d, "twice.cu")
    with open(path, "w") as f:
        f.write(src)
    twice = cuda.declare_device("twice", "float32(float32)")
    for lto in (False, True):
        try:
            @cuda.jit(link=[path], lto=lto)
            def kern(x, out):
                i = cuda.grid(1)
                if i < x.size:
                    out[i] = twice(x[i])
            x = np.arange(256, dtype=np.float32)
            out = cuda.device_array_like(x)
            kern[1, 256](cuda.to_device(x), out)
            ok = np.allclose(out.copy_to_host(), 2 * x)
            print(("ok" if ok else "wrong") + " numba lto=%s" % lto)
        except Exception as e:
            say_error("numba lto=%s: %s" % (lto, e))


def jiterator(case):
    import torch
    code = {
        "seed": "template <typename T> T big(T x) { __shared__ float tile[49408 / 4]; "
                "tile[threadIdx.x] = x; __syncthreads(); return T(tile[(threadIdx.x + 12351) % (49408 / 4)]); }",
        "good": "template <typename T> T big(T x) { return x * T(2); }",
        "plain": "template <typename T> T big(T x) { return x * T(2); }",
    }[case]
    try:
        fn = torch.cuda.jiterator._create_jit_fn(code)
        a = torch.rand(256, device="cuda")
        r = fn(a)
        print("ok jiterator" if case == "seed" or torch.allclose(r, a * 2) else "wrong jiterator")
    except Exception as e:
        say_error(e)


if __name__ == "__main__":
    {"core": core, "bindings": bindings, "numba": numba, "jiterator": jiterator}[sys.argv[1]](sys.argv[2])
