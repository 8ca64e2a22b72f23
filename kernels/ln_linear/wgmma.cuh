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
// skinny kernel's tiles of W', and 128 and 192, the warp-specialized
// kernel's narrower tiles.
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

__device__ __forceinline__ void wgmma_m64n128k16(float *d, const uint32_t *a, uint64_t desc)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
		     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
		     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
		     "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
		     "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
		     "{%64, %65, %66, %67}, %68, p, 1, 1, 0;\n}\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		       "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		       "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		       "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		       "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		       "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		       "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
		       "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1));
}


__device__ __forceinline__ void wgmma_m64n192k16(float *d, const uint32_t *a, uint64_t desc)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %101, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16 {"
		     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
		     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
		     "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
		     "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
		     "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
		     "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}, "
		     "{%96, %97, %98, %99}, %100, p, 1, 1, 0;\n}\n"
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
		       "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1));
}

// The same for the x-as-A skinny kernel's narrow tiles of W' (N = 16, 32,
// 48, 64: N / 2 floats a thread).
__device__ __forceinline__ void wgmma_m64n16k16(float *d, const uint32_t *a, uint64_t desc)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %13, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {"
		     "%0, %1, %2, %3, %4, %5, %6, %7"
		     "}, {%8, %9, %10, %11}, %12, p, 1, 1, 0;\n}\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1));
}

__device__ __forceinline__ void wgmma_m64n32k16(float *d, const uint32_t *a, uint64_t desc)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {"
		     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
		     "}, {%16, %17, %18, %19}, %20, p, 1, 1, 0;\n}\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		       "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1));
}

__device__ __forceinline__ void wgmma_m64n48k16(float *d, const uint32_t *a, uint64_t desc)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %29, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n48k16.f32.bf16.bf16 {"
		     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
		     "%16, %17, %18, %19, %20, %21, %22, %23"
		     "}, {%24, %25, %26, %27}, %28, p, 1, 1, 0;\n}\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		       "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		       "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(1));
}

__device__ __forceinline__ void wgmma_m64n64k16(float *d, const uint32_t *a, uint64_t desc)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
		     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
		     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
		     "}, {%32, %33, %34, %35}, %36, p, 1, 1, 0;\n}\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		       "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		       "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		       "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
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

// The same for the x~ kernel's other tiles of W' (fwd_skinny_xt.cu: 40 to
// 96 columns, a multiple of 8).
__device__ __forceinline__ void wgmma_m64n40k16_ss(float *d, uint64_t da, uint64_t db)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %22, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n40k16.f32.bf16.bf16 {"
		     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19}, "
		     "%20, %21, p, 1, 1, 0, 0;\n}\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		       "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		       "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19])
		     : "l"(da), "l"(db), "r"(1));
}

__device__ __forceinline__ void wgmma_m64n48k16_ss(float *d, uint64_t da, uint64_t db)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %26, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n48k16.f32.bf16.bf16 {"
		     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23}, "
		     "%24, %25, p, 1, 1, 0, 0;\n}\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		       "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		       "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23])
		     : "l"(da), "l"(db), "r"(1));
}

__device__ __forceinline__ void wgmma_m64n56k16_ss(float *d, uint64_t da, uint64_t db)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %30, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n56k16.f32.bf16.bf16 {"
		     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27}, "
		     "%28, %29, p, 1, 1, 0, 0;\n}\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		       "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		       "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		       "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27])
		     : "l"(da), "l"(db), "r"(1));
}

__device__ __forceinline__ void wgmma_m64n72k16_ss(float *d, uint64_t da, uint64_t db)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %38, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n72k16.f32.bf16.bf16 {"
		     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35}, "
		     "%36, %37, p, 1, 1, 0, 0;\n}\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		       "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		       "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		       "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		       "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35])
		     : "l"(da), "l"(db), "r"(1));
}

__device__ __forceinline__ void wgmma_m64n80k16_ss(float *d, uint64_t da, uint64_t db)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %42, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n80k16.f32.bf16.bf16 {"
		     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39}, "
		     "%40, %41, p, 1, 1, 0, 0;\n}\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		       "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		       "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		       "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		       "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39])
		     : "l"(da), "l"(db), "r"(1));
}

__device__ __forceinline__ void wgmma_m64n88k16_ss(float *d, uint64_t da, uint64_t db)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %46, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n88k16.f32.bf16.bf16 {"
		     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43}, "
		     "%44, %45, p, 1, 1, 0, 0;\n}\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		       "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		       "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		       "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		       "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		       "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43])
		     : "l"(da), "l"(db), "r"(1));
}

__device__ __forceinline__ void wgmma_m64n96k16_ss(float *d, uint64_t da, uint64_t db)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %50, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n96k16.f32.bf16.bf16 {"
		     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47}, "
		     "%48, %49, p, 1, 1, 0, 0;\n}\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		       "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		       "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		       "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		       "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		       "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
		     : "l"(da), "l"(db), "r"(1));
}

// The same for the warp-specialized kernel's tiles over x~ (fwd_wgmma.cu,
// WS_XT: 128, 192 and 256 columns; 64 is above).
__device__ __forceinline__ void wgmma_m64n128k16_ss(float *d, uint64_t da, uint64_t db)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
		     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
		     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
		     "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
		     "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
		     "%64, %65, p, 1, 1, 0, 0;\n}\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		       "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
		       "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
		       "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
		       "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
		       "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
		       "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
		       "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
		     : "l"(da), "l"(db), "r"(1));
}

__device__ __forceinline__ void wgmma_m64n192k16_ss(float *d, uint64_t da, uint64_t db)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16 {"
		     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
		     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
		     "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
		     "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
		     "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
		     "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}, "
		     "%96, %97, p, 1, 1, 0, 0;\n}\n"
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
		       "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
		     : "l"(da), "l"(db), "r"(1));
}

__device__ __forceinline__ void wgmma_m64n256k16_ss(float *d, uint64_t da, uint64_t db)
{
	asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
		     "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
		     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
		     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
		     "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
		     "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
		     "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
		     "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
		     "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
		     "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
		     "%128, %129, p, 1, 1, 0, 0;\n}\n"
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
		     : "l"(da), "l"(db), "r"(1));
}

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
