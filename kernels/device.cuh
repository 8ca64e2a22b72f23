/* device.cuh - the device helpers every workload's kernels share: dtype
 * conversion, warp reductions, shared-memory addresses, cp.async, ldmatrix,
 * the bf16 mma.sync and mbarriers. CUDA C++ only (include it from .cu files).
 * Users: kernels/ln_gelu/, kernels/softmax/, kernels/ln_linear/, kernels/ewmask/,
 * kernels/attn_res_ln/ and the LayerNorm module; a helper used by one family
 * stays in that family. */
#ifndef FP_DEVICE_CUH
#define FP_DEVICE_CUH

#include <stdint.h>
#include <string.h>
#include <cuda_bf16.h>

#define FP_WARP 32
#define FP_FULL_MASK 0xffffffffu

/* fp32 math on fp32 or bf16 storage: bf16 -> fp32 is exact, fp32 -> bf16
 * rounds to nearest even (as the host upload does). */
__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v)
{
	return __float2bfloat16_rn(v);
}

#define LOG2E 1.4426950408889634f  // log2(e): exp(z) = 2^(z LOG2E)

/* 2^x by the SFU alone: ex2.approx with denormal results flushed to zero
 * (exp2f's ex2.approx.f32 adds a compare and two multiplies to keep them:
 * about 4 instructions instead of 1). Its error is exp2f's wherever the
 * result is normal; a probability under 2^-126 in a row whose largest is 1
 * changes neither the row's sum nor any output by a representable amount
 * that matters (the softmax kernels and flash attention use it). */
__device__ __forceinline__ float exp2_ftz(float x)
{
	float y;

	asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
	return y;
}

/* 1 / x by the SFU alone (rcp.approx, 1 ulp), denormal results and inputs
 * flushed to zero: where x is known to be a normal float between 1 and
 * 2^126, one instruction where 1.0f / x or __fdividef wrap it in range
 * checks. */
__device__ __forceinline__ float rcp_ftz(float x)
{
	float y;

	asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
	return y;
}

/* Butterfly reduction over the 32 lanes: every lane ends with the same bits
 * (each step adds the same two values in both lanes), so results do not
 * depend on which lane reads them. */
template <bool MAX>
__device__ __forceinline__ float warp_reduce(float v)
{
#pragma unroll
	for (int o = 16; o; o >>= 1) {
		const float u = __shfl_xor_sync(FP_FULL_MASK, v, o);
		v = MAX ? fmaxf(v, u) : v + u;
	}
	return v;
}
__device__ __forceinline__ float warp_sum(float v) { return warp_reduce<false>(v); }
__device__ __forceinline__ float warp_max(float v) { return warp_reduce<true>(v); }

/* The block's dynamic shared memory (the launch's byte count), 128-byte
 * aligned. */
__device__ __forceinline__ unsigned char *dyn_smem(void)
{
	extern __shared__ __align__(128) unsigned char fp_dyn_smem[];

	return fp_dyn_smem;
}

/* This CTA's rank in its cluster and the cluster's CTA count, read from
 * the special registers without a volatile asm: the compiler may read them
 * again where it needs them instead of holding them in registers (cg's
 * cluster_group::block_rank() and num_blocks() cost a kernel whose loop
 * fills its registers 44 bytes of spills a thread, the flash loop of
 * k_fused_heads among them). */
__device__ __forceinline__ unsigned cluster_ctarank(void)
{
	unsigned r;

	asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
	return r;
}
__device__ __forceinline__ unsigned cluster_nctarank(void)
{
	unsigned n;

	asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
	return n;
}

/* blockIdx.x read by a volatile asm: a fresh read where the compiler would
 * otherwise keep the first one's value (or values derived from it) live. */
__device__ __forceinline__ unsigned ctaid_x(void)
{
	unsigned x;

	asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(x));
	return x;
}

/* threadIdx.x read the same way, for addresses a loop with no registers
 * to spare recomputes rather than holds. */
__device__ __forceinline__ unsigned tid_x(void)
{
	unsigned x;

	asm volatile("mov.u32 %0, %%tid.x;" : "=r"(x));
	return x;
}

/* The shared-state-space address of a generic pointer to shared memory, as
 * the PTX shared-memory instructions take it. */
__device__ __forceinline__ uint32_t smem_u32(const void *p)
{
	return (uint32_t)__cvta_generic_to_shared(p);
}

/* Programmatic dependent launch (sm_90). A kernel launched with the
 * attribute cudaLaunchAttributeProgrammaticStreamSerialization may be
 * scheduled while the kernel before it on its stream still runs:
 * grid_dep_wait() holds its threads until that kernel has ended and its
 * writes are visible, and grid_dep_launch(), called by every block of the
 * kernel before (or implied by a block's exit), is what lets the
 * dependent kernel be scheduled. Without such a launch, and before sm_90,
 * neither does anything. */
__device__ __forceinline__ void grid_dep_wait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void grid_dep_launch(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

/* 16 bytes global -> shared (dst a shared address), bypassing L1; only the
 * first src_bytes (0 or 16) are read, the rest zero-filled: a tile's tail
 * rows and columns load as zeros without a branch. */
__device__ __forceinline__ void cp_async16(uint32_t dst, const void *src, int src_bytes = 16)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
		     :: "r"(dst), "l"(src), "r"(src_bytes) : "memory");
}

/* The same copy with an L2 cache policy (from evict_first_policy). */
__device__ __forceinline__ void cp_async16_hint(uint32_t dst, const void *src, uint64_t pol)
{
	asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;\n"
		     :: "r"(dst), "l"(src), "l"(pol) : "memory");
}

/* An L2 policy that marks lines touched once as first to evict, so the
 * parameters that every block re-reads stay in L2. */
__device__ __forceinline__ uint64_t evict_first_policy(void)
{
	uint64_t pol;

	asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(pol));
	return pol;
}

__device__ __forceinline__ void cp_async_commit(void)
{
	asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/* Wait until at most N committed groups are still in flight. */
template <int N>
__device__ __forceinline__ void cp_async_wait(void)
{
	asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory");
}
__device__ __forceinline__ void cp_async_wait_all(void) { cp_async_wait<0>(); }

/* Four 8x8 b16 matrices from shared memory (addr a shared address), one
 * register each, in the fragment layout of mma.sync's A and B operands. */
__device__ __forceinline__ void ldsm_x4(uint32_t addr, uint32_t &r0, uint32_t &r1,
					uint32_t &r2, uint32_t &r3)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
		     : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}

/* The same four matrices, each transposed on the way: the B operand of a
 * row-major k x n tile (attention's V, keys x dims) for mma.sync. */
__device__ __forceinline__ void ldsm_x4_trans(uint32_t addr, uint32_t &r0, uint32_t &r1,
					      uint32_t &r2, uint32_t &r3)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
		     : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}

/* One 32-bit word of shared memory at addr (a shared-window address). */
__device__ __forceinline__ uint32_t lds_u32(uint32_t addr)
{
	uint32_t v;

	asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr));
	return v;
}

/* d += a b, m16n8k16, bf16 in, fp32 accumulate; a row-major (4 registers),
 * b column-major (2). */
__device__ __forceinline__ void mma_bf16(float *d, const uint32_t *a, const uint32_t *b)
{
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
		     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* fp32 on the tensor cores: 3xTF32. TF32 keeps 11 significant bits of
 * fp32's 24, so a value v splits into hi (its top 11 bits) and lo (the next
 * 11 of v - hi, which is exact), which together hold v to 2^-21 relative;
 * a product a b is then a_lo b_hi + a_hi b_lo + a_hi b_hi (the dropped
 * a_lo b_lo is 2^-22 of it): three TF32 multiplies, a third of the tensor
 * cores' TF32 rate, still over twice the CUDA cores' fp32 FMA rate on an
 * H100. The tensor cores read a TF32 operand's top 19 bits and ignore the
 * low 13, so v itself serves as hi (truncated there) and lo is v minus
 * that truncation (exact), in turn truncated when read: two instructions
 * instead of two roundings and a subtraction. The MMA rounds its fp32
 * sums toward zero: a caller keeps the chain of MMAs into one accumulator
 * short and adds such partials in fp32 (round to nearest). */
__device__ __forceinline__ uint32_t tf32_lo(uint32_t v)
{
	return __float_as_uint(__uint_as_float(v) - __uint_as_float(v & 0xffffe000u));
}

/* d += a b, m16n8k8 TF32, a row-major (4 registers), b column-major (2):
 * a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4); b0 (k = t,
 * n = g), b1 (t + 4, g); d as mma_bf16's (g = lane / 4, t = lane % 4). */
__device__ __forceinline__ void mma_tf32(float *d, const uint32_t *a, const uint32_t *b)
{
	asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
		     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* d += a b in 3xTF32: a, b raw fp32 bits, al, bl their tf32_lo (kept by
 * the caller, who reuses them across MMAs); the small products first. */
__device__ __forceinline__ void mma_3xtf32(float *d, const uint32_t *a, const uint32_t *al,
					   const uint32_t *b, const uint32_t *bl)
{
	mma_tf32(d, al, b);
	mma_tf32(d, a, bl);
	mma_tf32(d, a, b);
}

/* Two fp32 values as two bf16 in one register (a in the low half). */
__device__ __forceinline__ uint32_t pack_bf16(float a, float b)
{
	__nv_bfloat162 h = __floats2bfloat162_rn(a, b);
	uint32_t u;

	memcpy(&u, &h, sizeof u);
	return u;
}

/* Eight bf16 in one 16-byte word (element 2i the low half of word i) as
 * fp32, exactly: bf16 -> fp32 is a 16-bit shift. */
__device__ __forceinline__ void unpack_bf16x8(uint4 a, float *v)
{
	const uint32_t w[4] = { a.x, a.y, a.z, a.w };

#pragma unroll
	for (int i = 0; i < 4; i++) {
		v[2 * i] = __uint_as_float(w[i] << 16);
		v[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
	}
}

/* Eight fp32 values as bf16 (round to nearest even) in one 16-byte word,
 * the layout unpack_bf16x8 reads. */
__device__ __forceinline__ uint4 pack_bf16x8(const float *v)
{
	return make_uint4(pack_bf16(v[0], v[1]), pack_bf16(v[2], v[3]),
			  pack_bf16(v[4], v[5]), pack_bf16(v[6], v[7]));
}

/* One 16-byte access: 4 fp32 or 8 bf16 values, converted to/from fp32.
 * STREAM marks data touched once (evict-first), so parameters (gamma,
 * beta, a bias) stay cached. */
template <bool STREAM>
__device__ __forceinline__ void ld16(const float *p, float *v)
{
	float4 a = STREAM ? __ldcs((const float4 *)p) : __ldg((const float4 *)p);

	v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
}

template <bool STREAM>
__device__ __forceinline__ void ld16(const __nv_bfloat16 *p, float *v)
{
	unpack_bf16x8(STREAM ? __ldcs((const uint4 *)p) : __ldg((const uint4 *)p), v);
}

template <bool STREAM>
__device__ __forceinline__ void st16(float *p, const float *v)
{
	float4 a = make_float4(v[0], v[1], v[2], v[3]);

	if (STREAM)
		__stcs((float4 *)p, a);
	else
		*(float4 *)p = a;
}

template <bool STREAM>
__device__ __forceinline__ void st16(__nv_bfloat16 *p, const float *v)
{
	uint4 a = pack_bf16x8(v);

	if (STREAM)
		__stcs((uint4 *)p, a);
	else
		*(uint4 *)p = a;
}

/* Unpack 16 staged bytes (4 fp32 or 8 bf16) to fp32, as ld16 does. */
__device__ __forceinline__ void unpack16(uint4 a, float *v, float)
{
	v[0] = __uint_as_float(a.x), v[1] = __uint_as_float(a.y);
	v[2] = __uint_as_float(a.z), v[3] = __uint_as_float(a.w);
}

__device__ __forceinline__ void unpack16(uint4 a, float *v, __nv_bfloat16)
{
	unpack_bf16x8(a, v);
}

/* Counter-based N(0, 1) draw: element i of stream seed depends on (seed, i)
 * only, so any grid shape draws the same numbers. dev_fill_normal (kutil)
 * and the workloads' own input kernels draw with it. */
__device__ __forceinline__ uint64_t draw_hash(uint64_t v)
{
	v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ull;
	v = (v ^ (v >> 27)) * 0x94d049bb133111ebull;
	return v ^ (v >> 31);
}

__device__ __forceinline__ float draw_normal(uint64_t seed, uint64_t i)
{
	uint64_t h = draw_hash(seed ^ draw_hash(i + 0x9e3779b97f4a7c15ull));
	float u = ((uint32_t)(h >> 40) + 1.0f) * 0x1.0p-24f;  // (0, 1]
	float v = (uint32_t)(h & 0xffffffu) * 0x1.0p-24f;

	return sqrtf(-2.0f * logf(u)) * cospif(2.0f * v);
}

/* mbarriers in shared memory (sm_90: the bulk and TMA copies' completion):
 * bar is the barrier's shared-memory address (smem_addr); init sets how
 * many arrivals complete a phase; wait spins until the phase of the given
 * parity has completed. */
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count)
{
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity)
{
	asm volatile("{\n.reg .pred p;\nWAIT:\n"
		     "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
		     "@!p bra WAIT;\n}\n" :: "r"(bar), "r"(parity) : "memory");
}

/* One arrival on bar (release: this thread's memory accesses before it are
 * seen by whoever waits on the phase it completes). */
__device__ __forceinline__ void mbar_arrive(uint32_t bar)
{
	asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" :: "r"(bar) : "memory");
}

/* Barrier id among the first count threads to reach it (count a multiple
 * of 32); id 0 is __syncthreads's. */
__device__ __forceinline__ void bar_sync(int id, int count)
{
	asm volatile("bar.sync %0, %1;\n" :: "r"(id), "r"(count) : "memory");
}

/* One arrival on bar that also expects bytes of copies to complete on it. */
__device__ __forceinline__ void mbar_expect(uint32_t bar, uint32_t bytes)
{
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n"
		     :: "r"(bar), "r"(bytes) : "memory");
}

/* TMA: the box at (column c, row r) of a 2-D tensor map (a CUtensorMap in
 * parameter or global memory) into shared memory at dst, completing on bar. */
__device__ __forceinline__ void tma_load(uint32_t dst, const void *map, int c, int r,
					 uint32_t bar)
{
	asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
		     " [%0], [%1, {%2, %3}], [%4];\n"
		     :: "r"(dst), "l"((uint64_t)map), "r"(c), "r"(r), "r"(bar) : "memory");
}

#endif
