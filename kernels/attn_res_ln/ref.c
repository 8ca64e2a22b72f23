/* ref.c - the attention + residual + LayerNorm workload's double-precision
 * CPU reference and input generator (arl.h): what every kernel of
 * kernels/attn_res_ln/ is checked against. Plain C, no GPU. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn_res_ln/arl.h"
#include "kutil.h"
#include "util.h"

long arl_keys(long s, long S, int causal)
{
	return causal ? s + 1 : S;
}

double arl_keys_total(long S, int causal)
{
	return causal ? (double)S * (double)(S + 1) / 2 : (double)S * (double)S;
}

void arl_ref_head(const double *q, const double *K, const double *V, long nkeys,
		  long D, double scale, double *o)
{
	double *p = xmalloc((size_t)nkeys * sizeof *p), m = -INFINITY, l = 0;

	for (long j = 0; j < nkeys; j++) {
		double s = 0;

		for (long d = 0; d < D; d++)
			s += q[d] * K[j * D + d];
		p[j] = scale * s;
		if (p[j] > m)
			m = p[j];
	}
	for (long j = 0; j < nkeys; j++)
		l += p[j] = exp(p[j] - m);
	for (long d = 0; d < D; d++)
		o[d] = 0;
	for (long j = 0; j < nkeys; j++)
		for (long d = 0; d < D; d++)
			o[d] += p[j] / l * V[j * D + d];
	free(p);
}

void arl_ref_ln_row(const double *x, const double *o, const double *gamma,
		    const double *beta, long N, double *y)
{
	double mean = 0, var = 0, rstd;

	for (long j = 0; j < N; j++)
		mean += x[j] + o[j];
	mean /= (double)N;
	for (long j = 0; j < N; j++) {
		const double c = x[j] + o[j] - mean;

		var += c * c;
	}
	rstd = 1.0 / sqrt(var / (double)N + ARL_EPS);
	for (long j = 0; j < N; j++)
		y[j] = (x[j] + o[j] - mean) * rstd * gamma[j] + beta[j];
}

void arl_ref_fwd(const double *Q, const double *K, const double *V,
		 const double *x, const double *gamma, const double *beta,
		 double *y, long B, long H, long S, long D, int causal)
{
	const long N = H * D;
	const double scale = 1.0 / sqrt((double)D);
	double *o = xmalloc((size_t)N * sizeof *o);

	for (long b = 0; b < B; b++) {
		for (long s = 0; s < S; s++) {
			for (long h = 0; h < H; h++) {
				const size_t head = (size_t)(b * H + h) * (size_t)S * (size_t)D;

				arl_ref_head(Q + head + (size_t)s * D, K + head, V + head,
					     arl_keys(s, S, causal), D, scale, o + h * D);
			}
			arl_ref_ln_row(x + (size_t)(b * S + s) * N, o, gamma, beta, N,
				       y + (size_t)(b * S + s) * N);
		}
	}
	free(o);
}

/* Each tensor's rows draw from a stream of their own. */
static uint64_t tensor_base(uint64_t seed, enum arl_tensor t)
{
	return splitmix64(seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(t + 1)));
}

void arl_gen_row(double *v, long n, enum arl_tensor t, long row,
		 enum arl_profile p, enum fp_dtype dt, uint64_t seed,
		 const double *kk, long S, int causal)
{
	struct fp_rng g;

	rng_seed_item(&g, tensor_base(seed, t), row);
	if (t == ARL_Q && p == ARL_UNIFORM) {
		memset(v, 0, (size_t)n * sizeof *v);
		return;
	}
	if (t == ARL_Q && p == ARL_LARGE && kk) {
		const long s = row % S, nk = arl_keys(s, S, causal);
		long j = (long)(rng_uniform(&g) * (double)nk);

		if (j >= nk)
			j = nk - 1;
		double k2 = 0;

		for (long d = 0; d < n; d++)
			k2 += kk[j * n + d] * kk[j * n + d];
		for (long d = 0; d < n; d++)
			v[d] = 1e3 * kk[j * n + d] / (k2 > 0 ? k2 : 1) + rng_normal(&g);
	} else if (t == ARL_X && p == ARL_OFFSET) {
		const double spread = dt == FP_BF16 ? 400.0 : 16.0;

		for (long d = 0; d < n; d++)
			v[d] = 1e3 + spread * rng_normal(&g);
	} else {
		for (long d = 0; d < n; d++)
			v[d] = rng_normal(&g);
	}
	host_round(v, (size_t)n, dt);
}

void arl_gen_params(double *gamma, double *beta, long n, enum fp_dtype dt,
		    uint64_t seed)
{
	struct fp_rng g;

	rng_seed(&g, splitmix64(seed ^ 0x2545f4914f6cdd1dull));
	for (long j = 0; j < n; j++)
		gamma[j] = 1.0 + 0.5 * rng_normal(&g);
	for (long j = 0; j < n; j++)
		beta[j] = 0.5 * rng_normal(&g);
	host_round(gamma, (size_t)n, dt);
	host_round(beta, (size_t)n, dt);
}

int arl_fused_cluster(long H, int ask)
{
	const int need = (int)((H + ARL_MAX_HEADS_CTA - 1) / ARL_MAX_HEADS_CTA);
	int c;

	if (ask > 0) {
		c = ask < need ? need : ask;
		return c > H ? (int)H : c;
	}
	for (c = H < ARL_MAX_CLUSTER ? (int)H : ARL_MAX_CLUSTER; c > 1; c--)
		if (H % c == 0 && H / c <= ARL_MAX_HEADS_CTA)
			return c;
	return need < 1 ? 1 : need;
}

double arl_heads_cost(long B, long S, int causal, int hpc, int resident)
{
	const long ntq = (S + ARL_BQ - 1) / ARL_BQ, all = (S + ARL_BK - 1) / ARL_BK;
	long tiles = 0;
	double work, longest;

	for (long q = 0; q < ntq; q++)  // the key tiles each query tile visits
		tiles += causal ? (q + 1 < all ? q + 1 : all) : all;
	work = (double)B * (double)tiles * hpc / (resident > 0 ? resident : 1);
	longest = (double)hpc * (double)all;
	return work > longest ? work : longest;
}

int arl_heads_cluster(long H, int want, int *hpc)
{
	long per = (H + ARL_HEADS_CLUSTER - 1) / ARL_HEADS_CLUSTER, c;

	if (want == 0)
		want = 2;
	if (want > per)
		per = want;
	if (per > H)
		per = H;
	// every CTA takes per - 1 heads or per (the kernel counts on it):
	// fewer where the last rank would hold less
	for (; per > 1; per--) {
		c = (H + per - 1) / per;
		if ((c - 1) + (per - 2) * c < H)
			break;
	}
	*hpc = per < 1 ? 1 : (int)per;
	return (int)((H + *hpc - 1) / *hpc);
}
