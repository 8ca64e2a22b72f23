// fwd_wgmma.cu - the LayerNorm+Linear bf16 fused forward on Hopper: the
// wgmma kernel (k_fwd_fused_wgmma), then the warp-specialized persistent
// one (k_fwd_fused_ws: TMA, mbarriers, setmaxnreg, clusters multicasting
// W' or x~, or adding a tile's slices of K through distributed shared
// memory; A is x shifted in its registers, or x~ from the x~ kernel's pass
// read from shared memory). Built for sm_90a (local.mk), as
// fwd_skinny_wg.cu is: wgmma, setmaxnreg and the cluster instructions exist
// only there; wgmma.cuh holds the primitives both files use. See
// internal.h for the numerics and fwd_mma.cu for the data path both
// kernels build on.
#include "config.h"

#include <cuda.h>
#include <cuda_bf16.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <type_traits>

#include "error.h"
#include "internal.h"
#include "layernorm/layernorm.h"
#include "skinny.cuh"
#include "wgmma.cuh"

// The kernels' configurations (their comments below say why): threads a
// block, ring stages, and dynamic shared memory (the ring, 1024-aligned).
// k_fwd_fused_wgmma loads WG_AHEAD k-tiles ahead of the one it multiplies;
// k_fwd_fused_ws orders its tiles in groups of WS_GROUP along M.
#define WG_THREADS 256
#define WG_STAGES 4
#define WG_AHEAD 2
#define WG_SMEM (WG_STAGES * (128 + 256) * LNL_KTILE * 2 + 1024)
#define WS_THREADS 384
#define WS_STAGES 4
#define WS_GROUP 16
// The warp-specialized kernel's forms of A (template argument MODE): x,
// shifted and summed in the math warps' registers (WS_SUMS); x, shifted by
// the statistics of a pass run before (WS_PASS); x~ = x - c from the x~
// kernel's pass (WS_XT), read by wgmma from shared memory like W'. Its
// ring: WS_STAGES stages on x; on x~ as many as WS_XT_RING bytes hold (8
// at 64 columns, 6 at 128, 5 at 192, 4 at 256), at most WS_XT_STAGES_MAX.
enum { WS_SUMS, WS_PASS, WS_XT };
#define WS_XT_RING (200 * 1024)
#define WS_XT_STAGES_MAX 8
static constexpr int ws_stages(int mode, int bn)
{
	return mode != WS_XT ? WS_STAGES
	       : WS_XT_RING / ((128 + bn) * 128) < WS_XT_STAGES_MAX ? WS_XT_RING / ((128 + bn) * 128)
								     : WS_XT_STAGES_MAX;
}
#define WS_SMEM(MODE, BN) (ws_stages(MODE, BN) * (128 + (BN)) * 128 + 1024)

// The architecture guard (wgmma.cuh): the Hopper code below is compiled in
// the host pass and the sm_90a device pass only.
#if SM90A_CODE

// --- forward, fused, bf16 on Hopper (sm_90a): k_fwd_fused_mma's data path
// with the multiply moved to wgmma, which that kernel's measurements called
// for (its mma.sync mainloop kept the tensor pipe well under half busy;
// bench/RESULTS.md, "LayerNorm+Linear forward, tensor-core fused kernel,
// H200"). Here each warpgroup (4 warps, 64 rows) issues per 16-wide
// k-step one wgmma m64n256k16: A from registers, B (the W' tile, 256 rows)
// straight from shared memory through a descriptor, so B costs no ldmatrix
// and no registers. The row shift still
// happens in registers: A is ldmatrix'd from the swizzled tile, shifted
// with bf16x2 subtractions and summed into the statistics, then handed to
// wgmma (its register layout for A is mma.sync's m16n8k16 one, a warp per
// 16 rows). Each warp owns all K of its 16 rows, so the statistics need no
// reduction across warps. Shared-memory tiles are laid out as wgmma's
// 128-byte swizzle wants them (8-row atoms of 1024 bytes, 16-byte chunk c
// of row r at c ^ (r % 8)): the same XOR as k_fwd_fused_mma, on a
// 1024-byte-aligned base. cp.async fills a 4-stage ring two tiles ahead;
// wgmma keeps one k-tile in flight (wait_group 1) while the next tile's A
// fragments are prepared, in a second register set. Block tile 128 x 256,
// two warpgroups, one block per SM.
// Measured against the unfused variant, cuBLAS's Linear alone and eager
// PyTorch in bench/RESULTS.md, "LayerNorm+Linear forward, tensor-core fused
// kernel, H200": close to the Linear alone at K = 768, further behind at
// K = 4096, where ncu found waits, not issue, bounding it (cutting the copy
// address arithmetic helped). Tried next, slower at 4096 -> 16384
// (bench/RESULTS.md, "LayerNorm+Linear bf16 fused forward at 4096 → 16384:
// where it stands, H200"): a TMA producer warp with mbarriers and two math
// warpgroups (288 threads, so at most 168 registers), and the same in
// two-block clusters multicasting W'. From K = WS_MIN_K on, k_fwd_fused_ws
// (below: three warpgroups, setmaxnreg, persistent) takes its place.
__device__ __forceinline__ void
wgmma_body(const __nv_bfloat16 *__restrict__ x,
	   const __nv_bfloat16 *__restrict__ Wf, const float *__restrict__ sW,
	   const float *__restrict__ bf, __nv_bfloat16 *__restrict__ y,
	   long M, int K, int N)
{
	constexpr int BM = 128, BN = 256, YLD = BN + 8;
	constexpr int A_BYTES = BM * LNL_KTILE * 2, STAGE = (BM + BN) * LNL_KTILE * 2;
	static_assert(BM * YLD * 2 <= WG_STAGES * STAGE, "output tile fits the ring");
	extern __shared__ __align__(1024) unsigned char smem_raw[];
	__shared__ float st_mt[BM], st_rs[BM];
	__shared__ __align__(8) float st_s[BN], st_b[BN];

	const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
	const int g = lane >> 2, t = lane & 3, row0 = warp * 16;
	const long tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
	long m0, n0;

	group_tile(blockIdx.x, tiles_m, tiles_n, LNL_GROUP, BM, BN, &m0, &n0);
	const int KT = (K + LNL_KTILE - 1) / LNL_KTILE;
	const uint32_t sbase = (smem_u32(smem_raw) + 1023) & ~1023u;
	unsigned char *smem = smem_raw + (sbase - smem_u32(smem_raw));

	uint32_t piv[2], a0[LNL_KTILE / 16][4], a1[LNL_KTILE / 16][4];
	float s1[2] = { 0.f, 0.f }, s2[2] = { 0.f, 0.f }, acc[128];

	// This thread copies the 16-byte chunk ch of tile rows lr + 32 j
	// (A: j < 4, B: j < 8); their swizzled places are soff + 4096 j. The
	// addresses are set up once: a tile's copies then cost a pointer add
	// each (the first version recomputed them with 64-bit multiplies,
	// ~20 instructions a copy, most of the warps' issue slots).
	const int lr = tid >> 3, ch = tid & 7;
	const uint32_t soff = lr * 128 + ((ch ^ (lr & 7)) << 4);
	const long rstep = 32L * K;
	const __nv_bfloat16 *xg = x + (m0 + lr) * K + ch * 8;
	const __nv_bfloat16 *wg = Wf + (n0 + lr) * K + ch * 8;
	uint32_t rows_ok = 0;

#pragma unroll
	for (int j = 0; j < BM / 32; j++)
		rows_ok |= (uint32_t)(m0 + lr + 32 * j < M) << j;
#pragma unroll
	for (int j = 0; j < BN / 32; j++)
		rows_ok |= (uint32_t)(n0 + lr + 32 * j < N) << (BM / 32 + j);

	auto load_tile = [&](int stage, int kt) {
		const int k0 = kt * LNL_KTILE;
		const uint32_t sa = sbase + stage * STAGE + soff, sb = sa + A_BYTES;
		const uint32_t ok = k0 + ch * 8 < K ? rows_ok : 0;
		const __nv_bfloat16 *p = xg + k0;

#pragma unroll
		for (int j = 0; j < BM / 32; j++, p += rstep)
			cp_async16(sa + j * 4096, ok >> j & 1 ? p : x, ok >> j & 1 ? 16 : 0);
		p = wg + k0;
#pragma unroll
		for (int j = 0; j < BN / 32; j++, p += rstep)
			cp_async16(sb + j * 4096, ok >> (BM / 32 + j) & 1 ? p : Wf,
				   ok >> (BM / 32 + j) & 1 ? 16 : 0);
	};

	// One k-tile: wait for it, start the load WG_AHEAD tiles on, shift
	// and sum this warp's A fragments, queue the four wgmmas, and wait
	// for the previous tile's (whose ring stage the next load reuses and
	// whose A registers the next call rewrites).
	auto step = [&](int kt, uint32_t (&a)[LNL_KTILE / 16][4]) {
		cp_async_wait<WG_AHEAD - 1>();
		fence_proxy_async();
		__syncthreads();
		if (kt + WG_AHEAD < KT)
			load_tile((kt + WG_AHEAD) % WG_STAGES, kt + WG_AHEAD);
		cp_async_commit();

		const uint32_t sa = sbase + (kt % WG_STAGES) * STAGE, sb = sa + A_BYTES;
		const int kleft = K - kt * LNL_KTILE;

		wg_ktile<true>(sa, sb, row0, lane, kleft, piv, a, s1, s2, acc);
	};

#pragma unroll
	for (int s = 0; s < WG_AHEAD; s++) {
		if (s < KT)
			load_tile(s, s);
		cp_async_commit();
	}
	wg_pivots(x, m0 + row0 + g, M, K, piv);
	// The tile's s and b' for the epilogue, a column a thread (the k
	// loop's barriers order these stores before the epilogue's reads).
	static_assert(BN == WG_THREADS, "one column a thread");
	st_s[tid] = n0 + tid < N ? sW[n0 + tid] : 0.f;
	st_b[tid] = n0 + tid < N ? bf[n0 + tid] : 0.f;
	wg_kloop(0, 1, KT, step, a0, a1, acc);
	cp_async_wait<0>();

#pragma unroll
	for (int h = 0; h < 2; h++) {
		float mt, rs;

		quad_stats(s1[h], s2[h], K, &mt, &rs);
		if (t == 0)
			st_mt[row0 + g + 8 * h] = mt, st_rs[row0 + g + 8 * h] = rs;
	}
	__syncthreads();  // also: every warp is done with the ring

	// Epilogue: y = rstd * (acc - (mean - c) * s) + b', staged as bf16.
	// acc[4j + 2h + e] is row row0 + g + 8h, column 8j + 2t + e.
	__nv_bfloat16 *sy = (__nv_bfloat16 *)smem;

#pragma unroll
	for (int j = 0; j < BN / 8; j++) {
		const int cl = j * 8 + 2 * t;
		const float2 sc = *(const float2 *)&st_s[cl], bc = *(const float2 *)&st_b[cl];

#pragma unroll
		for (int h = 0; h < 2; h++) {
			const int rl = row0 + g + 8 * h;
			const float mt = st_mt[rl], rs = st_rs[rl];

			*(__nv_bfloat162 *)&sy[rl * YLD + cl] = __floats2bfloat162_rn(
				rs * (acc[4 * j + 2 * h] - mt * sc.x) + bc.x,
				rs * (acc[4 * j + 2 * h + 1] - mt * sc.y) + bc.y);
		}
	}
	__syncthreads();
	store_tile<__nv_bfloat16, BM, BN, YLD, WG_THREADS>(y, sy, m0, n0, M, N, tid);
}

// --- forward, fused, bf16 on Hopper, warp-specialized and persistent:
// k_fwd_fused_wgmma's arithmetic (A from registers, shifted by the row's
// pivot and summed into its statistics on the way; B from shared memory)
// with the data path taken off the math warps. Three warpgroups, one block
// per SM: the first only feeds the ring (one thread has the Tensor Memory
// Accelerator copy each x and W' tile in the 128-byte-swizzled layout the
// ldmatrix addressing and the wgmma descriptor use; rows and columns past
// M, N and K arrive as zeros) and gives its registers to the other two
// with setmaxnreg (40 a thread there, 232 in the math warpgroups: a
// 64 x 256 accumulator is 128 of them, two sets of A fragments 32 more).
// A block's tile is 128 x BN, BN = 256 or 192 (128 where tiles are few;
// over x~, WS_XT below, 64 too).
// Every ring stage has a "full" mbarrier the copies complete and an
// "empty" one each math warp arrives on when its wgmmas are done with it.
// The grid is persistent: each block walks tiles blockIdx.x, + gridDim.x,
// ..., so the next tile's copies start while the math warps finish the
// last one's epilogue, which stores straight from the accumulators.
// Tiles are ordered in groups of WS_GROUP along M (the 132 tiles in
// flight then touch about 16 x 128 rows of x and 8 x 256 of W').
// Its history, measured in bench/RESULTS.md: the first version beat
// k_fwd_fused_wgmma at 4096 -> 16384 and 4096 -> 256 ("LayerNorm+Linear
// bf16 fused forward: the warp-specialized persistent kernel, H200"); tried
// beside it, correct and slower: clusters of two blocks multicasting the W'
// tile, and the shift done in shared memory so that wgmma reads A from
// there too, by the math warps themselves or by the first warpgroup; a
// plain GEMM on the same pipeline (A from shared memory, no shift, no sums)
// gave the bound. Then ncu's per-instruction samples showed where the rest
// went ("... statistics pass, shared-memory s and b', 16-byte stores (H200,
// H100)"): the statistics (with N >= WS_PASS_N every row is summed again by
// each of its N / 256 tiles; a pass of their own reads x once), and an
// epilogue waiting on s and b' loaded one column pair at a time (now one
// column a thread a tile, through shared memory) and on 4-byte stores (now
// 16: W' rows are stored in perm32's order so that a thread's accumulators
// are 8 adjacent columns); that brought it level with cuBLAS's kernel at
// 4096 -> 16384. Then clusters of two again (CL = 2), now with remote
// arrivals that carry no cluster-scope release (that had put a memory
// barrier before each and made the first cluster versions slow): faster
// from N = 1024 on, no better at N = 256 ("fuseprof run times a case's
// variants side by side; the bf16 fused forward in block pairs (H100)"),
// so pairs serve from N = 512 on, and above K = 512, where single blocks
// won (WS_SOLO_MAX_K; lnl_fwd_choose in choose.cu, option clusters). At
// short K ("the warp-specialized kernel's epilogue", H100)
// the tiles that cross M or N store 16 bytes at a time too, checked, and a
// tile's pivots come from its first k-tile in shared memory; tiles of
// 128 x 192 (BN, option ws_tile, lnl_ws_bn) serve where 256-wide ones
// would leave the last round of the SMs far from full. Each math
// warpgroup has its own s, b' and barrier between tiles, so neither waits
// for the other there (0.7-3.2 %, "each math warpgroup its own barrier
// between tiles"). y leaves in streaming stores (st.global.cs: 0.9-3.7 %
// over plain ones at six shapes, "y's stores streamed"). Tried at short K
// and not kept ("short K: what the warp-specialized kernel's time is not,
// and what it is"): A from shared memory without the pivot (no faster), y's
// stores as whole lines (0-1 %), and the halves of a tile by turns,
// pingpong (1.2-1.4x slower: one warpgroup alone does not keep the tensor
// cores busy). What did pace it at short K was the math warps' own k-tile
// (wg_ktile, wgmma.cuh): ncu's warp samples put 80 % of their time there
// with the tensor pipe 61 % busy at 16384 x 1024 -> 4096, on a branch and
// a reconvergence around every register's sums and byte permutes that
// split and re-packed each shifted register; without them the kernel is
// 0.89-0.90x at K = 768-1000 and the pipe 71 % busy (bench/RESULTS.md,
// "The math warps' k-tile without a branch an element"). The launcher
// takes the kernel from K = WS_MIN_K on.

// The same box into shared memory at dst in every block of the cluster
// that mask names, completing on the barrier at bar's offset in each.
__device__ __forceinline__ void tma_load_mc(uint32_t dst, const CUtensorMap *map,
					    int c, int r, uint32_t bar, uint16_t mask)
{
	asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
		     ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n"
		     :: "r"(dst), "l"((uint64_t)map), "r"(c), "r"(r), "r"(bar), "h"(mask)
		     : "memory");
}

// Arrive on the barrier at bar's offset in block rank of the cluster. No
// .release.cluster: what the arrival publishes is that this block's reads
// of a stage are done, and release at cluster scope put a memory barrier
// (ERRBAR) before every arrival, which cost the math warps much of their
// time (ncu, 4096 -> 256; bench/RESULTS.md, "fuseprof run times a case's
// variants side by side; the bf16 fused forward in block pairs (H100)").
__device__ __forceinline__ void mbar_arrive_remote(uint32_t bar, uint32_t rank)
{
	asm volatile("{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %0, %1;\n"
		     "mbarrier.arrive.shared::cluster.b64 _, [ra];\n}\n"
		     :: "r"(bar), "r"(rank) : "memory");
}

// Every thread of the cluster's blocks, with release/acquire order.
__device__ __forceinline__ void cluster_sync(void)
{
	asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n"
		     ::: "memory");
}

__device__ __forceinline__ uint32_t cluster_rank(void)
{
	uint32_t r = 0;
	asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
	return r;
}

template <int REGS>
__device__ __forceinline__ void regs_dec(void)
{
	asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" :: "n"(REGS));
}

template <int REGS>
__device__ __forceinline__ void regs_inc(void)
{
	asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" :: "n"(REGS));
}

// A unit's sums over its slice sl of K into the split-K partials: rows r
// and r + 8 (this thread's, under M), its 8 adjacent columns of each
// group of 32 (W' in perm32's order: acc[4 (4b + u) + 2h + e] is column
// n0 + 32b + 8t + 2u + e), and where n0 = 0 the rows' shifted sums (s1,
// s2 over the quad first).
template <int BN, bool SUMS>
__device__ __forceinline__ void ws_part_store(float *__restrict__ part, const float *acc,
					      float *s1, float *s2, long sl, int splits, long r,
					      long n0, long M, int N, int t, bool vec8)
{
	float *ps = part + (size_t)sl * M * N;

	if constexpr (SUMS) {
#pragma unroll
		for (int h = 0; h < 2; h++)
			quad_sums(s1[h], s2[h]);
	}
	if (SUMS && n0 == 0 && t == 0) {
		float *pst = part + (size_t)splits * M * N + (size_t)sl * 2 * M;

#pragma unroll
		for (int h = 0; h < 2; h++)
			if (r + 8 * h < M) {
				pst[2 * (r + 8 * h)] = s1[h];
				pst[2 * (r + 8 * h) + 1] = s2[h];
			}
	}
#pragma unroll
	for (int b = 0; b < BN / 32; b++) {
		const long n = n0 + 32 * b + 8 * t;

#pragma unroll
		for (int h = 0; h < 2; h++) {
			const float *a = &acc[16 * b + 2 * h];
			float *p = ps + (r + 8 * h) * N + n;

			if (r + 8 * h >= M || n >= N)
				continue;
			if (vec8) {  // N % 8 == 0: all 8 columns in, 32-byte aligned
				((float4 *)p)[0] = make_float4(a[0], a[1], a[4], a[5]);
				((float4 *)p)[1] = make_float4(a[8], a[9], a[12], a[13]);
				continue;
			}
#pragma unroll
			for (int u = 0; u < 4; u++)
#pragma unroll
				for (int e = 0; e < 2; e++)
					if (n + 2 * u + e < N)
						p[2 * u + e] = a[4 * u + e];
		}
	}
}

// PASS: the rows' statistics come from a LayerNorm statistics pass run
// before (stats: hi, lo, rstd, as layernorm_stats writes them) instead of
// being summed from the tiles; the pivot is then hi rounded to bf16. W' is
// in perm32's order (k_fold with perm), s and b' in column order.
//
// CL = 2: launched in clusters of two blocks (consecutive in x) that walk
// the same tiles of W' side by side, on x's row tiles 2p and 2p + 1: each
// block's producer loads half of each W' tile and multicasts it to both, so
// that W' crosses from L2 to the SMs once a pair (tw's box is then BN / 2
// rows). A stage is free once both blocks' math warps released it (the
// empty barriers count 16 arrivals, half of them from the other block),
// and neither block leaves before the other is done with its barriers.
// Over x~ in tiles of up to 128 columns (PAIR_A) the pair walks two
// adjacent column tiles of one row tile instead, each producer loading
// half of the x~ tile (64 rows) for both: x~'s 16 KB a k-tile are then
// the larger share (W''s 8 or 16).
//
// XT (MODE WS_XT): A is x~ = x - c (fwd_skinny_xt.cu's k_xt_pass, run
// before and launched programmatically: the producer waits for its end
// before the first load, the math warps before reading its statistics,
// stats[r] = mean - c, stats[M + r] = rstd), whole 128-row boxes of it
// (lnl_xt_rows), which wgmma reads from shared memory as it reads W': a
// plain GEMM on the same ring, with no work on A in the math warps. Where
// the 128 x 256 tiles are few, the register path's k-tile (the A
// fragments' loads, shifts and sums, a k-tile's wgmmas waited before the
// next one's A is ready) paced the kernel: about 0.4 us a k-tile whatever
// the tile's width (64 to 128 columns; bench/RESULTS.md, "the warp-
// specialized kernel over x~").
//
// SPLIT (MODE WS_SUMS or WS_XT, CL 1): over slices of K, a unit is a tile
// and a slice of `splits` (kchunk k-tiles each, none empty), slice-major; its
// sums leave in part as the split-K forward's (x~ W'^T in
// part[slice][row][col], the rows' shifted sums after every slice's M x N,
// from the tiles at n0 = 0), and k_fwd_split_reduce adds them in slice
// order. Every slice shifts by the row's first element, read from x (over
// x~, no sums: the reduction takes the pass's statistics).
//
// DSUM (MODE WS_XT, CL 1): over slices of K as a cluster's blocks, one
// a slice of one tile (`splits` blocks a cluster, a cluster a tile, one
// tile a cluster: the grid is every tile's cluster, not persistent). Past
// the k loop each block puts its sums into its ring (every stage consumed,
// both warpgroups' wgmmas done); past a cluster barrier the math warps of
// rank q (warps cw with cw % splits = q) add every rank's sums for their
// rows in rank order through distributed shared memory (the same bits
// every run) and store them; a second barrier keeps each block's shared
// memory until all have read it. No partials in memory, no second kernel.
template <int MODE, int CL, int BN, bool SPLIT, bool DSUM>
__device__ __forceinline__ void
ws_body(const CUtensorMap *tx, const CUtensorMap *tw, const float *__restrict__ stats,
	const float *__restrict__ sW, const float *__restrict__ bf,
	__nv_bfloat16 *__restrict__ y, long M, int K, int N,
	const __nv_bfloat16 *__restrict__ x, float *__restrict__ part, int splits)
{
	constexpr int BM = 128, A_BYTES = BM * 128, STAGE = (BM + BN) * 128;
	constexpr bool PASS = MODE == WS_PASS, XT = MODE == WS_XT;
	constexpr int WS_ST = ws_stages(MODE, BN);
	// pairs over x~ in tiles of up to 128 columns share the x~ tile (two
	// column tiles of one row tile), not the W' tile: the larger of the two
	constexpr bool PAIR_A = LNL_WS_PAIR_X(XT, CL, BN);
	static_assert(!SPLIT || !PASS, "slices of K: statistics summed, or x~'s");
	static_assert(!DSUM || (XT && CL == 1 && !SPLIT), "slices in a cluster: over x~ only");
	static_assert(!DSUM || BM * BN * 4 <= WS_ST * STAGE, "a block's sums fit its ring");
	extern __shared__ __align__(1024) unsigned char smem_raw[];
	__shared__ __align__(8) uint64_t full[WS_ST], empty[WS_ST];
	// s and b' of a tile, each math warpgroup's own copy (two buffers)
	__shared__ __align__(16) float ep_s[2][2][BN], ep_b[2][2][BN];

	const int tid = threadIdx.x;
	const long tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
	// Work units: tiles, or with CL = 2 pairs of tiles on one W' tile (on
	// one x~ tile: PAIR_A), each over all of K or over each of the slices.
	const long units_m = PAIR_A ? tiles_m : (tiles_m + CL - 1) / CL;
	const long units_n = PAIR_A ? (tiles_n + 1) / 2 : tiles_n, tiles = units_m * units_n;
	constexpr int UBM = PAIR_A ? BM : CL * BM, UBN = PAIR_A ? 2 * BN : BN;
	const long units = SPLIT ? tiles * splits : tiles;
	const int cs = DSUM ? splits : CL;  // blocks a cluster
	const long unit0 = blockIdx.x / cs, nunits = gridDim.x / cs;
	const uint32_t rank = CL == 2 || DSUM ? cluster_rank() : 0;
	const int KT = (K + LNL_KTILE - 1) / LNL_KTILE, kchunk = (KT + splits - 1) / splits;
	const uint32_t sbase = (smem_u32(smem_raw) + 1023) & ~1023u;
	const uint32_t fb = smem_u32(full), eb = smem_u32(empty);
	// This block's tile of unit q, and its k-tiles kb..ke - 1.
	auto tile_of = [&](long q, long *m0, long *n0, int *kb, int *ke) {
		if constexpr (SPLIT) {
			group_tile(q % tiles, units_m, units_n, WS_GROUP / CL, UBM, UBN, m0, n0);
			*kb = (int)(q / tiles) * kchunk;
			*ke = min(KT, *kb + kchunk);
		} else {
			group_tile(q, units_m, units_n, WS_GROUP / CL, UBM, UBN, m0, n0);
			*kb = DSUM ? (int)rank * kchunk : 0;
			*ke = DSUM ? min(KT, *kb + kchunk) : KT;
		}
		if constexpr (PAIR_A)
			*n0 += rank * BN;
		else if constexpr (CL == 2)
			*m0 += rank * BM;
	};

	if (tid == 0) {
		for (int s = 0; s < WS_ST; s++) {
			mbar_init(fb + 8 * s, 1);
			mbar_init(eb + 8 * s, 8 * CL);  // the math warps
		}
		asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
	}
	if constexpr (CL == 2)
		cluster_sync();  // the other block's barriers are ready too
	else
		__syncthreads();

	if (tid < 128) {  // the producer warpgroup
		regs_dec<40>();
		if (tid == 0) {
			int it = 0;

			if constexpr (XT)
				grid_dep_wait();  // x~ written

			for (long q = unit0; q < units; q += nunits) {
				long m0, n0;
				int kb, ke;

				tile_of(q, &m0, &n0, &kb, &ke);
				for (int kt = kb; kt < ke; kt++, it++) {
					const int s = it % WS_ST;
					const uint32_t sa = sbase + s * STAGE;

					// Fresh barriers count as done with
					// the phase before: no wait at first.
					mbar_wait(eb + 8 * s, (it / WS_ST & 1) ^ 1);
					mbar_expect(fb + 8 * s, STAGE);
					if constexpr (PAIR_A) {  // half of x~'s box each
						tma_load_mc(sa + rank * (BM / 2) * 128, tx,
							    kt * LNL_KTILE,
							    (int)(m0 + rank * (BM / 2)),
							    fb + 8 * s, 3);
						tma_load(sa + A_BYTES, tw, kt * LNL_KTILE,
							 (int)n0, fb + 8 * s);
						continue;
					}
					tma_load(sa, tx, kt * LNL_KTILE, (int)m0, fb + 8 * s);
					if constexpr (CL == 2)
						tma_load_mc(sa + A_BYTES + rank * (BN / 2) * 128,
							    tw, kt * LNL_KTILE,
							    (int)(n0 + rank * (BN / 2)),
							    fb + 8 * s, 3);
					else
						tma_load(sa + A_BYTES, tw, kt * LNL_KTILE,
							 (int)n0, fb + 8 * s);
				}
			}
		}
		if constexpr (CL == 2)
			cluster_sync();
		if constexpr (DSUM) {  // the math warps' two
			cluster_sync();
			cluster_sync();
		}
		return;
	}

	regs_inc<232>();
	if constexpr (XT)
		grid_dep_wait();  // the pass's statistics
	const int lane = tid & 31, cw = (tid >> 5) - 4, g = lane >> 2, t = lane & 3;
	const int row0 = cw * 16;  // warp cw of the math warps: rows row0..+15
	const int mi = tid - 128;  // 0..255 among the math threads
	const int wgi = cw >> 2, li = mi & 127;  // its math warpgroup, thread in it
	const bool vec8 = (N & 7) == 0;  // rows of y 16-byte aligned
	int nt = 0;                // tiles this block has done
	uint32_t a0[LNL_KTILE / 16][4], a1[LNL_KTILE / 16][4], piv[2];
	float s1[2], s2[2], acc[BN / 2];
	int it = 0, kb = 0, ke = KT;

	auto release = [&](int i) {
		if (lane == 0) {
			mbar_arrive(eb + 8 * (i % WS_ST));
			if constexpr (CL == 2)
				mbar_arrive_remote(eb + 8 * (i % WS_ST), rank ^ 1);
		}
	};

	// One k-tile: wait for it, shift and sum this warp's A fragments,
	// queue the four wgmmas, wait for the previous k-tile's (whose A
	// registers the next call rewrites) and free its stage.
	auto step = [&](int kt, uint32_t (&a)[LNL_KTILE / 16][4]) {
		const int s = it % WS_ST;
		const uint32_t sa = sbase + s * STAGE, sb = sa + A_BYTES;
		const int kleft = K - kt * LNL_KTILE;

		mbar_wait(fb + 8 * s, it / WS_ST & 1);
		if constexpr (XT) {
			// its warpgroup's 64 rows of x~; the previous
			// k-tile's wgmmas done (their stage free) on return
			wg_ktile_ss<BN, 1>(sa + wgi * 64 * 128, sb, acc);
		} else {
			if (!PASS && !SPLIT && kt == 0)
				wg_pivots_smem(sa, row0 + g, piv);
			wg_ktile<!PASS, BN>(sa, sb, row0, lane, kleft, piv, a, s1, s2, acc);
		}
		if (kt > kb)
			release(it - 1);
		it++;
	};

	for (long q = unit0; q < units; q += nunits) {
		long m0, n0;

		float mt[2], rs[2];

		tile_of(q, &m0, &n0, &kb, &ke);
		// The tile's s and b', two columns a math thread of each
		// warpgroup: loaded now, kept in registers through the k loop,
		// shared in the warpgroup for the epilogue.
		float my_s[2], my_b[2];

#pragma unroll
		for (int c = 0; c < 2; c++) {
			const long mc = n0 + li + 128 * c;
			const bool mine = li + 128 * c < BN && mc < N;

			my_s[c] = mine ? sW[mc] : 0.f;
			my_b[c] = mine ? bf[mc] : 0.f;
		}
		const int buf = nt++ & 1;

		if constexpr (PASS) {
#pragma unroll
			for (int h = 0; h < 2; h++) {
				const long r = m0 + row0 + g + 8 * h;
				const float hi = r < M ? stats[r] : 0.f;
				const __nv_bfloat16 c = __float2bfloat16_rn(hi);
				const __nv_bfloat162 cc = __halves2bfloat162(c, c);

				piv[h] = *(const uint32_t *)&cc;
				// hi - c is exact: c is hi rounded.
				mt[h] = r < M ? hi - __bfloat162float(c) + stats[M + r] : 0.f;
				rs[h] = r < M ? stats[2 * M + r] : 0.f;
			}
		} else if constexpr (XT) {
			if constexpr (!SPLIT) {  // (slices: the reduction reads them)
#pragma unroll
				for (int h = 0; h < 2; h++) {
					const long r = m0 + row0 + g + 8 * h;

					mt[h] = r < M ? stats[r] : 0.f;
					rs[h] = r < M ? stats[M + r] : 0.f;
				}
			}
		} else {
			s1[0] = s1[1] = s2[0] = s2[1] = 0.f;  // pivots: step(0)
			if constexpr (SPLIT)  // a slice's: from x
				wg_pivots(x, m0 + row0 + g, M, K, piv);
		}
		wg_kloop<BN / 2>(kb, 1, ke, step, a0, a1, acc);
		release(it - 1);
		if constexpr (DSUM) {
			float4 *const red = (float4 *)(smem_raw + (sbase - smem_u32(smem_raw)));
			cg::cluster_group cl = cg::this_cluster();

			bar_sync(1, 256);  // both warpgroups' wgmmas done: the ring is free
#pragma unroll
			for (int i = 0; i < BN / 8; i++)
				red[i * 256 + mi] = make_float4(acc[4 * i], acc[4 * i + 1],
								acc[4 * i + 2], acc[4 * i + 3]);
			cluster_sync();
			// rank 0's sums, then rank 1's added, ...: a rank's
			// loads in flight at once, up to 64 registers' worth
			constexpr int CH = BN / 8 < 16 ? BN / 8 : 16;
#pragma unroll
			for (int c = 0; c < BN / 8; c += CH)
			for (int q = 0; cw % splits == (int)rank && q < splits; q++) {
				const float4 *rq = cl.map_shared_rank(red, q) + mi;

#pragma unroll
				for (int i = c; i < c + CH; i++) {
					const float4 v = rq[i * 256];

					acc[4 * i] = q ? acc[4 * i] + v.x : v.x;
					acc[4 * i + 1] = q ? acc[4 * i + 1] + v.y : v.y;
					acc[4 * i + 2] = q ? acc[4 * i + 2] + v.z : v.z;
					acc[4 * i + 3] = q ? acc[4 * i + 3] + v.w : v.w;
				}
			}
			cluster_sync();
		}
		if constexpr (SPLIT) {
			ws_part_store<BN, !XT>(part, acc, s1, s2, q / tiles, splits, m0 + row0 + g,
					       n0, M, N, t, vec8);
			continue;
		}
		if constexpr (MODE == WS_SUMS) {
#pragma unroll
			for (int h = 0; h < 2; h++)
				quad_stats(s1[h], s2[h], K, &mt[h], &rs[h]);
		}

		// Each warpgroup its own s and b' and its own barrier, so
		// that neither waits for the other between tiles (one's
		// epilogue may overlap the other's wgmmas). Two buffers: a
		// warp writes this tile's while another of its warpgroup may
		// still read the last one's; the one before that is free,
		// since all its warps passed the barrier below since.
		if constexpr (!SPLIT) {
#pragma unroll
			for (int c = 0; c < 2; c++)
				if (li + 128 * c < BN) {
					ep_s[wgi][buf][li + 128 * c] = my_s[c];
					ep_b[wgi][buf][li + 128 * c] = my_b[c];
				}
		}
		if (wgi)
			bar_sync(3, 128);
		else
			bar_sync(2, 128);
		if (DSUM && cw % splits != (int)rank)
			continue;  // another rank stores these rows

		// Epilogue, from the accumulators: y = rstd * (acc - (mean -
		// c) * s) + b'. acc[4j + 2h + e] is row row0 + g + 8h, tile
		// position 8j + 2t + e, which W' (perm32's order) made column
		// 32b + 8t + 2u + e for j = 4b + u: a thread holds 8 adjacent
		// columns of each group of 32 and stores them as 16 bytes.
		// Whole tiles (the common case) store unchecked.
		const long r0 = m0 + row0 + g;
		__nv_bfloat16 *yr = y + r0 * N + n0 + 8 * t;
		// With N a multiple of 8 a thread's 8 columns lie wholly in y or
		// wholly past N, so a tile that crosses M or N stores the same
		// way, each 16 bytes checked (CHECK); the scalar stores below,
		// which had served those tiles, took 22 of the 59 us at 2000 x
		// 1000 -> 3000 (bench/RESULTS.md, "the warp-specialized
		// kernel's epilogue").
		auto store16 = [&](auto check) {
			constexpr bool CHECK = decltype(check)::value;

#pragma unroll
			for (int b = 0; b < BN / 32; b++) {
				const float4 *sp = (const float4 *)&ep_s[wgi][buf][32 * b + 8 * t];
				const float4 *bp = (const float4 *)&ep_b[wgi][buf][32 * b + 8 * t];
				const float4 s0 = sp[0], s1 = sp[1], b0 = bp[0], b1 = bp[1];
				const float sc[8] = { s0.x, s0.y, s0.z, s0.w, s1.x, s1.y, s1.z, s1.w };
				const float bc[8] = { b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w };
				const bool in_n = !CHECK || n0 + 32 * b + 8 * t < N;

#pragma unroll
				for (int h = 0; h < 2; h++) {
					uint32_t v[4];

#pragma unroll
					for (int u = 0; u < 4; u++) {
						const float *a = &acc[4 * (4 * b + u) + 2 * h];
						__nv_bfloat162 pr = __floats2bfloat162_rn(
							rs[h] * (a[0] - mt[h] * sc[2 * u]) + bc[2 * u],
							rs[h] * (a[1] - mt[h] * sc[2 * u + 1]) + bc[2 * u + 1]);

						v[u] = *(const uint32_t *)&pr;
					}
					// streaming: y is written once
					// (0.9-3.7 % faster than plain stores)
					if (!CHECK || (in_n && r0 + 8 * h < M))
						__stcs((uint4 *)(yr + 8L * h * N + 32 * b),
						       make_uint4(v[0], v[1], v[2], v[3]));
				}
			}
		};

		if (vec8) {
			if (m0 + BM <= M && n0 + BN <= N)
				store16(std::false_type());
			else
				store16(std::true_type());
			continue;
		}
#pragma unroll
		for (int j = 0; j < BN / 8; j++) {
			const int cl = 32 * (j / 4) + 8 * t + 2 * (j % 4);  // in the tile
			const float2 sc = *(const float2 *)&ep_s[wgi][buf][cl];
			const float2 bc = *(const float2 *)&ep_b[wgi][buf][cl];

#pragma unroll
			for (int h = 0; h < 2; h++) {
				const float v0 = rs[h] * (acc[4 * j + 2 * h] - mt[h] * sc.x) + bc.x;
				const float v1 = rs[h] * (acc[4 * j + 2 * h + 1] - mt[h] * sc.y) + bc.y;
				__nv_bfloat16 *p = y + (r0 + 8 * h) * N + n0 + cl;

				if (r0 + 8 * h >= M || n0 + cl >= N)
					continue;
				p[0] = __float2bfloat16_rn(v0);
				if (n0 + cl + 1 < N)
					p[1] = __float2bfloat16_rn(v1);
			}
		}
	}
	if constexpr (CL == 2)
		cluster_sync();  // the other block may still arrive on ours
}


#endif  // the architecture guard

// 1 where this build has the Hopper kernels for the device it runs on.
__global__ void k_wgmma_probe(int *out)
{
	*out = SM90A_CODE;
}

__global__ void __launch_bounds__(WG_THREADS, 1)
k_fwd_fused_wgmma(const __nv_bfloat16 *__restrict__ x,
		  const __nv_bfloat16 *__restrict__ Wf, const float *__restrict__ sW,
		  const float *__restrict__ bf, __nv_bfloat16 *__restrict__ y,
		  long M, int K, int N)
{
	SM90A_ONLY(wgmma_body(x, Wf, sW, bf, y, M, K, N));
}

template <int MODE, int CL, int BN, bool SPLIT = false, bool DSUM = false>
__global__ void __launch_bounds__(WS_THREADS, 1)
k_fwd_fused_ws(const __grid_constant__ CUtensorMap tx,
	       const __grid_constant__ CUtensorMap tw, const float *__restrict__ stats,
	       const float *__restrict__ sW, const float *__restrict__ bf,
	       __nv_bfloat16 *__restrict__ y, long M, int K, int N,
	       const __nv_bfloat16 *__restrict__ x, float *__restrict__ part, int splits)
{
	SM90A_ONLY((ws_body<MODE, CL, BN, SPLIT, DSUM>(&tx, &tw, stats, sW, bf, y, M, K, N, x,
							part, splits)));
}

// Its dynamic shared memory, once a process, for each of its forms (the
// 64-column tiles over x~ only: on x they took 0.97-2.56x the best
// unfused time at 42 shapes of 128 to 1024 rows with few tiles, on an
// H200, bench/RESULTS.md, "The warp-specialized kernel over x~").
template <int MODE, int CL, int BN, bool SPLIT = false, bool DSUM = false>
static int ws_smem(void)
{
	return CUDA_CHECK(cudaFuncSetAttribute(k_fwd_fused_ws<MODE, CL, BN, SPLIT, DSUM>,
					       cudaFuncAttributeMaxDynamicSharedMemorySize,
					       WS_SMEM(MODE, BN)));
}

template <int BN>
static int ws_setup(void)
{
	if (ws_smem<WS_XT, 1, BN>() || ws_smem<WS_XT, 2, BN>() || ws_smem<WS_XT, 1, BN, true>() ||
	    ws_smem<WS_XT, 1, BN, false, true>())
		return -1;
	if constexpr (BN != 64)
		return ws_smem<WS_SUMS, 1, BN>() || ws_smem<WS_PASS, 1, BN>() ||
				       ws_smem<WS_SUMS, 2, BN>() || ws_smem<WS_PASS, 2, BN>() ||
				       ws_smem<WS_SUMS, 1, BN, true>()
			       ? -1 : 0;
	return 0;
}

// ---------------------------------------------------------------------------
// Launchers

int fwd_wgmma_setup(int *have)
{
	static int done, built;
	int *d = NULL;

	if (!done) {
		if (CUDA_CHECK(cudaFuncSetAttribute(k_fwd_fused_wgmma,
				cudaFuncAttributeMaxDynamicSharedMemorySize, WG_SMEM)) ||
		    ws_setup<256>() || ws_setup<192>() || ws_setup<128>() || ws_setup<64>() ||
		    CUDA_CHECK(cudaMalloc((void **)&d, sizeof *d)))
			return -1;
		k_wgmma_probe<<<1, 1>>>(d);
		if (CUDA_CHECK_LAUNCH("k_wgmma_probe") ||
		    CUDA_CHECK(cudaMemcpy(&built, d, sizeof built, cudaMemcpyDeviceToHost))) {
			cudaFree(d);
			return -1;
		}
		cudaFree(d);
		done = 1;
	}
	*have = built;
	return 0;
}

int fwd_wgmma_launch(const struct lnl_op *op, const void *x, cudaStream_t st)
{
	const long tiles = ((op->M + 127) / 128) * ((op->N + 255) / 256);

	k_fwd_fused_wgmma<<<(unsigned)tiles, WG_THREADS, WG_SMEM, st>>>(
		(const __nv_bfloat16 *)x, (const __nv_bfloat16 *)op->Wf, op->sW, op->bf,
		(__nv_bfloat16 *)op->y, op->M, (int)op->K, (int)op->N);
	return CUDA_CHECK_LAUNCH("k_fwd_fused_wgmma");
}

int lnl_tma_map(CUtensorMap *m, const void *p, long cols, long ld, long rows, int box_rows)
{
	static PFN_cuTensorMapEncodeTiled_v12000 encode;
	cuuint64_t dim[2] = { (cuuint64_t)cols, (cuuint64_t)rows };
	cuuint64_t stride[1] = { (cuuint64_t)ld * 2 };
	cuuint32_t box[2] = { LNL_KTILE, (cuuint32_t)box_rows }, step[2] = { 1, 1 };
	CUresult r;

	if (!encode) {
		cudaDriverEntryPointQueryResult q;

		if (CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled",
				(void **)&encode, 12000, cudaEnableDefault, &q)))
			return -1;
		if (q != cudaDriverEntryPointSuccess || !encode)
			return error("the CUDA driver has no cuTensorMapEncodeTiled");
	}
	r = encode(m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, (void *)p, dim, stride, box,
		   step, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
		   CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	return r == CUDA_SUCCESS ? 0 : error("cuTensorMapEncodeTiled failed (error %d)", (int)r);
}

// One launch of k_fwd_fused_ws<MODE, CL, BN, SPLIT, DSUM> on grid blocks,
// in clusters of CL (DSUM: of op->splits; WS_XT: programmatically, behind
// the x~ pass).
template <int MODE, int CL, int BN, bool SPLIT = false, bool DSUM = false>
static int ws_run(const struct lnl_op *op, const void *x, const CUtensorMap &tx,
		  const CUtensorMap &tw, unsigned grid, cudaStream_t st)
{
	cudaLaunchConfig_t cfg;
	cudaLaunchAttribute at[2];

	cluster_config(&cfg, &at[0], DSUM ? (unsigned)op->splits : CL, grid, WS_THREADS,
		       WS_SMEM(MODE, BN), st);
	if (MODE == WS_XT)
		config_programmatic(&cfg);
	return CUDA_CHECK(cudaLaunchKernelEx(&cfg, k_fwd_fused_ws<MODE, CL, BN, SPLIT, DSUM>, tx, tw,
					     (const float *)(MODE != WS_SUMS ? op->stats : NULL),
					     (const float *)op->sW, (const float *)op->bf,
					     (__nv_bfloat16 *)op->y, op->M, (int)op->K,
					     (int)op->N, (const __nv_bfloat16 *)x,
					     SPLIT ? op->fpart : (float *)NULL,
					     SPLIT || DSUM ? op->splits : 1));
}

template <int BN>
static int ws_run_bn(const struct lnl_op *op, const void *x, const CUtensorMap &tx,
		     const CUtensorMap &tw, unsigned grid, cudaStream_t st)
{
	if (op->ws_xt && op->splits > 1)
		return op->ws_dsum ? ws_run<WS_XT, 1, BN, false, true>(op, x, tx, tw, grid, st)
				   : ws_run<WS_XT, 1, BN, true>(op, x, tx, tw, grid, st);
	if (op->ws_xt)
		return op->ws_cl == 2 ? ws_run<WS_XT, 2, BN>(op, x, tx, tw, grid, st)
				      : ws_run<WS_XT, 1, BN>(op, x, tx, tw, grid, st);
	if constexpr (BN == 64)
		return error("ln_linear_fwd: the warp-specialized kernel has 64-column tiles "
			     "over x~ only");
	else {
		if (op->splits > 1)
			return ws_run<WS_SUMS, 1, BN, true>(op, x, tx, tw, grid, st);
		if (op->ws_pass)
			return op->ws_cl == 2 ? ws_run<WS_PASS, 2, BN>(op, x, tx, tw, grid, st)
					      : ws_run<WS_PASS, 1, BN>(op, x, tx, tw, grid, st);
		return op->ws_cl == 2 ? ws_run<WS_SUMS, 2, BN>(op, x, tx, tw, grid, st)
				      : ws_run<WS_SUMS, 1, BN>(op, x, tx, tw, grid, st);
	}
}

// The warp-specialized kernel: a persistent grid, one block per SM (as many
// two-block clusters as fit at once with ws_cl = 2), at most one a unit (a
// tile, or a pair of tiles, of 128 x ws_bn, over all of K or one of
// op->splits slices); with ws_pass, the rows' statistics pass first; with
// ws_xt, the x~ pass first (x~ in op->h); over slices, the reduction
// after, or with ws_dsum none: a cluster of op->splits blocks a tile,
// every tile's cluster launched.
int fwd_ws_launch(const struct lnl_op *op, const void *xv, cudaStream_t st)
{
	const __nv_bfloat16 *x = (const __nv_bfloat16 *)xv;
	const int K = (int)op->K, cl = op->ws_cl, bn = op->ws_bn, splits = op->splits;
	// pairs over x~ at up to 128 columns share x~'s tile (PAIR_A)
	const int pair_a = LNL_WS_PAIR_X(op->ws_xt, cl, bn);
	const long units = (pair_a ? (op->M + 127) / 128 * (((op->Np + bn - 1) / bn + 1) / 2)
				   : lnl_ws_units(op->M, op->Np, cl, bn)) * splits;
	const long most = op->ws_dsum ? units : cl == 2 ? op->ws_pairs : op->sms;
	const unsigned grid = (unsigned)(cl * (units < most ? units : most));
	const int KT = lnl_ktiles(K, FP_BF16);
	CUtensorMap tx, tw;
	int r;

	if (bn != 256 && bn != 192 && bn != 128 && (bn != 64 || !op->ws_xt))
		return error("ln_linear_fwd: no warp-specialized kernel with %d-column tiles%s",
			     bn, op->ws_xt ? " over x~" : "");
	if (splits < 1 || (splits > 1 && ((!op->fpart && !op->ws_dsum) || op->ws_pass || cl != 1)) ||
	    (op->ws_dsum && (!op->ws_xt || splits > LNL_SKINNY_MAX_SPLITS)) ||
	    lnl_even_slices(KT, splits) != splits)
		return error("ln_linear_fwd: the warp-specialized kernel cannot take %d slices "
			     "of %d k-tiles%s", splits, KT,
			     splits > 1 && op->ws_pass ? " with a statistics pass"
			     : splits > 1 && cl != 1 ? " in clusters" : "");
	if (op->ws_xt && (op->ws_pass || !op->h || !op->stats ||
			  !lnl_fwd_xt_possible(op->M, op->K, op->dt)))
		return error("ln_linear_fwd: no warp-specialized kernel over x~ for %ld x %ld",
			     op->M, op->K);
	if (op->ws_xt ? lnl_tma_map(&tx, op->h, K, lnl_row_ld(K, FP_BF16), lnl_xt_rows(op->M),
				    pair_a ? 64 : 128)
		      : lnl_tma_map(&tx, x, K, K, op->M, 128))
		return -1;
	if (lnl_tma_map(&tw, op->Wf, K, op->ldw, op->Np, pair_a ? bn : bn / cl))
		return -1;
	if (op->ws_pass && layernorm_stats(FP_BF16, x, op->stats, op->M, K, st))
		return -1;
	if (op->ws_xt && fwd_xt_pass_launch(op, x, st))
		return -1;
	r = bn == 192 ? ws_run_bn<192>(op, x, tx, tw, grid, st)
	    : bn == 128 ? ws_run_bn<128>(op, x, tx, tw, grid, st)
	    : bn == 64  ? ws_run_bn<64>(op, x, tx, tw, grid, st)
			: ws_run_bn<256>(op, x, tx, tw, grid, st);
	// slices over x~ leave no sums: the reduction takes the pass's statistics
	return r || splits < 2 || op->ws_dsum
		       ? r : fwd_split_reduce_launch(op, splits, op->ws_xt ? op->stats : NULL, st);
}

int fwd_ws_dsum_caps(const int **caps)
{
	// the 256-column form's shared memory speaks for all (one block an SM)
	static int have[LNL_SKINNY_MAX_SPLITS + 1], done;

	if (!done) {
		for (int c = 1; c <= LNL_SKINNY_MAX_SPLITS; c++) {
			cudaLaunchConfig_t cfg;
			cudaLaunchAttribute at;

			cluster_config(&cfg, &at, (unsigned)c, (unsigned)c, WS_THREADS,
				       WS_SMEM(WS_XT, 256), 0);
			if (CUDA_CHECK(cudaOccupancyMaxActiveClusters(
					&have[c], k_fwd_fused_ws<WS_XT, 1, 256, false, true>, &cfg)))
				return -1;
		}
		done = 1;
	}
	*caps = have;
	return 0;
}

// (Measured with the 256-column form, which has the most shared memory:
// the 192-column one fits wherever it does.)
int ws_pairs_resident(int sms, int *n)
{
	cudaLaunchConfig_t cfg;
	cudaLaunchAttribute at;

	*n = 0;
	cluster_config(&cfg, &at, 2, 2u * (unsigned)sms, WS_THREADS, WS_SMEM(WS_SUMS, 256), 0);
	return CUDA_CHECK(cudaOccupancyMaxActiveClusters(n, k_fwd_fused_ws<WS_SUMS, 2, 256>, &cfg));
}
