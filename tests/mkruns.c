/* mkruns.c - test helper: writes runs with chosen numbers into a fuseprof
 * database through the store API, so CLI tests of compare and query know
 * what each op should get.
 *
 * Usage: mkruns [-s SEED] DB < SPEC
 * SPEC has one directive a line ('#' starts a comment):
 *   device NAME              GPU model of the runs that follow
 *   counters TEXT...         runs.counters of the runs that follow, the
 *                            rest of the line (default "range-profiler
 *                            (op replay, flush op)")
 *   kind run|profile         runs.kind of the runs that follow (default run;
 *                            profile: as `fuseprof profile` stores them)
 *   run TAG|- [STATUS]       start a run (final status: complete by default)
 *   op WORKLOAD VARIANT DTYPE SHAPE STATUS LAUNCHES DRAM FLOPS MEDIAN SPREAD N
 *       N per-rep times (ns) drawn uniformly from MEDIAN * (1 +- SPREAD/2);
 *       DRAM bytes and FLOPs become raw counters of one kernel, '-' for
 *       both stores the op without counters; DTYPE or SHAPE '-' stores ''
 *       (a profiled op's).
 *   kernel OPTS|- [LINE...]  kernel options (canonical text, '-' for none)
 *                            and kernel line of the ops that follow
 *   model FLOPS MIN_BYTES    the model's FLOPs and minimum bytes (also its
 *                            variant bytes) of the ops that follow ('-' for
 *                            either, or 'model -': unknown, the default)
 *   flops fp32|tensor        the counter the FLOPs of the ops that follow
 *                            go to: FP32 adds (default) or the tensor pipe
 *   l2 BYTES|-               L2 bytes (lts__t_bytes) of the ops that follow;
 *                            '-' (default): no L2 counter
 *   writeback BYTES|-        DRAM write-back bytes of the ops that follow,
 *                            taken out of the written quarter of their DRAM
 *                            bytes (which stay the op's total); '-'
 *                            (default): no write-back counter
 *   second DRAM L2 WB|-      the ops that follow with counters have a second
 *                            kernel (test_kernel_2, after the first) with
 *                            DRAM bytes DRAM (a quarter written, WB of
 *                            them as write-back), L2 bytes L2 and no FLOPs;
 *                            'second -' (default): one kernel
 *   kernels NAME FRAC [NAME2]  the ops that follow run kernel NAME for FRAC
 *                            of their median time, one launch, and NAME2
 *                            (if given) for the rest; 'kernels -'
 *                            (default): test_kernel for all of it, the
 *                            op's launches (not with 'second')
 *   ceiling NAME UNIT VALUE  a measured ceiling of the current run's device
 *   saved BYTES|- [BACKWARD] the bytes the ops that follow keep for their
 *                            backward ('-', the default: NULL) and, for a
 *                            forward, its backward workload (none: NULL)
 *   opdevice NAME SERIAL|-   the ops (and ceilings) that follow ran on GPU
 *                            NAME with uuid GPU-test-NAME-SERIAL, not the
 *                            run's ('-': the run's again): a run of
 *                            several devices; a run started after it has
 *                            that device
 *   rank R HOST PID RANGE T...  in the current (profiled) run, process PID
 *                            on HOST (added once, with rank R; world size
 *                            and local rank unknown) ran range RANGE once
 *                            per time T (ns): a sample each, with a range
 *                            instance and one launch of T ns (kernel
 *                            rank_kernel, thread 1, GPU 0 stream 7) on
 *                            the process's clock, the op added when new
 *                            and recomputed from its samples
 * Prints each new run id on stdout and the seed on stderr. */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "profile.h"
#include "store.h"
#include "util.h"
#include "views.h"

/* Raw metric names that v_kernel_counters turns into dram_bytes,
 * flops_fp32 (FLOPs = fadd + fmul + 2 ffma) or flops_tensor, and l2_bytes;
 * kept in one place so a rename in the collector is one edit here. */
enum { C_READ, C_WRITE, C_FLOPS, C_L2, C_WB, NCOUNTERS };
static const char *const fp32_names[NCOUNTERS] = {
	"dram__bytes_read.sum",
	"dram__bytes_write.sum",
	"sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
	"lts__t_bytes.sum",
	FP_METRIC_DRAM_WRITEBACK,
};
static const char *const tensor_names[NCOUNTERS] = {
	"dram__bytes_read.sum",
	"dram__bytes_write.sum",
	"sm__ops_path_tensor_src_bf16_dst_fp32.sum",
	"lts__t_bytes.sum",
	FP_METRIC_DRAM_WRITEBACK,
};

static uint64_t rng_state;

static double rng_uniform(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double)((rng_state * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
}

#define MAXF 16

static int split(char *line, char **f)
{
	int n = 0;

	for (char *t = strtok(line, " \t\r\n"); t && n < MAXF; t = strtok(NULL, " \t\r\n"))
		f[n++] = t;
	return n;
}

static int finish(struct store *st, long long run, const char *status)
{
	if (run <= 0)
		return 0;
	if (store_finish_run(st, run, status, NULL))
		return -1;
	printf("%lld\n", run);
	return 0;
}

/* The kernel options and kernel line of the ops that follow ("" each). */
static char kopts_text[256], kernel_text[256];

/* The model, FLOP counter and L2 bytes of the ops that follow (NAN:
 * unknown, or no L2 counter). */
static double model_flops = NAN, model_bytes = NAN, l2_bytes = NAN;
static double writeback_bytes = NAN;
static int tensor_flops;

/* The kind of the runs that follow: a profile's ops are all 'fused', the
 * program's code as it ran (store/profile.h). */
static char kind[16] = "run";

/* The saved bytes (NAN: NULL) and backward workload ("": none) of the ops
 * that follow. */
static double saved_bytes = NAN;
static double second_dram = NAN, second_l2, second_wb;
static char kname1[128], kname2[128];  /* 'kernels': '' for the default */
static double kfrac = 1;
static char backward[128];

/* parse_double, with '-' for NAN. */
static int number_or_dash(const char *s, double *v)
{
	if (!strcmp(s, "-")) {
		*v = NAN;
		return 0;
	}
	return parse_double(s, v);
}

/* st's statement for sql into *s, or -1 after an error. */
static int prep(struct store *st, const char *sql, sqlite3_stmt **s)
{
	if (sqlite3_prepare_v2(store_db(st), sql, -1, s, NULL) != SQLITE_OK)
		return store_error(st, "cannot prepare a statement for");
	return 0;
}

/* Step a write to its end and finalize it; 0, or -1 after an error. */
static int done(struct store *st, sqlite3_stmt *s, const char *what)
{
	int rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_error(st, what);

	sqlite3_finalize(s);
	return rc;
}

/* The device of the ops that follow (0: the run's). */
static long long op_device;

/* One integer from sql with ?1..?3 bound to a, b (int64) and t (text),
 * or -1. */
static long long sql_int(struct store *st, const char *sql, long long a,
			 long long b, const char *t)
{
	sqlite3_stmt *s;
	long long v = -1;

	if (prep(st, sql, &s))
		return -1;
	sqlite3_bind_int64(s, 1, a);
	sqlite3_bind_int64(s, 2, b);
	if (t)
		sqlite3_bind_text(s, 3, t, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* "rank R HOST PID RANGE T...": f has n fields. */
static int add_rank_samples(struct store *st, long long run, char **f, int n,
			    int lineno)
{
	static long long clock_ns = 1000;
	long rank, pid;
	long long proc, op, slot;
	sqlite3_stmt *s;

	if (parse_long(f[1], &rank) || parse_long(f[3], &pid))
		return error("line %d: bad number", lineno);
	proc = sql_int(st, "SELECT id FROM procs WHERE run_id = ?1 AND pid = ?2 "
		       "AND host = ?3", run, pid, f[2]);
	if (proc < 0) {
		if (prep(st, "INSERT INTO procs (run_id, pid, host, started_at, "
				  "status, rank) VALUES (?1, ?2, ?3, '2026-01-01T00:00:00Z', "
				  "'complete', ?4)", &s))
			return -1;
		sqlite3_bind_int64(s, 1, run);
		sqlite3_bind_int64(s, 2, pid);
		sqlite3_bind_text(s, 3, f[2], -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(s, 4, rank);
		if (done(st, s, "cannot add a process to"))
			return -1;
		proc = sqlite3_last_insert_rowid(store_db(st));
	}
	op = sql_int(st, "SELECT id FROM ops WHERE run_id = ?1 AND workload = ?3",
		     run, 0, f[4]);
	if (op < 0) {
		if (prep(st, "INSERT INTO ops (run_id, workload, variant, role, "
				  "dtype, shape, status, reps, launches, created_at) "
				  "SELECT ?1, ?2, coalesce(tag, 'profiled'), 'fused', '', '', "
				  "'ok', 0, 0, started_at FROM runs WHERE id = ?1", &s))
			return -1;
		sqlite3_bind_int64(s, 1, run);
		sqlite3_bind_text(s, 2, f[4], -1, SQLITE_TRANSIENT);
		if (done(st, s, "cannot add an op to"))
			return -1;
		op = sqlite3_last_insert_rowid(store_db(st));
	}
	slot = sql_int(st, "SELECT id FROM kernels WHERE op_id = ?1", op, 0, NULL);
	if (slot < 0) {
		if (prep(st, "INSERT INTO kernels (op_id, idx, name, grid_x, "
				  "grid_y, grid_z, block_x, block_y, block_z, registers, "
				  "static_smem, dynamic_smem, launches) VALUES (?1, 0, "
				  "'rank_kernel', 1, 1, 1, 128, 1, 1, 32, 0, 0, 0)", &s))
			return -1;
		sqlite3_bind_int64(s, 1, op);
		if (done(st, s, "cannot add a kernel to"))
			return -1;
		slot = sqlite3_last_insert_rowid(store_db(st));
	}
	for (int i = 5; i < n; i++) {
		long long rep = sql_int(st, "SELECT coalesce(max(rep) + 1, 0) FROM samples "
					"WHERE op_id = ?1", op, 0, NULL);
		double t;

		if (parse_double(f[i], &t) || t < 1)
			return error("line %d: bad number", lineno);
		if (prep(st, "INSERT INTO samples (op_id, rep, time_ns, pid, "
				  "instance, launches, proc_id) VALUES (?1, ?5, ?2, ?3, ?5, "
				  "1, ?4)", &s))
			return -1;
		sqlite3_bind_int64(s, 1, op);
		sqlite3_bind_double(s, 2, t);
		sqlite3_bind_int64(s, 3, pid);
		sqlite3_bind_int64(s, 4, proc);
		sqlite3_bind_int64(s, 5, rep);
		if (done(st, s, "cannot add a sample to"))
			return -1;
		if (prep(st, "INSERT INTO launches (op_id, kernel_id, rep, pid, "
				  "tid, device, stream, correlation, start_ns, end_ns, "
				  "proc_id) VALUES (?1, ?2, ?3, ?4, 1, 0, 7, ?3, ?5, ?6, ?7)", &s))
			return -1;
		sqlite3_bind_int64(s, 1, op);
		sqlite3_bind_int64(s, 2, slot);
		sqlite3_bind_int64(s, 3, rep);
		sqlite3_bind_int64(s, 4, pid);
		sqlite3_bind_int64(s, 5, clock_ns + 10);
		sqlite3_bind_int64(s, 6, clock_ns + 10 + (long long)t);
		sqlite3_bind_int64(s, 7, proc);
		if (done(st, s, "cannot add a launch to"))
			return -1;
		if (prep(st, "INSERT INTO ranges (run_id, pid, tid, instance, "
				  "name, path, depth, start_ns, end_ns, proc_id) VALUES (?1, "
				  "?2, 1, (SELECT count(*) FROM ranges WHERE proc_id = ?5), ?3, "
				  "?3, 0, ?4, ?6, ?5)", &s))
			return -1;
		sqlite3_bind_int64(s, 1, run);
		sqlite3_bind_int64(s, 2, pid);
		sqlite3_bind_text(s, 3, f[4], -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(s, 4, clock_ns);
		sqlite3_bind_int64(s, 5, proc);
		sqlite3_bind_int64(s, 6, clock_ns + 20 + (long long)t);
		if (done(st, s, "cannot add a range to"))
			return -1;
		clock_ns += 100 + (long long)t;
	}
	return store_profile_refresh(st, &op, 1);
}

static int add_op(struct store *st, long long run, char **f, int lineno)
{
	struct store_op op = { 0 };
	struct store_kernel k[2] = { { 0 } };
	double vals[NCOUNTERS], median, spread, dram, flops, *t;
	const char *const *names = tensor_flops ? tensor_names : fp32_names;
	const char *k_names[NCOUNTERS];
	const char *names2[] = { names[C_READ], names[C_WRITE], names[C_L2], names[C_WB] };
	double vals2[4];
	long launches, n;
	int counters = strcmp(f[7], "-") != 0;
	int rc;

	if (parse_long(f[6], &launches) || parse_double(f[9], &median) ||
	    parse_double(f[10], &spread) || parse_long(f[11], &n) || n < 0 ||
	    (counters && (parse_double(f[7], &dram) || parse_double(f[8], &flops))))
		return error("line %d: bad number", lineno);
	t = xcalloc(n ? (size_t)n : 1, sizeof *t);
	for (long i = 0; i < n; i++)
		t[i] = median * (1 + spread * (rng_uniform() - 0.5));
	op.workload = f[1];
	op.variant = f[2];
	op.role = !strcmp(f[2], "fused") || !strcmp(kind, "profile") ? "fused"
		  : !strcmp(f[2], "naive") ? "naive" : "unfused";
	op.dtype = strcmp(f[3], "-") ? f[3] : "";
	op.shape = strcmp(f[4], "-") ? f[4] : "";
	op.status = f[5];
	op.seed = 1;
	op.rel_err = op.max_abs_err = op.tolerance = NAN;
	op.reps = (int)n;
	op.time_ns = t;
	op.launches = launches;
	op.model_flops = model_flops;
	op.model_min_bytes = op.model_variant_bytes = model_bytes;
	k[0].name = *kname1 ? kname1 : "test_kernel";
	k[0].launches = *kname1 ? 1 : launches;
	k[0].dur_ns_median = k[0].dur_ns_min = k[0].dur_ns_max =
		*kname1 ? kfrac * median : median;
	if (counters) {
		vals[C_READ] = round(dram * 0.75);
		vals[C_WRITE] = dram - vals[C_READ];
		vals[C_FLOPS] = flops;
		k[0].ncounters = C_L2;
		if (!isnan(l2_bytes)) {
			k_names[k[0].ncounters] = names[C_L2];
			vals[k[0].ncounters++] = l2_bytes;
		}
		if (!isnan(writeback_bytes)) {
			if (writeback_bytes > vals[C_WRITE]) {
				free(t);
				return error("line %d: write-back above the op's written bytes",
					     lineno);
			}
			vals[C_WRITE] -= writeback_bytes;
			k_names[k[0].ncounters] = names[C_WB];
			vals[k[0].ncounters++] = writeback_bytes;
		}
		for (int i = 0; i < C_L2; i++)
			k_names[i] = names[i];
		k[0].counter_names = k_names;
		k[0].counter_values = vals;
	}
	op.nkernels = 1;
	if (*kname2) {
		if (counters && !isnan(second_dram)) {
			free(t);
			return error("line %d: 'kernels' with two names and 'second'", lineno);
		}
		k[1].name = kname2;
		k[1].launches = 1;
		k[1].dur_ns_median = k[1].dur_ns_min = k[1].dur_ns_max = (1 - kfrac) * median;
		op.nkernels = 2;
	}
	if (counters && !isnan(second_dram) && !*kname2) {
		double read = round(second_dram * 0.75);

		k[1].name = "test_kernel_2";
		k[1].launches = launches;
		k[1].dur_ns_median = k[1].dur_ns_min = k[1].dur_ns_max = median;
		vals2[0] = read;
		vals2[1] = second_dram - read - second_wb;
		vals2[2] = second_l2;
		vals2[3] = second_wb;
		if (vals2[1] < 0) {
			free(t);
			return error("line %d: the second kernel's write-back above its "
				     "written bytes", lineno);
		}
		k[1].ncounters = 4;
		k[1].counter_names = names2;
		k[1].counter_values = vals2;
		op.nkernels = 2;
	}
	op.kernels = k;
	op.kernel_opts = kopts_text;
	op.kernel = kernel_text;
	op.model_saved_bytes = saved_bytes;
	op.backward = *backward ? backward : NULL;
	op.device_id = op_device;
	rc = store_insert_op(st, run, &op, NULL);
	free(t);
	return rc;
}

int main(int argc, char **argv)
{
	uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	char line[1024], *f[MAXF], *status = NULL, *counters = NULL;
	long long device = 0, run = 0;
	struct store *st;
	int c, n, lineno = 0, rc = 1;

	while ((c = getopt(argc, argv, "s:")) != -1) {
		if (c != 's')
			goto usage;
		seed = strtoull(optarg, NULL, 0);
	}
	if (optind + 1 != argc)
		goto usage;
	rng_state = seed ? seed : 1;
	fprintf(stderr, "mkruns: seed %" PRIu64 "\n", seed);
	if (store_open(&st, argv[optind], STORE_CREATE))
		return 1;
	while (fgets(line, sizeof line, stdin)) {
		lineno++;
		n = split(line, f);
		if (n == 0 || f[0][0] == '#')
			continue;
		if (!strcmp(f[0], "device") && n == 2) {
			struct store_device d = { 0 };
			char uuid[128];

			snprintf(uuid, sizeof uuid, "GPU-test-%s", f[1]);
			d.uuid = uuid;
			d.name = f[1];
			if (store_upsert_device(st, &d, &device))
				goto out;
		} else if (!strcmp(f[0], "counters") && n >= 2) {
			struct strbuf sb = STRBUF_INIT;

			for (int i = 1; i < n; i++)
				strbuf_addf(&sb, "%s%s", i > 1 ? " " : "", f[i]);
			free(counters);
			counters = xstrdup(strbuf_str(&sb));
			strbuf_release(&sb);
		} else if (!strcmp(f[0], "kind") && n == 2 &&
			   (!strcmp(f[1], "run") || !strcmp(f[1], "profile"))) {
			snprintf(kind, sizeof kind, "%s", f[1]);
		} else if (!strcmp(f[0], "run") && (n == 2 || n == 3)) {
			struct store_run r = { 0 };

			if (finish(st, run, status))
				goto out;
			free(status);
			status = xstrdup(n == 3 ? f[2] : "complete");
			r.tool_version = PACKAGE_VERSION;
			r.host = "test";
			r.command_line = "mkruns";
			r.tag = strcmp(f[1], "-") ? f[1] : NULL;
			r.device_id = op_device ? op_device : device;
			r.counters = counters ? counters : "range-profiler (op replay, flush op)";
			r.kind = kind;
			if (store_begin_run(st, &r, &run))
				goto out;
		} else if (!strcmp(f[0], "kernel") && n >= 2) {
			size_t len = 0;

			snprintf(kopts_text, sizeof kopts_text, "%s",
				 strcmp(f[1], "-") ? f[1] : "");
			kernel_text[0] = '\0';
			for (int i = 2; i < n && len < sizeof kernel_text; i++)
				len += (size_t)snprintf(kernel_text + len,
							sizeof kernel_text - len, "%s%s",
							i > 2 ? " " : "", f[i]);
		} else if (!strcmp(f[0], "model") && (n == 2 || n == 3)) {
			if (number_or_dash(f[1], &model_flops) ||
			    number_or_dash(n == 3 ? f[2] : "-", &model_bytes)) {
				error("line %d: bad number", lineno);
				goto out;
			}
		} else if (!strcmp(f[0], "flops") && n == 2 &&
			   (!strcmp(f[1], "fp32") || !strcmp(f[1], "tensor"))) {
			tensor_flops = !strcmp(f[1], "tensor");
		} else if (!strcmp(f[0], "l2") && n == 2) {
			if (number_or_dash(f[1], &l2_bytes)) {
				error("line %d: bad number", lineno);
				goto out;
			}
		} else if (!strcmp(f[0], "second") && n == 2 && !strcmp(f[1], "-")) {
			second_dram = NAN;
		} else if (!strcmp(f[0], "second") && n == 4) {
			if (parse_double(f[1], &second_dram) ||
			    parse_double(f[2], &second_l2) ||
			    parse_double(f[3], &second_wb)) {
				second_dram = NAN;
				error("line %d: bad number", lineno);
				goto out;
			}
		} else if (!strcmp(f[0], "kernels") && n == 2 && !strcmp(f[1], "-")) {
			kname1[0] = kname2[0] = '\0';
			kfrac = 1;
		} else if (!strcmp(f[0], "kernels") && (n == 3 || n == 4)) {
			if (parse_double(f[2], &kfrac) || !(kfrac > 0 && kfrac <= 1)) {
				error("line %d: bad fraction", lineno);
				goto out;
			}
			snprintf(kname1, sizeof kname1, "%s", f[1]);
			snprintf(kname2, sizeof kname2, "%s", n == 4 ? f[3] : "");
		} else if (!strcmp(f[0], "writeback") && n == 2) {
			if (number_or_dash(f[1], &writeback_bytes)) {
				error("line %d: bad number", lineno);
				goto out;
			}
		} else if (!strcmp(f[0], "saved") && (n == 2 || n == 3)) {
			if (number_or_dash(f[1], &saved_bytes)) {
				error("line %d: bad number", lineno);
				goto out;
			}
			snprintf(backward, sizeof backward, "%s", n == 3 ? f[2] : "");
		} else if (!strcmp(f[0], "opdevice") && n == 3) {
			struct store_device d = { 0 };
			char uuid[160];

			op_device = 0;
			if (strcmp(f[2], "-")) {
				snprintf(uuid, sizeof uuid, "GPU-test-%s-%s", f[1], f[2]);
				d.uuid = uuid;
				d.name = f[1];
				if (store_upsert_device(st, &d, &op_device))
					goto out;
			}
		} else if (!strcmp(f[0], "rank") && n >= 6 && run > 0) {
			if (add_rank_samples(st, run, f, n, lineno))
				goto out;
		} else if (!strcmp(f[0], "ceiling") && n == 4 && run > 0) {
			struct store_ceiling cg = { f[1], f[2], 0, "measured", "mkruns" };

			if (parse_double(f[3], &cg.value)) {
				error("line %d: bad number", lineno);
				goto out;
			}
			if (store_insert_ceiling(st, op_device ? op_device : device, run, &cg))
				goto out;
		} else if (!strcmp(f[0], "op") && n == 12 && run > 0) {
			if (add_op(st, run, f, lineno))
				goto out;
		} else {
			error("line %d: cannot parse '%s' (see tests/mkruns.c)", lineno, f[0]);
			goto out;
		}
	}
	if (finish(st, run, status))
		goto out;
	rc = 0;
out:
	free(status);
	free(counters);
	store_close(st);
	return rc;
usage:
	fprintf(stderr, "usage: mkruns [-s SEED] DB < SPEC\n");
	return 2;
}
