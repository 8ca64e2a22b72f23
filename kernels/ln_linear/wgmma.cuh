// wgmma.cuh - the wgmma primitives of the Hopper forward kernels
// (fwd_wgmma.cu, fwd_skinny_wg.cu, fwd_skinny_xt.cu; all built for sm_90a,
// local.mk): descriptors, the wgmma forms they issue, the fences and waits
// around them, the math warps' k-tile of x as A (shifted and summed in
// registers) that the warp-specialized kernel and the x-as-A skinny kernel
// share, and the staging of s and b' and the epilogue that the x-as-A and
// x~ skinny kernels share.
//
// The architecture guard: a device pass for any target but sm_90a
// compiles none of the Hopper code (SM90A_CODE 0), and its kernels trap
// (SM90A_ONLY: they are never launched there: fwd_wgmma_setup's probe says
// 0 and lnl_fwd_choose picks the mma.sync kernels). The host pass sees
// everything.
#ifndef FUSEPROF_LNL_WGMMA_CUH
#define FUSEPROF_LNL_WGMMA_CUH

#include <cuda_bf16.h>

#include <type_traits>

#include "internal.h"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define SM90A_CODE 0
#define SM90A_ONLY(call) __trap()
#else
#define SM90A_CODE 1
#define SM90A_ONLY(call) call
#endif

#if SM90A_CODE
// wgmma's descriptor of a K-major tile with 128-byte swizzle: start
// address, stride of 1024 bytes between 8-row atoms, swizzle mode 1 (the
// leading offset is unused for this layout).
__device__ __forceinline__ uint64_t wg_desc(uint32_t addr)
{
	return (uint64_t)((addr & 0x3ffff) >> 4) | (uint64_t)(1024 >> 4) << 32 |
	       (uint64_t)1 << 62;
}

__device__ __forceinline__ void wg_fence_operand(float &r)
{
	asm volatile("" : "+f"(r) :: "memory");
}

// The inline asm of the wgmmas below: WG_ACC<n>(d, i), the n accumulators
// d[i] .. d[i + n - 1] as read-write operands; WG_R<n>_<j>, the operand
// numbers of the j-th n of them in the instruction ("%<jn>, ..").
#define WG_R4_0 "%0, %1, %2, %3"
#define WG_R4_1 "%4, %5, %6, %7"
#define WG_R4_2 "%8, %9, %10, %11"
#define WG_R4_3 "%12, %13, %14, %15"
#define WG_R4_4 "%16, %17, %18, %19"
#define WG_R4_5 "%20, %21, %22, %23"
#define WG_R4_6 "%24, %25, %26, %27"
#define WG_R4_7 "%28, %29, %30, %31"
#define WG_R4_8 "%32, %33, %34, %35"
#define WG_R4_9 "%36, %37, %38, %39"
#define WG_R4_10 "%40, %41, %42, %43"
#define WG_R4_11 "%44, %45, %46, %47"
#define WG_R4_12 "%48, %49, %50, %51"
#define WG_R4_13 "%52, %53, %54, %55"
#define WG_R4_14 "%56, %57, %58, %59"
#define WG_R4_15 "%60, %61, %62, %63"
#define WG_R4_16 "%64, %65, %66, %67"
#define WG_R4_17 "%68, %69, %70, %71"
#define WG_R4_18 "%72, %73, %74, %75"
#define WG_R4_19 "%76, %77, %78, %79"
#define WG_R4_20 "%80, %81, %82, %83"
#define WG_R4_21 "%84, %85, %86, %87"
#define WG_R4_22 "%88, %89, %90, %91"
#define WG_R4_23 "%92, %93, %94, %95"
#define WG_R4_24 "%96, %97, %98, %99"
#define WG_R4_25 "%100, %101, %102, %103"
#define WG_R4_26 "%104, %105, %106, %107"
#define WG_R4_27 "%108, %109, %110, %111"
#define WG_R4_28 "%112, %113, %114, %115"
#define WG_R4_29 "%116, %117, %118, %119"
#define WG_R4_30 "%120, %121, %122, %123"
#define WG_R4_31 "%124, %125, %126, %127"
#define WG_R8_0 WG_R4_0 ", " WG_R4_1
#define WG_R8_1 WG_R4_2 ", " WG_R4_3
#define WG_R8_2 WG_R4_4 ", " WG_R4_5
#define WG_R8_3 WG_R4_6 ", " WG_R4_7
#define WG_R8_4 WG_R4_8 ", " WG_R4_9
#define WG_R8_5 WG_R4_10 ", " WG_R4_11
#define WG_R8_6 WG_R4_12 ", " WG_R4_13
#define WG_R8_7 WG_R4_14 ", " WG_R4_15
#define WG_R8_8 WG_R4_16 ", " WG_R4_17
#define WG_R8_9 WG_R4_18 ", " WG_R4_19
#define WG_R8_10 WG_R4_20 ", " WG_R4_21
#define WG_R8_11 WG_R4_22 ", " WG_R4_23
#define WG_R8_12 WG_R4_24 ", " WG_R4_25
#define WG_R8_13 WG_R4_26 ", " WG_R4_27
#define WG_R8_14 WG_R4_28 ", " WG_R4_29
#define WG_R8_15 WG_R4_30 ", " WG_R4_31
#define WG_R16_0 WG_R8_0 ", " WG_R8_1
#define WG_R16_1 WG_R8_2 ", " WG_R8_3
#define WG_R16_2 WG_R8_4 ", " WG_R8_5
#define WG_R16_3 WG_R8_6 ", " WG_R8_7
#define WG_R16_4 WG_R8_8 ", " WG_R8_9
#define WG_R16_5 WG_R8_10 ", " WG_R8_11
#define WG_R16_6 WG_R8_12 ", " WG_R8_13
#define WG_R16_7 WG_R8_14 ", " WG_R8_15
#define WG_R32_0 WG_R16_0 ", " WG_R16_1
#define WG_R32_1 WG_R16_2 ", " WG_R16_3
#define WG_R32_2 WG_R16_4 ", " WG_R16_5
#define WG_R32_3 WG_R16_6 ", " WG_R16_7
#define WG_R64_0 WG_R32_0 ", " WG_R32_1
#define WG_R64_1 WG_R32_2 ", " WG_R32_3
#define WG_ACC4(d, i) "+f"(d[i]), "+f"(d[(i) + 1]), "+f"(d[(i) + 2]), "+f"(d[(i) + 3])
#define WG_ACC8(d, i) WG_ACC4(d, i), WG_ACC4(d, (i) + 4)
#define WG_ACC16(d, i) WG_ACC8(d, i), WG_ACC8(d, (i) + 8)
#define WG_ACC32(d, i) WG_ACC16(d, i), WG_ACC16(d, (i) + 16)
#define WG_ACC64(d, i) WG_ACC32(d, i), WG_ACC32(d, (i) + 32)

// The wgmma forms: wgmma_m64n<N>k16 (WG_MMA_RS: A from registers, 4 a
// thread in mma.sync's m16n8k16 layout) and wgmma_m64n<N>k16_ss (WG_MMA_SS:
// A from shared memory through its descriptor da), B from shared memory
// through its descriptor, d += a b into this warpgroup's 64 x N fp32
// accumulators (N / 2 a thread). REGS: the accumulators' operand numbers,
// AB and P those of A and B and of the scale-d predicate's operand (1:
// add to d), then the accumulators themselves (WG_ACC<n>).
#define WG_MMA_RS(N, REGS, AB, P, ...) \
	__device__ __forceinline__ void wgmma_m64n##N##k16(float *d, const uint32_t *a, \
							   uint64_t desc) \
	{ \
		asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " P ", 0;\n" \
			     "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.bf16.bf16 {" REGS \
			     "}, " AB ", p, 1, 1, 0;\n}\n" \
			     : __VA_ARGS__ \
			     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1)); \
	}
#define WG_MMA_SS(N, REGS, AB, P, ...) \
	__device__ __forceinline__ void wgmma_m64n##N##k16_ss(float *d, uint64_t da, uint64_t db) \
	{ \
		asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " P ", 0;\n" \
			     "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.bf16.bf16 {" REGS \
			     "}, " AB ", p, 1, 1, 0, 0;\n}\n" \
			     : __VA_ARGS__ \
			     : "l"(da), "l"(db), "r"(1)); \
	}

// d (this warpgroup's 64 x 256, 128 floats a thread) += a (64 x 16, 4
// registers a thread) b (16 x 256 from the descriptor).
WG_MMA_RS(256, WG_R64_0 ", " WG_R64_1, "{%128, %129, %130, %131}, %132", "%133",
	  WG_ACC64(d, 0), WG_ACC64(d, 64))

__device__ __forceinline__ void wg_arrive(void)
{
	asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void wg_commit(void)
{
	asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

template <int N>
__device__ __forceinline__ void wg_wait(void)
{
	asm volatile("wgmma.wait_group.sync.aligned %0;\n" :: "n"(N) : "memory");
}

// cp.async wrote through the generic proxy; wgmma reads through the async
// one.
__device__ __forceinline__ void fence_proxy_async(void)
{
	asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// d (this warpgroup's 64 x N, N / 2 floats a thread) += a (64 x 16, this
// thread's fragment in registers, mma.sync's m16n8k16 layout) b (16 x N,
// shared memory through its descriptor): N = 72 and 96, the x-as-A
// skinny kernel's tiles of W', and 128 and 192, the warp-specialized
// kernel's narrower tiles.
WG_MMA_RS(72, WG_R32_0 ", " WG_R4_8, "{%36, %37, %38, %39}, %40", "%41",
	  WG_ACC32(d, 0), WG_ACC4(d, 32))
WG_MMA_RS(96, WG_R32_0 ", " WG_R16_2, "{%48, %49, %50, %51}, %52", "%53",
	  WG_ACC32(d, 0), WG_ACC16(d, 32))
WG_MMA_RS(128, WG_R64_0, "{%64, %65, %66, %67}, %68", "%69", WG_ACC64(d, 0))
WG_MMA_RS(192, WG_R64_0 ", " WG_R32_2, "{%96, %97, %98, %99}, %100", "%101",
	  WG_ACC64(d, 0), WG_ACC32(d, 64))

// The same for the x-as-A skinny kernel's narrow tiles of W' (N = 16, 32,
// 48, 64: N / 2 floats a thread).
WG_MMA_RS(16, WG_R8_0, "{%8, %9, %10, %11}, %12", "%13", WG_ACC8(d, 0))
WG_MMA_RS(32, WG_R16_0, "{%16, %17, %18, %19}, %20", "%21", WG_ACC16(d, 0))
WG_MMA_RS(48, WG_R16_0 ", " WG_R8_2, "{%24, %25, %26, %27}, %28", "%29",
	  WG_ACC16(d, 0), WG_ACC8(d, 16))
WG_MMA_RS(64, WG_R32_0, "{%32, %33, %34, %35}, %36", "%37", WG_ACC32(d, 0))

// d (this warpgroup's 64 x N, N / 2 floats a thread) += a (64 x 16) b
// (16 x N), both from shared memory through their descriptors: N = 32 and
// 64.
WG_MMA_SS(32, WG_R16_0, "%16, %17", "%18", WG_ACC16(d, 0))
WG_MMA_SS(64, WG_R32_0, "%32, %33", "%34", WG_ACC32(d, 0))

// The same for the x~ kernel's other tiles of W' (fwd_skinny_xt.cu: 40 to
// 96 columns, a multiple of 8).
WG_MMA_SS(40, WG_R16_0 ", " WG_R4_4, "%20, %21", "%22", WG_ACC16(d, 0), WG_ACC4(d, 16))
WG_MMA_SS(48, WG_R16_0 ", " WG_R8_2, "%24, %25", "%26", WG_ACC16(d, 0), WG_ACC8(d, 16))
WG_MMA_SS(56, WG_R16_0 ", " WG_R8_2 ", " WG_R4_6, "%28, %29", "%30",
	  WG_ACC16(d, 0), WG_ACC8(d, 16), WG_ACC4(d, 24))
WG_MMA_SS(72, WG_R32_0 ", " WG_R4_8, "%36, %37", "%38", WG_ACC32(d, 0), WG_ACC4(d, 32))
WG_MMA_SS(80, WG_R32_0 ", " WG_R8_4, "%40, %41", "%42", WG_ACC32(d, 0), WG_ACC8(d, 32))
WG_MMA_SS(88, WG_R32_0 ", " WG_R8_4 ", " WG_R4_10, "%44, %45", "%46",
	  WG_ACC32(d, 0), WG_ACC8(d, 32), WG_ACC4(d, 40))
WG_MMA_SS(96, WG_R32_0 ", " WG_R16_2, "%48, %49", "%50", WG_ACC32(d, 0), WG_ACC16(d, 32))

// The same for the warp-specialized kernel's tiles over x~ (fwd_wgmma.cu,
// WS_XT: 128, 192 and 256 columns; 64 is above).
WG_MMA_SS(128, WG_R64_0, "%64, %65", "%66", WG_ACC64(d, 0))
WG_MMA_SS(192, WG_R64_0 ", " WG_R32_2, "%96, %97", "%98", WG_ACC64(d, 0), WG_ACC32(d, 64))
WG_MMA_SS(256, WG_R64_0 ", " WG_R64_1, "%128, %129", "%130", WG_ACC64(d, 0), WG_ACC64(d, 64))

// d += a b, m64nNk16, both operands from shared memory (N a multiple of 8
// from 32 to 96: the skinny kernels' x rows, or the x~ kernel's tile of
// W', as the wgmma's N; 128, 192 and 256: the warp-specialized kernel's
// tiles over x~).
template <int N>
__device__ __forceinline__ void wgmma_ss(float *d, uint64_t da, uint64_t db)
{
	static_assert((N % 8 == 0 && N >= 32 && N <= 96) || N == 128 || N == 192 || N == 256,
		      "a wgmma we have");
	if constexpr (N == 32)
		wgmma_m64n32k16_ss(d, da, db);
	else if constexpr (N == 40)
		wgmma_m64n40k16_ss(d, da, db);
	else if constexpr (N == 48)
		wgmma_m64n48k16_ss(d, da, db);
	else if constexpr (N == 56)
		wgmma_m64n56k16_ss(d, da, db);
	else if constexpr (N == 64)
		wgmma_m64n64k16_ss(d, da, db);
	else if constexpr (N == 72)
		wgmma_m64n72k16_ss(d, da, db);
	else if constexpr (N == 80)
		wgmma_m64n80k16_ss(d, da, db);
	else if constexpr (N == 88)
		wgmma_m64n88k16_ss(d, da, db);
	else if constexpr (N == 96)
		wgmma_m64n96k16_ss(d, da, db);
	else if constexpr (N == 128)
		wgmma_m64n128k16_ss(d, da, db);
	else if constexpr (N == 192)
		wgmma_m64n192k16_ss(d, da, db);
	else
		wgmma_m64n256k16_ss(d, da, db);
}

// One k-tile of d += a b, both from shared memory (sa, sb: K-major tiles
// of LNL_KTILE columns, 128-byte swizzled), as LNL_KTILE / 16 wgmmas of N
// columns queued in one group; returns once at most PENDING groups are in
// flight (0: this one done; 1: the one before it).
template <int N, int PENDING>
__device__ __forceinline__ void wg_ktile_ss(uint32_t sa, uint32_t sb, float *d)
{
#pragma unroll
	for (int i = 0; i < N / 2; i++)
		wg_fence_operand(d[i]);
	wg_arrive();
#pragma unroll
	for (int ks = 0; ks < LNL_KTILE / 16; ks++)
		wgmma_ss<N>(d, wg_desc(sa + ks * 32), wg_desc(sb + ks * 32));
	wg_commit();
	wg_wait<PENDING>();
#pragma unroll
	for (int i = 0; i < N / 2; i++)
		wg_fence_operand(d[i]);
}

// The x-as-A kernels' s and b' of their tile's rows of W' (BN from n0 on;
// column perm32 of a row where wperm says), staged in shared memory at
// the start, a thread a row (0 past wrows and N): read from global memory
// in the epilogue, each multiply-add of the block's last stores waited on
// a load, 12 % of k_fwd_skinny_xa's warp samples at 64 x 3072 -> 9216.
template <int BN>
__device__ __forceinline__ void xa_stage_fold(float *ep_s, float *ep_b,
					      const float *__restrict__ sW,
					      const float *__restrict__ bf, long n0, int tid,
					      long wrows, int N, int wperm)
{
	if (tid < BN) {
		const long wr = n0 + tid, col = wperm ? perm32(wr) : wr;
		const bool ok = wr < wrows && col < N;

		ep_s[tid] = ok ? sW[col] : 0.f;
		ep_b[tid] = ok ? bf[col] : 0.f;
	}
}

// Their epilogue, a thread's share of the tile: y = rstd (acc - (mean - c)
// s) + b', acc(i) the thread's accumulator i (4 j + 2 h + e: x row row0 +
// g + 8 h, W' row n0 + 8 j + 2 t + e, g and t the lane's quad and place in
// it), mt[h] and rs[h] those rows' mean - c and rstd, s and b' staged
// (xa_stage_fold); rows past M and columns past N not stored. A thread's
// two columns side by side (e = 0, 1) go out as one 4-byte store where y
// keeps them side by side (N even, W' in y's order): stored as two 2-byte
// halves, a warp's store wrote each 32-byte sector in eight pieces, and
// the x~ kernel took 7.3 us at 64 x 2048 -> 5120 where it takes 6.5 with
// the pairs (on an H200 the op took 0.90-1.00x the time at 49 of 50 shapes
// of 17 to 64 rows, the fiftieth within noise: bench/RESULTS.md, "the
// skinny epilogues store column pairs").
template <int BN, typename Acc>
__device__ __forceinline__ void xa_store(__nv_bfloat16 *__restrict__ y, Acc acc, const float *mt,
					 const float *rs, int row0, int lane, long n0, int M,
					 int N, long wrows, int wperm, const float *ep_s,
					 const float *ep_b)
{
	const int g = lane >> 2, t = lane & 3;

#pragma unroll
	for (int j = 0; j < BN / 8; j++) {
		// Two columns side by side in y (N even, W' in y's order): one
		// 4-byte store a row for both.
		const long wr2 = n0 + 8 * j + 2 * t;

		if (!wperm && !(N & 1) && wr2 + 1 < wrows && wr2 + 1 < N) {
			const float s0 = ep_s[wr2 - n0], s1 = ep_s[wr2 + 1 - n0];
			const float b0 = ep_b[wr2 - n0], b1 = ep_b[wr2 + 1 - n0];

#pragma unroll
			for (int h = 0; h < 2; h++) {
				const int m = row0 + g + 8 * h, i = 4 * j + 2 * h;

				if (m < M)
					*(__nv_bfloat162 *)(y + (long)m * N + wr2) = __floats2bfloat162_rn(
						rs[h] * (acc(i) - mt[h] * s0) + b0,
						rs[h] * (acc(i + 1) - mt[h] * s1) + b1);
			}
			continue;
		}
#pragma unroll
		for (int e = 0; e < 2; e++) {
			const long wr = n0 + 8 * j + 2 * t + e;
			const long col = wperm ? perm32(wr) : wr;

			if (wr >= wrows || col >= N)
				continue;
			const float sc = ep_s[wr - n0], bc = ep_b[wr - n0];

#pragma unroll
			for (int h = 0; h < 2; h++) {
				const int m = row0 + g + 8 * h, i = 4 * j + 2 * h + e;

				if (m < M)
					y[(long)m * N + col] = __float2bfloat16_rn(
						rs[h] * (acc(i) - mt[h] * sc) + bc);
			}
		}
	}
}

// One k-tile of a wgmma kernel's math warp: its A fragments (rows row0..
// row0 + 15 of the swizzled x tile at sa) loaded, shifted by the rows'
// pivots and, with SUMS, summed into their statistics (s1, s2: rows
// row0 + g and row0 + g + 8; columns from kleft on are past K), then its
// warpgroup's four wgmmas against the W' tile at sb (BN rows: 256, or 72
// or 96 for the x-as-A skinny kernel) queued. Returns once the previous
// k-tile's wgmmas are done: their A registers and ring stage are free.
template <bool SUMS, int BN = 256>
__device__ __forceinline__ void wg_ktile(uint32_t sa, uint32_t sb, int row0, int lane,
					 int kleft, const uint32_t *piv,
					 uint32_t (&a)[LNL_KTILE / 16][4], float *s1, float *s2,
					 float *acc)
{
	const int t = lane & 3;
	// The fragments, shifted and summed. Past K the tile is zero, so x~ =
	// -c there: masked out of the sums (MASK), which only K's last k-tile
	// needs; every other one takes the form without a test, so that the
	// four 16-wide steps interleave freely (a test an element had put a
	// branch and its reconvergence around every register's sums, a fifth
	// of the math warps' samples at 16384 x 1024 -> 4096).
	auto load = [&](auto masked) {
#pragma unroll
		for (int ks = 0; ks < LNL_KTILE / 16; ks++) {
			const int r = row0 + (lane & 15), ch = ks * 2 + (lane >> 4);

			ldsm_x4(sa + r * 128 + ((ch ^ (r & 7)) << 4),
				a[ks][0], a[ks][1], a[ks][2], a[ks][3]);
			a[ks][0] = bsub2(a[ks][0], piv[0]);
			a[ks][1] = bsub2(a[ks][1], piv[1]);
			a[ks][2] = bsub2(a[ks][2], piv[0]);
			a[ks][3] = bsub2(a[ks][3], piv[1]);
			if constexpr (SUMS) {
				constexpr bool MASK = decltype(masked)::value;
				const int kc = ks * 16 + 2 * t;
				const uint32_t m0 = !MASK || kc < kleft ? ~0u : 0u;
				const uint32_t m1 = !MASK || kc + 8 < kleft ? ~0u : 0u;

				stats2(a[ks][0] & m0, s1[0], s2[0]);
				stats2(a[ks][1] & m0, s1[1], s2[1]);
				stats2(a[ks][2] & m1, s1[0], s2[0]);
				stats2(a[ks][3] & m1, s1[1], s2[1]);
			}
		}
	};

	if (!SUMS || kleft >= LNL_KTILE)
		load(std::false_type());
	else
		load(std::true_type());
	static_assert(BN == 256 || BN == 192 || BN == 128 || BN == 96 || BN == 72 || BN == 64 || BN == 48 ||
			      BN == 32 || BN == 16,
		      "a wgmma we have");
#pragma unroll
	for (int i = 0; i < BN / 2; i++)
		wg_fence_operand(acc[i]);
	wg_arrive();
#pragma unroll
	for (int ks = 0; ks < LNL_KTILE / 16; ks++) {
		if constexpr (BN == 256)
			wgmma_m64n256k16(acc, a[ks], wg_desc(sb + ks * 32));
		else if constexpr (BN == 192)
			wgmma_m64n192k16(acc, a[ks], wg_desc(sb + ks * 32));
		else if constexpr (BN == 128)
			wgmma_m64n128k16(acc, a[ks], wg_desc(sb + ks * 32));
		else if constexpr (BN == 96)
			wgmma_m64n96k16(acc, a[ks], wg_desc(sb + ks * 32));
		else if constexpr (BN == 72)
			wgmma_m64n72k16(acc, a[ks], wg_desc(sb + ks * 32));
		else if constexpr (BN == 64)
			wgmma_m64n64k16(acc, a[ks], wg_desc(sb + ks * 32));
		else if constexpr (BN == 48)
			wgmma_m64n48k16(acc, a[ks], wg_desc(sb + ks * 32));
		else if constexpr (BN == 32)
			wgmma_m64n32k16(acc, a[ks], wg_desc(sb + ks * 32));
		else
			wgmma_m64n16k16(acc, a[ks], wg_desc(sb + ks * 32));
	}
	wg_commit();
	wg_wait<1>();
#pragma unroll
	for (int i = 0; i < BN / 2; i++)
		wg_fence_operand(acc[i]);
}

// A wgmma kernel's k loop: the NACC accumulators zeroed, step(kt, a) for
// the k-tiles k0, k0 + ks, ... below KT with the A registers alternating
// between a0 and a1 (a k-tile's wgmmas still read its set while the next
// one's is prepared), then every wgmma drained. ks = 2 where two
// warpgroups take the k-tiles in turn.
template <int NACC = 128, typename Step>
__device__ __forceinline__ void wg_kloop(int k0, int ks, int KT, Step &step,
					 uint32_t (&a0)[LNL_KTILE / 16][4],
					 uint32_t (&a1)[LNL_KTILE / 16][4], float *acc)
{
	int kt = k0;

#pragma unroll
	for (int i = 0; i < NACC; i++)
		acc[i] = 0.f;
	for (; kt + ks < KT; kt += 2 * ks) {
		step(kt, a0);
		step(kt + ks, a1);
	}
	if (kt < KT)
		step(kt, a0);
	wg_wait<0>();
#pragma unroll
	for (int i = 0; i < NACC; i++)
		wg_fence_operand(acc[i]);
}

// Rows r and r + 8 of x: their pivots (first elements, twice each), 0
// past M.
__device__ __forceinline__ void wg_pivots(const __nv_bfloat16 *__restrict__ x, long r,
					  long M, int K, uint32_t *piv)
{
#pragma unroll
	for (int h = 0; h < 2; h++, r += 8) {
		__nv_bfloat16 c = r < M ? x[r * K] : __float2bfloat16_rn(0.f);
		__nv_bfloat162 cc = __halves2bfloat162(c, c);

		piv[h] = *(const uint32_t *)&cc;
	}
}

// The same from the first k-tile of x as the TMA leaves it in shared
// memory at sa (rows r and r + 8 of the tile, 128-byte swizzled: chunk 0
// of row r at (r % 8) 16 bytes; zeros past M): no trip to global memory
// before the tile's first wgmma.
__device__ __forceinline__ void wg_pivots_smem(uint32_t sa, int r, uint32_t *piv)
{
#pragma unroll
	for (int h = 0; h < 2; h++, r += 8) {
		const uint32_t w = lds_u32(sa + r * 128 + ((r & 7) << 4)) & 0xffffu;

		piv[h] = w | w << 16;
	}
}

// A row's shifted sums spread over the 4 lanes of a quad, added: every
// lane of the quad gets them.
__device__ __forceinline__ void quad_sums(float &s1, float &s2)
{
	s1 += __shfl_xor_sync(0xffffffffu, s1, 1);
	s2 += __shfl_xor_sync(0xffffffffu, s2, 1);
	s1 += __shfl_xor_sync(0xffffffffu, s1, 2);
	s2 += __shfl_xor_sync(0xffffffffu, s2, 2);
}

// A row's mean - c and rstd from sums spread over the 4 lanes of a quad;
// every lane of the quad gets them.
__device__ __forceinline__ void quad_stats(float s1, float s2, int K, float *mt, float *rs)
{
	quad_sums(s1, s2);
	shifted_stats(s1, s2, K, mt, rs);
}

#endif  // SM90A_CODE

#endif
