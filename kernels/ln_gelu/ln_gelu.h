/* ln_gelu.h - the LayerNorm+GELU workloads (ln_gelu_fwd, ln_gelu_bwd): their
 * double-precision CPU references, exposed for tests (the workloads are
 * reached through the registry; their kernel plan is layernorm_plan() of
 * layernorm/layernorm.h). C and C++ (nvcc) clean. */
#ifndef FP_LN_GELU_H
#define FP_LN_GELU_H

#include "layernorm/layernorm.h"
#include "workload.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const struct workload wl_ln_gelu_fwd;
extern const struct workload wl_ln_gelu_bwd;

/* GELU and its derivative in double: erf = 0 is the tanh approximation
 * 0.5 h (1 + tanh(sqrt(2/pi) (h + 0.044715 h^3))), erf = 1 the exact
 * h Phi(h). Both are accurate in the tails (no 1 + (-1) cancellation). */
double ln_gelu_ref_gelu(double h, int erf);
double ln_gelu_ref_gelu_grad(double h, int erf);

/* y = GELU(LayerNorm(x; gamma, beta)) over M rows of N elements (row-major,
 * x and y M*N values, gamma and beta N), in double, eps LAYERNORM_EPS. The
 * mean and the variance are taken in two passes, so a large common offset
 * costs no accuracy. */
void ln_gelu_ref_fwd(const double *x, const double *gamma, const double *beta,
		     double *y, long M, long N, int erf);

/* The gradients of sum(dy * y) for the forward above: dx (M*N) is written;
 * dgamma and dbeta (N each) are ADDED to, so rows can be fed in chunks
 * (zero them first). dx must not alias the inputs. */
void ln_gelu_ref_bwd(const double *dy, const double *x, const double *gamma,
		     const double *beta, double *dx, double *dgamma,
		     double *dbeta, long M, long N, int erf);

/* The fused variants' kernels on a caller's pointers (the kernels library,
 * kernels/api): the forward y = GELU(LayerNorm(x)); the backward dx,
 * dgamma and dbeta (N values each), through partial rows of 2 N
 * floats, at most ln_gelu_fused_partials(...) of them (a bound from the
 * shape alone: no GPU touched). Enqueue on st; 0, or -1 (reported). */
int ln_gelu_fused_fwd(enum fp_dtype dt, int erf, const void *x, const void *gamma,
		      const void *beta, void *y, long M, long N, cudaStream_t st);
long ln_gelu_fused_partials(enum fp_dtype dt, int erf, long M, long N);
int ln_gelu_fused_bwd(enum fp_dtype dt, int erf, const void *dy, const void *x,
		      const void *gamma, const void *beta, void *dx, void *dgamma,
		      void *dbeta, float *partial, long M, long N, cudaStream_t st);

#ifdef __cplusplus
}
#endif
#endif
