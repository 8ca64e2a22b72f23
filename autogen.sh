#!/bin/sh
# autogen.sh - generate configure and Makefile.in from a git checkout.
set -e
cd "$(dirname "$0")"
mkdir -p m4 build-aux
autoreconf --install --force --warnings=all
echo "now run: ./configure && make check"
