# test-compare-db.sh - `fuseprof compare` across two database files
# (--base-db), the refusal to compare different GPU models and --force,
# incomplete runs; compare only reads, so both files stay byte-identical.
. "$srcdir/tests/setup"

MKRUNS=${MKRUNS:-${top_builddir:-..}/tests/mkruns}

# CSV rows end in CRLF (RFC 4180); drop the CRs before matching lines.
uncr() {
	tr -d '\r' <"$tmp/out" >"$tmp/out.lf" && mv "$tmp/out.lf" "$tmp/out"
}

# main.db: two runs on an H100; pr.db: one run on an H100, one on an A100.
"$MKRUNS" "$tmp/main.db" >/dev/null <<'SPEC'
device NVIDIA-H100
run v1
op softmax fused fp32 M=8,N=4096 ok 1 1e8 1e7 100000 0.02 11
op softmax unfused fp32 M=8,N=4096 ok 3 3e8 1e7 300000 0.02 11
run v2
op softmax fused fp32 M=8,N=4096 ok 1 1e8 1e7 100000 0.02 11
op softmax unfused fp32 M=8,N=4096 ok 3 3e8 1e7 300000 0.02 11
SPEC
"$MKRUNS" "$tmp/pr.db" >/dev/null <<'SPEC'
device NVIDIA-H100
run pr
op softmax fused fp32 M=8,N=4096 ok 1 1e8 1e7 100000 0.02 11
op softmax unfused fp32 M=8,N=4096 ok 3 3e8 1e7 150000 0.02 11
device NVIDIA-A100
run other-gpu
op softmax fused fp32 M=8,N=4096 ok 1 1e8 1e7 300000 0.02 11
op softmax unfused fp32 M=8,N=4096 ok 3 3e8 1e7 300000 0.02 11
run broken aborted
op softmax fused fp32 M=8,N=4096 error 0 - - 0 0 0
SPEC
cp "$tmp/main.db" "$tmp/main.copy"
cp "$tmp/pr.db" "$tmp/pr.copy"

# Matching across files: BASE from main.db, NEW from pr.db (run 1 there).
expect_exit 0 "$FUSEPROF" compare --base-db "$tmp/main.db" --db "$tmp/pr.db" --format csv latest pr
uncr
grep -q '^FASTER,softmax,unfused,' "$tmp/out" || fail "cross-db FASTER: $(cat "$tmp/out")"
grep -q '^SAME,softmax,fused,' "$tmp/out" || fail "cross-db SAME: $(cat "$tmp/out")"
[ "$(wc -l <"$tmp/out")" -eq 3 ] || fail "cross-db rows: $(cat "$tmp/out")"
expect_exit 0 "$FUSEPROF" compare --base-db "$tmp/main.db" --db "$tmp/pr.db" v1 pr
grep -q "^base: run 1 .*main.db" "$tmp/out" || fail "base line names main.db: $(head -n 2 "$tmp/out")"
grep -q "^new: run 1 .*pr.db" "$tmp/out" || fail "new line names pr.db: $(head -n 2 "$tmp/out")"
# The reverse direction is a regression.
expect_exit 1 "$FUSEPROF" compare --base-db "$tmp/pr.db" --db "$tmp/main.db" pr latest
grep -Eq '^SLOWER +softmax +unfused' "$tmp/out" || fail "reverse: $(cat "$tmp/out")"
# A ref resolves in its own file: main.db has no tag 'pr'.
expect_exit 1 "$FUSEPROF" compare --base-db "$tmp/main.db" --db "$tmp/pr.db" pr pr
one_line_error "'pr'" "main.db"

# Different GPU models: a refusal, not a regression: exit 2 (usage class,
# so a CI gate on exit 1 does not read it as one), one line naming both
# runs' files and models, no table.
expect_exit 2 "$FUSEPROF" compare --base-db "$tmp/main.db" --db "$tmp/pr.db" v2 other-gpu
one_line_error "NVIDIA-H100" "NVIDIA-A100" "--force" "$tmp/main.db" "$tmp/pr.db"
[ ! -s "$tmp/out" ] || fail "a refused comparison printed a table"
expect_exit 2 "$FUSEPROF" compare --db "$tmp/pr.db" pr other-gpu
one_line_error "different GPU models" "$tmp/pr.db"
# The shipped samples: an H100 run and an H200 run.
expect_exit 2 "$FUSEPROF" compare --base-db "$srcdir/examples/h100-sample.db" \
	--db "$srcdir/examples/h200-sample.db" latest latest
one_line_error "h100-sample.db" "h200-sample.db" "H100" "H200"
expect_exit 2 "$FUSEPROF" compare --db '' latest latest
one_line_error -- "--db"
# --force compares anyway (the A100 run is 3x slower on one op).
expect_exit 1 "$FUSEPROF" compare --force --db "$tmp/pr.db" --format csv pr other-gpu
uncr
grep -q '^SLOWER,softmax,fused,' "$tmp/out" || fail "--force: $(cat "$tmp/out")"

# An aborted run: compared with a warning; the failed op is WRONG and the
# op it never reached is REMOVED.
expect_exit 1 "$FUSEPROF" compare --force --db "$tmp/pr.db" --format csv pr broken
uncr
grep -q "aborted" "$tmp/err" || fail "no warning about the aborted run"
grep -q '^WRONG,softmax,fused,.*,ok->error,$' "$tmp/out" || fail "error op: $(cat "$tmp/out")"
grep -q '^REMOVED,softmax,unfused,' "$tmp/out" || fail "unreached op: $(cat "$tmp/out")"

# compare never writes.
cmp -s "$tmp/main.db" "$tmp/main.copy" || fail "compare changed main.db"
cmp -s "$tmp/pr.db" "$tmp/pr.copy" || fail "compare changed pr.db"
