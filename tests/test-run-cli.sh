#!/bin/sh
# test-run-cli.sh - `fuseprof run` and `fuseprof ceilings` on the command
# line: help, usage errors (exit 2, one line), the op list, and, on a
# machine without a GPU, the no-GPU error (exit 1, one line, nothing stored).
. "${srcdir:-.}/tests/setup"

expect_exit 0 "$FUSEPROF" run --help
grep -q '^Usage: fuseprof run' "$tmp/out" || fail "run --help: no usage line"
for o in --remeasure-ceilings --replay --flush --check-all; do
	grep -q -- "$o" "$tmp/out" || fail "run --help misses $o"
done
expect_exit 0 "$FUSEPROF" help run
expect_exit 0 "$FUSEPROF" ceilings --help
grep -q '^Usage: fuseprof ceilings' "$tmp/out" || fail "ceilings --help: no usage line"

expect_exit 2 "$FUSEPROF" run --reps 0
one_line_error -- --reps
expect_exit 2 "$FUSEPROF" run --reps many
one_line_error many
expect_exit 2 "$FUSEPROF" run --bogus
one_line_error bogus
expect_exit 2 "$FUSEPROF" run extra
one_line_error extra
expect_exit 2 "$FUSEPROF" run --shape ''
one_line_error shape
expect_exit 2 "$FUSEPROF" run --shape 'M=1:8'
one_line_error step
expect_exit 2 "$FUSEPROF" run --shape 'M=8:1:x2'
one_line_error empty
expect_exit 2 "$FUSEPROF" run --workload no_such_workload
one_line_error no_such_workload
expect_exit 2 "$FUSEPROF" run --dtype fp7
one_line_error fp7
expect_exit 2 "$FUSEPROF" run --device -1
one_line_error device
expect_exit 2 "$FUSEPROF" run --replay application
one_line_error application
expect_exit 2 "$FUSEPROF" run --replay kernel --no-counters
one_line_error replay
expect_exit 2 "$FUSEPROF" run --flush always
one_line_error always
expect_exit 2 "$FUSEPROF" run --flush kernel --replay kernel
one_line_error flush
expect_exit 2 "$FUSEPROF" run --no-counters --flush op
one_line_error flush
expect_exit 2 "$FUSEPROF" ceilings --all --remeasure
one_line_error all
expect_exit 2 "$FUSEPROF" ceilings --format xml
one_line_error xml

# The op list needs no GPU.
if "$FUSEPROF" run --dry-run >"$tmp/ops" 2>"$tmp/err"; then
	n=$(wc -l <"$tmp/ops")
	[ "$n" -gt 0 ] || fail "dry run lists no ops"
	# Every line is workload/variant/dtype/shape.
	if grep -v '^[a-z0-9_]*/[a-z0-9_]*/\(fp32\|bf16\)/[A-Za-z0-9_=,-]*$' "$tmp/ops"; then
		fail "malformed op keys"
	fi
	wl=$(head -n 1 "$tmp/ops" | cut -d/ -f1)
	"$FUSEPROF" run --dry-run --quick >"$tmp/quick"
	[ "$(wc -l <"$tmp/quick")" -le "$n" ] || fail "the quick suite is larger than the suite"
	"$FUSEPROF" run --dry-run --workload "$wl" --dtype bf16 >"$tmp/sel"
	[ -s "$tmp/sel" ] || fail "no bf16 ops for $wl"
	if grep -v "^$wl/[a-z0-9_]*/bf16/" "$tmp/sel"; then fail "selection leaks"; fi
	expect_exit 2 "$FUSEPROF" run --dry-run --workload "$wl" --shape 'Q=1'
	one_line_error "'Q'"
	expect_exit 2 "$FUSEPROF" run --dry-run --workload "$wl" --variant no_such_variant
	one_line_error no_such_variant
	have_ops=1
else
	one_line_error
	have_ops=0
fi

# Without a GPU: one clear line, exit 1, no database left behind.
if ! nvidia-smi -L >/dev/null 2>&1; then
	expect_exit 1 "$FUSEPROF" run --db "$tmp/x.db" --quick
	one_line_error
	[ "$have_ops" = 0 ] || grep -q 'GPU' "$tmp/err" || fail "no-GPU error does not say GPU"
	[ ! -e "$tmp/x.db" ] || fail "a failed run left $tmp/x.db"
	expect_exit 1 "$FUSEPROF" ceilings --db "$tmp/x.db"
	one_line_error GPU
	[ ! -e "$tmp/x.db" ] || fail "a failed ceilings left $tmp/x.db"
	# An unknown counter group is named before the GPU is touched.
	if [ "$have_ops" = 1 ]; then
		expect_exit 1 "$FUSEPROF" run --db "$tmp/x.db" --metrics no_such_group
		one_line_error no_such_group roofline
	fi
fi
# --device: 'all', an index, or a comma list of distinct indices; anything
# else is a usage error naming it, before a database is touched.
for d in 0,0 1,2,1 x 0, ,1 all,1 1024 -1,2; do
	expect_exit 2 "$FUSEPROF" run --db "$tmp/d.db" --device "$d"
	one_line_error device "$d"
	[ ! -e "$tmp/d.db" ] || fail "--device $d left $tmp/d.db"
done
expect_exit 2 "$FUSEPROF" run --db "$tmp/d.db" --device 3,1,3
one_line_error "device 3 twice"
if [ "$have_ops" = 1 ]; then
	# A dry run of several devices lists the ops once, as for one.
	expect_exit 0 "$FUSEPROF" run --dry-run --quick --device 0,2 --db "$tmp/d.db"
	cp "$tmp/out" "$tmp/list2"
	expect_exit 0 "$FUSEPROF" run --dry-run --quick --db "$tmp/d.db"
	cmp -s "$tmp/out" "$tmp/list2" || fail "--device 0,2 --dry-run lists other ops"
	[ ! -e "$tmp/d.db" ] || fail "a dry run left $tmp/d.db"
	# Several devices check the op list and the counter group once,
	# before any GPU or file is touched.
	expect_exit 2 "$FUSEPROF" run --device all --workload no_such_workload --db "$tmp/d.db"
	one_line_error no_such_workload
	expect_exit 1 "$FUSEPROF" run --device 0,1 --metrics no_such_group --db "$tmp/d.db"
	one_line_error no_such_group
	[ ! -e "$tmp/d.db" ] || fail "a refused run on several devices left $tmp/d.db"
fi
if ! nvidia-smi -L >/dev/null 2>&1; then
	for d in all 0,1; do
		expect_exit 1 "$FUSEPROF" run --db "$tmp/d.db" --quick --device $d
		one_line_error GPU
		[ ! -e "$tmp/d.db" ] || fail "a failed run --device $d left $tmp/d.db"
	done
fi
expect_exit 1 "$FUSEPROF" ceilings --all --db "$tmp/missing.db"
one_line_error missing.db
exit 0
