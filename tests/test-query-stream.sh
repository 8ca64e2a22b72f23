#!/bin/sh
# test-query-stream.sh - query prints rows as they come: a million rows in
# every format under a memory limit that the whole result would exceed;
# out of memory is one line and exit 1, never an abort.
. "$srcdir/tests/setup"

# A read-only open of a WAL database may leave -shm files beside it: work
# on a copy, the source tree may be read-only.
cp "$srcdir/examples/h200-sample.db" "$tmp/h200.db"
db=$tmp/h200.db
rows="WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c
      WHERE x < 1000000) SELECT x, 'row ' || x AS s FROM c"

# limited KIB CMD...: run CMD with at most KIB KiB of address space.
limited() {
	kib=$1
	shift
	sh -c 'ulimit -v "$0" && exec "$@"' "$kib" "$@"
}

# Held whole, a million rows take several times this; streamed, a few MiB.
for f in csv json md table; do
	expect_exit 0 limited 32768 "$FUSEPROF" query --db "$db" --format $f "$rows"
	lines=$(wc -l <"$tmp/out")
	case $f in
	csv) want=1000001 last='1000000,row 1000000' ;;
	json) want=1000002 last=']' ;;
	md|table) want=1000002 last='1000000' ;;
	esac
	[ "$lines" = "$want" ] || fail "--format $f: $lines lines, wanted $want"
	tail -n 2 "$tmp/out" | grep -qF "$last" || fail "--format $f ends: $(tail -n 2 "$tmp/out")"
done
# Aligned text keeps the widths of its first window (1000 rows: x is 4 wide).
[ "$(sed -n 3p "$tmp/out")" = "   1  row 1" ] || fail "table row 1: '$(sed -n 3p "$tmp/out")'"

# One cell of 8 to 24 MB under 48 MiB: SQLite or the printing runs out of
# memory, or it fits; either way no abort.
for n in 4000000 6000000 8000000 12000000; do
	set +e
	limited 49152 "$FUSEPROF" query --db "$db" --format csv \
		"SELECT hex(zeroblob($n)) AS h" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	set -e
	case $rc in
	0) [ "$(wc -c <"$tmp/out")" = $((2 * n + 5)) ] || fail "cell of $n: short output" ;;
	1) one_line_error "query: out of memory" ;;
	*) fail "cell of $n: exit status $rc: $(cat "$tmp/err")" ;;
	esac
done
