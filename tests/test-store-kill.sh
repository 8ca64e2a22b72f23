# test-store-kill.sh - a writer killed with SIGKILL mid-run leaves a sound
# database: integrity check passes, every stored op is whole, and the run
# reads as 'running', never 'complete'.
. "$srcdir/tests/setup"

writer="$top_builddir/tests/store-writer"
db="$tmp/killed.db"

"$writer" "$db" 0 >"$tmp/id" &
pid=$!
wait_for_ops "$db" 40
kill -9 $pid
wait $pid 2>/dev/null || true
[ "$n" -ge 40 ] || fail "the writer stored only $n ops before the kill"

q() { "$FUSEPROF" query --db "$db" --format csv "$1" | tail -n 1 | tr -d '\r'; }
[ "$(q 'PRAGMA integrity_check')" = ok ] || fail "integrity check: $(q 'PRAGMA integrity_check')"
total=$(q "SELECT count(*) FROM ops")
[ "$total" -ge "$n" ] || fail "ops went from $n to $total"
torn=$(q "SELECT count(*) FROM ops o WHERE
	(SELECT count(*) FROM kernels k WHERE k.op_id = o.id) != 5 OR
	(SELECT count(*) FROM samples s WHERE s.op_id = o.id) != 20 OR
	(SELECT count(*) FROM counters c JOIN kernels k ON k.id = c.kernel_id
	 WHERE k.op_id = o.id) != 30")
[ "$torn" = 0 ] || fail "$torn ops are torn"
[ "$(q 'SELECT status FROM runs')" = running ] || fail "run status is $(q 'SELECT status FROM runs')"
[ "$(q "SELECT count(*) FROM v_runs WHERE status = 'complete'")" = 0 ] || fail "a killed run reads as complete"

# The database stays usable for the next writer.
"$writer" "$db" 3 >/dev/null || fail "writing after the kill failed"
[ "$(q "SELECT count(*) FROM runs WHERE status = 'complete'")" = 1 ] || fail "second run not complete"
