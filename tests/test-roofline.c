/* test-roofline.c - the roofline and fusion math on hand-computed cases:
 * the reference functions, and v_roofline / v_fusion as rf_load and
 * fusion_load read them from a database written through the store API. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fusion.h"
#include "roofline.h"
#include "store.h"
#include "test.h"
#include "util.h"
#include "views.h"

static const char *const names[] = {
	"dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum",
	"l1tex__t_bytes.sum",
	"sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
	"sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
	"sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
	"sm__ops_path_tensor_src_bf16_dst_fp32.sum", FP_METRIC_DRAM_WRITEBACK,
};

/* k scales every byte and FLOP count (so intensities stay put) and the
 * time (so rates stay put): the expected numbers below hold for any k. */
static double k;

static long long add_op(struct store *st, long long run, const char *variant,
			const char *role, const char *dtype, const char *status,
			double time_ns, long long launches, const double *c,
			int ncounters, double min_bytes, double variant_bytes)
{
	double t[3] = { time_ns * k, time_ns * k * 0.9, time_ns * k * 1.2 };
	double v[9];
	struct store_kernel ker = { .name = "k", .launches = launches,
				    .dur_ns_median = time_ns * k, .ncounters = ncounters,
				    .counter_names = names, .counter_values = v };
	struct store_op op = {
		.workload = "wl", .variant = variant, .role = role, .dtype = dtype,
		.shape = "M=4,N=8", .status = status, .rel_err = 0, .max_abs_err = 0,
		.tolerance = 1e-5, .reps = 3, .time_ns = t, .launches = launches,
		.model_flops = 1e9 * k, .model_min_bytes = min_bytes * k,
		.model_variant_bytes = variant_bytes * k, .nkernels = 1, .kernels = &ker,
	};
	long long id;

	for (int i = 0; i < 9; i++)
		v[i] = c[i] * k;
	if (store_insert_op(st, run, &op, &id))
		exit(TEST_HARD_ERROR);
	return id;
}

/* An op of two kernels, each with counters c0 and c1 (read, write,
 * write-back; NULL: none) and the time of the op split between them. */
static long long add_op2(struct store *st, long long run, const char *variant,
			 const double *c0, const double *c1)
{
	static const char *const dram[] = { "dram__bytes_read.sum",
		"dram__bytes_write.sum", FP_METRIC_DRAM_WRITEBACK };
	double t[3] = { 2e6 * k, 2e6 * k, 2e6 * k }, v[2][3];
	struct store_kernel ker[2] = {
		{ .name = "max", .launches = 1, .dur_ns_median = 1e6 * k,
		  .ncounters = c0 ? 3 : 0, .counter_names = dram, .counter_values = v[0] },
		{ .name = "exp", .launches = 1, .dur_ns_median = 1e6 * k,
		  .ncounters = c1 ? 3 : 0, .counter_names = dram, .counter_values = v[1] },
	};
	struct store_op op = {
		.workload = "softmax", .variant = variant, .role = "unfused", .dtype = "fp32",
		.shape = "M=4,N=8", .status = "ok", .tolerance = 1e-5, .reps = 3,
		.time_ns = t, .launches = 2, .model_flops = 1e9 * k,
		.model_min_bytes = 1e9 * k, .model_variant_bytes = 2e9 * k,
		.nkernels = 2, .kernels = ker,
	};
	long long id;

	for (int i = 0; i < 3; i++) {
		v[0][i] = c0 ? c0[i] * k : 0;
		v[1][i] = c1 ? c1[i] * k : 0;
	}
	if (store_insert_op(st, run, &op, &id))
		exit(TEST_HARD_ERROR);
	return id;
}

static void test_reference(void)
{
	ASSERT(isnan(rf_div(1, 0)));
	ASSERT(isnan(rf_div(NAN, 2)));
	ASSERT_NEAR(rf_div(3, 2), 1.5, 1e-15);
	/* Memory-bound: 2 FLOP/B x 3e12 B/s = 6e12 < 5e13. */
	ASSERT_NEAR(rf_attainable(2, 5e13, 3e12), 6e12, 1e-12);
	/* Compute-bound past the ridge (5e13 / 3e12 = 16.7 FLOP/B). */
	ASSERT_NEAR(rf_attainable(100, 5e13, 3e12), 5e13, 1e-12);
	ASSERT(isnan(rf_attainable(2, NAN, 3e12)));
	ASSERT(isnan(rf_attainable(2, 5e13, NAN)));
	ASSERT_STR_EQ(rf_precision(10, 0, 0, 0, "fp32"), "fp32_fma");
	ASSERT_STR_EQ(rf_precision(10, 11, 0, 0, "fp32"), "fp64_fma");
	ASSERT_STR_EQ(rf_precision(10, 0, 0, 11, "bf16"), "tensor_bf16");
	ASSERT_STR_EQ(rf_precision(10, 0, 0, 11, "fp32"), "tensor_tf32");
	ASSERT_STR_EQ(rf_precision(10, 0, 0, 9, "bf16"), "fp32_fma");
}

/* Hand-made DRAM ceilings of the four mixes (the write-only one
 * theoretical), for the tests of the DRAM roof below. */
static struct rf_ceiling mix_ceilings[4] = {
	{ "dram_read_bw", "B/s", 3.0e12, "measured", NULL },
	{ "dram_add_bw", "B/s", 2.7e12, "measured", NULL },
	{ "dram_bw", "B/s", 2.8e12, "measured", NULL },
	{ "dram_write_bw", "B/s", 2.4e12, "theoretical", NULL },
};

/* The DRAM roof by read/write mix, on hand-made ceilings. */
static void test_mix(void)
{
	struct rf_run r = { .nceilings = 4, .ceilings = mix_ceilings };
	const char *prov;
	char basis[64];

	/* Read-only, 2:1, copy and write-only hit their ceilings. */
	ASSERT_NEAR(rf_dram_bw(&r, 0, &prov, basis, sizeof basis), 3.0e12, 1e-12);
	ASSERT_STR_EQ(basis, "read..add 0.00");
	ASSERT_STR_EQ(prov, "measured");
	ASSERT_NEAR(rf_dram_bw(&r, 1.0 / 3, &prov, basis, sizeof basis), 2.7e12, 1e-12);
	ASSERT_STR_EQ(basis, "add..copy 0.00");
	ASSERT_NEAR(rf_dram_bw(&r, 0.5, &prov, basis, sizeof basis), 2.8e12, 1e-12);
	ASSERT_STR_EQ(basis, "copy..write 0.00");
	ASSERT_STR_EQ(prov, "theoretical");  /* one end is */
	ASSERT_NEAR(rf_dram_bw(&r, 1, &prov, basis, sizeof basis), 2.4e12, 1e-12);
	ASSERT_STR_EQ(basis, "copy..write 1.00");
	/* Between: f = 1/6 is half way from read to add; f = 0.75 half way
	 * from copy to write; f = 0.45 is 0.7 of the way from add to copy. */
	ASSERT_NEAR(rf_dram_bw(&r, 1.0 / 6, &prov, basis, sizeof basis), 2.85e12, 1e-12);
	ASSERT_STR_EQ(basis, "read..add 0.50");
	ASSERT_NEAR(rf_dram_bw(&r, 0.75, &prov, basis, sizeof basis), 2.6e12, 1e-12);
	ASSERT_NEAR(rf_dram_bw(&r, 0.45, &prov, basis, sizeof basis), 2.77e12, 1e-12);
	ASSERT_STR_EQ(basis, "add..copy 0.70");
	ASSERT_STR_EQ(prov, "measured");
	/* Mix unknown: the copy. */
	ASSERT_NEAR(rf_dram_bw(&r, NAN, &prov, basis, sizeof basis), 2.8e12, 1e-12);
	ASSERT_STR_EQ(basis, "copy (mix unknown)");
	/* An end missing (a database from before the mixes): the copy, even
	 * where the other end is there. */
	r.nceilings = 3;  /* no write-only */
	ASSERT_NEAR(rf_dram_bw(&r, 0.75, &prov, basis, sizeof basis), 2.8e12, 1e-12);
	ASSERT_STR_EQ(basis, "copy (no ceiling for this mix)");
	ASSERT_STR_EQ(prov, "measured");
	ASSERT_NEAR(rf_dram_bw(&r, 0.4, &prov, basis, sizeof basis), 2.7e12 + 0.4 * 0.1e12,
		    1e-12);
	/* No copy either: no roof. */
	r.ceilings = &mix_ceilings[0];
	r.nceilings = 1;
	ASSERT(isnan(rf_dram_bw(&r, 0.75, &prov, basis, sizeof basis)));
	ASSERT_STR_EQ(basis, "");
	ASSERT_STR_EQ(prov, "");
}

/* The DRAM roof of an op of several kernels, each at its own mix's roof. */
static void test_kernels(void)
{
	struct rf_run r = { .nceilings = 4, .ceilings = mix_ceilings };
	/* A reduction (read-only), an elementwise pass (a copy), a kernel
	 * of no DRAM bytes, a write-only one with its write-back. */
	struct rf_kernel_dram kd[] = {
		{ 1e9, 0, NAN }, { 5e8, 5e8, NAN }, { 0, 0, NAN }, { 0, 2e8, 2e8 },
	};
	const char *prov;
	char basis[64];
	double want;

	/* The read and the copy: f = 1/4 overall, whose roof (0.75 of the
	 * way from read to add, 2.775e12) is neither kernel's. */
	want = 2e9 / (1e9 / 3.0e12 + 1e9 / 2.8e12);
	ASSERT_NEAR(rf_op_dram_bw(&r, kd, 2, 0.25, &prov, basis, sizeof basis), want, 1e-12);
	ASSERT_STR_EQ(basis, "kernels (2): read, copy");
	ASSERT_STR_EQ(prov, "theoretical");  /* the copy's segment ends at write */
	ASSERT(fabs(want - rf_dram_bw(&r, 0.25, &prov, basis, sizeof basis)) > 1e10);
	/* A kernel of no DRAM bytes takes no time but counts as a slot. */
	ASSERT_NEAR(rf_op_dram_bw(&r, kd, 3, 0.25, &prov, basis, sizeof basis), want, 1e-12);
	ASSERT_STR_EQ(basis, "kernels (3): read, copy");
	want = 2.4e9 / (1e9 / 3.0e12 + 1e9 / 2.8e12 + 4e8 / 2.4e12);
	ASSERT_NEAR(rf_op_dram_bw(&r, kd, 4, 0.9e9 / 2.4e9, &prov, basis, sizeof basis),
		    want, 1e-12);
	ASSERT_STR_EQ(basis, "kernels (4): read, copy, write");
	/* Two read-only kernels: the read ceiling, measured. */
	kd[1] = kd[0];
	ASSERT_NEAR(rf_op_dram_bw(&r, kd, 2, 0, &prov, basis, sizeof basis), 3.0e12, 1e-12);
	ASSERT_STR_EQ(basis, "kernels (2): read");
	ASSERT_STR_EQ(prov, "measured");
	/* One kernel: the rule of its mix, as for the op. */
	ASSERT_NEAR(rf_op_dram_bw(&r, kd, 1, 0.75, &prov, basis, sizeof basis), 2.6e12, 1e-12);
	ASSERT_STR_EQ(basis, "copy..write 0.50");
	/* A kernel without DRAM counters: the copy. */
	kd[1].write = NAN;
	ASSERT_NEAR(rf_op_dram_bw(&r, kd, 2, 0, &prov, basis, sizeof basis), 2.8e12, 1e-12);
	ASSERT_STR_EQ(basis, "copy (mix unknown)");
	/* A kernel whose mix has no ceilings (no write-only: the copy's
	 * segment lacks its end): the copy. */
	kd[1] = (struct rf_kernel_dram){ 5e8, 5e8, NAN };
	r.nceilings = 3;
	ASSERT_NEAR(rf_op_dram_bw(&r, kd, 2, 0.25, &prov, basis, sizeof basis), 2.8e12, 1e-12);
	ASSERT_STR_EQ(basis, "copy (no ceiling for this mix)");
	/* No DRAM bytes at all: no mix. */
	kd[0] = kd[1] = (struct rf_kernel_dram){ 0, 0, NAN };
	ASSERT_NEAR(rf_op_dram_bw(&r, kd, 2, NAN, &prov, basis, sizeof basis), 2.8e12, 1e-12);
	ASSERT_STR_EQ(basis, "copy (mix unknown)");
}

static const struct rf_op *op_by_id(const struct rf_run *r, long long id)
{
	for (size_t i = 0; i < r->nops; i++)
		if (r->ops[i].op_id == id)
			return &r->ops[i];
	FAIL("op %lld not in the run", id);
}

int main(void)
{
	unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
	char path[] = "/tmp/fuseprof-test-roofline.XXXXXX";
	struct store_device dev = { .uuid = "GPU-t", .name = "Test GPU" };
	struct store_device dev2 = { .uuid = "GPU-u", .name = "Bare GPU" };
	struct store_run run = { .tool_version = "test", .counters = "range-profiler" };
	struct store_ceiling ce[] = {
		{ "dram_bw", "B/s", 2e12, "measured", "copy" },
		{ "dram_bw", "B/s", 3e12, "theoretical", "spec" },
		{ "l2_bw", "B/s", 8e12, "theoretical", "spec" },
		{ "fp32_fma", "FLOP/s", 4e13, "measured", "fma chains" },
	};
	/* read, write, l2, l1, fadd, fmul, ffma, tensor, write-back */
	const double ca[9] = { 6e8, 4e8, 2e9, 4e9, 1e8, 1e8, 4e8, 0, 0 };
	const double ce_[9] = { 18e8, 12e8, 6e9, 8e9, 1e8, 1e8, 4e8, 0, 0 };
	const double cb[9] = { 1e9, 1e9, 4e9, 8e9, 1e9, 0, 0, 1e12, 0 };
	const double cw[9] = { 6e8, 4e8, 2e9, 4e9, 1e8, 1e8, 4e8, 0, 5e8 };
	struct store_device dev3 = { .uuid = "GPU-v", .name = "Mixed GPU" };
	struct store_ceiling mix[] = {
		{ "dram_read_bw", "B/s", 3.0e12, "measured", "read" },
		{ "dram_add_bw", "B/s", 2.7e12, "measured", "add" },
		{ "dram_bw", "B/s", 2.8e12, "measured", "copy" },
		{ "dram_write_bw", "B/s", 2.4e12, "measured", "write" },
	};
	/* read, write, write-back of a reduction, a copy, a write-only kernel */
	const double kr[3] = { 1e9, 0, 0 }, kc[3] = { 5e8, 5e8, 0 }, kw[3] = { 0, 2e8, 2e8 };
	long long dev_id, dev2_id, dev3_id, run_id, run2_id, run3_id;
	long long a, e, w, b, n, a2, wb, s1, s2, s3, s4;
	struct store *st;
	struct rf_run r;
	struct fu_pairs p;
	const struct rf_op *o;
	int fd;

	srand(seed);
	k = 0.5 + (double)rand() / RAND_MAX;
	fprintf(stderr, "seed %u, scale %.17g\n", seed, k);
	test_reference();
	test_mix();
	test_kernels();

	fd = mkstemp(path);
	if (fd < 0)
		return TEST_HARD_ERROR;
	close(fd);
	unlink(path);
	if (store_open(&st, path, STORE_CREATE) ||
	    store_upsert_device(st, &dev, &dev_id) ||
	    store_upsert_device(st, &dev2, &dev2_id))
		return TEST_HARD_ERROR;
	run.device_id = dev_id;
	if (store_begin_run(st, &run, &run_id))
		return TEST_HARD_ERROR;
	for (size_t i = 0; i < ARRAY_SIZE(ce); i++)
		if (store_insert_ceiling(st, dev_id, run_id, &ce[i]))
			return TEST_HARD_ERROR;
	a = add_op(st, run_id, "fused", "fused", "fp32", "ok", 1e6, 1, ca, 7, 8e8, 8e8);
	e = add_op(st, run_id, "unfused", "unfused", "fp32", "ok", 3e6, 3, ce_, 7, 8e8, 24e8);
	w = add_op(st, run_id, "naive", "naive", "fp32", "wrong", 9e6, 5, ce_, 7, 8e8, 40e8);
	b = add_op(st, run_id, "fused", "fused", "bf16", "ok", 2e6, 1, cb, 8, 1e9, 1e9);
	n = add_op(st, run_id, "unfused", "unfused", "bf16", "ok", 4e6, 2, cb, 0, 1e9, 2e9);
	/* Two kernels, no ceiling of their mixes: the copy. */
	s4 = add_op2(st, run_id, "unfused2", kr, kc);
	if (store_finish_run(st, run_id, "complete", NULL))
		return TEST_HARD_ERROR;
	run.device_id = dev2_id;
	if (store_begin_run(st, &run, &run2_id))
		return TEST_HARD_ERROR;
	a2 = add_op(st, run2_id, "fused", "fused", "fp32", "ok", 1e6, 1, ca, 7, 8e8, 8e8);
	/* A's counters and the write-back of 5e8 dirty bytes after it. */
	wb = add_op(st, run2_id, "unfused", "unfused", "fp32", "ok", 1e6, 1, cw, 9, 8e8, 8e8);
	/* A device with every mix ceiling, and ops of two kernels. */
	if (store_upsert_device(st, &dev3, &dev3_id))
		return TEST_HARD_ERROR;
	run.device_id = dev3_id;
	if (store_begin_run(st, &run, &run3_id))
		return TEST_HARD_ERROR;
	for (size_t i = 0; i < ARRAY_SIZE(mix); i++)
		if (store_insert_ceiling(st, dev3_id, run3_id, &mix[i]))
			return TEST_HARD_ERROR;
	s1 = add_op2(st, run3_id, "unfused2", kr, kc);
	s2 = add_op2(st, run3_id, "unfused3", kr, NULL);
	s3 = add_op2(st, run3_id, "unfused4", kc, kw);
	store_close(st);

	if (store_open(&st, path, STORE_READONLY) || rf_load(st, run_id, NULL, &r))
		return TEST_HARD_ERROR;
	ASSERT_EQ(r.nops, 6);
	o = op_by_id(&r, s4);
	ASSERT_NEAR(o->dram_bw, 2e12, 1e-12);
	ASSERT_STR_EQ(o->dram_bw_basis, "copy (no ceiling for this mix)");
	ASSERT_STR_EQ(o->dram_bw_provenance, "measured");
	ASSERT_STR_EQ(r.device, "Test GPU");
	/* Measured beats theoretical; theoretical fills in; no invention. */
	ASSERT_EQ(r.nceilings, 3);
	ASSERT_NEAR(rf_ceiling(&r, "dram_bw")->value, 2e12, 1e-15);
	ASSERT_STR_EQ(rf_ceiling(&r, "dram_bw")->provenance, "measured");
	ASSERT_STR_EQ(rf_ceiling(&r, "l2_bw")->provenance, "theoretical");
	ASSERT(!rf_ceiling(&r, "tensor_bf16"));

	/* A: FLOPs = 1e8 + 1e8 + 2 * 4e8 = 1e9 (x k) over 1e9 DRAM bytes
	 * (x k) in 1 ms (x k). */
	o = op_by_id(&r, a);
	ASSERT_NEAR(o->time_ns, 1e6 * k, 1e-12);
	ASSERT_NEAR(o->flops, 1e9 * k, 1e-12);
	ASSERT_STR_EQ(o->precision, "fp32_fma");
	ASSERT_NEAR(o->dram_bytes, 1e9 * k, 1e-12);
	ASSERT_NEAR(o->ai_dram, 1.0, 1e-12);
	ASSERT_NEAR(o->ai_l2, 0.5, 1e-12);
	ASSERT_NEAR(o->ai_l1, 0.25, 1e-12);
	ASSERT_NEAR(o->flop_rate, 1e12, 1e-12);
	ASSERT_NEAR(o->dram_rate, 1e12, 1e-12);
	ASSERT_NEAR(o->l2_rate, 2e12, 1e-12);
	ASSERT_NEAR(o->peak_flop_rate, 4e13, 1e-12);
	ASSERT_NEAR(o->roof, 2e12, 1e-12);        /* min(4e13, 1 x 2e12) */
	ASSERT_NEAR(o->roof_pct, 50, 1e-12);
	ASSERT_NEAR(o->roof_l2, 4e12, 1e-12);     /* min(4e13, 0.5 x 8e12) */
	ASSERT_NEAR(o->roof_l2_pct, 25, 1e-12);
	ASSERT_STR_EQ(o->bound, "memory");
	ASSERT_NEAR(o->traffic_eff, 1.25, 1e-12); /* 1e9 / 8e8 */
	ASSERT_NEAR(o->eff_bw, 8e11, 1e-12);      /* 8e8 B in 1 ms */
	ASSERT_NEAR(o->eff_bw_pct, 40, 1e-12);

	/* B: tensor work dominates, and there is no tensor_bf16 ceiling: no
	 * roof rather than the FP32 one. */
	o = op_by_id(&r, b);
	ASSERT_STR_EQ(o->precision, "tensor_bf16");
	ASSERT_NEAR(o->flops, (1e12 + 1e9) * k, 1e-12);
	ASSERT_NEAR(o->flops_tensor, 1e12 * k, 1e-12);
	ASSERT(isnan(o->peak_flop_rate));
	ASSERT(isnan(o->roof) && isnan(o->roof_pct));
	ASSERT_STR_EQ(o->bound, "");
	ASSERT_NEAR(o->ai_dram, (1e12 + 1e9) / 2e9, 1e-12);

	/* N: no counters: FLOPs and bytes unknown, time-based numbers stay. */
	o = op_by_id(&r, n);
	ASSERT(isnan(o->flops) && isnan(o->dram_bytes) && isnan(o->ai_dram));
	ASSERT_NEAR(o->eff_bw, 1e9 / 4e6 * 1e9, 1e-12);
	ASSERT_STR_EQ(op_by_id(&r, w)->status, "wrong");

	/* Pairs: A vs E (both ok), B vs N; the wrong naive op never pairs. */
	if (fusion_load(st, run_id, NULL, &p))
		return TEST_HARD_ERROR;
	ASSERT_EQ(p.n, 2);
	for (size_t i = 0; i < p.n; i++)
		ASSERT(p.v[i].base_op_id != w && p.v[i].fused_op_id != w);
	ASSERT_EQ(p.v[0].fused_op_id, a);
	ASSERT_EQ(p.v[0].base_op_id, e);
	ASSERT_STR_EQ(p.v[0].base_role, "unfused");
	ASSERT_NEAR(p.v[0].speedup, 3, 1e-12);
	ASSERT_NEAR(p.v[0].dram_ratio, 3, 1e-12);
	ASSERT_NEAR(p.v[0].launch_ratio, 3, 1e-12);
	ASSERT_NEAR(p.v[0].predicted_speedup, 3, 1e-12);
	/* The base's one kernel slot: 3 launches of the op's median each. */
	ASSERT_NEAR(p.v[0].kernel_ceiling, 1.0 / 3, 1e-12);
	ASSERT_NEAR(p.v[0].fused_roof_pct, 50, 1e-12);
	ASSERT_EQ(p.v[1].fused_op_id, b);
	ASSERT_NEAR(p.v[1].speedup, 2, 1e-12);
	ASSERT(isnan(p.v[1].dram_ratio));  /* N has no counters */
	ASSERT_NEAR(p.v[1].predicted_speedup, 2, 1e-12);
	ASSERT_NEAR(p.v[1].kernel_ceiling, 0.5, 1e-12);
	fusion_release(&p);

	/* The --workload filter keeps nothing of an unknown workload. */
	rf_release(&r);
	{
		const char *const only[] = { "other", NULL };

		if (rf_load(st, run_id, only, &r))
			return TEST_HARD_ERROR;
		ASSERT_EQ(r.nops, 0);
		rf_release(&r);
	}

	/* A device without ceilings: numbers, but no roof. */
	if (rf_load(st, run2_id, NULL, &r))
		return TEST_HARD_ERROR;
	ASSERT_EQ(r.nceilings, 0);
	o = op_by_id(&r, a2);
	ASSERT_NEAR(o->ai_dram, 1.0, 1e-12);
	ASSERT(isnan(o->roof) && isnan(o->eff_bw_pct));
	ASSERT(isnan(o->dram_writeback_bytes));  /* not collected: unknown */
	ASSERT_NEAR(o->dram_write_frac, 0.4, 1e-12);
	ASSERT_STR_EQ(o->dram_bw_basis, "");     /* no DRAM roof at all */
	/* Write-backs count in the bytes and the mix, not in the raw writes. */
	o = op_by_id(&r, wb);
	ASSERT_NEAR(o->dram_write_bytes, 4e8 * k, 1e-12);
	ASSERT_NEAR(o->dram_writeback_bytes, 5e8 * k, 1e-12);
	ASSERT_NEAR(o->dram_bytes, 15e8 * k, 1e-12);
	ASSERT_NEAR(o->dram_write_frac, 0.6, 1e-12);
	ASSERT_NEAR(o->traffic_eff, 15.0 / 8, 1e-12);
	rf_release(&r);

	/* Each kernel at its own mix's roof: the read-only at the read
	 * ceiling, the copy at the copy's, not both at the add's roof of
	 * their overall f = 1/4. */
	if (rf_load(st, run3_id, NULL, &r))
		return TEST_HARD_ERROR;
	o = op_by_id(&r, s1);
	ASSERT_NEAR(o->dram_write_frac, 0.25, 1e-12);
	ASSERT_NEAR(o->dram_bw, 2e9 / (1e9 / 3.0e12 + 1e9 / 2.8e12), 1e-12);
	ASSERT_STR_EQ(o->dram_bw_basis, "kernels (2): read, copy");
	ASSERT_STR_EQ(o->dram_bw_provenance, "measured");
	ASSERT_NEAR(o->eff_bw_pct, 100 * 5e11 / o->dram_bw, 1e-12);  /* 1e9 B in 2 ms */
	/* A kernel without counters: its mix unknown, the copy. */
	o = op_by_id(&r, s2);
	ASSERT_NEAR(o->dram_bw, 2.8e12, 1e-12);
	ASSERT_STR_EQ(o->dram_bw_basis, "copy (mix unknown)");
	/* The write-back counts in its kernel's mix: f = 1, the write's. */
	o = op_by_id(&r, s3);
	ASSERT_NEAR(o->dram_bw, 1.4e9 / (1e9 / 2.8e12 + 4e8 / 2.4e12), 1e-12);
	ASSERT_STR_EQ(o->dram_bw_basis, "kernels (2): copy, write");
	rf_release(&r);

	ASSERT(rf_load(st, 999, NULL, &r) == -1);
	store_close(st);
	unlink(path);
	return 0;
}
