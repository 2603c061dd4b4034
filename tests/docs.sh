#!/bin/bash
# The documentation holds together: README.md is a front door of at most 300 lines; docs/README.md
# lists every file of docs/; every relative link of README.md, docs/*.md and src/README.md names a
# file that exists (and, with #anchor, a heading of that file, as GitHub makes anchors); every
# repository path written in backquotes (`src/model/arch.c`, `tests/e2e/link.sh`) exists.
# Prints each problem; exit 1 if any.
cd "$(dirname "$0")/.." || exit 2
exec python3 - "$@" <<'EOF'
import os, re, sys

bad = []
files = ["README.md", "src/README.md"] + sorted(
    os.path.join("docs", f) for f in os.listdir("docs") if f.endswith(".md"))

def strip_fences(text):
    """The lines of text outside ``` blocks, with their numbers."""
    out, fence = [], False
    for n, line in enumerate(text.split("\n"), 1):
        if line.startswith("```"):
            fence = not fence
            continue
        if not fence:
            out.append((n, line))
    return out

def anchors(path):
    """GitHub's anchors for the headings of a Markdown file."""
    seen, out = {}, set()
    for _, line in strip_fences(open(path, encoding="utf-8").read()):
        m = re.match(r"^#{1,6} +(.*?) *#*$", line)
        if not m:
            continue
        slug = m.group(1).strip().lower()
        slug = re.sub(r"[^\w\- ]", "", slug).replace(" ", "-")
        k = seen.get(slug, 0)
        seen[slug] = k + 1
        out.add(slug if k == 0 else "%s-%d" % (slug, k))
    return out

n_readme = open("README.md", encoding="utf-8").read().count("\n")
if n_readme > 300:
    bad.append("README.md: %d lines, more than 300: the manual belongs in docs/" % n_readme)

index = open("docs/README.md", encoding="utf-8").read()
for f in files:
    if f.startswith("docs/") and f != "docs/README.md":
        if "(" + os.path.basename(f) + ")" not in index:
            bad.append("docs/README.md: does not link %s" % f)

nlinks = npaths = 0
repo_path = re.compile(r"^(src|tests|config|scripts|wrappers|cmake|examples|docs)/[A-Za-z0-9_.+/-]*$")
for f in files:
    here = os.path.dirname(f)
    for n, line in strip_fences(open(f, encoding="utf-8").read()):
        code = re.findall(r"`([^`]+)`", re.sub(r"<!--.*?-->", "", line))
        for c in code:
            if repo_path.match(c):
                npaths += 1
                if not os.path.exists(c.rstrip("/")):
                    bad.append("%s:%d: `%s` does not exist" % (f, n, c))
        prose = re.sub(r"`[^`]*`|<!--.*?-->", "", line)
        for target in re.findall(r"\]\(([^)\s]+)\)", prose):
            if re.match(r"^[a-z]+:", target):
                continue
            nlinks += 1
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(here, path)) if path else f
            if not os.path.exists(dest):
                bad.append("%s:%d: link to %s: no such file" % (f, n, target))
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                bad.append("%s:%d: link to %s: %s has no such heading" % (f, n, target, dest))

for b in bad:
    print("docs: " + b)
if not bad:
    print("docs: %d files, %d links and %d paths resolve; README.md has %d lines"
          % (len(files), nlinks, npaths, n_readme))
sys.exit(1 if bad else 0)
EOF
