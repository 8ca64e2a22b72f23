// fwd_wgmma.cu - the LayerNorm+Linear bf16 fused forward on Hopper: the
// wgmma kernel (k_fwd_fused_wgmma), then the warp-specialized persistent
// one (k_fwd_fused_ws: TMA, mbarriers, setmaxnreg, clusters multicasting
// W'), and the skinny kernels' wgmma forms (k_fwd_skinny_wg: skinny.cuh's
// x-resident body; k_fwd_skinny_st: x streamed beside W', a block a tile
// over all of K). The one file of the folder built for sm_90a (local.mk): wgmma,
// setmaxnreg and the cluster instructions exist only there. See internal.h
// for the numerics and fwd_mma.cu for the data path both kernels build on.
#include "config.h"

#include <cuda.h>
#include <cuda_bf16.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include "error.h"
#include "internal.h"
#include "layernorm/layernorm.h"
#include "skinny.cuh"

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
#define WS_SMEM (WS_STAGES * (128 + 256) * 128 + 1024)

// The one architecture guard of the file: a device pass for any target but
// sm_90a compiles none of the Hopper code, and its kernels trap (they are
// never launched there: fwd_wgmma_setup's probe says 0 and lnl_fwd_choose picks
// the mma.sync kernel). The host pass sees everything.
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define SM90A_CODE 0
#define SM90A_ONLY(call) __trap()
#else
#define SM90A_CODE 1
#define SM90A_ONLY(call) call

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

// d (this warpgroup's 64 x 256, 128 floats a thread) += a (64 x 16, 4
// registers a thread) b (16 x 256 from the descriptor).
__device__ __forceinline__ void wgmma_m64n256k16(float *d, const uint32_t *a, uint64_t desc)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
		     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
		     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
		     "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
		     "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
		     "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
		     "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
		     "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
		     "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
		     "{%128, %129, %130, %131}, %132, p, 1, 1, 0;\n}\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		       "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		       "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		       "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		       "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		       "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		       "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
		       "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
		       "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
		       "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
		       "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
		       "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
		       "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
		       "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
		       "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
		       "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1));
}

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
// skinny kernel's tiles of W'.
__device__ __forceinline__ void wgmma_m64n72k16(float *d, const uint32_t *a, uint64_t desc)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %41, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n72k16.f32.bf16.bf16 {"
		     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
		     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
		     "%32, %33, %34, %35}, "
		     "{%36, %37, %38, %39}, %40, p, 1, 1, 0;\n}\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		       "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		       "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		       "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		       "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1));
}

__device__ __forceinline__ void wgmma_m64n96k16(float *d, const uint32_t *a, uint64_t desc)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %53, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n96k16.f32.bf16.bf16 {"
		     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
		     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
		     "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47}, "
		     "{%48, %49, %50, %51}, %52, p, 1, 1, 0;\n}\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		       "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		       "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		       "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		       "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		       "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1));
}

// d (this warpgroup's 64 x 32, 16 floats a thread) += a (64 x 16) b
// (16 x 32), both from shared memory through their descriptors.
__device__ __forceinline__ void wgmma_m64n32k16_ss(float *d, uint64_t da, uint64_t db)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {"
		     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
		     "%16, %17, p, 1, 1, 0, 0;\n}\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		       "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
		     : "l"(da), "l"(db), "r"(1));
}

// d (this warpgroup's 64 x 64, 32 floats a thread) += a (64 x 16) b
// (16 x 64), both from shared memory through their descriptors.
__device__ __forceinline__ void wgmma_m64n64k16_ss(float *d, uint64_t da, uint64_t db)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
		     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
		     "%32, %33, p, 1, 1, 0, 0;\n}\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		       "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		       "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		       "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
		     : "l"(da), "l"(db), "r"(1));
}

// d += a b, m64nMPk16 from shared memory (MP = 32, 64: the skinny
// kernels' x rows as the wgmma's N).
template <int MP>
__device__ __forceinline__ void wgmma_ss(float *d, uint64_t da, uint64_t db)
{
	if constexpr (MP == 64)
		wgmma_m64n64k16_ss(d, da, db);
	else
		wgmma_m64n32k16_ss(d, da, db);
}

// The x-resident skinny kernel's multiply of one k-tile on wgmma
// (skinny.cuh's body; NAF = XS = 1: warp w's 16 rows of W' are rows
// 16 (w % 4) of its warpgroup's 64, w / 4 the warpgroup): the warpgroup's
// 64 rows of the W' stage at sw against all MP rows of the resident x~
// k-tile at sx, four k-steps, both operands read by the tensor cores from
// shared memory (no ldmatrix, no fragments in registers). The
// accumulators are mma.sync's fragments in the same order (d[4 j + e] is
// acc[0][j][e]: rows g, g + 8, columns 8 j + 2 t, + 1), so the body's
// exchange and epilogue serve both.
struct SkWgmma {
	static constexpr bool ASYNC_PROXY = true;  // x~ is read through it

	template <int MP, int XS, int NAF>
	__device__ __forceinline__ static void ktile(float (&acc)[NAF][MP / 8 / XS][4],
						     uint32_t sw, uint32_t sx, int lane, int wa,
						     int f0)
	{
		static_assert(XS == 1 && NAF == 1 && (MP == 32 || MP == 64), "warpgroup shape");
		float *d = &acc[0][0][0];
		const uint32_t sa = sw + (wa >> 2) * 64 * 128;

		(void)lane;
		(void)f0;
#pragma unroll
		for (int i = 0; i < MP / 2; i++)
			wg_fence_operand(d[i]);
		wg_arrive();
#pragma unroll
		for (int ks = 0; ks < LNL_KTILE / 16; ks++)
			wgmma_ss<MP>(d, wg_desc(sa + ks * 32), wg_desc(sx + ks * 32));
		wg_commit();
		wg_wait<0>();
#pragma unroll
		for (int i = 0; i < MP / 2; i++)
			wg_fence_operand(d[i]);
	}
};

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

#pragma unroll
	for (int ks = 0; ks < LNL_KTILE / 16; ks++) {
		const int r = row0 + (lane & 15), ch = ks * 2 + (lane >> 4);
		const int kc = ks * 16 + 2 * t;

		ldsm_x4(sa + r * 128 + ((ch ^ (r & 7)) << 4),
			a[ks][0], a[ks][1], a[ks][2], a[ks][3]);
		a[ks][0] = bsub2(a[ks][0], piv[0]);
		a[ks][1] = bsub2(a[ks][1], piv[1]);
		a[ks][2] = bsub2(a[ks][2], piv[0]);
		a[ks][3] = bsub2(a[ks][3], piv[1]);
		// Past K the tile is zero, so x~ = -c there: masked.
		if (SUMS && kc < kleft) {
			stats2(a[ks][0], s1[0], s2[0]);
			stats2(a[ks][1], s1[1], s2[1]);
		}
		if (SUMS && kc + 8 < kleft) {
			stats2(a[ks][2], s1[0], s2[0]);
			stats2(a[ks][3], s1[1], s2[1]);
		}
	}
	static_assert(BN == 256 || BN == 72 || BN == 96, "a wgmma we have");
#pragma unroll
	for (int i = 0; i < BN / 2; i++)
		wg_fence_operand(acc[i]);
	wg_arrive();
#pragma unroll
	for (int ks = 0; ks < LNL_KTILE / 16; ks++) {
		if constexpr (BN == 256)
			wgmma_m64n256k16(acc, a[ks], wg_desc(sb + ks * 32));
		else if constexpr (BN == 96)
			wgmma_m64n96k16(acc, a[ks], wg_desc(sb + ks * 32));
		else
			wgmma_m64n72k16(acc, a[ks], wg_desc(sb + ks * 32));
	}
	wg_commit();
	wg_wait<1>();
#pragma unroll
	for (int i = 0; i < BN / 2; i++)
		wg_fence_operand(acc[i]);
}

// A wgmma kernel's k loop: the accumulators zeroed, step(kt, a) for every
// k-tile with the A registers alternating between a0 and a1 (a k-tile's
// wgmmas still read its set while the next one's is prepared), then every
// wgmma drained.
template <typename Step>
__device__ __forceinline__ void wg_kloop(int KT, Step &step, uint32_t (&a0)[LNL_KTILE / 16][4],
					 uint32_t (&a1)[LNL_KTILE / 16][4], float *acc)
{
	int kt = 0;

#pragma unroll
	for (int i = 0; i < 128; i++)
		acc[i] = 0.f;
	for (; kt + 1 < KT; kt += 2) {
		step(kt, a0);
		step(kt + 1, a1);
	}
	if (kt < KT)
		step(kt, a0);
	wg_wait<0>();
#pragma unroll
	for (int i = 0; i < 128; i++)
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

// A row's mean - c and rstd from sums spread over the 4 lanes of a quad;
// every lane of the quad gets them.
__device__ __forceinline__ void quad_stats(float s1, float s2, int K, float *mt, float *rs)
{
	s1 += __shfl_xor_sync(0xffffffffu, s1, 1);
	s2 += __shfl_xor_sync(0xffffffffu, s2, 1);
	s1 += __shfl_xor_sync(0xffffffffu, s1, 2);
	s2 += __shfl_xor_sync(0xffffffffu, s2, 2);
	shifted_stats(s1, s2, K, mt, rs);
}

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
	wg_kloop(KT, step, a0, a1, acc);
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
// so pairs serve from N = 512 on (lnl_fwd_choose in workload.cu, option
// clusters). The launcher takes the kernel from K = WS_MIN_K on.

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

// PASS: the rows' statistics come from a LayerNorm statistics pass run
// before (stats: hi, lo, rstd, as layernorm_stats writes them) instead of
// being summed from the tiles; the pivot is then hi rounded to bf16. W' is
// in perm32's order (k_fold with perm), s and b' in column order.
//
// CL = 2: launched in clusters of two blocks (consecutive in x) that walk
// the same tiles of W' side by side, on x's row tiles 2p and 2p + 1: each
// block's producer loads half of each W' tile and multicasts it to both, so
// that W' crosses from L2 to the SMs once a pair (tw's box is then 128
// rows). A stage is free once both blocks' math warps released it (the
// empty barriers count 16 arrivals, half of them from the other block),
// and neither block leaves before the other is done with its barriers.
template <bool PASS, int CL>
__device__ __forceinline__ void
ws_body(const CUtensorMap *tx, const CUtensorMap *tw,
	const __nv_bfloat16 *__restrict__ x, const float *__restrict__ stats,
	const float *__restrict__ sW, const float *__restrict__ bf,
	__nv_bfloat16 *__restrict__ y, long M, int K, int N)
{
	constexpr int BM = 128, BN = 256, A_BYTES = BM * 128, STAGE = (BM + BN) * 128;
	extern __shared__ __align__(1024) unsigned char smem_raw[];
	__shared__ __align__(8) uint64_t full[WS_STAGES], empty[WS_STAGES];
	__shared__ __align__(16) float ep_s[2][BN], ep_b[2][BN];  // s, b' of a tile

	const int tid = threadIdx.x;
	const long tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
	// Work units: tiles, or with CL = 2 pairs of tiles on one W' tile.
	const long units_m = (tiles_m + CL - 1) / CL, units = units_m * tiles_n;
	const long unit0 = blockIdx.x / CL, nunits = gridDim.x / CL;
	const uint32_t rank = CL == 2 ? cluster_rank() : 0;
	const int KT = (K + LNL_KTILE - 1) / LNL_KTILE;
	const uint32_t sbase = (smem_u32(smem_raw) + 1023) & ~1023u;
	const uint32_t fb = smem_u32(full), eb = smem_u32(empty);
	// This block's tile of unit q.
	auto tile_of = [&](long q, long *m0, long *n0) {
		group_tile(q, units_m, tiles_n, WS_GROUP / CL, CL * BM, BN, m0, n0);
		*m0 += rank * BM;
	};

	if (tid == 0) {
		for (int s = 0; s < WS_STAGES; s++) {
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

			for (long q = unit0; q < units; q += nunits) {
				long m0, n0;

				tile_of(q, &m0, &n0);
				for (int kt = 0; kt < KT; kt++, it++) {
					const int s = it % WS_STAGES;
					const uint32_t sa = sbase + s * STAGE;

					// Fresh barriers count as done with
					// the phase before: no wait at first.
					mbar_wait(eb + 8 * s, (it / WS_STAGES & 1) ^ 1);
					mbar_expect(fb + 8 * s, STAGE);
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
		return;
	}

	regs_inc<232>();
	const int lane = tid & 31, cw = (tid >> 5) - 4, g = lane >> 2, t = lane & 3;
	const int row0 = cw * 16;  // warp cw of the math warps: rows row0..+15
	const int mi = tid - 128;  // 0..255 among the math threads
	const bool vec8 = (N & 7) == 0;  // rows of y 16-byte aligned
	int nt = 0;                // tiles this block has done
	uint32_t a0[LNL_KTILE / 16][4], a1[LNL_KTILE / 16][4], piv[2];
	float s1[2], s2[2], acc[128];
	int it = 0;

	auto release = [&](int i) {
		if (lane == 0) {
			mbar_arrive(eb + 8 * (i % WS_STAGES));
			if constexpr (CL == 2)
				mbar_arrive_remote(eb + 8 * (i % WS_STAGES), rank ^ 1);
		}
	};

	// One k-tile: wait for it, shift and sum this warp's A fragments,
	// queue the four wgmmas, wait for the previous k-tile's (whose A
	// registers the next call rewrites) and free its stage.
	auto step = [&](int kt, uint32_t (&a)[LNL_KTILE / 16][4]) {
		const int s = it % WS_STAGES;
		const uint32_t sa = sbase + s * STAGE, sb = sa + A_BYTES;
		const int kleft = K - kt * LNL_KTILE;

		mbar_wait(fb + 8 * s, it / WS_STAGES & 1);
		wg_ktile<!PASS>(sa, sb, row0, lane, kleft, piv, a, s1, s2, acc);
		if (kt > 0)
			release(it - 1);
		it++;
	};

	for (long q = unit0; q < units; q += nunits) {
		long m0, n0;

		float mt[2], rs[2];

		tile_of(q, &m0, &n0);
		// The tile's s and b', one column a math thread: loaded now,
		// kept in registers through the k loop, shared for the epilogue.
		const long mc = n0 + mi;
		const float my_s = mc < N ? sW[mc] : 0.f, my_b = mc < N ? bf[mc] : 0.f;
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
		} else {
			wg_pivots(x, m0 + row0 + g, M, K, piv);
			s1[0] = s1[1] = s2[0] = s2[1] = 0.f;
		}
		wg_kloop(KT, step, a0, a1, acc);
		release(it - 1);
		if constexpr (!PASS) {
#pragma unroll
			for (int h = 0; h < 2; h++)
				quad_stats(s1[h], s2[h], K, &mt[h], &rs[h]);
		}

		// Two buffers: a warpgroup writes this tile's while the other
		// may still read the last one's; the one before that is free,
		// since both passed the barrier below since.
		ep_s[buf][mi] = my_s;
		ep_b[buf][mi] = my_b;
		bar_sync(1, 256);

		// Epilogue, from the accumulators: y = rstd * (acc - (mean -
		// c) * s) + b'. acc[4j + 2h + e] is row row0 + g + 8h, tile
		// position 8j + 2t + e, which W' (perm32's order) made column
		// 32b + 8t + 2u + e for j = 4b + u: a thread holds 8 adjacent
		// columns of each group of 32 and stores them as 16 bytes.
		// Whole tiles (the common case) store unchecked.
		const long r0 = m0 + row0 + g;
		__nv_bfloat16 *yr = y + r0 * N + n0 + 8 * t;

		if (vec8 && m0 + BM <= M && n0 + BN <= N) {
#pragma unroll
			for (int b = 0; b < BN / 32; b++) {
				const float4 *sp = (const float4 *)&ep_s[buf][32 * b + 8 * t];
				const float4 *bp = (const float4 *)&ep_b[buf][32 * b + 8 * t];
				const float4 s0 = sp[0], s1 = sp[1], b0 = bp[0], b1 = bp[1];
				const float sc[8] = { s0.x, s0.y, s0.z, s0.w, s1.x, s1.y, s1.z, s1.w };
				const float bc[8] = { b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w };

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
					*(uint4 *)(yr + 8L * h * N + 32 * b) =
						make_uint4(v[0], v[1], v[2], v[3]);
				}
			}
			continue;
		}
#pragma unroll
		for (int j = 0; j < BN / 8; j++) {
			const int cl = 32 * (j / 4) + 8 * t + 2 * (j % 4);  // in the tile
			const float2 sc = *(const float2 *)&ep_s[buf][cl];
			const float2 bc = *(const float2 *)&ep_b[buf][cl];

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


// --- the skinny forward with x streamed (k_fwd_skinny_st): bf16, 17 to 64
// rows, a block a tile of LNL_SKINNY_ST_BW = 64 rows of W' over all of K,
// no slices, no clusters, no reduction between blocks. The ring carries
// each k-tile of W' (64 rows, the wgmma's A) and of x (MP rows, its B) by
// TMA from the producer warp. Two warpgroups take the k-tiles in turn
// (even, odd), each with its own sums: a warpgroup shifts its k-tile of x
// in shared memory (x~ = x - c, 0 past K), summing the rows' statistics
// as it goes, and multiplies it (m64nMPk16, both operands in shared
// memory) while it shifts its next one; at the end the second warpgroup's
// sums are added to the first's in that order (the same bits every run).
// Every block sums all MP rows' statistics again: x is MP K bf16 from L2,
// W' the bytes that come from DRAM. As cuBLASLt's skinny kernels do, it
// takes as many blocks as W' has tiles (two an SM fit), each one stream
// of W' from start to end; the x-resident kernel (skinny.cuh) cuts K into
// slices instead and adds them through DSMEM at each tile's end.
#define ST_BW LNL_SKINNY_ST_BW
#define ST_THREADS 288  // two warpgroups, then the producer warp

// The x-streamed kernels' ring: ST stages of STAGE bytes from ring, each
// the k-tile of the wgmma's A at its start and of its B at BOFF, with full
// barriers (fb: one arrival and the bytes) and empty ones (eb: the four
// warps of the warpgroup that consumed the stage). stream_ring_init: the
// barriers, by thread 0, then the block's barrier.
template <int ST>
__device__ __forceinline__ void stream_ring_init(uint32_t fb, uint32_t eb)
{
	if (threadIdx.x == 0) {
		for (int s = 0; s < ST; s++) {
			mbar_init(fb + 8 * s, 1);
			mbar_init(eb + 8 * s, 4);
		}
		asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
	}
	__syncthreads();
}

// The producer warp's lane 0: k-tile kt of ta (rows from ra) and of tb
// (from rb) into stage kt % ST once the warpgroup before has released it
// (zeros past K and the tensors' rows).
template <int ST, int STAGE, int BOFF>
__device__ __forceinline__ void stream_produce(const CUtensorMap *ta, int ra, const CUtensorMap *tb,
					       int rb, uint32_t ring, uint32_t fb, uint32_t eb,
					       int KT)
{
	for (int kt = 0; kt < KT; kt++) {
		const int s = kt % ST;
		const uint32_t sa = ring + s * STAGE;

		if (kt >= ST)
			mbar_wait(eb + 8 * s, (kt / ST - 1) & 1);
		mbar_expect(fb + 8 * s, STAGE);
		tma_load(sa, ta, kt * LNL_KTILE, ra, fb + 8 * s);
		tma_load(sa + BOFF, tb, kt * LNL_KTILE, rb, fb + 8 * s);
	}
}

template <int MP>
__device__ __forceinline__ void
skinny_st_body(const CUtensorMap *tx, const CUtensorMap *tw, const __nv_bfloat16 *__restrict__ x,
	       const float *__restrict__ sW, const float *__restrict__ bf,
	       __nv_bfloat16 *__restrict__ y, int M, int K, int N, long wrows, int wperm)
{
	constexpr int ST = LNL_SKINNY_ST_STAGES(MP), WB = ST_BW * 128, STAGE = WB + MP * 128;
	constexpr int TPR = 128 / MP, NA = MP / 2;  // threads a row; accumulators a thread
	static_assert(MP == 32 || MP == 64, "a warpgroup's B");
	unsigned char *smem = dyn_smem();
	__shared__ __align__(8) uint64_t full[ST], empty[ST];
	__shared__ float2 st_part[2][MP];
	__shared__ float st_mt[MP], st_rs[MP];
	const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
	const int KT = (K + LNL_KTILE - 1) / LNL_KTILE;
	const long n0 = (long)blockIdx.x * ST_BW;
	const uint32_t sbase = smem_u32(smem), ring = (sbase + 1023) & ~1023u;
	const uint32_t fb = smem_u32(full), eb = smem_u32(empty);

	stream_ring_init<ST>(fb, eb);
	if (w == 8) {  // the producer warp: W' as A, x as B
		if (lane == 0)
			stream_produce<ST, STAGE, WB>(tw, (int)n0, tx, 0, ring, fb, eb, KT);
		return;
	}

	// Warpgroup wg takes k-tiles wg, wg + 2, ...; its row r of each x
	// k-tile is shifted and summed by TPR adjacent threads, 8 / TPR
	// 16-byte chunks each.
	const int wg = w >> 2, wt = tid & 127, r = wt / TPR, sub = wt % TPR;
	const __nv_bfloat16 c = r < M ? x[(long)r * K] : __float2bfloat16_rn(0.f);
	const __nv_bfloat162 cc = __halves2bfloat162(c, c);
	const uint32_t cu = *(const uint32_t *)&cc;
	float a1 = 0.f, a2 = 0.f, d[NA];

	auto shift = [&](int kt) {
		const uint32_t sx = ring + (kt % ST) * STAGE + WB;

		mbar_wait(fb + 8 * (kt % ST), kt / ST & 1);
#pragma unroll
		for (int i = 0; i < 8 / TPR; i++) {
			const int ch = sub + i * TPR;
			uint4 *p = (uint4 *)(smem + (sx - sbase) + r * 128 + ((ch ^ (r & 7)) << 4));

			sk_shift_chunk(p, kt * LNL_KTILE + ch * 8 < K, cu, a1, a2);
		}
		fence_proxy_async();  // x~ is read by wgmma, through the async proxy
	};

#pragma unroll
	for (int i = 0; i < NA; i++)
		d[i] = 0.f;
	// Warpgroup wg's own barrier (constant ids: named barriers 1 and 2).
	auto wg_sync = [&]() {
		if (wg == 0)
			bar_sync(1, 128);
		else
			bar_sync(2, 128);
	};

	if (wg < KT)
		shift(wg);
	wg_sync();
	for (int kt = wg; kt < KT; kt += 2) {
		const uint32_t sa = ring + (kt % ST) * STAGE;

#pragma unroll
		for (int i = 0; i < NA; i++)
			wg_fence_operand(d[i]);
		wg_arrive();
#pragma unroll
		for (int ks = 0; ks < LNL_KTILE / 16; ks++)
			wgmma_ss<MP>(d, wg_desc(sa + ks * 32), wg_desc(sa + WB + ks * 32));
		wg_commit();
		if (kt + 2 < KT)
			shift(kt + 2);  // while the tensor cores multiply kt
		wg_wait<0>();
#pragma unroll
		for (int i = 0; i < NA; i++)
			wg_fence_operand(d[i]);
		__syncwarp();
		if (lane == 0)
			mbar_arrive(eb + 8 * (kt % ST));
		wg_sync();  // k-tile kt + 2 shifted by every warp
	}

	// The rows' sums: the TPR threads', then warpgroup 0's + 1's.
#pragma unroll
	for (int o = 1; o < TPR; o <<= 1) {
		a1 += __shfl_xor_sync(FP_FULL_MASK, a1, o);
		a2 += __shfl_xor_sync(FP_FULL_MASK, a2, o);
	}
	if (sub == 0)
		st_part[wg][r] = make_float2(a1, a2);
	// The second warpgroup's accumulators through the ring (every stage
	// consumed: both warpgroups are past their loops).
	float *const red = (float *)(smem + (ring - sbase));

	bar_sync(3, 256);
	if (wg == 1) {
#pragma unroll
		for (int i = 0; i < NA; i++)
			red[i * 128 + wt] = d[i];
	}
	bar_sync(3, 256);
	if (wg == 1)
		return;
	if (sub == 0)
		shifted_stats(st_part[0][r].x + st_part[1][r].x, st_part[0][r].y + st_part[1][r].y,
			      K, &st_mt[r], &st_rs[r]);
#pragma unroll
	for (int i = 0; i < NA; i++)
		d[i] += red[i * 128 + wt];
	bar_sync(1, 128);
#pragma unroll
	for (int j = 0; j < MP / 8; j++)
		sk_store(y, make_float4(d[4 * j], d[4 * j + 1], d[4 * j + 2], d[4 * j + 3]),
			 n0 + 16 * w + (lane >> 2), 8 * j + 2 * (lane & 3), M, N, wrows, wperm, sW, bf,
			 st_mt, st_rs);
}

// --- the x-as-A form (k_fwd_skinny_xa<BN>): 33 to 64 rows where W' has
// more 64-row tiles than SMs but under 1.5 an SM (k_fwd_skinny_st would
// leave some SMs two blocks and most one: they finish last). A block a
// tile of BN = 72 or 96 rows of W' (as many blocks as SMs or fewer, one
// each), x as the wgmma's A (64 rows, zeros past M) and W''s tile as its B
// (wgmma's N is any multiple of 8; its M is 64): two warpgroups take the
// k-tiles in turn as the warp-specialized kernel's math warps do
// (wg_ktile: A ldmatrix'd, shifted and summed in registers, the next
// k-tile's A prepared while one k-tile's wgmmas run), the second one's
// sums added to the first's at the end.
#define XA_STAGES 6

template <int BN>
__device__ __forceinline__ void
skinny_xa_body(const CUtensorMap *tx, const CUtensorMap *tw, const __nv_bfloat16 *__restrict__ x,
	       const float *__restrict__ sW, const float *__restrict__ bf,
	       __nv_bfloat16 *__restrict__ y, int M, int K, int N, long wrows, int wperm)
{
	constexpr int ST = XA_STAGES, XB = 64 * 128, STAGE = XB + BN * 128;
	static_assert(STAGE % 1024 == 0, "stages 1024-aligned");
	unsigned char *smem = dyn_smem();
	__shared__ __align__(8) uint64_t full[ST], empty[ST];
	__shared__ float2 st_part[64];
	const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
	const int g = lane >> 2, t = lane & 3;
	const int KT = (K + LNL_KTILE - 1) / LNL_KTILE;
	const long n0 = (long)blockIdx.x * BN;
	const uint32_t sbase = smem_u32(smem), ring = (sbase + 1023) & ~1023u;
	const uint32_t fb = smem_u32(full), eb = smem_u32(empty);

	stream_ring_init<ST>(fb, eb);
	if (w == 8) {  // the producer warp: x as A, W' as B
		if (lane == 0)
			stream_produce<ST, STAGE, XB>(tx, 0, tw, (int)n0, ring, fb, eb, KT);
		return;
	}

	// Warpgroup wg takes k-tiles wg, wg + 2, ...; its warp w & 3 rows
	// row0 .. row0 + 15 of x.
	const int wg = w >> 2, row0 = 16 * (w & 3);
	uint32_t a0[LNL_KTILE / 16][4], a1[LNL_KTILE / 16][4], piv[2];
	float s1[2] = { 0.f, 0.f }, s2[2] = { 0.f, 0.f }, d[BN / 2];
	int prev = -1;  // the stage of this warpgroup's k-tile in flight

	auto step = [&](int kt, uint32_t (&a)[LNL_KTILE / 16][4]) {
		const int s = kt % ST;
		const uint32_t sa = ring + s * STAGE;

		mbar_wait(fb + 8 * s, kt / ST & 1);
		wg_ktile<true, BN>(sa, sa + XB, row0, lane, K - kt * LNL_KTILE, piv, a, s1, s2, d);
		if (prev >= 0 && lane == 0)  // its wgmmas are done: free its stage
			mbar_arrive(eb + 8 * prev);
		prev = s;
	};

	wg_pivots(x, row0 + g, M, K, piv);
#pragma unroll
	for (int i = 0; i < BN / 2; i++)
		d[i] = 0.f;
	int kt = wg;

	for (; kt + 2 < KT; kt += 4) {
		step(kt, a0);
		step(kt + 2, a1);
	}
	if (kt < KT)
		step(kt, a0);
	wg_wait<0>();
#pragma unroll
	for (int i = 0; i < BN / 2; i++)
		wg_fence_operand(d[i]);
	if (prev >= 0 && lane == 0)
		mbar_arrive(eb + 8 * prev);

	// The rows' sums over the quad, then warpgroup 0's + 1's; the second
	// warpgroup's accumulators through the ring (every stage consumed:
	// both warpgroups are past their loops).
	float *const red = (float *)(smem + (ring - sbase));

#pragma unroll
	for (int h = 0; h < 2; h++)
#pragma unroll
		for (int o = 1; o < 4; o <<= 1) {
			s1[h] += __shfl_xor_sync(FP_FULL_MASK, s1[h], o);
			s2[h] += __shfl_xor_sync(FP_FULL_MASK, s2[h], o);
		}
	bar_sync(3, 256);
	if (wg == 1) {
		if (t == 0) {
			st_part[row0 + g] = make_float2(s1[0], s2[0]);
			st_part[row0 + g + 8] = make_float2(s1[1], s2[1]);
		}
#pragma unroll
		for (int i = 0; i < BN / 2; i++)
			red[i * 128 + (tid & 127)] = d[i];
	}
	bar_sync(3, 256);
	if (wg == 1)
		return;

	// Epilogue: y = rstd (acc - (mean - c) s) + b'; d[4 j + 2 h + e] is x
	// row row0 + g + 8 h, W' row n0 + 8 j + 2 t + e (column perm32 of it
	// where wperm says).
	float mt[2], rs[2];

#pragma unroll
	for (int h = 0; h < 2; h++) {
		const float2 p = st_part[row0 + g + 8 * h];

		shifted_stats(s1[h] + p.x, s2[h] + p.y, K, &mt[h], &rs[h]);
	}
#pragma unroll
	for (int j = 0; j < BN / 8; j++) {
#pragma unroll
		for (int e = 0; e < 2; e++) {
			const long wr = n0 + 8 * j + 2 * t + e;
			const long col = wperm ? perm32(wr) : wr;

			if (wr >= wrows || col >= N)
				continue;
			const float sc = sW[col], bc = bf[col];

#pragma unroll
			for (int h = 0; h < 2; h++) {
				const int m = row0 + g + 8 * h, i = 4 * j + 2 * h + e;

				if (m < M)
					y[(long)m * N + col] = __float2bfloat16_rn(
						rs[h] * (d[i] + red[i * 128 + tid] - mt[h] * sc) + bc);
			}
		}
	}
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

template <bool PASS, int CL>
__global__ void __launch_bounds__(WS_THREADS, 1)
k_fwd_fused_ws(const __grid_constant__ CUtensorMap tx,
	       const __grid_constant__ CUtensorMap tw,
	       const __nv_bfloat16 *__restrict__ x, const float *__restrict__ stats,
	       const float *__restrict__ sW, const float *__restrict__ bf,
	       __nv_bfloat16 *__restrict__ y, long M, int K, int N)
{
	SM90A_ONLY((ws_body<PASS, CL>(&tx, &tw, x, stats, sW, bf, y, M, K, N)));
}

// ---------------------------------------------------------------------------
// Launchers

// k_fwd_skinny_wg: skinny.cuh's x-resident body on wgmma (MP = 32, 64).
template <int MP>
__global__ void __launch_bounds__(SR_THREADS(1, 1), 1)
k_fwd_skinny_wg(const __nv_bfloat16 *__restrict__ x, const float *__restrict__ sW,
		const float *__restrict__ bf, __nv_bfloat16 *__restrict__ y, int M, int K, int N,
		long wrows, int kchunk, int tiles, int wperm, const __grid_constant__ CUtensorMap tw)
{
	SM90A_ONLY((skinny_res_body<MP, 1, 1, SkWgmma>(x, sW, bf, y, M, K, N, wrows, kchunk, tiles,
							wperm, &tw)));
}

const void *fwd_skinny_wg_kernel(int mp)
{
	return mp == 32 ? (const void *)k_fwd_skinny_wg<32>
			: mp == 64 ? (const void *)k_fwd_skinny_wg<64> : NULL;
}

// k_fwd_skinny_st: the x-streamed skinny body (MP = 32, 64), two blocks an SM.
template <int MP>
__global__ void __launch_bounds__(ST_THREADS, 2)
k_fwd_skinny_st(const __grid_constant__ CUtensorMap tx, const __grid_constant__ CUtensorMap tw,
		const __nv_bfloat16 *__restrict__ x, const float *__restrict__ sW,
		const float *__restrict__ bf, __nv_bfloat16 *__restrict__ y, int M, int K, int N,
		long wrows, int wperm)
{
	SM90A_ONLY((skinny_st_body<MP>(&tx, &tw, x, sW, bf, y, M, K, N, wrows, wperm)));
}

// k_fwd_skinny_xa: the x-as-A skinny body, one block an SM.
template <int BN>
__global__ void __launch_bounds__(ST_THREADS, 1)
k_fwd_skinny_xa(const __grid_constant__ CUtensorMap tx, const __grid_constant__ CUtensorMap tw,
		const __nv_bfloat16 *__restrict__ x, const float *__restrict__ sW,
		const float *__restrict__ bf, __nv_bfloat16 *__restrict__ y, int M, int K, int N,
		long wrows, int wperm)
{
	SM90A_ONLY((skinny_xa_body<BN>(&tx, &tw, x, sW, bf, y, M, K, N, wrows, wperm)));
}

#define XA_SMEM(BN) (1024 + XA_STAGES * (64 + (BN)) * 128)

// The x-streamed kernels' dynamic shared memory, once a process.
static int stream_setup(void)
{
	static int done;

	if (done)
		return 0;
	if (CUDA_CHECK(cudaFuncSetAttribute(k_fwd_skinny_st<32>,
					    cudaFuncAttributeMaxDynamicSharedMemorySize,
					    (int)lnl_skinny_st_smem(32))) ||
	    CUDA_CHECK(cudaFuncSetAttribute(k_fwd_skinny_st<64>,
					    cudaFuncAttributeMaxDynamicSharedMemorySize,
					    (int)lnl_skinny_st_smem(64))) ||
	    CUDA_CHECK(cudaFuncSetAttribute(k_fwd_skinny_xa<72>,
					    cudaFuncAttributeMaxDynamicSharedMemorySize,
					    XA_SMEM(72))) ||
	    CUDA_CHECK(cudaFuncSetAttribute(k_fwd_skinny_xa<96>,
					    cudaFuncAttributeMaxDynamicSharedMemorySize,
					    XA_SMEM(96))))
		return -1;
	done = 1;
	return 0;
}

int fwd_skinny_st_launch(const struct lnl_op *op, const void *xv, cudaStream_t st)
{
	const long wrows = op->wperm ? op->Np : op->N;
	const int mp = lnl_skinny_res_mp(op->M);
	const __nv_bfloat16 *x = (const __nv_bfloat16 *)xv;
	CUtensorMap tx, tw;
	cudaLaunchConfig_t cfg = {};

	if (op->dt != FP_BF16 || op->M > LNL_SKINNY_RES_MAX_M || mp < 32)
		return error("ln_linear_fwd: no x-streamed skinny kernel for %ld rows of this dtype",
			     op->M);
	if (stream_setup() || lnl_tma_map(&tx, x, op->K, op->M, mp) ||
	    lnl_tma_map(&tw, op->Wf, op->K, wrows, ST_BW))
		return -1;
	cfg.gridDim = dim3((unsigned)((wrows + ST_BW - 1) / ST_BW));
	cfg.blockDim = dim3(ST_THREADS);
	cfg.dynamicSmemBytes = lnl_skinny_st_smem(mp);
	cfg.stream = st;
	return CUDA_CHECK(cudaLaunchKernelEx(&cfg, mp == 32 ? k_fwd_skinny_st<32> : k_fwd_skinny_st<64>,
					     tx, tw, x, (const float *)op->sW,
					     (const float *)op->bf, (__nv_bfloat16 *)op->y,
					     (int)op->M, (int)op->K, (int)op->N, wrows, op->wperm));
}

int fwd_skinny_xa_launch(const struct lnl_op *op, const void *xv, cudaStream_t st)
{
	const long wrows = op->wperm ? op->Np : op->N;
	const int bn = op->xbn;
	const __nv_bfloat16 *x = (const __nv_bfloat16 *)xv;
	CUtensorMap tx, tw;
	cudaLaunchConfig_t cfg = {};

	if (op->dt != FP_BF16 || op->M > LNL_SKINNY_RES_MAX_M || (bn != 72 && bn != 96))
		return error("ln_linear_fwd: no x-as-A skinny kernel for %ld rows of this dtype "
			     "in %d-row tiles", op->M, bn);
	if (stream_setup() || lnl_tma_map(&tx, x, op->K, op->M, 64) ||
	    lnl_tma_map(&tw, op->Wf, op->K, wrows, bn))
		return -1;
	cfg.gridDim = dim3((unsigned)((wrows + bn - 1) / bn));
	cfg.blockDim = dim3(ST_THREADS);
	cfg.dynamicSmemBytes = XA_SMEM(bn);
	cfg.stream = st;
	return CUDA_CHECK(cudaLaunchKernelEx(&cfg, bn == 72 ? k_fwd_skinny_xa<72> : k_fwd_skinny_xa<96>,
					     tx, tw, x, (const float *)op->sW,
					     (const float *)op->bf, (__nv_bfloat16 *)op->y,
					     (int)op->M, (int)op->K, (int)op->N, wrows, op->wperm));
}

int fwd_wgmma_setup(int *have)
{
	static int done, built;
	int *d = NULL;

	if (!done) {
		if (CUDA_CHECK(cudaFuncSetAttribute(k_fwd_fused_wgmma,
				cudaFuncAttributeMaxDynamicSharedMemorySize, WG_SMEM)) ||
		    CUDA_CHECK(cudaFuncSetAttribute(k_fwd_fused_ws<false, 1>,
				cudaFuncAttributeMaxDynamicSharedMemorySize, WS_SMEM)) ||
		    CUDA_CHECK(cudaFuncSetAttribute(k_fwd_fused_ws<true, 1>,
				cudaFuncAttributeMaxDynamicSharedMemorySize, WS_SMEM)) ||
		    CUDA_CHECK(cudaFuncSetAttribute(k_fwd_fused_ws<false, 2>,
				cudaFuncAttributeMaxDynamicSharedMemorySize, WS_SMEM)) ||
		    CUDA_CHECK(cudaFuncSetAttribute(k_fwd_fused_ws<true, 2>,
				cudaFuncAttributeMaxDynamicSharedMemorySize, WS_SMEM)) ||
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

int lnl_tma_map(CUtensorMap *m, const void *p, long cols, long rows, int box_rows)
{
	static PFN_cuTensorMapEncodeTiled_v12000 encode;
	cuuint64_t dim[2] = { (cuuint64_t)cols, (cuuint64_t)rows };
	cuuint64_t stride[1] = { (cuuint64_t)cols * 2 };
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

// One launch of k_fwd_fused_ws<PASS, CL> on grid blocks, in clusters of CL.
template <bool PASS, int CL>
static int ws_run(const struct lnl_op *op, const CUtensorMap &tx, const CUtensorMap &tw,
		  const __nv_bfloat16 *x, unsigned grid, cudaStream_t st)
{
	cudaLaunchConfig_t cfg;
	cudaLaunchAttribute at;

	cluster_config(&cfg, &at, CL, grid, WS_THREADS, WS_SMEM, st);
	return CUDA_CHECK(cudaLaunchKernelEx(&cfg, k_fwd_fused_ws<PASS, CL>, tx, tw, x,
					     (const float *)(PASS ? op->stats : NULL),
					     (const float *)op->sW, (const float *)op->bf,
					     (__nv_bfloat16 *)op->y, op->M, (int)op->K,
					     (int)op->N));
}

// The warp-specialized kernel: a persistent grid, one block per SM (as many
// two-block clusters as fit at once with ws_cl = 2), at most one a tile (a
// pair of tiles); with ws_pass, the rows' statistics pass first.
int fwd_ws_launch(const struct lnl_op *op, const void *xv, cudaStream_t st)
{
	const __nv_bfloat16 *x = (const __nv_bfloat16 *)xv;
	const long M = op->M, tiles_m = (M + 127) / 128, tiles_n = (op->Np + 255) / 256;
	const int K = (int)op->K, cl = op->ws_cl;
	const long units = (tiles_m + cl - 1) / cl * tiles_n;
	const long most = cl == 2 ? op->ws_pairs : op->sms;
	const unsigned grid = (unsigned)(cl * (units < most ? units : most));
	CUtensorMap tx, tw;

	if (lnl_tma_map(&tx, x, K, M, 128) || lnl_tma_map(&tw, op->Wf, K, op->Np, 256 / cl))
		return -1;
	if (op->ws_pass && layernorm_stats(FP_BF16, x, op->stats, M, K, st))
		return -1;
	if (op->ws_pass)
		return cl == 2 ? ws_run<true, 2>(op, tx, tw, x, grid, st)
			       : ws_run<true, 1>(op, tx, tw, x, grid, st);
	return cl == 2 ? ws_run<false, 2>(op, tx, tw, x, grid, st)
		       : ws_run<false, 1>(op, tx, tw, x, grid, st);
}

int ws_pairs_resident(int sms, int *n)
{
	cudaLaunchConfig_t cfg;
	cudaLaunchAttribute at;

	*n = 0;
	cluster_config(&cfg, &at, 2, 2u * (unsigned)sms, WS_THREADS, WS_SMEM, 0);
	return CUDA_CHECK(cudaOccupancyMaxActiveClusters(n, k_fwd_fused_ws<false, 2>, &cfg));
}
