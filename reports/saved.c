/* saved.c - reads a run's save-versus-recompute rows (v_save_recompute's
 * SQL, FP_SAVED_SQL, the one home of the pairing and its trade-off). */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "roofline.h"
#include "rows.h"
#include "saved.h"
#include "store.h"
#include "util.h"
#include "views.h"

#define T(f) { #f, COL_TEXT, offsetof(struct sr_row, f) }
#define R(f) { #f, COL_REAL, offsetof(struct sr_row, f) }
#define I(f) { #f, COL_INT, offsetof(struct sr_row, f) }
static const struct col row_cols[] = {
	T(workload), T(backward), I(fwd_op_id), I(bwd_op_id), T(variant), T(role),
	T(dtype), T(shape), R(saved_bytes), R(fwd_time_ns), R(bwd_time_ns),
	R(total_time_ns), R(fwd_dram_bytes), R(bwd_dram_bytes),
	R(total_dram_bytes), T(dram_basis), T(saves_most), R(bytes_saved),
	T(fastest), R(time_paid_ns), R(time_ratio),
};
#undef T
#undef R
#undef I

int saved_load_run(struct store *st, long long run_id, const char *const *workloads,
		   struct sr_rows *out)
{
	struct strbuf sql = STRBUF_INIT;
	sqlite3_stmt *s = NULL;
	size_t alloc = 0;
	int rc;

	memset(out, 0, sizeof *out);
	strbuf_addstr(&sql, "SELECT ");
	cols_select(&sql, row_cols, ARRAY_SIZE(row_cols));
	strbuf_addf(&sql, " FROM %s WHERE run_id = ?1 ORDER BY workload, fwd_op_id",
		    rf_run_table_holds(st, run_id) ? "(" FP_SAVED_SQL(RF_RUN_TABLE) ")"
						   : "v_save_recompute");
	rc = sqlite3_prepare_v2(store_db(st), strbuf_str(&sql), -1, &s, NULL);
	strbuf_release(&sql);
	if (rc != SQLITE_OK)
		return store_error(st, "cannot read v_save_recompute from");
	sqlite3_bind_int64(s, 1, run_id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const unsigned char *f = sqlite3_column_text(s, 0);
		const unsigned char *b = sqlite3_column_text(s, 1);

		if (!rows_wanted(f ? (const char *)f : "", workloads) &&
		    !rows_wanted(b ? (const char *)b : "", workloads))
			continue;
		if (out->n == alloc) {
			alloc = alloc ? 2 * alloc : 16;
			out->v = xrealloc(out->v, alloc * sizeof *out->v);
		}
		cols_read(s, 0, row_cols, ARRAY_SIZE(row_cols), &out->v[out->n++]);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		saved_release(out);
		return store_error(st, "cannot read v_save_recompute from");
	}
	return 0;
}

void saved_release(struct sr_rows *r)
{
	for (size_t i = 0; i < r->n; i++)
		cols_free(row_cols, ARRAY_SIZE(row_cols), &r->v[i]);
	free(r->v);
	memset(r, 0, sizeof *r);
}
