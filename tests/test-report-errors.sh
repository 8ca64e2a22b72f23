#!/bin/sh
# test-report-errors.sh - every way `fuseprof report` can fail says so in
# one line and exits 1 (2 for usage); a missing gnuplot is a warning, and
# the tables are written all the same.
. "${srcdir:-.}/tests/setup"

FUSEPROF_DATADIR=$(cd "$top_srcdir/plots" && pwd)
export FUSEPROF_DATADIR
mkdb=${top_builddir:-.}/tests/mkdb
db=$tmp/t.db
"$mkdb" -w 4 "$db" 10 >/dev/null

# No such run, by id and by tag.
expect_exit 1 "$FUSEPROF" report --db "$db" --run 42 --out "$tmp/o"
one_line_error "42"
expect_exit 1 "$FUSEPROF" report --db "$db" --run nosuchtag --out "$tmp/o"
one_line_error "nosuchtag"
[ ! -e "$tmp/o" ] || fail "a failed report created its folder"

# No database.
expect_exit 1 "$FUSEPROF" report --db "$tmp/none.db" --out "$tmp/o"
one_line_error "none.db"

# An empty run (status running, no ops yet).
"$mkdb" -S running "$db" 0 >/dev/null
expect_exit 1 "$FUSEPROF" report --db "$db" --out "$tmp/o"
one_line_error "run 2" "no ops"

# A workload the run does not have.
expect_exit 1 "$FUSEPROF" report --db "$db" --run 1 --workload nosuch --out "$tmp/o"
one_line_error "nosuch" "ln_gelu"

# gnuplot missing: one warning, exit 0, every table, no picture.
expect_exit 0 env GNUPLOT=/nonexistent/gnuplot "$FUSEPROF" report --db "$db" --run 1 --out "$tmp/ng"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "expected one warning: $(cat "$tmp/err")"
grep -q '^fuseprof: warning: plots skipped: .*/nonexistent/gnuplot' "$tmp/err" ||
	fail "no 'plots skipped' warning: $(cat "$tmp/err")"
for f in report.md report.html report.json roofline.csv fusion.csv; do
	[ -s "$tmp/ng/$f" ] || fail "gnuplot missing: no $f"
done
! ls "$tmp/ng"/*.png >/dev/null 2>&1 || fail "gnuplot missing, yet a PNG"
grep -q 'Plots skipped' "$tmp/ng/report.md" || fail "report.md does not say plots were skipped"

# An output folder that cannot be made or written.
: >"$tmp/file"
expect_exit 1 "$FUSEPROF" report --db "$db" --run 1 --out "$tmp/file/sub"
one_line_error "$tmp/file"
expect_exit 1 "$FUSEPROF" report --db "$db" --run 1 --out "$tmp/file"
one_line_error "$tmp/file"
if [ "$(id -u)" != 0 ]; then
	mkdir "$tmp/ro" && chmod 555 "$tmp/ro"
	expect_exit 1 "$FUSEPROF" report --db "$db" --run 1 --out "$tmp/ro"
	one_line_error "$tmp/ro"
	chmod 755 "$tmp/ro"
fi

# Usage errors.
expect_exit 2 "$FUSEPROF" report --db "$db" --format pdf
one_line_error "pdf"
expect_exit 2 "$FUSEPROF" report --db "$db" --size 10x
one_line_error "10x"
expect_exit 2 "$FUSEPROF" report --db "$db" extra
one_line_error "extra"
expect_exit 2 "$FUSEPROF" report --bogus
one_line_error "--bogus"
exit 0
