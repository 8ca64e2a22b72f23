/* sm.h - inside the softmax workloads: the instance layout and the seam
 * between the contract (workload.cu) and the kernels' launchers
 * (fused.cu, unfused.cu). CUDA C++ only; not for other workloads. */
#ifndef FP_SOFTMAX_SM_H
#define FP_SOFTMAX_SM_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#include "softmax/softmax.h"
#include "workload.h"

#define WIDE_CLUSTER 8         // most blocks per row (the portable cluster limit)
#define WIDE_BLOCK_STASH 51200 // most bytes of row per block before the cluster grows

// Most of its part of the row a wide block stashes where that fits more
// blocks on an SM than stashing all of it (shared memory bounds them);
// pass 2 reads the rest again, from L2 while the row is fresh there: 4
// blocks forward, 5 backward, 6 in the masked forward that reads only the
// kept columns (fused.cu says why).
#define WIDE_STASH_FWD 49152
#define WIDE_STASH_BWD 40960
#define WIDE_STASH_SKIP 32768

#define SM_STASH_AUTO (-1)  // sm_plan's stash_kb: the WIDE_STASH_* caps
#define SM_STASH_ALL (-2)   // sm_plan's stash_kb: as much as a block may have

enum sm_kind { SM_FWD, SM_MASKED, SM_BWD };

// How the fused forward applies the causal rule (row r of a block of N
// keeps columns 0..r mod N): not at all; by reading only the kept columns
// (masked ones never leave DRAM: softmax_masked_fwd/fused); or by reading
// every column and masking in registers (softmax_masked_fwd/fused_dense:
// the masked unfused chain's two kernels as one, moving what it moves less
// its intermediate).
enum sm_mask { SM_MASK_NONE, SM_MASK_SKIP, SM_MASK_DENSE };

// An instance (struct fp_op is opaque to the run loop; this is its layout).
struct sm_op {
	enum sm_kind kind;
	enum fp_dtype dt;
	int variant;  // 0: unfused*, 1: fused, for every kind; 2: fused_dense (masked)
	long M, N;
	int nsets;
	struct fp_kopts ko;  // the kernel options it was created with
	size_t set_bytes;  // one M x N tensor, padded (dev_pad)
	char *in0;         // nsets sets: x (forward) or y (backward)
	char *in1;         // nsets sets: dy (backward), else NULL
	// What a launch writes, set 0's, carved out of wbuf: set s's buffers
	// lie s * wset_bytes further on (sm_launch hands the launchers a copy
	// of the instance pointing at them).
	char *wbuf;        // nsets * wset_bytes
	size_t wset_bytes;
	void *out;         // y or dx
	void *tmp;         // e (unfused4) or masked scores t (masked unfused)
	float *rowa, *rowb;  // per-row max / sum (unfused4), sum(dy*y) (bwd)
	int wpr, vpt;      // register kernel shape; wpr == 0: wide kernel
	// Wide kernels, forward (also drawing backward's timing inputs) and
	// backward: blocks per row (a cluster), slots of a row per block, and
	// the slots each block stashes.
	int cluster_fwd, chunk_fwd, stash_fwd;
	int cluster_bwd, chunk_bwd, stash_bwd;
};

/* fused.cu: the kernel choice and the fused launchers. */

/* Most 16-byte slots of W elements one row of N elements can span. */
long sm_max_row_slots(long N, int W);
/* The register kernel's shape for rows of N (fewest warps per row such that
 * each thread holds at most 4 slots): 0 with *wpr, *vpt set, or -1 when the
 * row needs the wide kernel. Touches no GPU. */
int sm_pick_reg(long N, enum fp_dtype dt, int *wpr, int *vpt);
/* Blocks per row (1, 2, 4 or 8) of the wide kernel for rows of S slots of
 * `arrays` inputs (1 forward, 2 backward). Touches no GPU. */
int sm_wide_cluster(long S, int arrays);
/* Pick the fused kernels for op's shape and dtype (op->wpr ... stash_bwd).
 * warps, slots (register rows) and clusters (wide rows) ask for a kernel
 * shape, 0 for the automatic one; a shape that is not compiled or cannot
 * serve the row width falls back to the automatic one. stash_kb caps the
 * KB a wide block stashes (the rest is read again in pass 2), or is
 * SM_STASH_AUTO or SM_STASH_ALL. Lets the wide kernels have their shared
 * memory. 0, or -1 (reported). */
int sm_plan(struct sm_op *op, int warps, int slots, int clusters, int stash_kb);
/* The fused kernel sm_plan picked, one line for workload->kernel(). */
void sm_describe(const struct sm_op *op, char *buf, size_t n);
/* Enqueue the fused forward over op's M x N: y = softmax(x * scale), with
 * the causal rule applied as mask says. 0 or -1 (reported). */
int sm_fused_fwd(const struct sm_op *op, const void *x, void *y,
		 enum sm_mask mask, float scale, cudaStream_t st);
/* Enqueue the fused backward: dx from y and dy. 0 or -1 (reported). */
int sm_fused_bwd(const struct sm_op *op, const void *y, const void *dy, void *dx,
		 cudaStream_t st);

/* unfused.cu: enqueue op's unfused variant over inputs in0 (x or y) and in1
 * (dy, backward), into op->out through op->tmp and the row vectors. 0 or -1
 * (reported). */
int sm_unfused(const struct sm_op *op, const void *in0, const void *in1,
	       cudaStream_t st);

#endif
