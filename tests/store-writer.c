/* store-writer.c - test helper: writes one run of synthetic ops into a
 * database through the store API, as `fuseprof run` would.
 *
 * Usage: store-writer DB NOPS [TAG [DEVICE-NAME]]
 *        store-writer --hold DB MS
 *   NOPS > 0: insert NOPS ops, then mark the run complete.
 *   NOPS = 0: insert ops forever (for kill -9 tests); never finishes.
 * Every op has KERNELS kernels with COUNTERS counters each and REPS samples,
 * so a reader can tell a whole op from a torn one. Prints the run id.
 *
 * --hold: for MS milliseconds, take SQLite's write lock on DB (created empty
 * when missing) for 2 ms at a time with 0.2 ms gaps, through a plain
 * connection in whatever journal mode the file has: the part another
 * writer plays while it creates the schema or the views, stretched so
 * that every writer opening the file meanwhile meets it.
 *
 * $STORE_WRITER_START_AT (seconds since the epoch, fractions allowed): wait
 * until then before opening the database, so writers started one after
 * another by a shell open it within microseconds of each other; races on
 * a fresh file show up in every trial instead of one in a hundred. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store.h"
#include "util.h"

#define KERNELS 5
#define COUNTERS 6
#define REPS 20

static const char *const metric_names[COUNTERS] = {
	"dram__bytes_read.sum",
	"dram__bytes_write.sum",
	"lts__t_bytes.sum",
	"sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
	"sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
	"sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
};

/* Sleep until the wall-clock time in $STORE_WRITER_START_AT, if set. */
static void wait_for_start(void)
{
	const char *env = getenv("STORE_WRITER_START_AT");
	struct timespec now, until;
	double at;

	if (!env || !*env)
		return;
	at = strtod(env, NULL);
	until.tv_sec = (time_t)at;
	until.tv_nsec = (long)((at - (double)until.tv_sec) * 1e9);
	clock_gettime(CLOCK_REALTIME, &now);
	if (now.tv_sec > until.tv_sec + 5)
		return;  /* far in the past: a stale value, do not wait */
	while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &until, NULL) != 0)
		;
}

/* --hold: see the header. Returns the exit status. */
static int hold(const char *path, long ms)
{
	struct timespec t0, now, lock = { 0, 2000000 }, gap = { 0, 200000 },
			poll = { 0, 20000 };
	sqlite3 *db = NULL;
	int rc = 1;

	if (sqlite3_open(path, &db) != SQLITE_OK)
		goto out;
	/* No busy handler: poll every 20 us instead of sleeping for
	 * milliseconds, so the lock is taken again the moment a writer
	 * commits, before that writer's next statement. */
	sqlite3_busy_timeout(db, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - t0.tv_sec) * 1000 +
		    (now.tv_nsec - t0.tv_nsec) / 1000000 >= ms)
			break;
		if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
			if (sqlite3_errcode(db) != SQLITE_BUSY)
				goto out;
			nanosleep(&poll, NULL);
			continue;
		}
		nanosleep(&lock, NULL);
		if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
			if (sqlite3_errcode(db) != SQLITE_BUSY)
				goto out;
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		}
		nanosleep(&gap, NULL);
	}
	rc = 0;
out:
	if (rc)
		fprintf(stderr, "store-writer: --hold '%s': %s\n", path,
			db ? sqlite3_errmsg(db) : "out of memory");
	sqlite3_close(db);
	return rc;
}

int main(int argc, char **argv)
{
	struct store *st;
	struct store_device dev = {
		.uuid = "GPU-00000000-test", .name = "Test GPU", .cc_major = 9,
		.sm_count = 132, .l2_bytes = 50 << 20, .mem_bytes = 80LL << 30,
		.mem_bus_bits = 5120, .sm_clock_khz = 1980000, .mem_clock_khz = 2619000,
		.driver_version = 13000, .runtime_version = 13000, .cupti_version = 26,
	};
	struct store_run run = { .tool_version = PACKAGE_VERSION,
				 .command_line = "store-writer" };
	long long run_id, dev_id;
	long nops;

	if (argc == 4 && !strcmp(argv[1], "--hold")) {
		if (parse_long(argv[3], &nops) || nops < 0)
			goto usage;
		wait_for_start();
		return hold(argv[2], nops);
	}
	if (argc < 3 || parse_long(argv[2], &nops) || nops < 0) {
usage:
		fprintf(stderr, "usage: store-writer DB NOPS [TAG [DEVICE-NAME]]\n"
				"       store-writer --hold DB MS\n");
		return 2;
	}
	run.tag = argc > 3 ? argv[3] : NULL;
	if (argc > 4)
		dev.name = argv[4];
	wait_for_start();
	if (store_open(&st, argv[1], STORE_CREATE))
		return 1;
	if (store_upsert_device(st, &dev, &dev_id))
		return 1;
	run.device_id = dev_id;
	if (store_begin_run(st, &run, &run_id))
		return 1;
	printf("%lld\n", run_id);
	fflush(stdout);
	for (long i = 0; nops == 0 || i < nops; i++) {
		struct store_kernel k[KERNELS];
		double values[KERNELS][COUNTERS], times[REPS], spans[REPS];
		char shape[64], name[KERNELS][32];
		struct store_op op = {
			.workload = "synthetic", .variant = i % 2 ? "fused" : "unfused",
			.role = i % 2 ? "fused" : "unfused", .dtype = "fp32",
			.shape = shape, .status = "ok", .seed = (unsigned long long)i,
			.rel_err = 1e-7, .max_abs_err = 1e-6, .tolerance = 1e-5,
			.reps = REPS, .time_ns = times, .span_ns = spans,
			.launches = KERNELS, .model_flops = 1e6, .model_min_bytes = 4e6,
			.model_variant_bytes = 4e6, .nkernels = KERNELS, .kernels = k,
		};

		snprintf(shape, sizeof shape, "M=%ld,N=%d", i / 2 + 1, 768);
		for (int r = 0; r < REPS; r++) {
			times[r] = 1000.0 + r;
			spans[r] = 1100.0 + r;
		}
		for (int j = 0; j < KERNELS; j++) {
			snprintf(name[j], sizeof name[j], "kernel_%d", j);
			for (int c = 0; c < COUNTERS; c++)
				values[j][c] = 1000.0 * (c + 1);
			k[j] = (struct store_kernel){
				.name = name[j], .grid = { 128, 1, 1 }, .block = { 256, 1, 1 },
				.registers = 32, .launches = 1, .dur_ns_median = 200,
				.dur_ns_min = 190, .dur_ns_max = 250, .ncounters = COUNTERS,
				.counter_names = metric_names, .counter_values = values[j],
			};
		}
		if (store_insert_op(st, run_id, &op, NULL))
			return 1;
	}
	if (store_finish_run(st, run_id, "complete", NULL))
		return 1;
	store_close(st);
	return 0;
}
