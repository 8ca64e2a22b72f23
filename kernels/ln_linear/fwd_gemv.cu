// fwd_gemv.cu - the LayerNorm+Linear fused forward for decode rows (M <= 8,
// rows of aligned 16-byte chunks): the plan is lnl_fwd_gemv's (split.c).
// The kernel is in gemv.cuh, which the CPU emulation (tests/test-gemv-emu)
// runs too.
//
// At a few rows the forward is a matrix-vector product: its time is W''s
// bytes (N x K) at DRAM bandwidth, its FLOPs 2 M N K, a few per byte.
// The tensor-core kernels' 64-row tiles would be at least seven eighths
// padding there, and their few tiles leave SMs idle unless K is sliced;
// this kernel streams W' once across every SM on CUDA cores instead:
// * A warp owns one chunk of K at a time (32 lanes x E = 4 columns: 128
//   columns, 8 bytes a lane in bf16 and 16 in fp32, so that bf16 holds no
//   more registers than fp32) and holds x~ = x - c of every row of x over
//   it in registers (E x mp floats a lane, zeros past M and past K), the
//   shift c being each row's first element as in the other fused kernels.
// * For each row of W' of its block it loads its E elements a lane
//   (streaming: read once, evict first), G rows at a time (32 floats a
//   lane at most), and multiplies them into G x mp partial sums, which
//   one reduce-scatter across the warp (G mp - 1 shuffles, then a
//   butterfly over the lanes left holding the same sum) completes.
// * The warps of a block take the chunks of its slice of K in turn and add
//   their sums in shared memory in warp order, as the row statistics
//   (shifted sums of x~ and x~^2, from the same registers) are added:
//   deterministic. With one slice the block applies the epilogue
//   y = rstd (acc - (mean - c) s) + b'; with several it writes the slice's
//   partials in the split-K forward's layout (its first block of row
//   blocks the statistics too) and k_fwd_split_reduce finishes.
// The products are fp32 FMAs of the dtype's values widened exactly, with
// x~ exact in fp32 (no bf16 rounding of the difference, unlike the tensor-
// core kernels), so bf16 is at least as accurate as they are. W' may be in
// perm32's order (op->wperm, the library's fold): row j then holds output
// column perm32(j).
#include "config.h"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "error.h"
#include "internal.h"

#include "gemv.cuh"

// Blocks of k_fwd_gemv<T, MP> resident at once on the device (all SMs), at
// `warps` warps a block: the persistent grid's size. Asked once a
// (instance, warps) per process.
template <typename T, int MP>
static int gemv_slots(int warps, int sms, int *slots)
{
	static int have[LNL_GEMV_WARPS + 1];

	if (!have[warps]) {
		int n = 0;

		if (CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
			    &n, k_fwd_gemv<T, MP>, 32 * warps, 0)))
			return -1;
		have[warps] = n > 0 ? n : 1;
	}
	*slots = have[warps] * sms;
	return 0;
}

int fwd_split_reduce_launch(const struct lnl_op *op, int splits, const float *stats,
			    cudaStream_t st)
{
	const long outs = op->M * op->N;
	const unsigned blocks = (unsigned)((outs + 255) / 256);

	if (op->dt == FP_BF16)
		k_fwd_split_reduce<__nv_bfloat16><<<blocks, 256, 0, st>>>(
			op->fpart, splits, op->M, (int)op->K, (int)op->N, op->sW, op->bf,
			(__nv_bfloat16 *)op->y, stats);
	else
		k_fwd_split_reduce<float><<<blocks, 256, 0, st>>>(
			op->fpart, splits, op->M, (int)op->K, (int)op->N, op->sW, op->bf,
			(float *)op->y, stats);
	return CUDA_CHECK_LAUNCH("k_fwd_split_reduce");
}

template <typename T, int MP>
static int gemv_run(const struct lnl_op *op, const T *x, cudaStream_t st)
{
	const struct lnl_gemv *g = &op->gv;
	float *part = g->splits > 1 ? op->fpart : nullptr;
	long grid;
	int slots;

	if (g->splits > 1 && !part)
		return error("ln_linear_fwd: the decode forward's slices without their partials");
	if (gemv_slots<T, MP>(g->warps, op->sms, &slots))
		return -1;
	// as many blocks as fit at once, each slice its share, each block
	// taking row blocks in turn
	grid = slots / g->splits;
	if (grid > g->blocks)
		grid = g->blocks;
	if (grid < 1)
		grid = 1;
	k_fwd_gemv<T, MP><<<dim3((unsigned)grid, (unsigned)g->splits), 32 * g->warps, 0, st>>>(
		x, (const T *)op->Wf, op->ldw, op->sW, op->bf, (T *)op->y, (int)op->M, (int)op->K,
		(int)op->N, op->wperm ? op->Np : op->N, op->wperm, g->brows, g->blocks, g->cps,
		part);
	if (CUDA_CHECK_LAUNCH("k_fwd_gemv"))
		return -1;
	return part ? fwd_split_reduce_launch(op, g->splits, NULL, st) : 0;
}

template <typename T>
static int gemv_dispatch(const struct lnl_op *op, const T *x, cudaStream_t st)
{
	switch (op->gv.mp) {
	case 1:
		return gemv_run<T, 1>(op, x, st);
	case 2:
		return gemv_run<T, 2>(op, x, st);
	case 4:
		return gemv_run<T, 4>(op, x, st);
	case 8:
		return gemv_run<T, 8>(op, x, st);
	}
	return error("ln_linear_fwd: no decode kernel for %d rows", op->gv.mp);
}

int fwd_gemv_launch(const struct lnl_op *op, const void *x, cudaStream_t st)
{
	return op->dt == FP_BF16 ? gemv_dispatch(op, (const __nv_bfloat16 *)x, st)
				 : gemv_dispatch(op, (const float *)x, st);
}
