#!/bin/bash
# Packaging: CPack's .deb has the documented fields and files, installs with dpkg into a private
# root (dpkg --root: its own package database, nothing of the machine's touched), and the
# installed nvshim passes a smoke test (compiles a kernel nvcc 13.0 alone rejects, reads its
# installed defaults, prints `nvshim env` for its own prefix, does not take its second copy for
# the real nvcc) before dpkg removes every file again. Then the manual: nvshim(1), `nvshim help`,
# the settings table and config/nvshim.ini name the same settings with the same text.
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
B=${NVSHIM_BUILD_DIR:-$(dirname "$NVSHIM")}
SRC=${NVSHIM_SOURCE_DIR:-$HERE/../..}
cd "$WORK" || exit 1
cp "$HERE/fixtures/kernel.cu" k.cu
export CUOBJDUMP=${CUOBJDUMP:-$(find_cuobjdump)}

# --- the manual agrees with the settings table
python3 - "$NVSHIM" "$B/share/man/man1/nvshim.1" "$SRC/config/nvshim.ini" >manual.out 2>&1 <<'EOF'
import re, subprocess, sys
nvshim, man_path, ini_path = sys.argv[1:]
run = lambda *a: subprocess.run([nvshim, *a], capture_output=True, text=True, check=True).stdout
# The table, as `nvshim config` prints it: every item, in order.
table = [l.split()[0] for l in run("config").splitlines() if re.match(r"^[a-z_]+ +=", l)]
# `nvshim help`: "  name  text" under "Settings".
help_text = run("help").split("\nSettings", 1)[1]
helps = {m.group(1): m.group(2) for m in re.finditer(r"^  ([a-z_]+) +(.*)$", help_text, re.M)}
# The man page: ".TP\n\fBname\fR (type; default: ...)\ntext" under .SH SETTINGS.
man = open(man_path).read()
settings = man.split(".SH SETTINGS", 1)[1].split(".SH ", 1)[0]
unescape = lambda s: s.replace("\\-", "-").replace("\\e", "\\").replace("\\&", "")
mans = {m.group(1): unescape(m.group(2)) for m in re.finditer(r"^\.TP\n\\fB([a-z_]+)\\fR \(.*\)\n(.*)$", settings, re.M)}
ini = re.findall(r"^;([a-z_]+) =", open(ini_path).read(), re.M)
problems = []
if not table: problems.append("nvshim config listed no settings")
if list(helps) != table: problems.append(f"help names {list(helps)} != table {table}")
if list(mans) != table: problems.append(f"man page names {list(mans)} != table {table}")
if ini != table: problems.append(f"config/nvshim.ini names {ini} != table {table}")
for name in table:
    if name in helps and name in mans and helps[name] != mans[name]:
        problems.append(f"{name}: help says {helps[name]!r}, the man page {mans[name]!r}")
if man != run("help", "--man"): problems.append("the built man page is not what nvshim help --man prints")
for line in run("help").split("\nSettings", 1)[0].splitlines()[3:]:
    usage = line.strip().split("  ")[0]
    if usage and "\\fB" + usage.replace("-", "\\-") + "\\fR" not in man:
        problems.append(f"the man page lacks the usage line {usage!r}")
print("\n".join(problems) or f"{len(table)} settings agree")
sys.exit(bool(problems))
EOF
check "nvshim(1), nvshim help, the settings table and config/nvshim.ini agree" test $? -eq 0
[ -s manual.out ] && sed 's/^/# /' manual.out
if command -v man >/dev/null; then
	out=$(MANWIDTH=80 man --warnings -l "$B/share/man/man1/nvshim.1" 2>&1 >man.txt)
	check "man renders nvshim(1) without a troff warning" test -z "$out" -a -s man.txt
	check "the rendered page has every section" contains "$(cat man.txt)" '^NAME' '^SYNOPSIS' '^COMMANDS' '^SETTINGS' '^FILES' '^ENVIRONMENT' '^EXAMPLES'
else
	skip "man renders nvshim(1)" "no man (Debian's man-db)"
fi

# --- the Debian package
if ! command -v cpack >/dev/null || ! command -v dpkg-deb >/dev/null; then
	skip "CPack .deb" "no cpack or dpkg-deb"
	finish
	exit
fi
cpack -G DEB -B "$WORK/pkg" --config "$B/CPackConfig.cmake" >cpack.out 2>&1
deb=$(ls "$WORK"/pkg/nvshim_*.deb 2>/dev/null)
check "cpack -G DEB makes nvshim_<version>_<arch>.deb" test $? -eq 0 -a -f "$deb"
[ -f "$deb" ] || { sed 's/^/# /' cpack.out; finish; exit; }
info=$(dpkg-deb -I "$deb")
check "control: package, version, architecture, section" contains "$info" '^ Package: nvshim$' \
	"^ Version: $("$NVSHIM" version | sed -n 's/^nvshim //p')\$" "^ Architecture: $(dpkg --print-architecture)\$" '^ Section: devel$'
check "control: depends on the C library (dpkg-shlibdeps, for nvshim-devices)" grep -q '^ Depends: .*libc6' <<<"$info"
files=$(dpkg-deb -c "$deb" | awk '{print $NF}')
check "data: the install tree under /usr" contains "$files" '^\./usr/bin/nvshim$' '^\./usr/libexec/nvshim/bin/nvcc$' \
	'^\./usr/libexec/nvshim/nvshim-devices$' '^\./usr/etc/nvshim.ini$' '^\./usr/share/man/man1/nvshim.1$' \
	'^\./usr/share/nvshim/nvshim-env.sh$' '^\./usr/share/doc/nvshim/README.md$' \
	'^\./usr/share/doc/nvshim/docs/README.md$' '^\./usr/share/doc/nvshim/docs/configuration.md$'

# Installed with dpkg into a root of its own.
R=$WORK/root
mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates" "$R/var/lib/dpkg/triggers"
: >"$R/var/lib/dpkg/status"
dpkg_r() { dpkg --root="$R" --force-not-root --force-depends "$@"; }
dpkg_r -i "$deb" >dpkg.out 2>&1
check "dpkg --root installs it" test $? -eq 0
check "dpkg records it as installed" grep -q 'install ok installed' <(dpkg_r -s nvshim 2>/dev/null)
out=$("$R/usr/libexec/nvshim/bin/nvcc" -c k.cu -o pkg.o -gencode arch=compute_50,code=sm_50 -gencode arch=compute_80,code=sm_80 2>&1)
check "smoke: the installed nvcc compiles a CUDA 12 list nvcc 13.0 rejects" test $? -eq 0 -a -s pkg.o
check "smoke: ... and says what it changed" grep -q 'dropped sm_50' <<<"$out"
if [ -n "$CUOBJDUMP" ]; then
	check "smoke: ... built for sm_80" test "$(elf_targets pkg.o)" = sm_80
fi
check "smoke: the installed defaults are read from /usr/etc" grep -q "$R/usr/etc/nvshim.ini (install)" <("$R/usr/bin/nvshim" config)
check "smoke: nvshim env names the installed nvcc" grep -qx "CUDACXX=$R/usr/libexec/nvshim/bin/nvcc; export CUDACXX" <("$R/usr/bin/nvshim" env)
rm -f pkg.o
out=$(unset CUDA_HOME CUDA_PATH; PATH="$R/usr/libexec/nvshim/bin:$(dirname "$NVCC"):$PATH" "$R/usr/bin/nvshim" -c k.cu -o pkg.o 2>&1)
check "smoke: /usr/bin/nvshim skips the package's second copy on PATH" test $? -eq 0 -a -s pkg.o -a -z "$out"
check "smoke: the man page is installed" test -s "$R/usr/share/man/man1/nvshim.1"
dpkg_r -r nvshim >>dpkg.out 2>&1
check "dpkg --root removes it, every file" test $? -eq 0 -a ! -e "$R/usr/bin/nvshim" -a ! -e "$R/usr/libexec/nvshim"
finish
