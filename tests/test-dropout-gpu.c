/* test-dropout-gpu.c - the dropout masks on the GPU (skips with 77 without
 * one): at about 16M elements the keep rate is within 4 sigma of 1 - p for
 * p = 0, 0.1 and 0.5, and the mask each variant makes (the unfused and
 * fused_bytemask byte masks, fused_mask's bits, the one fused_regen's
 * output implies, and the zeros of each backward's dx) is the CPU's
 * Philox mask, bit for bit: the forward and the backward agree on it. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "dropout/dropout.h"
#include "test.h"

/* Compare got with the CPU mask; FAIL naming what and where. */
static void same(const unsigned char *got, const unsigned char *want, size_t n,
		 const char *what, long drop)
{
	for (size_t e = 0; e < n; e++)
		if (got[e] != want[e])
			FAIL("drop=%ld: %s: element %zu is %d, the CPU mask's %d", drop,
			     what, e, got[e], want[e]);
}

int main(void)
{
	static const char *const names[4] = {
		"unfused", "fused_mask", "fused_regen", "fused_bytemask",
	};
	const long M = 4096, N = 4100;  /* 16.8M elements; N % 32 != 0 too below */
	const long drops[3] = { 0, 100, 500 };
	const unsigned long long seed = 0xd20d;
	const size_t E = (size_t)M * N;
	unsigned char *cpu, *implied, *saved;
	int count = 0;

	if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
		SKIP("no CUDA device");
	gpu_test_lock();
	cpu = malloc(E);
	implied = malloc(E);
	saved = malloc(E);
	if (!cpu || !implied || !saved)
		return TEST_HARD_ERROR;
	for (int d = 0; d < 3; d++) {
		const long drop = drops[d];
		const double p = drop / 1000.0, sigma = sqrt((double)E * p * (1 - p));
		double kept = 0;

		bda_ref_mask(bda_seed(seed, 0), drop, 0, E, cpu);
		for (int v = 0; v < 4; v++) {
			char what[64];

			if (bda_probe(0, v, M, N, drop, seed, implied, saved))
				return TEST_HARD_ERROR;
			snprintf(what, sizeof what, "%s forward output", names[v]);
			same(implied, cpu, E, what, drop);
			if (v != BDA_FUSED_REGEN) {
				snprintf(what, sizeof what, "%s saved mask", names[v]);
				same(saved, cpu, E, what, drop);
			}
			if (bda_probe(1, v, M, N, drop, seed, implied, NULL))
				return TEST_HARD_ERROR;
			snprintf(what, sizeof what, "%s backward dx", names[v]);
			same(implied, cpu, E, what, drop);
		}
		for (size_t e = 0; e < E; e++)
			kept += implied[e];
		if (fabs(kept - E * (1 - p)) > 4 * sigma)
			FAIL("drop=%ld: kept %.0f of %zu on the GPU, expected %.0f +- %.0f",
			     drop, kept, E, E * (1 - p), 4 * sigma);
		printf("ok   drop=%ld: kept %.0f of %zu (%.2f sigma); every variant's "
		       "mask is the CPU's\n", drop, kept, E,
		       sigma ? (kept - E * (1 - p)) / sigma : 0.0);
	}
	/* a shape of whole words and 16-byte rows: the vector kernels */
	{
		const long M2 = 2048, N2 = 4096;

		bda_ref_mask(bda_seed(seed, 0), 100, 0, (size_t)M2 * N2, cpu);
		for (int v = 0; v < 4; v++) {
			if (bda_probe(0, v, M2, N2, 100, seed, implied, saved))
				return TEST_HARD_ERROR;
			same(implied, cpu, (size_t)M2 * N2, names[v], 100);
			if (v != BDA_FUSED_REGEN)
				same(saved, cpu, (size_t)M2 * N2, names[v], 100);
			if (bda_probe(1, v, M2, N2, 100, seed, implied, NULL))
				return TEST_HARD_ERROR;
			same(implied, cpu, (size_t)M2 * N2, names[v], 100);
		}
		printf("ok   M=%ld N=%ld: forward and backward masks agree\n", M2, N2);
	}
	free(cpu);
	free(implied);
	free(saved);
	return 0;
}
