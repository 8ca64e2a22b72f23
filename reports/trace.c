/* trace.c - a run as a Trace Event Format trace (trace.h): slices read in
 * track order, each put on the first lane of its track where it nests,
 * written as they come. */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "strmap.h"
#include "trace.h"
#include "util.h"

/* Lanes of one track: each a stack of the ends of the slices open on it.
 * A slice goes on the first lane whose open slices all contain it, after
 * those that ended before it starts are closed. */
struct lane {
	long long *ends;
	size_t n, alloc;
	long long tid;
};

struct track {
	long long pid, key;     /* key: the thread, or the stream's */
	char *name;             /* of lane 0; later lanes add " (k)" */
	struct lane *lanes;
	size_t nlanes;
};

struct writer {
	FILE *out;
	long long t0;
	struct track cur;       /* the track being written */
	int have;
	long long next_tid;     /* for lanes beyond the first, and streams */
	struct trace_counts *counts;
	int first;              /* no event written yet */
	struct strbuf sb;
};

static void emit(struct writer *w, const char *event)
{
	fputs(w->first ? "\n" : ",\n", w->out);
	fputs(event, w->out);
	w->first = 0;
}

static void thread_name(struct writer *w, long long pid, long long tid,
			const char *name, long long sort)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %lld, "
		    "\"tid\": %lld, \"args\": {\"name\": ", pid, tid);
	strbuf_add_json(&sb, name);
	strbuf_addstr(&sb, "}}");
	emit(w, strbuf_str(&sb));
	strbuf_reset(&sb);
	strbuf_addf(&sb, "{\"ph\": \"M\", \"name\": \"thread_sort_index\", \"pid\": "
		    "%lld, \"tid\": %lld, \"args\": {\"sort_index\": %lld}}", pid, tid,
		    sort);
	emit(w, strbuf_str(&sb));
	strbuf_release(&sb);
}

static void end_track(struct writer *w)
{
	if (!w->have)
		return;
	for (size_t i = 0; i < w->cur.nlanes; i++)
		free(w->cur.lanes[i].ends);
	free(w->cur.lanes);
	free(w->cur.name);
	memset(&w->cur, 0, sizeof w->cur);
	w->have = 0;
}

/* Make (pid, key) the current track; tid0 is its first lane's tid. */
static void use_track(struct writer *w, long long pid, long long key,
		      long long tid0, const char *name)
{
	if (w->have && w->cur.pid == pid && w->cur.key == key)
		return;
	end_track(w);
	w->cur.pid = pid;
	w->cur.key = key;
	w->cur.name = xstrdup(name);
	w->cur.lanes = xcalloc(1, sizeof *w->cur.lanes);
	w->cur.lanes[0].tid = tid0;
	w->cur.nlanes = 1;
	w->have = 1;
	thread_name(w, pid, tid0, name, tid0 < 0 ? 0 : tid0);
	w->counts->tracks++;
}

/* The tid of the lane [start, end] nests on. */
static long long place(struct writer *w, long long start, long long end)
{
	struct track *t = &w->cur;
	size_t i;

	for (i = 0; i < t->nlanes; i++) {
		struct lane *l = &t->lanes[i];

		while (l->n && l->ends[l->n - 1] <= start)
			l->n--;
		if (!l->n || l->ends[l->n - 1] >= end)
			break;
	}
	if (i == t->nlanes) {
		char *name = xasprintf("%s (%zu)", t->name, i + 1);

		t->lanes = xrealloc(t->lanes, (i + 1) * sizeof *t->lanes);
		memset(&t->lanes[i], 0, sizeof t->lanes[i]);
		t->lanes[i].tid = w->next_tid++;
		t->nlanes++;
		thread_name(w, t->pid, t->lanes[i].tid, name, t->lanes[i].tid);
		w->counts->tracks++;
		free(name);
	}
	if (t->lanes[i].n == t->lanes[i].alloc) {
		t->lanes[i].alloc = t->lanes[i].alloc ? 2 * t->lanes[i].alloc : 16;
		t->lanes[i].ends = xrealloc(t->lanes[i].ends,
					    t->lanes[i].alloc * sizeof *t->lanes[i].ends);
	}
	t->lanes[i].ends[t->lanes[i].n++] = end;
	return t->lanes[i].tid;
}

/* ns as microseconds with 3 decimals, exactly. */
static void add_us(struct strbuf *sb, long long ns)
{
	strbuf_addf(sb, "%s%lld.%03lld", ns < 0 ? "-" : "", llabs(ns) / 1000,
		    llabs(ns) % 1000);
}

/* A complete event on the current track; args is a JSON object's inside
 * ("\"k\": v, ...") or NULL. */
static void slice(struct writer *w, const char *name, const char *cat,
		  long long start, long long end, const char *args)
{
	struct strbuf *sb = &w->sb;
	long long tid;

	if (end < start)
		end = start;
	tid = place(w, start, end);
	strbuf_reset(sb);
	strbuf_addstr(sb, "{\"ph\": \"X\", \"name\": ");
	strbuf_add_json(sb, name ? name : "");
	strbuf_addf(sb, ", \"cat\": \"%s\", \"pid\": %lld, \"tid\": %lld, \"ts\": ",
		    cat, w->cur.pid, tid);
	add_us(sb, start - w->t0);
	strbuf_addstr(sb, ", \"dur\": ");
	add_us(sb, end - start);
	if (args) {
		strbuf_addstr(sb, ", \"args\": {");
		strbuf_addstr(sb, args);
		strbuf_addstr(sb, "}");
	}
	strbuf_addstr(sb, "}");
	emit(w, strbuf_str(sb));
	w->counts->slices++;
}

static int sql_error(struct store *st, sqlite3_stmt *s)
{
	sqlite3_finalize(s);
	return store_error(st, "cannot read the run from");
}

static const char *text(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);

	return t ? (const char *)t : "";
}

static void process_name(struct writer *w, long long pid, const char *name)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %lld, "
		    "\"args\": {\"name\": ", pid);
	strbuf_add_json(&sb, name);
	strbuf_addstr(&sb, "}}");
	emit(w, strbuf_str(&sb));
	strbuf_release(&sb);
}

/* A profiled run: processes, NVTX ranges by thread, kernels by stream. */
static int write_profile(struct store *st, long long run, struct writer *w)
{
	sqlite3 *db = store_db(st);
	sqlite3_stmt *s = NULL;
	struct strbuf args = STRBUF_INIT;
	long long last_end = 0, clash = 0;
	const char *key;
	char *sql;
	int rc;

	/* A trace process is a pid, unless two processes of the run share
	 * one (ranks of two hosts, merged): then each process's row id. */
	if (sqlite3_prepare_v2(db, "SELECT count(*) - count(DISTINCT pid) FROM procs "
			       "WHERE run_id = ?1", -1, &s, NULL) != SQLITE_OK)
		return sql_error(st, s);
	sqlite3_bind_int64(s, 1, run);
	if (sqlite3_step(s) == SQLITE_ROW)
		clash = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	key = clash > 0 ? "proc_id" : "pid";
	sql = xasprintf("SELECT %s, coalesce(command_line, ''), pid, rank, host FROM "
			"procs WHERE run_id = ?1 ORDER BY %s", clash > 0 ? "id" : "pid",
			clash > 0 ? "id" : "pid");
	rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);
	free(sql);
	if (rc != SQLITE_OK)
		return sql_error(st, s);
	sqlite3_bind_int64(s, 1, run);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int ranked = sqlite3_column_type(s, 3) != SQLITE_NULL;
		char *name;

		if (ranked)
			name = xasprintf("%s (pid %lld, rank %lld%s%s)", text(s, 1),
					 sqlite3_column_int64(s, 2),
					 sqlite3_column_int64(s, 3),
					 clash > 0 ? ", host " : "", clash > 0 ? text(s, 4) : "");
		else
			name = xasprintf("%s (pid %lld%s%s)", text(s, 1),
					 sqlite3_column_int64(s, 2),
					 clash > 0 ? ", host " : "", clash > 0 ? text(s, 4) : "");

		process_name(w, sqlite3_column_int64(s, 0), name);
		free(name);
	}
	if (rc != SQLITE_DONE)
		return sql_error(st, s);
	sqlite3_finalize(s);

	/* Ranges still open (a process killed) end at the run's last event. */
	if (sqlite3_prepare_v2(db, "SELECT max(l.end_ns) FROM launches l JOIN ops o "
			       "ON o.id = l.op_id WHERE o.run_id = ?1", -1, &s, NULL) != SQLITE_OK)
		return sql_error(st, s);
	sqlite3_bind_int64(s, 1, run);
	if (sqlite3_step(s) == SQLITE_ROW)
		last_end = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);

	sql = xasprintf("SELECT %s, coalesce(tid, 0), name, domain, path, "
			"start_ns, coalesce(end_ns, max(start_ns, ?2)), end_ns IS NULL "
			"FROM ranges WHERE run_id = ?1 ORDER BY %s, tid, start_ns, "
			"coalesce(end_ns, max(start_ns, ?2)) DESC, depth", key, key);
	rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);
	free(sql);
	if (rc != SQLITE_OK)
		return sql_error(st, s);
	sqlite3_bind_int64(s, 1, run);
	sqlite3_bind_int64(s, 2, last_end);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		long long pid = sqlite3_column_int64(s, 0), tid = sqlite3_column_int64(s, 1);
		char *tname = xasprintf("thread %lld: NVTX", tid);

		use_track(w, pid, tid, tid, tname);
		free(tname);
		strbuf_reset(&args);
		strbuf_addstr(&args, "\"path\": ");
		strbuf_add_json(&args, text(s, 4));
		if (sqlite3_column_type(s, 3) != SQLITE_NULL) {
			strbuf_addstr(&args, ", \"domain\": ");
			strbuf_add_json(&args, text(s, 3));
		}
		if (sqlite3_column_int(s, 7))
			strbuf_addstr(&args, ", \"open\": true");
		slice(w, text(s, 2), "nvtx", sqlite3_column_int64(s, 5),
		      sqlite3_column_int64(s, 6), strbuf_str(&args));
	}
	if (rc != SQLITE_DONE) {
		strbuf_release(&args);
		return sql_error(st, s);
	}
	sqlite3_finalize(s);
	end_track(w);

	sql = xasprintf("SELECT l.%s, l.device, l.stream, k.name, l.start_ns, "
			"l.end_ns, o.workload, l.correlation, k.grid_x, k.grid_y, "
			"k.grid_z, k.block_x, k.block_y, k.block_z, k.registers, "
			"k.static_smem + k.dynamic_smem, "
			/* a counted launch's device pointers (launches.ptrs) */
			"CASE WHEN json_valid(l.ptrs) THEN (SELECT json_group_array("
			"json_object('ptr', printf('0x%%x', json_extract(j.value, '$[0]')), "
			"'bytes', json_extract(j.value, '$[1]'))) FROM json_each(l.ptrs) j "
			"WHERE j.type = 'array') END FROM launches l "
			"JOIN kernels k ON k.id = l.kernel_id JOIN ops o ON o.id = l.op_id "
			"WHERE o.run_id = ?1 ORDER BY l.%s, l.device, l.stream, "
			"l.start_ns, l.end_ns DESC", key, key);
	rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);
	free(sql);
	if (rc != SQLITE_OK) {
		strbuf_release(&args);
		return sql_error(st, s);
	}
	sqlite3_bind_int64(s, 1, run);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		long long pid = sqlite3_column_int64(s, 0);
		long long dev = sqlite3_column_int64(s, 1), stream = sqlite3_column_int64(s, 2);

		if (!w->have || w->cur.pid != pid || w->cur.key != -(dev << 32 | stream) - 1) {
			char *tname = xasprintf("GPU %lld stream %lld", dev, stream);

			use_track(w, pid, -(dev << 32 | stream) - 1, w->next_tid++, tname);
			free(tname);
		}
		strbuf_reset(&args);
		strbuf_addstr(&args, "\"op\": ");
		strbuf_add_json(&args, text(s, 6));
		strbuf_addf(&args, ", \"correlation\": %lld, \"grid\": [%lld, %lld, %lld], "
			    "\"block\": [%lld, %lld, %lld], \"registers\": %lld, "
			    "\"shared_bytes\": %lld", sqlite3_column_int64(s, 7),
			    sqlite3_column_int64(s, 8), sqlite3_column_int64(s, 9),
			    sqlite3_column_int64(s, 10), sqlite3_column_int64(s, 11),
			    sqlite3_column_int64(s, 12), sqlite3_column_int64(s, 13),
			    sqlite3_column_int64(s, 14), sqlite3_column_int64(s, 15));
		if (sqlite3_column_type(s, 16) == SQLITE_TEXT)
			strbuf_addf(&args, ", \"buffers\": %s", text(s, 16));
		slice(w, text(s, 3), "kernel", sqlite3_column_int64(s, 4),
		      sqlite3_column_int64(s, 5), strbuf_str(&args));
	}
	strbuf_release(&args);
	if (rc != SQLITE_DONE)
		return sql_error(st, s);
	sqlite3_finalize(s);
	end_track(w);
	return 0;
}

/* A `run`: its ops end to end, each holding its kernels. */
static int write_laid_out(struct store *st, long long run, struct writer *w)
{
	sqlite3 *db = store_db(st);
	sqlite3_stmt *s = NULL;
	struct strbuf args = STRBUF_INIT;
	long long at = 0, op = -1, op_start = 0, cursor = 0;
	char *label;
	int rc;

	w->t0 = 0;
	label = xasprintf("fuseprof run %lld", run);
	process_name(w, 1, label);
	free(label);
	use_track(w, 1, 1, 1, "ops, end to end (median times)");
	/* Per op, its length first (the larger of its median time and its
	 * kernels' medians one after the other, each rounded to the ns as
	 * the slices are), then its kernels. */
	if (sqlite3_prepare_v2(db, "SELECT o.op_id, o.workload || '/' || o.variant || "
			       "'/' || o.dtype || '/' || o.shape, o.status, o.time_ns, "
			       "o.launches, max(coalesce(round(o.time_ns), 0), coalesce(("
			       "SELECT sum(round(k.dur_ns) * k.launches) FROM kernels k "
			       "WHERE k.op_id = o.op_id), 0)), k.name, k.launches, k.dur_ns "
			       "FROM v_ops o LEFT JOIN kernels k ON k.op_id = o.op_id "
			       "WHERE o.run_id = ?1 ORDER BY o.op_id, k.idx", -1, &s,
			       NULL) != SQLITE_OK)
		return sql_error(st, s);
	sqlite3_bind_int64(s, 1, run);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		long long id = sqlite3_column_int64(s, 0);

		if (id != op) {
			long long len = llround(sqlite3_column_double(s, 5));

			op = id;
			op_start = cursor = at;
			at += len;
			strbuf_reset(&args);
			strbuf_addstr(&args, "\"status\": ");
			strbuf_add_json(&args, text(s, 2));
			strbuf_addf(&args, ", \"time_ns\": %.1f, \"launches\": %lld",
				    sqlite3_column_double(s, 3), sqlite3_column_int64(s, 4));
			slice(w, text(s, 1), "op", op_start, at, strbuf_str(&args));
		}
		if (sqlite3_column_type(s, 6) == SQLITE_NULL)
			continue;
		for (long long i = 0; i < sqlite3_column_int64(s, 7); i++) {
			long long d = llround(sqlite3_column_double(s, 8));

			slice(w, text(s, 6), "kernel", cursor, cursor + d, NULL);
			cursor += d;
		}
	}
	strbuf_release(&args);
	if (rc != SQLITE_DONE)
		return sql_error(st, s);
	sqlite3_finalize(s);
	end_track(w);
	return 0;
}

int trace_write(struct store *st, long long run, FILE *out,
		struct trace_counts *counts)
{
	struct writer w = { .out = out, .counts = counts, .first = 1,
			    .next_tid = 1LL << 30, .sb = STRBUF_INIT };
	sqlite3 *db = store_db(st);
	sqlite3_stmt *s = NULL;
	struct strbuf sb = STRBUF_INIT;
	char *kind = NULL, *tag = NULL, *device = NULL;
	long long launches = 0;
	int rc;

	memset(counts, 0, sizeof *counts);
	if (sqlite3_prepare_v2(db, "SELECT kind, tag, device, (SELECT count(*) FROM "
			       "launches l JOIN ops o ON o.id = l.op_id WHERE o.run_id = "
			       "?1), (SELECT min(t) FROM (SELECT min(l.start_ns) AS t FROM "
			       "launches l JOIN ops o ON o.id = l.op_id WHERE o.run_id = ?1 "
			       "UNION ALL SELECT min(start_ns) FROM ranges WHERE run_id = "
			       "?1)) FROM v_runs WHERE run_id = ?1", -1, &s, NULL) != SQLITE_OK)
		return sql_error(st, s);
	sqlite3_bind_int64(s, 1, run);
	if (sqlite3_step(s) != SQLITE_ROW)
		return sql_error(st, s);
	kind = xstrdup(text(s, 0));
	tag = sqlite3_column_type(s, 1) == SQLITE_NULL ? NULL : xstrdup(text(s, 1));
	device = sqlite3_column_type(s, 2) == SQLITE_NULL ? NULL : xstrdup(text(s, 2));
	launches = sqlite3_column_int64(s, 3);
	w.t0 = sqlite3_column_int64(s, 4);
	sqlite3_finalize(s);

	fputs("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [", out);
	counts->laid_out = launches == 0;
	rc = counts->laid_out ? write_laid_out(st, run, &w) : write_profile(st, run, &w);
	strbuf_addf(&sb, "\n], \"otherData\": {\"run\": %lld, \"kind\": ", run);
	strbuf_add_json(&sb, kind);
	strbuf_addstr(&sb, ", \"tag\": ");
	if (tag)
		strbuf_add_json(&sb, tag);
	else
		strbuf_addstr(&sb, "null");
	strbuf_addstr(&sb, ", \"device\": ");
	if (device)
		strbuf_add_json(&sb, device);
	else
		strbuf_addstr(&sb, "null");
	/* A string: ns since the epoch need more digits than a double has. */
	strbuf_addf(&sb, ", \"t0_ns\": \"%lld\", \"timeline\": %s}}\n", w.t0,
		    counts->laid_out ? "\"laid out: no launch times stored\""
				     : "\"measured\"");
	fputs(strbuf_str(&sb), out);
	strbuf_release(&sb);
	strbuf_release(&w.sb);
	free(kind);
	free(tag);
	free(device);
	return rc;
}
