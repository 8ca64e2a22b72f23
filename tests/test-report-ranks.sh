#!/bin/sh
# test-report-ranks.sh - stragglers end to end: a profiled run of four
# ranks on two hosts (ranks 0 and 2 share a pid, on different hosts) with
# fresh random sample times per rank and range, as a merge of their files
# leaves it; v_rank_spread (`query stragglers`), ranks.csv, the report's
# section and report.json's array against the numbers this script computes
# from the times it wrote: each rank's median, their least, median and
# most, the spread, the slowest rank and its host; the exported trace, a
# process each; compare of two runs of ranks range by range. A run of one
# rank gets no section and no ranks.csv.
. "${srcdir:-.}/tests/setup"

MKRUNS=${MKRUNS:-${top_builddir:-..}/tests/mkruns}
db=$tmp/r.db
seed=${FUSEPROF_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "seed $seed (FUSEPROF_SEED reproduces it)" >&2

# rank host pid, then per range 2 to 5 samples of 100 to 10,000 ns.
awk -v seed="$seed" 'BEGIN {
	srand(seed)
	split("0 nodeA 300|1 nodeA 301|2 nodeB 300|3 nodeB 302", procs, "|")
	split("train/step train/step/fwd train/step/bwd", ranges, " ")
	for (p = 1; p <= 4; p++)
		for (r = 1; r <= 3; r++) {
			n = 2 + int(rand() * 4)
			line = "rank " procs[p] " " ranges[r]
			for (i = 0; i < n; i++)
				line = line " " (100 + int(rand() * 9900))
			print line
		}
}' >"$tmp/samples"
{
	echo "kind profile"
	echo "device NVIDIA-H100"
	echo "run ddp"
	cat "$tmp/samples"
	echo "run solo"
	echo "rank 0 nodeA 400 train/step 500 600"
	# The same ranks, every time twenty times as long.
	echo "run slow"
	awk '{ for (i = 6; i <= NF; i++) $i = 20 * $i; print }' "$tmp/samples"
} >"$tmp/spec"
"$MKRUNS" "$db" <"$tmp/spec" >/dev/null 2>&1 || fail "mkruns failed"

# The expected rows: workload ranks min median max spread slowest host.
awk '
function median(v, n,   i, j, t) {
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
			t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
		}
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
{
	key = $5 SUBSEP $2
	host[$2] = $3
	for (i = 6; i <= NF; i++)
		t[key, ++cnt[key]] = $i
	if (!((($5) SUBSEP "seen" SUBSEP $2) in ranks)) {
		ranks[$5, "seen", $2] = 1
		nr[$5]++
		rk[$5, nr[$5]] = $2
	}
}
END {
	for (w in nr) {
		lo = ""; hi = ""; slow = ""
		for (i = 1; i <= nr[w]; i++) {
			r = rk[w, i]
			n = cnt[w SUBSEP r]
			delete v
			for (j = 1; j <= n; j++)
				v[j] = t[w SUBSEP r, j]
			m[i] = median(v, n)
			if (lo == "" || m[i] < lo)
				lo = m[i]
			if (hi == "" || m[i] > hi || (m[i] == hi && r < slow)) {
				hi = m[i]; slow = r
			}
		}
		delete v
		for (i = 1; i <= nr[w]; i++)
			v[i] = m[i]
		printf "%s %d %.6f %.6f %.6f %.9f %d %s\n", w, nr[w], lo, median(v, nr[w]),
			hi, hi / lo, slow, host[slow]
	}
}' "$tmp/samples" | sort >"$tmp/want"
[ "$(wc -l <"$tmp/want")" = 3 ] || fail "expected 3 ranges: $(cat "$tmp/want")"

# Rows as "workload ranks min median max spread slowest host", numbers
# normalised, from a CSV with those columns in that order.
normal() {
	tail -n +2 "$1" | tr -d '\r' | awk -F, '{ printf "%s %d %.6f %.6f %.6f %.9f %d %s\n",
		$1, $2, $3, $4, $5, $6, $7, $8 }' | sort
}
same() {
	awk 'NR == FNR { want[FNR] = $0; next }
	{
		split(want[FNR], w, " ")
		for (i = 1; i <= 8; i++) {
			split($0, g, " ")
			if (i >= 3 && i <= 6) {
				d = g[i] - w[i]; if (d < 0) d = -d
				if (d > 1e-6 * (w[i] > 1 ? w[i] : 1)) exit 1
			} else if (g[i] != w[i]) exit 1
		}
	}
	END { if (FNR != NR - FNR) exit 1 }' "$tmp/want" "$1"
}

expect_exit 0 "$FUSEPROF" query --db "$db" --format csv "SELECT workload, ranks,
	time_ns_min, time_ns_median, time_ns_max, spread, slowest_rank, slowest_host
	FROM v_rank_spread WHERE run_id = 1"
normal "$tmp/out" >"$tmp/got"
same "$tmp/got" || fail "v_rank_spread: got $(cat "$tmp/got"), want $(cat "$tmp/want")"
expect_exit 0 "$FUSEPROF" query --db "$db" --format csv stragglers
head -n 1 "$tmp/out" | grep -q 'slowest_rank' || fail "query stragglers: $(head -n 1 "$tmp/out")"

# The report: ranks.csv, the section, the JSON array, the line on stdout.
expect_exit 0 "$FUSEPROF" report --db "$db" -r ddp --out "$tmp/rep" --no-plots
csv=$tmp/rep/ranks.csv
[ -s "$csv" ] || fail "no ranks.csv"
head -n 1 "$csv" | tr -d '\r' >"$tmp/h"
[ "$(cat "$tmp/h")" = "workload,op_id,ranks,samples,time_ns_min,time_ns_median,time_ns_max,spread,slowest_rank,slowest_host,fastest_rank" ] ||
	fail "ranks.csv header: $(cat "$tmp/h")"
tr -d '\r' <"$csv" | awk -F, 'NR > 1 { print $1 "," $3 "," $5 "," $6 "," $7 "," $8 "," $9 "," $10 }' |
	{ echo header; cat; } >"$tmp/rcsv"
normal "$tmp/rcsv" >"$tmp/got"
same "$tmp/got" || fail "ranks.csv: got $(cat "$tmp/got"), want $(cat "$tmp/want")"
# Largest spread first.
tr -d '\r' <"$csv" | awk -F, 'NR > 2 && $8 > prev + 1e-12 { exit 1 } NR > 1 { prev = $8 }' ||
	fail "ranks.csv not by spread, largest first: $(cat "$csv")"
grep -q '^## Ranks (stragglers)' "$tmp/rep/report.md" || fail "report.md: no ranks section"
top=$(sort -k6 -g -r "$tmp/want" | head -n 1)
set -- $top
grep -F "| $1 | 4 |" "$tmp/rep/report.md" | grep -qF "| $7 | $8 |" ||
	fail "report.md does not name rank $7 on $8 as $1's straggler"
grep -q 'Ranks (stragglers)' "$tmp/rep/report.html" || fail "report.html: no ranks section"
grep -q '"ranks": \[' "$tmp/rep/report.json" || fail "report.json: no ranks array"
grep -q "slowest rank $7 ($8)" "$tmp/out" || fail "report's summary names no straggler: $(cat "$tmp/out")"

# The trace: a process each, those of one pid on two hosts apart.
expect_exit 0 "$FUSEPROF" export --db "$db" --format perfetto ddp
"${top_builddir:-..}/tests/jsoncheck" <"$tmp/out" >/dev/null || fail "jsoncheck refused the trace"
[ "$(grep -o '"process_name"' "$tmp/out" | wc -l)" = 4 ] ||
	fail "trace: not a process each: $(grep -o '"name": "[^"]*(pid[^"]*"' "$tmp/out")"
grep -q 'pid 300, rank 2, host nodeB' "$tmp/out" || fail "trace: rank 2's process unnamed"

# compare of two runs of several ranks: every range by its path, over
# the samples of every rank, twenty times slower.
expect_exit 1 "$FUSEPROF" compare --db "$db" --format csv ddp slow
tr -d '\r' <"$tmp/out" | awk -F, 'NR > 1 { print $1, $2 }' | sort >"$tmp/got"
printf 'SLOWER train/step\nSLOWER train/step/bwd\nSLOWER train/step/fwd\n' >"$tmp/want"
cmp -s "$tmp/got" "$tmp/want" || fail "compare ddp slow: $(cat "$tmp/out")"

# One rank: nothing of it, and the earlier report's ranks.csv is gone.
expect_exit 0 "$FUSEPROF" report --db "$db" -r solo --out "$tmp/rep" --no-plots
[ ! -e "$csv" ] || fail "ranks.csv of a run of one rank"
! grep -q 'Ranks (stragglers)' "$tmp/rep/report.md" || fail "ranks section for one rank"
exit 0
