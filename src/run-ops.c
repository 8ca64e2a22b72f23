/* run-ops.c - the op list of `fuseprof run`: the --workload, --variant,
 * --dtype, --shape / --quick and --kernel-opt selections checked against
 * the registry and expanded into ops in suite order (run-ops.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "error.h"
#include "run-ops.h"
#include "util.h"

/* Is name in the comma-separated list (NULL list = everything)? */
static int in_list(const char *list, const char *name)
{
	return !list || list_has(list, name);
}

/* Every name in list must be one of the nnames names[]; the error lists
 * them, as those of scope (the --workload list) when not NULL. */
static int check_names(const char *list, const char *what, const char *scope,
		       const char *const *names, int nnames)
{
	if (!list)
		return 0;
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		int found = 0;

		for (int i = 0; i < nnames && !found; i++)
			found = strlen(names[i]) == len && !strncmp(names[i], p, len);
		if (!found) {
			struct strbuf sb = STRBUF_INIT;

			for (int i = 0; i < nnames; i++)
				strbuf_addf(&sb, "%s%s", i ? ", " : "", names[i]);
			usage_error("run", "run: unknown %s '%.*s' (%s%s: %s)", what,
				    (int)len, p, scope ? "those of " : "known",
				    scope ? scope : "",
				    nnames ? strbuf_str(&sb) : "none built in");
			strbuf_release(&sb);
			return -1;
		}
		p += len + (e ? 1 : 0);
	}
	return 0;
}

const struct workload *workload_forward_of(const struct workload *w)
{
	for (const struct workload *const *f = fp_workloads; *f; f++)
		if ((*f)->backward && !strcmp((*f)->backward, w->name))
			return *f;
	return NULL;
}

size_t count_saved_pairs(const struct op_list *ops)
{
	size_t n = 0;

	for (size_t i = 0; i < ops->n; i++) {
		const struct op_spec *f = &ops->v[i];
		const char *fv = f->w->variants[f->variant].name;

		if (!f->w->backward)
			continue;
		for (size_t j = 0; j < ops->n; j++) {
			const struct op_spec *b = &ops->v[j];

			if (!strcmp(b->w->name, f->w->backward) && b->dt == f->dt &&
			    !strcmp(b->w->variants[b->variant].name, fv) &&
			    !strcmp(b->shape_text, f->shape_text)) {
				n++;
				break;
			}
		}
	}
	return n;
}

static void push_op(struct op_list *l, const struct op_spec *o)
{
	if (l->n == l->alloc) {
		l->alloc = l->alloc ? 2 * l->alloc : 64;
		l->v = xrealloc(l->v, l->alloc * sizeof *l->v);
	}
	l->v[l->n++] = *o;
}

/* Set w's options from the --kernel-opt pairs that apply to it: the ones
 * scoped to it, and the unscoped ones whose key it declares (so one key
 * serves every selected workload that has it). used[i] is set for each
 * pair that applied. Returns 0, or EXIT_USAGE (reported) for a value w
 * does not allow, or a key scoped to w that it does not declare. */
static int op_kopts(const struct run_opts *o, const struct workload *w,
		    struct fp_kopts *ko, unsigned char *used)
{
	char scope[64], key[64], value[64], why[256];

	memset(ko, 0, sizeof *ko);
	for (int i = 0; i < o->nkopts; i++) {
		workload_split_kopt(o->kopts[i], scope, key, value, sizeof key);
		if (scope[0] ? strcmp(scope, w->name) : workload_kopt(w, key) < 0)
			continue;
		/* A refused value's reason names the option, not the
		 * workload; several selected ones may declare the key, so say
		 * which refused it. */
		if (workload_set_kopt(w, ko, key, value, why, sizeof why)) {
			int named = !strncmp(why, w->name, strlen(w->name));

			return usage_error("run", "run: --kernel-opt %s: %s%s%s",
					   o->kopts[i], named ? "" : w->name,
					   named ? "" : ": ", why);
		}
		used[i] = 1;
	}
	return 0;
}

/* Every --kernel-opt pair must have applied to some selected workload:
 * say which workloads were selected and the options they declare. */
static int kopts_unused(const struct run_opts *o, const unsigned char *used)
{
	char scope[64], key[64], value[64];
	struct strbuf sb = STRBUF_INIT;
	int i;

	for (i = 0; i < o->nkopts && used[i]; i++)
		;
	if (i == o->nkopts)
		return 0;
	workload_split_kopt(o->kopts[i], scope, key, value, sizeof key);
	if (scope[0] && !workload_find(scope))
		return usage_error("run", "run: --kernel-opt %s: unknown workload '%s'",
				   o->kopts[i], scope);
	if (scope[0] && !in_list(o->workloads, scope))
		return usage_error("run", "run: --kernel-opt %s: workload '%s' is not "
				   "selected (--workload %s)", o->kopts[i], scope,
				   o->workloads);
	for (const struct workload *const *wp = fp_workloads; *wp; wp++) {
		const struct workload *w = *wp;

		if (!in_list(o->workloads, w->name) || !workload_nkopts(w))
			continue;
		strbuf_addf(&sb, "%s%s: ", sb.len ? "; " : "", w->name);
		for (int k = 0; k < workload_nkopts(w); k++)
			strbuf_addf(&sb, "%s%s", k ? ", " : "", w->kopts[k].name);
	}
	if (scope[0])
		usage_error("run", "run: --kernel-opt %s: workload '%s' has no op in "
			    "this selection", o->kopts[i], scope);
	else
		usage_error("run", "run: --kernel-opt %s: no selected workload has "
			    "kernel option '%s' (%s%s)", o->kopts[i], key,
			    sb.len ? "options: " : "the selected workloads have none",
			    strbuf_str(&sb));
	strbuf_release(&sb);
	return EXIT_USAGE;
}

/* Index of shape s in shapes[0..n) (the first np parameters compared), or -1. */
static long shape_index(const struct fp_shape *shapes, size_t n,
			const struct fp_shape *s, int np)
{
	for (size_t i = 0; i < n; i++)
		if (!memcmp(shapes[i].v, s->v, (size_t)np * sizeof s->v[0]))
			return (long)i;
	return -1;
}

/* Build the ops in suite order: workload, shape, dtype, variant. The shapes
 * are --shape's, else the --quick suite's, else the default suite's: there
 * a variant with a suite of its own (struct fp_variant) runs at its shapes
 * only, which follow the workload's in the order. Returns 0, or EXIT_USAGE
 * / EXIT_FAIL (reported). */
int build_ops(const struct run_opts *o, struct op_list *ops)
{
	const char *names[64], *vnames[256], *dnames[FP_NDTYPES];
	unsigned char kused[RUN_MAX_KOPTS] = { 0 };
	int nw = 0, nv = 0;

	for (const struct workload *const *w = fp_workloads; *w && nw < 64; w++)
		names[nw++] = (*w)->name;
	for (int d = 0; d < FP_NDTYPES; d++)
		dnames[d] = fp_dtype_name((enum fp_dtype)d);
	/* Syntax first: a malformed --shape is a usage error on any build. */
	if (o->shape) {
		struct shape_list l = SHAPE_LIST_INIT;
		char why[256];

		if (shape_expand(o->shape, &l, why, sizeof why))
			return usage_error("run", "run: --shape: %s", why);
		shape_list_release(&l);
	}
	if (check_names(o->workloads, "workload", NULL, names, nw))
		return EXIT_USAGE;
	/* A variant must belong to a selected workload, and the list of the
	 * known ones names each once: several workloads share "fused". */
	for (const struct workload *const *w = fp_workloads; *w; w++) {
		if (!in_list(o->workloads, (*w)->name))
			continue;
		for (int v = 0; (*w)->variants[v].name && nv < 256; v++) {
			int seen = 0;

			for (int i = 0; i < nv && !seen; i++)
				seen = !strcmp(vnames[i], (*w)->variants[v].name);
			if (!seen)
				vnames[nv++] = (*w)->variants[v].name;
		}
	}
	if (check_names(o->variants, "variant", o->workloads, vnames, nv) ||
	    check_names(o->dtypes, "dtype", NULL, dnames, FP_NDTYPES))
		return EXIT_USAGE;
	if (nw == 0)
		return error("nothing to run: this fuseprof has no workloads built in"),
		       EXIT_FAIL;

	for (const struct workload *const *wp = fp_workloads; *wp; wp++) {
		const struct workload *w = *wp;
		const char *spec = o->shape ? o->shape : o->quick ? w->quick : w->suite;
		const int own = !o->shape && !o->quick, np = workload_nparams(w);
		const int nvar = workload_nvariants(w);
		/* vshapes[v]: variant v's own default-suite shapes (NULL: the
		 * workload's, the first nwshapes of shapes) */
		struct fp_shape *shapes = NULL, **vshapes;
		struct fp_kopts ko;
		size_t nshapes = 0, nwshapes, *nvshapes;
		char why[256];
		int rc = 0;

		if (!in_list(o->workloads, w->name))
			continue;
		if (!spec || !*spec)
			continue;
		if (op_kopts(o, w, &ko, kused))
			return EXIT_USAGE;
		if (shape_sweep(w, spec, &shapes, &nshapes, why, sizeof why)) {
			if (o->shape)
				return usage_error("run", "run: --shape '%s': %s", spec, why);
			return error("the built-in suite of '%s' is broken: %s", w->name,
				     why), EXIT_FAIL;
		}
		nwshapes = nshapes;
		vshapes = xcalloc((size_t)nvar + 1, sizeof *vshapes);
		nvshapes = xcalloc((size_t)nvar + 1, sizeof *nvshapes);
		for (int v = 0; own && v < nvar; v++) {
			const char *vs = w->variants[v].suite;

			if (!vs)
				continue;
			if (shape_sweep(w, vs, &vshapes[v], &nvshapes[v], why, sizeof why)) {
				error("the built-in suite of '%s' variant '%s' is broken: %s",
				      w->name, w->variants[v].name, why);
				rc = EXIT_FAIL;
				goto next_workload;
			}
			/* its shapes the workload's suite lacks, after those */
			for (size_t i = 0; i < nvshapes[v]; i++) {
				if (shape_index(shapes, nshapes, &vshapes[v][i], np) >= 0)
					continue;
				shapes = xrealloc(shapes, (nshapes + 1) * sizeof *shapes);
				shapes[nshapes++] = vshapes[v][i];
			}
		}
		for (size_t s = 0; s < nshapes; s++) {
			for (int d = 0; d < FP_NDTYPES; d++) {
				if (!(w->dtypes & FP_DTYPE_BIT(d)) ||
				    !in_list(o->dtypes, fp_dtype_name((enum fp_dtype)d)))
					continue;
				if (w->validate(&shapes[s], (enum fp_dtype)d, why, sizeof why)) {
					char txt[160];

					workload_format_shape(w, &shapes[s], txt, sizeof txt);
					if (o->shape) {
						rc = usage_error("run", "run: %s %s %s: %s",
								 w->name, txt,
								 fp_dtype_name((enum fp_dtype)d),
								 why);
						goto next_workload;
					}
					continue;  /* a suite shape this dtype cannot take */
				}
				for (int v = 0; w->variants[v].name; v++) {
					struct op_spec op;

					if (!in_list(o->variants, w->variants[v].name))
						continue;
					if (vshapes[v] ?
					    shape_index(vshapes[v], nvshapes[v], &shapes[s], np) < 0 :
					    s >= nwshapes)
						continue;  /* not in this variant's suite */
					memset(&op, 0, sizeof op);
					op.w = w;
					op.variant = v;
					op.dt = (enum fp_dtype)d;
					op.shape = shapes[s];
					workload_format_shape(w, &shapes[s], op.shape_text,
							      sizeof op.shape_text);
					op.ko = ko;
					workload_format_kopts(w, &ko, op.kopts_text,
							      sizeof op.kopts_text);
					snprintf(op.key, sizeof op.key, "%s/%s/%s/%s", w->name,
						 w->variants[v].name, fp_dtype_name(op.dt),
						 op.shape_text);
					push_op(ops, &op);
				}
			}
		}
next_workload:
		for (int v = 0; v < nvar; v++)
			free(vshapes[v]);
		free(vshapes);
		free(nvshapes);
		free(shapes);
		if (rc)
			return rc;
	}
	if (kopts_unused(o, kused))
		return EXIT_USAGE;
	if (ops->n == 0)
		return usage_error("run", "run: nothing to run: no op matches the "
				   "selection (see 'fuseprof list workloads')");
	return 0;
}

/* Whether two ops are variants of one case: workload, dtype and shape. */
int same_case(const struct op_spec *a, const struct op_spec *b)
{
	return a->w == b->w && a->dt == b->dt && !strcmp(a->shape_text, b->shape_text);
}
