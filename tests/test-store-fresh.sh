# test-store-fresh.sh - eight writers starting together on a file that does
# not exist yet all succeed, 20 times over: the first creates the schema,
# the others see it once they hold the write lock, everyone's switch to WAL
# gets through, and no row is lost.
#
# Each trial starts the writers at one instant ($STORE_WRITER_START_AT) and
# runs `store-writer --hold` beside them: it takes the write lock in short
# bursts, as a writer creating the schema or the views does, for the first
# 150 ms. Without it the switch to WAL meets another writer's lock in a few
# trials in a hundred; with it, in nearly every trial, so a writer that
# gives up on a busy switch fails this test every time it runs.
. "$srcdir/tests/setup"

writer="$top_builddir/tests/store-writer"
date -d '+0.1 seconds' +%s.%N 2>/dev/null | grep -q '^[0-9]*\.[0-9]*$' || {
	echo "skip: date cannot print a time 0.1 s ahead in fractional seconds (GNU date can)" >&2
	exit 77
}

q() { "$FUSEPROF" query --db "$1" --format csv "$2" | tail -n 1 | tr -d '\r'; }

for trial in $(seq 1 20); do
	db="$tmp/fresh$trial.db"
	STORE_WRITER_START_AT=$(date -d '+0.1 seconds' +%s.%N)
	export STORE_WRITER_START_AT
	"$writer" --hold "$db" 150 2>"$tmp/hold.err" &
	hold=$!
	pids=
	for i in 1 2 3 4 5 6 7 8; do
		"$writer" "$db" 6 "w$i" >/dev/null 2>"$tmp/err$i" &
		pids="$pids $!"
	done
	failed=0
	for p in $pids; do
		wait "$p" || failed=1
	done
	wait "$hold" || fail "trial $trial: the lock holder failed: $(cat "$tmp/hold.err")"
	[ $failed = 0 ] || fail "trial $trial: a writer failed: $(cat "$tmp"/err*)"
	[ "$(q "$db" 'SELECT count(*) FROM ops')" = 48 ] ||
		fail "trial $trial: expected 48 ops, found $(q "$db" 'SELECT count(*) FROM ops')"
	[ "$(q "$db" "SELECT count(*) FROM runs WHERE status = 'complete'")" = 8 ] ||
		fail "trial $trial: not every run completed"
	[ "$(q "$db" 'SELECT count(DISTINCT tag) FROM runs')" = 8 ] ||
		fail "trial $trial: a writer's run is missing"
	[ "$(q "$db" 'SELECT count(*) FROM kernels')" = 240 ] || fail "trial $trial: kernels lost"
	[ "$(q "$db" 'PRAGMA integrity_check')" = ok ] || fail "trial $trial: integrity check failed"
	# Bytes 18 and 19 of the header are 2 in WAL mode.
	[ "$(od -An -tu1 -j18 -N2 "$db" | tr -d ' ')" = 22 ] || fail "trial $trial: not in WAL mode"
	rm -f "$db" "$db-wal" "$db-shm"
done
