#!/bin/sh
# test-ncu-sass.sh - bench/ncu-sass.py on a small export of ncu's SASS
# page (tests/data/ncu-sass.csv: two kernels): the shares of stall reasons,
# regions, opcodes and instructions, --exclude and --kernel, and exit 2
# with a one-line message for bad input. Skips (77) without python3.
. "${srcdir:-.}/tests/setup"
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE

command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3" >&2; exit 77; }
sass="$srcdir/bench/ncu-sass.py"
data="$srcdir/tests/data/ncu-sass.csv"

expect_exit 0 python3 "$sass" "$data"
grep -q '^== void k_alpha<(int)2>(float \*)$' "$tmp/out" || fail "no k_alpha section"
grep -q '^100 samples over 4 instructions$' "$tmp/out" || fail "k_alpha's total"
grep -q '^stall reasons: long_sb 50% wait 30% barrier 20%$' "$tmp/out" || fail "reasons"
grep -Eq '^ +64 +3 +80\.0%  long_sb 50% wait 30%$' "$tmp/out" || fail "the loop's region"
grep -Eq '^ +4 +1 +20\.0%  barrier 20%$' "$tmp/out" || fail "the barrier's region"
grep -q '^opcodes: BRA 40.0% HADD2 30.0% UCGABAR_WAIT 20.0% LDSM 10.0%$' "$tmp/out" ||
	fail "opcodes"
# instructions by samples, the most first
sed -n '/^instructions:/,/^==/p' "$tmp/out" | sed -n 2p | grep -q 'BRA 0x7f0000000010 .* long_sb=40$' ||
	fail "first instruction"
grep -q '^== void k_beta(float \*)$' "$tmp/out" || fail "no k_beta section"
grep -q '^5 samples over 2 instructions$' "$tmp/out" || fail "k_beta's total"

expect_exit 0 python3 "$sass" --exclude UCGABAR --kernel alpha "$data"
grep -q '^80 samples over 3 instructions$' "$tmp/out" || fail "--exclude"
grep -q '^opcodes: BRA 50.0% HADD2 37.5% LDSM 12.5%$' "$tmp/out" || fail "opcodes excluded"
grep -q 'k_beta' "$tmp/out" && fail "--kernel kept k_beta"

expect_exit 0 python3 "$sass" --top 1 "$data"
[ "$(grep -c "^  " "$tmp/out")" = 4 ] || fail "--top 1: a row a list"

expect_exit 2 python3 "$sass" --kernel gamma "$data"
grep -q 'no kernel matches gamma' "$tmp/err" || fail "no match message"
expect_exit 2 python3 "$sass" "$tmp/missing.csv"
grep -q 'missing.csv' "$tmp/err" || fail "missing file message"
printf '"Address","Source"\n"0x1","NOP"\n' > "$tmp/bare.csv"
expect_exit 2 python3 "$sass" "$tmp/bare.csv"
grep -q 'Kernel Name' "$tmp/err" || fail "bare csv message"
printf '"Kernel Name","k"\n"Address","Source"\n"0x1","NOP"\n' > "$tmp/nosamples.csv"
expect_exit 2 python3 "$sass" "$tmp/nosamples.csv"
grep -q 'no SASS header with warp samples' "$tmp/err" || fail "no samples message"
expect_exit 2 python3 "$sass" --top 0 "$data"
expect_exit 2 python3 "$sass" --kernel '(' "$data"
exit 0
