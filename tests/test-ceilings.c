/* test-ceilings.c - ceilings bookkeeping in the store, no GPU: ceilings
 * are kept per devices row (uuid, driver, clocks), counted per provenance
 * so a run knows whether to measure, and the newest of each name wins. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "probes.h"
#include "run-ceilings.h"
#include "store.h"
#include "test.h"

static void fake_device(struct probe_device *d, int clock)
{
	memset(d, 0, sizeof *d);
	snprintf(d->name, sizeof d->name, "Test GPU");
	snprintf(d->uuid, sizeof d->uuid, "GPU-00000000-1111-2222-3333-444444444444");
	d->cc_major = 9;
	d->sm_count = 132;
	d->l2_bytes = 50 << 20;
	d->sm_clock_khz = clock;
	d->mem_clock_khz = 2619000;
	d->driver_version = 13000;
}

static double newest(struct store *st, long long dev, const char *name,
		     const char *prov)
{
	sqlite3_stmt *s;
	double v = NAN;

	ASSERT(sqlite3_prepare_v2(store_db(st), "SELECT value FROM ceilings WHERE "
				  "device_id = ?1 AND name = ?2 AND provenance = ?3 "
				  "ORDER BY id DESC LIMIT 1", -1, &s, NULL) == SQLITE_OK);
	sqlite3_bind_int64(s, 1, dev);
	sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, prov, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_double(s, 0);
	sqlite3_finalize(s);
	return v;
}

int main(void)
{
	static const char *const names[] = { "dram_bw", "dram_read_bw", "l2_bw",
					     "fp32_fma", "fp64_fma", "tensor_bf16",
					     "tensor_tf32" };
	char path[] = "/tmp/fuseprof-test-ceilings-XXXXXX";
	struct probe_device d;
	struct store_device sd;
	struct ceiling c[14];
	struct store *st;
	long long dev, dev2, dev_again, n;
	unsigned seed = (unsigned)time(NULL);
	int fd = mkstemp(path);

	fprintf(stderr, "test-ceilings: seed %u\n", seed);
	srand(seed);
	ASSERT(fd >= 0);
	close(fd);
	unlink(path);  /* let the store create it */
	ASSERT_EQ(store_open(&st, path, STORE_CREATE), 0);
	fake_device(&d, 1980000);
	device_to_store(&d, &sd);
	ASSERT_EQ(store_upsert_device(st, &sd, &dev), 0);
	ASSERT_EQ(ceilings_count(st, dev, "measured", &n), 0);
	ASSERT_EQ(n, 0);

	for (int i = 0; i < 7; i++) {
		memset(&c[i], 0, sizeof c[i]);
		snprintf(c[i].name, sizeof c[i].name, "%s", names[i]);
		snprintf(c[i].unit, sizeof c[i].unit, "%s", i < 3 ? "B/s" : "FLOP/s");
		c[i].value = 1e12 * (1 + rand() % 1000);
		snprintf(c[i].provenance, sizeof c[i].provenance, "measured");
		snprintf(c[i].method, sizeof c[i].method, "test %d", i);
		c[i + 7] = c[i];
		c[i + 7].value *= 1.25;
		snprintf(c[i + 7].provenance, sizeof c[i + 7].provenance, "theoretical");
	}
	ASSERT_EQ(ceilings_save(st, dev, 0, c, 14), 0);
	ASSERT_EQ(ceilings_count(st, dev, "measured", &n), 0);
	ASSERT_EQ(n, 7);
	ASSERT_EQ(ceilings_count(st, dev, "theoretical", &n), 0);
	ASSERT_EQ(n, 7);
	ASSERT_NEAR(newest(st, dev, "fp32_fma", "measured"), c[3].value, 1e-12);

	/* Those seven are what an older fuseprof measured: the DRAM mixes it
	 * did not are missing, so a run measures again; then none is. */
	{
		char miss[256];
		struct ceiling mix[2];

		ASSERT_EQ(ceilings_missing(st, dev, &n, miss, sizeof miss), 0);
		ASSERT_EQ(n, 2);
		ASSERT_STR_EQ(miss, "dram_add_bw, dram_write_bw");
		mix[0] = mix[1] = c[0];
		snprintf(mix[0].name, sizeof mix[0].name, "dram_add_bw");
		snprintf(mix[1].name, sizeof mix[1].name, "dram_write_bw");
		snprintf(mix[1].provenance, sizeof mix[1].provenance, "theoretical");
		ASSERT_EQ(ceilings_save(st, dev, 0, mix, 2), 0);
		/* A theoretical value is no measurement. */
		ASSERT_EQ(ceilings_missing(st, dev, &n, miss, sizeof miss), 0);
		ASSERT_EQ(n, 1);
		ASSERT_STR_EQ(miss, "dram_write_bw");
		snprintf(mix[1].provenance, sizeof mix[1].provenance, "measured");
		ASSERT_EQ(ceilings_save(st, dev, 0, &mix[1], 1), 0);
		ASSERT_EQ(ceilings_missing(st, dev, &n, miss, sizeof miss), 0);
		ASSERT_EQ(n, 0);
		ASSERT_STR_EQ(miss, "");
		ASSERT_EQ(ceilings_count(st, dev, "measured", &n), 0);
		ASSERT_EQ(n, PROBE_NMEASURED);
	}

	/* Same uuid, driver and clocks: the same row, so its ceilings are reused. */
	ASSERT_EQ(store_upsert_device(st, &sd, &dev_again), 0);
	ASSERT_EQ(dev_again, dev);
	/* Other clocks: another row, nothing to reuse. */
	fake_device(&d, 1755000);
	device_to_store(&d, &sd);
	ASSERT_EQ(store_upsert_device(st, &sd, &dev2), 0);
	ASSERT(dev2 != dev);
	ASSERT_EQ(ceilings_count(st, dev2, "measured", &n), 0);
	ASSERT_EQ(n, 0);
	ASSERT_EQ(ceilings_missing(st, dev2, &n, NULL, 0), 0);
	ASSERT_EQ(n, PROBE_NMEASURED);

	/* Remeasuring appends; the newest value is the one that counts. */
	c[0].value *= 0.5;
	ASSERT_EQ(ceilings_save(st, dev, 0, c, 1), 0);
	ASSERT_NEAR(newest(st, dev, "dram_bw", "measured"), c[0].value, 1e-12);
	ASSERT_EQ(ceilings_count(st, dev, "measured", &n), 0);
	ASSERT_EQ(n, PROBE_NMEASURED);

	/* A bad value rolls the whole batch back. */
	c[1].value = -1;
	ASSERT(ceilings_save(st, dev2, 0, c, 2) < 0);
	ASSERT_EQ(ceilings_count(st, dev2, "measured", &n), 0);
	ASSERT_EQ(n, 0);

	ASSERT_EQ(ceilings_print(st, 0, TABLE_CSV), 0);
	store_close(st);
	unlink(path);
	return 0;
}
