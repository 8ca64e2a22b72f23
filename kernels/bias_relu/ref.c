/* ref.c - the bias+ReLU CPU references in double. */
#include "config.h"

#include <stddef.h>

#include "bias_relu/bias_relu.h"

void bias_relu_ref_fwd(const double *x, const double *bias, double *y, long M,
		       long N)
{
	for (long i = 0; i < M; i++)
		for (long j = 0; j < N; j++) {
			const double h = x[(size_t)i * N + j] + bias[j];

			y[(size_t)i * N + j] = h > 0 ? h : 0;
		}
}

void bias_relu_ref_bwd(const double *dy, const double *x, const double *bias,
		       double *dx, double *dbias, long M, long N)
{
	for (long i = 0; i < M; i++)
		for (long j = 0; j < N; j++) {
			const size_t k = (size_t)i * N + j;

			dx[k] = x[k] + bias[j] > 0 ? dy[k] : 0;
			dbias[j] += dx[k];
		}
}
