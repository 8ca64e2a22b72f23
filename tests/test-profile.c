/* test-profile.c - the profiler's pipeline (inject/collect.c) on synthetic
 * CUPTI records, into a real database: NVTX range paths, launches placed
 * in the innermost range of their thread, ops and their samples (one per
 * range instance, merged across processes), kernel slots, the kernel
 * filter and limit, a kernel whose launch comes a batch late, a process
 * that never closes (as if killed), and what v_ops and v_roofline make of
 * it all. With "--make DB TAG SCALE" it writes one synthetic profiled run
 * (durations times SCALE) for the command-line tests and exits. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect.h"
#include "error.h"
#include "probes.h"
#include "store.h"
#include "test.h"
#include "util.h"

static char dbpath[4096];

static double q1(struct store *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static double q1(struct store *st, const char *fmt, ...)
{
	char sql[2048];
	sqlite3_stmt *s;
	double v = NAN;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sql, sizeof sql, fmt, ap);
	va_end(ap);
	if (sqlite3_prepare_v2(store_db(st), sql, -1, &s, NULL) != SQLITE_OK)
		FAIL("bad SQL %s: %s", sql, sqlite3_errmsg(store_db(st)));
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL)
		v = sqlite3_column_double(s, 0);
	sqlite3_finalize(s);
	return v;
}

static char *qtext(struct store *st, const char *sql)
{
	sqlite3_stmt *s;
	char *v = NULL;

	if (sqlite3_prepare_v2(store_db(st), sql, -1, &s, NULL) != SQLITE_OK)
		FAIL("bad SQL %s: %s", sql, sqlite3_errmsg(store_db(st)));
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
		v = xstrdup((const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	return v;
}

static long long new_run(const char *db, const char *tag)
{
	struct store *st;
	struct store_run r = { .command_line = "test", .tag = tag, .counters = "none",
			       .kind = "profile" };
	long long id;

	ASSERT_EQ(store_open(&st, db, STORE_CREATE), 0);
	ASSERT_EQ(store_begin_run(st, &r, &id), 0);
	store_close(st);
	return id;
}

/* Record builders. */
static struct marker_rec start(uint32_t tid, uint32_t id, uint64_t ts, const char *name)
{
	struct marker_rec m = { MARKER_START, id, tid, ts, name, NULL };

	return m;
}

static struct marker_rec end(uint32_t tid, uint32_t id, uint64_t ts)
{
	struct marker_rec m = { MARKER_END, id, tid, ts, NULL, NULL };

	return m;
}

static struct launch_rec launch(uint32_t corr, uint32_t tid, uint64_t ts)
{
	struct launch_rec l = { corr, tid, ts, 0, -1 };

	return l;
}

static struct kernel_rec kernel(uint32_t corr, const char *name, uint64_t start,
				uint64_t dur, uint32_t stream)
{
	struct kernel_rec k;

	memset(&k, 0, sizeof k);
	k.name = name;
	k.mangled = name;
	k.grid[0] = 128;
	k.grid[1] = k.grid[2] = 1;
	k.block[0] = 256;
	k.block[1] = k.block[2] = 1;
	k.registers = 32;
	k.stream = stream;
	k.correlation = corr;
	k.start = start;
	k.end = start + dur;
	return k;
}

static void batch(struct collector *c, struct marker_rec *m, size_t nm,
		  const struct launch_rec *l, size_t nl, const struct kernel_rec *k,
		  size_t nk, uint64_t taken, int last)
{
	struct collect_batch b = { m, nm, l, nl, k, nk, taken, 0, last };

	ASSERT_EQ(collect_batch(c, &b), 0);
}

/* Process 1 of the program: two steps, each with a LayerNorm range and
 * (in the first) an MLP range; a kernel in the step outside both; a
 * thread without ranges; a kernel whose launch shows a batch late, and
 * one whose launch never shows. Durations times scale. */
static void program(const char *db, long long run, long long pid, double scale)
{
	struct collect_config cfg = { .db = db, .run_id = run };
	struct collector *c;
#define D(x) ((uint64_t)llround((x) * scale))
	struct marker_rec m1[] = {
		start(100, 1, 1000, "step"), start(100, 2, 1100, "ln"), end(100, 2, 1500),
		/* Out of order on purpose: ranges_apply sorts by time. */
		end(100, 3, 2000), start(100, 3, 1600, "mlp"),
	};
	struct launch_rec l1[] = {
		launch(1, 100, 1200), launch(2, 100, 1300), launch(3, 100, 1700),
		launch(4, 100, 2100), launch(5, 200, 1250),
	};
	struct kernel_rec k1[] = {
		kernel(1, "ln_fwd", 5000, D(100), 7), kernel(2, "ln_stats", 5100, D(150), 7),
		kernel(3, "gemm", 5300, D(300), 7), kernel(4, "misc", 5700, D(50), 7),
		kernel(5, "other", 5800, D(70), 9),
		kernel(8, "late", 5900, D(40), 7),    /* its launch comes next batch */
		kernel(99, "orphan", 6000, D(30), 7), /* no launch ever */
	};
	struct marker_rec m2[] = {
		end(100, 1, 3000), start(100, 4, 3100, "step"), start(100, 5, 3200, "ln"),
		end(100, 5, 3600), end(100, 4, 3700),
	};
	struct launch_rec l2[] = {
		launch(6, 100, 3300), launch(7, 100, 3400), launch(8, 100, 3500),
	};
	struct kernel_rec k2[] = {
		kernel(6, "ln_fwd", 7000, D(120), 7), kernel(7, "ln_stats", 7200, D(160), 7),
	};

	/* ln_fwd's first launch with its pointers read (x, y: 1 MiB each) */
	l1[0].nptrs = 2;
	l1[0].ptrs[0] = 0x7f0000100000ull, l1[0].ptr_bytes[0] = 1u << 20;
	l1[0].ptrs[1] = 0x7f0000200000ull, l1[0].ptr_bytes[1] = 1u << 20;
	ASSERT_EQ(collect_open(&c, &cfg, pid, "python train.py"), 0);
	batch(c, m1, ARRAY_SIZE(m1), l1, ARRAY_SIZE(l1), k1, ARRAY_SIZE(k1), 2500, 0);
	batch(c, m2, ARRAY_SIZE(m2), l2, ARRAY_SIZE(l2), k2, ARRAY_SIZE(k2), 4000, 1);
	ASSERT_EQ(collect_close(c, "complete", NULL), 0);
#undef D
}

static void check_program(const char *db, long long run)
{
	struct store *st;
	char *s;

	ASSERT_EQ(store_open(&st, db, STORE_READONLY), 0);
	/* Ops: each innermost range path, and kernels outside any range by
	 * name (the "late" kernel's launch came a batch late, in step/ln). */
	ASSERT_EQ(q1(st, "SELECT count(*) FROM ops WHERE run_id = %lld", run), 5);
	ASSERT_EQ(q1(st, "SELECT count(*) FROM v_ops WHERE run_id = %lld AND variant = "
		     "'eager' AND role = 'fused' AND dtype = '' AND shape = '' AND "
		     "status = 'ok' AND model_flops IS NULL", run), 5);
	/* step/ln: two instances, 250 and 280 + 40 (the late kernel) ns. */
	ASSERT_EQ(q1(st, "SELECT reps FROM v_ops WHERE run_id = %lld AND workload = 'step/ln'", run), 2);
	ASSERT_NEAR(q1(st, "SELECT time_ns FROM v_ops WHERE run_id = %lld AND workload = 'step/ln'", run), 285, 1e-9);
	ASSERT_NEAR(q1(st, "SELECT time_ns_min FROM v_ops WHERE run_id = %lld AND workload = 'step/ln'", run), 250, 1e-9);
	ASSERT_NEAR(q1(st, "SELECT time_ns_max FROM v_ops WHERE run_id = %lld AND workload = 'step/ln'", run), 320, 1e-9);
	ASSERT_EQ(q1(st, "SELECT nkernels FROM v_ops WHERE run_id = %lld AND workload = 'step/ln'", run), 3);
	/* ln_fwd: launched once per instance, median of 100 and 120. */
	ASSERT_EQ(q1(st, "SELECT launches FROM v_kernels WHERE run_id = %lld AND "
		     "workload = 'step/ln' AND name = 'ln_fwd'", run), 1);
	ASSERT_NEAR(q1(st, "SELECT dur_ns FROM v_kernels WHERE run_id = %lld AND "
		       "workload = 'step/ln' AND name = 'ln_fwd'", run), 110, 1e-9);
	ASSERT_NEAR(q1(st, "SELECT time_ns FROM v_ops WHERE run_id = %lld AND workload = 'step/mlp'", run), 300, 1e-9);
	ASSERT_NEAR(q1(st, "SELECT time_ns FROM v_ops WHERE run_id = %lld AND workload = 'step'", run), 50, 1e-9);
	ASSERT_NEAR(q1(st, "SELECT time_ns FROM v_ops WHERE run_id = %lld AND workload = 'other'", run), 70, 1e-9);
	ASSERT_NEAR(q1(st, "SELECT time_ns FROM v_ops WHERE run_id = %lld AND workload = 'orphan'", run), 30, 1e-9);
	/* Samples name their process; spans run first start to last end. */
	ASSERT_EQ(q1(st, "SELECT count(*) FROM samples s JOIN ops o ON o.id = s.op_id "
		     "WHERE o.run_id = %lld AND s.pid = 4242", run), 6);
	ASSERT_NEAR(q1(st, "SELECT min(s.span_ns) FROM samples s JOIN ops o ON o.id = "
		       "s.op_id WHERE o.run_id = %lld AND o.workload = 'step/ln'", run), 250, 1e-9);
	/* Every range instance, closed, with its path and depth. */
	ASSERT_EQ(q1(st, "SELECT count(*) FROM ranges WHERE run_id = %lld", run), 5);
	ASSERT_EQ(q1(st, "SELECT count(*) FROM ranges WHERE run_id = %lld AND end_ns IS NULL", run), 0);
	ASSERT_EQ(q1(st, "SELECT count(*) FROM ranges WHERE run_id = %lld AND path = "
		     "'step/mlp' AND depth = 1 AND start_ns = 1600 AND end_ns = 2000", run), 1);
	/* Launches: one row each, with the launching thread. */
	ASSERT_EQ(q1(st, "SELECT count(*) FROM launches l JOIN ops o ON o.id = l.op_id "
		     "WHERE o.run_id = %lld", run), 9);
	ASSERT_EQ(q1(st, "SELECT count(*) FROM launches l JOIN ops o ON o.id = l.op_id "
		     "WHERE o.run_id = %lld AND l.tid IS NULL", run), 1);
	/* The process's row. */
	ASSERT_EQ(q1(st, "SELECT kernels_seen FROM procs WHERE run_id = %lld", run), 9);
	ASSERT_EQ(q1(st, "SELECT kernels_recorded FROM procs WHERE run_id = %lld", run), 9);
	s = qtext(st, "SELECT status || ' ' || command_line FROM procs ORDER BY id LIMIT 1");
	ASSERT_STR_EQ(s, "complete python train.py");
	free(s);
	/* The roofline reads every op, with no model and no counters. */
	ASSERT_EQ(q1(st, "SELECT count(*) FROM v_roofline WHERE run_id = %lld", run), 5);
	store_close(st);
}

/* A second process of the same run adds a sample to step/ln. */
static void second_process(const char *db, long long run)
{
	struct collect_config cfg = { .db = db, .run_id = run };
	struct collector *c;
	struct marker_rec m[] = { start(300, 1, 100, "step"), start(300, 2, 110, "ln"),
				  end(300, 2, 200), end(300, 1, 210) };
	struct launch_rec l[] = { launch(1, 300, 150) };
	struct kernel_rec k[] = { kernel(1, "ln_fwd", 1000, 500, 3) };
	struct store *st;

	ASSERT_EQ(collect_open(&c, &cfg, 4343, NULL), 0);
	batch(c, m, ARRAY_SIZE(m), l, ARRAY_SIZE(l), k, ARRAY_SIZE(k), 300, 1);
	ASSERT_EQ(collect_close(c, "complete", NULL), 0);
	ASSERT_EQ(store_open(&st, db, STORE_READONLY), 0);
	ASSERT_EQ(q1(st, "SELECT reps FROM v_ops WHERE run_id = %lld AND workload = 'step/ln'", run), 3);
	ASSERT_NEAR(q1(st, "SELECT time_ns_max FROM v_ops WHERE run_id = %lld AND workload = 'step/ln'", run), 500, 1e-9);
	ASSERT_EQ(q1(st, "SELECT count(DISTINCT pid) FROM samples s JOIN ops o ON "
		     "o.id = s.op_id WHERE o.run_id = %lld AND o.workload = 'step/ln'", run), 2);
	/* ln_fwd: 3 launches over 3 samples; its median is the middle one. */
	ASSERT_NEAR(q1(st, "SELECT dur_ns FROM v_kernels WHERE run_id = %lld AND "
		       "workload = 'step/ln' AND name = 'ln_fwd'", run), 120, 1e-9);
	ASSERT_EQ(q1(st, "SELECT count(*) FROM procs WHERE run_id = %lld", run), 2);
	store_close(st);
}

/* The kernel filter and the limit: seen, recorded and left out counted. */
static void filter_and_limit(const char *db)
{
	long long run = new_run(db, "filtered");
	struct collect_config cfg = { .db = db, .run_id = run,
				      .kernel_filter = "^ln_", .max_kernels = 2 };
	struct collector *c;
	struct launch_rec l[] = { launch(1, 1, 10), launch(2, 1, 20), launch(3, 1, 30),
				  launch(4, 1, 40) };
	struct kernel_rec k[] = { kernel(1, "ln_fwd", 100, 10, 1), kernel(2, "gemm", 200, 10, 1),
				  kernel(3, "ln_bwd", 300, 10, 1), kernel(4, "ln_fwd", 400, 10, 1) };
	struct collect_counts n;
	struct store *st;

	cfg.kernel_filter = "[";
	ASSERT_EQ(collect_open(&c, &cfg, 1, NULL), -1);  /* a bad regex */
	cfg.kernel_filter = "^ln_";
	ASSERT_EQ(collect_open(&c, &cfg, 1, NULL), 0);
	batch(c, NULL, 0, l, ARRAY_SIZE(l), k, ARRAY_SIZE(k), 50, 1);
	collect_counts(c, &n);
	ASSERT_EQ(n.seen, 4);
	ASSERT_EQ(n.recorded, 2);
	ASSERT_EQ(n.filtered, 1);
	ASSERT_EQ(n.over_limit, 1);
	ASSERT_EQ(collect_close(c, "complete", NULL), 0);
	ASSERT_EQ(store_open(&st, db, STORE_READONLY), 0);
	ASSERT_EQ(q1(st, "SELECT kernels_filtered + 10 * kernels_over_limit + 100 * "
		     "kernels_recorded FROM procs WHERE run_id = %lld", run), 211);
	ASSERT_EQ(q1(st, "SELECT count(*) FROM ops WHERE run_id = %lld AND workload "
		     "IN ('ln_fwd', 'ln_bwd')", run), 2);
	store_close(st);
}

/* Counters: each counted launch's values summed into its kernel slot;
 * the metric itself per sample (mean over counted launches x launches a
 * sample); a launch without values leaves the mean alone; values whose
 * kernel record comes a batch after them still find it. */
static void counted(const char *db)
{
	static const char *const names[] = { "dram__bytes_read.sum", "fuseprof.dram_writeback_bytes" };
	long long run = new_run(db, "counted");
	struct collect_config cfg = { .db = db, .run_id = run, .counter_names = names,
				      .ncounters = 2 };
	struct collector *c;
	struct marker_rec m1[] = { start(1, 1, 5, "step"), end(1, 1, 60) };
	struct marker_rec m2[] = { start(1, 2, 105, "step"), end(1, 2, 160) };
	struct launch_rec l1[] = { launch(1, 1, 10), launch(2, 1, 20), launch(3, 1, 30) };
	struct launch_rec l2[] = { launch(4, 1, 110), launch(5, 1, 120), launch(6, 1, 130),
				   launch(7, 1, 170) };
	struct kernel_rec k1[] = { kernel(1, "scale", 100, 10, 1), kernel(2, "scale", 200, 10, 1),
				   kernel(3, "copy", 300, 10, 1) };
	struct kernel_rec k2[] = { kernel(4, "scale", 1100, 10, 1), kernel(5, "scale", 1200, 10, 1),
				   kernel(6, "copy", 1300, 10, 1) };
	struct kernel_rec k3[] = { kernel(7, "late", 1700, 10, 1) };
	double v[][2] = { { 100, 1 }, { 110, NAN }, { 1000, 5 }, { 90, 3 }, { 100, 4 }, { 7, 0 } };
	uint32_t corr[] = { 1, 2, 3, 4, 5, 7 };
	struct counted_rec cr[6];
	struct collect_counts n;
	struct store *st;

	/* the pointers of three launches: two, two of a cut list, none */
	l1[0].nptrs = 2, l1[0].ptrs[0] = 0x7f0000001000ull, l1[0].ptrs[1] = 0x7f0000002000ull;
	l1[0].ptr_bytes[0] = 4096, l1[0].ptr_bytes[1] = 8192;
	l1[1].nptrs = 2, l1[1].ptrs_cut = 1;
	l1[1].ptrs[0] = 0x7f0000002000ull, l1[1].ptrs[1] = 0x7f0000003000ull;
	l1[1].ptr_bytes[0] = 8192, l1[1].ptr_bytes[1] = 512;
	l2[0].nptrs = 0;
	for (int i = 0; i < 6; i++) {
		cr[i].correlation = corr[i];
		cr[i].values = xmalloc(2 * sizeof(double));
		memcpy(cr[i].values, v[i], sizeof v[i]);
	}
	ASSERT_EQ(collect_open(&c, &cfg, 7, NULL), 0);
	{
		struct collect_batch b = { m1, 2, l1, 3, k1, 3, 70, 0, 0, cr, 3 };

		ASSERT_EQ(collect_batch(c, &b), 0);
	}
	{
		/* corr 6 has no values; 7's kernel record comes next batch */
		struct collect_batch b = { m2, 2, l2, 4, k2, 3, 180, 0, 0, cr + 3, 3 };

		ASSERT_EQ(collect_batch(c, &b), 0);
	}
	batch(c, NULL, 0, NULL, 0, k3, 1, 1800, 1);
	collect_counts(c, &n);
	ASSERT_EQ(n.recorded, 7);
	ASSERT_EQ(n.counted, 6);
	ASSERT_EQ(collect_close(c, "complete", NULL), 0);
	ASSERT_EQ(store_open(&st, db, STORE_READONLY), 0);
	/* scale: 4 counted, mean read 100, 2 launches a sample */
	ASSERT_NEAR(q1(st, "SELECT dram_read_bytes FROM v_kernels WHERE run_id = %lld "
		       "AND workload = 'step' AND name = 'scale'", run), 200, 1e-9);
	ASSERT_NEAR(q1(st, "SELECT c.value FROM counters c JOIN v_kernels k ON k.kernel_id = "
		       "c.kernel_id WHERE k.run_id = %lld AND k.name = 'scale' AND c.metric = "
		       "'fuseprof.counted'", run), 4, 0);
	/* its write-back: one launch had none (NaN), so the mean is of 3 */
	ASSERT_NEAR(q1(st, "SELECT dram_writeback_bytes FROM v_kernels WHERE run_id = %lld "
		       "AND name = 'scale'", run), 2 * (1 + 3 + 4) / 3.0, 1e-9);
	/* copy: counted once, 1 launch a sample */
	ASSERT_NEAR(q1(st, "SELECT dram_read_bytes FROM v_kernels WHERE run_id = %lld "
		       "AND name = 'copy'", run), 1000, 1e-9);
	ASSERT_NEAR(q1(st, "SELECT dram_read_bytes FROM v_ops WHERE run_id = %lld "
		       "AND workload = 'step'", run), 1200, 1e-9);
	ASSERT_NEAR(q1(st, "SELECT dram_read_bytes FROM v_kernels WHERE run_id = %lld "
		       "AND name = 'late'", run), 7, 1e-9);
	/* launches.ptrs: a JSON array of [pointer, bytes] pairs, a trailing
	 * null where cut, [] for none, NULL where not read; json_each reads
	 * it */
	ASSERT_NEAR(q1(st, "SELECT count(*) FROM launches l JOIN ops o ON o.id = l.op_id "
		       "WHERE o.run_id = %lld AND l.correlation = 1 AND l.ptrs = "
		       "'[[139637976731648,4096],[139637976735744,8192]]'", run), 1, 0);
	ASSERT_NEAR(q1(st, "SELECT count(*) FROM launches l JOIN ops o ON o.id = l.op_id "
		       "WHERE o.run_id = %lld AND l.correlation = 2 AND l.ptrs = "
		       "'[[139637976735744,8192],[139637976739840,512],null]'", run), 1, 0);
	ASSERT_NEAR(q1(st, "SELECT count(*) FROM launches l JOIN ops o ON o.id = l.op_id, "
		       "json_each(l.ptrs) j WHERE o.run_id = %lld AND j.type = 'array'",
		       run), 4, 0);
	ASSERT_NEAR(q1(st, "SELECT sum(json_extract(j.value, '$[1]')) FROM launches l "
		       "JOIN ops o ON o.id = l.op_id, json_each(l.ptrs) j WHERE o.run_id = %lld "
		       "AND j.type = 'array'", run), 4096 + 8192 + 8192 + 512, 0);
	ASSERT_NEAR(q1(st, "SELECT count(*) FROM launches l JOIN ops o ON o.id = l.op_id "
		       "WHERE o.run_id = %lld AND l.correlation = 4 AND l.ptrs = '[]'", run), 1, 0);
	ASSERT_NEAR(q1(st, "SELECT count(*) FROM launches l JOIN ops o ON o.id = l.op_id "
		       "WHERE o.run_id = %lld AND l.ptrs IS NULL", run), 4, 0);
	store_close(st);
}

/* A counted kernel whose record has no times (the range profiler's) takes
 * the duration its counters measured, from its launch call's return. */
static void untimed(const char *db)
{
	static const char *const names[] = { "gpu__time_duration.sum", "dram__bytes_read.sum" };
	long long run = new_run(db, "untimed");
	struct collect_config cfg = { .db = db, .run_id = run, .counter_names = names,
				      .ncounters = 2 };
	struct collector *c;
	struct launch_rec l[] = { launch(1, 1, 5000), launch(2, 1, 6000) };
	struct kernel_rec k[] = { kernel(1, "untimed", 0, 0, 1), kernel(2, "untimed", 0, 0, 1) };
	double v[][2] = { { 1500, 10 }, { 2500, 30 } };
	struct counted_rec cr[2];
	struct store *st;

	for (int i = 0; i < 2; i++) {
		cr[i].correlation = (uint32_t)(i + 1);
		cr[i].values = xmalloc(sizeof v[i]);
		memcpy(cr[i].values, v[i], sizeof v[i]);
	}
	ASSERT_EQ(collect_open(&c, &cfg, 8, NULL), 0);
	{
		struct collect_batch b = { NULL, 0, l, 2, k, 2, 7000, 0, 1, cr, 2 };

		ASSERT_EQ(collect_batch(c, &b), 0);
	}
	ASSERT_EQ(collect_close(c, "complete", NULL), 0);
	ASSERT_EQ(store_open(&st, db, STORE_READONLY), 0);
	ASSERT_NEAR(q1(st, "SELECT sum(end_ns - start_ns) FROM launches l JOIN ops o ON "
		       "o.id = l.op_id WHERE o.run_id = %lld", run), 4000, 0);
	ASSERT_NEAR(q1(st, "SELECT min(start_ns) FROM launches l JOIN ops o ON "
		       "o.id = l.op_id WHERE o.run_id = %lld", run), 5000, 0);
	/* end to end: the second starts where the first ended */
	ASSERT_NEAR(q1(st, "SELECT max(start_ns) FROM launches l JOIN ops o ON "
		       "o.id = l.op_id WHERE o.run_id = %lld", run), 6500, 0);
	ASSERT_NEAR(q1(st, "SELECT time_ns FROM v_ops WHERE run_id = %lld", run), 2000, 1e-9);
	ASSERT_NEAR(q1(st, "SELECT dram_read_bytes FROM v_ops WHERE run_id = %lld", run), 20, 1e-9);
	store_close(st);
}

/* A process that commits and is never closed (killed): what it committed
 * is there, whole, and its row still says running. A profile of a run
 * that is not a profile is refused. */
static void killed(const char *db)
{
	long long run = new_run(db, "killed");
	struct collect_config cfg = { .db = db, .run_id = run };
	struct collector *c;
	struct marker_rec m[] = { start(1, 1, 10, "fwd") };
	struct launch_rec l[] = { launch(1, 1, 20), launch(2, 1, 30) };
	struct kernel_rec k[] = { kernel(1, "a", 100, 10, 1), kernel(2, "b", 200, 20, 1) };
	struct store *st;
	struct store_run r = { .command_line = "x", .counters = "none" };
	long long plain;

	ASSERT_EQ(collect_open(&c, &cfg, 77, NULL), 0);
	batch(c, m, ARRAY_SIZE(m), l, ARRAY_SIZE(l), k, ARRAY_SIZE(k), 40, 0);
	/* No close: the process is gone. */
	ASSERT_EQ(store_open(&st, db, STORE_READONLY), 0);
	ASSERT_NEAR(q1(st, "SELECT time_ns FROM v_ops WHERE run_id = %lld AND workload = 'fwd'", run), 30, 1e-9);
	ASSERT_EQ(q1(st, "SELECT count(*) FROM ranges WHERE run_id = %lld AND end_ns IS NULL", run), 1);
	ASSERT_EQ(q1(st, "SELECT count(*) FROM procs WHERE run_id = %lld AND status = "
		     "'running' AND committed_at IS NOT NULL AND kernels_recorded = 2", run), 1);
	store_close(st);

	ASSERT_EQ(store_open(&st, db, STORE_READWRITE), 0);
	ASSERT_EQ(store_begin_run(st, &r, &plain), 0);
	store_close(st);
	cfg.run_id = plain;
	fprintf(stderr, "(an error about run %lld is expected)\n", plain);
	ASSERT_EQ(collect_open(&c, &cfg, 78, NULL), -1);
}

/* Many launches, their kernels coming in a shuffled order over two
 * batches: every kernel finds its launch (the placement map grows and
 * removes entries in any order). */
static void many(const char *db)
{
	enum { N = 3000 };
	long long run = new_run(db, "many");
	struct collect_config cfg = { .db = db, .run_id = run };
	struct collector *c;
	struct marker_rec m[] = { start(7, 1, 10, "big"), end(7, 1, 10 + 10 * N) };
	struct launch_rec *l = xcalloc(N, sizeof *l);
	struct kernel_rec *k = xcalloc(N, sizeof *k);
	uint64_t x = 42;
	struct store *st;

	for (int i = 0; i < N; i++) {
		l[i] = launch((uint32_t)(1000 + 7 * i), 7, 11 + 10 * (uint64_t)i);
		k[i] = kernel((uint32_t)(1000 + 7 * i), i % 2 ? "odd" : "even",
			      100000 + 10 * (uint64_t)i, 5, 1);
	}
	for (int i = N - 1; i > 0; i--) {
		int j = (int)((x = splitmix64(x)) % (uint64_t)(i + 1));
		struct kernel_rec t = k[i];

		k[i] = k[j];
		k[j] = t;
	}
	ASSERT_EQ(collect_open(&c, &cfg, 9, NULL), 0);
	batch(c, m, ARRAY_SIZE(m), l, N, k, N / 3, 100, 0);
	batch(c, NULL, 0, NULL, 0, k + N / 3, N - N / 3, 200, 1);
	ASSERT_EQ(collect_close(c, "complete", NULL), 0);
	ASSERT_EQ(store_open(&st, db, STORE_READONLY), 0);
	ASSERT_EQ(q1(st, "SELECT count(*) FROM ops WHERE run_id = %lld", run), 1);
	ASSERT_EQ(q1(st, "SELECT reps FROM v_ops WHERE run_id = %lld AND workload = 'big'", run), 1);
	ASSERT_EQ(q1(st, "SELECT launches FROM v_kernels WHERE run_id = %lld AND name = 'odd'", run), N / 2);
	ASSERT_NEAR(q1(st, "SELECT time_ns FROM v_ops WHERE run_id = %lld", run), 5.0 * N, 1e-9);
	store_close(st);
	free(l);
	free(k);
}

/* Ranges alone: nesting on a thread, a start/end range ending on another
 * thread, an end with nothing open, pruning. */
static void ranges_unit(void)
{
	struct ranges *r = ranges_new();
	struct marker_rec m[] = {
		start(1, 10, 100, "a"), start(1, 11, 110, "b"), end(1, 11, 120),
		start(1, 12, 130, "c"), start(2, 13, 135, "x"), end(3, 12, 140),
		end(1, 10, 200), end(5, 99, 210),
	};
	unsigned long long unmatched = 0;
	const struct range_inst *in, **ch;

	ranges_apply(r, m, ARRAY_SIZE(m), &unmatched);
	ASSERT_EQ(unmatched, 1);
	ASSERT_STR_EQ(ranges_at(r, 1, 115)->path, "a/b");
	ASSERT_STR_EQ(ranges_at(r, 1, 125)->path, "a");
	ASSERT_STR_EQ(ranges_at(r, 1, 135)->path, "a/c");  /* c ended on thread 3 */
	ASSERT_STR_EQ(ranges_at(r, 1, 145)->path, "a");
	ASSERT(ranges_at(r, 1, 99) == NULL);
	ASSERT(ranges_at(r, 1, 201) == NULL);
	in = ranges_at(r, 2, 1000);  /* x never ends */
	ASSERT(in && in->depth == 0 && in->end == 0);
	ASSERT(ranges_at(r, 4, 150) == NULL);
	{
		/* A range of no known thread holds for every thread, inside
		 * what a thread opened before it. */
		struct marker_rec p[] = { start(0, 50, 300, "proc"), end(0, 50, 400),
					  start(1, 51, 250, "t"), end(1, 51, 500) };

		ranges_apply(r, p, ARRAY_SIZE(p), &unmatched);
		ASSERT_STR_EQ(ranges_at(r, 4, 350)->path, "proc");
		ASSERT_STR_EQ(ranges_at(r, 1, 350)->path, "proc");
		ASSERT_STR_EQ(ranges_at(r, 1, 450)->path, "t");
		ASSERT_STR_EQ(ranges_at(r, 1, 260)->path, "t");
	}
	ASSERT_EQ(ranges_changed(r, &ch), 6);
	ASSERT_EQ(ranges_alive(r), 6);
	ranges_prune(r, 150);  /* b and c ended before 150 */
	ASSERT_EQ(ranges_alive(r), 4);
	ranges_prune(r, 1000);
	ASSERT_EQ(ranges_alive(r), 1);  /* x, open */
	ranges_free(r);

	/* A thread with no range of its own takes the main thread's (a
	 * PyTorch backward launched from autograd's thread). */
	r = ranges_new();
	ranges_main_thread(r, 7);
	{
		struct marker_rec p[] = { start(7, 60, 100, "step"), start(7, 61, 110, "backward"),
					  start(9, 62, 120, "own"), end(9, 62, 130),
					  end(7, 61, 150), end(7, 60, 200) };

		ranges_apply(r, p, ARRAY_SIZE(p), &unmatched);
		ASSERT_STR_EQ(ranges_at(r, 8, 115)->path, "step/backward");
		ASSERT_STR_EQ(ranges_at(r, 8, 160)->path, "step");
		ASSERT_STR_EQ(ranges_at(r, 9, 125)->path, "own");
		ASSERT_STR_EQ(ranges_at(r, 9, 140)->path, "step/backward");
		ASSERT(ranges_at(r, 8, 250) == NULL);
		ASSERT(ranges_at(r, 8, 50) == NULL);
	}
	ranges_free(r);
}

/* --nvtx-include: a path or one of its leading parts matches a glob. */
static void nvtx_include(void)
{
	ASSERT(collect_nvtx_included(NULL, NULL));
	ASSERT(collect_nvtx_included("", "a/b"));
	ASSERT(!collect_nvtx_included("train", NULL));
	ASSERT(collect_nvtx_included("train", "train"));
	ASSERT(collect_nvtx_included("train", "train/step/ln"));
	ASSERT(!collect_nvtx_included("train", "eval/train"));
	ASSERT(!collect_nvtx_included("train", "trainer/step"));
	ASSERT(collect_nvtx_included("train*", "trainer/step"));
	ASSERT(collect_nvtx_included("*/ln", "train/step/ln"));   /* '*' crosses '/' */
	ASSERT(collect_nvtx_included("eval\ntrain/step", "train/step/ln"));
	ASSERT(!collect_nvtx_included("eval\ntrain/step", "train/stepper"));
	ASSERT(collect_nvtx_included("eval\ntrain/step?", "train/step2/x"));
}

/* The op names of launches outside every range. */
static void op_names(void)
{
	char buf[COLLECT_OP_NAME_MAX + 1], a[COLLECT_OP_NAME_MAX + 1], long1[400], long2[400];

	collect_op_name("copy_kernel(float*, float const*, int)", buf, sizeof buf);
	ASSERT_STR_EQ(buf, "copy_kernel");
	collect_op_name("void at::native::(anonymous namespace)::k<float, 4>(float*, "
			"at::native::(anonymous namespace)::P<(int)1>)", buf, sizeof buf);
	ASSERT_STR_EQ(buf, "at::native::(anonymous namespace)::k<float, 4>");
	collect_op_name("sm90_xmma_gemm_bf16bf16_bf16f32", buf, sizeof buf);
	ASSERT_STR_EQ(buf, "sm90_xmma_gemm_bf16bf16_bf16f32");
	collect_op_name("(weird)", buf, sizeof buf);
	ASSERT_STR_EQ(buf, "(weird)");
	/* Two long names alike in their first hundred characters. */
	memset(long1, 'x', 300);
	memcpy(long2, long1, 300);
	strcpy(long1 + 300, "<1>(int)");
	strcpy(long2 + 300, "<2>(int)");
	ASSERT_EQ(collect_op_name(long1, a, sizeof a), COLLECT_OP_NAME_MAX - 16 + 3 + 8);
	collect_op_name(long2, buf, sizeof buf);
	ASSERT(strcmp(a, buf) != 0);
	ASSERT(strncmp(a, buf, COLLECT_OP_NAME_MAX - 16 + 3) == 0);
	ASSERT(strstr(a, "...") == a + COLLECT_OP_NAME_MAX - 16);
}

int main(int argc, char **argv)
{
	long long run;

	error_progname = "test-profile";
	if (argc == 5 && !strcmp(argv[1], "--make")) {
		double scale = atof(argv[4]);

		struct store *st;

		run = new_run(argv[2], argv[3]);
		program(argv[2], run, 4242, scale > 0 ? scale : 1);
		ASSERT_EQ(store_open(&st, argv[2], STORE_READWRITE), 0);
		ASSERT_EQ(store_finish_run(st, run, "complete", "synthetic"), 0);
		store_close(st);
		printf("%lld\n", run);
		return 0;
	}
	ranges_unit();
	op_names();
	nvtx_include();
	snprintf(dbpath, sizeof dbpath, "%s/fuseprof-test-profile-%ld.db",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
	run = new_run(dbpath, "eager");
	program(dbpath, run, 4242, 1);
	check_program(dbpath, run);
	second_process(dbpath, run);
	filter_and_limit(dbpath);
	counted(dbpath);
	untimed(dbpath);
	killed(dbpath);
	many(dbpath);
	unlink(dbpath);
	{
		char wal[4200];

		snprintf(wal, sizeof wal, "%s-wal", dbpath);
		unlink(wal);
		snprintf(wal, sizeof wal, "%s-shm", dbpath);
		unlink(wal);
	}
	printf("profile: all checks passed\n");
	return 0;
}
