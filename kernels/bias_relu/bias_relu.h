/* bias_relu.h - the bias+ReLU workloads (bias_relu_fwd, bias_relu_bwd):
 * their double-precision CPU references, exposed for tests. C and C++
 * (nvcc) clean. */
#ifndef FP_BIAS_RELU_H
#define FP_BIAS_RELU_H

#include "workload.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const struct workload wl_bias_relu_fwd;
extern const struct workload wl_bias_relu_bwd;

/* The variants, in both workloads' order. */
enum { BR_SAVE_INPUT, BR_FUSED_SAVE_OUTPUT, BR_FUSED_BITMASK };

/* y = relu(x + bias) over M rows of N (x, y M x N row-major, bias N), in
 * double. relu(0) = 0. */
void bias_relu_ref_fwd(const double *x, const double *bias, double *y, long M,
		       long N);

/* dx = dy where x + bias > 0, else 0 (the derivative at 0 taken as 0, as
 * every variant's saved sign has it); dbias (N) is ADDED the column sums
 * of dx (zero it first), so rows can be fed in chunks. */
void bias_relu_ref_bwd(const double *dy, const double *x, const double *bias,
		       double *dx, double *dbias, long M, long N);

#ifdef __cplusplus
}
#endif
#endif
