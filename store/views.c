/* views.c - the public SQL views. Derived numbers (bytes, FLOPs, intensity,
 * % of roof) are computed here from raw counters, never stored, so a
 * formula fix needs no re-run: databases pick up new views on open. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "views.h"

/* FLOPs follow Nsight Compute's roofline sections: add + mul + 2 * fma per
 * precision, from thread-level instruction counts with predicates on.
 * A kernel has at most one value per metric (the primary key), so each is
 * one lookup, NULL when absent. Lookups rather than an aggregate keep
 * v_kernel_counters a plain view: a query of one run's ops reads that
 * run's kernels alone, instead of pivoting every kernel of the file. */
#define METRIC(m) "(SELECT c.value FROM counters c" \
	" WHERE c.kernel_id = k.id AND c.metric = '" m "')"

/* The counters each FLOP count adds up, with their weights, as lists that
 * X(metric, weight) expands; v_kernel_counters (per kernel) and v_ops (per
 * op) both take their formulas from here. */
#define FLOPS_FP32(X) \
	X("sm__sass_thread_inst_executed_op_fadd_pred_on.sum", "") \
	X("sm__sass_thread_inst_executed_op_fmul_pred_on.sum", "") \
	X("sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "2 * ")
#define FLOPS_FP64(X) \
	X("sm__sass_thread_inst_executed_op_dadd_pred_on.sum", "") \
	X("sm__sass_thread_inst_executed_op_dmul_pred_on.sum", "") \
	X("sm__sass_thread_inst_executed_op_dfma_pred_on.sum", "2 * ")
#define FLOPS_FP16(X) \
	X("sm__sass_thread_inst_executed_op_hadd_pred_on.sum", "") \
	X("sm__sass_thread_inst_executed_op_hmul_pred_on.sum", "") \
	X("sm__sass_thread_inst_executed_op_hfma_pred_on.sum", "2 * ")
#define FLOPS_TENSOR(X) \
	X("sm__ops_path_tensor_src_bf16_dst_fp32.sum", "") \
	X("sm__ops_path_tensor_src_fp16.sum", "") \
	X("sm__ops_path_tensor_src_tf32_dst_fp32.sum", "")

/* One kernel's FLOPs: 0 + the weighted counters, each 0 when absent. */
#define KERNEL_TERM(m, w) " + " w "coalesce(" METRIC(m) ", 0)"
#define KERNEL_FLOPS(list) "0" list(KERNEL_TERM)

/* One op's value of a counter and its FLOPs, summed over the counters
 * rows of all its kernels (c), in one pass over them instead of a lookup
 * per kernel and metric: NULL without kernels, 0 with kernels but without
 * those counters, as the sum of v_kernel_counters over the kernels gives. */
#define OP_METRIC(m) "sum(CASE c.metric WHEN '" m "' THEN c.value END)"
#define OP_TERM(m, w) " WHEN '" m "' THEN " w "c.value"
#define OP_FLOPS(list) "CASE WHEN count(k.id) > 0 THEN" \
	" coalesce(sum(CASE c.metric" list(OP_TERM) " END), 0) END"

/* DRAM bytes of a kernel or op: what the counters saw read and written
 * while it ran, plus the write-back of the dirty lines it left in L2
 * (stored by the collector as a metric of its own, absent in databases
 * from before it was counted: 0 then). p is the relation's prefix. */
#define DRAM_BYTES(p) p "dram_read_bytes + " p "dram_write_bytes" \
	" + coalesce(" p "dram_writeback_bytes, 0)"

/* The DRAM roof of an op of several kernels (views.h), in v_ops's pass
 * over its kernels' counter rows: each kernel's terms are taken on the row
 * of its read counter (c), which it has at most once, with its write and
 * write-back counters looked up once per kernel (kw, kb) and the run's mix
 * ceilings once per op (x). A kernel without a read or write counter has
 * no known mix (K_BYTES NULL); one of no DRAM bytes has none, and takes no
 * time at any roof. Four aggregates in all: each costs a step per counter
 * row of the file's largest views (tests/mkdb: 10,000 ops, 200,000 rows). */
#define K_READ_ROW "c.metric = 'dram__bytes_read.sum'"
#define K_WRITTEN "(kw.value + coalesce(kb.value, 0))"
#define K_BYTES "(c.value + " K_WRITTEN ")"
#define K_FRAC K_WRITTEN " / " K_BYTES
/* Its least time at its mix's roof (s): NULL when a ceiling is missing. */
#define K_TIME_WHEN(cond, lo, hi, t) \
	" WHEN " cond " THEN " K_BYTES " / (" lo "_bw + " t " * (" hi "_bw - " lo "_bw))"
#define K_TIME "CASE WHEN " K_READ_ROW " THEN CASE WHEN " K_BYTES " = 0 THEN 0.0" \
	FP_DRAM_SEGMENTS(K_TIME_WHEN, K_FRAC) " END END"
/* Both ends of its segment measured: 1, else 0; NULL without DRAM bytes. */
#define K_MEASURED_WHEN(cond, lo, hi, t) " WHEN " cond " THEN " lo "_m AND " hi "_m"
#define K_MEASURED "CASE WHEN " K_READ_ROW " AND " K_BYTES " > 0 THEN CASE" \
	FP_DRAM_SEGMENTS(K_MEASURED_WHEN, K_FRAC) " END END"
/* The kernels of each mix, the nearest named one (by the midpoints between
 * them), as 12-bit fields of one sum: read, add, copy, write, and kernels
 * of no DRAM bytes at bit 48 (at most 4,095 kernels a field). */
#define K_MIXES "sum(CASE WHEN " K_READ_ROW " THEN CASE WHEN " K_BYTES " = 0" \
	" THEN 281474976710656 WHEN " K_FRAC " < 1.0/6 THEN 1" \
	" WHEN " K_FRAC " < 5.0/12 THEN 4096 WHEN " K_FRAC " < 0.75 THEN 16777216" \
	" WHEN " K_FRAC " >= 0.75 THEN 68719476736 END END)"
#define K_FIELD(i) "(" K_MIXES " >> " #i " & 4095)"
#define K_KNOWN K_FIELD(0) " + " K_FIELD(12) " + " K_FIELD(24) " + " K_FIELD(36) \
	" + " K_FIELD(48)
#define K_MIX_NAME(i, name) " || CASE WHEN " K_FIELD(i) " THEN ', " name "' ELSE '' END"
/* Kernel slots, those without counters included. */
#define NKERNELS "(SELECT count(*) FROM kernels kn WHERE kn.op_id = o.id)"
/* The DRAM mix ceilings as v_ceilings chose them, one row a run and
 * device. */
#define MIX_CEILING(name, c) \
	" max(CASE name WHEN '" name "' THEN value END) AS " c "_bw," \
	" max(CASE name WHEN '" name "' THEN provenance = 'measured' END) AS " c "_m"
#define MIX_CEILINGS \
	"SELECT run_id, device_id," MIX_CEILING("dram_read_bw", "read") "," \
	MIX_CEILING("dram_add_bw", "add") "," MIX_CEILING("dram_bw", "copy") "," \
	MIX_CEILING("dram_write_bw", "write") \
	" FROM v_ceilings WHERE name IN ('dram_read_bw', 'dram_add_bw', 'dram_bw'," \
	" 'dram_write_bw') GROUP BY run_id, device_id"

/* ---- v_fusion_candidates (views.h: the rules and their limits) ---- */

/* A GEMM or convolution by name (n: the kernel's name); LIKE ignores case. */
#define OPPS_GEMM_NAME(n) "(" n " LIKE '%gemm%' OR " n " LIKE '%cutlass%'" \
	" OR " n " LIKE '%nvjet%' OR " n " LIKE '%cublas%' OR " n " LIKE '%cudnn%'" \
	" OR " n " LIKE '%xmma%' OR " n " LIKE '%conv2d%' OR " n " LIKE '%convolution%')"
/* A kernel's name, short: no "void ", no parameter list, 80 characters. */
#define OPPS_SHORT(n) "substr(replace(replace(" n ", '(anonymous namespace)', '{anon}')," \
	" 'void ', ''), 1, min(80, instr(replace(replace(" n ", '(anonymous namespace)'," \
	" '{anon}'), 'void ', '') || '(', '(') - 1))"
/* The DRAM roof (B/s) of the write fraction f, from the run's mix
 * ceilings read_bw, add_bw, copy_bw, write_bw; the copy's when f or a
 * ceiling is unknown. */
#define OPPS_BW(f) "coalesce(CASE" FP_DRAM_SEGMENTS(FP_DRAM_BW_WHEN, f) " END, copy_bw)"
/* One stream's launches in order. */
#define OPPS_STREAM "PARTITION BY run_id, pid, device, stream"
#define OPPS_ORDER "ORDER BY start_ns, launch_id"
#define OPPS_WHOLE "ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"
/* Each chain member (a memory-bound launch) with the columns of its
 * chain, for kind K: 'chain' (seq_in: broken at range instances too) or
 * 'cross-range' (seq_x). link: the launch joins the one before it in this
 * kind; i, dd: its link's intermediate and re-read; inext: the next
 * link's intermediate (0 when the chain ends there); kept: its link's
 * intermediate when it stays written. */
#define OPPS_MEMBERS(K, seq, link, i, dd, inext, kept, before, after) \
	"SELECT run_id, pid, device, stream, op_id, rep, in_range, '" K "' AS kind," \
	" " seq " AS seq," \
	" group_concat(kernel_id, ' ') OVER c AS sig," \
	" group_concat(sname, ' > ') OVER c AS kernels," \
	" first_value(op_id) OVER c AS first_op, first_value(in_range) OVER c AS first_in," \
	" first_value(path) OVER c AS range_path, last_value(path) OVER c AS last_path," \
	" first_value(" before ") OVER c AS ends_before," \
	" last_value(" after ") OVER c AS ends_after," \
	" med_ns, rd, wr, rd - " i " - " dd " AS frd, wr - " inext " + " kept " AS frw," \
	" CASE WHEN med_ns > 0 THEN (rd + wr) * (rd + wr) / med_ns END AS bw_w," \
	" CASE WHEN " link " AND NOT by_bytes THEN 1 ELSE 0 END AS shape_link" \
	" FROM l8 WHERE cls = 'memory'" \
	" WINDOW c AS (" OPPS_STREAM ", " seq " " OPPS_ORDER " " OPPS_WHOLE ")"

/* The lowest pointer of the launch or the one before above pointer p:
 * the end of p's buffer where one allocation holds several (a program's
 * or fuseprof's own arena), NULL if none. */
#define OPPS_NEXT_PTR(p) "(SELECT min(q) FROM" \
	" (SELECT json_extract(value, '$[0]') AS q FROM json_each(ptrs) WHERE type = 'array'" \
	" UNION ALL SELECT json_extract(value, '$[0]') FROM json_each(p_ptrs)" \
	" WHERE type = 'array') WHERE q > " p ")"
/* The buffers a launch shares with the launch before it (both with their
 * pointers read: launches.ptrs) that hold at most one tensor of the size
 * i: the bytes from the pointer to its allocation's end, or to the next
 * pointer either launch holds above it where that is nearer, at most i
 * and the slack. A buffer holding more (a packed input whose halves two
 * kernels read) is no evidence that one tensor is read twice. */
#define OPPS_SHARED(i) "(SELECT count(DISTINCT json_extract(a.value, '$[0]'))" \
	" FROM json_each(ptrs) a JOIN json_each(p_ptrs) b" \
	" ON json_extract(b.value, '$[0]') = json_extract(a.value, '$[0]')" \
	" WHERE a.type = 'array' AND min(json_extract(a.value, '$[1]')," \
	" coalesce(" OPPS_NEXT_PTR("json_extract(a.value, '$[0]')") \
	" - json_extract(a.value, '$[0]'), json_extract(a.value, '$[1]')))" \
	" <= (1 + " FP_OPPS_TENSOR_SLACK ") * " i ")"

/* Whether a launch's pointer list p was read whole: one pointer at least,
 * and not cut (a cut list ends in null). */
#define OPPS_PTRS_WHOLE(p) "(" p " IS NOT NULL AND json_type(" p ", '$[#-1]') = 'array')"
/* Whether the launch and the one before hold a pointer into the same
 * allocation: the same allocation end (pointer plus the bytes to its
 * end), which the same pointer has and a view at an offset too. */
#define OPPS_SHARE_ALLOC "EXISTS (SELECT 1 FROM json_each(l1.ptrs) a, json_each(l1.p_ptrs) b" \
	" WHERE a.type = 'array' AND b.type = 'array'" \
	" AND json_extract(a.value, '$[0]') + json_extract(a.value, '$[1]')" \
	" = json_extract(b.value, '$[0]') + json_extract(b.value, '$[1]'))"

/* v_fusion_candidates: the SELECT, in steps (views.h says the rules). */
#define OPPS_SQL \
	"WITH cx AS (SELECT run_id," \
	"  max(CASE name WHEN 'dram_read_bw' THEN value END) AS read_bw," \
	"  max(CASE name WHEN 'dram_add_bw' THEN value END) AS add_bw," \
	"  max(CASE name WHEN 'dram_bw' THEN value END) AS copy_bw," \
	"  max(CASE name WHEN 'dram_write_bw' THEN value END) AS write_bw," \
	"  max(CASE name WHEN 'fp32_fma' THEN value END) AS fp32_peak," \
	"  max(CASE name WHEN 'fp64_fma' THEN value END) AS fp64_peak" \
	"  FROM v_ceilings GROUP BY run_id)," \
	/* Kernel slots of profiled runs: per-launch bytes and FLOPs. */ \
	" ks AS (SELECT k.id AS kernel_id, o.run_id, o.workload AS path, k.name," \
	"  " OPPS_SHORT("k.name") " AS sname, k.dur_ns," \
	"  k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z," \
	"  k.grid_x * k.grid_y * k.grid_z AS blocks, d.sm_count," \
	"  kc.dram_read_bytes / k.launches AS rd," \
	"  (kc.dram_write_bytes + coalesce(kc.dram_writeback_bytes, 0)) / k.launches AS wr," \
	/* Its own stores: write-backs land in whichever kernel runs when L2 \
	 * evicts, a small kernel's those of the kernel before it. */ \
	"  kc.dram_write_bytes / k.launches AS wo," \
	"  (kc.flops_fp32 + kc.flops_fp64 + kc.flops_fp16) / k.launches AS fl," \
	"  coalesce(kc.flops_tensor, 0) / k.launches AS tfl," \
	"  CASE WHEN kc.flops_fp64 > kc.flops_fp32 + kc.flops_fp16 THEN x.fp64_peak" \
	"   ELSE x.fp32_peak END AS peak," \
	"  x.read_bw, x.add_bw, x.copy_bw, x.write_bw" \
	"  FROM kernels k JOIN ops o ON o.id = k.op_id" \
	"  JOIN runs r ON r.id = o.run_id AND r.kind = 'profile'" \
	"  LEFT JOIN devices d ON d.id = r.device_id" \
	"  LEFT JOIN cx x ON x.run_id = o.run_id" \
	"  LEFT JOIN v_kernel_counters kc ON kc.kernel_id = k.id)," \
	" kb AS (SELECT *, " OPPS_BW("wr / (rd + wr)") " AS bw FROM ks)," \
	" kk AS (SELECT *, CASE WHEN rd IS NULL OR wr IS NULL THEN 'no counters'" \
	"  WHEN " OPPS_GEMM_NAME("name") " OR tfl > fl THEN 'gemm'" \
	"  WHEN peak IS NULL OR bw IS NULL THEN 'no ceilings'" \
	"  WHEN fl > 0 AND fl * bw >= peak * (rd + wr) THEN 'compute-bound'" \
	"  ELSE 'memory' END AS cls FROM kb)," \
	/* Launches in order on each stream, with the one before. */ \
	" l0 AS (SELECT l.id AS launch_id, o.run_id, l.op_id, l.rep, l.pid, l.device," \
	"  l.stream, l.kernel_id, l.start_ns, l.end_ns, l.ptrs," \
	/* In a range instance (outside any, each launch is a sample of its
	 * own, of no instance in ranges). */ \
	"  EXISTS (SELECT 1 FROM samples sa JOIN ranges rg ON rg.run_id = o.run_id" \
	"   AND rg.pid = sa.pid AND rg.instance = sa.instance" \
	"   WHERE sa.op_id = l.op_id AND sa.rep = l.rep) AS in_range" \
	"  FROM launches l JOIN ops o ON o.id = l.op_id" \
	"  JOIN runs r ON r.id = o.run_id AND r.kind = 'profile')," \
	" l1 AS (SELECT l.*," \
	"  lag(l.kernel_id) OVER s AS p_kernel, lag(l.end_ns) OVER s AS p_end," \
	"  lag(l.op_id) OVER s AS p_op, lag(l.rep) OVER s AS p_rep," \
	"  lag(l.in_range) OVER s AS p_in_range, lag(l.ptrs) OVER s AS p_ptrs" \
	"  FROM l0 l WINDOW s AS (" OPPS_STREAM " " OPPS_ORDER "))," \
	" l2 AS (SELECT l1.*, c.cls, c.rd, c.wr, c.dur_ns AS med_ns, c.sname, c.path," \
	"  p.cls AS p_cls, p.rd AS p_rd, p.wr AS p_wr, p.sname AS p_sname," \
	"  p.dur_ns AS p_med_ns, l1.start_ns - l1.p_end AS gap_ns," \
	"  coalesce(c.rd >= " FP_OPPS_LINK_FRAC " * p.wr, 0) AS by_bytes," \
	/* 0: both pointer lists whole and no allocation in common */ \
	"  CASE WHEN " OPPS_PTRS_WHOLE("l1.ptrs") " AND " OPPS_PTRS_WHOLE("l1.p_ptrs") \
	"   THEN " OPPS_SHARE_ALLOC " END AS by_ptr," \
	"  coalesce(c.grid_x = p.grid_x AND c.grid_y = p.grid_y AND c.grid_z = p.grid_z" \
	"   AND c.block_x = p.block_x AND c.block_y = p.block_y" \
	"   AND c.block_z = p.block_z, 0) AS by_shape," \
	"  coalesce(c.rd > 0 AND c.wr <= " FP_OPPS_REDUCE_FRAC " * c.rd, 0) AS reduces," \
	"  coalesce(c.rd <= " FP_OPPS_REDUCE_FRAC " * (p.rd + p.wr) AND 2 * c.wo < c.rd, 0)" \
	"   AS c_tail," \
	"  (l1.p_kernel IS NOT NULL AND (l1.in_range OR l1.p_in_range)" \
	"   AND (l1.op_id != l1.p_op OR l1.rep != l1.p_rep)) AS new_range" \
	"  FROM l1 JOIN kk c ON c.kernel_id = l1.kernel_id" \
	"  LEFT JOIN kk p ON p.kernel_id = l1.p_kernel)," \
	/* Why a launch does not join the one before (NULL: it does). */ \
	" l3 AS (SELECT *, CASE WHEN cls != 'memory' THEN cls" \
	"  WHEN p_kernel IS NULL THEN 'stream start'" \
	"  WHEN p_cls != 'memory' THEN p_cls" \
	"  WHEN gap_ns > " FP_OPPS_GAP_NS " THEN printf('gap %d us', CAST(round(gap_ns / 1e3) AS INTEGER))" \
	"  WHEN c_tail THEN 'grid-wide reduction'" \
	"  WHEN by_ptr = 0 THEN 'no shared buffer'" \
	"  WHEN NOT (by_bytes OR by_shape) THEN 'no byte link' END AS brk FROM l2)," \
	" l4 AS (SELECT *, CASE WHEN NOT new_range THEN brk WHEN in_range" \
	"   THEN 'range start' ELSE 'range end' END AS brk_in," \
	"  CASE WHEN brk IS NULL THEN min(p_wr, rd, CASE WHEN by_shape AND wr > 0" \
	"   THEN wr * max(1, CAST(p_wr / wr + " FP_OPPS_TENSOR_SLACK " AS INTEGER))" \
	"   ELSE p_wr END) ELSE 0 END AS i_x FROM l3)," \
	" l5 AS (SELECT *, CASE WHEN brk_in IS NULL THEN i_x ELSE 0 END AS i_in," \
	"  sum(brk IS NOT NULL) OVER s AS seq_x," \
	"  sum(brk_in IS NOT NULL) OVER s AS seq_in" \
	"  FROM l4 WINDOW s AS (" OPPS_STREAM " " OPPS_ORDER "))," \
	/* The largest input a kernel before it in its chain reduced. */ \
	" l6 AS (SELECT *," \
	"  max(CASE WHEN reduces THEN rd END) OVER (" OPPS_STREAM ", seq_x " OPPS_ORDER \
	"   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS red_x," \
	"  max(CASE WHEN reduces THEN rd END) OVER (" OPPS_STREAM ", seq_in " OPPS_ORDER \
	"   ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS red_in FROM l5)," \
	" l6s AS (SELECT *, " OPPS_SHARED("i_x") " AS sh_x, " OPPS_SHARED("i_in") \
	"  AS sh_in FROM l6)," \
	/* Re-reads: reads beyond the producer's output, up to that input, \
	 * or up to one intermediate's size for each buffer of at most that \
	 * size beyond one that it shares with the producer (an input of \
	 * both, read again). */ \
	" l7 AS (SELECT *," \
	"  CASE WHEN brk IS NULL THEN max(0, min(rd - i_x, max(coalesce(red_x, 0)," \
	"   max(sh_x - 1, 0) * i_x))) ELSE 0 END AS dd_x," \
	"  CASE WHEN brk_in IS NULL THEN max(0, min(rd - i_in, max(coalesce(red_in, 0)," \
	"   max(sh_in - 1, 0) * i_in))) ELSE 0 END AS dd_in FROM l6s)," \
	/* The next link's intermediate; an intermediate a reduction consumes
	 * and no later kernel reads again kept (written once); why the chain
	 * ends after this launch. */ \
	" l8 AS (SELECT *," \
	"  coalesce(lead(i_x) OVER s, 0) AS inext_x," \
	"  coalesce(lead(i_in) OVER s, 0) AS inext_in," \
	"  CASE WHEN reduces AND coalesce(lead(dd_x) OVER s, 0) = 0 THEN i_x ELSE 0 END" \
	"   AS kept_x," \
	"  CASE WHEN reduces AND coalesce(lead(dd_in) OVER s, 0) = 0 THEN i_in ELSE 0 END" \
	"   AS kept_in," \
	"  coalesce(lead(brk) OVER s, CASE WHEN lead(launch_id) OVER s IS NULL" \
	"   THEN 'stream end' END) AS after_x," \
	"  CASE WHEN lead(launch_id) OVER s IS NULL THEN 'stream end'" \
	"   WHEN lead(new_range) OVER s THEN CASE WHEN in_range THEN 'range end'" \
	"    ELSE 'range start' END ELSE lead(brk) OVER s END" \
	"   AS after_in" \
	"  FROM l7 WINDOW s AS (" OPPS_STREAM " " OPPS_ORDER "))," \
	" mem AS (" OPPS_MEMBERS("chain", "seq_in", "brk_in IS NULL", "i_in", \
		"dd_in", "inext_in", "kept_in", "brk_in", "after_in") \
	"  UNION ALL " OPPS_MEMBERS("cross-range", "seq_x", "brk IS NULL", "i_x", \
		"dd_x", "inext_x", "kept_x", "brk", "after_x") ")," \
	/* One row a chain instance, then one a chain (its kernel slots). */ \
	" occ AS (SELECT run_id, kind, sig, min(kernels) AS kernels," \
	"  min(first_op) AS op_id, min(first_in) AS first_in, min(range_path) AS range_path," \
	"  min(last_path) AS last_path, min(ends_before) AS ends_before," \
	"  min(ends_after) AS ends_after, min(stream) AS stream, count(*) AS n," \
	"  sum(med_ns) AS time_ns, sum(rd) AS rd, sum(wr) AS wr, sum(frd) AS frd," \
	"  sum(frw) AS fwr, sum(shape_link) AS shape_links," \
	/* Its kernels' bandwidths weighted by their bytes (B/s). */ \
	"  1e9 * sum(bw_w) / sum(rd + wr) AS own_bw," \
	/* Range instances it spans, kernels outside any range one stretch. */ \
	"  count(DISTINCT CASE WHEN in_range THEN op_id || ':' || rep END)" \
	"   + max(NOT in_range) AS ninst" \
	"  FROM mem GROUP BY run_id, pid, device, stream, kind, seq" \
	"  HAVING count(*) >= 2 AND (kind = 'chain' OR ninst > 1))," \
	" g AS (SELECT run_id, kind, sig, min(kernels) AS kernels, min(op_id) AS op_id," \
	"  min(first_in) AS first_in," \
	"  min(range_path) AS range_path, min(last_path) AS last_path," \
	"  min(ends_before) AS ends_before, min(ends_after) AS ends_after," \
	"  min(stream) AS stream, min(n) AS nkernels, count(*) AS instances," \
	"  min(time_ns) AS time_ns, min(rd) AS rd, min(wr) AS wr," \
	"  max(0, min(frd)) AS frd, max(0, min(fwr)) AS fwr, min(shape_links) AS shape_links," \
	"  min(own_bw) AS own_bw" \
	"  FROM occ GROUP BY run_id, kind, sig)," \
	" pt AS (SELECT o.run_id, sum(l.end_ns - l.start_ns) AS gpu_ns" \
	"  FROM launches l JOIN ops o ON o.id = l.op_id GROUP BY o.run_id)," \
	" h AS (SELECT g.*, x.read_bw, x.add_bw, x.copy_bw, x.write_bw," \
	"  CASE WHEN g.first_in THEN o.time_ns END AS range_time_ns, pt.gpu_ns FROM g" \
	"  LEFT JOIN cx x ON x.run_id = g.run_id LEFT JOIN ops o ON o.id = g.op_id" \
	"  LEFT JOIN pt ON pt.run_id = g.run_id)," \
	" p AS (SELECT *, " OPPS_BW("fwr / (frd + fwr)") " AS fused_bw FROM h)," \
	" q AS (SELECT *, 1e9 * (frd + fwr) / fused_bw AS predicted_ns," \
	"  1e9 * (frd + fwr) / min(fused_bw, own_bw) AS predicted_achieved_ns FROM p)," \
	/* GEMMs beside an elementwise kernel: epilogues, prologues. */ \
	" ep AS (SELECT run_id, CASE WHEN cls = 'memory' THEN 'epilogue' ELSE 'prologue' END" \
	"   AS kind, p_kernel || ' ' || kernel_id AS sig," \
	"  min(p_sname || ' > ' || sname) AS kernels, min(op_id) AS op_id," \
	"  min(path) AS range_path, max(new_range) AS crosses," \
	"  min(stream) AS stream, count(*) AS instances," \
	"  min(p_med_ns + med_ns) AS time_ns, min(p_rd + rd) AS rd, min(p_wr + wr) AS wr" \
	"  FROM l3 WHERE p_kernel IS NOT NULL AND gap_ns <= " FP_OPPS_GAP_NS \
	"  AND by_bytes AND ((cls = 'memory' AND p_cls = 'gemm'" \
	"   AND wr >= " FP_OPPS_EPILOGUE_FRAC " * rd)" \
	"   OR (cls = 'gemm' AND p_cls = 'memory'" \
	"   AND p_wr >= " FP_OPPS_EPILOGUE_FRAC " * p_rd))" \
	"  GROUP BY run_id, kind, sig)" \
	" SELECT q.run_id, row_number() OVER (PARTITION BY q.run_id" \
	"  ORDER BY q.instances * (q.time_ns - q.predicted_ns) DESC NULLS LAST," \
	"  q.time_ns DESC, q.sig) AS rank, q.kind, q.range_path," \
	"  CASE WHEN q.kind = 'cross-range' THEN q.last_path END AS last_range_path," \
	"  q.kind = 'cross-range' AS crosses_range, q.nkernels, q.instances, q.kernels," \
	"  q.sig AS kernel_ids, q.stream, q.time_ns, q.rd AS dram_read_bytes," \
	"  q.wr AS dram_write_bytes, q.rd + q.wr AS dram_bytes," \
	"  q.frd AS fused_read_bytes, q.fwr AS fused_write_bytes," \
	"  q.frd + q.fwr AS fused_bytes, q.rd + q.wr - q.frd - q.fwr AS saved_bytes," \
	"  q.fused_bw, q.predicted_ns," \
	"  q.own_bw AS achieved_bw," \
	"  q.predicted_achieved_ns, q.nkernels - 1 AS launches_saved," \
	"  q.time_ns - q.predicted_ns AS gain_ns," \
	"  q.time_ns - q.predicted_achieved_ns AS gain_achieved_ns," \
	"  q.instances * (q.time_ns - q.predicted_ns) AS total_gain_ns," \
	"  q.range_time_ns, CASE WHEN q.kind = 'chain'" \
	"   THEN (q.time_ns - q.predicted_ns) / q.range_time_ns END AS range_gain_frac," \
	"  q.gpu_ns AS program_time_ns," \
	"  q.instances * (q.time_ns - q.predicted_ns) / q.gpu_ns AS program_gain_frac," \
	"  CASE WHEN q.shape_links = 0 THEN 'bytes' WHEN q.shape_links = q.nkernels - 1" \
	"   THEN 'shape' ELSE 'bytes, shape' END AS link_evidence," \
	"  q.ends_before, q.ends_after, q.op_id FROM q" \
	" UNION ALL SELECT ep.run_id, NULL, ep.kind, ep.range_path, NULL, ep.crosses, 2," \
	"  ep.instances, ep.kernels, ep.sig, ep.stream, ep.time_ns, ep.rd, ep.wr," \
	"  ep.rd + ep.wr, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1, NULL, NULL," \
	"  NULL, o.time_ns, NULL, NULL, NULL, 'bytes', NULL, NULL, ep.op_id" \
	"  FROM ep LEFT JOIN ops o ON o.id = ep.op_id"

/* v_runs over a given status expression: the stored view shows the status
 * as stored; readers put fp_run_status() over it (FP_V_RUNS_LIVE_SQL). */
#define V_RUNS_SQL(status) \
	"SELECT r.id AS run_id, r.started_at, r.finished_at, " status " AS status," \
	" r.tag, d.name AS device, r.host, r.tool_version, r.counters," \
	" (SELECT count(*) FROM ops o WHERE o.run_id = r.id) AS ops," \
	" (SELECT count(*) FROM ops o WHERE o.run_id = r.id AND o.status != 'ok')" \
	"   AS failed_ops," \
	" r.command_line, r.note, r.kind" \
	" FROM runs r LEFT JOIN devices d ON d.id = r.device_id"

/* A ceiling of the op p's run and device. */
#define CEIL_OF_P(c) c ".run_id = p.run_id AND " c ".device_id = p.device_id"

const char fp_v_runs_live_sql[] =
	V_RUNS_SQL("fp_run_status(r.status, r.host, r.pid, r.proc_start)");

const struct view_def fp_views[] = {
	{ "v_kernel_counters",
	  "SELECT k.id AS kernel_id, k.op_id,"
	  " " METRIC("dram__bytes_read.sum") " AS dram_read_bytes,"
	  " " METRIC("dram__bytes_write.sum") " AS dram_write_bytes,"
	  " " METRIC(FP_METRIC_DRAM_WRITEBACK) " AS dram_writeback_bytes,"
	  " " METRIC("lts__t_bytes.sum") " AS l2_bytes,"
	  " " METRIC("l1tex__t_bytes.sum") " AS l1_bytes,"
	  " " KERNEL_FLOPS(FLOPS_FP32) " AS flops_fp32,"
	  " " KERNEL_FLOPS(FLOPS_FP64) " AS flops_fp64,"
	  " " KERNEL_FLOPS(FLOPS_FP16) " AS flops_fp16,"
	  " " KERNEL_FLOPS(FLOPS_TENSOR) " AS flops_tensor,"
	  " (SELECT count(*) FROM counters c WHERE c.kernel_id = k.id) AS ncounters"
	  " FROM kernels k",
	  "raw counters of each kernel, pivoted: bytes per memory level (DRAM write-backs of its dirty L2 lines apart) and FLOPs per precision" },

	{ "v_kernels",
	  "SELECT k.id AS kernel_id, o.id AS op_id, o.run_id, o.workload, o.variant,"
	  " o.dtype, o.shape, k.idx, k.name, k.launches, k.dur_ns, k.dur_ns_min,"
	  " k.dur_ns_max, k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y,"
	  " k.block_z, k.registers, k.static_smem, k.dynamic_smem,"
	  " kc.dram_read_bytes, kc.dram_write_bytes, kc.dram_writeback_bytes,"
	  " " DRAM_BYTES("kc.") " AS dram_bytes,"
	  " kc.l2_bytes, kc.l1_bytes, kc.flops_fp32, kc.flops_fp64, kc.flops_fp16,"
	  " kc.flops_tensor, kc.ncounters, o.kernel_opts, o.kernel AS op_kernel"
	  " FROM kernels k JOIN ops o ON o.id = k.op_id"
	  " LEFT JOIN v_kernel_counters kc ON kc.kernel_id = k.id",
	  "one row per kernel of each op: launch configuration, durations (ns), bytes and FLOPs, the op's kernel options and kernel line" },

	{ "v_ops",
	  "SELECT o.id AS op_id, o.run_id, r.started_at AS run_started_at, r.tag,"
	  " d.name AS device, o.workload, o.variant, o.role, o.dtype, o.shape,"
	  " o.status, o.rel_err, o.tolerance, o.reps, o.time_ns, o.time_ns_min,"
	  " o.time_ns_max, o.span_ns, o.launches, o.model_flops,"
	  " o.model_executed_flops, o.model_min_bytes,"
	  " o.model_variant_bytes,"
	  " " OP_METRIC("dram__bytes_read.sum") " AS dram_read_bytes,"
	  " " OP_METRIC("dram__bytes_write.sum") " AS dram_write_bytes,"
	  " " OP_METRIC(FP_METRIC_DRAM_WRITEBACK) " AS dram_writeback_bytes,"
	  " " OP_METRIC("dram__bytes_read.sum") " + " OP_METRIC("dram__bytes_write.sum")
	  "  + coalesce(" OP_METRIC(FP_METRIC_DRAM_WRITEBACK) ", 0) AS dram_bytes,"
	  " " OP_METRIC("lts__t_bytes.sum") " AS l2_bytes,"
	  " " OP_METRIC("l1tex__t_bytes.sum") " AS l1_bytes,"
	  " " OP_FLOPS(FLOPS_FP32) " AS flops_fp32,"
	  " " OP_FLOPS(FLOPS_FP64) " AS flops_fp64,"
	  " " OP_FLOPS(FLOPS_FP16) " AS flops_fp16,"
	  " " OP_FLOPS(FLOPS_TENSOR) " AS flops_tensor,"
	  " count(c.metric) AS ncounters, o.message,"
	  " " NKERNELS " AS nkernels,"
	  " CASE WHEN count(" K_TIME ") = " NKERNELS " AND " NKERNELS " > 0"
	  "  THEN 1e9 * sum(" K_TIME ") END AS dram_roof_ns,"
	  " CASE min(" K_MEASURED ")"
	  "  WHEN 1 THEN 'measured' WHEN 0 THEN 'theoretical' END AS dram_roof_provenance,"
	  " CASE WHEN " K_KNOWN " = " NKERNELS " AND " NKERNELS " > 0 THEN substr(''"
	  K_MIX_NAME(0, "read") K_MIX_NAME(12, "add") K_MIX_NAME(24, "copy")
	  K_MIX_NAME(36, "write") ", 3) END AS dram_mixes,"
	  /* The op's longest kernel (a slot's median x its launches): what
	   * would remain if fusion removed every other kernel's time. */
	  " max(k.dur_ns * k.launches) AS longest_kernel_ns,"
	  /* What ran: the kernel options in force and the kernels the
	   * launcher picked ('' for ops stored before they were recorded). */
	  " o.kernel_opts, o.kernel,"
	  /* What the variant keeps for its backward, and a forward's
	   * backward workload (v_save_recompute pairs them). */
	  " o.model_saved_bytes, o.backward,"
	  /* The device it ran on: its own, else (profiled ops) the run's. */
	  " coalesce(o.device_id, r.device_id) AS device_id"
	  " FROM ops o JOIN runs r ON r.id = o.run_id"
	  " LEFT JOIN devices d ON d.id = coalesce(o.device_id, r.device_id)"
	  " LEFT JOIN (" MIX_CEILINGS ") x ON x.run_id = o.run_id"
	  "  AND x.device_id = coalesce(o.device_id, r.device_id)"
	  " LEFT JOIN kernels k ON k.op_id = o.id"
	  " LEFT JOIN counters kw ON kw.kernel_id = k.id"
	  "  AND kw.metric = 'dram__bytes_write.sum'"
	  " LEFT JOIN counters kb ON kb.kernel_id = k.id"
	  "  AND kb.metric = '" FP_METRIC_DRAM_WRITEBACK "'"
	  " LEFT JOIN counters c ON c.kernel_id = k.id"
	  /* The ops' unique key: its index yields each op's rows together, so
	   * the sums need no sort, and a filter on run_id (v_roofline WHERE
	   * run_id = ?) reaches the ops table. */
	  " GROUP BY o.run_id, o.device_id, o.workload, o.variant, o.dtype, o.shape",
	  "one row per op: check result, median time (ns), its longest kernel, model and measured bytes and FLOPs, kernel options and kernel, bytes kept for the backward, its device" },

	{ "v_runs", V_RUNS_SQL("r.status"),
	  "one row per run: when, where, status, how many ops and how many failed" },

	/* The roofs a run is judged against on each of its devices (the
	 * run's, and those its ops ran on: `run --device all`): per ceiling
	 * name, a measured value beats a theoretical one; among equals, one
	 * taken in this run, then the newest. Reports and v_roofline use this
	 * choice alone. */
	{ "v_ceilings",
	  "SELECT run_id, device_id, name, unit, value, provenance, method,"
	  " measured_at, ceiling_id FROM ("
	  " SELECT r.run_id, c.device_id, c.name, c.unit, c.value,"
	  "  c.provenance, c.method, c.measured_at, c.id AS ceiling_id,"
	  "  row_number() OVER (PARTITION BY r.run_id, r.device_id, c.name ORDER BY"
	  "   c.provenance = 'measured' DESC, c.run_id IS r.run_id DESC, c.id DESC) AS rk"
	  " FROM (SELECT id AS run_id, device_id FROM runs WHERE device_id IS NOT NULL"
	  "  UNION SELECT DISTINCT run_id, device_id FROM ops"
	  "  WHERE device_id IS NOT NULL) r"
	  " JOIN ceilings c ON c.device_id = r.device_id)"
	  " WHERE rk = 1",
	  "per run, device and ceiling name, the roof used: measured if there is one, else theoretical" },

	/* Per op: intensity at each memory level and the attainable roof
	 * min(peak, AI x bandwidth) for the op's dominant precision. A missing
	 * ceiling leaves its roof NULL rather than borrowing another one; an op
	 * without counters has NULL FLOPs and bytes. Times are ns, so rates
	 * scale by 1e9. The DRAM bandwidth is the op's own: its write fraction
	 * f = (written + written back) / DRAM bytes placed between the DRAM
	 * ceilings measured at fixed mixes (FP_DRAM_BW_SQL in views.h).
	 * reports/roofline.c holds the reference of this math. */
	{ "v_roofline",
	  "SELECT op_id, run_id, device, workload, variant, role, dtype, shape,"
	  " status, time_ns, launches, flops, flops_fp32, flops_fp64, flops_fp16,"
	  " flops_tensor, precision, dram_read_bytes, dram_write_bytes,"
	  " dram_writeback_bytes, dram_bytes, l2_bytes, l1_bytes,"
	  " ai_dram, ai_l2, ai_l1, flop_rate, dram_rate, l2_rate,"
	  " peak_flop_rate, peak_provenance, dram_bw, dram_bw_provenance,"
	  " dram_write_frac, dram_bw_basis, l2_bw, l2_bw_provenance,"
	  " min(peak_flop_rate, ai_dram * dram_bw) AS roof,"
	  " 100.0 * flop_rate / min(peak_flop_rate, ai_dram * dram_bw) AS roof_pct,"
	  " min(peak_flop_rate, ai_l2 * l2_bw) AS roof_l2,"
	  " 100.0 * flop_rate / min(peak_flop_rate, ai_l2 * l2_bw) AS roof_l2_pct,"
	  " CASE WHEN ai_dram * dram_bw < peak_flop_rate THEN 'memory'"
	  "  WHEN ai_dram * dram_bw >= peak_flop_rate THEN 'compute' END AS bound,"
	  " model_flops, model_executed_flops, model_min_bytes, model_variant_bytes,"
	  " dram_bytes / model_min_bytes AS traffic_eff,"
	  " 1e9 * model_min_bytes / time_ns AS eff_bw,"
	  " 100.0 * (1e9 * model_min_bytes / time_ns) / dram_bw AS eff_bw_pct,"
	  " rel_err, tolerance, message, longest_kernel_ns, kernel_opts, kernel,"
	  " model_saved_bytes, backward, device_id FROM ("
	  " SELECT m.*, " FP_DRAM_BW_SQL " FROM ("
	  " SELECT p.*, flops / dram_bytes AS ai_dram, flops / l2_bytes AS ai_l2,"
	  "  flops / l1_bytes AS ai_l1, 1e9 * flops / time_ns AS flop_rate,"
	  "  1e9 * dram_bytes / time_ns AS dram_rate,"
	  "  1e9 * l2_bytes / time_ns AS l2_rate,"
	  "  cp.value AS peak_flop_rate, cp.provenance AS peak_provenance,"
	  "  cr.value AS read_bw, cr.provenance AS read_prov,"
	  "  ca.value AS add_bw, ca.provenance AS add_prov,"
	  "  cd.value AS copy_bw, cd.provenance AS copy_prov,"
	  "  cw.value AS write_bw, cw.provenance AS write_prov,"
	  "  cl.value AS l2_bw, cl.provenance AS l2_bw_provenance FROM ("
	  "  SELECT o.op_id, o.run_id, o.device, o.workload, o.variant, o.role,"
	  "   o.dtype, o.shape, o.status, o.time_ns, o.launches,"
	  "   CASE WHEN o.ncounters > 0 THEN o.flops_fp32 + o.flops_fp64"
	  "    + o.flops_fp16 + coalesce(o.flops_tensor, 0) END AS flops,"
	  "   CASE WHEN o.ncounters > 0 THEN o.flops_fp32 END AS flops_fp32,"
	  "   CASE WHEN o.ncounters > 0 THEN o.flops_fp64 END AS flops_fp64,"
	  "   CASE WHEN o.ncounters > 0 THEN o.flops_fp16 END AS flops_fp16,"
	  "   CASE WHEN o.ncounters > 0 THEN coalesce(o.flops_tensor, 0) END AS flops_tensor,"
	  "   CASE WHEN coalesce(o.flops_tensor, 0) > o.flops_fp32 + o.flops_fp64 + o.flops_fp16"
	  "    THEN CASE WHEN o.dtype = 'bf16' THEN 'tensor_bf16' ELSE 'tensor_tf32' END"
	  "    WHEN o.flops_fp64 > o.flops_fp32 + o.flops_fp16 THEN 'fp64_fma'"
	  "    ELSE 'fp32_fma' END AS precision,"
	  "   o.dram_read_bytes, o.dram_write_bytes, o.dram_writeback_bytes,"
	  "   o.dram_bytes, o.l2_bytes, o.l1_bytes,"
	  "   (o.dram_write_bytes + coalesce(o.dram_writeback_bytes, 0))"
	  "    / (1.0 * o.dram_bytes) AS dram_write_frac,"
	  "   o.model_flops,"
	  "   coalesce(o.model_executed_flops, o.model_flops) AS model_executed_flops,"
	  "   o.model_min_bytes,"
	  "   o.model_variant_bytes, o.rel_err, o.tolerance, o.message,"
	  "   o.longest_kernel_ns, o.kernel_opts, o.kernel, o.nkernels,"
	  "   o.dram_roof_ns, o.dram_roof_provenance, o.dram_mixes,"
	  "   o.model_saved_bytes, o.backward, o.device_id"
	  "  FROM v_ops o) p"
	  " LEFT JOIN v_ceilings cp ON " CEIL_OF_P("cp") " AND cp.name = p.precision"
	  " LEFT JOIN v_ceilings cr ON " CEIL_OF_P("cr") " AND cr.name = 'dram_read_bw'"
	  " LEFT JOIN v_ceilings ca ON " CEIL_OF_P("ca") " AND ca.name = 'dram_add_bw'"
	  " LEFT JOIN v_ceilings cd ON " CEIL_OF_P("cd") " AND cd.name = 'dram_bw'"
	  " LEFT JOIN v_ceilings cw ON " CEIL_OF_P("cw") " AND cw.name = 'dram_write_bw'"
	  " LEFT JOIN v_ceilings cl ON " CEIL_OF_P("cl") " AND cl.name = 'l2_bw') m)",
	  "one row per op: FLOPs, bytes and intensity per level, achieved rates, the DRAM roof of its read/write mix, roof and % of roof" },

	/* Each fused variant against every other variant of the same run,
	 * workload, dtype and shape; both must have passed their check, so a
	 * wrong op never shows a gain. Ratios are base / fused: above 1 means
	 * the fused variant is faster, moves fewer bytes, launches less; a
	 * fused variant slower than its fastest unfused twin gets a note
	 * saying whether fusion can pay there at all. The SELECT is
	 * FP_FUSION_SQL in views.h, shared with `fuseprof report`. */
	{ "v_fusion", FP_FUSION_SQL("v_roofline"),
	  "fused vs each other variant of one workload, dtype and shape: speedup, byte and launch ratios, predicted speedup; the most fusion can win against an unfused variant; the kernels both ops run and how much longer they took in the fused one; and a note where the fused variant loses (fusion cannot pay here, or a missing kernel, and whether the shared kernels took longer)" },

	/* Save or recompute: each forward variant beside its backward
	 * variant of the same name, their total time, and what keeping less
	 * for the backward saves and costs against the pattern's other
	 * variants (FP_SAVED_SQL in views.h, shared with `fuseprof report`). */
	{ "v_save_recompute", FP_SAVED_SQL("v_roofline"),
	  "each forward variant with its backward of the same name: bytes kept for the backward, forward+backward time and DRAM bytes, memory saved and time paid against the pattern's other variants" },

	/* The ops whose numbers cannot be right, one row per rule broken: the
	 * rules and their thresholds are in views.h (FP_DISTRUST_*). Ops that
	 * failed their check are left out: they are listed as wrong already,
	 * and no number of theirs is used anywhere. */
	{ "v_distrust", FP_DISTRUST_SQL("v_roofline"),
	  "ops whose numbers are impossible, one row per rule broken: DRAM bytes below the model's minimum, above a roof, counted FLOPs far off the model's" },

	/* Fusion candidates of profiled runs: chains of memory-bound
	 * launches a producer->consumer link joins, with the bytes a fused
	 * kernel must move and the time and gain predicted at the DRAM roof
	 * (views.h: FP_OPPS_*, the rules and how wrong they can be). */
	{ "v_fusion_candidates", OPPS_SQL,
	  "fusion candidates of profiled runs: chains of memory-bound kernels on one stream, the bytes fused, predicted time and gain, ranked" },

	/* Each range of a profiled run with candidate chains inside it, and
	 * its time were they fused: the range's median time less its chains'
	 * gains a range instance (each chain's gain times its occurrences
	 * over the range's samples; a chain predicted to lose counts 0), at
	 * the DRAM roof and at the chains' own bandwidth. */
	{ "v_fusion_predicted",
	  "SELECT run_id, op_id, workload, samples, chains, time_ns,"
	  " g / samples AS gain_ns, ga / samples AS gain_achieved_ns,"
	  " time_ns - g / samples AS predicted_ns,"
	  " time_ns - ga / samples AS predicted_achieved_ns"
	  " FROM (SELECT c.run_id, c.op_id, o.workload,"
	  "  (SELECT count(*) FROM samples s WHERE s.op_id = c.op_id) AS samples,"
	  "  count(*) AS chains, o.time_ns,"
	  "  sum(max(c.gain_ns, 0) * c.instances) AS g,"
	  "  sum(max(c.gain_achieved_ns, 0) * c.instances) AS ga"
	  "  FROM v_fusion_candidates c JOIN ops o ON o.id = c.op_id"
	  "  WHERE c.kind = 'chain' AND c.range_time_ns IS NOT NULL"
	  "  GROUP BY c.run_id, c.op_id)",
	  "each range of a profiled run with fusion candidates: its time, and its time predicted were its chains fused (at the DRAM roof and at the chains' own bandwidth)" },

	/* Each op against the same op (workload, variant, dtype, shape) in the
	 * latest earlier run on the same GPU model (devices.name) that had it;
	 * an op with no such predecessor has no row. A run holds at most one op
	 * per key, so lag() over that partition ordered by run is exactly the
	 * predecessor, in one sort instead of a lookup per op. Ratios are
	 * new / base: above 1 means slower, more bytes, more FLOPs. No noise
	 * model here: `fuseprof compare` judges timing against the spread of the
	 * reps. FLOPs count every precision, as in v_roofline; NULL without
	 * counters. The kernel options and kernels of both sides show whether
	 * a ratio compares one kernel or two. */
	{ "v_regressions",
	  "SELECT run_id, op_id, base_run_id, base_op_id, device, workload, variant,"
	  " dtype, shape, base_status, status,"
	  " CASE WHEN base_status = 'ok' AND status != 'ok' THEN 1 ELSE 0 END AS became_wrong,"
	  " base_time_ns, time_ns, time_ns / base_time_ns AS time_ratio,"
	  " base_dram_bytes, dram_bytes, dram_bytes / base_dram_bytes AS dram_ratio,"
	  " base_flops, flops, flops / base_flops AS flops_ratio,"
	  " base_launches, launches, base_kernel_opts, kernel_opts, base_kernel, kernel FROM ("
	  " SELECT *, lag(run_id) OVER w AS base_run_id, lag(op_id) OVER w AS base_op_id,"
	  "  lag(status) OVER w AS base_status, lag(time_ns) OVER w AS base_time_ns,"
	  "  lag(dram_bytes) OVER w AS base_dram_bytes, lag(flops) OVER w AS base_flops,"
	  "  lag(launches) OVER w AS base_launches,"
	  "  lag(kernel_opts) OVER w AS base_kernel_opts, lag(kernel) OVER w AS base_kernel FROM ("
	  "  SELECT op_id, run_id, device, device_id, workload, variant, dtype, shape,"
	  "   status, time_ns, launches, dram_bytes, kernel_opts, kernel,"
	  "   CASE WHEN ncounters > 0 THEN flops_fp32 + flops_fp64 + flops_fp16"
	  "    + coalesce(flops_tensor, 0) END AS flops FROM v_ops)"
	  " WINDOW w AS (PARTITION BY device, workload, variant, dtype, shape"
	  "  ORDER BY run_id, device_id))"
	  /* A run on several GPUs of one model: its first device's op
	   * against the previous run's last, not one GPU against another of
	   * the same run. */
	  " WHERE base_op_id IS NOT NULL AND base_run_id < run_id",
	  "each op against the same op in the previous run on the same GPU model: time, DRAM-byte and FLOP ratios (new / base), both sides' kernel options and kernels" },

	/* Stragglers: each op of a profiled run whose processes say their
	 * rank (procs.rank, from the launcher), its time over the ranks. A
	 * rank's time is the median of its samples (range instances), as an
	 * op's time_ns is over all of them; a rank of several processes
	 * (workers that inherit RANK) pools their samples. Over the ranks:
	 * least, median, most, the rank-to-rank spread (most / least), and
	 * the slowest rank with its host and the fastest. A median of an
	 * even count is the mean of the middle two, as median_of() takes it. */
	{ "v_rank_spread",
	  "WITH s AS (SELECT o.run_id, o.id AS op_id, o.workload, p.rank, x.time_ns,"
	  "  row_number() OVER (PARTITION BY o.id, p.rank ORDER BY x.time_ns) AS i,"
	  "  count(*) OVER (PARTITION BY o.id, p.rank) AS n"
	  "  FROM samples x JOIN procs p ON p.id = x.proc_id"
	  "  JOIN ops o ON o.id = x.op_id WHERE p.rank IS NOT NULL),"
	  " k AS (SELECT run_id, op_id, workload, rank, max(n) AS samples,"
	  "  avg(time_ns) AS time_ns FROM s WHERE i IN ((n + 1) / 2, n / 2 + 1)"
	  "  GROUP BY op_id, rank),"
	  " w AS (SELECT k.*, row_number() OVER (PARTITION BY op_id ORDER BY time_ns) AS j,"
	  "  count(*) OVER (PARTITION BY op_id) AS m,"
	  "  first_value(rank) OVER (PARTITION BY op_id ORDER BY time_ns DESC, rank)"
	  "   AS slow,"
	  "  first_value(rank) OVER (PARTITION BY op_id ORDER BY time_ns, rank) AS fast"
	  "  FROM k)"
	  " SELECT run_id, op_id, workload, max(m) AS ranks, sum(samples) AS samples,"
	  " min(time_ns) AS time_ns_min,"
	  " avg(CASE WHEN j IN ((m + 1) / 2, m / 2 + 1) THEN time_ns END) AS time_ns_median,"
	  " max(time_ns) AS time_ns_max, max(time_ns) / min(time_ns) AS spread,"
	  " max(slow) AS slowest_rank,"
	  " (SELECT min(p.host) FROM procs p WHERE p.run_id = w.run_id"
	  "  AND p.rank = max(w.slow)) AS slowest_host,"
	  " max(fast) AS fastest_rank"
	  " FROM w GROUP BY op_id",
	  "per op of a profiled run with ranks: each rank's median time, their least, median and most over the ranks (ns), the spread (most / least) and the slowest rank (the straggler) with its host" },

	{ NULL, NULL, NULL }
};

const char *views_signature(void)
{
	static char sig[24];
	uint64_t h = 0xcbf29ce484222325ull;  /* FNV-1a */

	if (sig[0])
		return sig;
	for (const struct view_def *v = fp_views; v->name; v++) {
		for (const char *p = v->name; *p; p++)
			h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
		for (const char *p = v->sql; *p; p++)
			h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	}
	snprintf(sig, sizeof sig, "%016llx", (unsigned long long)h);
	return sig;
}
