#!/bin/sh
# test-report-cli.sh - `fuseprof report` end to end on a synthetic database:
# every output exists and is well-formed, the wrong ops are listed and kept
# out of the gains, and the options (--format, --workload, --keep-data,
# --run by tag and latest~N) do what they say.
. "${srcdir:-.}/tests/setup"

FUSEPROF_DATADIR=$(cd "$top_srcdir/plots" && pwd)
export FUSEPROF_DATADIR
mkdb=${top_builddir:-.}/tests/mkdb
db=$tmp/t.db
seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
echo "seed $seed" >&2

"$mkdb" -s "$seed" -w 6 -t first "$db" 30 >/dev/null
"$mkdb" -s "$((seed + 1))" -w 5 -t second "$db" 12 >/dev/null

has_gnuplot=no
if command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
	has_gnuplot=yes
fi

# The latest run (12 ops: ln_gelu x3, softmax x2, ln_linear_fwd x2 ...).
expect_exit 0 "$FUSEPROF" report --db "$db" --out "$tmp/r1"
for f in report.md report.html report.json roofline.csv fusion.csv ceilings.csv; do
	[ -s "$tmp/r1/$f" ] || fail "missing or empty $f"
done
grep -q '^workload' "$tmp/out" || fail "no summary table on stdout: $(cat "$tmp/out")"
grep -q 'written to' "$tmp/out" || fail "stdout does not say where the report went"
if [ "$has_gnuplot" = yes ]; then
	[ ! -s "$tmp/err" ] || fail "unexpected stderr: $(cat "$tmp/err")"
else
	[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q 'gnuplot' "$tmp/err" ||
		fail "without gnuplot, want one warning naming it: $(cat "$tmp/err")"
fi

# The report names the device, run, versions, ceilings and wrong ops.
md=$tmp/r1/report.md
grep -q '^# fuseprof report: run 2, Synthetic H100' "$md" || fail "no title in report.md"
grep -q 'measured with fuseprof' "$md" || fail "report.md does not state the tool version"
grep -q 'Missing ceilings.*tensor_tf32' "$md" || fail "report.md does not list missing ceilings"
grep -q '^| dram_bw | 3 | TB/s | measured |' "$md" || fail "report.md: dram_bw is not the measured 3 TB/s"
nwrong=$(grep -c ',wrong,' "$tmp/r1/roofline.csv" || true)
[ "$nwrong" -gt 0 ] || fail "the synthetic run has no wrong op"
grep -q "$nwrong ops* failed" "$md" || fail "report.md does not count $nwrong wrong ops"
if [ "$has_gnuplot" = yes ]; then
	for f in roofline.png roofline.svg fusion.png fusion.svg; do
		[ -s "$tmp/r1/$f" ] || fail "missing $f"
	done
	grep -q '!\[.*\](roofline.png)' "$md" || fail "report.md does not show roofline.png"
	grep -q 'src="data:image/png;base64,iVBORw0KGgo' "$tmp/r1/report.html" ||
		fail "report.html does not embed its PNGs"
	! ls "$tmp/r1"/*.dat >/dev/null 2>&1 || fail ".dat files left without --keep-data"
fi

# HTML: one document, balanced tables, no reference outside itself.
html=$tmp/r1/report.html
head -n 1 "$html" | grep -q '^<!DOCTYPE html>' || fail "report.html has no doctype"
tail -n 1 "$html" | grep -q '</body></html>' || fail "report.html is not closed"
[ "$(grep -o '<table>' "$html" | wc -l)" = "$(grep -o '</table>' "$html" | wc -l)" ] ||
	fail "report.html: unbalanced tables"
! grep -q 'src="[^d]' "$html" || fail "report.html refers to outside files"

# JSON and CSV parse, and agree with the database.
if command -v python3 >/dev/null 2>&1; then
	python3 - "$tmp/r1" <<'PY' || fail "json/csv check failed"
import csv, json, sys, os
d = sys.argv[1]
j = json.load(open(os.path.join(d, "report.json")))
assert j["run"]["id"] == 2, j["run"]
ops = j["ops"]
assert len(ops) == 12, len(ops)
wrong = {o["op_id"] for o in ops if o["status"] != "ok"}
assert wrong, "no wrong op"
for p in j["fusion"]:
    assert p["fused_op_id"] not in wrong and p["base_op_id"] not in wrong, p
    assert p["speedup"] > 0
rows = list(csv.DictReader(open(os.path.join(d, "roofline.csv"), newline="")))
assert len(rows) == 12
assert {r["op_id"] for r in rows} == {str(o["op_id"]) for o in ops}
# Every ok op has a % of roof, except where its precision has no ceiling
# (tensor_tf32 is missing from the synthetic device): then none at all.
roofed = 0
for r in rows:
    if r["status"] == "ok" and r["precision"] != "tensor_tf32":
        assert 0 < float(r["roof_pct"]) <= 100, r["roof_pct"]
        roofed += 1
    if r["precision"] == "tensor_tf32":
        assert r["roof_pct"] == "" and r["peak_flop_rate"] == "", r
assert roofed > 0
f = list(csv.DictReader(open(os.path.join(d, "fusion.csv"), newline="")))
assert len(f) == len(j["fusion"])
PY
fi

# --run by tag and by latest~1; --format picks files; --workload filters.
expect_exit 0 "$FUSEPROF" report --db "$db" --run first --out "$tmp/r2" --format md,csv --no-plots
grep -q '^# fuseprof report: run 1,' "$tmp/r2/report.md" || fail "--run first did not pick run 1"
[ -f "$tmp/r2/roofline.csv" ] || fail "--format csv wrote no csv"
[ ! -f "$tmp/r2/report.html" ] && [ ! -f "$tmp/r2/report.json" ] || fail "--format md,csv wrote more"
expect_exit 0 "$FUSEPROF" report --db "$db" --run latest~1 --out "$tmp/r3" --format json \
	--workload softmax --no-plots
grep -q '"id": 1' "$tmp/r3/report.json" || fail "latest~1 is not run 1"
! grep -q '"workload": "ln_gelu"' "$tmp/r3/report.json" || fail "--workload softmax kept ln_gelu"
grep -q '"workload": "softmax"' "$tmp/r3/report.json" || fail "--workload softmax lost softmax"

# --keep-data: the data and the scripts stay, and redraw on their own.
if [ "$has_gnuplot" = yes ]; then
	expect_exit 0 "$FUSEPROF" report --db "$db" --out "$tmp/r4" --keep-data --hierarchical \
		--size 640x480 --format md
	for f in plots.gp roofline.gp fusion.gp roofline.points.dat roofline-levels.png; do
		[ -s "$tmp/r4/$f" ] || fail "--keep-data: missing $f"
	done
	rm "$tmp/r4/fusion.png"
	(cd "$tmp/r4" && "${GNUPLOT:-gnuplot}" plots.gp) || fail "plots.gp does not redraw"
	[ -s "$tmp/r4/fusion.png" ] || fail "plots.gp did not redraw fusion.png"
fi

# help
expect_exit 0 "$FUSEPROF" report --help
grep -q 'Usage: fuseprof report' "$tmp/out" || fail "no usage in --help"
expect_exit 0 "$FUSEPROF" help report
exit 0
