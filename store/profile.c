/* profile.c - profiled runs in the store: a row per process, and commits
 * of kernel launches and NVTX ranges after which every touched sample, op
 * and kernel slot is recomputed from the launches stored for it, so that a
 * commit leaves ops that read right whatever comes after it (a later
 * commit, another process, or nothing: a killed process). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "proc.h"
#include "profile.h"
#include "sql.h"
#include "strmap.h"
#include "util.h"

/* Ids this process looked up or created: ops by name, kernel slots by
 * op, name and launch configuration. Valid while no commit failed (a
 * rolled-back commit may have created some; the cache is cleared then). */
struct proc_cache {
	struct strmap ops, slots;
};

static void cache_clear(struct store_proc *p)
{
	if (!p->cache)
		return;
	strmap_clear(&p->cache->ops, NULL);
	strmap_clear(&p->cache->slots, NULL);
}

void store_proc_release(struct store_proc *p)
{
	cache_clear(p);
	free(p->cache);
	p->cache = NULL;
}

int store_proc_begin(struct store *st, struct store_proc *p, const char *status,
		     const char *note)
{
	sqlite3 *db = store_db(st);
	sqlite3_stmt *s = NULL;
	char now[32], host[256], start[128];
	const char *kind, *rstatus;
	int rc;

	if (store_prepare(st, "SELECT kind, status, coalesce(tag, 'profiled') "
			  "FROM runs WHERE id = ?1", &s))
		return -1;
	sqlite3_bind_int64(s, 1, p->run_id);
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(s);
		if (rc != SQLITE_DONE)
			return store_error(st, "cannot read runs from");
		return error("no run %lld in '%s' to profile into", p->run_id,
			     store_path(st));
	}
	kind = (const char *)sqlite3_column_text(s, 0);
	rstatus = (const char *)sqlite3_column_text(s, 1);
	if (strcmp(kind, "profile") || strcmp(rstatus, "running")) {
		error("run %lld in '%s' is not a running profile (kind '%s', "
		      "status '%s')", p->run_id, store_path(st), kind, rstatus);
		sqlite3_finalize(s);
		return -1;
	}
	snprintf(p->variant, sizeof p->variant, "%s", sqlite3_column_text(s, 2));
	sqlite3_finalize(s);

	utc_now_iso(now, sizeof now);
	proc_host(host, sizeof host);
	if (store_prepare(st, "INSERT INTO procs (run_id, pid, host, proc_start, "
			  "command_line, started_at, status, note, rank, local_rank, "
			  "world_size) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
			  "?11)", &s))
		return -1;
	sqlite3_bind_int64(s, 1, p->run_id);
	sqlite3_bind_int64(s, 2, p->pid);
	store_bind_text(s, 3, host[0] ? host : NULL);
	store_bind_text(s, 4, proc_start((pid_t)p->pid, start, sizeof start) == 0
			? start : NULL);
	store_bind_text(s, 5, p->command_line);
	sqlite3_bind_text(s, 6, now, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 7, status, -1, SQLITE_TRANSIENT);
	store_bind_text(s, 8, note);
	/* Where the launcher placed it; NULL where it said nothing. */
	for (int i = 0; i < 3; i++) {
		long v = i == 0 ? p->rank : i == 1 ? p->local_rank : p->world_size;

		if (v >= 0)
			sqlite3_bind_int64(s, 9 + i, v);
		else
			sqlite3_bind_null(s, 9 + i);
	}
	if (store_step_done(st, s, "cannot record a profiled process in"))
		return -1;
	p->id = sqlite3_last_insert_rowid(db);
	if (!p->cache)
		p->cache = xcalloc(1, sizeof *p->cache);
	return 0;
}

/* Bind p's counts as ?2..?7 (?1 is the row). */
static void bind_counts(sqlite3_stmt *s, const struct store_proc *p)
{
	sqlite3_bind_int64(s, 1, p->id);
	sqlite3_bind_int64(s, 2, p->kernels_seen);
	sqlite3_bind_int64(s, 3, p->kernels_recorded);
	sqlite3_bind_int64(s, 4, p->kernels_filtered);
	sqlite3_bind_int64(s, 5, p->kernels_over_limit);
	sqlite3_bind_int64(s, 6, p->records_dropped);
	sqlite3_bind_int64(s, 7, p->ranges);
}

#define SET_COUNTS "kernels_seen = ?2, kernels_recorded = ?3, " \
	"kernels_filtered = ?4, kernels_over_limit = ?5, records_dropped = ?6, " \
	"ranges = ?7"

int store_proc_finish(struct store *st, const struct store_proc *p,
		      const char *status, const char *note)
{
	sqlite3_stmt *s = NULL;
	char now[32];

	utc_now_iso(now, sizeof now);
	if (store_prepare(st, "UPDATE procs SET " SET_COUNTS ", status = ?8, "
			  "finished_at = ?9, note = coalesce(?10, note) WHERE id = ?1", &s))
		return -1;
	bind_counts(s, p);
	sqlite3_bind_text(s, 8, status, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 9, now, -1, SQLITE_TRANSIENT);
	store_bind_text(s, 10, note);
	return store_step_done(st, s, "cannot finish a profiled process in");
}

int store_profile_device(struct store *st, long long run_id, long long device_id)
{
	sqlite3_stmt *s = NULL;

	if (store_prepare(st, "UPDATE runs SET device_id = ?2 WHERE id = ?1 "
			  "AND device_id IS NULL", &s))
		return -1;
	sqlite3_bind_int64(s, 1, run_id);
	sqlite3_bind_int64(s, 2, device_id);
	return store_step_done(st, s, "cannot update the run in");
}

/* ---- one commit --------------------------------------------------------- */

/* The statements of a commit, prepared once for all its launches. */
enum {
	Q_OP_FIND, Q_OP_ADD, Q_SLOT_FIND, Q_SLOT_ADD, Q_REP_FIND, Q_REP_ADD,
	Q_LAUNCH, Q_RANGE, Q_SAMPLE_SUM, Q_OP_SAMPLES, Q_OP_SET, Q_SLOT_STATS,
	Q_SLOT_NTH, Q_SLOT_SET, Q_PROC, Q_COUNT_ADD, Q_COUNT_SET, NQ
};

static const char *const sql[NQ] = {
	[Q_OP_FIND] = "SELECT id FROM ops WHERE run_id = ?1 AND workload = ?2 "
		"AND variant = ?3 AND dtype = '' AND shape = ''",
	[Q_OP_ADD] = "INSERT INTO ops (run_id, workload, variant, role, dtype, "
		"shape, status, reps, launches, created_at) VALUES (?1, ?2, ?3, "
		"'fused', '', '', 'ok', 0, 0, ?4)",
	[Q_SLOT_FIND] = "SELECT id FROM kernels WHERE op_id = ?1 AND name = ?2 "
		"AND grid_x = ?3 AND grid_y = ?4 AND grid_z = ?5 AND block_x = ?6 "
		"AND block_y = ?7 AND block_z = ?8 AND registers = ?9 "
		"AND static_smem = ?10 AND dynamic_smem = ?11",
	[Q_SLOT_ADD] = "INSERT INTO kernels (op_id, idx, name, mangled, grid_x, "
		"grid_y, grid_z, block_x, block_y, block_z, registers, static_smem, "
		"dynamic_smem, launches) VALUES (?1, (SELECT coalesce(max(idx) + 1, 0) "
		"FROM kernels WHERE op_id = ?1), ?2, ?12, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
		"?10, ?11, 0)",
	/* ?4 the process's row: a sample, launch or range names its
	 * process by it (pids of two hosts may be the same after a merge). */
	[Q_REP_FIND] = "SELECT rep FROM samples WHERE op_id = ?1 AND proc_id = ?4 "
		"AND instance = ?3",
	[Q_REP_ADD] = "INSERT INTO samples (op_id, rep, time_ns, pid, instance, "
		"launches, proc_id) VALUES (?1, (SELECT coalesce(max(rep) + 1, 0) "
		"FROM samples WHERE op_id = ?1), 0, ?2, ?3, 0, ?4) RETURNING rep",
	[Q_LAUNCH] = "INSERT INTO launches (op_id, kernel_id, rep, pid, tid, "
		"device, stream, correlation, start_ns, end_ns, proc_id, ptrs) VALUES "
		"(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
	[Q_RANGE] = "INSERT INTO ranges (run_id, pid, tid, instance, domain, name, "
		"path, depth, start_ns, end_ns, proc_id) VALUES (?1, ?2, ?3, ?4, ?5, "
		"?6, ?7, ?8, ?9, ?10, ?11) ON CONFLICT (proc_id, instance) DO UPDATE "
		"SET end_ns = excluded.end_ns",
	[Q_SAMPLE_SUM] = "UPDATE samples SET (time_ns, span_ns, launches) = "
		"(SELECT sum(end_ns - start_ns), max(end_ns) - min(start_ns), count(*) "
		"FROM launches WHERE op_id = ?1 AND rep = ?2) "
		"WHERE op_id = ?1 AND rep = ?2",
	[Q_OP_SAMPLES] = "SELECT time_ns, span_ns, launches FROM samples "
		"WHERE op_id = ?1",
	[Q_OP_SET] = "UPDATE ops SET reps = ?2, time_ns = ?3, time_ns_min = ?4, "
		"time_ns_max = ?5, span_ns = ?6, launches = ?7 WHERE id = ?1",
	[Q_SLOT_STATS] = "SELECT count(*), min(end_ns - start_ns), "
		"max(end_ns - start_ns), (SELECT o.reps FROM ops o JOIN kernels k "
		"ON k.op_id = o.id WHERE k.id = ?1) FROM launches WHERE kernel_id = ?1",
	/* The index on (kernel_id, duration) walks the durations in order. */
	[Q_SLOT_NTH] = "SELECT end_ns - start_ns FROM launches WHERE kernel_id = ?1 "
		"ORDER BY end_ns - start_ns LIMIT 2 OFFSET ?2",
	[Q_SLOT_SET] = "UPDATE kernels SET launches = ?2, dur_ns = ?3, "
		"dur_ns_min = ?4, dur_ns_max = ?5 WHERE id = ?1",
	[Q_PROC] = "UPDATE procs SET " SET_COUNTS ", committed_at = ?8 WHERE id = ?1",
	/* A counted launch adds its values to its slot's sums (see
	 * STORE_COUNTED in profile.h); ?3 is 1 for the count's row. */
	[Q_COUNT_ADD] = "INSERT INTO counters (kernel_id, metric, value) "
		"VALUES (?1, ?2, ?3) ON CONFLICT (kernel_id, metric) "
		"DO UPDATE SET value = value + excluded.value",
	/* Each metric of a slot, per sample: the mean over its counted
	 * launches times its launches per sample. */
	[Q_COUNT_SET] = "INSERT INTO counters (kernel_id, metric, value) "
		"SELECT s.kernel_id, substr(s.metric, length('" STORE_SUM_PREFIX "') + 1), "
		"s.value / n.value * k.launches FROM counters s "
		"JOIN counters n ON n.kernel_id = s.kernel_id AND n.metric = "
		"'" STORE_N_PREFIX "' || substr(s.metric, length('" STORE_SUM_PREFIX "') + 1) "
		"JOIN kernels k ON k.id = s.kernel_id "
		"WHERE s.kernel_id = ?1 AND s.metric GLOB '" STORE_SUM_PREFIX "*' AND n.value > 0 "
		"ON CONFLICT (kernel_id, metric) DO UPDATE SET value = excluded.value",
};

struct commit {
	struct store *st;
	struct store_proc *p;
	sqlite3_stmt *q[NQ];
	/* What the batch touched: ops, kernel slots, and samples as
	 * (op, rep) pairs; each sorted and made unique before recomputing. */
	long long *ops, *slots, (*reps)[2];
	size_t nops, nslots, nreps, aops, aslots, areps;
};

static void push_id(long long **v, size_t *n, size_t *a, long long id)
{
	if (*n == *a) {
		*a = *a ? 2 * *a : 64;
		*v = xrealloc(*v, *a * sizeof **v);
	}
	(*v)[(*n)++] = id;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

static int cmp_pair(const void *a, const void *b)
{
	const long long *x = a, *y = b;

	return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

static size_t uniq(void *v, size_t n, size_t size,
		   int (*cmp)(const void *, const void *))
{
	char *b = v;
	size_t k = 0;

	if (n == 0)
		return 0;
	qsort(v, n, size, cmp);
	for (size_t i = 1; i < n; i++)
		if (cmp(b + i * size, b + k * size))
			memmove(b + ++k * size, b + i * size, size);
	return k + 1;
}

/* Step a statement expected to yield one integer row, or none. Returns 1
 * with *out set, 0 for no row, -1 on error (reported). Resets it. */
static int step_int(struct commit *c, sqlite3_stmt *s, long long *out)
{
	int rc = sqlite3_step(s);

	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(s, 0);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		store_error(c->st, "cannot store a profile in");
		sqlite3_reset(s);
		return -1;
	}
	sqlite3_reset(s);
	return rc == SQLITE_ROW;
}

static int step_write(struct commit *c, sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);

	sqlite3_reset(s);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return store_error(c->st, "cannot store a profile in");
	return 0;
}

static int op_id(struct commit *c, const char *name, long long *id)
{
	struct strmap_entry *e = strmap_put(&c->p->cache->ops, name, NULL);
	sqlite3_stmt *s;
	char now[32];
	int rc;

	if (e->v.i) {
		*id = e->v.i;
		return 0;
	}
	s = c->q[Q_OP_FIND];
	sqlite3_bind_int64(s, 1, c->p->run_id);
	sqlite3_bind_text(s, 2, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 3, c->p->variant, -1, SQLITE_TRANSIENT);
	rc = step_int(c, s, id);
	if (rc < 0)
		return -1;
	if (rc == 0) {
		s = c->q[Q_OP_ADD];
		utc_now_iso(now, sizeof now);
		sqlite3_bind_int64(s, 1, c->p->run_id);
		sqlite3_bind_text(s, 2, name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(s, 3, c->p->variant, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(s, 4, now, -1, SQLITE_TRANSIENT);
		if (step_write(c, s))
			return -1;
		*id = sqlite3_last_insert_rowid(store_db(c->st));
	}
	strmap_put(&c->p->cache->ops, name, NULL)->v.i = *id;
	return 0;
}

static void bind_config(sqlite3_stmt *s, long long op, const struct store_prof_launch *l)
{
	sqlite3_bind_int64(s, 1, op);
	sqlite3_bind_text(s, 2, l->name ? l->name : "?", -1, SQLITE_TRANSIENT);
	for (int i = 0; i < 3; i++) {
		sqlite3_bind_int64(s, 3 + i, l->grid[i]);
		sqlite3_bind_int64(s, 6 + i, l->block[i]);
	}
	sqlite3_bind_int(s, 9, l->registers);
	sqlite3_bind_int(s, 10, l->static_smem);
	sqlite3_bind_int(s, 11, l->dynamic_smem);
}

static int slot_id(struct commit *c, long long op, const struct store_prof_launch *l,
		   long long *id)
{
	char *key = xasprintf("%lld\x1f%s\x1f%u,%u,%u\x1f%u,%u,%u\x1f%d,%d,%d", op,
			      l->name ? l->name : "?", l->grid[0], l->grid[1],
			      l->grid[2], l->block[0], l->block[1], l->block[2],
			      l->registers, l->static_smem, l->dynamic_smem);
	struct strmap_entry *e = strmap_get(&c->p->cache->slots, key);
	int rc;

	if (e) {
		*id = e->v.i;
		free(key);
		return 0;
	}
	bind_config(c->q[Q_SLOT_FIND], op, l);
	rc = step_int(c, c->q[Q_SLOT_FIND], id);
	if (rc == 0) {
		bind_config(c->q[Q_SLOT_ADD], op, l);
		store_bind_text(c->q[Q_SLOT_ADD], 12, l->mangled);
		rc = step_write(c, c->q[Q_SLOT_ADD]) ? -1 : 1;
		*id = sqlite3_last_insert_rowid(store_db(c->st));
	}
	if (rc > 0)
		strmap_put(&c->p->cache->slots, key, NULL)->v.i = *id;
	free(key);
	return rc < 0 ? -1 : 0;
}

static int rep_of(struct commit *c, long long op, long long instance, long long *rep)
{
	sqlite3_stmt *s = c->q[Q_REP_FIND];
	int rc;

	sqlite3_bind_int64(s, 1, op);
	sqlite3_bind_int64(s, 3, instance);
	sqlite3_bind_int64(s, 4, c->p->id);
	rc = step_int(c, s, rep);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	s = c->q[Q_REP_ADD];
	sqlite3_bind_int64(s, 1, op);
	sqlite3_bind_int64(s, 2, c->p->pid);
	sqlite3_bind_int64(s, 3, instance);
	sqlite3_bind_int64(s, 4, c->p->id);
	rc = step_int(c, s, rep);
	return rc == 1 ? 0 : rc < 0 ? -1 : store_error(c->st, "cannot store a sample in");
}

/* A counted launch's values into its slot's sums, and one more counted. */
static int add_counts(struct commit *c, long long slot, const struct store_prof_launch *l)
{
	sqlite3_stmt *s = c->q[Q_COUNT_ADD];
	char name[256];

	for (int i = 0; i < l->ncounters; i++) {
		if (isnan(l->counters[i]))
			continue;
		snprintf(name, sizeof name, STORE_SUM_PREFIX "%s", l->counter_names[i]);
		sqlite3_bind_int64(s, 1, slot);
		sqlite3_bind_text(s, 2, name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_double(s, 3, l->counters[i]);
		if (step_write(c, s))
			return -1;
		snprintf(name, sizeof name, STORE_N_PREFIX "%s", l->counter_names[i]);
		sqlite3_bind_int64(s, 1, slot);
		sqlite3_bind_text(s, 2, name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_double(s, 3, 1);
		if (step_write(c, s))
			return -1;
	}
	sqlite3_bind_int64(s, 1, slot);
	sqlite3_bind_text(s, 2, STORE_COUNTED, -1, SQLITE_STATIC);
	sqlite3_bind_double(s, 3, 1);
	return step_write(c, s);
}

void store_ptrs_json(const uint64_t *ptrs, const uint64_t *bytes, int n, int cut,
		     char *out, size_t size)
{
	size_t len = 0;

	if (n > STORE_PROF_PTRS)
		n = STORE_PROF_PTRS;
	len += (size_t)snprintf(out, size, "[");
	for (int i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s[%llu,%llu]", i ? "," : "",
					(unsigned long long)ptrs[i],
					(unsigned long long)bytes[i]);
	if (len < size)
		snprintf(out + len, size - len, "%s]", cut ? (n ? ",null" : "null") : "");
}

static int add_launch(struct commit *c, const struct store_prof_launch *l,
		      long long *last_op, long long *last_inst, long long *last_rep)
{
	sqlite3_stmt *s = c->q[Q_LAUNCH];
	long long op, slot, rep;

	if (op_id(c, l->op, &op) || slot_id(c, op, l, &slot))
		return -1;
	/* Launches of one range instance come together: one lookup each. */
	if (op == *last_op && l->instance == *last_inst) {
		rep = *last_rep;
	} else {
		if (rep_of(c, op, l->instance, &rep))
			return -1;
		long long pair[2] = { op, rep };

		if (c->nreps == c->areps) {
			c->areps = c->areps ? 2 * c->areps : 64;
			c->reps = xrealloc(c->reps, c->areps * sizeof *c->reps);
		}
		memcpy(c->reps[c->nreps++], pair, sizeof pair);
		push_id(&c->ops, &c->nops, &c->aops, op);
		*last_op = op;
		*last_inst = l->instance;
		*last_rep = rep;
	}
	push_id(&c->slots, &c->nslots, &c->aslots, slot);
	sqlite3_bind_int64(s, 1, op);
	sqlite3_bind_int64(s, 2, slot);
	sqlite3_bind_int64(s, 3, rep);
	sqlite3_bind_int64(s, 4, c->p->pid);
	if (l->tid >= 0)
		sqlite3_bind_int64(s, 5, l->tid);
	else
		sqlite3_bind_null(s, 5);
	sqlite3_bind_int64(s, 6, l->device);
	sqlite3_bind_int64(s, 7, l->stream);
	sqlite3_bind_int64(s, 8, l->correlation);
	sqlite3_bind_int64(s, 9, l->start_ns);
	sqlite3_bind_int64(s, 10, l->end_ns);
	sqlite3_bind_int64(s, 11, c->p->id);
	if (l->nptrs >= 0) {
		char js[STORE_PROF_PTRS * 44 + 8];

		store_ptrs_json(l->ptrs, l->ptr_bytes, l->nptrs, l->ptrs_cut, js, sizeof js);
		sqlite3_bind_text(s, 12, js, -1, SQLITE_TRANSIENT);
	} else {
		sqlite3_bind_null(s, 12);
	}
	if (step_write(c, s))
		return -1;
	return l->ncounters > 0 ? add_counts(c, slot, l) : 0;
}

static int add_range(struct commit *c, const struct store_prof_range *r)
{
	sqlite3_stmt *s = c->q[Q_RANGE];

	sqlite3_bind_int64(s, 1, c->p->run_id);
	sqlite3_bind_int64(s, 2, c->p->pid);
	sqlite3_bind_int64(s, 3, r->tid);
	sqlite3_bind_int64(s, 4, r->instance);
	store_bind_text(s, 5, r->domain);
	sqlite3_bind_text(s, 6, r->name ? r->name : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 7, r->path ? r->path : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(s, 8, r->depth);
	sqlite3_bind_int64(s, 9, r->start_ns);
	if (r->end_ns > 0)
		sqlite3_bind_int64(s, 10, r->end_ns);
	else
		sqlite3_bind_null(s, 10);
	sqlite3_bind_int64(s, 11, c->p->id);
	return step_write(c, s);
}

/* An op from its samples: count, median, least and most time, median
 * span and launches. */
static int refresh_op(struct commit *c, long long op)
{
	sqlite3_stmt *s = c->q[Q_OP_SAMPLES];
	double *t = NULL, *span = NULL, *nl = NULL;
	size_t n = 0, a = 0;
	double tmin = NAN, tmax = NAN;
	int rc;

	sqlite3_bind_int64(s, 1, op);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (n == a) {
			a = a ? 2 * a : 64;
			t = xrealloc(t, a * sizeof *t);
			span = xrealloc(span, a * sizeof *span);
			nl = xrealloc(nl, a * sizeof *nl);
		}
		t[n] = sqlite3_column_double(s, 0);
		span[n] = sqlite3_column_double(s, 1);
		nl[n] = sqlite3_column_double(s, 2);
		if (n == 0 || t[n] < tmin)
			tmin = t[n];
		if (n == 0 || t[n] > tmax)
			tmax = t[n];
		n++;
	}
	sqlite3_reset(s);
	if (rc != SQLITE_DONE) {
		free(t);
		free(span);
		free(nl);
		return store_error(c->st, "cannot read samples from");
	}
	s = c->q[Q_OP_SET];
	sqlite3_bind_int64(s, 1, op);
	sqlite3_bind_int64(s, 2, (long long)n);
	store_bind_real(s, 3, median_of(t, n));
	store_bind_real(s, 4, tmin);
	store_bind_real(s, 5, tmax);
	store_bind_real(s, 6, median_of(span, n));
	sqlite3_bind_int64(s, 7, n ? llround(median_of(nl, n)) : 0);
	free(t);
	free(span);
	free(nl);
	return step_write(c, s);
}

/* A kernel slot from its launches: the median and extremes of their
 * durations, and launches per sample of its op (the mean, rounded, at
 * least 1: a kernel of every instance of its range launched once reads
 * 1). */
static int refresh_slot(struct commit *c, long long slot)
{
	sqlite3_stmt *s = c->q[Q_SLOT_STATS];
	long long n, reps, off;
	double dmin, dmax, med = NAN, v[2];
	int rc, k = 0;

	sqlite3_bind_int64(s, 1, slot);
	if (sqlite3_step(s) != SQLITE_ROW) {
		sqlite3_reset(s);
		return store_error(c->st, "cannot read launches from");
	}
	n = sqlite3_column_int64(s, 0);
	dmin = sqlite3_column_double(s, 1);
	dmax = sqlite3_column_double(s, 2);
	reps = sqlite3_column_int64(s, 3);
	sqlite3_reset(s);
	if (n == 0)
		return 0;
	off = (n - 1) / 2;
	s = c->q[Q_SLOT_NTH];
	sqlite3_bind_int64(s, 1, slot);
	sqlite3_bind_int64(s, 2, off);
	while (k < 2 && (rc = sqlite3_step(s)) == SQLITE_ROW)
		v[k++] = sqlite3_column_double(s, 0);
	sqlite3_reset(s);
	if (k == 0)
		return store_error(c->st, "cannot read launches from");
	med = n % 2 || k < 2 ? v[0] : (v[0] + v[1]) / 2;
	s = c->q[Q_SLOT_SET];
	sqlite3_bind_int64(s, 1, slot);
	sqlite3_bind_int64(s, 2, reps > 0 && n > reps ? llround((double)n / reps) : 1);
	sqlite3_bind_double(s, 3, med);
	sqlite3_bind_double(s, 4, dmin);
	sqlite3_bind_double(s, 5, dmax);
	if (step_write(c, s))
		return -1;
	/* The slot's launches per sample changed: its counters follow. */
	sqlite3_bind_int64(c->q[Q_COUNT_SET], 1, slot);
	return step_write(c, c->q[Q_COUNT_SET]);
}

int store_profile_commit(struct store *st, struct store_proc *p,
			 const struct store_prof_launch *l, size_t nl,
			 const struct store_prof_range *r, size_t nr)
{
	struct commit c = { .st = st, .p = p };
	long long last_op = 0, last_inst = 0, last_rep = 0;
	char now[32];
	int rc = -1;

	if (!p->cache)
		p->cache = xcalloc(1, sizeof *p->cache);
	if (store_begin(st))
		return -1;
	for (int i = 0; i < NQ; i++)
		if (store_prepare(st, sql[i], &c.q[i]))
			goto out;
	for (size_t i = 0; i < nl; i++)
		if (add_launch(&c, &l[i], &last_op, &last_inst, &last_rep))
			goto out;
	for (size_t i = 0; i < nr; i++)
		if (add_range(&c, &r[i]))
			goto out;
	c.nreps = uniq(c.reps, c.nreps, sizeof *c.reps, cmp_pair);
	for (size_t i = 0; i < c.nreps; i++) {
		sqlite3_bind_int64(c.q[Q_SAMPLE_SUM], 1, c.reps[i][0]);
		sqlite3_bind_int64(c.q[Q_SAMPLE_SUM], 2, c.reps[i][1]);
		if (step_write(&c, c.q[Q_SAMPLE_SUM]))
			goto out;
	}
	/* Ops before their slots: a slot's launches per sample read the
	 * op's new count of samples. */
	c.nops = uniq(c.ops, c.nops, sizeof *c.ops, cmp_ll);
	for (size_t i = 0; i < c.nops; i++)
		if (refresh_op(&c, c.ops[i]))
			goto out;
	c.nslots = uniq(c.slots, c.nslots, sizeof *c.slots, cmp_ll);
	for (size_t i = 0; i < c.nslots; i++)
		if (refresh_slot(&c, c.slots[i]))
			goto out;
	utc_now_iso(now, sizeof now);
	bind_counts(c.q[Q_PROC], p);
	sqlite3_bind_text(c.q[Q_PROC], 8, now, -1, SQLITE_TRANSIENT);
	if (step_write(&c, c.q[Q_PROC]))
		goto out;
	rc = 0;
out:
	for (int i = 0; i < NQ; i++)
		sqlite3_finalize(c.q[i]);
	free(c.ops);
	free(c.slots);
	free(c.reps);
	if (rc == 0 && store_commit(st) == 0)
		return 0;
	store_rollback(st);
	cache_clear(p);
	return -1;
}

int store_profile_refresh(struct store *st, const long long *ops, size_t n)
{
	struct commit c = { .st = st };
	static const int used[] = { Q_OP_SAMPLES, Q_OP_SET, Q_SLOT_STATS,
				    Q_SLOT_NTH, Q_SLOT_SET, Q_COUNT_SET };
	sqlite3_stmt *slots = NULL;
	int rc = -1, step;

	for (size_t i = 0; i < sizeof used / sizeof used[0]; i++)
		if (store_prepare(st, sql[used[i]], &c.q[used[i]]))
			goto out;
	if (store_prepare(st, "SELECT id FROM kernels WHERE op_id = ?1", &slots))
		goto out;
	for (size_t i = 0; i < n; i++) {
		/* The op first: its slots' launches per sample read its
		 * count of samples. */
		if (refresh_op(&c, ops[i]))
			goto out;
		sqlite3_bind_int64(slots, 1, ops[i]);
		c.nslots = 0;
		while ((step = sqlite3_step(slots)) == SQLITE_ROW)
			push_id(&c.slots, &c.nslots, &c.aslots,
				sqlite3_column_int64(slots, 0));
		if (step != SQLITE_DONE) {
			store_error(st, "cannot read kernels from");
			goto out;
		}
		sqlite3_reset(slots);
		for (size_t k = 0; k < c.nslots; k++)
			if (refresh_slot(&c, c.slots[k]))
				goto out;
	}
	rc = 0;
out:
	sqlite3_finalize(slots);
	for (int i = 0; i < NQ; i++)
		sqlite3_finalize(c.q[i]);
	free(c.slots);
	return rc;
}
