#!/bin/sh
# writeback.sh - on a GPU machine, from a build directory: DRAM bytes of
# kernels of known traffic, below and far above the L2 size, as fuseprof
# counts them (reads, writes, and the write-back of the lines each op left
# dirty in L2) and as Nsight Compute counts them (--cache-control all),
# against the workloads' byte models. One line per case, for
# bench/RESULTS.md.
#   sh bench/writeback.sh [BUILD_DIR] [OUT_DIR]
set -u
b=${1:-.}
out=${2:-${OUT:-.}}
db=$out/writeback.db
rm -f "$db"
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || echo "")
cases="softmax_fwd/fused bf16 M=2048,N=1024
softmax_fwd/fused bf16 M=16384,N=4096
ln_gelu_fwd/fused bf16 M=2048,N=768
ln_gelu_fwd/fused bf16 M=16384,N=4096
softmax_bwd/fused fp32 M=2048,N=1024
softmax_bwd/fused fp32 M=16384,N=4096
softmax_fwd/fused bf16 M=65536,N=8192
ln_linear_fwd/fused bf16 M=2048,K=768,N=256
ln_linear_fwd/fused bf16 M=16384,K=4096,N=4096"
printf 'case | model min | fuseprof read | write | write-back | total/min | ncu read | ncu write | ncu total/min\n'
echo "$cases" | while read -r wv dt shape; do
	w=${wv%/*}
	v=${wv#*/}
	timeout 120 "$b/fuseprof-gpu" run --db "$db" -w "$w" -v "$v" -t "$dt" -s "$shape" \
		>>"$out/writeback-run.log" 2>&1 || { echo "$wv $dt $shape: run failed"; continue; }
	row=$("$b/fuseprof" query --db "$db" --format csv "SELECT o.model_min_bytes,
		sum(CASE c.metric WHEN 'dram__bytes_read.sum' THEN c.value END),
		sum(CASE c.metric WHEN 'dram__bytes_write.sum' THEN c.value END),
		sum(CASE c.metric WHEN 'fuseprof.dram_writeback_bytes' THEN c.value END),
		o.launches
		FROM ops o JOIN kernels k ON k.op_id = o.id JOIN counters c ON c.kernel_id = k.id
		WHERE o.run_id = (SELECT max(id) FROM runs) GROUP BY o.id" | tr -d '\r' | tail -n 1)
	k=$(echo "$row" | awk -F, '{print $5}')
	nr=""; nw=""
	if [ -n "$ncu" ]; then
		timeout 120 "$ncu" --cache-control all --metrics dram__bytes_read.sum,dram__bytes_write.sum \
			--csv --print-units base "$b/bench/fpbench" -k -r 1 -w 0 "$wv" "$dt" "$shape" \
			>"$out/ncu.csv" 2>>"$out/writeback-ncu.log"
		# The op's kernels only, its k launches at the end: fpbench fills
		# and prepares its inputs on the GPU first.
		ids=$(grep '"dram__bytes_read.sum"' "$out/ncu.csv" | awk -F'","' '{gsub(/"/,"",$1); print $1}' | sort -n | tail -n "$k" | tr '\n' ' ')
		sum() {
			grep "\"$1\"" "$out/ncu.csv" | awk -F'","' -v ids=" $ids" '{
				id = $1; gsub(/"/, "", id)
				if (index(ids, " " id " ")) { gsub(/[",]/, "", $NF); s += $NF }
			} END { printf "%.0f", s }'
		}
		nr=$(sum dram__bytes_read.sum)
		nw=$(sum dram__bytes_write.sum)
		cat "$out/ncu.csv" >>"$out/writeback-ncu.log"
	fi
	echo "$row" | awk -F, -v c="$wv $dt $shape" -v nr="$nr" -v nw="$nw" '{
		t = $2 + $3 + $4;
		printf "%s | %.4g | %.4g | %.4g | %.4g | %.3f | %s | %s | %s\n", c, $1, $2, $3, $4,
			t / $1, nr, nw, (nr != "" ? sprintf("%.3f", (nr + nw) / $1) : "")
	}'
done
