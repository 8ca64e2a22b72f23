# test-store-concurrent.sh - several processes inserting into one database at
# once lose no rows (WAL + busy timeout + one transaction per op).
. "$srcdir/tests/setup"

writer="$top_builddir/tests/store-writer"
db="$tmp/shared.db"

# Create the schema first so the writers race on inserts, not on creation.
"$writer" "$db" 1 >/dev/null
pids=
for i in 1 2 3 4; do
	"$writer" "$db" 150 "w$i" >"$tmp/id$i" 2>"$tmp/err$i" &
	pids="$pids $!"
done
for p in $pids; do
	wait "$p" || fail "a writer failed: $(cat "$tmp"/err*)"
done

q() { "$FUSEPROF" query --db "$db" --format csv "$1" | tail -n 1 | tr -d '\r'; }
[ "$(q 'SELECT count(*) FROM ops')" = 601 ] || fail "expected 601 ops, found $(q 'SELECT count(*) FROM ops')"
[ "$(q "SELECT count(*) FROM runs WHERE status = 'complete'")" = 5 ] || fail "not every run completed"
for i in 1 2 3 4; do
	[ "$(q "SELECT count(*) FROM ops o JOIN runs r ON r.id = o.run_id WHERE r.tag = 'w$i'")" = 150 ] ||
		fail "writer $i lost ops"
done
[ "$(q 'SELECT count(*) FROM kernels')" = 3005 ] || fail "kernels lost"
[ "$(q 'PRAGMA integrity_check')" = ok ] || fail "integrity check failed"
