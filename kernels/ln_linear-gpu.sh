#!/bin/sh
# ln_linear-gpu.sh - on a GPU machine, from the build's root once
# `make kernels/libfpkernels.a tests/test-workloads bench/fpbench` is done:
# the contract test of ln_linear_fwd/bwd, compute-sanitizer memcheck of every
# variant on small awkward shapes, then fpbench timings at the suite shapes.
# Logs go to $OUT (default: the current directory); a summary to stdout.
# Usage: sh kernels/ln_linear-gpu.sh [test|memcheck|bench|torch|naive]...
out=${OUT:-.}
steps=${*:-test memcheck bench torch naive}
fwd="M=16384,K=768,N=256 M=16384,K=4096,N=256"
big="M=16384,K=4096,N=16384"

for step in $steps; do
case $step in
test)
	echo "== test-workloads (log: test.log)"
	FUSEPROF_TEST_WORKLOADS=ln_linear_fwd,ln_linear_bwd timeout 240 \
		tests/test-workloads > "$out/test.log" 2>&1
	echo "rc $?: $(grep -c '^ok' "$out/test.log") ok"
	grep -v '^ok' "$out/test.log" | tail -n 25
	;;
memcheck)
	echo "== compute-sanitizer memcheck (log: memcheck.log)"
	for w in ln_linear_fwd ln_linear_bwd; do
		for dt in fp32 bf16; do
			timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 \
				bench/fpbench -r 2 -w 0 $w $dt M=3,K=1023,N=17 \
				M=130,K=64,N=136 >> "$out/memcheck.log" 2>&1
			echo "$w (every variant) $dt rc $?"
		done
	done
	grep "ERROR SUMMARY" "$out/memcheck.log" | sort | uniq -c
	;;
bench)
	echo "== fpbench (log: bench.log)"
	{
	bench/fpbench -c -r 1 ln_linear_fwd/unfused bf16 M=64,K=64,N=64
	for dt in bf16 fp32; do
		for v in unfused fused; do
			FUSEPROF_VERBOSE=1 timeout 120 bench/fpbench ln_linear_fwd/$v $dt $fwd
			FUSEPROF_VERBOSE=1 timeout 120 bench/fpbench -r 10 -w 2 ln_linear_fwd/$v $dt $big
		done
		for v in unfused fused; do
			timeout 120 bench/fpbench ln_linear_bwd/$v $dt $fwd
			timeout 120 bench/fpbench -r 10 -w 2 ln_linear_bwd/$v $dt $big
		done
	done
	} > "$out/bench.log" 2>&1
	grep -v '^workload' "$out/bench.log"
	;;
torch)
	echo "== PyTorch eager, Linear alone, autograd (log: torch.log)"
	timeout 150 python3 kernels/ln_linear-torch.py > "$out/torch.log" 2>&1
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
esac
done
