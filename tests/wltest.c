/* wltest.c - checks on a workload's contract shared by the workloads' CPU tests. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "wltest.h"

void assert_shapes_run(const struct workload *w, const char *specs, int need)
{
	char *copy = strdup(specs), *save = NULL, why[256];
	int n = 0;

	for (char *t = strtok_r(copy, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
		struct fp_shape s;

		if (workload_parse_shape(w, t, &s, why, sizeof why))
			FAIL("%s: shape '%s' does not parse: %s", w->name, t, why);
		for (int dt = 0; dt < FP_NDTYPES; dt++)
			if (w->validate(&s, (enum fp_dtype)dt, why, sizeof why))
				FAIL("%s: shape '%s' rejected: %s", w->name, t, why);
		n++;
	}
	ASSERT(n >= need);
	free(copy);
}
