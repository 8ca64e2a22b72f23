/* test-colsum-emu.cc - the column sums' second pass (kernels/ewmask/
 * colsum.cuh: ew_colsum_kernel, dbias of the bias+dropout+residual and
 * bias+ReLU backwards), its CUDA source run on the CPU by tests/cuda-emu.h
 * in its GPU launch shape (blocks of 32 columns x 32 lanes): partial rows
 * from one to past the rows kernels' most, fewer than, as many as and more
 * than the lanes and their loads in flight, N past the last block of
 * columns; both output types. Each dbias against the double sum of its
 * column (within fp32's summation bound), outputs poisoned first and the
 * columns past N left alone, the same bits from a second run, and the
 * bits of the order the kernel documents (lane l adds rows l, l + 32, ...
 * in order; a butterfly of shuffles adds the lanes). No GPU: what it
 * cannot show is the hardware's (timing). */
#include "config.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "cuda-emu.h"

/* What device.cuh gives the kernel on the GPU. */
#define FP_FULL_MASK 0xffffffffu
template <typename T> inline T from_f(float v);
template <> inline float from_f<float>(float v) { return v; }
template <> inline __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
inline void grid_dep_wait(void) {}  // one kernel: nothing to wait for

#include "ewmask/colsum.cuh"

#include "emu-check.h"

static float to_float(float v) { return v; }
static float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

static uint32_t bits(float v)
{
	uint32_t u;

	std::memcpy(&u, &v, sizeof u);
	return u;
}

/* Column j's sum in the documented order, in fp32. */
static float documented(const std::vector<float> &part, long prows, long N, long j)
{
	float lane[EW_CS_LANES];

	for (int l = 0; l < EW_CS_LANES; l++) {
		lane[l] = 0.f;
		for (long p = l; p < prows; p += EW_CS_LANES)
			lane[l] += part[p * N + j];
	}
	for (int o = EW_CS_LANES / 2; o >= 1; o >>= 1) {
		float next[EW_CS_LANES];

		for (int l = 0; l < EW_CS_LANES; l++)
			next[l] = lane[l] + lane[l ^ o];
		std::memcpy(lane, next, sizeof lane);
	}
	return lane[0];
}

template <typename T>
static void run(const std::vector<float> &part, long prows, long N, std::vector<T> &out)
{
	const float *pp = part.data();
	T *op = out.data();

	for (auto &v : out)
		v = from_f<T>(NAN);
	emu_launch(dim3((unsigned)((N + EW_CS_COLS - 1) / EW_CS_COLS)),
		   dim3(EW_CS_COLS, EW_CS_LANES), [=] { ew_colsum_kernel<T>(pp, prows, N, op); });
}

template <typename T>
static void check(long prows, long N, std::mt19937_64 &rng, const char *dtype)
{
	std::uniform_real_distribution<float> u(-1.f, 1.f);
	std::vector<float> part(prows * N);
	std::vector<T> out(N + EW_CS_COLS), again(N + EW_CS_COLS);
	double worst = 0;
	int wrong_order = 0, tail = 0;

	/* magnitudes that vary by column and row, so that the order shows */
	for (long p = 0; p < prows; p++)
		for (long j = 0; j < N; j++)
			part[p * N + j] = u(rng) * std::ldexp(1.f, (int)((p * 7 + j * 3) % 19) - 9);
	run<T>(part, prows, N, out);
	run<T>(part, prows, N, again);
	for (long j = 0; j < N; j++) {
		double ref = 0, mag = 0;
		const float got = to_float(out[j]), doc = documented(part, prows, N, j);

		for (long p = 0; p < prows; p++) {
			ref += part[p * N + j];
			mag += std::fabs(part[p * N + j]);
		}
		/* fp32 summation, then the output type's rounding */
		const double bound = (double)prows * 0x1p-23 * mag +
				     (sizeof(T) == 2 ? 0x1p-8 : 0x1p-23) * std::fabs(ref);
		const double err = std::isfinite(got) ? std::fabs(got - ref) : INFINITY;

		worst = std::fmax(worst, mag > 0 ? err / (bound + 1e-30) : err);
		CHECK(err <= bound, "%s prows %ld N %ld column %ld: %.9g against %.9g (bound %.3g)",
		      dtype, prows, N, j, got, ref, bound);
		wrong_order += bits(got) != bits(to_float(from_f<T>(doc)));
		CHECK(bits(got) == bits(to_float(again[j])), "%s prows %ld N %ld column %ld: "
		      "another run gave other bits", dtype, prows, N, j);
	}
	for (long j = N; j < N + EW_CS_COLS; j++)
		tail += !std::isnan(to_float(out[j]));
	CHECK(wrong_order == 0, "%s prows %ld N %ld: %d columns not in the documented order",
	      dtype, prows, N, wrong_order);
	CHECK(tail == 0, "%s prows %ld N %ld: %d columns past N written", dtype, prows, N, tail);
	std::printf("%s %s prows %4ld N %3ld: %ld columns, worst error %.2g of its bound\n",
		    wrong_order || tail ? "FAIL" : "ok  ", dtype, prows, N, N, worst);
}

int main(void)
{
	static const long shapes[][2] = {
		{ 1, 1 }, { 1, 33 }, { 7, 32 }, { 32, 5 }, { 33, 64 }, { 255, 40 },
		{ 256, 33 }, { 257, 31 }, { 300, 70 }, { 1024, 32 },
	};
	std::mt19937_64 rng(20261127);

	for (const auto &s : shapes) {
		check<float>(s[0], s[1], rng, "fp32");
		check<__nv_bfloat16>(s[0], s[1], rng, "bf16");
	}
	if (emu_failures)
		std::printf("%d failures\n", emu_failures);
	return emu_failures ? 1 : 0;
}
