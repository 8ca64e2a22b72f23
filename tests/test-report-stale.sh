#!/bin/sh
# test-report-stale.sh - a report written into the folder of an earlier one
# removes the files that report wrote and this one does not (charts of
# other workloads, formats not asked for again), and nothing else: not a
# file fuseprof did not write, not one it wrote that was changed since.
. "$srcdir/tests/setup"

cp "$srcdir/examples/h200-sample.db" "$tmp/h200.db"
db=$tmp/h200.db
out=$tmp/rep
export FUSEPROF_DATADIR="$top_srcdir/plots"
[ -n "${GNUPLOT:-}" ] && [ -x "$GNUPLOT" ] || export GNUPLOT=/nonexistent/gnuplot
plots=0
[ "$GNUPLOT" = /nonexistent/gnuplot ] || plots=1

expect_exit 0 "$FUSEPROF" report --db "$db" --out "$out"
[ -f "$out/.fuseprof-report" ] || fail "no list of the report's files"
for f in report.md report.html report.json roofline.csv; do
	grep -q " $f\$" "$out/.fuseprof-report" || fail "$f is not listed"
done
if [ $plots = 1 ]; then
	[ -f "$out/roofline-softmax_bwd.png" ] || fail "no per-workload chart"
	# Changed since the report wrote it: the user's now.
	echo mine >"$out/roofline-softmax_bwd.svg"
fi
# Files fuseprof did not write, some named like a report's.
echo notes >"$out/notes.txt"
echo mine >"$out/roofline-mine.png"
echo mine >"$out/fusion.old.dat"

expect_exit 0 "$FUSEPROF" report --db "$db" --out "$out" --workload softmax_fwd \
	--format md,csv
for f in report.md roofline.csv fusion.csv ceilings.csv notes.txt \
	 roofline-mine.png fusion.old.dat; do
	[ -f "$out/$f" ] || fail "$f was removed"
done
for f in report.html report.json; do
	[ ! -e "$out/$f" ] || fail "stale $f left"
done
if [ $plots = 1 ]; then
	for f in roofline.png roofline.svg fusion.png; do
		[ -f "$out/$f" ] || fail "$f was removed"
	done
	[ "$(cat "$out/roofline-softmax_bwd.svg")" = mine ] || fail "a changed file was removed"
	left=$(cd "$out" && ls roofline-*.png | grep -v '^roofline-mine.png$' || true)
	[ -z "$left" ] || fail "stale charts left: $left"
fi
grep -q " report.html\$" "$out/.fuseprof-report" && fail "report.html still listed"
grep -q "notes.txt\|roofline-mine" "$out/.fuseprof-report" && fail "lists a file it did not write"

# Tables only: the charts go too (only those fuseprof wrote).
expect_exit 0 "$FUSEPROF" report --db "$db" --out "$out" --no-plots --format md
[ "$(cd "$out" && ls | sort | tr '\n' ' ')" = \
  "$( [ $plots = 1 ] && echo 'fusion.old.dat notes.txt report.md roofline-mine.png roofline-softmax_bwd.svg ' || echo 'fusion.old.dat notes.txt report.md roofline-mine.png ')" ] ||
	fail "after --no-plots --format md: $(cd "$out" && ls | tr '\n' ' ')"
