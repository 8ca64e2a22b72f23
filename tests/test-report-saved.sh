#!/bin/sh
# test-report-saved.sh - the save-vs-recompute table end to end: a run of
# a forward and its backward in three variants (chosen times and saved
# bytes, so every number is known) gets the section in report.md and
# report.html, save-recompute.csv and report.json's array, with the bytes
# saved and the time paid; a run without pairs gets none of them (the csv
# of the earlier report into the same folder removed); --workload keeps
# the pairs of a forward or of its backward; `query save-recompute`.
. "${srcdir:-.}/tests/setup"

MKRUNS=${MKRUNS:-${top_builddir:-..}/tests/mkruns}
db=$tmp/s.db

# bitmask keeps 500 bytes and pays 40 us, recompute keeps none and pays
# 120 us, against save_input (4000 bytes, the fastest: 300 us); orphan has
# no backward variant, and a wrong backward pairs with nothing.
"$MKRUNS" "$db" >/dev/null 2>&1 <<'SPEC'
device NVIDIA-H100
run pairs
model 1e6 2e6
saved 4000 bias_act_bwd
op bias_act_fwd save_input fp32 M=4,N=8 ok 2 3e6 1e6 100000 0 3
saved 500 bias_act_bwd
op bias_act_fwd bitmask fp32 M=4,N=8 ok 1 2e6 1e6 110000 0 3
saved 0 bias_act_bwd
op bias_act_fwd recompute fp32 M=4,N=8 ok 1 - - 120000 0 3
op bias_act_fwd orphan fp32 M=4,N=8 ok 1 2e6 1e6 90000 0 3
op bias_act_fwd broken fp32 M=4,N=8 ok 1 2e6 1e6 90000 0 3
saved 4000
op bias_act_bwd save_input fp32 M=4,N=8 ok 2 4e6 1e6 200000 0 3
saved 500
op bias_act_bwd bitmask fp32 M=4,N=8 ok 1 3e6 1e6 230000 0 3
saved 0
op bias_act_bwd recompute fp32 M=4,N=8 ok 1 3e6 1e6 300000 0 3
op bias_act_bwd broken fp32 M=4,N=8 wrong 1 3e6 1e6 300000 0 3
run nopairs
saved -
op softmax fused fp32 M=4,N=8 ok 1 1e6 1e6 100000 0 3
op softmax unfused fp32 M=4,N=8 ok 2 2e6 1e6 150000 0 3
SPEC

out=$tmp/r
expect_exit 0 "$FUSEPROF" report --db "$db" --run pairs --out "$out" --no-plots
grep -q '^## Save or recompute' "$out/report.md" || fail "report.md has no save-or-recompute section"
grep -q '<h2>Save or recompute' "$out/report.html" || fail "report.html has no save-or-recompute section"
csv=$out/save-recompute.csv
[ -s "$csv" ] || fail "no save-recompute.csv"
tr -d '\r' <"$csv" >"$tmp/csv"
head -n 1 "$tmp/csv" | grep -qx 'workload,backward,variant,role,dtype,shape,fwd_op_id,bwd_op_id,saved_bytes,fwd_time_ns,bwd_time_ns,total_time_ns,fwd_dram_bytes,bwd_dram_bytes,total_dram_bytes,dram_basis,saves_most,bytes_saved,fastest,time_paid_ns,time_ratio' ||
	fail "save-recompute.csv header: $(head -n 1 "$tmp/csv")"
[ "$(wc -l <"$tmp/csv")" = 4 ] || fail "want 3 pairs (not orphan, not broken): $(cat "$tmp/csv")"
# From each row's end (the quoted shape holds a comma): variant, total,
# the DRAM basis, the variant keeping most, bytes saved, the fastest, time
# paid and its ratio.
awk -F, 'NR > 1 { print $3, $(NF-9), $(NF-5), $(NF-4), $(NF-3), $(NF-2), $(NF-1), $NF }' \
	"$tmp/csv" >"$tmp/got"
cat >"$tmp/want" <<'EOF2'
save_input 300000 measured save_input 0 save_input 0 1
bitmask 340000 measured save_input 3500 save_input 40000 1.133333333
recompute 420000 mixed save_input 4000 save_input 120000 1.4
EOF2
cmp -s "$tmp/want" "$tmp/got" || fail "save-recompute.csv rows: $(cat "$tmp/got")"
[ "$(sed -n '/"save_recompute": \[/,/^]/p' "$out/report.json" | grep -c '"fwd_op_id"')" = 3 ] ||
	fail "report.json: save_recompute has not 3 rows"
grep -q '| bias_act_fwd | fp32 | M=4,N=8 | recompute | 0 | 120 | 300 | 420 |' "$out/report.md" ||
	fail "report.md: the recompute row: $(grep recompute "$out/report.md")"

# The backward alone, or the forward, keeps the pairs; another workload not.
expect_exit 0 "$FUSEPROF" report --db "$db" --run pairs --out "$tmp/rb" --no-plots \
	--format md --workload bias_act_bwd
grep -q '^## Save or recompute' "$tmp/rb/report.md" || fail "--workload bias_act_bwd drops the pairs"
expect_exit 0 "$FUSEPROF" report --db "$db" --run pairs --out "$tmp/rf" --no-plots \
	--format csv --workload bias_act_fwd
[ "$(wc -l <"$tmp/rf/save-recompute.csv")" = 4 ] || fail "--workload bias_act_fwd: $(cat "$tmp/rf/save-recompute.csv")"

# No pairs: no section, no csv (the earlier one removed), an empty array.
expect_exit 0 "$FUSEPROF" report --db "$db" --run nopairs --out "$out" --no-plots
! grep -q 'Save or recompute' "$out/report.md" "$out/report.html" ||
	fail "a run without pairs has a save-or-recompute section"
[ ! -e "$csv" ] || fail "save-recompute.csv of the earlier report left behind"
grep -q '"save_recompute": \[\]' "$out/report.json" || fail "report.json: save_recompute not empty"

# The named query: the run's rows, most kept first.
expect_exit 0 "$FUSEPROF" query --db "$db" --format csv save-recompute
[ "$(tr -d '\r' <"$tmp/out" | tail -n +2 | cut -d, -f4 | tr '\n' ' ')" = "save_input bitmask recompute " ] ||
	fail "query save-recompute: $(cat "$tmp/out")"
exit 0
