#!/bin/sh
# test-cli-order.sh - options in the places a user puts them: before the
# command (a hint where they go), after the operands (taken, GNU style,
# '--' ends them); and no database at all (how to make one, the samples).
. "$srcdir/tests/setup"

# On a copy: a read-only open of a WAL database may leave -shm files
# beside it, and the source tree may be read-only.
cp "$srcdir/examples/h200-sample.db" "$tmp/h200.db"
db=$tmp/h200.db

expect_exit 2 "$FUSEPROF" --db x.db query runs
one_line_error "unknown option '--db'" "options follow" "fuseprof query --db x.db"
expect_exit 2 "$FUSEPROF" --format csv
one_line_error "unknown option '--format'" "fuseprof COMMAND --format"

for env in "" POSIXLY_CORRECT=1; do
	expect_exit 0 env $env "$FUSEPROF" query 'SELECT 1 AS a' --format csv --db "$db"
	[ "$(tr -d '\r' <"$tmp/out")" = "a
1" ] || fail "options after the SQL ($env): $(cat "$tmp/out")"
done
expect_exit 0 "$FUSEPROF" query --db "$db" runs -f json
grep -q '"run_id": 1' "$tmp/out" || fail "query runs -f json: $(cat "$tmp/out")"
expect_exit 0 "$FUSEPROF" query --db "$db" --format csv -- 'SELECT 2 AS a'
[ "$(tr -d '\r' <"$tmp/out")" = "a
2" ] || fail "query -- SQL: $(cat "$tmp/out")"
expect_exit 2 "$FUSEPROF" query 'SELECT 1' --db "$db" 'SELECT 2'
one_line_error "one argument"

# No ./fuseprof.db and nothing naming another.
mkdir "$tmp/empty"
cd "$tmp/empty"
for cmd in "query runs" "report" "list runs"; do
	expect_exit 1 "$FUSEPROF" $cmd
	one_line_error "fuseprof.db" "fuseprof run" "--db" "examples/h200-sample.db"
done
[ -z "$(ls -A)" ] || fail "a command without a database wrote: $(ls -A)"
# A path the user named is reported as it is.
expect_exit 1 "$FUSEPROF" query --db nosuch.db runs
one_line_error "cannot open 'nosuch.db'"
