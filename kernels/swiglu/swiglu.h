/* swiglu.h - the SwiGLU workloads (swiglu_fwd, swiglu_bwd): their
 * double-precision CPU references (kernels/swiglu/ref.c), exposed for
 * tests; the workloads themselves are reached through the registry.
 * C and C++ (nvcc) clean.
 *
 * The input is packed as in LLaMA-style MLPs: an M x 2N matrix whose row i
 * holds a = columns 0..N-1 and b = columns N..2N-1; y = silu(a) * b is
 * M x N, and the backward's gradient of the input is packed the same way
 * (da in columns 0..N-1, db in N..2N-1). */
#ifndef FP_SWIGLU_H
#define FP_SWIGLU_H

#include "workload.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const struct workload wl_swiglu_fwd;
extern const struct workload wl_swiglu_bwd;

/* sigmoid(a), silu(a) = a sigmoid(a) and silu'(a) = sig(a) (1 + a (1 -
 * sig(a))) in double, finite for every finite a: exp is only taken of
 * -|a|, and 1 - sig(a) is sig(-a), never a difference. */
double swiglu_ref_sigmoid(double a);
double swiglu_ref_silu(double a);
double swiglu_ref_silu_grad(double a);

/* y (M x N) = silu(a) * b from the packed input p (M x 2N), in double. */
void swiglu_ref_fwd(const double *p, double *y, long M, long N);

/* The gradient of sum(dy * y) for the forward above: dp (M x 2N, packed)
 * from dy (M x N) and p; da = dy b silu'(a), db = dy silu(a). dp must not
 * alias the inputs. */
void swiglu_ref_bwd(const double *dy, const double *p, double *dp, long M, long N);

/* The fused variants' kernels on a caller's pointers (the kernels library,
 * kernels/api): y (M x N) from the packed xp (M x 2N, a | b); the packed
 * gradient dxp (M x 2N) from dy and xp. Enqueue on st; 0, or -1 (reported). */
int swiglu_fused_fwd(enum fp_dtype dt, const void *xp, void *y, long M, long N,
		     cudaStream_t st);
int swiglu_fused_bwd(enum fp_dtype dt, const void *dy, const void *xp, void *dxp,
		     long M, long N, cudaStream_t st);

#ifdef __cplusplus
}
#endif
#endif
