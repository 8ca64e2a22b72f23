/* run-ceilings.h - the ceilings bookkeeping `fuseprof run` and `fuseprof
 * ceilings` share: measured once per device, driver and clocks, stored
 * per devices row, the newest of each name and provenance printed. */
#ifndef FP_RUN_CEILINGS_H
#define FP_RUN_CEILINGS_H

#include "probes.h"
#include "store.h"
#include "table.h"

/* Copy device facts into the store's row form (strings borrowed from d). */
void device_to_store(const struct probe_device *d, struct store_device *out);

/* Number of ceilings of provenance prov stored for device_id, in *n. */
int ceilings_count(struct store *st, long long device_id, const char *prov,
		   long long *n);

/* How many of the ceilings a measurement stores (PROBE_MEASURED_CEILINGS)
 * device_id has no measured value of, in *n; names (size bytes) gets them
 * joined by ", " ("" when none). A database measured by an older fuseprof
 * lacks the newer ones: the caller measures again. Returns 0 or -1. */
int ceilings_missing(struct store *st, long long device_id, long long *n,
		     char *names, size_t size);

/* Store n ceilings for device_id (run_id 0 = none) in one transaction. */
int ceilings_save(struct store *st, long long device_id, long long run_id,
		  const struct ceiling *c, int n);

/* Print the newest ceiling of each name and provenance for device_id
 * (0 = every device) as a table. Returns 0 or -1. */
int ceilings_print(struct store *st, long long device_id, enum table_format f);

/* Measure (verbose: progress on stderr) the measured and theoretical
 * ceilings of the current device into out[max]; returns how many or -1. */
int ceilings_collect(const struct probe_device *d, struct ceiling *out, int max,
		     int verbose);

#endif
