# test-report-sample.sh - the shipped sample databases (real runs on an
# H100 and an H200) report end to end: every op in the roofline table, every
# fusion pair in the fusion table, counters on every op, plots when gnuplot
# is there.
. "$srcdir/tests/setup"

[ -n "${GNUPLOT:-}" ] && [ -x "$GNUPLOT" ] || export GNUPLOT=/nonexistent/gnuplot
for gpu in h100 h200; do
	# A read-only open of a WAL database may leave -shm files beside it: work on
	# a copy, the source tree may be read-only.
	cp "$top_srcdir/examples/$gpu-sample.db" "$tmp/$gpu.db"
	db="$tmp/$gpu.db"
	q() { "$FUSEPROF" query --db "$db" --format csv "$1" | tail -n 1 | tr -d '\r'; }

	ops=$(q "SELECT count(*) FROM v_ops WHERE status = 'ok'")
	[ "$ops" -gt 0 ] || fail "the sample has no ok ops"
	[ "$(q "SELECT count(*) FROM v_ops WHERE ncounters = 0")" = 0 ] || fail "ops without counters"
	[ "$(q "SELECT count(*) FROM v_ops WHERE dram_bytes IS NULL OR dram_bytes <= 0")" = 0 ] ||
		fail "ops without DRAM bytes"
	[ "$(q "SELECT status FROM v_runs")" = complete ] || fail "the sample run is not complete"
	pairs=$(q "SELECT count(*) FROM v_fusion")
	[ "$pairs" -gt 0 ] || fail "the sample has no fusion pairs"

	rep=$tmp/rep-$gpu
	FUSEPROF_DATADIR="$top_srcdir/plots" expect_exit 0 "$FUSEPROF" report --db "$db" --out "$rep"
	name=$(echo "$gpu" | tr a-z A-Z)
	grep -q "NVIDIA $name" "$rep/report.md" || fail "$gpu: report.md does not name the device"
	[ "$(tail -n +2 "$rep/roofline.csv" | grep -c .)" = "$ops" ] || fail "$gpu: roofline.csv rows != $ops ops"
	[ "$(tail -n +2 "$rep/fusion.csv" | grep -c .)" = "$pairs" ] || fail "$gpu: fusion.csv rows != $pairs pairs"
	if [ "$GNUPLOT" != /nonexistent/gnuplot ]; then
		for f in roofline fusion; do
			[ "$(head -c 8 "$rep/$f.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
				fail "$gpu: $f.png is not a PNG"
		done
		grep -q 'data:image/png;base64,' "$rep/report.html" || fail "$gpu: report.html embeds no image"
	fi
done
# The newest sample (the H200's) holds every workload the registry has;
# the H100's, recorded before attn_res_ln_fwd existed (examples/README.md),
# every other one; neither names a workload the registry lacks.
wls=$("$FUSEPROF" list workloads --format csv | tail -n +2 | cut -d, -f1)
[ -n "$wls" ] || fail "list workloads names no workload"
for gpu in h100 h200; do
	for w in $wls; do
		[ "$gpu/$w" = h100/attn_res_ln_fwd ] && continue
		[ "$("$FUSEPROF" query --db "$tmp/$gpu.db" --format csv "SELECT count(*) FROM v_ops WHERE workload = '$w'" | tail -n 1 | tr -d '\r')" -gt 0 ] ||
			fail "the $gpu sample lacks workload $w"
	done
	for w in $("$FUSEPROF" query --db "$tmp/$gpu.db" --format csv "SELECT DISTINCT workload FROM v_ops" | tail -n +2 | tr -d '\r'); do
		echo "$wls" | grep -qx "$w" || fail "the $gpu sample names workload $w, which the registry lacks"
	done
done
