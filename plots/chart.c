/* chart.c - what each chart shows, decided from the data (see chart.h). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart.h"
#include "util.h"

/* ---- axis ranges ------------------------------------------------------- */

static int positive(double v)
{
	return isfinite(v) && v > 0;
}

/* [lo, hi] widened to at least min_dec decades around its centre, then by
 * frac of its span on each side (log10 units). */
static void widen(double *lo, double *hi, double min_dec, double frac)
{
	double l0 = log10(*lo), l1 = log10(*hi), span = l1 - l0;

	if (span < min_dec) {
		double mid = (l0 + l1) / 2;

		l0 = mid - min_dec / 2;
		l1 = mid + min_dec / 2;
		span = min_dec;
	}
	*lo = pow(10, l0 - frac * span);
	*hi = pow(10, l1 + frac * span);
}

int chart_range(size_t n, const double *x, const double *y, const double *top,
		struct chart_range *r)
{
	double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;

	for (size_t i = 0; i < n; i++) {
		if (!positive(x[i]) || !positive(y[i]))
			continue;
		xlo = fmin(xlo, x[i]);
		xhi = fmax(xhi, x[i]);
		ylo = fmin(ylo, y[i]);
		yhi = fmax(yhi, y[i]);
		/* The roof above a point belongs in view: the gap is what a
		 * roofline is read for. */
		if (top && positive(top[i]))
			yhi = fmax(yhi, top[i]);
	}
	if (xhi == 0)
		return -1;
	widen(&xlo, &xhi, CHART_MIN_DECADES, CHART_MARGIN);
	widen(&ylo, &yhi, CHART_MIN_DECADES, CHART_MARGIN);
	*r = (struct chart_range){ xlo, xhi, ylo, yhi };
	return 0;
}

/* ---- roofs --------------------------------------------------------------- */

const struct chart_roof_def chart_roof_defs[] = {
	/* DRAM at two read/write mixes: read-only and copy bracket the roofs
	 * of most ops (each op's own roof lies between the measured mixes,
	 * v_roofline's dram_bw); a database without the read-only ceiling
	 * draws the copy alone. */
	{ "dram_read_bw", "DRAM read", CHART_BANDWIDTH, 1, NULL, NULL },
	{ "dram_bw", "DRAM copy", CHART_BANDWIDTH, 1, NULL, NULL },
	{ "l2_bw", "L2", CHART_BANDWIDTH, 1, NULL, NULL },
	{ "tensor_bf16", "tensor bf16", CHART_COMPUTE, 1, NULL, "tensor_bf16" },
	{ "tensor_tf32", "tensor tf32", CHART_COMPUTE, 1, NULL, "tensor_tf32" },
	{ "fp32_fma", "FP32 FMA", CHART_COMPUTE, 1, NULL, "fp32_fma" },
	{ "fp32_fma", "FP32 no FMA", CHART_COMPUTE, 0.5, "fp32_fma/2, ", "fp32_fma" },
	{ "fp64_fma", "FP64 FMA", CHART_COMPUTE, 1, NULL, "fp64_fma" },
};
const size_t chart_nroof_defs = ARRAY_SIZE(chart_roof_defs);

static double ceiling_value(const char *const *names, const double *values, int n,
			    const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return values[i];
	return NAN;
}

static int used(const char *const *precisions, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(precisions[i], name))
			return 1;
	return 0;
}

size_t chart_roofs(const char *const *names, const double *values, int nceil,
		   const char *const *precisions, size_t nprec,
		   const struct chart_range *r, struct chart_roof *out)
{
	double dram = ceiling_value(names, values, nceil, "dram_bw");
	double dram_read = ceiling_value(names, values, nceil, "dram_read_bw");
	double top = NAN;  /* the highest compute roof drawn */
	size_t n = 0;

	/* Compute roofs first: the bandwidth roofs end where the highest of
	 * them begins; they begin at the ridge of the highest DRAM roof. */
	if (positive(dram_read) && !(dram_read <= dram))
		dram = dram_read;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < chart_nroof_defs; i++) {
			const struct chart_roof_def *d = &chart_roof_defs[i];
			double v = ceiling_value(names, values, nceil, d->ceiling) * d->scale;
			double x0, y0, x1, y1;

			if ((pass == 0) != (d->kind == CHART_COMPUTE) || !positive(v))
				continue;
			if (d->kind == CHART_COMPUTE) {
				if (!used(precisions, nprec, d->used_by) || v < r->ymin ||
				    v > r->ymax)
					continue;
				x0 = positive(dram) ? fmax(r->xmin, v / dram) : r->xmin;
				x1 = r->xmax;
				y0 = y1 = v;
				top = isnan(top) ? v : fmax(top, v);
			} else {
				/* y = v x, clipped to the window and below the
				 * highest compute roof drawn. */
				x0 = fmax(r->xmin, r->ymin / v);
				x1 = fmin(r->xmax, r->ymax / v);
				if (!isnan(top))
					x1 = fmin(x1, top / v);
				y0 = x0 * v;
				y1 = x1 * v;
			}
			if (!(x0 < x1))
				continue;
			out[n++] = (struct chart_roof){ d, v, x0, y0, x1, y1 };
		}
	}
	return n;
}

/* A label over a point hides a measurement; over an arrow it hides a
 * little of a line: the first weighs far more. */
#define POINT_PENALTY 1e7
#define POINT_REACH 5.0  /* px around a point's centre */

static double covers_point(const struct obstacles *obs, struct box b)
{
	double p = 0;

	for (size_t i = 0; i < obs->npt; i++)
		if (obs->pt[i].x0 > b.x0 - POINT_REACH && obs->pt[i].x0 < b.x1 + POINT_REACH &&
		    obs->pt[i].y0 > b.y0 - POINT_REACH && obs->pt[i].y0 < b.y1 + POINT_REACH)
			p += POINT_PENALTY;
	return p;
}

struct box chart_roof_label(const struct layout *l, struct obstacles *obs,
			    const struct chart_roof *roof, const char *text, double pt,
			    int *just)
{
	double w = layout_text_width(text, pt), h = layout_text_height(pt);
	double p0x = layout_px(l, roof->x0), p0y = layout_py(l, roof->y0);
	double p1x = layout_px(l, roof->x1), p1y = layout_py(l, roof->y1);
	double best = INFINITY;
	struct box out = { p1x - 4 - w, p1y - 3 - h, p1x - 4, p1y - 3 };

	*just = roof->def->kind == CHART_COMPUTE;
	/* Spots along the roof, on its preferred side first: below a DRAM
	 * roof and above the others, away from the roofs beside it; a
	 * compute roof's label one or two lines further out before it covers
	 * a point. */
	for (int pass = 0; pass < 6 && best > 0; pass++) {
		int side = pass % 2, ring = pass / 2;

		if (roof->def->kind == CHART_BANDWIDTH && !strcmp(roof->def->ceiling, "dram_bw"))
			side = !side;
		for (int i = 2; i <= 19 && best > 0; i++) {
			double t = 1 - i / 20.0, o;
			struct box b;

			if (roof->def->kind == CHART_BANDWIDTH) {
				/* Above and left of a point on the rising line, or
				 * below and right: either way clear of it. */
				double ax = p0x + t * (p1x - p0x), ay = p0y + t * (p1y - p0y);
				double gap = 4 + ring * h;

				b = side ? (struct box){ ax + 6 + gap, ay + gap, ax + 6 + gap + w,
							 ay + gap + h }
					 : (struct box){ ax - 6 - gap - w, ay - gap - h, ax - 6 - gap,
							 ay - gap };
			} else {
				/* Over or under the flat line, its right end at t. */
				double ex = p0x + w + 4 + (t + 0.05) * (p1x - p0x - w - 8);
				double gap = 3 + ring * h;

				if (ex > p1x - 4)
					continue;
				b = side ? (struct box){ ex - w, p1y + gap, ex, p1y + gap + h }
					 : (struct box){ ex - w, p1y - gap - h, ex, p1y - gap };
			}
			o = layout_overlap(l, obs, b) + covers_point(obs, b);
			if (o < best) {
				best = o;
				out = b;
				if (roof->def->kind == CHART_BANDWIDTH)
					*just = side;
			}
		}
	}
	obstacles_add_box(obs, out);
	return out;
}

/* ---- arrows ------------------------------------------------------------- */

const char *const chart_style_names[CHART_NSTYLES] = {
	"fused faster", "fused within 2%", "fused slower",
};

enum chart_arrow_style chart_arrow_style(double speedup)
{
	if (!(speedup == speedup) || fabs(speedup - 1) <= CHART_EVEN_BAND)
		return CHART_EVEN;
	return speedup > 1 ? CHART_FASTER : CHART_SLOWER;
}

int chart_arrow_trim(double x0, double y0, double x1, double y1, double r0,
		     double r1, struct box *out)
{
	double dx = x1 - x0, dy = y1 - y0, len = hypot(dx, dy);
	double a = r0, b = r1 + 1;

	if (!(len - a - b >= CHART_MIN_ARROW))
		return -1;
	dx /= len;
	dy /= len;
	*out = (struct box){ x0 + a * dx, y0 + a * dy, x1 - b * dx, y1 - b * dy };
	return 0;
}

size_t chart_bundle(const struct chart_arrow *a, size_t n, struct chart_bundle *out)
{
	size_t nb = 0;

	for (size_t i = 0; i < n; i++) {
		size_t k;

		for (k = 0; k < nb; k++)
			if (!strcmp(out[k].dtype, a[i].dtype) &&
			    !strcmp(out[k].variant, a[i].variant))
				break;
		if (k == nb)
			out[nb++] = (struct chart_bundle){ a[i].dtype, a[i].variant, 0,
							   0, 0, 0, 0, 0 };
		/* Sums of logs now, means at the end. */
		out[k].n++;
		out[k].x0 += log(a[i].x0);
		out[k].y0 += log(a[i].y0);
		out[k].x1 += log(a[i].x1);
		out[k].y1 += log(a[i].y1);
		out[k].speedup += log(a[i].speedup);
	}
	for (size_t k = 0; k < nb; k++) {
		double m = (double)out[k].n;

		out[k].x0 = exp(out[k].x0 / m);
		out[k].y0 = exp(out[k].y0 / m);
		out[k].x1 = exp(out[k].x1 / m);
		out[k].y1 = exp(out[k].y1 / m);
		out[k].speedup = exp(out[k].speedup / m);
	}
	return nb;
}

/* ---- markers ------------------------------------------------------------ */

/* gnuplot's cairo point types: 7 circle, 5 square, 9 triangle, 11
 * inverted triangle, 13 diamond, 15 pentagon filled; one less is the same
 * shape open; 1 plus, 2 cross, 3 star. */
static const int fused_pts[] = { 7, 5, 9, 13 };
static const int unfused_pts[] = { 4, 8, 10, 12, 14, 6 };
static const int naive_pts[] = { 2, 3, 1 };

int chart_point_type(const char *role, int nth)
{
	if (nth < 0)
		nth = 0;
	if (!strcmp(role, "fused"))
		return fused_pts[nth % (int)ARRAY_SIZE(fused_pts)];
	if (!strcmp(role, "naive"))
		return naive_pts[nth % (int)ARRAY_SIZE(naive_pts)];
	return unfused_pts[nth % (int)ARRAY_SIZE(unfused_pts)];
}

int chart_level_point_type(int level, int fused)
{
	static const int shape[3] = { 7, 5, 9 };  /* circle, square, triangle */

	return shape[(level % 3 + 3) % 3] - !fused;
}

int chart_point_filled(int pt)
{
	return pt >= 5 && pt % 2 == 1;
}

/* ---- the speedup chart ------------------------------------------------- */

static int same_key(const struct chart_pair *a, const struct chart_pair *b, int level)
{
	return !strcmp(a->variant, b->variant) &&
	       (level >= 3 || !strcmp(a->workload, b->workload)) &&
	       (level >= 2 || !strcmp(a->dtype, b->dtype));
}

static void row_label(char *buf, size_t n, const struct chart_pair *p, int level,
		      size_t count)
{
	switch (level) {
	case 0:
		snprintf(buf, n, "%s %s %s vs %s", p->workload, p->dtype, p->shape,
			 p->variant);
		break;
	case 1:
		snprintf(buf, n, "%s %s vs %s (%zu shapes)", p->workload, p->dtype,
			 p->variant, count);
		break;
	case 2:
		snprintf(buf, n, "%s vs %s (%zu cases)", p->workload, p->variant, count);
		break;
	default:
		snprintf(buf, n, "fused vs %s (%zu cases)", p->variant, count);
		break;
	}
}

static size_t rows_at(const struct chart_pair *p, size_t n, int level,
		      struct chart_row *rows, const struct chart_pair **first)
{
	size_t nr = 0;
	size_t *npred = xcalloc(n + 1, sizeof *npred);

	for (size_t i = 0; i < n; i++) {
		size_t k = nr;

		if (!positive(p[i].speedup))
			continue;
		if (level > 0)
			for (k = 0; k < nr; k++)
				if (same_key(first[k], &p[i], level))
					break;
		if (k == nr) {
			first[nr] = &p[i];
			rows[nr++] = (struct chart_row){ .n = 0 };
		}
		rows[k].n++;
		rows[k].speedup += log(p[i].speedup);
		if (positive(p[i].predicted)) {
			rows[k].predicted += log(p[i].predicted);
			npred[k]++;
		}
	}
	for (size_t k = 0; k < nr; k++) {
		rows[k].speedup = exp(rows[k].speedup / (double)rows[k].n);
		rows[k].predicted = npred[k] ? exp(rows[k].predicted / (double)npred[k]) : NAN;
		row_label(rows[k].label, sizeof rows[k].label, first[k], level, rows[k].n);
	}
	free(npred);
	return nr;
}

size_t chart_fusion_rows(const struct chart_pair *p, size_t n, size_t max_rows,
			 struct chart_row **out, int *level)
{
	struct chart_row *rows = xcalloc(n + 1, sizeof *rows);
	const struct chart_pair **first = xcalloc(n + 1, sizeof *first);
	size_t nr = 0;

	/* The finest grouping that fits. */
	for (*level = 0; *level <= 3; (*level)++) {
		nr = rows_at(p, n, *level, rows, first);
		if (nr <= max_rows)
			break;
	}
	if (*level > 3)
		*level = 3;
	if (nr > max_rows)
		nr = max_rows;
	free(first);
	*out = rows;
	return nr;
}

void chart_speedup_axis(const struct chart_row *rows, size_t n, double *lo, double *hi)
{
	double a = 1, b = 1;

	for (size_t i = 0; i < n; i++) {
		double v[2] = { rows[i].speedup, rows[i].predicted };

		for (int k = 0; k < 2; k++)
			if (positive(v[k])) {
				a = fmin(a, v[k]);
				b = fmax(b, v[k]);
			}
	}
	/* A power of two past the extreme, with room for the value text. */
	*lo = fmin(0.5, pow(2, floor(log2(a) - 0.25)));
	*hi = fmax(2, pow(2, ceil(log2(b) + 0.25)));
}

size_t chart_tics(double lo, double hi, double *out, size_t max)
{
	static const double steps[3] = { 1, 2, 5 };
	size_t n = 0;

	if (!(lo > 0 && hi > lo) || hi / lo > 1e2 + 1e-9)
		return 0;
	for (int e = (int)floor(log10(lo)); e <= (int)ceil(log10(hi)); e++)
		for (int k = 0; k < 3; k++) {
			double v = steps[k] * pow(10, e);

			if (v >= lo && v <= hi && n < max)
				out[n++] = v;
		}
	return n;
}
