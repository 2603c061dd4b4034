"""nvshim from Python: where the installed executable is, and the environment it sets.

The nvshim-cuda wheel installs nvshim as a prefix inside the environment (bin/nvshim,
libexec/nvshim/bin/nvcc, etc/nvshim.ini, ...); this package only finds that executable.

    import subprocess, nvshim
    subprocess.run(["pip", "install", "--no-build-isolation", "."], env=nvshim.env(), check=True)
"""

import os
import subprocess
import sys
import sysconfig

__all__ = ["executable", "env", "main"]

_DIST = "nvshim-cuda"


def executable():
    """The path of the installed nvshim executable (a native program, not a script)."""
    try:
        from importlib.metadata import PackageNotFoundError, distribution
    except ImportError:  # Python 3.7
        distribution = None
    if distribution is not None:
        try:
            for f in distribution(_DIST).files or ():
                if f.as_posix().endswith("bin/nvshim") and f.name == "nvshim":
                    p = os.path.realpath(str(f.locate()))
                    if os.access(p, os.X_OK):
                        return p
        except PackageNotFoundError:
            pass
    for scheme_path in (sysconfig.get_path("scripts"), os.path.join(sys.prefix, "bin")):
        p = os.path.join(scheme_path, "nvshim")
        if os.access(p, os.X_OK):
            return p
    raise FileNotFoundError("nvshim is not installed in this Python environment "
                            "(pip install nvshim-cuda)")


def _parse_env(text):
    """NAME=VALUE pairs from `nvshim env --shell=sh` lines: NAME='value'; export NAME."""
    out = {}
    for line in text.splitlines():
        name, sep, rest = line.partition("=")
        if not sep or not name.isidentifier():
            continue
        value = rest.rsplit("; export ", 1)[0]
        out[name] = _unquote(value)
    return out


def _unquote(s):
    """The value of a word quoted by nvshim (single quotes, '\\'' for a quote, or bare)."""
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "'":
            j = s.index("'", i + 1)
            out.append(s[i + 1:j])
            i = j + 1
        elif c == "\\" and i + 1 < len(s):
            out.append(s[i + 1])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def env(base=None):
    """The environment that puts nvshim in front of nvcc, for subprocess: a copy of `base`
    (os.environ when None) with what `nvshim env` exports (PATH, CUDACXX, PYTORCH_NVCC,
    CUDA_NVCC_EXECUTABLE, and CUDA_HOME, CUDA_PATH, CUDAToolkit_ROOT naming the toolkit view)."""
    e = dict(os.environ if base is None else base)
    out = subprocess.run([executable(), "env", "--shell=sh"], env=e, check=True,
                         stdout=subprocess.PIPE, universal_newlines=True).stdout
    e.update(_parse_env(out))
    return e


def main(argv=None):
    """Runs nvshim with argv (sys.argv[1:] when None) in place of this process."""
    args = sys.argv[1:] if argv is None else list(argv)
    exe = executable()
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(exe, ["nvshim"] + args)
