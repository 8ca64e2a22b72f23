/* run-ceilings.c - the ceilings bookkeeping that `run` and `ceilings`
 * share: a device's row in the store, how many ceilings it has, storing,
 * printing and measuring them. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "error.h"
#include "probes.h"
#include "run-ceilings.h"
#include "store.h"
#include "table.h"
#include "util.h"

void device_to_store(const struct probe_device *d, struct store_device *out)
{
	memset(out, 0, sizeof *out);
	out->uuid = d->uuid;
	out->name = d->name;
	out->cc_major = d->cc_major;
	out->cc_minor = d->cc_minor;
	out->sm_count = d->sm_count;
	out->l2_bytes = d->l2_bytes;
	out->mem_bytes = d->mem_bytes;
	out->mem_bus_bits = d->mem_bus_bits;
	out->sm_clock_khz = d->sm_clock_khz;
	out->mem_clock_khz = d->mem_clock_khz;
	out->driver_version = d->driver_version;
	out->runtime_version = d->runtime_version;
	out->cupti_version = d->cupti_version;
}

int ceilings_count(struct store *st, long long device_id, const char *prov,
		   long long *n)
{
	sqlite3_stmt *s = NULL;
	int rc;

	if (sqlite3_prepare_v2(store_db(st), "SELECT count(DISTINCT name) FROM "
			       "ceilings WHERE device_id = ?1 AND provenance = ?2",
			       -1, &s, NULL) != SQLITE_OK)
		return store_error(st, "cannot read ceilings from");
	sqlite3_bind_int64(s, 1, device_id);
	sqlite3_bind_text(s, 2, prov, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	*n = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : store_error(st, "cannot read ceilings from");
}

int ceilings_missing(struct store *st, long long device_id, long long *n,
		     char *names, size_t size)
{
	static const char *const want[] = { PROBE_MEASURED_CEILINGS };
	sqlite3_stmt *s = NULL;
	size_t len = 0;

	*n = 0;
	if (size)
		names[0] = '\0';
	if (sqlite3_prepare_v2(store_db(st), "SELECT 1 FROM ceilings WHERE "
			       "device_id = ?1 AND name = ?2 AND provenance = "
			       "'measured' LIMIT 1", -1, &s, NULL) != SQLITE_OK)
		return store_error(st, "cannot read ceilings from");
	sqlite3_bind_int64(s, 1, device_id);
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		int rc;

		sqlite3_bind_text(s, 2, want[i], -1, SQLITE_STATIC);
		rc = sqlite3_step(s);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
			sqlite3_finalize(s);
			return store_error(st, "cannot read ceilings from");
		}
		if (rc == SQLITE_DONE) {
			(*n)++;
			if (len < size)
				len += (size_t)snprintf(names + len, size - len, "%s%s",
							len ? ", " : "", want[i]);
		}
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	return 0;
}

int ceilings_save(struct store *st, long long device_id, long long run_id,
		  const struct ceiling *c, int n)
{
	if (store_begin(st))
		return -1;
	for (int i = 0; i < n; i++) {
		struct store_ceiling sc = { c[i].name, c[i].unit, c[i].value,
					    c[i].provenance, c[i].method };

		if (store_insert_ceiling(st, device_id, run_id, &sc)) {
			store_rollback(st);
			return -1;
		}
	}
	return store_commit(st);
}

/* "3012.4 GB/s", "51.7 TFLOP/s" */
static void human_rate(char *buf, size_t n, double v, const char *unit)
{
	const char *base = !strcmp(unit, "B/s") ? "B/s" : "FLOP/s";

	if (v >= 1e12)
		snprintf(buf, n, "%.1f T%s", v / 1e12, base);
	else if (v >= 1e9)
		snprintf(buf, n, "%.1f G%s", v / 1e9, base);
	else
		snprintf(buf, n, "%.3g %s", v, base);
}

int ceilings_print(struct store *st, long long device_id, enum table_format f)
{
	static const char *const hdr[] = { "device", "ceiling", "provenance", "value",
					   "rate", "method", "measured_at" };
	sqlite3_stmt *s = NULL;
	struct table t;
	int rc;

	if (sqlite3_prepare_v2(store_db(st),
			       "SELECT d.name, c.name, c.provenance, c.value, c.unit, "
			       "c.method, c.measured_at FROM ceilings c "
			       "JOIN devices d ON d.id = c.device_id "
			       "WHERE (?1 = 0 OR c.device_id = ?1) AND c.id = ("
			       " SELECT max(c2.id) FROM ceilings c2 WHERE "
			       " c2.device_id = c.device_id AND c2.name = c.name AND "
			       " c2.provenance = c.provenance) "
			       "ORDER BY d.id, c.name, c.provenance",
			       -1, &s, NULL) != SQLITE_OK)
		return store_error(st, "cannot read ceilings from");
	sqlite3_bind_int64(s, 1, device_id);
	table_init(&t, 7, hdr);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		char rate[64];

		human_rate(rate, sizeof rate, sqlite3_column_double(s, 3),
			   (const char *)sqlite3_column_text(s, 4));
		table_add_text(&t, (const char *)sqlite3_column_text(s, 0));
		table_add_text(&t, (const char *)sqlite3_column_text(s, 1));
		table_add_text(&t, (const char *)sqlite3_column_text(s, 2));
		table_add_double(&t, sqlite3_column_double(s, 3), 6);
		table_add_text(&t, rate);
		table_add_text(&t, (const char *)sqlite3_column_text(s, 5));
		table_add_text(&t, (const char *)sqlite3_column_text(s, 6));
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		table_release(&t);
		return store_error(st, "cannot read ceilings from");
	}
	table_print(&t, f, stdout);
	table_release(&t);
	return 0;
}

int ceilings_collect(const struct probe_device *d, struct ceiling *out, int max,
		     int verbose)
{
	int n = ceilings_measure(d, out, max, verbose), m;

	if (n < 0)
		return -1;
	m = ceilings_theoretical(d, out + n, max - n);
	if (m < 0)
		return -1;
	if (m == 0)
		warning("theoretical ceilings skipped: reading peak_sustained "
			"counters is not permitted here");
	return n + m;
}
