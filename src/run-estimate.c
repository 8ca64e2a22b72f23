/* run-estimate.c - the dry run's checks and estimate: the database a run
 * would write, and the seconds it would take, from the workloads' models
 * and the protocol of runloop.c, before the GPU is touched. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "run-estimate.h"
#include "store.h"
#include "util.h"

/* The nominal machine of the estimate (run --help says so). A repetition
 * moves its variant's modelled bytes at EST_DRAM_BW, or does its FLOPs at
 * EST_FLOP_RATE (EST_NAIVE_RATE for a naive variant), whichever is
 * longer, and takes at least EST_REP_S (launch and synchronization). The
 * bandwidth is about what an H100's copies reach (3.35 TB/s peak); the
 * naive rate is what the shipped sample runs' naive GEMMs reached (0.06 to
 * 0.2 TFLOP/s, bench/RESULTS.md). The CPU reference of a check runs its
 * FLOPs at EST_CPU_FLOPS and reads and compares its bytes at EST_CPU_BW
 * (on all cores), and a reference costs EST_CHECK_FLOPS at most: large
 * references check a sample of rows (kernels/checkref.c,
 * kernels/ln_linear/check.cu). Counters cost EST_COUNTERS_S an op plus
 * EST_PASSES repetitions, the op replay's passes. The CPU and counter
 * figures are fitted to the default suite on a 16-core H100 machine
 * (commit 22cae33: checks 43 s, counters 19 s for 90 ops; the estimate
 * says 39 and 18; bench/RESULTS.md, "The main job"). The estimate's
 * timing is about twice the measured (30 against 14 s): the naive rate is
 * a floor. */
#define EST_DRAM_BW 3.0e12
#define EST_FLOP_RATE 50e12
#define EST_NAIVE_RATE 0.1e12
#define EST_REP_S 5e-6
#define EST_CPU_FLOPS 4e9
#define EST_CPU_BW 2e9
#define EST_CHECK_FLOPS 2e9
#define EST_COUNTERS_S 0.15
#define EST_PASSES 4
/* The protocol's figures, as runloop.c has them: an L2 of an H100 for the
 * settling repetitions, which move 2 L2 sizes (at most 16 repetitions)
 * before each turn of 10 timed ones; a repetition slower than 50 ms gets
 * 2 warm-ups and as many timed ones as fit in 2 s, at least 3. */
#define EST_L2_BYTES (50.0 * 1024 * 1024)
#define SETTLE_L2S 2
#define MAX_SETTLE 16
#define TURN_REPS 10
#define SLOW_REP_S 0.05
#define OP_BUDGET_S 2.0
#define MIN_REPS 3

void run_estimate_op(struct run_estimate *e, const struct run_opts *o,
		     const struct workload *w, int variant, enum fp_dtype dt,
		     const struct fp_shape *s, int counters, const char *key)
{
	struct fp_model m;
	double rep, reps = o->reps, warm = o->warmup, settle, turns, checks = 1;
	size_t need = w->device_bytes(s, dt, variant, 1);

	memset(&m, 0, sizeof m);
	w->model(s, dt, variant, &m);
	rep = fmax(EST_REP_S, m.variant_bytes / EST_DRAM_BW);
	rep = fmax(rep, m.flops / (w->variants[variant].role == FP_NAIVE
				   ? EST_NAIVE_RATE : EST_FLOP_RATE));
	settle = fmin(MAX_SETTLE, ceil(SETTLE_L2S * EST_L2_BYTES /
				       fmax(m.min_bytes, 1)));
	if (rep >= SLOW_REP_S) {
		reps = fmin(reps, fmax(MIN_REPS, ceil(OP_BUDGET_S / rep)));
		warm = fmin(warm, 2);
		settle = 0;
	}
	turns = ceil(reps / TURN_REPS);
	if (o->check_all && workload_nprofiles(w) > 0)
		checks = workload_nprofiles(w);

	e->nops++;
	e->time_s += (warm + reps + turns * settle) * rep;
	e->check_s += checks * (fmin(m.flops, EST_CHECK_FLOPS) / EST_CPU_FLOPS +
				m.min_bytes / EST_CPU_BW);
	if (counters)
		e->counters_s += EST_COUNTERS_S + EST_PASSES * rep;
	if (need > e->max_bytes) {
		e->max_bytes = need;
		snprintf(e->max_key, sizeof e->max_key, "%s", key);
	}
}

/* "45 s", "3 min 20 s", "2 h 5 min". */
static void format_duration(double s, char *buf, size_t n)
{
	long t = lround(ceil(s));

	if (t < 60)
		snprintf(buf, n, "%ld s", t);
	else if (t < 3600)
		snprintf(buf, n, "%ld min %ld s", t / 60, t % 60);
	else
		snprintf(buf, n, "%ld h %ld min", t / 3600, (t % 3600 + 59) / 60);
}

void run_estimate_print(const struct run_estimate *e, FILE *f)
{
	char all[32], tm[32], ck[32], ct[32];

	format_duration(e->time_s + e->check_s + e->counters_s, all, sizeof all);
	format_duration(e->time_s, tm, sizeof tm);
	format_duration(e->check_s, ck, sizeof ck);
	format_duration(e->counters_s, ct, sizeof ct);
	fprintf(f, "fuseprof: dry run: %zu op%s, estimated time %s (timing %s, "
		"checks %s, counters %s) on the nominal GPU of 'run --help', plus "
		"the ceilings on a device's first run\n", e->nops,
		e->nops == 1 ? "" : "s", all, tm, ck, ct);
	fprintf(f, "fuseprof: dry run: the largest op, %s, needs %.2f GiB of GPU "
		"memory; nothing was run or stored\n", e->max_key,
		e->max_bytes / 1073741824.0);
}

int run_check_db(const char *path)
{
	struct store *st = NULL;
	struct stat sb;
	const char *slash;
	char *dir;
	int rc = 0;

	if (stat(path, &sb) == 0) {
		if (store_open(&st, path, STORE_READONLY))
			return -1;
		store_close(st);
		if (access(path, W_OK))
			return error("cannot store the run in '%s': %s (choose another "
				     "database with --db)", path, strerror(errno));
		return 0;
	}
	if (errno != ENOENT)
		return error("cannot open '%s': %s", path, strerror(errno));
	/* A new database: its folder must take the file and its -wal. */
	slash = strrchr(path, '/');
	dir = slash ? xasprintf("%.*s", (int)(slash - path) + (slash == path), path)
		    : xstrdup(".");
	if (stat(dir, &sb))
		rc = error("cannot create the database '%s': folder '%s': %s", path,
			   dir, strerror(errno));
	else if (!S_ISDIR(sb.st_mode))
		rc = error("cannot create the database '%s': '%s' is not a folder",
			   path, dir);
	else if (access(dir, W_OK | X_OK))
		rc = error("cannot create the database '%s': folder '%s': %s", path,
			   dir, strerror(errno));
	free(dir);
	return rc;
}
