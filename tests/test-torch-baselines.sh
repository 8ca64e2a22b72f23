#!/bin/sh
# test-torch-baselines.sh - bench/torch-baselines.py compiles, and
# without PyTorch skips with one line on stderr and exit 77
# (so it can run where CI has no torch). Where torch is installed the script
# would time on the GPU: this test then skips (run the script by hand).
. "$srcdir/tests/setup"

script=$top_srcdir/bench/torch-baselines.py
command -v python3 >/dev/null 2>&1 || { echo "no python3" >&2; exit 77; }
PYTHONPYCACHEPREFIX=$tmp/pycache python3 -m py_compile "$script" ||
	fail "bench/torch-baselines.py does not compile"
if python3 -c 'import torch' >/dev/null 2>&1; then
	echo "torch is installed: the script would time on the GPU" >&2
	exit 77
fi
expect_exit 77 python3 "$script" --only attn_res_ln_fwd
[ "$(wc -l < "$tmp/err")" -eq 1 ] || fail "more than one line on stderr: $(cat "$tmp/err")"
grep -q '^torch-baselines: skipped: .*torch' "$tmp/err" ||
	fail "the skip does not say why: $(cat "$tmp/err")"
[ ! -s "$tmp/out" ] || fail "output without torch: $(cat "$tmp/out")"
