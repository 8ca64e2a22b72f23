#!/bin/sh
# opportunities-truth.sh - on a GPU machine, from a build's root (after
# `make && make bench`): checks the fusion candidates of v_fusion_candidates
# against truth. fuseprof's memory-bound workloads each have an unfused
# variant and a measured fused twin, so:
#  (a) `fuseprof run` times every variant of them at the suite's shapes
#      (and measures the ceilings on the device's first run);
#  (b) `fuseprof profile --metrics roofline` profiles every unfused variant
#      through bench/fpbench -n, which puts each launch in an NVTX range
#      named WORKLOAD/VARIANT/DTYPE/SHAPE (the run's op key) with a host
#      sync after it, so each range is one op of the profiled run;
#  (c) prints, per unfused variant, shape, dtype and fused twin: the
#      predicted fused time (the profiled range's time minus the gain of
#      its candidate chains, at the DRAM roof and at the chains' own
#      bandwidth), the fused variant's measured time, their ratio (target:
#      within 15 %), and how many of the unfused op's kernels the
#      candidates hold against the fused variant's kernels.
#
#   sh ../bench/opportunities-truth.sh [WORKLOAD,...]
#
# Environment: OUT (default ./truth-out: truth.db, truth.log, truth.csv),
# REPS (profiled repetitions of each op, default 10), FUSEPROF (default
# ./fuseprof), FPBENCH (default bench/fpbench). About 3-5 minutes on an
# H100 for the default list, most of it the profile's counters.
set -eu
out=${OUT:-$PWD/truth-out}
reps=${REPS:-10}
fuseprof=${FUSEPROF:-./fuseprof}
fpbench=${FPBENCH:-bench/fpbench}
workloads=${1:-softmax_fwd,softmax_masked_fwd,softmax_bwd,ln_gelu_fwd,ln_gelu_bwd,rmsnorm_fwd,rmsnorm_bwd,swiglu_fwd,swiglu_bwd,bias_relu_fwd,bias_relu_bwd,bias_dropout_add_fwd,bias_dropout_add_bwd,softplus_chain_fwd,softplus_chain_bwd}
db=$out/truth.db
log=$out/truth.log

[ -x "$fuseprof" ] || { echo "opportunities-truth: no $fuseprof: run from a build's root after make" >&2; exit 2; }
[ -x "$fpbench" ] || { echo "opportunities-truth: no $fpbench: run 'make bench' first" >&2; exit 2; }
mkdir -p "$out"
rm -f "$db" "$db-wal" "$db-shm" "$out/status"

{
set -eu
echo "# opportunities-truth $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader 2>/dev/null || true
git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || true
echo "workloads: $workloads; profiled repetitions: $reps"

# (a) every variant at the suite's shapes, timed (no counters: only the
# fused times are compared, and the ceilings come with the first run).
start=$(date +%s)
"$fuseprof" run --db "$db" --tag truth-run --no-counters --workload "$workloads"
echo "(a) run: $(( $(date +%s) - start )) s"
run=$("$fuseprof" query --db "$db" --format csv \
	"SELECT max(run_id) FROM v_runs WHERE tag = 'truth-run'" | tail -n 1 | tr -d '\r')

# (b) the unfused variants, one fpbench a workload, variant and dtype
# with its shapes, all under one profile (every process into one run).
"$fuseprof" query --db "$db" --format csv "SELECT workload || '/' || variant,
	dtype, group_concat(shape, ' ') FROM (SELECT DISTINCT workload, variant,
	dtype, shape FROM v_ops WHERE run_id = $run AND role = 'unfused' AND
	status = 'ok' ORDER BY workload, variant, dtype, shape)
	GROUP BY workload, variant, dtype" | tail -n +2 | tr -d '"\r' |
while IFS=, read -r wv dt shapes; do
	# shapes hold commas (M=..,N=..): the csv's later fields, joined back
	echo "\"$fpbench\" -k -n -w 1 -r $reps $wv $dt $(echo "$shapes" | tr ' ' '\n' | sed 's/.*/"&"/' | tr '\n' ' ')"
done >"$out/unfused.sh"
wc -l <"$out/unfused.sh" | sed 's/^/(b) unfused variant groups to profile: /'
start=$(date +%s)
"$fuseprof" profile --db "$db" --tag truth-unfused --metrics roofline -- sh "$out/unfused.sh" >"$out/fpbench.txt"
echo "(b) profile: $(( $(date +%s) - start )) s"
prof=$("$fuseprof" query --db "$db" --format csv \
	"SELECT max(run_id) FROM v_runs WHERE tag = 'truth-unfused'" | tail -n 1 | tr -d '\r')
"$fuseprof" query --db "$db" opportunities "$prof" >"$out/opportunities.txt"
echo "(b) candidates of run $prof: $(($(wc -l <"$out/opportunities.txt") - 2)) rows in $out/opportunities.txt"

# (c) the table.
truth="WITH u AS (SELECT workload, variant, dtype, shape, time_ns FROM v_ops
	WHERE run_id = $run AND role = 'unfused' AND status = 'ok'),
 f AS (SELECT workload, variant, dtype, shape, time_ns, launches FROM v_ops
	WHERE run_id = $run AND role = 'fused' AND status = 'ok'),
 p AS (SELECT op_id, workload AS path, time_ns, launches FROM v_ops WHERE run_id = $prof),
 c AS (SELECT op_id, count(*) AS chains, sum(nkernels) AS ck, sum(gain_ns) AS gain,
	sum(gain_achieved_ns) AS gain_ach, group_concat(kernels, ' | ') AS kernels
	FROM v_fusion_candidates WHERE run_id = $prof AND kind = 'chain' GROUP BY op_id)
 SELECT u.workload, u.dtype, u.shape, u.variant AS unfused, f.variant AS fused,
	round(u.time_ns / 1e3, 2) AS unfused_us, round(p.time_ns / 1e3, 2) AS profiled_us,
	round((p.time_ns - coalesce(c.gain, 0)) / 1e3, 2) AS predicted_us,
	round((p.time_ns - coalesce(c.gain_ach, 0)) / 1e3, 2) AS predicted_own_bw_us,
	round(f.time_ns / 1e3, 2) AS fused_us,
	round((p.time_ns - coalesce(c.gain, 0)) / f.time_ns, 3) AS ratio,
	CASE WHEN abs((p.time_ns - coalesce(c.gain, 0)) / f.time_ns - 1) <= 0.15
	 THEN 'yes' ELSE 'NO' END AS within_15pct,
	coalesce(c.ck, 0) || ' of ' || p.launches AS candidate_kernels,
	f.launches AS fused_kernels, coalesce(c.chains, 0) AS chains, c.kernels
 FROM u JOIN p ON p.path = u.workload || '/' || u.variant || '/' || u.dtype || '/' || u.shape
 JOIN f ON f.workload = u.workload AND f.dtype = u.dtype AND f.shape = u.shape
 LEFT JOIN c ON c.op_id = p.op_id
 ORDER BY u.workload, u.dtype, u.shape, u.variant, f.variant"
echo
echo "(c) predicted fused time (profiled unfused range - gain of its chains) against the fused variant's measured time"
"$fuseprof" query --db "$db" "$truth"
"$fuseprof" query --db "$db" --format csv "$truth" >"$out/truth.csv"
"$fuseprof" query --db "$db" "SELECT count(*) AS pairs,
	sum(within_15pct = 'yes') AS within_15pct,
	round(min(ratio), 3) AS min_ratio, round(max(ratio), 3) AS max_ratio
	FROM ($truth)"
echo ok >"$out/status"
} 2>&1 | tee "$log"
[ "$(cat "$out/status" 2>/dev/null)" = ok ] || { echo "opportunities-truth: failed; see $log" >&2; exit 1; }
echo "log: $log; table: $out/truth.csv; database: $db"
