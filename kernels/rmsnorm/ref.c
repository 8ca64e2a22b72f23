/* ref.c - the RMSNorm workloads' double-precision CPU references
 * (rmsnorm.h): what every kernel of kernels/rmsnorm/ is checked against.
 * Plain C, no GPU. */
#include "config.h"

#include <math.h>

#include "rmsnorm/rmsnorm.h"

double rmsnorm_ref_rstd(const double *x, long N)
{
	double ss = 0;

	for (long j = 0; j < N; j++)
		ss += x[j] * x[j];
	return 1.0 / sqrt(ss / (double)N + RMSNORM_EPS);
}

void rmsnorm_ref_fwd(const double *x, const double *gamma, double *y,
		     double *rstd, long M, long N)
{
	for (long i = 0; i < M; i++) {
		const double *xr = x + i * N;
		double r = rmsnorm_ref_rstd(xr, N);

		if (rstd)
			rstd[i] = r;
		for (long j = 0; j < N; j++)
			y[i * N + j] = xr[j] * r * gamma[j];
	}
}

void rmsnorm_ref_bwd(const double *dy, const double *x, const double *gamma,
		     double *dx, double *dgamma, long M, long N)
{
	for (long i = 0; i < M; i++) {
		const double *xr = x + i * N, *dyr = dy + i * N;
		double r = rmsnorm_ref_rstd(xr, N), m = 0;

		for (long j = 0; j < N; j++) {
			double xh = xr[j] * r;

			m += dyr[j] * gamma[j] * xh;
			dgamma[j] += dyr[j] * xh;
		}
		m /= (double)N;
		for (long j = 0; j < N; j++)
			dx[i * N + j] = r * (dyr[j] * gamma[j] - xr[j] * r * m);
	}
}
