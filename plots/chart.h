/* chart.h - what a chart shows, decided from the data alone: the axis
 * ranges of a roofline, the roofs it draws, the style of each fusion arrow,
 * the marker of each variant, when arrows are bundled, and the rows of the
 * speedup chart. Pure functions of plain numbers and strings, so a test can
 * call them without gnuplot and without pixels; plot.c writes what they
 * decide. */
#ifndef FP_CHART_H
#define FP_CHART_H

#include <stddef.h>

#include "layout.h"

/* ---- axis ranges ---- */

/* A chart's window, in data units (FLOP/byte, FLOP/s); all positive. */
struct chart_range {
	double xmin, xmax, ymin, ymax;
};

/* The window of a roofline over n points (x[i], y[i]) (FLOP/byte, FLOP/s;
 * NaN, infinite or non-positive ones are skipped) whose ceiling above them
 * is top[i] FLOP/s (the roof the point is measured against, min(bandwidth
 * x intensity, compute peak); NaN when unknown): the points and their
 * ceilings with a margin of CHART_MARGIN of the span on each side, and at
 * least CHART_MIN_DECADES decades on each axis, centred on the data.
 * Returns 0, or -1 with *r untouched when no point is plottable. */
#define CHART_MARGIN 0.1
#define CHART_MIN_DECADES 1.0
int chart_range(size_t n, const double *x, const double *y, const double *top,
		struct chart_range *r);

/* The tics of a log axis from lo to hi when it spans at most two decades
 * (gnuplot then labels too few): 1, 2, 5 times each power of ten inside,
 * into out (room for max). Returns the count; 0 for a wider axis, whose
 * decades gnuplot labels itself. */
size_t chart_tics(double lo, double hi, double *out, size_t max);

/* ---- roofs ---- */

enum chart_roof_kind { CHART_BANDWIDTH = 1, CHART_COMPUTE = 2 };

/* One roof fuseprof can draw: the ceiling it comes from and its label. */
struct chart_roof_def {
	const char *ceiling, *label;
	enum chart_roof_kind kind;
	double scale;      /* value = ceiling x scale */
	const char *note;  /* said in the label; NULL for none */
	const char *used_by;  /* compute roofs: the op precision (its compute
			       * ceiling) that makes the roof relevant */
};

extern const struct chart_roof_def chart_roof_defs[];
extern const size_t chart_nroof_defs;

/* A roof that a chart draws: its segment inside the window. */
struct chart_roof {
	const struct chart_roof_def *def;
	double value;           /* B/s or FLOP/s */
	double x0, y0, x1, y1;  /* the segment, data units */
};

/* Which roofs a chart draws, into out (room for chart_nroof_defs): each
 * roof whose ceiling is in names/values (nceil of them) and whose segment
 * crosses window r, where bandwidth roofs stop at the highest compute roof
 * that is drawn and compute roofs start at the DRAM ridge. A compute roof
 * is drawn only when one of the chart's ops uses it: precisions holds the
 * compute ceilings of those ops (nprec, "fp32_fma", "tensor_bf16", ...; an
 * fp32_fma op also uses the FP32-without-FMA roof). Returns the count. */
size_t chart_roofs(const char *const *names, const double *values, int nceil,
		   const char *const *precisions, size_t nprec,
		   const struct chart_range *r, struct chart_roof *out);

/* Where roof i's label goes on layout l: beside a bandwidth roof, over or
 * under a compute roof, the first spot along it that covers no box and no
 * segment of obs (points, arrows, other roofs, earlier labels) and stays
 * inside the plot area; when none is clear, the one that covers least,
 * where covering a point weighs more than anything else.
 * The box is added to obs. *just: 0 when the text starts at the box's left
 * edge, 1 when it ends at the right edge. */
struct box chart_roof_label(const struct layout *l, struct obstacles *obs,
			    const struct chart_roof *roof, const char *text, double pt,
			    int *just);

/* ---- arrows ---- */

/* How an arrow from another variant to the fused one is drawn, from the
 * measured speedup (other variant's time / fused time). */
enum chart_arrow_style {
	CHART_FASTER = 0,  /* fused is faster by more than CHART_EVEN_BAND */
	CHART_EVEN = 1,    /* within the band either way: measurement noise */
	CHART_SLOWER = 2,  /* fused is slower */
	CHART_NSTYLES = 3
};
#define CHART_EVEN_BAND 0.02
enum chart_arrow_style chart_arrow_style(double speedup);
extern const char *const chart_style_names[CHART_NSTYLES];

/* An arrow from (x0, y0) to (x1, y1) px trimmed so it starts r0 px and
 * its head ends r1 + 1 px short of the points' centres: a head never
 * covers the point it leads to. Returns 0 with the trimmed ends in *out
 * (x0, y0 -> x1, y1), or -1 when the points are too close for an arrow
 * (less than CHART_MIN_ARROW px would be left). */
#define CHART_MIN_ARROW 6.0
int chart_arrow_trim(double x0, double y0, double x1, double y1, double r0,
		     double r1, struct box *out);

/* Above this many arrows on one chart they are bundled (chart_bundle). */
#define CHART_MAX_ARROWS 40

/* A bundle of arrows: every pair of one dtype and one other variant,
 * drawn as one arrow between the geometric means of the two ends. */
struct chart_bundle {
	const char *dtype, *variant;  /* borrowed from the input */
	size_t n;
	double x0, y0, x1, y1;  /* geometric means, data units */
	double speedup;         /* geometric mean of the pairs' speedups */
};

/* An arrow as chart_bundle takes it. */
struct chart_arrow {
	const char *dtype, *variant;
	double x0, y0, x1, y1;
	double speedup;
};

/* Group n arrows by (dtype, variant) into out (room for n), in the order
 * the groups first appear. Returns the number of bundles. */
size_t chart_bundle(const struct chart_arrow *a, size_t n, struct chart_bundle *out);

/* ---- markers ---- */

/* The gnuplot point type of a variant of role `role` ("fused", "unfused",
 * "naive", anything else is treated like "unfused"), the nth (0-based) of
 * that role in the run: fused variants filled shapes, unfused ones open
 * shapes, naive ones crosses, so the three read apart at a glance. */
int chart_point_type(const char *role, int nth);

/* The point type of a point at memory level `level` (0 DRAM, 1 L2, 2 L1)
 * in the chart by level: the shape says the level, filled for a fused
 * variant, open for any other. */
int chart_level_point_type(int level, int fused);

/* 1 when point type pt is drawn filled. */
int chart_point_filled(int pt);

/* ---- the speedup chart ---- */

/* One pair as the speedup chart takes it: a fused op against another
 * variant of the same case. Strings are borrowed. */
struct chart_pair {
	const char *workload, *dtype, *shape, *variant;  /* variant: the other one */
	double speedup;    /* other's time / fused time; NaN unknown */
	double predicted;  /* the byte model's: other's bytes / fused bytes */
};

/* One bar of the speedup chart. */
struct chart_row {
	char label[192];
	size_t n;          /* pairs it stands for */
	double speedup;    /* geometric mean of the measured speedups */
	double predicted;  /* geometric mean of the predictions; NaN if none */
};

/* The rows of the speedup chart for n pairs, into *out (malloc'd; free
 * it): one per pair when they fit in max_rows, else the geometric means
 * per workload, dtype and variant, else per workload and variant, else
 * per variant; pairs without a measured speedup are left out. Returns the
 * number of rows (at most max_rows when max_rows is at least the number
 * of variants), and *level: 0 one per pair, 1, 2, 3 the groupings. */
size_t chart_fusion_rows(const struct chart_pair *p, size_t n, size_t max_rows,
			 struct chart_row **out, int *level);

/* The speedup axis for rows: [lo, hi] with lo <= 1 <= hi, powers of two
 * around every measured speedup and prediction, at least 0.5 to 2. */
void chart_speedup_axis(const struct chart_row *rows, size_t n, double *lo, double *hi);

#endif
