// fused.cu - the fused softmax kernels: one kernel per op, each row read
// once and written once. Rows that fit hold in registers; wider rows (a
// vocabulary of 50257) stream through shared memory, split over a cluster
// of blocks. Then their launchers and the kernel choice (sm_plan), which
// the workloads' kernel options steer (see workload.cu).
//
// Read top to bottom as in llm.c's dev/cuda: the kernels (simplest first,
// each saying what it changes over the previous one), then the launchers.
// The CPU references are in ref.c, the unfused kernels in unfused.cu, the
// device helpers in slots.cuh, the contract in workload.cu.
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "error.h"
#include "kutil.h"
#include "softmax/sm.h"
#include "slots.cuh"

namespace cg = cooperative_groups;

// ---------------------------------------------------------------------------
// Kernels, rows held in registers (N up to 8192 fp32, 16384 bf16).
//
// What changes over the unfused chain (unfused.cu): one kernel reads each row once into
// registers (VPT 16-byte slots per thread, all loads issued before the first
// use), reduces the max and the sum there (warp shuffles, and a few floats of
// shared memory when WPR warps share a row), and writes y once: 2*E*es, the
// minimum. WPR warps per row are chosen so that each thread holds at most 4
// slots (16 fp32 or 32 bf16 values as floats; exp(v - max) overwrites them in
// place, so no exp is computed twice); rows narrower than a warp's 4 slots
// pack 128 / (32*WPR) rows per block. Every kernel multiplies by the scale
// (softmax_fwd's 1 leaves x exact; the library, kernels/api, passes any);
// MASK (enum sm_mask) applies the causal rule: SM_MASK_SKIP reads only the
// kept columns (masked ones never leave DRAM), SM_MASK_DENSE reads every
// column and sets the masked ones to -inf in registers (the masked chain
// fused as it is); both write zeros for the masked columns.
// Expected at 16384 x 4096: 537 MB fp32, 268 MB bf16, the copy of as many
// bytes. Measured at the copy bandwidth, ncu seeing exactly the input read:
// bench/RESULTS.md, "Softmax, H100". Other shapes (the warps and slots
// options), tried at 16384 x 4096: fewer, fuller threads per row win until
// a row's registers crowd out rows in flight, so the pick holds at most 4
// slots a thread. The masked form reads about half the row and takes about
// three quarters of the time.

// SM_MASK_DENSE: the values of slot k of a row (W of them, the row
// starting off elements into its first slot) whose column is keep or more
// become -inf. One compare a slot where it lies wholly on one side of
// keep; only the slot keep falls in goes element by element.
template <int W>
__device__ __forceinline__ void mask_slot(float (&v)[W], int k, int off, int keep)
{
	const int j0 = k * W - off;

	if (j0 + W <= keep)
		return;
#pragma unroll
	for (int e = 0; e < W; e++)
		if (j0 + e >= keep)
			v[e] = -INFINITY;
}

template <typename T, int WPR, int VPT, int MASK>
__global__ void __launch_bounds__(WPR * 32 < 128 ? 128 : WPR * 32)
softmax_fused_reg(const T *__restrict__ x, T *__restrict__ y, long M, int N,
		  float scale)
{
	constexpr int W = vec<T>::W, TPR = WPR * 32;
	constexpr int THREADS = TPR < 128 ? 128 : TPR, ROWS = THREADS / TPR;
	__shared__ float red[2][ROWS][WPR];
	const int rib = threadIdx.x / TPR, t = threadIdx.x % TPR;
	const long row = (long)blockIdx.x * ROWS + rib;
	const bool live = row < M;  // a dead row still joins the barriers
	const size_t start = live ? (size_t)row * N : 0;
	const int off = (int)(start % W), nst = live ? N : 0;
	const int keep = live ? (int)(row % N) + 1 : 0;
	const int nld = !live ? 0 : MASK == SM_MASK_SKIP ? keep : N;
	const size_t base = start - off;
	uint4 raw[VPT];
	float v[VPT][W], m = -INFINITY, s = 0;

#pragma unroll
	for (int i = 0; i < VPT; i++)
		raw[i] = load_slot<T, true>(x + base, i * TPR + t, off, nld, -INFINITY);
#pragma unroll
	for (int i = 0; i < VPT; i++) {
		vec<T>::unpack(raw[i], v[i]);
		if constexpr (MASK == SM_MASK_DENSE)
			mask_slot<W>(v[i], i * TPR + t, off, keep);
#pragma unroll
		for (int e = 0; e < W; e++) {
			v[i][e] *= scale;  // exact where scale is 1
			m = fmaxf(m, v[i][e]);
		}
	}
	m = group_reduce<WPR, true>(m, red[0][rib], t);
	const float mz = m == -INFINITY ? 0.f : m;
#pragma unroll
	for (int i = 0; i < VPT; i++)
#pragma unroll
		for (int e = 0; e < W; e++) {
			v[i][e] = exp2_ftz((v[i][e] - mz) * LOG2E);
			s += v[i][e];
		}
	s = group_reduce<WPR, false>(s, red[1][rib], t);
	const float inv = s > 0 ? 1.f / s : 0.f;
#pragma unroll
	for (int i = 0; i < VPT; i++) {
#pragma unroll
		for (int e = 0; e < W; e++)
			v[i][e] *= inv;
		store_slot<T>(y + base, i * TPR + t, off, nst, v[i]);
	}
}

// softmax_bwd/fused, rows in registers: y and dy read once, the dot product
// reduced as above, dx written once: 3*E*es. Expected at 16384 x 4096:
// 805 MB fp32, 403 MB bf16; measured at the copy bandwidth
// (bench/RESULTS.md, "Softmax, H100").
template <typename T, int WPR, int VPT>
__global__ void __launch_bounds__(WPR * 32 < 128 ? 128 : WPR * 32)
softmax_bwd_fused_reg(const T *__restrict__ y, const T *__restrict__ dy,
		      T *__restrict__ dx, long M, int N)
{
	constexpr int W = vec<T>::W, TPR = WPR * 32;
	constexpr int THREADS = TPR < 128 ? 128 : TPR, ROWS = THREADS / TPR;
	__shared__ float red[ROWS][WPR];
	const int rib = threadIdx.x / TPR, t = threadIdx.x % TPR;
	const long row = (long)blockIdx.x * ROWS + rib;
	const bool live = row < M;
	const size_t start = live ? (size_t)row * N : 0;
	const int off = (int)(start % W), n = live ? N : 0;
	const size_t base = start - off;
	uint4 ry[VPT], rd[VPT];
	float a[VPT][W], b[VPT][W], s = 0;

#pragma unroll
	for (int i = 0; i < VPT; i++) {
		ry[i] = load_slot<T, true>(y + base, i * TPR + t, off, n, 0.f);
		rd[i] = load_slot<T, true>(dy + base, i * TPR + t, off, n, 0.f);
	}
#pragma unroll
	for (int i = 0; i < VPT; i++) {
		vec<T>::unpack(ry[i], a[i]);
		vec<T>::unpack(rd[i], b[i]);
#pragma unroll
		for (int e = 0; e < W; e++)
			s = fmaf(a[i][e], b[i][e], s);
	}
	s = group_reduce<WPR, false>(s, red[rib], t);
#pragma unroll
	for (int i = 0; i < VPT; i++) {
#pragma unroll
		for (int e = 0; e < W; e++)
			a[i][e] = a[i][e] * (b[i][e] - s);
		store_slot<T>(dx + base, i * TPR + t, off, n, a[i]);
	}
}

// ---------------------------------------------------------------------------
// Kernels, wide rows (a vocabulary row of 50257 and anything past the
// register kernels' reach).
//
// What changes over the register kernel: the row no longer fits in registers,
// so pass 1 streams it once with an online max and rescaled sum (4 slots in
// flight per thread) and keeps the raw slots in dynamic shared memory; pass 2
// reads them back from there and writes y. Each thread reads back only the
// slots it wrote itself, so the stash needs no barrier. DRAM bytes stay at
// 2*E*es; exps are computed twice (once per pass), which the MUFU pipe
// absorbs.
// First version: one block of 1024 threads per row, with the right DRAM
// bytes but half the copy bandwidth: a 201 KB stash (2048 x 50257 fp32)
// allows one block per SM, so each SM alternated a read-only and a
// write-only phase with nothing to overlap them.
// This version splits the row over a cluster of up to WIDE_CLUSTER blocks
// of 256 threads (Hopper thread block clusters): each block streams and
// stashes its part of the row (25 KB at 50257 fp32, so several rows share an
// SM and their phases overlap), the blocks merge their (max, sum) through
// distributed shared memory in rank order (so every block gets the identical
// result), and each writes its part (bench/RESULTS.md, "Softmax, H100", the
// 2048 x 50257 rows). With 8 blocks per row bf16 gained little, its eighths
// (786 slots, 3 per thread) too short to pay for a block's start and two
// cluster barriers. Cluster sizes compared (the clusters option) at
// 2048 x 50257: the best keep about 50 KB of stash per block (3142 slots
// forward, 1571 of each input backward), so the cluster has the fewest
// blocks (1, 2, 4 or 8) that leave each at most WIDE_BLOCK_STASH bytes of
// stash. Then the stash was capped (sm.h, WIDE_STASH_*: option stash)
// where the cap fits more blocks on an SM, the rest of a block's part
// read again in pass 2, from L2, where the row is still (the DRAM bytes
// stay the same): 5 blocks an SM backward instead of 4 at 50 KB, the
// phases of more rows overlapping, gained more than L2 costs:
// the backward 0.86-0.93x the time at 2048 x 50257 and 1024 x 128256
// (H200, bench/RESULTS.md "The wide softmax's stash capped"), no change
// where the part fits the cap. Rows whose part exceeds the shared memory
// a block may have (over ~460k fp32 elements) re-read the rest in pass 2
// likewise, most of it from DRAM.

#define WIDE_THREADS 256
#define WIDE_WARPS (WIDE_THREADS / 32)
#define WIDE_UNROLL 4

template <typename T, int MASK>
__global__ void __launch_bounds__(WIDE_THREADS)
softmax_fused_wide(const T *__restrict__ x, T *__restrict__ y, int N,
		   float scale, int chunk, int stash_slots)
{
	extern __shared__ uint4 stash[];
	__shared__ float red_m[WIDE_WARPS], red_s[WIDE_WARPS], fin[2];
	constexpr int W = vec<T>::W, STEP = WIDE_THREADS * WIDE_UNROLL;
	cg::cluster_group cl = cg::this_cluster();
	const int C = (int)cl.num_blocks();
	const long row = blockIdx.x / C;
	const int rank = (int)cl.block_rank();
	const size_t start = (size_t)row * N;
	const int off = (int)(start % W), t = threadIdx.x;
	const int lane = t & 31, warp = t >> 5;
	const int keep = (int)(row % N) + 1;
	const int nld = MASK == SM_MASK_SKIP ? keep : N;
	const int sld = row_slots<T>(off, nld), sst = row_slots<T>(off, N);
	const int lo = rank * chunk, hld = min(sld, lo + chunk), hst = min(sst, lo + chunk);
	const size_t base = start - off;
	const uint4 ninf = fill_raw<T>(-INFINITY);
	float m = -INFINITY, s = 0;

	for (int k0 = lo + t; k0 < hld; k0 += STEP) {
		uint4 raw[WIDE_UNROLL];
#pragma unroll
		for (int u = 0; u < WIDE_UNROLL; u++) {
			const int k = k0 + u * WIDE_THREADS;
			raw[u] = k < hld ? load_slot<T, false>(x + base, k, off, nld, -INFINITY)
					 : ninf;
		}
#pragma unroll
		for (int u = 0; u < WIDE_UNROLL; u++) {
			const int k = k0 + u * WIDE_THREADS;
			float v[W], vm = -INFINITY;

			if (k < hld && k - lo < stash_slots)
				stash[k - lo] = raw[u];
			vec<T>::unpack(raw[u], v);
			if constexpr (MASK == SM_MASK_DENSE)
				mask_slot<W>(v, k, off, keep);
#pragma unroll
			for (int e = 0; e < W; e++) {
				v[e] *= scale;
				vm = fmaxf(vm, v[e]);
			}
			const float nm = fmaxf(m, vm);
			if (nm != -INFINITY) {
				s *= exp2_ftz((m - nm) * LOG2E);
#pragma unroll
				for (int e = 0; e < W; e++)
					s += exp2_ftz((v[e] - nm) * LOG2E);
				m = nm;
			}
		}
	}
#pragma unroll
	for (int o = 16; o; o >>= 1) {
		const float m2 = __shfl_xor_sync(FP_FULL_MASK, m, o);
		const float s2 = __shfl_xor_sync(FP_FULL_MASK, s, o);
		ms_merge(m, s, m2, s2);
	}
	if (lane == 0) {
		red_m[warp] = m;
		red_s[warp] = s;
	}
	__syncthreads();
	if (warp == 0) {
		m = lane < WIDE_WARPS ? red_m[lane] : -INFINITY;
		s = lane < WIDE_WARPS ? red_s[lane] : 0.f;
#pragma unroll
		for (int o = 16; o; o >>= 1) {
			const float m2 = __shfl_xor_sync(FP_FULL_MASK, m, o);
			const float s2 = __shfl_xor_sync(FP_FULL_MASK, s, o);
			ms_merge(m, s, m2, s2);
		}
		if (lane == 0) {
			fin[0] = m;
			fin[1] = s;
		}
	}
	// Every block of the cluster merges all blocks' partials in rank
	// order; the second barrier keeps each block's fin alive until all
	// have read it.
	cl.sync();
	m = -INFINITY;
	s = 0;
	for (int r = 0; r < C; r++) {
		const float *f = cl.map_shared_rank(fin, r);
		ms_merge(m, s, f[0], f[1]);
	}
	cl.sync();
	const float mz = m == -INFINITY ? 0.f : m, inv = s > 0 ? 1.f / s : 0.f;

	for (int k0 = lo + t; k0 < hst; k0 += STEP) {
		uint4 raw[WIDE_UNROLL];
#pragma unroll
		for (int u = 0; u < WIDE_UNROLL; u++) {
			const int k = k0 + u * WIDE_THREADS;
			raw[u] = k >= hld ? ninf : k - lo < stash_slots ? stash[k - lo]
				: load_slot<T, false>(x + base, k, off, nld, -INFINITY);
		}
#pragma unroll
		for (int u = 0; u < WIDE_UNROLL; u++) {
			const int k = k0 + u * WIDE_THREADS;
			float v[W];

			if (k >= hst)
				break;
			vec<T>::unpack(raw[u], v);
			if constexpr (MASK == SM_MASK_DENSE)
				mask_slot<W>(v, k, off, keep);
#pragma unroll
			for (int e = 0; e < W; e++)
				v[e] = exp2_ftz((v[e] * scale - mz) * LOG2E) * inv;
			store_slot<T>(y + base, k, off, N, v);
		}
	}
}

// softmax_bwd/fused for wide rows, the same cluster split: pass 1 forms each
// block's part of sum(dy * y) and stashes both rows' slots (half the stash
// each), the cluster adds the parts in rank order, pass 2 writes dx.
template <typename T>
__global__ void __launch_bounds__(WIDE_THREADS)
softmax_bwd_fused_wide(const T *__restrict__ y, const T *__restrict__ dy,
		       T *__restrict__ dx, int N, int chunk, int stash_slots)
{
	extern __shared__ uint4 stash[];  // [0, stash_slots): y, then dy
	__shared__ float red[WIDE_WARPS + 1];
	constexpr int W = vec<T>::W, STEP = WIDE_THREADS * WIDE_UNROLL;
	cg::cluster_group cl = cg::this_cluster();
	const int C = (int)cl.num_blocks();
	const long row = blockIdx.x / C;
	const int rank = (int)cl.block_rank();
	const size_t start = (size_t)row * N;
	const int off = (int)(start % W), t = threadIdx.x;
	const int lo = rank * chunk, hi = min(row_slots<T>(off, N), lo + chunk);
	const size_t base = start - off;
	float s = 0;

	for (int k0 = lo + t; k0 < hi; k0 += STEP) {
		uint4 ry[WIDE_UNROLL], rd[WIDE_UNROLL];
#pragma unroll
		for (int u = 0; u < WIDE_UNROLL; u++) {
			const int k = k0 + u * WIDE_THREADS;
			ry[u] = k < hi ? load_slot<T, false>(y + base, k, off, N, 0.f) : make_uint4(0, 0, 0, 0);
			rd[u] = k < hi ? load_slot<T, false>(dy + base, k, off, N, 0.f) : make_uint4(0, 0, 0, 0);
		}
#pragma unroll
		for (int u = 0; u < WIDE_UNROLL; u++) {
			const int k = k0 + u * WIDE_THREADS;
			float a[W], b[W];

			if (k < hi && k - lo < stash_slots) {
				stash[k - lo] = ry[u];
				stash[stash_slots + k - lo] = rd[u];
			}
			vec<T>::unpack(ry[u], a);
			vec<T>::unpack(rd[u], b);
#pragma unroll
			for (int e = 0; e < W; e++)
				s = fmaf(a[e], b[e], s);
		}
	}
	block_reduce<WIDE_WARPS, false>(s, red);  // this block's part in red[WIDE_WARPS]
	cl.sync();
	s = 0;
	for (int r = 0; r < C; r++)
		s += *cl.map_shared_rank(&red[WIDE_WARPS], r);
	cl.sync();
	for (int k0 = lo + t; k0 < hi; k0 += STEP) {
		uint4 ry[WIDE_UNROLL], rd[WIDE_UNROLL];
#pragma unroll
		for (int u = 0; u < WIDE_UNROLL; u++) {
			const int k = k0 + u * WIDE_THREADS;

			if (k >= hi) {
				ry[u] = rd[u] = make_uint4(0, 0, 0, 0);
			} else if (k - lo < stash_slots) {
				ry[u] = stash[k - lo];
				rd[u] = stash[stash_slots + k - lo];
			} else {
				ry[u] = load_slot<T, false>(y + base, k, off, N, 0.f);
				rd[u] = load_slot<T, false>(dy + base, k, off, N, 0.f);
			}
		}
#pragma unroll
		for (int u = 0; u < WIDE_UNROLL; u++) {
			const int k = k0 + u * WIDE_THREADS;
			float a[W], b[W];

			if (k >= hi)
				break;
			vec<T>::unpack(ry[u], a);
			vec<T>::unpack(rd[u], b);
#pragma unroll
			for (int e = 0; e < W; e++)
				a[e] = a[e] * (b[e] - s);
			store_slot<T>(dx + base, k, off, N, a);
		}
	}
}

// ---------------------------------------------------------------------------
// Launchers and the kernel choice

// Most 16-byte slots one row of N elements can span (a row starting mid-slot
// spans one more than an aligned one).
long sm_max_row_slots(long N, int W)
{
	long g = W, b = N;  // row starts fall on multiples of gcd(N, W)

	while (b) {
		long t = g % b;
		g = b;
		b = t;
	}
	return (N + (W - g) + W - 1) / W;
}

// Register kernel shape for rows of N: fewest warps per row (1..16) such that
// each thread holds at most 4 slots. -1 when the row needs the wide kernel.
int sm_pick_reg(long N, enum fp_dtype dt, int *wpr, int *vpt)
{
	long S = sm_max_row_slots(N, dt == FP_BF16 ? 8 : 4);

	for (int w = 1; w <= 16; w *= 2) {
		if (S <= (long)w * 32 * 4) {
			*wpr = w;
			*vpt = w > 1 || S > 64 ? 4 : S > 32 ? 2 : 1;
			return 0;
		}
	}
	return -1;
}

// Register kernel shapes compiled, as (warps per row, slots per thread):
// sm_pick_reg's choices plus the alternatives the warps and slots options
// can ask for when tuning on a GPU machine (see sm_plan).
#define SM_REG_SHAPES(X) X(1, 1) X(1, 2) X(1, 4) X(1, 8) X(2, 4) X(2, 8) \
	X(4, 2) X(4, 4) X(4, 8) X(8, 2) X(8, 4) X(16, 1) X(16, 2) X(16, 4) \
	X(32, 1) X(32, 2)

static int reg_shape_compiled(int wpr, int vpt)
{
#define IS_SHAPE(W_, V_) if (wpr == W_ && vpt == V_) return 1;
	SM_REG_SHAPES(IS_SHAPE)
#undef IS_SHAPE
	return 0;
}

// Blocks per row for the wide kernels, rows of S slots of `arrays` inputs
// (1 forward, 2 backward): the fewest of 1, 2, 4, 8 that leave each block at
// most WIDE_BLOCK_STASH bytes to stash.
int sm_wide_cluster(long S, int arrays)
{
	int c = 1;

	while (c < WIDE_CLUSTER && (S + c - 1) / c * 16 * arrays > WIDE_BLOCK_STASH)
		c *= 2;
	return c;
}

static unsigned blocks_for(long M, int wpr)
{
	int rows = wpr >= 4 ? 1 : 4 / wpr;

	return (unsigned)((M + rows - 1) / rows);
}

// A launch of C blocks per row, clustered; cfg points to attr.
static void wide_config(cudaLaunchConfig_t *cfg, cudaLaunchAttribute *attr,
			long M, int C, size_t smem, cudaStream_t st)
{
	cluster_config(cfg, attr, (unsigned)C, (unsigned)(M * C), WIDE_THREADS, smem, st);
}

template <typename T, int MASK>
static int launch_fused_fwd(const struct sm_op *op, const T *x, T *y,
			    float scale, cudaStream_t st)
{
	const long M = op->M;
	const int N = (int)op->N;

	if (!op->wpr) {
		cudaLaunchConfig_t cfg;
		cudaLaunchAttribute attr;

		wide_config(&cfg, &attr, M, op->cluster_fwd, (size_t)op->stash_fwd * 16, st);

		return CUDA_CHECK(cudaLaunchKernelEx(&cfg, softmax_fused_wide<T, MASK>,
						     x, y, N, scale, op->chunk_fwd,
						     op->stash_fwd));
	}
	const unsigned g = blocks_for(M, op->wpr);
	const int thr = op->wpr * 32 < 128 ? 128 : op->wpr * 32;
#define FWD_CASE(W_, V_) \
	if (op->wpr == W_ && op->vpt == V_) \
		softmax_fused_reg<T, W_, V_, MASK><<<g, thr, 0, st>>>(x, y, M, N, scale); else
	SM_REG_SHAPES(FWD_CASE)
		return error("softmax: no register kernel for %d warps x %d slots",
			     op->wpr, op->vpt);
#undef FWD_CASE
	return CUDA_CHECK_LAUNCH("softmax_fused_reg");
}

template <typename T>
static int launch_fused_bwd(const struct sm_op *op, const T *y, const T *dy,
			    T *dx, cudaStream_t st)
{
	const long M = op->M;
	const int N = (int)op->N;

	if (!op->wpr) {
		cudaLaunchConfig_t cfg;
		cudaLaunchAttribute attr;

		wide_config(&cfg, &attr, M, op->cluster_bwd, (size_t)op->stash_bwd * 32, st);

		return CUDA_CHECK(cudaLaunchKernelEx(&cfg, softmax_bwd_fused_wide<T>,
						     y, dy, dx, N, op->chunk_bwd,
						     op->stash_bwd));
	}
	const unsigned g = blocks_for(M, op->wpr);
	const int thr = op->wpr * 32 < 128 ? 128 : op->wpr * 32;
#define BWD_CASE(W_, V_) \
	if (op->wpr == W_ && op->vpt == V_) \
		softmax_bwd_fused_reg<T, W_, V_><<<g, thr, 0, st>>>(y, dy, dx, M, N); else
	SM_REG_SHAPES(BWD_CASE)
		return error("softmax_bwd: no register kernel for %d warps x %d slots",
			     op->wpr, op->vpt);
#undef BWD_CASE
	return CUDA_CHECK_LAUNCH("softmax_bwd_fused_reg");
}

// What bounds the wide blocks an SM of this device holds (softmax_wide_blocks),
// noted by wide_smem_setup.
static struct sm_wide_sm wide_sm;

// Let the wide kernels take as much shared memory as a block may have, once
// per process and kernel; returns that amount in bytes, or -1.
static long wide_smem_setup(void)
{
	static long avail = -2;
	int dev, optin, per_sm, reserved, threads;

	if (avail != -2)
		return avail;
	if (CUDA_CHECK(cudaGetDevice(&dev)) ||
	    CUDA_CHECK(cudaDeviceGetAttribute(&optin,
			cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)) ||
	    CUDA_CHECK(cudaDeviceGetAttribute(&per_sm,
			cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev)) ||
	    CUDA_CHECK(cudaDeviceGetAttribute(&reserved,
			cudaDevAttrReservedSharedMemoryPerBlock, dev)) ||
	    CUDA_CHECK(cudaDeviceGetAttribute(&threads,
			cudaDevAttrMaxThreadsPerMultiProcessor, dev)))
		return -1;
	wide_sm.sm_bytes = per_sm;
	wide_sm.block_extra = reserved + 256;  // and the kernels' static arrays
	wide_sm.max_blocks = threads / WIDE_THREADS;
	// Leave room for the kernels' static shared memory (< 300 bytes).
	avail = ((long)optin - 1024) & ~15L;
	wide_sm.block_max = avail;
#define SET_SMEM(...) \
	if (CUDA_CHECK(cudaFuncSetAttribute(__VA_ARGS__, \
			cudaFuncAttributeMaxDynamicSharedMemorySize, (int)avail))) \
		return avail = -1;
	SET_SMEM(softmax_fused_wide<float, SM_MASK_NONE>)
	SET_SMEM(softmax_fused_wide<float, SM_MASK_SKIP>)
	SET_SMEM(softmax_fused_wide<float, SM_MASK_DENSE>)
	SET_SMEM(softmax_fused_wide<__nv_bfloat16, SM_MASK_NONE>)
	SET_SMEM(softmax_fused_wide<__nv_bfloat16, SM_MASK_SKIP>)
	SET_SMEM(softmax_fused_wide<__nv_bfloat16, SM_MASK_DENSE>)
	SET_SMEM(softmax_bwd_fused_wide<float>)
	SET_SMEM(softmax_bwd_fused_wide<__nv_bfloat16>)
#undef SET_SMEM
	return avail;
}

template <typename T>
static int launch_fused_fwd_mask(const struct sm_op *op, const void *x, void *y,
				 enum sm_mask mask, float scale, cudaStream_t st)
{
	switch (mask) {
	case SM_MASK_NONE:
		return launch_fused_fwd<T, SM_MASK_NONE>(op, (const T *)x, (T *)y, scale, st);
	case SM_MASK_SKIP:
		return launch_fused_fwd<T, SM_MASK_SKIP>(op, (const T *)x, (T *)y, scale, st);
	case SM_MASK_DENSE:
		return launch_fused_fwd<T, SM_MASK_DENSE>(op, (const T *)x, (T *)y, scale, st);
	}
	return error("softmax: unknown mask %d", (int)mask);
}

int sm_fused_fwd(const struct sm_op *op, const void *x, void *y,
		 enum sm_mask mask, float scale, cudaStream_t st)
{
	if (op->dt == FP_BF16)
		return launch_fused_fwd_mask<__nv_bfloat16>(op, x, y, mask, scale, st);
	return launch_fused_fwd_mask<float>(op, x, y, mask, scale, st);
}

int sm_fused_bwd(const struct sm_op *op, const void *y, const void *dy, void *dx,
		 cudaStream_t st)
{
	if (op->dt == FP_BF16)
		return launch_fused_bwd<__nv_bfloat16>(op, (const __nv_bfloat16 *)y,
						       (const __nv_bfloat16 *)dy,
						       (__nv_bfloat16 *)dx, st);
	return launch_fused_bwd<float>(op, (const float *)y, (const float *)dy,
				       (float *)dx, st);
}

// The fewest of the compiled slots per thread (warps per row) that, with
// warps per row w (slots per thread v), hold a row of S slots; 0 if none.
static int fit_slots(int w, long S)
{
	for (int v = 1; v <= 8; v *= 2)
		if (reg_shape_compiled(w, v) && (long)w * 32 * v >= S)
			return v;
	return 0;
}

static int fit_warps(int v, long S)
{
	for (int w = 1; w <= 32; w *= 2)
		if (reg_shape_compiled(w, v) && (long)w * 32 * v >= S)
			return w;
	return 0;
}

long softmax_wide_blocks(const struct sm_wide_sm *d, long bytes)
{
	long b = d->sm_bytes / (bytes + d->block_extra);

	return b < d->max_blocks ? b : d->max_blocks;
}

long softmax_wide_cap(int bwd, int skip)
{
	return bwd ? WIDE_STASH_BWD : skip ? WIDE_STASH_SKIP : WIDE_STASH_FWD;
}

long softmax_wide_stash(const struct sm_wide_sm *d, long part, long cap,
			int automatic)
{
	const long all = part < d->block_max ? part : d->block_max;

	if (cap >= all || (automatic && softmax_wide_blocks(d, cap) <=
					softmax_wide_blocks(d, all)))
		return all;
	return cap;
}

int sm_plan(struct sm_op *op, int warps, int slots, int clusters, int stash_kb)
{
	const long S = sm_max_row_slots(op->N, op->dt == FP_BF16 ? 8 : 4);
	long avail, cap_fwd, cap_bwd;

	if (sm_pick_reg(op->N, op->dt, &op->wpr, &op->vpt) == 0) {
		// A shape asked for that is not compiled or cannot hold the
		// row leaves the automatic one; kernel() says which ran.
		int w = warps, v = slots;

		if (w && !v)
			v = fit_slots(w, S);
		else if (v && !w)
			w = fit_warps(v, S);
		if (w && v && reg_shape_compiled(w, v) && (long)w * 32 * v >= S) {
			op->wpr = w;
			op->vpt = v;
		}
		return 0;
	}
	op->wpr = op->vpt = 0;
	if ((avail = wide_smem_setup()) < 0)
		return -1;
	if (clusters < 1 || clusters > WIDE_CLUSTER)
		clusters = 0;
	op->cluster_fwd = clusters ? clusters : sm_wide_cluster(S, 1);
	op->cluster_bwd = clusters ? clusters : sm_wide_cluster(S, 2);
	op->chunk_fwd = (int)((S + op->cluster_fwd - 1) / op->cluster_fwd);
	op->chunk_bwd = (int)((S + op->cluster_bwd - 1) / op->cluster_bwd);
	cap_fwd = cap_bwd = avail;
	if (stash_kb >= 0) {
		cap_fwd = cap_bwd = (long)stash_kb * 1024;
	} else if (stash_kb == SM_STASH_AUTO) {
		cap_fwd = softmax_wide_cap(0, op->kind == SM_MASKED && op->variant == 1);
		cap_bwd = softmax_wide_cap(1, 0);
	}
	op->stash_fwd = (int)(softmax_wide_stash(&wide_sm, op->chunk_fwd * 16L, cap_fwd,
						 stash_kb == SM_STASH_AUTO) / 16);
	op->stash_bwd = (int)(softmax_wide_stash(&wide_sm, op->chunk_bwd * 32L, cap_bwd,
						 stash_kb == SM_STASH_AUTO) / 32);
	return 0;
}

void sm_describe(const struct sm_op *op, char *buf, size_t n)
{
	const int bwd = op->kind == SM_BWD;
	const int chunk = bwd ? op->chunk_bwd : op->chunk_fwd;
	const int stash = bwd ? op->stash_bwd : op->stash_fwd;

	if (op->wpr) {
		const int tpr = op->wpr * 32, rows = tpr < 128 ? 128 / tpr : 1;
		int len = snprintf(buf, n, "registers, %d warp%s a row, %d 16-byte slot%s a thread",
				   op->wpr, op->wpr > 1 ? "s" : "", op->vpt,
				   op->vpt > 1 ? "s" : "");

		if (rows > 1 && len >= 0 && (size_t)len < n)
			snprintf(buf + len, n - (size_t)len, ", %d rows a block", rows);
		return;
	}
	snprintf(buf, n, "wide rows, clusters of %d, %d KB stash a block%s",
		 bwd ? op->cluster_bwd : op->cluster_fwd,
		 (int)((size_t)stash * 16 * (bwd ? 2 : 1) / 1024),
		 stash < chunk ? ", the rest re-read" : "");
}
