/* ref.c - the LayerNorm+Linear workloads' double-precision CPU references,
 * input profiles and check sampling (declared in ln_linear.h): what every
 * kernel of kernels/ln_linear/ is checked against, and what
 * tests/test-ln-linear-ref.c tests without a GPU. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kutil.h"
#include "ln_linear.h"
#include "par.h"
#include "util.h"

void lnl_gen_inputs(enum lnl_profile p, uint64_t seed, long M,
		    long K, long N, double *x, double *gamma,
		    double *beta, double *W, double *b, double *dy)
{
	struct fp_rng g;

	// One stream per input, so skipping one changes none of the others.
	rng_seed(&g, seed);
	for (long i = 0; i < M; i++) {
		double c = p == LNL_CONSTANT ? rng_normal(&g) : 0;

		for (long k = 0; k < K; k++) {
			double z = rng_normal(&g);

			x[i * K + k] = p == LNL_OFFSET ? LNL_OFFSET_MEAN + z
				: p == LNL_CONSTANT ? c + 1e-3 * z : z;
		}
	}
	rng_seed(&g, seed ^ 0x243f6a8885a308d3ull);
	for (long k = 0; k < K; k++) {
		double gv = 1 + 0.1 * rng_normal(&g), bv = 0.1 * rng_normal(&g);

		if (gamma)
			gamma[k] = gv;
		if (beta)
			beta[k] = bv;
	}
	if (W) {
		rng_seed(&g, seed ^ 0x13198a2e03707344ull);
		for (long i = 0; i < N * K; i++)
			W[i] = rng_normal(&g) / sqrt((double)K);
	}
	if (b) {
		rng_seed(&g, seed ^ 0xa4093822299f31d0ull);
		for (long n = 0; n < N; n++)
			b[n] = 0.1 * rng_normal(&g);
	}
	if (dy) {
		rng_seed(&g, seed ^ 0x082efa98ec4e6c89ull);
		for (long i = 0; i < M * N; i++)
			dy[i] = rng_normal(&g);
	}
}

void lnl_layernorm_row_ref(const double *x, long K,
			   const double *gamma, const double *beta,
			   double *xhat, double *h, double *mean,
			   double *rstd)
{
	double m = 0, v = 0, r;

	for (long k = 0; k < K; k++)
		m += x[k];
	m /= (double)K;
	for (long k = 0; k < K; k++)
		v += (x[k] - m) * (x[k] - m);
	r = 1 / sqrt(v / (double)K + LNL_EPS);
	for (long k = 0; k < K; k++) {
		double xh = (x[k] - m) * r;

		if (xhat)
			xhat[k] = xh;
		if (h)
			h[k] = xh * gamma[k] + beta[k];
	}
	*mean = m;
	*rstd = r;
}

// One output row: h (K scratch doubles) then y_row = h W^T + b.
static void fwd_ref_row(const double *x, const double *gamma,
			const double *beta, const double *W, const double *b,
			double *y, long K, long N, double *h)
{
	double m, r;

	lnl_layernorm_row_ref(x, K, gamma, beta, NULL, h, &m, &r);
	for (long n = 0; n < N; n++) {
		const double *w = W + n * K;
		double acc = b[n];

		for (long k = 0; k < K; k++)
			acc += h[k] * w[k];
		y[n] = acc;
	}
}

void lnl_fwd_ref(const double *x, const double *gamma,
		 const double *beta, const double *W,
		 const double *b, double *y, long M, long K, long N)
{
	double *h = (double *)xmalloc((size_t)K * sizeof *h);

	for (long i = 0; i < M; i++)
		fwd_ref_row(x + i * K, gamma, beta, W, b, y + i * N, K, N, h);
	free(h);
}

void lnl_bwd_ref(const double *x, const double *gamma,
		 const double *beta, const double *W,
		 const double *dy, double *dx, double *dgamma,
		 double *dbeta, double *dW, double *db, long M,
		 long K, long N)
{
	double *xh = (double *)xmalloc((size_t)K * sizeof *xh);
	double *h = (double *)xmalloc((size_t)K * sizeof *h);
	double *dh = (double *)xmalloc((size_t)K * sizeof *dh);

	memset(dgamma, 0, (size_t)K * sizeof *dgamma);
	memset(dbeta, 0, (size_t)K * sizeof *dbeta);
	memset(dW, 0, (size_t)(N * K) * sizeof *dW);
	memset(db, 0, (size_t)N * sizeof *db);
	for (long i = 0; i < M; i++) {
		const double *dyr = dy + i * N;
		double m, r, sg = 0, sgx = 0;

		lnl_layernorm_row_ref(x + i * K, K, gamma, beta, xh, h, &m, &r);
		// dh = dy W; dW += dy^T h; db += dy
		for (long k = 0; k < K; k++)
			dh[k] = 0;
		for (long n = 0; n < N; n++) {
			const double *w = W + n * K;
			double *dw = dW + n * K;

			db[n] += dyr[n];
			for (long k = 0; k < K; k++) {
				dh[k] += dyr[n] * w[k];
				dw[k] += dyr[n] * h[k];
			}
		}
		// LayerNorm backward: g = dh * gamma is the gradient at xhat;
		// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)).
		for (long k = 0; k < K; k++) {
			double gk = dh[k] * gamma[k];

			dgamma[k] += dh[k] * xh[k];
			dbeta[k] += dh[k];
			sg += gk;
			sgx += gk * xh[k];
		}
		sg /= (double)K;
		sgx /= (double)K;
		for (long k = 0; k < K; k++)
			dx[i * K + k] = r * (dh[k] * gamma[k] - sg - xh[k] * sgx);
	}
	free(xh);
	free(h);
	free(dh);
}

void lnl_sample_counts(long n1, long n2, double cost, double budget,
		       long *w1, long *w2)
{
	const long blk = LNL_SAMPLE_BLOCK;
	const long b1 = (n1 + blk - 1) / blk, b2 = (n2 + blk - 1) / blk;
	const double row = (double)n2 * cost;
	long r, c;

	*w1 = n1, *w2 = n2;
	if ((double)n1 * row <= budget)
		return;
	// Every column, as many rows as fit, at least one per block.
	r = (long)(budget / row);
	r = r < b1 ? b1 : r;
	if ((double)r * row <= budget) {
		*w1 = r;
		return;
	}
	// One row per block, as many columns as fit, at least one per block.
	c = (long)(budget / ((double)b1 * cost));
	c = c < b2 ? b2 : c > n2 ? n2 : c;
	if ((double)b1 * (double)c * cost <= 4 * budget) {
		*w1 = b1, *w2 = c;
		return;
	}
	// Far beyond the test shapes: what the budget affords, rows spread.
	c = b2;
	r = (long)(budget / ((double)c * cost));
	r = r < 8 ? 8 : r > n1 ? n1 : r;
	*w1 = r, *w2 = c;
}

// Sorts the at most LNL_SAMPLE_BLOCK offsets of one block.
static void sort_small(long *v, long n)
{
	for (long i = 1; i < n; i++)
		for (long j = i; j > 0 && v[j - 1] > v[j]; j--) {
			long t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
}

long lnl_pick(long n, long want, struct fp_rng *g, long *idx)
{
	const long blk = LNL_SAMPLE_BLOCK, nb = (n + blk - 1) / blk;
	long cnt = 0, q[2], deficit = 0, *share;

	if (n < 1 || want < 1)
		return 0;
	if (want >= n) {
		for (long i = 0; i < n; i++)
			idx[i] = i;
		return n;
	}
	if (want < nb) {
		// Fewer than the blocks: want blocks spread evenly.
		for (long i = 0; i < want; i++) {
			long b = want == 1 ? 0 : i * (nb - 1) / (want - 1);
			long lo = b * blk, sz = n - lo < blk ? n - lo : blk;

			idx[i] = b == 0 ? 0 : b == nb - 1 ? n - 1
				: lo + (long)(rng_next(g) % (uint64_t)sz);
		}
		return want;
	}
	// Every block its share; only the last block can be short of room,
	// and what it cannot take goes to the first blocks.
	share = (long *)xmalloc((size_t)nb * sizeof *share);
	for (long b = 0; b < nb; b++) {
		long sz = n - b * blk < blk ? n - b * blk : blk;

		share[b] = want / nb + (b < want % nb);
		if (share[b] > sz) {
			deficit += share[b] - sz;
			share[b] = sz;
		}
	}
	for (long b = 0; b < nb && deficit > 0; b++) {
		long sz = n - b * blk < blk ? n - b * blk : blk;
		long room = sz - share[b], add = room < deficit ? room : deficit;

		share[b] += add;
		deficit -= add;
	}
	for (long b = 0; b < nb; b++) {
		long lo = b * blk, sz = n - lo < blk ? n - lo : blk, perm[LNL_SAMPLE_BLOCK];
		long forced = 0;

		for (long i = 0; i < sz; i++)
			perm[i] = i;
		// The first and last items of the whole range come first.
		q[0] = b == 0 ? 0 : -1;
		q[1] = b == nb - 1 ? sz - 1 : -1;
		for (int f = 0; f < 2; f++) {
			if (q[f] < 0 || forced >= share[b] || (f == 1 && q[1] == q[0]))
				continue;
			for (long i = forced; i < sz; i++)
				if (perm[i] == q[f]) {
					perm[i] = perm[forced];
					perm[forced++] = q[f];
					break;
				}
		}
		// Partial Fisher-Yates for the rest of the share.
		for (long i = forced; i < share[b]; i++) {
			long j = i + (long)(rng_next(g) % (uint64_t)(sz - i)), t = perm[i];

			perm[i] = perm[j];
			perm[j] = t;
		}
		sort_small(perm, share[b]);
		for (long i = 0; i < share[b]; i++)
			idx[cnt++] = lo + perm[i];
	}
	free(share);
	return cnt;
}

// lnl_widen's chunks [lo, hi) (par_for).
struct widen_job {
	float *dst;
	const void *src;
	enum fp_dtype dt;
};

static void widen_chunk(size_t lo, size_t hi, void *arg)
{
	const struct widen_job *jb = (const struct widen_job *)arg;

	if (jb->dt != FP_BF16) {
		memcpy(jb->dst + lo, (const float *)jb->src + lo, (hi - lo) * sizeof(float));
		return;
	}
	for (size_t i = lo; i < hi; i++) {
		uint32_t u = (uint32_t)((const uint16_t *)jb->src)[i] << 16;

		memcpy(&jb->dst[i], &u, 4);
	}
}

void lnl_widen(float *dst, const void *src, enum fp_dtype dt, size_t n)
{
	// 256 K elements a chunk: about 0.1 ms of one core, so a chunk dwarfs
	// handing it out and a chunk of rows of any width still spreads.
	struct widen_job job = { dst, src, dt };

	par_for(n, (size_t)1 << 18, widen_chunk, &job);
}
