/* synth.c - writes synthetic runs (ops, kernels, raw counters, ceilings)
 * through the store API, so report tests and the report benchmark need no
 * GPU. The numbers are plausible for an H100, not measured. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"
#include "synth.h"
#include "util.h"
#include "views.h"

#define MAX_KERNELS 4
#define NMETRICS 9
#define REPS 5

static const char *const metric_names[NMETRICS] = {
	"dram__bytes_read.sum",
	"dram__bytes_write.sum",
	"lts__t_bytes.sum",
	"l1tex__t_bytes.sum",
	"sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
	"sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
	"sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
	"sm__ops_path_tensor_src_bf16_dst_fp32.sum",
	FP_METRIC_DRAM_WRITEBACK,
};

struct wl {
	const char *name;
	int nvariants;
	const char *variants[3];
	const char *roles[3];
	int nkernels[3];
	double passes[3];  /* DRAM traffic of the variant in units of min bytes */
	int gemm;          /* has tensor-core work */
	const char *backward;  /* a forward's backward workload */
	int in_pair;       /* a forward or backward of a pair */
	double saved[3];   /* bytes kept for the backward, per element */
};

static const struct wl wls[] = {
	{ "ln_gelu", 3, { "fused", "unfused", "naive" }, { "fused", "unfused", "naive" },
	  { 1, 2, 3 }, { 1.0, 2.0, 3.0 }, 0, NULL, 0, { 0 } },
	{ "softmax", 2, { "fused", "unfused" }, { "fused", "unfused" },
	  { 1, 4 }, { 1.0, 4.0 }, 0, NULL, 0, { 0 } },
	{ "ln_linear_fwd", 2, { "fused", "unfused" }, { "fused", "unfused" },
	  { 1, 2 }, { 1.0, 1.6 }, 1, NULL, 0, { 0 } },
};

/* A forward and its backward, with three ways to keep what the backward
 * needs: the input, the output, or a bit per element. */
static const struct wl pair_wls[] = {
	{ "bias_act_fwd", 3, { "save_input", "save_output", "bitmask" },
	  { "unfused", "fused", "fused" }, { 2, 1, 1 }, { 2.0, 1.0, 1.1 }, 0,
	  "bias_act_bwd", 1, { 1.0, 1.0, 0.125 } },
	{ "bias_act_bwd", 3, { "save_input", "save_output", "bitmask" },
	  { "unfused", "fused", "fused" }, { 2, 1, 1 }, { 2.5, 1.5, 1.2 }, 0,
	  NULL, 1, { 1.0, 1.0, 0.125 } },
};

static unsigned long long rng;

/* Uniform in [0, 1): xorshift64*, enough for plausible noise. */
static double urand(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (double)((rng * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

static int add_ceiling(struct store *st, long long dev, long long run,
		       const char *name, const char *unit, double v,
		       const char *prov)
{
	struct store_ceiling c = { name, unit, v, prov, "synthetic" };

	return store_insert_ceiling(st, dev, run, &c);
}

static int add_ceilings(struct store *st, long long dev, long long run)
{
	return add_ceiling(st, dev, run, "dram_bw", "B/s", 3.0e12, "measured") ||
	       add_ceiling(st, dev, run, "dram_bw", "B/s", 3.35e12, "theoretical") ||
	       add_ceiling(st, dev, run, "dram_read_bw", "B/s", 3.1e12, "measured") ||
	       add_ceiling(st, dev, run, "dram_add_bw", "B/s", 2.95e12, "measured") ||
	       add_ceiling(st, dev, run, "dram_write_bw", "B/s", 3.35e12, "theoretical") ||
	       add_ceiling(st, dev, run, "l2_bw", "B/s", 1.0e13, "measured") ||
	       add_ceiling(st, dev, run, "fp32_fma", "FLOP/s", 5.17e13, "measured") ||
	       add_ceiling(st, dev, run, "fp32_fma", "FLOP/s", 6.7e13, "theoretical") ||
	       add_ceiling(st, dev, run, "fp64_fma", "FLOP/s", 3.35e13, "theoretical") ||
	       add_ceiling(st, dev, run, "tensor_bf16", "FLOP/s", 7.7e14, "measured");
}

/* One op of workload w, variant v, group g (dtype and shape). */
static int add_op(struct store *st, long long run_id, const struct wl *w, int v,
		  long g, int wrong, const struct synth_opts *o)
{
	int bf16 = (g / ARRAY_SIZE(wls)) % 2;
	long s = g / (2 * (long)ARRAY_SIZE(wls));
	double M = (double)(1024L << (s % 5)), N = 256.0 * (double)(1 + s / 5);
	double K = 256.0 * (double)(1 + s % 4), elt = bf16 ? 2 : 4;
	double min_bytes, flops, tensor = 0, dram, time_ns, wshare;
	double t[REPS], span[REPS];
	struct store_kernel ks[MAX_KERNELS];
	double vals[MAX_KERNELS][NMETRICS];
	const char *names[MAX_KERNELS][NMETRICS];
	char shape[96];
	int nk = w->nkernels[v];
	struct store_op op;

	if (w->gemm) {
		snprintf(shape, sizeof shape, "M=%.0f,K=%.0f,N=%.0f", M, K, N);
		min_bytes = (M * K + K * N + M * N) * elt;
		tensor = 2 * M * N * K;
		flops = 8 * M * K;
	} else {
		snprintf(shape, sizeof shape, "M=%.0f,N=%.0f", M, N);
		min_bytes = 2 * M * N * elt;
		flops = 10 * M * N;
	}
	dram = min_bytes * w->passes[v] * (1.0 + 0.1 * urand());
	/* Slower than the roof by 5-50%, and never faster than the tensor peak. */
	time_ns = 1e9 * fmax(dram / 3.0e12, tensor / 7.7e14) * (1.05 + 0.45 * urand());
	time_ns += 2000.0 * nk;  /* launch gaps */
	for (int i = 0; i < REPS; i++) {
		t[i] = time_ns * (1.0 + 0.02 * urand());
		span[i] = t[i] + 1000.0 * nk;
	}
	memset(ks, 0, sizeof ks);
	for (int k = 0; k < nk; k++) {
		double share = 1.0 / nk, fl = flops * share, u = urand();

		/* Any read/write mix, so every DRAM roof segment gets ops of
		 * one kernel; in an op of several, as in an unfused softmax,
		 * reductions (read-only) and elementwise passes (copies) too. */
		wshare = nk > 1 && u < 0.3 ? 0 : nk > 1 && u < 0.6 ? 0.5 : urand();

		vals[k][0] = floor(dram * share * (1 - wshare));
		vals[k][1] = floor(dram * share * wshare);
		vals[k][2] = floor(dram * share * (1.5 + urand()));
		vals[k][3] = floor(dram * share * (2.0 + urand()));
		vals[k][4] = floor(fl * 0.2);
		vals[k][5] = floor(fl * 0.2);
		vals[k][6] = floor(fl * 0.3);
		vals[k][7] = floor(tensor * share);
		/* Two groups in three have their last kernel's dirty L2 lines
		 * written back after it (a third of its writes); the others
		 * come from before write-backs were counted. */
		vals[k][8] = 0;
		if (g % 3 && k == nk - 1) {
			vals[k][8] = floor(vals[k][1] / 3);
			vals[k][1] -= vals[k][8];
		}
		ks[k].name = k == 0 ? "kernel_a" : k == 1 ? "kernel_b" : "kernel_c";
		ks[k].grid[0] = (unsigned)M;
		ks[k].grid[1] = ks[k].grid[2] = 1;
		ks[k].block[0] = 256;
		ks[k].block[1] = ks[k].block[2] = 1;
		ks[k].launches = 1;
		ks[k].dur_ns_median = ks[k].dur_ns_min = ks[k].dur_ns_max = time_ns / nk;
		/* Without tensor work (or write-back) the metric is absent, not 0. */
		ks[k].ncounters = 0;
		if (o->counters)
			for (int m = 0; m < NMETRICS; m++)
				if ((m != 7 || w->gemm) && (m != 8 || (g % 3 && k == nk - 1))) {
					names[k][ks[k].ncounters] = metric_names[m];
					vals[k][ks[k].ncounters++] = vals[k][m];
				}
		ks[k].counter_names = names[k];
		ks[k].counter_values = vals[k];
	}
	memset(&op, 0, sizeof op);
	op.workload = w->name;
	op.variant = w->variants[v];
	op.role = w->roles[v];
	op.dtype = bf16 ? "bf16" : "fp32";
	op.shape = shape;
	op.status = wrong ? "wrong" : "ok";
	op.seed = o->seed + (unsigned long long)g;
	op.rel_err = wrong ? 0.5 : 1e-7;
	op.max_abs_err = wrong ? 3.0 : 1e-6;
	op.tolerance = bf16 ? 1e-2 : 1e-5;
	op.reps = REPS;
	op.time_ns = t;
	op.span_ns = span;
	op.launches = nk;
	op.model_flops = flops + tensor;
	op.model_min_bytes = min_bytes;
	op.model_variant_bytes = min_bytes * w->passes[v];
	op.model_saved_bytes = w->in_pair ? w->saved[v] * M * N * elt : NAN;
	op.backward = w->backward;
	op.message = wrong ? "rel_err 0.5 > tolerance" : NULL;
	op.nkernels = nk;
	op.kernels = ks;
	return store_insert_op(st, run_id, &op, NULL);
}

long long synth_build(const char *path, const struct synth_opts *o)
{
	struct store *st;
	struct store_device dev = {
		.uuid = "GPU-synthetic-0000", .name = "Synthetic H100", .cc_major = 9,
		.sm_count = 132, .l2_bytes = 50LL << 20, .mem_bytes = 80LL << 30,
		.mem_bus_bits = 5120, .sm_clock_khz = 1980000, .mem_clock_khz = 2619000,
		.driver_version = 13000, .runtime_version = 13000, .cupti_version = 26,
	};
	struct store_run run = { .tool_version = PACKAGE_VERSION, .host = "synthetic",
				 .command_line = "synth", .tag = o->tag,
				 .counters = o->counters ? "range-profiler" : "none" };
	long long dev_id, run_id = -1;
	long n = 0;

	rng = o->seed * 0x9e3779b97f4a7c15ull + 1;
	if (store_open(&st, path, STORE_CREATE))
		return -1;
	if (store_upsert_device(st, &dev, &dev_id))
		goto out_fail;
	run.device_id = dev_id;
	if (store_begin_run(st, &run, &run_id))
		goto out_fail;
	if (o->ceilings && add_ceilings(st, dev_id, run_id))
		goto out_fail;
	/* One fsync per op would dominate the time of a 10,000-op database;
	 * a test database need not survive a power cut. */
	if (sqlite3_exec(store_db(st), "PRAGMA synchronous = OFF", NULL, NULL, NULL))
		goto out_fail;
	for (long g = 0; n < o->nops; g++) {
		const struct wl *w = &wls[g % ARRAY_SIZE(wls)];

		for (int v = 0; v < w->nvariants && n < o->nops; v++, n++) {
			int wrong = o->wrong_every > 0 && n % o->wrong_every == o->wrong_every - 1;

			if (add_op(st, run_id, w, v, g, wrong, o))
				goto out_fail;
		}
	}
	/* Group g of pairs: fp32 and bf16 in turn, then the next shape (add_op's
	 * group number for that dtype and shape). */
	for (long g = 0; g < o->pairs; g++)
		for (size_t j = 0; j < ARRAY_SIZE(pair_wls); j++)
			for (int v = 0; v < pair_wls[j].nvariants; v++, n++) {
				long ag = (g / 2) * 2 * (long)ARRAY_SIZE(wls) +
					  (g % 2) * (long)ARRAY_SIZE(wls);
				int wrong = o->wrong_every > 0 &&
					    n % o->wrong_every == o->wrong_every - 1;

				if (add_op(st, run_id, &pair_wls[j], v, ag, wrong, o))
					goto out_fail;
			}
	if (store_finish_run(st, run_id, o->status ? o->status : "complete", NULL))
		goto out_fail;
	store_close(st);
	return run_id;

out_fail:
	store_close(st);
	return -1;
}
