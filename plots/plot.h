/* plot.h - draws a run's rooflines and fusion bars: writes plain .dat files
 * and runs gnuplot once over plots/roofline.gp and plots/fusion.gp. */
#ifndef FP_PLOT_H
#define FP_PLOT_H

#include <stddef.h>

struct rf_run;
struct fu_pairs;

struct plot_opts {
	const char *dir;   /* output directory; must exist and be writable */
	int width, height; /* PNG size in pixels (SVG: the same, in points) */
	int svg;           /* 1: an SVG beside each PNG */
	int hierarchical;  /* 1: also each op at its DRAM, L2 and L1 intensity */
	int keep_data;     /* 1: leave the .dat files, plots.gp and the scripts */
};

/* One picture written: DIR/<stem>.png (and .svg). */
struct plot_image {
	char *stem;   /* "roofline", "roofline-softmax", "fusion" */
	char *title;  /* one line for the report */
};

struct plot_images {
	size_t n;
	struct plot_image *v;
	char *skipped;  /* why there are no plots, or NULL when there are */
};

/* The gnuplot program: $GNUPLOT when set and not empty, else the one
 * configure found (GNUPLOT_PATH). Never NULL. */
const char *plot_gnuplot(void);

/* The folder holding roofline.gp and fusion.gp: $FUSEPROF_DATADIR when
 * set, else the installed $(pkgdatadir) when it has them, else the source
 * tree's plots/ (an uninstalled build). Never NULL. */
const char *plot_scripts_dir(void);

/* Draw every plot of the run into o->dir in one gnuplot process: a
 * roofline of all ok ops (one point per op, arrows from each unfused or
 * naive variant to its fused one), one per workload when there are many
 * ops, the hierarchical variant when asked, and the fusion bars. Ops whose
 * status is not "ok" are never drawn. Returns 0 with *out filled (release
 * with plot_images_release), also when gnuplot is missing: then out->skipped
 * says so and a warning was printed. Returns -1 after an error (a file
 * could not be written, gnuplot failed). */
int plot_run(const struct rf_run *run, const struct fu_pairs *pairs,
	     const struct plot_opts *o, struct plot_images *out);

void plot_images_release(struct plot_images *im);

#endif
