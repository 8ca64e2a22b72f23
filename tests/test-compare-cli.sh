# test-compare-cli.sh - `fuseprof compare` on two runs with chosen numbers:
# the verdict of each op, the order of the rows, the exit status that gates
# CI, the threshold and noise bars, the output formats and usage errors.
. "$srcdir/tests/setup"

MKRUNS=${MKRUNS:-${top_builddir:-..}/tests/mkruns}

# CSV rows end in CRLF (RFC 4180); drop the CRs before matching lines.
uncr() {
	tr -d '\r' <"$tmp/out" >"$tmp/out.lf" && mv "$tmp/out.lf" "$tmp/out"
}
db=$tmp/runs.db

# Per-rep times are drawn uniformly from median * (1 +- spread/2) (mkruns
# prints its seed), so a 2% spread has a noise near 1.6% and every expected
# verdict below holds for any seed.
"$MKRUNS" "$db" >"$tmp/ids" <<'SPEC'
device NVIDIA-H100
run base
op ln_gelu  fused   fp32 M=64,N=4096 ok 1 1.0e9 5.0e8 200000 0.02 21
op ln_gelu  unfused fp32 M=64,N=4096 ok 3 3.0e9 5.0e8 500000 0.02 21
op softmax  fused   fp32 M=64,N=4096 ok 1 5.4e8 1.0e8 180000 0.02 21
op softmax  unfused fp32 M=64,N=4096 ok 4 2.0e9 1.0e8 400000 0.02 21
op softmax  naive   fp32 M=64,N=4096 ok 4 2.0e9 1.0e8 900000 0.60 201
op softmax  loop    fp32 M=64,N=4096 ok 2 2.0e9 1.0e8 900000 0.02 21
op gemm     tiled   fp32 M=64,N=64   ok 1 1.0e6 1.0e9 50000  0.02 21
op old      thing   fp32 M=1         ok 1 1     1     1000   0.01 5
run new
op ln_gelu  fused   fp32 M=64,N=4096 ok 1 1.0e9 5.0e8 240000 0.02 21
op ln_gelu  unfused fp32 M=64,N=4096 ok 3 3.1e9 5.0e8 500000 0.02 21
op softmax  fused   fp32 M=64,N=4096 wrong 1 5.4e8 1.0e8 100000 0.02 21
op softmax  unfused fp32 M=64,N=4096 ok 4 2.0e9 1.0e8 300000 0.02 21
op softmax  naive   fp32 M=64,N=4096 ok 4 2.0e9 1.0e8 1080000 0.60 201
op softmax  loop    fp32 M=64,N=4096 ok 1 2.0e9 1.0e8 900000 0.02 21
op gemm     tiled   fp32 M=64,N=64   ok 1 1.0e6 1.1e9 50000  0.02 21
op new      thing   fp32 M=1         ok 1 -     -     1000   0.01 5
SPEC
[ "$(cat "$tmp/ids")" = "$(printf '1\n2')" ] || fail "mkruns made runs $(cat "$tmp/ids")"

# The CI gate: something regressed, so exit 1; the table is on stdout.
expect_exit 1 "$FUSEPROF" compare --db "$db" latest~1 latest
grep -q '^base: run 1 ' "$tmp/out" || fail "no line naming the base run"
grep -q 'REGRESSED' "$tmp/out" || fail "no verdict summary"
grep -Eq '^SLOWER +ln_gelu +fused ' "$tmp/out" || fail "no aligned SLOWER row"
[ ! -s "$tmp/err" ] || fail "compare wrote to stderr: $(cat "$tmp/err")"

# One CSV row per op, worst first; check each verdict and the columns that
# decided it.
expect_exit 1 "$FUSEPROF" compare --db "$db" --format csv 1 2
uncr
head -n 1 "$tmp/out" | grep -qx 'verdict,workload,variant,dtype,shape,base_ns,new_ns,time_pct,noise_pct,time,dram_pct,dram,flops_pct,flops,launches,status,kernel' ||
	fail "csv header: $(head -n 1 "$tmp/out")"
tail -n +2 "$tmp/out" | cut -d, -f1-3 >"$tmp/got"
cat >"$tmp/want" <<'EOF2'
WRONG,softmax,fused
SLOWER,ln_gelu,fused
MORE-BYTES,ln_gelu,unfused
MORE-FLOPS,gemm,tiled
REMOVED,old,thing
ADDED,new,thing
LAUNCHES,softmax,loop
FASTER,softmax,unfused
SAME,softmax,naive
EOF2
diff "$tmp/want" "$tmp/got" >&2 || fail "verdicts or their order differ (above)"
row() { grep "^[A-Z-]*,$1,$2," "$tmp/out"; }
row softmax fused | grep -q ',ok->wrong,$' || fail "became-wrong row: $(row softmax fused)"
row ln_gelu unfused | grep -q ',3\.3,MORE,0\.0,SAME,3,ok,$' || fail "more-bytes row: $(row ln_gelu unfused)"
row gemm tiled | grep -q ',10\.0,MORE,1,ok,$' || fail "more-flops row: $(row gemm tiled)"
row softmax loop | grep -q ',2->1,ok,$' || fail "launch-count row: $(row softmax loop)"
row new thing | grep -q ',n/a,,n/a,1,ok,$' || fail "an op without counters must say n/a: $(row new thing)"
# +20% is past the 5% threshold but inside that op's noise (about 48%).
# (Fields counted from the end: the quoted shape holds a comma.)
row softmax naive | awk -F, '{ exit !($(NF-9) > 5 && $(NF-8) > 30 && $(NF-7) == "SAME") }' ||
	fail "noise-bound row: $(row softmax naive)"
row ln_gelu fused | awk -F, '{ exit !($(NF-9) > 15 && $(NF-9) < 25 && $(NF-8) < 5) }' ||
	fail "slower row: $(row ln_gelu fused)"

# --changes leaves out the SAME rows; the exit status stays.
expect_exit 1 "$FUSEPROF" compare --db "$db" --changes --format csv 1 2
uncr
grep -q '^SAME,' "$tmp/out" && fail "--changes printed a SAME row"
[ "$(wc -l <"$tmp/out")" -eq 9 ] || fail "--changes: $(wc -l <"$tmp/out") lines"

# JSON and Markdown carry the same rows.
expect_exit 1 "$FUSEPROF" compare --db "$db" -f json base new
head -c 1 "$tmp/out" | grep -q '\[' || fail "json is not an array"
[ "$(grep -c '"verdict": ' "$tmp/out")" -eq 9 ] || fail "json rows: $(cat "$tmp/out")"
grep -q '"time_pct": [0-9]' "$tmp/out" || fail "json numbers are not bare: $(cat "$tmp/out")"
if command -v python3 >/dev/null 2>&1; then
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/out" || fail "invalid json"
fi
expect_exit 1 "$FUSEPROF" compare --db "$db" -f md 1 2
head -n 1 "$tmp/out" | grep -q '^| verdict | workload |' || fail "md header: $(head -n 1 "$tmp/out")"
[ "$(grep -c '^| ' "$tmp/out")" -eq 11 ] || fail "md rows"

# A run against itself: nothing changed, exit 0 (its wrong op stays wrong).
expect_exit 0 "$FUSEPROF" compare --db "$db" latest latest
grep -q 'no regression' "$tmp/out" || fail "same run: $(cat "$tmp/out")"
grep -Ev '^(SAME|STILL-WRONG|base|new|verdict|---|$|[0-9]+ ops)' "$tmp/out" && fail "same run gave a change"
[ "$(grep -c '^SAME ' "$tmp/out")" -eq 7 ] || fail "same run: $(cat "$tmp/out")"

# The threshold: +8% with little noise is SLOWER at 5%, SAME at 10%.
db2=$tmp/thr.db
"$MKRUNS" "$db2" >/dev/null <<'SPEC'
device NVIDIA-H100
run a
op ln_gelu fused bf16 M=8,N=8 ok 1 1e6 1e6 100000 0.01 15
run b
op ln_gelu fused bf16 M=8,N=8 ok 1 1e6 1.005e6 108000 0.01 15
SPEC
expect_exit 1 "$FUSEPROF" compare --db "$db2" a b
grep -Eq '^SLOWER ' "$tmp/out" || fail "+8% at 5%: $(cat "$tmp/out")"
expect_exit 0 "$FUSEPROF" compare --db "$db2" --threshold 10 a b
grep -Eq '^SAME ' "$tmp/out" || fail "+8% at 10%: $(cat "$tmp/out")"
# +0.5% FLOPs: under the default 1% counter bar, over a 0.4% one.
expect_exit 0 "$FUSEPROF" compare --db "$db2" -t 10% --format csv a b
uncr
grep -q '^SAME,.*,0\.5,SAME,1,ok,$' "$tmp/out" || fail "+0.5% FLOPs at 1%: $(cat "$tmp/out")"
expect_exit 1 "$FUSEPROF" compare --db "$db2" -t 10 --count-threshold 0.4 --format csv a b
uncr
grep -q '^MORE-FLOPS,.*,0\.5,MORE,1,ok,$' "$tmp/out" || fail "+0.5% FLOPs at 0.4%: $(cat "$tmp/out")"

# Usage errors: exit 2 with one line and a hint; a bad run: exit 1.
expect_exit 2 "$FUSEPROF" compare --db "$db"
one_line_error "two runs"
expect_exit 2 "$FUSEPROF" compare --db "$db" 1
one_line_error "two runs"
expect_exit 2 "$FUSEPROF" compare --db "$db" 1 2 3
one_line_error "two runs"
expect_exit 2 "$FUSEPROF" compare --db "$db" --format xml 1 2
one_line_error "xml"
expect_exit 2 "$FUSEPROF" compare --db "$db" --threshold lots 1 2
one_line_error "lots"
expect_exit 2 "$FUSEPROF" compare --db "$db" --threshold -5 1 2
one_line_error "threshold"
expect_exit 2 "$FUSEPROF" compare --db "$db" --frobnicate 1 2
one_line_error "--frobnicate"
grep -q "^Try 'fuseprof compare --help'" "$tmp/err" || fail "no hint"
expect_exit 1 "$FUSEPROF" compare --db "$db" 1 nosuchtag
one_line_error "nosuchtag"
expect_exit 1 "$FUSEPROF" compare --db "$tmp/none.db" 1 2
one_line_error "none.db"
[ ! -e "$tmp/none.db" ] || fail "compare created a database"

# --help teaches with examples.
expect_exit 0 "$FUSEPROF" compare --help
grep -q 'compare latest~1 latest' "$tmp/out" || fail "help lacks the CI example"
grep -q 'p90 - p10' "$tmp/out" || fail "help does not define the noise"

# list runs: id, date, device, tag, status, op count.
expect_exit 0 "$FUSEPROF" list runs --db "$db" --format csv
uncr
head -n 1 "$tmp/out" | grep -q '^id,started,device,tag,status,ops' || fail "list runs header: $(head -n 1 "$tmp/out")"
grep -Eq '^2,[0-9TZ:-]+,NVIDIA-H100,new,complete,8,1$' "$tmp/out" || fail "list runs row: $(cat "$tmp/out")"

# Runs whose counters were collected differently (runs.counters differs,
# here one counting the write-back of dirty L2 lines and one not): compare
# says so once on stderr, naming both; DRAM bytes get no verdict either
# way (not-comparable), while times and FLOPs are judged as ever.
"$MKRUNS" "$tmp/modes.db" >/dev/null <<'SPEC'
device NVIDIA-H100
counters range-profiler (roofline; op replay, flush op)
run old
op softmax fused   fp32 M=64,N=4096 ok 1 5.4e8 1.0e8 180000 0.02 21
op softmax unfused fp32 M=64,N=4096 ok 4 2.0e9 1.0e8 400000 0.02 21
op ln_gelu fused   fp32 M=64,N=4096 ok 1 1.0e9 5.0e8 200000 0.02 21
counters range-profiler (roofline; op replay, flush op, write-backs counted)
run new
op softmax fused   fp32 M=64,N=4096 ok 1 6.4e8 1.0e8 180000 0.02 21
op softmax unfused fp32 M=64,N=4096 ok 4 1.6e9 1.0e8 400000 0.02 21
op ln_gelu fused   fp32 M=64,N=4096 ok 1 1.0e9 5.0e8 260000 0.02 21
run again
op softmax fused   fp32 M=64,N=4096 ok 1 7.0e8 1.0e8 180000 0.02 21
op softmax unfused fp32 M=64,N=4096 ok 4 1.6e9 1.0e8 400000 0.02 21
op ln_gelu fused   fp32 M=64,N=4096 ok 1 1.0e9 5.0e8 260000 0.02 21
SPEC
expect_exit 1 "$FUSEPROF" compare --db "$tmp/modes.db" --format csv old new
uncr
[ "$(grep -c 'collected counters differently' "$tmp/err")" = 1 ] ||
	fail "no warning about the counter modes: $(cat "$tmp/err")"
grep -q "flush op)'.*write-backs counted)'" "$tmp/err" || fail "the warning does not name both modes: $(cat "$tmp/err")"
grep -q "bytes not comparable" "$tmp/err" || fail "the warning does not say the bytes are not comparable"
# 19% more and 20% fewer bytes: neither MORE-BYTES nor FEWER-BYTES.
grep -Eq '^SAME,softmax,fused,.*,not-comparable,' "$tmp/out" || fail "more bytes judged: $(cat "$tmp/out")"
grep -Eq '^SAME,softmax,unfused,.*,not-comparable,' "$tmp/out" || fail "fewer bytes judged: $(cat "$tmp/out")"
! grep -q 'BYTES' "$tmp/out" || fail "a byte verdict across counter modes: $(cat "$tmp/out")"
# The timing verdict stands (and alone makes the exit status 1).
grep -Eq '^SLOWER,ln_gelu,fused,' "$tmp/out" || fail "timing not judged: $(cat "$tmp/out")"
expect_exit 1 "$FUSEPROF" compare --db "$tmp/modes.db" old new
grep -q 'DRAM bytes not comparable: counters taken differently' "$tmp/out" ||
	fail "the summary does not say the bytes were not compared: $(tail -n 1 "$tmp/out")"
# The same mode in both runs: bytes are judged again (11% more: MORE-BYTES).
expect_exit 1 "$FUSEPROF" compare --db "$tmp/modes.db" --format csv new again
uncr
! grep -q 'collected counters differently' "$tmp/err" || fail "a warning for one mode: $(cat "$tmp/err")"
grep -Eq '^MORE-BYTES,softmax,fused,' "$tmp/out" || fail "same mode, more bytes: $(cat "$tmp/out")"
grep -Eq '^SAME,softmax,unfused,.*,SAME,' "$tmp/out" || fail "same mode, same bytes: $(cat "$tmp/out")"
