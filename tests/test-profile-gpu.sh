# test-profile-gpu.sh - `fuseprof profile` on a GPU (skips with 77 without
# one): a CUDA program built here with nvcc, which knows nothing of
# fuseprof (tests/profile-app.cu), profiled: its kernel count, demangled
# names, range paths (push/pop, start/end, a domain's), samples per range
# instance; the same program forking (two processes into one run); one
# killed with SIGKILL mid-loop (what it committed stays, its row reads
# killed); and, when PyTorch is there, a LayerNorm module's kernels in its
# range (tests/profile-torch.py).
. "${srcdir:-.}/tests/setup"

if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no GPU" >&2
	exit 77
fi
gpu_lock
: "${NVCC:=nvcc}"
app="$tmp/profile-app"
# shellcheck disable=SC2086 # NVCC_GENCODE is a list of flags
"$NVCC" ${NVCC_GENCODE:-} -o "$app" "$srcdir/tests/profile-app.cu" -ldl ||
	fail "cannot build tests/profile-app.cu with $NVCC"
db="$tmp/p.db"
q() { "$FUSEPROF" query --db "$db" --format csv "$1" | tail -n 1 | tr -d '\r'; }
qrun() { q "$(printf "$1" "$run")"; }

# One process: 12 kernels; the ops and their samples.
expect_exit 0 "$FUSEPROF" profile --db "$db" --tag plain -- "$app" plain
cat "$tmp/err" >&2
run=$(q "SELECT run_id FROM v_runs WHERE tag = 'plain'")
[ "$(qrun "SELECT status || ' ' || kind FROM v_runs WHERE run_id = %s")" = "complete profile" ] ||
	fail "run: $(qrun "SELECT status, kind, note FROM v_runs WHERE run_id = %s")"
grep -q "1 process, 5 ops, 12 kernels seen, 12 recorded (0 filtered, 0 over --max-kernels), 0 dropped" "$tmp/err" ||
	fail "summary: $(cat "$tmp/err")"
[ "$(qrun "SELECT count(*) FROM launches l JOIN ops o ON o.id = l.op_id WHERE o.run_id = %s")" = 12 ] ||
	fail "launches stored"
for op in 'step/copy 3 1' 'step/scale 3 2' 'phase 1 1' 'app_range 1 1'; do
	set -- $op
	got=$(qrun "SELECT reps || ' ' || launches FROM v_ops WHERE run_id = %s AND workload = '$1'")
	[ "$got" = "$2 $3" ] || fail "op $1: reps and launches '$got', wanted '$2 $3'"
done
# (CSV quotes a field with commas)
[ "$(qrun "SELECT name FROM v_kernels WHERE run_id = %s AND workload = 'step/copy'")" = \
	'"copy_kernel(float*, float const*, int)"' ] || fail "demangled name: $(qrun "SELECT name FROM v_kernels WHERE run_id = %s AND workload = 'step/copy'")"
[ "$(qrun "SELECT launches FROM v_kernels WHERE run_id = %s AND workload = 'step/scale'")" = 2 ] ||
	fail "scale_kernel: launches per instance"
[ "$(qrun "SELECT count(*) FROM v_ops WHERE run_id = %s AND workload = 'fill_kernel'")" = 1 ] ||
	fail "fill_kernel outside any range is not an op of its own"
[ "$(qrun "SELECT count(*) FROM ranges WHERE run_id = %s")" = 11 ] ||
	fail "range instances: $(qrun "SELECT group_concat(path) FROM ranges WHERE run_id = %s")"
[ "$(qrun "SELECT domain FROM ranges WHERE run_id = %s AND name = 'app_range'")" = app ] ||
	fail "the domain of app_range"
[ "$(qrun "SELECT count(*) FROM launches l JOIN ops o ON o.id = l.op_id WHERE o.run_id = %s AND l.end_ns > l.start_ns AND l.tid > 0")" = 12 ] ||
	fail "launch times or threads"
expect_exit 0 "$FUSEPROF" export --db "$db" plain
"$top_builddir/tests/jsoncheck" <"$tmp/out" >"$tmp/check" || fail "the trace is not valid"
grep -qx 'kernel 12' "$tmp/check" || fail "kernel slices: $(cat "$tmp/check")"

# The kernel filter and the limit.
expect_exit 0 "$FUSEPROF" profile --db "$db" --tag filtered --kernel-filter '^scale_' --max-kernels 4 -- "$app" plain
run=$(q "SELECT run_id FROM v_runs WHERE tag = 'filtered'")
[ "$(qrun "SELECT kernels_seen || ' ' || kernels_recorded || ' ' || kernels_filtered || ' ' || kernels_over_limit FROM procs WHERE run_id = %s")" = "12 4 6 2" ] ||
	fail "filter and limit: $(qrun "SELECT kernels_seen, kernels_recorded, kernels_filtered, kernels_over_limit FROM procs WHERE run_id = %s")"

# Range patterns: the kernels of step/scale alone (6), then of step and
# what it holds (9); the device: all of device 0, none of a device 7.
expect_exit 0 "$FUSEPROF" profile --db "$db" --tag scale --nvtx-include 'step/sc*' -- "$app" plain
run=$(q "SELECT run_id FROM v_runs WHERE tag = 'scale'")
[ "$(qrun "SELECT kernels_recorded || ' ' || kernels_filtered FROM procs WHERE run_id = %s")" = "6 6" ] ||
	fail "--nvtx-include step/sc*: $(qrun "SELECT kernels_recorded, kernels_filtered FROM procs WHERE run_id = %s")"
[ "$(qrun "SELECT group_concat(workload) FROM v_ops WHERE run_id = %s")" = "step/scale" ] ||
	fail "--nvtx-include step/sc*: ops $(qrun "SELECT group_concat(workload) FROM v_ops WHERE run_id = %s")"
expect_exit 0 "$FUSEPROF" profile --db "$db" --tag step --nvtx-include step --nvtx-include nothing -- "$app" plain
run=$(q "SELECT run_id FROM v_runs WHERE tag = 'step'")
[ "$(qrun "SELECT kernels_recorded || ' ' || kernels_filtered FROM procs WHERE run_id = %s")" = "9 3" ] ||
	fail "--nvtx-include step: $(qrun "SELECT kernels_recorded, kernels_filtered FROM procs WHERE run_id = %s")"
expect_exit 0 "$FUSEPROF" profile --db "$db" --tag dev0 --device 0 -- "$app" plain
run=$(q "SELECT run_id FROM v_runs WHERE tag = 'dev0'")
[ "$(qrun "SELECT kernels_recorded || ' ' || kernels_filtered FROM procs WHERE run_id = %s")" = "12 0" ] ||
	fail "--device 0: $(qrun "SELECT kernels_recorded, kernels_filtered FROM procs WHERE run_id = %s")"
"$FUSEPROF" profile --db "$db" --tag dev7 --device 7 -- "$app" plain >/dev/null 2>&1 || :
run=$(q "SELECT run_id FROM v_runs WHERE tag = 'dev7'")
[ "$(qrun "SELECT kernels_recorded || ' ' || kernels_filtered FROM procs WHERE run_id = %s")" = "0 12" ] ||
	fail "--device 7: $(qrun "SELECT kernels_recorded, kernels_filtered FROM procs WHERE run_id = %s")"

# Two processes (a fork before CUDA) into one run.
expect_exit 0 "$FUSEPROF" profile --db "$db" --tag forked -- "$app" fork
run=$(q "SELECT run_id FROM v_runs WHERE tag = 'forked'")
[ "$(qrun "SELECT count(*) FROM procs WHERE run_id = %s AND status = 'complete' AND kernels_recorded = 12")" = 2 ] ||
	fail "two processes: $(qrun "SELECT group_concat(pid || ':' || status || ':' || kernels_recorded) FROM procs WHERE run_id = %s")"
[ "$(qrun "SELECT reps FROM v_ops WHERE run_id = %s AND workload = 'step/copy'")" = 6 ] || fail "step/copy over two processes"
[ "$(qrun "SELECT count(DISTINCT s.pid) FROM samples s JOIN ops o ON o.id = s.op_id WHERE o.run_id = %s")" = 2 ] ||
	fail "samples of two pids"

# Killed with SIGKILL after a periodic commit: what it committed stays.
"$FUSEPROF" profile --db "$db" --tag killed -- "$app" loop "$tmp/pid" >"$tmp/kout" 2>"$tmp/kerr" &
fp=$!
i=0
n=0
while [ "${n:-0}" -lt 100 ]; do
	sleep 0.2
	n=$(q "SELECT coalesce(max(kernels_recorded), 0) FROM procs p JOIN runs r ON r.id = p.run_id WHERE r.tag = 'killed' AND p.committed_at IS NOT NULL" 2>/dev/null || echo 0)
	i=$((i + 1))
	[ $i -lt 150 ] || { kill -9 "$(cat "$tmp/pid")" 2>/dev/null; wait $fp; fail "no commit within 30 s"; }
done
kill -9 "$(cat "$tmp/pid")"
set +e
wait $fp
rc=$?
set -e
cat "$tmp/kerr" >&2
[ "$rc" = 137 ] || fail "fuseprof exited $rc after its program's SIGKILL, wanted 137"
run=$(q "SELECT run_id FROM v_runs WHERE tag = 'killed'")
[ "$(qrun "SELECT status FROM procs WHERE run_id = %s")" = killed ] || fail "the process row is not killed"
kept=$(qrun "SELECT kernels_recorded FROM procs WHERE run_id = %s")
[ "$kept" -ge "$n" ] || fail "kept $kept kernels, $n were committed before the kill"
[ "$(qrun "SELECT count(*) FROM launches l JOIN ops o ON o.id = l.op_id WHERE o.run_id = %s")" = "$kept" ] ||
	fail "launches stored differ from the committed count"
[ "$(qrun "SELECT reps FROM v_ops WHERE run_id = %s AND workload = 'loop/iter'")" = "$kept" ] ||
	fail "loop/iter samples"
[ "$(qrun "SELECT status FROM v_runs WHERE run_id = %s")" = aborted ] || fail "run status"
grep -q "killed before finishing" "$tmp/kerr" || fail "the summary does not say a process was killed"
[ "$(q 'PRAGMA integrity_check')" = ok ] || fail "integrity check"

# Counters (--metrics roofline): every kernel of plain counted; the
# copies of big move 2 x 256 MB each, which the DRAM bytes (read, written
# and written back) must give within 3 %.
expect_exit 0 "$FUSEPROF" profile --db "$db" --tag counted --metrics roofline -- "$app" plain
cat "$tmp/err" >&2
grep -q "12 recorded (0 filtered, 0 over --max-kernels), 0 dropped, 12 counted (roofline)" "$tmp/err" ||
	fail "counted summary: $(cat "$tmp/err")"
run=$(q "SELECT run_id FROM v_runs WHERE tag = 'counted'")
# The database had no ceilings: the counted run measured its GPU's, so its
# ops have their roofs (the second counted run below reuses them).
grep -q "measuring the ceilings of .* (GPU-.*), which the database has none of" "$tmp/err" ||
	fail "no ceilings measured for a counted run: $(cat "$tmp/err")"
[ "$(qrun "SELECT count(*) FROM v_roofline WHERE run_id = %s AND workload = 'step/scale' AND dram_bw > 1e11 AND peak_flop_rate > 1e12")" = 1 ] ||
	fail "step/scale has no roofs: $(qrun "SELECT dram_bw, peak_flop_rate FROM v_roofline WHERE run_id = %s AND workload = 'step/scale'")"
[ "$(qrun "SELECT counters FROM runs WHERE id = %s")" = roofline ] || fail "the run's counters"
[ "$(qrun "SELECT count(*) FROM v_kernels WHERE run_id = %s AND ncounters > 0")" = 5 ] ||
	fail "kernel slots with counters: $(qrun "SELECT group_concat(workload || ':' || ncounters) FROM v_kernels WHERE run_id = %s")"
# step/scale: two launches a sample, so its DRAM reads are twice one's.
# Each scale reads and writes 4 MB (from a clean L2: flushed before it).
got=$(qrun "SELECT round(dram_read_bytes / 4194304.0, 2) FROM v_kernels WHERE run_id = %s AND workload = 'step/scale'")
awk -v g="$got" 'BEGIN { exit !(g > 1.9 && g < 2.1) }' || fail "step/scale DRAM reads per sample: $got x 4 MB, wanted 2"
# Counted launches keep the device pointers among their arguments
# (launches.ptrs, a JSON array of [pointer, bytes to its allocation's
# end] in parameter order): copy(b, a), two scale(b), fill(c), add(c, a,
# b), copy(c, a), each buffer 4 MB. The buffers link the kernels: scale's
# is copy's destination, add reads copy's source and destination; a
# timing-only run reads none.
lq() { qrun "SELECT $1 FROM launches l JOIN kernels k ON k.id = l.kernel_id JOIN ops o ON o.id = l.op_id WHERE o.run_id = %s AND $2"; }
[ "$(lq "count(*)" "l.ptrs IS NOT NULL")" = 12 ] || fail "counted launches without pointers: $(lq "group_concat(k.name || '=' || coalesce(l.ptrs, 'NULL'), '; ')" 1)"
[ "$(lq "count(DISTINCT l.ptrs)" "o.workload = 'step/copy' AND json_array_length(l.ptrs) = 2 AND json_extract(l.ptrs, '\$[0][1]') = 4194304 AND json_extract(l.ptrs, '\$[1][1]') = 4194304")" = 1 ] ||
	fail "step/copy's pointers: $(lq "group_concat(l.ptrs, ' ')" "o.workload = 'step/copy'")"
b=$(lq "json_extract(l.ptrs, '\$[0][0]')" "o.workload = 'step/copy' LIMIT 1")
a=$(lq "json_extract(l.ptrs, '\$[1][0]')" "o.workload = 'step/copy' LIMIT 1")
[ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ] || fail "copy's pointers a=$a b=$b"
[ "$(lq "count(*)" "o.workload = 'step/scale' AND l.ptrs = '[[$b,4194304]]'")" = 6 ] ||
	fail "scale's pointer is not copy's destination $b: $(lq "group_concat(l.ptrs, ' ')" "o.workload = 'step/scale'")"
[ "$(lq "count(*)" "o.workload = 'phase' AND json_array_length(l.ptrs) = 3 AND json_extract(l.ptrs, '\$[1][0]') = $a AND json_extract(l.ptrs, '\$[2][0]') = $b")" = 1 ] ||
	fail "add's pointers (c, a, b): $(lq "group_concat(l.ptrs, ' ')" "o.workload = 'phase'")"
run=$(q "SELECT min(run_id) FROM v_runs")
[ "$(lq "count(*)" "l.ptrs IS NOT NULL")" = 0 ] || fail "a timing-only run has pointers"
run=$(q "SELECT run_id FROM v_runs WHERE tag = 'counted'")
expect_exit 0 "$FUSEPROF" profile --db "$db" --tag big --metrics roofline -- "$app" big
cat "$tmp/err" >&2
! grep -q "measuring the ceilings" "$tmp/err" || fail "the ceilings measured again"
run=$(q "SELECT run_id FROM v_runs WHERE tag = 'big'")
for op in bigcopy bigcopy4; do
	got=$(qrun "SELECT dram_read_bytes || ' ' || dram_write_bytes || ' ' || coalesce(dram_writeback_bytes, 'none') || ' ' || dram_bytes FROM v_roofline WHERE run_id = %s AND workload = '$op'")
	set -- $got
	echo "$op: DRAM read $1, written $2, written back $3, in all $4 (analytic 536870912)" >&2
	awk -v b="$4" 'BEGIN { e = b / 536870912 - 1; if (e < 0) e = -e; exit !(e <= 0.03) }' ||
		fail "$op: DRAM bytes $4, not within 3 % of 536870912 ($got)"
done

# Work the collector does not see between two counted kernels (a 32 MB
# device-to-device copy): its dirty lines are not the first kernel's
# write-back. Each 4 KB scale leaves at most its own 4 KB (and the flush's
# residue, about 0.1 MB) dirty.
expect_exit 0 "$FUSEPROF" profile --db "$db" --tag gap --metrics roofline -- "$app" gap
cat "$tmp/err" >&2
run=$(q "SELECT run_id FROM v_runs WHERE tag = 'gap'")
for op in gap/small gap/after; do
	wb=$(qrun "SELECT coalesce(dram_writeback_bytes, -1) FROM v_roofline WHERE run_id = %s AND workload = '$op'")
	echo "$op: written back $wb bytes" >&2
	awk -v b="$wb" 'BEGIN { exit !(b >= 0 && b < 1048576) }' ||
		fail "$op: write-back $wb bytes: the copy after it was charged to it"
done

# PyTorch: the LayerNorm module's kernels in its range.
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
	expect_exit 0 "$FUSEPROF" profile --db "$db" --tag torch -- python3 "$srcdir/tests/profile-torch.py"
	cat "$tmp/err" >&2
	run=$(q "SELECT run_id FROM v_runs WHERE tag = 'torch'")
	[ "$(qrun "SELECT reps FROM v_ops WHERE run_id = %s AND workload = 'step/LayerNorm'")" = 5 ] ||
		fail "step/LayerNorm: $(qrun "SELECT group_concat(workload || ':' || reps, ' ') FROM v_ops WHERE run_id = %s")"
	[ "$(qrun "SELECT count(*) FROM v_kernels WHERE run_id = %s AND workload = 'step/LayerNorm' AND lower(name) LIKE '%%layer_norm%%'")" -ge 1 ] ||
		fail "no layer_norm kernel in step/LayerNorm: $(qrun "SELECT group_concat(name, ' | ') FROM v_kernels WHERE run_id = %s AND workload = 'step/LayerNorm'")"
	[ "$(qrun "SELECT count(*) FROM v_kernels WHERE run_id = %s AND workload != 'step/LayerNorm' AND lower(name) LIKE '%%layer_norm%%'")" = 0 ] ||
		fail "a layer_norm kernel outside step/LayerNorm"
	[ "$(qrun "SELECT count(*) FROM v_kernels WHERE run_id = %s AND workload = 'step/gelu' AND lower(name) LIKE '%%gelu%%'")" -ge 1 ] ||
		fail "no GELU kernel in step/gelu"
else
	echo "note: no PyTorch with CUDA here: its check is skipped" >&2
fi
exit 0
