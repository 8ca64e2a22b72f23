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

/* The metric under which the collector stores, per kernel, the DRAM bytes
 * written back from L2 for the dirty lines the kernel (or, when L2 is
 * flushed per op, the op: stored with its last kernel) left behind: the
 * DRAM writes of an L2 flush right after it. Counters see those bytes
 * only after the kernel ended, so dram__bytes_write.sum misses them (as
 * Nsight Compute does). The views keep the raw counters as they came and
 * show this as dram_writeback_bytes; dram_bytes adds it (0 when absent:
 * databases from before it was collected). */
#define FP_METRIC_DRAM_WRITEBACK "fuseprof.dram_writeback_bytes"

/* ---- the DRAM roof of an op's read/write mix -----------------------------
 * DRAM reaches a different bandwidth for each mix of reads and writes
 * (turning the bus around costs time), so one copy ceiling is no roof for a
 * reduction (all reads) or an initialisation (all writes). The ceilings
 * are measured at four mixes, by write fraction f = bytes written / bytes:
 *
 *   dram_read_bw   f = 0     read-only
 *   dram_add_bw    f = 1/3   c = a + b: two reads to a write (STREAM's Add)
 *   dram_bw        f = 1/2   copy
 *   dram_write_bw  f = 1     write-only
 *
 * The roof of a mix f is the bandwidth interpolated linearly in f between
 * the two mixes around it (f in [0, 1/3): read and add; [1/3, 1/2): add
 * and copy; [1/2, 1]: copy and write), at t = (f - f_lo) / (f_hi - f_lo).
 *
 * An op of one kernel slot takes the roof of its own f = (dram_write_bytes
 * + dram_writeback_bytes) / dram_bytes. An op of several kernels runs
 * them one after the other, each at the roof of its own mix, so the least
 * time its DRAM bytes can take is the sum over its kernels k of
 * bytes_k / bw(f_k) (v_ops.dram_roof_ns; f_k from the kernel's counters,
 * summed over its launches; the op's write-back counts with the kernel it
 * is stored with), and its roof is dram_bytes / that time. The mix of the
 * whole op is the wrong rule there: a softmax of two reductions (read-only)
 * and two elementwise passes (copies) has f = 1/3 overall, but no kernel
 * of it runs at the add's bandwidth.
 *
 * Where a mix is unknown (no counters, no DRAM bytes, a kernel of several
 * without DRAM counters) or a ceiling a kernel needs is missing (a database
 * measured before the mixes were), the roof is dram_bw, the copy, as
 * before. Provenance: measured when every ceiling used is, else
 * theoretical. dram_bw_basis says which: for one kernel 'add..copy 0.62'
 * (0.62 of the way from add to copy); for several 'kernels (4): read,
 * copy' (the number of kernel slots, then the mixes of those that moved
 * DRAM bytes, each named by the nearest of read, add, copy and write, each
 * once, in that order); else 'copy (mix unknown)' or 'copy (no ceiling for
 * this mix)'; NULL when there is no DRAM roof at all.
 *
 * FP_DRAM_SEGMENTS(X, f) calls X(condition, lo, hi, t) for each segment,
 * the conditions in order, for the SQL expression f (unknown when NULL,
 * and then no condition holds). FP_DRAM_BW_SQL reads dram_write_frac,
 * nkernels, dram_roof_ns, dram_roof_provenance, dram_mixes and the
 * ceilings' value and provenance (read_bw, read_prov, add_*, copy_*,
 * write_*) and gives dram_bw, dram_bw_provenance and dram_bw_basis. It is
 * one CASE a column, the segment picked first: SQLite flattens the view's
 * levels, so a column of a lower level is evaluated again wherever it is
 * named, and v_roofline names dram_bw six times. reports/roofline.c,
 * rf_dram_bw and rf_op_dram_bw, is the reference. */
#define FP_DRAM_SEGMENTS(X, f) \
	X("(" f ") < 1.0/3", "read", "add", "(" f ") / (1.0/3)") \
	X("(" f ") < 0.5", "add", "copy", "((" f ") - 1.0/3) / (0.5 - 1.0/3)") \
	X("(" f ") >= 0.5", "copy", "write", "((" f ") - 0.5) / 0.5")
/* An end missing makes the arithmetic NULL: the copy then. */
#define FP_DRAM_BW_WHEN(cond, lo, hi, t) \
	" WHEN " cond " THEN " lo "_bw + " t " * (" hi "_bw - " lo "_bw)"
#define FP_DRAM_PROV_WHEN(cond, lo, hi, t) \
	" WHEN " cond " THEN CASE WHEN " lo "_bw IS NULL OR " hi "_bw IS NULL" \
	" THEN copy_prov WHEN " lo "_prov = 'measured' AND " hi "_prov = 'measured'" \
	" THEN 'measured' ELSE 'theoretical' END"
#define FP_DRAM_BASIS_WHEN(cond, lo, hi, t) \
	" WHEN " cond " THEN CASE WHEN " lo "_bw IS NOT NULL AND " hi "_bw IS NOT NULL" \
	" THEN printf('" lo ".." hi " %.2f', " t ")" \
	" WHEN copy_bw IS NOT NULL THEN 'copy (no ceiling for this mix)' END"
/* Several kernels: their least time when it is known and not 0 (an op of
 * no DRAM bytes has no mix), else the copy. */
#define FP_DRAM_MULTI "nkernels > 1 THEN CASE WHEN dram_roof_ns > 0"
#define FP_DRAM_BW_SQL \
	"CASE WHEN " FP_DRAM_MULTI " THEN 1e9 * dram_bytes / dram_roof_ns" \
	"  ELSE copy_bw END" \
	" ELSE coalesce(CASE" FP_DRAM_SEGMENTS(FP_DRAM_BW_WHEN, "dram_write_frac") \
	"  END, copy_bw) END AS dram_bw," \
	" CASE WHEN " FP_DRAM_MULTI " THEN dram_roof_provenance ELSE copy_prov END" \
	" ELSE CASE" FP_DRAM_SEGMENTS(FP_DRAM_PROV_WHEN, "dram_write_frac") \
	"  ELSE copy_prov END END AS dram_bw_provenance," \
	" CASE WHEN " FP_DRAM_MULTI \
	"  THEN printf('kernels (%d): %s', nkernels, dram_mixes)" \
	"  WHEN copy_bw IS NULL THEN NULL" \
	"  WHEN dram_mixes IS NULL OR dram_write_frac IS NULL THEN 'copy (mix unknown)'" \
	"  ELSE 'copy (no ceiling for this mix)' END" \
	" ELSE CASE" FP_DRAM_SEGMENTS(FP_DRAM_BASIS_WHEN, "dram_write_frac") \
	"  WHEN copy_bw IS NOT NULL THEN 'copy (mix unknown)' END END AS dram_bw_basis"

/* The columns of v_roofline that v_fusion reads. */
#define FP_FUSION_INPUT \
	"run_id, op_id, device_id, workload, variant, role, dtype, shape," \
	"  status, time_ns, dram_bytes, launches, model_variant_bytes, roof_pct," \
	"  eff_bw_pct, longest_kernel_ns, dram_bw"

/* ---- fusion cannot pay here --------------------------------------------
 * A fused variant slower than its best unfused twin (the unfused variant
 * of least time at its workload, dtype and shape in the run) is either a
 * missing kernel or a case where fusion has nothing to win. What fusion can
 * win at most is the bytes it removes (the unfused variant's model
 * variant_bytes minus the fused one's, at least 0: the intermediates
 * neither of them avoids, such as a GEMM's re-reads of its tiles, are no
 * gain of fusion) at the unfused op's DRAM roof (v_roofline.dram_bw: the
 * run's measured ceiling at its read/write mix, the copy's without
 * counters), plus FP_FUSION_LAUNCH_NS for each launch of the unfused op but
 * one: the launches a single fused kernel would save, not those this fused
 * variant saves (one that takes two launches, a pass and a GEMM, is not
 * excused by its second: a one-launch kernel may be what is missing).
 * time_ns sums kernel time and counts no launch gap, so a launch saves
 * only a kernel's ramp and tail there: 2 µs is generous on purpose, so
 * that the rule blames a kernel before it excuses one. That bound, as a
 * percentage of the unfused time (fusion_bound_pct), decides:
 *   under FP_FUSION_NOISE_PCT (5 %, the run-to-run spread a fused ÷
 *   unfused ratio is not read past): "fusion cannot pay here: it removes
 *   at most 12.6 MB and 1 launch (5.9 µs, 1.8 % of 330 µs)": the GEMM
 *   (or whatever else the op does) dominates, and no fused kernel can
 *   change that;
 *   else: "fused kernel 1.18x unfused where fusion could save up to 9.0 %:
 *   a missing kernel";
 *   with no byte model or no DRAM roof, the note says the bound is
 *   unknown.
 * Where both ops run kernels of the same name (shared_kernels: the
 * LayerNorm+Linear backward's cuBLASLt GEMMs run in both variants) and
 * those took longer in the fused op (shared_delta_ns > 0: their
 * duration times launches, summed, fused minus base), the note goes on
 * "; the 2 kernels both ops run took 91.2 µs longer in the fused op (the
 * same kernels: clocks, caches), the rest 0.93x unfused", own_ratio being
 * the rest of the fused op's time over the rest of the base's (given
 * where both rests are positive): at the power limit the same GEMM runs
 * slower beside less memory-bound work, which is not fusion's doing.
 * fusion_note holds it on the row of that twin only (NULL elsewhere, and
 * where the fused variant is not slower). fusion_removed_bytes,
 * fusion_removed_launches, fusion_bound_ns and fusion_bound_pct are given
 * on every row whose base is an unfused variant. reports/fusion.c
 * (fusion_compute, fusion_note) is the reference of this rule. */
#define FP_FUSION_NOISE_PCT 5
#define FP_FUSION_LAUNCH_NS 2000
#define FP_STR_(x) #x
#define FP_STR(x) FP_STR_(x)

/* v_fusion's SELECT over src, any relation with the FP_FUSION_INPUT columns
 * of v_roofline: the view is FP_FUSION_SQL("v_roofline"); `fuseprof report`
 * points it at the run's rows of v_roofline, read once, so the pairing rule
 * and its ratios have this one definition. src is named once, so SQLite
 * (3.35+) reads it once for both sides of the pair. */
#define FP_FUSION_SQL(src) \
	"WITH r AS (SELECT " FP_FUSION_INPUT " FROM " src ")," \
	" p AS (SELECT f.run_id, f.workload, f.dtype, f.shape," \
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
	" f.eff_bw_pct AS fused_eff_bw_pct, b.eff_bw_pct AS base_eff_bw_pct," \
	" b.role = 'unfused' AND row_number() OVER (PARTITION BY f.op_id" \
	"  ORDER BY b.role != 'unfused', b.time_ns, b.op_id) = 1 AS best_unfused," \
	" CASE WHEN b.role = 'unfused' THEN" \
	"  max(b.model_variant_bytes - f.model_variant_bytes, 0.0) END" \
	"  AS fusion_removed_bytes," \
	" CASE WHEN b.role = 'unfused' THEN max(b.launches - 1, 0.0) END" \
	"  AS fusion_removed_launches," \
	" b.dram_bw AS base_dram_bw" \
	" FROM r f JOIN r b ON b.run_id = f.run_id AND b.device_id IS f.device_id" \
	"  AND b.workload = f.workload AND b.dtype = f.dtype AND b.shape = f.shape" \
	"  AND b.op_id != f.op_id" \
	" WHERE f.role = 'fused' AND f.status = 'ok' AND b.status = 'ok')," \
	" kn AS (SELECT op_id, name, sum(dur_ns * launches) AS t FROM kernels" \
	"  WHERE op_id IN (SELECT op_id FROM r) GROUP BY op_id, name)," \
	" sh AS (SELECT p.fused_op_id AS s_f, p.base_op_id AS s_b, count(*) AS n," \
	"  sum(a.t) AS t_f, sum(c.t) AS t_b FROM p" \
	"  JOIN kn a ON a.op_id = p.fused_op_id" \
	"  JOIN kn c ON c.op_id = p.base_op_id AND c.name = a.name" \
	"  GROUP BY p.fused_op_id, p.base_op_id)," \
	" q AS (SELECT p.*, 1e9 * fusion_removed_bytes / base_dram_bw" \
	"  + fusion_removed_launches * " FP_STR(FP_FUSION_LAUNCH_NS) " AS fusion_bound_ns," \
	"  coalesce(sh.n, 0) AS shared_kernels," \
	"  sh.t_f - sh.t_b AS shared_delta_ns," \
	"  CASE WHEN fused_time_ns - sh.t_f > 0 AND base_time_ns - sh.t_b > 0 THEN" \
	"   (fused_time_ns - sh.t_f) / (base_time_ns - sh.t_b) END AS own_ratio" \
	"  FROM p LEFT JOIN sh ON sh.s_f = p.fused_op_id AND sh.s_b = p.base_op_id)," \
	" n AS (SELECT *," \
	" CASE WHEN best_unfused AND fused_time_ns > base_time_ns THEN" \
	"  CASE WHEN fusion_bound_ns IS NULL OR base_time_ns <= 0 THEN" \
	"   printf('fused kernel %.2fx unfused; no byte model or DRAM roof to bound" \
	" what fusion could save', fused_time_ns / base_time_ns)" \
	"  WHEN 100.0 * fusion_bound_ns / base_time_ns < " FP_STR(FP_FUSION_NOISE_PCT) " THEN" \
	"   printf('fusion cannot pay here: it removes at most %.1f MB and %g launch%s" \
	" (%.1f µs, %.1f %% of %d µs)', fusion_removed_bytes / 1e6," \
	"   fusion_removed_launches, CASE WHEN fusion_removed_launches = 1 THEN ''" \
	"   ELSE 'es' END, fusion_bound_ns / 1e3," \
	"   100.0 * fusion_bound_ns / base_time_ns," \
	"   CAST(round(base_time_ns / 1e3) AS INTEGER))" \
	"  ELSE printf('fused kernel %.2fx unfused where fusion could save up to" \
	" %.1f %%: a missing kernel', fused_time_ns / base_time_ns," \
	"   100.0 * fusion_bound_ns / base_time_ns) END END AS verdict" \
	" FROM q)" \
	" SELECT run_id, workload, dtype, shape, fused_op_id, fused_variant," \
	" base_op_id, base_variant, base_role, fused_time_ns, base_time_ns, speedup," \
	" fused_dram_bytes, base_dram_bytes, dram_ratio, fused_launches," \
	" base_launches, launch_ratio, fused_model_bytes, base_model_bytes," \
	" predicted_speedup, kernel_ceiling, fused_roof_pct, base_roof_pct," \
	" fused_eff_bw_pct, base_eff_bw_pct, best_unfused, fusion_removed_bytes," \
	" fusion_removed_launches, fusion_bound_ns," \
	" 100.0 * fusion_bound_ns / base_time_ns AS fusion_bound_pct," \
	" shared_kernels, shared_delta_ns, own_ratio," \
	" CASE WHEN verdict IS NOT NULL AND shared_delta_ns > 0 AND own_ratio IS NOT NULL" \
	"  THEN verdict || printf('; the %d kernel%s both ops run took %.1f µs longer" \
	" in the fused op (the same kernels: clocks, caches), the rest %.2fx unfused'," \
	"   shared_kernels, CASE WHEN shared_kernels = 1 THEN '' ELSE 's' END," \
	"   shared_delta_ns / 1e3, own_ratio)" \
	"  ELSE verdict END AS fusion_note" \
	" FROM n"

/* ---- save or recompute ------------------------------------------------
 * What a forward keeps alive for its backward is memory a training step
 * holds from the forward pass until the backward pass reads it; a variant
 * that keeps less recomputes more, so its backward (or forward) takes
 * longer. v_save_recompute puts the two side by side, one row per forward
 * variant, dtype and shape of a run whose backward workload (ops.backward)
 * has the variant of the same name at that dtype and shape in the same
 * run, both ok:
 *
 *   saved_bytes      the bytes it keeps for the backward (its model's
 *                    saved_bytes: ops.model_saved_bytes of the forward)
 *   fwd_time_ns, bwd_time_ns, total_time_ns = their sum (ns)
 *   fwd_dram_bytes, bwd_dram_bytes, total_dram_bytes: DRAM bytes measured
 *                    when the op's counters ran, else its model's
 *                    variant_bytes; dram_basis says which (measured,
 *                    model, or mixed when one of the two is measured)
 *
 * and the trade-off within its pattern (run, forward workload, dtype and
 * shape), against the variant that keeps the most and the fastest pair:
 *
 *   saves_most       the variant that keeps the most (ties: by name)
 *   bytes_saved      its saved_bytes - this one's: memory this variant
 *                    saves by recomputing (0 for that variant)
 *   fastest          the variant of the least total time (ties: by name)
 *   time_paid_ns     total_time_ns - the fastest total: time paid (0 for
 *                    the fastest)
 *   time_ratio       total_time_ns / the fastest total (1 for it)
 *
 * FP_SAVED_SQL(src) reads any relation with the FP_FUSION_INPUT and
 * FP_SAVED_EXTRA columns of v_roofline, named once (SQLite 3.35+ reads it
 * once for both sides): the view reads v_roofline, `fuseprof report` the
 * run's rows it keeps. */
#define FP_SAVED_SQL(src) \
	"WITH r AS (SELECT run_id, op_id, device_id, workload, variant, role," \
	"  dtype, shape, status, time_ns, dram_bytes, model_variant_bytes," \
	"  model_saved_bytes," \
	"  backward FROM " src ")," \
	" p AS (SELECT f.run_id, f.device_id, f.workload, b.workload AS backward," \
	"  f.variant," \
	"  f.role, f.dtype, f.shape, f.op_id AS fwd_op_id, b.op_id AS bwd_op_id," \
	"  f.model_saved_bytes AS saved_bytes, f.time_ns AS fwd_time_ns," \
	"  b.time_ns AS bwd_time_ns, f.time_ns + b.time_ns AS total_time_ns," \
	"  coalesce(f.dram_bytes, f.model_variant_bytes) AS fwd_dram_bytes," \
	"  coalesce(b.dram_bytes, b.model_variant_bytes) AS bwd_dram_bytes," \
	"  CASE WHEN f.dram_bytes IS NOT NULL AND b.dram_bytes IS NOT NULL" \
	"   THEN 'measured' WHEN f.dram_bytes IS NULL AND b.dram_bytes IS NULL" \
	"   THEN 'model' ELSE 'mixed' END AS dram_basis" \
	"  FROM r f JOIN r b ON b.run_id = f.run_id AND b.device_id IS f.device_id" \
	"   AND b.workload = f.backward" \
	"   AND b.variant = f.variant AND b.dtype = f.dtype AND b.shape = f.shape" \
	"  WHERE f.status = 'ok' AND b.status = 'ok')" \
	" SELECT run_id, workload, backward, variant, role, dtype, shape," \
	" fwd_op_id, bwd_op_id, saved_bytes, fwd_time_ns, bwd_time_ns," \
	" total_time_ns, fwd_dram_bytes, bwd_dram_bytes," \
	" fwd_dram_bytes + bwd_dram_bytes AS total_dram_bytes, dram_basis," \
	" first_value(variant) OVER (w ORDER BY saved_bytes IS NULL," \
	"  saved_bytes DESC, variant) AS saves_most," \
	" max(saved_bytes) OVER w - saved_bytes AS bytes_saved," \
	" first_value(variant) OVER (w ORDER BY total_time_ns IS NULL," \
	"  total_time_ns, variant) AS fastest," \
	" total_time_ns - min(total_time_ns) OVER w AS time_paid_ns," \
	" total_time_ns / min(total_time_ns) OVER w AS time_ratio" \
	" FROM p WINDOW w AS (PARTITION BY run_id, device_id, workload, dtype, shape)"

/* ---- numbers to distrust ------------------------------------------------
 * v_distrust lists each op that passed its check but whose numbers cannot
 * be right, one row per broken rule. The report flags these ops and never
 * hides them: they stay in every table and chart. The thresholds are SQL
 * literals, so the view's text (and so its signature) changes with them. */

/* DRAM traffic below this many times the model's minimum bytes cannot
 * happen: every input is read and every output written at least once, and
 * the counters count whole sectors, so rounding only adds bytes. The usual
 * cause in a database from before write-backs were counted
 * (dram_writeback_bytes NULL): the op's output lines were still dirty in
 * L2 when its last kernel ended, and their write-back to DRAM was charged
 * to no op. With write-backs counted (each op-replay pass opens and closes
 * with an L2 flush inside the profiled region), fused memory-bound ops
 * measured 0.9978-0.9999x their model's minimum on an H200: the flush
 * evicts all but a few hundred KB of L2 (a copy of N bytes measures N
 * within 0.1 %), so lines the op finds or leaves in L2 escape the count.
 * A shortfall of well under 1 % is the measurement's; more is a wrong
 * model (it counts bytes the op need not move) or counters that missed
 * traffic. */
#define FP_DISTRUST_TRAFFIC_MIN "0.99"

/* % of its DRAM or L2 roof that no op can pass. A measured ceiling is the
 * best the device did on its test; an op above it shows that the ceiling is
 * not this op's roof (no ceiling of its read/write mix stored, a mix
 * ceiling or a peak taken at lower clocks), not that the op beat the
 * hardware. No tolerance above 100: a flag costs a line, a hidden one a
 * wrong claim. */
#define FP_DISTRUST_ROOF_PCT "100"

/* Counted FLOPs (add + mul + 2 x fma per precision, plus the tensor pipe's
 * operations) against the model's FLOPs (each FMA 2), by the op's precision:
 *
 * Tensor-core ops (precision tensor_*): the tensor pipe counts each
 * multiply-add of the GEMM, which dominates the model, as 2 FLOPs (in the
 * shipped samples, exactly the GEMMs' 2MNK). What may differ is the
 * CUDA-core part (LayerNorm, epilogue: compares and MUFU count nothing,
 * accurate rsqrt and division count several) and padding to whole tiles
 * at ragged shapes: 0.8x to 1.25x. Below, tensor work went uncounted;
 * above, the GEMM ran on mostly padded tiles or the model misses work.
 *
 * CUDA-core ops (fp32_fma, fp64_fma): the counters see FADD, FMUL and FFMA
 * (and their half and double kinds) only. Packed half-precision
 * instructions (HFMA2, HADD2) count once per thread for two operations, and
 * the model's compares, min/max and MUFU transcendentals count nothing, so
 * half the model is still honest; accurate expf, erff, division and rsqrt
 * expand into FFMA sequences of 4 to 20 FLOPs for the model's one, which in
 * a whole op stays within 4x (the samples' ops: 0.8x to 2.3x). Outside,
 * a kernel's counters are missing or the model is wrong.
 *
 * An op whose model has no FLOPs and whose counters have none is fine; one
 * whose model has none but whose counters have some is flagged on its own
 * rule (flops_without_model), its value the counted FLOPs. */
#define FP_DISTRUST_FLOPS_TENSOR_LO "0.8"
#define FP_DISTRUST_FLOPS_TENSOR_HI "1.25"
#define FP_DISTRUST_FLOPS_CORE_LO "0.5"
#define FP_DISTRUST_FLOPS_CORE_HI "4.0"

/* A median repetition (a run's) or sample (a profiled range's) at least
 * this many times the fastest, and slower by at least
 * FP_DISTRUST_UNSTEADY_NS: the op's speed changed while it was measured.
 * On an H200 the fp32 attention variants' 50 repetitions went from 1.0 to
 * 3.6 ms within one run (medians 1.6-3.3x their fastest), while a steady
 * op's median sits within 1.2x of its fastest; kernels of a few µs jitter
 * by up to 1.4x, which the absolute floor leaves alone. */
#define FP_DISTRUST_UNSTEADY "1.5"
#define FP_DISTRUST_UNSTEADY_NS "20000"

/* A kernel's DRAM writes, its write-back included, above its L2 traffic
 * (lts__t_bytes: every byte its loads and stores moved through L2) by more
 * than this factor and FP_DISTRUST_WRITEBACK_FLOOR bytes. Every byte a
 * kernel writes to DRAM went through L2 as one of its stores, so its DRAM
 * writes cannot pass its L2 bytes: what does was written by other GPU work
 * between the kernel and the L2 flush that measures its write-back (a
 * memcpy or memset the program enqueued between two kernels: an ATen
 * clone's 25 MB device-to-device copy showed as a 299 KB bitwise_not's 22
 * MB write-back on an H200), or the counters are wrong. The factor covers
 * counters taken in different passes; the floor, the few hundred KB of
 * lines an L2 flush leaves. The value is the worst kernel's ratio. Where
 * one flush closes a whole op (op replay, "flush op" in runs.counters),
 * the op's write-back is all charged to its last kernel by design, so
 * the rule takes the op's sums instead. */
#define FP_DISTRUST_WRITEBACK "1.05"
#define FP_DISTRUST_WRITEBACK_FLOOR "131072"

/* The columns of v_roofline that v_distrust reads beyond FP_FUSION_INPUT;
 * `fuseprof report` keeps both lists of the run's rows (FP_RUN_INPUT). */
#define FP_DISTRUST_EXTRA \
	"precision, bound, traffic_eff, roof_l2_pct, flops, model_flops," \
	"  dram_writeback_bytes, dram_bw_basis, model_executed_flops"
/* ... and those v_save_recompute reads beyond both. */
#define FP_SAVED_EXTRA "model_saved_bytes, backward"
#define FP_RUN_INPUT FP_FUSION_INPUT ", " FP_DISTRUST_EXTRA ", " FP_SAVED_EXTRA

/* The op a flag is about; the flag adds the rule it broke (reason), the
 * op's number for that rule (value), the limit it crossed (threshold) and
 * the likely cause in a sentence. */
#define FP_DISTRUST_COLS \
	"op_id, run_id, workload, variant, dtype, shape"

/* v_distrust's SELECT over src, any relation with the FP_RUN_INPUT columns
 * of v_roofline: the view is FP_DISTRUST_SQL("v_roofline"); `fuseprof
 * report` points it at the run's rows it read once. src is named once, so
 * SQLite reads it once for all the rules. Columns: FP_DISTRUST_COLS,
 * reason, value, threshold, cause. Reasons and their values:
 *   traffic_below_min    dram_bytes / model_min_bytes  (x, below threshold)
 *   above_roof           roof_pct                      (%, above threshold)
 *   above_l2_roof        roof_l2_pct                   (%, above threshold)
 *   flops_off_model      counted / model FLOPs   (x, outside the precision's
 *                        range; threshold is the bound it crossed): the
 *                        FLOPs the variant executes by its model
 *                        (model_executed_flops: 3x the GEMM's for 3xTF32),
 *                        which are the operation's FLOPs unless it says
 *   flops_without_model  counted FLOPs, the model having 0 (threshold 0)
 *   unsteady_time        time_ns / the fastest repetition's (ops.time_ns_min;
 *                        x, at or above threshold, and at least
 *                        FP_DISTRUST_UNSTEADY_NS slower)
 *   writeback_above_l2   (DRAM writes + write-back) / L2 bytes of the op's
 *                        worst kernel that breaks the rule, or of the whole
 *                        op in a run flushed per op (x, above threshold,
 *                        with FP_DISTRUST_WRITEBACK_FLOOR bytes over) */
/* The kernels of op s with DRAM writes and L2 bytes counted, for
 * writeback_above_l2: cw, cb and cl their writes, write-backs and L2
 * bytes. */
#define WB_L2_FROM \
	"FROM kernels k" \
	" JOIN counters cw ON cw.kernel_id = k.id" \
	"  AND cw.metric = 'dram__bytes_write.sum'" \
	" JOIN counters cl ON cl.kernel_id = k.id AND cl.metric = 'lts__t_bytes.sum'" \
	" LEFT JOIN counters cb ON cb.kernel_id = k.id" \
	"  AND cb.metric = '" FP_METRIC_DRAM_WRITEBACK "'" \
	" WHERE k.op_id = s.op_id"
#define FP_DISTRUST_SQL(src) \
	"WITH d AS (SELECT " FP_DISTRUST_COLS ", bound, traffic_eff, roof_pct," \
	"  roof_l2_pct, flops, model_executed_flops AS xflops, dram_writeback_bytes," \
	"  dram_bw_basis, time_ns," \
	"  (SELECT o.time_ns_min FROM ops o WHERE o.id = op_id) AS time_min," \
	"  CASE WHEN (SELECT r.counters LIKE '%flush op%' FROM runs r" \
	"   WHERE r.id = s.run_id)" \
	"  THEN (SELECT (sum(cw.value) + coalesce(sum(cb.value), 0)) / sum(cl.value)" \
	"   " WB_L2_FROM " GROUP BY k.op_id HAVING sum(cl.value) > 0" \
	"    AND sum(cw.value) + coalesce(sum(cb.value), 0) > " FP_DISTRUST_WRITEBACK \
	"    * sum(cl.value) + " FP_DISTRUST_WRITEBACK_FLOOR ")" \
	"  ELSE (SELECT max((cw.value + coalesce(cb.value, 0)) / cl.value)" \
	"   " WB_L2_FROM " AND cl.value > 0" \
	"    AND cw.value + coalesce(cb.value, 0) > " FP_DISTRUST_WRITEBACK \
	"    * cl.value + " FP_DISTRUST_WRITEBACK_FLOOR ") END AS wb_l2," \
	"  precision LIKE 'tensor%' AS tensor FROM " src " AS s WHERE status = 'ok')" \
	" SELECT " FP_DISTRUST_COLS ", 'traffic_below_min' AS reason," \
	"  traffic_eff AS value, " FP_DISTRUST_TRAFFIC_MIN " AS threshold," \
	"  CASE WHEN dram_writeback_bytes IS NULL THEN 'DRAM bytes below the" \
	" model''s minimum: output lines likely left dirty in L2 at the op''s end," \
	" their write-back to DRAM not counted (counters taken before write-backs" \
	" were; a new run counts them)'" \
	"  ELSE 'DRAM bytes below the model''s minimum even with the write-back of" \
	" its dirty L2 lines counted: the model''s minimum is wrong (it counts" \
	" bytes the op need not move), or the counters missed traffic' END AS cause" \
	"  FROM d WHERE traffic_eff < " FP_DISTRUST_TRAFFIC_MIN \
	" UNION ALL SELECT " FP_DISTRUST_COLS ", 'above_roof', roof_pct, " \
	FP_DISTRUST_ROOF_PCT "," \
	"  CASE WHEN bound = 'compute' THEN 'above its compute peak: the peak was" \
	" measured low (clocks, instruction mix), or the counted FLOPs exceed the" \
	" work done'" \
	"  WHEN dram_bw_basis LIKE 'copy (%' THEN 'above its DRAM roof, the copy" \
	" bandwidth: no ceiling of this op''s read/write mix is stored (fuseprof" \
	" ceilings --remeasure measures them)'" \
	"  ELSE 'above the DRAM roof of its read/write mix (' || dram_bw_basis ||" \
	" '): the mix ceilings were measured low (other clocks, a probe slower" \
	" than this op''s access pattern), or its DRAM bytes are overcounted' END" \
	"  FROM d WHERE roof_pct > " FP_DISTRUST_ROOF_PCT \
	" UNION ALL SELECT " FP_DISTRUST_COLS ", 'above_l2_roof', roof_l2_pct, " \
	FP_DISTRUST_ROOF_PCT "," \
	"  'above its L2 roof: the L2 ceiling (l2_bw) is a read test, which L2" \
	" traffic of reads and writes can pass; judge this op by its DRAM roof" \
	" (roof_pct), and take roof_l2_pct as a comparison with reads alone," \
	" not a limit'" \
	"  FROM d WHERE roof_l2_pct > " FP_DISTRUST_ROOF_PCT \
	" UNION ALL SELECT " FP_DISTRUST_COLS ", 'flops_off_model'," \
	"  flops / xflops," \
	"  CASE WHEN tensor AND flops < " FP_DISTRUST_FLOPS_TENSOR_LO  " * xflops" \
	"   THEN " FP_DISTRUST_FLOPS_TENSOR_LO \
	"   WHEN tensor THEN " FP_DISTRUST_FLOPS_TENSOR_HI \
	"   WHEN flops < " FP_DISTRUST_FLOPS_CORE_LO  " * xflops" \
	"   THEN " FP_DISTRUST_FLOPS_CORE_LO \
	"   ELSE " FP_DISTRUST_FLOPS_CORE_HI " END," \
	"  CASE WHEN tensor AND flops < " FP_DISTRUST_FLOPS_TENSOR_LO  " * xflops" \
	"   THEN 'tensor-core FLOPs below the model''s: tensor work went uncounted" \
	" (a kernel without counters, a data path the FLOP formula lacks)'" \
	"   WHEN tensor THEN 'tensor-core FLOPs above the model''s by more than" \
	" padding and the epilogue explain: the GEMM ran on mostly padded tiles," \
	" or the model misses work'" \
	"   WHEN flops < " FP_DISTRUST_FLOPS_CORE_LO  " * xflops" \
	"   THEN 'counted FLOPs below half the model''s, more than packed half" \
	" pairs and uncounted compares explain: a kernel''s counters are missing," \
	" or the model is wrong'" \
	"   ELSE 'counted FLOPs above " FP_DISTRUST_FLOPS_CORE_HI "x the model''s," \
	" more than expanded exp, erf and division explain: the op recomputes, or" \
	" the model misses work' END" \
	"  FROM d WHERE xflops > 0 AND (flops < (CASE WHEN tensor THEN " \
	FP_DISTRUST_FLOPS_TENSOR_LO " ELSE " FP_DISTRUST_FLOPS_CORE_LO " END)" \
	"  * xflops OR flops > (CASE WHEN tensor THEN " \
	FP_DISTRUST_FLOPS_TENSOR_HI " ELSE " FP_DISTRUST_FLOPS_CORE_HI " END)" \
	"  * xflops)" \
	" UNION ALL SELECT " FP_DISTRUST_COLS ", 'flops_without_model', flops, 0," \
	"  'FLOPs counted for an op whose model has none: the model is incomplete," \
	" or another op''s work was charged to this one'" \
	"  FROM d WHERE xflops = 0 AND flops > 0" \
	" UNION ALL SELECT " FP_DISTRUST_COLS ", 'unsteady_time', time_ns / time_min," \
	"  " FP_DISTRUST_UNSTEADY "," \
	"  'the median repetition took " FP_DISTRUST_UNSTEADY "x the fastest or more:" \
	" the op''s speed changed while it was measured (GPU clocks lowered by" \
	" power or heat, another process on the GPU; for a profiled range," \
	" instances that did different work); its time_ns_min is what it can" \
	" take, and a new run tells which'" \
	"  FROM d WHERE time_min > 0 AND time_ns >= " FP_DISTRUST_UNSTEADY " * time_min" \
	"  AND time_ns - time_min >= " FP_DISTRUST_UNSTEADY_NS \
	" UNION ALL SELECT " FP_DISTRUST_COLS ", 'writeback_above_l2', wb_l2," \
	"  " FP_DISTRUST_WRITEBACK "," \
	"  'a kernel''s DRAM writes with its write-back exceed all its L2 traffic," \
	" which every byte it writes passes through: GPU work that is no kernel" \
	" (a memcpy or memset between two kernels) was charged to it as" \
	" write-back, so its DRAM bytes are overcounted'" \
	"  FROM d WHERE wb_l2 IS NOT NULL"

/* ---- fusion opportunities in a profiled run ---------------------------
 * v_fusion_candidates finds, in each profiled run (runs.kind 'profile')
 * with counters, the kernels a fused kernel could replace, and predicts
 * what fusing them would buy. The evidence is the launches table (each
 * launch's stream, start and end) and each kernel slot's counters, per
 * launch (a slot's value / kernels.launches): r = DRAM bytes read, w =
 * DRAM bytes written + written back, FLOPs.
 *
 * A kernel slot is a boundary (class, not 'memory') when it has no DRAM
 * counters ('no counters'); when it is a GEMM or convolution: its name
 * holds gemm, cutlass, nvjet, cublas, cudnn, xmma, conv2d or convolution
 * (any case), or its tensor-pipe FLOPs exceed its other FLOPs ('gemm');
 * when the run has no DRAM or FP32/FP64 peak ceiling ('no ceilings');
 * or when it is compute-bound: FLOPs / (r + w) at or above the ridge,
 * peak / bw, where bw is the DRAM roof of its own read/write mix
 * (FP_DRAM_SEGMENTS, as v_roofline) and peak fp64_fma or fp32_fma by its
 * dominant precision ('compute-bound'). Any other kernel is 'memory'.
 *
 * Launches are taken in order of start on each (run, process, device,
 * stream). A memory-bound launch joins the one before it into a chain
 * unless (the reason the chain ends, in this order): that one is a
 * boundary; the stream was idle between them for more than
 * FP_OPPS_GAP_NS (a host synchronisation, a copy or memset, which the
 * collector does not record as kernels, or host work: shorter gaps are
 * launch latency, which fusion removes too); it finishes a grid-wide
 * reduction ('grid-wide reduction': it reads at most FP_OPPS_REDUCE_FRAC
 * of what the kernel before it moved, r + w, and stores, DRAM writes
 * without write-backs, less than half of what it reads: the second pass
 * over per-block partials, which needs every block of the first one done,
 * whether the kernel before wrote the partials alone or beside an output,
 * as a norm's backward writes dgamma's partials beside dx; its own stores,
 * since the write-backs in a small kernel's counters are mostly the dirty
 * lines of the kernel before it); the two share no buffer ('no shared
 * buffer': where both launches' pointer arguments were read whole,
 * launches.ptrs ending in a pointer, not in null, the consumer holds no
 * pointer with the same value or the same allocation end as one of the
 * producer's: no buffer carries data between them, whatever the bytes
 * say; a pointer kept in device memory, not among the arguments, is not
 * seen, so a kernel that takes its buffers that way can lose a real
 * link); or no producer->consumer link shows
 * ('no byte link': the consumer reads at least FP_OPPS_LINK_FRAC of what
 * its producer wrote, or the two have the same grid and block, the mark
 * of elementwise kernels over one tensor).
 * A row reduction (statistics, a softmax's max) looks the same as a
 * column reduction's first pass in counters; only the small second pass
 * shows. Two chains are listed: 'chain', broken at range-instance
 * boundaries too (the candidates), and 'cross-range', not broken there,
 * listed when it spans several range instances (it contains the chains it
 * joins). Launches outside any range (each a sample of its own, of no
 * instance in the ranges table) are one stretch: a chain of them is named
 * by its first kernel's op, with no range time. One kernel is no chain.
 *
 * Bytes a fused kernel must move, by byte accounting along the chain: a
 * link's intermediate is i = min(w of the producer, r of the consumer),
 * not read again (fused reads = sum of r - i - re-reads) and, unless kept,
 * not written (fused writes = sum of w - i + kept); a producer's writes
 * beyond i stay external outputs. A consumer with its producer's grid and
 * block (elementwise over the same elements) reads whole tensors of its
 * own output's size w_c: i is at most w_c x max(1, floor(w_p / w_c +
 * FP_OPPS_TENSOR_SLACK)), the slack covering write-backs, so a mask
 * written beside an output for the backward stays written while two
 * outputs of that size, both read, are both gone. A kernel that reduces
 * (writes at most FP_OPPS_REDUCE_FRAC of what it reads: row statistics, a
 * softmax's max or sum, column partials) marks its input: a later kernel
 * of the chain's reads beyond its producer's output, up to the largest
 * input reduced before it, are taken as that input read again (statistics,
 * then the pass that uses them: LayerNorm, softmax, RMSNorm, a norm's
 * backward), read once fused. An intermediate that a reducing kernel
 * consumes and no later kernel of the chain reads again is kept: a fused
 * kernel still writes it once (a gradient beside its column sums; for a
 * loss that only the reduction reads, this overstates by one write).
 * Where both launches' pointer arguments were read (launches.ptrs,
 * `profile --metrics`), a consumer sharing n >= 2 buffers with its
 * producer, each holding at most one tensor of size i (the bytes from
 * the pointer to its allocation's end, or to the next pointer either
 * launch holds above it where that is nearer, as in an arena, at most
 * (1 + FP_OPPS_TENSOR_SLACK) i), is taken to read n - 1 tensors of size
 * i again (the intermediate is one of the n; at most its reads beyond
 * i), read once fused: dy and e in softplus's backward in two kernels,
 * x in a LayerNorm+GELU backward. A larger buffer is no evidence:
 * SwiGLU's kernels share a packed input's pointer and read its two
 * halves apart. How wrong it can be: an intermediate that L2 held never
 * reaches DRAM counters, so small ones are invisible (the link then rests
 * on the shape); without pointers, a consumer that reads a tensor the
 * chain read before, with no reduction between (x in max(x, 0) +
 * log1p(exp(-|x|)) in three kernels), is counted as reading a new one;
 * with them, only a buffer the producer also holds counts (not one of a
 * kernel before it), a view at an offset into a buffer is another
 * pointer, the re-read's size is the intermediate's, and a view's pointer
 * bounds the buffer below it, so a larger buffer reached through its
 * start and a view into it can pass for one tensor; one that reads a new
 * tensor of a reduced input's size after a reduction as reading that
 * input again: the counters cannot tell the two apart; a consumer reading
 * two producers, or a producer's output that a consumer does not read
 * while it reads as much of other tensors (two gradients of one input),
 * is matched by size alone; an intermediate that a kernel after the chain
 * reads as well is taken as gone, though a fused kernel must still write
 * it once.
 *
 * Predicted time: the fused bytes at the DRAM roof of the fused mix
 * (FP_DRAM_BW_SQL's interpolation at f = fused writes / fused bytes), and,
 * less optimistic, at the chain's own bandwidth: its kernels' achieved
 * bandwidths (bytes / median time) weighted by their bytes, held to the
 * roof (a fused kernel does what its parts did, at best the roof).
 * Measured time: the sum of its kernels' medians over their
 * launches (kernels.dur_ns), one chain instance. A GEMM next to an
 * elementwise kernel that reads its output (epilogue) or writes its input
 * (prologue), linked as above and writing at least FP_OPPS_EPILOGUE_FRAC
 * of what it reads, is listed as kind 'epilogue' or 'prologue', without a
 * prediction or a rank: a GEMM's epilogue can absorb it, at a cost no
 * counter shows. Thresholds are SQL literals, so changing one changes
 * the views' signature. */
#define FP_OPPS_GAP_NS "50000"
#define FP_OPPS_LINK_FRAC "0.5"
#define FP_OPPS_REDUCE_FRAC "0.125"
#define FP_OPPS_EPILOGUE_FRAC "0.25"
#define FP_OPPS_TENSOR_SLACK "0.25"

/* A short hash of all view definitions; stored in meta('views') so a
 * database whose views are stale is brought up to date on open. */
const char *views_signature(void);

#endif
