#!/bin/sh
# test-query-refuse.sh - what query refuses through its authorizer is
# named in the error, also when SQLite would say only "not authorized"
# (an extension, a pragma function that acts when it runs).
. "$srcdir/tests/setup"

# A read-only open of a WAL database may leave -shm files beside it: work
# on a copy, the source tree may be read-only.
cp "$srcdir/examples/h200-sample.db" "$tmp/h200.db"
db=$tmp/h200.db

expect_exit 1 "$FUSEPROF" query --db "$db" "SELECT load_extension('/tmp/x.so')"
one_line_error "refusing load_extension()" "load_extension('/tmp/x.so')"
expect_exit 1 "$FUSEPROF" query --db "$db" "select Load_Extension('x', 'entry')"
one_line_error "refusing load_extension()"
expect_exit 1 "$FUSEPROF" query --db "$db" "SELECT * FROM pragma_optimize"
one_line_error "refusing PRAGMA optimize"
grep -q "not authorized" "$tmp/err" && fail "bare 'not authorized': $(cat "$tmp/err")"

# What reads still works, pragma functions that report included.
expect_exit 0 "$FUSEPROF" query --db "$db" --format csv \
	"SELECT name FROM pragma_table_info('runs') WHERE cid = 0"
[ "$(tr -d '\r' <"$tmp/out")" = "name
id" ] || fail "pragma_table_info: $(cat "$tmp/out")"
