#!/usr/bin/env python3
"""Which runtime and driver API symbols a CUDA 12 toolkit declares that CUDA 13 removed or
changed, and how many of them nvshim's API table (config/api.ini) names.

    scripts/api-coverage.py --old OLD_INCLUDE --new NEW_INCLUDE [--table config/api.ini]
                            [--lib-old DIR]... [--list] [--missing]

OLD_INCLUDE is a CUDA 12 include directory: the nvidia-cuda-runtime-cu12 wheel's
nvidia/cuda_runtime/include (pip download nvidia-cuda-runtime-cu12==12.9.79, then unzip) holds
cuda.h, cuda_runtime_api.h, driver_types.h and the texture and surface headers. NEW_INCLUDE is
the toolkit's (/usr/local/cuda/include). Symbols are read from the runtime and driver API
headers with comments removed:
  removed   functions, macros, enum values, types and typedefs named in OLD's headers whose
            name appears nowhere in NEW's include tree (but for generated_cudart_removed_meta.h,
            which lists what was removed);
  fields    struct fields (cudaDeviceProp::clockRate) of a struct both declare, gone from NEW's;
  changed   functions both declare whose parameter types differ (the first declaration under
            the public name: #define NAME NAME_vN renames it, later ones are legacy entry points).
With --lib-old (the include directories of the CUDA 12.9 library wheels: nvidia-cufft-cu12
11.4.1.4, nvidia-cublas-cu12 12.9.1.4, nvidia-cusparse-cu12 12.5.10.65, each
nvidia/<lib>/include), also the cuFFT, cuBLAS and cuSPARSE names (CUFFT_*, cufft*, CUBLAS*,
cublas*, CUSPARSE_*, cusparse*) their headers declare and NEW's include tree does not.
A symbol is covered when the table has an [api NAME] section for it or lists it in `also`.
Prints the counts (and with --list every symbol, with --missing those not covered).
Exit status 0; 2 on bad arguments.
"""
import argparse
import os
import re
import sys

HEADERS = ["cuda_runtime_api.h", "cuda_runtime.h", "driver_types.h", "cuda.h", "texture_types.h",
           "surface_types.h", "cuda_texture_types.h", "cuda_surface_types.h",
           "texture_fetch_functions.h", "surface_functions.h", "channel_descriptor.h"]
API_NAME = re.compile(r"^(cuda[A-Z]\w*|cu[A-Z]\w*|CU[A-Za-z_]\w*|CUDA_\w+|CUDART_\w+|tex[1-3A-Z]\w*|"
                      r"surf[1-3A-Z]\w*|texture|surface|textureReference|surfaceReference)$")


LIB_HEADERS = ["cufft.h", "cufftXt.h", "cublas_api.h", "cublasLt.h", "cublas.h", "cusparse.h"]
LIB_NAME = re.compile(r"^(CUFFT_\w+|cufft[A-Z]\w*|CUBLAS\w+|cublas[A-Z]\w*|CUSPARSE_\w+|cusparse[A-Z]\w*)$")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def read(d, name):
    p = os.path.join(d, name)
    if not os.path.exists(p):
        return ""
    with open(p, encoding="utf-8", errors="replace") as f:
        return strip_comments(f.read())


def all_identifiers(d):
    ids = set()
    for root, _, files in os.walk(d):
        for f in files:
            # generated_cudart_removed_meta.h names what the runtime removed: not declared.
            if f.endswith("removed_meta.h"):
                continue
            if f.endswith((".h", ".hpp", ".cuh")) or "." not in f:
                try:
                    with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fp:
                        ids.update(re.findall(r"[A-Za-z_]\w*", strip_comments(fp.read())))
                except OSError:
                    pass
    return ids


def structs(text):
    """{struct name: [field names]} for `struct [attrs] NAME { ... }` blocks without nesting."""
    out = {}
    for m in re.finditer(r"\bstruct\s+(?:__\w+__\s+)*(\w+)\s*\{([^{}]*)\}", text):
        fields = []
        for decl in m.group(2).split(";"):
            decl = re.sub(r"\[[^\]]*\]", "", decl).strip()
            if not decl or decl.startswith("#"):
                continue
            decl = re.sub(r"#[^\n]*\n", "", decl + "\n").strip()
            names = re.findall(r"(\w+)\s*(?:,|$|:\s*\d+)", decl)
            fields.extend(n for n in names if not n.isdigit())
        out.setdefault(m.group(1), fields)
    return out


def prototypes(text):
    """{function: normalised parameter types} and {name: macro target} of the API headers."""
    protos, macros = {}, {}
    for m in re.finditer(r"^\s*#\s*define\s+(cu\w+)\s+(cu\w+_v\d+)\s*$", text, re.M):
        macros.setdefault(m.group(1), m.group(2))
    for m in re.finditer(r"\b(?:CUDARTAPI|CUDAAPI)\s+(\w+)\s*\(([^;{]*?)\)\s*(?:__\w+__\s*)*;", text, re.S):
        params = []
        for p in m.group(2).split(","):
            p = re.sub(r"\s+", " ", p).strip()
            p = re.sub(r"\bCUDART_CB\b|\bCUDA_CB\b|__dv\([^)]*\)", "", p)
            p = re.sub(r"=\s*\w+$", "", p).strip()
            words = re.findall(r"\w+|\*|\[|\]", p)
            if len(words) > 1 and re.match(r"\w+$", words[-1]) and words[-1] not in (
                    "int", "char", "long", "short", "float", "double", "void") and not (
                    words[-2] in ("unsigned", "signed", "long")):
                words = words[:-1]
            params.append(" ".join(words))
        protos.setdefault(m.group(1), tuple(params))
    return protos, macros


def table_names(path):
    names = set()
    in_also = False
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.strip()
            # An indented line continues the value above it (an `also` over several lines).
            if in_also and raw[:1] in (" ", "\t") and line and not line.startswith(";"):
                names.update(w for w in re.split(r"[\s,]+", line) if w)
                continue
            in_also = False
            m = re.match(r"\[api\s+([^\]]+)\]", line)
            if m:
                names.add(m.group(1).strip())
            m = re.match(r"also\s*=\s*(.*)", line)
            if m:
                names.update(w for w in re.split(r"[\s,]+", m.group(1)) if w)
                in_also = True
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--table", default=os.path.join(os.path.dirname(__file__), "..", "config", "api.ini"))
    ap.add_argument("--lib-old", action="append", default=[])
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--missing", action="store_true")
    a = ap.parse_args()
    if not os.path.exists(os.path.join(a.old, "cuda_runtime_api.h")) or \
       not os.path.exists(os.path.join(a.new, "cuda_runtime_api.h")):
        print("api-coverage: --old and --new must be include directories with cuda_runtime_api.h",
              file=sys.stderr)
        return 2
    old_text = "\n".join(read(a.old, h) for h in HEADERS)
    new_text = "\n".join(read(a.new, h) for h in HEADERS)
    new_ids = all_identifiers(a.new)
    removed = sorted({i for i in re.findall(r"[A-Za-z_]\w*", old_text)
                      if API_NAME.match(i) and i not in new_ids})
    old_structs, new_structs = structs(old_text), structs(new_text)
    fields = sorted(f"{s}::{f}" for s, fl in old_structs.items() if s in new_structs
                    for f in fl if f not in new_structs[s])
    old_p, old_m = prototypes(old_text)
    new_p, new_m = prototypes(new_text)
    changed = []
    for name in sorted(set(old_p) | set(old_m)):
        if name.endswith(tuple(f"_v{i}" for i in range(2, 10))) or name in removed:
            continue
        # The first declaration under the public name is the one a program gets (the macro
        # NAME -> NAME_vN renames it); later ones are the legacy entry points.
        o = old_p.get(name)
        n = new_p.get(name)
        if o is not None and n is not None and o != n:
            changed.append(name)
    libs = set()
    for d in a.lib_old:
        for h in LIB_HEADERS:
            libs.update(i for i in re.findall(r"[A-Za-z_]\w*", read(d, h)) if LIB_NAME.match(i))
    # CUFFT_NO_INLINE was a switch cufftXt.h read (#ifndef), for a program to define: not a name
    # it declared.
    libs = sorted(i for i in libs if i not in new_ids and i != "CUFFT_NO_INLINE")
    table = table_names(a.table)
    total = covered = 0
    groups = [("removed", removed), ("fields", fields), ("changed", changed)]
    if a.lib_old:
        groups.append(("libraries", libs))
    for title, syms in groups:
        got = [s for s in syms if s in table]
        total += len(syms)
        covered += len(got)
        print(f"{title}: {len(got)} of {len(syms)} in the table")
        for s in syms:
            if a.list or (a.missing and s not in table):
                print(f"  {'+' if s in table else '-'} {s}")
    print(f"total: {covered} of {total} in the table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
