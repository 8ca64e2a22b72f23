/* merge.c - another fuseprof database added to this one: the input
 * ATTACHed read-only, its rows copied by INSERT ... SELECT with ids
 * remapped through TEMP tables, one transaction an input (merge.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "merge.h"
#include "profile.h"
#include "sql.h"
#include "util.h"

/* The maps from the input's ids to this database's, for one input (runs,
 * devices) or one of its runs (processes, ops, kernel slots). fresh: a
 * row copied with the new id dst; else dst is a row here already (a
 * process, op or slot of a run the input's run joined): a process here
 * already adds none of its rows. */
static const char temp_tables[] =
	"CREATE TEMP TABLE IF NOT EXISTS merge_dev (src INTEGER PRIMARY KEY,"
	" dst INTEGER);"
	"CREATE TEMP TABLE IF NOT EXISTS merge_run (src INTEGER PRIMARY KEY,"
	" dst INTEGER NOT NULL);"
	"CREATE TEMP TABLE IF NOT EXISTS merge_op (src INTEGER PRIMARY KEY,"
	" dst INTEGER NOT NULL, fresh INTEGER NOT NULL, rep_off INTEGER NOT NULL);"
	"CREATE TEMP TABLE IF NOT EXISTS merge_kernel (src INTEGER PRIMARY KEY,"
	" dst INTEGER NOT NULL, op INTEGER NOT NULL, fresh INTEGER NOT NULL,"
	" idx INTEGER);"
	"CREATE TEMP TABLE IF NOT EXISTS merge_proc (src INTEGER PRIMARY KEY,"
	" dst INTEGER NOT NULL, fresh INTEGER NOT NULL);"
	"DELETE FROM temp.merge_dev; DELETE FROM temp.merge_run;"
	"DELETE FROM temp.merge_op; DELETE FROM temp.merge_kernel;"
	"DELETE FROM temp.merge_proc;";

/* The statements of one input. Their column lists depend on its schema
 * version, so each input gets its own. ?1 is the input's run, ?2 the run
 * here, unless said otherwise. */
enum {
	Q_RUNS, Q_SAME, Q_BYPROC, Q_NPROCS, Q_JOIN, Q_PROC_CLEAR, Q_PROC_MATCH,
	Q_NSKIP, Q_PROC_OFF, Q_PROC_FRESH, Q_RUN_ADD, Q_RUN_MAP, Q_RUN_DEVICE,
	Q_PROCS, Q_RANGES, Q_OP_CLEAR, Q_KERNEL_CLEAR, Q_OP_MATCH, Q_OP_OFF,
	Q_OP_FRESH, Q_OPS, Q_SAMPLES, Q_K_MATCH, Q_K_OFF, Q_K_FRESH, Q_KERNELS,
	Q_COUNTERS, Q_LAUNCHES, Q_TOUCHED, NQ
};

struct merge {
	struct store *st;
	sqlite3 *db;
	const char *path;
	const struct store_merge_opts *o;
	struct store_merge_stats *stats;
	int profiles;          /* the input has the profile tables (schema 6) */
	int proc_ids;          /* its rows name their process (schema 7) */
	long long last_run;    /* the last run here before this input */
	sqlite3_stmt *q[NQ];
};

static int fail(struct merge *m, const char *what)
{
	return error("cannot merge '%s': %s: %s", m->path, what,
		     sqlite3_errmsg(m->db));
}

/* The one integer a statement yields (reset after), 0 for no row or NULL.
 * Returns 0, or -1 after an error. */
static int one_int(struct merge *m, sqlite3_stmt *s, long long *out)
{
	int rc = sqlite3_step(s);

	*out = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	sqlite3_reset(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return fail(m, "cannot read");
	return 0;
}

/* Step a write to its end and reset it; *added (may be NULL) grows by the
 * rows it changed. */
static int write_rows(struct merge *m, sqlite3_stmt *s, long long *added)
{
	int rc = sqlite3_step(s);

	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return fail(m, "cannot copy");
	if (added)
		*added += sqlite3_changes(m->db);
	return 0;
}

static void bind2(sqlite3_stmt *s, long long a, long long b)
{
	sqlite3_bind_int64(s, 1, a);
	if (sqlite3_bind_parameter_count(s) >= 2)
		sqlite3_bind_int64(s, 2, b);
}

/* Whether the input's table t has column c (c NULL: whether t exists). */
static int src_has(struct merge *m, const char *t, const char *c)
{
	sqlite3_stmt *s = NULL;
	int yes;

	if (sqlite3_prepare_v2(m->db, c ? "SELECT 1 FROM pragma_table_info(?1, 'src') "
			       "WHERE name = ?2" : "SELECT 1 FROM src.sqlite_master "
			       "WHERE type = 'table' AND name = ?1", -1, &s, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(s, 1, t, -1, SQLITE_STATIC);
	if (c)
		sqlite3_bind_text(s, 2, c, -1, SQLITE_STATIC);
	yes = sqlite3_step(s) == SQLITE_ROW;
	sqlite3_finalize(s);
	return yes;
}

/* The input's column s.c of table t, or where its schema predates the
 * column, the default this database's schema gives it: what the migration
 * that added it gave the rows already there. Every migration so far only
 * adds tables and columns (store.c), so this reads an old input as its
 * migrations would make it. Appends to sb. */
static void src_col(struct merge *m, struct strbuf *sb, const char *t, const char *c)
{
	sqlite3_stmt *s = NULL;
	const char *dflt = NULL;

	if (src_has(m, t, c)) {
		strbuf_addf(sb, "s.\"%s\"", c);
		return;
	}
	if (sqlite3_prepare_v2(m->db, "SELECT dflt_value FROM pragma_table_info(?1, "
			       "'main') WHERE name = ?2", -1, &s, NULL) == SQLITE_OK) {
		sqlite3_bind_text(s, 1, t, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, c, -1, SQLITE_STATIC);
		if (sqlite3_step(s) == SQLITE_ROW)
			dflt = (const char *)sqlite3_column_text(s, 0);
	}
	strbuf_addstr(sb, dflt ? dflt : "NULL");
	sqlite3_finalize(s);
}

/* "INSERT INTO main.t (columns) SELECT expressions" for every column of
 * this database's table t: a column named in over (pairs of name and
 * expression, NULL-terminated) by its expression, or left out when that
 * is NULL (a new id); any other from the input's row s (src_col). The
 * caller adds FROM and the rest. */
static void insert_select(struct merge *m, struct strbuf *sb, const char *t,
			  const char *const *over)
{
	struct strbuf cols = STRBUF_INIT, exprs = STRBUF_INIT;
	sqlite3_stmt *s = NULL;

	if (sqlite3_prepare_v2(m->db, "SELECT name FROM pragma_table_info(?1, 'main') "
			       "ORDER BY cid", -1, &s, NULL) == SQLITE_OK) {
		sqlite3_bind_text(s, 1, t, -1, SQLITE_STATIC);
		while (sqlite3_step(s) == SQLITE_ROW) {
			const char *c = (const char *)sqlite3_column_text(s, 0);
			const char *const *o = over;

			while (*o && strcmp(o[0], c))
				o += 2;
			if (*o && !o[1])
				continue;
			strbuf_addf(&cols, "%s\"%s\"", cols.len ? ", " : "", c);
			if (exprs.len)
				strbuf_addstr(&exprs, ", ");
			if (*o)
				strbuf_addstr(&exprs, o[1]);
			else
				src_col(m, &exprs, t, c);
		}
	}
	sqlite3_finalize(s);
	strbuf_addf(sb, "INSERT INTO main.\"%s\" (%s) SELECT %s", t, strbuf_str(&cols),
		    strbuf_str(&exprs));
	strbuf_release(&cols);
	strbuf_release(&exprs);
}

/* The input's process of its row t (a sample or launch: "ops" names the
 * run through t.op_id; a range: "runs" through t.run_id): its proc_id,
 * or in a schema-6 input the process of its run with its pid, as the
 * migration to 7 finds it; NULL for rows of no process. */
static void src_proc(struct merge *m, struct strbuf *sb, const char *t,
		     const char *via)
{
	if (!m->profiles)
		strbuf_addstr(sb, "NULL");
	else if (m->proc_ids)
		strbuf_addf(sb, "%s.proc_id", t);
	else if (!strcmp(via, "ops"))
		strbuf_addf(sb, "(SELECT min(sp.id) FROM src.ops so JOIN src.procs sp "
			    "ON sp.run_id = so.run_id AND sp.pid = %s.pid WHERE so.id = "
			    "%s.op_id)", t, t);
	else
		strbuf_addf(sb, "(SELECT min(sp.id) FROM src.procs sp WHERE "
			    "sp.run_id = %s.run_id AND sp.pid = %s.pid)", t, t);
}

/* The row t's process here, as an SQL expression (malloc'd). */
static char *proc_dst(struct merge *m, const char *t, const char *via)
{
	struct strbuf sb = STRBUF_INIT;
	char *r;

	strbuf_addstr(&sb, "(SELECT dst FROM temp.merge_proc WHERE src = ");
	src_proc(m, &sb, t, via);
	strbuf_addstr(&sb, ")");
	r = xstrdup(strbuf_str(&sb));
	strbuf_release(&sb);
	return r;
}

/* Whether the row t is copied, appended to sb: not the rows of a process
 * here already; the rows of no process (a `fuseprof run` op's samples)
 * are. */
static void proc_keep(struct merge *m, struct strbuf *sb, const char *t,
		      const char *via)
{
	strbuf_addstr(sb, " coalesce((SELECT fresh FROM temp.merge_proc WHERE src = ");
	src_proc(m, sb, t, via);
	strbuf_addstr(sb, "), 1)");
}

/* The device here of the input's op s: its device_id, or in an input from
 * before ops had one, its run's for runs of `fuseprof run` (what the
 * migration to 7 gives it). */
static void src_op_device(struct merge *m, struct strbuf *sb)
{
	strbuf_addstr(sb, "(SELECT dst FROM temp.merge_dev WHERE src = ");
	if (src_has(m, "ops", "device_id"))
		strbuf_addstr(sb, "s.device_id)");
	else
		strbuf_addf(sb, "(SELECT sr.device_id FROM src.runs sr WHERE sr.id = "
			    "s.run_id%s))", src_has(m, "runs", "kind")
			    ? " AND sr.kind = 'run'" : "");
}

/* Two devices are one when their UNIQUE key is the same (NULLs alike). */
#define SAME_DEVICE \
	" d.uuid = s.uuid AND d.driver_version IS s.driver_version" \
	" AND d.sm_clock_khz IS s.sm_clock_khz AND d.mem_clock_khz IS s.mem_clock_khz"

/* Two processes of profiled runs are one: same host, pid and start. */
#define SAME_PROC \
	" p.pid = sp.pid AND p.host IS sp.host AND p.proc_start IS sp.proc_start" \
	" AND p.started_at = sp.started_at"

/* Build and prepare the statements of this input into m->q. */
static int prepare(struct merge *m)
{
	struct strbuf sb = STRBUF_INIT;
	int rc = -1;

	for (int i = 0; i < NQ; i++) {
		strbuf_reset(&sb);
		switch (i) {
		case Q_RUNS:
			strbuf_addstr(&sb, "SELECT s.id, ");
			src_col(m, &sb, "runs", "kind");
			strbuf_addstr(&sb, ", s.started_at, s.host, s.pid, ");
			src_col(m, &sb, "runs", "proc_start");
			strbuf_addstr(&sb, ", s.command_line, s.tag, s.device_id "
				      "FROM src.runs s ORDER BY s.id");
			break;
		case Q_SAME:
			/* Runs here before this input, each the match of
			 * one of its runs at most: runs of one input are
			 * distinct whatever their columns (a test's writer
			 * makes several in one second). */
			strbuf_addstr(&sb, "SELECT id FROM main.runs WHERE id <= ?1 "
				      "AND id NOT IN (SELECT dst FROM temp.merge_run) "
				      "AND kind = ?2 AND started_at = ?3 AND host IS ?4 "
				      "AND pid IS ?5 AND proc_start IS ?6 "
				      "AND command_line IS ?7 ORDER BY id LIMIT 1");
			break;
		case Q_BYPROC:
			strbuf_addstr(&sb, "SELECT p.run_id FROM src.procs sp "
				      "JOIN main.procs p ON" SAME_PROC " JOIN main.runs r "
				      "ON r.id = p.run_id AND r.kind = 'profile' "
				      "WHERE sp.run_id = ?1 ORDER BY p.run_id LIMIT 1");
			break;
		case Q_NPROCS:
			strbuf_addstr(&sb, "SELECT count(*) FROM src.procs WHERE run_id = ?1");
			break;
		case Q_JOIN:
			/* ?1 command line, ?2 tag, ?3 start, ?4 window (s) */
			strbuf_addstr(&sb, "SELECT id FROM main.runs WHERE kind = 'profile' "
				      "AND command_line IS ?1 AND tag IS ?2 AND "
				      "abs(julianday(started_at) - julianday(?3)) * 86400 <= ?4 "
				      "ORDER BY abs(julianday(started_at) - julianday(?3)), id "
				      "LIMIT 1");
			break;
		case Q_PROC_CLEAR:
			strbuf_addstr(&sb, "DELETE FROM temp.merge_proc");
			break;
		case Q_PROC_MATCH:
			/* The input's processes the run here has already. */
			strbuf_addstr(&sb, "INSERT OR IGNORE INTO temp.merge_proc (src, "
				      "dst, fresh) SELECT sp.id, min(p.id), 0 FROM src.procs sp "
				      "JOIN main.procs p ON p.run_id = ?2 AND" SAME_PROC
				      " WHERE sp.run_id = ?1 GROUP BY sp.id");
			break;
		case Q_NSKIP:
			strbuf_addstr(&sb, "SELECT count(*) FROM temp.merge_proc WHERE NOT fresh");
			break;
		case Q_PROC_OFF:
			strbuf_addstr(&sb, "SELECT (SELECT coalesce(max(id), 0) FROM "
				      "main.procs) + 1 - (SELECT coalesce(min(id), 0) FROM "
				      "src.procs WHERE run_id = ?1)");
			break;
		case Q_PROC_FRESH:
			/* ?2 the id offset */
			strbuf_addstr(&sb, "INSERT INTO temp.merge_proc (src, dst, fresh) "
				      "SELECT sp.id, sp.id + ?2, 1 FROM src.procs sp WHERE "
				      "sp.run_id = ?1 AND sp.id NOT IN (SELECT src FROM "
				      "temp.merge_proc)");
			break;
		case Q_RUN_ADD: {
			const char *const over[] = { "id", NULL, "device_id",
				"(SELECT dst FROM temp.merge_dev WHERE src = s.device_id)",
				NULL };

			insert_select(m, &sb, "runs", over);
			strbuf_addstr(&sb, " FROM src.runs s WHERE s.id = ?1");
			break;
		}
		case Q_RUN_MAP:
			strbuf_addstr(&sb, "INSERT INTO temp.merge_run (src, dst) "
				      "VALUES (?1, ?2)");
			break;
		case Q_RUN_DEVICE:
			/* ?1 the input's device */
			strbuf_addstr(&sb, "UPDATE main.runs SET device_id = (SELECT dst "
				      "FROM temp.merge_dev WHERE src = ?1) WHERE id = ?2 "
				      "AND device_id IS NULL");
			break;
		case Q_PROCS: {
			const char *const over[] = { "id", "m.dst", "run_id", "?2", NULL };

			if (!m->profiles)
				continue;
			insert_select(m, &sb, "procs", over);
			strbuf_addstr(&sb, " FROM temp.merge_proc m JOIN src.procs s "
				      "ON s.id = m.src WHERE m.fresh AND s.run_id = ?1 "
				      "ORDER BY s.id");
			break;
		}
		case Q_RANGES: {
			char *dst = proc_dst(m, "s", "runs");
			const char *const over[] = { "id", NULL, "run_id", "?2",
				"proc_id", dst, NULL };

			if (!m->profiles) {
				free(dst);
				continue;
			}
			insert_select(m, &sb, "ranges", over);
			free(dst);
			strbuf_addstr(&sb, " FROM src.ranges s WHERE s.run_id = ?1 AND");
			proc_keep(m, &sb, "s", "runs");
			strbuf_addstr(&sb, " ORDER BY s.id");
			break;
		}
		case Q_OP_CLEAR:
			strbuf_addstr(&sb, "DELETE FROM temp.merge_op");
			break;
		case Q_KERNEL_CLEAR:
			strbuf_addstr(&sb, "DELETE FROM temp.merge_kernel");
			break;
		case Q_OP_MATCH:
			/* Ops of the run here by their UNIQUE key; the input's
			 * samples go after the op's last. */
			strbuf_addstr(&sb, "INSERT INTO temp.merge_op (src, dst, fresh, "
				      "rep_off) SELECT s.id, o.id, 0, (SELECT coalesce("
				      "max(rep) + 1, 0) FROM main.samples WHERE op_id = o.id) "
				      "FROM src.ops s JOIN main.ops o ON o.run_id = ?2 "
				      "AND o.workload = s.workload AND o.variant = s.variant "
				      "AND o.dtype = s.dtype AND o.shape = s.shape "
				      "AND o.device_id IS ");
			src_op_device(m, &sb);
			strbuf_addstr(&sb, " WHERE s.run_id = ?1");
			break;
		case Q_OP_OFF:
			/* New ids: the input's, shifted past every id here. */
			strbuf_addstr(&sb, "SELECT (SELECT coalesce(max(id), 0) FROM "
				      "main.ops) + 1 - (SELECT coalesce(min(id), 0) FROM "
				      "src.ops WHERE run_id = ?1)");
			break;
		case Q_OP_FRESH:
			/* ?2 the id offset */
			strbuf_addstr(&sb, "INSERT INTO temp.merge_op (src, dst, fresh, "
				      "rep_off) SELECT s.id, s.id + ?2, 1, 0 FROM src.ops s "
				      "WHERE s.run_id = ?1 AND s.id NOT IN (SELECT src "
				      "FROM temp.merge_op)");
			break;
		case Q_OPS: {
			struct strbuf dev = STRBUF_INIT;

			src_op_device(m, &dev);
			const char *const over[] = { "id", "m.dst", "run_id", "?1",
				"device_id", strbuf_str(&dev), NULL };

			insert_select(m, &sb, "ops", over);
			strbuf_release(&dev);
			strbuf_addstr(&sb, " FROM temp.merge_op m JOIN src.ops s "
				      "ON s.id = m.src WHERE m.fresh ORDER BY m.src");
			break;
		}
		case Q_SAMPLES: {
			char *dst = src_has(m, "samples", "pid") ? proc_dst(m, "s", "ops")
								  : xstrdup("NULL");
			const char *const over[] = { "op_id", "m.dst",
				"rep", "s.rep + m.rep_off", "proc_id", dst, NULL };

			insert_select(m, &sb, "samples", over);
			free(dst);
			strbuf_addstr(&sb, " FROM temp.merge_op m JOIN src.samples s "
				      "ON s.op_id = m.src WHERE");
			if (src_has(m, "samples", "pid"))
				proc_keep(m, &sb, "s", "ops");
			else
				strbuf_addstr(&sb, " true");
			break;
		}
		case Q_K_MATCH:
			/* Kernel slots of a joined op: by name and launch
			 * configuration, as the collector finds them. */
			strbuf_addstr(&sb, "INSERT OR IGNORE INTO temp.merge_kernel (src, "
				      "dst, op, fresh, idx) SELECT s.id, d.id, m.dst, 0, d.idx "
				      "FROM temp.merge_op m JOIN src.kernels s ON s.op_id = m.src "
				      "JOIN main.kernels d ON d.op_id = m.dst AND d.name = s.name "
				      "AND d.grid_x IS s.grid_x AND d.grid_y IS s.grid_y "
				      "AND d.grid_z IS s.grid_z AND d.block_x IS s.block_x "
				      "AND d.block_y IS s.block_y AND d.block_z IS s.block_z "
				      "AND d.registers IS s.registers "
				      "AND d.static_smem IS s.static_smem "
				      "AND d.dynamic_smem IS s.dynamic_smem WHERE NOT m.fresh");
			break;
		case Q_K_OFF:
			strbuf_addstr(&sb, "SELECT (SELECT coalesce(max(id), 0) FROM "
				      "main.kernels) + 1 - (SELECT coalesce(min(s.id), 0) "
				      "FROM temp.merge_op m JOIN src.kernels s "
				      "ON s.op_id = m.src)");
			break;
		case Q_K_FRESH:
			/* ?1 the id offset. A slot new to a joined op goes
			 * after its last. */
			strbuf_addstr(&sb, "INSERT INTO temp.merge_kernel (src, dst, op, "
				      "fresh, idx) SELECT s.id, s.id + ?1, m.dst, 1, CASE "
				      "WHEN m.fresh THEN s.idx ELSE s.idx + (SELECT coalesce("
				      "max(idx) + 1, 0) FROM main.kernels WHERE op_id = m.dst) "
				      "END FROM temp.merge_op m JOIN src.kernels s ON "
				      "s.op_id = m.src WHERE s.id NOT IN (SELECT src FROM "
				      "temp.merge_kernel)");
			break;
		case Q_KERNELS: {
			const char *const over[] = { "id", "k.dst", "op_id", "k.op",
				"idx", "k.idx", NULL };

			insert_select(m, &sb, "kernels", over);
			strbuf_addstr(&sb, " FROM temp.merge_kernel k JOIN src.kernels s "
				      "ON s.id = k.src WHERE k.fresh ORDER BY k.src");
			break;
		}
		case Q_COUNTERS: {
			/* A joined slot keeps the counters it has: a profiled
			 * slot counted in several inputs keeps the first's
			 * sums (adding them would count a file merged twice
			 * twice). */
			const char *const over[] = { "kernel_id", "k.dst", NULL };

			insert_select(m, &sb, "counters", over);
			strbuf_addstr(&sb, " FROM temp.merge_kernel k JOIN src.counters s "
				      "ON s.kernel_id = k.src WHERE true ON CONFLICT DO NOTHING");
			break;
		}
		case Q_LAUNCHES: {
			char *dst;

			if (!m->profiles)
				continue;
			dst = proc_dst(m, "s", "ops");
			const char *const over[] = { "id", NULL, "op_id", "m.dst",
				"kernel_id", "k.dst", "rep", "s.rep + m.rep_off",
				"proc_id", dst, NULL };

			insert_select(m, &sb, "launches", over);
			free(dst);
			strbuf_addstr(&sb, " FROM temp.merge_op m JOIN src.launches s "
				      "ON s.op_id = m.src JOIN temp.merge_kernel k "
				      "ON k.src = s.kernel_id WHERE");
			proc_keep(m, &sb, "s", "ops");
			break;
		}
		case Q_TOUCHED:
			strbuf_addstr(&sb, "SELECT DISTINCT dst FROM temp.merge_op "
				      "ORDER BY dst");
			break;
		}
		/* Statements on the profile tables need them in the input. */
		if (!m->profiles && (i == Q_BYPROC || i == Q_NPROCS ||
				     i == Q_PROC_MATCH || i == Q_PROC_OFF ||
				     i == Q_PROC_FRESH))
			continue;
		if (sqlite3_prepare_v2(m->db, strbuf_str(&sb), -1, &m->q[i], NULL) !=
		    SQLITE_OK) {
			fail(m, "cannot prepare");
			goto out;
		}
	}
	rc = 0;
out:
	strbuf_release(&sb);
	return rc;
}

/* Copy the input's run src into the run dst here: its processes, ranges,
 * ops, samples, kernel slots, counters and launches, but those of the
 * pids in merge_skip. joined: dst was here before (another rank's run, or
 * this run with fewer processes): the input's ops and slots join dst's,
 * and every op touched is recomputed. */
static int copy_run(struct merge *m, long long src, long long dst, int joined)
{
	struct store_merge_stats *n = m->stats;
	long long off, *touched = NULL;
	size_t nt = 0, at = 0;
	int rc = -1, step;

	if (m->profiles) {
		/* New ids for its processes not here: the input's, shifted
		 * past every id here. */
		bind2(m->q[Q_PROC_OFF], src, 0);
		if (one_int(m, m->q[Q_PROC_OFF], &off))
			return -1;
		bind2(m->q[Q_PROC_FRESH], src, off);
		bind2(m->q[Q_PROCS], src, dst);
		bind2(m->q[Q_RANGES], src, dst);
		if (write_rows(m, m->q[Q_PROC_FRESH], NULL) ||
		    write_rows(m, m->q[Q_PROCS], &n->procs) ||
		    write_rows(m, m->q[Q_RANGES], &n->ranges))
			return -1;
	}
	if (write_rows(m, m->q[Q_OP_CLEAR], NULL) ||
	    write_rows(m, m->q[Q_KERNEL_CLEAR], NULL))
		return -1;
	if (joined) {
		bind2(m->q[Q_OP_MATCH], src, dst);
		if (write_rows(m, m->q[Q_OP_MATCH], NULL))
			return -1;
	}
	bind2(m->q[Q_OP_OFF], src, 0);
	if (one_int(m, m->q[Q_OP_OFF], &off))
		return -1;
	bind2(m->q[Q_OP_FRESH], src, off);
	bind2(m->q[Q_OPS], dst, 0);
	if (write_rows(m, m->q[Q_OP_FRESH], NULL) ||
	    write_rows(m, m->q[Q_OPS], &n->ops) ||
	    write_rows(m, m->q[Q_SAMPLES], &n->samples))
		return -1;
	if (joined && write_rows(m, m->q[Q_K_MATCH], NULL))
		return -1;
	if (one_int(m, m->q[Q_K_OFF], &off))
		return -1;
	bind2(m->q[Q_K_FRESH], off, 0);
	if (write_rows(m, m->q[Q_K_FRESH], NULL) ||
	    write_rows(m, m->q[Q_KERNELS], &n->kernels) ||
	    write_rows(m, m->q[Q_COUNTERS], &n->counters))
		return -1;
	if (m->profiles && write_rows(m, m->q[Q_LAUNCHES], &n->launches))
		return -1;
	if (!joined)
		return 0;  /* every op and slot as the input had it */
	while ((step = sqlite3_step(m->q[Q_TOUCHED])) == SQLITE_ROW) {
		if (nt == at) {
			at = at ? 2 * at : 64;
			touched = xrealloc(touched, at * sizeof *touched);
		}
		touched[nt++] = sqlite3_column_int64(m->q[Q_TOUCHED], 0);
	}
	sqlite3_reset(m->q[Q_TOUCHED]);
	if (step != SQLITE_DONE)
		fail(m, "cannot read");
	else if (store_profile_refresh(m->st, touched, nt))
		error("cannot merge '%s': the ops it joined could not be recomputed",
		      m->path);
	else
		rc = 0;
	free(touched);
	return rc;
}

/* The input's run at the current row of Q_RUNS: left out when it is here
 * already, joined to a run here (a profiled run: the processes not here
 * yet), or added as a new run. */
static int merge_run(struct merge *m)
{
	sqlite3_stmt *r = m->q[Q_RUNS], *s;
	long long src = sqlite3_column_int64(r, 0), dst = 0, nprocs = 0, nskip = 0;
	const char *kind = (const char *)sqlite3_column_text(r, 1);
	int profile = kind && !strcmp(kind, "profile") && m->profiles;

	s = m->q[Q_SAME];
	sqlite3_bind_int64(s, 1, m->last_run);
	/* kind, started_at, host, pid, proc_start, command_line */
	for (int c = 1; c <= 6; c++)
		sqlite3_bind_value(s, c + 1, sqlite3_column_value(r, c));
	if (one_int(m, s, &dst))
		return -1;
	if (profile) {
		bind2(m->q[Q_NPROCS], src, 0);
		if (one_int(m, m->q[Q_NPROCS], &nprocs))
			return -1;
		if (!dst) {
			bind2(m->q[Q_BYPROC], src, 0);
			if (one_int(m, m->q[Q_BYPROC], &dst))
				return -1;
		}
	}
	if (!dst && profile && nprocs > 0 && m->o->join_window_s > 0) {
		s = m->q[Q_JOIN];
		sqlite3_bind_value(s, 1, sqlite3_column_value(r, 6));
		sqlite3_bind_value(s, 2, sqlite3_column_value(r, 7));
		sqlite3_bind_value(s, 3, sqlite3_column_value(r, 2));
		sqlite3_bind_double(s, 4, m->o->join_window_s);
		if (one_int(m, s, &dst))
			return -1;
	}
	if (write_rows(m, m->q[Q_PROC_CLEAR], NULL))
		return -1;
	if (dst && profile) {
		/* Its processes the run here has already add nothing; rows
		 * name their process by its row, so another host's process
		 * of the same pid joins as any other. */
		bind2(m->q[Q_PROC_MATCH], src, dst);
		if (write_rows(m, m->q[Q_PROC_MATCH], NULL) ||
		    one_int(m, m->q[Q_NSKIP], &nskip))
			return -1;
	}
	if (dst && (!profile || nskip == nprocs)) {
		m->stats->runs_present++;
	} else if (dst) {
		bind2(m->q[Q_RUN_DEVICE], 0, dst);
		sqlite3_bind_value(m->q[Q_RUN_DEVICE], 1, sqlite3_column_value(r, 8));
		if (write_rows(m, m->q[Q_RUN_DEVICE], NULL) || copy_run(m, src, dst, 1))
			return -1;
		m->stats->runs_joined++;
	} else {
		bind2(m->q[Q_RUN_ADD], src, 0);
		if (write_rows(m, m->q[Q_RUN_ADD], &m->stats->runs_added))
			return -1;
		dst = sqlite3_last_insert_rowid(m->db);
		if (copy_run(m, src, dst, 0))
			return -1;
	}
	bind2(m->q[Q_RUN_MAP], src, dst);
	return write_rows(m, m->q[Q_RUN_MAP], NULL);
}

/* Devices first (runs and ceilings name them), then each run, then the
 * ceilings (which may name a run) and the meta keys missing here. */
static int merge_all(struct merge *m)
{
	struct strbuf sb = STRBUF_INIT;
	sqlite3_stmt *s = NULL;
	int rc = -1, step;

	{
		const char *const over[] = { "id", NULL, NULL };

		insert_select(m, &sb, "devices", over);
		strbuf_addstr(&sb, " FROM src.devices s WHERE NOT EXISTS (SELECT 1 "
			      "FROM main.devices d WHERE" SAME_DEVICE ") ORDER BY s.id;");
	}
	if (sqlite3_exec(m->db, strbuf_str(&sb), NULL, NULL, NULL) != SQLITE_OK) {
		fail(m, "cannot copy its devices");
		goto out;
	}
	m->stats->devices = sqlite3_changes(m->db);
	if (sqlite3_exec(m->db, "INSERT INTO temp.merge_dev (src, dst) SELECT s.id, "
			 "(SELECT min(d.id) FROM main.devices d WHERE" SAME_DEVICE ") "
			 "FROM src.devices s", NULL, NULL, NULL) != SQLITE_OK) {
		fail(m, "cannot copy its devices");
		goto out;
	}
	while ((step = sqlite3_step(m->q[Q_RUNS])) == SQLITE_ROW)
		if (merge_run(m))
			goto out;
	sqlite3_reset(m->q[Q_RUNS]);
	if (step != SQLITE_DONE) {
		fail(m, "cannot read its runs");
		goto out;
	}
	{
		const char *const over[] = { "id", NULL, "device_id", "md.dst",
					     "run_id", "mr.dst", NULL };

		strbuf_reset(&sb);
		insert_select(m, &sb, "ceilings", over);
		strbuf_addstr(&sb, " FROM src.ceilings s JOIN temp.merge_dev md "
			      "ON md.src = s.device_id LEFT JOIN temp.merge_run mr "
			      "ON mr.src = s.run_id WHERE NOT EXISTS (SELECT 1 FROM "
			      "main.ceilings c WHERE c.device_id = md.dst AND c.name = "
			      "s.name AND c.unit = s.unit AND c.provenance = s.provenance "
			      "AND c.value = s.value AND c.measured_at = s.measured_at "
			      "AND c.method IS s.method AND c.run_id IS mr.dst) ORDER BY s.id");
	}
	if (sqlite3_prepare_v2(m->db, strbuf_str(&sb), -1, &s, NULL) != SQLITE_OK ||
	    write_rows(m, s, &m->stats->ceilings)) {
		if (!s)
			fail(m, "cannot copy its ceilings");
		goto out;
	}
	if (sqlite3_exec(m->db, "INSERT INTO main.meta (key, value) SELECT key, value "
			 "FROM src.meta WHERE true ON CONFLICT (key) DO NOTHING",
			 NULL, NULL, NULL) != SQLITE_OK) {
		fail(m, "cannot copy its meta");
		goto out;
	}
	rc = 0;
out:
	sqlite3_finalize(s);
	strbuf_release(&sb);
	return rc;
}

/* Whether the attached input is a fuseprof database of a schema this
 * build reads; the first read fails on a file that is not SQLite. */
static int check_input(struct merge *m)
{
	sqlite3_stmt *s = NULL;
	long long v[3] = { 0, 0, 0 };
	static const char *const q[3] = {
		"SELECT count(*) FROM src.sqlite_master WHERE type = 'table'",
		"PRAGMA src.user_version", "PRAGMA src.application_id" };

	for (int i = 0; i < 3; i++) {
		if (sqlite3_prepare_v2(m->db, q[i], -1, &s, NULL) != SQLITE_OK ||
		    one_int(m, s, &v[i])) {
			if (!s)
				fail(m, "cannot read");
			sqlite3_finalize(s);
			return -1;
		}
		sqlite3_finalize(s);
		s = NULL;
	}
	if (v[0] == 0 && v[1] == 0)
		return error("cannot merge '%s': it is empty, not a fuseprof database",
			     m->path);
	if (v[2] != STORE_APP_ID)
		return error("cannot merge '%s': an SQLite database, but not one of "
			     "fuseprof's", m->path);
	if (v[1] > STORE_SCHEMA_VERSION)
		return error("cannot merge '%s': its schema is version %lld, newer than "
			     "this fuseprof understands (%d): upgrade fuseprof", m->path,
			     v[1], STORE_SCHEMA_VERSION);
	if (v[1] < 1)
		return error("cannot merge '%s': its schema version is %lld, not one "
			     "of fuseprof's", m->path, v[1]);
	m->profiles = src_has(m, "procs", NULL) && src_has(m, "ranges", NULL) &&
		      src_has(m, "launches", NULL);
	m->proc_ids = m->profiles && src_has(m, "samples", "proc_id") &&
		      src_has(m, "ranges", "proc_id") &&
		      src_has(m, "launches", "proc_id");
	return 0;
}

int store_merge(struct store *st, const char *path,
		const struct store_merge_opts *o, struct store_merge_stats *stats)
{
	struct merge m = { .st = st, .db = store_db(st), .path = path, .o = o,
			   .stats = stats };
	sqlite3_stmt *s = NULL;
	struct stat sb;
	char *uri = NULL;
	int rc = -1, attached = 0;

	memset(stats, 0, sizeof *stats);
	if (stat(path, &sb) != 0)
		return error("cannot merge '%s': %s", path, strerror(errno));
	if (S_ISDIR(sb.st_mode))
		return error("cannot merge '%s': is a directory", path);
	if (access(path, R_OK) != 0)
		return error("cannot merge '%s': %s", path, strerror(errno));
	uri = store_reader_uri(path);
	if (sqlite3_prepare_v2(m.db, "ATTACH ?1 AS src", -1, &s, NULL) != SQLITE_OK) {
		fail(&m, "cannot attach");
		goto out;
	}
	sqlite3_bind_text(s, 1, uri, -1, SQLITE_STATIC);
	if (sqlite3_step(s) != SQLITE_DONE) {
		fail(&m, "cannot open");
		goto out;
	}
	attached = 1;
	if (check_input(&m))
		goto out;
	if (sqlite3_exec(m.db, temp_tables, NULL, NULL, NULL) != SQLITE_OK) {
		fail(&m, "cannot make its id maps");
		goto out;
	}
	if (prepare(&m))
		goto out;
	if (store_begin(st))
		goto out;
	{
		sqlite3_stmt *last = NULL;

		if (sqlite3_prepare_v2(m.db, "SELECT coalesce(max(id), 0) FROM main.runs",
				       -1, &last, NULL) != SQLITE_OK ||
		    one_int(&m, last, &m.last_run)) {
			if (!last)
				fail(&m, "cannot read");
			sqlite3_finalize(last);
			store_rollback(st);
			goto out;
		}
		sqlite3_finalize(last);
	}
	if (merge_all(&m)) {
		store_rollback(st);
		goto out;
	}
	rc = store_commit(st);
out:
	sqlite3_finalize(s);
	for (int i = 0; i < NQ; i++)
		sqlite3_finalize(m.q[i]);
	if (attached)
		sqlite3_exec(m.db, "DETACH src", NULL, NULL, NULL);
	free(uri);
	if (rc)
		memset(stats, 0, sizeof *stats);
	return rc;
}
