#!/bin/sh
# test-report-args.sh - `fuseprof report` says why gnuplot failed (its exit
# status or signal, and its last line on stderr when it wrote one), and
# refuses what it would otherwise drop silently: an empty --workload, a
# plot option with --no-plots, an empty --db. Needs no gnuplot.
. "${srcdir:-.}/tests/setup"

FUSEPROF_DATADIR=$(cd "$top_srcdir/plots" && pwd)
export FUSEPROF_DATADIR
db=$top_srcdir/examples/h100-sample.db

# A gnuplot that fails without a word: the exit status is the reason.
expect_exit 1 env GNUPLOT=/bin/false "$FUSEPROF" report --db "$db" --out "$tmp/o1"
one_line_error "/bin/false" "exit status 1" "no message"
# One that says why: its last non-empty line, after the status.
cat >"$tmp/gp-says" <<'GP'
#!/bin/sh
echo 'plot "x.dat"' >&2
echo '         line 7: undefined variable: bogus' >&2
echo >&2
exit 3
GP
# One killed by a signal.
cat >"$tmp/gp-killed" <<'GP'
#!/bin/sh
kill -9 $$
GP
chmod +x "$tmp/gp-says" "$tmp/gp-killed"
expect_exit 1 env GNUPLOT="$tmp/gp-says" "$FUSEPROF" report --db "$db" --out "$tmp/o2"
one_line_error "exit status 3" "line 7: undefined variable: bogus"
expect_exit 1 env GNUPLOT="$tmp/gp-killed" "$FUSEPROF" report --db "$db" --out "$tmp/o3"
one_line_error "signal 9"
# The tables are written all the same.
[ -s "$tmp/o1/report.md" ] || fail "gnuplot failed: no report.md"

# An empty workload name would select every workload: a usage error.
for w in '' ',' 'softmax_fwd,' ',softmax_fwd' 'softmax_fwd,,softmax_bwd'; do
	expect_exit 2 "$FUSEPROF" report --db "$db" --out "$tmp/w" --workload "$w"
	one_line_error -- "--workload" "empty"
done
[ ! -e "$tmp/w" ] || fail "a refused report created its folder"

# Plot options with --no-plots contradict each other, in either order.
for o in --hierarchical --no-svg --keep-data '--size 800x600'; do
	# shellcheck disable=SC2086 # --size takes its value as a word
	expect_exit 2 "$FUSEPROF" report --db "$db" --out "$tmp/p" --no-plots $o
	one_line_error -- "${o%% *}" "--no-plots"
	# shellcheck disable=SC2086
	expect_exit 2 "$FUSEPROF" report --db "$db" --out "$tmp/p" $o --no-plots
	one_line_error -- "${o%% *}" "--no-plots"
done
[ ! -e "$tmp/p" ] || fail "a refused report created its folder"
expect_exit 0 "$FUSEPROF" report --db "$db" --out "$tmp/p" --no-plots --format md
[ -s "$tmp/p/report.md" ] || fail "--no-plots alone: no report.md"

expect_exit 2 "$FUSEPROF" report --db '' --out "$tmp/e"
one_line_error -- "--db"
exit 0
