/* views.c - the public SQL views. Derived numbers (bytes, FLOPs, intensity,
 * % of roof) are computed here from raw counters, never stored, so a
 * formula fix needs no re-run: databases pick up new views on open. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "views.h"

/* FLOPs follow Nsight Compute's roofline sections: add + mul + 2 * fma per
 * precision, from thread-level instruction counts with predicates on. */
#define SUM_METRIC(m) "sum(CASE WHEN c.metric = '" m "' THEN c.value END)"

const struct view_def fp_views[] = {
	{ "v_kernel_counters",
	  "SELECT k.id AS kernel_id, k.op_id,"
	  " " SUM_METRIC("dram__bytes_read.sum") " AS dram_read_bytes,"
	  " " SUM_METRIC("dram__bytes_write.sum") " AS dram_write_bytes,"
	  " " SUM_METRIC("lts__t_bytes.sum") " AS l2_bytes,"
	  " " SUM_METRIC("l1tex__t_bytes.sum") " AS l1_bytes,"
	  " coalesce(" SUM_METRIC("sm__sass_thread_inst_executed_op_fadd_pred_on.sum") ", 0)"
	  " + coalesce(" SUM_METRIC("sm__sass_thread_inst_executed_op_fmul_pred_on.sum") ", 0)"
	  " + 2 * coalesce(" SUM_METRIC("sm__sass_thread_inst_executed_op_ffma_pred_on.sum") ", 0)"
	  "   AS flops_fp32,"
	  " coalesce(" SUM_METRIC("sm__sass_thread_inst_executed_op_dadd_pred_on.sum") ", 0)"
	  " + coalesce(" SUM_METRIC("sm__sass_thread_inst_executed_op_dmul_pred_on.sum") ", 0)"
	  " + 2 * coalesce(" SUM_METRIC("sm__sass_thread_inst_executed_op_dfma_pred_on.sum") ", 0)"
	  "   AS flops_fp64,"
	  " coalesce(" SUM_METRIC("sm__sass_thread_inst_executed_op_hadd_pred_on.sum") ", 0)"
	  " + coalesce(" SUM_METRIC("sm__sass_thread_inst_executed_op_hmul_pred_on.sum") ", 0)"
	  " + 2 * coalesce(" SUM_METRIC("sm__sass_thread_inst_executed_op_hfma_pred_on.sum") ", 0)"
	  "   AS flops_fp16,"
	  " " SUM_METRIC("sm__ops_path_tensor_src_bf16_dst_fp32.sum") " AS flops_tensor,"
	  " count(c.metric) AS ncounters"
	  " FROM kernels k LEFT JOIN counters c ON c.kernel_id = k.id"
	  " GROUP BY k.id",
	  "raw counters of each kernel, pivoted: bytes per memory level and FLOPs per precision" },

	{ "v_kernels",
	  "SELECT k.id AS kernel_id, o.id AS op_id, o.run_id, o.workload, o.variant,"
	  " o.dtype, o.shape, k.idx, k.name, k.launches, k.dur_ns, k.dur_ns_min,"
	  " k.dur_ns_max, k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y,"
	  " k.block_z, k.registers, k.static_smem, k.dynamic_smem,"
	  " kc.dram_read_bytes, kc.dram_write_bytes,"
	  " kc.dram_read_bytes + kc.dram_write_bytes AS dram_bytes,"
	  " kc.l2_bytes, kc.l1_bytes, kc.flops_fp32, kc.flops_fp64, kc.flops_fp16,"
	  " kc.flops_tensor, kc.ncounters"
	  " FROM kernels k JOIN ops o ON o.id = k.op_id"
	  " LEFT JOIN v_kernel_counters kc ON kc.kernel_id = k.id",
	  "one row per kernel of each op: launch configuration, durations (ns), bytes and FLOPs" },

	{ "v_ops",
	  "SELECT o.id AS op_id, o.run_id, r.started_at AS run_started_at, r.tag,"
	  " d.name AS device, o.workload, o.variant, o.role, o.dtype, o.shape,"
	  " o.status, o.rel_err, o.tolerance, o.reps, o.time_ns, o.time_ns_min,"
	  " o.time_ns_max, o.span_ns, o.launches, o.model_flops, o.model_min_bytes,"
	  " o.model_variant_bytes,"
	  " sum(kc.dram_read_bytes) AS dram_read_bytes,"
	  " sum(kc.dram_write_bytes) AS dram_write_bytes,"
	  " sum(kc.dram_read_bytes) + sum(kc.dram_write_bytes) AS dram_bytes,"
	  " sum(kc.l2_bytes) AS l2_bytes, sum(kc.l1_bytes) AS l1_bytes,"
	  " sum(kc.flops_fp32) AS flops_fp32, sum(kc.flops_fp64) AS flops_fp64,"
	  " sum(kc.flops_fp16) AS flops_fp16, sum(kc.flops_tensor) AS flops_tensor,"
	  " coalesce(sum(kc.ncounters), 0) AS ncounters, o.message"
	  " FROM ops o JOIN runs r ON r.id = o.run_id"
	  " LEFT JOIN devices d ON d.id = r.device_id"
	  " LEFT JOIN v_kernel_counters kc ON kc.op_id = o.id"
	  " GROUP BY o.id",
	  "one row per op: check result, median time (ns), model and measured bytes and FLOPs" },

	{ "v_runs",
	  "SELECT r.id AS run_id, r.started_at, r.finished_at, r.status, r.tag,"
	  " d.name AS device, r.host, r.tool_version, r.counters,"
	  " (SELECT count(*) FROM ops o WHERE o.run_id = r.id) AS ops,"
	  " (SELECT count(*) FROM ops o WHERE o.run_id = r.id AND o.status != 'ok')"
	  "   AS failed_ops,"
	  " r.command_line, r.note"
	  " FROM runs r LEFT JOIN devices d ON d.id = r.device_id",
	  "one row per run: when, where, status, how many ops and how many failed" },

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
