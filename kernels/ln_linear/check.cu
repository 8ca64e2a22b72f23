// check.cu - the LayerNorm+Linear checks' host side: the outputs of one
// run compared with double-precision references on what the run read,
// downloaded as little as the sampled references allow (workload.cu draws
// the inputs and runs the op, lnl_check).
//
// Inputs are drawn on the device (counter-based, like create()'s, with the
// profile's distribution) and downloaded into floats, which hold every fp32
// and bf16 value exactly: the double reference sees the very values the GPU
// saw, and no check spends seconds drawing 67 M normals on one CPU core.
// Only what the sampled references read comes down (fwd_reference and
// bwd_reference say what), through pinned buffers, widened on every core; a
// tensor that every row of a reference needs is streamed by rows, never
// held whole on the host. Every reference sums in the order of a serial
// loop, so its bits depend on neither the thread count nor the chunks.
//
// Why sampling keeps the check strong. Each output is compared in full when
// its reference costs at most LNL_CHECK_MACS multiply-adds; past that, on a
// sample chosen by lnl_sample_counts/lnl_pick: every column (or a sample of
// columns too) of rows taken from every block of LNL_SAMPLE_BLOCK rows, at
// offsets drawn fresh for each check (the seed is printed). Every kernel
// here computes its output in tiles of at least 64 rows (and columns), so
// every tile of every launch - every block's mainloop, pipeline stages,
// tails and epilogue - is compared on at least one of its rows and one of
// its columns, and successive runs hit different rows inside the tiles. A
// wrong element that is alone in its tile is the one kind of bug a sample
// can miss; no kernel here computes an element apart from its tile.
// Parameter gradients (dW, dgamma, dbeta) are reduced over all M rows, so
// each sampled entry checks every row's contribution. The measure is the
// full check's: ||got - ref|| / ||ref|| over the compared entries.
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "checkref.h"
#include "error.h"
#include "internal.h"
#include "par.h"
#include "util.h"

// What a check downloads goes through page-locked staging (cudaMallocHost
// once per check, freed at its end), so the copies run at the link's speed
// and no fresh pageable GiB is first-touched, then lnl_widen on every core.
// At most CHECK_STAGE_ELEMS elements a staging buffer (16 MiB in fp32).
#define CHECK_STAGE_ELEMS (1L << 22)

// n elements of a dtype tensor into floats (exact for fp32 and bf16): for
// the vectors (K or N elements); tensors go through gather_rows and
// row_stream.
static int download_f(float *dst, const void *src, enum fp_dtype dt, size_t n)
{
	uint16_t *h;
	int rc;

	if (dt == FP_F32)
		return CUDA_CHECK(cudaMemcpy(dst, src, n * 4, cudaMemcpyDeviceToHost));
	h = (uint16_t *)xmalloc(n * 2);
	rc = CUDA_CHECK(cudaMemcpy(h, src, n * 2, cudaMemcpyDeviceToHost));
	if (rc == 0)
		lnl_widen(dst, h, dt, n);
	free(h);
	return rc;
}

// Rows idx[0..n) (increasing) of a row-major tensor of rows of len dtype
// elements into dst as floats: all len columns (cols NULL, dst n x len) or
// columns cols[0..nc) (dst n x nc). Runs of consecutive rows are one copy;
// batches of at most CHECK_STAGE_ELEMS elements (one row at least) through
// one pinned buffer.
static int gather_rows(float *dst, const void *src, enum fp_dtype dt, const long *idx,
		       long n, long len, const long *cols, long nc)
{
	const size_t es = fp_dtype_size(dt), rb = (size_t)len * es;
	const long per = CHECK_STAGE_ELEMS / len > n ? n
			 : CHECK_STAGE_ELEMS / len < 1 ? 1 : CHECK_STAGE_ELEMS / len;
	char *stage = NULL;
	float *wide = NULL;
	int rc = -1;

	if (n < 1)
		return 0;
	if (CUDA_CHECK(cudaMallocHost((void **)&stage, (size_t)per * rb)))
		return -1;
	if (cols)
		wide = (float *)xmalloc((size_t)(per * len) * sizeof *wide);
	for (long b = 0; b < n; b += per) {
		const long cnt = n - b < per ? n - b : per;

		for (long q = 0, run; q < cnt; q += run) {
			for (run = 1; q + run < cnt && idx[b + q + run] == idx[b + q] + run; run++)
				;
			if (CUDA_CHECK(cudaMemcpyAsync(stage + (size_t)q * rb,
						       (const char *)src + (size_t)idx[b + q] * rb,
						       (size_t)run * rb, cudaMemcpyDeviceToHost, 0)))
				goto out_free;
		}
		if (CUDA_CHECK(cudaStreamSynchronize(0)))
			goto out_free;
		if (!cols) {
			lnl_widen(dst + (size_t)b * (size_t)len, stage, dt, (size_t)(cnt * len));
			continue;
		}
		lnl_widen(wide, stage, dt, (size_t)(cnt * len));
		for (long q = 0; q < cnt; q++)
			for (long j = 0; j < nc; j++)
				dst[(b + q) * nc + j] = wide[q * len + cols[j]];
	}
	rc = 0;
out_free:
	cudaFreeHost(stage);
	free(wide);
	return rc;
}

// A row-major tensor of `rows` rows of len dtype elements, handed out in
// chunks of `chunk` rows as floats: two pinned buffers, the next chunk's
// copy (on a stream of its own) in flight while the caller works on the
// current one. Zeroed, then row_stream_open; row_stream_close always.
struct row_stream {
	const char *src;
	enum fp_dtype dt;
	long rows, len, chunk;
	long next;        // first row of the chunk in flight (rows: none)
	int cur;          // the buffer that chunk lands in
	char *pin[2];
	float *wide;      // bf16: the chunk widened (fp32 hands out pin itself)
	cudaStream_t st;
	cudaEvent_t ev[2];
	int made;         // st and ev[] exist
};

// The copy of the chunk from row s->next into pin[s->cur].
static int row_stream_issue(struct row_stream *s)
{
	const size_t rb = (size_t)s->len * fp_dtype_size(s->dt);
	const long cnt = s->rows - s->next < s->chunk ? s->rows - s->next : s->chunk;

	if (s->next >= s->rows)
		return 0;
	return CUDA_CHECK(cudaMemcpyAsync(s->pin[s->cur], s->src + (size_t)s->next * rb,
					  (size_t)cnt * rb, cudaMemcpyDeviceToHost, s->st)) ||
	       CUDA_CHECK(cudaEventRecord(s->ev[s->cur], s->st)) ? -1 : 0;
}

// chunk rows a step (clamped to [1, rows]); the first copy starts here.
static int row_stream_open(struct row_stream *s, const void *src, enum fp_dtype dt,
			   long rows, long len, long chunk)
{
	const size_t es = fp_dtype_size(dt);

	s->src = (const char *)src;
	s->dt = dt;
	s->rows = rows;
	s->len = len;
	s->chunk = chunk > rows ? rows : chunk < 1 ? 1 : chunk;
	s->next = 0;
	s->cur = 0;
	for (int b = 0; b < 2; b++)
		if (CUDA_CHECK(cudaMallocHost((void **)&s->pin[b],
					      (size_t)(s->chunk * len) * es)))
			return -1;
	if (dt != FP_F32)
		s->wide = (float *)xmalloc((size_t)(s->chunk * len) * sizeof *s->wide);
	if (CUDA_CHECK(cudaStreamCreateWithFlags(&s->st, cudaStreamNonBlocking)))
		return -1;
	if (CUDA_CHECK(cudaEventCreateWithFlags(&s->ev[0], cudaEventDisableTiming))) {
		cudaStreamDestroy(s->st);
		return -1;
	}
	if (CUDA_CHECK(cudaEventCreateWithFlags(&s->ev[1], cudaEventDisableTiming))) {
		cudaEventDestroy(s->ev[0]);
		cudaStreamDestroy(s->st);
		return -1;
	}
	s->made = 1;
	return row_stream_issue(s);
}

// The next chunk: its first row in *lo, its row count in *cnt and its rows
// (cnt x len floats, valid until the next call) in *f. Returns 1, 0 when
// every row has been handed out, -1 on an error (reported).
static int row_stream_next(struct row_stream *s, long *lo, long *cnt, const float **f)
{
	const int b = s->cur;

	if (s->next >= s->rows)
		return 0;
	if (CUDA_CHECK(cudaEventSynchronize(s->ev[b])))
		return -1;
	*lo = s->next;
	*cnt = s->rows - s->next < s->chunk ? s->rows - s->next : s->chunk;
	// The other buffer held the chunk the caller has finished with.
	s->next += *cnt;
	s->cur = b ^ 1;
	if (row_stream_issue(s))
		return -1;
	if (s->dt == FP_F32) {
		*f = (const float *)s->pin[b];
	} else {
		lnl_widen(s->wide, s->pin[b], s->dt, (size_t)(*cnt * s->len));
		*f = s->wide;
	}
	return 1;
}

static void row_stream_close(struct row_stream *s)
{
	if (s->made) {
		cudaStreamSynchronize(s->st);
		cudaEventDestroy(s->ev[0]);
		cudaEventDestroy(s->ev[1]);
		cudaStreamDestroy(s->st);
	}
	cudaFreeHost(s->pin[0]);
	cudaFreeHost(s->pin[1]);
	free(s->wide);
	memset(s, 0, sizeof *s);
}

static double *to_double(const float *v, long n)
{
	double *d = (double *)xmalloc((size_t)(n > 0 ? n : 1) * sizeof *d);

	for (long i = 0; i < n; i++)
		d[i] = v[i];
	return d;
}

// Mean and rstd of a row of floats, in double (two passes, as
// lnl_layernorm_row_ref).
static void row_stats(const float *x, long K, double *mean, double *rstd)
{
	double m = 0, v = 0;

	for (long k = 0; k < K; k++)
		m += x[k];
	m /= (double)K;
	for (long k = 0; k < K; k++)
		v += (x[k] - m) * (x[k] - m);
	*mean = m;
	*rstd = 1 / sqrt(v / (double)K + LNL_EPS);
}

// Four partial sums: four independent add chains.
static double dot_df(const double *a, const float *b, long n)
{
	double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	long k = 0;

	for (; k + 4 <= n; k += 4) {
		s0 += a[k] * b[k];
		s1 += a[k + 1] * b[k + 1];
		s2 += a[k + 2] * b[k + 2];
		s3 += a[k + 3] * b[k + 3];
	}
	for (; k < n; k++)
		s0 += a[k] * b[k];
	return (s0 + s1) + (s2 + s3);
}

// The sum of the squares of a dot product's terms (cmp_rel's floor).
static double dot_sq_df(const double *a, const float *b, long n)
{
	double s = 0;

	for (long k = 0; k < n; k++)
		s += (a[k] * b[k]) * (a[k] * b[k]);
	return s;
}

// Columns [lo, hi) of fwd_reference's grid (par_for): the reference, and the
// chunk's part of the floor, summed in the order of the serial loop.
struct fwd_ref_job {
	const float *W;  // W's rows cols[0..nc), nc x K
	const double *h, *b;
	const long *cols;
	double *ref, *floor;
	long K, nr, nc;
	size_t grain;
};

static void fwd_ref_cols(size_t lo, size_t hi, void *arg)
{
	const struct fwd_ref_job *jb = (const struct fwd_ref_job *)arg;
	const long K = jb->K;
	double fl = 0;

	for (size_t j = lo; j < hi; j++) {
		const float *w = jb->W + (long)j * K;
		const double bj = jb->b[jb->cols[j]];

		for (long s = 0; s < jb->nr; s++) {
			jb->ref[s * jb->nc + (long)j] = bj + dot_df(jb->h + s * K, w, K);
			fl += bj * bj + dot_sq_df(jb->h + s * K, w, K);
		}
	}
	jb->floor[lo / jb->grain] = fl;
}

// A case's sampled references, kept in the reference cache (checkref.h)
// under the case, profile and seed, so that the variants of one case
// checked on the same inputs compute them once: the next variant downloads
// its outputs at the sampled places and nothing else.
struct lnl_ref {
	long nr, nc;         // fwd: y's grid (rows x cols); bwd: dx's rows, K
	long *rows, *cols;   // (bwd: cols unused)
	double *ref;         // fwd: y, nr x nc; bwd: dx, nr x K
	double sq_floor;     // fwd: y's floor (cmp_rel)
	long nn, nk, ng;     // bwd: dW's grid, dgamma's and dbeta's columns
	long *in, *ik, *ig;
	double *dw, *vec;    // bwd: dW nn x nk; dgamma, dbeta (ng each), db (N)
};

static void lnl_ref_free(void *p)
{
	struct lnl_ref *e = (struct lnl_ref *)p;

	if (!e)
		return;
	free(e->rows);
	free(e->cols);
	free(e->ref);
	free(e->in);
	free(e->ik);
	free(e->ig);
	free(e->dw);
	free(e->vec);
	free(e);
}

// y's reference on a grid of sampled rows x sampled (or all) columns:
// downloads those rows of x, the rows of W that are the sampled columns,
// and gamma, beta, b.
static int fwd_reference(struct lnl_op *op, struct fp_rng *g, struct lnl_ref *e)
{
	const long M = op->M, K = op->K, N = op->N;
	const enum fp_dtype dt = op->dt;
	long w1, w2, nr, nc, *rows, *cols;
	float *W = NULL, *x = NULL, *v = NULL;
	double *gm = NULL, *bt = NULL, *b = NULL, *h = NULL;
	int rc = -1;

	lnl_sample_counts(M, N, (double)K, LNL_CHECK_MACS, &w1, &w2);
	rows = e->rows = (long *)xmalloc((size_t)w1 * sizeof *rows);
	cols = e->cols = (long *)xmalloc((size_t)w2 * sizeof *cols);
	nr = e->nr = lnl_pick(M, w1, g, rows);
	nc = e->nc = lnl_pick(N, w2, g, cols);
	W = (float *)xmalloc((size_t)(nc * K) * sizeof *W);
	x = (float *)xmalloc((size_t)(nr * K) * sizeof *x);
	v = (float *)xmalloc((size_t)(K > N ? K : N) * sizeof *v);
	h = (double *)xmalloc((size_t)(nr * K) * sizeof *h);
	e->ref = (double *)xmalloc((size_t)(nr * nc) * sizeof *e->ref);
	if (gather_rows(W, op->W, dt, cols, nc, K, NULL, 0) ||
	    gather_rows(x, op->x, dt, rows, nr, K, NULL, 0) ||
	    download_f(v, op->gamma, dt, (size_t)K))
		goto out_free;
	gm = to_double(v, K);
	if (download_f(v, op->beta, dt, (size_t)K))
		goto out_free;
	bt = to_double(v, K);
	if (download_f(v, op->b, dt, (size_t)N))
		goto out_free;
	b = to_double(v, N);

	for (long s = 0; s < nr; s++) {
		double m, rs, *hr = h + s * K;
		const float *xr = x + s * K;

		row_stats(xr, K, &m, &rs);
		for (long k = 0; k < K; k++)
			hr[k] = (xr[k] - m) * rs * gm[k] + bt[k];
	}
	// Column outer: W's row stays in L1 while every sampled row meets it.
	// The floor: with one or a few outputs, b + h W^T can cancel to far
	// below its terms (K = 1: b' against W beta), and then its relative
	// error measures fp32's rounding of the terms, not the kernel.
	// On every core, in chunks of columns whose floors add in chunk order.
	{
		struct fwd_ref_job job = { W, h, b, cols, e->ref, NULL, K, nr, nc, 8 };
		const size_t nch = par_chunks((size_t)nc, job.grain);

		job.floor = (double *)xcalloc(nch, sizeof *job.floor);
		par_for((size_t)nc, job.grain, fwd_ref_cols, &job);
		e->sq_floor = 0;
		for (size_t q = 0; q < nch; q++)
			e->sq_floor += job.floor[q];
		free(job.floor);
	}
	rc = 0;
out_free:
	free(W);
	free(x);
	free(v);
	free(gm);
	free(bt);
	free(b);
	free(h);
	return rc;
}

// y on e's grid: only those entries come down.
static int fwd_compare(struct lnl_op *op, const struct lnl_ref *e, struct fp_check *r)
{
	const size_t n = (size_t)(e->nr * e->nc);
	float *y = (float *)xmalloc((n > 0 ? n : 1) * sizeof *y);
	double *got = (double *)xmalloc((n > 0 ? n : 1) * sizeof *got);
	struct fp_cmp c;
	int rc = gather_rows(y, op->y, op->dt, e->rows, e->nr, op->N, e->cols, e->nc);

	if (rc == 0) {
		for (size_t i = 0; i < n; i++)
			got[i] = y[i];
		cmp_init(&c);
		c.sq_floor = e->sq_floor;
		cmp_add(&c, got, e->ref, n);
		check_output(r, "y", &c);
	}
	free(y);
	free(got);
	return rc;
}

// Compares a downloaded vector of n dtype elements on the sampled indices.
static int check_vec(struct fp_check *r, const char *name, const void *dev,
		     enum fp_dtype dt, long n, const long *idx, long cnt,
		     const double *ref)
{
	float *v = (float *)xmalloc((size_t)n * sizeof *v);
	double *got = (double *)xmalloc((size_t)(cnt > 0 ? cnt : 1) * sizeof *got);
	struct fp_cmp c;
	int rc = download_f(v, dev, dt, (size_t)n);

	if (rc == 0) {
		for (long i = 0; i < cnt; i++)
			got[i] = v[idx ? idx[i] : i];
		cmp_init(&c);
		cmp_add(&c, got, ref, (size_t)cnt);
		check_output(r, name, &c);
	}
	free(v);
	free(got);
	return rc;
}

// dh of the sampled rows, columns [lo, hi) (par_for), from W's rows
// [n0, n0 + cnt): each entry sums over n in order, as a serial loop's, so
// W's chunks add up to the sum over all of W, whatever the thread count.
struct dh_job {
	const float *W, *dy;  // W's chunk (cnt x K); dy's sampled rows (nr x N)
	double *dh;           // nr x K
	long N, K, nr, n0, cnt;
};

static void dh_cols(size_t lo, size_t hi, void *arg)
{
	const struct dh_job *jb = (const struct dh_job *)arg;

	for (long n = 0; n < jb->cnt; n++) {
		const float *w = jb->W + n * jb->K;

		for (long s = 0; s < jb->nr; s++) {
			double d = jb->dy[s * jb->N + jb->n0 + n], *o = jb->dh + s * jb->K;

			for (size_t k = lo; k < hi; k++)
				o[k] += d * w[k];
		}
	}
}

// Rows [lo, hi) of a chunk of x and dy (par_for), row i = i0 + q: its
// statistics, h on dW's sampled columns ik (hc), xhat on dgamma's ig (xg),
// dy on dW's sampled outputs in (dyc), and dh = dy W on ig (dg, over n in
// order): all the backward's parameter gradients need of the row.
struct rows_job {
	const float *x, *dy;          // the chunk: cnt x K, cnt x N
	const double *gm, *bt, *wg;   // wg: W's columns ig, N x ng
	const long *ik, *in, *ig;
	double *hc, *xg, *dg;         // M x nk, M x ng, M x ng
	float *dyc;                   // M x nn
	long K, N, i0, nk, nn, ng;
};

static void bwd_rows(size_t lo, size_t hi, void *arg)
{
	const struct rows_job *jb = (const struct rows_job *)arg;
	const long K = jb->K, N = jb->N, nk = jb->nk, nn = jb->nn, ng = jb->ng;

	for (size_t q = lo; q < hi; q++) {
		const long i = jb->i0 + (long)q;
		const float *xr = jb->x + (long)q * K, *dr = jb->dy + (long)q * N;
		double m, rs, *o = jb->dg + i * ng;

		row_stats(xr, K, &m, &rs);
		for (long j = 0; j < nk; j++) {
			const long k = jb->ik[j];

			jb->hc[i * nk + j] = (xr[k] - m) * rs * jb->gm[k] + jb->bt[k];
		}
		for (long j = 0; j < ng; j++) {
			jb->xg[i * ng + j] = (xr[jb->ig[j]] - m) * rs;
			o[j] = 0;
		}
		for (long s = 0; s < nn; s++)
			jb->dyc[i * nn + s] = dr[jb->in[s]];
		for (long n = 0; n < N; n++) {
			const double a = dr[n], *w = jb->wg + n * ng;

			for (long j = 0; j < ng; j++)
				o[j] += a * w[j];
		}
	}
}

// db's columns [lo, hi) (par_for), a chunk of cnt rows of dy added in row
// order.
struct db_job {
	const float *dy;
	double *db;
	long N, cnt;
};

static void db_cols(size_t lo, size_t hi, void *arg)
{
	const struct db_job *jb = (const struct db_job *)arg;

	for (long q = 0; q < jb->cnt; q++) {
		const float *r = jb->dy + q * jb->N;

		for (size_t n = lo; n < hi; n++)
			jb->db[n] += r[n];
	}
}

// dW's grid rows [lo, hi) (par_for): each entry sums over i in order; i
// outer, so a chunk reads its columns of dyc a cache line at a time.
struct dw_job {
	const float *dyc;   // M x nn: dy's sampled columns
	const double *hc;   // M x nk: h's sampled columns
	double *ref;
	long M, nn, nk;
};

static void dw_rows(size_t lo, size_t hi, void *arg)
{
	const struct dw_job *jb = (const struct dw_job *)arg;
	const long nk = jb->nk;

	for (long i = 0; i < jb->M; i++) {
		const float *dr = jb->dyc + i * jb->nn;
		const double *hr = jb->hc + i * nk;

		for (size_t s = lo; s < hi; s++) {
			double d = dr[s], *o = jb->ref + s * nk;

			for (long j = 0; j < nk; j++)
				o[j] += d * hr[j];
		}
	}
}

// The backward's references: dx on sampled rows (each whole: a row's
// LayerNorm backward needs its whole dh row, N*K multiply-adds), dW on a
// grid of sampled (n, k) entries (M each), dgamma and dbeta on sampled
// columns k (M*N each: dh's column over every row), db in full. What is
// downloaded: the sampled rows of x and dy, gamma and beta, and W, x and
// dy once each, streamed by rows (dx's dh needs all of W; dgamma, dbeta
// and db every row of x and dy), never held whole.
static int bwd_reference(struct lnl_op *op, struct fp_rng *g, struct lnl_ref *e)
{
	const long M = op->M, K = op->K, N = op->N;
	const enum fp_dtype dt = op->dt;
	long w1, w2, nr, nn, nk, ng, *ir, *in, *ik, *ig;
	float *xs = NULL, *dys = NULL, *v = NULL, *dyc = NULL;
	double *gm = NULL, *bt = NULL, *dh = NULL, *ref, *vref;
	double *hc = NULL, *xg = NULL, *dg = NULL, *wg = NULL;
	struct row_stream sw, sx, sd;
	int rc = -1, more = 0;

	memset(&sw, 0, sizeof sw);
	memset(&sx, 0, sizeof sx);
	memset(&sd, 0, sizeof sd);
	// The samples of dx, dW, then dgamma and dbeta, drawn in that order.
	lnl_sample_counts(M, 1, (double)N * K, LNL_CHECK_MACS, &w1, &w2);
	ir = e->rows = (long *)xmalloc((size_t)w1 * sizeof *ir);
	nr = e->nr = lnl_pick(M, w1, g, ir);
	e->nc = K;
	lnl_sample_counts(N, K, (double)M, LNL_CHECK_MACS, &w1, &w2);
	in = e->in = (long *)xmalloc((size_t)w1 * sizeof *in);
	ik = e->ik = (long *)xmalloc((size_t)w2 * sizeof *ik);
	nn = e->nn = lnl_pick(N, w1, g, in);
	nk = e->nk = lnl_pick(K, w2, g, ik);
	lnl_sample_counts(K, 1, (double)M * N, LNL_CHECK_MACS, &w1, &w2);
	ig = e->ig = (long *)xmalloc((size_t)w1 * sizeof *ig);
	ng = e->ng = lnl_pick(K, w1, g, ig);
	ref = e->ref = (double *)xmalloc((size_t)(nr * K) * sizeof *ref);
	e->dw = (double *)xcalloc((size_t)(nn * nk), sizeof *e->dw);
	vref = e->vec = (double *)xcalloc((size_t)(2 * ng + N), sizeof *vref);

	v = (float *)xmalloc((size_t)(K > N ? K : N) * sizeof *v);
	if (download_f(v, op->gamma, dt, (size_t)K))
		goto out_free;
	gm = to_double(v, K);
	if (download_f(v, op->beta, dt, (size_t)K))
		goto out_free;
	bt = to_double(v, K);

	// dx. dh of the sampled rows from W streamed by rows, which also
	// gives dgamma's columns of W.
	xs = (float *)xmalloc((size_t)(nr * K) * sizeof *xs);
	dys = (float *)xmalloc((size_t)(nr * N) * sizeof *dys);
	dh = (double *)xcalloc((size_t)(nr * K), sizeof *dh);
	wg = (double *)xmalloc((size_t)(N * ng) * sizeof *wg);
	if (gather_rows(xs, op->x, dt, ir, nr, K, NULL, 0) ||
	    gather_rows(dys, op->dy, dt, ir, nr, N, NULL, 0) ||
	    row_stream_open(&sw, op->W, dt, N, K, CHECK_STAGE_ELEMS / K))
		goto out_free;
	{
		struct dh_job job = { NULL, dys, dh, N, K, nr, 0, 0 };
		const float *f;

		while ((more = row_stream_next(&sw, &job.n0, &job.cnt, &f)) > 0) {
			job.W = f;
			par_for((size_t)K, 128, dh_cols, &job);
			for (long n = 0; n < job.cnt; n++)
				for (long j = 0; j < ng; j++)
					wg[(job.n0 + n) * ng + j] = f[n * K + ig[j]];
		}
		if (more < 0)
			goto out_free;
	}
	row_stream_close(&sw);
	for (long s = 0; s < nr; s++) {
		const float *xr = xs + s * K;
		const double *dr = dh + s * K;
		double m, rs, sg = 0, sgx = 0;

		row_stats(xr, K, &m, &rs);
		for (long k = 0; k < K; k++) {
			double xh = (xr[k] - m) * rs, gk = dr[k] * gm[k];

			sg += gk;
			sgx += gk * xh;
		}
		sg /= (double)K;
		sgx /= (double)K;
		for (long k = 0; k < K; k++) {
			double xh = (xr[k] - m) * rs;

			ref[s * K + k] = rs * (dr[k] * gm[k] - sg - xh * sgx);
		}
	}
	free(xs);
	free(dys);
	free(dh);
	xs = dys = NULL;
	dh = NULL;

	// One pass over x and dy in chunks of rows: bwd_rows gathers what the
	// parameter gradients need of each row, db_cols adds db up.
	hc = (double *)xmalloc((size_t)(M * nk) * sizeof *hc);
	xg = (double *)xmalloc((size_t)(M * ng) * sizeof *xg);
	dg = (double *)xmalloc((size_t)(M * ng) * sizeof *dg);
	dyc = (float *)xmalloc((size_t)(M * nn) * sizeof *dyc);
	{
		const long chunk = CHECK_STAGE_ELEMS / (K > N ? K : N);
		struct rows_job rj = { NULL, NULL, gm, bt, wg, ik, in, ig, hc, xg, dg, dyc,
				       K, N, 0, nk, nn, ng };
		struct db_job dj = { NULL, vref + 2 * ng, N, 0 };
		const size_t grain = par_grain_rows((size_t)(2 * K + N * (ng + 1)));
		long lo2, cnt2;
		const float *fd;

		if (row_stream_open(&sx, op->x, dt, M, K, chunk) ||
		    row_stream_open(&sd, op->dy, dt, M, N, chunk))
			goto out_free;
		while ((more = row_stream_next(&sx, &rj.i0, &dj.cnt, &rj.x)) > 0) {
			if ((more = row_stream_next(&sd, &lo2, &cnt2, &fd)) <= 0)
				break;
			rj.dy = dj.dy = fd;
			par_for((size_t)dj.cnt, grain, bwd_rows, &rj);
			par_for((size_t)N, 1024, db_cols, &dj);
		}
		if (more < 0)
			goto out_free;
	}
	row_stream_close(&sx);
	row_stream_close(&sd);

	// dW[n][k] = sum_i dy[i][n] h[i][k] on the grid.
	{
		struct dw_job job = { dyc, hc, e->dw, M, nn, nk };

		// At most 32 chunks of grid rows: 8 a chunk at nn = 256.
		par_for((size_t)nn, (size_t)(nn + 31) / 32, dw_rows, &job);
	}
	// dgamma[k] = sum_i dh[i][k] xhat[i][k], dbeta[k] = sum_i dh[i][k] on
	// the sampled k, in row order.
	for (long i = 0; i < M; i++)
		for (long j = 0; j < ng; j++) {
			const double d = dg[i * ng + j];

			vref[j] += d * xg[i * ng + j];
			vref[ng + j] += d;
		}
	rc = 0;
out_free:
	row_stream_close(&sw);
	row_stream_close(&sx);
	row_stream_close(&sd);
	free(xs);
	free(dys);
	free(v);
	free(dyc);
	free(gm);
	free(bt);
	free(dh);
	free(hc);
	free(xg);
	free(dg);
	free(wg);
	return rc;
}

// dx on e's rows, dW on its grid, dgamma and dbeta on its columns, db:
// only those entries come down.
static int bwd_compare(struct lnl_op *op, const struct lnl_ref *e, struct fp_check *r)
{
	const long K = op->K, nx = e->nr * K, nw = e->nn * e->nk;
	const long n = nx > nw ? nx : nw;
	float *f = (float *)xmalloc((size_t)(n > 0 ? n : 1) * sizeof *f);
	double *got = (double *)xmalloc((size_t)(n > 0 ? n : 1) * sizeof *got);
	struct fp_cmp c;
	int rc = -1;

	if (gather_rows(f, op->dx, op->dt, e->rows, e->nr, K, NULL, 0))
		goto out_free;
	for (long i = 0; i < nx; i++)
		got[i] = f[i];
	cmp_init(&c);
	cmp_add(&c, got, e->ref, (size_t)nx);
	check_output(r, "dx", &c);
	if (gather_rows(f, op->dW, op->dt, e->in, e->nn, K, e->ik, e->nk))
		goto out_free;
	for (long i = 0; i < nw; i++)
		got[i] = f[i];
	cmp_init(&c);
	cmp_add(&c, got, e->dw, (size_t)nw);
	check_output(r, "dW", &c);
	if (check_vec(r, "dgamma", op->dg, op->dt, K, e->ig, e->ng, e->vec) ||
	    check_vec(r, "dbeta", op->dbeta, op->dt, K, e->ig, e->ng, e->vec + e->ng) ||
	    check_vec(r, "db", op->db, op->dt, op->N, NULL, op->N, e->vec + 2 * e->ng))
		goto out_free;
	rc = 0;
out_free:
	free(f);
	free(got);
	return rc;
}

int lnl_check_outputs(struct lnl_op *op, int profile, uint64_t seed, struct fp_check *r)
{
	struct ref_key key;
	struct lnl_ref *e;
	struct fp_rng g;
	size_t bytes;
	int fresh = 0, rc;

	memset(&key, 0, sizeof key);
	snprintf(key.what, sizeof key.what, "%s", op->bwd ? "ln_linear_bwd" : "ln_linear_fwd");
	key.dims[0] = op->M;
	key.dims[1] = op->K;
	key.dims[2] = op->N;
	key.dt = op->dt;
	key.profile = profile;
	key.seed = seed;
	if (!(e = (struct lnl_ref *)refcache_find(&key))) {
		e = (struct lnl_ref *)xcalloc(1, sizeof *e);
		fresh = 1;
		rng_seed(&g, seed ^ 0x6a09e667f3bcc908ull);
		if (op->bwd ? bwd_reference(op, &g, e) : fwd_reference(op, &g, e)) {
			lnl_ref_free(e);
			return -1;
		}
	}
	rc = op->bwd ? bwd_compare(op, e, r) : fwd_compare(op, e, r);
	if (fresh) {  // kept only now: the cache may free it at once
		bytes = sizeof *e + (size_t)(e->nr + e->nc + e->nn + e->nk + e->ng) * sizeof(long) +
			(size_t)(e->nr * (op->bwd ? op->K : e->nc) + e->nn * e->nk +
				 (op->bwd ? 2 * e->ng + op->N : 0)) * sizeof(double);
		if (rc == 0)
			refcache_keep(&key, e, bytes, lnl_ref_free);
		else
			lnl_ref_free(e);
	}
	return rc;
}
