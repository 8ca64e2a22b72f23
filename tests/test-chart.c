/* test-chart.c - what the charts show, decided from the data (plots/chart.c):
 * axis ranges zoomed to the points and the roof above them, the roofs a
 * chart draws (only those crossing its window and used by its ops: no
 * tensor-core roof on a softmax chart), arrow styles from the measured
 * speedup, arrows trimmed off the points, bundles, markers that tell
 * fused, unfused and naive apart, roof labels clear of points, and the
 * speedup chart's rows. Numbers, not pixels. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart.h"
#include "layout.h"
#include "test.h"
#include "util.h"

/* The H100 sample's ceilings. */
static const char *const names[] = { "dram_bw", "l2_bw", "fp32_fma", "fp64_fma",
				      "tensor_bf16", "tensor_tf32", "dram_read_bw" };
static const double values[] = { 2.79e12, 6.66e12, 58.9e12, 29.8e12, 775e12, 403e12,
				 3.05e12 };

static int has_roof(const struct chart_roof *r, size_t n, const char *label)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(r[i].def->label, label))
			return 1;
	return 0;
}

static double near(double a, double b)
{
	return fabs(a / b - 1) < 1e-9;
}

int main(void)
{
	struct chart_range r;

	/* Softmax-like: 4 points between 0.9 and 3.7 FLOP/B, 0.2 to 2.3
	 * TFLOP/s, under the DRAM roof. The window is their extent and the
	 * roof above them plus a margin, not 0.35-800 FLOP/B. */
	{
		double x[4] = { 0.86, 1.18, 2.2, 3.7 };
		double y[4] = { 0.2e12, 1.7e12, 2.3e12, 2.0e12 };
		double top[4];
		const char *prec[] = { "fp32_fma" };
		struct chart_roof roofs[16];
		size_t n;

		for (int i = 0; i < 4; i++)
			top[i] = fmin(values[0] * x[i], values[2]);
		ASSERT_EQ(chart_range(4, x, y, top, &r), 0);
		ASSERT(r.xmin < 0.86 && r.xmin > 0.3);
		ASSERT(r.xmax > 3.7 && r.xmax < 8);
		ASSERT(r.ymin < 0.2e12 && r.ymin > 0.05e12);
		ASSERT(r.ymax > top[3] && r.ymax < 30e12);
		/* The margin is CHART_MARGIN of the span on each side. */
		ASSERT(near(log10(0.86 / r.xmin), log10(r.xmax / 3.7)));
		n = chart_roofs(names, values, 7, prec, 1, &r, roofs);
		ASSERT(has_roof(roofs, n, "DRAM copy"));
		ASSERT(has_roof(roofs, n, "L2"));
		/* No compute roof crosses this window, least of all a tensor
		 * core's: no op here uses one. */
		ASSERT(!has_roof(roofs, n, "tensor bf16"));
		ASSERT(!has_roof(roofs, n, "tensor tf32"));
		ASSERT(!has_roof(roofs, n, "FP32 FMA"));
		ASSERT(!has_roof(roofs, n, "FP64 FMA"));
		/* Every roof drawn lies inside the window. */
		for (size_t i = 0; i < n; i++) {
			ASSERT(roofs[i].x0 >= r.xmin * (1 - 1e-9) && roofs[i].x1 <= r.xmax * (1 + 1e-9));
			ASSERT(roofs[i].y0 >= r.ymin * (1 - 1e-9) && roofs[i].y1 <= r.ymax * (1 + 1e-9));
		}
		/* The same window with tensor-core ops: still no tensor roof,
		 * since 775 TFLOP/s is outside it. */
		{
			const char *p2[] = { "fp32_fma", "tensor_bf16" };

			n = chart_roofs(names, values, 7, p2, 2, &r, roofs);
			ASSERT(!has_roof(roofs, n, "tensor bf16"));
		}
	}

	/* LayerNorm+Linear-like: bf16 ops on tensor cores up to 180 TFLOP/s
	 * at 500 FLOP/B, fp32 ones on FP32. The tensor bf16 roof is drawn,
	 * the tf32 one (no op uses it) and FP64 are not. */
	{
		double x[4] = { 115, 230, 510, 900 };
		double y[4] = { 8e12, 60e12, 180e12, 0.5e12 };
		const char *prec[] = { "fp32_fma", "tensor_bf16" };
		const char *pr[4] = { "fp32_fma", "tensor_bf16", "tensor_bf16", "fp32_fma" };
		double top[4];
		struct chart_roof roofs[16];
		size_t n;

		for (int i = 0; i < 4; i++)
			top[i] = fmin(values[0] * x[i], !strcmp(pr[i], "fp32_fma") ? values[2]
										 : values[4]);
		ASSERT_EQ(chart_range(4, x, y, top, &r), 0);
		ASSERT(r.ymax > 775e12 && r.ymax < 5e15);
		ASSERT(r.xmin > 30 && r.xmax < 3000);
		n = chart_roofs(names, values, 7, prec, 2, &r, roofs);
		ASSERT(has_roof(roofs, n, "tensor bf16"));
		ASSERT(has_roof(roofs, n, "FP32 FMA"));
		ASSERT(has_roof(roofs, n, "FP32 no FMA"));
		ASSERT(!has_roof(roofs, n, "tensor tf32"));
		ASSERT(!has_roof(roofs, n, "FP64 FMA"));
		ASSERT(has_roof(roofs, n, "DRAM copy"));
		ASSERT(has_roof(roofs, n, "DRAM read"));
		/* Each DRAM roof ends at the highest compute roof drawn, at its
		 * own ridge (775e12 / 2.79e12 FLOP/B for the copy, / 3.05e12
		 * for the read), and that compute roof begins at the ridge of
		 * the higher DRAM roof, the read's: no gap between them. */
		for (size_t i = 0; i < n; i++) {
			if (!strcmp(roofs[i].def->label, "DRAM copy"))
				ASSERT(near(roofs[i].x1, 775e12 / 2.79e12));
			if (!strcmp(roofs[i].def->label, "DRAM read"))
				ASSERT(near(roofs[i].x1, 775e12 / 3.05e12));
			if (!strcmp(roofs[i].def->label, "tensor bf16"))
				ASSERT(near(roofs[i].x0, 775e12 / 3.05e12));
		}

		/* Roof labels cover no point: place the points, then the
		 * labels, on a 1200 x 800 canvas. */
		{
			struct layout l;
			struct obstacles obs = { 0 };
			struct box lab[16];
			double px[4], py[4];

			layout_init(&l, 1200, 800, 120, 190, 44, 80, r.xmin, r.xmax, r.ymin,
				    r.ymax);
			for (int i = 0; i < 4; i++) {
				px[i] = layout_px(&l, x[i]);
				py[i] = layout_py(&l, y[i]);
				obstacles_add_point(&obs, px[i], py[i], 4.5);
			}
			for (size_t i = 0; i < n; i++)
				obstacles_add_segment(&obs, layout_px(&l, roofs[i].x0),
						      layout_py(&l, roofs[i].y0),
						      layout_px(&l, roofs[i].x1),
						      layout_py(&l, roofs[i].y1));
			for (size_t i = 0; i < n; i++) {
				int just;

				lab[i] = chart_roof_label(&l, &obs, &roofs[i],
							  "FP32 no FMA 29.5 TFLOP/s (fp32_fma/2, measured)",
							  9, &just);
				for (int k = 0; k < 4; k++)
					ASSERT(px[k] + 4.5 < lab[i].x0 || px[k] - 4.5 > lab[i].x1 ||
					       py[k] + 4.5 < lab[i].y0 || py[k] - 4.5 > lab[i].y1);
				for (size_t j = 0; j < i; j++)
					ASSERT(lab[j].x1 <= lab[i].x0 || lab[j].x0 >= lab[i].x1 ||
					       lab[j].y1 <= lab[i].y0 || lab[j].y0 >= lab[i].y1);
			}
			obstacles_release(&obs);
		}
	}

	/* A roof whose every spot crosses an arrow: its label crosses an
	 * arrow rather than cover the point beside the roof. */
	{
		struct chart_roof_def d = { "fp32_fma", "FP32 FMA", CHART_COMPUTE, 1, NULL,
					    "fp32_fma" };
		struct chart_roof roof = { &d, 1e13, 1, 1e13, 1000, 1e13 };
		struct obstacles obs = { 0 };
		struct layout l;
		struct box b;
		double ppx, ppy;
		int just;

		layout_init(&l, 800, 600, 100, 100, 40, 60, 1, 1000, 1e11, 1e15);
		for (double x = l.left + 20; x < l.right; x += 40)
			obstacles_add_segment(&obs, x, l.top, x + 5, l.bottom);
		ppx = layout_px(&l, 500);
		ppy = layout_py(&l, 1e13) - 8;
		obstacles_add_point(&obs, ppx, ppy, 4.5);
		b = chart_roof_label(&l, &obs, &roof, "FP32 FMA 10 TFLOP/s (measured)", 9, &just);
		ASSERT(ppx + 4.5 < b.x0 || ppx - 4.5 > b.x1 || ppy + 4.5 < b.y0 ||
		       ppy - 4.5 > b.y1);
		ASSERT(b.x0 >= l.left && b.x1 <= l.right && b.y0 >= l.top && b.y1 <= l.bottom);
		obstacles_release(&obs);
	}

	/* One point: at least a decade each way, centred on it. */
	{
		double x = 2, y = 1e12;

		ASSERT_EQ(chart_range(1, &x, &y, NULL, &r), 0);
		ASSERT(r.xmax / r.xmin >= 10 && near(sqrt(r.xmin * r.xmax), 2));
		ASSERT(r.ymax / r.ymin >= 10 && near(sqrt(r.ymin * r.ymax), 1e12));
	}
	/* Nothing plottable: no window. */
	{
		double x[2] = { NAN, 0 }, y[2] = { 1, 1 };

		ASSERT_EQ(chart_range(2, x, y, NULL, &r), -1);
	}

	/* Narrow axes get 1-2-5 tics, wide ones none (gnuplot's decades). */
	{
		double t[16];

		ASSERT_EQ(chart_tics(0.35, 4.3, t, 16), 3);
		ASSERT(t[0] == 0.5 && t[1] == 1 && t[2] == 2);
		ASSERT_EQ(chart_tics(0.3, 800, t, 16), 0);
	}

	/* Arrow styles from the measured speedup. */
	ASSERT_EQ(chart_arrow_style(2.3), CHART_FASTER);
	ASSERT_EQ(chart_arrow_style(1.03), CHART_FASTER);
	ASSERT_EQ(chart_arrow_style(1.01), CHART_EVEN);
	ASSERT_EQ(chart_arrow_style(0.99), CHART_EVEN);
	ASSERT_EQ(chart_arrow_style(0.6), CHART_SLOWER);
	ASSERT_EQ(chart_arrow_style(NAN), CHART_EVEN);

	/* Arrows stop short of the points: the head ends r1 + 1 px before
	 * the fused point's centre; points too close get no arrow. */
	{
		struct box t;

		ASSERT_EQ(chart_arrow_trim(0, 0, 100, 0, 5.5, 5.5, &t), 0);
		ASSERT(near(t.x0, 5.5) && near(t.x1, 100 - 6.5) && t.y0 == 0 && t.y1 == 0);
		ASSERT_EQ(chart_arrow_trim(0, 0, 30, 40, 5, 5, &t), 0);
		ASSERT(fabs(hypot(t.x1 - 30, t.y1 - 40) - 6) < 1e-9);
		ASSERT_EQ(chart_arrow_trim(0, 0, 12, 0, 5.5, 5.5, &t), -1);
	}

	/* Bundles: per dtype and variant, geometric means. */
	{
		struct chart_arrow a[4] = {
			{ "fp32", "unfused", 1, 1e12, 4, 4e12, 2 },
			{ "fp32", "unfused", 4, 4e12, 16, 16e12, 8 },
			{ "bf16", "unfused", 1, 1e12, 2, 2e12, 0.5 },
			{ "fp32", "naive", 1, 1, 1, 1, 100 },
		};
		struct chart_bundle b[4];

		ASSERT_EQ(chart_bundle(a, 4, b), 3);
		ASSERT(!strcmp(b[0].dtype, "fp32") && !strcmp(b[0].variant, "unfused"));
		ASSERT_EQ(b[0].n, 2);
		ASSERT(near(b[0].x0, 2) && near(b[0].x1, 8) && near(b[0].speedup, 4));
		ASSERT_EQ(chart_arrow_style(b[1].speedup), CHART_SLOWER);
	}

	/* Markers: fused filled, unfused open, naive crosses; the variants of
	 * a role differ from each other. */
	ASSERT(chart_point_filled(chart_point_type("fused", 0)));
	ASSERT(chart_point_filled(chart_point_type("fused", 1)));
	for (int i = 0; i < 4; i++) {
		int u = chart_point_type("unfused", i), n = chart_point_type("naive", i % 3);

		ASSERT(!chart_point_filled(u) && u >= 4);
		ASSERT(n <= 3 && !chart_point_filled(n));
		for (int j = 0; j < i; j++)
			ASSERT(chart_point_type("unfused", j) != u);
	}
	/* By level: the shape is the level, the fill says fused. */
	for (int lv = 0; lv < 3; lv++) {
		ASSERT(chart_point_filled(chart_level_point_type(lv, 1)));
		ASSERT(!chart_point_filled(chart_level_point_type(lv, 0)));
		ASSERT_EQ(chart_level_point_type(lv, 1) - 1, chart_level_point_type(lv, 0));
		for (int k = 0; k < lv; k++)
			ASSERT(chart_level_point_type(k, 1) != chart_level_point_type(lv, 1));
	}

	/* The speedup chart: one row per pair while they fit, then
	 * geometric means per workload, dtype and variant. */
	{
		struct chart_pair p[6] = {
			{ "softmax_fwd", "fp32", "M=1", "unfused4", 2, 4 },
			{ "softmax_fwd", "fp32", "M=2", "unfused4", 8, 4 },
			{ "softmax_fwd", "bf16", "M=1", "unfused4", 3, NAN },
			{ "ln_linear_fwd", "bf16", "M=1", "unfused", 0.5, 1.2 },
			{ "ln_linear_fwd", "bf16", "M=1", "naive", 100, 0.9 },
			{ "ln_linear_fwd", "bf16", "M=2", "naive", NAN, 0.9 },
		};
		struct chart_row *rows;
		double lo, hi;
		int level;
		size_t n;

		n = chart_fusion_rows(p, 6, 10, &rows, &level);
		ASSERT_EQ(n, 5);  /* the unmeasured pair is left out */
		ASSERT_EQ(level, 0);
		ASSERT(strstr(rows[0].label, "softmax_fwd fp32 M=1 vs unfused4"));
		ASSERT(rows[0].speedup == 2 && rows[0].predicted == 4);
		ASSERT(isnan(rows[2].predicted));
		chart_speedup_axis(rows, n, &lo, &hi);
		ASSERT(lo <= 0.5 / 1.18 && lo >= 0.125 && hi >= 100 * 1.18 && hi <= 512);
		free(rows);

		n = chart_fusion_rows(p, 6, 4, &rows, &level);
		ASSERT_EQ(level, 1);
		ASSERT_EQ(n, 4);
		ASSERT(near(rows[0].speedup, 4) && rows[0].n == 2 && near(rows[0].predicted, 4));
		free(rows);

		n = chart_fusion_rows(p, 6, 3, &rows, &level);
		ASSERT_EQ(level, 2);
		ASSERT_EQ(n, 3);
		ASSERT(near(rows[0].speedup, cbrt(2 * 8 * 3)));
		free(rows);
	}
	return 0;
}
