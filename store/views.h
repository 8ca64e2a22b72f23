/* views.h - the public SQL views: the stable query surface of a database. */
#ifndef FP_VIEWS_H
#define FP_VIEWS_H

struct view_def {
	const char *name;  /* "v_ops" */
	const char *sql;   /* the SELECT after "CREATE VIEW name AS" */
	const char *doc;   /* one line for the README and `fuseprof query --list` */
};

/* Every view, in creation order (a view may use the ones before it);
 * terminated by name == NULL. */
extern const struct view_def fp_views[];

/* v_runs as fuseprof's readers see it: the same columns, the status through
 * fp_run_status(), a function each fuseprof connection defines (a run
 * whose process is gone reads 'killed'). A TEMP view of readers only: the
 * stored v_runs must work in any SQLite client, which lacks the function. */
extern const char fp_v_runs_live_sql[];

/* The columns of v_roofline that v_fusion reads. */
#define FP_FUSION_INPUT \
	"run_id, op_id, workload, variant, role, dtype, shape," \
	"  status, time_ns, dram_bytes, launches, model_variant_bytes, roof_pct," \
	"  eff_bw_pct, longest_kernel_ns"

/* v_fusion's SELECT over src, any relation with the FP_FUSION_INPUT columns
 * of v_roofline: the view is FP_FUSION_SQL("v_roofline"); `fuseprof report`
 * points it at the run's rows of v_roofline, read once, so the pairing rule
 * and its ratios have this one definition. src is named once, so SQLite
 * (3.35+) reads it once for both sides of the pair. */
#define FP_FUSION_SQL(src) \
	"WITH r AS (SELECT " FP_FUSION_INPUT " FROM " src ")" \
	" SELECT f.run_id, f.workload, f.dtype, f.shape," \
	" f.op_id AS fused_op_id, f.variant AS fused_variant," \
	" b.op_id AS base_op_id, b.variant AS base_variant, b.role AS base_role," \
	" f.time_ns AS fused_time_ns, b.time_ns AS base_time_ns," \
	" b.time_ns / f.time_ns AS speedup," \
	" f.dram_bytes AS fused_dram_bytes, b.dram_bytes AS base_dram_bytes," \
	" b.dram_bytes / f.dram_bytes AS dram_ratio," \
	" f.launches AS fused_launches, b.launches AS base_launches," \
	" CAST(b.launches AS REAL) / f.launches AS launch_ratio," \
	" f.model_variant_bytes AS fused_model_bytes," \
	" b.model_variant_bytes AS base_model_bytes," \
	" b.model_variant_bytes / f.model_variant_bytes AS predicted_speedup," \
	" b.time_ns / b.longest_kernel_ns AS kernel_ceiling," \
	" f.roof_pct AS fused_roof_pct, b.roof_pct AS base_roof_pct," \
	" f.eff_bw_pct AS fused_eff_bw_pct, b.eff_bw_pct AS base_eff_bw_pct" \
	" FROM r f JOIN r b ON b.run_id = f.run_id" \
	"  AND b.workload = f.workload AND b.dtype = f.dtype AND b.shape = f.shape" \
	"  AND b.op_id != f.op_id" \
	" WHERE f.role = 'fused' AND f.status = 'ok' AND b.status = 'ok'"

/* A short hash of all view definitions; stored in meta('views') so a
 * database whose views are stale is brought up to date on open. */
const char *views_signature(void);

#endif
