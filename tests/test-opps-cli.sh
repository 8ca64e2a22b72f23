#!/bin/sh
# test-opps-cli.sh - fusion opportunities from the command line, on the
# synthetic profiled runs of tests/test-opps --make (tag 'synthetic' with
# counters, 'timing' without): `query opportunities [RUN]` prints the
# ranked candidates, or one line on stderr saying why a run has none;
# `report` of a profiled run has the section, opportunities.csv and the
# JSON array, a run without counters the one-line notice and no csv (the
# earlier report's removed), a suite run no section at all.
. "${srcdir:-.}/tests/setup"

MAKE_DB=${MAKE_DB:-${top_builddir:-..}/tests/test-opps}
MKRUNS=${MKRUNS:-${top_builddir:-..}/tests/mkruns}
db=$tmp/p.db
"$MAKE_DB" --make "$db" || fail "test-opps --make failed"

# The run with counters: every candidate, rank 1 the three-kernel chain
# (three instances), nothing on stderr.
expect_exit 0 "$FUSEPROF" query --db "$db" --format csv opportunities synthetic
[ ! -s "$tmp/err" ] || fail "query opportunities synthetic: stderr: $(cat "$tmp/err")"
head -n 1 "$tmp/out" | grep -q '^run_id,rank,kind,range_path,' ||
	fail "csv header: $(head -n 1 "$tmp/out")"
grep -q '^2,1,chain,A/chain,.*ew_a_kernel > ew_b_kernel > ew_c_kernel' "$tmp/out" ||
	fail "rank 1 is not A's chain: $(cat "$tmp/out")"
[ "$(grep -c ',epilogue,\|,prologue,' "$tmp/out")" = 3 ] ||
	fail "expected 3 epilogue/prologue rows: $(cat "$tmp/out")"
grep -q 'sm90_xmma_gemm_bf16_tn >.*,chain,\|,chain,.*sm90_xmma_gemm' "$tmp/out" &&
	fail "a chain holds the GEMM"

# Without counters: the reason on one line, no rows.
expect_exit 0 "$FUSEPROF" query --db "$db" --format csv opportunities timing
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "notice is not one line: $(cat "$tmp/err")"
grep -q '^fuseprof: warning: run 1 has no counters: .*--metrics roofline' "$tmp/err" ||
	fail "notice: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/out")" = 1 ] || fail "rows for a run without counters: $(cat "$tmp/out")"

# Every profiled run: the notice of the one without counters, the rows of
# the other.
expect_exit 0 "$FUSEPROF" query --db "$db" opportunities
grep -q 'run 1 has no counters' "$tmp/err" || fail "no notice: $(cat "$tmp/err")"
grep -q 'ew_a_kernel > ew_b_kernel > ew_c_kernel' "$tmp/out" || fail "no rows: $(cat "$tmp/out")"

# Refusals: no such run; a suite run; a run after another named query.
expect_exit 1 "$FUSEPROF" query --db "$db" opportunities nosuchtag
one_line_error nosuchtag
"$MKRUNS" "$db" >/dev/null 2>&1 <<'SPEC'
device NVIDIA-H100
run suite
op softmax fused fp32 M=4,N=8 ok 1 1e6 1e6 100000 0 3
SPEC
expect_exit 1 "$FUSEPROF" query --db "$db" opportunities suite
one_line_error "run 3 is not a profiled run"
expect_exit 2 "$FUSEPROF" query --db "$db" runs synthetic
grep -q "only 'opportunities' takes a run" "$tmp/err" || fail "usage: $(cat "$tmp/err")"

# The report of the run with counters.
out=$tmp/rep
expect_exit 0 "$FUSEPROF" report --db "$db" -r synthetic --no-plots -o "$out"
grep -q '^## Fusion opportunities' "$out/report.md" || fail "no section in report.md"
grep -q '^20 candidate chains, predicted to save' "$out/report.md" ||
	fail "section's first line: $(grep -A2 '^## Fusion opportunities' "$out/report.md")"
grep -q '| 1 | chain | A/chain | ew_a_kernel > ew_b_kernel > ew_c_kernel |' "$out/report.md" ||
	fail "rank 1 row missing in report.md"
grep -q '<h2>Fusion opportunities</h2>' "$out/report.html" || fail "no section in report.html"
[ "$(wc -l <"$out/opportunities.csv")" = 24 ] ||
	fail "opportunities.csv: $(wc -l <"$out/opportunities.csv") lines, wanted 24"
grep -q '"opportunities_notice": null' "$out/report.json" || fail "json notice"
grep -A1 '"opportunities": \[' "$out/report.json" | tail -n 1 | grep -q '^ *{"run_id": 2, "rank": 1, "kind": "chain"' ||
	fail "json array: $(grep -A1 '"opportunities": \[' "$out/report.json" | cut -c1-100)"
grep -q '^fusion opportunities: 20 chains' "$tmp/out" || fail "summary: $(cat "$tmp/out")"

# The run without counters, into the same folder: the notice, no csv.
expect_exit 0 "$FUSEPROF" report --db "$db" -r timing --no-plots -o "$out"
grep -q '^None computed: run 1 has no counters' "$out/report.md" ||
	fail "notice missing: $(grep -A2 '^## Fusion opportunities' "$out/report.md")"
[ ! -e "$out/opportunities.csv" ] || fail "stale opportunities.csv left"
grep -q '"opportunities": \[\]' "$out/report.json" || fail "json array not empty"
grep -q '"opportunities_notice": "run 1 has no counters' "$out/report.json" ||
	fail "json notice missing"

# A suite run: no section.
"$MKRUNS" "$tmp/s.db" >/dev/null 2>&1 <<'SPEC'
device NVIDIA-H100
run suite
op softmax fused fp32 M=4,N=8 ok 1 1e6 1e6 100000 0 3
op softmax unfused fp32 M=4,N=8 ok 2 2e6 1e6 150000 0 3
SPEC
expect_exit 0 "$FUSEPROF" report --db "$tmp/s.db" --no-plots -o "$tmp/suite"
grep -q 'Fusion opportunities' "$tmp/suite/report.md" && fail "a suite run has the section"
grep -q '"opportunities": \[\]' "$tmp/suite/report.json" || fail "suite json array"
exit 0
