/* philox.h - Philox 4x32-10 (Salmon et al., "Parallel random numbers: as
 * easy as 1, 2, 3", SC'11; the Random123 reference) and the dropout mask
 * built on it, one definition for host C and device code, so the CPU
 * reference reproduces the GPU's mask bit for bit.
 *
 * The mask of bias_dropout_add: element e = i N + j (64-bit, row-major over
 * M x N) draws word e % 4 of philox4x32_10(counter (e/4 low 32 bits, e/4 high
 * 32 bits, 0, 0), key (seed low 32 bits, seed high 32 bits)); it is kept iff
 * that word >= dropout_threshold(p), i.e. with probability 1 - t / 2^32 where
 * t = round(p 2^32). Kept values are scaled by 1 / (1 - p). The mask is a
 * pure function of (seed, e): any thread layout draws the same one. */
#ifndef FP_PHILOX_H
#define FP_PHILOX_H

#include <stdint.h>

#ifdef __CUDACC__
#define PHILOX_FN static inline __host__ __device__
#else
#define PHILOX_FN static inline
#endif

#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u  /* golden ratio */
#define PHILOX_W1 0xBB67AE85u  /* sqrt(3) - 1 */

struct philox4 {
	uint32_t v[4];
};

PHILOX_FN uint32_t philox_mulhilo(uint32_t a, uint32_t b, uint32_t *hi)
{
#ifdef __CUDA_ARCH__
	*hi = __umulhi(a, b);
	return a * b;
#else
	uint64_t p = (uint64_t)a * b;

	*hi = (uint32_t)(p >> 32);
	return (uint32_t)p;
#endif
}

/* Ten rounds on counter c with key (k0, k1); the key is bumped by the Weyl
 * constants between rounds, as Random123's philox4x32_R(10, ...). */
PHILOX_FN struct philox4 philox4x32_10(struct philox4 c, uint32_t k0, uint32_t k1)
{
	for (int r = 0; r < 10; r++) {
		uint32_t hi0, hi1, lo0, lo1;

		if (r) {
			k0 += PHILOX_W0;
			k1 += PHILOX_W1;
		}
		lo0 = philox_mulhilo(PHILOX_M0, c.v[0], &hi0);
		lo1 = philox_mulhilo(PHILOX_M1, c.v[2], &hi1);
		c.v[0] = hi1 ^ c.v[1] ^ k0;
		c.v[1] = lo1;
		c.v[2] = hi0 ^ c.v[3] ^ k1;
		c.v[3] = lo0;
	}
	return c;
}

/* The four words of elements 4q .. 4q+3 of the mask stream of seed. */
PHILOX_FN struct philox4 dropout_words(uint64_t seed, uint64_t q)
{
	struct philox4 c;

	c.v[0] = (uint32_t)q;
	c.v[1] = (uint32_t)(q >> 32);
	c.v[2] = 0;
	c.v[3] = 0;
	return philox4x32_10(c, (uint32_t)seed, (uint32_t)(seed >> 32));
}

/* t = round(p 2^32) for p = drop / 1000 (drop in [0, 999] per mille), in
 * integers: p = 0 keeps everything (t = 0), p = 0.5 gives t = 2^31. */
PHILOX_FN uint32_t dropout_threshold(long drop)
{
	return (uint32_t)(((uint64_t)drop * 0x100000000ull + 500u) / 1000u);
}

/* 1 if element e is kept under seed and threshold t, else 0. */
PHILOX_FN int dropout_keep(uint64_t seed, uint32_t t, uint64_t e)
{
	return dropout_words(seed, e >> 2).v[e & 3] >= t;
}

#endif
