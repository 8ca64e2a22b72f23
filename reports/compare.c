/* compare.c - regression verdicts for one op in two runs (see compare.h for
 * the noise rule and why counters need none). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "util.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double cmp_percentile(const double *sorted, size_t n, double p)
{
	double h, lo;
	size_t i;

	if (n == 0)
		return NAN;
	if (p <= 0)
		return sorted[0];
	if (p >= 1)
		return sorted[n - 1];
	h = p * (double)(n - 1);
	lo = floor(h);
	i = (size_t)lo;
	if (i + 1 >= n)
		return sorted[n - 1];
	return sorted[i] + (h - lo) * (sorted[i + 1] - sorted[i]);
}

int cmp_time_stats(const double *samples, size_t n, double *median, double *noise)
{
	double *s, m;

	*median = *noise = NAN;
	if (n == 0)
		return -1;
	s = xmalloc(n * sizeof *s);
	memcpy(s, samples, n * sizeof *s);
	qsort(s, n, sizeof *s, cmp_double);
	m = cmp_percentile(s, n, 0.5);
	if (!(m > 0)) {
		free(s);
		return -1;
	}
	*median = m;
	*noise = (cmp_percentile(s, n, 0.9) - cmp_percentile(s, n, 0.1)) / m;
	free(s);
	return 0;
}

enum cmp_time cmp_time_verdict(const double *base, size_t nbase,
			       const double *new, size_t nnew,
			       double threshold, struct cmp_result *r)
{
	int bad_base = cmp_time_stats(base, nbase, &r->base_ns, &r->base_noise);
	int bad_new = cmp_time_stats(new, nnew, &r->new_ns, &r->new_noise);
	double bar = threshold;

	r->time_change = NAN;
	r->time_bar = NAN;
	if (bad_base || bad_new)
		return r->time = CMP_TIME_NA;
	if (r->base_noise > bar)
		bar = r->base_noise;
	if (r->new_noise > bar)
		bar = r->new_noise;
	r->time_bar = bar;
	r->time_change = r->new_ns / r->base_ns - 1;
	if (r->time_change > bar)
		return r->time = CMP_TIME_SLOWER;
	if (r->time_change < -bar)
		return r->time = CMP_TIME_FASTER;
	return r->time = CMP_TIME_SAME;
}

enum cmp_count cmp_count_verdict(double base, double new, double threshold,
				 double *change)
{
	*change = NAN;
	if (isnan(base) || isnan(new) || base < 0 || new < 0)
		return CMP_COUNT_NA;
	if (base == 0) {
		*change = new == 0 ? 0 : INFINITY;
		return new == 0 ? CMP_COUNT_SAME : CMP_COUNT_MORE;
	}
	*change = new / base - 1;
	if (*change > threshold)
		return CMP_COUNT_MORE;
	if (*change < -threshold)
		return CMP_COUNT_FEWER;
	return CMP_COUNT_SAME;
}

static int is_ok(const struct cmp_op *op)
{
	return op->status && !strcmp(op->status, "ok");
}

/* Timing and counters of a side shown even when not compared (ADDED,
 * REMOVED, wrong): the medians and noise, nothing else. */
static void describe(const struct cmp_op *op, double *ns, double *noise,
		     long long *launches)
{
	cmp_time_stats(op->samples, op->nsamples, ns, noise);
	*launches = op->launches;
}

void cmp_ops(const struct cmp_op *base, const struct cmp_op *new,
	     const struct cmp_opts *opts, struct cmp_result *r)
{
	int base_ok, new_ok;

	memset(r, 0, sizeof *r);
	r->time = CMP_TIME_NA;
	r->dram = r->flops = CMP_COUNT_NA;
	r->base_ns = r->new_ns = r->base_noise = r->new_noise = NAN;
	r->time_change = r->time_bar = r->dram_change = r->flops_change = NAN;
	r->base_launches = r->new_launches = -1;

	if (!base || !new) {
		if (base)
			describe(base, &r->base_ns, &r->base_noise, &r->base_launches);
		if (new)
			describe(new, &r->new_ns, &r->new_noise, &r->new_launches);
		r->verdict = base ? CMP_REMOVED : CMP_ADDED;
		return;
	}

	describe(base, &r->base_ns, &r->base_noise, &r->base_launches);
	describe(new, &r->new_ns, &r->new_noise, &r->new_launches);
	base_ok = is_ok(base);
	new_ok = is_ok(new);
	/* A failed op's launch count says where it stopped, not how it runs. */
	r->launches_changed = base_ok && new_ok && base->launches >= 0 &&
			      new->launches >= 0 && base->launches != new->launches;
	if (base_ok && new_ok) {
		cmp_time_verdict(base->samples, base->nsamples, new->samples,
				 new->nsamples, opts->time_threshold, r);
		if (base->has_counters && new->has_counters) {
			r->dram = cmp_count_verdict(base->dram_bytes, new->dram_bytes,
						    opts->count_threshold, &r->dram_change);
			/* The change is shown; it judges nothing. */
			if (opts->bytes_incomparable && r->dram != CMP_COUNT_NA)
				r->dram = CMP_COUNT_INCOMPARABLE;
			r->flops = cmp_count_verdict(base->flops, new->flops,
						     opts->count_threshold, &r->flops_change);
		}
	}

	if (base_ok && !new_ok)
		r->verdict = CMP_WRONG;
	else if (!base_ok && !new_ok)
		r->verdict = CMP_STILL_WRONG;
	else if (!base_ok)
		r->verdict = CMP_FIXED;
	else if (r->time == CMP_TIME_SLOWER)
		r->verdict = CMP_SLOWER;
	else if (r->dram == CMP_COUNT_MORE)
		r->verdict = CMP_MORE_BYTES;
	else if (r->flops == CMP_COUNT_MORE)
		r->verdict = CMP_MORE_FLOPS;
	else if (r->launches_changed)
		r->verdict = CMP_LAUNCHES;
	else if (r->time == CMP_TIME_FASTER)
		r->verdict = CMP_FASTER;
	else if (r->dram == CMP_COUNT_FEWER)
		r->verdict = CMP_FEWER_BYTES;
	else if (r->flops == CMP_COUNT_FEWER)
		r->verdict = CMP_FEWER_FLOPS;
	else
		r->verdict = CMP_SAME;
	/* Any of these fails the gate, whatever the headline says: an op
	 * that got faster but moves more bytes still regressed. */
	r->regressed = r->verdict == CMP_WRONG || r->time == CMP_TIME_SLOWER ||
		       r->dram == CMP_COUNT_MORE || r->flops == CMP_COUNT_MORE;
}

/* The size of the change that decided a row's verdict; larger sorts first. */
static double magnitude(const struct cmp_result *r)
{
	double m;

	switch (r->verdict) {
	case CMP_SLOWER:
	case CMP_FASTER:
	case CMP_SAME:
		m = fabs(r->time_change);
		break;
	case CMP_MORE_BYTES:
	case CMP_FEWER_BYTES:
		m = fabs(r->dram_change);
		break;
	case CMP_MORE_FLOPS:
	case CMP_FEWER_FLOPS:
		m = fabs(r->flops_change);
		break;
	case CMP_LAUNCHES:
		m = fabs((double)(r->new_launches - r->base_launches));
		break;
	default:
		m = 0;
	}
	return isnan(m) ? 0 : m;
}

int cmp_result_order(const struct cmp_result *a, const struct cmp_result *b)
{
	double ma, mb;

	if (a->verdict != b->verdict)
		return a->verdict < b->verdict ? -1 : 1;
	ma = magnitude(a);
	mb = magnitude(b);
	return (ma < mb) - (ma > mb);
}

const char *cmp_verdict_name(enum cmp_verdict v)
{
	static const char *const names[CMP_NVERDICTS] = {
		[CMP_WRONG] = "WRONG",
		[CMP_SLOWER] = "SLOWER",
		[CMP_MORE_BYTES] = "MORE-BYTES",
		[CMP_MORE_FLOPS] = "MORE-FLOPS",
		[CMP_REMOVED] = "REMOVED",
		[CMP_ADDED] = "ADDED",
		[CMP_LAUNCHES] = "LAUNCHES",
		[CMP_STILL_WRONG] = "STILL-WRONG",
		[CMP_FIXED] = "FIXED",
		[CMP_FASTER] = "FASTER",
		[CMP_FEWER_BYTES] = "FEWER-BYTES",
		[CMP_FEWER_FLOPS] = "FEWER-FLOPS",
		[CMP_SAME] = "SAME",
	};

	return (unsigned)v < CMP_NVERDICTS ? names[v] : "?";
}

const char *cmp_time_name(enum cmp_time t)
{
	switch (t) {
	case CMP_TIME_SAME:
		return "SAME";
	case CMP_TIME_FASTER:
		return "FASTER";
	case CMP_TIME_SLOWER:
		return "SLOWER";
	default:
		return "n/a";
	}
}

const char *cmp_count_name(enum cmp_count c)
{
	switch (c) {
	case CMP_COUNT_SAME:
		return "SAME";
	case CMP_COUNT_FEWER:
		return "FEWER";
	case CMP_COUNT_MORE:
		return "MORE";
	case CMP_COUNT_INCOMPARABLE:
		return "not-comparable";
	default:
		return "n/a";
	}
}

/* ---- matching ------------------------------------------------------------ */

int cmp_match_by_path(const char *base_kind, const char *new_kind)
{
	return base_kind && new_kind && !strcmp(base_kind, "profile") &&
	       !strcmp(new_kind, "profile");
}

int cmp_key_order(const struct cmp_key *a, const struct cmp_key *b, int by_path)
{
	int c;

	if ((c = strcmp(a->workload, b->workload)) ||
	    (!by_path && (c = strcmp(a->variant, b->variant))) ||
	    (c = strcmp(a->dtype, b->dtype)) || (c = strcmp(a->shape, b->shape)))
		return c;
	return (a->device > b->device) - (a->device < b->device);
}

/* A key with its index, sorted by key, then index: equal keys keep the
 * order they came in, whatever qsort does with ties. */
struct entry {
	const struct cmp_key *key;
	size_t i;
	int by_path;
};

static int entry_order(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;
	int c = cmp_key_order(a->key, b->key, a->by_path);

	return c ? c : (a->i > b->i) - (a->i < b->i);
}

static struct entry *sorted_entries(const struct cmp_key *k, size_t n, int by_path)
{
	struct entry *e = xcalloc(n + 1, sizeof *e);

	for (size_t i = 0; i < n; i++)
		e[i] = (struct entry){ &k[i], i, by_path };
	qsort(e, n, sizeof *e, entry_order);
	return e;
}

struct cmp_match *cmp_match_ops(const struct cmp_key *base, size_t nbase,
				const struct cmp_key *new, size_t nnew, int by_path,
				size_t *n)
{
	struct entry *b = sorted_entries(base, nbase, by_path);
	struct entry *w = sorted_entries(new, nnew, by_path);
	struct cmp_match *m = xcalloc(nbase + nnew + 1, sizeof *m);
	size_t i = 0, j = 0, k = 0;

	/* A merge of the two sorted lists. */
	while (i < nbase || j < nnew) {
		int c = i == nbase ? 1 : j == nnew ? -1
			: cmp_key_order(b[i].key, w[j].key, by_path);

		m[k].base = c <= 0 ? b[i++].i : CMP_NONE;
		m[k].new = c >= 0 ? w[j++].i : CMP_NONE;
		k++;
	}
	free(b);
	free(w);
	*n = k;
	return m;
}
