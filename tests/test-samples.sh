# test-samples.sh - the shipped sample databases (examples/*.db) hold no
# impossible numbers: every op of a counted run that passed its check
# moves at least 0.99x its model's minimum DRAM bytes (write-backs of
# dirty L2 lines counted) and stays at or under 100% of each of its roofs
# (the DRAM roof of its read/write mix or its compute peak, and the L2
# roof), as v_roofline computes them. Each offender is named with its
# numbers.
. "$srcdir/tests/setup"

found=0
for db in "$srcdir"/examples/*.db; do
	[ -e "$db" ] || continue
	found=$((found + 1))
	name=$(basename "$db")
	# A profiled program's database has no model to judge against, and a
	# run timed without counters (run --no-counters) no bytes.
	expect_exit 0 "$FUSEPROF" query --db "$db" --format csv \
		"SELECT count(*) FROM runs WHERE kind != 'profile'
		 AND command_line NOT LIKE '% --no-counters%'"
	if [ "$(tail -n 1 "$tmp/out" | tr -d '\r')" = 0 ]; then
		echo "$name: profiled or timing-only runs (nothing to judge)" >&2
		continue
	fi
	# Something to judge: ok ops with DRAM bytes, a model and a roof.
	expect_exit 0 "$FUSEPROF" query --db "$db" --format csv \
		"SELECT count(*) FROM v_roofline WHERE status = 'ok'
		 AND traffic_eff IS NOT NULL AND roof_pct IS NOT NULL
		 AND roof_l2_pct IS NOT NULL"
	n=$(tail -n 1 "$tmp/out" | tr -d '\r')
	[ "$n" -gt 0 ] 2>/dev/null || fail "$name: no op with bytes, a model and roofs to check"
	expect_exit 0 "$FUSEPROF" query --db "$db" --format csv \
		"SELECT workload || '/' || variant || '/' || dtype || '/' || shape
		  || ': ' || trim(
		  CASE WHEN traffic_eff < 0.99 THEN printf('DRAM bytes %.3fx the model''s minimum; ', traffic_eff) ELSE '' END
		  || CASE WHEN roof_pct > 100 THEN printf('%.1f%% of its %s roof (DRAM %s); ', roof_pct, bound, dram_bw_basis) ELSE '' END
		  || CASE WHEN roof_l2_pct > 100 THEN printf('%.1f%% of its L2 roof; ', roof_l2_pct) ELSE '' END, '; ')
		  AS offender FROM v_roofline WHERE status = 'ok'
		 AND (traffic_eff < 0.99 OR roof_pct > 100 OR roof_l2_pct > 100)
		 ORDER BY op_id"
	tr -d '\r' <"$tmp/out" | tail -n +2 >"$tmp/bad"
	if [ -s "$tmp/bad" ]; then
		echo "$name: $(wc -l <"$tmp/bad") of $n ops have impossible numbers:" >&2
		sed 's/^"//; s/"$//; s/^/  /' "$tmp/bad" >&2
		bad=1
	else
		echo "$name: $n ops, none below its minimum bytes or above a roof" >&2
	fi
done
[ "$found" -gt 0 ] || fail "no examples/*.db in $srcdir"
[ -z "${bad:-}" ] || fail "sample databases with impossible numbers (above)"
