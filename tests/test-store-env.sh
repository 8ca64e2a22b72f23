# test-store-env.sh - a malformed $FUSEPROF_BUSY_TIMEOUT_MS is a one-line
# error naming the variable and its value, never silently the default.
. "$srcdir/tests/setup"

db="$tmp/env.db"
"$top_builddir/tests/store-writer" "$db" 1 >/dev/null

for bad in abc 10x -5 99999999999999; do
	FUSEPROF_BUSY_TIMEOUT_MS=$bad expect_exit 1 "$FUSEPROF" list runs --db "$db"
	one_line_error FUSEPROF_BUSY_TIMEOUT_MS "'$bad'"
	FUSEPROF_BUSY_TIMEOUT_MS=$bad expect_exit 1 "$top_builddir/tests/store-writer" "$db" 1
	one_line_error FUSEPROF_BUSY_TIMEOUT_MS "'$bad'"
done

# Good values, and unset or empty (the default), are accepted.
for good in 0 250 ''; do
	FUSEPROF_BUSY_TIMEOUT_MS=$good expect_exit 0 "$FUSEPROF" list runs --db "$db"
	[ ! -s "$tmp/err" ] || fail "FUSEPROF_BUSY_TIMEOUT_MS='$good' printed: $(cat "$tmp/err")"
done
