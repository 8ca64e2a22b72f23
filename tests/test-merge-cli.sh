# test-merge-cli.sh - `fuseprof merge` on the command line: --help teaches
# (the rules, examples) and exits 0; usage errors exit 2 with one line;
# two databases merge into a new one with a line each, and merged again
# add nothing; a bad input among good ones is named on one line and
# skipped, the others merged, exit 1; a newer schema is named with both
# versions; OUT.db given as an input is refused before anything is done.
# store/merge.c's rules themselves: tests/test-merge.c.
. "$srcdir/tests/setup"

mkdb="$top_builddir/tests/mkdb"
q() {
	"$FUSEPROF" query --db "$1" --format csv "$2" | tail -n 1 | tr -d '\r'
}

expect_exit 0 "$FUSEPROF" merge --help
grep -q '^Usage: fuseprof merge \[OPTION\]\.\.\. OUT\.db IN\.db\.\.\.' "$tmp/out" || fail "merge --help: no usage line"
for w in 'Examples:' '--join-window' 'Ranks:' 'newer schema' 'Exit status:'; do
	grep -qF -- "$w" "$tmp/out" || fail "merge --help lacks '$w'"
done
expect_exit 0 "$FUSEPROF" help merge
grep -q '^Usage: fuseprof merge' "$tmp/out" || fail "help merge: no usage line"
"$FUSEPROF" --help | grep -q '^  merge ' || fail "fuseprof --help does not list merge"

expect_exit 2 "$FUSEPROF" merge
one_line_error 'OUT.db' 'IN.db'
expect_exit 2 "$FUSEPROF" merge "$tmp/o.db"
one_line_error 'IN.db'
expect_exit 2 "$FUSEPROF" merge --join-window soon "$tmp/o.db" "$tmp/a.db"
one_line_error '--join-window' 'soon'
expect_exit 2 "$FUSEPROF" merge --join-window -5 "$tmp/o.db" "$tmp/a.db"
one_line_error '--join-window'
expect_exit 2 "$FUSEPROF" merge --bogus "$tmp/o.db" "$tmp/a.db"
one_line_error '--bogus'
[ ! -e "$tmp/o.db" ] || fail "a usage error created OUT.db"

# Each by a process of its own: two runs, and then two more.
"$mkdb" -s 1 "$tmp/a.db" 4 >/dev/null
"$mkdb" -s 2 "$tmp/b.db" 6 >/dev/null
"$mkdb" -s 3 -t night "$tmp/b.db" 2 >/dev/null

expect_exit 2 "$FUSEPROF" merge "$tmp/a.db" "$tmp/b.db" "$tmp/./a.db"
one_line_error 'a.db' 'OUT.db itself'

# The inputs are only read: read-only files, left byte for byte as they
# were, with no -wal or -shm beside them.
cp "$tmp/a.db" "$tmp/a.orig"
chmod 0444 "$tmp/a.db" "$tmp/b.db"
expect_exit 0 "$FUSEPROF" merge "$tmp/o.db" "$tmp/a.db" "$tmp/b.db"
cmp -s "$tmp/a.db" "$tmp/a.orig" || fail "merge changed an input"
for f in a.db-wal a.db-shm b.db-wal b.db-shm; do
	[ ! -e "$tmp/$f" ] || fail "merge left $f beside an input"
done
[ "$(wc -l <"$tmp/out")" = 2 ] || fail "merge: not a line an input: $(cat "$tmp/out")"
grep -q "^$tmp/a.db: 1 run added, 0 joined, 0 already there (4 ops" "$tmp/out" || fail "merge: a.db line: $(cat "$tmp/out")"
grep -q "^$tmp/b.db: 2 runs added, 0 joined, 0 already there (8 ops" "$tmp/out" || fail "merge: b.db line: $(cat "$tmp/out")"
[ ! -s "$tmp/err" ] || fail "merge wrote to stderr: $(cat "$tmp/err")"
[ "$(q "$tmp/o.db" 'SELECT count(*) FROM runs')" = 3 ] || fail "merge: not 3 runs"
[ "$(q "$tmp/o.db" 'SELECT count(*) FROM ops')" = 12 ] || fail "merge: not 12 ops"
[ "$(q "$tmp/o.db" "SELECT count(*) FROM v_runs WHERE tag = 'night' AND ops = 2")" = 1 ] ||
	fail "merge: the tagged run lost its ops"
"$FUSEPROF" report --db "$tmp/o.db" --run night --out "$tmp/rep" --no-plots >/dev/null 2>&1 ||
	fail "report of the merged database failed"

# Again: nothing added.
expect_exit 0 "$FUSEPROF" merge "$tmp/o.db" "$tmp/b.db" "$tmp/a.db"
grep -q "b.db: 0 runs added, 0 joined, 2 already there (0 ops" "$tmp/out" || fail "merge again: $(cat "$tmp/out")"
[ "$(q "$tmp/o.db" 'SELECT count(*) FROM runs')" = 3 ] || fail "merge again added runs"

# A bad input among good ones: named, skipped, the others merged, exit 1.
chmod 0644 "$tmp/a.db" "$tmp/b.db"
printf 'not a database at all, but long enough for a header: 0123456789abcdef0123456789abcdef\n' >"$tmp/bad.db"
"$mkdb" -s 4 "$tmp/c.db" 3 >/dev/null
expect_exit 1 "$FUSEPROF" merge "$tmp/o.db" "$tmp/bad.db" "$tmp/c.db"
one_line_error "$tmp/bad.db" 'cannot merge'
grep -q "c.db: 1 run added" "$tmp/out" || fail "merge: the good input after a bad one: $(cat "$tmp/out")"
[ "$(q "$tmp/o.db" 'SELECT count(*) FROM runs')" = 4 ] || fail "merge: c.db's run missing"

# A newer schema (user_version, bytes 60-63 of the header, set to 9).
"$mkdb" -s 5 "$tmp/new.db" 2 >/dev/null
printf '\000\000\000\011' | dd of="$tmp/new.db" bs=1 seek=60 conv=notrunc 2>/dev/null
expect_exit 1 "$FUSEPROF" merge "$tmp/o.db" "$tmp/new.db"
one_line_error "$tmp/new.db" 'version 9' '(8)' 'upgrade fuseprof'
[ "$(q "$tmp/o.db" 'SELECT count(*) FROM runs')" = 4 ] || fail "merge of a newer schema wrote"

# The shipped samples (two GPU runs, two profiled runs of another driver):
# every run reads in the merged file as in its own, view by view.
ex="$top_srcdir/examples"
expect_exit 0 "$FUSEPROF" merge "$tmp/ex.db" "$ex/h100-sample.db" "$ex/h200-sample.db" "$ex/h100-profile.db"
[ "$(q "$tmp/ex.db" 'SELECT count(*) FROM runs')" = 4 ] || fail "samples: not 4 runs"
# same_rows DB RUN MERGED_RUN VIEW: the view's rows of RUN in DB, ids left
# out, are those of MERGED_RUN in ex.db.
same_rows() {
	cols=$("$FUSEPROF" query --db "$1" --format csv "SELECT * FROM $4 LIMIT 0" |
		head -n 1 | tr -d '\r' | tr ',' '\n' | grep -v '_id$' | paste -sd, -)
	"$FUSEPROF" query --db "$1" --format csv "SELECT $cols FROM $4 WHERE run_id = $2" | sort >"$tmp/a.csv"
	"$FUSEPROF" query --db "$tmp/ex.db" --format csv "SELECT $cols FROM $4 WHERE run_id = $3" | sort >"$tmp/b.csv"
	[ "$(wc -l <"$tmp/a.csv")" -gt 1 ] || [ "$4" = v_fusion ] || fail "$1 run $2: no rows in $4"
	cmp -s "$tmp/a.csv" "$tmp/b.csv" || fail "$1 run $2: $4 differs once merged: $(diff "$tmp/a.csv" "$tmp/b.csv" | head -n 4)"
}
for v in v_runs v_ops v_kernels v_roofline v_fusion; do
	same_rows "$ex/h100-sample.db" 1 1 $v
	same_rows "$ex/h200-sample.db" 1 2 $v
	same_rows "$ex/h100-profile.db" 1 3 $v
	same_rows "$ex/h100-profile.db" 2 4 $v
done
expect_exit 0 "$FUSEPROF" merge "$tmp/ex.db" "$ex/h100-profile.db"
grep -q ": 0 runs added, 0 joined, 2 already there (0 ops" "$tmp/out" || fail "samples again: $(cat "$tmp/out")"

# A missing input, and an output that is not fuseprof's: one line each.
expect_exit 1 "$FUSEPROF" merge "$tmp/o.db" "$tmp/nothing.db"
one_line_error "$tmp/nothing.db"
expect_exit 1 "$FUSEPROF" merge "$tmp/bad.db" "$tmp/a.db"
one_line_error "$tmp/bad.db"
exit 0
