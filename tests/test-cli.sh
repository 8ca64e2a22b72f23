# test-cli.sh - the fuseprof command line: help, version, usage errors, the
# query and list commands and their output formats.
. "$srcdir/tests/setup"

# --help and --version go to stdout and exit 0.
expect_exit 0 "$FUSEPROF" --help
grep -q '^Usage: fuseprof COMMAND' "$tmp/out" || fail "--help has no usage line"
[ ! -s "$tmp/err" ] || fail "--help wrote to stderr"
cp "$tmp/out" "$tmp/help"
expect_exit 0 "$FUSEPROF" -h
cmp -s "$tmp/out" "$tmp/help" || fail "-h differs from --help"

expect_exit 0 "$FUSEPROF" --version
head -n 1 "$tmp/out" | grep -Eq '^fuseprof [0-9]+\.[0-9]+\.[0-9]+$' || fail "bad version line: $(head -n 1 "$tmp/out")"

# Every command --help lists has its own help, which `help CMD` repeats.
cmds=$(sed -n '/^Commands:/,/^$/p' "$tmp/help" | awk 'NF && !/^Commands:/ {print $1}')
[ -n "$cmds" ] || fail "--help lists no commands"
for c in $cmds; do
	expect_exit 0 "$FUSEPROF" "$c" --help
	if [ "$c" != help ]; then
		grep -q "^Usage: fuseprof $c" "$tmp/out" || fail "'$c --help' has no usage line"
		cp "$tmp/out" "$tmp/cmdhelp"
		expect_exit 0 "$FUSEPROF" help "$c"
		cmp -s "$tmp/out" "$tmp/cmdhelp" || fail "'help $c' differs from '$c --help'"
	fi
done

# Usage errors: exit 2, one line naming the problem, a hint.
expect_exit 2 "$FUSEPROF"
one_line_error "no command"
expect_exit 2 "$FUSEPROF" frobnicate
one_line_error "unknown command 'frobnicate'"
grep -q "^Try 'fuseprof --help'" "$tmp/err" || fail "no hint after a usage error"
expect_exit 2 "$FUSEPROF" --frobnicate
one_line_error "unknown option '--frobnicate'"
expect_exit 2 "$FUSEPROF" help frobnicate
one_line_error "frobnicate"
expect_exit 2 "$FUSEPROF" query
one_line_error "no SQL"
expect_exit 2 "$FUSEPROF" query --format xml runs
one_line_error "unknown format 'xml'"
expect_exit 2 "$FUSEPROF" query --bogus runs
one_line_error "--bogus"
expect_exit 2 "$FUSEPROF" query "SELECT 1" "SELECT 2"
one_line_error "one argument"
expect_exit 2 "$FUSEPROF" list
one_line_error "runs or workloads"
expect_exit 2 "$FUSEPROF" list frobs
one_line_error "unknown list 'frobs'"

# The variants, one row each: a role, and a twin only on an unfused
# variant, naming a fused variant of the same workload (the built-in
# softplus chain's unfused3 declares fused_tape, both directions).
expect_exit 2 "$FUSEPROF" list runs --variants
one_line_error "--variants" "list workloads"
expect_exit 2 "$FUSEPROF" list workloads --variants --options
one_line_error "not both"
expect_exit 0 "$FUSEPROF" list workloads --variants --format csv
tr -d '\r' <"$tmp/out" >"$tmp/variants"
head -n 1 "$tmp/variants" | grep -qx 'workload,variant,role,twin,suite,summary' ||
	fail "list workloads --variants: header $(head -n 1 "$tmp/variants")"
# the first four columns never hold a comma: cut reads them
tail -n +2 "$tmp/variants" | cut -d, -f1-4 >"$tmp/v4"
"$FUSEPROF" list workloads --format csv | tr -d '\r' | tail -n +2 | cut -d, -f1 >"$tmp/wl"
[ "$(cut -d, -f1 "$tmp/v4" | sort -u)" = "$(sort -u "$tmp/wl")" ] ||
	fail "--variants lists other workloads than 'list workloads'"
twins=0
while IFS=, read -r wl v role twin; do
	case $role in fused|unfused|naive) ;; *) fail "$wl/$v: role '$role'" ;; esac
	[ -n "$twin" ] || continue
	twins=$((twins + 1))
	[ "$role" = unfused ] || fail "$wl/$v: a $role variant with twin $twin"
	grep -qx "$wl,$twin,fused," "$tmp/v4" ||
		fail "$wl/$v: twin $twin is no fused variant of $wl"
done <"$tmp/v4"
grep -qx 'softplus_chain_bwd,unfused3,unfused,fused_tape' "$tmp/v4" ||
	fail "softplus_chain_bwd/unfused3 does not name its twin fused_tape"
[ "$twins" -ge 2 ] || fail "$twins twins listed"

# A missing database is a failure (1) naming the file, and is not created.
expect_exit 1 "$FUSEPROF" list runs --db "$tmp/none.db"
one_line_error "$tmp/none.db" "No such file"
[ ! -e "$tmp/none.db" ] || fail "a read command created the database"

# A database with two runs of 3 and 2 ops.
db="$tmp/f.db"
"$top_builddir/tests/store-writer" "$db" 3 first >/dev/null
"$top_builddir/tests/store-writer" "$db" 2 second >/dev/null

expect_exit 0 "$FUSEPROF" list runs --db "$db"
[ "$(sed -n 1p "$tmp/out" | awk '{print $1, $2, $3, $4, $5, $6, $7}')" = "id started device tag status ops failed" ] ||
	fail "list runs header: $(sed -n 1p "$tmp/out")"
sed -n 3p "$tmp/out" | grep -Eq '^ *2 .*Test GPU +second +complete +2 +0$' || fail "newest run first: $(sed -n 3p "$tmp/out")"
sed -n 4p "$tmp/out" | grep -Eq '^ *1 .*first +complete +3 +0$' || fail "list runs row: $(sed -n 4p "$tmp/out")"

FUSEPROF_DB="$db" expect_exit 0 "$FUSEPROF" list runs --format csv
[ "$(wc -l <"$tmp/out")" = 3 ] || fail "FUSEPROF_DB not honoured"

# query: CSV, JSON, Markdown and table give the same rows.
sql="SELECT run_id, variant, shape, time_ns FROM v_ops ORDER BY op_id"
expect_exit 0 "$FUSEPROF" query --db "$db" --format csv "$sql"
tr -d '\r' <"$tmp/out" >"$tmp/csv"
[ "$(sed -n 1p "$tmp/csv")" = "run_id,variant,shape,time_ns" ] || fail "csv header: $(sed -n 1p "$tmp/csv")"
[ "$(wc -l <"$tmp/csv")" = 6 ] || fail "csv rows: $(cat "$tmp/csv")"
[ "$(sed -n 2p "$tmp/csv")" = '1,unfused,"M=1,N=768",1009.5' ] || fail "csv quoting/median: $(sed -n 2p "$tmp/csv")"

expect_exit 0 "$FUSEPROF" query --db "$db" --format json "$sql"
head -c 1 "$tmp/out" | grep -q '\[' || fail "json does not start with ["
[ "$(grep -c '"run_id": ' "$tmp/out")" = 5 ] || fail "json objects: $(cat "$tmp/out")"
grep -q '"shape": "M=1,N=768", "time_ns": 1009.5}' "$tmp/out" || fail "json types: $(cat "$tmp/out")"
tail -n 1 "$tmp/out" | grep -q '^\]$' || fail "json does not end with ]"

expect_exit 0 "$FUSEPROF" query --db "$db" --format md "$sql"
[ "$(sed -n 2p "$tmp/out")" = "| ---: | --- | --- | ---: |" ] || fail "md rule: $(sed -n 2p "$tmp/out")"
[ "$(wc -l <"$tmp/out")" = 7 ] || fail "md rows"

expect_exit 0 "$FUSEPROF" query --db "$db" "$sql"
[ "$(wc -l <"$tmp/out")" = 7 ] || fail "table rows"

# A bare view name selects the view; --list names every view.
expect_exit 0 "$FUSEPROF" query --db "$db" --format csv runs
[ "$(wc -l <"$tmp/out")" = 3 ] || fail "'query runs' rows"
expect_exit 0 "$FUSEPROF" query --list
for v in v_ops v_kernels v_runs; do
	grep -q "^$v " "$tmp/out" || fail "--list misses $v"
done

# Reads only: writes are refused and the file is unchanged.
cp "$db" "$tmp/before.db"
for bad in "DELETE FROM ops" "DROP TABLE ops" "UPDATE runs SET tag = 'x'" \
	   "INSERT INTO meta VALUES ('a', 'b')" "CREATE TABLE t(x)"; do
	expect_exit 1 "$FUSEPROF" query --db "$db" "$bad"
	one_line_error "read-only"
done
cmp -s "$db" "$tmp/before.db" || fail "a refused write changed the database"
expect_exit 1 "$FUSEPROF" query --db "$db" "SELECT nope FROM ops"
one_line_error "no such column: nope"
expect_exit 1 "$FUSEPROF" query --db "$db" "SELECT 1; SELECT 2"
one_line_error "one statement"

# Every command --help lists is documented in the man page and the README.
for c in $cmds; do
	grep -q "^\.SS $c\$" "$top_srcdir/fuseprof.1" || fail "fuseprof.1 does not document '$c'"
	grep -q "fuseprof $c" "$top_srcdir/README.md" || fail "README.md does not show 'fuseprof $c'"
done

# The GPU commands run in a second program, fuseprof-gpu, so that the others
# start without the GPU libraries. Its listing of them matches fuseprof's.
gpu="${FUSEPROF%/*}/fuseprof-gpu"
[ -x "$gpu" ] || fail "no fuseprof-gpu beside $FUSEPROF"
expect_exit 0 "$gpu" --help
for c in run ceilings list; do
	[ "$(grep "^  $c " "$tmp/out")" = "$(grep "^  $c " "$tmp/help")" ] ||
		fail "fuseprof and fuseprof-gpu describe '$c' differently"
done
if command -v ldd >/dev/null 2>&1; then
	! ldd "$FUSEPROF" | grep -Eq 'libcudart|libcupti|libcublas' ||
		fail "fuseprof links the GPU libraries: $(ldd "$FUSEPROF")"
fi

# The command line reaches fuseprof-gpu word for word, and its exit status
# comes back; $FUSEPROF_EXEC_PATH names the folder it is taken from.
mkdir "$tmp/exec"
cat >"$tmp/exec/fuseprof-gpu" <<'SCRIPT'
#!/bin/sh
for a in "$@"; do printf '[%s]\n' "$a"; done
exit 3
SCRIPT
chmod +x "$tmp/exec/fuseprof-gpu"
FUSEPROF_EXEC_PATH="$tmp/exec" expect_exit 3 "$FUSEPROF" run --tag "two words" -w ''
[ "$(cat "$tmp/out")" = "$(printf '[run]\n[--tag]\n[two words]\n[-w]\n[]')" ] ||
	fail "run's arguments changed on the way: $(cat "$tmp/out")"
# A GPU by index or UUID; anything else refused before the GPU.
expect_exit 2 "$gpu" ceilings --device gpu0
one_line_error "'gpu0' is not a GPU index or UUID (GPU-...)"
expect_exit 2 "$gpu" ceilings --device GPU-
one_line_error "'GPU-' is not a GPU index or UUID"
FUSEPROF_EXEC_PATH="$tmp/exec" expect_exit 3 "$FUSEPROF" help ceilings
[ "$(cat "$tmp/out")" = "$(printf '[ceilings]\n[--help]')" ] ||
	fail "'help ceilings' reached fuseprof-gpu as: $(cat "$tmp/out")"
FUSEPROF_EXEC_PATH="$tmp/exec" expect_exit 3 "$FUSEPROF" list -f csv workloads
[ "$(cat "$tmp/out")" = "$(printf '[list]\n[-f]\n[csv]\n[workloads]')" ] ||
	fail "'list workloads' reached fuseprof-gpu as: $(cat "$tmp/out")"
# Commands without the GPU never start it.
FUSEPROF_EXEC_PATH="$tmp/exec" expect_exit 0 "$FUSEPROF" list runs --db "$db"
FUSEPROF_EXEC_PATH="$tmp/exec" expect_exit 0 "$FUSEPROF" query --db "$db" "SELECT 1"

# Without fuseprof-gpu: a failure that says what is missing and how to fix it.
FUSEPROF_EXEC_PATH="$tmp/none" expect_exit 1 "$FUSEPROF" run
one_line_error "$tmp/none/fuseprof-gpu" "FUSEPROF_EXEC_PATH"
