/* rmsnorm.h - the RMSNorm workloads (rmsnorm_fwd, rmsnorm_bwd): their
 * double-precision CPU references (kernels/rmsnorm/ref.c), exposed for
 * tests; the workloads themselves are reached through the registry.
 * C and C++ (nvcc) clean. */
#ifndef FP_RMSNORM_H
#define FP_RMSNORM_H

#include "workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Added to mean(x^2) inside the square root: torch's
 * F.rms_norm(x, (N,), weight=gamma, eps=1e-5), which the bench baselines
 * run. */
#define RMSNORM_EPS 1e-5

extern const struct workload wl_rmsnorm_fwd;
extern const struct workload wl_rmsnorm_bwd;

/* 1 / sqrt(mean(x^2) + RMSNORM_EPS) of one row of N values, in double. */
double rmsnorm_ref_rstd(const double *x, long N);

/* y = x * rstd(x) * gamma over M rows of N (row-major; x and y M*N values,
 * gamma N), in double. rstd, unless NULL, receives the M row rstds. y may
 * not alias x. */
void rmsnorm_ref_fwd(const double *x, const double *gamma, double *y,
		     double *rstd, long M, long N);

/* The gradients of sum(dy * y) for the forward above: dx (M*N) is written,
 * dx = rstd (dy gamma - xhat mean(dy gamma xhat)) with xhat = x rstd;
 * dgamma (N) is ADDED to (sum over rows of dy xhat), so rows can be fed in
 * chunks (zero it first). dx must not alias the inputs. */
void rmsnorm_ref_bwd(const double *dy, const double *x, const double *gamma,
		     double *dx, double *dgamma, long M, long N);

/* The fused variants' kernels on a caller's pointers (the kernels library,
 * kernels/api): y = x rstd gamma; the backward dx and dgamma through
 * partial rows of N floats, at most rmsnorm_fused_partials(...) of them (a
 * bound from the shape alone: no GPU touched). Enqueue on st; 0, or -1
 * (reported). */
int rmsnorm_fused_fwd(enum fp_dtype dt, const void *x, const void *gamma, void *y,
		      long M, long N, cudaStream_t st);
long rmsnorm_fused_partials(enum fp_dtype dt, long M, long N);
int rmsnorm_fused_bwd(enum fp_dtype dt, const void *dy, const void *x,
		      const void *gamma, void *dx, void *dgamma, float *partial,
		      long M, long N, cudaStream_t st);

#ifdef __cplusplus
}
#endif
#endif
