/* render.c - the report's files: Markdown for reading in a repository, one
 * self-contained HTML page (plots as base64 data) for a browser, CSV and
 * JSON tables in base units for scripts. Numbers come from the views only. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "against.h"
#include "error.h"
#include "fusion.h"
#include "opps.h"
#include "plot.h"
#include "render.h"
#include "roofline.h"
#include "ranks.h"
#include "saved.h"
#include "table.h"
#include "util.h"
#include "views.h"

const char *const report_ceiling_names[] = {
	"dram_bw", "dram_read_bw", "dram_add_bw", "dram_write_bw", "l2_bw",
	"fp32_fma", "fp64_fma", "tensor_bf16", "tensor_tf32", NULL
};

int report_parse_formats(const char *list, unsigned *formats, const char **bad)
{
	static const struct {
		const char *name;
		unsigned bit;
	} names[] = {
		{ "md", REPORT_MD }, { "markdown", REPORT_MD }, { "html", REPORT_HTML },
		{ "csv", REPORT_CSV }, { "json", REPORT_JSON }, { "all", REPORT_ALL },
	};
	unsigned f = 0;

	for (const char *p = list; ; ) {
		size_t n = strcspn(p, ","), i;

		for (i = 0; i < ARRAY_SIZE(names); i++)
			if (strlen(names[i].name) == n && !strncmp(p, names[i].name, n))
				break;
		if (i == ARRAY_SIZE(names)) {
			*bad = p;
			return -1;
		}
		f |= names[i].bit;
		if (!p[n])
			break;
		p += n + 1;
	}
	*formats = f;
	return 0;
}

/* ---- the tables ---------------------------------------------------------- */

static int is_ok(const struct rf_op *op)
{
	return !strcmp(op->status, "ok");
}

static void run_table(const struct report *r, struct table *t)
{
	static const char *const hdr[] = { "field", "value" };
	const struct rf_run *run = r->run;
	char buf[64];
	const char *rows[][2] = {
		{ "device", *run->device ? run->device : "unknown" },
		{ "run", NULL },
		{ "tag", run->tag },
		{ "status", run->status },
		{ "started", run->started_at },
		{ "finished", run->finished_at },
		{ "host", run->host },
		{ "measured with", run->tool_version },
		{ "counters", run->counters },
		{ "command", run->command_line },
		{ "database", r->db_path },
		{ "workloads shown", r->workloads ? r->workloads : "all" },
		{ "report by", "fuseprof " PACKAGE_VERSION },
	};

	snprintf(buf, sizeof buf, "%lld", run->id);
	rows[1][1] = buf;
	table_init(t, 2, hdr);
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		table_add_text(t, rows[i][0]);
		table_add_text(t, rows[i][1]);
	}
}

static void ceilings_table(const struct rf_run *run, struct table *t, int display)
{
	static const char *const hdr[] = { "ceiling", "value", "unit", "provenance", "method" };

	table_init(t, 5, hdr);
	for (const char *const *n = report_ceiling_names; *n; n++) {
		const struct rf_ceiling *c = rf_ceiling(run, *n);

		table_add_text(t, *n);
		if (!c) {
			table_add_null(t);
			table_add_null(t);
			table_add_text(t, "missing");
			table_add_null(t);
			continue;
		}
		if (display) {
			table_add_double(t, c->value / 1e12, 4);
			table_add_text(t, !strcmp(c->unit, "B/s") ? "TB/s" : "TFLOP/s");
		} else {
			table_add_double(t, c->value, 15);
			table_add_text(t, c->unit);
		}
		table_add_text(t, c->provenance);
		table_add_text(t, c->method);
	}
	/* Ceilings the collector added beyond the ones the report knows. */
	for (int i = 0; i < run->nceilings; i++) {
		const struct rf_ceiling *c = &run->ceilings[i];
		const char *const *n;

		for (n = report_ceiling_names; *n && strcmp(*n, c->name); n++)
			;
		if (*n)
			continue;
		table_add_text(t, c->name);
		table_add_double(t, display ? c->value / 1e12 : c->value, display ? 4 : 15);
		table_add_text(t, display ? (!strcmp(c->unit, "B/s") ? "TB/s" : "TFLOP/s")
					  : c->unit);
		table_add_text(t, c->provenance);
		table_add_text(t, c->method);
	}
}

/* Every column of v_roofline, base units: for CSV and JSON. */
static void ops_table_full(const struct rf_run *run, struct table *t)
{
	static const char *const hdr[] = {
		"op_id", "workload", "variant", "role", "dtype", "shape", "status",
		"time_ns", "launches", "flops", "flops_fp32", "flops_fp64", "flops_fp16",
		"flops_tensor", "precision", "dram_read_bytes", "dram_write_bytes",
		"dram_writeback_bytes", "dram_bytes", "l2_bytes", "l1_bytes",
		"ai_dram", "ai_l2", "ai_l1", "flop_rate", "dram_rate", "l2_rate",
		"peak_flop_rate", "peak_provenance", "dram_bw", "dram_bw_provenance",
		"dram_write_frac", "dram_bw_basis",
		"l2_bw", "l2_bw_provenance", "roof", "roof_pct", "roof_l2", "roof_l2_pct",
		"bound", "model_flops", "model_min_bytes", "model_variant_bytes",
		"traffic_eff", "eff_bw", "eff_bw_pct", "rel_err", "tolerance", "message",
		"kernel_opts", "kernel", "device", "device_id",
	};

	table_init(t, (int)ARRAY_SIZE(hdr), hdr);
	for (size_t i = 0; i < run->nops; i++) {
		const struct rf_op *o = &run->ops[i];
		const double nums1[] = { o->time_ns, o->launches, o->flops, o->flops_fp32,
					 o->flops_fp64, o->flops_fp16, o->flops_tensor };
		const double nums2[] = { o->dram_read_bytes, o->dram_write_bytes,
					 o->dram_writeback_bytes, o->dram_bytes,
					 o->l2_bytes, o->l1_bytes,
					 o->ai_dram, o->ai_l2, o->ai_l1, o->flop_rate,
					 o->dram_rate, o->l2_rate, o->peak_flop_rate };

		table_add_int(t, o->op_id);
		table_add_text(t, o->workload);
		table_add_text(t, o->variant);
		table_add_text(t, o->role);
		table_add_text(t, o->dtype);
		table_add_text(t, o->shape);
		table_add_text(t, o->status);
		for (size_t k = 0; k < ARRAY_SIZE(nums1); k++)
			table_add_double(t, nums1[k], 10);
		table_add_text(t, o->precision);
		for (size_t k = 0; k < ARRAY_SIZE(nums2); k++)
			table_add_double(t, nums2[k], 10);
		table_add_text(t, *o->peak_provenance ? o->peak_provenance : NULL);
		table_add_double(t, o->dram_bw, 10);
		table_add_text(t, *o->dram_bw_provenance ? o->dram_bw_provenance : NULL);
		table_add_double(t, o->dram_write_frac, 10);
		table_add_text(t, *o->dram_bw_basis ? o->dram_bw_basis : NULL);
		table_add_double(t, o->l2_bw, 10);
		table_add_text(t, *o->l2_bw_provenance ? o->l2_bw_provenance : NULL);
		table_add_double(t, o->roof, 10);
		table_add_double(t, o->roof_pct, 10);
		table_add_double(t, o->roof_l2, 10);
		table_add_double(t, o->roof_l2_pct, 10);
		table_add_text(t, *o->bound ? o->bound : NULL);
		table_add_double(t, o->model_flops, 10);
		table_add_double(t, o->model_min_bytes, 10);
		table_add_double(t, o->model_variant_bytes, 10);
		table_add_double(t, o->traffic_eff, 10);
		table_add_double(t, o->eff_bw, 10);
		table_add_double(t, o->eff_bw_pct, 10);
		table_add_double(t, o->rel_err, 10);
		table_add_double(t, o->tolerance, 10);
		table_add_text(t, o->message);
		table_add_text(t, o->kernel_opts);
		table_add_text(t, o->kernel);
		table_add_text(t, *o->device ? o->device : NULL);
		if (o->device_id > 0)
			table_add_int(t, o->device_id);
		else
			table_add_null(t);
	}
}

/* What each rule of v_distrust measures, for the reader, in full (the
 * section) or short (the ops table); a reason this build does not know
 * shows as it is. */
static const char *flag_what(const char *reason, int brief)
{
	static const char *const what[][3] = {
		{ "traffic_below_min", "DRAM bytes ÷ model minimum", "bytes < min" },
		{ "above_roof", "% of roof", "> roof" },
		{ "above_l2_roof", "% of L2 roof", "> L2 roof" },
		{ "flops_off_model", "counted ÷ model FLOPs", "FLOPs ≠ model" },
		{ "flops_without_model", "counted FLOPs, model 0", "FLOPs, model 0" },
		{ "unsteady_time", "median ÷ fastest repetition", "unsteady" },
		{ "writeback_above_l2", "DRAM writes ÷ L2 bytes", "writes > L2" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(what); i++)
		if (!strcmp(reason, what[i][0]))
			return what[i][brief ? 2 : 1];
	return reason;
}

/* Does flag f come before op o in the order both were read in (workload,
 * then op id; strcmp is SQLite's BINARY collation)? */
static int flag_before(const struct rf_flag *f, const struct rf_op *o)
{
	int c = strcmp(f->workload, o->workload);

	return c < 0 || (c == 0 && f->op_id < o->op_id);
}

/* The ops that passed, in reading units: for Markdown and HTML. The
 * distrust column (the rules an op's numbers break, in short) shows when
 * some op breaks one, so a flagged number is marked where it is read. The
 * kernel column (the kernels each launcher picked, else the options in
 * force) shows when some op says either: runs stored before they were
 * recorded keep their table as it was. */
static void ops_table_display(const struct rf_run *run, struct table *t)
{
	static const char *const base[] = {
		"workload", "variant", "dtype", "shape", "time µs", "DRAM MB",
		"AI FLOP/B", "TFLOP/s", "DRAM GB/s", "% of roof", "bound",
		"bytes / min", "min-byte GB/s", "% of DRAM bw",
	};
	const char *hdr[ARRAY_SIZE(base) + 2];
	struct strbuf sb = STRBUF_INIT;
	int kernel = 0, n = (int)ARRAY_SIZE(base);
	size_t j = 0;

	for (size_t i = 0; i < run->nops; i++)
		kernel |= *run->ops[i].kernel || *run->ops[i].kernel_opts;
	memcpy(hdr, base, sizeof base);
	if (run->nflags)
		hdr[n++] = "distrust";
	if (kernel)
		hdr[n++] = "kernel";
	table_init(t, n, hdr);
	for (size_t i = 0; i < run->nops; i++) {
		const struct rf_op *o = &run->ops[i];

		/* Flags and ops come in the same order: walk both. */
		strbuf_reset(&sb);
		for (; j < run->nflags && flag_before(&run->flags[j], o); j++)
			;
		for (; j < run->nflags && run->flags[j].op_id == o->op_id; j++)
			strbuf_addf(&sb, "%s%s", sb.len ? ", " : "",
				    flag_what(run->flags[j].reason, 1));
		if (!is_ok(o))
			continue;
		table_add_text(t, o->workload);
		table_add_text(t, o->variant);
		table_add_text(t, o->dtype);
		table_add_text(t, o->shape);
		table_add_double(t, o->time_ns / 1e3, 4);
		table_add_double(t, o->dram_bytes / 1e6, 4);
		table_add_double(t, o->ai_dram, 3);
		table_add_double(t, o->flop_rate / 1e12, 3);
		table_add_double(t, o->dram_rate / 1e9, 4);
		table_add_double(t, o->roof_pct, 3);
		table_add_text(t, *o->bound ? o->bound : NULL);
		table_add_double(t, o->traffic_eff, 3);
		table_add_double(t, o->eff_bw / 1e9, 4);
		table_add_double(t, o->eff_bw_pct, 3);
		if (run->nflags)
			table_add_text(t, sb.len ? strbuf_str(&sb) : NULL);
		if (kernel)
			table_add_text(t, *o->kernel ? o->kernel
				       : *o->kernel_opts ? o->kernel_opts : NULL);
	}
	strbuf_release(&sb);
}

static void fusion_table(const struct fu_pairs *p, struct table *t, int display)
{
	static const char *const full[] = {
		"workload", "dtype", "shape", "fused_op_id", "fused_variant",
		"base_op_id", "base_variant", "base_role", "fused_time_ns",
		"base_time_ns", "speedup", "fused_dram_bytes", "base_dram_bytes",
		"dram_ratio", "fused_launches", "base_launches", "launch_ratio",
		"fused_model_bytes", "base_model_bytes", "predicted_speedup",
		"kernel_ceiling", "fused_roof_pct", "base_roof_pct", "fused_eff_bw_pct", "base_eff_bw_pct",
		"best_unfused", "fusion_removed_bytes", "fusion_removed_launches",
		"fusion_bound_ns", "fusion_bound_pct", "shared_kernels",
		"shared_delta_ns", "own_ratio", "fusion_note",
	};
	static const char *const disp[] = {
		"workload", "dtype", "shape", "fused", "vs", "fused µs", "vs µs",
		"speedup", "predicted", "ceiling", "DRAM bytes ÷", "launches ÷",
		"fused % of roof", "note",
	};

	if (!display) {
		table_init(t, (int)ARRAY_SIZE(full), full);
		for (size_t i = 0; i < p->n; i++) {
			const struct fu_pair *x = &p->v[i];
			const double nums[] = {
				x->fused_time_ns, x->base_time_ns, x->speedup,
				x->fused_dram_bytes, x->base_dram_bytes, x->dram_ratio,
				x->fused_launches, x->base_launches, x->launch_ratio,
				x->fused_model_bytes, x->base_model_bytes,
				x->predicted_speedup, x->kernel_ceiling,
				x->fused_roof_pct, x->base_roof_pct,
				x->fused_eff_bw_pct, x->base_eff_bw_pct,
			};
			const double bound[] = {
				x->fusion_removed_bytes, x->fusion_removed_launches,
				x->fusion_bound_ns, x->fusion_bound_pct,
				x->shared_kernels, x->shared_delta_ns, x->own_ratio,
			};

			table_add_text(t, x->workload);
			table_add_text(t, x->dtype);
			table_add_text(t, x->shape);
			table_add_int(t, x->fused_op_id);
			table_add_text(t, x->fused_variant);
			table_add_int(t, x->base_op_id);
			table_add_text(t, x->base_variant);
			table_add_text(t, x->base_role);
			for (size_t k = 0; k < ARRAY_SIZE(nums); k++)
				table_add_double(t, nums[k], 10);
			table_add_int(t, x->best_unfused);
			for (size_t k = 0; k < ARRAY_SIZE(bound); k++)
				table_add_double(t, bound[k], 10);
			table_add_text(t, x->fusion_note);
		}
		return;
	}
	table_init(t, (int)ARRAY_SIZE(disp), disp);
	for (size_t i = 0; i < p->n; i++) {
		const struct fu_pair *x = &p->v[i];

		table_add_text(t, x->workload);
		table_add_text(t, x->dtype);
		table_add_text(t, x->shape);
		table_add_text(t, x->fused_variant);
		table_add_text(t, x->base_variant);
		table_add_double(t, x->fused_time_ns / 1e3, 4);
		table_add_double(t, x->base_time_ns / 1e3, 4);
		table_add_double(t, x->speedup, 3);
		table_add_double(t, x->predicted_speedup, 3);
		table_add_double(t, x->kernel_ceiling, 3);
		table_add_double(t, x->dram_ratio, 3);
		table_add_double(t, x->launch_ratio, 3);
		table_add_double(t, x->fused_roof_pct, 3);
		table_add_text(t, x->fusion_note);
	}
}

/* Save or recompute: each forward variant with its backward, what it
 * keeps for the backward and what keeping less costs (v_save_recompute). */
static void saved_table(const struct sr_rows *r, struct table *t, int display)
{
	static const char *const full[] = {
		"workload", "backward", "variant", "role", "dtype", "shape",
		"fwd_op_id", "bwd_op_id", "saved_bytes", "fwd_time_ns",
		"bwd_time_ns", "total_time_ns", "fwd_dram_bytes", "bwd_dram_bytes",
		"total_dram_bytes", "dram_basis", "saves_most", "bytes_saved",
		"fastest", "time_paid_ns", "time_ratio",
	};
	static const char *const disp[] = {
		"forward", "dtype", "shape", "variant", "kept MB", "fwd µs", "bwd µs",
		"fwd+bwd µs", "DRAM MB", "MB saved", "vs", "µs paid", "× fastest",
	};

	table_init(t, display ? (int)ARRAY_SIZE(disp) : (int)ARRAY_SIZE(full),
		   display ? disp : full);
	for (size_t i = 0; r && i < r->n; i++) {
		const struct sr_row *x = &r->v[i];

		if (display) {
			table_add_text(t, x->workload);
			table_add_text(t, x->dtype);
			table_add_text(t, x->shape);
			table_add_text(t, x->variant);
			table_add_double(t, x->saved_bytes / 1e6, 4);
			table_add_double(t, x->fwd_time_ns / 1e3, 4);
			table_add_double(t, x->bwd_time_ns / 1e3, 4);
			table_add_double(t, x->total_time_ns / 1e3, 4);
			table_add_double(t, x->total_dram_bytes / 1e6, 4);
			table_add_double(t, x->bytes_saved / 1e6, 4);
			table_add_text(t, x->saves_most);
			table_add_double(t, x->time_paid_ns / 1e3, 4);
			table_add_double(t, x->time_ratio, 3);
			continue;
		}
		table_add_text(t, x->workload);
		table_add_text(t, x->backward);
		table_add_text(t, x->variant);
		table_add_text(t, x->role);
		table_add_text(t, x->dtype);
		table_add_text(t, x->shape);
		table_add_int(t, x->fwd_op_id);
		table_add_int(t, x->bwd_op_id);
		table_add_double(t, x->saved_bytes, 10);
		table_add_double(t, x->fwd_time_ns, 10);
		table_add_double(t, x->bwd_time_ns, 10);
		table_add_double(t, x->total_time_ns, 10);
		table_add_double(t, x->fwd_dram_bytes, 10);
		table_add_double(t, x->bwd_dram_bytes, 10);
		table_add_double(t, x->total_dram_bytes, 10);
		table_add_text(t, x->dram_basis);
		table_add_text(t, x->saves_most);
		table_add_double(t, x->bytes_saved, 10);
		table_add_text(t, x->fastest);
		table_add_double(t, x->time_paid_ns, 10);
		table_add_double(t, x->time_ratio, 10);
	}
}

/* Stragglers: each range's time over the ranks (v_rank_spread), largest
 * spread first. */
static void ranks_table(const struct rk_rows *r, struct table *t, int display)
{
	static const char *const full[] = {
		"workload", "op_id", "ranks", "samples", "time_ns_min",
		"time_ns_median", "time_ns_max", "spread", "slowest_rank",
		"slowest_host", "fastest_rank",
	};
	static const char *const disp[] = {
		"range", "ranks", "min µs", "median µs", "max µs", "max ÷ min",
		"slowest rank", "host", "fastest rank",
	};

	table_init(t, display ? (int)ARRAY_SIZE(disp) : (int)ARRAY_SIZE(full),
		   display ? disp : full);
	for (size_t i = 0; r && i < r->n; i++) {
		const struct rk_row *x = &r->v[i];

		table_add_text(t, x->workload);
		if (!display) {
			table_add_int(t, x->op_id);
			table_add_int(t, x->ranks);
			table_add_int(t, x->samples);
			table_add_double(t, x->time_ns_min, 10);
			table_add_double(t, x->time_ns_median, 10);
			table_add_double(t, x->time_ns_max, 10);
			table_add_double(t, x->spread, 10);
			table_add_int(t, x->slowest_rank);
			table_add_text(t, x->slowest_host);
			table_add_int(t, x->fastest_rank);
			continue;
		}
		table_add_int(t, x->ranks);
		table_add_double(t, x->time_ns_min / 1e3, 4);
		table_add_double(t, x->time_ns_median / 1e3, 4);
		table_add_double(t, x->time_ns_max / 1e3, 4);
		table_add_double(t, x->spread, 3);
		table_add_int(t, x->slowest_rank);
		table_add_text(t, x->slowest_host);
		table_add_int(t, x->fastest_rank);
	}
}

#define RANKS_TITLE "Ranks (stragglers)"
#define RANKS_TEXT "Each range over the ranks: every rank's median time " \
	"(its range instances), their least, median and most, the spread " \
	"(most ÷ least) and the slowest rank, largest spread first " \
	"(view v_rank_spread)."

/* What the save-or-recompute table shows, for the reader. */
#define SAVED_TITLE "Save or recompute (forward + backward)"
#define SAVED_TEXT "Each forward variant beside the backward variant of " \
	"the same name at its dtype and shape (both passed their check): the " \
	"bytes it keeps alive from the forward for the backward (its model's), " \
	"forward, backward and total time, and the pair's DRAM bytes (measured, " \
	"else the models'). Within each forward, dtype and shape: the memory " \
	"it saves against the variant that keeps the most (vs), and the time " \
	"it pays against the fastest forward+backward."

/* Under the fusion table, where a pair has a note (views.h, "fusion
 * cannot pay here"). */
#define FUSION_NOTE_TEXT "A note marks each fused variant slower than its " \
	"fastest unfused twin: \"fusion cannot pay here\" where the bytes fusion " \
	"removes (the byte models' difference) at the unfused op's DRAM roof, " \
	"plus " FP_STR(FP_FUSION_LAUNCH_NS) " ns for each of the unfused op's " \
	"launches but one (what a single fused kernel would save), bound " \
	"the gain under " FP_STR(FP_FUSION_NOISE_PCT) " % of the unfused time; " \
	"else \"a missing kernel\": fusion could save more than the fused " \
	"kernel loses. Where both ops run kernels of the same name (a " \
	"backward's GEMMs) and those took longer in the fused op, the note " \
	"says by how much and compares the rest of the two ops' time: the " \
	"same kernels, slower under another mix of work (clocks, caches), " \
	"not fusion's doing."

static int fusion_noted(const struct fu_pairs *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].fusion_note)
			return 1;
	return 0;
}

/* A profiled run's fusion opportunities: the notice, or what the table
 * holds, how much it predicts, and how to read it. */
#define OPPS_TITLE "Fusion opportunities"
static void opps_intro(const struct opps *o, struct strbuf *sb)
{
	if (o->notice) {
		strbuf_addf(sb, "None computed: %s.", o->notice);
		return;
	}
	if (!o->nranked && !o->nedges) {
		strbuf_addstr(sb, "No chain of two or more memory-bound kernels "
			      "linked producer to consumer, and no GEMM beside an "
			      "elementwise kernel. ");
	} else {
		strbuf_addf(sb, "%zu candidate chain%s", o->nranked,
			    o->nranked == 1 ? "" : "s");
		if (isfinite(o->program_ns) && o->program_ns > 0)
			strbuf_addf(sb, ", predicted to save %.4g µs in all, %.3g %% "
				    "of the program's kernel time (chains inside "
				    "ranges, positive gains)", o->total_gain_ns / 1e3,
				    100 * o->total_gain_ns / o->program_ns);
		strbuf_addf(sb, "; %zu GEMM epilogue or prologue pair%s. ",
			    o->nedges, o->nedges == 1 ? "" : "s");
		if (o->nranked > OPPS_SHOWN || o->nedges > OPPS_SHOWN_EDGES)
			strbuf_addf(sb, "Shown: the first %d by total gain and %d "
				    "pairs; every row is in opportunities.csv. ",
				    OPPS_SHOWN, OPPS_SHOWN_EDGES);
	}
	strbuf_addstr(sb, opps_text);
}

static void wrong_table(const struct rf_run *run, struct table *t)
{
	static const char *const hdr[] = {
		"op_id", "workload", "variant", "dtype", "shape", "status", "rel_err",
		"tolerance", "message",
	};

	table_init(t, (int)ARRAY_SIZE(hdr), hdr);
	for (size_t i = 0; i < run->nops; i++) {
		const struct rf_op *o = &run->ops[i];

		if (is_ok(o))
			continue;
		table_add_int(t, o->op_id);
		table_add_text(t, o->workload);
		table_add_text(t, o->variant);
		table_add_text(t, o->dtype);
		table_add_text(t, o->shape);
		table_add_text(t, o->status);
		table_add_double(t, o->rel_err, 3);
		table_add_double(t, o->tolerance, 3);
		table_add_text(t, o->message);
	}
}

/* The ops whose numbers are impossible, one row per rule broken: display
 * (reading units, the rule in words) or full (every column, for scripts). */
static void distrust_table(const struct rf_run *run, struct table *t, int display)
{
	static const char *const full[] = {
		"op_id", "workload", "variant", "dtype", "shape", "reason", "value",
		"threshold", "cause",
	};
	static const char *const disp[] = {
		"workload", "variant", "dtype", "shape", "measure", "value", "limit",
		"likely cause",
	};

	table_init(t, display ? (int)ARRAY_SIZE(disp) : (int)ARRAY_SIZE(full),
		   display ? disp : full);
	for (size_t i = 0; i < run->nflags; i++) {
		const struct rf_flag *f = &run->flags[i];

		if (!display)
			table_add_int(t, f->op_id);
		table_add_text(t, f->workload);
		table_add_text(t, f->variant);
		table_add_text(t, f->dtype);
		table_add_text(t, f->shape);
		table_add_text(t, display ? flag_what(f->reason, 0) : f->reason);
		table_add_double(t, f->value, display ? 4 : 10);
		table_add_double(t, f->threshold, display ? 4 : 10);
		table_add_text(t, f->cause);
	}
}

/* The rules, in a sentence under the section's title. */
static void distrust_rules(struct strbuf *sb)
{
	strbuf_addstr(sb, "Each row is a rule an op's numbers break; the op "
		      "stays in every table and chart above and below, flagged, "
		      "not hidden. The rules: DRAM bytes below "
		      FP_DISTRUST_TRAFFIC_MIN "x the model's minimum; above "
		      FP_DISTRUST_ROOF_PCT " % of its DRAM or L2 roof; counted "
		      "FLOPs outside " FP_DISTRUST_FLOPS_TENSOR_LO "-"
		      FP_DISTRUST_FLOPS_TENSOR_HI "x the model's for tensor-core "
		      "ops, " FP_DISTRUST_FLOPS_CORE_LO "-" FP_DISTRUST_FLOPS_CORE_HI
		      "x for CUDA-core ops, or counted where the model has none; "
		      "a median time " FP_DISTRUST_UNSTEADY "x the fastest "
		      "repetition's or more (the speed changed while it was "
		      "measured); a kernel's DRAM writes with its write-back "
		      "above " FP_DISTRUST_WRITEBACK "x its L2 bytes (another "
		      "copy's or memset's writes charged to it). Ops that failed "
		      "their check are not judged here.");
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median of the finite values; NaN when there are none. Sorts v. */
static double median_finite(double *v, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i]))
			v[k++] = v[i];
	if (!k)
		return NAN;
	qsort(v, k, sizeof *v, cmp_double);
	return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

/* One row per workload: counts, median and best speedup of fused over
 * unfused variants, median % of roof and of DRAM bandwidth of fused ops. */
static void summary_table(const struct report *r, struct table *t)
{
	static const char *const hdr[] = {
		"workload", "ops", "wrong", "pairs", "median speedup", "best speedup",
		"fused % of roof", "fused % of DRAM bw",
	};
	const struct rf_run *run = r->run;
	double *a = xcalloc(run->nops + r->pairs->n + 1, sizeof *a);

	table_init(t, (int)ARRAY_SIZE(hdr), hdr);
	for (size_t i = 0; i < run->nops;) {
		const char *w = run->ops[i].workload;
		size_t j = i, wrong = 0, np = 0, nf = 0;
		double best = NAN, med, roof, bw;

		for (; j < run->nops && !strcmp(run->ops[j].workload, w); j++)
			wrong += !is_ok(&run->ops[j]);
		for (size_t k = 0; k < r->pairs->n; k++) {
			const struct fu_pair *p = &r->pairs->v[k];

			if (strcmp(p->workload, w) || strcmp(p->base_role, "unfused"))
				continue;
			a[np++] = p->speedup;
			if (isfinite(p->speedup) && !(best >= p->speedup))
				best = p->speedup;
		}
		med = median_finite(a, np);
		for (size_t k = i; k < j; k++)
			if (is_ok(&run->ops[k]) && !strcmp(run->ops[k].role, "fused"))
				a[nf++] = run->ops[k].roof_pct;
		roof = median_finite(a, nf);
		nf = 0;
		for (size_t k = i; k < j; k++)
			if (is_ok(&run->ops[k]) && !strcmp(run->ops[k].role, "fused"))
				a[nf++] = run->ops[k].eff_bw_pct;
		bw = median_finite(a, nf);
		table_add_text(t, w);
		table_add_int(t, (long long)(j - i));
		table_add_int(t, (long long)wrong);
		table_add_int(t, (long long)np);
		table_add_double(t, med, 3);
		table_add_double(t, best, 3);
		table_add_double(t, roof, 3);
		table_add_double(t, bw, 3);
		i = j;
	}
	free(a);
}

void report_summary(const struct report *r, FILE *out)
{
	struct table t;

	summary_table(r, &t);
	table_print(&t, TABLE_TEXT, out);
	table_release(&t);
}

/* The subsection of the base run's predictions against this run. */
#define PRED_TITLE "Fusion predicted for the base run, against this run"

/* Each table is built once and printed in every format asked for: with
 * 10,000 ops, formatting numbers is a good part of a report's time. */
struct tables {
	struct table summary, run, ceilings_disp, ceilings_full, wrong;
	struct table distrust_disp, distrust_full;
	struct table ops_disp, ops_full, fusion_disp, fusion_full;
	struct table saved_disp, saved_full;
	struct table ranks_disp, ranks_full;
	struct table base_disp, base_full, pred_disp, pred_full;
};

/* ---- files ------------------------------------------------------------- */

static FILE *create(const char *dir, const char *name, char **path)
{
	FILE *f;

	*path = xasprintf("%s/%s", dir, name);
	f = fopen(*path, "w");
	if (!f) {
		error("cannot write '%s': %s", *path, strerror(errno));
		free(*path);
		*path = NULL;
	}
	return f;
}

static int finish(FILE *f, char *path)
{
	int rc = 0;

	if (ferror(f) | fclose(f))
		rc = error("cannot write '%s': %s", path, strerror(errno ? errno : EIO));
	free(path);
	return rc;
}

/* The DRAM ceilings of read/write mixes other than the copy: without
 * them an op's DRAM roof falls back to dram_bw (views.h), so they are
 * missing in another sense than a roof left out. */
static int mix_ceiling(const char *name)
{
	return !strcmp(name, "dram_read_bw") || !strcmp(name, "dram_add_bw") ||
	       !strcmp(name, "dram_write_bw");
}

/* The run's missing ceilings among report_ceiling_names, joined by ", ":
 * the mix ceilings (mix 1) or the others (mix 0); NULL when none. */
static char *missing_ceilings(const struct rf_run *run, int mix)
{
	struct strbuf sb = STRBUF_INIT;

	for (const char *const *n = report_ceiling_names; *n; n++)
		if (mix_ceiling(*n) == mix && !rf_ceiling(run, *n))
			strbuf_addf(&sb, "%s%s", sb.len ? ", " : "", *n);
	return sb.len ? xstrdup(strbuf_str(&sb)) : NULL;
}

static size_t count_wrong(const struct rf_run *run)
{
	size_t n = 0;

	for (size_t i = 0; i < run->nops; i++)
		n += !is_ok(&run->ops[i]);
	return n;
}

/* The sentences both documents open with, as plain text. */
static void intro(const struct report *r, struct strbuf *sb)
{
	const struct rf_run *run = r->run;
	char *missing = missing_ceilings(run, 0), *mixes = missing_ceilings(run, 1);
	size_t wrong = count_wrong(run);
	int measured = 0, theoretical = 0;

	for (int i = 0; i < run->nceilings; i++) {
		if (!strcmp(run->ceilings[i].provenance, "measured"))
			measured++;
		else
			theoretical++;
	}
	strbuf_addf(sb, "Run %lld on %s, started %s, measured with fuseprof %s; "
		    "%zu ops, %zu pairs of fused and other variants. ",
		    run->id, *run->device ? run->device : "an unknown device",
		    run->started_at, run->tool_version, run->nops, r->pairs->n);
	if (strcmp(run->status, "complete"))
		strbuf_addf(sb, "The run is '%s', not complete: this report covers "
			    "the ops it stored. ", run->status);
	if (run->nceilings)
		strbuf_addf(sb, "Roofs: %d measured and %d theoretical ceilings "
			    "(a measured one is used where there is one). ",
			    measured, theoretical);
	else
		strbuf_addstr(sb, "The device has no ceilings in the database: no "
			      "roof or % of roof is computed (run 'fuseprof "
			      "ceilings' on the GPU machine). ");
	if (missing && run->nceilings)
		strbuf_addf(sb, "Missing ceilings (their roofs are left out, not "
			    "guessed): %s. ", missing);
	if (mixes && run->nceilings)
		strbuf_addf(sb, "No DRAM ceiling for the read/write mixes %s: an op "
			    "whose mix needs one is judged against the copy's "
			    "dram_bw ('fuseprof ceilings --remeasure' measures them). ",
			    mixes);
	if (!strcmp(run->counters, "none") || !strcmp(run->counters, "denied"))
		strbuf_addf(sb, "Counters were '%s' in this run: FLOPs, bytes and "
			    "intensities are unknown; times and model numbers remain. ",
			    run->counters);
	if (wrong)
		strbuf_addf(sb, "%zu op%s failed %s check: listed below, left out "
			    "of every chart and gain.", wrong, wrong == 1 ? "" : "s",
			    wrong == 1 ? "its" : "their");
	else
		strbuf_addstr(sb, "Every op passed its check.");
	if (run->nflagged)
		strbuf_addf(sb, " %zu op%s numbers to distrust (DRAM bytes below "
			    "the model's minimum, above a roof, or FLOPs far from "
			    "the model's): listed below under \"Numbers to "
			    "distrust\", and kept in every chart and table.",
			    run->nflagged, run->nflagged == 1 ? " has" : "s have");
	free(missing);
	free(mixes);
}

static void md_section(FILE *f, const char *title, const struct table *t)
{
	fprintf(f, "\n## %s\n\n", title);
	if (t->nrows)
		table_print(t, TABLE_MD, f);
	else
		fputs("None.\n", f);
}

/* The arrows from the base run the plots drew, or (size_t)-1 without
 * plots. */
static size_t plotted_moves(const struct report *r)
{
	return r->images->n ? r->images->nmoves : (size_t)-1;
}

static int write_md(const struct report *r, const struct tables *t, const char *dir)
{
	const struct rf_run *run = r->run;
	struct strbuf sb = STRBUF_INIT;
	char *path;
	FILE *f = create(dir, "report.md", &path);

	if (!f)
		return -1;
	intro(r, &sb);
	fprintf(f, "# fuseprof report: run %lld, %s\n\n%s\n", run->id,
		*run->device ? run->device : "unknown device", strbuf_str(&sb));
	strbuf_release(&sb);
	md_section(f, "Summary", &t->summary);
	md_section(f, "Run", &t->run);
	md_section(f, "Ceilings", &t->ceilings_disp);
	md_section(f, "Ops that failed their check", &t->wrong);
	fputs("\n## Numbers to distrust\n\n", f);
	distrust_rules(&sb);
	fprintf(f, "%s\n\n", strbuf_str(&sb));
	strbuf_release(&sb);
	if (t->distrust_disp.nrows)
		table_print(&t->distrust_disp, TABLE_MD, f);
	else
		fputs("None.\n", f);
	fputs("\n## Plots\n\n", f);
	if (r->images->skipped)
		fprintf(f, "Plots skipped: %s.\n", r->images->skipped);
	for (size_t i = 0; i < r->images->n; i++)
		fprintf(f, "![%s](%s.png)\n\n", r->images->v[i].title, r->images->v[i].stem);
	if (r->against) {
		against_title(r->against, &sb);
		fprintf(f, "\n## %s\n\n", strbuf_str(&sb));
		strbuf_reset(&sb);
		against_text(r->against, plotted_moves(r), &sb);
		fprintf(f, "%s\n\n", strbuf_str(&sb));
		strbuf_release(&sb);
		if (t->base_disp.nrows)
			table_print(&t->base_disp, TABLE_MD, f);
		else
			fputs("No op is in both runs.\n", f);
		if (t->pred_disp.nrows) {
			against_predicted_text(r->against, &sb);
			fprintf(f, "\n### " PRED_TITLE "\n\n%s\n\n", strbuf_str(&sb));
			strbuf_release(&sb);
			table_print(&t->pred_disp, TABLE_MD, f);
		}
	}
	md_section(f, "Fusion gains (ratios are other variant ÷ fused)", &t->fusion_disp);
	if (fusion_noted(r->pairs))
		fputs("\n" FUSION_NOTE_TEXT "\n", f);
	if (r->opps) {
		opps_intro(r->opps, &sb);
		fprintf(f, "\n## " OPPS_TITLE "\n\n%s\n\n", strbuf_str(&sb));
		strbuf_release(&sb);
		if (r->opps->disp.nrows)
			table_print(&r->opps->disp, TABLE_MD, f);
	}
	if (t->saved_disp.nrows) {
		fputs("\n## " SAVED_TITLE "\n\n" SAVED_TEXT "\n\n", f);
		table_print(&t->saved_disp, TABLE_MD, f);
	}
	if (t->ranks_disp.nrows) {
		fputs("\n## " RANKS_TITLE "\n\n" RANKS_TEXT "\n\n", f);
		table_print(&t->ranks_disp, TABLE_MD, f);
	}
	md_section(f, "Ops", &t->ops_disp);
	return finish(f, path);
}

static void html_escape(FILE *f, const char *s)
{
	if (!strpbrk(s, "<>&\"")) {
		fputs(s, f);
		return;
	}
	for (; *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

/* html_escape into a strbuf. */
static void html_escape_sb(struct strbuf *sb, const char *s)
{
	size_t n;

	while (*s) {
		n = strcspn(s, "<>&\"");
		strbuf_add(sb, s, n);
		s += n;
		switch (*s) {
		case '<':
			strbuf_addstr(sb, "&lt;");
			break;
		case '>':
			strbuf_addstr(sb, "&gt;");
			break;
		case '&':
			strbuf_addstr(sb, "&amp;");
			break;
		case '"':
			strbuf_addstr(sb, "&quot;");
			break;
		default:
			return;
		}
		s++;
	}
}

/* Each row is assembled first and written with one fwrite: a stdio call
 * per cell costs more than the cell. A NULL title writes no heading. */
static void html_table(FILE *f, const char *title, const struct table *t)
{
	struct strbuf sb = STRBUF_INIT;

	if (title) {
		fputs("<h2>", f);
		html_escape(f, title);
		fputs("</h2>\n", f);
	}
	if (!t->nrows) {
		fputs("<p>None.</p>\n", f);
		return;
	}
	fputs("<table>\n<tr>", f);
	for (int c = 0; c < t->ncols; c++) {
		fputs("<th>", f);
		html_escape(f, t->headers[c]);
		fputs("</th>", f);
	}
	fputs("</tr>\n", f);
	for (size_t r = 0; r < t->nrows; r++) {
		strbuf_reset(&sb);
		strbuf_addstr(&sb, "<tr>");
		for (int c = 0; c < t->ncols; c++) {
			const struct cell *x = &t->cells[r * (size_t)t->ncols + (size_t)c];

			strbuf_addstr(&sb, x->kind == CELL_NUMBER ? "<td class=n>" : "<td>");
			if (x->kind != CELL_NULL)
				html_escape_sb(&sb, x->text);
			strbuf_addstr(&sb, "</td>");
		}
		strbuf_addstr(&sb, "</tr>\n");
		fwrite(sb.buf, 1, sb.len, f);
	}
	strbuf_release(&sb);
	fputs("</table>\n", f);
}

/* Embed DIR/NAME as base64: the page must open on its own, mailed or
 * copied without its folder. */
static int html_image(FILE *f, const char *dir, const char *stem, const char *title)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *path = xasprintf("%s/%s.png", dir, stem);
	FILE *in = fopen(path, "rb");
	unsigned char buf[3 * 1024];
	char enc[4 * 1024 + 1];
	size_t n;

	if (!in) {
		error("cannot read '%s': %s", path, strerror(errno));
		free(path);
		return -1;
	}
	fputs("<figure><img alt=\"", f);
	html_escape(f, title);
	fputs("\" src=\"data:image/png;base64,", f);
	while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
		size_t k = 0;

		for (size_t i = 0; i < n; i += 3) {
			unsigned v = (unsigned)buf[i] << 16 |
				     (i + 1 < n ? (unsigned)buf[i + 1] << 8 : 0) |
				     (i + 2 < n ? buf[i + 2] : 0);

			enc[k++] = b64[v >> 18 & 63];
			enc[k++] = b64[v >> 12 & 63];
			enc[k++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
			enc[k++] = i + 2 < n ? b64[v & 63] : '=';
		}
		fwrite(enc, 1, k, f);
	}
	fputs("\"><figcaption>", f);
	html_escape(f, title);
	fputs("</figcaption></figure>\n", f);
	fclose(in);
	free(path);
	return 0;
}

static int write_html(const struct report *r, const struct tables *t, const char *dir)
{
	const struct rf_run *run = r->run;
	struct strbuf sb = STRBUF_INIT;
	char *path, title[256];
	FILE *f = create(dir, "report.html", &path);
	int rc = 0;

	if (!f)
		return -1;
	snprintf(title, sizeof title, "fuseprof report: run %lld, %s", run->id,
		 *run->device ? run->device : "unknown device");
	fputs("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>\n<title>", f);
	html_escape(f, title);
	fputs("</title>\n<style>body{font:14px/1.4 sans-serif;margin:2em;max-width:90em}"
	      "table{border-collapse:collapse;margin:.5em 0}"
	      "td,th{border:1px solid #ccc;padding:2px 6px}th{background:#f2f2f2}"
	      "td.n{text-align:right;font-variant-numeric:tabular-nums}"
	      "img{max-width:100%}figure{margin:1em 0}</style>\n</head><body>\n<h1>", f);
	html_escape(f, title);
	fputs("</h1>\n<p>", f);
	intro(r, &sb);
	html_escape(f, strbuf_str(&sb));
	strbuf_release(&sb);
	fputs("</p>\n", f);
	html_table(f, "Summary", &t->summary);
	html_table(f, "Run", &t->run);
	html_table(f, "Ceilings", &t->ceilings_disp);
	html_table(f, "Ops that failed their check", &t->wrong);
	fputs("<h2>Numbers to distrust</h2>\n<p>", f);
	distrust_rules(&sb);
	html_escape(f, strbuf_str(&sb));
	strbuf_release(&sb);
	fputs("</p>\n", f);
	html_table(f, NULL, &t->distrust_disp);
	fputs("<h2>Plots</h2>\n", f);
	if (r->images->skipped) {
		fputs("<p>Plots skipped: ", f);
		html_escape(f, r->images->skipped);
		fputs(".</p>\n", f);
	}
	for (size_t i = 0; !rc && i < r->images->n; i++)
		rc = html_image(f, dir, r->images->v[i].stem, r->images->v[i].title);
	if (r->against) {
		fputs("<h2>", f);
		against_title(r->against, &sb);
		html_escape(f, strbuf_str(&sb));
		strbuf_reset(&sb);
		fputs("</h2>\n<p>", f);
		against_text(r->against, plotted_moves(r), &sb);
		html_escape(f, strbuf_str(&sb));
		strbuf_release(&sb);
		fputs("</p>\n", f);
		if (t->base_disp.nrows)
			html_table(f, NULL, &t->base_disp);
		else
			fputs("<p>No op is in both runs.</p>\n", f);
		if (t->pred_disp.nrows) {
			fputs("<h3>" PRED_TITLE "</h3>\n<p>", f);
			against_predicted_text(r->against, &sb);
			html_escape(f, strbuf_str(&sb));
			strbuf_release(&sb);
			fputs("</p>\n", f);
			html_table(f, NULL, &t->pred_disp);
		}
	}
	html_table(f, "Fusion gains (ratios are other variant ÷ fused)", &t->fusion_disp);
	if (fusion_noted(r->pairs)) {
		fputs("<p>", f);
		html_escape(f, FUSION_NOTE_TEXT);
		fputs("</p>\n", f);
	}
	if (r->opps) {
		fputs("<h2>" OPPS_TITLE "</h2>\n<p>", f);
		opps_intro(r->opps, &sb);
		html_escape(f, strbuf_str(&sb));
		strbuf_release(&sb);
		fputs("</p>\n", f);
		if (r->opps->disp.nrows)
			html_table(f, NULL, &r->opps->disp);
	}
	if (t->saved_disp.nrows) {
		fputs("<h2>" SAVED_TITLE "</h2>\n<p>", f);
		html_escape(f, SAVED_TEXT);
		fputs("</p>\n", f);
		html_table(f, NULL, &t->saved_disp);
	}
	if (t->ranks_disp.nrows) {
		fputs("<h2>" RANKS_TITLE "</h2>\n<p>", f);
		html_escape(f, RANKS_TEXT);
		fputs("</p>\n", f);
		html_table(f, NULL, &t->ranks_disp);
	}
	html_table(f, "Ops", &t->ops_disp);
	fputs("</body></html>\n", f);
	if (rc) {
		fclose(f);
		free(path);
		return -1;
	}
	return finish(f, path);
}

static int write_csv(const struct report *r, const struct tables *t, const char *dir)
{
	const struct {
		const char *name;
		const struct table *t;
	} files[] = {
		{ "roofline.csv", &t->ops_full },
		{ "fusion.csv", &t->fusion_full },
		{ "ceilings.csv", &t->ceilings_full },
		{ "distrust.csv", &t->distrust_full },
		{ "save-recompute.csv", &t->saved_full },
		{ "ranks.csv", &t->ranks_full },
		{ "base.csv", &t->base_full },
		{ "opportunities.csv", r->opps ? &r->opps->full : NULL },
	};

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		char *path;
		FILE *f;

		/* Only a run with forward/backward pairs has this table. */
		if (files[i].t == &t->saved_full && !t->saved_full.nrows)
			continue;
		/* Nor a run of one rank this one. */
		if (files[i].t == &t->ranks_full && !t->ranks_full.nrows)
			continue;
		/* Nor a report without --base this one. */
		if (files[i].t == &t->base_full && !t->base_full.ncols)
			continue;
		/* Nor any but a profiled run's with candidates computed. */
		if (!files[i].t || !files[i].t->ncols)
			continue;
		if (!(f = create(dir, files[i].name, &path)))
			return -1;
		table_print(files[i].t, TABLE_CSV, f);
		if (finish(f, path))
			return -1;
	}
	return 0;
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* The base run (null without --base) and the rows against it ([] then). */
static void json_base(const struct report *r, const struct tables *t, FILE *f)
{
	const struct against *a = r->against;

	fputs(",\n\"base_run\": ", f);
	if (!a) {
		fputs("null,\n\"base\": [],\n\"base_predicted\": []", f);
		return;
	}
	fprintf(f, "{\"id\": %lld, \"tag\": ", a->base->id);
	if (*a->base->tag)
		json_str(f, a->base->tag);
	else
		fputs("null", f);
	fputs(", \"started_at\": ", f);
	json_str(f, a->base->started_at);
	fputs(", \"device\": ", f);
	if (*a->base->device)
		json_str(f, a->base->device);
	else
		fputs("null", f);
	fputs(", \"matched_by\": ", f);
	json_str(f, a->by_path ? "range path" : "workload, variant, dtype, shape");
	fprintf(f, ", \"pairs\": %zu, \"with_arrow\": %zu, \"only_in_base\": %zu, "
		"\"only_in_run\": %zu", a->npairs, a->ndrawn, a->nbase_only, a->nrun_only);
	fputs(", \"arrows_drawn\": ", f);
	if (r->images->n)
		fprintf(f, "%zu", r->images->nmoves);
	else
		fputs("null", f);
	fputs("},\n\"base\": ", f);
	table_print(&t->base_full, TABLE_JSON, f);
	fputs(",\n\"base_predicted\": ", f);
	table_print(&t->pred_full, TABLE_JSON, f);
}

static int write_json(const struct report *r, const struct tables *t, const char *dir)
{
	const struct rf_run *run = r->run;
	const char *const fields[][2] = {
		{ "device", run->device }, { "started_at", run->started_at },
		{ "finished_at", run->finished_at }, { "status", run->status },
		{ "tag", run->tag }, { "host", run->host },
		{ "tool_version", run->tool_version }, { "counters", run->counters },
		{ "command_line", run->command_line },
	};
	char *path;
	FILE *f = create(dir, "report.json", &path);

	if (!f)
		return -1;
	fputs("{\"report_by\": ", f);
	json_str(f, "fuseprof " PACKAGE_VERSION);
	fputs(",\n\"database\": ", f);
	json_str(f, r->db_path);
	fprintf(f, ",\n\"run\": {\"id\": %lld", run->id);
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		fprintf(f, ", \"%s\": ", fields[i][0]);
		if (*fields[i][1])
			json_str(f, fields[i][1]);
		else
			fputs("null", f);
	}
	fputs("},\n\"missing_ceilings\": [", f);
	for (const char *const *n = report_ceiling_names, *sep = ""; *n; n++)
		if (!rf_ceiling(run, *n)) {
			fputs(sep, f);
			json_str(f, *n);
			sep = ", ";
		}
	fputs("],\n\"plots\": [", f);
	for (size_t i = 0; i < r->images->n; i++) {
		fputs(i ? ", " : "", f);
		json_str(f, r->images->v[i].stem);
	}
	fputs("],\n\"plots_skipped\": ", f);
	if (r->images->skipped)
		json_str(f, r->images->skipped);
	else
		fputs("null", f);
	fputs(",\n\"ceilings\": ", f);
	table_print(&t->ceilings_full, TABLE_JSON, f);
	fputs(",\n\"ops\": ", f);
	table_print(&t->ops_full, TABLE_JSON, f);
	fputs(",\n\"fusion\": ", f);
	table_print(&t->fusion_full, TABLE_JSON, f);
	fputs(",\n\"distrust\": ", f);
	table_print(&t->distrust_full, TABLE_JSON, f);
	fputs(",\n\"save_recompute\": ", f);
	table_print(&t->saved_full, TABLE_JSON, f);
	fputs(",\n\"ranks\": ", f);
	table_print(&t->ranks_full, TABLE_JSON, f);
	json_base(r, t, f);
	fputs(",\n\"opportunities_notice\": ", f);
	if (r->opps && r->opps->notice)
		json_str(f, r->opps->notice);
	else
		fputs("null", f);
	fputs(",\n\"opportunities\": ", f);
	if (r->opps && r->opps->full.ncols)
		table_print(&r->opps->full, TABLE_JSON, f);
	else
		fputs("[]", f);
	fputs("}\n", f);
	return finish(f, path);
}

int report_write(const struct report *r, const char *dir, unsigned formats)
{
	struct tables t;
	int rc = -1;

	memset(&t, 0, sizeof t);
	if (formats & (REPORT_MD | REPORT_HTML)) {
		summary_table(r, &t.summary);
		run_table(r, &t.run);
		ceilings_table(r->run, &t.ceilings_disp, 1);
		wrong_table(r->run, &t.wrong);
		distrust_table(r->run, &t.distrust_disp, 1);
		ops_table_display(r->run, &t.ops_disp);
		fusion_table(r->pairs, &t.fusion_disp, 1);
		saved_table(r->saved, &t.saved_disp, 1);
		ranks_table(r->ranks, &t.ranks_disp, 1);
		if (r->against) {
			against_table(r->against, &t.base_disp, 1);
			against_predicted_table(r->against, &t.pred_disp, 1);
		}
	}
	if (formats & (REPORT_CSV | REPORT_JSON)) {
		ceilings_table(r->run, &t.ceilings_full, 0);
		ops_table_full(r->run, &t.ops_full);
		fusion_table(r->pairs, &t.fusion_full, 0);
		distrust_table(r->run, &t.distrust_full, 0);
		saved_table(r->saved, &t.saved_full, 0);
		ranks_table(r->ranks, &t.ranks_full, 0);
		if (r->against) {
			against_table(r->against, &t.base_full, 0);
			against_predicted_table(r->against, &t.pred_full, 0);
		}
	}
	if ((formats & REPORT_MD) && write_md(r, &t, dir))
		goto out;
	if ((formats & REPORT_HTML) && write_html(r, &t, dir))
		goto out;
	if ((formats & REPORT_CSV) && write_csv(r, &t, dir))
		goto out;
	if ((formats & REPORT_JSON) && write_json(r, &t, dir))
		goto out;
	rc = 0;
out:
	/* An unbuilt table is all zeros, which table_release accepts. */
	table_release(&t.summary);
	table_release(&t.run);
	table_release(&t.ceilings_disp);
	table_release(&t.ceilings_full);
	table_release(&t.wrong);
	table_release(&t.distrust_disp);
	table_release(&t.distrust_full);
	table_release(&t.ops_disp);
	table_release(&t.ops_full);
	table_release(&t.fusion_disp);
	table_release(&t.fusion_full);
	table_release(&t.saved_disp);
	table_release(&t.saved_full);
	table_release(&t.ranks_disp);
	table_release(&t.ranks_full);
	table_release(&t.base_disp);
	table_release(&t.base_full);
	table_release(&t.pred_disp);
	table_release(&t.pred_full);
	return rc;
}
