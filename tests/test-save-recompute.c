/* test-save-recompute.c - v_save_recompute on synthetic runs (tests/synth.c:
 * forwards and backwards in three variants that keep different bytes),
 * against its definition worked out here from v_ops: which ops pair, their
 * totals, the DRAM bytes' basis, and the trade-off columns within each
 * pattern; and `fuseprof report`'s reader (saved_load_run, over the rows
 * rf_load keeps) giving the same rows as the view. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "roofline.h"
#include "saved.h"
#include "store.h"
#include "synth.h"
#include "test.h"
#include "util.h"

#define MAX_OPS 512

/* Equal within rounding, or both unknown. */
#define SAME(a, b, what, id) do { \
	double a_ = (a), b_ = (b); \
	if (isnan(a_) != isnan(b_) || \
	    (!isnan(a_) && fabs(a_ - b_) > 1e-9 * fmax(1, fabs(b_)))) \
		FAIL("forward op %lld: %s: view %.17g, expected %.17g", \
		     (long long)(id), what, a_, b_); \
} while (0)

struct op {
	long long id;
	char workload[64], variant[64], dtype[16], shape[96], status[16];
	char backward[64];  /* "" when none */
	double time_ns, dram_bytes, model_bytes, saved;
	int measured;       /* DRAM bytes from counters */
};

/* What the view should say of a forward op f paired with b. */
struct want {
	const struct op *f, *b;
	double total, fwd_dram, bwd_dram;
	const char *basis;
	double bytes_saved, time_paid, time_ratio;
	const char *saves_most, *fastest;
	int seen;
};

static double col(sqlite3_stmt *s, int i)
{
	return sqlite3_column_type(s, i) == SQLITE_NULL ? NAN : sqlite3_column_double(s, i);
}

static void text(sqlite3_stmt *s, int i, char *buf, size_t n)
{
	const unsigned char *t = sqlite3_column_text(s, i);

	snprintf(buf, n, "%s", t ? (const char *)t : "");
}

static size_t load_ops(struct store *st, long long run_id, struct op *ops)
{
	sqlite3_stmt *s;
	size_t n = 0;

	if (sqlite3_prepare_v2(store_db(st),
			       "SELECT op_id, workload, variant, dtype, shape, status,"
			       " backward, time_ns, dram_bytes, model_variant_bytes,"
			       " model_saved_bytes FROM v_ops WHERE run_id = ?1",
			       -1, &s, NULL))
		exit(TEST_HARD_ERROR);
	sqlite3_bind_int64(s, 1, run_id);
	while (sqlite3_step(s) == SQLITE_ROW) {
		struct op *o = &ops[n++];

		ASSERT(n <= MAX_OPS);
		o->id = sqlite3_column_int64(s, 0);
		text(s, 1, o->workload, sizeof o->workload);
		text(s, 2, o->variant, sizeof o->variant);
		text(s, 3, o->dtype, sizeof o->dtype);
		text(s, 4, o->shape, sizeof o->shape);
		text(s, 5, o->status, sizeof o->status);
		text(s, 6, o->backward, sizeof o->backward);
		o->time_ns = col(s, 7);
		o->measured = sqlite3_column_type(s, 8) != SQLITE_NULL;
		o->dram_bytes = col(s, 8);
		o->model_bytes = col(s, 9);
		o->saved = col(s, 10);
	}
	sqlite3_finalize(s);
	return n;
}

static int same_pattern(const struct want *a, const struct want *b)
{
	return !strcmp(a->f->workload, b->f->workload) &&
	       !strcmp(a->f->dtype, b->f->dtype) && !strcmp(a->f->shape, b->f->shape);
}

/* The rows the view should have, worked out from the ops. */
static size_t expect(const struct op *ops, size_t n, struct want *w)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		const struct op *f = &ops[i];

		if (!*f->backward || strcmp(f->status, "ok"))
			continue;
		for (size_t j = 0; j < n; j++) {
			const struct op *b = &ops[j];

			if (strcmp(b->workload, f->backward) || strcmp(b->variant, f->variant) ||
			    strcmp(b->dtype, f->dtype) || strcmp(b->shape, f->shape) ||
			    strcmp(b->status, "ok"))
				continue;
			memset(&w[k], 0, sizeof w[k]);
			w[k].f = f;
			w[k].b = b;
			w[k].total = f->time_ns + b->time_ns;
			w[k].fwd_dram = f->measured ? f->dram_bytes : f->model_bytes;
			w[k].bwd_dram = b->measured ? b->dram_bytes : b->model_bytes;
			w[k].basis = f->measured && b->measured ? "measured"
				     : !f->measured && !b->measured ? "model" : "mixed";
			k++;
		}
	}
	for (size_t i = 0; i < k; i++) {
		const struct want *most = NULL, *fast = NULL;

		for (size_t j = 0; j < k; j++) {
			const struct want *x = &w[j];

			if (!same_pattern(&w[i], x))
				continue;
			if (!most || x->f->saved > most->f->saved ||
			    (x->f->saved == most->f->saved &&
			     strcmp(x->f->variant, most->f->variant) < 0))
				most = x;
			if (!fast || x->total < fast->total ||
			    (x->total == fast->total && strcmp(x->f->variant, fast->f->variant) < 0))
				fast = x;
		}
		w[i].saves_most = most->f->variant;
		w[i].bytes_saved = most->f->saved - w[i].f->saved;
		w[i].fastest = fast->f->variant;
		w[i].time_paid = w[i].total - fast->total;
		w[i].time_ratio = w[i].total / fast->total;
	}
	return k;
}

static struct want *find(struct want *w, size_t n, long long fwd_op_id)
{
	for (size_t i = 0; i < n; i++)
		if (w[i].f->id == fwd_op_id)
			return &w[i];
	return NULL;
}

/* One row (of the view or the reader) against what is expected. */
static void check_row(struct want *w, size_t n, const struct sr_row *r)
{
	struct want *x = find(w, n, r->fwd_op_id);

	if (!x)
		FAIL("forward op %lld (%s/%s/%s/%s) paired, but should not be",
		     r->fwd_op_id, r->workload, r->variant, r->dtype, r->shape);
	x->seen++;
	ASSERT_EQ(r->bwd_op_id, x->b->id);
	ASSERT_STR_EQ(r->workload, x->f->workload);
	ASSERT_STR_EQ(r->backward, x->b->workload);
	ASSERT_STR_EQ(r->variant, x->f->variant);
	ASSERT_STR_EQ(r->dram_basis, x->basis);
	ASSERT_STR_EQ(r->saves_most, x->saves_most);
	ASSERT_STR_EQ(r->fastest, x->fastest);
	SAME(r->saved_bytes, x->f->saved, "saved_bytes", r->fwd_op_id);
	SAME(r->fwd_time_ns, x->f->time_ns, "fwd_time_ns", r->fwd_op_id);
	SAME(r->bwd_time_ns, x->b->time_ns, "bwd_time_ns", r->fwd_op_id);
	SAME(r->total_time_ns, x->total, "total_time_ns", r->fwd_op_id);
	SAME(r->fwd_dram_bytes, x->fwd_dram, "fwd_dram_bytes", r->fwd_op_id);
	SAME(r->bwd_dram_bytes, x->bwd_dram, "bwd_dram_bytes", r->fwd_op_id);
	SAME(r->total_dram_bytes, x->fwd_dram + x->bwd_dram, "total_dram_bytes",
	     r->fwd_op_id);
	SAME(r->bytes_saved, x->bytes_saved, "bytes_saved", r->fwd_op_id);
	SAME(r->time_paid_ns, x->time_paid, "time_paid_ns", r->fwd_op_id);
	SAME(r->time_ratio, x->time_ratio, "time_ratio", r->fwd_op_id);
}

/* The view's rows of run_id, as sr_rows. */
static void view_rows(struct store *st, long long run_id, struct sr_rows *out)
{
	sqlite3_stmt *s;
	size_t alloc = 0;
	char buf[128];

	memset(out, 0, sizeof *out);
	if (sqlite3_prepare_v2(store_db(st),
			       "SELECT fwd_op_id, bwd_op_id, workload, backward, variant,"
			       " dram_basis, saves_most, fastest, dtype, shape, saved_bytes,"
			       " fwd_time_ns, bwd_time_ns, total_time_ns, fwd_dram_bytes,"
			       " bwd_dram_bytes, total_dram_bytes, bytes_saved, time_paid_ns,"
			       " time_ratio FROM v_save_recompute WHERE run_id = ?1",
			       -1, &s, NULL))
		exit(TEST_HARD_ERROR);
	sqlite3_bind_int64(s, 1, run_id);
	while (sqlite3_step(s) == SQLITE_ROW) {
		struct sr_row *r;

		if (out->n == alloc) {
			alloc = alloc ? 2 * alloc : 16;
			out->v = xrealloc(out->v, alloc * sizeof *out->v);
		}
		r = &out->v[out->n++];
		memset(r, 0, sizeof *r);
		r->fwd_op_id = sqlite3_column_int64(s, 0);
		r->bwd_op_id = sqlite3_column_int64(s, 1);
#define TEXT(i, f) (text(s, i, buf, sizeof buf), r->f = xstrdup(buf))
		TEXT(2, workload);
		TEXT(3, backward);
		TEXT(4, variant);
		TEXT(5, dram_basis);
		TEXT(6, saves_most);
		TEXT(7, fastest);
		TEXT(8, dtype);
		TEXT(9, shape);
#undef TEXT
		r->saved_bytes = col(s, 10);
		r->fwd_time_ns = col(s, 11);
		r->bwd_time_ns = col(s, 12);
		r->total_time_ns = col(s, 13);
		r->fwd_dram_bytes = col(s, 14);
		r->bwd_dram_bytes = col(s, 15);
		r->total_dram_bytes = col(s, 16);
		r->bytes_saved = col(s, 17);
		r->time_paid_ns = col(s, 18);
		r->time_ratio = col(s, 19);
	}
	sqlite3_finalize(s);
}

static void free_view_rows(struct sr_rows *r)
{
	for (size_t i = 0; i < r->n; i++) {
		struct sr_row *x = &r->v[i];

		free(x->workload);
		free(x->backward);
		free(x->variant);
		free(x->dram_basis);
		free(x->saves_most);
		free(x->fastest);
		free(x->dtype);
		free(x->shape);
	}
	free(r->v);
}

/* Every expected row seen exactly once, through the view and the reader;
 * returns how many patterns show a trade-off (some variant saves bytes and
 * some pays time). */
static int check_run(struct store *st, long long run_id, const char *basis)
{
	static struct op ops[MAX_OPS];
	static struct want w[MAX_OPS];
	size_t nops = load_ops(st, run_id, ops), n = expect(ops, nops, w);
	struct sr_rows view, rd;
	struct rf_run run;
	int tradeoffs = 0;

	ASSERT(n > 0);
	/* Some forward with a backward is left out (it or its backward is
	 * wrong: synth's wrong_every). */
	{
		size_t fwd = 0;

		for (size_t i = 0; i < nops; i++)
			fwd += *ops[i].backward != 0;
		ASSERT(n < fwd);
	}
	view_rows(st, run_id, &view);
	ASSERT_EQ(view.n, n);
	for (size_t i = 0; i < view.n; i++)
		check_row(w, n, &view.v[i]);
	/* The reader, over the rows rf_load keeps (the report's path). */
	ASSERT_EQ(rf_load(st, run_id, NULL, &run), 0);
	ASSERT(rf_run_table_holds(st, run_id));
	ASSERT_EQ(saved_load_run(st, run_id, NULL, &rd), 0);
	ASSERT_EQ(rd.n, n);
	for (size_t i = 0; i < rd.n; i++)
		check_row(w, n, &rd.v[i]);
	/* Ordered by forward workload and op: a pattern's rows together. */
	for (size_t i = 1; i < rd.n; i++)
		ASSERT(rd.v[i - 1].fwd_op_id < rd.v[i].fwd_op_id);
	saved_release(&rd);
	/* With a workload filter: the pairs of that forward, or of that
	 * backward; none of another workload. */
	{
		const char *const fwd[] = { "bias_act_fwd", NULL };
		const char *const bwd[] = { "bias_act_bwd", NULL };
		const char *const other[] = { "softmax", NULL };

		ASSERT_EQ(saved_load_run(st, run_id, fwd, &rd), 0);
		ASSERT_EQ(rd.n, n);
		saved_release(&rd);
		ASSERT_EQ(saved_load_run(st, run_id, bwd, &rd), 0);
		ASSERT_EQ(rd.n, n);
		saved_release(&rd);
		ASSERT_EQ(saved_load_run(st, run_id, other, &rd), 0);
		ASSERT_EQ(rd.n, 0);
		saved_release(&rd);
	}
	rf_release(&run);
	for (size_t i = 0; i < n; i++) {
		ASSERT_EQ(w[i].seen, 2);
		ASSERT_STR_EQ(w[i].basis, basis);
		if (w[i].bytes_saved > 0 && w[i].time_paid > 0)
			tradeoffs++;
	}
	free_view_rows(&view);
	return tradeoffs;
}

int main(void)
{
	unsigned long long seed = (unsigned long long)time(NULL) ^ (unsigned long long)getpid();
	char path[] = "/tmp/fuseprof-test-saved.XXXXXX";
	struct synth_opts o = { .nops = 20, .seed = seed, .ceilings = 1, .counters = 1,
				.wrong_every = 7, .pairs = 10 };
	struct store *st;
	sqlite3_stmt *s;
	long long measured, modelled, none;
	int fd, tradeoffs;

	fprintf(stderr, "seed %llu\n", seed);
	fd = mkstemp(path);
	if (fd < 0)
		return TEST_HARD_ERROR;
	close(fd);
	unlink(path);
	/* One run with counters (DRAM bytes measured), one without (the
	 * models'), and one with no pairs at all. */
	measured = synth_build(path, &o);
	o.counters = 0;
	o.seed = seed + 1;
	modelled = synth_build(path, &o);
	o.pairs = 0;
	none = synth_build(path, &o);
	if (measured < 0 || modelled < 0 || none < 0)
		return TEST_HARD_ERROR;
	if (store_open(&st, path, STORE_READONLY))
		return TEST_HARD_ERROR;
	tradeoffs = check_run(st, measured, "measured");
	tradeoffs += check_run(st, modelled, "model");
	fprintf(stderr, "%d rows save bytes and pay time\n", tradeoffs);
	/* A run without pairs has no rows. */
	if (sqlite3_prepare_v2(store_db(st), "SELECT count(*) FROM v_save_recompute"
			       " WHERE run_id = ?1", -1, &s, NULL))
		return TEST_HARD_ERROR;
	sqlite3_bind_int64(s, 1, none);
	ASSERT(sqlite3_step(s) == SQLITE_ROW);
	ASSERT_EQ(sqlite3_column_int64(s, 0), 0);
	sqlite3_finalize(s);
	store_close(st);
	unlink(path);
	return 0;
}
