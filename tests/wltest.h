/* wltest.h - checks on a workload's contract that every workload's CPU test
 * shares. */
#ifndef FP_WLTEST_H
#define FP_WLTEST_H

#include "workload.h"

/* Every shape in specs (';'-separated, a suite/quick/tests field) parses
 * and passes validate() for every dtype, and there are at least need of
 * them; exits the test with a failure otherwise. */
void assert_shapes_run(const struct workload *w, const char *specs, int need);

#endif
