/* store.c - the SQLite store: open and validate, migrate, keep views current,
 * and write each op in one transaction so a killed process never leaves a
 * half-written op behind. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "store.h"
#include "util.h"
#include "views.h"
#include "proc.h"
#include "sql.h"

/* How long a writer waits for another (ms); $FUSEPROF_BUSY_TIMEOUT_MS
 * overrides it. Ten seconds covers any single op's insert by a wide margin. */
#define DEFAULT_BUSY_TIMEOUT_MS 10000

struct store {
	sqlite3 *db;
	char *path;
	enum store_mode mode;
	int busy_ms;
	int compat;  /* read-only over an older schema: compat[] views in TEMP */
};

/* Schema migrations: migrations[i] takes a database from user_version i to
 * i + 1. Append, never edit: a released step is history. */
static const char *const migrations[] = {
	/* 0 -> 1: the first schema. */
	"CREATE TABLE meta ("
	"  key TEXT PRIMARY KEY,"
	"  value TEXT NOT NULL"
	") WITHOUT ROWID;"
	"CREATE TABLE devices ("
	"  id INTEGER PRIMARY KEY,"
	"  uuid TEXT NOT NULL,"
	"  name TEXT NOT NULL,"
	"  cc_major INTEGER, cc_minor INTEGER, sm_count INTEGER,"
	"  l2_bytes INTEGER, mem_bytes INTEGER, mem_bus_bits INTEGER,"
	"  sm_clock_khz INTEGER, mem_clock_khz INTEGER,"
	"  driver_version INTEGER, runtime_version INTEGER, cupti_version INTEGER,"
	"  UNIQUE (uuid, driver_version, sm_clock_khz, mem_clock_khz)"
	");"
	"CREATE TABLE runs ("
	"  id INTEGER PRIMARY KEY,"
	"  started_at TEXT NOT NULL,"
	"  finished_at TEXT,"
	"  status TEXT NOT NULL DEFAULT 'running'"
	"    CHECK (status IN ('running', 'complete', 'aborted', 'failed')),"
	"  host TEXT, pid INTEGER,"
	"  tool_version TEXT NOT NULL,"
	"  command_line TEXT, tag TEXT,"
	"  device_id INTEGER REFERENCES devices(id),"
	"  counters TEXT,"
	"  note TEXT"
	");"
	"CREATE INDEX runs_tag ON runs(tag);"
	"CREATE TABLE ceilings ("
	"  id INTEGER PRIMARY KEY,"
	"  device_id INTEGER NOT NULL REFERENCES devices(id),"
	"  run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL,"
	"  name TEXT NOT NULL,"
	"  unit TEXT NOT NULL CHECK (unit IN ('B/s', 'FLOP/s')),"
	"  value REAL NOT NULL CHECK (value > 0),"
	"  provenance TEXT NOT NULL CHECK (provenance IN ('measured', 'theoretical')),"
	"  method TEXT,"
	"  measured_at TEXT NOT NULL"
	");"
	"CREATE INDEX ceilings_device ON ceilings(device_id, name, provenance);"
	"CREATE TABLE ops ("
	"  id INTEGER PRIMARY KEY,"
	"  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  workload TEXT NOT NULL, variant TEXT NOT NULL,"
	"  role TEXT NOT NULL CHECK (role IN ('fused', 'unfused', 'naive')),"
	"  dtype TEXT NOT NULL, shape TEXT NOT NULL,"
	"  status TEXT NOT NULL CHECK (status IN ('ok', 'wrong', 'error')),"
	"  seed INTEGER, rel_err REAL, max_abs_err REAL, tolerance REAL,"
	"  reps INTEGER NOT NULL,"
	"  time_ns REAL, time_ns_min REAL, time_ns_max REAL, span_ns REAL,"
	"  launches INTEGER,"
	"  model_flops REAL, model_min_bytes REAL, model_variant_bytes REAL,"
	"  message TEXT,"
	"  created_at TEXT NOT NULL,"
	"  UNIQUE (run_id, workload, variant, dtype, shape)"
	");"
	"CREATE INDEX ops_key ON ops(workload, variant, dtype, shape);"
	"CREATE TABLE samples ("
	"  op_id INTEGER NOT NULL REFERENCES ops(id) ON DELETE CASCADE,"
	"  rep INTEGER NOT NULL,"
	"  time_ns REAL NOT NULL,"
	"  span_ns REAL,"
	"  PRIMARY KEY (op_id, rep)"
	") WITHOUT ROWID;"
	"CREATE TABLE kernels ("
	"  id INTEGER PRIMARY KEY,"
	"  op_id INTEGER NOT NULL REFERENCES ops(id) ON DELETE CASCADE,"
	"  idx INTEGER NOT NULL,"
	"  name TEXT NOT NULL, mangled TEXT,"
	"  grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,"
	"  block_x INTEGER, block_y INTEGER, block_z INTEGER,"
	"  registers INTEGER, static_smem INTEGER, dynamic_smem INTEGER,"
	"  launches INTEGER NOT NULL,"
	"  dur_ns REAL, dur_ns_min REAL, dur_ns_max REAL,"
	"  UNIQUE (op_id, idx)"
	");"
	"CREATE TABLE counters ("
	"  kernel_id INTEGER NOT NULL REFERENCES kernels(id) ON DELETE CASCADE,"
	"  metric TEXT NOT NULL,"
	"  value REAL NOT NULL,"
	"  PRIMARY KEY (kernel_id, metric)"
	") WITHOUT ROWID;",
	/* 1 -> 2: each op records the kernel options in force (canonical
	 * text, every option of its workload) and the kernels its launcher
	 * picked, so runs that ran different kernels can be told apart. Ops
	 * stored before have neither: ''. */
	"ALTER TABLE ops ADD COLUMN kernel_opts TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE ops ADD COLUMN kernel TEXT NOT NULL DEFAULT '';",
	/* 2 -> 3: each run records when its process started (proc_start,
	 * see proc_start()) beside its host and pid, so a reader can tell a
	 * run whose process is gone, or whose pid now belongs to another
	 * process, from one still running. Runs stored before: NULL. */
	"ALTER TABLE runs ADD COLUMN proc_start TEXT;",
	/* 3 -> 4: each op records the FLOPs its variant executes where that is
	 * more than the operation needs by design (3xTF32 runs three tensor
	 * products for each product): what its FLOP counters should read.
	 * NULL: the same as model_flops (and ops stored before). */
	"ALTER TABLE ops ADD COLUMN model_executed_flops REAL;",
	/* 4 -> 5: the save-vs-recompute trade-off. Each op records the bytes
	 * its variant keeps alive from the forward for the backward (its
	 * model's saved_bytes; NULL for a workload in no forward/backward
	 * pair), and a forward its backward workload (NULL: none), so that
	 * v_save_recompute pairs a forward variant with the backward variant
	 * of the same name measured in the same run. The backward is a
	 * column of the op, not a table of workloads: the run measured that
	 * pairing, and a later fuseprof may pair the workload otherwise.
	 * Ops stored before: both NULL. */
	"ALTER TABLE ops ADD COLUMN model_saved_bytes REAL;"
	"ALTER TABLE ops ADD COLUMN backward TEXT;",
	/* 5 -> 6: `fuseprof profile`, any CUDA program under the collector
	 * (store/profile.c). A run has a kind: 'run' (fuseprof's own ops) or
	 * 'profile'. A profiled run's ops are the program's innermost NVTX
	 * ranges (or its kernels outside any), each range instance one
	 * sample: samples of such ops name the process (pid) and its id for
	 * the instance, and count their launches. Several processes write
	 * into one profiled run, each with a row in procs (what it saw,
	 * recorded, dropped, when it last committed). Per-launch rows
	 * (launches) and NVTX range instances (ranges) keep the timeline
	 * that `fuseprof export` draws. Runs and samples stored before: kind
	 * 'run', the new sample columns NULL. */
	"ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'run'"
	"  CHECK (kind IN ('run', 'profile'));"
	"ALTER TABLE samples ADD COLUMN pid INTEGER;"
	"ALTER TABLE samples ADD COLUMN instance INTEGER;"
	"ALTER TABLE samples ADD COLUMN launches INTEGER;"
	"CREATE INDEX samples_instance ON samples(op_id, pid, instance)"
	"  WHERE instance IS NOT NULL;"
	"CREATE TABLE procs ("
	"  id INTEGER PRIMARY KEY,"
	"  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  pid INTEGER NOT NULL, host TEXT, proc_start TEXT,"
	"  command_line TEXT,"
	"  started_at TEXT NOT NULL, committed_at TEXT, finished_at TEXT,"
	"  status TEXT NOT NULL DEFAULT 'running'"
	"    CHECK (status IN ('running', 'complete', 'killed', 'failed', 'busy')),"
	"  kernels_seen INTEGER NOT NULL DEFAULT 0,"
	"  kernels_recorded INTEGER NOT NULL DEFAULT 0,"
	"  kernels_filtered INTEGER NOT NULL DEFAULT 0,"
	"  kernels_over_limit INTEGER NOT NULL DEFAULT 0,"
	"  records_dropped INTEGER NOT NULL DEFAULT 0,"
	"  ranges INTEGER NOT NULL DEFAULT 0,"
	"  note TEXT"
	");"
	"CREATE INDEX procs_run ON procs(run_id);"
	"CREATE TABLE ranges ("
	"  id INTEGER PRIMARY KEY,"
	"  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  pid INTEGER NOT NULL, tid INTEGER, instance INTEGER NOT NULL,"
	"  domain TEXT, name TEXT NOT NULL, path TEXT NOT NULL,"
	"  depth INTEGER NOT NULL,"
	"  start_ns INTEGER NOT NULL, end_ns INTEGER,"
	"  UNIQUE (run_id, pid, instance)"
	");"
	"CREATE TABLE launches ("
	"  id INTEGER PRIMARY KEY,"
	"  op_id INTEGER NOT NULL REFERENCES ops(id) ON DELETE CASCADE,"
	"  kernel_id INTEGER NOT NULL REFERENCES kernels(id) ON DELETE CASCADE,"
	"  rep INTEGER NOT NULL,"
	"  pid INTEGER NOT NULL, tid INTEGER,"
	"  device INTEGER, stream INTEGER, correlation INTEGER,"
	"  start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL"
	");"
	"CREATE INDEX launches_op ON launches(op_id, rep);"
	"CREATE INDEX launches_kernel ON launches(kernel_id, end_ns - start_ns);",
	/* 6 -> 7: several GPUs and many ranks. Each process of a profiled
	 * run records where its launcher placed it (rank, local_rank,
	 * world_size; NULL where no launcher said). Samples, launches and
	 * ranges name their process by its row (proc_id), not by pid alone:
	 * after `fuseprof merge`, ranks on two hosts may share a pid. Rows
	 * stored before get the process of their run with their pid. Each op
	 * records the device it ran on (device_id), and its UNIQUE key holds
	 * it, so one run measures the same op on several GPUs (`run
	 * --device all`): ops of `fuseprof run` stored before get their
	 * run's device; profiled ops keep NULL (the run's device: a range
	 * may span GPUs). SQLite changes a UNIQUE key only by rebuilding the
	 * table (ops, and ranges for its key by process); migrate() drops
	 * the views first, and refresh_views() makes them again. */
	"ALTER TABLE procs ADD COLUMN rank INTEGER;"
	"ALTER TABLE procs ADD COLUMN local_rank INTEGER;"
	"ALTER TABLE procs ADD COLUMN world_size INTEGER;"
	"ALTER TABLE samples ADD COLUMN proc_id INTEGER"
	"  REFERENCES procs(id) ON DELETE CASCADE;"
	"UPDATE samples SET proc_id = (SELECT min(p.id) FROM ops o JOIN procs p"
	"  ON p.run_id = o.run_id AND p.pid = samples.pid WHERE o.id = samples.op_id)"
	"  WHERE pid IS NOT NULL;"
	"DROP INDEX samples_instance;"
	"CREATE INDEX samples_instance ON samples(op_id, proc_id, instance)"
	"  WHERE instance IS NOT NULL;"
	"ALTER TABLE launches ADD COLUMN proc_id INTEGER"
	"  REFERENCES procs(id) ON DELETE CASCADE;"
	"UPDATE launches SET proc_id = (SELECT min(p.id) FROM ops o JOIN procs p"
	"  ON p.run_id = o.run_id AND p.pid = launches.pid WHERE o.id = launches.op_id);"
	"CREATE TABLE ranges_7 ("
	"  id INTEGER PRIMARY KEY,"
	"  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  pid INTEGER NOT NULL, tid INTEGER, instance INTEGER NOT NULL,"
	"  domain TEXT, name TEXT NOT NULL, path TEXT NOT NULL,"
	"  depth INTEGER NOT NULL,"
	"  start_ns INTEGER NOT NULL, end_ns INTEGER,"
	"  proc_id INTEGER REFERENCES procs(id) ON DELETE CASCADE,"
	"  UNIQUE (proc_id, instance)"
	");"
	"INSERT INTO ranges_7 (id, run_id, pid, tid, instance, domain, name, path,"
	"  depth, start_ns, end_ns, proc_id) SELECT r.id, r.run_id, r.pid, r.tid,"
	"  r.instance, r.domain, r.name, r.path, r.depth, r.start_ns, r.end_ns,"
	"  (SELECT min(p.id) FROM procs p WHERE p.run_id = r.run_id AND p.pid = r.pid)"
	"  FROM ranges r;"
	"DROP TABLE ranges;"
	"ALTER TABLE ranges_7 RENAME TO ranges;"
	"CREATE INDEX ranges_run ON ranges(run_id, pid);"
	"CREATE TABLE ops_7 ("
	"  id INTEGER PRIMARY KEY,"
	"  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  workload TEXT NOT NULL, variant TEXT NOT NULL,"
	"  role TEXT NOT NULL CHECK (role IN ('fused', 'unfused', 'naive')),"
	"  dtype TEXT NOT NULL, shape TEXT NOT NULL,"
	"  status TEXT NOT NULL CHECK (status IN ('ok', 'wrong', 'error')),"
	"  seed INTEGER, rel_err REAL, max_abs_err REAL, tolerance REAL,"
	"  reps INTEGER NOT NULL,"
	"  time_ns REAL, time_ns_min REAL, time_ns_max REAL, span_ns REAL,"
	"  launches INTEGER,"
	"  model_flops REAL, model_min_bytes REAL, model_variant_bytes REAL,"
	"  message TEXT,"
	"  created_at TEXT NOT NULL,"
	"  kernel_opts TEXT NOT NULL DEFAULT '',"
	"  kernel TEXT NOT NULL DEFAULT '',"
	"  model_executed_flops REAL,"
	"  model_saved_bytes REAL,"
	"  backward TEXT,"
	"  device_id INTEGER REFERENCES devices(id),"
	"  UNIQUE (run_id, device_id, workload, variant, dtype, shape)"
	");"
	"INSERT INTO ops_7 SELECT o.*, (SELECT r.device_id FROM runs r"
	"  WHERE r.id = o.run_id AND r.kind = 'run') FROM ops o ORDER BY o.id;"
	"DROP TABLE ops;"
	"ALTER TABLE ops_7 RENAME TO ops;"
	"CREATE INDEX ops_key ON ops(workload, variant, dtype, shape);"
	/* NULLs are distinct in a UNIQUE key: ops of no device are unique
	 * by the rest of it. */
	"CREATE UNIQUE INDEX ops_nodevice ON ops(run_id, workload, variant, dtype,"
	"  shape) WHERE device_id IS NULL;",
	/* 7 -> 8: the device pointers among a counted launch's arguments
	 * (`profile --metrics`), a JSON array of [pointer, bytes to its
	 * allocation's end] pairs (store_ptrs_json), NULL where they were not
	 * read: the evidence of which buffers a kernel touches (the fusion
	 * views' re-reads, export's buffers). */
	"ALTER TABLE launches ADD COLUMN ptrs TEXT;",
};

/* What a read-only connection puts over a database at user_version i
 * (compat[i]) so that it reads as the current schema, every step since i
 * at once: TEMP views named as
 * the tables they stand for, which shadow them for this connection only,
 * with the columns added since at their defaults. NULL: an older version
 * no read-only command can read (it needs migrating first). A migration
 * that changes a table readers use updates the entries here. */
#define COMPAT_RUNS_2 \
	"CREATE TEMP VIEW runs AS SELECT *, NULL AS proc_start, 'run' AS kind" \
	" FROM main.runs;"
/* The op's device (schema 7): its run's, for runs of `fuseprof run`. */
#define COMPAT_OPS_DEV(kind) \
	", (SELECT r.device_id FROM main.runs r WHERE r.id = o0.run_id" kind ")" \
	" AS device_id FROM main.ops o0;"
/* The ops columns of schema 5. */
#define COMPAT_OPS_5 ", NULL AS model_saved_bytes, NULL AS backward" COMPAT_OPS_DEV("")
#define COMPAT_OPS_3 \
	"CREATE TEMP VIEW ops AS SELECT o0.*, NULL AS model_executed_flops" \
	COMPAT_OPS_5
/* Schema 6: the runs' kind, the samples of profiled ops, and the profile
 * tables, empty; schema 7's columns of them. */
#define COMPAT_PROFILE_6 \
	"CREATE TEMP VIEW samples AS SELECT *, NULL AS pid, NULL AS instance," \
	" NULL AS launches, NULL AS proc_id FROM main.samples;" \
	"CREATE TEMP VIEW procs AS SELECT NULL AS id, NULL AS run_id," \
	" NULL AS pid, NULL AS host, NULL AS proc_start, NULL AS command_line," \
	" NULL AS started_at, NULL AS committed_at, NULL AS finished_at," \
	" NULL AS status, 0 AS kernels_seen, 0 AS kernels_recorded," \
	" 0 AS kernels_filtered, 0 AS kernels_over_limit, 0 AS records_dropped," \
	" 0 AS ranges, NULL AS note, NULL AS rank, NULL AS local_rank," \
	" NULL AS world_size WHERE 0;" \
	"CREATE TEMP VIEW ranges AS SELECT NULL AS id, NULL AS run_id," \
	" NULL AS pid, NULL AS tid, NULL AS instance, NULL AS domain," \
	" NULL AS name, NULL AS path, NULL AS depth, NULL AS start_ns," \
	" NULL AS end_ns, NULL AS proc_id WHERE 0;" \
	"CREATE TEMP VIEW launches AS SELECT NULL AS id, NULL AS op_id," \
	" NULL AS kernel_id, NULL AS rep, NULL AS pid, NULL AS tid," \
	" NULL AS device, NULL AS stream, NULL AS correlation," \
	" NULL AS start_ns, NULL AS end_ns, NULL AS proc_id, NULL AS ptrs WHERE 0;"
#define COMPAT_RUNS_6 \
	"CREATE TEMP VIEW runs AS SELECT *, 'run' AS kind FROM main.runs;" \
	COMPAT_PROFILE_6
/* A schema-6 row's process: the one of its run with its pid (what the
 * 6 -> 7 migration gives it). */
#define COMPAT_PROC_OF_OP(t) \
	" (SELECT min(p.id) FROM main.ops o JOIN main.procs p ON p.run_id = o.run_id" \
	" AND p.pid = " t ".pid WHERE o.id = " t ".op_id) AS proc_id"
#define COMPAT_LAUNCHES_8 \
	"CREATE TEMP VIEW launches AS SELECT *, NULL AS ptrs FROM main.launches;"
#define COMPAT_PROFILE_7 \
	"CREATE TEMP VIEW procs AS SELECT *, NULL AS rank, NULL AS local_rank," \
	" NULL AS world_size FROM main.procs;" \
	"CREATE TEMP VIEW samples AS SELECT s0.*," COMPAT_PROC_OF_OP("s0") \
	" FROM main.samples s0;" \
	"CREATE TEMP VIEW launches AS SELECT l0.*," COMPAT_PROC_OF_OP("l0") \
	", NULL AS ptrs FROM main.launches l0;" \
	"CREATE TEMP VIEW ranges AS SELECT r0.*, (SELECT min(p.id) FROM main.procs p" \
	" WHERE p.run_id = r0.run_id AND p.pid = r0.pid) AS proc_id FROM main.ranges r0;"
static const char *const compat[STORE_SCHEMA_VERSION] = {
	NULL,
	/* 1: ops before kernel_opts, kernel, model_executed_flops,
	 * model_saved_bytes, backward and device_id, runs before proc_start. */
	"CREATE TEMP VIEW ops AS SELECT o0.*, '' AS kernel_opts, '' AS kernel,"
	" NULL AS model_executed_flops" COMPAT_OPS_5 COMPAT_RUNS_2
	COMPAT_PROFILE_6,
	/* 2: runs before proc_start, ops before model_executed_flops,
	 * model_saved_bytes, backward and device_id. */
	COMPAT_RUNS_2 COMPAT_OPS_3 COMPAT_PROFILE_6,
	/* 3: ops before model_executed_flops, model_saved_bytes, backward,
	 * device_id. */
	COMPAT_OPS_3 COMPAT_RUNS_6,
	/* 4: ops before model_saved_bytes, backward and device_id. */
	"CREATE TEMP VIEW ops AS SELECT o0.*" COMPAT_OPS_5 COMPAT_RUNS_6,
	/* 5: runs before their kind, no profiled runs, ops before device_id. */
	"CREATE TEMP VIEW ops AS SELECT o0.*" COMPAT_OPS_DEV("") COMPAT_RUNS_6,
	/* 6: processes before their ranks, rows keyed by pid, ops before
	 * device_id. */
	"CREATE TEMP VIEW ops AS SELECT o0.*" COMPAT_OPS_DEV(" AND r.kind = 'run'")
	COMPAT_PROFILE_7,
	/* 7: launches before their pointers. */
	COMPAT_LAUNCHES_8,
};

int store_error(struct store *st, const char *what)
{
	return error("%s: '%s': %s", what, st->path, sqlite3_errmsg(st->db));
}

sqlite3 *store_db(struct store *st)
{
	return st->db;
}

const char *store_path(const struct store *st)
{
	return st->path;
}

static int exec(struct store *st, const char *sql, const char *what)
{
	if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return store_error(st, what);
	return 0;
}

/* The single integer a query returns, or -1 (reported) on error. */
static int query_int(struct store *st, const char *sql, long long *out)
{
	sqlite3_stmt *s = NULL;
	int rc;

	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
		return store_error(st, "cannot read");
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		sqlite3_finalize(s);
		return store_error(st, "cannot read");
	}
	*out = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	sqlite3_finalize(s);
	return 0;
}

int store_begin(struct store *st)
{
	/* IMMEDIATE takes the write lock now, so a busy database fails here
	 * (after the timeout) and not half-way through a write. */
	if (sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		int busy = sqlite3_errcode(st->db) == SQLITE_BUSY;

		if (busy)
			return error("cannot write '%s': database is locked by another "
				     "process (waited %d ms)", st->path, st->busy_ms);
		return store_error(st, "cannot write");
	}
	return 0;
}

int store_commit(struct store *st)
{
	if (sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		store_error(st, "cannot commit");
		store_rollback(st);
		return -1;
	}
	return 0;
}

void store_rollback(struct store *st)
{
	if (!sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

static int set_meta(struct store *st, const char *key, const char *value)
{
	sqlite3_stmt *s = NULL;
	int rc;

	if (sqlite3_prepare_v2(st->db,
			       "INSERT INTO meta(key, value) VALUES (?1, ?2) "
			       "ON CONFLICT(key) DO UPDATE SET value = ?2",
			       -1, &s, NULL) != SQLITE_OK)
		return store_error(st, "cannot write");
	sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, value, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : store_error(st, "cannot write");
}

/* Returns a malloc'd value, or NULL when the key or the table is missing. */
static char *get_meta(struct store *st, const char *key)
{
	sqlite3_stmt *s = NULL;
	char *v = NULL;

	if (sqlite3_prepare_v2(st->db, "SELECT value FROM main.meta WHERE key = ?1",
			       -1, &s, NULL) != SQLITE_OK)
		return NULL;
	sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
		v = xstrdup((const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	return v;
}

/* Drop every view stored in the file, not only the ones this build
 * knows, and forget their signature, inside the caller's transaction. */
static int drop_views(struct store *st)
{
	struct strbuf sb = STRBUF_INIT;
	sqlite3_stmt *s = NULL;
	int rc;

	if (sqlite3_prepare_v2(st->db,
			       "SELECT name FROM main.sqlite_master WHERE type = 'view'",
			       -1, &s, NULL) != SQLITE_OK)
		return store_error(st, "cannot read the schema");
	while (sqlite3_step(s) == SQLITE_ROW)
		strbuf_addf(&sb, "DROP VIEW IF EXISTS main.\"%s\";",
			    (const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	strbuf_addstr(&sb, "DELETE FROM main.meta WHERE key = 'views';");
	rc = exec(st, strbuf_str(&sb), "cannot update the views");
	strbuf_release(&sb);
	return rc;
}

/* Bring the schema from version `from` to STORE_SCHEMA_VERSION in one
 * transaction: all steps or none. The views go first: a step that
 * rebuilds a table (6 -> 7) cannot rename it under views that name it,
 * and refresh_views() makes them again right after. */
static int migrate(struct store *st, long long from)
{
	char sql[64];

	if (store_begin(st))
		return -1;
	/* Another process may have migrated it while this one waited for the
	 * write lock: the version read before the lock is stale then. */
	if (query_int(st, "PRAGMA user_version", &from))
		goto out_rollback;
	if (from >= STORE_SCHEMA_VERSION)
		return store_commit(st);
	if (from > 0 && drop_views(st))
		goto out_rollback;
	for (long long v = from; v < STORE_SCHEMA_VERSION; v++)
		if (exec(st, migrations[v], "cannot migrate the schema"))
			goto out_rollback;
	snprintf(sql, sizeof sql, "PRAGMA user_version = %d; PRAGMA application_id = %d",
		 STORE_SCHEMA_VERSION, STORE_APP_ID);
	if (exec(st, sql, "cannot migrate the schema"))
		goto out_rollback;
	if (from == 0 && (set_meta(st, "created_by", "fuseprof " PACKAGE_VERSION) ||
			  set_meta(st, "application", "fuseprof")))
		goto out_rollback;
	return store_commit(st);

out_rollback:
	store_rollback(st);
	return -1;
}

/* Views are derived: recreate them whenever this build's definitions differ
 * from the ones stored, so a formula fix reaches old databases with no
 * re-run. A read-only open gets the current ones as TEMP views, which shadow
 * the stored ones for this connection only. */
static int refresh_views(struct store *st)
{
	char *have = get_meta(st, "views");
	const char *want = views_signature();
	int temp = st->mode == STORE_READONLY;
	struct strbuf sb = STRBUF_INIT;
	int rc = -1;

	/* Views stored in an older schema's file were made for its tables,
	 * not for the compat ones: always the TEMP ones over them. */
	if (have && !strcmp(have, want) && !st->compat) {
		free(have);
		if (!temp)
			return 0;
		/* Readers see run status through fp_run_status(). */
		strbuf_addf(&sb, "CREATE TEMP VIEW v_runs AS %s", fp_v_runs_live_sql);
		rc = exec(st, strbuf_str(&sb), "cannot create the views");
		strbuf_release(&sb);
		return rc;
	}
	free(have);
	if (!temp && store_begin(st))
		return -1;
	if (!temp) {
		/* Another writer may have made them while this one waited for
		 * the lock (the rule of migrate()): nothing left to do then. */
		have = get_meta(st, "views");
		if (have && !strcmp(have, want)) {
			free(have);
			return store_commit(st);
		}
		free(have);
		if (drop_views(st))
			goto out;
	}
	for (const struct view_def *v = fp_views; v->name; v++) {
		strbuf_reset(&sb);
		strbuf_addf(&sb, "CREATE %sVIEW %s AS %s", temp ? "TEMP " : "",
			    v->name, temp && !strcmp(v->name, "v_runs")
				     ? fp_v_runs_live_sql : v->sql);
		if (exec(st, strbuf_str(&sb), "cannot create the views"))
			goto out;
	}
	if (!temp && set_meta(st, "views", want))
		goto out;
	rc = temp ? 0 : store_commit(st);
	strbuf_release(&sb);
	return rc;
out:
	if (!temp)
		store_rollback(st);
	strbuf_release(&sb);
	return -1;
}

/* Put the file in WAL mode. The switch reads the header under a read lock
 * and then takes the write lock to change it, and SQLite calls no busy
 * handler for that step (waiting there, holding the read lock, could
 * deadlock with a writer waiting for it to go): it fails at once with
 * SQLITE_BUSY when another process holds the write lock. On a fresh file
 * that is the usual case, other writers creating the schema or the views
 * (1 trial in 25 with eight writers, before this loop). Each failed try
 * releases its locks, so retrying every millisecond up to the busy
 * timeout waits as any other write does. A file already in WAL mode
 * takes no lock here. */
static int wal_on(struct store *st)
{
	int waited = 0, rc;

	while ((rc = sqlite3_exec(st->db, "PRAGMA journal_mode = WAL", NULL, NULL,
				  NULL)) == SQLITE_BUSY && waited < st->busy_ms) {
		sqlite3_sleep(1);
		waited++;
	}
	if (rc == SQLITE_BUSY)
		return error("cannot switch '%s' to WAL: database is locked by "
			     "another process (waited %d ms)", st->path, st->busy_ms);
	if (rc != SQLITE_OK)
		return store_error(st, "cannot switch to WAL");
	/* NORMAL is durable at checkpoints and never corrupts under WAL. */
	return exec(st, "PRAGMA synchronous = NORMAL", "cannot switch to WAL");
}

/* fp_run_status(status, host, pid, proc_start): proc_run_status() in SQL,
 * for the readers' v_runs and `fuseprof report`. */
static void sql_run_status(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *status = (const char *)sqlite3_value_text(argv[0]);
	const char *shown;

	(void)argc;
	if (!status) {
		sqlite3_result_null(ctx);
		return;
	}
	shown = proc_run_status(status, (const char *)sqlite3_value_text(argv[1]),
				sqlite3_value_int64(argv[2]),
				(const char *)sqlite3_value_text(argv[3]));
	if (shown == status)
		sqlite3_result_value(ctx, argv[0]);
	else
		sqlite3_result_text(ctx, shown, -1, SQLITE_STATIC);
}

/* Whether a read-only open should use immutable=1: the file is in WAL mode
 * (header bytes 18 and 19 are 2) and has no write-ahead log with frames in
 * it beside it. See store_open(). */
static int wal_without_log(const char *path)
{
	unsigned char hdr[20];
	char *wal = xasprintf("%s-wal", path);
	struct stat sb;
	FILE *f = fopen(path, "rb");
	int rc = 0;

	if (f && fread(hdr, 1, sizeof hdr, f) == sizeof hdr &&
	    !memcmp(hdr, "SQLite format 3", 16) && hdr[18] == 2 && hdr[19] == 2)
		rc = stat(wal, &sb) != 0 ? errno == ENOENT : sb.st_size == 0;
	if (f)
		fclose(f);
	free(wal);
	return rc;
}

/* path as an SQLite URI with the query string query ("immutable=1"):
 * every byte outside the unreserved set and '/' percent-encoded. Returns a
 * malloc'd string. */
static char *path_uri(const char *path, const char *query)
{
	struct strbuf sb = STRBUF_INIT;
	char *uri;

	strbuf_addstr(&sb, "file:");
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("/-._~", *p))
			strbuf_addf(&sb, "%c", *p);
		else
			strbuf_addf(&sb, "%%%02X", *p);
	}
	strbuf_addf(&sb, "?%s", query);
	uri = xstrdup(strbuf_str(&sb));
	strbuf_release(&sb);
	return uri;
}

char *store_reader_uri(const char *path)
{
	return path_uri(path, wal_without_log(path) ? "immutable=1" : "mode=ro");
}

/* The busy timeout from $FUSEPROF_BUSY_TIMEOUT_MS (ms, 0 or more), or the
 * default when it is unset or empty. Returns -1 after a one-line error
 * when it is set to anything else: a timeout the user asked for and did
 * not get would show up only as a confusing "database is locked" later. */
static int busy_timeout_ms(int *ms)
{
	const char *env = getenv("FUSEPROF_BUSY_TIMEOUT_MS");
	long v;

	*ms = DEFAULT_BUSY_TIMEOUT_MS;
	if (!env || !*env)
		return 0;
	if (parse_long(env, &v) || v < 0 || v > INT_MAX)
		return error("FUSEPROF_BUSY_TIMEOUT_MS='%s' is not a number of "
			     "milliseconds (0 or more): fix or unset it", env);
	*ms = (int)v;
	return 0;
}

/* Decide whether the open file is a fuseprof database we can use; migrate
 * or initialise it when the mode allows. Writes nothing before the checks
 * pass. */
static int validate(struct store *st)
{
	long long version, app, tables;

	/* The first read fails on a file that is not SQLite at all, and on a
	 * WAL file with a log whose -shm file a reader may neither open nor
	 * create (see store_open). */
	if (st->mode == STORE_READONLY &&
	    sqlite3_exec(st->db, "SELECT 1 FROM main.sqlite_master LIMIT 1", NULL,
			 NULL, NULL) == SQLITE_CANTOPEN)
		return error("cannot read '%s': it has a write-ahead log ('%s-wal') "
			     "but no '-shm' file a reader may use, in a folder it "
			     "cannot write: open it once where it can be written, or "
			     "copy the database with its '-wal' file", st->path,
			     st->path);
	if (query_int(st, "SELECT count(*) FROM main.sqlite_master WHERE type = 'table'",
		      &tables))
		return -1;
	if (query_int(st, "PRAGMA user_version", &version) ||
	    query_int(st, "PRAGMA application_id", &app))
		return -1;
	if (version == 0 && tables == 0) {
		if (st->mode == STORE_READONLY)
			return error("cannot read '%s': it is empty, not a fuseprof "
				     "database (run 'fuseprof run' to fill it)", st->path);
		return migrate(st, 0);
	}
	if (app != STORE_APP_ID)
		return error("cannot open '%s': an SQLite database, but not one of "
			     "fuseprof's", st->path);
	if (version > STORE_SCHEMA_VERSION)
		return error("cannot open '%s': its schema is version %lld, newer than "
			     "this fuseprof understands (%d): upgrade fuseprof",
			     st->path, version, STORE_SCHEMA_VERSION);
	if (version < STORE_SCHEMA_VERSION) {
		if (st->mode == STORE_READONLY) {
			/* Readers leave the file as it is: a sample database
			 * shipped read-only, or one a newer run writes into. */
			if (!compat[version])
				return error("cannot read '%s': its schema is version "
					     "%lld and needs migrating to %d; open it once "
					     "with a command that writes (e.g. 'fuseprof "
					     "run')", st->path, version, STORE_SCHEMA_VERSION);
			if (exec(st, compat[version], "cannot read the schema of"))
				return -1;
			st->compat = 1;
			return 0;
		}
		if (migrate(st, version))
			return -1;
	}
	return 0;
}

int store_open(struct store **out, const char *path, enum store_mode mode)
{
	struct store *st;
	struct stat sb;
	char *uri = NULL;
	int flags, busy_ms;

	*out = NULL;
	if (busy_timeout_ms(&busy_ms))
		return -1;
	if (stat(path, &sb) != 0) {
		if (errno != ENOENT || mode != STORE_CREATE)
			return error("cannot open '%s': %s", path, strerror(errno));
	} else if (S_ISDIR(sb.st_mode)) {
		return error("cannot open '%s': is a directory", path);
	}
	/* A file with no write permission bit is read-only to fuseprof even
	 * for root, who could write it anyway: the user marked it so. */
	if (mode != STORE_READONLY && stat(path, &sb) == 0 &&
	    (access(path, W_OK) != 0 || !(sb.st_mode & 0222)))
		return error("cannot write '%s': the file is read-only (check its "
			     "permissions, or use a copy)", path);

	st = xcalloc(1, sizeof *st);
	st->path = xstrdup(path);
	st->mode = mode;
	st->busy_ms = busy_ms;
	/* Read-only commands use their connection from one thread: without
	 * SQLite's per-call mutex, reading 10,000 ops' columns costs a tenth
	 * less. */
	flags = mode == STORE_READONLY ? SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
	      : mode == STORE_CREATE ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
				     : SQLITE_OPEN_READWRITE;
	/* Readers of a WAL database with no log beside it (the last writer
	 * closed it cleanly: every commit is in the file) open it immutable:
	 * SQLite then takes no locks and makes no -wal or -shm file, so it
	 * reads from a folder or a file the user cannot write, and leaves
	 * nothing behind where it can. A plain read-only open would need
	 * both files, creating them, and would leave them there: a reader
	 * cannot delete a log it does not own. With a log beside the file (a
	 * writer at work, or one killed) immutable would miss the commits in
	 * the log, so the plain read-only open, which reads the log and also
	 * works in a read-only folder as long as the -shm file exists. */
	if (mode == STORE_READONLY && wal_without_log(path))
		uri = path_uri(path, "immutable=1");
	/* URIs on, so that ATTACH (store/merge.c) can open a file read-only;
	 * a path that reads as one stays a file name. */
	flags |= SQLITE_OPEN_URI;
	if (!uri && !strncmp(path, "file:", 5))
		uri = xasprintf("./%s", path);
	if (sqlite3_open_v2(uri ? uri : path, &st->db, flags, NULL) != SQLITE_OK) {
		error("cannot open '%s': %s", path,
		      st->db ? sqlite3_errmsg(st->db) : "out of memory");
		goto out_close;
	}
	sqlite3_extended_result_codes(st->db, 0);
	sqlite3_busy_timeout(st->db, st->busy_ms);
	if (sqlite3_create_function(st->db, "fp_run_status", 4,
				    SQLITE_UTF8 | SQLITE_DIRECTONLY, NULL,
				    sql_run_status, NULL, NULL) != SQLITE_OK) {
		store_error(st, "cannot open");
		goto out_close;
	}
	if (mode != STORE_READONLY && sqlite3_db_readonly(st->db, "main") == 1) {
		error("cannot write '%s': the file is read-only", path);
		goto out_close;
	}
	if (validate(st))
		goto out_close;
	if (exec(st, "PRAGMA foreign_keys = ON", "cannot configure"))
		goto out_close;
	if (mode != STORE_READONLY) {
		/* WAL: readers never block the writer, and several `fuseprof
		 * run` processes (one per GPU) can share one file. */
		if (wal_on(st))
			goto out_close;
	}
	if (refresh_views(st))
		goto out_close;
	free(uri);
	*out = st;
	return 0;

out_close:
	free(uri);
	store_close(st);
	return -1;
}

void store_close(struct store *st)
{
	if (!st)
		return;
	sqlite3_close_v2(st->db);
	free(st->path);
	free(st);
}

/* ---- writes ---------------------------------------------------------- */

void store_bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, i);
}

void store_bind_real(sqlite3_stmt *s, int i, double v)
{
	if (isfinite(v))
		sqlite3_bind_double(s, i, v);
	else
		sqlite3_bind_null(s, i);
}

int store_step_done(struct store *st, sqlite3_stmt *s, const char *what)
{
	int rc = sqlite3_step(s);

	if (rc != SQLITE_DONE) {
		store_error(st, what);
		sqlite3_finalize(s);
		return -1;
	}
	sqlite3_finalize(s);
	return 0;
}

int store_prepare(struct store *st, const char *sql, sqlite3_stmt **s)
{
	if (sqlite3_prepare_v2(st->db, sql, -1, s, NULL) != SQLITE_OK)
		return store_error(st, "cannot prepare a statement for");
	return 0;
}

int store_upsert_device(struct store *st, const struct store_device *d,
			long long *id)
{
	sqlite3_stmt *s = NULL;

	if (store_prepare(st, "INSERT INTO devices (uuid, name, cc_major, cc_minor, "
			"sm_count, l2_bytes, mem_bytes, mem_bus_bits, sm_clock_khz, "
			"mem_clock_khz, driver_version, runtime_version, cupti_version) "
			"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) "
			"ON CONFLICT (uuid, driver_version, sm_clock_khz, mem_clock_khz) "
			"DO UPDATE SET name = excluded.name RETURNING id", &s))
		return -1;
	sqlite3_bind_text(s, 1, d->uuid, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 2, d->name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(s, 3, d->cc_major);
	sqlite3_bind_int(s, 4, d->cc_minor);
	sqlite3_bind_int(s, 5, d->sm_count);
	sqlite3_bind_int64(s, 6, d->l2_bytes);
	sqlite3_bind_int64(s, 7, d->mem_bytes);
	sqlite3_bind_int(s, 8, d->mem_bus_bits);
	sqlite3_bind_int(s, 9, d->sm_clock_khz);
	sqlite3_bind_int(s, 10, d->mem_clock_khz);
	sqlite3_bind_int(s, 11, d->driver_version);
	sqlite3_bind_int(s, 12, d->runtime_version);
	sqlite3_bind_int(s, 13, d->cupti_version);
	if (sqlite3_step(s) != SQLITE_ROW) {
		store_error(st, "cannot record the device in");
		sqlite3_finalize(s);
		return -1;
	}
	*id = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return 0;
}

int store_begin_run(struct store *st, const struct store_run *r,
		    long long *run_id)
{
	sqlite3_stmt *s = NULL;
	char now[32], host[256], start[128];

	utc_now_iso(now, sizeof now);
	if (!r->host)
		proc_host(host, sizeof host);
	if (store_prepare(st, "INSERT INTO runs (started_at, status, host, pid, "
			"tool_version, command_line, tag, device_id, counters, "
			"proc_start, kind) VALUES (?1, 'running', ?2, ?3, ?4, ?5, ?6, "
			"?7, ?8, ?9, ?10)", &s))
		return -1;
	sqlite3_bind_text(s, 1, now, -1, SQLITE_TRANSIENT);
	store_bind_text(s, 2, r->host ? r->host : host[0] ? host : NULL);
	sqlite3_bind_int64(s, 3, (long long)getpid());
	sqlite3_bind_text(s, 4, r->tool_version ? r->tool_version : PACKAGE_VERSION,
			  -1, SQLITE_TRANSIENT);
	store_bind_text(s, 5, r->command_line);
	store_bind_text(s, 6, r->tag);
	if (r->device_id > 0)
		sqlite3_bind_int64(s, 7, r->device_id);
	else
		sqlite3_bind_null(s, 7);
	store_bind_text(s, 8, r->counters);
	if (proc_start(getpid(), start, sizeof start) == 0)
		sqlite3_bind_text(s, 9, start, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, 9);
	sqlite3_bind_text(s, 10, r->kind ? r->kind : "run", -1, SQLITE_TRANSIENT);
	if (store_step_done(st, s, "cannot start a run in"))
		return -1;
	*run_id = sqlite3_last_insert_rowid(st->db);
	return 0;
}

static int update_run(struct store *st, const char *sql, long long run_id,
		      const char *text, long long num, const char *what)
{
	sqlite3_stmt *s = NULL;

	if (store_prepare(st, sql, &s))
		return -1;
	sqlite3_bind_int64(s, 1, run_id);
	if (text)
		sqlite3_bind_text(s, 2, text, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_int64(s, 2, num);
	if (store_step_done(st, s, what))
		return -1;
	if (sqlite3_changes(st->db) != 1)
		return error("%s '%s': no run %lld", what, st->path, run_id);
	return 0;
}

int store_set_run_device(struct store *st, long long run_id, long long device_id)
{
	return update_run(st, "UPDATE runs SET device_id = ?2 WHERE id = ?1",
			  run_id, NULL, device_id, "cannot update the run in");
}

int store_set_run_counters(struct store *st, long long run_id, const char *counters)
{
	return update_run(st, "UPDATE runs SET counters = ?2 WHERE id = ?1",
			  run_id, counters, 0, "cannot update the run in");
}

int store_finish_run(struct store *st, long long run_id, const char *status,
		     const char *note)
{
	sqlite3_stmt *s = NULL;
	char now[32];

	utc_now_iso(now, sizeof now);
	if (store_prepare(st, "UPDATE runs SET status = ?2, finished_at = ?3, "
			"note = coalesce(?4, note) WHERE id = ?1", &s))
		return -1;
	sqlite3_bind_int64(s, 1, run_id);
	sqlite3_bind_text(s, 2, status, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 3, now, -1, SQLITE_TRANSIENT);
	store_bind_text(s, 4, note);
	if (store_step_done(st, s, "cannot finish the run in"))
		return -1;
	if (sqlite3_changes(st->db) != 1)
		return error("cannot finish run %lld in '%s': no such run", run_id,
			     st->path);
	return 0;
}

static int insert_kernel(struct store *st, long long op_id, int idx,
			 const struct store_kernel *k)
{
	sqlite3_stmt *s = NULL;
	long long kid;

	if (store_prepare(st, "INSERT INTO kernels (op_id, idx, name, mangled, grid_x, "
			"grid_y, grid_z, block_x, block_y, block_z, registers, "
			"static_smem, dynamic_smem, launches, dur_ns, dur_ns_min, "
			"dur_ns_max) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
			"?11, ?12, ?13, ?14, ?15, ?16, ?17)", &s))
		return -1;
	sqlite3_bind_int64(s, 1, op_id);
	sqlite3_bind_int(s, 2, idx);
	sqlite3_bind_text(s, 3, k->name ? k->name : "?", -1, SQLITE_TRANSIENT);
	store_bind_text(s, 4, k->mangled);
	for (int i = 0; i < 3; i++) {
		sqlite3_bind_int64(s, 5 + i, k->grid[i]);
		sqlite3_bind_int64(s, 8 + i, k->block[i]);
	}
	sqlite3_bind_int(s, 11, k->registers);
	sqlite3_bind_int(s, 12, k->static_smem);
	sqlite3_bind_int(s, 13, k->dynamic_smem);
	sqlite3_bind_int64(s, 14, k->launches);
	store_bind_real(s, 15, k->dur_ns_median);
	store_bind_real(s, 16, k->dur_ns_min);
	store_bind_real(s, 17, k->dur_ns_max);
	if (store_step_done(st, s, "cannot store a kernel in"))
		return -1;
	kid = sqlite3_last_insert_rowid(st->db);
	if (k->ncounters == 0)
		return 0;
	if (store_prepare(st, "INSERT INTO counters (kernel_id, metric, value) "
			"VALUES (?1, ?2, ?3)", &s))
		return -1;
	for (int i = 0; i < k->ncounters; i++) {
		if (isnan(k->counter_values[i]))
			continue;  /* not collected */
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, kid);
		sqlite3_bind_text(s, 2, k->counter_names[i], -1, SQLITE_TRANSIENT);
		sqlite3_bind_double(s, 3, k->counter_values[i]);
		if (sqlite3_step(s) != SQLITE_DONE) {
			store_error(st, "cannot store a counter in");
			sqlite3_finalize(s);
			return -1;
		}
	}
	sqlite3_finalize(s);
	return 0;
}

int store_insert_op(struct store *st, long long run_id,
		    const struct store_op *op, long long *op_id)
{
	sqlite3_stmt *s = NULL;
	double tmin = NAN, tmax = NAN;
	char now[32];
	long long id;

	for (int i = 0; i < op->reps; i++) {
		if (i == 0 || op->time_ns[i] < tmin)
			tmin = op->time_ns[i];
		if (i == 0 || op->time_ns[i] > tmax)
			tmax = op->time_ns[i];
	}
	utc_now_iso(now, sizeof now);
	if (store_begin(st))
		return -1;
	if (store_prepare(st, "INSERT INTO ops (run_id, workload, variant, role, dtype, "
			"shape, status, seed, rel_err, max_abs_err, tolerance, reps, "
			"time_ns, time_ns_min, time_ns_max, span_ns, launches, "
			"model_flops, model_min_bytes, model_variant_bytes, message, "
			"created_at, kernel_opts, kernel, model_executed_flops, "
			"model_saved_bytes, backward, device_id) VALUES (?1, ?2, ?3, ?4, "
			"?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, "
			"?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, coalesce(?28, (SELECT "
			"device_id FROM runs WHERE id = ?1)))", &s))
		goto out_rollback;
	sqlite3_bind_int64(s, 1, run_id);
	sqlite3_bind_text(s, 2, op->workload, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 3, op->variant, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 4, op->role ? op->role : "unfused", -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 5, op->dtype, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 6, op->shape, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 7, op->status, -1, SQLITE_TRANSIENT);
	/* SQLite integers are signed: store the seed's bits as they are. */
	sqlite3_bind_int64(s, 8, (sqlite3_int64)op->seed);
	store_bind_real(s, 9, op->rel_err);
	store_bind_real(s, 10, op->max_abs_err);
	store_bind_real(s, 11, op->tolerance);
	sqlite3_bind_int(s, 12, op->reps);
	store_bind_real(s, 13, median_of(op->time_ns, (size_t)op->reps));
	store_bind_real(s, 14, tmin);
	store_bind_real(s, 15, tmax);
	store_bind_real(s, 16, op->span_ns ? median_of(op->span_ns, (size_t)op->reps)
					      : NAN);
	sqlite3_bind_int64(s, 17, op->launches);
	store_bind_real(s, 18, op->model_flops);
	store_bind_real(s, 19, op->model_min_bytes);
	store_bind_real(s, 20, op->model_variant_bytes);
	store_bind_text(s, 21, op->message);
	sqlite3_bind_text(s, 22, now, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 23, op->kernel_opts ? op->kernel_opts : "", -1,
			  SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 24, op->kernel ? op->kernel : "", -1, SQLITE_TRANSIENT);
	/* Only where it differs from model_flops: NULL means "the same". */
	store_bind_real(s, 25, op->model_executed_flops > 0 &&
			  op->model_executed_flops != op->model_flops ?
			  op->model_executed_flops : NAN);
	store_bind_real(s, 26, op->model_saved_bytes);
	store_bind_text(s, 27, op->backward);
	if (op->device_id > 0)
		sqlite3_bind_int64(s, 28, op->device_id);
	else
		sqlite3_bind_null(s, 28);
	if (store_step_done(st, s, "cannot store an op in"))
		goto out_rollback;
	id = sqlite3_last_insert_rowid(st->db);

	if (op->reps > 0) {
		if (store_prepare(st, "INSERT INTO samples (op_id, rep, time_ns, span_ns) "
				"VALUES (?1, ?2, ?3, ?4)", &s))
			goto out_rollback;
		for (int i = 0; i < op->reps; i++) {
			sqlite3_reset(s);
			sqlite3_bind_int64(s, 1, id);
			sqlite3_bind_int(s, 2, i);
			sqlite3_bind_double(s, 3, op->time_ns[i]);
			if (op->span_ns)
				store_bind_real(s, 4, op->span_ns[i]);
			else
				sqlite3_bind_null(s, 4);
			if (sqlite3_step(s) != SQLITE_DONE) {
				store_error(st, "cannot store a sample in");
				sqlite3_finalize(s);
				goto out_rollback;
			}
		}
		sqlite3_finalize(s);
	}
	for (int i = 0; i < op->nkernels; i++)
		if (insert_kernel(st, id, i, &op->kernels[i]))
			goto out_rollback;
	if (store_commit(st))
		return -1;
	if (op_id)
		*op_id = id;
	return 0;

out_rollback:
	store_rollback(st);
	return -1;
}

int store_insert_ceiling(struct store *st, long long device_id,
			 long long run_id, const struct store_ceiling *c)
{
	sqlite3_stmt *s = NULL;
	char now[32];

	utc_now_iso(now, sizeof now);
	if (store_prepare(st, "INSERT INTO ceilings (device_id, run_id, name, unit, "
			"value, provenance, method, measured_at) "
			"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", &s))
		return -1;
	sqlite3_bind_int64(s, 1, device_id);
	if (run_id > 0)
		sqlite3_bind_int64(s, 2, run_id);
	else
		sqlite3_bind_null(s, 2);
	sqlite3_bind_text(s, 3, c->name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 4, c->unit, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(s, 5, c->value);
	sqlite3_bind_text(s, 6, c->provenance, -1, SQLITE_TRANSIENT);
	store_bind_text(s, 7, c->method);
	sqlite3_bind_text(s, 8, now, -1, SQLITE_TRANSIENT);
	return store_step_done(st, s, "cannot store a ceiling in");
}

/* ---- reads ----------------------------------------------------------- */

int store_find_run(struct store *st, const char *ref, long long *id)
{
	sqlite3_stmt *s = NULL;
	long n = 0;
	int rc;

	if (!ref || !*ref)
		return 0;
	if (parse_long(ref, &n) == 0) {
		if (n <= 0)
			return 0;
		if (store_prepare(st, "SELECT id FROM runs WHERE id = ?1", &s))
			return -1;
		sqlite3_bind_int64(s, 1, n);
	} else if (!strcmp(ref, "latest") ||
		   (!strncmp(ref, "latest~", 7) && parse_long(ref + 7, &n) == 0 && n >= 0)) {
		if (store_prepare(st, "SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?1", &s))
			return -1;
		sqlite3_bind_int64(s, 1, n);
	} else {
		if (store_prepare(st, "SELECT id FROM runs WHERE tag = ?1 ORDER BY id DESC LIMIT 1", &s))
			return -1;
		sqlite3_bind_text(s, 1, ref, -1, SQLITE_TRANSIENT);
	}
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc != SQLITE_DONE)
		return store_error(st, "cannot read runs from");
	return 0;
}

int store_resolve_run(struct store *st, const char *ref, long long *id)
{
	long n = 0;
	int found;

	if (!ref || !*ref)
		return error("empty run reference: give a run id, 'latest', "
			     "'latest~N' or a tag");
	if (parse_long(ref, &n) == 0 && n <= 0)
		return error("no run '%s' in '%s': run ids start at 1", ref, st->path);
	found = store_find_run(st, ref, id);
	if (found < 0)
		return -1;
	if (found)
		return 0;
	return error("no run '%s' in '%s' (see 'fuseprof list runs')", ref, st->path);
}
