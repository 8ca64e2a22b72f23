/* emu-check.h - the check of the tests that run kernels' sources on the
 * CPU (cuda-emu.h): CHECK(cond, printf-args) prints a "not ok" line with
 * the file and line where cond is false and counts it in emu_failures,
 * which the test's exit status reports. C++; one test program a file. */
#ifndef FP_EMU_CHECK_H
#define FP_EMU_CHECK_H

#include <cstdio>

static int emu_failures;

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			std::printf("not ok %s:%d: ", __FILE__, __LINE__);     \
			std::printf(__VA_ARGS__);                              \
			std::printf("\n");                                     \
			emu_failures++;                                        \
		}                                                              \
	} while (0)

#endif
