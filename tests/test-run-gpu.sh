#!/bin/sh
# test-run-gpu.sh - `fuseprof run` on a GPU (skips with 77 without one):
# --quick fills the store with every op, its kernels and counters, and the
# run is 'complete'; Ctrl-C (SIGINT) leaves an 'aborted' run whose finished
# ops are whole; `ceilings` reuses what the run measured.
. "${srcdir:-.}/tests/setup"

if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no GPU" >&2
	exit 77
fi
gpu_lock
"$FUSEPROF" run --dry-run --quick >"$tmp/ops" || exit 77
nops=$(wc -l <"$tmp/ops")
db=$tmp/q.db
q() { "$FUSEPROF" query --db "$db" --format csv "$1" | tail -n +2 | tr -d '\r'; }

# Interrupt a longer run once its first op is stored (a database of its own).
db=$tmp/i.db
"$FUSEPROF" run --quick --db "$db" --reps 2000 --tag interrupted >"$tmp/iout" 2>"$tmp/ierr" &
pid=$!
i=0
while :; do
	n=$(q "SELECT count(*) FROM ops o JOIN runs r ON r.id = o.run_id WHERE r.tag = 'interrupted'" 2>/dev/null || true)
	[ "${n:-0}" -lt 1 ] || break
	i=$((i + 1))
	[ $i -lt 600 ] || { kill $pid; fail "no op stored after 60 s"; }
	sleep 0.1
done
kill -INT $pid
set +e
wait $pid
rc=$?
set -e
cat "$tmp/ierr" >&2
[ "$rc" = 130 ] || fail "interrupted run exited $rc, wanted 130"
[ ! -e "$db-wal" ] || fail "the interrupted run left its write-ahead log behind"
[ "$(q "SELECT status FROM runs WHERE tag = 'interrupted'")" = aborted ] || fail "run not aborted"
n=$(q "SELECT count(*) FROM ops o JOIN runs r ON r.id = o.run_id WHERE r.tag = 'interrupted'")
[ "$n" -ge 1 ] || fail "no op kept"
[ "$n" -lt "$nops" ] || fail "the interrupt came too late to test anything"
[ "$(q "SELECT count(*) FROM ops o JOIN runs r ON r.id = o.run_id WHERE r.tag = 'interrupted' AND (reps < 3 OR reps != (SELECT count(*) FROM samples s WHERE s.op_id = o.id) OR NOT EXISTS (SELECT 1 FROM kernels k WHERE k.op_id = o.id))")" = 0 ] ||
	fail "an interrupted run kept a partial op"

db=$tmp/q.db
set +e
"$FUSEPROF" run --quick --db "$db" --tag quick >"$tmp/out" 2>"$tmp/err"
rc=$?
set -e
cat "$tmp/err" >&2
[ "$rc" = 0 ] || fail "run --quick exited $rc"
grep -q 'replay pass' "$tmp/err" || grep -q 'timing only' "$tmp/err" ||
	fail "run did not say how many replay passes it needs"
[ "$(q "SELECT status FROM runs")" = complete ] || fail "run not complete"
[ "$(q "SELECT count(*) FROM ops")" = "$nops" ] || fail "not every op stored"
[ "$(q "SELECT count(*) FROM ops WHERE status != 'ok'")" = 0 ] || fail "ops not ok"
[ "$(q "SELECT count(*) FROM ops o WHERE NOT EXISTS (SELECT 1 FROM kernels k WHERE k.op_id = o.id)")" = 0 ] ||
	fail "an op without kernels"
[ "$(q "SELECT count(*) FROM ops WHERE time_ns IS NULL OR time_ns <= 0 OR span_ns < time_ns * 0.5")" = 0 ] ||
	fail "bad op times"
[ "$(q "SELECT count(*) FROM samples")" -ge "$nops" ] || fail "no samples"
counters=$(q "SELECT counters FROM runs")
case $counters in
"range-profiler (roofline; op replay, flush op)") have_counters=1 ;;
range-profiler*) fail "runs.counters does not name the default mode: $counters" ;;
*) have_counters=0 ;;
esac
if [ "$have_counters" = 1 ]; then
	[ "$(q "SELECT count(*) FROM v_ops WHERE ncounters = 0 OR dram_bytes IS NULL OR dram_bytes <= 0")" = 0 ] ||
		fail "an op without counters"
	# Instruction counts (counted first, under kernel replay) reached
	# every op: LayerNorm's fp32 math is FFMAs, and no op lacks them.
	grep -q 'instruction counts' "$tmp/err" || fail "run did not announce the instruction counts"
	[ "$(q "SELECT count(*) FROM ops o WHERE NOT EXISTS (SELECT 1 FROM kernels k JOIN counters c ON c.kernel_id = k.id WHERE k.op_id = o.id AND c.metric LIKE 'sm__sass_%')")" = 0 ] ||
		fail "an op without instruction counts"
	[ "$(q "SELECT count(*) FROM v_ops WHERE workload = 'ln_gelu_fwd' AND NOT flops_fp32 > 0")" = 0 ] ||
		fail "LayerNorm+GELU counted no fp32 FLOPs"
else
	echo "note: counters were '$counters' here; counter checks skipped" >&2
fi
[ "$(q "SELECT count(*) FROM ceilings WHERE provenance = 'measured'")" -ge 9 ] ||
	fail "ceilings not measured"
[ "$(q "SELECT count(DISTINCT name) FROM ceilings WHERE provenance = 'measured' AND name IN ('dram_bw','dram_read_bw','dram_add_bw','dram_write_bw','l2_bw','fp32_fma','fp64_fma','tensor_bf16','tensor_tf32')")" = 9 ] ||
	fail "a ceiling is missing"
# No DRAM mix beats the bus: a measured ceiling above the theoretical peak
# would count bytes that never moved (or miss the time of a write-back).
[ "$(q "SELECT count(*) FROM ceilings m JOIN ceilings t ON t.device_id = m.device_id
	AND t.name = m.name AND t.provenance = 'theoretical'
	WHERE m.provenance = 'measured' AND m.name LIKE 'dram%' AND m.value > 1.01 * t.value")" = 0 ] ||
	fail "a measured DRAM ceiling is above the theoretical peak: $(q "SELECT name, value FROM ceilings WHERE name LIKE 'dram%'")"

# ceilings: reused (nothing new stored), printed.
before=$(q "SELECT count(*) FROM ceilings")
expect_exit 0 "$FUSEPROF" ceilings --db "$db"
grep -q dram_bw "$tmp/out" || fail "ceilings table lacks dram_bw"
[ "$(q "SELECT count(*) FROM ceilings")" = "$before" ] || fail "ceilings measured again"

exit 0
