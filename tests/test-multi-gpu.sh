#!/bin/sh
# test-multi-gpu.sh - several GPUs and ranks on a machine with two GPUs or
# more (skips with 77 with fewer): `run --device all --quick` stores every
# op once per GPU in one complete run, each GPU's ceilings measured and
# every op judged against its own device's; a device index the machine
# lacks is refused with one line and nothing written; two runs on every
# GPU compare device by device; the report of a run on every GPU; and,
# with torch and torchrun, a two-rank program (tests/ranks-torch.py)
# profiled once a rank (--db 'r%r.db', through torchrun --no-python),
# merged into one run where every range has both ranks, rank 1 the
# straggler of step/matmul; and the same program profiled into one file.
# Each step is echoed with its time, so the log (tests/test-multi-gpu.log
# under make check) says how far it got.
. "${srcdir:-.}/tests/setup"

ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
if [ "${ngpu:-0}" -lt 2 ]; then
	echo "SKIP: fewer than two GPUs (nvidia-smi -L lists ${ngpu:-0})" >&2
	exit 77
fi
gpu_lock
step() { echo "== $(date -u +%H:%M:%S) $*" >&2; }
q() { "$FUSEPROF" query --db "$1" --format csv "$2" | tail -n +2 | tr -d '\r'; }

step "$ngpu GPUs: $(nvidia-smi -L | tr '\n' ';')"
"$FUSEPROF" run --dry-run --quick >"$tmp/ops" 2>/dev/null || fail "run --dry-run --quick"
nops=$(wc -l <"$tmp/ops")

# A device the machine lacks: one line, nothing written.
step "run --device 0,$ngpu (no such device)"
expect_exit 1 "$FUSEPROF" run --quick --db "$tmp/none.db" --device "0,$ngpu"
one_line_error "no device $ngpu"
[ ! -e "$tmp/none.db" ] || fail "a refused --device left $tmp/none.db"

# Every GPU, one run: each op once per GPU.
db=$tmp/all.db
step "run --device all --quick ($nops ops a GPU)"
expect_exit 0 "$FUSEPROF" run --device all --quick --db "$db" --tag all
tail -n 3 "$tmp/err" >&2
run=$(q "$db" "SELECT run_id FROM v_runs WHERE tag = 'all'")
[ "$(q "$db" "SELECT status FROM runs WHERE id = $run")" = complete ] ||
	fail "run: $(q "$db" "SELECT status, note FROM runs WHERE id = $run")"
[ "$(q "$db" "SELECT count(DISTINCT device_id) FROM ops WHERE run_id = $run")" = "$ngpu" ] ||
	fail "ops on $(q "$db" "SELECT count(DISTINCT device_id) FROM ops WHERE run_id = $run") devices, wanted $ngpu"
q "$db" "SELECT count(*) FROM ops WHERE run_id = $run GROUP BY device_id" >"$tmp/per"
while read -r n; do
	[ "$n" = "$nops" ] || fail "a device has $n ops, wanted $nops: $(tr '\n' ' ' <"$tmp/per")"
done <"$tmp/per"
[ "$(q "$db" "SELECT count(*) FROM ops WHERE run_id = $run AND status != 'ok'")" = 0 ] ||
	fail "ops not ok: $(q "$db" "SELECT workload, variant, dtype, shape, message FROM ops WHERE run_id = $run AND status != 'ok'")"
# Each op once per GPU: the key without the device occurs ngpu times.
[ "$(q "$db" "SELECT count(*) FROM (SELECT count(*) AS n FROM ops WHERE run_id = $run
	GROUP BY workload, variant, dtype, shape) WHERE n != $ngpu")" = 0 ] || fail "an op not once per GPU"
# The run's device is one of its ops'; each device has its ceilings, and
# each op's DRAM roof comes from its own device's.
[ "$(q "$db" "SELECT count(*) FROM runs r WHERE id = $run AND device_id IN
	(SELECT device_id FROM ops WHERE run_id = $run)")" = 1 ] || fail "the run's device is none of its ops'"
[ "$(q "$db" "SELECT count(DISTINCT device_id) FROM v_ceilings WHERE run_id = $run
	AND name = 'dram_bw'")" = "$ngpu" ] || fail "not every device has its dram_bw ceiling"
[ "$(q "$db" "SELECT count(*) FROM v_roofline r JOIN v_ceilings c ON c.run_id = r.run_id
	AND c.device_id = r.device_id AND c.name = 'l2_bw' WHERE r.run_id = $run
	AND r.l2_bw IS NOT c.value")" = 0 ] || fail "an op judged against another device's l2_bw"

# Two smaller runs on every GPU: compare pairs GPU with GPU.
step "run --device all, twice, one workload; compare"
for t in a b; do
	expect_exit 0 "$FUSEPROF" run --device all --quick --workload softmax_fwd \
		--no-counters --db "$db" --tag "sm-$t"
done
set +e
"$FUSEPROF" compare --db "$db" --format csv sm-a sm-b >"$tmp/cmp" 2>"$tmp/cmperr"
rc=$?
set -e
[ "$rc" -le 1 ] || fail "compare exit $rc: $(cat "$tmp/cmperr")"
grep -q '@1,' "$tmp/cmp" || fail "compare did not match device by device: $(head -n 3 "$tmp/cmp")"
! grep -qE '^(ADDED|REMOVED),' "$tmp/cmp" || fail "compare: ops only in one run: $(grep -E '^(ADDED|REMOVED)' "$tmp/cmp")"

step "report of the run on every GPU"
expect_exit 0 "$FUSEPROF" report --db "$db" -r all --out "$tmp/rep"
[ -s "$tmp/rep/report.md" ] || fail "no report.md"

# Ranks: torchrun, two processes on GPUs 0 and 1.
if ! command -v python3 >/dev/null 2>&1 || ! python3 -c "import torch" >/dev/null 2>&1; then
	step "SKIP the ranks: python3 has no torch (the device checks passed)"
	exit 0
fi
if command -v torchrun >/dev/null 2>&1; then
	torchrun=torchrun
else
	torchrun="python3 -m torch.distributed.run"
fi
script=$srcdir/tests/ranks-torch.py
step "torchrun --standalone --nproc_per_node 2 --no-python fuseprof profile --db 'r%r.db'"
(cd "$tmp" && $torchrun --standalone --nproc_per_node 2 --no-python "$FUSEPROF" profile \
	--db "$tmp/r%r.db" --tag ddp python3 "$script") >"$tmp/tr.out" 2>&1 ||
	{ cat "$tmp/tr.out" >&2; fail "torchrun failed"; }
for r in 0 1; do
	[ -s "$tmp/r$r.db" ] || { cat "$tmp/tr.out" >&2; fail "no r$r.db"; }
	[ "$(q "$tmp/r$r.db" "SELECT count(*) FROM procs WHERE rank = $r AND world_size = 2
		AND local_rank = $r")" -ge 1 ] ||
		fail "r$r.db: procs $(q "$tmp/r$r.db" "SELECT pid, rank, local_rank, world_size FROM procs")"
done
step "merge r0.db r1.db"
expect_exit 0 "$FUSEPROF" merge "$tmp/m.db" "$tmp/r0.db" "$tmp/r1.db"
cat "$tmp/out" >&2
[ "$(q "$tmp/m.db" "SELECT count(*) FROM runs")" = 1 ] || fail "the ranks' runs did not join"
for path in step/matmul step/norm; do
	[ "$(q "$tmp/m.db" "SELECT count(DISTINCT p.rank) FROM samples s JOIN procs p
		ON p.id = s.proc_id JOIN ops o ON o.id = s.op_id WHERE o.workload = '$path'")" = 2 ] ||
		fail "$path lacks a rank"
	[ "$(q "$tmp/m.db" "SELECT ranks FROM v_rank_spread WHERE workload = '$path'")" = 2 ] ||
		fail "v_rank_spread of $path"
done
[ "$(q "$tmp/m.db" "SELECT slowest_rank FROM v_rank_spread WHERE workload = 'step/matmul'")" = 1 ] ||
	fail "the straggler of step/matmul: $(q "$tmp/m.db" "SELECT * FROM v_rank_spread")"
expect_exit 0 "$FUSEPROF" report --db "$tmp/m.db" --out "$tmp/mrep" --no-plots
[ -s "$tmp/mrep/ranks.csv" ] || fail "the merged run's report has no ranks.csv"
grep -q 'slowest rank 1' "$tmp/out" || fail "report names no straggler: $(cat "$tmp/out")"

step "fuseprof profile -- torchrun (every rank into one file)"
(cd "$tmp" && "$FUSEPROF" profile --db "$tmp/one.db" --tag one $torchrun \
	--standalone --nproc_per_node 2 "$script") >"$tmp/one.out" 2>&1 ||
	{ cat "$tmp/one.out" >&2; fail "profile of torchrun failed"; }
[ "$(q "$tmp/one.db" "SELECT ranks FROM v_rank_spread WHERE workload = 'step/matmul'")" = 2 ] ||
	fail "one file: $(q "$tmp/one.db" "SELECT pid, rank FROM procs")"
step "done"
exit 0
