#!/bin/bash
# The memory budget (memory_budget, buildwide/memgate.h): nvcc's heavy stages start only when
# their expected peak fits what the budget leaves. A toolkit whose cicc first holds 160 MiB
# (a small C program in front of the real cicc) makes the stages heavy enough to count: several
# compiles at once under a budget below their sum run their cicc stages within it (the journal
# of the stages and a sampler of the compilers' resident memory say so), every object is built,
# the peaks are learned; a stage killed for memory (injected with NVSHIM_FAULT=memory_kill, and
# a real out-of-memory kill where a memory cgroup can be made) runs again and the object is the
# same; explain and stats show the budget and what it cost; a malformed budget is a warning.
NVSHIM=$1 NVCC=$2
. "$(dirname "$0")/lib.sh"
B=${NVSHIM_BUILD_DIR:-$(dirname "$NVSHIM")}
NV=$B/libexec/nvshim/bin/nvcc
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$WORK" || exit 1
cp "$HERE/fixtures/kernel.cu" k.cu
unset CUDACXX NVCC_CCBIN MAKEFLAGS MFLAGS
CUDA=$(cd "$(dirname "$NVCC")/.." && pwd)
export NVSHIM_CACHE_DIR=$WORK/cache
J=$WORK/cache/threads/mem/journal
# same_object A B: both built, the same past nvcc's temporary names
# (where they differ, the first bytes that do and the temporary names are printed as comments)
same_object() {
	test -s "$1" && test -s "$2" && cmp -s <(normalise "$1") <(normalise "$2") && return 0
	cmp -l <(normalise "$1") <(normalise "$2") 2>&1 | head -5 | sed 's/^/# /'
	strings -a "$1" "$2" | grep -a tmpxft | sed 's/^/# /'
	return 1
}

# cicc behind a program that holds HOG_MB of touched memory for a moment, then becomes cicc
# (exec: the same process, so its peak is the stage's).
make_toolkit tk
cat >hog.c <<EOF
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	(void)argc;
	const char *mb = getenv("HOG_MB");
	size_t n = (size_t)atoi(mb ? mb : "160") << 20;
	volatile char *p = malloc(n);
	for (size_t i = 0; p && i < n; i += 4096)
		p[i] = 1;
	usleep(300000);
	argv[0] = "$CUDA/nvvm/bin/cicc";
	execv(argv[0], argv);
	return 127;
}
EOF
cc -O1 -o hog hog.c || exit 1
rm tk/nvvm/bin/cicc
cp hog tk/nvvm/bin/cicc
export NVSHIM_NVCC=$WORK/tk/bin/nvcc

# ---- settings and explain ----
out=$("$NVSHIM" explain -c k.cu -o k.o -arch=sm_80 2>&1)
check "explain: the budget, auto by default" contains "$out" "^memory    : heavy stages start when their expected peak fits a budget of [0-9]* MiB (auto: the memory available"
check "explain: the estimates per kind of stage" contains "$out" "^estimates : cicc 6144 MiB (the default, at most half the budget), ptxas 1024 MiB"
out=$(NVSHIM_MEMORY_BUDGET=24G "$NVSHIM" explain -c k.cu -o k.o -arch=sm_80 2>&1)
check "explain: memory_budget = 24G" contains "$out" "budget of 24576 MiB (memory_budget = 24G)"
out=$(NVSHIM_MEMORY_BUDGET=50% "$NVSHIM" explain -c k.cu -o k.o -arch=sm_80 2>&1)
check "explain: a percentage of the machine's memory" contains "$out" "MiB (memory_budget = 50%)"
out=$(NVSHIM_MEMORY_BUDGET=off "$NVSHIM" explain -c k.cu -o k.o -arch=sm_80 2>&1)
check "explain: off" contains "$out" "^memory    : no budget"
out=$(NVSHIM_MEMORY_BUDGET=lots "$NV" -c k.cu -o bad.o -arch=sm_80 2>&1)
check "a malformed budget: one warning, the compile goes on without one" \
	contains "$out" "memory_budget: 'lots' is not a size"
check "... and the object is built" test -s bad.o
check "... with no stage gated" test ! -e "$J"

# ---- one compile: the stages are recorded and their peaks learned ----
"$NV" -c k.cu -o one.o -arch=sm_80
check "a compile under the default budget builds its object" test -s one.o
check "... its heavy stages are in the journal" grep -q "	cicc	" "$J"
peak=$(awk -F'\t' '$3 == "cicc" { print $4 }' "$J" | tail -1)
check "... cicc's peak (from the stage's rusage) is at least what it held: ${peak:-?} KiB" \
	test "${peak:-0}" -ge $((160 * 1024))
check "... and learned, per input content, target and stage" \
	sh -c "ls '$WORK/cache/threads/peaks' | grep -q '^cicc-'"
NVSHIM_LOG_FILE=$WORK/log "$NV" -c k.cu -o one.o -arch=sm_80
check "the log line lists the compile's heavy stages" \
	grep -q '"memory_stages":\[.*"cicc: peak [0-9]* MiB, expected [0-9]* MiB, waited [0-9]* ms for memory, budget [0-9]* MiB' log
est=$(awk -F'\t' '$3 == "cicc" { print $5 }' "$J" | tail -1)
check "the same compile again expects the learned peak (${est:-?} KiB, not the 6 GiB default)" \
	test "${est:-0}" -lt $((1024 * 1024))

# ---- several compiles at once under a budget below their sum ----
# Each cicc holds 160 MiB and more (cicc itself); four at once would need about 0.8 GiB. With
# the peaks learned (above: the same source), a 420 MiB budget lets two run at once.
rm -f "$J"
for i in 1 2 3 4; do sed "s/kernel/kernel$i/" k.cu >k$i.cu; done
# learn the four sources' peaks first, one at a time
for i in 1 2 3 4; do NVSHIM_MEMORY_BUDGET=420M "$NV" -c k$i.cu -o k$i.o -arch=sm_80; done
rm -f "$J" k?.o
# a sampler of the summed resident memory (KiB) of this suite's compilers (descendants of this
# shell: the machine may be compiling other things), every 50 ms
( while [ ! -e stop ]; do
	ps -eo pid=,ppid=,rss=,comm= | awk -v top=$$ '
		{ parent[$1] = $2; rss[$1] = $3; comm[$1] = $4 }
		END {
			for (p in comm) {
				if (comm[p] != "cicc" && comm[p] != "ptxas" && comm[p] != "cudafe++" && comm[p] != "cc1plus")
					continue
				for (q = p; q > 1 && q != top; q = parent[q]) ;
				if (q == top) s += rss[p]
			}
			print s + 0
		}'
	sleep 0.05
done >samples ) &
sampler=$!
pids=()
for i in 1 2 3 4; do
	NVSHIM_MEMORY_BUDGET=420M "$NV" -c k$i.cu -o k$i.o -arch=sm_80 &
	pids+=($!)
done
wait "${pids[@]}"
touch stop
wait "$sampler"
check "four compiles at once under 420M: every object is built" \
	test -s k1.o -a -s k2.o -a -s k3.o -a -s k4.o
most=$(sort -n samples | tail -1)
check "... the compilers' summed resident memory, sampled, stayed within 420 MiB (most: $((most / 1024)) MiB)" \
	test "$most" -le $((420 * 1024))
atonce=$(awk -F'\t' '$3 == "cicc" { print $1, 1; print $2, -1 }' "$J" | sort -n -k1,1 -k2,2n |
	awk '{ n += $2; if (n > m) m = n } END { print m + 0 }')
check "... cicc stages ran side by side where they fit (most at once: $atonce)" test "$atonce" -ge 1 -a "$atonce" -le 2
summary=$(NVSHIM_BUILD_ID=x "$NVSHIM" stats 2>&1)
check "stats: the memory record" contains "$summary" "^memory (nvcc's heavy stages under the budget" \
	"heavy stages; at most .* GiB at once" "waited for memory (.* s in all); 0 killed for memory"
json=$(NVSHIM_BUILD_ID=x "$NVSHIM" stats --json 2>&1)
check "stats --json: the memory record, the same figures" python3 -c '
import json, sys
m = json.loads(sys.argv[1])["memory"]["recorded"]
assert m["stages"] > 0 and m["peak_sum_kib"] >= m["largest_kib"] > 0 and m["largest_kind"], m
assert m["budget_kib"] == 420 * 1024 and m["kills"] == 0, m
' "$json"

# ---- a stage killed for memory runs again ----
rm -f "$J" kill.o
out=$(NVSHIM_FAULT=memory_kill "$NV" -c k.cu -o kill.o -arch=sm_80 2>&1)
status=$?
check "a cicc killed (SIGKILL, injected): the compile passes" test "$status" = 0
check "... with a note" contains "$out" "^nvshim note    : cicc was killed for memory (peak [0-9]* MiB so far); it runs again alone once memory is free \[memory.rerun\]"
check "... the object is the one a compile not killed builds" same_object kill.o one.o
check "... the journal has the kill and the rerun" \
	sh -c "grep -q '	cicc	.*	k	[0-9]*$' '$J' && grep -q '	cicc	.*	r	[0-9]*$' '$J'"

# A real out-of-memory kill: a memory cgroup (v2, else v1) this suite can make and join.
cg=
if [ -w /sys/fs/cgroup/cgroup.subtree_control ] && grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
	cg=/sys/fs/cgroup/nvshim-memory-$$
	mkdir "$cg" 2>/dev/null && echo $((900 << 20)) >"$cg/memory.max" && echo 0 >"$cg/memory.swap.max" 2>/dev/null || cg=
elif [ -w /sys/fs/cgroup/memory ]; then
	cg=/sys/fs/cgroup/memory/nvshim-memory-$$
	mkdir "$cg" 2>/dev/null && echo $((900 << 20)) >"$cg/memory.limit_in_bytes" || cg=
	[ -n "$cg" ] && { echo $((900 << 20)) >"$cg/memory.memsw.limit_in_bytes"; } 2>/dev/null
fi
if [ -n "$cg" ]; then
	rm -f "$J" oom?.o
	# two compiles whose cicc holds 600 MiB each, in 900 MiB, with a budget that lets both start
	# (a wrong budget: the kernel kills one; it runs again alone)
	sh -c "echo \$\$ >'$cg/cgroup.procs'; for i in 1 2; do HOG_MB=600 NVSHIM_MEMORY_BUDGET=100G '$NV' -c k\$i.cu -o oom\$i.o -arch=sm_80 2>>oom.err & done; wait"
	check "a real out-of-memory kill in a 900 MiB cgroup: both objects are built" test -s oom1.o -a -s oom2.o
	if grep -q "	cicc	.*k" "$J"; then
		check "... the kill was seen and the stage ran again" grep -q "	cicc	.*	o*rk*	[0-9]*$" "$J"
		check "... with the note" grep -q "\[memory.rerun\]" oom.err
	else
		skip "... the kill was seen and the stage ran again" "the kernel killed nothing (the two did not overlap)"
	fi
	rmdir "$cg" 2>/dev/null
else
	skip "a real out-of-memory kill in a memory cgroup" "no memory cgroup can be made here"
fi

# ---- fail open ----
out=$(NVSHIM_FAULT=memory "$NV" -c k.cu -o fault.o -arch=sm_80 2>&1)
check "a fault in the budget's step: the compile runs as nvcc's" test -s fault.o
chmod 000 cache/threads/mem 2>/dev/null
"$NV" -c k.cu -o locked.o -arch=sm_80 2>/dev/null
check "a ledger that cannot be used: the compile runs" test -s locked.o
chmod 700 cache/threads/mem
finish
