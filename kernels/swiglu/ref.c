/* ref.c - the SwiGLU workloads' double-precision CPU references
 * (swiglu.h): what every kernel of kernels/swiglu/ is checked against.
 * Plain C, no GPU. */
#include "config.h"

#include <math.h>

#include "swiglu/swiglu.h"

double swiglu_ref_sigmoid(double a)
{
	double e = exp(-fabs(a));  /* in (0, 1]: never overflows */

	return a >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
}

double swiglu_ref_silu(double a)
{
	return a * swiglu_ref_sigmoid(a);
}

double swiglu_ref_silu_grad(double a)
{
	return swiglu_ref_sigmoid(a) * (1.0 + a * swiglu_ref_sigmoid(-a));
}

void swiglu_ref_fwd(const double *p, double *y, long M, long N)
{
	for (long i = 0; i < M; i++)
		for (long j = 0; j < N; j++)
			y[i * N + j] = swiglu_ref_silu(p[i * 2 * N + j]) * p[i * 2 * N + N + j];
}

void swiglu_ref_bwd(const double *dy, const double *p, double *dp, long M, long N)
{
	for (long i = 0; i < M; i++)
		for (long j = 0; j < N; j++) {
			double a = p[i * 2 * N + j], b = p[i * 2 * N + N + j], d = dy[i * N + j];

			dp[i * 2 * N + j] = d * b * swiglu_ref_silu_grad(a);
			dp[i * 2 * N + N + j] = d * swiglu_ref_silu(a);
		}
}
