# test-store-readonly.sh - query, list runs, report and compare read a WAL
# database they cannot write (its folder and the file read-only), and
# leave no -wal or -shm file beside a database they only read.
#
# Root ignores permission bits: a read-only folder does not stop root's
# reader from creating files in it, so a test run as root (CI containers)
# would pass whatever the reader did, unless it checks otherwise. It does
# both of these:
#  1. As whoever runs it, root included: after each reader, no -wal or
#     -shm file exists beside the database. A reader opening the file the
#     ordinary way creates both (root successfully), so this fails for any
#     reader that would need to write the folder, root or not.
#  2. Where the permission bits bind: as is when not root; as root, the
#     same readers again as user nobody through setpriv(1) (util-linux),
#     here also on a database a killed writer left with its -wal and -shm
#     (readable, not writable). That part is skipped, with a note, where
#     setpriv is missing or nobody cannot reach the build tree.
# No read-only mount (needs privileges CI lacks) and no chattr +i (not on
# every file system, and root again).
. "$srcdir/tests/setup"
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

writer="$top_builddir/tests/store-writer"
ro="$tmp/ro"
db="$ro/shared.db"
mkdir "$ro"
"$writer" "$db" 4 base >/dev/null
"$writer" "$db" 4 new >/dev/null
[ ! -e "$db-wal" ] && [ ! -e "$db-shm" ] || fail "the writer left its log behind"
[ "$(od -An -tu1 -j18 -N2 "$db" | tr -d ' ')" = 22 ] || fail "not a WAL database"
chmod 0444 "$db"
chmod 0555 "$ro"

# readers AS: run the four readers on $db as user AS ("" = ourselves), each
# must succeed and leave nothing beside the database.
readers() {
	as=$1 out="$tmp/rep$1"
	mkdir -p "$out"
	chmod 0777 "$out"
	run_as "$as" "$FUSEPROF" query --db "$db" --format csv "SELECT count(*) FROM ops"
	[ "$(tail -n 1 "$tmp/out" | tr -d '\r')" = 8 ] || fail "${as:-we}: query read $(cat "$tmp/out")"
	no_log "${as:-we}: query"
	run_as "$as" "$FUSEPROF" list runs --db "$db" --format csv
	[ "$(grep -c ',complete,' "$tmp/out")" = 2 ] || fail "${as:-we}: list runs: $(cat "$tmp/out")"
	no_log "${as:-we}: list runs"
	run_as "$as" "$FUSEPROF" report --db "$db" --out "$out/report" --no-plots
	[ -s "$out/report/report.md" ] || fail "${as:-we}: report wrote no report.md"
	no_log "${as:-we}: report"
	run_as "$as" "$FUSEPROF" compare --db "$db" 1 2
	grep -q 'run 1 (complete)' "$tmp/out" || fail "${as:-we}: compare: $(cat "$tmp/out")"
	no_log "${as:-we}: compare"
}

# run_as AS CMD...: CMD as user AS ("" = ourselves), exit 0 required.
run_as() {
	as=$1
	shift
	if [ -n "$as" ]; then
		expect_exit 0 setpriv --reuid="$as" --regid="$as" --clear-groups "$@"
	else
		expect_exit 0 "$@"
	fi
}

no_log() {
	for f in "$db-wal" "$db-shm" "$db-journal"; do
		[ ! -e "$f" ] || fail "$1 left '$f' beside a database it only read"
	done
}

readers ""

# 2. Permission bits that bind: root runs the readers as nobody.
[ "$(id -u)" = 0 ] || exit 0
nobody=65534
chmod 0711 "$tmp"
if ! command -v setpriv >/dev/null 2>&1; then
	echo "note: no setpriv: the readers ran as root only" >&2
	exit 0
fi
if ! setpriv --reuid=$nobody --regid=$nobody --clear-groups "$FUSEPROF" --version >/dev/null 2>&1; then
	echo "note: user nobody cannot run '$FUSEPROF': the readers ran as root only" >&2
	exit 0
fi
readers $nobody

# A database a killed writer left with its log: readers use the log (its
# ops are there), read-only, from a folder they cannot write.
live="$tmp/live"
mkdir "$live"
"$writer" "$live/l.db" 2 done >/dev/null
"$writer" "$live/l.db" 0 going >"$tmp/id" &
pid=$!
wait_for_ops "$live/l.db" 10
kill -9 $pid
wait $pid 2>/dev/null || true
[ -s "$live/l.db-wal" ] && [ -e "$live/l.db-shm" ] || fail "the killed writer left no log"
chmod 0444 "$live"/l.db*
chmod 0555 "$live"
sums=$(cksum "$live"/l.db*)
expect_exit 0 setpriv --reuid=$nobody --regid=$nobody --clear-groups \
	"$FUSEPROF" list runs --db "$live/l.db" --format csv
grep -q ',done,complete,' "$tmp/out" || fail "nobody: list runs: $(cat "$tmp/out")"
grep -q ',going,killed,' "$tmp/out" || fail "nobody: the killed run: $(cat "$tmp/out")"
[ "$(cksum "$live"/l.db*)" = "$sums" ] || fail "a reader changed the killed writer's files"

# The same without its -shm file: nothing a reader can do in that folder;
# one line that says why and what to do.
chmod 0755 "$live"
rm "$live/l.db-shm"
chmod 0555 "$live"
expect_exit 1 setpriv --reuid=$nobody --regid=$nobody --clear-groups \
	"$FUSEPROF" list runs --db "$live/l.db"
one_line_error "$live/l.db-wal" "-shm" "copy"
