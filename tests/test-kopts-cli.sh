#!/bin/sh
# test-kopts-cli.sh - kernel options above the kernels, on any build: the
# syntax and errors of `run --kernel-opt` (through the options the built-in
# workloads declare, whatever they are), `list workloads --options`, a
# schema-1 database read as it is and then migrated, the columns of v_ops,
# compare's warning on ops that ran different kernels, the report's kernel
# column.
. "${srcdir:-.}/tests/setup"

MKRUNS=${MKRUNS:-${top_builddir:-..}/tests/mkruns}
uncr() {
	tr -d '\r' <"$tmp/out" >"$tmp/out.lf" && mv "$tmp/out.lf" "$tmp/out"
}
# q DB SQL: the rows of SQL as CSV lines, without the header.
q() {
	"$FUSEPROF" query --db "$1" --format csv "$2" | tr -d '\r' | tail -n +2
}

### the command line ##########################################################
expect_exit 0 "$FUSEPROF" run --help
grep -q -- '--kernel-opt' "$tmp/out" || fail "run --help misses --kernel-opt"
expect_exit 0 "$FUSEPROF" list --help
grep -q -- '--options' "$tmp/out" || fail "list --help misses --options"
expect_exit 2 "$FUSEPROF" list --options runs
one_line_error -- --options

for bad in '' 'k' '=v' 'k=' 'k=v,' ':k=v' 'w:=v' 'k=v:w' 'k=v=w' 'a=1,,b=2'; do
	expect_exit 2 "$FUSEPROF" run --dry-run --kernel-opt "$bad"
	one_line_error kernel-opt
done
expect_exit 2 "$FUSEPROF" run --dry-run -o no_such_key_xyz=1
one_line_error "'no_such_key_xyz'" "no selected workload"
expect_exit 2 "$FUSEPROF" run --dry-run -o no_such_workload:k=v
one_line_error "'no_such_workload'"

# The options the built-in workloads declare (not in $w: one_line_error
# uses that name): text rows "workload option
# values help", values comma-separated with '*' after the default.
expect_exit 0 "$FUSEPROF" list workloads --options --format csv
uncr
head -n 1 "$tmp/out" | grep -qx 'workload,option,values,help' ||
	fail "list workloads --options: header $(head -n 1 "$tmp/out")"
"$FUSEPROF" list workloads --options | tail -n +3 >"$tmp/kopts"
"$FUSEPROF" list workloads --format csv | tr -d '\r' | tail -n +2 | cut -d, -f1 >"$tmp/wl"
while read -r wl key vals rest; do
	grep -qx "$wl" "$tmp/wl" || fail "--options lists '$wl', not a workload"
	case $vals in
	*'*'*'*'*) fail "$wl $key: two defaults in '$vals'" ;;
	*'*'*) ;;
	*) fail "$wl $key: no default marked in '$vals'" ;;
	esac
	[ -n "$rest" ] || fail "$wl $key: no help"
done <"$tmp/kopts"
if [ -s "$tmp/kopts" ] && "$FUSEPROF" run --dry-run >/dev/null 2>&1; then
	read -r wl key vals rest <"$tmp/kopts"
	def=$(echo "$vals" | cut -d, -f1 | tr -d '*')
	last=$(echo "$vals" | tr , '\n' | tail -n 1 | tr -d '*')
	expect_exit 0 "$FUSEPROF" run --dry-run -w "$wl" -o "$key=$def"
	expect_exit 0 "$FUSEPROF" run --dry-run -w "$wl" --kernel-opt "$wl:$key=$last,$key=$def"
	expect_exit 2 "$FUSEPROF" run --dry-run -w "$wl" -o "$key=no_such_value"
	one_line_error "$key" "'no_such_value'" "$def"
	expect_exit 2 "$FUSEPROF" run --dry-run -w "$wl" -o "$wl:no_such_key=1"
	one_line_error "'no_such_key'" "$key"
	# A workload without that key: an error alone, fine beside $wl.
	other=$(awk -v k="$key" '$2 == k { print $1 }' "$tmp/kopts" | grep -vxF -f - "$tmp/wl" |
		head -n 1 || true)
	if [ -n "$other" ]; then
		expect_exit 2 "$FUSEPROF" run --dry-run -w "$other" -o "$key=$def"
		one_line_error "'$key'" "no selected workload"
		expect_exit 0 "$FUSEPROF" run --dry-run -w "$wl,$other" -o "$key=$def"
		expect_exit 2 "$FUSEPROF" run --dry-run -w "$other" -o "$wl:$key=$def"
		one_line_error "'$wl'" "not selected"
	fi
else
	echo "note: no built-in workload declares kernel options;" \
	     "tests/test-kopts covers the registry's errors" >&2
fi

### the store: a database at schema 1 #########################################
old=$tmp/old.db
cp "$srcdir/tests/data/schema1.db" "$old"
chmod u+w "$old"
cp "$old" "$tmp/old.orig"
ver=$(q "$old" "PRAGMA user_version")
if [ "$ver" = 1 ]; then
	nops=$(q "$old" "SELECT count(*) FROM ops")
	[ "$nops" -gt 0 ] || fail "the sample has no ops"
	# Readers see the new columns, at their defaults, and write nothing.
	[ "$(q "$old" "SELECT count(*) FROM v_ops WHERE kernel_opts = '' AND kernel = ''")" = "$nops" ] ||
		fail "v_ops over schema 1: kernel columns not ''"
	[ "$(q "$old" "SELECT count(*) FROM v_roofline WHERE kernel = ''")" = "$nops" ] ||
		fail "v_roofline over schema 1"
	q "$old" "SELECT count(*) FROM v_kernels WHERE op_kernel = ''" >/dev/null
	[ "$(q "$old" "SELECT count(*) FROM v_ops WHERE model_saved_bytes IS NULL AND backward IS NULL")" = "$nops" ] ||
		fail "v_ops over schema 1: saved bytes and backward not NULL"
	[ "$(q "$old" "SELECT count(*) FROM v_save_recompute")" = 0 ] ||
		fail "v_save_recompute over schema 1 pairs ops stored without a backward"
	expect_exit 0 "$FUSEPROF" report --db "$old" --out "$tmp/rold" --format csv,md --no-plots
	cmp -s "$old" "$tmp/old.orig" || fail "a reader changed the schema-1 file"
	[ "$(q "$old" "PRAGMA user_version")" = 1 ] || fail "a reader migrated the file"
	# The first writer migrates it; the old ops get ''.
	"$MKRUNS" "$old" >"$tmp/ids" 2>/dev/null <<'SPEC'
device NVIDIA-H100
run migrated
kernel path=mma mma, 2 stages
saved 1048576 softmax_bwd
op softmax_fwd fused fp32 M=64,N=4096 ok 1 1e6 1e6 100000 0.01 5
SPEC
	[ "$(q "$old" "PRAGMA user_version")" = 8 ] || fail "not migrated to the current schema (8)"
	q "$old" "SELECT name FROM pragma_table_info('ops')" >"$tmp/cols"
	grep -qx kernel_opts "$tmp/cols" && grep -qx kernel "$tmp/cols" ||
		fail "ops lacks the new columns: $(cat "$tmp/cols")"
	[ "$(q "$old" "SELECT count(*) FROM ops WHERE kernel_opts = '' AND kernel = ''")" = "$nops" ] ||
		fail "old ops are not defaulted"
	run=$(cat "$tmp/ids")
	[ "$(q "$old" "SELECT kernel_opts || '|' || kernel FROM v_ops WHERE run_id = $run")" = \
	  '"path=mma|mma, 2 stages"' ] || fail "the new op's kernel columns"
	[ "$(q "$old" "SELECT count(*) FROM ops WHERE model_saved_bytes IS NULL AND backward IS NULL")" = "$nops" ] ||
		fail "old ops got saved bytes or a backward"
	[ "$(q "$old" "SELECT model_saved_bytes || '|' || backward FROM v_ops WHERE run_id = $run")" = \
	  '1048576.0|softmax_bwd' ] || fail "the new op's saved bytes and backward"
	# A second open finds nothing to do.
	"$MKRUNS" "$old" >/dev/null 2>&1 </dev/null || fail "reopening a migrated file"
else
	fail "tests/data/schema1.db is at schema $ver, not 1"
fi

### compare and report ########################################################
db=$tmp/k.db
"$MKRUNS" "$db" >"$tmp/ids" <<'SPEC'
device NVIDIA-H100
run base
kernel path=auto,tile=auto simt, one row per warp
op lnl fused   bf16 M=64,N=4096 ok 1 1e6 1e6 100000 0.01 9
op lnl unfused bf16 M=64,N=4096 ok 2 1e6 1e6 200000 0.01 9
kernel -
op old fused   bf16 M=8        ok 1 1e6 1e6 100000 0.01 9
run new
kernel path=mma,tile=auto mma, 2 stages
op lnl fused   bf16 M=64,N=4096 ok 1 1e6 1e6 100000 0.01 9
kernel path=auto,tile=auto simt, one row per warp
op lnl unfused bf16 M=64,N=4096 ok 2 1e6 1e6 200000 0.01 9
kernel path=auto,tile=auto simt
op old fused   bf16 M=8        ok 1 1e6 1e6 100000 0.01 9
SPEC
expect_exit 0 "$FUSEPROF" compare --db "$db" --format csv base new
uncr
head -n 1 "$tmp/out" | grep -q ',status,kernel$' || fail "compare header: $(head -n 1 "$tmp/out")"
grep -q '^SAME,lnl,fused,.*,ok,"kernel,options"$' "$tmp/out" ||
	fail "the fused op is not marked: $(cat "$tmp/out")"
grep -q '^SAME,lnl,unfused,.*,ok,$' "$tmp/out" || fail "the unfused op is marked: $(cat "$tmp/out")"
grep -q '^SAME,old,fused,.*,ok,$' "$tmp/out" || fail "an unrecorded kernel counts as different"
[ "$(grep -c 'warning' "$tmp/err")" = 1 ] || fail "want one warning: $(cat "$tmp/err")"
grep -q 'lnl/fused/bf16/M=64,N=4096 ran a different kernel' "$tmp/err" ||
	fail "warning does not name the op: $(cat "$tmp/err")"
grep -q "'simt, one row per warp'.*'mma, 2 stages'" "$tmp/err" ||
	fail "warning does not name both kernels: $(cat "$tmp/err")"
expect_exit 0 "$FUSEPROF" compare --db "$db" base new
grep -Eq '^SAME +lnl +fused .* kernel,options *$' "$tmp/out" || fail "table: $(cat "$tmp/out")"

expect_exit 0 "$FUSEPROF" report --db "$db" --run new --out "$tmp/r" --format csv,md,json --no-plots
head -n 1 "$tmp/r/roofline.csv" | tr -d '\r' | grep -q ',message,kernel_opts,kernel,device,device_id$' ||
	fail "roofline.csv header: $(head -n 1 "$tmp/r/roofline.csv")"
grep -q 'path=mma,tile=auto.*mma, 2 stages' "$tmp/r/roofline.csv" ||
	fail "roofline.csv lacks the kernel: $(cat "$tmp/r/roofline.csv")"
grep -q '"kernel": "mma, 2 stages"' "$tmp/r/report.json" || fail "report.json lacks the kernel"
grep -q '^| workload | variant .*| kernel |$' "$tmp/r/report.md" || fail "report.md: no kernel column"
grep -q '| mma, 2 stages |$' "$tmp/r/report.md" || fail "report.md: no kernel"
