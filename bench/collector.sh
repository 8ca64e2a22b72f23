#!/bin/sh
# collector.sh - on a GPU machine: fuseprof's collector against Nsight
# Compute (the same counters on the same kernels, and the time each takes to
# collect them) and CUPTI Activity timing against plain cudaEvent timing.
# Builds out of tree; leaves logs, databases and tables in $OUT (default
# ./collector-out); $BUILD names a build directory to reuse.
#   sh bench/collector.sh [SHAPE]      (default M=16384,N=4096)
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$PWD/collector-out}
shape=${1:-M=16384,N=4096}
mkdir -p "$out"
build=${BUILD:-$(mktemp -d /tmp/fuseprof-build.XXXXXX)}
export PATH=/usr/local/cuda/bin:$PATH
[ -x "$src/configure" ] || (cd "$src" && ./autogen.sh >/dev/null)
cd "$build"
"$src/configure" -q >/dev/null
make -j"$(nproc)" fuseprof bench tests/test-probes-gpu >"$out/build.log" 2>&1 ||
	{ tail -n 40 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader |
	tee "$out/device.txt"
ncu --version | tail -n 1 | tee -a "$out/device.txt"
git -C "$src" describe --always --dirty --abbrev=7 2>/dev/null | tee -a "$out/device.txt"

wls="ln_gelu_fwd ln_gelu_bwd softmax_fwd softmax_masked_fwd softmax_bwd"
metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,l1tex__t_bytes.sum,sm__sass_thread_inst_executed_op_fadd_pred_on.sum,sm__sass_thread_inst_executed_op_fmul_pred_on.sum,sm__sass_thread_inst_executed_op_ffma_pred_on.sum

# 1. Counters side by side: fp32, every variant of two workloads; ncu with
# its default cache flush and no clock lock, on fpbench's one launch of each
# kernel (-k: no check, whose launches would be profiled too).
echo "== accuracy" | tee -a "$out/device.txt"
./fuseprof run --workload ln_gelu_fwd,softmax_fwd --dtype fp32 --shape "$shape" \
	--reps 5 --replay op --db "$out/acc.db" >/dev/null 2>"$out/acc.err"
./fuseprof run --workload ln_gelu_fwd,softmax_fwd --dtype fp32 --shape "$shape" \
	--reps 5 --replay op --flush kernel --db "$out/accf.db" >/dev/null 2>"$out/accf.err"
./fuseprof run --workload ln_gelu_fwd,softmax_fwd --dtype fp32 --shape "$shape" \
	--reps 5 --replay kernel --db "$out/acck.db" >/dev/null 2>"$out/acck.err"
for w in ln_gelu_fwd softmax_fwd; do
	ncu --cache-control all --clock-control none --print-kernel-base mangled \
		--print-units base --csv --metrics "$metrics" \
		./bench/fpbench -k -r 1 -w 0 "$w" fp32 "$shape" >"$out/ncu-$w.csv" 2>"$out/ncu-$w.err"
done
python3 "$src/bench/ncu-compare.py" "op=$out/acc.db" "op, --flush kernel=$out/accf.db" \
	"kernel=$out/acck.db" "$out"/ncu-*.csv |
	tee "$out/accuracy.md"

# 2. Time to collect the roofline counters: fuseprof's own account of its
# counter passes against what ncu's roofline section adds to a bare run.
echo "== collection time" | tee -a "$out/device.txt"
./fuseprof run --workload "$(echo $wls | tr ' ' ,)" --shape "$shape" --reps 5 \
	--db "$out/speed.db" >/dev/null 2>"$out/speed.err"
tail -n 1 "$out/speed.err" | tee -a "$out/device.txt"
t_bare=0; t_ncu=0; nprof=0
for w in $wls; do
	for dt in fp32 bf16; do
		s=$(date +%s.%N)
		./bench/fpbench -k -r 1 -w 0 "$w" "$dt" "$shape" >/dev/null 2>&1
		e=$(date +%s.%N)
		ncu --section SpeedOfLight_RooflineChart ./bench/fpbench -k -r 1 -w 0 \
			"$w" "$dt" "$shape" >"$out/ncu-speed-$w-$dt.log" 2>&1
		f=$(date +%s.%N)
		n=$(grep -c '==PROF== Profiling' "$out/ncu-speed-$w-$dt.log")
		t_bare=$(awk "BEGIN { print $t_bare + $e - $s }")
		t_ncu=$(awk "BEGIN { print $t_ncu + $f - $e }")
		nprof=$((nprof + n))
	done
done
echo "ncu --section SpeedOfLight_RooflineChart: $nprof kernels profiled, bare $t_bare s, under ncu $t_ncu s" |
	tee -a "$out/device.txt"

# 3. Timing overhead: the same launches timed with events and with Activity.
echo "== timing overhead" | tee -a "$out/device.txt"
for w in $wls; do
	for dt in fp32 bf16; do
		./bench/fpbench -k -a -r 50 -w 5 "$w" "$dt" "$shape"
	done
done >"$out/overhead.txt" 2>&1
grep '^total wall' "$out/overhead.txt" | awk '{e += $3; a += $7} END {
	printf "all ops: %.1f ms with events, %.1f ms with Activity (%+.2f%%)\n",
	e, a, 100 * (a / e - 1) }' | tee -a "$out/device.txt"
