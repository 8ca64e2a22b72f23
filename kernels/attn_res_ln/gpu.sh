#!/bin/sh
# attn_res_ln/gpu.sh - on a GPU machine, from the build's root once
# `make fuseprof tests/test-workloads bench/fpbench` is done: the contract
# test of attn_res_ln_fwd (every variant, dtype and profile at the test
# shapes), compute-sanitizer memcheck, racecheck, synccheck and initcheck of
# every variant on small awkward shapes (both fused kernels), fpbench
# timings at the suite shapes with the default fused kernel (a CTA a head)
# and each cluster size of the one splitting the heads, and `fuseprof run` of
# the workload's suite (counters on) for the fusion table and the roofline.
# Logs go to $OUT (default: the current directory); a summary to stdout.
# Usage: sh kernels/attn_res_ln/gpu.sh [test|sanitize|bench|run]...
out=${OUT:-.}
steps=${*:-test sanitize bench run}
small="B=1,H=1,S=1 B=2,H=12,S=37 B=1,H=25,S=129,causal=0 B=1,H=3,S=70"
suite="B=16,H=12,S=1024 B=8,H=25,S=1024 B=4,H=12,S=2048 B=2,H=12,S=4096 B=16,H=12,S=1000"

for step in $steps; do
case $step in
test)
	echo "== test-workloads (log: test.log, errors: test.err)"
	t0=$(date +%s)
	timeout 300 tests/test-workloads attn_res_ln_fwd > "$out/test.log" 2> "$out/test.err"
	echo "rc $?: $(grep -c '^ok' "$out/test.log") ok, $(( $(date +%s) - t0 )) s"
	grep -v '^ok' "$out/test.log" | tail -n 25
	;;
sanitize)
	echo "== compute-sanitizer (log: sanitize.log)"
	for tool in memcheck racecheck synccheck initcheck; do
		for dt in fp32 bf16; do
			for c in auto 4; do
				timeout 300 compute-sanitizer --tool $tool --error-exitcode 9 \
					bench/fpbench -r 2 -w 0 -o clusters=$c attn_res_ln_fwd $dt \
					$small >> "$out/sanitize.log" 2>&1
				echo "$tool attn_res_ln_fwd (every variant) $dt clusters=$c rc $?"
			done
		done
	done
	;;
bench)
	echo "== fpbench at the suite shapes (log: bench.log)"
	for dt in bf16 fp32; do
		for c in auto 1 2 4 8; do
			timeout 300 bench/fpbench -r 20 -o clusters=$c attn_res_ln_fwd $dt $suite \
				>> "$out/bench.log" 2>&1
			echo "fpbench $dt clusters=$c rc $?"
		done
	done
	grep -E '^attn_res_ln_fwd' "$out/bench.log" | head -n 60
	;;
run)
	echo "== fuseprof run (database: $out/arl.db)"
	timeout 600 ./fuseprof run --db "$out/arl.db" --workload attn_res_ln_fwd --tag arl \
		> "$out/run.log" 2>&1
	echo "rc $?"
	./fuseprof query --db "$out/arl.db" fusion-gains | grep -E 'attn|workload' | head -n 40
	./fuseprof report --db "$out/arl.db" --out "$out/arl-report" > /dev/null 2>&1
	echo "report: $out/arl-report/report.md"
	;;
*)
	echo "unknown step '$step' (test, sanitize, bench, run)" >&2
	exit 2
	;;
esac
done
