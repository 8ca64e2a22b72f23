# test-layers.sh - the floors of the tree hold (README.md, "Architecture"):
# no file of lib/, kernels/, probes/, store/, plots/ or reports/ includes a
# header from a floor above its own, and of the two folders on floor 2 only
# reports/ calls plots/, never the other way. On the top floor, inject/ (the
# profiler's injection library) uses lib/, probes/ and store/ alone: it is
# loaded into other programs, and src/ may include its inject.h, never the
# other way. Each #include "X" is resolved
# as the compiler does: beside the including file first, then along the -I
# folders in Makefile.am's order; a header found in none of them is not
# ours (config.h, a system header) and is not checked.
. "$srcdir/tests/setup"

# The -I folders, in Makefile.am's order (AM_CPPFLAGS), then inject/'s own.
incdirs="lib kernels probes store plots reports src inject"

# may FOLDER: the folders whose headers a file of FOLDER may include.
may() {
	case $1 in
	lib) echo "lib" ;;
	kernels) echo "lib kernels" ;;
	probes) echo "lib probes" ;;
	store) echo "lib store" ;;
	plots) echo "lib plots" ;;
	reports) echo "lib store plots reports" ;;
	inject) echo "lib probes store inject" ;;
	*) echo "$incdirs" ;;
	esac
}

cd "$srcdir"
top=$(pwd -P)
files=0
bad=0
for dir in lib kernels probes store plots reports inject; do
	if [ ! -d "$dir" ]; then
		echo "no folder $dir/, which the floors name" >&2
		bad=$((bad + 1))
		continue
	fi
	allowed=$(may "$dir")
	for f in $(find "$dir" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' \
			-o -name '*.cuh' \) | sort); do
		files=$((files + 1))
		for h in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
			to=
			if [ -f "$(dirname "$f")/$h" ]; then
				to=$(dirname "$f")/$h
			else
				for d in $incdirs; do
					if [ -f "$d/$h" ]; then
						to=$d/$h
						break
					fi
				done
			fi
			[ -n "$to" ] || continue
			real=$(cd "$(dirname "$to")" && pwd -P)
			rel=${real#"$top"/}
			owner=${rel%%/*}
			case " $allowed " in
			*" $owner "*) ;;
			*)
				echo "$f includes \"$h\" from $owner/: $dir/ may include only" \
					"$allowed" >&2
				bad=$((bad + 1))
				;;
			esac
		done
	done
done
[ "$files" -gt 20 ] || fail "only $files source files found under $srcdir: wrong folder?"
[ "$bad" = 0 ] || fail "$bad include(s) or folder(s) break the floors (README.md, \"Architecture\")"
echo "$files files, every include goes down or stays on its floor"
