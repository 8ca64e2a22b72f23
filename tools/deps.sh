#!/bin/sh
# tools/deps.sh - install the Debian/Ubuntu packages that building and
# testing fuseprof needs, all but the CUDA toolkit (NVIDIA's
# cuda-toolkit-13-0). The one list of them: the README's quick start and
# .ci/run both run this script, so CI tests what a newcomer does.
# --list prints the packages and installs nothing.
set -eu

# groff-base and man-db: tests/test-man.sh renders the manual page with
# groff and man -l.
packages="autoconf automake pkg-config make gcc g++ libc6-dev libsqlite3-dev gnuplot-nox groff-base man-db"

case ${1:-} in
--list)
	echo "$packages"
	exit 0
	;;
"") ;;
*)
	echo "usage: tools/deps.sh [--list]" >&2
	exit 2
	;;
esac

as_root=
[ "$(id -u)" = 0 ] || as_root=sudo
$as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
# shellcheck disable=SC2086 # one word per package
$as_root env DEBIAN_FRONTEND=noninteractive \
	apt-get install -y -qq --no-install-recommends $packages >/dev/null
