/* bias_relu.h - the bias+ReLU workloads (bias_relu_fwd, bias_relu_bwd):
 * their double-precision CPU references, exposed for tests. C and C++
 * (nvcc) clean. */
#ifndef FP_BIAS_RELU_H
#define FP_BIAS_RELU_H

#include <stdint.h>

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

/* The fused_bitmask kernels on a caller's pointers (the kernels library,
 * kernels/api): the forward y = relu(x + bias) and the bit mask (bit e % 32
 * of word e / 32 set where element e = i N + j is positive, bias_relu_bits_
 * bytes of it); the backward dx = dy where the bit is set, dbias its
 * column sums, through partial rows of N floats (bias_relu_partials of
 * them; no GPU touched). Enqueue on st; 0, or -1 (reported). */
size_t bias_relu_bits_bytes(long M, long N);
long bias_relu_partials(enum fp_dtype dt, long M, long N);
int bias_relu_fused_fwd(enum fp_dtype dt, const void *x, const void *bias, void *y,
			uint32_t *words, long M, long N, cudaStream_t st);
int bias_relu_fused_bwd(enum fp_dtype dt, const void *dy, const uint32_t *words,
			void *dx, void *dbias, float *partial, long M, long N,
			cudaStream_t st);

#ifdef __cplusplus
}
#endif
#endif
