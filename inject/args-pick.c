/* args-pick.c - which words of a launch's arguments are device pointers
 * (args.h's args_pick): apart from the driver, so that it can be tested
 * without a GPU. */
#include "config.h"

#include <string.h>

#include "args.h"

int args_pick(int n, const size_t *size, const void *const *val,
	      uint64_t (*dev_bytes)(uint64_t word, void *arg), void *arg, uint64_t *out,
	      uint64_t *bytes, int max)
{
	int got = 0, cut = 0, words = 0;

	for (int i = 0; i < n && !cut; i++) {
		for (size_t w = 0; w + 8 <= size[i]; w += 8) {
			uint64_t v, b;
			int seen = 0;

			if (++words > ARGS_SCAN_WORDS) {
				cut = 1;
				break;
			}
			memcpy(&v, (const char *)val[i] + w, 8);
			if (v < (1ull << 32))
				continue;
			for (int j = 0; j < got && !seen; j++)
				seen = out[j] == v;
			if (seen || !(b = dev_bytes(v, arg)))
				continue;
			if (got == max) {
				cut = 1;
				break;
			}
			out[got] = v;
			bytes[got++] = b;
		}
	}
	return cut ? -1 - got : got;
}
