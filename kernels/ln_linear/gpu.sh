#!/bin/sh
# ln_linear/gpu.sh - on a GPU machine, from the build's root once
# `make fuseprof tests/test-workloads bench/fpbench` is done: the contract
# test of ln_linear_fwd/bwd (timed), compute-sanitizer memcheck of every
# variant and racecheck of the fused forward on small awkward shapes,
# `fuseprof run` timings of the forward at the suite and quick shapes next
# to PyTorch (eager, and cuBLAS's Linear alone), fpbench timings of the
# backward, fpbench timings of the bf16 fused forward's kernels (the gemm
# kernel option), Nsight Compute on the bf16 fused forward, and the time
# --check-all's checks take at the largest suite shape (issue #18: at most
# 2 s an op).
# Logs go to $OUT (default: the current directory); a summary to stdout.
# Usage: sh kernels/ln_linear/gpu.sh [test|memcheck|run|kernels|bwd|torch|naive|ncu|check]...
out=${OUT:-.}
src=$(dirname "$0")
steps=${*:-test memcheck run bwd torch naive}
suite="M=16384,K=768,N=256;M=16384,K=4096,N=256;M=16384,K=4096,N=16384"
quick="M=2048,K=768,N=256;M=1024,K=1024,N=1024"
small="M=3,K=1023,N=17 M=130,K=64,N=136 M=200,K=264,N=100 M=4000,K=200,N=520"

for step in $steps; do
case $step in
test)
	echo "== test-workloads (log: test.log, errors: test.err)"
	t0=$(date +%s)
	timeout 200 tests/test-workloads ln_linear_fwd ln_linear_bwd \
		> "$out/test.log" 2> "$out/test.err"
	echo "rc $?: $(grep -c '^ok' "$out/test.log") ok, $(( $(date +%s) - t0 )) s"
	grep -v '^ok' "$out/test.log" | tail -n 25
	;;
memcheck)
	echo "== compute-sanitizer (log: memcheck.log)"
	for w in ln_linear_fwd ln_linear_bwd; do
		for dt in fp32 bf16; do
			timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 \
				bench/fpbench -r 2 -w 0 $w $dt $small >> "$out/memcheck.log" 2>&1
			echo "memcheck $w (every variant) $dt rc $?"
		done
	done
	timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 \
		bench/fpbench -r 1 -w 0 ln_linear_fwd/fused bf16 M=200,K=264,N=100 \
		M=4000,K=200,N=520 >> "$out/memcheck.log" 2>&1
	echo "racecheck ln_linear_fwd/fused bf16 rc $?"
	grep "ERROR SUMMARY\|RACECHECK SUMMARY" "$out/memcheck.log" | sort | uniq -c
	;;
run)
	echo "== fuseprof run, forward (log: run.log, database: fwd.db)"
	for s in "$suite" "$quick"; do
		timeout 200 ./fuseprof run --no-counters -w ln_linear_fwd -v unfused,fused \
			-t bf16 -s "$s" --db "$out/fwd.db" >> "$out/run.log" 2>&1
		echo "rc $?"
	done
	./fuseprof query --db "$out/fwd.db" \
		"SELECT variant, dtype, shape, status, rel_err, round(time_ns / 1e3, 1) AS us FROM v_ops ORDER BY shape, variant"
	;;
kernels)
	echo "== fpbench, bf16 fused forward: each value of the gemm option (log: kernels.log)"
	echo "HGMMA in the build: $(cuobjdump -sass kernels/libfpkernels.a 2>/dev/null | grep -c HGMMA)"
	for s in M=16384,K=768,N=256 M=16384,K=4096,N=256; do
		for g in wgmma-ws wgmma mma; do
			timeout 60 bench/fpbench -o gemm=$g ln_linear_fwd/fused bf16 $s
		done
	done > "$out/kernels.log" 2>&1
	grep -v '^workload' "$out/kernels.log"
	;;
bwd)
	echo "== fpbench, backward (log: bwd.log)"
	for v in unfused fused; do
		timeout 120 bench/fpbench ln_linear_bwd/$v bf16 M=16384,K=768,N=256 \
			M=16384,K=4096,N=256
	done > "$out/bwd.log" 2>&1
	grep -v '^workload' "$out/bwd.log"
	;;
torch)
	echo "== PyTorch eager, Linear alone, autograd (log: torch.log)"
	timeout 150 python3 "$src/torch-baseline.py" bf16 > "$out/torch.log" 2>&1
	tail -n 8 "$out/torch.log"
	;;
naive)
	echo "== fpbench, naive variants (log: naive.log)"
	for dt in bf16 fp32; do
		timeout 60 bench/fpbench -r 3 -w 1 ln_linear_fwd/naive $dt M=16384,K=768,N=256
		timeout 60 bench/fpbench -r 3 -w 1 ln_linear_bwd/naive $dt M=16384,K=768,N=256
	done > "$out/naive.log" 2>&1
	grep -v '^workload' "$out/naive.log"
	;;
ncu)
	echo "== Nsight Compute, bf16 fused forward (log: ncu.log)"
	for s in M=16384,K=4096,N=256; do
		timeout 120 ncu --clock-control none -k regex:k_fwd_fused -c 1 \
			--section SpeedOfLight --section MemoryWorkloadAnalysis \
			--section ComputeWorkloadAnalysis --section WarpStateStats \
			--section Occupancy bench/fpbench -r 1 -w 0 \
			ln_linear_fwd/fused bf16 $s >> "$out/ncu.log" 2>&1
	done
	grep -E "^  [A-Za-z]|Duration|Throughput|Stall|Issue" "$out/ncu.log" | head -n 60
	;;
check)
	echo "== fuseprof run --check-all at M=16384,K=4096,N=16384 (log: check.log)"
	timeout 590 ./fuseprof run --check-all --no-counters -w ln_linear_fwd,ln_linear_bwd \
		-v unfused,fused -t fp32,bf16 -s M=16384,K=4096,N=16384 \
		--db "$out/check.db" > "$out/check.log" 2>&1
	echo "rc $? (8 ops; the line below gives the checks' seconds)"
	grep -i "checks" "$out/check.log" | tail -n 2
	./fuseprof query --db "$out/check.db" \
		"SELECT workload, variant, dtype, status, rel_err FROM v_ops ORDER BY workload, dtype, variant"
	;;
esac
done
