/* test-merge.c - store/merge.c on synthetic databases: 64 inputs merged
 * (every run once, every foreign key resolving, v_runs, v_ops, v_kernels
 * and v_roofline of each run as in its input), merged again (nothing
 * added); ranks of a profiled run, each in a file of its own, joined as if
 * they had written one file, in either order; a rank on another host
 * whose process has another rank's pid joined all the same, its rows
 * kept to its own process; each launcher's variables written as the
 * processes' ranks, and v_rank_spread against the numbers computed here
 * from the samples; a run merged again after more processes joined it; the schema-1 sample
 * read as its migrations make it; and refusals (a newer schema, not
 * SQLite, not fuseprof's, empty, damaged) that leave the output as it
 * was. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect.h"
#include "error.h"
#include "merge.h"
#include "probes.h"
#include "store.h"
#include "synth.h"
#include "test.h"
#include "util.h"

static char dir[4096];

static char *path_of(const char *name)
{
	return xasprintf("%s/%s", dir, name);
}

/* Run sql on the file at path through a connection of its own (no store:
 * a test reshapes its inputs). */
static void poke(const char *path, const char *sql)
{
	sqlite3 *db;
	char *why = NULL;

	if (sqlite3_open(path, &db) != SQLITE_OK)
		FAIL("cannot open %s", path);
	if (sqlite3_exec(db, sql, NULL, NULL, &why) != SQLITE_OK)
		FAIL("%s on %s: %s", sql, path, why);
	sqlite3_close(db);
}

static long long qint(struct store *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static long long qint(struct store *st, const char *fmt, ...)
{
	char sql[1024];
	sqlite3_stmt *s;
	long long v = -1;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sql, sizeof sql, fmt, ap);
	va_end(ap);
	if (sqlite3_prepare_v2(store_db(st), sql, -1, &s, NULL) != SQLITE_OK)
		FAIL("bad SQL %s: %s", sql, sqlite3_errmsg(store_db(st)));
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

static long long count_in(const char *path, const char *sql)
{
	struct store *st;
	long long v;

	ASSERT_EQ(store_open(&st, path, STORE_READONLY), 0);
	v = qint(st, "%s", sql);
	store_close(st);
	return v;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The rows of `SELECT cols FROM view WHERE run_id = run`, each a line of
 * its columns but ids (a name "id" or ending in "_id"), the lines sorted:
 * what a run reads as, whatever ids the database gave it. cols "*": all.
 * Returns a malloc'd string. */
static char *dump(struct store *st, const char *view, const char *cols, long long run)
{
	struct strbuf sb = STRBUF_INIT;
	char sql[512], **lines = NULL, *out;
	size_t n = 0;
	sqlite3_stmt *s;

	snprintf(sql, sizeof sql, "SELECT %s FROM %s WHERE run_id = %lld", cols, view, run);
	if (sqlite3_prepare_v2(store_db(st), sql, -1, &s, NULL) != SQLITE_OK)
		FAIL("bad SQL %s: %s", sql, sqlite3_errmsg(store_db(st)));
	while (sqlite3_step(s) == SQLITE_ROW) {
		strbuf_reset(&sb);
		for (int c = 0; c < sqlite3_column_count(s); c++) {
			const char *name = sqlite3_column_name(s, c);
			size_t len = strlen(name);
			const char *v = (const char *)sqlite3_column_text(s, c);

			if (!strcmp(name, "id") || (len > 3 && !strcmp(name + len - 3, "_id")))
				continue;
			strbuf_addf(&sb, "%s=%s|", name, v ? v : "NULL");
		}
		lines = xrealloc(lines, (n + 1) * sizeof *lines);
		lines[n++] = xstrdup(strbuf_str(&sb));
	}
	sqlite3_finalize(s);
	qsort(lines, n, sizeof *lines, cmp_str);
	strbuf_reset(&sb);
	for (size_t i = 0; i < n; i++) {
		strbuf_addf(&sb, "%s\n", lines[i]);
		free(lines[i]);
	}
	free(lines);
	out = xstrdup(strbuf_str(&sb));
	strbuf_release(&sb);
	return out;
}

/* Run a's rows in view of sa against run b's in bview (view, or a table
 * holding its rows) of sb. */
static void same_rows_in(struct store *sa, long long a, struct store *sb,
			 const char *bview, long long b, const char *view,
			 const char *cols)
{
	char *da = dump(sa, view, cols, a), *db = dump(sb, bview, cols, b);

	if (strcmp(da, db))
		FAIL("%s: run %lld of %s and run %lld of %s differ:\n%s---\n%s", view,
		     a, store_path(sa), b, store_path(sb), da, db);
	if (!da[0])
		FAIL("%s: run %lld of %s has no rows", view, a, store_path(sa));
	free(da);
	free(db);
}

/* The same for the databases at pa and pb. */
static void same_rows(const char *pa, long long a, const char *pb, long long b,
		      const char *view, const char *cols)
{
	struct store *sa, *sb;

	ASSERT_EQ(store_open(&sa, pa, STORE_READONLY), 0);
	ASSERT_EQ(store_open(&sb, pb, STORE_READONLY), 0);
	same_rows_in(sa, a, sb, view, b, view, cols);
	store_close(sa);
	store_close(sb);
}

static int merge_into(const char *out, const char *in, double window,
		      struct store_merge_stats *n)
{
	struct store_merge_opts o = { .join_window_s = window };
	struct store *st;
	int rc;

	ASSERT_EQ(store_open(&st, out, STORE_CREATE), 0);
	rc = store_merge(st, in, &o, n);
	store_close(st);
	return rc;
}

/* Every foreign key of out resolves, and SQLite finds the file whole. */
static void consistent(const char *out)
{
	struct store *st;
	sqlite3_stmt *s;

	ASSERT_EQ(store_open(&st, out, STORE_READONLY), 0);
	ASSERT_EQ(sqlite3_prepare_v2(store_db(st), "PRAGMA main.foreign_key_check", -1,
				     &s, NULL), SQLITE_OK);
	if (sqlite3_step(s) == SQLITE_ROW)
		FAIL("%s: a foreign key of table %s does not resolve", out,
		     sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	ASSERT_EQ(sqlite3_prepare_v2(store_db(st), "PRAGMA main.integrity_check", -1,
				     &s, NULL), SQLITE_OK);
	ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
	ASSERT_STR_EQ((const char *)sqlite3_column_text(s, 0), "ok");
	sqlite3_finalize(s);
	store_close(st);
}

static const char *const tables[] = { "runs", "devices", "ceilings", "ops",
	"samples", "kernels", "counters", "procs", "ranges", "launches", NULL };

/* Rows of every table of path, in tables' order. */
static void counts(const char *path, long long *n)
{
	struct store *st;

	ASSERT_EQ(store_open(&st, path, STORE_READONLY), 0);
	for (int i = 0; tables[i]; i++)
		n[i] = qint(st, "SELECT count(*) FROM %s", tables[i]);
	store_close(st);
}

static void unchanged(const char *path, const long long *before)
{
	long long now[16];

	counts(path, now);
	for (int i = 0; tables[i]; i++)
		if (now[i] != before[i])
			FAIL("%s: %s has %lld rows, had %lld", path, tables[i], now[i],
			     before[i]);
}

/* ---- 64 inputs ---------------------------------------------------------- */

#define NIN 64

static void many_inputs(void)
{
	char *out = path_of("many.db"), *in[NIN];
	long long total[16] = { 0 }, got[16], nruns = 0;
	struct store_merge_stats n;

	for (int i = 0; i < NIN; i++) {
		struct synth_opts o = { .nops = 2 + i % 5, .seed = 100 + i,
					.ceilings = 1, .counters = i % 7 != 3,
					.wrong_every = 4, .tag = i % 3 ? NULL : "nightly",
					.pairs = i % 9 == 0 };
		char sql[256];

		in[i] = xasprintf("%s/in%02d.db", dir, i);
		ASSERT(synth_build(in[i], &o) > 0);
		if (i % 4 == 0) {
			o.seed += 1000;
			o.tag = "second";
			ASSERT(synth_build(in[i], &o) > 0);
		}
		/* Each run as if a process of its own made it (this one
		 * made them all, within a second), and every eighth input
		 * on another GPU. */
		snprintf(sql, sizeof sql, "UPDATE runs SET pid = %d + id;%s",
			 100000 + 10 * i, i % 8 == 7 ? "UPDATE devices SET uuid = "
			 "'GPU-synthetic-other', name = 'Other H100';" : "");
		poke(in[i], sql);
		counts(in[i], got);
		for (int t = 0; tables[t]; t++)
			total[t] += got[t];
	}
	for (int i = 0; i < NIN; i++) {
		ASSERT_EQ(merge_into(out, in[i], 60, &n), 0);
		nruns += n.runs_added;
		ASSERT_EQ(n.runs_present + n.runs_joined, 0);
	}
	counts(out, got);
	ASSERT_EQ(nruns, total[0]);
	/* Every row once (each run measured its own ceilings), but the
	 * devices: two GPUs. */
	for (int t = 0; tables[t]; t++)
		if (strcmp(tables[t], "devices"))
			ASSERT_EQ(got[t], total[t]);
	ASSERT_EQ(got[1], 2);
	ASSERT(total[1] == NIN);
	consistent(out);
	/* Every run reads as it did in its input. The views of the output
	 * read once into TEMP tables: v_ops, v_roofline and v_ceilings rank
	 * the ceilings of every run of a device (80 runs, 640 ceilings
	 * here), a tenth of a second a query. */
	{
		static const char *const views[] = { "v_runs", "v_ops", "v_kernels",
						     "v_roofline", "v_ceilings", NULL };
		struct store *so;

		ASSERT_EQ(store_open(&so, out, STORE_READONLY), 0);
		for (int v = 0; views[v]; v++) {
			char *sql = xasprintf("CREATE TEMP TABLE snap_%s AS SELECT * "
					      "FROM %s", views[v], views[v]);

			ASSERT_EQ(sqlite3_exec(store_db(so), sql, NULL, NULL, NULL),
				  SQLITE_OK);
			free(sql);
		}
		for (int i = 0; i < NIN; i++) {
			struct store *st;
			sqlite3_stmt *s;

			ASSERT_EQ(store_open(&st, in[i], STORE_READONLY), 0);
			ASSERT_EQ(sqlite3_prepare_v2(store_db(st), "SELECT id, pid FROM "
						     "runs", -1, &s, NULL), SQLITE_OK);
			while (sqlite3_step(s) == SQLITE_ROW) {
				long long a = sqlite3_column_int64(s, 0);
				long long b = qint(so, "SELECT id FROM runs WHERE pid = %lld",
						   sqlite3_column_int64(s, 1));

				ASSERT(b > 0);
				for (int v = 0; views[v]; v++) {
					char *snap = xasprintf("snap_%s", views[v]);

					same_rows_in(st, a, so, snap, b, views[v], "*");
					free(snap);
				}
			}
			sqlite3_finalize(s);
			store_close(st);
		}
		store_close(so);
	}
	/* Idempotent: every input again adds nothing, a copy neither. */
	counts(out, got);
	for (int i = 0; i < NIN; i++) {
		ASSERT_EQ(merge_into(out, in[i], 60, &n), 0);
		ASSERT_EQ(n.runs_added + n.runs_joined + n.ops + n.samples + n.kernels +
			  n.counters + n.devices + n.ceilings, 0);
		ASSERT_EQ(n.runs_present, i % 4 == 0 ? 2 : 1);
	}
	{
		char *copy = path_of("copy.db"), *cmd;

		cmd = xasprintf("cp '%s' '%s'", in[5], copy);
		ASSERT_EQ(system(cmd), 0);
		ASSERT_EQ(merge_into(out, copy, 60, &n), 0);
		ASSERT_EQ(n.runs_present, 1);
		free(cmd);
		free(copy);
	}
	unchanged(out, got);
	for (int i = 0; i < NIN; i++)
		free(in[i]);
	free(out);
}

/* Two runs of one file alike in every column that tells runs apart (one
 * process made both in one second): two runs, and again, nothing. */
static void twins(void)
{
	char *in = path_of("twins.db"), *out = path_of("twins-out.db");
	struct synth_opts o = { .nops = 3, .seed = 5, .ceilings = 1, .counters = 1 };
	struct store_merge_stats n;
	long long before[16];

	ASSERT(synth_build(in, &o) > 0);
	o.seed = 6;
	ASSERT(synth_build(in, &o) > 0);
	/* The second measured other ceilings: each keeps its own. */
	poke(in, "UPDATE runs SET pid = 555, started_at = '2026-01-01T00:00:00Z';"
	     "UPDATE ceilings SET value = value * 1.01 WHERE run_id = 2");
	ASSERT_EQ(merge_into(out, in, 60, &n), 0);
	ASSERT_EQ(n.runs_added, 2);
	same_rows(in, 2, out, 2, "v_ops", "*");
	same_rows(in, 2, out, 2, "v_ceilings", "*");
	counts(out, before);
	ASSERT_EQ(merge_into(out, in, 60, &n), 0);
	ASSERT_EQ(n.runs_present, 2);
	unchanged(out, before);
	free(in);
	free(out);
}

/* ---- ranks -------------------------------------------------------------- */

#define PROFILE_CMD "fuseprof profile --tag ddp --db /tmp/r%r.db -- python train.py"

static struct marker_rec mark(enum marker_kind k, uint32_t tid, uint32_t id,
			      uint64_t ts, const char *name)
{
	struct marker_rec m = { k, id, tid, ts, name, NULL };

	return m;
}

static struct kernel_rec kernel(uint32_t corr, const char *name, uint64_t start,
				uint64_t dur)
{
	struct kernel_rec k;

	memset(&k, 0, sizeof k);
	k.name = k.mangled = name;
	k.grid[0] = 128;
	k.grid[1] = k.grid[2] = 1;
	k.block[0] = 256;
	k.block[1] = k.block[2] = 1;
	k.registers = 32;
	k.stream = 7;
	k.correlation = corr;
	k.start = start;
	k.end = start + dur;
	return k;
}

static long long profile_run(const char *db)
{
	struct store_run r = { .command_line = PROFILE_CMD, .tag = "ddp",
			       .counters = "none", .kind = "profile" };
	struct store *st;
	long long id;

	ASSERT_EQ(store_open(&st, db, STORE_CREATE), 0);
	ASSERT_EQ(store_begin_run(st, &r, &id), 0);
	store_close(st);
	return id;
}

/* One rank's process pid: `steps` steps, each a range "step" holding
 * "step/ln" (two kernels) and, in rank-dependent steps, "step/mlp" (a
 * kernel of its own launch configuration in rank 1); durations grow
 * with pid so that every rank's numbers differ. */
static void rank_process(const char *db, long long run, long long pid, int steps)
{
	struct collect_config cfg = { .db = db, .run_id = run };
	struct collector *c;
	uint64_t t = 1000, scale = (uint64_t)(pid % 97) + 1;

	ASSERT_EQ(collect_open(&c, &cfg, pid, "python train.py"), 0);
	for (int i = 0; i < steps; i++) {
		uint32_t id = (uint32_t)(10 * i);
		struct marker_rec m[6];
		struct launch_rec l[3];
		struct kernel_rec k[3];
		size_t nm = 0, nk = 0;
		struct collect_batch b;

		m[nm++] = mark(MARKER_START, 100, id + 1, t, "step");
		m[nm++] = mark(MARKER_START, 100, id + 2, t + 10, "ln");
		m[nm++] = mark(MARKER_END, 100, id + 2, t + 400, NULL);
		l[nk] = (struct launch_rec){ id + 1, 100, t + 20, 0, -1 };
		k[nk++] = kernel(id + 1, "ln_fwd", t + 5000, 100 + scale * (uint64_t)i);
		l[nk] = (struct launch_rec){ id + 2, 100, t + 30, 0, -1 };
		k[nk++] = kernel(id + 2, "ln_stats", t + 5200, 50 + scale);
		if ((i + pid) % 2) {
			m[nm++] = mark(MARKER_START, 100, id + 3, t + 500, "mlp");
			m[nm++] = mark(MARKER_END, 100, id + 3, t + 900, NULL);
			l[nk] = (struct launch_rec){ id + 3, 100, t + 510, 0, -1 };
			k[nk] = kernel(id + 3, "gemm", t + 5400, 300 + 7 * scale);
			k[nk++].grid[0] = 64 + (unsigned)(pid % 2);
		}
		m[nm++] = mark(MARKER_END, 100, id + 1, t + 1000, NULL);
		b = (struct collect_batch){ m, nm, l, nk, k, nk, t + 1000, 0, i == steps - 1 };
		ASSERT_EQ(collect_batch(c, &b), 0);
		t += 2000;
	}
	ASSERT_EQ(collect_close(c, "complete", NULL), 0);
}

static void finish(const char *db, long long run)
{
	struct store *st;

	ASSERT_EQ(store_open(&st, db, STORE_READWRITE), 0);
	ASSERT_EQ(store_finish_run(st, run, "complete", NULL), 0);
	store_close(st);
}

/* A rank's file: its run, as `fuseprof profile` on host node<rank> with
 * pid 7000 + rank made it under torchrun (RANK, LOCAL_RANK 0, WORLD_SIZE
 * 3), and its processes. */
static char *rank_file(const char *name, int rank, const long long *pids, int npids,
		       int finished)
{
	char *db = path_of(name), sql[256];
	long long run;

	unlink(db);
	run = profile_run(db);
	snprintf(sql, sizeof sql, "%d", rank);
	setenv("RANK", sql, 1);
	setenv("LOCAL_RANK", "0", 1);
	setenv("WORLD_SIZE", "3", 1);
	for (int i = 0; i < npids; i++)
		rank_process(db, run, pids[i], 3 + (int)(pids[i] % 3));
	unsetenv("RANK");
	unsetenv("LOCAL_RANK");
	unsetenv("WORLD_SIZE");
	if (finished)
		finish(db, run);
	snprintf(sql, sizeof sql, "UPDATE runs SET pid = %d, host = 'node%d';"
		 "UPDATE procs SET host = 'node%d'", 7000 + rank, rank, rank);
	poke(db, sql);
	return db;
}

/* v_rank_spread of run `run` in the file at path against what the test
 * computes from the rows: per op, each rank's median sample time (its
 * processes' samples pooled), their least, median and most, the spread
 * and the slowest rank (the least rank among equals) with its host. */
static void rank_spread(const char *path, long long run)
{
	struct store *st;
	sqlite3_stmt *s, *v;
	long long op = -1, rank = -1;
	double t[64], med[16];
	long long ranks[16];
	size_t nt = 0, nr = 0;
	int checked = 0, spread = 0;

	ASSERT_EQ(store_open(&st, path, STORE_READONLY), 0);
	ASSERT_EQ(sqlite3_prepare_v2(store_db(st), "SELECT x.op_id, p.rank, x.time_ns "
				     "FROM samples x JOIN procs p ON p.id = x.proc_id "
				     "JOIN ops o ON o.id = x.op_id WHERE o.run_id = ?1 "
				     "AND p.rank IS NOT NULL ORDER BY x.op_id, p.rank",
				     -1, &s, NULL), SQLITE_OK);
	ASSERT_EQ(sqlite3_prepare_v2(store_db(st), "SELECT ranks, time_ns_min, "
				     "time_ns_median, time_ns_max, spread, slowest_rank, "
				     "slowest_host, (SELECT min(host) FROM procs WHERE "
				     "run_id = ?2 AND rank = ?3) FROM v_rank_spread WHERE "
				     "op_id = ?1", -1, &v, NULL), SQLITE_OK);
	sqlite3_bind_int64(s, 1, run);
	for (int more = 1; more;) {
		int row = sqlite3_step(s) == SQLITE_ROW;
		long long o = row ? sqlite3_column_int64(s, 0) : -2;
		long long r = row ? sqlite3_column_int64(s, 1) : -2;

		if ((o != op || r != rank) && nt) {
			ASSERT(nr < 16);
			ranks[nr] = rank;
			med[nr++] = median_of(t, nt);
			nt = 0;
		}
		if (o != op && nr) {
			double lo = med[0], hi = med[0];
			long long slow = ranks[0];

			for (size_t i = 1; i < nr; i++) {
				lo = med[i] < lo ? med[i] : lo;
				if (med[i] > hi) {
					hi = med[i];
					slow = ranks[i];
				}
			}
			sqlite3_bind_int64(v, 1, op);
			sqlite3_bind_int64(v, 2, run);
			sqlite3_bind_int64(v, 3, slow);
			ASSERT_EQ(sqlite3_step(v), SQLITE_ROW);
			ASSERT_EQ(sqlite3_column_int64(v, 0), (long long)nr);
			ASSERT_NEAR(sqlite3_column_double(v, 1), lo, 1e-12);
			ASSERT_NEAR(sqlite3_column_double(v, 2), median_of(med, nr), 1e-12);
			ASSERT_NEAR(sqlite3_column_double(v, 3), hi, 1e-12);
			ASSERT_NEAR(sqlite3_column_double(v, 4), hi / lo, 1e-12);
			ASSERT_EQ(sqlite3_column_int64(v, 5), slow);
			ASSERT_STR_EQ((const char *)sqlite3_column_text(v, 6),
				      (const char *)sqlite3_column_text(v, 7));
			sqlite3_reset(v);
			checked++;
			spread += nr > 1 && hi > lo;
			nr = 0;
		}
		if (!row) {
			more = 0;
			continue;
		}
		op = o;
		rank = r;
		ASSERT(nt < 64);
		t[nt++] = sqlite3_column_double(s, 2);
	}
	sqlite3_finalize(s);
	sqlite3_finalize(v);
	/* Every op has its row, and some ranks differ: the check could fail. */
	ASSERT(checked > 0);
	ASSERT(spread > 0);
	ASSERT_EQ(count_in(path, "SELECT count(*) FROM v_rank_spread"), checked);
	store_close(st);
}

/* Each launcher's variables, as the collector finds them, in the
 * process's row: rank, local rank, world size; none of them: NULLs. */
static void launchers(void)
{
	static const char *const vars[] = { "RANK", "LOCAL_RANK", "WORLD_SIZE",
		"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
		"OMPI_COMM_WORLD_SIZE", "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE",
		"SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS" };
	static const char *const vals[4][3] = { { "5", "1", "8" }, { "6", "2", "16" },
		{ "7", "3", "12" }, { "9", "1", "10" } };
	char *db = path_of("launchers.db");
	long long run;

	unlink(db);
	for (size_t i = 0; i < ARRAY_SIZE(vars); i++)
		unsetenv(vars[i]);
	run = profile_run(db);
	for (int l = 0; l < 5; l++) {
		char sql[256];

		for (int j = 0; j < 3 && l < 4; j++)
			setenv(vars[3 * l + j], vals[l][j], 1);
		rank_process(db, run, 100 + l, 2);
		for (int j = 0; j < 3 && l < 4; j++)
			unsetenv(vars[3 * l + j]);
		snprintf(sql, sizeof sql, "SELECT count(*) FROM procs WHERE pid = %d AND "
			 "rank IS %s AND local_rank IS %s AND world_size IS %s", 100 + l,
			 l < 4 ? vals[l][0] : "NULL", l < 4 ? vals[l][1] : "NULL",
			 l < 4 ? vals[l][2] : "NULL");
		ASSERT_EQ(count_in(db, sql), 1);
	}
	free(db);
}

/* The columns a joined run must read as the run of one file: everything
 * but the order in which slots and samples were numbered. */
#define OPS_COLS "workload, variant, role, reps, time_ns, time_ns_min, " \
	"time_ns_max, span_ns, launches, nkernels, longest_kernel_ns, status"
#define KERNEL_COLS "workload, name, launches, dur_ns, dur_ns_min, dur_ns_max, " \
	"grid_x, block_x, registers"

static void ranks(void)
{
	const long long p0[] = { 4242 }, p1[] = { 4343, 4344 }, p2[] = { 4242 };
	char *r0 = rank_file("r0.db", 0, p0, 1, 1), *r1 = rank_file("r1.db", 1, p1, 2, 1);
	char *one = path_of("one.db"), *out = path_of("ranks.db");
	char *back = path_of("ranks-back.db"), *apart = path_of("apart.db");
	struct store_merge_stats n;
	long long before[16], run;

	/* The reference: all three processes into one file, one run. */
	run = profile_run(one);
	rank_process(one, run, 4242, 3 + 4242 % 3);
	rank_process(one, run, 4343, 3 + 4343 % 3);
	rank_process(one, run, 4344, 3 + 4344 % 3);
	finish(one, run);

	ASSERT_EQ(merge_into(out, r0, 60, &n), 0);
	ASSERT_EQ(n.runs_added, 1);
	ASSERT_EQ(merge_into(out, r1, 60, &n), 0);
	ASSERT_EQ(n.runs_joined, 1);
	ASSERT_EQ(n.runs_added, 0);
	ASSERT_EQ(n.procs, 2);
	ASSERT_EQ(count_in(out, "SELECT count(*) FROM runs"), 1);
	ASSERT_EQ(count_in(out, "SELECT count(*) FROM procs WHERE run_id = 1"), 3);
	ASSERT_EQ(count_in(out, "SELECT count(DISTINCT host) FROM procs"), 2);
	ASSERT_EQ(count_in(out, "SELECT count(*) FROM ranges"),
		  count_in(one, "SELECT count(*) FROM ranges"));
	ASSERT_EQ(count_in(out, "SELECT count(*) FROM launches"),
		  count_in(one, "SELECT count(*) FROM launches"));
	ASSERT_EQ(count_in(out, "SELECT count(*) FROM samples"),
		  count_in(one, "SELECT count(*) FROM samples"));
	/* The run keeps its first rank's row. */
	ASSERT_EQ(count_in(out, "SELECT count(*) FROM runs WHERE host = 'node0' "
			   "AND pid = 7000"), 1);
	/* Medians over the samples and launches of every rank: the one
	 * file's numbers. */
	same_rows(one, run, out, 1, "v_ops", OPS_COLS);
	same_rows(one, run, out, 1, "v_kernels", KERNEL_COLS);
	same_rows(one, run, out, 1, "v_roofline", "workload, time_ns, launches");
	consistent(out);
	/* Again, either rank: nothing. */
	counts(out, before);
	ASSERT_EQ(merge_into(out, r1, 60, &n), 0);
	ASSERT_EQ(n.runs_present, 1);
	ASSERT_EQ(merge_into(out, r0, 60, &n), 0);
	ASSERT_EQ(n.runs_present, 1);
	unchanged(out, before);

	/* The other order gives the same run. */
	ASSERT_EQ(merge_into(back, r1, 60, &n), 0);
	ASSERT_EQ(merge_into(back, r0, 60, &n), 0);
	ASSERT_EQ(n.runs_joined, 1);
	same_rows(one, run, back, 1, "v_ops", OPS_COLS);
	same_rows(one, run, back, 1, "v_kernels", KERNEL_COLS);
	consistent(back);

	/* No window: two runs, each as in its file. */
	ASSERT_EQ(merge_into(apart, r0, 0, &n), 0);
	ASSERT_EQ(merge_into(apart, r1, 0, &n), 0);
	ASSERT_EQ(n.runs_added, 1);
	same_rows(r1, 1, apart, 2, "v_ops", "*");

	/* A third rank on another host whose process has rank 0's pid:
	 * joined as any rank (rows name their process by its row), its
	 * samples, ranges and launches its own; merged again, nothing. The
	 * reference: the four processes into one file, two of one pid. */
	{
		char *r2 = rank_file("r2.db", 2, p2, 1, 1), *one2 = path_of("one2.db");
		long long run2 = profile_run(one2), node0, node2;

		rank_process(one2, run2, 4242, 3 + 4242 % 3);
		rank_process(one2, run2, 4343, 3 + 4343 % 3);
		rank_process(one2, run2, 4344, 3 + 4344 % 3);
		rank_process(one2, run2, 4242, 3 + 4242 % 3);
		finish(one2, run2);
		ASSERT_EQ(count_in(one2, "SELECT count(*) FROM procs WHERE pid = 4242"), 2);
		ASSERT_EQ(merge_into(out, r2, 60, &n), 0);
		ASSERT_EQ(n.runs_joined, 1);
		ASSERT_EQ(n.runs_added, 0);
		ASSERT_EQ(n.procs, 1);
		ASSERT_EQ(count_in(out, "SELECT count(*) FROM runs"), 1);
		ASSERT_EQ(count_in(out, "SELECT count(*) FROM procs WHERE pid = 4242"), 2);
		same_rows(one2, run2, out, 1, "v_ops", OPS_COLS);
		same_rows(one2, run2, out, 1, "v_kernels", KERNEL_COLS);
		node0 = count_in(out, "SELECT id FROM procs WHERE host = 'node0'");
		node2 = count_in(out, "SELECT id FROM procs WHERE host = 'node2'");
		ASSERT(node0 > 0 && node2 > 0 && node0 != node2);
		/* Each process keeps its own rows: node2's are r2's. */
		{
			char sql[256];

			snprintf(sql, sizeof sql, "SELECT count(*) FROM samples WHERE "
				 "proc_id = %lld", node2);
			ASSERT_EQ(count_in(out, sql), count_in(r2, "SELECT count(*) FROM samples"));
			snprintf(sql, sizeof sql, "SELECT count(*) FROM launches WHERE "
				 "proc_id = %lld", node2);
			ASSERT_EQ(count_in(out, sql), count_in(r2, "SELECT count(*) FROM launches"));
			snprintf(sql, sizeof sql, "SELECT count(*) FROM ranges WHERE "
				 "proc_id = %lld", node0);
			ASSERT_EQ(count_in(out, sql), count_in(r0, "SELECT count(*) FROM ranges"));
			snprintf(sql, sizeof sql, "SELECT sum(end_ns - start_ns) FROM "
				 "launches WHERE proc_id = %lld", node2);
			ASSERT_EQ(count_in(out, sql), count_in(r2, "SELECT sum(end_ns - "
							       "start_ns) FROM launches"));
		}
		ASSERT_EQ(count_in(out, "SELECT count(*) FROM samples WHERE proc_id IS NULL"), 0);
		/* The ranks the launcher gave, each process's. */
		ASSERT_EQ(count_in(out, "SELECT rank FROM procs WHERE host = 'node2'"), 2);
		ASSERT_EQ(count_in(out, "SELECT count(*) FROM procs WHERE world_size = 3 "
				   "AND local_rank = 0"), 4);
		consistent(out);
		rank_spread(out, 1);
		counts(out, before);
		ASSERT_EQ(merge_into(out, r2, 60, &n), 0);
		ASSERT_EQ(n.runs_present, 1);
		unchanged(out, before);
		free(r2);
		free(one2);
	}

	/* A run merged while it ran, then again once another process had
	 * joined it: only that process is added. */
	{
		char *live = path_of("live.db"), *lout = path_of("live-out.db");
		long long lrun;

		lrun = profile_run(live);
		rank_process(live, lrun, 5151, 4);
		ASSERT_EQ(merge_into(lout, live, 60, &n), 0);
		ASSERT_EQ(n.runs_added, 1);
		rank_process(live, lrun, 5252, 5);
		finish(live, lrun);
		ASSERT_EQ(merge_into(lout, live, 60, &n), 0);
		ASSERT_EQ(n.runs_joined, 1);
		ASSERT_EQ(n.procs, 1);
		ASSERT_EQ(count_in(lout, "SELECT count(*) FROM runs"), 1);
		same_rows(live, lrun, lout, 1, "v_ops", OPS_COLS);
		same_rows(live, lrun, lout, 1, "v_kernels", KERNEL_COLS);
		consistent(lout);
		free(live);
		free(lout);
	}
	free(r0);
	free(r1);
	free(one);
	free(out);
	free(back);
	free(apart);
}

/* ---- an old schema, refusals --------------------------------------------- */

/* Schema 6 (rows keyed by pid, ops without a device): the shipped profile
 * example read as it is, migrated to the current schema in a copy (each
 * sample, launch and range given the process of its run with its pid;
 * the views alike), and
 * merged: the 6 file, then its migrated copy (the same runs: nothing
 * added), each process's rows its own. */
static void schema6(void)
{
	const char *src = getenv("srcdir");
	char *old = xasprintf("%s/examples/h100-profile.db", src && *src ? src : ".");
	char *copy = path_of("schema6.db"), *out = path_of("schema6-out.db");
	/* A writable copy: a release's source tree is read-only. */
	char *cmd = xasprintf("cp '%s' '%s' && chmod u+w '%s'", old, copy, copy);
	struct store_merge_stats n;
	struct store *st;
	long long nruns, before[16];

	if (access(old, R_OK) != 0)
		FAIL("no %s (run from the build tree with srcdir set)", old);
	ASSERT_EQ(count_in(old, "PRAGMA user_version"), 6);
	nruns = count_in(old, "SELECT count(*) FROM runs");
	ASSERT(nruns > 0);
	/* Read as it is: every row of a process has it. */
	ASSERT(count_in(old, "SELECT count(*) FROM samples WHERE pid IS NOT NULL") > 0);
	ASSERT_EQ(count_in(old, "SELECT count(*) FROM samples WHERE pid IS NOT NULL "
			   "AND proc_id IS NULL"), 0);
	ASSERT_EQ(count_in(old, "SELECT count(*) FROM procs WHERE rank IS NOT NULL"), 0);
	ASSERT_EQ(system(cmd), 0);
	ASSERT_EQ(store_open(&st, copy, STORE_READWRITE), 0);
	store_close(st);
	ASSERT_EQ(count_in(copy, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	for (long long r = 1; r <= nruns; r++) {
		same_rows(old, r, copy, r, "v_ops", "*");
		same_rows(old, r, copy, r, "v_kernels", "*");
		same_rows(old, r, copy, r, "v_roofline", "*");
	}
	for (int t = 0; t < 3; t++) {
		static const char *const q[3] = {
			"SELECT count(*) FROM samples x JOIN procs p ON p.id = x.proc_id "
			"AND p.pid = x.pid",
			"SELECT count(*) FROM launches x JOIN procs p ON p.id = x.proc_id "
			"AND p.pid = x.pid",
			"SELECT count(*) FROM ranges x JOIN procs p ON p.id = x.proc_id "
			"AND p.pid = x.pid AND p.run_id = x.run_id" };
		static const char *const all[3] = {
			"SELECT count(*) FROM samples WHERE pid IS NOT NULL",
			"SELECT count(*) FROM launches", "SELECT count(*) FROM ranges" };

		ASSERT(count_in(copy, all[t]) > 0);
		ASSERT_EQ(count_in(copy, q[t]), count_in(old, all[t]));
	}
	consistent(copy);
	/* The 6 file, then the same runs migrated: present. */
	ASSERT_EQ(merge_into(out, old, 60, &n), 0);
	ASSERT_EQ(n.runs_added, nruns);
	ASSERT_EQ(count_in(out, "SELECT count(*) FROM samples x JOIN procs p "
			   "ON p.id = x.proc_id AND p.pid = x.pid"),
		  count_in(old, "SELECT count(*) FROM samples WHERE pid IS NOT NULL"));
	for (long long r = 1; r <= nruns; r++)
		same_rows(old, r, out, r, "v_ops", "*");
	consistent(out);
	counts(out, before);
	ASSERT_EQ(merge_into(out, copy, 60, &n), 0);
	ASSERT_EQ(n.runs_present, nruns);
	unchanged(out, before);
	free(cmd);
	free(old);
	free(copy);
	free(out);
}

static void old_schema(void)
{
	const char *src = getenv("srcdir");
	char *old = xasprintf("%s/tests/data/schema1.db", src && *src ? src : ".");
	char *out = path_of("old-out.db");
	struct store_merge_stats n;
	long long nruns;

	if (access(old, R_OK) != 0)
		FAIL("no %s (run from the build tree with srcdir set)", old);
	ASSERT_EQ(count_in(old, "PRAGMA user_version"), 1);
	ASSERT_EQ(merge_into(out, old, 60, &n), 0);
	nruns = count_in(old, "SELECT count(*) FROM runs");
	ASSERT(nruns > 0);
	ASSERT_EQ(n.runs_added, nruns);
	for (long long r = 1; r <= nruns; r++) {
		same_rows(old, r, out, r, "v_ops", "*");
		same_rows(old, r, out, r, "v_roofline", "*");
	}
	ASSERT_EQ(count_in(out, "SELECT count(*) FROM ops WHERE kernel_opts = ''"),
		  count_in(out, "SELECT count(*) FROM ops"));
	consistent(out);
	ASSERT_EQ(merge_into(out, old, 60, &n), 0);
	ASSERT_EQ(n.runs_present, nruns);
	ASSERT_EQ(n.ops, 0);
	free(old);
	free(out);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ASSERT(f != NULL);
	fputs(text, f);
	fclose(f);
}

static void refusals(void)
{
	char *out = path_of("many.db"), *bad;
	struct synth_opts o = { .nops = 400, .seed = 7, .ceilings = 1, .counters = 1 };
	struct store_merge_stats n;
	long long before[16];
	FILE *f;
	long size;

	counts(out, before);
	ASSERT(before[0] > 0);

	bad = path_of("newer.db");
	ASSERT(synth_build(bad, &o) > 0);
	poke(bad, "UPDATE runs SET pid = 99; PRAGMA user_version = 99");
	ASSERT_EQ(merge_into(out, bad, 60, &n), -1);
	unchanged(out, before);
	free(bad);

	bad = path_of("text.db");
	write_file(bad, "this is not a database, but it is long enough to have a "
		   "header where SQLite looks for one: 0123456789abcdef0123456789\n");
	ASSERT_EQ(merge_into(out, bad, 60, &n), -1);
	free(bad);

	bad = path_of("other.db");
	poke(bad, "CREATE TABLE t (x); INSERT INTO t VALUES (1)");
	ASSERT_EQ(merge_into(out, bad, 60, &n), -1);
	free(bad);

	bad = path_of("empty.db");
	write_file(bad, "");
	ASSERT_EQ(merge_into(out, bad, 60, &n), -1);
	free(bad);

	bad = path_of("missing.db");
	ASSERT_EQ(merge_into(out, bad, 60, &n), -1);
	free(bad);

	/* Damaged: the last third of a large input overwritten. Its runs,
	 * at the front, would copy; its counters, at the end, do not read:
	 * nothing of it may stay. */
	bad = path_of("damaged.db");
	ASSERT(synth_build(bad, &o) > 0);
	poke(bad, "UPDATE runs SET pid = 98");
	f = fopen(bad, "r+b");
	ASSERT(f != NULL);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	ASSERT(size > 200000);
	fseek(f, size - size / 3, SEEK_SET);
	for (long i = 0; i < size / 3; i++)
		fputc(0x5a, f);
	fclose(f);
	ASSERT_EQ(merge_into(out, bad, 60, &n), -1);
	unchanged(out, before);
	consistent(out);
	free(bad);
	free(out);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	char *cmd;

	error_progname = "test-merge";
	snprintf(dir, sizeof dir, "%s/fuseprof-test-merge-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		FAIL("cannot make a temporary folder");
	many_inputs();
	twins();
	launchers();
	ranks();
	old_schema();
	schema6();
	refusals();
	cmd = xasprintf("rm -rf '%s'", dir);
	if (system(cmd) != 0)
		FAIL("cannot remove %s", dir);
	free(cmd);
	printf("merge: all checks passed\n");
	return 0;
}
