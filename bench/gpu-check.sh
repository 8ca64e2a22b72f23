#!/bin/sh
# gpu-check.sh - on a GPU machine, from the source tree: build out of tree,
# then the checks that must print the same before and after a change that
# should not change results: the contract test of every workload with a
# fixed seed (its lines compare with diff), compute-sanitizer memcheck of
# every variant and dtype at small awkward shapes, racecheck of the kernels
# that share memory between warps and blocks, `fuseprof run --quick` under
# the collector with a digest of its ops, and runs that steer the kernel
# choice with --kernel-opt (the kernel each op ran is in v_ops.kernel).
# Logs go to $OUT (default ./gpu-out), packed at the end into
# gpu-check-logs.tgz beside quick.db; a summary to stdout.
#   sh bench/gpu-check.sh [test] [memcheck] [racecheck] [quick] [kopts]
#   (default: all five)
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$PWD/gpu-out}
steps=${*:-test memcheck racecheck quick kopts}
seed=${FUSEPROF_SEED:-20261125}
# The Workloads III pairs (elementwise and row kernels, every variant): in
# memcheck (both dtypes) and racecheck (bf16) at small awkward shapes.
wl3="rmsnorm_fwd rmsnorm_bwd bias_dropout_add_fwd bias_dropout_add_bwd
bias_relu_fwd bias_relu_bwd swiglu_fwd swiglu_bwd softplus_chain_fwd
softplus_chain_bwd"
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
build=$(mktemp -d /tmp/fuseprof-check.XXXXXX)
[ -x "$src/configure" ] || (cd "$src" && ./autogen.sh >/dev/null 2>&1)
cd "$build" || exit 1
"$src/configure" -q >/dev/null || exit 1
t0=$(date +%s)
make -j"$(nproc)" fuseprof fuseprof-gpu tests/test-workloads bench/fpbench \
	>"$out/build.log" 2>&1 || { tail -n 40 "$out/build.log"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s; $(git -C "$src" describe --always --dirty --abbrev=7 2>/dev/null);" \
	"HGMMA instructions in the kernels: $(cuobjdump -sass kernels/libfpkernels.a 2>/dev/null | grep -c HGMMA)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

for step in $steps; do
case $step in
test)
	t0=$(date +%s)
	FUSEPROF_SEED=$seed timeout 400 tests/test-workloads >"$out/test.log" 2>"$out/test.err"
	echo "test-workloads (seed $seed) rc $?: $(grep -c '^ok' "$out/test.log") ok," \
		"$(grep -c '^FAIL' "$out/test.log") FAIL, $(( $(date +%s) - t0 )) s;" \
		"digest $(md5sum <"$out/test.log" | cut -c1-12)"
	grep -v '^ok' "$out/test.log" | tail -n 8
	;;
memcheck)
	t0=$(date +%s)
	: >"$out/memcheck.log"
	{ printf '%s\n' "ln_gelu_fwd M=3,N=1023,erf=1 M=1,N=4097" \
		   "ln_gelu_bwd M=3,N=1023,erf=1 M=1,N=4097" \
		   "softmax_fwd M=3,N=1023 M=4,N=50257" \
		   "softmax_masked_fwd M=3,N=1023 M=4,N=50257" \
		   "softmax_bwd M=3,N=1023 M=4,N=50257" \
		   "ln_linear_fwd M=3,K=1023,N=17 M=130,K=64,N=136 M=200,K=264,N=100 M=4000,K=200,N=520" \
		   "ln_linear_bwd M=3,K=1023,N=17 M=130,K=64,N=136 M=200,K=264,N=100 M=1000,K=520,N=136"
	  for w in $wl3; do echo "$w M=1,N=1 M=5,N=36 M=3,N=1023 M=64,N=4096"; done
	} | while read -r job; do
		set -- $job
		w=$1; shift
		for dt in fp32 bf16; do
			timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 \
				bench/fpbench -r 1 -w 0 "$w" $dt "$@" </dev/null >>"$out/memcheck.log" 2>&1
			echo "memcheck $w $dt rc $?"
		done
	done | sort | uniq -c | sed 's/^ *//' | tr '\n' ';'
	echo
	echo "memcheck: $(grep -c 'ERROR SUMMARY: 0 errors' "$out/memcheck.log") clean," \
		"$(grep 'ERROR SUMMARY' "$out/memcheck.log" | grep -vc ' 0 errors') with errors," \
		"$(( $(date +%s) - t0 )) s"
	;;
racecheck)
	t0=$(date +%s)
	: >"$out/racecheck.log"
	{ printf '%s\n' "ln_linear_fwd/fused M=200,K=264,N=100 M=4000,K=200,N=520 M=512,K=1024,N=1024" \
		   "softmax_fwd/fused M=4,N=50257 M=3,N=1023" \
		   "softmax_bwd/fused M=4,N=50257" \
		   "ln_gelu_bwd/fused M=3,N=1023,erf=1 M=64,N=4096"
	  for w in $wl3; do echo "$w M=5,N=36 M=3,N=1023 M=64,N=4096"; done
	} | while read -r job; do
		set -- $job
		w=$1; shift
		timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 \
			bench/fpbench -r 1 -w 0 "$w" bf16 "$@" </dev/null >>"$out/racecheck.log" 2>&1
		echo "racecheck $w bf16 rc $?"
	done | tr '\n' ';'
	echo
	echo "racecheck: $(grep -c 'RACECHECK SUMMARY: 0 hazards' "$out/racecheck.log") clean," \
		"$(( $(date +%s) - t0 )) s"
	;;
kopts)
	t0=$(date +%s)
	db="$out/kopts.db"
	for o in "" gemm=mma gemm=wgmma gemm=wgmma-ws clusters=1 clusters=2; do
		timeout 60 ./fuseprof run --no-counters -w ln_linear_fwd -v fused -t bf16 \
			-s "M=4096,K=1024,N=1024" ${o:+--kernel-opt $o} --db "$db" \
			>>"$out/kopts.log" 2>&1 || echo "ln_linear_fwd '$o' rc $?"
	done
	for o in "" stats_pass=on stats_pass=off; do
		timeout 60 ./fuseprof run --no-counters -w ln_linear_fwd -v fused -t bf16 \
			-s "M=4096,K=2048,N=2048" ${o:+--kernel-opt $o} --db "$db" \
			>>"$out/kopts.log" 2>&1 || echo "ln_linear_fwd '$o' rc $?"
	done
	for o in "" clusters=2 clusters=8 warps=8,slots=8; do
		timeout 60 ./fuseprof run --no-counters -w softmax_fwd -v fused -t fp32 \
			-s "M=64,N=50257" ${o:+--kernel-opt $o} --db "$db" \
			>>"$out/kopts.log" 2>&1 || echo "softmax_fwd '$o' rc $?"
	done
	for o in "" vectors=1 vectors=2 vectors=4; do
		for w in softplus_chain_fwd softplus_chain_bwd; do
			timeout 60 ./fuseprof run --no-counters -w $w -t fp32,bf16 \
				-s "M=16384,N=768;M=16384,N=4096" ${o:+--kernel-opt $o} \
				--db "$db" >>"$out/kopts.log" 2>&1 || echo "$w '$o' rc $?"
		done
	done
	./fuseprof query --db "$db" "SELECT workload, shape, kernel_opts, kernel, status,
		round(time_ns / 1e3, 1) AS us FROM v_ops ORDER BY op_id"
	echo "kopts: $(( $(date +%s) - t0 )) s"
	;;
quick)
	t0=$(date +%s)
	timeout 300 ./fuseprof run --quick --db "$out/quick.db" >"$out/quick.txt" 2>"$out/quick.err"
	echo "fuseprof run --quick rc $?, $(( $(date +%s) - t0 )) s"
	tail -n 3 "$out/quick.err"
	./fuseprof query --db "$out/quick.db" --format csv \
		"SELECT workload, variant, dtype, shape, status, printf('%.1e', rel_err) AS err,
		 round(dram_bytes / model_min_bytes, 2) AS traffic
		 FROM v_ops ORDER BY workload, variant, dtype, shape" >"$out/quick.csv" 2>&1
	./fuseprof query --db "$out/quick.db" \
		"SELECT status, count(*) AS ops FROM v_ops GROUP BY status"
	;;
esac
done
cd "$out" && tar czf gpu-check-logs.tgz --remove-files $(ls *.log *.err *.csv *.txt 2>/dev/null)
