# test-store-killed.sh - a run whose process was killed reads 'killed' in
# list runs, report, compare and v_runs, while its process lives it reads
# 'running', and reading it writes nothing to the file. (Pid reuse, other
# hosts and old runs: tests/test-store-status.c.)
. "$srcdir/tests/setup"

writer="$top_builddir/tests/store-writer"
db="$tmp/runs.db"

"$writer" "$db" 4 first >/dev/null
"$writer" "$db" 0 second >"$tmp/id" &
pid=$!
wait_for_ops "$db" 10
expect_exit 0 "$FUSEPROF" list runs --db "$db" --format csv
grep -q ',second,running,' "$tmp/out" || { kill -9 $pid; fail "a live run: $(cat "$tmp/out")"; }
kill -9 $pid
wait $pid 2>/dev/null || true

sums=$(cksum "$db" "$db-wal")
expect_exit 0 "$FUSEPROF" list runs --db "$db" --format csv
grep -q ',first,complete,' "$tmp/out" || fail "list runs: $(cat "$tmp/out")"
grep -q ',second,killed,' "$tmp/out" || fail "list runs shows no killed run: $(cat "$tmp/out")"
expect_exit 0 "$FUSEPROF" query --db "$db" --format csv "SELECT status FROM v_runs WHERE run_id = 2"
[ "$(tail -n 1 "$tmp/out" | tr -d '\r')" = killed ] || fail "v_runs: $(cat "$tmp/out")"
expect_exit 0 "$FUSEPROF" report --db "$db" --out "$tmp/rep" --no-plots
grep -q "run 2 is 'killed'" "$tmp/err" || fail "report: $(cat "$tmp/err")"
grep -q 'killed' "$tmp/rep/report.md" || fail "report.md does not say killed"
set +e
"$FUSEPROF" compare --db "$db" 1 2 >"$tmp/out" 2>"$tmp/err"
set -e
grep -q 'run 2 (killed)' "$tmp/out" || fail "compare: $(cat "$tmp/out" "$tmp/err")"
# The stored status stays as written; only readers judge it.
expect_exit 0 "$FUSEPROF" query --db "$db" --format csv "SELECT status FROM runs WHERE id = 2"
[ "$(tail -n 1 "$tmp/out" | tr -d '\r')" = running ] || fail "the stored status changed"
[ "$(cksum "$db" "$db-wal")" = "$sums" ] || fail "reading changed the database"

# An older file (the samples are at schema 1): readers leave it as it is
# and see its runs; the first writer migrates it to 5 under the write
# lock, old runs with no start time.
cp "$srcdir/tests/data/schema1.db" "$tmp/old.db"
chmod u+w "$tmp/old.db"
q() { "$FUSEPROF" query --db "$tmp/old.db" --format csv "$1" | tail -n 1 | tr -d '\r'; }
[ "$(q 'PRAGMA user_version')" = 1 ] || fail "tests/data/schema1.db is not at schema 1"
expect_exit 0 "$FUSEPROF" list runs --db "$tmp/old.db" --format csv
grep -q ',complete,' "$tmp/out" || fail "list runs of a schema-1 file: $(cat "$tmp/out")"
[ "$(q 'PRAGMA user_version')" = 1 ] || fail "a reader migrated the file"
"$writer" "$tmp/old.db" 1 migrated >/dev/null
[ "$(q 'PRAGMA user_version')" = 8 ] || fail "not migrated to 8"
[ "$(q 'SELECT count(*) FROM runs WHERE proc_start IS NULL')" = 1 ] || fail "old runs got a start time"
[ "$(q "SELECT count(*) FROM runs WHERE tag = 'migrated' AND proc_start IS NOT NULL AND pid > 0")" = 1 ] ||
	fail "the new run has no pid or start time"
