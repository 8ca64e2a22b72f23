/* ref.c - the softplus chain workloads' double-precision CPU references and
 * input profiles (softplus.h): what every GPU kernel of kernels/softplus/
 * is checked against, and the inputs the checks draw. Plain C, no GPU. */
#include "config.h"

#include <math.h>
#include <stdint.h>

#include "kutil.h"
#include "softplus/softplus.h"

double softplus_ref(double x)
{
	return fmax(x, 0.0) + log1p(exp(-fabs(x)));
}

double softplus_ref_naive(double x)
{
	return log(exp(x) + 1.0);
}

double softplus_ref_grad(double x)
{
	double e = exp(-fabs(x));

	return (x >= 0 ? 1.0 : e) / (1.0 + e);
}

void softplus_ref_fwd(const double *x, double *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		w[i] = softplus_ref(x[i]);
}

void softplus_ref_bwd(const double *dy, const double *x, double *dx, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dx[i] = dy[i] * softplus_ref_grad(x[i]);
}

void softplus_ref_bwd_s(const double *dy, const double *s, double *dx,
			size_t n)
{
	for (size_t i = 0; i < n; i++)
		dx[i] = dy[i] * s[i];
}

void softplus_ref_bwd_de(const double *dy, const double *e, double *de,
			 size_t n)
{
	for (size_t i = 0; i < n; i++)
		de[i] = dy[i] / (1.0 + e[i]);
}

void softplus_ref_bwd_e(const double *dy, const double *x, const double *e,
			const double *de, double *dx, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dx[i] = x[i] >= 0 ? dy[i] - e[i] * de[i] : e[i] * de[i];
}

void softplus_ref_bwd_xe(const double *dy, const double *x, const double *e,
			 double *dx, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dx[i] = dy[i] * (x[i] >= 0 ? 1.0 : e[i]) / (1.0 + e[i]);
}

/* The switch points of SP_EDGES (see softplus.h), each drawn as often. */
static const double edges[] = {
	0.0, 17.0, -17.0, 88.72, -88.72, -87.34, -103.97, 709.78, -709.78,
};
#define NEDGES (sizeof edges / sizeof edges[0])

void softplus_gen_row(double *x, long r, long N, enum sp_profile p,
		      uint64_t seed)
{
	struct fp_rng g;

	rng_seed_item(&g, seed, r);
	for (long k = 0; k < N; k++) {
		switch (p) {
		case SP_LARGE:
			x[k] = r % 3 == 2 ? (2 * rng_uniform(&g) - 1) * 1e4
				: (r % 3 ? -1e4 : 1e4) + rng_normal(&g);
			break;
		case SP_EDGES: {
			double c = edges[rng_next(&g) % NEDGES], u = rng_uniform(&g);

			if (c != 0.0)
				x[k] = c + (u - 0.5);  /* within 0.5 of the point */
			else if (u < 0.25)
				x[k] = u < 0.125 ? 0.0 : -0.0;
			else if (u < 0.5)
				x[k] = u < 0.375 ? 1e-30 : -1e-30;
			else
				x[k] = 1e-3 * rng_normal(&g);
			break;
		}
		case SP_TAIL:
			x[k] = -8.0 - 32.0 * rng_uniform(&g);
			break;
		default:
			x[k] = rng_normal(&g);
		}
	}
}
