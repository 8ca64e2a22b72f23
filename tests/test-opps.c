/* test-opps.c - v_fusion_candidates on synthetic profiled runs written
 * through the store API (launches by store_profile_commit, counters rows
 * per kernel slot as the collector stores them: per range instance): a
 * chain of three memory-bound kernels, a GEMM and a compute-bound kernel
 * splitting chains, two streams interleaved, a statistics pass re-read,
 * a grid-wide reduction's last pass, a host sync, a chain across two
 * ranges, a chain whose pointers show inputs read again, a run without
 * counters, and the ranking by total gain. With
 * "--make DB" it writes those runs (tags 'synthetic', with counters, and
 * 'timing', without) for the command-line tests and exits. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile.h"
#include "store.h"
#include "test.h"
#include "util.h"
#include "views.h"

/* Bytes of the large tensors and the ceilings (B/s, FLOP/s). */
#define NB 67108864.0
#define READ_BW 3.2e12
#define ADD_BW 3.0e12
#define COPY_BW 2.9e12
#define WRITE_BW 2.8e12
#define FP32_PEAK 5.0e13
#define SMS 132

struct kdef {
	const char *name;
	unsigned grid;
	double rd, wr, flops, tensor;  /* per launch */
	double wb;  /* DRAM write-backs, per launch, beside wr */
};

/* The launches of one process, gathered then committed at once, and the
 * range instances they ran in. */
static struct store_prof_launch launches[256];
static struct store_prof_range ranges[256];
static size_t nlaunches;
static long long next_corr = 1;

/* A range instance for each op path (a name with a '/') and instance the
 * launches name, spanning its launches; kernels outside any range (op
 * named by the kernel) get none. Returns how many. */
static size_t make_ranges(void)
{
	size_t n = 0;

	for (size_t i = 0; i < nlaunches; i++) {
		const struct store_prof_launch *l = &launches[i];
		size_t k;

		if (!strchr(l->op, '/'))
			continue;
		for (k = 0; k < n; k++)
			if (ranges[k].instance == l->instance)
				break;
		if (k == n) {
			ranges[n++] = (struct store_prof_range){
				.instance = l->instance, .tid = 1, .name = strrchr(l->op, '/') + 1,
				.path = l->op, .depth = 1, .start_ns = l->start_ns - 500,
				.end_ns = l->end_ns + 500 };
		}
		if (l->end_ns + 500 > ranges[k].end_ns)
			ranges[k].end_ns = l->end_ns + 500;
	}
	return n;
}

static void launch(const char *op, long long inst, const struct kdef *k,
		   long long stream, double start_us, double dur_us)
{
	struct store_prof_launch *l = &launches[nlaunches++];

	ASSERT(nlaunches <= sizeof launches / sizeof *launches);
	memset(l, 0, sizeof *l);
	l->op = op;
	l->instance = inst;
	l->name = k->name;
	l->grid[0] = k->grid;
	l->grid[1] = l->grid[2] = 1;
	l->block[0] = 256;
	l->block[1] = l->block[2] = 1;
	l->registers = 32;
	l->tid = 1;
	l->stream = stream;
	l->correlation = next_corr++;
	l->start_ns = (long long)llround(start_us * 1e3);
	l->end_ns = (long long)llround((start_us + dur_us) * 1e3);
	l->nptrs = -1;  /* not read, unless ptrs() says */
}

/* The device pointers of the last launch (0-terminated), each with
 * bytes to its allocation's end. */
static void ptrs(const uint64_t *p, const double *bytes)
{
	struct store_prof_launch *l = &launches[nlaunches - 1];

	for (l->nptrs = 0; p[l->nptrs]; l->nptrs++) {
		l->ptrs[l->nptrs] = p[l->nptrs];
		l->ptr_bytes[l->nptrs] = (uint64_t)bytes[l->nptrs];
	}
}

/* A producer a (da µs) and its consumer b (db µs) on stream 7 from t,
 * each with its device pointers and their bytes (ptrs()). */
static void ptr_pair(const char *op, long long inst, double t, const struct kdef *a,
		     double da, const uint64_t *pa, const double *ba, const struct kdef *b,
		     double db, const uint64_t *pb, const double *bb)
{
	launch(op, inst, a, 7, t, da);
	ptrs(pa, ba);
	launch(op, inst, b, 7, t + 52, db);
	ptrs(pb, bb);
}

static void exec(struct store *st, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(store_db(st), sql, NULL, NULL, &err) != SQLITE_OK)
		FAIL("%s: %s", sql, err);
}

/* The counters of kernel k in op path, per range instance (k launched
 * once an instance, as every kernel here is). */
static void counters(struct store *st, long long run, const char *path,
		     const struct kdef *k)
{
	static const char *const metric[] = {
		"dram__bytes_read.sum", "dram__bytes_write.sum",
		"sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
		"sm__ops_path_tensor_src_bf16_dst_fp32.sum", FP_METRIC_DRAM_WRITEBACK,
	};
	double v[] = { k->rd, k->wr, k->flops, k->tensor, k->wb };

	for (int i = 0; i < 5; i++) {
		char *sql = xasprintf("INSERT INTO counters (kernel_id, metric, value) "
				      "SELECT k.id, '%s', %.17g * k.launches FROM kernels k "
				      "JOIN ops o ON o.id = k.op_id WHERE o.run_id = %lld "
				      "AND o.workload = '%s' AND k.name = '%s'", metric[i],
				      v[i], run, path, k->name);

		exec(st, sql);
		free(sql);
	}
}

/* The kernels of the scenarios. */
static const struct kdef
	ew_a = { "ew_a_kernel", 4096, NB, NB, NB / 4, 0, 0 },
	ew_b = { "ew_b_kernel", 4096, NB, NB, NB / 4, 0, 0 },
	ew_c = { "ew_c_kernel", 4096, 2 * NB, NB, NB / 4, 0, 0 },
	gemm = { "sm90_xmma_gemm_bf16_tn", 264, 2 * NB, NB, 1e12, 0, 0 },
	compute = { "heavy_math_kernel", 4096, NB, NB, 100 * NB, 0, 0 },
	tensor = { "my_attention_kernel", 264, 2 * NB, NB, 1e9, 1e12, 0 },
	s1a = { "stream1_a", 4096, NB, NB, 0, 0, 0 },
	s1b = { "stream1_b", 4096, NB, NB, 0, 0, 0 },
	s2a = { "stream2_a", 512, NB / 8, NB / 8, 0, 0, 0 },
	s2b = { "stream2_b", 512, NB / 8, NB / 8, 0, 0, 0 },
	stats = { "row_stats", 4096, NB, NB / 1024, NB, 0, 0 },
	apply = { "row_apply", 4096, NB + NB / 1024, NB, NB, 0, 0 },
	pre = { "pre_scale", 4096, NB, NB, 0, 0, 0 },
	partial = { "col_partials", 4096, 2 * NB, NB / 100, NB, 0, 0 },
	colsum = { "col_sum", 16, NB / 100, NB / 1000, NB / 100, 0, 0 },
	g1 = { "synced_a", 4096, NB, NB, 0, 0, 0 },
	g2 = { "synced_b", 4096, NB, NB, 0, 0, 0 },
	x1 = { "cross_a", 4096, NB, NB, 0, 0, 0 },
	x2 = { "cross_b", 4096, NB, NB, 0, 0, 0 },
	/* softmax in four: max, exp, sum, divide */
	smax = { "sm_max", 4096, NB, NB / 1024, NB, 0, 0 },
	sexp = { "sm_exp", 4096, NB + NB / 1024, NB, NB, 0, 0 },
	ssum = { "sm_sum", 4096, NB, NB / 1024, NB, 0, 0 },
	sdiv = { "sm_div", 4096, NB + NB / 1024, NB, NB, 0, 0 },
	/* a norm's backward: row dots of dy and x, dx, dgamma partials of
	 * dy and x, their sum */
	rdot = { "rb_rowdot", 4096, 2 * NB, NB / 1024, NB, 0, 0 },
	rdx = { "rb_dx", 4096, 2 * NB + NB / 1024, NB, NB, 0, 0 },
	rpart = { "rb_partial", 4096, 2 * NB, NB / 100, NB, 0, 0 },
	rsum = { "rb_sum", 16, NB / 100, NB / 1000, NB / 100, 0, 0 },
	/* a LayerNorm's backward: dx with dgamma's per-block partials beside
	 * it, then their sum in 256 blocks (more than the SMs); the sum's
	 * counters hold the write-backs of dx's last dirty lines */
	lgrad = { "lb_grad", 4096, 2 * NB, NB, NB, 0, 0 },
	ldx = { "lb_dx_partials", 264, 2 * NB, NB + NB / 64, NB, 0, 0 },
	lsum = { "lb_partial_sum", 256, NB / 64, 0, NB / 64, 0, NB / 16 },
	/* the same sum after a kernel that wrote the partials only */
	mpart = { "mb_partials", 4096, 2 * NB, NB / 64, NB, 0, 0 },
	msum = { "mb_partial_sum", 128, NB / 64, 0, NB / 64, 0, NB / 16 },
	/* bias, dropout writing its output and a byte mask (for the backward,
	 * read by no kernel here), residual add: the same grid throughout */
	nbias = { "nd_bias", 4096, NB, NB, 0, 0, 0 },
	ndrop = { "nd_dropout", 4096, NB, NB + NB / 4, 0, 0, 0 },
	nadd = { "nd_add", 4096, 2 * NB, NB, 0, 0, 0 },
	/* a kernel writing two tensors that the next one reads both of */
	ptwo = { "two_out", 4096, NB, 2 * NB, 0, 0, 0 },
	pcomb = { "two_in", 4096, 2 * NB, NB, 0, 0, 0 },
	/* softplus's backward in two kernels, their pointers read: de = dy /
	 * (1 + e), then dx from dy, x, e and de (dy and e read again) */
	plog = { "sp_log1p_bwd", 4096, 2 * NB, NB, 0, 0, 0 },
	pexp = { "sp_exp_bwd", 4096, 4 * NB, NB, 0, 0, 0 },
	/* SwiGLU in two kernels over a packed input: silu of its first half,
	 * then the product with its second (one pointer, two tensors) */
	qsilu = { "sw_silu", 4096, NB, NB, 0, 0, 0 },
	qmul = { "sw_mul", 4096, 2 * NB, NB, 0, 0, 0 },
	/* two elementwise kernels alike in bytes and launch, their pointers
	 * read: R's on buffers of their own (no data flow), S's second
	 * reading the first's output through a view at an offset */
	rf1 = { "rf_first", 4096, NB, NB, 0, 0, 0 },
	rf2 = { "rf_second", 4096, NB, NB, 0, 0, 0 },
	so1 = { "so_first", 4096, NB, NB, 0, 0, 0 },
	so2 = { "so_second", 4096, NB, NB, 0, 0, 0 },
	o1 = { "out_a", 4096, NB, NB, 0, 0, 0 },
	o2 = { "out_b", 4096, NB, NB, 0, 0, 0 };

/* Write one profiled run with every scenario; with counters when asked.
 * Returns its id. Times in µs; scenarios 1 ms apart so that no chain
 * runs from one into the next except where one should. */
static long long make_run(const char *db, const char *tag, int with_counters)
{
	struct store *st;
	struct store_device d = { .uuid = "GPU-synthetic", .name = "Synthetic GPU",
				  .cc_major = 9, .sm_count = SMS };
	struct store_run r = { .tool_version = PACKAGE_VERSION, .command_line = "test",
			       .tag = tag, .counters = with_counters ? "range-profiler"
			       : "none", .kind = "profile" };
	struct store_proc p = { .pid = 4242, .command_line = "synthetic" };
	static const struct { const char *name; double v; const char *unit; } ceil[] = {
		{ "dram_read_bw", READ_BW, "B/s" }, { "dram_add_bw", ADD_BW, "B/s" },
		{ "dram_bw", COPY_BW, "B/s" }, { "dram_write_bw", WRITE_BW, "B/s" },
		{ "fp32_fma", FP32_PEAK, "FLOP/s" },
	};
	long long run, dev, inst = 1;
	double t = 0;

	ASSERT_EQ(store_open(&st, db, STORE_CREATE), 0);
	ASSERT_EQ(store_upsert_device(st, &d, &dev), 0);
	r.device_id = dev;
	ASSERT_EQ(store_begin_run(st, &r, &run), 0);
	for (size_t i = 0; i < ARRAY_SIZE(ceil); i++) {
		struct store_ceiling c = { ceil[i].name, ceil[i].unit, ceil[i].v,
					   "measured", "synthetic" };

		ASSERT_EQ(store_insert_ceiling(st, dev, run, &c), 0);
	}
	p.run_id = run;
	ASSERT_EQ(store_proc_begin(st, &p, "running", NULL), 0);
	nlaunches = 0;
	/* A: three memory-bound kernels, three instances. */
	for (int i = 0; i < 3; i++, t += 1000, inst++) {
		launch("A/chain", inst, &ew_a, 7, t, 50);
		launch("A/chain", inst, &ew_b, 7, t + 52, 50);
		launch("A/chain", inst, &ew_c, 7, t + 104, 70);
	}
	/* B: a GEMM in the middle. */
	launch("B/gemm", inst, &ew_a, 7, t, 50);
	launch("B/gemm", inst, &gemm, 7, t + 52, 300);
	launch("B/gemm", inst, &ew_b, 7, t + 354, 50);
	launch("B/gemm", inst, &ew_c, 7, t + 406, 70);
	t += 1000, inst++;
	/* C: a compute-bound kernel in the middle, a tensor-pipe one after. */
	launch("C/compute", inst, &ew_a, 7, t, 50);
	launch("C/compute", inst, &compute, 7, t + 52, 300);
	launch("C/compute", inst, &ew_b, 7, t + 354, 50);
	launch("C/compute", inst, &ew_c, 7, t + 406, 70);
	launch("C/compute", inst, &tensor, 7, t + 478, 100);
	t += 1000, inst++;
	/* D: two streams interleaved. */
	launch("D/streams", inst, &s1a, 1, t, 10);
	launch("D/streams", inst, &s2a, 2, t + 5, 10);
	launch("D/streams", inst, &s1b, 1, t + 12, 10);
	launch("D/streams", inst, &s2b, 2, t + 17, 10);
	t += 1000, inst++;
	/* E: statistics, then the pass that uses them (reads x again). */
	launch("E/norm", inst, &stats, 7, t, 150);
	launch("E/norm", inst, &apply, 7, t + 152, 150);
	t += 1000, inst++;
	/* F: an elementwise pass, column partials, their grid-wide sum. */
	launch("F/colsum", inst, &pre, 7, t, 50);
	launch("F/colsum", inst, &partial, 7, t + 52, 80);
	launch("F/colsum", inst, &colsum, 7, t + 134, 5);
	t += 1000, inst++;
	/* G: a host sync (80 µs idle) between two kernels. */
	launch("G/sync", inst, &g1, 7, t, 50);
	launch("G/sync", inst, &g2, 7, t + 130, 50);
	t += 1000, inst++;
	/* I: softmax in four kernels. */
	launch("I/softmax", inst, &smax, 7, t, 50);
	launch("I/softmax", inst, &sexp, 7, t + 52, 50);
	launch("I/softmax", inst, &ssum, 7, t + 104, 50);
	launch("I/softmax", inst, &sdiv, 7, t + 156, 50);
	t += 1000, inst++;
	/* J: a norm's backward. */
	launch("J/normbwd", inst, &rdot, 7, t, 50);
	launch("J/normbwd", inst, &rdx, 7, t + 52, 50);
	launch("J/normbwd", inst, &rpart, 7, t + 104, 50);
	launch("J/normbwd", inst, &rsum, 7, t + 156, 5);
	t += 1000, inst++;
	/* L: a norm's backward whose row pass writes partials beside dx; M:
	 * column partials, then their sum (write-backs in its counters). */
	launch("L/lnbwd", inst, &lgrad, 7, t, 50);
	launch("L/lnbwd", inst, &ldx, 7, t + 52, 60);
	launch("L/lnbwd", inst, &lsum, 7, t + 114, 3);
	t += 1000, inst++;
	launch("M/colsum", inst, &pre, 7, t, 50);
	launch("M/colsum", inst, &mpart, 7, t + 52, 60);
	launch("M/colsum", inst, &msum, 7, t + 114, 3);
	t += 1000, inst++;
	/* N: bias, dropout and its mask, residual add; O: two outputs. */
	launch("N/dropout", inst, &nbias, 7, t, 50);
	launch("N/dropout", inst, &ndrop, 7, t + 52, 60);
	launch("N/dropout", inst, &nadd, 7, t + 114, 70);
	t += 1000, inst++;
	launch("O/twoout", inst, &ptwo, 7, t, 50);
	launch("O/twoout", inst, &pcomb, 7, t + 52, 50);
	t += 1000, inst++;
	{
		/* buffers: dy, e, x, de, dx */
		static const uint64_t k1[] = { 0x7f0004000000, 0x7f0000000000,
					       0x7f0008000000, 0 },
			k2[] = { 0x7f0010000000, 0x7f0000000000, 0x7f000c000000,
				 0x7f0008000000, 0x7f0004000000, 0 };

		static const double b1[] = { NB, NB, NB }, b2[] = { NB, NB, NB, NB, NB };

		ptr_pair("P/softplus", inst, t, &plog, 50, k1, b1, &pexp, 90, k2, b2);
	}
	t += 1000, inst++;
	{
		/* buffers: the packed input (2 NB), s, y */
		static const uint64_t k1[] = { 0x7f0020000000, 0x7f0028000000, 0 },
			k2[] = { 0x7f002c000000, 0x7f0020000000, 0x7f0028000000, 0 };
		static const double b1[] = { 2 * NB, NB }, b2[] = { NB, 2 * NB, NB };

		ptr_pair("Q/swiglu", inst, t, &qsilu, 50, k1, b1, &qmul, 60, k2, b2);
	}
	t += 1000, inst++;
	{
		/* T and U: P's and Q's buffers carved from one allocation each
		 * (an arena, as fuseprof's own input sets are): every pointer's
		 * bytes to the allocation's end span the tensors above it, and
		 * only the next pointer bounds a buffer. T: e, dy, x, de, dx;
		 * U: the packed input (2 NB), s, y. */
		static const uint64_t k1[] = { 0x7f0104000000, 0x7f0100000000,
					       0x7f010c000000, 0 },
			k2[] = { 0x7f0110000000, 0x7f0104000000, 0x7f0108000000,
				 0x7f0100000000, 0x7f010c000000, 0 },
			k3[] = { 0x7f0120000000, 0x7f0128000000, 0 },
			k4[] = { 0x7f012c000000, 0x7f0120000000, 0x7f0128000000, 0 };
		static const double b1[] = { 4 * NB, 5 * NB, 2 * NB },
			b2[] = { NB, 4 * NB, 3 * NB, 5 * NB, 2 * NB },
			b3[] = { 4 * NB, 2 * NB }, b4[] = { NB, 4 * NB, 2 * NB };

		ptr_pair("T/arena", inst, t, &plog, 50, k1, b1, &pexp, 90, k2, b2);
		t += 1000, inst++;
		ptr_pair("U/packed", inst, t, &qsilu, 50, k3, b3, &qmul, 60, k4, b4);
	}
	t += 1000, inst++;
	{
		/* R: x1 -> y1, then x2 -> y2 */
		static const uint64_t k1[] = { 0x7f0040000000, 0x7f0044000000, 0 },
			k2[] = { 0x7f0048000000, 0x7f004c000000, 0 };
		/* S: x -> y, then y at 4 KB on -> z */
		static const uint64_t k3[] = { 0x7f0050000000, 0x7f0054000000, 0 },
			k4[] = { 0x7f0054001000, 0x7f0058000000, 0 };
		static const double b1[] = { NB, NB }, b4[] = { NB - 4096, NB };

		ptr_pair("R/noflow", inst, t, &rf1, 50, k1, b1, &rf2, 50, k2, b1);
		t += 1000, inst++;
		ptr_pair("S/offset", inst, t, &so1, 50, k3, b1, &so2, 50, k4, b4);
	}
	t += 1000, inst++;
	/* H: one kernel in each of two adjacent ranges. */
	launch("H/one", inst++, &x1, 7, t, 50);
	launch("H/two", inst++, &x2, 7, t + 52, 50);
	/* K: two kernels outside any range, each launch a sample of its own
	 * op (named by the kernel): one stretch, not cut between them. */
	t += 1000;
	launch("out_a", inst++, &o1, 7, t, 50);
	launch("out_b", inst++, &o2, 7, t + 52, 50);
	ASSERT_EQ(store_profile_commit(st, &p, launches, nlaunches, ranges,
				       make_ranges()), 0);
	if (with_counters) {
		static const struct { const char *path; const struct kdef *k; } c[] = {
			{ "A/chain", &ew_a }, { "A/chain", &ew_b }, { "A/chain", &ew_c },
			{ "B/gemm", &ew_a }, { "B/gemm", &gemm }, { "B/gemm", &ew_b },
			{ "B/gemm", &ew_c }, { "C/compute", &ew_a },
			{ "C/compute", &compute }, { "C/compute", &ew_b },
			{ "C/compute", &ew_c }, { "C/compute", &tensor },
			{ "D/streams", &s1a }, { "D/streams", &s1b },
			{ "D/streams", &s2a }, { "D/streams", &s2b },
			{ "E/norm", &stats }, { "E/norm", &apply },
			{ "F/colsum", &pre }, { "F/colsum", &partial },
			{ "F/colsum", &colsum }, { "G/sync", &g1 }, { "G/sync", &g2 },
			{ "H/one", &x1 }, { "H/two", &x2 },
			{ "I/softmax", &smax }, { "I/softmax", &sexp },
			{ "I/softmax", &ssum }, { "I/softmax", &sdiv },
			{ "J/normbwd", &rdot }, { "J/normbwd", &rdx },
			{ "J/normbwd", &rpart }, { "J/normbwd", &rsum },
			{ "L/lnbwd", &lgrad }, { "L/lnbwd", &ldx },
			{ "L/lnbwd", &lsum }, { "M/colsum", &pre },
			{ "M/colsum", &mpart }, { "M/colsum", &msum },
			{ "N/dropout", &nbias }, { "N/dropout", &ndrop },
			{ "N/dropout", &nadd }, { "O/twoout", &ptwo },
			{ "O/twoout", &pcomb }, { "P/softplus", &plog },
			{ "P/softplus", &pexp }, { "Q/swiglu", &qsilu },
			{ "Q/swiglu", &qmul }, { "R/noflow", &rf1 },
			{ "R/noflow", &rf2 }, { "S/offset", &so1 }, { "S/offset", &so2 },
			{ "T/arena", &plog }, { "T/arena", &pexp },
			{ "U/packed", &qsilu }, { "U/packed", &qmul },
			{ "out_a", &o1 }, { "out_b", &o2 },
		};

		for (size_t i = 0; i < ARRAY_SIZE(c); i++)
			counters(st, run, c[i].path, c[i].k);
	}
	ASSERT_EQ(store_proc_finish(st, &p, "complete", NULL), 0);
	store_proc_release(&p);
	ASSERT_EQ(store_finish_run(st, run, "complete", NULL), 0);
	store_close(st);
	return run;
}

/* ---- reading the view --------------------------------------------------- */

struct cand {
	long long rank;  /* 0: none (epilogues) */
	char kind[16], path[32], last[32], kernels[256], before[32], after[32];
	char evidence[16];
	long long nkernels, instances, saved_launches;
	double time_ns, dram, fused_rd, fused_wr, fused_bw, pred, pred_ach, gain;
	double total_gain, range_time, range_frac, program_time, program_frac;
};

static struct cand cands[64];
static size_t ncands;

static void text(sqlite3_stmt *s, int i, char *buf, size_t n)
{
	const unsigned char *v = sqlite3_column_text(s, i);

	snprintf(buf, n, "%s", v ? (const char *)v : "");
}

static double real(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL ? NAN : sqlite3_column_double(s, i);
}

static void load(const char *db, long long run)
{
	struct store *st;
	sqlite3_stmt *s;
	char sql[1024];
	int rc;

	ASSERT_EQ(store_open(&st, db, STORE_READONLY), 0);
	snprintf(sql, sizeof sql, "SELECT coalesce(rank, 0), kind, range_path,"
		 " coalesce(last_range_path, ''), kernels, coalesce(ends_before, ''),"
		 " coalesce(ends_after, ''), link_evidence, nkernels, instances,"
		 " launches_saved, time_ns, dram_bytes, fused_read_bytes,"
		 " fused_write_bytes, fused_bw, predicted_ns, predicted_achieved_ns,"
		 " gain_ns, total_gain_ns, range_time_ns, range_gain_frac,"
		 " program_time_ns, program_gain_frac"
		 " FROM v_fusion_candidates WHERE run_id = %lld"
		 " ORDER BY rank IS NULL, rank, kind, kernels", run);
	if (sqlite3_prepare_v2(store_db(st), sql, -1, &s, NULL) != SQLITE_OK)
		FAIL("v_fusion_candidates: %s", sqlite3_errmsg(store_db(st)));
	ncands = 0;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct cand *c = &cands[ncands++];

		ASSERT(ncands < ARRAY_SIZE(cands));
		c->rank = sqlite3_column_int64(s, 0);
		text(s, 1, c->kind, sizeof c->kind);
		text(s, 2, c->path, sizeof c->path);
		text(s, 3, c->last, sizeof c->last);
		text(s, 4, c->kernels, sizeof c->kernels);
		text(s, 5, c->before, sizeof c->before);
		text(s, 6, c->after, sizeof c->after);
		text(s, 7, c->evidence, sizeof c->evidence);
		c->nkernels = sqlite3_column_int64(s, 8);
		c->instances = sqlite3_column_int64(s, 9);
		c->saved_launches = sqlite3_column_int64(s, 10);
		c->time_ns = real(s, 11);
		c->dram = real(s, 12);
		c->fused_rd = real(s, 13);
		c->fused_wr = real(s, 14);
		c->fused_bw = real(s, 15);
		c->pred = real(s, 16);
		c->pred_ach = real(s, 17);
		c->gain = real(s, 18);
		c->total_gain = real(s, 19);
		c->range_time = real(s, 20);
		c->range_frac = real(s, 21);
		c->program_time = real(s, 22);
		c->program_frac = real(s, 23);
	}
	if (rc != SQLITE_DONE)
		FAIL("v_fusion_candidates: %s", sqlite3_errmsg(store_db(st)));
	sqlite3_finalize(s);
	store_close(st);
}

/* The candidate of this kind, range path and kernels ("a > b"), or NULL. */
static const struct cand *find(const char *kind, const char *path, const char *kernels)
{
	for (size_t i = 0; i < ncands; i++)
		if (!strcmp(cands[i].kind, kind) && !strcmp(cands[i].path, path) &&
		    !strcmp(cands[i].kernels, kernels))
			return &cands[i];
	return NULL;
}

/* How many candidates of kind (NULL: any) hold kernel name. */
static int holding(const char *kind, const char *name)
{
	int n = 0;

	for (size_t i = 0; i < ncands; i++)
		n += (!kind || !strcmp(cands[i].kind, kind)) &&
		     strstr(cands[i].kernels, name) != NULL;
	return n;
}

static void dump(void)
{
	for (size_t i = 0; i < ncands; i++)
		fprintf(stderr, "  %lld %s %s [%s] %s | %s | %s gain %.0f\n", cands[i].rank,
			cands[i].kind, cands[i].path, cands[i].kernels, cands[i].before,
			cands[i].after, cands[i].evidence, cands[i].total_gain);
}

/* ---- the checks --------------------------------------------------------- */

static void check_chain3(void)
{
	const struct cand *c = find("chain", "A/chain", "ew_a_kernel > ew_b_kernel > ew_c_kernel");
	double fused, pred, own;

	if (!c)
		dump();
	ASSERT(c != NULL);
	ASSERT_STR_EQ(c->path, "A/chain");
	ASSERT_EQ(c->nkernels, 3);
	ASSERT_EQ(c->instances, 3);
	ASSERT_EQ(c->saved_launches, 2);
	ASSERT_STR_EQ(c->evidence, "bytes");
	ASSERT_STR_EQ(c->before, "range start");
	ASSERT_STR_EQ(c->after, "range end");
	ASSERT_NEAR(c->time_ns, 170e3, 1e-9);
	ASSERT_NEAR(c->dram, 7 * NB, 1e-9);
	/* Intermediates of NB each gone: ew_c's second input is read. */
	ASSERT_NEAR(c->fused_rd, 2 * NB, 1e-9);
	ASSERT_NEAR(c->fused_wr, NB, 1e-9);
	fused = 3 * NB;
	/* f = 1/3: exactly the add's roof. */
	ASSERT_NEAR(c->fused_bw, ADD_BW, 1e-9);
	pred = 1e9 * fused / ADD_BW;
	ASSERT_NEAR(c->pred, pred, 1e-9);
	/* At the kernels' own bandwidths weighted by their bytes (not the
	 * chain's bytes over its time, 7 NB / 170 us). */
	own = 1e9 * NB * (4 / 50e3 + 4 / 50e3 + 9 / 70e3) / 7;
	ASSERT(own < ADD_BW);
	ASSERT_NEAR(c->pred_ach, 1e9 * fused / own, 1e-6);
	ASSERT(fabs(c->pred_ach - 170e3 * fused / (7 * NB)) > 10);
	ASSERT(c->pred_ach > c->pred);
	ASSERT_NEAR(c->gain, 170e3 - pred, 1e-9);
	ASSERT_NEAR(c->total_gain, 3 * (170e3 - pred), 1e-9);
	ASSERT_NEAR(c->range_time, 170e3, 1e-9);
	ASSERT_NEAR(c->range_frac, (170e3 - pred) / 170e3, 1e-9);
	ASSERT(c->program_time > 3 * 170e3);
	ASSERT_NEAR(c->program_frac, 3 * (170e3 - pred) / c->program_time, 1e-9);
}

static void check_boundaries(void)
{
	const struct cand *c;

	/* B: the GEMM splits; the chain after it starts at the GEMM. */
	ASSERT_EQ(holding("chain", "gemm"), 0);
	ASSERT_EQ(holding("cross-range", "gemm"), 0);
	c = find("chain", "B/gemm", "ew_b_kernel > ew_c_kernel");
	ASSERT(c != NULL);
	ASSERT_STR_EQ(c->before, "gemm");
	ASSERT_STR_EQ(c->after, "range end");
	ASSERT_EQ(holding("chain", "ew_a_kernel") - 1, 0);
	c = find("epilogue", "B/gemm", "sm90_xmma_gemm_bf16_tn > ew_b_kernel");
	ASSERT(c != NULL);
	ASSERT_EQ(c->rank, 0);
	ASSERT(isnan(c->pred) && isnan(c->gain));
	ASSERT(find("prologue", "B/gemm", "ew_a_kernel > sm90_xmma_gemm_bf16_tn") != NULL);
	/* C: the compute-bound kernel splits; a kernel of tensor-pipe FLOPs
	 * named like no GEMM is a GEMM boundary too. */
	ASSERT_EQ(holding(NULL, "heavy_math_kernel"), 0);
	c = find("chain", "C/compute", "ew_b_kernel > ew_c_kernel");
	ASSERT(c != NULL);
	ASSERT_STR_EQ(c->before, "compute-bound");
	ASSERT_STR_EQ(c->after, "gemm");
	ASSERT(find("prologue", "C/compute", "ew_c_kernel > my_attention_kernel") != NULL);
	ASSERT_EQ(holding("chain", "my_attention_kernel"), 0);
	/* G: the 80 µs gap is a host sync. */
	ASSERT_EQ(holding(NULL, "synced_"), 0);
}

static void check_streams(void)
{
	const struct cand *a = find("chain", "D/streams", "stream1_a > stream1_b");
	const struct cand *b = find("chain", "D/streams", "stream2_a > stream2_b");

	if (!a || !b)
		dump();
	ASSERT(a != NULL && b != NULL);
	ASSERT_NEAR(a->dram, 4 * NB, 1e-9);
	ASSERT_NEAR(b->dram, NB / 2, 1e-9);
	ASSERT_NEAR(b->fused_rd + b->fused_wr, NB / 4, 1e-9);
}

static void check_reread_and_reduction(void)
{
	const struct cand *e = find("chain", "E/norm", "row_stats > row_apply");
	const struct cand *f = find("chain", "F/colsum", "pre_scale > col_partials");

	if (!e || !f)
		dump();
	ASSERT(e != NULL && f != NULL);
	/* The statistics' input read once, their output gone. */
	ASSERT_NEAR(e->fused_rd, NB, 1e-9);
	ASSERT_NEAR(e->fused_wr, NB, 1e-9);
	ASSERT_NEAR(e->fused_bw, COPY_BW, 1e-9);
	ASSERT_STR_EQ(f->after, "grid-wide reduction");
	ASSERT_EQ(holding(NULL, "col_sum"), 0);
	/* The partials reduce pre_scale's output and nothing reads it again:
	 * it stays written once (a gradient the program keeps). */
	ASSERT_NEAR(f->fused_rd, 2 * NB, 1e-9);
	ASSERT_NEAR(f->fused_wr, NB + NB / 100, 1e-9);
}

/* Softmax in four kernels: x read once (the max's input again in exp),
 * exp's output gone although the sum reduces it, since the divide reads it
 * again; a norm's backward: dy and x read once by three kernels (the row
 * dots reduced them), dx kept (its only reader, the partials, reduces it). */
static void check_multi(void)
{
	const struct cand *sm = find("chain", "I/softmax", "sm_max > sm_exp > sm_sum > sm_div");
	const struct cand *nb = find("chain", "J/normbwd", "rb_rowdot > rb_dx > rb_partial");

	if (!sm || !nb)
		dump();
	ASSERT(sm != NULL && nb != NULL);
	ASSERT_NEAR(sm->fused_rd, NB, 1e-9);
	ASSERT_NEAR(sm->fused_wr, NB, 1e-9);
	ASSERT_EQ(sm->saved_launches, 3);
	ASSERT_NEAR(nb->fused_rd, 2 * NB, 1e-9);
	ASSERT_NEAR(nb->fused_wr, NB + NB / 100, 1e-9);
	ASSERT_STR_EQ(nb->after, "grid-wide reduction");
	ASSERT_EQ(holding(NULL, "rb_sum"), 0);
}

/* A grid-wide reduction's last pass is told by its own bytes: it reads
 * at most 1/8 of what the kernel before it moved and stores less than
 * half of that; neither its blocks (256 > the SMs here) nor the
 * write-backs in its counters (four times its reads) nor a producer that
 * wrote its output beside the partials hide it. The chain ends before it
 * both where the partials stand alone (M) and where they sit beside dx
 * (L, no byte link to the sum otherwise). */
static void check_tail(void)
{
	const struct cand *l = find("chain", "L/lnbwd", "lb_grad > lb_dx_partials");
	const struct cand *m = find("chain", "M/colsum", "pre_scale > mb_partials");

	if (!l || !m)
		dump();
	ASSERT(l != NULL && m != NULL);
	ASSERT_STR_EQ(l->after, "grid-wide reduction");
	ASSERT_STR_EQ(m->after, "grid-wide reduction");
	ASSERT_EQ(holding(NULL, "partial_sum"), 0);
	/* dx and the partials stay written; lb_grad's output is gone. */
	ASSERT_NEAR(l->fused_wr, NB + NB / 64, 1e-9);
	ASSERT_NEAR(l->fused_rd, 3 * NB, 1e-9);
}

/* Only what the consumer reads is an intermediate. A consumer launched
 * like its producer (elementwise over the same elements) reads whole
 * tensors of its output's size: of the dropout's output and byte mask,
 * the add reads the output (its second input is the residual), so the
 * mask stays written; a producer's two outputs of that size, both read,
 * are both gone. */
static void check_outputs(void)
{
	const struct cand *n = find("chain", "N/dropout", "nd_bias > nd_dropout > nd_add");
	const struct cand *o = find("chain", "O/twoout", "two_out > two_in");

	if (!n || !o)
		dump();
	ASSERT(n != NULL && o != NULL);
	ASSERT_STR_EQ(n->evidence, "bytes");
	/* x and the residual read; the output and the mask written. */
	ASSERT_NEAR(n->fused_rd, 2 * NB, 1e-9);
	ASSERT_NEAR(n->fused_wr, NB + NB / 4, 1e-9);
	ASSERT_NEAR(o->fused_rd, NB, 1e-9);
	ASSERT_NEAR(o->fused_wr, NB, 1e-9);
	/* Its kernels move 3 NB in 50 us each, faster than the roof: the
	 * prediction at their bandwidth is held to the roof's. */
	ASSERT(3 * NB / 50e-6 > COPY_BW);
	ASSERT_NEAR(o->pred_ach, o->pred, 1e-6);
}

/* The chain of kind "chain" at path with these kernels, which must be
 * listed (the whole view is printed if not), reading rd and writing wr
 * bytes fused. */
static const struct cand *expect_chain(const char *path, const char *kernels,
				       double rd, double wr)
{
	const struct cand *c = find("chain", path, kernels);

	if (!c)
		dump();
	ASSERT(c != NULL);
	ASSERT_NEAR(c->fused_rd, rd, 1e-9);
	ASSERT_NEAR(c->fused_wr, wr, 1e-9);
	return c;
}

/* Pointers read (profile --metrics). Softplus: the second kernel shares three
 * buffers of one tensor each with the first, de (the intermediate) and dy
 * and e (read again), so a fused kernel reads dy, e and x once each and
 * writes dx; from the bytes alone it would read dy and e twice (5 NB). */
static void check_pointers(void)
{
	const struct cand *c;

	c = expect_chain("P/softplus", "sp_log1p_bwd > sp_exp_bwd", 3 * NB, NB);
	ASSERT_NEAR(c->dram, 8 * NB, 1e-9);
	/* SwiGLU: the two kernels share the packed input's pointer, but that
	 * buffer holds two tensors (2 NB): its halves are read once each,
	 * both read fused */
	expect_chain("Q/swiglu", "sw_silu > sw_mul", 2 * NB, NB);
	/* The same two in arenas: dy and e, each bounded by the pointer
	 * above it, are read again; the packed input, 2 NB up to s, is not */
	expect_chain("T/arena", "sp_log1p_bwd > sp_exp_bwd", 3 * NB, NB);
	expect_chain("U/packed", "sw_silu > sw_mul", 2 * NB, NB);
	/* No allocation in common: no data flow, so no chain, though the
	 * bytes and the launches match; a view at an offset into the
	 * producer's output is the same allocation: a chain, y gone. */
	ASSERT_EQ(holding(NULL, "rf_"), 0);
	c = expect_chain("S/offset", "so_first > so_second", NB, NB);
	ASSERT_STR_EQ(c->before, "range start");
}

static void check_cross(void)
{
	const struct cand *c = find("cross-range", "H/one", "cross_a > cross_b");

	ASSERT(c != NULL);
	ASSERT_STR_EQ(c->last, "H/two");
	ASSERT_EQ(holding("chain", "cross_"), 0);
	/* Nothing else crosses: every other range is 1 ms from the next. */
	for (size_t i = 0; i < ncands; i++)
		ASSERT(strcmp(cands[i].kind, "cross-range") || &cands[i] == c);
}

/* Kernels outside any range chain as one stretch; no range time. */
static void check_outside(void)
{
	const struct cand *c = find("chain", "out_a", "out_a > out_b");

	if (!c)
		dump();
	ASSERT(c != NULL);
	ASSERT(isnan(c->range_time) && isnan(c->range_frac));
	ASSERT(isfinite(c->program_frac));
	ASSERT_STR_EQ(c->before, "range end");
	ASSERT_EQ(holding("cross-range", "out_"), 0);
}

static void check_rank(void)
{
	const struct cand *a = find("chain", "A/chain", "ew_a_kernel > ew_b_kernel > ew_c_kernel");
	const struct cand *e = find("chain", "E/norm", "row_stats > row_apply");
	long long n = 0;

	/* Ranks 1..n over the predicted candidates, by total gain. */
	for (size_t i = 0; i < ncands; i++) {
		if (!cands[i].rank)
			continue;
		ASSERT_EQ(cands[i].rank, ++n);
		if (i > 0 && cands[i - 1].rank)
			ASSERT(cands[i - 1].total_gain >= cands[i].total_gain);
	}
	ASSERT(n >= 6);
	/* A gains less per instance than E, more in all: A ranks first. */
	ASSERT(a->gain < e->gain);
	ASSERT(a->total_gain > e->total_gain);
	ASSERT_EQ(a->rank, 1);
	ASSERT_EQ(e->rank, 2);
}

/* v_fusion_predicted: each range with chains inside it (a chain outside
 * any range has no range time, so no range to take it from), its time
 * less its chains' gains a range instance (a gain times its occurrences
 * over the range's samples; a chain predicted to lose, none), at the roof
 * and at the chains' own bandwidth: against the candidates read by
 * load(). */
static void check_predicted(const char *db, long long run)
{
	struct store *st;
	sqlite3_stmt *s;
	char sql[512], path[32];
	int rc, nrows = 0, seen_a = 0;

	ASSERT_EQ(store_open(&st, db, STORE_READONLY), 0);
	snprintf(sql, sizeof sql, "SELECT p.workload, p.samples, p.chains, p.time_ns,"
		 " p.predicted_ns, p.predicted_achieved_ns,"
		 " (SELECT count(*) FROM samples x WHERE x.op_id = p.op_id)"
		 " FROM v_fusion_predicted p WHERE p.run_id = %lld", run);
	if (sqlite3_prepare_v2(store_db(st), sql, -1, &s, NULL) != SQLITE_OK)
		FAIL("v_fusion_predicted: %s", sqlite3_errmsg(store_db(st)));
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const long long samples = sqlite3_column_int64(s, 1);
		const double t = real(s, 3), pred = real(s, 4), own = real(s, 5);
		double g = 0, ga = 0;
		long long chains = 0;

		text(s, 0, path, sizeof path);
		ASSERT_EQ(samples, sqlite3_column_int64(s, 6));
		ASSERT(samples > 0);
		for (size_t i = 0; i < ncands; i++) {
			const struct cand *c = &cands[i];

			if (strcmp(c->kind, "chain") || strcmp(c->path, path) ||
			    isnan(c->range_time))
				continue;
			chains++;
			g += fmax(c->gain, 0) * (double)c->instances;
			ga += fmax(c->time_ns - c->pred_ach, 0) * (double)c->instances;
		}
		ASSERT(chains > 0);
		ASSERT_EQ(sqlite3_column_int64(s, 2), chains);
		ASSERT_NEAR(pred, t - g / (double)samples, 1e-9);
		ASSERT_NEAR(own, t - ga / (double)samples, 1e-9);
		ASSERT(pred <= own);
		ASSERT(pred < t);
		if (!strcmp(path, "A/chain")) {
			const struct cand *a = find("chain", "A/chain",
						    "ew_a_kernel > ew_b_kernel > ew_c_kernel");

			/* one chain an instance, three instances */
			ASSERT_EQ(samples, 3);
			ASSERT_NEAR(pred, t - (170e3 - a->pred), 1e-9);
			seen_a = 1;
		}
		nrows++;
	}
	if (rc != SQLITE_DONE)
		FAIL("v_fusion_predicted: %s", sqlite3_errmsg(store_db(st)));
	sqlite3_finalize(s);
	store_close(st);
	/* a row for every range with an in-range chain, and no other */
	{
		int ranges = 0;

		for (size_t i = 0; i < ncands; i++) {
			size_t j;

			if (strcmp(cands[i].kind, "chain") || isnan(cands[i].range_time))
				continue;
			for (j = 0; j < i; j++)
				if (!strcmp(cands[j].kind, "chain") &&
				    !isnan(cands[j].range_time) &&
				    !strcmp(cands[j].path, cands[i].path))
					break;
			ranges += j == i;
		}
		ASSERT_EQ(nrows, ranges);
		ASSERT(!ranges || seen_a);
	}
}

int main(int argc, char **argv)
{
	char db[4096];
	long long run, timing;

	if (argc == 3 && !strcmp(argv[1], "--make")) {
		make_run(argv[2], "timing", 0);
		make_run(argv[2], "synthetic", 1);
		return 0;
	}
	snprintf(db, sizeof db, "%s/test-opps-%ld.db", getenv("TMPDIR") ?
		 getenv("TMPDIR") : "/tmp", (long)getpid());
	unlink(db);
	timing = make_run(db, "timing", 0);
	run = make_run(db, "synthetic", 1);
	load(db, run);
	check_chain3();
	check_boundaries();
	check_streams();
	check_reread_and_reduction();
	check_multi();
	check_tail();
	check_outputs();
	check_pointers();
	check_outside();
	check_cross();
	check_rank();
	check_predicted(db, run);
	/* Without counters: no candidate, nothing guessed. */
	load(db, timing);
	ASSERT_EQ(ncands, 0);
	check_predicted(db, timing);
	for (const char *sfx = ""; ; sfx = sfx[0] ? NULL : "-wal") {
		char *p;

		if (!sfx)
			break;
		p = xasprintf("%s%s", db, sfx);
		unlink(p);
		free(p);
	}
	unlink(db);
	return 0;
}
