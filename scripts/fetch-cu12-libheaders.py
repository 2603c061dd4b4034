#!/usr/bin/env python3
"""Fetches CUDA 12.9's cuBLAS, cuFFT, cuSPARSE, cuSOLVER and cuRAND headers, and nothing else, from the package
index's pinned wheels, for tests/e2e/migrate.sh and compat_corpus.sh: `nvshim migrate`'s output
must build with CUDA 12.9's headers, and a unit that includes cublas_v2.h cannot be compiled
against 12.9's runtime headers with 13.0's cuBLAS headers (13.0's cublas_api.h, and cusolverDn.h,
need cudaEmulationStrategy and other 13.0-only names).

The wheels are large (cuBLAS 581 MB), their include/ members small (about 1 MB): the members are
read out of the wheel with HTTP range requests (the zip's central directory at its end, then each
header's local entry), never the whole file. What is checked:
  - the wheel is the index's file for the pinned version, and the index still gives it the
    pinned sha256 and size (the whole file's hash cannot be checked without the whole file);
  - each member read is checked against its CRC-32 in the central directory (zipfile does this on
    a member read to its end, and raises on a mismatch).
Layout: ${NVSHIM_TOOLKITS:-/var/tmp/nvshim-toolkits}/cu12-libs/nvidia/{cublas,cufft,cusparse,cusolver,curand}/include,
as the wheels have it. Idempotent (a package already there is not fetched again); a failed
download leaves the checks that need it to skip. Exit status 0 always.

    python3 scripts/fetch-cu12-libheaders.py
"""
import json
import os
import shutil
import sys
import urllib.request
import zipfile

# package, version (CUDA 12.9.1's), the x86_64 wheel's sha256 and size on the index, member prefix
PINS = [
    ("nvidia-cublas-cu12", "12.9.1.4",
     "453611eb21a7c1f2c2156ed9f3a45b691deda0440ec550860290dc901af5b4c2", 581242350,
     "nvidia/cublas/include/"),
    ("nvidia-cufft-cu12", "11.4.1.4",
     "c67884f2a7d276b4b80eb56a79322a95df592ae5e765cf1243693365ccab4e28", 200877592,
     "nvidia/cufft/include/"),
    ("nvidia-cusparse-cu12", "12.5.10.65",
     "73060ce019ac064a057267c585bf1fd5a353734151f87472ff02b2c5c9984e78", 366465088,
     "nvidia/cusparse/include/"),
    ("nvidia-cusolver-cu12", "11.7.5.82",
     "15da72d1340d29b5b3cf3fd100e3cd53421dde36002eda6ed93811af63c40d88", 338117415,
     "nvidia/cusolver/include/"),
    ("nvidia-curand-cu12", "10.3.10.19",
     "49b274db4780d421bd2ccd362e1415c13887c53c214f0d4b761752b8f9f6aa1e", 68295626,
     "nvidia/curand/include/"),
]
INDEX = "https://pypi.org/simple/"
TIMEOUT = 30
BLOCK = 1 << 18  # bytes per range request (a read-ahead block)
MAX_FETCH = 64 << 20  # never more than this per wheel (the headers are ~1 MB)


class RangeFile:
    """A read-only, seekable file over HTTP range requests, with a cache of BLOCK-sized blocks."""

    def __init__(self, url, size):
        self.url, self.size, self.pos = url, size, 0
        self.blocks = {}
        self.fetched = 0

    def seekable(self):
        return True

    def tell(self):
        return self.pos

    def seek(self, off, whence=0):
        base = {0: 0, 1: self.pos, 2: self.size}[whence]
        self.pos = max(0, base + off)
        return self.pos

    def _block(self, k):
        if k not in self.blocks:
            b = k * BLOCK
            e = min(self.size, b + BLOCK) - 1
            req = urllib.request.Request(self.url, headers={"Range": "bytes=%d-%d" % (b, e)})
            with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
                if r.status != 206:
                    raise OSError("the server ignored the range request (HTTP %d)" % r.status)
                data = r.read()
            if len(data) != e - b + 1:
                raise OSError("short range reply: %d bytes of %d" % (len(data), e - b + 1))
            self.fetched += len(data)
            if self.fetched > MAX_FETCH:
                raise OSError("more than %d bytes read: not a header-only fetch" % MAX_FETCH)
            self.blocks[k] = data
        return self.blocks[k]

    def read(self, n=-1):
        if n is None or n < 0:
            n = self.size - self.pos
        n = min(n, self.size - self.pos)
        out = bytearray()
        while n > 0:
            k, off = divmod(self.pos, BLOCK)
            chunk = self._block(k)[off:off + n]
            out += chunk
            self.pos += len(chunk)
            n -= len(chunk)
        return bytes(out)


def wheel_url(name, version, sha256, size):
    """The index's x86_64 wheel of NAME==VERSION, when it still has the pinned hash and size."""
    req = urllib.request.Request(INDEX + name + "/",
                                 headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
        index = json.load(r)
    prefix = name.replace("-", "_") + "-" + version + "-"
    for f in index.get("files", []):
        fn = f.get("filename", "")
        if fn.startswith(prefix) and fn.endswith("x86_64.whl"):
            if f.get("hashes", {}).get("sha256") != sha256 or f.get("size") != size:
                raise OSError("%s: the index gives another sha256 or size than the pinned one" % fn)
            return f["url"]
    raise OSError("%s==%s: no x86_64 wheel on the index" % (name, version))


def fetch(dest_root, name, version, sha256, size, prefix):
    dest = os.path.join(dest_root, prefix)
    done = os.path.join(dest_root, ".%s-%s" % (name, version))
    if os.path.exists(done):
        return True
    tmp = os.path.join(dest_root, ".tmp.%d" % os.getpid())
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        rf = RangeFile(wheel_url(name, version, sha256, size), size)
        n = 0
        with zipfile.ZipFile(rf) as z:
            for info in z.infolist():
                if not info.filename.startswith(prefix) or info.is_dir():
                    continue
                rel = info.filename[len(prefix):]
                if rel.startswith("/") or ".." in rel.split("/"):
                    raise OSError("unexpected member name %r" % info.filename)
                out = os.path.join(tmp, rel)
                os.makedirs(os.path.dirname(out), exist_ok=True)
                with z.open(info) as src, open(out, "wb") as dst:
                    shutil.copyfileobj(src, dst)  # a CRC mismatch raises zipfile.BadZipFile
                n += 1
        if n == 0:
            raise OSError("no member under %s" % prefix)
        shutil.rmtree(dest, ignore_errors=True)
        os.makedirs(os.path.dirname(dest.rstrip("/")), exist_ok=True)
        os.rename(tmp, dest.rstrip("/"))
        open(done, "w").close()
        print("fetch-cu12-libheaders: %s==%s: %d headers (%d bytes read of %d)" %
              (name, version, n, rf.fetched, size), file=sys.stderr)
        return True
    except Exception as e:  # offline, index changed, bad data: the checks that need it skip
        shutil.rmtree(tmp, ignore_errors=True)
        print("fetch-cu12-libheaders: could not fetch %s==%s (%s); the checks that need it will skip"
              % (name, version, e), file=sys.stderr)
        return False


def main():
    root = os.path.join(os.environ.get("NVSHIM_TOOLKITS") or "/var/tmp/nvshim-toolkits", "cu12-libs")
    try:
        os.makedirs(root, exist_ok=True)
    except OSError as e:
        print("fetch-cu12-libheaders: %s: %s" % (root, e), file=sys.stderr)
        return 0
    for pin in PINS:
        fetch(root, *pin)
    return 0


if __name__ == "__main__":
    sys.exit(main())
