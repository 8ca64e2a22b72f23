#!/bin/sh
# lnl-zoo.sh - LayerNorm+Linear at the shapes a model has (the "zoo": decode
# rows, training/prefill shapes nobody tuned for, and the decode rows where
# the fused forward still loses), on a GPU machine from a build's root:
# fused and unfused forward and backward under the collector (timing
# only), then PyTorch eager, the Linear alone (cuBLAS)
# and torch.compile at the same shapes. Logs and the database in $OUT
# (default ./lnl-zoo-out); a table to stdout: per shape the fused kernel
# the launcher picked, fused / unfused, the most fusion can save there (%
# of the unfused time: v_fusion's bound, bytes at the DRAM roof plus
# launches) and, where the fused variant loses, v_fusion's verdict:
# "cannot pay" (that bound under 5 %), "missing kernel", or "no bound"
# (no byte model or DRAM roof). The forward also runs with cuBLASLt's
# fastest algorithm in the unfused variant (lt_algo=fastest), a run of
# its own with the fused variant beside it, so that each ratio is of two
# ops timed together (a GEMM's time at the power limit drifts by several
# per cent between runs): fused_over_fastest is that run's fused time
# over its unfused, fused_over_best the larger of the two ratios. Where
# both variants run kernels of the same name (the backward's cuBLASLt
# GEMMs, the column sums), shared_kernels_delta_us is how much longer they
# took in the fused op (clocks, caches: not fusion's doing) and
# own_kernels_ratio the rest of the fused op's time over the rest of the
# unfused one's (what fusion changed; fused / unfused where nothing is
# shared): v_fusion's shared_delta_ns and own_ratio.
#   sh bench/lnl-zoo.sh [fuseprof run option]...
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$PWD/lnl-zoo-out}
mkdir -p "$out"
zoo="M=1|8|64,K=2048,N=2048;M=1|8|64,K=3072,N=9216"
zoo="$zoo;M=8192,K=2048,N=8192;M=16384,K=3072,N=3072;M=4096,K=8192,N=28672"
zoo="$zoo;M=16384,K=1024,N=4096;M=16384,K=14336,N=2048;M=2000,K=1000,N=3000"
# and shapes nobody listed where the launcher's choice is least sure:
# 17 to 48 decode rows at N of 3000 to 5120 (bench/RESULTS.md, "Still
# over 1.05x: 17 to 48 rows ...")
zoo="$zoo;M=17|33|48,K=2048,N=5120;M=24,K=4096,N=5120;M=40,K=2048,N=3000"
# and where the launcher's rules changed last (57 to 64 rows at N = 4096:
# x~ twice its tile; fp32 at 17 to 32 rows: 32-row split-K tiles; 33 to
# 64 rows where the x~ kernel's tiles would leave most SMs idle: the
# x-as-A kernel's slices of K; 17 to 32 rows over slices of K in the deep
# ring: 24 x 8192 -> 1024, a 70B model's key/value projection at 24 decode
# rows), and 24 x 8192 -> 2560, where the kernels for 17 to 32 rows still
# lose (40 tiles of W' in 5 slices: two blocks on half the SMs)
zoo="$zoo;M=60,K=4096,N=4096;M=24,K=3072,N=9216"
zoo="$zoo;M=40,K=14336,N=1024;M=56,K=8192,N=2048;M=24,K=8192,N=1024;M=24,K=8192,N=2560"
# and 65 to 1024 rows where the 128 x 256 tiles are few (the x~ kernel in
# 64-row tiles, or the warp-specialized kernel over x~ in 128 x 64 to 128
# x 256 ones, as lnl_few_tiles_ws's model has them), and three 128-row
# tiles of a wide N (one block a tile, not pairs)
zoo="$zoo;M=96,K=2048,N=2048;M=512,K=1000,N=1000;M=256,K=4096,N=4096;M=384,K=3072,N=9216"
zoo="$zoo;M=1024,K=4096,N=1024"
./fuseprof run --db "$out/zoo.db" --tag lnl-zoo --workload ln_linear_fwd,ln_linear_bwd \
	--variant fused,unfused --no-counters --reps 20 --shape "$zoo" "$@" \
	>"$out/run.txt" 2>"$out/run.err" || { echo "run exit $?"; tail -n 5 "$out/run.err"; }
./fuseprof run --db "$out/zoo.db" --tag lnl-zoo-lt --workload ln_linear_fwd \
	--variant fused,unfused --kernel-opt lt_algo=fastest --no-counters --reps 20 --shape "$zoo" "$@" \
	>"$out/run-lt.txt" 2>"$out/run-lt.err" || { echo "run exit $?"; tail -n 5 "$out/run-lt.err"; }
./fuseprof query --db "$out/zoo.db" --format md \
	"SELECT f.workload, f.dtype, f.shape, f.kernel AS fused_kernel,
	        round(f.time_ns / 1e3, 1) AS fused_us,
	        round(u.time_ns / 1e3, 1) AS unfused_us,
	        round(f.time_ns / u.time_ns, 3) AS fused_over_unfused,
	        round(t.time_ns / 1e3, 1) AS unfused_fastest_us,
	        round(tf.time_ns / t.time_ns, 3) AS fused_over_fastest,
	        round(max(f.time_ns / u.time_ns, coalesce(tf.time_ns / t.time_ns, 0)), 3)
	          AS fused_over_best,
	        round(v.shared_delta_ns / 1e3, 1) AS shared_kernels_delta_us,
	        round(coalesce(v.own_ratio, f.time_ns / u.time_ns), 3) AS own_kernels_ratio,
	        round(v.fusion_bound_pct, 1) AS fusion_can_save_pct,
	        CASE WHEN v.fusion_note LIKE 'fusion cannot pay%' THEN 'cannot pay'
	             WHEN v.fusion_note LIKE '%a missing kernel%' THEN 'missing kernel'
	             WHEN v.fusion_note IS NOT NULL THEN 'no bound'
	             ELSE '' END AS verdict
	   FROM v_ops f JOIN v_ops u ON u.run_id = f.run_id AND u.workload = f.workload
	    AND u.dtype = f.dtype AND u.shape = f.shape AND u.variant = 'unfused'
	   LEFT JOIN v_ops tf ON tf.workload = f.workload AND tf.dtype = f.dtype
	    AND tf.shape = f.shape AND tf.variant = 'fused'
	    AND tf.run_id = (SELECT max(run_id) FROM v_runs WHERE tag = 'lnl-zoo-lt')
	   LEFT JOIN v_ops t ON t.run_id = tf.run_id AND t.workload = f.workload
	    AND t.dtype = f.dtype AND t.shape = f.shape AND t.variant = 'unfused'
	   LEFT JOIN v_fusion v ON v.fused_op_id = f.op_id AND v.base_op_id = u.op_id
	  WHERE f.variant = 'fused' AND f.tag = 'lnl-zoo'
	    AND f.run_id = (SELECT max(run_id) FROM v_runs WHERE tag = 'lnl-zoo')
	  ORDER BY f.workload, f.dtype, f.op_id" | tee "$out/ratios.md"
shapes=$(echo "$zoo" | tr ';' '\n' | while IFS= read -r s; do
	m=$(echo "$s" | sed 's/M=\([^,]*\),.*/\1/'); k=$(echo "$s" | sed 's/.*K=\([0-9]*\).*/\1/')
	n=$(echo "$s" | sed 's/.*N=\([0-9]*\).*/\1/')
	for mm in $(echo "$m" | tr '|' ' '); do printf '%s,%s,%s ' "$mm" "$k" "$n"; done
done)
# shellcheck disable=SC2086 # one argument a shape
timeout 900 python3 "$src/kernels/ln_linear/torch-baseline.py" --compile $shapes \
	>"$out/torch.txt" 2>"$out/torch.err" || echo "torch baseline exit $?"
cat "$out/torch.txt"
