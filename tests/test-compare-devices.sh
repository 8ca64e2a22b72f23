#!/bin/sh
# test-compare-devices.sh - runs on several GPUs (`run --device all`), as
# tests/mkruns writes them: each op judged against its own device's
# ceilings (v_roofline); compare matching ops device by device when both
# runs have several (the second run stores its devices' ops in the other
# order, so matching by index would pair them wrongly; a run on one GPU
# against its first), and refusing two
# runs whose GPUs are of other models unless --force; the run's summary
# table in report and list.
. "${srcdir:-.}/tests/setup"

MKRUNS=${MKRUNS:-${top_builddir:-..}/tests/mkruns}
db=$tmp/d.db

"$MKRUNS" "$db" >/dev/null 2>&1 <<'SPEC' || fail "mkruns failed"
opdevice NVIDIA-H100 0
run two
ceiling dram_bw B/s 3e12
op ln fused fp32 M=1 ok 1 1e6 1e6 100000 0.01 20
opdevice NVIDIA-H100 1
ceiling dram_bw B/s 2e12
op ln fused fp32 M=1 ok 1 1e6 1e6 200000 0.01 20
run three
opdevice NVIDIA-H100 1
op ln fused fp32 M=1 ok 1 1e6 1e6 300000 0.01 20
opdevice NVIDIA-H100 0
op ln fused fp32 M=1 ok 1 1e6 1e6 100000 0.01 20
opdevice NVIDIA-H100 0
run one
op ln fused fp32 M=1 ok 1 1e6 1e6 100000 0.01 20
run mixed
opdevice NVIDIA-H100 0
op ln fused fp32 M=1 ok 1 1e6 1e6 100000 0.01 20
opdevice NVIDIA-H200 0
op ln fused fp32 M=1 ok 1 1e6 1e6 100000 0.01 20
SPEC

# One op a device, each against its device's DRAM roof.
expect_exit 0 "$FUSEPROF" query --db "$db" --format csv "SELECT dram_bw FROM
	v_roofline WHERE run_id = 1 ORDER BY time_ns"
[ "$(tail -n +2 "$tmp/out" | tr -d '\r' | tr '\n' ' ')" = "3000000000000 2000000000000 " ] ||
	fail "each op's DRAM roof is not its device's: $(cat "$tmp/out")"
expect_exit 0 "$FUSEPROF" query --db "$db" --format csv "SELECT count(DISTINCT
	device_id) FROM v_ops WHERE run_id = 2"
[ "$(tail -n 1 "$tmp/out" | tr -d '\r')" = 2 ] || fail "run 2 has not two devices"

# Device by device: 0 the same, 1 slower (100 -> 100 us, 200 -> 300 us).
expect_exit 1 "$FUSEPROF" compare --db "$db" --format csv two three
tr -d '\r' <"$tmp/out" | awk -F, 'NR > 1 { print $1, $2 }' | sort >"$tmp/got"
printf 'SAME ln@0\nSLOWER ln@1\n' >"$tmp/want"
cmp -s "$tmp/got" "$tmp/want" || fail "compare two three: $(cat "$tmp/out")"
expect_exit 0 "$FUSEPROF" compare --db "$db" --format csv three two
tr -d '\r' <"$tmp/out" | awk -F, 'NR > 1 { print $1, $2 }' | sort >"$tmp/got"
printf 'FASTER ln@1\nSAME ln@0\n' >"$tmp/want"
cmp -s "$tmp/got" "$tmp/want" || fail "compare three two: $(cat "$tmp/out")"

# A run on one GPU is the other's first; the second GPU's op is new.
expect_exit 0 "$FUSEPROF" compare --db "$db" --format csv one two
tr -d '\r' <"$tmp/out" | awk -F, 'NR > 1 { print $1, $2 }' | sort >"$tmp/got"
printf 'ADDED ln@1\nSAME ln@0\n' >"$tmp/want"
cmp -s "$tmp/got" "$tmp/want" || fail "compare one two: $(cat "$tmp/out")"

# Another model among a run's GPUs: refused (exit 2, one line naming both
# runs' models), unless --force.
expect_exit 2 "$FUSEPROF" compare --db "$db" two mixed
one_line_error "NVIDIA-H100, NVIDIA-H200" "force"
expect_exit 0 "$FUSEPROF" compare --db "$db" --force two mixed

# The report of a run of two devices reads each op's own numbers.
expect_exit 0 "$FUSEPROF" report --db "$db" -r two --out "$tmp/rep" --no-plots
[ "$(tr -d '\r' <"$tmp/rep/roofline.csv" | grep -c ",ln,")" = 2 ] ||
	fail "roofline.csv: $(cat "$tmp/rep/roofline.csv")"

# Charts: two GPUs of one model on one roofline, each device's ops marked
# apart (variant@N); two models, a roofline each under its own roofs.
if command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
	expect_exit 0 "$FUSEPROF" report --db "$db" -r two --out "$tmp/two" --keep-data
	[ -s "$tmp/two/roofline.png" ] || fail "run two: no roofline.png"
	[ "$(grep -c '' "$tmp/two/roofline.points.dat")" = 2 ] ||
		fail "run two: not both devices' ops on one chart"
	grep -q 'markers = "\\"fused@0\\" \\"fused@1\\""' "$tmp/two/plots.gp" ||
		fail "run two: devices not marked apart: $(grep markers "$tmp/two/plots.gp")"
	grep -q '3 TB/s' "$tmp/two/roofline.roofs.dat" ||
		fail "run two: not the first device's roof"
	expect_exit 0 "$FUSEPROF" report --db "$db" -r mixed --out "$tmp/mixed" --keep-data
	[ ! -e "$tmp/mixed/roofline.png" ] || fail "run mixed: one roofline for two models"
	for m in NVIDIA-H100 NVIDIA-H200; do
		[ -s "$tmp/mixed/roofline-$m.png" ] || fail "run mixed: no roofline-$m.png"
		[ "$(grep -c '' "$tmp/mixed/roofline-$m.points.dat")" = 1 ] ||
			fail "run mixed: roofline-$m does not hold its model's op alone"
		grep -q "roofline-$m.png" "$tmp/mixed/report.md" || fail "report.md lacks roofline-$m"
	done
fi
exit 0
