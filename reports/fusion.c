/* fusion.c - reads fused-versus-other pairs of a run from v_fusion, the
 * one home of the pairing rule and its ratios. */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "error.h"
#include "fusion.h"
#include "roofline.h"
#include "rows.h"
#include "store.h"
#include "util.h"
#include "views.h"

#define T(f) { #f, COL_TEXT, offsetof(struct fu_pair, f) }
#define R(f) { #f, COL_REAL, offsetof(struct fu_pair, f) }
#define I(f) { #f, COL_INT, offsetof(struct fu_pair, f) }
static const struct col pair_cols[] = {
	T(workload), T(dtype), T(shape), I(fused_op_id), T(fused_variant),
	I(base_op_id), T(base_variant), T(base_role),
	R(fused_time_ns), R(base_time_ns), R(speedup),
	R(fused_dram_bytes), R(base_dram_bytes), R(dram_ratio),
	R(fused_launches), R(base_launches), R(launch_ratio),
	R(fused_model_bytes), R(base_model_bytes), R(predicted_speedup), R(kernel_ceiling),
	R(fused_roof_pct), R(base_roof_pct), R(fused_eff_bw_pct), R(base_eff_bw_pct),
	I(best_unfused), R(fusion_removed_bytes), R(fusion_removed_launches),
	R(fusion_bound_ns), R(fusion_bound_pct),
	R(shared_kernels), R(shared_delta_ns), R(own_ratio),
	{ "fusion_note", COL_TEXT_NULL, offsetof(struct fu_pair, fusion_note) },
};
#undef T
#undef R
#undef I

/* The pairs of run_id from `from` (a relation with v_fusion's columns). */
static int load_pairs(struct store *st, long long run_id, const char *const *workloads,
		      const char *from, struct fu_pairs *out)
{
	struct strbuf sql = STRBUF_INIT;
	sqlite3_stmt *s = NULL;
	size_t alloc = 0;
	int rc;

	memset(out, 0, sizeof *out);
	strbuf_addstr(&sql, "SELECT ");
	cols_select(&sql, pair_cols, ARRAY_SIZE(pair_cols));
	strbuf_addf(&sql, " FROM %s WHERE run_id = ?1"
		    " ORDER BY workload, fused_op_id, base_op_id", from);
	rc = sqlite3_prepare_v2(store_db(st), strbuf_str(&sql), -1, &s, NULL);
	strbuf_release(&sql);
	if (rc != SQLITE_OK)
		return store_error(st, "cannot read v_fusion from");
	sqlite3_bind_int64(s, 1, run_id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const unsigned char *w = sqlite3_column_text(s, 0);
		struct fu_pair *p;

		if (!rows_wanted(w ? (const char *)w : "", workloads))
			continue;
		if (out->n == alloc) {
			alloc = alloc ? 2 * alloc : 64;
			out->v = xrealloc(out->v, alloc * sizeof *out->v);
		}
		p = &out->v[out->n++];
		cols_read(s, 0, pair_cols, ARRAY_SIZE(pair_cols), p);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		fusion_release(out);
		return store_error(st, "cannot read v_fusion from");
	}
	return 0;
}

int fusion_load(struct store *st, long long run_id, const char *const *workloads,
		struct fu_pairs *out)
{
	return load_pairs(st, run_id, workloads, "v_fusion", out);
}

int fusion_load_run(struct store *st, long long run_id, const char *const *workloads,
		    struct fu_pairs *out)
{
	if (!rf_run_table_holds(st, run_id))
		return fusion_load(st, run_id, workloads, out);
	return load_pairs(st, run_id, workloads,
			  "(" FP_FUSION_SQL(RF_RUN_TABLE) ")", out);
}

void fusion_release(struct fu_pairs *p)
{
	for (size_t i = 0; i < p->n; i++)
		cols_free(pair_cols, ARRAY_SIZE(pair_cols), &p->v[i]);
	free(p->v);
	memset(p, 0, sizeof *p);
}

/* SQLite's max(x, 0.0): NaN (NULL) stays unknown. */
static double fmax0(double x)
{
	return isnan(x) ? x : x > 0 ? x : 0;
}

void fusion_compute(const struct rf_op *f, const struct rf_op *b, struct fu_pair *p)
{
	p->fused_time_ns = f->time_ns;
	p->base_time_ns = b->time_ns;
	p->speedup = rf_div(b->time_ns, f->time_ns);
	p->fused_dram_bytes = f->dram_bytes;
	p->base_dram_bytes = b->dram_bytes;
	p->dram_ratio = rf_div(b->dram_bytes, f->dram_bytes);
	p->fused_launches = f->launches;
	p->base_launches = b->launches;
	p->launch_ratio = rf_div(b->launches, f->launches);
	p->fused_model_bytes = f->model_variant_bytes;
	p->base_model_bytes = b->model_variant_bytes;
	p->predicted_speedup = rf_div(b->model_variant_bytes, f->model_variant_bytes);
	p->kernel_ceiling = rf_div(b->time_ns, b->longest_kernel_ns);
	p->fused_roof_pct = f->roof_pct;
	p->base_roof_pct = b->roof_pct;
	p->fused_eff_bw_pct = f->eff_bw_pct;
	p->base_eff_bw_pct = b->eff_bw_pct;
	p->fusion_removed_bytes = p->fusion_removed_launches = NAN;
	p->fusion_bound_ns = p->fusion_bound_pct = NAN;
	if (strcmp(b->role, "unfused") == 0) {
		p->fusion_removed_bytes = fmax0(b->model_variant_bytes - f->model_variant_bytes);
		p->fusion_removed_launches = fmax0(b->launches - 1);
		p->fusion_bound_ns = 1e9 * p->fusion_removed_bytes / b->dram_bw +
				     p->fusion_removed_launches * FP_FUSION_LAUNCH_NS;
		p->fusion_bound_pct = 100.0 * p->fusion_bound_ns / b->time_ns;
	}
	p->shared_kernels = 0;
	p->shared_delta_ns = p->own_ratio = NAN;
}

void fusion_shared(struct fu_pair *p, const struct fu_kernel *fk, size_t nf,
		   const struct fu_kernel *bk, size_t nb)
{
	double tf = 0, tb = 0, n = 0;

	for (size_t i = 0; i < nf; i++)
		for (size_t j = 0; j < nb; j++)
			if (strcmp(fk[i].name, bk[j].name) == 0) {
				tf += fk[i].ns;
				tb += bk[j].ns;
				n++;
			}
	p->shared_kernels = n;
	p->shared_delta_ns = n ? tf - tb : NAN;
	p->own_ratio = n && p->fused_time_ns - tf > 0 && p->base_time_ns - tb > 0
		       ? (p->fused_time_ns - tf) / (p->base_time_ns - tb) : NAN;
}

char *fusion_note(const struct fu_pair *p, int best)
{
	const double bound = p->fusion_bound_ns, base = p->base_time_ns;
	const double pct = 100.0 * bound / base, launches = p->fusion_removed_launches;
	struct strbuf sb = STRBUF_INIT;
	char *note;

	if (!best || !(p->fused_time_ns > base))
		return NULL;
	if (isnan(bound) || !(base > 0))
		strbuf_addf(&sb, "fused kernel %.2fx unfused; no byte model or DRAM roof "
			    "to bound what fusion could save", p->fused_time_ns / base);
	else if (pct < FP_FUSION_NOISE_PCT)
		strbuf_addf(&sb, "fusion cannot pay here: it removes at most %.1f MB and "
			    "%g launch%s (%.1f µs, %.1f %% of %.0f µs)",
			    p->fusion_removed_bytes / 1e6, launches,
			    launches == 1 ? "" : "es", bound / 1e3, pct, base / 1e3);
	else
		strbuf_addf(&sb, "fused kernel %.2fx unfused where fusion could save up "
			    "to %.1f %%: a missing kernel", p->fused_time_ns / base, pct);
	if (p->shared_delta_ns > 0 && !isnan(p->own_ratio))
		strbuf_addf(&sb, "; the %.0f kernel%s both ops run took %.1f µs longer in "
			    "the fused op (the same kernels: clocks, caches), the rest "
			    "%.2fx unfused", p->shared_kernels,
			    p->shared_kernels == 1 ? "" : "s", p->shared_delta_ns / 1e3,
			    p->own_ratio);
	note = xstrdup(strbuf_str(&sb));
	strbuf_release(&sb);
	return note;
}
