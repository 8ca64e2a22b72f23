/* plot.h - draws a run's rooflines and fusion bars: writes plain .dat files
 * and runs gnuplot once over plots/roofline.gp and plots/fusion.gp.
 *
 * The input is the plain rows below, which plots/ defines itself: it reads
 * no database and includes nothing from reports/, which fills these rows
 * from its own (reports/plot-input.h) and calls down into plots/. */
#ifndef FP_PLOT_H
#define FP_PLOT_H

#include <stddef.h>

/* A roof to draw. Strings are borrowed; none is NULL. */
struct plot_ceiling {
	const char *name;        /* "dram_bw", "l2_bw", "fp32_fma", ... */
	const char *unit;        /* "B/s" or "FLOP/s" */
	double value;            /* in unit */
	const char *provenance;  /* "measured" or "theoretical" */
};

/* One op. Strings are borrowed; none is NULL. Numbers the run does not
 * know are NaN (such an op is not drawn where it needs them). Units: ns,
 * bytes, FLOP/byte, FLOP/s. */
struct plot_op {
	long long op_id;
	const char *workload, *variant, *role, *dtype, *shape;
	const char *status;  /* only "ok" ops are drawn */
	double time_ns, dram_bytes;
	double ai_dram, ai_l2, ai_l1;
	double flop_rate;
	double dram_bw;  /* the DRAM roof of its read/write mix (B/s); NaN or
			  * 0: unknown, the run's dram_bw ceiling stands in */
	const char *precision;  /* the ceiling of its compute roof ("fp32_fma",
				 * "tensor_bf16", ...); "" when unknown */
	int group;       /* its GPU model among plot_data.groups; 0 when none */
};

/* A GPU model of a run on several models: its ops (plot_op.group) get
 * rooflines of their own under its roofs. Strings are borrowed. */
struct plot_group {
	const char *name;        /* the model, for titles and file names */
	int nceilings;
	const struct plot_ceiling *ceilings;
};

/* A fused op and another variant of its case: an arrow from base to fused,
 * and a bar of the speedup chart. */
struct plot_pair {
	long long fused_op_id, base_op_id;
	const char *workload, *base_role;
	const char *dtype, *shape, *base_variant;
	double speedup;    /* base time / fused time; NaN when unknown */
	double predicted;  /* the byte model's: base bytes / fused bytes; NaN */
};

/* The same op in a base run (`report --base`): where it was on the
 * roofline, for an arrow from there to the op of this run. */
struct plot_move {
	long long op_id;           /* the op of this run the arrow leads to */
	double ai_dram, flop_rate; /* the base run's op: FLOP/byte, FLOP/s */
};

/* Everything plot_run draws: one run's header, roofs, ops and pairs, and
 * the moves from a base run. */
struct plot_data {
	long long run_id;
	const char *started_at;  /* for titles */
	const char *device;      /* "" when unknown */
	int nceilings;
	const struct plot_ceiling *ceilings;
	size_t nops;
	const struct plot_op *ops;
	size_t npairs;
	const struct plot_pair *pairs;
	long long base_run_id;     /* the base run of the moves; 0: none */
	size_t nmoves;
	const struct plot_move *moves;
	int ngroups;               /* 2 or more: one set of rooflines a GPU
	                              model (roofline-MODEL*.png), each of its
	                              ops under its roofs; else 0 */
	const struct plot_group *groups;
};

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
	size_t nmoves;  /* arrows drawn from the base run: a move whose two
			 * points lie within a few pixels gets none */
};

/* The gnuplot program: $GNUPLOT when set and not empty, else the one
 * configure found (GNUPLOT_PATH). Never NULL. */
const char *plot_gnuplot(void);

/* The folder holding roofline.gp and fusion.gp: $FUSEPROF_DATADIR when
 * set, else the installed $(pkgdatadir) when it has them, else the source
 * tree's plots/ (an uninstalled build). Never NULL. */
const char *plot_scripts_dir(void);

/* Draw every plot of the run into o->dir in one gnuplot process (with
 * groups, the rooflines below once a group, named roofline-GROUP...): a
 * roofline of all ok ops (one point per op, arrows from each unfused or
 * naive variant to its fused one, styled by the measured speedup, bundled
 * above CHART_MAX_ARROWS), one per workload when there are many ops, each
 * zoomed to its ops and drawing the roofs they use (chart.h), the
 * hierarchical variant when asked, and the speedup chart (fusion.png).
 * Every chart that draws the fusion arrows also draws one arrow of its
 * own style from each move's base point to its op (when both are
 * plottable), zoomed to hold both ends, keyed "base run N -> run M". Ops whose
 * status is not "ok" are never drawn. Returns 0 with *out filled (release
 * with plot_images_release), also when gnuplot is missing: then out->skipped
 * says so and a warning was printed. Returns -1 after an error (a file
 * could not be written, gnuplot failed). */
int plot_run(const struct plot_data *run, const struct plot_opts *o,
	     struct plot_images *out);

void plot_images_release(struct plot_images *im);

#endif
