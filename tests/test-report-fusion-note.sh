#!/bin/sh
# test-report-fusion-note.sh - "fusion cannot pay here" end to end: a run
# (written by tests/mkruns: chosen times, byte models, launches, a DRAM
# roof of 3 TB/s) with a fused variant slower than its unfused twin where
# the bytes and launch fusion removes bound the gain under 5 % (case a),
# one where they bound it above (case b: a missing kernel), one with no
# byte model (the bound unknown) and a fused variant that wins (no note);
# the note sits on the fastest unfused twin's row only, in v_fusion (so
# `fuseprof query` shows it), fusion.csv, report.md and report.html.
. "${srcdir:-.}/tests/setup"

MKRUNS=${MKRUNS:-${top_builddir:-..}/tests/mkruns}
db=$tmp/f.db
# softmax at 4 x 8, its fused variant winning (no note): in every run below
softmax_wins='model 1e6 2e6
op softmax fused fp32 M=4,N=8 ok 1 - - 100000 0 3
model 1e6 4e6
op softmax unfused fp32 M=4,N=8 ok 2 - - 150000 0 3'

# (a) 4096 x 8192 -> 28672: the unfused variant's model moves 134.2 MB more
#     (h written and read): 44.7 us at 3 TB/s, plus 2 us for its second
#     launch, 1.6 % of its 2916.8 us;
# (b) 16384 x 1024 -> 4096: 67.1 MB more: 22.4 + 2 us, 11.5 % of 212.2 us,
#     where the fused kernel loses 17.7 %; a slower second unfused variant
#     (lt) and a naive one get no note;
# (c) 64 x 2048 -> 5120: a fused variant of two launches (a pass and a
#     GEMM) moving its twin's bytes saves neither, but a single fused kernel
#     would save the twin's second launch: 2 us, 23.8 % of 8.4 us, a missing
#     kernel, not "cannot pay";
# ln_gelu: no byte model; softmax: the fused variant wins.
"$MKRUNS" "$db" >/dev/null 2>&1 <<SPEC
device NVIDIA-H100
run notes
ceiling dram_bw B/s 3e12
model 1e12 600e6
op ln_linear_fwd fused bf16 M=4096,K=8192,N=28672 ok 1 - - 2931500 0 3
model 1e12 734.2e6
op ln_linear_fwd unfused bf16 M=4096,K=8192,N=28672 ok 2 - - 2916800 0 3
model 1e11 200e6
op ln_linear_fwd fused bf16 M=16384,K=1024,N=4096 ok 1 - - 249800 0 3
model 1e11 267.1e6
op ln_linear_fwd unfused bf16 M=16384,K=1024,N=4096 ok 2 - - 212200 0 3
op ln_linear_fwd lt bf16 M=16384,K=1024,N=4096 ok 2 - - 230000 0 3
op ln_linear_fwd naive bf16 M=16384,K=1024,N=4096 ok 1 - - 900000 0 3
model 1e9 22e6
op ln_linear_fwd fused bf16 M=64,K=2048,N=5120 ok 2 - - 9000 0 3
op ln_linear_fwd unfused bf16 M=64,K=2048,N=5120 ok 2 - - 8400 0 3
model -
op ln_gelu fused fp32 M=64,N=768 ok 1 - - 12000 0 3
op ln_gelu unfused fp32 M=64,N=768 ok 2 - - 10000 0 3
$softmax_wins
SPEC

# The view: four notes, each on the fastest unfused twin, worded by case.
expect_exit 0 "$FUSEPROF" query --db "$db" --format csv \
	"SELECT shape, base_variant, best_unfused, fusion_note FROM v_fusion
	 WHERE fusion_note IS NOT NULL ORDER BY workload, shape"
tr -d '\r' <"$tmp/out" >"$tmp/got"
cat >"$tmp/want" <<'EOF2'
shape,base_variant,best_unfused,fusion_note
"M=64,N=768",unfused,1,fused kernel 1.20x unfused; no byte model or DRAM roof to bound what fusion could save
"M=16384,K=1024,N=4096",unfused,1,fused kernel 1.18x unfused where fusion could save up to 11.5 %: a missing kernel
"M=4096,K=8192,N=28672",unfused,1,"fusion cannot pay here: it removes at most 134.2 MB and 1 launch (46.7 µs, 1.6 % of 2917 µs)"
"M=64,K=2048,N=5120",unfused,1,fused kernel 1.07x unfused where fusion could save up to 23.8 %: a missing kernel
EOF2
diff "$tmp/want" "$tmp/got" >&2 || fail "v_fusion's notes differ (above)"

# The bound on every row of an unfused base, none on a naive one.
expect_exit 0 "$FUSEPROF" query --db "$db" --format csv \
	"SELECT base_variant, best_unfused, fusion_removed_bytes, fusion_removed_launches,
	 round(fusion_bound_ns), round(fusion_bound_pct, 3), fusion_note IS NULL
	 FROM v_fusion WHERE shape = 'M=16384,K=1024,N=4096' ORDER BY base_variant"
tr -d '\r' <"$tmp/out" | tail -n +2 >"$tmp/got"
cat >"$tmp/want" <<'EOF2'
lt,0,67100000,1,24367,10.594,1
naive,0,,,,,1
unfused,1,67100000,1,24367,11.483,0
EOF2
diff "$tmp/want" "$tmp/got" >&2 || fail "v_fusion's bounds differ (above)"

# The report: the note column in fusion.csv and both documents, the rule
# under the table.
out=$tmp/r
expect_exit 0 "$FUSEPROF" report --db "$db" --run notes --out "$out" --no-plots \
	--format md,html,csv
head -n 1 "$out/fusion.csv" | tr -d '\r' | grep -q ',best_unfused,fusion_removed_bytes,fusion_removed_launches,fusion_bound_ns,fusion_bound_pct,shared_kernels,shared_delta_ns,own_ratio,fusion_note$' ||
	fail "fusion.csv header: $(head -n 1 "$out/fusion.csv")"
[ "$(grep -c 'fusion cannot pay here: it removes at most 134.2 MB' "$out/fusion.csv")" = 1 ] ||
	fail "fusion.csv: the case (a) note is not on one row"
for f in report.md report.html; do
	grep -q 'fusion cannot pay here: it removes at most 134.2 MB and 1 launch (46.7 µs, 1.6 % of 2917 µs)' "$out/$f" ||
		fail "$f: no case (a) note"
	grep -q 'fused kernel 1.18x unfused where fusion could save up to 11.5 %: a missing kernel' "$out/$f" ||
		fail "$f: no case (b) note"
	grep -q 'A note marks each fused variant slower than its fastest unfused twin' "$out/$f" ||
		fail "$f: the rule is not explained under the table"
done
# softmax's fused variant wins: its row has no note.
grep '| softmax |' "$out/report.md" | grep -q 'fused kernel\|cannot pay' &&
	fail "report.md: a note on a fused variant that wins"

# Kernels both ops run: a backward whose two variants run the same GEMM
# (one kernel here, 79 % of the fused op, 78 % of the unfused one), which
# took 127.6 µs longer in the fused op, and kernels of their own (the
# fused 714 µs, the unfused 721.6): the fused op loses 3.7 % where fusion
# could save 2.1 %, and its note says the shared kernel took longer and
# the rest is 0.99x. Beside it a fused variant whose only kernel is
# shared (a missing kernel: no rest to compare, no clause) and softmax,
# whose variants both run test_kernel and whose fused one wins (no note).
"$MKRUNS" "$db" >/dev/null 2>&1 <<SPEC
device NVIDIA-H100
run shared
ceiling dram_bw B/s 3e12
model 1e12 10e9
kernels nvjet_gemm 0.79 ln_bwd_recompute
op ln_linear_bwd fused bf16 M=16384,K=14336,N=2048 ok 4 - - 3400000 0 3
model 1e12 10.2e9
kernels nvjet_gemm 0.78 ln_fwd_then_bwd
op ln_linear_bwd unfused bf16 M=16384,K=14336,N=2048 ok 2 - - 3280000 0 3
kernels nvjet_gemm 1
model 1e12 10e9
op ln_linear_bwd fused bf16 M=8192,K=2048,N=8192 ok 1 - - 800000 0 3
model 1e12 10.2e9
op ln_linear_bwd unfused bf16 M=8192,K=2048,N=8192 ok 1 - - 780000 0 3
kernels -
$softmax_wins
SPEC
expect_exit 0 "$FUSEPROF" query --db "$db" --format csv \
	"SELECT v.shape, shared_kernels, round(shared_delta_ns), round(own_ratio, 4), fusion_note
	 FROM v_fusion v JOIN runs r ON r.id = v.run_id WHERE r.tag = 'shared'
	 ORDER BY v.workload, v.shape"
tr -d '\r' <"$tmp/out" | tail -n +2 >"$tmp/got"
cat >"$tmp/want" <<'EOF2'
"M=16384,K=14336,N=2048",1,127600,0.9895,"fusion cannot pay here: it removes at most 200.0 MB and 1 launch (68.7 µs, 2.1 % of 3280 µs); the 1 kernel both ops run took 127.6 µs longer in the fused op (the same kernels: clocks, caches), the rest 0.99x unfused"
"M=8192,K=2048,N=8192",1,20000,,fused kernel 1.03x unfused where fusion could save up to 8.5 %: a missing kernel
"M=4,N=8",1,-200000,,
EOF2
diff "$tmp/want" "$tmp/got" >&2 || fail "v_fusion's shared kernels differ (above)"
expect_exit 0 "$FUSEPROF" report --db "$db" --run shared --out "$tmp/s" --no-plots --format md,csv
grep -q 'the 1 kernel both ops run took 127.6 µs longer in the fused op' "$tmp/s/report.md" ||
	fail "report.md: no shared-kernel clause"
grep -q 'not fusion.s doing' "$tmp/s/report.md" || fail "report.md: the clause is not explained"

# A run where every fused variant wins has no notes and no explanation.
"$MKRUNS" "$db" >/dev/null 2>&1 <<SPEC
device NVIDIA-H100
run wins
ceiling dram_bw B/s 3e12
$softmax_wins
SPEC
expect_exit 0 "$FUSEPROF" report --db "$db" --run wins --out "$tmp/w" --no-plots --format md
! grep -q 'A note marks' "$tmp/w/report.md" || fail "a run without notes explains them"
exit 0
