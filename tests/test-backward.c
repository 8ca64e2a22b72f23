/* test-backward.c - the forward/backward pairs of the registry (no GPU):
 * each forward's backward exists, takes the same parameters, is no forward
 * of a pair itself, and every forward variant with a backward variant of
 * the same name keeps, by both models, the same bytes for it at every
 * shape the workload is tested or run at; every model's saved bytes are
 * finite and not negative; each declared twin is a fused variant keeping
 * what its unfused variant keeps. v_save_recompute pairs ops on these
 * promises, bench/opportunities-truth.sh on the twins.
 * Walks every workload built in, so one added later is covered. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test.h"
#include "workload.h"

#define MAX_SHAPES 64

/* Parse the ';'-separated shapes of spec (NULL: none) into s. Returns how
 * many; a shape that does not parse fails the test. */
static int shapes_of(const struct workload *w, const char *spec,
		     struct fp_shape *s, int n)
{
	char buf[1024], why[256];

	if (!spec)
		return n;
	ASSERT(strlen(spec) < sizeof buf);
	strcpy(buf, spec);
	for (char *one = strtok(buf, ";"); one; one = strtok(NULL, ";")) {
		ASSERT(n < MAX_SHAPES);
		if (workload_parse_shape(w, one, &s[n], why, sizeof why))
			FAIL("%s: shape '%s': %s", w->name, one, why);
		n++;
	}
	return n;
}

/* The shapes w is tested and run at: its tests, default and quick suites
 * and its variants' own suites. */
static int all_shapes(const struct workload *w, struct fp_shape *s)
{
	int n = shapes_of(w, w->tests, s, 0);

	n = shapes_of(w, w->suite, s, n);
	n = shapes_of(w, w->quick, s, n);
	for (const struct fp_variant *v = w->variants; v->name; v++)
		n = shapes_of(w, v->suite, s, n);
	return n;
}

static int valid(const struct workload *w, const struct fp_shape *s,
		 enum fp_dtype dt)
{
	char why[256];

	return (w->dtypes & FP_DTYPE_BIT(dt)) && !w->validate(s, dt, why, sizeof why);
}

/* Every variant's saved bytes at every valid shape and dtype: finite, not
 * negative. */
static void check_models(const struct workload *w)
{
	struct fp_shape s[MAX_SHAPES];
	int n = all_shapes(w, s);

	for (int i = 0; i < n; i++)
		for (int d = 0; d < FP_NDTYPES; d++) {
			if (!valid(w, &s[i], (enum fp_dtype)d))
				continue;
			for (int v = 0; w->variants[v].name; v++) {
				struct fp_model m;

				memset(&m, 0xff, sizeof m);  /* a field left unset reads NaN */
				w->model(&s[i], (enum fp_dtype)d, v, &m);
				if (!isfinite(m.saved_bytes) || m.saved_bytes < 0)
					FAIL("%s/%s/%s: saved_bytes %g", w->name,
					     w->variants[v].name,
					     fp_dtype_name((enum fp_dtype)d), m.saved_bytes);
			}
		}
}

/* w's declared twins: each on an unfused variant, naming a fused variant
 * of w that keeps, by both models, the same bytes for the backward at
 * every shape and dtype w runs at (a twin writes the same saved tensors);
 * a forward's variant and its backward's variant of the same name declare
 * the same twin (one training step's two halves, fused alike). Returns the
 * number of twins declared. */
static int check_twins(const struct workload *w)
{
	const struct workload *b = w->backward ? workload_find(w->backward) : NULL;
	struct fp_shape s[MAX_SHAPES];
	int n = all_shapes(w, s), twins = 0;

	for (int v = 0; w->variants[v].name; v++) {
		const struct fp_variant *fv = &w->variants[v];
		int t, bv = b ? workload_variant(b, fv->name) : -1;

		if (bv >= 0 && (!fv->twin != !b->variants[bv].twin ||
				(fv->twin && strcmp(fv->twin, b->variants[bv].twin))))
			FAIL("%s/%s's twin is %s, %s/%s's %s", w->name, fv->name,
			     fv->twin ? fv->twin : "none", b->name, fv->name,
			     b->variants[bv].twin ? b->variants[bv].twin : "none");
		if (!fv->twin)
			continue;
		twins++;
		if (fv->role != FP_UNFUSED)
			FAIL("%s/%s: a %s variant declares a twin (%s)", w->name,
			     fv->name, fp_role_name(fv->role), fv->twin);
		t = workload_variant(w, fv->twin);
		if (t < 0 || w->variants[t].role != FP_FUSED)
			FAIL("%s/%s: its twin %s is no fused variant of %s", w->name,
			     fv->name, fv->twin, w->name);
		for (int i = 0; i < n; i++)
			for (int d = 0; d < FP_NDTYPES; d++) {
				struct fp_model um, tm;

				if (!valid(w, &s[i], (enum fp_dtype)d))
					continue;
				w->model(&s[i], (enum fp_dtype)d, v, &um);
				w->model(&s[i], (enum fp_dtype)d, t, &tm);
				if (um.saved_bytes != tm.saved_bytes)
					FAIL("%s/%s/%s keeps %.17g bytes for the backward, "
					     "its twin %s %.17g", w->name, fv->name,
					     fp_dtype_name((enum fp_dtype)d),
					     um.saved_bytes, fv->twin, tm.saved_bytes);
			}
	}
	return twins;
}

/* The pair f -> f->backward; returns the number of forward variants, shapes
 * and dtypes whose saved bytes were compared. */
static int check_pair(const struct workload *f)
{
	const struct workload *b = workload_find(f->backward);
	struct fp_shape s[MAX_SHAPES];
	int n, np, compared = 0;

	if (!b)
		FAIL("%s: its backward '%s' is no workload", f->name, f->backward);
	if (b == f)
		FAIL("%s: is its own backward", f->name);
	if (b->backward)
		FAIL("%s: its backward %s is a forward with a backward (%s)", f->name,
		     b->name, b->backward);
	/* The same parameters, in the same order, with the same defaults: a
	 * shape means the same in both, and both store it as the same text. */
	np = workload_nparams(f);
	if (np != workload_nparams(b))
		FAIL("%s takes %d parameters, its backward %s %d", f->name, np,
		     b->name, workload_nparams(b));
	for (int i = 0; i < np; i++)
		if (strcmp(f->params[i].name, b->params[i].name) ||
		    f->params[i].def != b->params[i].def)
			FAIL("%s: parameter %d is %s (default %ld), in %s %s (default %ld)",
			     f->name, i + 1, f->params[i].name, f->params[i].def, b->name,
			     b->params[i].name, b->params[i].def);

	n = all_shapes(f, s);
	for (int i = 0; i < n; i++) {
		char ft[256], bt[256];

		workload_format_shape(f, &s[i], ft, sizeof ft);
		workload_format_shape(b, &s[i], bt, sizeof bt);
		ASSERT_STR_EQ(ft, bt);
		for (int d = 0; d < FP_NDTYPES; d++) {
			enum fp_dtype dt = (enum fp_dtype)d;

			if (!valid(f, &s[i], dt) || !valid(b, &s[i], dt))
				continue;
			for (int v = 0; f->variants[v].name; v++) {
				int bv = workload_variant(b, f->variants[v].name);
				struct fp_model fm, bm;

				if (bv < 0)
					continue;
				f->model(&s[i], dt, v, &fm);
				b->model(&s[i], dt, bv, &bm);
				if (fm.saved_bytes != bm.saved_bytes)
					FAIL("%s/%s/%s/%s keeps %.17g bytes for its backward, "
					     "which reads %.17g (%s)", f->name,
					     f->variants[v].name, fp_dtype_name(dt), ft,
					     fm.saved_bytes, bm.saved_bytes, b->name);
				compared++;
			}
		}
	}
	return compared;
}

int main(void)
{
	int pairs = 0, compared = 0, twins = 0;

	for (const struct workload *const *w = fp_workloads; *w; w++) {
		check_models(*w);
		twins += check_twins(*w);
		if (!(*w)->backward)
			continue;
		pairs++;
		compared += check_pair(*w);
	}
	/* The built-in forwards with backwards (ln_gelu, softmax, ln_linear)
	 * share variant names with them: a registry that pairs none would
	 * leave v_save_recompute empty. */
	if (!pairs || !compared)
		FAIL("%d forwards with a backward, %d variant models compared: "
		     "nothing to pair", pairs, compared);
	/* the built-in softplus chain declares unfused3's twin, fused_tape,
	 * in both directions: none would mean the field went unread */
	if (!twins)
		FAIL("no workload declares a twin");
	printf("%d forward/backward pairs, %d forward variant, dtype and shape "
	       "models compared, %d twins\n", pairs, compared, twins);
	return 0;
}
