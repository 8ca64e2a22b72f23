/* cuda-emu.h - enough of CUDA's device language to run a kernel's source on
 * the CPU, for tests of kernels on machines without a GPU: a block's
 * threads run as threads, one block at a time (so a kernel's __shared__
 * arrays are function statics, shared by the block); __syncthreads and
 * __syncwarp are barriers; a warp shuffle goes through a per-warp exchange
 * between two barriers; __ldg and __ldcs are plain loads. Every lane of a
 * warp must reach each shuffle and __syncwarp, as the hardware wants of
 * them with a full mask; the masks themselves are not checked. Slow (a
 * barrier a shuffle): small shapes only. One-dimensional blocks. C++20;
 * compile with -fno-strict-aliasing, since kernels read a 16-byte vector
 * through a pointer of another type, which CUDA allows and C++ does not. */
#ifndef FP_CUDA_EMU_H
#define FP_CUDA_EMU_H

#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include <cuda_bf16.h>
#include <vector_types.h>

/* CUDA's headers define these for a host compiler; the kernels want them
 * as plain C++ here. */
#undef __global__
#undef __device__
#undef __forceinline__
#undef __launch_bounds__
#undef __shared__
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static

inline thread_local uint3 threadIdx, blockIdx;
inline dim3 blockDim, gridDim;

inline std::barrier<> *emu_block_barrier;
inline std::vector<std::unique_ptr<std::barrier<>>> emu_warp_barriers;
inline float emu_exchange[32][32];  /* [warp][lane] */

inline void __syncthreads(void)
{
	emu_block_barrier->arrive_and_wait();
}

inline void __syncwarp(unsigned mask = 0xffffffffu)
{
	(void)mask;
	emu_warp_barriers[threadIdx.x >> 5]->arrive_and_wait();
}

inline float __shfl_xor_sync(unsigned mask, float v, int lane_mask)
{
	const unsigned w = threadIdx.x >> 5, l = threadIdx.x & 31;
	float r;

	emu_exchange[w][l] = v;
	__syncwarp(mask);
	r = emu_exchange[w][l ^ (unsigned)lane_mask];
	__syncwarp(mask);
	return r;
}

template <typename T>
inline T __ldg(const T *p)
{
	return *p;
}

template <typename T>
inline T __ldcs(const T *p)
{
	return *p;
}

inline float rsqrtf(float x)
{
	return 1.0f / std::sqrt(x);
}

inline int min(int a, int b)
{
	return a < b ? a : b;
}

/* mma.sync.m16n8k16.row.col.f32.bf16.bf16.f32, d += a b, as PTX lays out
 * the fragments (g = lane / 4, t = lane % 4): a[q] holds A's row g + 8 (q
 * & 1), columns 2t + 8 (q >> 1) and the next (the lower column in the low
 * half); b[h] holds B's rows 2t + 8h and the next, column g; d[q], D's row
 * g + 8 (q >> 1), column 2t + (q & 1). Products summed in fp32, k in
 * order. */
struct emu_mma_frag {
	uint32_t a[4], b[2];
};
inline emu_mma_frag emu_mma_frags[32][32];  /* [warp][lane] */

inline float __uint_as_float(uint32_t u)
{
	float f;

	std::memcpy(&f, &u, sizeof f);
	return f;
}

/* The bf16 in the low or high half of r, as a float. */
inline float emu_bf16_half(uint32_t r, int high)
{
	return __uint_as_float(high ? r & 0xffff0000u : r << 16);
}

inline void emu_mma_bf16_16816(float *d, const uint32_t *a, const uint32_t *b)
{
	const unsigned w = threadIdx.x >> 5, l = threadIdx.x & 31;
	const unsigned g = l >> 2, t = l & 3;

	for (int q = 0; q < 4; q++)
		emu_mma_frags[w][l].a[q] = a[q];
	emu_mma_frags[w][l].b[0] = b[0];
	emu_mma_frags[w][l].b[1] = b[1];
	__syncwarp();
	for (int q = 0; q < 4; q++) {
		const unsigned row = g + 8 * (q >> 1), col = 2 * t + (q & 1);
		float acc = d[q];

		for (unsigned k = 0; k < 16; k++) {
			/* A(row, k): lane (row % 8, (k % 8) / 2), register
			 * (row >= 8) + 2 (k >= 8), half k % 2; B(k, col): lane
			 * (col, (k % 8) / 2), register k >= 8, half k % 2 */
			const unsigned la = (row % 8) * 4 + (k % 8) / 2, lb = col * 4 + (k % 8) / 2;
			const float av = emu_bf16_half(
				emu_mma_frags[w][la].a[(row >= 8) + 2 * (k >= 8)], k % 2);
			const float bv = emu_bf16_half(emu_mma_frags[w][lb].b[k >= 8], k % 2);

			acc += av * bv;
		}
		d[q] = acc;
	}
	__syncwarp();
}

/* Run kernel() as a grid of grid.x x grid.y blocks of block.x threads (a
 * multiple of 32, at most 1024), blocks one after another. */
template <typename F>
void emu_launch(dim3 grid, dim3 block, F kernel)
{
	gridDim = grid;
	blockDim = block;
	for (unsigned by = 0; by < grid.y; by++)
		for (unsigned bx = 0; bx < grid.x; bx++) {
			std::barrier<> bar((std::ptrdiff_t)block.x);
			std::vector<std::thread> threads;

			emu_block_barrier = &bar;
			emu_warp_barriers.clear();
			for (unsigned w = 0; w < block.x / 32; w++)
				emu_warp_barriers.push_back(std::make_unique<std::barrier<>>(32));
			for (unsigned t = 0; t < block.x; t++)
				threads.emplace_back([=] {
					threadIdx = uint3{ t, 0, 0 };
					blockIdx = uint3{ bx, by, 0 };
					kernel();
				});
			for (auto &th : threads)
				th.join();
		}
}

#endif
