/* layout.c - pixel geometry of a log-log chart and label placement. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "util.h"

void layout_init(struct layout *l, int width, int height, double ml, double mr,
		 double mt, double mb, double xmin, double xmax, double ymin,
		 double ymax)
{
	l->width = width;
	l->height = height;
	l->left = ml;
	l->right = width - mr;
	l->top = mt;
	l->bottom = height - mb;
	l->lx0 = log(xmin);
	l->lx1 = log(xmax);
	l->ly0 = log(ymin);
	l->ly1 = log(ymax);
}

double layout_px(const struct layout *l, double x)
{
	return l->left + (log(x) - l->lx0) / (l->lx1 - l->lx0) * (l->right - l->left);
}

double layout_py(const struct layout *l, double y)
{
	return l->bottom - (log(y) - l->ly0) / (l->ly1 - l->ly0) * (l->bottom - l->top);
}

double layout_x(const struct layout *l, double px)
{
	return exp(l->lx0 + (px - l->left) / (l->right - l->left) * (l->lx1 - l->lx0));
}

double layout_y(const struct layout *l, double py)
{
	return exp(l->ly0 + (l->bottom - py) / (l->bottom - l->top) * (l->ly1 - l->ly0));
}

/* Advance of ' ' to '~' in px per point of font size, measured on
 * pngcairo's default font (DejaVu Sans at 96 dpi: 0.85 px/pt for a digit). */
static const unsigned char advance[95] = {
	42, 53, 62, 112, 85, 127, 105, 38, 53, 53, 68, 112, 42, 47, 40, 45,
	85, 85, 85, 85, 85, 85, 85, 85, 85, 85, 45, 45, 112, 112, 112, 70,
	132, 90, 93, 93, 102, 85, 78, 102, 100, 40, 40, 88, 75, 115, 100, 105,
	80, 105, 93, 85, 82, 97, 90, 132, 93, 82, 93, 53, 45, 53, 112, 68,
	53, 82, 85, 72, 85, 82, 47, 85, 85, 38, 38, 78, 38, 130, 85, 82,
	85, 85, 55, 70, 53, 85, 80, 110, 80, 80, 70, 85, 45, 85, 112,
};

double layout_text_width(const char *s, double pt)
{
	double w = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p >= 0x80 && *p < 0xc0)
			continue;  /* UTF-8 continuation: counted with its lead byte */
		w += *p >= ' ' && *p <= '~' ? advance[*p - ' '] : 100;
	}
	return w / 100 * pt;
}

double layout_text_height(double pt)
{
	return 1.3 * pt;
}

static void push(struct box **v, size_t *n, size_t *alloc, struct box x)
{
	if (*n == *alloc) {
		*alloc = *alloc ? 2 * *alloc : 64;
		*v = xrealloc(*v, *alloc * sizeof **v);
	}
	(*v)[(*n)++] = x;
}

void obstacles_add_box(struct obstacles *o, struct box x)
{
	push(&o->v, &o->n, &o->alloc, x);
}

void obstacles_add_point(struct obstacles *o, double px, double py, double r)
{
	push(&o->v, &o->n, &o->alloc, (struct box){ px - r, py - r, px + r, py + r });
	push(&o->pt, &o->npt, &o->ptalloc, (struct box){ px, py, px, py });
}

void obstacles_add_segment(struct obstacles *o, double x0, double y0, double x1,
			   double y1)
{
	push(&o->seg, &o->nseg, &o->segalloc, (struct box){ x0, y0, x1, y1 });
}

void obstacles_release(struct obstacles *o)
{
	free(o->v);
	free(o->seg);
	free(o->pt);
	memset(o, 0, sizeof *o);
}

/* Does the segment s cross box b? Liang-Barsky: clip the segment's
 * parameter range [0, 1] by each of the box's four sides. */
static int crosses(struct box s, struct box b)
{
	double dx = s.x1 - s.x0, dy = s.y1 - s.y0, t0 = 0, t1 = 1;
	double p[4] = { -dx, dx, -dy, dy };
	double q[4] = { s.x0 - b.x0, b.x1 - s.x0, s.y0 - b.y0, b.y1 - s.y0 };

	for (int i = 0; i < 4; i++) {
		if (p[i] == 0) {
			if (q[i] < 0)
				return 0;
			continue;
		}
		double t = q[i] / p[i];

		if (p[i] < 0)
			t0 = fmax(t0, t);
		else
			t1 = fmin(t1, t);
		if (t0 > t1)
			return 0;
	}
	return 1;
}

static double overlap(struct box a, struct box b)
{
	double w = fmin(a.x1, b.x1) - fmax(a.x0, b.x0);
	double h = fmin(a.y1, b.y1) - fmax(a.y0, b.y0);

	return w > 0 && h > 0 ? w * h : 0;
}

double layout_overlap(const struct layout *l, const struct obstacles *obs, struct box x)
{
	struct box area = { l->left, l->top, l->right, l->bottom };
	double size = (x.x1 - x.x0) * (x.y1 - x.y0), a = size - overlap(x, area);

	for (size_t i = 0; i < obs->n; i++)
		a += overlap(x, obs->v[i]);
	for (size_t i = 0; i < obs->nseg; i++)
		if (crosses(obs->seg[i], x))
			a += size / 2;
	return a;
}

int layout_place(const struct layout *l, struct obstacles *obs, double px, double py,
		 double r, double w, double h, struct box *out)
{
	/* Directions in the order tried: right reads best next to a point. */
	static const double dir[8][2] = {
		{ 1, 0 }, { -1, 0 }, { 0, -1 }, { 0, 1 },
		{ 1, -1 }, { -1, -1 }, { 1, 1 }, { -1, 1 },
	};
	double best = INFINITY;
	int best_ring = 1;

	for (int ring = 1; ring <= 3 && best > 0; ring++) {
		/* The gap between the point's edge and the label grows with the
		 * ring; ring 1 leaves 2 px. */
		double d = r + 2 + (ring - 1) * 2.5 * r;

		for (int k = 0; k < 8; k++) {
			double cx = px + dir[k][0] * (d + w / 2);
			double cy = py + dir[k][1] * (d + h / 2);
			struct box b = { cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2 };
			double o = layout_overlap(l, obs, b);
			double own = hypot(cx - px, cy - py);

			/* Nearer another point: worse than a clear spot, better
			 * than covering anything. */
			for (size_t i = 0; o == 0 && i < obs->npt; i++)
				if (hypot(cx - obs->pt[i].x0, cy - obs->pt[i].y0) < own - 1)
					o = 1e-3;

			if (o < best) {
				best = o;
				best_ring = ring;
				*out = b;
				if (o == 0)
					break;
			}
		}
	}
	obstacles_add_box(obs, *out);
	return best_ring;
}
