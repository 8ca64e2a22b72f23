#!/bin/sh
# test-man.sh - the manual page fuseprof.1: groff and man render it without
# a warning, no rendered line runs words together (a macro that alternates
# fonts over a whole sentence drops its spaces: "Thedatabaseisopened"),
# each command's synopsis there names the long options its --help lists
# and no others, and v_runs, v_ops and v_distrust list their views'
# columns. Skips (77) without groff.
. "${srcdir:-.}/tests/setup"

page=$top_srcdir/fuseprof.1
command -v groff >/dev/null 2>&1 || {
	echo "SKIP: groff not found (tools/deps.sh installs it)" >&2
	exit 77
}

# Warnings, every kind (-ww), from groff itself.
groff -man -Tutf8 -ww -z "$page" 2>"$tmp/groff.err" || fail "groff failed: $(cat "$tmp/groff.err")"
[ ! -s "$tmp/groff.err" ] || fail "groff warns: $(cat "$tmp/groff.err")"

# Run-together words: a run of 18 letters or more (no word of the page is
# that long), a sentence glued to the next one, a ';' glued to a word.
# Lines as long as a paragraph, so that no hyphenation breaks a word.
runtogether() {
	if grep -nE '[A-Za-z]{18,}|[a-z)]\.[A-Z][a-z]|;[A-Za-z]' "$1" >"$tmp/rt"; then
		fail "$2: words run together: $(cut -c1-200 "$tmp/rt")"
	fi
}
groff -man -Tascii -P-cbou -rLL=2000n -ww "$page" >"$tmp/page.txt" 2>"$tmp/groff.err"
[ ! -s "$tmp/groff.err" ] || fail "groff warns: $(cat "$tmp/groff.err")"
runtogether "$tmp/page.txt" "groff"
# man-db's man (--warnings passes -ww to groff); another man, or none,
# leaves the check to groff.
printf '.TH PROBE 1\n.SH NAME\nprobe \\- a page\n' >"$tmp/probe.1"
if command -v man >/dev/null 2>&1 && man --warnings -l "$tmp/probe.1" >/dev/null 2>&1; then
	MANWIDTH=2000 man --warnings -l "$page" >"$tmp/man.txt" 2>"$tmp/man.err" ||
		fail "man -l failed: $(cat "$tmp/man.err")"
	[ ! -s "$tmp/man.err" ] || fail "man -l warns: $(cat "$tmp/man.err")"
	[ -s "$tmp/man.txt" ] || fail "man -l rendered nothing"
	# No overstriking, whatever the locale: letters only.
	sed 's/.\x08//g' "$tmp/man.txt" >"$tmp/man.plain"
	runtogether "$tmp/man.plain" "man -l"
else
	echo "note: no man-db 'man -l' here: checked with groff alone" >&2
fi

# Each command's synopsis (from '.SS command' to its first paragraph)
# names the long options of its --help, and nothing more; --help itself is
# in OPTIONS.
synopsis() {
	awk -v c="$1" '$0 == ".SS " c { on = 1; next } on && /^\.(PP|SS|SH)/ { exit } on' "$page" |
		sed 's/\\-/-/g' | grep -oE -- '--[a-z][a-z-]*' | sort -u
}
for c in run ceilings profile list query report compare export merge; do
	"$FUSEPROF" "$c" --help >"$tmp/help" 2>"$tmp/err" || fail "$c --help: $(cat "$tmp/err")"
	grep -oE -- '^  (-[A-Za-z0-9], |    )--[a-z][a-z-]*' "$tmp/help" |
		grep -oE -- '--[a-z-]+' | grep -vx -- '--help' | sort -u >"$tmp/h.opts"
	synopsis "$c" >"$tmp/m.opts"
	[ -s "$tmp/h.opts" ] || fail "$c --help lists no options"
	if ! cmp -s "$tmp/h.opts" "$tmp/m.opts"; then
		fail "$c: options in --help but not in the man page's synopsis: $(comm -23 "$tmp/h.opts" "$tmp/m.opts" | tr '\n' ' ')" \
			"; in the man page but not in --help: $(comm -13 "$tmp/h.opts" "$tmp/m.opts" | tr '\n' ' ')"
	fi
done

# v_runs, v_ops and v_distrust: the page lists every column of the view.
mkdb=${top_builddir:-.}/tests/mkdb
if [ -x "$mkdb" ]; then
	"$mkdb" "$tmp/t.db" 1 >/dev/null
	for v in v_runs v_ops v_distrust; do
		"$FUSEPROF" query --db "$tmp/t.db" --format csv "SELECT * FROM $v LIMIT 0" |
			head -n 1 | tr -d '\r' | tr ',' '\n' >"$tmp/cols"
		[ -s "$tmp/cols" ] || fail "no columns for $v"
		awk -v v="$v" '$0 == ".B " v { on = 1; next } on && /^\.(TP|SH)/ { exit } on' "$page" >"$tmp/entry"
		while read -r col; do
			grep -qw -- "$col" "$tmp/entry" || fail "man page: $v lacks column $col"
		done <"$tmp/cols"
	done
fi
exit 0
