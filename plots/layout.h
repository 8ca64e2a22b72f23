/* layout.h - where a roofline chart's pieces land in pixels, and where its
 * labels go. The plot driver fixes gnuplot's margins, so it knows the pixel
 * of every point and can put each label where it covers no point, no roof
 * label and no other label, instead of letting labels pile up. */
#ifndef FP_LAYOUT_H
#define FP_LAYOUT_H

#include <stddef.h>

/* A log-log chart: the canvas, the plot area inside it, the axis ranges. */
struct layout {
	int width, height;                /* canvas, px */
	double left, right, top, bottom;  /* plot area edges, px from the top left */
	double lx0, lx1, ly0, ly1;        /* natural logs of the axis ranges */
};

/* A rectangle in px, y growing downwards; x0 < x1, y0 < y1. */
struct box {
	double x0, y0, x1, y1;
};

/* What a label must not cover: boxes (points, other labels) and line
 * segments (roofs, arrows), in px. A segment runs from (x0, y0) to
 * (x1, y1) in any direction. The points' centres are kept too: a label
 * nearer another point than its own would be read as that one's. */
struct obstacles {
	size_t n, alloc, nseg, segalloc, npt, ptalloc;
	struct box *v, *seg, *pt;
};

/* Set up l for a width x height canvas whose plot area leaves margins of
 * ml, mr, mt, mb px, over the data ranges [xmin, xmax] x [ymin, ymax]
 * (all positive, min < max). */
void layout_init(struct layout *l, int width, int height, double ml, double mr,
		 double mt, double mb, double xmin, double xmax, double ymin,
		 double ymax);

/* Data to px and back. */
double layout_px(const struct layout *l, double x);
double layout_py(const struct layout *l, double y);
double layout_x(const struct layout *l, double px);
double layout_y(const struct layout *l, double py);

/* The width in px of s drawn at pt points by gnuplot's cairo terminals
 * with their default font: an estimate from measured glyphs, a little wide
 * rather than narrow. */
double layout_text_width(const char *s, double pt);

/* The px height a line of text at pt points takes. */
double layout_text_height(double pt);

void obstacles_add_box(struct obstacles *o, struct box x);
/* A point drawn at (px, py) with radius r. */
void obstacles_add_point(struct obstacles *o, double px, double py, double r);
void obstacles_add_segment(struct obstacles *o, double x0, double y0, double x1,
			   double y1);
void obstacles_release(struct obstacles *o);

/* How much x collides: the area of x covered by each box of obs, half of
 * x's area for each segment crossing it, and the part of x outside the
 * plot area. 0: x is clear. */
double layout_overlap(const struct layout *l, const struct obstacles *obs, struct box x);

/* Place a w x h px label beside a point drawn at (px, py) with radius r px:
 * the first of the eight positions around it (right, left, above, below,
 * then the diagonals), on rings 1, 2 and 3 point widths out, that is clear
 * of obs, inside the plot area and no nearer to another point than to
 * this one; when none is, the one that collides least. *out gets the
 * label's box, which is added to obs. Returns the ring (1 is beside the
 * point: 2 and 3 want a leader line). */
int layout_place(const struct layout *l, struct obstacles *obs, double px, double py,
		 double r, double w, double h, struct box *out);

#endif
