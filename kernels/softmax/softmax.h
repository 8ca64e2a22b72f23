/* softmax.h - the row-softmax workloads' double-precision CPU references and
 * input generators (kernels/softmax/ref.c), exposed for tests (the
 * workloads themselves are reached through the registry: softmax_fwd,
 * softmax_masked_fwd, softmax_bwd). C and C++ (nvcc) clean. */
#ifndef FP_SOFTMAX_H
#define FP_SOFTMAX_H

#include <stdint.h>

#include "workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The scale of softmax_masked_fwd: 1/sqrt(64), a head dimension of 64. A
 * power of two, so x * scale is exact in fp32 and bf16 alike. */
#define SOFTMAX_MASKED_SCALE 0.125

/* Columns of row r that the causal rule of softmax_masked_fwd keeps: rows are
 * M = (batch * heads) blocks of N queries over N keys, query i = r mod N sees
 * keys 0..i. Always in [1, N]. */
long softmax_causal_keep(long r, long N);

/* y = softmax(x * scale) over each of M rows of N doubles, in double. When
 * causal is set, only columns [0, softmax_causal_keep(r, N)) take part and the
 * others are written as 0 (their mask is -inf). x may hold -inf (not +inf or
 * NaN). A row whose kept entries are all -inf gives all zeros: an attention
 * row that may see nothing contributes nothing, as in FlashAttention, and no
 * NaN reaches the next layer. y may not alias x. */
void softmax_fwd_ref(const double *x, double *y, long M, long N, double scale,
		     int causal);

/* One row of softmax_fwd_ref: keep = how many leading entries take part (N
 * unless masked), the rest written as 0. */
void softmax_fwd_ref_row(const double *x, double *y, long N, long keep,
			 double scale);

/* dx = y * (dy - sum(dy * y)) per row, in double: the gradient of softmax
 * given its output y and the output gradient dy. dx may not alias y or dy. */
void softmax_bwd_ref(const double *y, const double *dy, double *dx, long M,
		     long N);
/* One row of softmax_bwd_ref. */
void softmax_bwd_ref_row(const double *y, const double *dy, double *dx, long N);

/* Input profiles, the same for every softmax workload (the workloads list
 * the ones they use by name). Logits of M x N, drawn from seed:
 *   SM_NORMAL     N(0, std^2)
 *   SM_LARGE      rows around +1e4, around -1e4 (unit spread) and spread
 *                 uniformly over [-1e4, 1e4]: exp without the max overflows
 *   SM_NEGINF     each entry -inf with probability 1/4, every row keeps at
 *                 least one finite entry
 *   SM_DEADROWS   like SM_NEGINF, but every 3rd row (r % 3 == 1) is all -inf
 * The result is not rounded to a dtype: the caller applies host_round(). */
enum sm_profile { SM_NORMAL, SM_LARGE, SM_NEGINF, SM_DEADROWS };
void softmax_gen_logits(double *x, long M, long N, enum sm_profile p,
			double std, uint64_t seed);
/* Row r of softmax_gen_logits (N values into xr): each row has its own
 * stream, so rows drawn in any order, on any thread, come out the same. */
void softmax_gen_row(double *xr, long r, long N, enum sm_profile p,
		     double std, uint64_t seed);

/* Count of kept (unmasked) entries over all M rows under the causal rule. */
double softmax_causal_kept(long M, long N);

/* The wide-row kernels' stash rule (kernels/softmax/fused.cu applies it to
 * the device it runs on; exposed for tests). An SM as it bounds the wide
 * blocks: shared memory an SM has, the bytes a block takes beside its
 * stash (the reserve and its static arrays), the blocks its threads allow,
 * and the most stash a block may have. */
struct sm_wide_sm {
	long sm_bytes, block_extra, max_blocks, block_max;
};
/* Wide blocks of `bytes` stash each that an SM holds at once. */
long softmax_wide_blocks(const struct sm_wide_sm *d, long bytes);
/* The automatic stash cap, bytes a block: the backward's (bwd), the
 * masked forward's that reads only the kept columns (skip), else the
 * forward's. */
long softmax_wide_cap(int bwd, int skip);
/* The stash of a block whose part of the row is `part` bytes, under a cap
 * of `cap` bytes: all of the part that a block may have, or the cap where
 * the cap is smaller and, when `automatic`, puts more blocks on an SM (a
 * cap that adds none would only add re-reads); an explicit cap always
 * holds. */
long softmax_wide_stash(const struct sm_wide_sm *d, long part, long cap,
			int automatic);

#ifdef __cplusplus
}
#endif
#endif
