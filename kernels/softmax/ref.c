/* ref.c - the softmax workloads' double-precision CPU references and input
 * profiles (softmax.h): what every GPU kernel of kernels/softmax/ is checked
 * against, and the logits the checks draw. Plain C, no GPU. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kutil.h"
#include "par.h"
#include "softmax/softmax.h"
#include "util.h"

long softmax_causal_keep(long r, long N)
{
	return r % N + 1;
}

double softmax_causal_kept(long M, long N)
{
	double q = (double)(M / N), rem = (double)(M % N), n = (double)N;

	return q * n * (n + 1) / 2 + rem * (rem + 1) / 2;
}

void softmax_fwd_ref_row(const double *x, double *y, long N, long keep,
			 double scale)
{
	double m = -INFINITY, s = 0;
	long j;

	for (j = 0; j < keep; j++)
		m = fmax(m, x[j] * scale);
	if (m == -INFINITY) {
		memset(y, 0, (size_t)N * sizeof *y);
		return;
	}
	for (j = 0; j < keep; j++) {
		y[j] = exp(x[j] * scale - m);
		s += y[j];
	}
	for (j = 0; j < keep; j++)
		y[j] /= s;
	for (; j < N; j++)
		y[j] = 0;
}

void softmax_fwd_ref(const double *x, double *y, long M, long N,
		     double scale, int causal)
{
	for (long r = 0; r < M; r++)
		softmax_fwd_ref_row(x + r * N, y + r * N, N,
				    causal ? softmax_causal_keep(r, N) : N, scale);
}

void softmax_bwd_ref_row(const double *y, const double *dy, double *dx, long N)
{
	double s = 0;

	for (long j = 0; j < N; j++)
		s += dy[j] * y[j];
	for (long j = 0; j < N; j++)
		dx[j] = y[j] * (dy[j] - s);
}

void softmax_bwd_ref(const double *y, const double *dy, double *dx,
		     long M, long N)
{
	for (long r = 0; r < M; r++)
		softmax_bwd_ref_row(y + r * N, dy + r * N, dx + r * N, N);
}

void softmax_gen_row(double *xr, long r, long N, enum sm_profile p,
		     double std, uint64_t seed)
{
	struct fp_rng g;

	rng_seed_item(&g, seed, r);
	for (long k = 0; k < N; k++) {
		switch (p) {
		case SM_LARGE:
			xr[k] = r % 3 == 2 ? (2 * rng_uniform(&g) - 1) * 1e4
				: (r % 3 ? -1e4 : 1e4) + std * rng_normal(&g);
			break;
		case SM_NEGINF:
		case SM_DEADROWS:
			xr[k] = rng_uniform(&g) < 0.25 ? -INFINITY
				: std * rng_normal(&g);
			break;
		default:
			xr[k] = std * rng_normal(&g);
		}
	}
	if (p == SM_NEGINF || p == SM_DEADROWS)
		xr[rng_next(&g) % (uint64_t)N] = std * rng_normal(&g);
	if (p == SM_DEADROWS && r % 3 == 1)
		for (long k = 0; k < N; k++)
			xr[k] = -INFINITY;
}

// One chunk of softmax_gen_logits: rows [lo, hi).
struct gen_job {
	double *x;
	long N;
	enum sm_profile p;
	double std;
	uint64_t seed;
};

static void gen_rows(size_t lo, size_t hi, void *arg)
{
	const struct gen_job *j = (const struct gen_job *)arg;

	for (size_t r = lo; r < hi; r++)
		softmax_gen_row(j->x + r * (size_t)j->N, (long)r, j->N, j->p, j->std,
				j->seed);
}

void softmax_gen_logits(double *x, long M, long N, enum sm_profile p,
			double std, uint64_t seed)
{
	struct gen_job job = { x, N, p, std, seed };

	par_for((size_t)M, par_grain_rows((size_t)N), gen_rows, &job);
}
