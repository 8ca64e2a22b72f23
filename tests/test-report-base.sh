#!/bin/sh
# test-report-base.sh - `fuseprof report --base`: two runs with chosen
# numbers give the section "Against run N (tag)" (report.md, report.html),
# base.csv and report.json's base array with the right pairs, ratios and
# reasons an op has no arrow, the ops only in one run by name; the plots
# draw one base arrow per pair with a place on the roofline in both runs
# (checked in the kept .dat files when gnuplot is present), on the
# per-workload charts when there are many ops; two profiles pair by range
# path, as compare pairs them; an unknown base, and the run itself, are
# usage errors that write nothing.
. "${srcdir:-.}/tests/setup"

FUSEPROF_DATADIR=$(cd "$top_srcdir/plots" && pwd)
export FUSEPROF_DATADIR
MKRUNS=${MKRUNS:-${top_builddir:-..}/tests/mkruns}
db=$tmp/b.db

has_gnuplot=no
if command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1; then
	has_gnuplot=yes
else
	echo "note: no gnuplot: the arrows in the plots' data are not checked" >&2
fi

# Run 1 (before) and run 2 (after): ln_gelu fused halves its time, unfused
# moves fewer bytes (both have an arrow); softmax fused fails its check in
# run 2, softmax unfused has no counters in run 1, gemm counts no FLOPs in
# run 1 (no place on a log axis): no arrows. old is only in run 1, new
# only in run 2. One DRAM ceiling and one peak: a chart with one roof.
"$MKRUNS" "$db" >"$tmp/ids" 2>/dev/null <<'SPEC'
device NVIDIA-H100
run before
ceiling dram_bw B/s 3.0e12
ceiling fp32_fma FLOP/s 5.0e13
op ln_gelu fused   fp32 M=64 ok 1 1.0e9 5.0e8 400000 0.02 21
op ln_gelu unfused fp32 M=64 ok 3 3.0e9 5.0e8 600000 0.02 21
op softmax fused   fp32 M=64 ok 1 5.4e8 1.0e8 180000 0.02 21
op softmax unfused fp32 M=64 ok 4 -     -     400000 0.02 21
op gemm    tiled   fp32 M=64 ok 1 1.0e8 0     100000 0.02 21
op old     thing   fp32 M=1  ok 1 1.0e6 1.0e6 1000   0.01 5
run after
ceiling dram_bw B/s 3.0e12
ceiling fp32_fma FLOP/s 5.0e13
op ln_gelu fused   fp32 M=64 ok 1 1.0e9 5.0e8 200000 0.02 21
op ln_gelu unfused fp32 M=64 ok 3 1.5e9 5.0e8 450000 0.02 21
op softmax fused   fp32 M=64 wrong 1 5.4e8 1.0e8 100000 0.02 21
op softmax unfused fp32 M=64 ok 4 2.0e9 1.0e8 300000 0.02 21
op gemm    tiled   fp32 M=64 ok 1 1.0e8 1.0e8 100000 0.02 21
op new     thing   fp32 M=1  ok 1 -     -     1000   0.01 5
SPEC
[ "$(cat "$tmp/ids")" = "$(printf '1\n2')" ] || fail "mkruns made runs $(cat "$tmp/ids")"

expect_exit 0 "$FUSEPROF" report --db "$db" --base before --out "$tmp/r" --keep-data
grep -q '^against run 1: 5 ops in both runs, 2 with an arrow on the roofline; 1 only in run 1, 1 only in run 2$' "$tmp/out" ||
	fail "stdout does not sum up the base: $(cat "$tmp/out")"

# base.csv: a row per pair, per op of one run; the ratio is after / before.
tr -d '\r' <"$tmp/r/base.csv" >"$tmp/base.csv"
head -n 1 "$tmp/base.csv" | grep -qx 'in,workload,dtype,shape,base_run_id,base_op_id,base_variant,base_status,run_id,op_id,variant,status,base_time_ns,time_ns,time_ratio,base_dram_bytes,dram_bytes,base_roof_pct,roof_pct,base_ai_dram,ai_dram,base_flop_rate,flop_rate,arrow,no_arrow' ||
	fail "base.csv header: $(head -n 1 "$tmp/base.csv")"
tail -n +2 "$tmp/base.csv" | awk -F, -v OFS='|' '{ print $1, $2, $7, $11, $24, $25 }' | sort >"$tmp/got"
sort >"$tmp/want" <<'EOF'
both|ln_gelu|fused|fused|1|
both|ln_gelu|unfused|unfused|1|
both|softmax|fused|fused|0|failed its check in run 2
both|softmax|unfused|unfused|0|no counters in run 1
both|gemm|tiled|tiled|0|no FLOPs counted in run 1
base|old|thing|||
run|new||thing||
EOF
diff "$tmp/want" "$tmp/got" >&2 || fail "base.csv pairs differ (above)"
row() { grep "^both,$1,fp32,M=64,1,[0-9]*,$2," "$tmp/base.csv"; }
# Medians within 1% of the chosen ones (a 2% spread): 0.5 and 0.75.
row ln_gelu fused | awk -F, '{ exit !($15 > 0.49 && $15 < 0.51) }' ||
	fail "ln_gelu fused ratio: $(row ln_gelu fused)"
row ln_gelu unfused | awk -F, '{ exit !($15 > 0.735 && $15 < 0.765 && $16 == 3000000000 && $17 == 1500000000) }' ||
	fail "ln_gelu unfused ratio or bytes: $(row ln_gelu unfused)"
# A wrong op has no ratio; an op without counters has no bytes.
row softmax fused | awk -F, '{ exit !($15 == "" && $12 == "wrong") }' ||
	fail "a wrong op got a ratio: $(row softmax fused)"
row softmax unfused | awk -F, '{ exit !($16 == "" && $17 == 2000000000 && $18 == "" && $19 > 0) }' ||
	fail "no-counter op: $(row softmax unfused)"
# The % of roof of both: ln_gelu fused at 0.5 FLOP/B runs 2.5 TFLOP/s in
# run 2 against a 1.5 TFLOP/s roof.
row ln_gelu fused | awk -F, '{ exit !($18 > 80 && $18 < 86 && $19 > 160 && $19 < 172) }' ||
	fail "ln_gelu fused % of roof: $(row ln_gelu fused)"

# The section, in both documents.
md=$tmp/r/report.md
grep -q '^## Against run 1 (before)$' "$md" || fail "report.md has no section against run 1"
grep -q "matched as 'fuseprof compare 1 2' matches them: by workload, variant, dtype and shape" "$md" ||
	fail "report.md does not say how ops were matched"
grep -q '5 ops are in both runs' "$md" || fail "report.md: pairs"
grep -q '2 of them have a place on the roofline in both runs' "$md" || fail "report.md: arrows"
grep -q '3 could not be drawn.*: 1 no counters in run 1, 1 no FLOPs counted in run 1, 1 failed its check in run 2\.' "$md" ||
	fail "report.md does not count the pairs without an arrow by reason: $(grep 'could not' "$md")"
grep -q 'Only in run 1 (1 op): old/thing/fp32/M=1\.' "$md" || fail "report.md: op only in run 1"
grep -q 'Only in run 2 (1 op): new/thing/fp32/M=1\.' "$md" || fail "report.md: op only in run 2"
grep -q '^| workload | variant | dtype | shape | run 1 µs | run 2 µs | ÷ run 1 |' "$md" ||
	fail "report.md: the table's header"
[ "$(sed -n '/^## Against run 1/,/^## Fusion/p' "$md" | grep -c '^| [a-z]')" = 6 ] ||
	fail "report.md: want a header and 5 pairs in the section"
grep -q '^| softmax | unfused | fp32 | M=64 |.*| no: no counters in run 1 |$' "$md" ||
	fail "report.md: the no-arrow reason of softmax unfused"
grep -q '<h2>Against run 1 (before)</h2>' "$tmp/r/report.html" || fail "report.html has no section"
[ "$(grep -o '<table>' "$tmp/r/report.html" | wc -l)" = "$(grep -o '</table>' "$tmp/r/report.html" | wc -l)" ] ||
	fail "report.html: unbalanced tables"
grep -q '"base_run": {"id": 1, "tag": "before",' "$tmp/r/report.json" || fail "report.json: base_run"
# Runs, not profiles: no predictions to set against the run.
grep -q '"base_predicted": \[\]' "$tmp/r/report.json" || fail "report.json: base_predicted not empty"
! grep -q '^### Fusion predicted' "$md" || fail "report.md: predictions for a base that is no profile"
if command -v python3 >/dev/null 2>&1; then
	python3 - "$tmp/r/report.json" <<'PY' || fail "report.json's base does not parse or add up"
import json, sys
j = json.load(open(sys.argv[1]))
b = j["base_run"]
assert (b["pairs"], b["with_arrow"], b["only_in_base"], b["only_in_run"]) == (5, 2, 1, 1), b
assert b["matched_by"] == "workload, variant, dtype, shape", b
rows = j["base"]
assert len(rows) == 7, len(rows)
assert sum(1 for r in rows if r["arrow"] == 1) == 2
PY
fi

# The plots: one base arrow (style 4) per pair with an arrow, keyed.
if [ "$has_gnuplot" = yes ]; then
	[ -s "$tmp/r/roofline.png" ] || fail "no roofline.png"
	n=$(cat "$tmp/r"/*.arrows.dat | awk '$5 == 4' | wc -l)
	[ "$n" = 2 ] || fail "want 2 base arrows in the plots' data, got $n"
	grep -q '^arrow_names = .*base run 1 -> run 2' "$tmp/r/plots.gp" || fail "plots.gp has no key for the base arrows"
	grep -q '^arrow_styles = ".*4"$' "$tmp/r/plots.gp" || fail "plots.gp does not draw style 4"
	! grep -q 'moved too little' "$md" || fail "report.md says arrows were left out"
fi

# Without gnuplot, and with --no-plots: the tables all the same.
expect_exit 0 env GNUPLOT=/nonexistent/gnuplot "$FUSEPROF" report --db "$db" --base 1 --out "$tmp/ng"
[ -s "$tmp/ng/base.csv" ] || fail "no base.csv without gnuplot"
grep -q '(on the plots, when drawn)' "$tmp/ng/report.md" || fail "report.md without plots: arrows"
expect_exit 0 "$FUSEPROF" report --db "$db" --base 1 --no-plots --format csv --out "$tmp/np"
cmp -s "$tmp/np/base.csv" "$tmp/r/base.csv" || fail "--no-plots wrote another base.csv"

# The same folder without --base: base.csv goes, with the section.
expect_exit 0 "$FUSEPROF" report --db "$db" --no-plots --format csv,md --out "$tmp/np"
[ ! -e "$tmp/np/base.csv" ] || fail "a report without --base left base.csv"
! grep -q 'Against run' "$tmp/np/report.md" || fail "a report without --base has the section"

# Usage errors: one line, exit 2, nothing written.
expect_exit 2 "$FUSEPROF" report --db "$db" --base 42 --out "$tmp/e"
one_line_error "--base" "42"
expect_exit 2 "$FUSEPROF" report --db "$db" --base nosuchtag --out "$tmp/e"
one_line_error "--base" "nosuchtag"
expect_exit 2 "$FUSEPROF" report --db "$db" --base latest --out "$tmp/e"
one_line_error "--base" "run 2"
expect_exit 2 "$FUSEPROF" report --db "$db" --run before --base 1 --out "$tmp/e"
one_line_error "--base" "run 1"
expect_exit 2 "$FUSEPROF" report --db "$db" --base '' --out "$tmp/e"
one_line_error "--base"
[ ! -e "$tmp/e" ] || fail "a refused --base created the output folder"

# Many ops (30 of 3 workloads): the overview draws no arrows, each
# workload's chart draws its own, 30 in all.
{
	echo "device NVIDIA-H100"
	for r in 1 2; do
		echo "run many$r"
		echo "ceiling dram_bw B/s 3.0e12"
		echo "ceiling fp32_fma FLOP/s 5.0e13"
		for w in wa wb wc; do
			for m in 1 2 3 4 5 6 7 8 9 10; do
				# Run 2: twice the FLOPs in the same time, a third
				# fewer bytes.
				echo "op $w fused fp32 M=$m ok 1 $((r == 1 ? 900 : 600))000000 $((r * m))0000000 400000 0.02 5"
			done
		done
	done
} | "$MKRUNS" "$tmp/many.db" >/dev/null 2>&1
expect_exit 0 "$FUSEPROF" report --db "$tmp/many.db" --base many1 --out "$tmp/m" --keep-data --format csv
[ "$(tail -n +2 "$tmp/m/base.csv" | tr -d '\r' | grep -c '^both,.*,1,$')" = 30 ] || fail "many: want 30 pairs with an arrow"
if [ "$has_gnuplot" = yes ]; then
	[ "$(awk '$5 == 4' "$tmp/m/roofline.arrows.dat" | wc -l)" = 0 ] ||
		fail "many: the overview draws base arrows"
	for w in wa wb wc; do
		n=$(awk '$5 == 4' "$tmp/m/roofline-$w.arrows.dat" | wc -l)
		[ "$n" = 10 ] || fail "many: roofline-$w has $n base arrows, want 10"
	done
fi

# Two profiles: their ops pair by range path (the variant is the tag), as
# compare pairs them.
"$MKRUNS" "$tmp/p.db" >/dev/null 2>&1 <<'SPEC'
device NVIDIA-H100
kind profile
run eager
ceiling dram_bw B/s 3.0e12
ceiling fp32_fma FLOP/s 5.0e13
op step/forward  eager - - ok 4 2.0e9 1.0e9 800000 0.02 9
op step/backward eager - - ok 8 4.0e9 2.0e9 1600000 0.02 9
op step/optim    eager - - ok 2 - - 100000 0.02 9
run compiled
ceiling dram_bw B/s 3.0e12
ceiling fp32_fma FLOP/s 5.0e13
op step/forward  compiled - - ok 1 1.0e9 1.0e9 400000 0.02 9
op step/backward compiled - - ok 3 3.0e9 2.0e9 1200000 0.02 9
op triton_poi_fused_0 compiled - - ok 1 1.0e8 1.0e7 5000 0.02 9
SPEC
expect_exit 0 "$FUSEPROF" report --db "$tmp/p.db" --base eager --out "$tmp/p" --keep-data
grep -q 'both are profiles, so by range path alone' "$tmp/p/report.md" || fail "profiles: not matched by range path"
grep -q '^| step/forward | eager->compiled |  |  |' "$tmp/p/report.md" || fail "profiles: step/forward is not paired"
grep -q 'Only in run 1 (1 op): step/optim\.' "$tmp/p/report.md" || fail "profiles: step/optim only in run 1"
grep -q 'Only in run 2 (1 op): triton_poi_fused_0\.' "$tmp/p/report.md" || fail "profiles: the kernel only in run 2"
tr -d '\r' <"$tmp/p/base.csv" | awk -F, '$1 == "both" { print $2, $7, $11, $24 }' | sort >"$tmp/got"
printf 'step/backward eager compiled 1\nstep/forward eager compiled 1\n' >"$tmp/want"
diff "$tmp/want" "$tmp/got" >&2 || fail "profiles: pairs differ (above)"
expect_exit 0 "$FUSEPROF" compare --db "$tmp/p.db" --format csv eager compiled
[ "$(grep -c 'eager->compiled' "$tmp/out")" = 2 ] || fail "compare pairs the profiles otherwise: $(cat "$tmp/out")"
if [ "$has_gnuplot" = yes ]; then
	n=$(cat "$tmp/p"/*.arrows.dat | awk '$5 == 4' | wc -l)
	[ "$n" = 2 ] || fail "profiles: want 2 base arrows, got $n"
fi

# The shipped profiles (timing only): every range pairs, none has an arrow.
sample="$srcdir/examples/h100-profile.db"
expect_exit 0 "$FUSEPROF" report --db "$sample" --run compiled --base eager --no-plots --format md,csv --out "$tmp/s"
np=$(tr -d '\r' <"$tmp/s/base.csv" | grep -c '^both,')
[ "$np" -gt 0 ] || fail "the sample's profiles have no pair"
grep -q "$np ops are in both runs; .* $np could not be drawn.*: $np no counters in run 1\." "$tmp/s/report.md" ||
	fail "sample: want $np pairs without counters: $(grep 'in both runs' "$tmp/s/report.md")"
exit 0
