/* test-store.c - the store: round trip, views, run references, atomic ops,
 * and every bad-input case leaving the file untouched with a clear error. */
#include "config.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store.h"
#include "test.h"
#include "util.h"

static char dir[] = "/tmp/fuseprof-test-store.XXXXXX";
static char errfile[256];
static char errbuf[4096];
static int saved_stderr = -1;

/* Route stderr to a file until capture_end(), which returns what was written. */
static void capture_begin(void)
{
	int fd;

	fflush(stderr);
	saved_stderr = dup(2);
	fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT(fd >= 0);
	dup2(fd, 2);
	close(fd);
}

static const char *capture_end(void)
{
	FILE *f;
	size_t n;

	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	f = fopen(errfile, "r");
	ASSERT(f);
	n = fread(errbuf, 1, sizeof errbuf - 1, f);
	errbuf[n] = '\0';
	fclose(f);
	return errbuf;
}

/* The error is one line naming the file and containing want. */
static void assert_one_line_error(const char *err, const char *path, const char *want)
{
	const char *nl = strchr(err, '\n');

	if (strncmp(err, "fuseprof: ", 10) || !nl || nl[1] != '\0' ||
	    !strstr(err, path) || !strstr(err, want))
		FAIL("expected one line naming '%s' with '%s', got: %s", path, want, err);
}

static char *path_in_dir(const char *name)
{
	return xasprintf("%s/%s", dir, name);
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;

	ASSERT(f);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = xmalloc(*len + 1);
	ASSERT(fread(buf, 1, *len, f) == *len);
	fclose(f);
	return buf;
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	ASSERT(f);
	ASSERT(fwrite(data, 1, len, f) == len);
	fclose(f);
}

static double query_double(struct store *st, const char *sql)
{
	sqlite3_stmt *s;
	double v = NAN;

	if (sqlite3_prepare_v2(store_db(st), sql, -1, &s, NULL) != SQLITE_OK)
		FAIL("prepare '%s': %s", sql, sqlite3_errmsg(store_db(st)));
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL)
		v = sqlite3_column_double(s, 0);
	sqlite3_finalize(s);
	return v;
}

static const char *const names[] = {
	"dram__bytes_read.sum", "dram__bytes_write.sum",
	"sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
	"sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
	"sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
};

/* An op of two kernels with random counters; returns them in vals. */
static void make_op(struct store_op *op, struct store_kernel k[2],
		    double vals[2][5], double *times, const char *shape)
{
	for (int j = 0; j < 2; j++) {
		for (int c = 0; c < 5; c++)
			vals[j][c] = (double)(rand() % 1000000 + 1);
		k[j] = (struct store_kernel){
			.name = j ? "stats_kernel" : "apply_kernel",
			.grid = { 64, 2, 1 }, .block = { 128, 1, 1 }, .registers = 40,
			.launches = 1 + j, .dur_ns_median = 100.0 * (j + 1),
			.dur_ns_min = 90, .dur_ns_max = 300,
			.ncounters = 5, .counter_names = names, .counter_values = vals[j],
		};
	}
	for (int r = 0; r < 5; r++)
		times[r] = (double)(rand() % 1000 + 500);
	*op = (struct store_op){
		.workload = "ln_gelu_fwd", .variant = "unfused2", .role = "unfused",
		.dtype = "fp32", .shape = shape, .status = "ok", .seed = 42,
		.rel_err = 1e-7, .max_abs_err = 1e-6, .tolerance = 1e-5, .reps = 5,
		.time_ns = times, .launches = 3, .model_flops = 1e6,
		.model_min_bytes = 2e6, .model_variant_bytes = 3e6,
		.nkernels = 2, .kernels = k,
	};
}

static void test_round_trip(void)
{
	char *path = path_in_dir("rt.db");
	struct store *st;
	struct store_device dev = { .uuid = "GPU-1", .name = "NVIDIA H100 80GB HBM3",
				    .cc_major = 9, .sm_count = 132, .driver_version = 580 };
	struct store_run run = { .tool_version = "0.1.0", .host = "h", .tag = "nightly" };
	struct store_op op;
	struct store_kernel k[2];
	double vals[2][5], times[5];
	long long dev_id, dev_id2, run_id, op_id, id;

	ASSERT_EQ(store_open(&st, path, STORE_CREATE), 0);
	ASSERT_EQ(store_upsert_device(st, &dev, &dev_id), 0);
	ASSERT_EQ(store_upsert_device(st, &dev, &dev_id2), 0);
	ASSERT_EQ(dev_id, dev_id2);  /* same uuid, driver and clocks: one row */
	run.device_id = dev_id;
	ASSERT_EQ(store_begin_run(st, &run, &run_id), 0);
	make_op(&op, k, vals, times, "M=3,N=1023");
	op.model_saved_bytes = NAN;  /* in no forward/backward pair */
	ASSERT_EQ(store_insert_op(st, run_id, &op, &op_id), 0);

	/* The view's numbers are the raw counters combined as documented. */
	{
		char *sql;
		double read = vals[0][0] + vals[1][0], write = vals[0][1] + vals[1][1];
		double flops = vals[0][2] + vals[1][2] + vals[0][3] + vals[1][3] +
			       2 * (vals[0][4] + vals[1][4]);

		sql = xasprintf("SELECT dram_bytes FROM v_ops WHERE op_id = %lld", op_id);
		ASSERT_NEAR(query_double(st, sql), read + write, 1e-12);
		free(sql);
		sql = xasprintf("SELECT flops_fp32 FROM v_ops WHERE op_id = %lld", op_id);
		ASSERT_NEAR(query_double(st, sql), flops, 1e-12);
		free(sql);
		sql = xasprintf("SELECT time_ns FROM ops WHERE id = %lld", op_id);
		ASSERT_NEAR(query_double(st, sql), median_of(times, 5), 1e-12);
		free(sql);
		sql = xasprintf("SELECT count(*) FROM samples WHERE op_id = %lld", op_id);
		ASSERT_NEAR(query_double(st, sql), 5, 0);
		free(sql);
		sql = xasprintf("SELECT dram_read_bytes FROM v_kernels WHERE op_id = %lld "
				"AND idx = 1", op_id);
		ASSERT_NEAR(query_double(st, sql), vals[1][0], 1e-12);
		free(sql);
		/* No executed FLOPs declared: NULL stored, model_flops in v_roofline. */
		sql = xasprintf("SELECT model_executed_flops IS NULL FROM ops WHERE "
				"id = %lld", op_id);
		ASSERT_NEAR(query_double(st, sql), 1, 0);
		free(sql);
		sql = xasprintf("SELECT model_executed_flops FROM v_roofline WHERE "
				"op_id = %lld", op_id);
		ASSERT_NEAR(query_double(st, sql), 1e6, 0);
		free(sql);
		sql = xasprintf("SELECT (model_saved_bytes IS NULL) + 2 * (backward IS NULL)"
				" FROM v_roofline WHERE op_id = %lld", op_id);
		ASSERT_NEAR(query_double(st, sql), 3, 0);
		free(sql);
	}
	/* Declared executed FLOPs are stored and judge the counted FLOPs: the
	 * op counts `flops` FLOPs; declared as its executed FLOPs it is not
	 * flagged, declared 3x it is (flops_off_model against the 3x). */
	for (int d = 1; d <= 3; d += 2) {
		struct store_op o2;
		struct store_kernel k2[2];
		double v2[2][5], t2[5], flops;
		char shape[32], *sql;
		long long id2;

		snprintf(shape, sizeof shape, "M=%d,N=64", d);
		make_op(&o2, k2, v2, t2, shape);
		flops = v2[0][2] + v2[1][2] + v2[0][3] + v2[1][3] + 2 * (v2[0][4] + v2[1][4]);
		o2.model_flops = flops / 3;
		o2.model_executed_flops = d * flops;
		/* Saved bytes and the backward are stored as given. */
		o2.model_saved_bytes = 1000.0 * (d - 1);
		o2.backward = d == 1 ? "ln_gelu_bwd" : NULL;
		ASSERT_EQ(store_insert_op(st, run_id, &o2, &id2), 0);
		sql = xasprintf("SELECT model_saved_bytes + (backward IS NULL) FROM"
				" v_ops WHERE op_id = %lld AND coalesce(backward, '') = '%s'",
				id2, d == 1 ? "ln_gelu_bwd" : "");
		ASSERT_NEAR(query_double(st, sql), d == 1 ? 0 : 2001, 0);
		free(sql);
		sql = xasprintf("SELECT model_executed_flops FROM v_ops WHERE op_id = %lld", id2);
		ASSERT_NEAR(query_double(st, sql), d * flops, 1e-9 * flops);
		free(sql);
		sql = xasprintf("SELECT count(*) FROM v_distrust WHERE op_id = %lld AND "
				"reason = 'flops_off_model'", id2);
		ASSERT_NEAR(query_double(st, sql), d == 1 ? 0 : 1, 0);
		free(sql);
	}
	ASSERT_NEAR(query_double(st, "SELECT count(*) FROM v_runs WHERE status = 'running'"), 1, 0);

	/* The same op twice in one run is refused, and leaves nothing behind. */
	capture_begin();
	ASSERT_EQ(store_insert_op(st, run_id, &op, NULL), -1);
	assert_one_line_error(capture_end(), path, "UNIQUE");
	ASSERT_NEAR(query_double(st, "SELECT count(*) FROM kernels"), 6, 0);
	ASSERT_NEAR(query_double(st, "SELECT count(*) FROM counters"), 30, 0);
	ASSERT_NEAR(query_double(st, "SELECT count(*) FROM samples"), 15, 0);

	ASSERT_EQ(store_finish_run(st, run_id, "complete", NULL), 0);
	ASSERT_NEAR(query_double(st, "SELECT count(*) FROM runs WHERE status = 'complete' "
				     "AND finished_at IS NOT NULL"), 1, 0);
	/* An unknown status is refused by the schema. */
	capture_begin();
	ASSERT_EQ(store_finish_run(st, run_id, "bogus", NULL), -1);
	assert_one_line_error(capture_end(), path, "CHECK");

	/* Run references. */
	ASSERT_EQ(store_begin_run(st, &run, &id), 0);
	ASSERT_EQ(store_finish_run(st, id, "aborted", "interrupted"), 0);
	ASSERT_EQ(store_resolve_run(st, "latest", &id), 0);
	ASSERT_EQ(id, run_id + 1);
	ASSERT_EQ(store_resolve_run(st, "latest~1", &id), 0);
	ASSERT_EQ(id, run_id);
	ASSERT_EQ(store_resolve_run(st, "nightly", &id), 0);
	ASSERT_EQ(id, run_id + 1);
	ASSERT_EQ(store_resolve_run(st, "1", &id), 0);
	ASSERT_EQ(id, 1);
	capture_begin();
	ASSERT_EQ(store_resolve_run(st, "latest~2", &id), -1);
	assert_one_line_error(capture_end(), path, "no run 'latest~2'");
	capture_begin();
	ASSERT_EQ(store_resolve_run(st, "99", &id), -1);
	assert_one_line_error(capture_end(), path, "no run '99'");
	store_close(st);

	/* Reopened: version, application id, views and data all there. */
	ASSERT_EQ(store_open(&st, path, STORE_READONLY), 0);
	ASSERT_NEAR(query_double(st, "PRAGMA user_version"), STORE_SCHEMA_VERSION, 0);
	ASSERT_NEAR(query_double(st, "PRAGMA application_id"), 0x46505246, 0);
	ASSERT_NEAR(query_double(st, "SELECT count(*) FROM v_ops"), 3, 0);
	ASSERT_NEAR(query_double(st, "SELECT count(*) FROM sqlite_master WHERE "
				     "type = 'view' AND name = 'v_runs'"), 1, 0);
	store_close(st);
	free(path);
}

/* Views whose definitions changed are replaced on a read-write open; a
 * read-only open gets current TEMP views and leaves the file alone. */
/* Schema 7: an op is unique per run and device. The same op on a second
 * device of the run is a row of its own, judged against that device's
 * ceilings; twice on one device, or twice without a device (a run with
 * none), is refused and leaves nothing; an op given no device takes the
 * run's. */
static void test_devices(void)
{
	char *path = path_in_dir("dev.db"), *sql;
	struct store *st;
	struct store_device d0 = { .uuid = "GPU-a", .name = "NVIDIA H100" };
	struct store_device d1 = { .uuid = "GPU-b", .name = "NVIDIA H100" };
	struct store_ceiling c0 = { "dram_bw", "B/s", 3e12, "measured", "test" };
	struct store_ceiling c1 = { "dram_bw", "B/s", 2e12, "measured", "test" };
	struct store_run run = { .tool_version = "0.1.0", .host = "h" };
	struct store_op op;
	struct store_kernel k[2];
	double vals[2][5], times[5];
	long long id0, id1, run_id, bare, op0, op1, op2;

	ASSERT_EQ(store_open(&st, path, STORE_CREATE), 0);
	ASSERT_EQ(query_double(st, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	ASSERT_EQ(store_upsert_device(st, &d0, &id0), 0);
	ASSERT_EQ(store_upsert_device(st, &d1, &id1), 0);
	ASSERT(id0 != id1);
	run.device_id = id0;
	ASSERT_EQ(store_begin_run(st, &run, &run_id), 0);
	ASSERT_EQ(store_insert_ceiling(st, id0, run_id, &c0), 0);
	ASSERT_EQ(store_insert_ceiling(st, id1, run_id, &c1), 0);
	make_op(&op, k, vals, times, "M=1,N=1");
	op.model_saved_bytes = NAN;
	ASSERT_EQ(store_insert_op(st, run_id, &op, &op0), 0);  /* the run's device */
	op.device_id = id1;
	ASSERT_EQ(store_insert_op(st, run_id, &op, &op1), 0);
	capture_begin();
	ASSERT_EQ(store_insert_op(st, run_id, &op, NULL), -1);
	assert_one_line_error(capture_end(), path, "UNIQUE");
	op.device_id = id0;
	capture_begin();
	ASSERT_EQ(store_insert_op(st, run_id, &op, NULL), -1);
	assert_one_line_error(capture_end(), path, "UNIQUE");
	sql = xasprintf("SELECT device_id FROM ops WHERE id = %lld", op0);
	ASSERT_EQ(query_double(st, sql), id0);
	free(sql);
	/* Each op's DRAM roof is its own device's. */
	sql = xasprintf("SELECT dram_bw FROM v_roofline WHERE op_id = %lld", op0);
	ASSERT_NEAR(query_double(st, sql), 3e12, 1e-12);
	free(sql);
	sql = xasprintf("SELECT dram_bw FROM v_roofline WHERE op_id = %lld", op1);
	ASSERT_NEAR(query_double(st, sql), 2e12, 1e-12);
	free(sql);
	ASSERT_EQ(query_double(st, "SELECT count(*) FROM v_ceilings WHERE name = 'dram_bw'"), 2);
	ASSERT_EQ(query_double(st, "SELECT count(*) FROM ops"), 2);
	ASSERT_EQ(query_double(st, "SELECT count(*) FROM samples"), 10);
	/* A run of no device: its ops have none, and are unique all the same. */
	run.device_id = 0;
	ASSERT_EQ(store_begin_run(st, &run, &bare), 0);
	op.device_id = 0;
	ASSERT_EQ(store_insert_op(st, bare, &op, &op2), 0);
	capture_begin();
	ASSERT_EQ(store_insert_op(st, bare, &op, NULL), -1);
	assert_one_line_error(capture_end(), path, "UNIQUE");
	sql = xasprintf("SELECT device_id IS NULL FROM ops WHERE id = %lld", op2);
	ASSERT_EQ(query_double(st, sql), 1);
	free(sql);
	store_close(st);
	free(path);
}

static void test_views_refresh(void)
{
	char *path = path_in_dir("views.db");
	struct store *st;
	size_t len1, len2;
	char *before, *after;

	ASSERT_EQ(store_open(&st, path, STORE_CREATE), 0);
	ASSERT_EQ(sqlite3_exec(store_db(st), "DROP VIEW v_runs; CREATE VIEW v_runs AS "
			       "SELECT 1 AS stale; UPDATE meta SET value = 'old' "
			       "WHERE key = 'views'", NULL, NULL, NULL), SQLITE_OK);
	ASSERT_EQ(sqlite3_exec(store_db(st), "PRAGMA wal_checkpoint(TRUNCATE)",
			       NULL, NULL, NULL), SQLITE_OK);
	store_close(st);

	before = read_file(path, &len1);
	ASSERT_EQ(store_open(&st, path, STORE_READONLY), 0);
	ASSERT_NEAR(query_double(st, "SELECT count(*) FROM v_runs"), 0, 0);
	store_close(st);
	after = read_file(path, &len2);
	ASSERT(len1 == len2 && !memcmp(before, after, len1));
	free(before);
	free(after);

	ASSERT_EQ(store_open(&st, path, STORE_READWRITE), 0);
	ASSERT_NEAR(query_double(st, "SELECT count(*) FROM pragma_table_info('v_runs') "
				     "WHERE name = 'status'"), 1, 0);
	store_close(st);
	free(path);
}

/* Open must fail with one line naming the file and `want`, and leave the
 * file byte-for-byte as it was. */
static void expect_refused(const char *path, enum store_mode mode, const char *want)
{
	struct store *st = NULL;
	size_t len1 = 0, len2 = 0;
	char *before = NULL, *after;
	struct stat sb;
	int existed = stat(path, &sb) == 0 && S_ISREG(sb.st_mode);

	if (existed)
		before = read_file(path, &len1);
	capture_begin();
	ASSERT_EQ(store_open(&st, path, mode), -1);
	assert_one_line_error(capture_end(), path, want);
	ASSERT(st == NULL);
	if (existed) {
		after = read_file(path, &len2);
		if (len1 != len2 || memcmp(before, after, len1))
			FAIL("'%s' was modified by a refused open", path);
		free(after);
	}
	free(before);
}

static void test_bad_input(void)
{
	char *text = path_in_dir("notes.txt"), *corrupt = path_in_dir("corrupt.db");
	char *newer = path_in_dir("newer.db"), *other = path_in_dir("other.db");
	char *ro = path_in_dir("ro.db"), *missing = path_in_dir("missing.db");
	char *empty = path_in_dir("empty.db");
	const char junk[] = "this is a text file, not a database\n";
	struct store *st;
	sqlite3 *db;
	size_t len;
	char *buf;

	write_file(text, junk, sizeof junk - 1);
	expect_refused(text, STORE_READWRITE, "not a database");
	expect_refused(text, STORE_CREATE, "not a database");
	expect_refused(text, STORE_READONLY, "not a database");

	/* A real database whose pages past the header are garbage. */
	ASSERT_EQ(store_open(&st, corrupt, STORE_CREATE), 0);
	ASSERT_EQ(sqlite3_exec(store_db(st), "PRAGMA wal_checkpoint(TRUNCATE); "
			       "PRAGMA journal_mode = DELETE", NULL, NULL, NULL), SQLITE_OK);
	store_close(st);
	buf = read_file(corrupt, &len);
	ASSERT(len > 4096);
	for (size_t i = 100; i < len; i++)
		buf[i] = (char)(i * 7919);
	write_file(corrupt, buf, len);
	free(buf);
	expect_refused(corrupt, STORE_READWRITE, "malformed");
	expect_refused(corrupt, STORE_READONLY, "malformed");

	/* Written by a newer fuseprof. */
	ASSERT_EQ(store_open(&st, newer, STORE_CREATE), 0);
	ASSERT_EQ(sqlite3_exec(store_db(st), "PRAGMA user_version = 99; "
			       "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL), SQLITE_OK);
	store_close(st);
	expect_refused(newer, STORE_READWRITE, "newer than this fuseprof");
	expect_refused(newer, STORE_READONLY, "upgrade fuseprof");

	/* Someone else's SQLite database. */
	ASSERT_EQ(sqlite3_open(other, &db), SQLITE_OK);
	ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1)",
			       NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	expect_refused(other, STORE_READWRITE, "not one of fuseprof's");

	/* Missing, empty, read-only. */
	expect_refused(missing, STORE_READWRITE, "No such file");
	expect_refused(missing, STORE_READONLY, "No such file");
	write_file(empty, "", 0);
	expect_refused(empty, STORE_READONLY, "empty");
	ASSERT_EQ(store_open(&st, ro, STORE_CREATE), 0);
	ASSERT_EQ(sqlite3_exec(store_db(st), "PRAGMA wal_checkpoint(TRUNCATE)",
			       NULL, NULL, NULL), SQLITE_OK);
	store_close(st);
	ASSERT_EQ(chmod(ro, 0444), 0);
	expect_refused(ro, STORE_READWRITE, "read-only");
	expect_refused(ro, STORE_CREATE, "read-only");
	ASSERT_EQ(store_open(&st, ro, STORE_READONLY), 0);
	store_close(st);
	expect_refused(dir, STORE_READONLY, "is a directory");
	free(text);
	free(corrupt);
	free(newer);
	free(other);
	free(ro);
	free(missing);
	free(empty);
}

/* A writer blocked past the busy timeout fails with "locked", cleanly. */
static void test_locked(void)
{
	char *path = path_in_dir("locked.db");
	struct store *st;
	struct store_run run = { .tool_version = "0.1.0" };
	struct store_op op;
	struct store_kernel k[2];
	double vals[2][5], times[5], t0;
	long long run_id;
	sqlite3 *db;

	ASSERT_EQ(store_open(&st, path, STORE_CREATE), 0);
	ASSERT_EQ(store_begin_run(st, &run, &run_id), 0);
	store_close(st);

	ASSERT_EQ(sqlite3_open(path, &db), SQLITE_OK);
	ASSERT_EQ(sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
	setenv("FUSEPROF_BUSY_TIMEOUT_MS", "200", 1);
	ASSERT_EQ(store_open(&st, path, STORE_READWRITE), 0);
	make_op(&op, k, vals, times, "M=1,N=1");
	t0 = now_seconds();
	capture_begin();
	ASSERT_EQ(store_insert_op(st, run_id, &op, NULL), -1);
	assert_one_line_error(capture_end(), path, "locked");
	ASSERT(now_seconds() - t0 >= 0.15);  /* it waited before giving up */
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(db);

	/* Once the other writer is gone the same insert goes through. */
	ASSERT_EQ(store_insert_op(st, run_id, &op, NULL), 0);
	unsetenv("FUSEPROF_BUSY_TIMEOUT_MS");
	store_close(st);
	free(path);
}

int main(void)
{
	ASSERT(mkdtemp(dir));
	snprintf(errfile, sizeof errfile, "%s/stderr.txt", dir);
	srand((unsigned)getpid());
	test_round_trip();
	test_devices();
	test_views_refresh();
	test_bad_input();
	test_locked();
	{
		char *cmd = xasprintf("rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
		free(cmd);
	}
	printf("store: all checks passed\n");
	return 0;
}
