#!/bin/sh
# test-deps.sh - the packages a fresh Debian/Ubuntu machine needs are listed
# once, in tools/deps.sh; the README's quick start runs it before building
# and testing, and .ci/run runs that very line (no package list of its own).
. "$srcdir/tests/setup"

deps=$top_srcdir/tools/deps.sh
[ -x "$deps" ] || fail "tools/deps.sh is missing or not executable"
expect_exit 0 "$deps" --list
list=" $(cat "$tmp/out") "
# What the build, the tests and configure's own messages ask for.
want="autoconf automake pkg-config make gcc g++ libc6-dev libsqlite3-dev gnuplot-nox
$(grep -o 'install [a-z0-9.+-]*-\(dev\|nox\)' "$top_srcdir/configure.ac" | cut -d' ' -f2)"
for p in $want; do
	case $list in
	*" $p "*) ;;
	*) fail "tools/deps.sh --list lacks $p: $list" ;;
	esac
done
expect_exit 2 "$deps" --nosuch

# The README's line: install, then build and test, in one command.
line=$(grep '^tools/deps\.sh && ' "$top_srcdir/README.md" | head -n 1)
case $line in
*"./configure && make check"*"# build and test"*) ;;
*) fail "README quick start: no 'tools/deps.sh && ... ./configure && make check   # build and test' line: '$line'" ;;
esac
# CI takes its command from that line and has no list of its own.
grep -q 'tools/deps' "$top_srcdir/.ci/run" || fail ".ci/run does not use the README's line"
grep -q 'README.md' "$top_srcdir/.ci/run" || fail ".ci/run does not read the README"
grep -q 'apt-get' "$top_srcdir/.ci/run" && fail ".ci/run keeps its own package list"
exit 0
