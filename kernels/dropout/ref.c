/* ref.c - the bias+dropout+residual CPU references in double, on the same
 * Philox mask as the GPU (philox.h). */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "dropout/dropout.h"
#include "util.h"

uint64_t bda_seed(unsigned long long seed, int set)
{
	return splitmix64(seed ^ (0xd1b54a32d192ed03ull * (uint64_t)(set + 1)));
}

double bda_scale(long drop)
{
	return 1000.0 / (double)(1000 - drop);
}

void bda_ref_mask(uint64_t seed, long drop, uint64_t e0, size_t n,
		  unsigned char *mask)
{
	const uint32_t t = dropout_threshold(drop);

	for (size_t k = 0; k < n; k++)
		mask[k] = (unsigned char)dropout_keep(seed, t, e0 + k);
}

void bda_ref_fwd(const double *x, const double *bias, const double *residual,
		 double *y, long row0, long M, long N, long drop, uint64_t seed)
{
	const uint32_t t = dropout_threshold(drop);
	const double scale = bda_scale(drop);

	for (long i = 0; i < M; i++) {
		const uint64_t e = (uint64_t)(row0 + i) * (uint64_t)N;

		for (long j = 0; j < N; j++) {
			const size_t k = (size_t)i * N + j;
			double d = dropout_keep(seed, t, e + j) ? (x[k] + bias[j]) * scale : 0;

			y[k] = d + residual[k];
		}
	}
}

void bda_ref_bwd(const double *dy, double *dx, double *dbias, long row0,
		 long M, long N, long drop, uint64_t seed)
{
	const uint32_t t = dropout_threshold(drop);
	const double scale = bda_scale(drop);

	for (long i = 0; i < M; i++) {
		const uint64_t e = (uint64_t)(row0 + i) * (uint64_t)N;

		for (long j = 0; j < N; j++) {
			const size_t k = (size_t)i * N + j;

			dx[k] = dropout_keep(seed, t, e + j) ? dy[k] * scale : 0;
			dbias[j] += dx[k];
		}
	}
}
