# test-report-sample.sh - the shipped sample database (a real H100 run)
# reports end to end: every op in the roofline table, every fusion pair in
# the fusion table, counters on every op, plots when gnuplot is there.
. "$srcdir/tests/setup"

# A read-only open of a WAL database may leave -shm files beside it: work on
# a copy, the source tree may be read-only.
cp "$top_srcdir/examples/h100-sample.db" "$tmp/sample.db"
db="$tmp/sample.db"
q() { "$FUSEPROF" query --db "$db" --format csv "$1" | tail -n 1 | tr -d '\r'; }

ops=$(q "SELECT count(*) FROM v_ops WHERE status = 'ok'")
[ "$ops" -gt 0 ] || fail "the sample has no ok ops"
[ "$(q "SELECT count(*) FROM v_ops WHERE ncounters = 0")" = 0 ] || fail "ops without counters"
[ "$(q "SELECT count(*) FROM v_ops WHERE dram_bytes IS NULL OR dram_bytes <= 0")" = 0 ] ||
	fail "ops without DRAM bytes"
[ "$(q "SELECT status FROM v_runs")" = complete ] || fail "the sample run is not complete"
pairs=$(q "SELECT count(*) FROM v_fusion")
[ "$pairs" -gt 0 ] || fail "the sample has no fusion pairs"

[ -n "${GNUPLOT:-}" ] && [ -x "$GNUPLOT" ] || export GNUPLOT=/nonexistent/gnuplot
FUSEPROF_DATADIR="$top_srcdir/plots" expect_exit 0 "$FUSEPROF" report --db "$db" --out "$tmp/rep"
grep -q 'NVIDIA H100' "$tmp/rep/report.md" || fail "report.md does not name the device"
[ "$(tail -n +2 "$tmp/rep/roofline.csv" | grep -c .)" = "$ops" ] || fail "roofline.csv rows != $ops ops"
[ "$(tail -n +2 "$tmp/rep/fusion.csv" | grep -c .)" = "$pairs" ] || fail "fusion.csv rows != $pairs pairs"
if [ "$GNUPLOT" != /nonexistent/gnuplot ]; then
	for f in roofline fusion; do
		[ "$(head -c 8 "$tmp/rep/$f.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
			fail "$f.png is not a PNG"
	done
	grep -q 'data:image/png;base64,' "$tmp/rep/report.html" || fail "report.html embeds no image"
fi
