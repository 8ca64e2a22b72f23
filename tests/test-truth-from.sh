#!/bin/sh
# test-truth-from.sh - bench/opportunities-truth.sh --from DB, without a
# GPU, over the truth run shipped in examples/h200-truth.db: the table is
# made again from the database (left as it was), and the pairing follows
# the declared twins first (softplus's fused_tape and the masked softmax's
# fused_dense and the dropout's fused_bytemask are twins, fused_save and
# fused, which keep as many bytes or none, and the dropout's bit-mask and
# regenerating variants, another algorithm), the saved-bytes rule where none is declared
# (bias_relu's fused_save_output keeps what save_input keeps, its bitmask
# does not; RMSNorm's fused keeps nothing where unfused keeps rstd, so with
# no fused variant keeping as much it is the twin); bad input is refused
# in one line with exit 2.
. "${srcdir:-.}/tests/setup"

script=$srcdir/bench/opportunities-truth.sh
db=$tmp/truth.db
cp "$srcdir/examples/h200-truth.db" "$db"
before=$(cksum <"$db")

OUT=$tmp/out1 expect_exit 0 sh "$script" --from "$db"
[ "$(cksum <"$db")" = "$before" ] || fail "--from changed the database"
[ "$(cat "$tmp/out1/status")" = ok ] || fail "no status ok in the output folder"
csv=$tmp/out1/truth.csv
[ -s "$csv" ] || fail "no truth.csv"
tr -d '\r' <"$csv" >"$tmp/t.csv"
head -n 1 "$tmp/t.csv" | grep -q '^workload,dtype,shape,unfused,fused,pairing,' ||
	fail "truth.csv header: $(head -n 1 "$tmp/t.csv")"
grep -q "declared twins: [1-9]" "$tmp/out1/truth.log" || fail "no declared twins read"

# pairs WORKLOAD UNFUSED FUSED PAIRING: how many rows pair them so
pairs() {
	grep -c "^$1,[a-z0-9]*,\"[^\"]*\",$2,$3,$4," "$tmp/t.csv" || true
}
# want N WORKLOAD UNFUSED FUSED PAIRING
want() {
	n=$(pairs "$2" "$3" "$4" "$5")
	[ "$n" = "$1" ] || fail "$2: $3 -> $4 as '$5': $n rows, expected $1"
}
for w in softplus_chain_fwd softplus_chain_bwd; do
	want 4 $w unfused3 fused_tape twin
	want 4 $w unfused3 fused_save 'another algorithm'
	want 4 $w unfused3 fused_recompute 'another algorithm'
done
want 4 softmax_masked_fwd unfused fused_dense twin
want 4 softmax_masked_fwd unfused fused 'another algorithm'
want 4 bias_relu_fwd save_input fused_save_output twin
want 4 bias_relu_fwd save_input fused_bitmask 'another algorithm'
want 4 rmsnorm_fwd unfused fused twin
for w in bias_dropout_add_fwd bias_dropout_add_bwd; do
	want 4 $w unfused fused_bytemask twin
	want 4 $w unfused fused_mask 'another algorithm'
	want 4 $w unfused fused_regen 'another algorithm'
done
want 6 ln_gelu_fwd unfused2 fused twin
# the summary counts what the table holds
twins=$(grep -c ',twin,' "$tmp/t.csv")
grep -Eq "^twin +$twins " "$tmp/out" || fail "summary does not count $twins twin pairs: $(tail -n 4 "$tmp/out")"

# Bad input: one line naming it, exit 2, nothing written to the database.
OUT=$tmp/out2 expect_exit 2 sh "$script" --from "$tmp/none.db"
[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "none.db: no such file" "$tmp/err" ||
	fail "missing database: $(cat "$tmp/err")"
"$top_builddir/tests/store-writer" "$tmp/other.db" 2 other >/dev/null
OUT=$tmp/out3 expect_exit 2 sh "$script" --from "$tmp/other.db"
[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "other.db: no truth-run and truth-unfused runs" "$tmp/err" ||
	fail "database without truth runs: $(cat "$tmp/err")"
OUT=$tmp/out4 expect_exit 2 sh "$script" --from "$db" softmax_fwd
[ "$(wc -l <"$tmp/err")" = 1 ] && grep -q -- "--from takes one database" "$tmp/err" ||
	fail "--from with a workload list: $(cat "$tmp/err")"
[ "$(cksum <"$db")" = "$before" ] || fail "a refused run changed the database"
echo "ok   --from: $twins twin pairs made again; the pairing and the errors"
