/* test-args.c - which words of a kernel launch's arguments are device
 * pointers (args_pick, inject/args-pick.c), against a fake map of device
 * allocations: pointers alone and inside structs, at the 8-byte words a
 * 64-bit ABI aligns them to; small integers, host addresses and words
 * past a parameter's size are none; each pointer is listed once, in order;
 * a list longer than its room, or arguments longer than the scan, is cut
 * and says so. No GPU. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "test.h"

/* Two fake allocations: [A, A + 1 MiB) and [B, B + 4 KiB). */
#define A 0x7f0000000000ull
#define B 0x7f1000000000ull

static int calls;

static uint64_t fake_dev(uint64_t w, void *arg)
{
	(void)arg;
	calls++;
	if (w >= A && w < A + (1u << 20))
		return A + (1u << 20) - w;
	return w >= B && w < B + 4096 ? B + 4096 - w : 0;
}

int main(void)
{
	uint64_t out[8], bytes[8];
	/* a kernel (const float *x, float *y, float a, int n, struct { const
	 * float *p[2]; int n; } q, double d): sizes 8, 8, 4, 4, 24, 8 */
	uint64_t x = A + 256, y = B, q[3] = { A + 256, A + 4096, 12 };
	float a = 2.f;
	int n = 1000;
	double d = 1e300;
	const void *val[] = { &x, &y, &a, &n, q, &d };
	size_t size[] = { 8, 8, 4, 4, 24, 8 };
	int got;

	got = args_pick(6, size, val, fake_dev, NULL, out, bytes, 8);
	ASSERT_EQ(got, 3);
	ASSERT_EQ(out[0], A + 256);   /* x */
	ASSERT_EQ(out[1], B);         /* y */
	ASSERT_EQ(out[2], A + 4096);  /* q.p[1]; q.p[0] is x again */
	/* each with the bytes to its allocation's end */
	ASSERT_EQ(bytes[0], (1u << 20) - 256);
	ASSERT_EQ(bytes[1], 4096);
	ASSERT_EQ(bytes[2], (1u << 20) - 4096);
	/* asked about: x, y, q.p[1] and d's bits; not q.p[0] (x, listed),
	 * q.n (under 4 GiB), nor the 4-byte parameters */
	ASSERT_EQ(calls, 4);
	printf("ok   pointers alone and in a struct, each once\n");

	/* an address in no allocation (a host pointer) is none; a parameter
	 * of 4 bytes holding half of an address is never read as one */
	{
		uint64_t host = 0x5600000010a0ull, in_b_end = B + 4096;
		uint32_t half = (uint32_t)(A >> 32);
		const void *v2[] = { &host, &in_b_end, &half };
		size_t s2[] = { 8, 8, 4 };

		ASSERT_EQ(args_pick(3, s2, v2, fake_dev, NULL, out, bytes, 8), 0);
	}
	printf("ok   host addresses, one past an allocation, 4-byte halves\n");

	/* more pointers than room: cut, the first ones kept */
	{
		uint64_t many[6] = { A, A + 8, A + 16, B, B + 8, B + 16 };
		const void *v3[] = { many };
		size_t s3[] = { sizeof many };

		got = args_pick(1, s3, v3, fake_dev, NULL, out, bytes, 4);
		ASSERT_EQ(got, -1 - 4);
		ASSERT_EQ(out[3], B);
		ASSERT_EQ(args_pick(1, s3, v3, fake_dev, NULL, out, bytes, 6), 6);
	}
	printf("ok   a list longer than its room is cut\n");

	/* arguments longer than the scan (a 5 KB struct of pointers): cut at
	 * ARGS_SCAN_WORDS words */
	{
		static uint64_t big[640];
		const void *v4[] = { big };
		size_t s4[] = { sizeof big };

		for (size_t i = 0; i < 640; i++)
			big[i] = i % 2 ? 7 : A + 64 * (i / 2);
		got = args_pick(1, s4, v4, fake_dev, NULL, out, bytes, 8);
		ASSERT_EQ(got, -1 - 8);
		got = args_pick(1, s4, v4, fake_dev, NULL, NULL, NULL, 0);
		ASSERT_EQ(got, -1);
		memset(big, 0, sizeof big);
		big[ARGS_SCAN_WORDS] = B;   /* the first word past the scan */
		ASSERT_EQ(args_pick(1, s4, v4, fake_dev, NULL, out, bytes, 8), -1);
		big[ARGS_SCAN_WORDS - 1] = A;
		ASSERT_EQ(args_pick(1, s4, v4, fake_dev, NULL, out, bytes, 8), -1 - 1);
		ASSERT_EQ(out[0], A);
	}
	printf("ok   arguments past the scan are cut\n");
	return 0;
}
