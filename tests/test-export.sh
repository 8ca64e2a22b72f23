# test-export.sh - `fuseprof export --format perfetto` and the readers on
# profiled runs: two synthetic profiles of one program (tests/test-profile
# --make: NVTX ranges, kernels on two streams, durations halved in the
# second) give valid traces (tests/jsoncheck: strict JSON, the Trace Event
# Format's fields, every track well nested; python3's json module too when
# there is one; a launch's buffers where its pointers were read), and
# report, compare, query and list read them as any run; a `run`'s trace
# lays its ops out; the checker itself rejects a broken trace.
. "$srcdir/tests/setup"

db="$tmp/p.db"
check="$top_builddir/tests/jsoncheck"
"$top_builddir/tests/test-profile" --make "$db" eager 1 >/dev/null
"$top_builddir/tests/test-profile" --make "$db" compiled 0.5 >/dev/null
q() { "$FUSEPROF" query --db "$db" --format csv "$1" | tail -n 1 | tr -d '\r'; }

# The trace of a profiled run: 9 kernels, 5 range instances, on the
# thread's range track and two stream tracks.
expect_exit 0 "$FUSEPROF" export --db "$db" --format perfetto eager
cp "$tmp/out" "$tmp/eager.json"
"$check" <"$tmp/eager.json" >"$tmp/check" || fail "jsoncheck refused the trace"
grep -q '^events .* slices 14 tracks 3$' "$tmp/check" || fail "slices, tracks: $(cat "$tmp/check")"
grep -qx 'kernel 9' "$tmp/check" || fail "kernel slices: $(cat "$tmp/check")"
grep -qx 'nvtx 5' "$tmp/check" || fail "range slices: $(cat "$tmp/check")"
grep -q '"name": "ln_fwd", "cat": "kernel"' "$tmp/eager.json" || fail "no ln_fwd slice"
grep -q '"args": {"op": "step/ln", "correlation": 1,' "$tmp/eager.json" || fail "no op in a kernel's args"
# A launch whose pointers were read lists its buffers (in hex, with the
# bytes to each one's allocation's end); the others none.
grep -q '"buffers": \[{"ptr":"0x7f0000100000","bytes":1048576},{"ptr":"0x7f0000200000","bytes":1048576}\]' "$tmp/eager.json" ||
	fail "no buffers in ln_fwd's args: $(grep -o '"buffers[^]]*]' "$tmp/eager.json" | head -3)"
[ "$(grep -o '"buffers"' "$tmp/eager.json" | wc -l)" = 1 ] || fail "buffers in launches without pointers"
grep -q '"name": "GPU 0 stream 9"' "$tmp/eager.json" || fail "no track for stream 9"
grep -q '"displayTimeUnit": "ns"' "$tmp/eager.json" || fail "no displayTimeUnit"
if command -v python3 >/dev/null 2>&1 && python3 -c 'import json' 2>/dev/null; then
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert isinstance(d["traceEvents"], list)' \
		"$tmp/eager.json" || fail "python3's json refused the trace"
fi

# The checker is no rubber stamp: a trailing comma, a slice that overlaps
# its track's open slice without nesting, a missing ts.
printf '{"displayTimeUnit": "ns", "traceEvents": [],}' >"$tmp/bad1.json"
! "$check" <"$tmp/bad1.json" 2>/dev/null || fail "jsoncheck took a trailing comma"
printf '{"displayTimeUnit": "ns", "traceEvents": [{"ph": "X", "name": "a", "ts": 0, "dur": 10, "pid": 1, "tid": 1}, {"ph": "X", "name": "b", "ts": 5, "dur": 10, "pid": 1, "tid": 1}]}' >"$tmp/bad2.json"
! "$check" <"$tmp/bad2.json" 2>/dev/null || fail "jsoncheck took overlapping slices"
printf '{"displayTimeUnit": "ns", "traceEvents": [{"ph": "X", "name": "a", "dur": 10, "pid": 1, "tid": 1}]}' >"$tmp/bad3.json"
! "$check" <"$tmp/bad3.json" 2>/dev/null || fail "jsoncheck took a slice without ts"

# A `run`'s ops, laid end to end: valid, nested, and said so.
"$top_builddir/tests/store-writer" "$tmp/r.db" 3 plain >/dev/null
expect_exit 0 "$FUSEPROF" export --db "$tmp/r.db" latest
"$check" <"$tmp/out" >"$tmp/check" || fail "jsoncheck refused a run's trace"
grep -qx 'op 3' "$tmp/check" || fail "op slices of a run: $(cat "$tmp/check")"
grep -q '"timeline": "laid out: no launch times stored"' "$tmp/out" || fail "a laid-out trace does not say so"

# The shipped sample (a real run, schema 5, read as it is): every kernel
# fits in its op, all on one track.
expect_exit 0 "$FUSEPROF" export --db "$srcdir/examples/h100-sample.db" latest
"$check" <"$tmp/out" >"$tmp/check" || fail "jsoncheck refused the sample's trace"
grep -q ' tracks 1$' "$tmp/check" || fail "the sample's kernels overflow their ops: $(head -n 1 "$tmp/check")"

# Refusals.
expect_exit 2 "$FUSEPROF" export --db "$db" --format chrome eager
one_line_error "unknown format 'chrome'"
expect_exit 1 "$FUSEPROF" export --db "$db" nosuchtag
one_line_error "nosuchtag"

# The readers: query, list, compare (ops matched by range path across the
# two tags), report.
[ "$(q "SELECT count(*) FROM v_ops WHERE tag = 'eager' AND variant = 'eager' AND role = 'fused'")" = 5 ] ||
	fail "v_ops of the profiled run"
[ "$(q "SELECT time_ns FROM v_ops WHERE tag = 'compiled' AND workload = 'step/mlp'")" = 150 ] ||
	fail "step/mlp compiled: $(q "SELECT time_ns FROM v_ops WHERE tag = 'compiled' AND workload = 'step/mlp'")"
[ "$(q "SELECT count(*) FROM v_roofline WHERE run_id = 1")" = 5 ] || fail "v_roofline"
expect_exit 0 "$FUSEPROF" list runs --db "$db"
grep -q 'compiled' "$tmp/out" || fail "list runs"
expect_exit 0 "$FUSEPROF" compare --db "$db" --format csv eager compiled
tr -d '\r' <"$tmp/out" >"$tmp/cmp"
[ "$(grep -c '^FASTER,' "$tmp/cmp")" = 5 ] || fail "compare eager compiled: $(cat "$tmp/cmp")"
grep -q '^FASTER,step/ln,eager->compiled,,,285,' "$tmp/cmp" || fail "step/ln row: $(cat "$tmp/cmp")"
expect_exit 1 "$FUSEPROF" compare --db "$db" compiled eager
grep -q 'REGRESSED' "$tmp/out" || fail "compare compiled eager is not a regression"
expect_exit 0 "$FUSEPROF" report --db "$db" --run eager --no-plots --out "$tmp/rep"
grep -q 'step/ln' "$tmp/rep/report.md" || fail "the report lacks step/ln"
exit 0
