/* opps.c - reads a profiled run's fusion candidates from
 * v_fusion_candidates, the one home of the rules, into the report's
 * tables; says in one line why a run has none to compute. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "error.h"
#include "opps.h"
#include "store.h"
#include "util.h"

const char opps_text[] =
	"Chains of consecutive memory-bound kernels on one stream inside one "
	"range instance (cross-range: across instances, holding the chains it "
	"joins), each consumer reading at least half of what its producer "
	"wrote (or launched like it: link 'shape'), cut at GEMMs, "
	"compute-bound kernels, kernels without counters, the last pass of a "
	"grid-wide reduction, stream gaps over 50 us (host syncs, copies) and, "
	"where both kernels' pointer arguments were read whole (counted runs), "
	"a consumer holding no pointer into an allocation its producer "
	"holds one into (no data flow). "
	"Fused bytes: every intermediate (what a producer wrote and its "
	"consumer read) gone, unless only a reduction reads it (then written "
	"once), and a reduced input (statistics, partials) or an input the "
	"kernel's pointer arguments show its producer read too (counted "
	"runs) read once; predicted "
	"time: those bytes at the DRAM roof of their read/write mix, and at "
	"the chain's own bandwidth (its kernels', weighted by their bytes, at "
	"most the roof: less optimistic); gain: measured "
	"(the sum of its kernels' medians) minus predicted, per instance, "
	"then over all instances (total), which ranks them. Small "
	"intermediates that stayed in L2 escape the byte accounting, and a "
	"consumer reading a second tensor of its producer's size links by "
	"size alone: check the kernels before fusing. Epilogue and prologue "
	"rows are GEMMs beside an elementwise kernel: not predicted, not "
	"ranked.";

/* One integer of a query with ?1 = run_id; -1 after an error. */
static long long query_int(struct store *st, const char *sql, long long run_id)
{
	sqlite3_stmt *s = NULL;
	long long v = -1;

	if (sqlite3_prepare_v2(store_db(st), sql, -1, &s, NULL) != SQLITE_OK) {
		store_error(st, "cannot read fusion candidates from");
		return -1;
	}
	sqlite3_bind_int64(s, 1, run_id);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	else
		store_error(st, "cannot read fusion candidates from");
	sqlite3_finalize(s);
	return v;
}

int opps_notice(struct store *st, long long run_id, char **notice)
{
	long long profiled, counted, ceilings;

	*notice = NULL;
	profiled = query_int(st, "SELECT count(*) FROM runs WHERE id = ?1 AND "
			     "kind = 'profile'", run_id);
	if (profiled < 0)
		return -1;
	if (!profiled) {
		*notice = xasprintf("run %lld is not a profiled run: fusion "
				    "opportunities are found in runs of 'fuseprof "
				    "profile' (a suite run's fused variants are in "
				    "'fuseprof query fusion-gains')", run_id);
		return 1;
	}
	counted = query_int(st, "SELECT EXISTS (SELECT 1 FROM counters c JOIN "
			    "kernels k ON k.id = c.kernel_id JOIN ops o ON o.id = "
			    "k.op_id WHERE o.run_id = ?1 AND c.metric = "
			    "'dram__bytes_read.sum')", run_id);
	if (counted < 0)
		return -1;
	if (!counted) {
		*notice = xasprintf("run %lld has no counters: fusion opportunities "
				    "need each kernel's DRAM bytes and FLOPs (profile "
				    "with --metrics roofline)", run_id);
		return 0;
	}
	ceilings = query_int(st, "SELECT count(DISTINCT name) FROM v_ceilings "
			     "WHERE run_id = ?1 AND name IN ('dram_bw', 'fp32_fma')",
			     run_id);
	if (ceilings < 0)
		return -1;
	if (ceilings < 2)
		*notice = xasprintf("run %lld has no DRAM bandwidth or FP32 peak "
				    "ceiling for its GPU: no kernel can be judged "
				    "memory-bound or its fused time predicted (run "
				    "'fuseprof ceilings' on that machine with this "
				    "database)", run_id);
	return 0;
}

/* Add the value of column i of s to t, as the view gave it. */
static void add_cell(struct table *t, sqlite3_stmt *s, int i)
{
	switch (sqlite3_column_type(s, i)) {
	case SQLITE_NULL:
		table_add_null(t);
		break;
	case SQLITE_INTEGER:
		table_add_int(t, sqlite3_column_int64(s, i));
		break;
	case SQLITE_FLOAT:
		table_add_double(t, sqlite3_column_double(s, i), 10);
		break;
	default:
		table_add_text(t, (const char *)sqlite3_column_text(s, i));
	}
}

/* The view's columns the display table reads, by name. */
enum {
	C_RANK, C_KIND, C_PATH, C_LAST, C_KERNELS, C_N, C_INST, C_TIME, C_DRAM,
	C_FUSED, C_PRED, C_PRED_ACH, C_GAIN, C_TOTAL, C_RANGE_FRAC,
	C_PROGRAM_FRAC, C_PROGRAM, C_SAVED, C_LINK, C_BEFORE, C_AFTER, NCOLS
};
static const char *const col_names[NCOLS] = {
	"rank", "kind", "range_path", "last_range_path", "kernels", "nkernels",
	"instances", "time_ns", "dram_bytes", "fused_bytes", "predicted_ns",
	"predicted_achieved_ns", "gain_ns", "total_gain_ns", "range_gain_frac",
	"program_gain_frac", "program_time_ns", "launches_saved",
	"link_evidence", "ends_before", "ends_after",
};

static double num(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL ? NAN : sqlite3_column_double(s, i);
}

static void add_display(struct table *t, sqlite3_stmt *s, const int *c)
{
	const char *last = (const char *)sqlite3_column_text(s, c[C_LAST]);
	const char *before = (const char *)sqlite3_column_text(s, c[C_BEFORE]);
	const char *after = (const char *)sqlite3_column_text(s, c[C_AFTER]);
	char *range, *ends = NULL;

	add_cell(t, s, c[C_RANK]);
	add_cell(t, s, c[C_KIND]);
	range = xasprintf("%s%s%s", sqlite3_column_text(s, c[C_PATH]),
			  last ? " -> " : "", last ? last : "");
	table_add_text(t, range);
	free(range);
	add_cell(t, s, c[C_KERNELS]);
	add_cell(t, s, c[C_INST]);
	table_add_double(t, num(s, c[C_TIME]) / 1e3, 4);
	table_add_double(t, num(s, c[C_DRAM]) / 1e6, 4);
	table_add_double(t, num(s, c[C_FUSED]) / 1e6, 4);
	table_add_double(t, num(s, c[C_PRED]) / 1e3, 4);
	table_add_double(t, num(s, c[C_PRED_ACH]) / 1e3, 4);
	table_add_double(t, num(s, c[C_GAIN]) / 1e3, 4);
	table_add_double(t, num(s, c[C_TOTAL]) / 1e3, 4);
	table_add_double(t, 100 * num(s, c[C_RANGE_FRAC]), 3);
	table_add_double(t, 100 * num(s, c[C_PROGRAM_FRAC]), 3);
	add_cell(t, s, c[C_SAVED]);
	add_cell(t, s, c[C_LINK]);
	if (before || after)
		ends = xasprintf("%s / %s", before ? before : "", after ? after : "");
	table_add_text(t, ends);
	free(ends);
}

int opps_load(struct store *st, long long run_id, struct opps *o)
{
	static const char *const disp[] = {
		"rank", "kind", "range", "kernels", "instances", "µs", "DRAM MB",
		"fused MB", "predicted µs", "at own bw µs", "gain µs",
		"total gain µs", "% of range", "% of program", "launches saved",
		"link", "ends (before / after)",
	};
	sqlite3_stmt *s = NULL;
	const char **hdr = NULL;
	int c[NCOLS], ncols, rc;

	memset(o, 0, sizeof *o);
	o->program_ns = NAN;
	if (opps_notice(st, run_id, &o->notice) < 0)
		return -1;
	if (o->notice)
		return 0;
	if (sqlite3_prepare_v2(store_db(st), "SELECT * FROM v_fusion_candidates "
			       "WHERE run_id = ?1 ORDER BY rank IS NULL, rank, kind, "
			       "time_ns DESC", -1, &s, NULL) != SQLITE_OK)
		return store_error(st, "cannot read v_fusion_candidates from");
	sqlite3_bind_int64(s, 1, run_id);
	ncols = sqlite3_column_count(s);
	hdr = xcalloc((size_t)ncols, sizeof *hdr);
	for (int k = 0; k < NCOLS; k++)
		c[k] = -1;
	for (int i = 0; i < ncols; i++) {
		hdr[i] = sqlite3_column_name(s, i);
		for (int k = 0; k < NCOLS; k++)
			if (!strcmp(hdr[i], col_names[k]))
				c[k] = i;
	}
	for (int k = 0; k < NCOLS; k++)
		if (c[k] < 0) {
			free(hdr);
			sqlite3_finalize(s);
			return error("v_fusion_candidates in '%s' has no column %s: "
				     "a database from another fuseprof (any command "
				     "that writes it brings its views up to date)",
				     store_path(st), col_names[k]);
		}
	table_init(&o->full, ncols, hdr);
	table_init(&o->disp, (int)ARRAY_SIZE(disp), disp);
	free(hdr);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int ranked = sqlite3_column_type(s, c[C_RANK]) != SQLITE_NULL;
		const char *kind = (const char *)sqlite3_column_text(s, c[C_KIND]);

		for (int i = 0; i < ncols; i++)
			add_cell(&o->full, s, i);
		if (ranked ? o->nranked < OPPS_SHOWN : o->nedges < OPPS_SHOWN_EDGES)
			add_display(&o->disp, s, c);
		if (ranked)
			o->nranked++;
		else
			o->nedges++;
		/* A chain predicted slower fused adds nothing. */
		if (ranked && kind && !strcmp(kind, "chain") && num(s, c[C_TOTAL]) > 0)
			o->total_gain_ns += num(s, c[C_TOTAL]);
		if (isfinite(num(s, c[C_PROGRAM])))
			o->program_ns = num(s, c[C_PROGRAM]);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		opps_release(o);
		return store_error(st, "cannot read v_fusion_candidates from");
	}
	return 0;
}

void opps_release(struct opps *o)
{
	free(o->notice);
	table_release(&o->full);
	table_release(&o->disp);
	memset(o, 0, sizeof *o);
}
