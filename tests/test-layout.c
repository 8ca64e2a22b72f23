/* test-layout.c - the chart geometry and label placement of plots/layout.c:
 * data <-> pixel round trips on log axes, text widths, labels that cover
 * no point, no line and no other label when there is room, and that stay
 * inside the plot area. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "layout.h"
#include "test.h"
#include "util.h"

static uint64_t state;

static double uniform(void)  /* xorshift64*, [0, 1) */
{
	state ^= state >> 12;
	state ^= state << 25;
	state ^= state >> 27;
	return (double)((state * 0x2545f4914f6cdd1dull) >> 11) * 0x1p-53;
}

static double area(struct box a, struct box b)
{
	double w = fmin(a.x1, b.x1) - fmax(a.x0, b.x0);
	double h = fmin(a.y1, b.y1) - fmax(a.y0, b.y0);

	return w > 0 && h > 0 ? w * h : 0;
}

int main(void)
{
	unsigned long long seed = (unsigned long long)time(NULL) ^ (unsigned long long)getpid();
	int width = 600 + (int)(seed % 800), height = 400 + (int)(seed % 500);
	double xmin = 0.01 + (double)(seed % 7), xmax = xmin * 1e5;
	double ymin = 1e9, ymax = 1e9 * pow(10, 3 + (double)(seed % 4));
	struct layout l;

	fprintf(stderr, "seed %llu, %dx%d\n", seed, width, height);
	state = seed | 1;
	layout_init(&l, width, height, 120, 130, 44, 80, xmin, xmax, ymin, ymax);

	/* The axes' ends land on the plot area's edges; data round-trips. */
	ASSERT(fabs(layout_px(&l, xmin) - 120) < 1e-9);
	ASSERT(fabs(layout_px(&l, xmax) - (width - 130)) < 1e-9);
	ASSERT(fabs(layout_py(&l, ymin) - (height - 80)) < 1e-9);
	ASSERT(fabs(layout_py(&l, ymax) - 44) < 1e-9);
	for (int i = 0; i < 1000; i++) {
		double x = xmin * pow(xmax / xmin, uniform());
		double y = ymin * pow(ymax / ymin, uniform());

		ASSERT(fabs(layout_x(&l, layout_px(&l, x)) / x - 1) < 1e-12);
		ASSERT(fabs(layout_y(&l, layout_py(&l, y)) / y - 1) < 1e-12);
	}

	/* Widths: a digit at 8 pt is 6.8 px; wider letters are wider. */
	ASSERT(fabs(layout_text_width("12", 8) - 13.6) < 1e-9);
	ASSERT(layout_text_width("WM", 10) > layout_text_width("il", 10));
	ASSERT(layout_text_width("", 10) == 0);

	/* Sparse points (30 px apart at least), one label each: every label
	 * is clear of every point, of the other labels and of the plot
	 * area's edges. */
	{
		struct obstacles obs = { 0 };
		struct box lab[40];
		double px[40], py[40];
		int n = 40;

		for (int i = 0; i < n; i++) {
			int far;

			do {
				px[i] = l.left + 20 + uniform() * (l.right - l.left - 40);
				py[i] = l.top + 20 + uniform() * (l.bottom - l.top - 40);
				far = 1;
				for (int j = 0; j < i; j++)
					far &= hypot(px[i] - px[j], py[i] - py[j]) >= 30;
			} while (!far);
			obstacles_add_point(&obs, px[i], py[i], 4.5);
		}
		for (int i = 0; i < n; i++) {
			char num[8];

			snprintf(num, sizeof num, "%d", i + 1);
			layout_place(&l, &obs, px[i], py[i], 4.5,
				     layout_text_width(num, 8) + 2, layout_text_height(8), &lab[i]);
		}
		for (int i = 0; i < n; i++) {
			ASSERT(lab[i].x0 >= l.left && lab[i].x1 <= l.right);
			ASSERT(lab[i].y0 >= l.top && lab[i].y1 <= l.bottom);
			/* Near its point: within three rings. */
			ASSERT(hypot((lab[i].x0 + lab[i].x1) / 2 - px[i],
				     (lab[i].y0 + lab[i].y1) / 2 - py[i]) < 60);
			for (int j = 0; j < n; j++) {
				struct box p = { px[j] - 4.5, py[j] - 4.5, px[j] + 4.5, py[j] + 4.5 };

				ASSERT(area(lab[i], p) == 0);
				if (j != i)
					ASSERT(area(lab[i], lab[j]) == 0);
			}
		}
		obstacles_release(&obs);
	}

	/* A line through the spot right of a point pushes its label off it. */
	{
		struct obstacles obs = { 0 };
		double x = (l.left + l.right) / 2, y = (l.top + l.bottom) / 2;
		struct box b, free_b;

		obstacles_add_point(&obs, x, y, 4.5);
		layout_place(&l, &obs, x, y, 4.5, 14, 10, &free_b);
		ASSERT(free_b.x0 > x);  /* right of the point when nothing is there */
		obstacles_release(&obs);
		obstacles_add_point(&obs, x, y, 4.5);
		obstacles_add_segment(&obs, x + 8, y - 30, x + 12, y + 30);
		layout_place(&l, &obs, x, y, 4.5, 14, 10, &b);
		ASSERT(b.x0 != free_b.x0 || b.y0 != free_b.y0);
		ASSERT(layout_overlap(&l, &obs, b) > 0);  /* itself, now an obstacle */
		obstacles_release(&obs);
	}

	/* A label is never put nearer another point than its own when it
	 * need not be: two points 14 px apart, the label of the left one. */
	{
		struct obstacles obs = { 0 };
		double x = (l.left + l.right) / 2, y = (l.top + l.bottom) / 2;
		struct box b;
		double cx, cy;

		obstacles_add_point(&obs, x, y, 4.5);
		obstacles_add_point(&obs, x + 14, y, 4.5);
		layout_place(&l, &obs, x, y, 4.5, 14, 10, &b);
		cx = (b.x0 + b.x1) / 2;
		cy = (b.y0 + b.y1) / 2;
		ASSERT(hypot(cx - x, cy - y) <= hypot(cx - x - 14, cy - y));
		obstacles_release(&obs);
	}
	return 0;
}
