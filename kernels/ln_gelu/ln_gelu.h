/* ln_gelu.h - the LayerNorm+GELU workloads (ln_gelu_fwd, ln_gelu_bwd): their
 * double-precision CPU references and the host-side plan the tests check.
 * C and C++ (nvcc) clean. */
#ifndef FP_LN_GELU_H
#define FP_LN_GELU_H

#include "workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* LayerNorm's epsilon, added to the variance (PyTorch's default). */
#define LN_GELU_EPS 1e-5

extern const struct workload wl_ln_gelu_fwd;
extern const struct workload wl_ln_gelu_bwd;

/* GELU and its derivative in double: erf = 0 is the tanh approximation
 * 0.5 h (1 + tanh(sqrt(2/pi) (h + 0.044715 h^3))), erf = 1 the exact
 * h Phi(h). Both are accurate in the tails (no 1 + (-1) cancellation). */
double ln_gelu_ref_gelu(double h, int erf);
double ln_gelu_ref_gelu_grad(double h, int erf);

/* y = GELU(LayerNorm(x; gamma, beta)) over M rows of N elements (row-major,
 * x and y M*N values, gamma and beta N), in double, eps LN_GELU_EPS. The
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

/* Threads per row of the register-resident kernels for a row of N elements
 * of dtype dt (bwd = 0: forward, 1: backward): a power of two in [32, 1024]
 * forward, [32, 512] backward,
 * or 0 when the row goes to the wide-row kernels instead (N not a multiple
 * of the 16-byte vector width, or wider than the registers hold). */
int ln_gelu_plan(int bwd, long N, enum fp_dtype dt);

/* Elements of a row each thread keeps in registers (a multiple of the
 * vector width): threads per row * this >= N whenever ln_gelu_plan() > 0. */
int ln_gelu_per_thread(int bwd);

/* LayerNorm alone, on the GPU, for other workloads (the LayerNorm+Linear
 * backward). dtype dt for the tensors, fp32 statistics: per row hi (a
 * shift), lo (the mean of x - hi) and rstd, 3 M floats. All enqueue on st
 * and return 0 or -1 (reported).
 * out = LayerNorm(x; gamma, beta), M rows of N; stats written unless NULL. */
int ln_gelu_ln_fwd(enum fp_dtype dt, const void *x, const void *gamma,
		   const void *beta, void *out, float *stats, long M, long N,
		   cudaStream_t st);

/* The statistics alone (x read once, nothing else written). */
int ln_gelu_ln_stats(enum fp_dtype dt, const void *x, float *stats, long M,
		     long N, cudaStream_t st);

/* The persistent grid of ln_gelu_ln_bwd (recompute 0) or of
 * ln_gelu_ln_bwd_recompute (1) for M x N: it needs blocks * 2 N floats of
 * partials. Call once per shape (it also lets the kernel have its shared
 * memory). 0 when the recomputing form has no kernel for rows of N (they
 * must fit the register kernels: ln_gelu_plan(1, N, dt) > 0), -1 on error
 * (reported). */
long ln_gelu_ln_bwd_blocks(enum fp_dtype dt, long M, long N, int recompute);

/* Given dh, the gradient at the LayerNorm's output: dx, and dgamma then
 * dbeta in dgb (2 N values), deterministic (block partials summed in a
 * fixed order, no atomics). */
int ln_gelu_ln_bwd(enum fp_dtype dt, const void *dh, const void *x,
		   const void *gamma, const float *stats, void *dx, void *dgb,
		   float *partial, long blocks, long M, long N, cudaStream_t st);

/* The same from x alone (no saved statistics), also writing h =
 * LayerNorm(x; gamma, beta): x is read once for both. */
int ln_gelu_ln_bwd_recompute(enum fp_dtype dt, const void *dh, const void *x,
			     const void *gamma, const void *beta, void *h,
			     void *dx, void *dgb, float *partial, long blocks,
			     long M, long N, cudaStream_t st);

#ifdef __cplusplus
}
#endif
#endif
