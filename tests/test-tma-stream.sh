#!/bin/sh
# test-tma-stream.sh - bench/tma-stream's arguments, which it reads before
# it touches a GPU: --help teaches the loads, and every bad argument is
# one line naming it and exit 2. (Its measurements need a Hopper GPU;
# bench/RESULTS.md has them.)
. "${srcdir:-.}/tests/setup"
ts=${top_builddir:-..}/bench/tma-stream
[ -x "$ts" ] || ts=bench/tma-stream
[ -x "$ts" ] || fail "no bench/tma-stream built"

expect_exit 0 "$ts" --help
grep -q '^usage: bench/tma-stream ' "$tmp/out" || fail "--help has no usage line"
grep -q 'box:COLSxROWSxCOUNT:STAGES' "$tmp/out" || fail "--help does not name box loads"
grep -q 'bulk:BYTES:STAGES:BLOCKS' "$tmp/out" || fail "--help does not name bulk loads"

bad() {
	expect_exit 2 "$ts" "$@"
	[ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "$*: not one line: $(cat "$tmp/err")"
	grep -q "^tma-stream: .*'$name'" "$tmp/err" || fail "$*: does not name '$name': $(cat "$tmp/err")"
}
name=box:64x64; bad box:64x64
name=box:64x64x1:99; bad box:64x64x1:99
name=box:64x300x1:4; bad box:64x300x1:4
name=box:64x4x1:4; bad box:64x4x1:4
name=box:8x4x1:4; bad box:8x4x1:4
name=box:64x64x1:30; bad box:64x64x1:30
name=bulk:100:4:80; bad bulk:100:4:80
name=bulk:16384:12; bad bulk:16384:12
name=ring:8:8; bad ring:8:8
name=-x; bad -x
name=1001; bad -k 1001
name=0; bad -n 0
name=abc; bad -r abc
name=-k; bad -k
echo "PASS: tma-stream arguments"
