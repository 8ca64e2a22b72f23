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

#include "chart.h"
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
	int *vpt;                     /* point type of each variant (chart.h) */
	char suffix[80];              /* "-MODEL" in a run of several GPU
	                                 models' charts; "" */
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

/* Workload colours, the same in every chart, neighbours far apart (blue,
 * orange, purple, ...). Neither green nor vermillion: those two mean
 * "fused faster" and "fused slower" on every chart. */
static const unsigned workload_rgb[] = {
	0x0072b2, 0xe69f00, 0x9400d3, 0x56b4e9, 0x8c564b, 0xcc79a7, 0xb59a00,
};

static unsigned workload_colour(int w)
{
	return workload_rgb[(w - 1) % (int)ARRAY_SIZE(workload_rgb)];
}

/* The roof above an op drawn at intensity ai: its DRAM bandwidth (that of
 * its read/write mix, else the copy's) x ai, capped by the compute roof of
 * its precision. NaN when neither is known. */
static double attainable(const struct plot_data *run, const struct plot_op *op,
			 double ai)
{
	const struct plot_ceiling *dram = ceiling(run, "dram_bw");
	const struct plot_ceiling *peak = *op->precision ? ceiling(run, op->precision) : NULL;
	double bw = op->dram_bw > 0 ? op->dram_bw : dram ? dram->value : NAN;
	double v = bw * ai;

	return peak ? (isnan(v) ? peak->value : fmin(v, peak->value)) : v;
}

/* The roofs chart.h selects for window r and the precisions prec, and
 * their labels, which keep clear of every roof line and of what obs holds
 * already. njust[0] and njust[1] get the number of labels that start at
 * their point and that end there. */
static void write_roofs(struct ctx *c, FILE *f, const struct layout *l,
			struct obstacles *obs, const struct chart_range *r,
			const char *const *prec, size_t nprec, int njust[2])
{
	const char **names = xcalloc((size_t)c->run->nceilings + 1, sizeof *names);
	double *values = xcalloc((size_t)c->run->nceilings + 1, sizeof *values);
	struct chart_roof roofs[16];
	size_t n;

	for (int i = 0; i < c->run->nceilings; i++) {
		names[i] = c->run->ceilings[i].name;
		values[i] = c->run->ceilings[i].value;
	}
	n = chart_roofs(names, values, c->run->nceilings, prec, nprec, r, roofs);
	for (size_t i = 0; i < n; i++)
		obstacles_add_segment(obs, layout_px(l, roofs[i].x0), layout_py(l, roofs[i].y0),
				      layout_px(l, roofs[i].x1), layout_py(l, roofs[i].y1));
	for (size_t i = 0; i < n; i++) {
		const struct chart_roof_def *d = roofs[i].def;
		const struct plot_ceiling *ce = ceiling(c->run, d->ceiling);
		char val[48], text[256];
		struct box b;
		int just;

		si(val, sizeof val, roofs[i].value,
		   d->kind == CHART_BANDWIDTH ? "B/s" : "FLOP/s");
		snprintf(text, sizeof text, "%s %s (%s%s)", d->label, val,
			 d->note ? d->note : "", ce->provenance);
		b = chart_roof_label(l, obs, &roofs[i], text, ROOF_PT, &just);
		njust[!!just]++;
		fprintf(f, "%.6g %.6g %.6g %.6g %d %.6g %.6g \"%s\" %d\n", roofs[i].x0,
			roofs[i].y0, roofs[i].x1, roofs[i].y1, (int)d->kind,
			layout_x(l, just ? b.x1 : b.x0), layout_y(l, (b.y0 + b.y1) / 2),
			text, just);
	}
	free(names);
	free(values);
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

/* The key beside a chart: only what the chart draws. */
#define LEGEND_MAX 32
struct legend {
	int n;
	const char *name[LEGEND_MAX];
	int pt[LEGEND_MAX];
};

static void legend_add(struct legend *lg, const char *name, int pt)
{
	if (lg->n < LEGEND_MAX) {
		lg->name[lg->n] = name;
		lg->pt[lg->n++] = pt;
	}
}

/* words as gnuplot's word() reads them: each name quoted. */
static void quoted_gp(struct strbuf *sb, const char *var, const char *const *v, int n)
{
	char buf[256];

	strbuf_addf(sb, "%s = \"", var);
	for (int i = 0; i < n; i++) {
		sanitize(buf, sizeof buf, v[i], 0);
		strbuf_addf(sb, "%s\\\"%s\\\"", i ? " " : "", buf);
	}
	strbuf_addstr(sb, "\"\n");
}

/* A workload's name in the key: a profiled program's kernel names run to
 * 96 characters, which would take the chart's width; longer than
 * KEY_NAME_MAX, its start and its end (where a cut name keeps its hash)
 * around "...". Returns buf. */
#define KEY_NAME_MAX 48
static const char *key_name(char *buf, size_t size, const char *name)
{
	size_t n = strlen(name);

	if (n <= KEY_NAME_MAX || size < KEY_NAME_MAX + 1)
		return name;
	snprintf(buf, size, "%.30s...%s", name, name + n - (KEY_NAME_MAX - 33));
	return buf;
}

/* The longest name of the key beside the chart, for its margin; drawn[i]
 * says whether workload i has a point in it. */
static double key_width(const struct ctx *c, const struct legend *lg,
			const int *styles, const char *drawn)
{
	char buf[KEY_NAME_MAX + 1];
	double w = 0;

	for (int i = 1; i <= c->workloads.n; i++)
		if (drawn[i])
			w = fmax(w, layout_text_width(key_name(buf, sizeof buf,
							       c->workloads.v[i - 1]), 10));
	for (int i = 0; i < lg->n; i++)
		w = fmax(w, layout_text_width(lg->name[i], 10));
	for (int s = 0; s < CHART_NSTYLES; s++)
		if (styles[s])
			w = fmax(w, layout_text_width(chart_style_names[s], 10) + 20);
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

/* One arrow of a chart before it is bundled or drawn. */
struct arrow_src {
	const struct plot_op *base, *fused;
	double speedup;
};

/* The arrows of the chart's pairs whose ends are both drawn, into *out
 * (malloc'd); their tails are marked in tails. Returns the count. */
static size_t chart_arrows(struct ctx *c, const char *workload, char *tails,
			   struct arrow_src **out)
{
	const struct plot_data *run = c->run;
	struct arrow_src *v = xcalloc(run->npairs + 1, sizeof *v);
	size_t n = 0;

	for (size_t i = 0; i < run->npairs; i++) {
		const struct plot_pair *p = &run->pairs[i];
		const struct plot_op *f, *b;

		if (!strcmp(p->base_role, "fused") || (workload && strcmp(p->workload, workload)))
			continue;
		f = find_op(c, p->fused_op_id);
		b = find_op(c, p->base_op_id);
		if (!f || !b || !plottable(f->ai_dram, f->flop_rate) ||
		    !plottable(b->ai_dram, b->flop_rate))
			continue;
		tails[b - run->ops] = 1;
		v[n].base = b;
		v[n].fused = f;
		v[n++].speedup = isfinite(p->speedup) && p->speedup > 0 ? p->speedup
									: b->time_ns / f->time_ns;
	}
	*out = v;
	return n;
}

/* The gnuplot arrow style of an arrow from the base run: after the
 * fusion arrows' (roofline.gp). */
#define BASE_ARROW_STYLE (CHART_NSTYLES + 1)

/* An arrow from the base run: its base point, and the op it leads to. */
struct move_src {
	double x0, y0;
	const struct plot_op *op;
};

/* The moves whose op is drawn on the chart of `workload` (NULL: all) and
 * whose base point is plottable, into *out (malloc'd). Returns the count. */
static size_t chart_moves(struct ctx *c, const char *workload, struct move_src **out)
{
	const struct plot_data *run = c->run;
	struct move_src *v = xcalloc(run->nmoves + 1, sizeof *v);
	size_t n = 0;

	for (size_t i = 0; i < run->nmoves; i++) {
		const struct plot_move *m = &run->moves[i];
		const struct plot_op *op = find_op(c, m->op_id);

		if (!op || !in_chart(op, workload) || !plottable(m->ai_dram, m->flop_rate))
			continue;
		v[n++] = (struct move_src){ m->ai_dram, m->flop_rate, op };
	}
	*out = v;
	return n;
}

/* Write one arrow from (x0, y0) to (x1, y1), data units, trimmed off the
 * points it joins (r0, r1 px), in gnuplot arrow style `style` (1-based:
 * chart_arrow_style + 1, or BASE_ARROW_STYLE); 1 when it was long enough
 * to draw. */
static int write_arrow(FILE *f, const struct layout *l, struct obstacles *obs, double x0,
		       double y0, double x1, double y1, double r0, double r1, int style)
{
	char s[4][FMT_G_SIZE];
	struct box t;
	double ax, ay;

	if (chart_arrow_trim(layout_px(l, x0), layout_py(l, y0), layout_px(l, x1),
			     layout_py(l, y1), r0, r1, &t))
		return 0;
	ax = layout_x(l, t.x0);
	ay = layout_y(l, t.y0);
	fprintf(f, "%s %s %s %s %d\n", g6(s[0], ax), g6(s[1], ay),
		g6(s[2], layout_x(l, t.x1) - ax), g6(s[3], layout_y(l, t.y1) - ay), style);
	obstacles_add_segment(obs, t.x0, t.y0, t.x1, t.y1);
	return 1;
}

/* One roofline chart of the ok ops of `workload` (NULL: all). levels: each
 * op at three intensities (marker = level, filled when fused) instead of
 * one (marker = variant). arrows: draw other variant -> fused arrows,
 * bundled per dtype and variant above CHART_MAX_ARROWS. Returns 0 (also
 * when there was nothing to draw), -1 on error. */
static int roofline_chart(struct ctx *c, const char *workload, int levels,
			  int arrows)
{
	static const char *const level_names[3] = { "DRAM", "L2", "L1" };
	char stem[160], title[640], wsafe[128] = "";
	const struct plot_data *run = c->run;
	struct chart_range rg;
	FILE *fp = NULL, *fa = NULL, *fr = NULL, *fl = NULL, *flab = NULL, *fk = NULL;
	size_t npoints = 0, narrows = 0, nanchors = 0, np = 0, nsrc = 0, nbun = 0;
	size_t nprec = 0, nmv = 0, nbase = 0;
	int widx = 0, wfrom, wto, rc = -1, labels, key_rows = 0, key_cols = 1;
	int styles[CHART_NSTYLES] = { 0 }, has_fused = 0, has_other = 0, njust[2] = { 0 };
	char pname[200], aname[200], rname[200], lname[200], labname[200], kname[200];
	char xs[FMT_G_SIZE], ys[FMT_G_SIZE], base_name[96];
	double key_numw = 0, key_colw = 0, mb = MARGIN_BOTTOM, mr;
	struct groups groups = { 0 };
	struct obstacles obs = { 0 };
	struct legend lg = { 0 };
	const char *prec[8];
	char *tails = xcalloc(run->nops + 1, 1);
	char *vused = xcalloc((size_t)c->variants.n + 1, 1);
	char *wdrawn = xcalloc((size_t)c->workloads.n + 1, 1);
	double *px = xcalloc(3 * run->nops + run->nmoves + 1, sizeof *px);
	double *py = xcalloc(3 * run->nops + run->nmoves + 1, sizeof *py);
	double *top = xcalloc(3 * run->nops + run->nmoves + 1, sizeof *top);
	struct arrow_src *src = NULL;
	struct move_src *mv = NULL;
	struct chart_arrow *ca = NULL;
	struct chart_bundle *bun = NULL;
	struct layout l;

	if (workload) {
		sanitize(wsafe, sizeof wsafe, workload, 1);
		widx = name_index(&c->workloads, workload, 0);
	}
	wfrom = workload ? widx : 1;
	wto = workload ? widx : c->workloads.n;
	snprintf(stem, sizeof stem, "roofline%s%s%s%s", c->suffix,
		 levels ? "-levels" : "", workload ? "-" : "", wsafe);
	/* First the extent of the chart, its groups, the roofs its ops use
	 * and the markers they need: the labels need the axes before the
	 * first point is written, and the key lists only what is drawn. */
	for (size_t i = 0; i < run->nops; i++) {
		const struct plot_op *op = &run->ops[i];
		double ai[3] = { op->ai_dram, op->ai_l2, op->ai_l1 };
		size_t k;

		if (!in_chart(op, workload))
			continue;
		npoints++;
		for (int lv = 0; lv < (levels ? 3 : 1); lv++) {
			px[np] = ai[lv];
			py[np] = op->flop_rate;
			top[np++] = attainable(run, op, ai[lv]);
		}
		group_of(&groups, op, 1);
		for (k = 0; k < nprec && strcmp(prec[k], op->precision); k++)
			;
		if (k == nprec && *op->precision && nprec < ARRAY_SIZE(prec))
			prec[nprec++] = op->precision;
		vused[name_index(&c->variants, op->variant, 0)] = 1;
		wdrawn[name_index(&c->workloads, op->workload, 0)] = 1;
		if (!strcmp(op->role, "fused"))
			has_fused = 1;
		else
			has_other = 1;
	}
	/* The base run's points are where its arrows start: the window
	 * holds them too, under the roof of the op each leads to. */
	if (npoints && arrows && !levels)
		nmv = chart_moves(c, workload, &mv);
	for (size_t i = 0; i < nmv; i++) {
		px[np] = mv[i].x0;
		py[np] = mv[i].y0;
		top[np++] = attainable(run, mv[i].op, mv[i].x0);
	}
	snprintf(base_name, sizeof base_name, "base run %lld -> run %lld",
		 run->base_run_id, run->run_id);
	if (npoints == 0 || chart_range(np, px, py, top, &rg)) {
		rc = 0;
		goto out;
	}
	/* Arrows only on the plain chart: at three levels they would cross. */
	if (arrows && !levels)
		nsrc = chart_arrows(c, workload, tails, &src);
	if (nsrc > CHART_MAX_ARROWS) {
		/* A slab of arrows says nothing: one per dtype and variant,
		 * between the geometric means, and the points unmarked. */
		ca = xcalloc(nsrc, sizeof *ca);
		bun = xcalloc(nsrc, sizeof *bun);
		for (size_t i = 0; i < nsrc; i++)
			ca[i] = (struct chart_arrow){ src[i].fused->dtype, src[i].base->variant,
						      src[i].base->ai_dram, src[i].base->flop_rate,
						      src[i].fused->ai_dram, src[i].fused->flop_rate,
						      src[i].speedup };
		nbun = chart_bundle(ca, nsrc, bun);
		memset(tails, 0, run->nops);
	}
	for (size_t i = 0; i < nsrc; i++)
		styles[chart_arrow_style(src[i].speedup)] = 1;
	if (nbun) {
		memset(styles, 0, sizeof styles);
		for (size_t i = 0; i < nbun; i++)
			styles[chart_arrow_style(bun[i].speedup)] = 1;
	}
	for (size_t i = 0; i < run->nops; i++)
		nanchors += in_chart(&run->ops[i], workload) && !tails[i];
	if (levels) {
		for (int lv = 0; lv < 3; lv++)
			legend_add(&lg, level_names[lv], chart_level_point_type(lv, 1));
		if (has_fused && has_other) {
			legend_add(&lg, "fused: filled", chart_level_point_type(0, 1));
			legend_add(&lg, "other variants: open", chart_level_point_type(0, 0));
		}
	} else {
		for (int i = 0; i < c->variants.n; i++)
			if (vused[i + 1])
				legend_add(&lg, c->variants.v[i], c->vpt[i]);
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
	mr = 44 + fmax(key_width(c, &lg, styles, wdrawn),
		       nmv ? layout_text_width(base_name, 10) + 20 : 0);
	layout_init(&l, c->o->width, c->o->height, MARGIN_LEFT, mr, MARGIN_TOP, mb,
		    rg.xmin, rg.xmax, rg.ymin, rg.ymax);
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
		unsigned rgb;
		int v, fused = !strcmp(op->role, "fused");

		if (!in_chart(op, workload))
			continue;
		rgb = workload_colour(name_index(&c->workloads, op->workload, 0));
		v = name_index(&c->variants, op->variant, 0);
		for (int lv = 0; lv < (levels ? 3 : 1); lv++) {
			if (!plottable(ai[lv], op->flop_rate))
				continue;
			fprintf(fp, "%s %s %u %d\n", g6(xs, ai[lv]), g6(ys, op->flop_rate), rgb,
				levels ? chart_level_point_type(lv, fused) : c->vpt[v - 1]);
			if (levels)
				fprintf(fl, "%s %s %u\n", xs, ys, rgb);
			/* Roof labels keep clear of every point; the numbers
			 * too, when there are any. */
			obstacles_add_point(&obs, layout_px(&l, ai[lv]),
					    layout_py(&l, op->flop_rate), POINT_R);
		}
		if (levels)
			fputc('\n', fl);
	}
	if (nbun) {
		for (size_t i = 0; i < nbun; i++)
			narrows += write_arrow(fa, &l, &obs, bun[i].x0, bun[i].y0, bun[i].x1,
					       bun[i].y1, 2, 2, chart_arrow_style(bun[i].speedup) + 1);
	} else {
		for (size_t i = 0; i < nsrc; i++)
			narrows += write_arrow(fa, &l, &obs, src[i].base->ai_dram,
					       src[i].base->flop_rate, src[i].fused->ai_dram,
					       src[i].fused->flop_rate, POINT_R + 1, POINT_R + 1,
					       chart_arrow_style(src[i].speedup) + 1);
	}
	/* From the base point itself (no marker there to keep clear of) to
	 * the edge of this run's point. */
	for (size_t i = 0; i < nmv; i++)
		nbase += write_arrow(fa, &l, &obs, mv[i].x0, mv[i].y0, mv[i].op->ai_dram,
				     mv[i].op->flop_rate, 0, POINT_R + 1, BASE_ARROW_STYLE);
	narrows += nbase;
	c->out->nmoves += nbase;
	write_roofs(c, fr, &l, &obs, &rg, prec, nprec, njust);
	if (labels)
		write_labels(c, workload, levels, &l, &obs, tails, &groups, flab, fk, key_numw,
			     key_colw, key_rows);
	rc = close_data(fp, pname) | close_data(fa, aname) | close_data(fr, rname) |
	     (fl ? close_data(fl, lname) : 0) | (flab ? close_data(flab, labname) : 0) |
	     (fk ? close_data(fk, kname) : 0);
	fp = fa = fr = fl = flab = fk = NULL;
	if (rc)
		goto out;
	rc = -1;
	snprintf(title, sizeof title, "%s%s%s: %s, run %lld (%s)%s",
		 levels ? "roofline by memory level" : "roofline", workload ? " of " : "",
		 workload ? workload : "", *run->device ? run->device : "unknown device",
		 run->run_id, run->started_at,
		 nbun ? "; arrows: the geometric mean of each dtype and variant" : "");
	gp_common(c, stem, title);
	strbuf_addf(&c->cmds, "points = '%s'\narrows = '%s'\nroofs = '%s'\n"
		    "levels = '%s'\nlabels = '%s'\nkeys = '%s'\nhas_arrows = %d\n"
		    "roof_labels_left = %d\nroof_labels_right = %d\n"
		    "xmin = %.6g\nxmax = %.6g\nymin = %.6g\nymax = %.6g\n"
		    "margin_l = %.6g\nmargin_r = %.6g\nmargin_t = %.6g\n"
		    "margin_b = %.6g\n",
		    pname, aname, rname, levels ? lname : "", labels ? labname : "",
		    labels ? kname : "", narrows > 0, njust[0], njust[1], rg.xmin, rg.xmax,
		    rg.ymin, rg.ymax,
		    l.left / l.width, l.right / l.width, 1 - l.top / l.height,
		    1 - l.bottom / l.height);
	for (int axis = 0; axis < 2; axis++) {
		double t[16];
		size_t nt = axis ? chart_tics(rg.ymin, rg.ymax, t, ARRAY_SIZE(t))
				 : chart_tics(rg.xmin, rg.xmax, t, ARRAY_SIZE(t));

		strbuf_addf(&c->cmds, "%stics_at = \"", axis ? "y" : "x");
		for (size_t i = 0; i < nt; i++)
			strbuf_addf(&c->cmds, "%s%.6g", i ? ", " : "", t[i]);
		strbuf_addstr(&c->cmds, "\"\n");
	}
	{
		const char *wn[64], *wc[64];
		char cbuf[64][8], nbuf[64][KEY_NAME_MAX + 1];
		int nw = 0;

		/* Only what the chart draws: ops without FLOPs have no point. */
		for (int i = wfrom; i <= wto && nw < 64; i++) {
			if (!wdrawn[i])
				continue;
			wn[nw] = key_name(nbuf[nw], sizeof nbuf[nw], c->workloads.v[i - 1]);
			snprintf(cbuf[nw], sizeof cbuf[nw], "#%06x", workload_colour(i));
			wc[nw] = cbuf[nw];
			nw++;
		}
		quoted_gp(&c->cmds, "workloads", wn, nw);
		quoted_gp(&c->cmds, "workload_rgbs", wc, nw);
	}
	quoted_gp(&c->cmds, "markers", lg.name, lg.n);
	strbuf_addstr(&c->cmds, "marker_pts = \"");
	for (int i = 0; i < lg.n; i++)
		strbuf_addf(&c->cmds, "%s%d", i ? " " : "", lg.pt[i]);
	strbuf_addstr(&c->cmds, "\"\narrow_styles = \"");
	for (int s = 0, k = 0; s < CHART_NSTYLES; s++)
		if (styles[s] && narrows > nbase)
			strbuf_addf(&c->cmds, "%s%d", k++ ? " " : "", s + 1);
	if (nbase)
		strbuf_addf(&c->cmds, "%s%d", narrows > nbase ? " " : "", BASE_ARROW_STYLE);
	strbuf_addstr(&c->cmds, "\"\n");
	{
		const char *names[CHART_NSTYLES + 1];

		memcpy(names, chart_style_names, sizeof chart_style_names);
		names[CHART_NSTYLES] = base_name;
		quoted_gp(&c->cmds, "arrow_names", names, CHART_NSTYLES + 1);
	}
	strbuf_addf(&c->cmds, "load '%s'\n", script_ref(c, "roofline.gp"));
	add_image(c, stem, title);
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
	free(vused);
	free(wdrawn);
	free(px);
	free(py);
	free(top);
	free(src);
	free(mv);
	free(ca);
	free(bun);
	return rc;
}

/* ---- the speedup chart ------------------------------------------------- */

#define FUSION_ROW 15     /* px a bar needs at least */
#define FUSION_MAX_ROW 36 /* px a bar takes at most */
#define FUSION_TOP 64     /* px above the plot area: title and key */
#define FUSION_BOTTOM 48  /* px below: the axis and its label */
#define FUSION_PT 9       /* the bars' names */
#define FUSION_VALUE_PT 8 /* the number at each bar */

/* Every pair as a bar of its speedup (other variant's time / fused time),
 * with the byte model's prediction beside it, one row per pair or, when
 * they do not fit, geometric means of groups (chart_fusion_rows). */
static int fusion_chart(struct ctx *c)
{
	const struct plot_data *run = c->run;
	struct chart_pair *cp = xcalloc(run->npairs + 1, sizeof *cp);
	struct chart_row *rows = NULL;
	size_t n = 0, nrows, max_rows;
	FILE *f = NULL;
	double lo, hi, lw = 0, vw = 0, area_h, bar;
	char title[512], s[3][FMT_G_SIZE], label[256];
	int rc = -1, level, has_pred = 0, classes[CHART_NSTYLES] = { 0 };

	for (size_t i = 0; i < run->npairs; i++) {
		const struct plot_pair *p = &run->pairs[i];

		cp[n++] = (struct chart_pair){ p->workload, p->dtype, p->shape, p->base_variant,
					       p->speedup, p->predicted };
	}
	area_h = c->o->height - FUSION_TOP - FUSION_BOTTOM;
	max_rows = area_h > FUSION_ROW ? (size_t)(area_h / FUSION_ROW) : 1;
	nrows = chart_fusion_rows(cp, n, max_rows, &rows, &level);
	if (nrows == 0) {
		rc = 0;
		goto out;
	}
	chart_speedup_axis(rows, nrows, &lo, &hi);
	/* A few rows stay bars, not slabs: the bars take at most
	 * FUSION_MAX_ROW px of a row's height. */
	bar = fmin(1, FUSION_MAX_ROW / (area_h / (double)nrows));
	if (!(f = open_data(c, "fusion.rows.dat")))
		goto out;
	for (size_t i = 0; i < nrows; i++) {
		const struct chart_row *r = &rows[i];
		double y = (double)(nrows - i);
		char v[32];

		sanitize(label, sizeof label, r->label, 0);
		lw = fmax(lw, layout_text_width(label, FUSION_PT));
		/* 1150×, not 1.15e+03×. */
		snprintf(v, sizeof v, r->speedup >= 100 ? "%.0f×" : "%.3g×", r->speedup);
		vw = fmax(vw, layout_text_width(v, FUSION_VALUE_PT));
		has_pred |= isfinite(r->predicted);
		classes[chart_arrow_style(r->speedup)] = 1;
		/* y, measured bar's ends, prediction's ends, colour class,
		 * name, value text, where the text starts. */
		fprintf(f, "%.0f %s %s ", y, g6(s[0], fmin(1, r->speedup)),
			g6(s[1], fmax(1, r->speedup)));
		if (isfinite(r->predicted))
			fprintf(f, "%s %s ", g6(s[0], fmin(1, r->predicted)),
				g6(s[1], fmax(1, r->predicted)));
		else
			fputs("NaN NaN ", f);
		fprintf(f, "%d \"%s\" \"%s\" %s\n", (int)chart_arrow_style(r->speedup) + 1,
			label, v, g6(s[2], fmax(fmax(1, r->speedup),
						isfinite(r->predicted) ? r->predicted : 1) * 1.04));
	}
	if (close_data(f, "fusion.rows.dat")) {
		f = NULL;
		goto out;
	}
	f = NULL;
	snprintf(title, sizeof title, "fusion: speedup of the fused variant, %s, run %lld%s",
		 *run->device ? run->device : "unknown device", run->run_id,
		 level == 0 ? "" : level == 1 ? " (geometric mean over shapes)"
				 : " (geometric mean over cases)");
	gp_common(c, "fusion", title);
	/* The names sit left of the plot area and the numbers right of the
	 * longest bar, so both margins follow the text: nothing is cut. */
	{
		/* Room right of the longest bar for its number: widen the
		 * axis by the text's share of the plot area. */
		double w = c->o->width - (lw + 24) - 24;

		if (w > 2 * (vw + 8))
			hi *= pow(2, log2(hi / lo) * (vw + 8) / (w - vw - 8));
	}
	strbuf_addf(&c->cmds, "bar = %.3g\n", bar);
	strbuf_addf(&c->cmds, "rows = 'fusion.rows.dat'\nnrows = %zu\nhas_pred = %d\n"
		    "xlo = %.6g\nxhi = %.6g\nmargin_l = %.6g\nmargin_r = %.6g\n"
		    "margin_t = %.6g\nmargin_b = %.6g\n",
		    nrows, has_pred, lo, hi, (lw + 24) / c->o->width, 1 - 24.0 / c->o->width,
		    1 - (double)FUSION_TOP / c->o->height,
		    (double)FUSION_BOTTOM / c->o->height);
	quoted_gp(&c->cmds, "style_names", chart_style_names, CHART_NSTYLES);
	strbuf_addstr(&c->cmds, "classes = \"");
	for (int k = 0, m = 0; k < CHART_NSTYLES; k++)
		if (classes[k])
			strbuf_addf(&c->cmds, "%s%d", m++ ? " " : "", k + 1);
	strbuf_addstr(&c->cmds, "\"\n");
	strbuf_addf(&c->cmds, "load '%s'\n", script_ref(c, "fusion.gp"));
	add_image(c, "fusion", level == 0 ?
		  "speedup of the fused variant over each other variant, measured and "
		  "predicted by the byte model" :
		  "speedup of the fused variant over each other variant (geometric means), "
		  "measured and predicted by the byte model");
	rc = 0;
out:
	if (f)
		fclose(f);
	free(cp);
	free(rows);
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

/* The rooflines of c->run: an overview, per workload when there are many
 * ops, and by memory level when asked. 0 or -1. */
static int rooflines(struct ctx *c)
{
	int many = c->workloads.n > 1 && c->nbyid > MANY_OPS;
	size_t before = c->out->n;

	if (roofline_chart(c, NULL, 0, !many))
		return -1;
	/* Per workload only where the overview drew something. */
	if (many && c->out->n > before)
		for (int w = 0; w < c->workloads.n; w++)
			if (roofline_chart(c, c->workloads.v[w], 0, 1))
				return -1;
	if (c->o->hierarchical && roofline_chart(c, NULL, 1, 0))
		return -1;
	return 0;
}

/* A run on several GPU models: the rooflines of each model's ops under
 * its own roofs, titled by it; colours and markers as in one chart. */
static int group_charts(struct ctx *c)
{
	const struct plot_data *run = c->run;
	const struct plot_op **byid = c->byid;
	size_t nbyid = c->nbyid;
	struct plot_op *ops = xcalloc(run->nops + 1, sizeof *ops);
	const struct plot_op **sorted = xcalloc(run->nops + 1, sizeof *sorted);
	int rc = 0;

	for (int g = 0; g < run->ngroups && !rc; g++) {
		struct plot_data sub = *run;
		char safe[64];

		sub.device = run->groups[g].name;
		sub.nceilings = run->groups[g].nceilings;
		sub.ceilings = run->groups[g].ceilings;
		sub.nops = 0;
		for (size_t i = 0; i < run->nops; i++)
			if (run->ops[i].group == g)
				ops[sub.nops++] = run->ops[i];
		sub.ops = ops;
		c->nbyid = 0;
		for (size_t i = 0; i < sub.nops; i++)
			if (!strcmp(ops[i].status, "ok"))
				sorted[c->nbyid++] = &ops[i];
		qsort(sorted, c->nbyid, sizeof *sorted, cmp_op_id);
		c->byid = sorted;
		c->run = &sub;
		sanitize(safe, sizeof safe, run->groups[g].name, 1);
		snprintf(c->suffix, sizeof c->suffix, "-%s", safe);
		if (c->nbyid)
			rc = rooflines(c);
		c->run = run;
	}
	c->byid = byid;
	c->nbyid = nbyid;
	c->suffix[0] = '\0';
	free(sorted);
	free(ops);
	return rc;
}

int plot_run(const struct plot_data *run, const struct plot_opts *o,
	     struct plot_images *out)
{
	const char *gnuplot = plot_gnuplot();
	struct ctx c = { .run = run, .o = o, .out = out,
			 .cmds = STRBUF_INIT };
	const struct plot_op **sorted;
	char *script = NULL;
	FILE *f;
	int rc = -1;

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
	/* Markers by role: fused filled, unfused open, naive crosses. */
	{
		const char **vrole = xcalloc(c.nbyid + 1, sizeof *vrole);
		int nth[3] = { 0 };

		for (int rank = 0; rank < 3; rank++)
			for (size_t i = 0; i < c.nbyid; i++)
				if (role_rank(sorted[i]->role) == rank &&
				    !name_index(&c.variants, sorted[i]->variant, 0)) {
					name_index(&c.variants, sorted[i]->variant, 1);
					vrole[c.variants.n - 1] = sorted[i]->role;
				}
		c.vpt = xcalloc((size_t)c.variants.n + 1, sizeof *c.vpt);
		for (int i = 0; i < c.variants.n; i++) {
			int k = !strcmp(vrole[i], "fused") ? 0 : !strcmp(vrole[i], "naive") ? 2 : 1;

			c.vpt[i] = chart_point_type(vrole[i], nth[k]++);
		}
		free(vrole);
	}
	qsort(sorted, c.nbyid, sizeof *sorted, cmp_op_id);
	c.byid = sorted;

	strbuf_addstr(&c.cmds, "# plots.gp - redraws every chart of this report: "
		      "run `gnuplot plots.gp` in this folder.\n");
	/* Many ops: an overview of points alone, then one chart per workload
	 * with the arrows (and labels where they fit). */
	if (run->ngroups > 1) {
		if (group_charts(&c))
			goto out;
	} else if (rooflines(&c)) {
		goto out;
	}
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
	free(c.vpt);
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
