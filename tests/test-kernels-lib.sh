#!/bin/sh
# test-kernels-lib.sh - libfuseprof-kernels as a user gets it: it exports
# the fpk_ functions and nothing else (no symbol of the code it is linked
# from can clash with a program's), its soname is versioned, and the
# README's C example compiles against fuseprof/kernels.h and links against
# the library (a shared object with every symbol resolved; not run: no
# GPU needed).
. "${srcdir:-.}/tests/setup"

so=${top_builddir:-.}/libfuseprof-kernels.so.0
[ -f "$so" ] || fail "no $so"
command -v nm >/dev/null 2>&1 || { echo "SKIP: no nm" >&2; exit 77; }
nm -D --defined-only "$so" | awk '{ print $3 }' | sort >"$tmp/syms"
grep -v '^fpk_' "$tmp/syms" >"$tmp/other" || true
[ ! -s "$tmp/other" ] || fail "exports beside fpk_*: $(head -5 "$tmp/other" | tr '\n' ' ')"
for f in fpk_version fpk_strerror fpk_last_error fpk_ln_linear_fold \
	fpk_ln_linear_fwd fpk_ln_linear_bwd fpk_ln_gelu_fwd fpk_ln_gelu_bwd \
	fpk_softmax_fwd fpk_softmax_bwd fpk_ref_ln_linear_fwd fpk_rmsnorm_fwd \
	fpk_rmsnorm_bwd fpk_swiglu_fwd fpk_swiglu_bwd fpk_softplus_fwd fpk_softplus_bwd \
	fpk_bias_relu_fwd fpk_bias_relu_bwd fpk_bias_dropout_add_fwd \
	fpk_bias_dropout_add_bwd; do
	grep -qx "$f" "$tmp/syms" || fail "$f not exported"
done
if command -v objdump >/dev/null 2>&1; then
	objdump -p "$so" | grep -q 'SONAME *libfuseprof-kernels.so.0' || fail "soname"
fi

# The README's example: the first ```c block of "## The kernels as a library".
sed -n '/^## The kernels as a library/,/^## /p' "$srcdir/README.md" |
	sed -n '/^```c$/,/^```$/p' | sed '1d;$d' >"$tmp/example.c"
[ -s "$tmp/example.c" ] || fail "no C example in README.md's library section"
: "${CC:=cc}"
: "${CUDA_CPPFLAGS:=-I/usr/local/cuda/include}"
: "${CUDA_LDFLAGS:=-L/usr/local/cuda/lib64}"
# shellcheck disable=SC2086  # the flags are lists
$CC -std=c11 -Wall -Werror -fPIC -I"$srcdir/kernels" $CUDA_CPPFLAGS -c \
	-o "$tmp/example.o" "$tmp/example.c" || fail "the README example does not compile"
# shellcheck disable=SC2086
$CC -shared -Wl,--no-undefined -o "$tmp/example.so" "$tmp/example.o" "$so" \
	$CUDA_LDFLAGS -lcudart ||
	fail "the README example does not link"
echo "ok   $(wc -l <"$tmp/syms") exports, all fpk_*; the README example builds"
