/* test-plot.c - the plot driver renders with gnuplot: every chart is a
 * valid PNG of the requested size (IHDR parsed), SVGs are SVG, kept data
 * redraws on its own, and nothing is left behind without --keep-data.
 * Skips (77) without gnuplot. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fusion.h"
#include "plot-input.h"
#include "plot.h"
#include "roofline.h"
#include "store.h"
#include "synth.h"
#include "test.h"
#include "util.h"

static unsigned be32(const unsigned char *p)
{
	return (unsigned)p[0] << 24 | (unsigned)p[1] << 16 | (unsigned)p[2] << 8 | p[3];
}

/* The PNG signature, then IHDR as the first chunk with the size. */
static void check_png(const char *dir, const char *stem, unsigned w, unsigned h)
{
	static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	char *path = xasprintf("%s/%s.png", dir, stem);
	unsigned char b[33];
	FILE *f = fopen(path, "rb");

	if (!f)
		FAIL("no '%s'", path);
	if (fread(b, 1, sizeof b, f) != sizeof b)
		FAIL("'%s' is too short for a PNG", path);
	fclose(f);
	ASSERT(!memcmp(b, sig, 8));
	ASSERT_EQ(be32(b + 8), 13);
	ASSERT(!memcmp(b + 12, "IHDR", 4));
	ASSERT_EQ(be32(b + 16), w);
	ASSERT_EQ(be32(b + 20), h);
	free(path);
}

static void check_svg(const char *dir, const char *stem, unsigned w)
{
	char *path = xasprintf("%s/%s.svg", dir, stem), buf[2048], want[32];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		FAIL("no '%s'", path);
	n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = 0;
	fclose(f);
	snprintf(want, sizeof want, "width=\"%u\"", w);
	ASSERT(strstr(buf, "<svg"));
	ASSERT(strstr(buf, want));
	free(path);
}

/* A chart's numbered labels and their key: every number beside a point
 * is explained under the chart, the key numbers 1..n in order, and n is at
 * most the chart's points. Returns the number of labels. */
static int check_labels(const char *dir, const char *stem)
{
	char *lp = xasprintf("%s/%s.labels.dat", dir, stem);
	char *kp = xasprintf("%s/%s.keys.dat", dir, stem);
	FILE *fl = fopen(lp, "r"), *fk = fopen(kp, "r");
	int nkeys = 0, nlabels = 0, n;
	char line[1024];
	unsigned char seen[64] = { 0 };

	if (!fl || !fk)
		FAIL("'%s' has labels without a key or a key without labels", stem);
	while (fgets(line, sizeof line, fk)) {
		ASSERT_EQ(sscanf(line, "%*f %*f \"%d\"", &n), 1);
		ASSERT_EQ(n, nkeys + 1);
		ASSERT(strchr(line, '=') || strstr(line, "fp32") || strstr(line, "bf16"));
		nkeys++;
	}
	ASSERT(nkeys > 0 && nkeys < (int)sizeof seen);
	while (fgets(line, sizeof line, fl)) {
		ASSERT_EQ(sscanf(line, "%*f %*f \"%d\"", &n), 1);
		ASSERT(n >= 1 && n <= nkeys);
		seen[n] = 1;
		nlabels++;
	}
	for (int i = 1; i <= nkeys; i++)
		ASSERT(seen[i]);  /* every group is labelled somewhere */
	fclose(fl);
	fclose(fk);
	free(lp);
	free(kp);
	return nlabels;
}

/* The lines of DIR/NAME holding s; -1 when there is no such file. */
static int count_lines(const char *dir, const char *name, const char *s)
{
	char *p = xasprintf("%s/%s", dir, name), line[1024];
	FILE *f = fopen(p, "r");
	int n = 0;

	free(p);
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		n += strstr(line, s) != NULL;
	fclose(f);
	return n;
}

/* Every arrow of a chart is styled by its speedup: 1 faster, 2 even,
 * 3 slower. Returns the number of arrows. */
static int check_arrows(const char *dir, const char *stem)
{
	char *p = xasprintf("%s/%s.arrows.dat", dir, stem), line[1024];
	FILE *f = fopen(p, "r");
	int n = 0, style;

	if (!f)
		FAIL("no '%s'", p);
	while (fgets(line, sizeof line, f)) {
		ASSERT_EQ(sscanf(line, "%*g %*g %*g %*g %d", &style), 1);
		ASSERT(style >= 1 && style <= 3);
		n++;
	}
	fclose(f);
	free(p);
	return n;
}

static int exists(const char *dir, const char *name)
{
	char *p = xasprintf("%s/%s", dir, name);
	int ok = access(p, F_OK) == 0;

	free(p);
	return ok;
}

int main(void)
{
	unsigned long long seed = (unsigned long long)time(NULL) ^ (unsigned long long)getpid();
	char db[] = "/tmp/fuseprof-test-plot.XXXXXX", dir[] = "/tmp/fuseprof-plot.XXXXXX";
	struct synth_opts so = { .nops = 40, .seed = seed, .ceilings = 1, .counters = 1,
				 .wrong_every = 9 };
	unsigned w = 500 + (unsigned)(seed % 300), h = 400 + (unsigned)(seed % 200);
	struct plot_opts po = { .dir = dir, .width = (int)w, .height = (int)h, .svg = 1,
				.hierarchical = 1, .keep_data = 1 };
	const char *datadir = getenv("FUSEPROF_DATADIR");
	struct plot_images im;
	struct fu_pairs p;
	struct rf_run r;
	struct store *st;
	long long run_id;
	char *cmd;
	int fd, roofline = 0, levels = 0, fusion = 0, per_workload = 0;

	fprintf(stderr, "seed %llu, %ux%u\n", seed, w, h);
	if (!datadir || !*datadir) {
		/* Run from the build tree: the scripts are in the sources. */
		const char *src = getenv("srcdir");

		setenv("FUSEPROF_DATADIR", xasprintf("%s/plots", src ? src : "."), 1);
	}
	cmd = xasprintf("command -v '%s' >/dev/null 2>&1", plot_gnuplot());
	if (system(cmd))
		SKIP("gnuplot '%s' not found", plot_gnuplot());
	free(cmd);

	fd = mkstemp(db);
	if (fd < 0 || !mkdtemp(dir))
		return TEST_HARD_ERROR;
	close(fd);
	unlink(db);
	run_id = synth_build(db, &so);
	if (run_id < 0 || store_open(&st, db, STORE_READONLY) ||
	    rf_load(st, run_id, NULL, &r) || fusion_load(st, run_id, NULL, &p))
		return TEST_HARD_ERROR;

	ASSERT_EQ(report_plots(&r, &p, NULL, &po, &im), 0);
	ASSERT(!im.skipped);
	for (size_t i = 0; i < im.n; i++) {
		const char *s = im.v[i].stem;

		check_png(dir, s, w, h);
		check_svg(dir, s, w);
		roofline += !strcmp(s, "roofline");
		levels += !strcmp(s, "roofline-levels");
		fusion += !strcmp(s, "fusion");
		per_workload += !strncmp(s, "roofline-", 9) && strcmp(s, "roofline-levels");
	}
	ASSERT_EQ(roofline, 1);
	ASSERT_EQ(levels, 1);
	ASSERT_EQ(fusion, 1);
	ASSERT_EQ(per_workload, 3);  /* 40 ops of 3 workloads are "many" */
	/* Many ops: the overview has no labels, each workload's chart has. */
	ASSERT(!exists(dir, "roofline.labels.dat") && !exists(dir, "roofline.keys.dat"));
	for (size_t i = 0; i < im.n; i++)
		if (!strncmp(im.v[i].stem, "roofline-", 9) && strcmp(im.v[i].stem, "roofline-levels"))
			ASSERT(check_labels(dir, im.v[i].stem) > 0);
	/* Only the roofs a chart's ops use: the synthetic softmax and
	 * LayerNorm+GELU ops do no tensor-core work, so their charts have
	 * no tensor roof, and no op does FP64 work. Every chart has the
	 * DRAM roofs of the copy and of reads alone. Arrows are styled by speedup, and the overview of many
	 * ops has none. */
	ASSERT_EQ(count_lines(dir, "roofline-softmax.roofs.dat", "tensor"), 0);
	ASSERT_EQ(count_lines(dir, "roofline-ln_gelu.roofs.dat", "tensor"), 0);
	ASSERT_EQ(count_lines(dir, "roofline-softmax.roofs.dat", "DRAM copy"), 1);
	ASSERT_EQ(count_lines(dir, "roofline-ln_linear_fwd.roofs.dat", "DRAM copy"), 1);
	ASSERT_EQ(count_lines(dir, "roofline-softmax.roofs.dat", "DRAM read"), 1);
	ASSERT_EQ(count_lines(dir, "roofline-ln_linear_fwd.roofs.dat", "DRAM read"), 1);
	ASSERT_EQ(count_lines(dir, "roofline.roofs.dat", "FP64"), 0);
	ASSERT(check_arrows(dir, "roofline-softmax") > 0);
	ASSERT_EQ(check_arrows(dir, "roofline"), 0);
	ASSERT(exists(dir, "plots.gp") && exists(dir, "roofline.gp") &&
	       exists(dir, "fusion.gp") && exists(dir, "roofline.points.dat") &&
	       exists(dir, "fusion.rows.dat"));

	/* Kept data redraws in its folder with nothing else: remove a chart
	 * and run gnuplot there by hand. */
	cmd = xasprintf("cd '%s' && rm roofline.png && '%s' plots.gp", dir, plot_gnuplot());
	ASSERT_EQ(system(cmd), 0);
	free(cmd);
	check_png(dir, "roofline", w, h);
	plot_images_release(&im);

	/* Without --keep-data only the pictures remain. */
	cmd = xasprintf("rm -f '%s'/*", dir);
	ASSERT_EQ(system(cmd), 0);
	free(cmd);
	po.keep_data = 0;
	po.hierarchical = 0;
	po.svg = 0;
	ASSERT_EQ(report_plots(&r, &p, NULL, &po, &im), 0);
	ASSERT(im.n >= 2);
	check_png(dir, im.v[0].stem, w, h);
	ASSERT(!exists(dir, "plots.gp") && !exists(dir, "roofline.points.dat") &&
	       !exists(dir, "roofline.svg"));
	plot_images_release(&im);

	/* A gnuplot that does not exist: a skip with a reason, no error. */
	setenv("GNUPLOT", "/nonexistent/gnuplot", 1);
	ASSERT_EQ(report_plots(&r, &p, NULL, &po, &im), 0);
	ASSERT(im.skipped && im.n == 0);
	plot_images_release(&im);

	fusion_release(&p);
	rf_release(&r);
	store_close(st);
	cmd = xasprintf("rm -rf '%s' '%s'", dir, db);
	if (system(cmd))
		return TEST_HARD_ERROR;
	free(cmd);
	return 0;
}
