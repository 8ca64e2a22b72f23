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
#  (c) prints, per unfused variant, shape, dtype and fused variant: the
#      predicted fused time (the profiled range's time minus the gain of
#      its candidate chains, at the chains' own bandwidth, the headline,
#      and at the DRAM roof, the bracket), the fused variant's measured
#      time, their ratios (target: within 15 %), and whether the
#      candidates hold the kernels the fused variant replaces (the unfused
#      launches less the fused ones but one), and the bytes the
#      prediction assumes (the range's DRAM bytes less the chains' saved
#      bytes) over the fused variant's model bytes, which tells a miss of
#      the bytes from one of the bandwidth (column miss: 'bytes', or the
#      bandwidth's two sides, 'fused slower than its parts' where the
#      fused kernel runs below the bandwidth its parts reached, 'parts
#      slower than their fusion' where they ran below it). Pairing: a fused
#      variant is a twin when the unfused one declares it its twin (the
#      same kernels as one, the same tensors kept for the backward:
#      `fuseprof list workloads --variants`); where it declares none, by
#      data, when it keeps for the backward as many bytes as the unfused
#      one (model_saved_bytes equal), or when no fused variant of the
#      workload does; any other runs another algorithm (a bitmask, a
#      recomputation, another saved tensor) and is listed apart, outside
#      the target.
#
#   sh ../bench/opportunities-truth.sh [WORKLOAD,...]
#   sh ../bench/opportunities-truth.sh --from DB
#
# --from DB: no GPU; (c) alone over a database an earlier run of this
# script left (its truth-run and truth-unfused runs), read as it is, with
# this build's views and twins: a measurement analysed again after the
# views or the pairing change (examples/h200-truth.db is one).
#
# Environment: OUT (default ./truth-out: truth.db, truth.log, truth.csv),
# REPS (profiled repetitions of each op, default 10), FUSEPROF (default
# ./fuseprof), FPBENCH (default bench/fpbench). About 3-5 minutes on an
# H100 for the default list, most of it the profile's counters.
set -eu
from=
if [ "${1:-}" = --from ]; then
	[ $# -eq 2 ] || { echo "opportunities-truth: --from takes one database and nothing else" >&2; exit 2; }
	from=$2
	[ -f "$from" ] || { echo "opportunities-truth: --from $from: no such file" >&2; exit 2; }
	shift 2
fi
out=${OUT:-$PWD/truth-out}
reps=${REPS:-10}
fuseprof=${FUSEPROF:-./fuseprof}
fpbench=${FPBENCH:-bench/fpbench}
workloads=${1:-softmax_fwd,softmax_masked_fwd,softmax_bwd,ln_gelu_fwd,ln_gelu_bwd,rmsnorm_fwd,rmsnorm_bwd,swiglu_fwd,swiglu_bwd,bias_relu_fwd,bias_relu_bwd,bias_dropout_add_fwd,bias_dropout_add_bwd,softplus_chain_fwd,softplus_chain_bwd}
db=${from:-$out/truth.db}
log=$out/truth.log

[ -x "$fuseprof" ] || { echo "opportunities-truth: no $fuseprof: run from a build's root after make" >&2; exit 2; }
[ -n "$from" ] || [ -x "$fpbench" ] || { echo "opportunities-truth: no $fpbench: run 'make bench' first" >&2; exit 2; }
mkdir -p "$out"
rm -f "$out/status"
[ -n "$from" ] || rm -f "$db" "$db-wal" "$db-shm"
# latest RUN_TAG: the newest run of that tag in the database, or nothing
latest() {
	"$fuseprof" query --db "$db" --format csv \
		"SELECT max(run_id) FROM v_runs WHERE tag = '$1'" | tail -n 1 | tr -d '\r"'
}

if [ -n "$from" ]; then
	run=$(latest truth-run 2>/dev/null) || run=
	prof=$(latest truth-unfused 2>/dev/null) || prof=
	[ -n "$run" ] && [ -n "$prof" ] || {
		echo "opportunities-truth: --from $from: no truth-run and truth-unfused runs in it" >&2
		exit 2
	}
fi

{
set -eu
echo "# opportunities-truth $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
if [ -n "$from" ]; then
echo "from $from: runs $run (truth-run) and $prof (truth-unfused)"
else
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader 2>/dev/null || true
git -C "$(dirname "$0")" describe --always --dirty --abbrev=7 2>/dev/null || true
echo "workloads: $workloads; profiled repetitions: $reps"

# (a) every variant at the suite's shapes, timed (no counters: only the
# fused times are compared, and the ceilings come with the first run).
start=$(date +%s)
"$fuseprof" run --db "$db" --tag truth-run --no-counters --workload "$workloads"
echo "(a) run: $(( $(date +%s) - start )) s"
run=$(latest truth-run)

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
prof=$(latest truth-unfused)
fi
"$fuseprof" query --db "$db" opportunities "$prof" >"$out/opportunities.txt"
echo "(b) candidates of run $prof: $(($(wc -l <"$out/opportunities.txt") - 2)) rows in $out/opportunities.txt"

# (c) the table. The declared twins as rows of tw (workload, variant,
# twin); names are identifiers, so they go into the SQL as they are.
tw=$("$fuseprof" list workloads --variants --format csv | tr -d '\r' |
	tail -n +2 | cut -d, -f1,2,4 | grep -E '^[a-z0-9_]+,[a-z0-9_]+,[a-z0-9_]+$' |
	sed "s/^\([^,]*\),\([^,]*\),\(.*\)\$/('\1', '\2', '\3')/" | paste -sd, -)
[ -n "$tw" ] && tw="VALUES $tw" || tw="SELECT NULL, NULL, NULL WHERE 0"
echo "declared twins: $(echo "$tw" | grep -o "(" | wc -l)"
truth="WITH tw(workload, variant, twin) AS ($tw),
 u AS (SELECT workload, variant, dtype, shape, time_ns,
	model_saved_bytes AS saved FROM v_ops
	WHERE run_id = $run AND role = 'unfused' AND status = 'ok'),
 f AS (SELECT workload, variant, dtype, shape, time_ns, launches,
	model_variant_bytes AS fbytes, model_saved_bytes AS saved FROM v_ops
	WHERE run_id = $run AND role = 'fused' AND status = 'ok'),
 p AS (SELECT op_id, workload AS path, time_ns, launches, dram_bytes FROM v_ops
	WHERE run_id = $prof),
 c AS (SELECT op_id, count(*) AS chains, sum(nkernels) AS ck, sum(gain_ns) AS gain,
	sum(saved_bytes) AS saved_bytes,
	sum(gain_achieved_ns) AS gain_ach, group_concat(kernels, ' | ') AS kernels
	FROM v_fusion_candidates WHERE run_id = $prof AND kind = 'chain' GROUP BY op_id),
 x AS (SELECT u.workload, u.dtype, u.shape, u.variant AS unfused, f.variant AS fused,
	u.time_ns AS u_ns, p.time_ns AS p_ns, f.time_ns AS f_ns, p.launches AS pl,
	f.launches AS fl, c.ck, c.chains, c.kernels, f.fbytes,
	p.dram_bytes - coalesce(c.saved_bytes, 0) AS pred_bytes,
	p.time_ns - coalesce(c.gain_ach, 0) AS pred_ns,
	p.time_ns - coalesce(c.gain, 0) AS roof_ns,
	CASE WHEN EXISTS (SELECT 1 FROM tw WHERE tw.workload = u.workload
	 AND tw.variant = u.variant) THEN EXISTS (SELECT 1 FROM tw WHERE
	 tw.workload = u.workload AND tw.variant = u.variant AND tw.twin = f.variant)
	 ELSE (f.saved IS u.saved OR NOT EXISTS (SELECT 1 FROM f f2 WHERE f2.workload = u.workload
	 AND f2.dtype = u.dtype AND f2.shape = u.shape AND f2.saved IS u.saved)) END AS twin
	FROM u JOIN p ON p.path = u.workload || '/' || u.variant || '/' || u.dtype || '/' || u.shape
	JOIN f ON f.workload = u.workload AND f.dtype = u.dtype AND f.shape = u.shape
	LEFT JOIN c ON c.op_id = p.op_id)
 SELECT workload, dtype, shape, unfused, fused,
	CASE WHEN twin THEN 'twin' ELSE 'another algorithm' END AS pairing,
	round(u_ns / 1e3, 2) AS unfused_us, round(p_ns / 1e3, 2) AS profiled_us,
	round(pred_ns / 1e3, 2) AS predicted_us, round(roof_ns / 1e3, 2) AS predicted_roof_us,
	round(f_ns / 1e3, 2) AS fused_us, round(pred_ns / f_ns, 3) AS ratio,
	round(roof_ns / f_ns, 3) AS ratio_roof,
	round(pred_bytes / fbytes, 3) AS bytes_ratio,
	CASE WHEN abs(pred_ns / f_ns - 1) <= 0.15 THEN 'yes' ELSE 'NO' END AS within_15pct,
	CASE WHEN abs(pred_ns / f_ns - 1) <= 0.15 THEN ''
	 WHEN abs(pred_bytes / fbytes - 1) > 0.15 THEN 'bytes'
	 WHEN pred_ns < f_ns THEN 'fused slower than its parts'
	 ELSE 'parts slower than their fusion' END AS miss,
	coalesce(ck, 0) || ' of ' || pl AS candidate_kernels, pl - fl + 1 AS replaced,
	CASE WHEN coalesce(ck, 0) = pl - fl + 1 THEN 'yes' ELSE 'NO' END AS kernels_match,
	coalesce(chains, 0) AS chains, kernels
 FROM x
 ORDER BY workload, dtype, shape, unfused, fused"
echo
echo "(c) predicted fused time (profiled unfused range - gain of its chains) against the fused variant's measured time"
"$fuseprof" query --db "$db" "$truth"
"$fuseprof" query --db "$db" --format csv "$truth" >"$out/truth.csv"
"$fuseprof" query --db "$db" "SELECT pairing, count(*) AS pairs,
	sum(within_15pct = 'yes') AS within_15pct, sum(abs(ratio_roof - 1) <= 0.15)
	AS within_15pct_roof,
	sum(within_15pct = 'NO' AND abs(bytes_ratio - 1) > 0.15) AS missed_bytes,
	sum(within_15pct = 'NO' AND abs(bytes_ratio - 1) <= 0.15) AS missed_bandwidth,
	sum(miss = 'fused slower than its parts') AS fused_slower,
	sum(kernels_match = 'yes') AS kernels_match,
	round(min(ratio), 3) AS min_ratio, round(max(ratio), 3) AS max_ratio
	FROM ($truth) GROUP BY pairing ORDER BY pairing DESC"
echo ok >"$out/status"
} 2>&1 | tee "$log"
[ "$(cat "$out/status" 2>/dev/null)" = ok ] || { echo "opportunities-truth: failed; see $log" >&2; exit 1; }
echo "log: $log; table: $out/truth.csv; database: $db"
