/* shape.c - the sweep shape-spec parser (grammar in shape.h): a small
 * hand-written scanner, fuzzed by tests/fuzz/fuzz-shape.c, that expands a
 * spec to single shapes and leaves validation to the workload. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape.h"
#include "util.h"

#define MAX_NAME 32

/* One parameter of one shape: its name and the values it sweeps. */
struct assign {
	char name[MAX_NAME];
	long *v;
	size_t n, alloc;
};

struct scan {
	const char *s, *p;
	char *why;
	size_t whylen;
};

static int fail(struct scan *sc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Reasons quote the spec; keep them one printable line whatever it holds. */
static void printable(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

static int fail(struct scan *sc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sc->why, sc->whylen, fmt, ap);
	va_end(ap);
	printable(sc->why);
	return -1;
}

static void skip_space(struct scan *sc)
{
	while (*sc->p == ' ' || *sc->p == '\t')
		sc->p++;
}

/* Column of the scanner for messages: "at column 7". */
static int col(const struct scan *sc)
{
	return (int)(sc->p - sc->s) + 1;
}

static int read_int(struct scan *sc, long *out, const char *what)
{
	char *end;
	long v;

	skip_space(sc);
	if (!(isdigit((unsigned char)*sc->p) ||
	      (*sc->p == '-' && isdigit((unsigned char)sc->p[1]))))
		return fail(sc, "expected %s at column %d of '%s'", what, col(sc), sc->s);
	errno = 0;
	v = strtol(sc->p, &end, 10);
	if (errno == ERANGE)
		return fail(sc, "%s at column %d of '%s' is too large", what, col(sc),
			    sc->s);
	sc->p = end;
	*out = v;
	return 0;
}

static int add_value(struct scan *sc, struct assign *a, long v)
{
	if (a->n >= SHAPE_MAX_EXPANSION)
		return fail(sc, "%s takes more than %d values in '%s'", a->name,
			    SHAPE_MAX_EXPANSION, sc->s);
	if (a->n == a->alloc) {
		a->alloc = a->alloc ? 2 * a->alloc : 8;
		a->v = xrealloc(a->v, a->alloc * sizeof *a->v);
	}
	a->v[a->n++] = v;
	return 0;
}

/* item := INT | INT ':' INT ':' ('x' | '+') INT */
static int read_item(struct scan *sc, struct assign *a)
{
	long lo, hi, step;
	char kind;

	if (read_int(sc, &lo, "a number"))
		return -1;
	skip_space(sc);
	if (*sc->p != ':')
		return add_value(sc, a, lo);
	sc->p++;
	if (read_int(sc, &hi, "the end of a range (lo:hi:xF or lo:hi:+S)"))
		return -1;
	skip_space(sc);
	if (*sc->p != ':')
		return fail(sc, "%s=%ld:%ld: a range needs a step, e.g. %ld:%ld:x2 "
			    "or %ld:%ld:+1", a->name, lo, hi, lo, hi, lo, hi);
	sc->p++;
	skip_space(sc);
	kind = *sc->p;
	if (kind != 'x' && kind != '+')
		return fail(sc, "%s=%ld:%ld: the step must be xF (geometric) or +S "
			    "(arithmetic), at column %d", a->name, lo, hi, col(sc));
	sc->p++;
	if (read_int(sc, &step, "a step"))
		return -1;
	if (lo > hi)
		return fail(sc, "%s=%ld:%ld: the range is empty (lo > hi)", a->name,
			    lo, hi);
	if (kind == 'x') {
		if (step < 2)
			return fail(sc, "%s: a geometric factor must be at least 2 "
				    "(got x%ld)", a->name, step);
		if (lo < 1)
			return fail(sc, "%s=%ld:...: a geometric range starts at 1 or "
				    "more", a->name, lo);
		for (long v = lo; v <= hi; v *= step) {
			if (add_value(sc, a, v))
				return -1;
			if (v > LONG_MAX / step)
				break;
		}
	} else {
		if (step < 1)
			return fail(sc, "%s: an arithmetic step must be at least 1 "
				    "(got +%ld)", a->name, step);
		for (long v = lo; v <= hi; v += step) {
			if (add_value(sc, a, v))
				return -1;
			if (v > LONG_MAX - step)
				break;
		}
	}
	return 0;
}

static void list_push(struct shape_list *l, char *s)
{
	if (l->n == l->alloc) {
		l->alloc = l->alloc ? 2 * l->alloc : 16;
		l->items = xrealloc(l->items, l->alloc * sizeof *l->items);
	}
	l->items[l->n++] = s;
}

void shape_list_release(struct shape_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->items[i]);
	free(l->items);
	l->items = NULL;
	l->n = l->alloc = 0;
}

/* Append the cartesian product of a[0..na) to out, first parameter slowest. */
static int product(struct scan *sc, const struct assign *a, int na,
		   struct shape_list *out)
{
	size_t total = 1, idx[FP_MAX_PARAMS * 2] = { 0 };
	struct strbuf sb = STRBUF_INIT;

	for (int i = 0; i < na; i++) {
		total *= a[i].n;
		if (total + out->n > SHAPE_MAX_EXPANSION)
			return fail(sc, "'%s' expands to more than %d shapes: narrow "
				    "the sweep", sc->s, SHAPE_MAX_EXPANSION);
	}
	for (size_t k = 0; k < total; k++) {
		strbuf_reset(&sb);
		for (int i = 0; i < na; i++)
			strbuf_addf(&sb, "%s%s=%ld", i ? "," : "", a[i].name,
				    a[i].v[idx[i]]);
		list_push(out, xstrdup(strbuf_str(&sb)));
		for (int i = na - 1; i >= 0; i--) {
			if (++idx[i] < a[i].n)
				break;
			idx[i] = 0;
		}
	}
	strbuf_release(&sb);
	return 0;
}

/* shape := assign (',' assign)*, ending at ';' or the end. */
static int read_shape(struct scan *sc, struct shape_list *out)
{
	struct assign a[FP_MAX_PARAMS * 2];
	int na = 0, rc = -1;

	memset(a, 0, sizeof a);
	for (;;) {
		struct assign *cur;
		size_t len = 0;

		skip_space(sc);
		if (na == (int)ARRAY_SIZE(a)) {
			fail(sc, "too many parameters in one shape of '%s'", sc->s);
			goto out;
		}
		cur = &a[na++];
		while (isalnum((unsigned char)sc->p[len]) || sc->p[len] == '_')
			len++;
		if (len == 0) {
			fail(sc, "expected a parameter name at column %d of '%s'",
			     col(sc), sc->s);
			goto out;
		}
		if (len >= MAX_NAME) {
			fail(sc, "parameter name at column %d of '%s' is too long",
			     col(sc), sc->s);
			goto out;
		}
		memcpy(cur->name, sc->p, len);
		cur->name[len] = '\0';
		sc->p += len;
		skip_space(sc);
		if (*sc->p != '=') {
			fail(sc, "expected '=' after '%s' at column %d of '%s'",
			     cur->name, col(sc), sc->s);
			goto out;
		}
		sc->p++;
		for (;;) {
			if (read_item(sc, cur))
				goto out;
			skip_space(sc);
			if (*sc->p != '|')
				break;
			sc->p++;
		}
		if (*sc->p == ',') {
			sc->p++;
			continue;
		}
		if (*sc->p == ';' || *sc->p == '\0')
			break;
		fail(sc, "unexpected '%c' at column %d of '%s'", *sc->p, col(sc), sc->s);
		goto out;
	}
	rc = product(sc, a, na, out);
out:
	for (int i = 0; i < na; i++)
		free(a[i].v);
	return rc;
}

int shape_expand(const char *spec, struct shape_list *out, char *why,
		 size_t whylen)
{
	struct scan sc = { spec, spec, why, whylen };
	struct shape_list tmp = SHAPE_LIST_INIT;

	for (;;) {
		skip_space(&sc);
		if (*sc.p == '\0') {
			if (tmp.n == 0) {
				fail(&sc, "empty shape spec: give NAME=VALUE,... "
				     "(e.g. M=16384,N=768:4096:x2)");
				goto out_release;
			}
			break;
		}
		if (*sc.p == ';') {  /* tolerate empty items: "a;;b", "a;" */
			sc.p++;
			continue;
		}
		if (read_shape(&sc, &tmp))
			goto out_release;
		if (*sc.p == ';')
			sc.p++;
	}
	for (size_t i = 0; i < tmp.n; i++)
		list_push(out, tmp.items[i]);
	free(tmp.items);
	return 0;

out_release:
	shape_list_release(&tmp);
	return -1;
}

int shape_sweep(const struct workload *w, const char *spec,
		struct fp_shape **shapes, size_t *n, char *why, size_t whylen)
{
	struct shape_list l = SHAPE_LIST_INIT;
	struct fp_shape *v;
	size_t k = 0;
	int np = workload_nparams(w);

	*shapes = NULL;
	*n = 0;
	if (shape_expand(spec, &l, why, whylen))
		return -1;
	v = xcalloc(l.n, sizeof *v);
	for (size_t i = 0; i < l.n; i++) {
		struct fp_shape s;
		char sub[200];
		int dup = 0;

		memset(&s, 0, sizeof s);
		if (workload_parse_shape(w, l.items[i], &s, sub, sizeof sub)) {
			snprintf(why, whylen, "%s: %s", w->name, sub);
			printable(why);
			free(v);
			shape_list_release(&l);
			return -1;
		}
		for (size_t j = 0; j < k && !dup; j++)
			dup = !memcmp(v[j].v, s.v, (size_t)np * sizeof s.v[0]);
		if (!dup)
			v[k++] = s;
	}
	shape_list_release(&l);
	*shapes = v;
	*n = k;
	return 0;
}
