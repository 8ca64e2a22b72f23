#!/bin/sh
# test-opps-gpu.sh - fusion opportunities on a GPU (skips with 77 without
# one, without bench/fpbench, which make check builds, or while `fuseprof
# profile` has no --metrics): the unfused LayerNorm+GELU forward (three kernels:
# statistics, normalize, GELU) profiled with counters through fpbench -n
# yields one candidate chain in its range holding its three kernels, whose
# fused bytes are the fused kernel's: x read once, y written once.
. "${srcdir:-.}/tests/setup"

if ! nvidia-smi -L >/dev/null 2>&1; then
	echo "SKIP: no GPU" >&2
	exit 77
fi
fpbench=${top_builddir:-..}/bench/fpbench
if [ ! -x "$fpbench" ]; then
	echo "SKIP: bench/fpbench not built (make bench)" >&2
	exit 77
fi
if ! "$FUSEPROF" profile --help | grep -q -- '--metrics'; then
	echo "SKIP: fuseprof profile takes no --metrics here" >&2
	exit 77
fi
gpu_lock
db=$tmp/o.db
q() { "$FUSEPROF" query --db "$db" --format csv "$1" | tail -n 1 | tr -d '\r"'; }

expect_exit 0 "$FUSEPROF" ceilings --db "$db"
shape='M=16384,N=4096'
path="ln_gelu_fwd/unfused3/fp32/$shape,erf=0"  # the run's canonical shape
expect_exit 0 "$FUSEPROF" profile --db "$db" --tag lng --metrics roofline -- \
	"$fpbench" -k -n -w 1 -r 5 ln_gelu_fwd/unfused3 fp32 "$shape"
run=$(q "SELECT run_id FROM v_runs WHERE tag = 'lng'")
[ "$(q "SELECT launches FROM v_ops WHERE run_id = $run AND workload = '$path'")" = 3 ] ||
	fail "the profiled op: $(q "SELECT reps, launches FROM v_ops WHERE run_id = $run AND workload = '$path'")"
"$FUSEPROF" query --db "$db" opportunities "$run" >"$tmp/opps" 2>&1 || fail "query: $(cat "$tmp/opps")"
[ "$(q "SELECT count(*) FROM v_fusion_candidates WHERE run_id = $run AND kind = 'chain' AND range_path = '$path'")" = 1 ] ||
	fail "not one chain in $path: $(cat "$tmp/opps")"
[ "$(q "SELECT nkernels FROM v_fusion_candidates WHERE run_id = $run AND kind = 'chain' AND range_path = '$path'")" = 3 ] ||
	fail "the chain does not hold the op's three kernels: $(cat "$tmp/opps")"
# x read once and y written once: 2 * M * N * 4 bytes, within 10 % (the
# counters may miss up to an L2 of dirty lines a kernel leaves behind).
ratio=$(q "SELECT round(fused_bytes / (2.0 * 16384 * 4096 * 4), 3) FROM v_fusion_candidates WHERE run_id = $run AND kind = 'chain' AND range_path = '$path'")
awk -v r="$ratio" 'BEGIN { exit !(r >= 0.9 && r <= 1.1) }' ||
	fail "fused bytes $ratio x the fused kernel's minimum: $(cat "$tmp/opps")"
exit 0
