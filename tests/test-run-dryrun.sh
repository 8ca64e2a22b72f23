#!/bin/sh
# test-run-dryrun.sh - `fuseprof run --dry-run` refuses, without a GPU,
# what a real run would refuse before touching one (an unknown counter
# group or file, a database it could not write), writes nothing, and
# prints its op list (stdout) and the op count and an estimated time
# (stderr); an unknown --variant lists the selected workloads' variants,
# each once; a variant with a suite of its own runs at its shapes only;
# the forward ops that run with their backward (`list workloads` names it)
# are counted.
. "${srcdir:-.}/tests/setup"

if ! "$FUSEPROF" run --dry-run --db "$tmp/new.db" >"$tmp/all" 2>"$tmp/all.err"; then
	echo "SKIP: no op list in this build: $(cat "$tmp/all.err")" >&2
	exit 77
fi
[ ! -e "$tmp/new.db" ] || fail "a dry run created its database"

# Item: the forward ops whose backward runs at the same variant, dtype and
# shape, counted from the op list and `list workloads`' backward column.
"$FUSEPROF" list workloads --format md | tail -n +3 |
	awk -F' [|] ' '$6 != "" { print $1, $6 }' | sed 's/^| //' >"$tmp/bwd"
want=0
while read -r fw bw; do
	n=$(grep "^$fw/" "$tmp/all" | sed "s|^$fw/|$bw/|" | grep -cFxf - "$tmp/all" || true)
	want=$((want + n))
done <"$tmp/bwd"
got=$(sed -n 's/^fuseprof: dry run: \([0-9]*\) forward ops* with.*/\1/p' "$tmp/all.err")
if [ "$want" -gt 0 ]; then
	[ "$got" = "$want" ] || fail "dry run counts '$got' forward ops with their backward, the list $want: $(cat "$tmp/all.err")"
else
	[ -z "$got" ] || fail "dry run counts $got pairs where the list has none"
fi

# Item: an unknown variant lists the known ones once each, and only the
# selected workloads' ones.
expect_exit 2 "$FUSEPROF" run --dry-run --variant no_such_variant
one_line_error no_such_variant
known=$(sed -n "s/.*no_such_variant' ([^:]*: \(.*\))$/\1/p" "$tmp/err" | tr -d ' ' | tr ',' '\n')
[ -n "$known" ] || fail "no list of variants: $(cat "$tmp/err")"
dups=$(printf '%s\n' "$known" | sort | uniq -d)
[ -z "$dups" ] || fail "variants listed twice ($dups): $(cat "$tmp/err")"
want=$(cut -d/ -f2 "$tmp/all" | sort -u)
[ "$(printf '%s\n' "$known" | sort)" = "$want" ] ||
	fail "known variants '$known', the suite has '$want'"
wl=$(head -n 1 "$tmp/all" | cut -d/ -f1)
"$FUSEPROF" run --dry-run --workload "$wl" >"$tmp/wl" 2>/dev/null
expect_exit 2 "$FUSEPROF" run --dry-run --workload "$wl" --variant no_such_variant
one_line_error no_such_variant "$wl"
known=$(sed -n "s/.*no_such_variant' ([^:]*: \(.*\))$/\1/p" "$tmp/err" | tr -d ' ' | tr ',' '\n' | sort)
[ "$known" = "$(cut -d/ -f2 "$tmp/wl" | sort -u)" ] ||
	fail "variants of $wl: got '$known': $(cat "$tmp/err")"
# A variant only another workload has is not one of $wl's.
other=$(cut -d/ -f2 "$tmp/all" | sort -u | grep -vxF "$(cut -d/ -f2 "$tmp/wl" | sort -u)" | head -n 1 || true)
if [ -n "$other" ]; then
	expect_exit 2 "$FUSEPROF" run --dry-run --workload "$wl" --variant "$other"
	one_line_error "'$other'" "$wl"
fi

# Item: what a real run checks before the GPU, the dry run checks too,
# with the same exit status (1) and one line.
expect_exit 1 "$FUSEPROF" run --dry-run --db "$tmp/new.db" --metrics /nonexistent/group.txt
one_line_error /nonexistent/group.txt
expect_exit 1 "$FUSEPROF" run --dry-run --db "$tmp/new.db" --metrics no_such_group
one_line_error no_such_group roofline
[ ! -s "$tmp/out" ] || fail "a refused dry run printed ops"
# The database: a missing folder, a file that is no database, a folder.
expect_exit 1 "$FUSEPROF" run --dry-run --db "$tmp/no/such/dir/x.db"
one_line_error "$tmp/no/such/dir"
echo "not a database" >"$tmp/text.db"
expect_exit 1 "$FUSEPROF" run --dry-run --db "$tmp/text.db"
one_line_error "$tmp/text.db"
expect_exit 1 "$FUSEPROF" run --dry-run --db "$tmp"
one_line_error "$tmp"
if [ "$(id -u)" != 0 ]; then
	mkdir "$tmp/ro"
	chmod a-w "$tmp/ro"
	expect_exit 1 "$FUSEPROF" run --dry-run --db "$tmp/ro/x.db"
	one_line_error "$tmp/ro"
	chmod u+w "$tmp/ro"
fi
# A fuseprof database is taken, and left byte for byte as it was.
cp "$top_srcdir/examples/h100-sample.db" "$tmp/s.db"
cp "$tmp/s.db" "$tmp/s.copy"
expect_exit 0 "$FUSEPROF" run --dry-run --quick --db "$tmp/s.db"
cmp -s "$tmp/s.db" "$tmp/s.copy" || fail "a dry run changed the database"
[ ! -e "$tmp/s.db-wal" ] && [ ! -e "$tmp/s.db-shm" ] ||
	fail "a dry run left -wal/-shm files beside the database it only read"
[ ! -e "$tmp/new.db" ] || fail "a refused dry run created its database"

# Item: the op count and the estimate, on stderr; stdout stays the op list.
n=$(wc -l <"$tmp/all")
grep -q "^fuseprof: dry run: $n ops, estimated time [0-9]" "$tmp/all.err" ||
	fail "no op count ($n) and estimate: $(cat "$tmp/all.err")"
grep -q "GiB of GPU memory" "$tmp/all.err" || fail "no memory need: $(cat "$tmp/all.err")"

# Item: a variant with a default suite of its own (every naive one: the
# smallest shape) runs at its shapes only, where the workload's fused
# variant runs too; `list workloads` names them; --quick and --shape are
# the same for every variant.
"$FUSEPROF" list workloads --format md | tail -n +3 |
	awk -F' [|] ' '$5 != "" { print $1, $5 }' | sed 's/^| //' >"$tmp/own"
for wv in $(grep '/naive/' "$tmp/all" | cut -d/ -f1-2 | sort -u); do
	grep -q "^${wv%/*} ${wv#*/}: " "$tmp/own" ||
		fail "list workloads names no suite of its own for $wv: $(cat "$tmp/own")"
done
[ -s "$tmp/own" ] || fail "no variant has a suite of its own"
while read -r wl v spec; do
	v=${v%:}
	printf '%s\n' "$spec" | tr ';' '\n' | sort >"$tmp/want"
	grep "^$wl/$v/" "$tmp/all" | cut -d/ -f4 | sort -u >"$tmp/got"
	cmp -s "$tmp/want" "$tmp/got" ||
		fail "$wl/$v runs at $(cat "$tmp/got"), its suite is '$spec'"
	while read -r sh; do
		grep -q "^$wl/fused/.*/$sh\$" "$tmp/all" || fail "$wl/fused does not run at $sh"
	done <"$tmp/want"
	[ "$(grep "^$wl/" "$tmp/all" | cut -d/ -f4 | sort -u | wc -l)" -gt \
	  "$(wc -l <"$tmp/want")" ] || fail "$wl has no shape $wl/$v skips"
	"$FUSEPROF" run --dry-run --quick --workload "$wl" >"$tmp/q" 2>/dev/null
	[ "$(grep -c "^$wl/$v/" "$tmp/q")" = "$(grep -c "^$wl/fused/" "$tmp/q")" ] ||
		fail "--quick: $wl/$v does not run at every quick shape: $(cat "$tmp/q")"
	big=$(grep "^$wl/fused/" "$tmp/all" | tail -n 1 | cut -d/ -f4)
	"$FUSEPROF" run --dry-run --workload "$wl" --shape "$big" >"$tmp/s" 2>/dev/null
	grep -q "^$wl/$v/.*/$big\$" "$tmp/s" || fail "--shape $big: no $wl/$v: $(cat "$tmp/s")"
done <"$tmp/own"

# The estimate follows the protocol: more repetitions, more checks or
# counters cost more; the quick suite less than the suite.
secs() {
	"$FUSEPROF" run --dry-run --db "$tmp/new.db" "$@" 2>&1 >/dev/null |
		sed -n 's/.*estimated time \([^(]*\) (.*/\1/p' |
		awk '{ t = 0; for (i = 1; i < NF; i += 2) t += $i * ($(i+1) == "h" ? 3600 : $(i+1) == "min" ? 60 : 1); print t }'
}
full=$(secs)
quick=$(secs --quick)
[ -n "$full" ] && [ -n "$quick" ] || fail "cannot read the estimate"
[ "$quick" -lt "$full" ] || fail "quick suite ${quick}s not under the suite ${full}s"
[ "$(secs --quick --reps 2000)" -gt "$quick" ] || fail "--reps 2000 costs no more"
[ "$(secs --quick --no-counters)" -lt "$quick" ] || fail "--no-counters costs no less"
[ "$(secs --quick --check-all)" -gt "$quick" ] || fail "--check-all costs no more"
exit 0
