/* ranks.c - reads a profiled run's stragglers from v_rank_spread (the one
 * home of the per-rank medians and their spread). */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "ranks.h"
#include "rows.h"
#include "store.h"
#include "util.h"

#define T(f) { #f, COL_TEXT, offsetof(struct rk_row, f) }
#define R(f) { #f, COL_REAL, offsetof(struct rk_row, f) }
#define I(f) { #f, COL_INT, offsetof(struct rk_row, f) }
static const struct col row_cols[] = {
	T(workload), I(op_id), I(ranks), I(samples), R(time_ns_min),
	R(time_ns_median), R(time_ns_max), R(spread), I(slowest_rank),
	T(slowest_host), I(fastest_rank),
};
#undef T
#undef R
#undef I

int ranks_load_run(struct store *st, long long run_id, const char *const *workloads,
		   struct rk_rows *out)
{
	struct strbuf sql = STRBUF_INIT;
	sqlite3_stmt *s = NULL;
	size_t alloc = 0;
	int rc;

	memset(out, 0, sizeof *out);
	if (sqlite3_prepare_v2(store_db(st), "SELECT count(DISTINCT rank) FROM procs "
			       "WHERE run_id = ?1", -1, &s, NULL) != SQLITE_OK)
		return store_error(st, "cannot read procs from");
	sqlite3_bind_int64(s, 1, run_id);
	if (sqlite3_step(s) == SQLITE_ROW)
		out->nranks = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	if (out->nranks < 2)
		return 0;
	strbuf_addstr(&sql, "SELECT ");
	cols_select(&sql, row_cols, ARRAY_SIZE(row_cols));
	strbuf_addstr(&sql, " FROM v_rank_spread WHERE run_id = ?1 AND ranks >= 2 "
		      "ORDER BY spread DESC, workload");
	rc = sqlite3_prepare_v2(store_db(st), strbuf_str(&sql), -1, &s, NULL);
	strbuf_release(&sql);
	if (rc != SQLITE_OK)
		return store_error(st, "cannot read v_rank_spread from");
	sqlite3_bind_int64(s, 1, run_id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const unsigned char *w = sqlite3_column_text(s, 0);

		if (!rows_wanted(w ? (const char *)w : "", workloads))
			continue;
		if (out->n == alloc) {
			alloc = alloc ? 2 * alloc : 16;
			out->v = xrealloc(out->v, alloc * sizeof *out->v);
		}
		cols_read(s, 0, row_cols, ARRAY_SIZE(row_cols), &out->v[out->n++]);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		ranks_release(out);
		return store_error(st, "cannot read v_rank_spread from");
	}
	return 0;
}

void ranks_release(struct rk_rows *r)
{
	for (size_t i = 0; i < r->n; i++)
		cols_free(row_cols, ARRAY_SIZE(row_cols), &r->v[i]);
	free(r->v);
	memset(r, 0, sizeof *r);
}
