/* test-report-views.c - v_roofline and v_fusion against the reference C
 * math (reports/roofline.c, reports/fusion.c) on a fresh synthetic
 * database: same raw counters in, same numbers out. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "fusion.h"
#include "roofline.h"
#include "store.h"
#include "synth.h"
#include "test.h"
#include "util.h"

/* Equal, or both unknown. */
#define SAME(a, b, what, id) do { \
	double a_ = (a), b_ = (b); \
	if (isnan(a_) != isnan(b_) || \
	    (!isnan(a_) && fabs(a_ - b_) > 1e-9 * fmax(1, fabs(b_)))) \
		FAIL("op %lld: %s: view %.17g, reference %.17g", (long long)(id), \
		     what, a_, b_); \
} while (0)

static double col(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL ? NAN : sqlite3_column_double(s, i);
}

/* Op id's kernels, one per name with its time a repetition (dur_ns
 * times launches, summed), into k (at most max; names strdup'd, the
 * caller frees them); their count, or -1. */
static int op_kernels(sqlite3 *db, long long id, struct fu_kernel *k, int max)
{
	sqlite3_stmt *s;
	int n = 0;

	if (sqlite3_prepare_v2(db, "SELECT name, sum(dur_ns * launches) FROM kernels"
			       " WHERE op_id = ?1 GROUP BY name", -1, &s, NULL))
		return -1;
	sqlite3_bind_int64(s, 1, id);
	while (n < max && sqlite3_step(s) == SQLITE_ROW) {
		k[n].name = xstrdup((const char *)sqlite3_column_text(s, 0));
		k[n++].ns = sqlite3_column_double(s, 1);
	}
	sqlite3_finalize(s);
	return n;
}

static const struct rf_op *find(const struct rf_run *r, long long id)
{
	for (size_t i = 0; i < r->nops; i++)
		if (r->ops[i].op_id == id)
			return &r->ops[i];
	return NULL;
}

/* Usage: test-report-views [SEED]   (default: from the time and pid; the
 * seed is printed, to run a failure again) */
int main(int argc, char **argv)
{
	unsigned long long seed = argc > 1 ? strtoull(argv[1], NULL, 10)
					   : (unsigned long long)time(NULL) ^
					     (unsigned long long)getpid();
	char path[] = "/tmp/fuseprof-test-views.XXXXXX";
	struct synth_opts o = { .nops = 300, .seed = seed, .ceilings = 1, .counters = 1,
				.wrong_every = 7 };
	struct store *st;
	struct rf_run r;
	struct fu_pairs p;
	sqlite3_stmt *s, *ks;
	long long run_id;
	size_t checked = 0, expect_pairs = 0, wrong = 0, writebacks = 0;
	size_t seg[3] = { 0, 0, 0 }, multi = 0, mixed = 0, differ = 0;
	size_t notes[3] = { 0, 0, 0 }, shared = 0, clauses = 0;
	int fd;

	fprintf(stderr, "seed %llu\n", seed);
	fd = mkstemp(path);
	if (fd < 0)
		return TEST_HARD_ERROR;
	close(fd);
	unlink(path);
	run_id = synth_build(path, &o);
	if (run_id < 0)
		return TEST_HARD_ERROR;
	/* Every third fused op 2.5 times slower: fused ops that lose to
	 * their unfused twins, which the synthetic timings rarely give. */
	{
		sqlite3 *db = NULL;
		int rc = sqlite3_open(path, &db);

		if (rc == SQLITE_OK)
			rc = sqlite3_exec(db, "UPDATE ops SET time_ns = 2.5 * time_ns"
					  " WHERE role = 'fused' AND id % 3 = 0", NULL, NULL, NULL);
		sqlite3_close(db);
		if (rc != SQLITE_OK)
			return TEST_HARD_ERROR;
	}
	if (store_open(&st, path, STORE_READONLY) || rf_load(st, run_id, NULL, &r) ||
	    fusion_load(st, run_id, NULL, &p))
		return TEST_HARD_ERROR;
	ASSERT_EQ(r.nops, 300);

	/* The raw inputs, from v_ops, through the reference math. */
	if (sqlite3_prepare_v2(store_db(st),
			       "SELECT op_id, time_ns, launches, flops_fp32, flops_fp64,"
			       " flops_fp16, flops_tensor, dram_read_bytes, dram_write_bytes,"
			       " dram_writeback_bytes, l2_bytes, l1_bytes, model_flops,"
			       " model_min_bytes, model_variant_bytes, ncounters, dram_bytes"
			       " FROM v_ops WHERE run_id = ?1", -1, &s, NULL))
		return TEST_HARD_ERROR;
	sqlite3_bind_int64(s, 1, run_id);
	/* Each op's kernels, for the DRAM roof of an op of several. */
	if (sqlite3_prepare_v2(store_db(st),
			       "SELECT dram_read_bytes, dram_write_bytes, dram_writeback_bytes"
			       " FROM v_kernel_counters WHERE op_id = ?1", -1, &ks, NULL))
		return TEST_HARD_ERROR;
	while (sqlite3_step(s) == SQLITE_ROW) {
		long long id = sqlite3_column_int64(s, 0);
		const struct rf_op *v = find(&r, id);
		struct rf_op c = { .op_id = id };
		struct rf_kernel_dram kd[8];
		size_t nk = 0;
		const char *prov;
		char basis[64];
		double agg;

		ASSERT(v);
		c.dtype = v->dtype;
		c.time_ns = col(s, 1);
		c.launches = col(s, 2);
		c.flops_fp32 = col(s, 3);
		c.flops_fp64 = col(s, 4);
		c.flops_fp16 = col(s, 5);
		c.flops_tensor = col(s, 6);
		c.dram_read_bytes = col(s, 7);
		c.dram_write_bytes = col(s, 8);
		c.dram_writeback_bytes = col(s, 9);
		c.l2_bytes = col(s, 10);
		c.l1_bytes = col(s, 11);
		c.model_flops = col(s, 12);
		c.model_min_bytes = col(s, 13);
		c.model_variant_bytes = col(s, 14);
		sqlite3_bind_int64(ks, 1, id);
		while (sqlite3_step(ks) == SQLITE_ROW) {
			ASSERT(nk < ARRAY_SIZE(kd));
			kd[nk].read = col(ks, 0);
			kd[nk].write = col(ks, 1);
			kd[nk++].writeback = col(ks, 2);
		}
		sqlite3_reset(ks);
		rf_derive(&c, sqlite3_column_int64(s, 15) > 0, kd, nk, &r);
		/* v_ops's own sum, and the view's, agree with the reference. */
		SAME(col(s, 16), c.dram_bytes, "v_ops dram_bytes", id);
		SAME(v->dram_bytes, c.dram_bytes, "dram_bytes", id);
		SAME(v->dram_writeback_bytes, c.dram_writeback_bytes,
		     "dram_writeback_bytes", id);
		SAME(v->dram_write_frac, c.dram_write_frac, "dram_write_frac", id);
		ASSERT_STR_EQ(v->dram_bw_provenance, c.dram_bw_provenance);
		ASSERT_STR_EQ(v->dram_bw_basis, c.dram_bw_basis);
		/* Several kernels: each at the roof of its own mix. Where
		 * their mixes differ, the mix of the whole op gives another
		 * roof (a read-only and a copy kernel: f = 1/4 or so, between
		 * read and add, where neither kernel ran). */
		if (nk > 1) {
			ASSERT(!strncmp(c.dram_bw_basis, "kernels (", 9));
			multi++;
			agg = rf_dram_bw(&r, c.dram_write_frac, &prov, basis, sizeof basis);
			if (strchr(c.dram_bw_basis, ',')) {
				mixed++;
				/* Mostly: two mixes whose roofs lie close
				 * (add and copy) can give nearly the same. */
				differ += fabs(agg - c.dram_bw) > 1e-6 * c.dram_bw;
			}
			/* The least time is at least the fastest mix's. */
			ASSERT(c.dram_bw <= 3.35e12 * (1 + 1e-12));
		}
		seg[0] += !strncmp(c.dram_bw_basis, "read..add ", 10);
		seg[1] += !strncmp(c.dram_bw_basis, "add..copy ", 10);
		seg[2] += !strncmp(c.dram_bw_basis, "copy..write ", 12);
		writebacks += !isnan(c.dram_writeback_bytes);
		free(c.dram_bw_basis);
		ASSERT_STR_EQ(v->precision, c.precision);
		ASSERT_STR_EQ(v->bound, c.bound);
		ASSERT_STR_EQ(v->peak_provenance, c.peak_provenance);
		SAME(v->flops, c.flops, "flops", id);
		SAME(v->ai_dram, c.ai_dram, "ai_dram", id);
		SAME(v->ai_l2, c.ai_l2, "ai_l2", id);
		SAME(v->ai_l1, c.ai_l1, "ai_l1", id);
		SAME(v->flop_rate, c.flop_rate, "flop_rate", id);
		SAME(v->dram_rate, c.dram_rate, "dram_rate", id);
		SAME(v->l2_rate, c.l2_rate, "l2_rate", id);
		SAME(v->peak_flop_rate, c.peak_flop_rate, "peak_flop_rate", id);
		SAME(v->dram_bw, c.dram_bw, "dram_bw", id);
		SAME(v->l2_bw, c.l2_bw, "l2_bw", id);
		SAME(v->roof, c.roof, "roof", id);
		SAME(v->roof_pct, c.roof_pct, "roof_pct", id);
		SAME(v->roof_l2, c.roof_l2, "roof_l2", id);
		SAME(v->roof_l2_pct, c.roof_l2_pct, "roof_l2_pct", id);
		SAME(v->traffic_eff, c.traffic_eff, "traffic_eff", id);
		SAME(v->eff_bw, c.eff_bw, "eff_bw", id);
		SAME(v->eff_bw_pct, c.eff_bw_pct, "eff_bw_pct", id);
		/* The synthetic ops all have counters and ceilings: the
		 * comparisons above must not be NaN == NaN throughout. */
		ASSERT(isfinite(v->flops) && isfinite(v->ai_dram));
		checked++;
	}
	sqlite3_finalize(s);
	sqlite3_finalize(ks);
	ASSERT_EQ(checked, r.nops);
	/* Every segment of the DRAM roof was met, and ops with and without
	 * write-backs. */
	ASSERT(seg[0] > 0 && seg[1] > 0 && seg[2] > 0);
	ASSERT(multi > 0 && mixed > 0);
	ASSERT(2 * differ >= mixed);
	ASSERT_EQ(seg[0] + seg[1] + seg[2] + multi, checked);
	ASSERT(writebacks > 0 && writebacks < checked);

	/* Every ok fused op pairs with every other ok op of its group. */
	for (size_t i = 0; i < r.nops; i++) {
		const struct rf_op *f = &r.ops[i];

		wrong += strcmp(f->status, "ok") != 0;
		if (strcmp(f->role, "fused") || strcmp(f->status, "ok"))
			continue;
		for (size_t j = 0; j < r.nops; j++) {
			const struct rf_op *b = &r.ops[j];

			expect_pairs += j != i && !strcmp(b->status, "ok") &&
					!strcmp(b->workload, f->workload) &&
					!strcmp(b->dtype, f->dtype) &&
					!strcmp(b->shape, f->shape);
		}
	}
	ASSERT(wrong > 0);
	ASSERT(expect_pairs > 0);
	ASSERT_EQ(p.n, expect_pairs);
	for (size_t i = 0; i < p.n; i++) {
		const struct fu_pair *v = &p.v[i];
		const struct rf_op *f = find(&r, v->fused_op_id), *b = find(&r, v->base_op_id);
		struct fu_pair c;

		ASSERT(f && b);
		ASSERT_STR_EQ(f->status, "ok");
		ASSERT_STR_EQ(b->status, "ok");
		ASSERT_STR_EQ(f->shape, b->shape);
		fusion_compute(f, b, &c);
		{
			struct fu_kernel fk[8], bk[8];
			int nf = op_kernels(store_db(st), f->op_id, fk, 8);
			int nb = op_kernels(store_db(st), b->op_id, bk, 8);

			ASSERT(nf > 0 && nb > 0);
			fusion_shared(&c, fk, (size_t)nf, bk, (size_t)nb);
			for (int k = 0; k < nf; k++)
				free((char *)fk[k].name);
			for (int k = 0; k < nb; k++)
				free((char *)bk[k].name);
		}
		SAME(v->shared_kernels, c.shared_kernels, "shared_kernels", v->fused_op_id);
		SAME(v->shared_delta_ns, c.shared_delta_ns, "shared_delta_ns", v->fused_op_id);
		SAME(v->own_ratio, c.own_ratio, "own_ratio", v->fused_op_id);
		shared += c.shared_kernels > 0;
		SAME(v->speedup, c.speedup, "speedup", v->fused_op_id);
		SAME(v->dram_ratio, c.dram_ratio, "dram_ratio", v->fused_op_id);
		SAME(v->launch_ratio, c.launch_ratio, "launch_ratio", v->fused_op_id);
		SAME(v->predicted_speedup, c.predicted_speedup, "predicted_speedup",
		     v->fused_op_id);
		SAME(v->kernel_ceiling, c.kernel_ceiling, "kernel_ceiling", v->fused_op_id);
		SAME(v->fused_roof_pct, c.fused_roof_pct, "fused_roof_pct", v->fused_op_id);
		SAME(v->base_eff_bw_pct, c.base_eff_bw_pct, "base_eff_bw_pct",
		     v->fused_op_id);
		ASSERT(v->speedup > 0);
		/* fusion cannot pay here: the bound and the note, against the
		 * fastest unfused twin found here */
		{
			const struct rf_op *best = NULL;
			char *note;

			for (size_t j = 0; j < p.n; j++) {
				const struct rf_op *u = find(&r, p.v[j].base_op_id);

				if (p.v[j].fused_op_id != v->fused_op_id ||
				    strcmp(u->role, "unfused"))
					continue;
				if (!best || u->time_ns < best->time_ns ||
				    (u->time_ns == best->time_ns && u->op_id < best->op_id))
					best = u;
			}
			ASSERT_EQ(v->best_unfused, best == b);
			SAME(v->fusion_removed_bytes, c.fusion_removed_bytes,
			     "fusion_removed_bytes", v->fused_op_id);
			SAME(v->fusion_removed_launches, c.fusion_removed_launches,
			     "fusion_removed_launches", v->fused_op_id);
			SAME(v->fusion_bound_ns, c.fusion_bound_ns, "fusion_bound_ns",
			     v->fused_op_id);
			SAME(v->fusion_bound_pct, c.fusion_bound_pct, "fusion_bound_pct",
			     v->fused_op_id);
			ASSERT_EQ(isnan(v->fusion_bound_ns), strcmp(b->role, "unfused") != 0 ||
				  isnan(b->model_variant_bytes) || isnan(b->dram_bw) ||
				  isnan(f->model_variant_bytes));
			note = fusion_note(&c, best == b);
			if (!note != !v->fusion_note)
				FAIL("op %lld vs %lld: note '%s' in the view, '%s' here",
				     v->fused_op_id, v->base_op_id,
				     v->fusion_note ? v->fusion_note : "(none)",
				     note ? note : "(none)");
			if (note) {
				ASSERT_STR_EQ(v->fusion_note, note);
				notes[strstr(note, "cannot pay") ? 0
				      : strstr(note, "missing kernel") ? 1 : 2]++;
				clauses += strstr(note, "both ops run took") != NULL;
			}
			free(note);
		}
	}
	/* the synthetic run holds fused ops slower than their twin */
	ASSERT(notes[0] + notes[1] + notes[2] > 0);
	printf("ok   fusion notes: %zu cannot pay, %zu missing kernel, %zu unbounded\n",
	       notes[0], notes[1], notes[2]);
	/* kernel_a runs in every variant: pairs share it, and the fused ops
	 * made slower above took longer outside it, so some notes say so */
	ASSERT(shared > 0 && shared <= p.n);
	ASSERT(clauses > 0);
	printf("ok   %zu pairs share kernels; %zu notes say the shared kernels took longer\n",
	       shared, clauses);

	/* The report's path: the same SQL over the rows rf_load kept gives
	 * the view's pairs bit for bit, in the same order. */
	{
		struct fu_pairs q;

		if (fusion_load_run(st, run_id, NULL, &q))
			return TEST_HARD_ERROR;
		ASSERT_EQ(q.n, p.n);
		for (size_t i = 0; i < p.n; i++) {
			const struct fu_pair *a = &p.v[i], *b = &q.v[i];
			const double x[] = { a->fused_time_ns, a->base_time_ns, a->speedup,
				a->fused_dram_bytes, a->base_dram_bytes, a->dram_ratio,
				a->fused_launches, a->base_launches, a->launch_ratio,
				a->fused_model_bytes, a->base_model_bytes,
				a->predicted_speedup, a->kernel_ceiling,
				a->fused_roof_pct, a->base_roof_pct,
				a->fused_eff_bw_pct, a->base_eff_bw_pct };
			const double y[] = { b->fused_time_ns, b->base_time_ns, b->speedup,
				b->fused_dram_bytes, b->base_dram_bytes, b->dram_ratio,
				b->fused_launches, b->base_launches, b->launch_ratio,
				b->fused_model_bytes, b->base_model_bytes,
				b->predicted_speedup, b->kernel_ceiling,
				b->fused_roof_pct, b->base_roof_pct,
				b->fused_eff_bw_pct, b->base_eff_bw_pct };

			ASSERT_EQ(a->fused_op_id, b->fused_op_id);
			ASSERT_EQ(a->base_op_id, b->base_op_id);
			ASSERT_STR_EQ(a->base_variant, b->base_variant);
			ASSERT_STR_EQ(a->base_role, b->base_role);
			ASSERT_EQ(a->best_unfused, b->best_unfused);
			ASSERT(!a->fusion_note == !b->fusion_note);
			if (a->fusion_note)
				ASSERT_STR_EQ(a->fusion_note, b->fusion_note);
			ASSERT(memcmp(&a->fusion_bound_ns, &b->fusion_bound_ns,
				      sizeof a->fusion_bound_ns) == 0);
			for (size_t k = 0; k < ARRAY_SIZE(x); k++)
				ASSERT(memcmp(&x[k], &y[k], sizeof x[k]) == 0);
		}
		fusion_release(&q);
	}
	fusion_release(&p);
	rf_release(&r);
	store_close(st);
	unlink(path);
	return 0;
}
