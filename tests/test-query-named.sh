# test-query-named.sh - `fuseprof query NAME` for the named questions (runs,
# regressions, fusion-gains, roofline), v_regressions' pairing rule, and
# that query only reads: write statements are refused in one line with
# exit 1 and the database file stays byte-identical.
. "$srcdir/tests/setup"

MKRUNS=${MKRUNS:-${top_builddir:-..}/tests/mkruns}
db=$tmp/q.db

uncr() {
	tr -d '\r' <"$tmp/out" >"$tmp/out.lf" && mv "$tmp/out.lf" "$tmp/out"
}

# Run 1 and 3 on an H100, run 2 on an A100 in between: run 3 pairs with
# run 1, and run 2 has no earlier run on its GPU model.
"$MKRUNS" "$db" >/dev/null <<'SPEC'
device NVIDIA-H100
run first
op softmax fused fp32 M=8,N=4096 ok 1 1.0e8 1.0e7 100000 0.02 11
op softmax unfused fp32 M=8,N=4096 ok 3 3.0e8 1.0e7 300000 0.02 11
device NVIDIA-A100
run elsewhere
op softmax fused fp32 M=8,N=4096 ok 1 1.0e8 1.0e7 900000 0.02 11
op softmax unfused fp32 M=8,N=4096 ok 3 3.0e8 1.0e7 900000 0.02 11
device NVIDIA-H100
run third
op softmax fused fp32 M=8,N=4096 wrong 1 1.0e8 1.0e7 100000 0.02 11
op softmax unfused fp32 M=8,N=4096 ok 2 3.3e8 1.2e7 450000 0.02 11
op softmax naive fp32 M=8,N=4096 ok 2 3.3e8 1.2e7 450000 0.02 11
SPEC
cp "$db" "$tmp/q.copy"

# runs: newest first.
expect_exit 0 "$FUSEPROF" query --db "$db" --format csv runs
uncr
head -n 1 "$tmp/out" | grep -q '^run_id,started_at,' || fail "runs header: $(head -n 1 "$tmp/out")"
[ "$(tail -n +2 "$tmp/out" | cut -d, -f1 | tr '\n' ' ')" = "3 2 1 " ] || fail "runs order: $(cat "$tmp/out")"

# regressions: only run 3's ops that run 1 had; largest slowdown first.
expect_exit 0 "$FUSEPROF" query --db "$db" --format csv regressions
uncr
head -n 1 "$tmp/out" | grep -qx 'run_id,op_id,base_run_id,base_op_id,device,workload,variant,dtype,shape,base_status,status,became_wrong,base_time_ns,time_ns,time_ratio,base_dram_bytes,dram_bytes,dram_ratio,base_flops,flops,flops_ratio,base_launches,launches,base_kernel_opts,kernel_opts,base_kernel,kernel' ||
	fail "regressions header: $(head -n 1 "$tmp/out")"
[ "$(wc -l <"$tmp/out")" -eq 3 ] || fail "regressions rows: $(cat "$tmp/out")"
sed -n 2p "$tmp/out" | grep -q '^3,[0-9]*,1,[0-9]*,NVIDIA-H100,softmax,unfused,fp32,"M=8,N=4096",ok,ok,0,' ||
	fail "first regression row: $(sed -n 2p "$tmp/out")"
sed -n 3p "$tmp/out" | grep -q '^3,[0-9]*,1,[0-9]*,NVIDIA-H100,softmax,fused,fp32,"M=8,N=4096",ok,wrong,1,' ||
	fail "became-wrong row: $(sed -n 3p "$tmp/out")"
# Ratios, from the end of the line (the quoted shape holds a comma):
# time 450/300 within the 2% spread, DRAM bytes 1.1 and FLOPs 1.2 exactly;
# then the launches, and four kernel columns left empty by mkruns.
sed -n 2p "$tmp/out" | awk -F, '{ t = $(NF-12); d = $(NF-9); f = $(NF-6);
	exit !(t > 1.45 && t < 1.55 && d > 1.0999999 && d < 1.1000001 &&
	       f > 1.1999999 && f < 1.2000001 && $(NF-5) == 3 && $(NF-4) == 2 &&
	       $(NF-3) $(NF-2) $(NF-1) $NF == "") }' ||
	fail "regression ratios: $(sed -n 2p "$tmp/out")"
expect_exit 0 "$FUSEPROF" query --db "$db" --format csv \
	"SELECT count(*) FROM v_regressions WHERE run_id = 2 OR variant = 'naive'"
uncr
[ "$(sed -n 2p "$tmp/out")" = 0 ] || fail "an op without a predecessor on its GPU got a row"

# fusion-gains and roofline name their views; JSON works for each name.
for q in runs regressions fusion-gains roofline; do
	expect_exit 0 "$FUSEPROF" query --db "$db" --format json "$q"
	head -c 1 "$tmp/out" | grep -q '\[' || fail "$q: not a JSON array"
done
expect_exit 0 "$FUSEPROF" query --db "$db" --format csv fusion-gains
uncr
grep -q '^1,softmax,fp32,' "$tmp/out" || fail "fusion-gains: $(cat "$tmp/out")"
expect_exit 0 "$FUSEPROF" query --db "$db" --list
for q in runs regressions fusion-gains roofline v_regressions; do
	grep -q "^$q " "$tmp/out" || fail "--list lacks $q"
done
expect_exit 0 "$FUSEPROF" query --help
grep -q 'fusion-gains' "$tmp/out" || fail "help lacks the named queries"

# Reads work.
expect_exit 0 "$FUSEPROF" query --db "$db" --format csv "SELECT count(*) AS n FROM ops"
uncr
[ "$(sed -n 2p "$tmp/out")" = 7 ] || fail "count: $(cat "$tmp/out")"
expect_exit 0 "$FUSEPROF" query --db "$db" "PRAGMA user_version"
expect_exit 0 "$FUSEPROF" query --db "$db" "PRAGMA table_info(ops)"
grep -q 'workload' "$tmp/out" || fail "table_info"
expect_exit 0 "$FUSEPROF" query --db "$db" "WITH t AS (SELECT 1 AS x) SELECT x FROM t"

# Writes are refused: one line, exit 1, and nothing changes on disk.
while IFS= read -r sql; do
	expect_exit 1 "$FUSEPROF" query --db "$db" "$sql"
	one_line_error "read-only"
	cmp -s "$db" "$tmp/q.copy" || fail "'$sql' changed the database"
done <<'SQL'
INSERT INTO meta VALUES ('k', 'v')
REPLACE INTO meta VALUES ('created_by', 'someone')
UPDATE ops SET time_ns = 1
DELETE FROM ops
DELETE FROM sqlite_master
DROP TABLE ops
DROP VIEW v_ops
CREATE TABLE t (a)
CREATE TEMP TABLE t (a)
ALTER TABLE ops ADD COLUMN z
ATTACH DATABASE 'other.db' AS other
DETACH DATABASE main
PRAGMA user_version = 99
PRAGMA journal_mode = DELETE
PRAGMA foreign_keys = OFF
PRAGMA wal_checkpoint
PRAGMA optimize
BEGIN IMMEDIATE
SAVEPOINT s
ANALYZE
REINDEX
VACUUM
SQL
expect_exit 0 "$FUSEPROF" query --db "$db" --format csv "PRAGMA user_version"
uncr
ver0=$(sed -n 2p "$tmp/out")
expect_exit 1 "$FUSEPROF" query --db "$db" "ATTACH DATABASE '$tmp/other.db' AS other"
one_line_error "refusing ATTACH"
[ ! -e "$tmp/other.db" ] || fail "ATTACH created a file"
expect_exit 1 "$FUSEPROF" query --db "$db" "PRAGMA user_version = 99"
one_line_error "refusing PRAGMA user_version"
expect_exit 1 "$FUSEPROF" query --db "$db" "SELECT 1; DELETE FROM ops"
one_line_error "one statement"
cmp -s "$db" "$tmp/q.copy" || fail "query changed the database"
expect_exit 0 "$FUSEPROF" query --db "$db" --format csv "PRAGMA user_version"
uncr
[ "$(sed -n 2p "$tmp/out")" = "$ver0" ] || fail "user_version changed: $(cat "$tmp/out")"
