/* dropout.h - the bias+dropout+residual workloads (bias_dropout_add_fwd,
 * bias_dropout_add_bwd): their double-precision CPU references, the mask
 * (philox.h), and a probe of the masks the GPU variants make, exposed for
 * tests. C and C++ (nvcc) clean. */
#ifndef FP_DROPOUT_H
#define FP_DROPOUT_H

#include <stdint.h>

#include "dropout/philox.h"
#include "workload.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const struct workload wl_bias_dropout_add_fwd;
extern const struct workload wl_bias_dropout_add_bwd;

/* The variants, in both workloads' order. */
enum { BDA_UNFUSED, BDA_FUSED_MASK, BDA_FUSED_REGEN, BDA_FUSED_BYTEMASK };

/* Whether variant keeps a byte an element for the backward (unfused, and
 * fused_bytemask: its kernels fused as they are). */
static inline int bda_saves_bytes(int variant)
{
	return variant == BDA_UNFUSED || variant == BDA_FUSED_BYTEMASK;
}

/* The Philox seed of input set `set` of an instance created (or checked)
 * with seed: what create() draws the saved masks of the backward with, so
 * the forward and backward of a set agree. */
uint64_t bda_seed(unsigned long long seed, int set);

/* 1 / (1 - p) for p = drop / 1000, drop in [0, 999]. */
double bda_scale(long drop);

/* mask[k] = dropout_keep(seed, dropout_threshold(drop), e0 + k), k < n. */
void bda_ref_mask(uint64_t seed, long drop, uint64_t e0, size_t n,
		  unsigned char *mask);

/* y = dropout(x + bias, p) + residual over rows row0 .. row0 + M - 1 of a
 * tensor of N columns (x, residual, y: M x N, the rows' own values; bias
 * N), in double, the mask of element (row0 + i) N + j from seed. */
void bda_ref_fwd(const double *x, const double *bias, const double *residual,
		 double *y, long row0, long M, long N, long drop, uint64_t seed);

/* dx = dy mask / (1 - p) for the same rows; dbias (N) is ADDED the column
 * sums of dx (zero it first), so rows can be fed in chunks. dresidual = dy,
 * the identity: not computed. */
void bda_ref_bwd(const double *dy, double *dx, double *dbias, long row0,
		 long M, long N, long drop, uint64_t seed);

/* Run one variant of the forward (bwd = 0) or backward (bwd = 1) in fp32 on
 * M x N with drop and Philox seed on the GPU, on inputs that expose the
 * mask (forward: x = 1, bias = 0, residual = 0; backward: dy = 1, the saved
 * mask made by the variant's create with seed), and return the mask the
 * output implies (implied[e] = output e != 0, M N bytes) and, for a
 * forward that saves one, the saved mask unpacked (saved[e], M N bytes;
 * left alone otherwise, NULL allowed). Returns 0 or -1 (reported). */
int bda_probe(int bwd, int variant, long M, long N, long drop, uint64_t seed,
	      unsigned char *implied, unsigned char *saved);

/* The fused_regen kernels on a caller's pointers (the kernels library,
 * kernels/api), dropout probability p in [0, 1), the mask of element e =
 * i N + j dropout_keep(seed, round(p 2^32), e): y = dropout(x + bias) +
 * residual; the backward dx = dy kept and scaled (the residual's gradient
 * is dy itself), dbias its column sums through partial rows of N floats
 * (bda_partials of them; no GPU touched). Enqueue on st; 0, or -1
 * (reported). */
long bda_partials(enum fp_dtype dt, long M, long N);
int bda_fused_fwd(enum fp_dtype dt, const void *x, const void *bias,
		  const void *residual, void *y, long M, long N, double p,
		  uint64_t seed, cudaStream_t st);
int bda_fused_bwd(enum fp_dtype dt, const void *dy, void *dx, void *dbias,
		  float *partial, long M, long N, double p, uint64_t seed,
		  cudaStream_t st);

#ifdef __cplusplus
}
#endif
#endif
