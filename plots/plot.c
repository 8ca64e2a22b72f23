/* plot.c - the plot driver: turns a run's roofline and fusion numbers into
 * plain .dat files and one command file, then runs gnuplot once over the
 * scripts in plots/, so 10,000 ops cost one process, not one per op. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "layout.h"
#include "plot.h"
#include "util.h"

#ifndef FP_PKGDATADIR
#define FP_PKGDATADIR "/usr/local/share/fuseprof"
#endif
#ifndef FP_SRCPLOTSDIR
#define FP_SRCPLOTSDIR "plots"
#endif

/* Above MANY_OPS ok ops, a run with several workloads also gets one
 * chart per workload, with the arrows and labels the overview then leaves
 * out. */
#define MANY_OPS 24
/* Above this many groups the fusion chart drops its group names. */
#define MAX_GROUP_TICS 60

/* gnuplot point types for markers 1, 2, ...: filled shapes first. Written
 * into each point's data line and, as `marker_pts`, into the script for the
 * key: a per-point function call in gnuplot cost a fifth of a 10,000-op
 * chart's time. */
static const int point_types[] = { 7, 5, 9, 11, 13, 15, 4, 6, 8, 10, 12, 14 };

static int point_type(int marker)
{
	return point_types[(marker - 1) % (int)ARRAY_SIZE(point_types)];
}

const char *plot_gnuplot(void)
{
	const char *g = getenv("GNUPLOT");

	return g && *g ? g : GNUPLOT_PATH;
}

static int has_scripts(const char *dir)
{
	char *p = xasprintf("%s/roofline.gp", dir);
	int ok = access(p, R_OK) == 0;

	free(p);
	return ok;
}

const char *plot_scripts_dir(void)
{
	static char abs[PATH_MAX];
	const char *d = getenv("FUSEPROF_DATADIR");

	if (!d || !*d)
		d = has_scripts(FP_PKGDATADIR) ? FP_PKGDATADIR : FP_SRCPLOTSDIR;
	/* gnuplot runs in the output folder, so a relative folder given in
	 * $FUSEPROF_DATADIR would name the wrong place there. */
	if (d[0] != '/' && realpath(d, abs))
		return abs;
	return d;
}

/* 1 when prog names an executable file, directly or through $PATH. */
static int program_exists(const char *prog)
{
	const char *path = getenv("PATH");
	int found = 0;

	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0;
	if (!path)
		path = "/usr/bin:/bin";
	while (!found && *path) {
		size_t n = strcspn(path, ":");
		char *p = xasprintf("%.*s/%s", (int)n, n ? path : ".", prog);

		found = access(p, X_OK) == 0;
		free(p);
		path += n + (path[n] == ':');
	}
	return found;
}

/* "3.00 T" style: three significant digits and an SI prefix. */
static void si(char *buf, size_t n, double v, const char *unit)
{
	static const char prefix[] = " kMGTPE";
	int i = 0;

	while (fabs(v) >= 1000 && i < 6) {
		v /= 1000;
		i++;
	}
	snprintf(buf, n, "%.3g %s%s", v, i ? (char[]){ prefix[i], 0 } : "", unit);
}

/* Keep names safe inside gnuplot strings and file names. */
static void sanitize(char *dst, size_t n, const char *src, int for_file)
{
	size_t i = 0;

	for (; *src && i + 1 < n; src++) {
		char c = *src;

		if (for_file && !(c == '-' || c == '_' || c == '.' ||
				  (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
				  (c >= 'A' && c <= 'Z')))
			c = '_';
		else if (c == '"' || c == '\'' || c == '\\' || c == '\n')
			c = '_';
		dst[i++] = c;
	}
	dst[i] = 0;
}

/* ---- the data the charts share --------------------------------------- */

struct names {
	int n;
	const char **v;
};

static int name_index(struct names *nm, const char *s, int add)
{
	for (int i = 0; i < nm->n; i++)
		if (!strcmp(nm->v[i], s))
			return i + 1;
	if (!add)
		return 0;
	nm->v = xrealloc(nm->v, (size_t)(nm->n + 1) * sizeof *nm->v);
	nm->v[nm->n++] = s;
	return nm->n;
}

static void names_gp(struct strbuf *sb, const char *var, const struct names *nm)
{
	char buf[128];

	strbuf_addf(sb, "%s = \"", var);
	for (int i = 0; i < nm->n; i++) {
		sanitize(buf, sizeof buf, nm->v[i], 1);
		strbuf_addf(sb, "%s%s", i ? " " : "", buf);
	}
	strbuf_addstr(sb, "\"\n");
}

/* The run's ceiling called name, or NULL. */
static const struct plot_ceiling *ceiling(const struct plot_data *run, const char *name)
{
	for (int i = 0; i < run->nceilings; i++)
		if (!strcmp(run->ceilings[i].name, name))
			return &run->ceilings[i];
	return NULL;
}

static int role_rank(const char *role)
{
	return !strcmp(role, "fused") ? 0 : !strcmp(role, "unfused") ? 1 : 2;
}

struct ctx {
	const struct plot_data *run;
	const struct plot_opts *o;
	struct names workloads, variants;
	const struct plot_op **byid;  /* ok ops sorted by id, for arrows */
	size_t nbyid;
	struct strbuf cmds;           /* plots.gp */
	char **files;                 /* data files written, to remove */
	size_t nfiles;
	struct plot_images *out;
	double peak_top;              /* highest compute ceiling, NaN if none */
};

static int cmp_op_id(const void *a, const void *b)
{
	long long x = (*(const struct plot_op *const *)a)->op_id;
	long long y = (*(const struct plot_op *const *)b)->op_id;

	return (x > y) - (x < y);
}

static const struct plot_op *find_op(const struct ctx *c, long long id)
{
	size_t lo = 0, hi = c->nbyid;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c->byid[mid]->op_id < id)
			lo = mid + 1;
		else if (c->byid[mid]->op_id > id)
			hi = mid;
		else
			return c->byid[mid];
	}
	return NULL;
}

/* v as "%.6g" into buf (FMT_G_SIZE bytes): tens of thousands of data
 * lines are written per report, and fmt_g is much cheaper than printf. */
static const char *g6(char *buf, double v)
{
	fmt_g(buf, v, 6);
	return buf;
}

static int plottable(double x, double y)
{
	return isfinite(x) && isfinite(y) && x > 0 && y > 0;
}

static FILE *open_data(struct ctx *c, const char *name)
{
	char *path = xasprintf("%s/%s", c->o->dir, name);
	FILE *f = fopen(path, "w");

	if (!f) {
		error("cannot write '%s': %s", path, strerror(errno));
		free(path);
		return NULL;
	}
	c->files = xrealloc(c->files, (c->nfiles + 1) * sizeof *c->files);
	c->files[c->nfiles++] = path;
	return f;
}

static int close_data(FILE *f, const char *name)
{
	if (ferror(f) | fclose(f))
		return error("cannot write '%s': %s", name, strerror(errno));
	return 0;
}

static void add_image(struct ctx *c, const char *stem, const char *title)
{
	struct plot_images *im = c->out;

	im->v = xrealloc(im->v, (im->n + 1) * sizeof *im->v);
	im->v[im->n].stem = xstrdup(stem);
	im->v[im->n].title = xstrdup(title);
	im->n++;
}

static void gp_string(struct strbuf *sb, const char *var, const char *val)
{
	char buf[512];

	sanitize(buf, sizeof buf, val, 0);
	strbuf_addf(sb, "%s = '%s'\n", var, buf);
}

static void gp_common(struct ctx *c, const char *stem, const char *title)
{
	strbuf_addstr(&c->cmds, "reset\n");
	gp_string(&c->cmds, "out", stem);
	gp_string(&c->cmds, "chart_title", title);
	strbuf_addf(&c->cmds, "width = %d\nheight = %d\nsvg = %d\n",
		    c->o->width, c->o->height, c->o->svg);
}

static const char *script_ref(const struct ctx *c, const char *name)
{
	static char buf[4096];

	/* Kept data comes with its own copy of the scripts, so the folder
	 * can be redrawn (and restyled) on its own. */
	if (c->o->keep_data)
		snprintf(buf, sizeof buf, "%s", name);
	else
		snprintf(buf, sizeof buf, "%s/%s", plot_scripts_dir(), name);
	return buf;
}

/* ---- roofline charts --------------------------------------------------- */

/* The plot area's margins, px. They are fixed rather than gnuplot's own,
 * which follow the tic labels, because the labels are placed knowing where
 * each point lands. The right margin holds the key and is sized to it. */
#define MARGIN_LEFT 120
#define MARGIN_TOP 44
#define MARGIN_BOTTOM 52
/* pt 7 at ps 1.1 covers 9 x 9 px. */
#define POINT_R 4.5
/* Font sizes (points) of the numbers beside the points, the roof labels
 * and the table of what the numbers stand for. */
#define LABEL_PT 8
#define ROOF_PT 9
#define KEY_PT 9
#define KEY_ROW 14
/* The key's first row, px under the plot area: below the axis label. */
#define KEY_TOP 60
/* Above this many groups (workload, dtype, shape), or this many labelled
 * points, a chart has no labels. */
#define MAX_GROUPS 30
#define MAX_ANCHORS 60

struct roof {
	const char *ceiling, *label;
	int kind;       /* 1 bandwidth, 2 compute */
	double scale;   /* value = ceiling x scale */
	const char *note;
};

static const struct roof roofs[] = {
	{ "dram_bw", "DRAM", 1, 1, NULL },
	{ "l2_bw", "L2", 1, 1, NULL },
	{ "tensor_bf16", "tensor bf16", 2, 1, NULL },
	{ "tensor_tf32", "tensor tf32", 2, 1, NULL },
	{ "fp32_fma", "FP32 FMA", 2, 1, NULL },
	{ "fp32_fma", "FP32 no FMA", 2, 0.5, "fp32_fma/2, " },
	{ "fp64_fma", "FP64 FMA", 2, 1, NULL },
};

/* Where a roof's label goes: beside a bandwidth roof (below and right of
 * a point on it, or above and left: either way clear of the rising line),
 * over or under a compute roof near its right end; the first spot that
 * covers no point and no label placed before. *just: 0 left-aligned at
 * the box's left edge, 1 right-aligned at its right edge. */
static struct box roof_label(const struct layout *l, struct obstacles *obs, int kind,
			     double x0, double y0, double x1, double y1,
			     const char *text, int *just)
{
	double w = layout_text_width(text, ROOF_PT), h = layout_text_height(ROOF_PT);
	double p0x = layout_px(l, x0), p0y = layout_py(l, y0);
	double p1x = layout_px(l, x1), p1y = layout_py(l, y1);
	double best = INFINITY;
	struct box out = { 0, 0, 0, 0 };

	*just = 0;
	if (kind == 1) {
		static const double at[] = { 0.05, 0.15, 0.3, 0.45, 0.6, 0.75 };

		for (size_t i = 0; i < ARRAY_SIZE(at) && best > 0; i++) {
			double ax = p0x + at[i] * (p1x - p0x), ay = p0y + at[i] * (p1y - p0y);
			struct box b[2] = {
				{ ax + 6, ay + 4, ax + 6 + w, ay + 4 + h },
				{ ax - 6 - w, ay - 4 - h, ax - 6, ay - 4 },
			};

			for (int k = 0; k < 2 && best > 0; k++) {
				double o = layout_overlap(l, obs, b[k]);

				if (o < best) {
					best = o;
					out = b[k];
					*just = k;
				}
			}
		}
	} else {
		*just = 1;
		for (double shift = 0; best > 0 && p1x - 4 - shift - w >= p0x - w / 2;
		     shift += w / 2) {
			struct box b[2] = {
				{ p1x - 4 - shift - w, p1y - 3 - h, p1x - 4 - shift, p1y - 3 },
				{ p1x - 4 - shift - w, p1y + 3, p1x - 4 - shift, p1y + 3 + h },
			};

			for (int k = 0; k < 2 && best > 0; k++) {
				double o = layout_overlap(l, obs, b[k]);

				if (o < best) {
					best = o;
					out = b[k];
				}
			}
		}
		if (isinf(best))  /* a roof too short for any spot: at its end */
			out = (struct box){ p1x - 4 - w, p1y - 3 - h, p1x - 4, p1y - 3 };
	}
	obstacles_add_box(obs, out);
	return out;
}

/* Roof segments between the axis limits, and their labels, which keep
 * clear of every roof line and of what obs holds already. */
static void write_roofs(struct ctx *c, FILE *f, const struct layout *l,
			struct obstacles *obs, double xmin, double xmax, double ymin)
{
	const struct plot_ceiling *dram = ceiling(c->run, "dram_bw");
	struct {
		const struct roof *r;
		const struct plot_ceiling *ce;
		double x0, y0, x1, y1;
	} seg[ARRAY_SIZE(roofs)];
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(roofs); i++) {
		const struct roof *r = &roofs[i];
		const struct plot_ceiling *ce = ceiling(c->run, r->ceiling);
		double v, x0, y0, x1, y1;

		if (!ce)
			continue;
		v = ce->value * r->scale;
		if (r->kind == 1) {
			x0 = fmax(xmin, ymin / v);
			x1 = isnan(c->peak_top) ? xmax : fmin(xmax, c->peak_top / v);
			y0 = x0 * v;
			y1 = x1 * v;
		} else {
			x0 = dram ? fmax(xmin, v / dram->value) : xmin;
			x1 = xmax;
			y0 = y1 = v;
		}
		if (x0 >= x1)
			continue;
		seg[n].r = r;
		seg[n].ce = ce;
		seg[n].x0 = x0;
		seg[n].y0 = y0;
		seg[n].x1 = x1;
		seg[n].y1 = y1;
		obstacles_add_segment(obs, layout_px(l, x0), layout_py(l, y0),
				      layout_px(l, x1), layout_py(l, y1));
		n++;
	}
	for (size_t i = 0; i < n; i++) {
		const struct roof *r = seg[i].r;
		char val[48], text[256];
		struct box b;
		int just;

		si(val, sizeof val, seg[i].ce->value * r->scale, r->kind == 1 ? "B/s" : "FLOP/s");
		snprintf(text, sizeof text, "%s %s (%s%s)", r->label, val,
			 r->note ? r->note : "", seg[i].ce->provenance);
		b = roof_label(l, obs, r->kind, seg[i].x0, seg[i].y0, seg[i].x1, seg[i].y1,
			       text, &just);
		fprintf(f, "%.6g %.6g %.6g %.6g %d %.6g %.6g \"%s\" %d\n", seg[i].x0,
			seg[i].y0, seg[i].x1, seg[i].y1, r->kind,
			layout_x(l, just ? b.x1 : b.x0), layout_y(l, (b.y0 + b.y1) / 2),
			text, just);
	}
}

struct range {
	double xlo, xhi, ylo, yhi;
};

static void range_add(struct range *r, double x, double y)
{
	if (!plottable(x, y))
		return;
	r->xlo = fmin(r->xlo, x);
	r->xhi = fmax(r->xhi, x);
	r->ylo = fmin(r->ylo, y);
	r->yhi = fmax(r->yhi, y);
}

/* The ops of one chart: ok, of `workload` when not NULL, and plottable at
 * their DRAM intensity. */
static int in_chart(const struct plot_op *op, const char *workload)
{
	return !strcmp(op->status, "ok") && (!workload || !strcmp(op->workload, workload)) &&
	       plottable(op->ai_dram, op->flop_rate);
}

/* Groups of ops that share workload, dtype and shape: the number a chart
 * prints beside a group's points, explained under the chart. */
struct groups {
	size_t n;
	const struct plot_op *first[MAX_GROUPS + 1];
};

/* The 1-based number of op's group, numbered in the order the groups
 * first appear; 0 when it is not in g and add is 0, or g is full (more
 * than MAX_GROUPS: no labels). */
static int group_of(struct groups *g, const struct plot_op *op, int add)
{
	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(g->first[i]->shape, op->shape) &&
		    !strcmp(g->first[i]->dtype, op->dtype) &&
		    !strcmp(g->first[i]->workload, op->workload))
			return (int)i + 1;
	if (!add || g->n == ARRAY_SIZE(g->first))
		return 0;
	g->first[g->n++] = op;
	return (int)g->n;
}

/* The longest name of the key beside the chart, for its margin. */
static double key_width(const struct ctx *c, const struct names *markers,
			int wfrom, int wto)
{
	char buf[128];
	double w = 0;

	for (int i = wfrom; i <= wto; i++) {
		sanitize(buf, sizeof buf, c->workloads.v[i - 1], 1);
		w = fmax(w, layout_text_width(buf, 10));
	}
	for (int i = 0; i < markers->n; i++) {
		sanitize(buf, sizeof buf, markers->v[i], 1);
		w = fmax(w, layout_text_width(buf, 10));
	}
	return w;
}

/* The numbers beside the points and, under the chart, what each stands
 * for: one per group, at each of its points that is not the start of an
 * arrow (the arrows lead to the labelled fused point). */
static void write_labels(struct ctx *c, const char *workload, int levels,
			 const struct layout *l, struct obstacles *obs, const char *tails,
			 struct groups *g, FILE *fl, FILE *fk, double key_numw,
			 double key_colw, int key_rows)
{
	const struct plot_data *run = c->run;
	char num[16], xs[FMT_G_SIZE], ys[FMT_G_SIZE], text[512], buf[512];

	for (size_t i = 0; i < run->nops; i++) {
		const struct plot_op *op = &run->ops[i];
		double px, py, w, h = layout_text_height(LABEL_PT);
		struct box b;
		int n;

		if (!in_chart(op, workload) || (!levels && tails[i]))
			continue;
		n = group_of(g, op, 0);
		snprintf(num, sizeof num, "%d", n);
		px = layout_px(l, op->ai_dram);
		py = layout_py(l, op->flop_rate);
		w = layout_text_width(num, LABEL_PT) + 2;
		if (layout_place(l, obs, px, py, POINT_R, w, h, &b) == 1) {
			fprintf(fl, "%s %s \"%s\" NaN NaN NaN NaN\n",
				g6(xs, layout_x(l, (b.x0 + b.x1) / 2)),
				g6(ys, layout_y(l, (b.y0 + b.y1) / 2)), num);
		} else {
			/* A leader from the point's edge to the nearest edge of
			 * the label. */
			double bx = fmin(fmax(px, b.x0), b.x1), by = fmin(fmax(py, b.y0), b.y1);
			double d = hypot(bx - px, by - py);
			double ax = px + (bx - px) * POINT_R / d, ay = py + (by - py) * POINT_R / d;
			char s[4][FMT_G_SIZE];

			fprintf(fl, "%s %s \"%s\" %s %s %s %s\n",
				g6(xs, layout_x(l, (b.x0 + b.x1) / 2)),
				g6(ys, layout_y(l, (b.y0 + b.y1) / 2)), num,
				g6(s[0], layout_x(l, ax)), g6(s[1], layout_y(l, ay)),
				g6(s[2], layout_x(l, bx)), g6(s[3], layout_y(l, by)));
		}
	}
	for (size_t i = 0; i < g->n; i++) {
		const struct plot_op *op = g->first[i];
		int col = (int)i / key_rows, row = (int)i % key_rows;
		double x = l->left + col * key_colw;
		double y = l->height - (l->bottom + KEY_TOP + row * KEY_ROW);

		if (workload)
			snprintf(buf, sizeof buf, "%s %s", op->dtype, op->shape);
		else
			snprintf(buf, sizeof buf, "%s %s %s", op->workload, op->dtype, op->shape);
		sanitize(text, sizeof text, buf, 0);
		fprintf(fk, "%.1f %.1f \"%zu\" %.1f \"%s\"\n", x + key_numw, y, i + 1,
			x + key_numw + 6, text);
	}
}

/* One roofline chart of the ok ops of `workload` (NULL: all). levels: each
 * op at three intensities (marker = level) instead of one (marker =
 * variant). arrows: draw unfused -> fused arrows. Returns 0 (also when
 * there was nothing to draw), -1 on error. */
static int roofline_chart(struct ctx *c, const char *workload, int levels,
			  int arrows)
{
	char stem[160], title[512], wsafe[128] = "";
	const struct plot_data *run = c->run;
	struct range rg = { INFINITY, -INFINITY, INFINITY, -INFINITY };
	FILE *fp = NULL, *fa = NULL, *fr = NULL, *fl = NULL, *flab = NULL, *fk = NULL;
	size_t npoints = 0, narrows = 0, nanchors = 0;
	int widx = 0, wfrom, wto, rc = -1, labels, key_rows = 0, key_cols = 1;
	char pname[200], aname[200], rname[200], lname[200], labname[200], kname[200];
	char xs[FMT_G_SIZE], ys[FMT_G_SIZE], dxs[FMT_G_SIZE], dys[FMT_G_SIZE];
	double key_numw = 0, key_colw = 0, mb = MARGIN_BOTTOM, mr;
	struct groups groups = { 0 };
	struct obstacles obs = { 0 };
	struct names level_names = { 3, (const char *[]){ "DRAM", "L2", "L1" } };
	char *tails = xcalloc(run->nops + 1, 1);
	struct layout l;

	if (workload) {
		sanitize(wsafe, sizeof wsafe, workload, 1);
		widx = name_index(&c->workloads, workload, 0);
	}
	wfrom = workload ? widx : 1;
	wto = workload ? widx : c->workloads.n;
	snprintf(stem, sizeof stem, "roofline%s%s%s", levels ? "-levels" : "",
		 workload ? "-" : "", wsafe);
	/* First the extent of the chart and its groups: the labels need the
	 * axes before the first point is written. */
	for (size_t i = 0; i < run->nops; i++) {
		const struct plot_op *op = &run->ops[i];
		double ai[3] = { op->ai_dram, op->ai_l2, op->ai_l1 };

		if (!in_chart(op, workload))
			continue;
		npoints++;
		for (int lv = 0; lv < (levels ? 3 : 1); lv++)
			range_add(&rg, ai[lv], op->flop_rate);
		group_of(&groups, op, 1);
	}
	if (npoints == 0) {
		rc = 0;
		goto out;
	}
	/* Arrows only on the plain chart: at three levels they would cross. */
	for (size_t i = 0; arrows && !levels && i < c->run->npairs; i++) {
		const struct plot_pair *p = &c->run->pairs[i];
		const struct plot_op *f, *b;

		if (!strcmp(p->base_role, "fused") || (workload && strcmp(p->workload, workload)))
			continue;
		f = find_op(c, p->fused_op_id);
		b = find_op(c, p->base_op_id);
		if (f && b && plottable(f->ai_dram, f->flop_rate) &&
		    plottable(b->ai_dram, b->flop_rate))
			tails[b - run->ops] = 1;
	}
	for (size_t i = 0; i < run->nops; i++)
		nanchors += in_chart(&run->ops[i], workload) && !tails[i];
	/* The ridge points belong in view as much as the ops do. */
	for (int i = 0; i < run->nceilings; i++) {
		const struct plot_ceiling *ce = &run->ceilings[i];
		const struct plot_ceiling *dram = ceiling(run, "dram_bw");

		if (!strcmp(ce->unit, "FLOP/s")) {
			rg.yhi = fmax(rg.yhi, ce->value);
			if (dram)
				rg.xhi = fmax(rg.xhi, ce->value / dram->value);
		}
	}
	/* The overview of many ops has neither arrows nor labels: the chart
	 * of each workload has them. */
	labels = groups.n <= MAX_GROUPS && nanchors <= MAX_ANCHORS && (arrows || levels);
	if (labels) {
		/* What the numbers stand for, in as many columns as fit. */
		double tw = 0;
		char buf[512];

		key_numw = layout_text_width("00", KEY_PT);
		for (size_t i = 0; i < groups.n; i++) {
			const struct plot_op *op = groups.first[i];

			if (workload)
				snprintf(buf, sizeof buf, "%s %s", op->dtype, op->shape);
			else
				snprintf(buf, sizeof buf, "%s %s %s", op->workload, op->dtype,
					 op->shape);
			tw = fmax(tw, layout_text_width(buf, KEY_PT));
		}
		key_colw = key_numw + 6 + tw + 24;
		key_cols = (int)fmax(1, floor((c->o->width - MARGIN_LEFT - 10) / key_colw));
		key_rows = (int)((groups.n + (size_t)key_cols - 1) / (size_t)key_cols);
		mb += KEY_TOP - MARGIN_BOTTOM + key_rows * KEY_ROW;
	}
	mr = 44 + key_width(c, levels ? &level_names : &c->variants, wfrom, wto);
	{
		double xmin = rg.xlo / 4, xmax = rg.xhi * 4;
		double ymin = rg.ylo / 4, ymax = rg.yhi * 3;

		layout_init(&l, c->o->width, c->o->height, MARGIN_LEFT, mr, MARGIN_TOP, mb,
			    xmin, xmax, ymin, ymax);
		snprintf(pname, sizeof pname, "%s.points.dat", stem);
		snprintf(aname, sizeof aname, "%s.arrows.dat", stem);
		snprintf(rname, sizeof rname, "%s.roofs.dat", stem);
		snprintf(lname, sizeof lname, "%s.levels.dat", stem);
		snprintf(labname, sizeof labname, "%s.labels.dat", stem);
		snprintf(kname, sizeof kname, "%s.keys.dat", stem);
		if (!(fp = open_data(c, pname)) || !(fa = open_data(c, aname)) ||
		    !(fr = open_data(c, rname)) || (levels && !(fl = open_data(c, lname))) ||
		    (labels && (!(flab = open_data(c, labname)) || !(fk = open_data(c, kname)))))
			goto out;
		for (size_t i = 0; i < run->nops; i++) {
			const struct plot_op *op = &run->ops[i];
			double ai[3] = { op->ai_dram, op->ai_l2, op->ai_l1 };
			int w;

			if (!in_chart(op, workload))
				continue;
			w = name_index(&c->workloads, op->workload, 0);
			for (int lv = 0; lv < (levels ? 3 : 1); lv++) {
				int marker = levels ? lv + 1 :
					name_index(&c->variants, op->variant, 0);

				if (!plottable(ai[lv], op->flop_rate))
					continue;
				fprintf(fp, "%s %s %d %d %d\n", g6(xs, ai[lv]),
					g6(ys, op->flop_rate), w, marker, point_type(marker));
				if (levels)
					fprintf(fl, "%s %s %d\n", xs, ys, w);
				/* Roof labels keep clear of every point; the
				 * numbers too, when there are any. */
				{
					double px = layout_px(&l, ai[lv]);
					double py = layout_py(&l, op->flop_rate);

					obstacles_add_point(&obs, px, py, POINT_R);
				}
			}
			if (levels)
				fputc('\n', fl);
		}
		for (size_t i = 0; arrows && !levels && i < c->run->npairs; i++) {
			const struct plot_pair *p = &c->run->pairs[i];
			const struct plot_op *f, *b;

			if (!strcmp(p->base_role, "fused") ||
			    (workload && strcmp(p->workload, workload)))
				continue;
			f = find_op(c, p->fused_op_id);
			b = find_op(c, p->base_op_id);
			if (!f || !b || !plottable(f->ai_dram, f->flop_rate) ||
			    !plottable(b->ai_dram, b->flop_rate))
				continue;
			fprintf(fa, "%s %s %s %s %d\n", g6(xs, b->ai_dram), g6(ys, b->flop_rate),
				g6(dxs, f->ai_dram - b->ai_dram),
				g6(dys, f->flop_rate - b->flop_rate),
				name_index(&c->workloads, f->workload, 0));
			obstacles_add_segment(&obs, layout_px(&l, b->ai_dram),
					      layout_py(&l, b->flop_rate),
					      layout_px(&l, f->ai_dram),
					      layout_py(&l, f->flop_rate));
			narrows++;
		}
		write_roofs(c, fr, &l, &obs, xmin, xmax, ymin);
		if (labels)
			write_labels(c, workload, levels, &l, &obs, tails, &groups, flab, fk,
				     key_numw, key_colw, key_rows);
		rc = close_data(fp, pname) | close_data(fa, aname) | close_data(fr, rname) |
		     (fl ? close_data(fl, lname) : 0) |
		     (flab ? close_data(flab, labname) : 0) | (fk ? close_data(fk, kname) : 0);
		fp = fa = fr = fl = flab = fk = NULL;
		if (rc)
			goto out;
		rc = -1;
		snprintf(title, sizeof title, "%s%s%s: %s, run %lld (%s)",
			 levels ? "roofline by memory level" : "roofline",
			 workload ? " of " : "", workload ? workload : "",
			 *run->device ? run->device : "unknown device", run->run_id,
			 run->started_at);
		gp_common(c, stem, title);
		strbuf_addf(&c->cmds, "points = '%s'\narrows = '%s'\nroofs = '%s'\n"
			    "levels = '%s'\nlabels = '%s'\nkeys = '%s'\nhas_arrows = %d\n"
			    "xmin = %.6g\nxmax = %.6g\nymin = %.6g\nymax = %.6g\n"
			    "margin_l = %.6g\nmargin_r = %.6g\nmargin_t = %.6g\n"
			    "margin_b = %.6g\n",
			    pname, aname, rname, levels ? lname : "", labels ? labname : "",
			    labels ? kname : "", narrows > 0, xmin, xmax, ymin, ymax,
			    l.left / l.width, l.right / l.width,
			    1 - l.top / l.height, 1 - l.bottom / l.height);
		names_gp(&c->cmds, "workloads", &c->workloads);
		names_gp(&c->cmds, "markers", levels ? &level_names : &c->variants);
		strbuf_addstr(&c->cmds, "marker_pts = \"");
		for (size_t i = 0; i < ARRAY_SIZE(point_types); i++)
			strbuf_addf(&c->cmds, "%s%d", i ? " " : "", point_types[i]);
		strbuf_addstr(&c->cmds, "\"\n");
		strbuf_addf(&c->cmds, "wfrom = %d\nwto = %d\nload '%s'\n", wfrom, wto,
			    script_ref(c, "roofline.gp"));
		add_image(c, stem, title);
	}
	rc = 0;
out:
	if (fp)
		fclose(fp);
	if (fa)
		fclose(fa);
	if (fr)
		fclose(fr);
	if (fl)
		fclose(fl);
	if (flab)
		fclose(flab);
	if (fk)
		fclose(fk);
	obstacles_release(&obs);
	free(tails);
	return rc;
}

/* ---- fusion bars ------------------------------------------------------- */

static int cmp_group(const void *a, const void *b)
{
	const struct plot_op *x = *(const struct plot_op *const *)a;
	const struct plot_op *y = *(const struct plot_op *const *)b;
	int d;

	if ((d = strcmp(x->workload, y->workload)) || (d = strcmp(x->dtype, y->dtype)))
		return d;
	/* Shapes in the order the run measured them, not as text. */
	if (strcmp(x->shape, y->shape))
		return (x->op_id > y->op_id) - (x->op_id < y->op_id);
	if ((d = role_rank(x->role) - role_rank(y->role)))
		return d;
	return strcmp(x->variant, y->variant);
}

static int same_group(const struct plot_op *a, const struct plot_op *b)
{
	return !strcmp(a->workload, b->workload) && !strcmp(a->dtype, b->dtype) &&
	       !strcmp(a->shape, b->shape);
}

/* Bars of time and DRAM bytes for every group (workload, dtype, shape)
 * with a fused variant and at least one other, all ok. */
static int fusion_chart(struct ctx *c)
{
	const struct plot_data *run = c->run;
	const struct plot_op **ops = xcalloc(run->nops, sizeof *ops);
	size_t n = 0, ngroups = 0;
	FILE *fb = NULL, *fg = NULL;
	double x = 0;
	char title[512], ts[FMT_G_SIZE], bs[FMT_G_SIZE];
	int rc = -1;

	for (size_t i = 0; i < run->nops; i++)
		if (!strcmp(run->ops[i].status, "ok") && isfinite(run->ops[i].time_ns))
			ops[n++] = &run->ops[i];
	qsort(ops, n, sizeof *ops, cmp_group);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		int fused = 0;

		while (j < n && same_group(ops[i], ops[j]))
			fused |= !strcmp(ops[j++]->role, "fused");
		if (fused && j - i >= 2) {
			if (!fb && (!(fb = open_data(c, "fusion.bars.dat")) ||
				    !(fg = open_data(c, "fusion.groups.dat"))))
				goto out;
			fprintf(fg, "%.1f \"%s %s %s\"\n", x + (double)(j - i - 1) / 2,
				ops[i]->workload, ops[i]->dtype, ops[i]->shape);
			for (size_t k = i; k < j; k++, x++)
				fprintf(fb, "%.1f %s %s %d\n", x, g6(ts, ops[k]->time_ns / 1e3),
					g6(bs, ops[k]->dram_bytes / 1e6),
					name_index(&c->variants, ops[k]->variant, 0));
			x++;
			ngroups++;
		}
		i = j;
	}
	if (ngroups == 0) {
		rc = 0;
		goto out;
	}
	rc = close_data(fb, "fusion.bars.dat") | close_data(fg, "fusion.groups.dat");
	fb = fg = NULL;
	if (rc)
		goto out;
	snprintf(title, sizeof title, "fusion: time and DRAM bytes per variant, %s, run %lld",
		 *run->device ? run->device : "unknown device", run->run_id);
	gp_common(c, "fusion", title);
	strbuf_addf(&c->cmds, "bars = 'fusion.bars.dat'\ngroups = 'fusion.groups.dat'\n"
		    "show_tics = %d\nxmax = %.1f\n", ngroups <= MAX_GROUP_TICS, x - 0.5);
	names_gp(&c->cmds, "variants", &c->variants);
	strbuf_addf(&c->cmds, "load '%s'\n", script_ref(c, "fusion.gp"));
	add_image(c, "fusion", "time and DRAM bytes of each variant, per workload, dtype and shape");
	rc = 0;
out:
	if (fb)
		fclose(fb);
	if (fg)
		fclose(fg);
	free(ops);
	return rc;
}

/* ---- running gnuplot --------------------------------------------------- */

/* Run `gnuplot plots.gp` in dir; 0, or -1 with gnuplot's own first error
 * line in the message. */
static int run_gnuplot(const char *gnuplot, const char *dir)
{
	struct strbuf err = STRBUF_INIT;
	int pfd[2], status, rc = -1;
	char buf[4096];
	ssize_t r;
	pid_t pid;

	if (pipe(pfd))
		return error("cannot run gnuplot: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return error("cannot run gnuplot: %s", strerror(errno));
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(null, 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		if (chdir(dir) == 0)
			execlp(gnuplot, gnuplot, "plots.gp", (char *)NULL);
		dprintf(2, "cannot run '%s': %s\n", gnuplot, strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	while ((r = read(pfd[0], buf, sizeof buf)) > 0 || (r < 0 && errno == EINTR))
		if (r > 0)
			strbuf_add(&err, buf, (size_t)r);
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		rc = 0;
	} else {
		/* gnuplot echoes the offending line first; its message is the
		 * last non-empty line. How it ended comes first: a program
		 * that fails silently (GNUPLOT=/bin/false) leaves no line. */
		const char *s = strbuf_str(&err), *line = s, *p;
		char how[64];
		int len;

		for (p = s; *p; p++)
			if (*p == '\n' && p[1] && p[1] != '\n')
				line = p + 1;
		len = (int)strcspn(line, "\n");
		if (WIFSIGNALED(status))
			snprintf(how, sizeof how, "killed by signal %d: %s",
				 WTERMSIG(status), strsignal(WTERMSIG(status)));
		else
			snprintf(how, sizeof how, "exit status %d",
				 WEXITSTATUS(status));
		error("cannot draw the plots: gnuplot '%s' failed (%s)%s%.*s", gnuplot,
		      how, len ? ": " : ", with no message on stderr", len, line);
	}
	strbuf_release(&err);
	return rc;
}

/* Copy a script next to the kept data. */
static int copy_script(const char *name, const char *dir)
{
	char *src = xasprintf("%s/%s", plot_scripts_dir(), name);
	char *dst = xasprintf("%s/%s", dir, name);
	FILE *in = fopen(src, "r"), *out = NULL;
	char buf[8192];
	size_t n;
	int rc = -1;

	if (!in) {
		error("cannot read '%s': %s", src, strerror(errno));
		goto out_free;
	}
	if (!(out = fopen(dst, "w"))) {
		error("cannot write '%s': %s", dst, strerror(errno));
		goto out_close;
	}
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		fwrite(buf, 1, n, out);
	rc = ferror(in) || ferror(out) ? error("cannot copy '%s' to '%s'", src, dst) : 0;
	if (fclose(out) && !rc)
		rc = error("cannot write '%s': %s", dst, strerror(errno));
out_close:
	fclose(in);
out_free:
	free(src);
	free(dst);
	return rc;
}

int plot_run(const struct plot_data *run, const struct plot_opts *o,
	     struct plot_images *out)
{
	const char *gnuplot = plot_gnuplot();
	struct ctx c = { .run = run, .o = o, .out = out,
			 .cmds = STRBUF_INIT, .peak_top = NAN };
	const struct plot_op **sorted;
	char *script = NULL;
	FILE *f;
	int rc = -1, many;

	memset(out, 0, sizeof *out);
	if (!program_exists(gnuplot)) {
		out->skipped = xasprintf("gnuplot '%s' was not found", gnuplot);
		warning("plots skipped: gnuplot '%s' not found (install gnuplot-nox, "
			"or set $GNUPLOT); the tables are written all the same", gnuplot);
		return 0;
	}
	if (!has_scripts(plot_scripts_dir()))
		return error("cannot draw the plots: no roofline.gp in '%s' (set "
			     "$FUSEPROF_DATADIR to the folder holding fuseprof's .gp "
			     "scripts)", plot_scripts_dir());

	/* Colours by workload and markers by variant stay the same in every
	 * chart: fused variants first, then unfused, then the rest. */
	sorted = xcalloc(run->nops, sizeof *sorted);
	for (size_t i = 0; i < run->nops; i++) {
		if (strcmp(run->ops[i].status, "ok"))
			continue;
		name_index(&c.workloads, run->ops[i].workload, 1);
		sorted[c.nbyid++] = &run->ops[i];
	}
	for (int rank = 0; rank < 3; rank++)
		for (size_t i = 0; i < c.nbyid; i++)
			if (role_rank(sorted[i]->role) == rank)
				name_index(&c.variants, sorted[i]->variant, 1);
	qsort(sorted, c.nbyid, sizeof *sorted, cmp_op_id);
	c.byid = sorted;
	for (int i = 0; i < run->nceilings; i++)
		if (!strcmp(run->ceilings[i].unit, "FLOP/s"))
			c.peak_top = isnan(c.peak_top) ? run->ceilings[i].value
						       : fmax(c.peak_top, run->ceilings[i].value);

	strbuf_addstr(&c.cmds, "# plots.gp - redraws every chart of this report: "
		      "run `gnuplot plots.gp` in this folder.\n");
	/* Many ops: an overview of points alone, then one chart per workload
	 * with the arrows (and labels where they fit). */
	many = c.workloads.n > 1 && c.nbyid > MANY_OPS;
	if (roofline_chart(&c, NULL, 0, !many))
		goto out;
	if (out->n && many)
		for (int w = 0; w < c.workloads.n; w++)
			if (roofline_chart(&c, c.workloads.v[w], 0, 1))
				goto out;
	if (o->hierarchical && roofline_chart(&c, NULL, 1, 0))
		goto out;
	if (fusion_chart(&c))
		goto out;
	if (out->n == 0) {
		out->skipped = xstrdup("no op passed its check with counters and a time");
		rc = 0;
		goto out;
	}
	script = xasprintf("%s/plots.gp", o->dir);
	if (!(f = fopen(script, "w"))) {
		error("cannot write '%s': %s", script, strerror(errno));
		goto out;
	}
	fputs(strbuf_str(&c.cmds), f);
	if (ferror(f) | fclose(f)) {
		error("cannot write '%s': %s", script, strerror(errno));
		goto out;
	}
	if (o->keep_data && (copy_script("roofline.gp", o->dir) ||
			     copy_script("fusion.gp", o->dir)))
		goto out;
	rc = run_gnuplot(gnuplot, o->dir);
out:
	if (!o->keep_data) {
		for (size_t i = 0; i < c.nfiles; i++)
			unlink(c.files[i]);
		if (script)
			unlink(script);
	}
	for (size_t i = 0; i < c.nfiles; i++)
		free(c.files[i]);
	free(c.files);
	free(script);
	free(sorted);
	free(c.workloads.v);
	free(c.variants.v);
	strbuf_release(&c.cmds);
	if (rc)
		plot_images_release(out);
	return rc;
}

void plot_images_release(struct plot_images *im)
{
	for (size_t i = 0; i < im->n; i++) {
		free(im->v[i].stem);
		free(im->v[i].title);
	}
	free(im->v);
	free(im->skipped);
	memset(im, 0, sizeof *im);
}
