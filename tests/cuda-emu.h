/* cuda-emu.h - enough of CUDA's device language to run a kernel's source on
 * the CPU, for tests of kernels on machines without a GPU: a block's
 * threads run as threads, one block at a time (so a kernel's __shared__
 * arrays are function statics, shared by the block); __syncthreads and
 * __syncwarp are barriers; a warp shuffle goes through a per-warp exchange
 * between two barriers; __ldg and __ldcs are plain loads. Every lane of a
 * warp must reach each shuffle and __syncwarp, as the hardware wants of
 * them with a full mask; the masks themselves are not checked. Slow (a
 * barrier a shuffle): small shapes only. Blocks of one or two dimensions,
 * warps of 32 consecutive threads in x-major order, as on the GPU. C++20;
 * compile with -fno-strict-aliasing, since kernels read a 16-byte vector
 * through a pointer of another type, which CUDA allows and C++ does not. */
#ifndef FP_CUDA_EMU_H
#define FP_CUDA_EMU_H

#include <barrier>
#include <cmath>
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

/* The thread's index in its block, x fastest: its warp is this / 32. */
inline unsigned emu_tid(void)
{
	return threadIdx.y * blockDim.x + threadIdx.x;
}

inline void __syncthreads(void)
{
	emu_block_barrier->arrive_and_wait();
}

inline void __syncwarp(unsigned mask = 0xffffffffu)
{
	(void)mask;
	emu_warp_barriers[emu_tid() >> 5]->arrive_and_wait();
}

inline float __shfl_xor_sync(unsigned mask, float v, int lane_mask)
{
	const unsigned w = emu_tid() >> 5, l = emu_tid() & 31;
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

/* Run kernel() as a grid of grid.x x grid.y blocks of block.x x block.y
 * threads (a multiple of 32, at most 1024), blocks one after another. */
template <typename F>
void emu_launch(dim3 grid, dim3 block, F kernel)
{
	gridDim = grid;
	blockDim = block;
	for (unsigned by = 0; by < grid.y; by++)
		for (unsigned bx = 0; bx < grid.x; bx++) {
			const unsigned nt = block.x * block.y;
			std::barrier<> bar((std::ptrdiff_t)nt);
			std::vector<std::thread> threads;

			emu_block_barrier = &bar;
			emu_warp_barriers.clear();
			for (unsigned w = 0; w < nt / 32; w++)
				emu_warp_barriers.push_back(std::make_unique<std::barrier<>>(32));
			for (unsigned t = 0; t < nt; t++)
				threads.emplace_back([=] {
					threadIdx = uint3{ t % block.x, t / block.x, 0 };
					blockIdx = uint3{ bx, by, 0 };
					kernel();
				});
			for (auto &th : threads)
				th.join();
		}
}

#endif
