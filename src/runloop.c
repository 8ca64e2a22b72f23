/* runloop.c - the measurement protocol of `fuseprof run`: per op validate,
 * check it fits, create with rotating input sets, check against the CPU
 * reference, warm up, time R reps from CUPTI Activity records, one rep
 * under the Range Profiler, one transaction. The variants of one workload,
 * dtype and shape are timed together, their repetitions interleaved, so
 * that "fused / unfused" compares like with like. run_suite, at the end,
 * lists the run's phases: build the op list, check that every op fits,
 * the device and its ceilings, open the counters, the loop, the finish.
 * The loop walks fp_workloads[] and knows no workload by name. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include "cmd.h"
#include "error.h"
#include "probes.h"
#include "profile.h"
#include "run-ceilings.h"
#include "run-estimate.h"
#include "run-ops.h"
#include "runloop.h"
#include "shape.h"
#include "store.h"
#include "table.h"
#include "util.h"
#include "workload.h"

/* Most kernels one op may launch per repetition and still get counters. */
#define MAX_RANGES 64
/* Input sets rotate until the inputs of consecutive reps span this many
 * L2 sizes, so a rep never finds the previous one's data in L2. */
#define WORKING_SET_L2S 4
#define MAX_SETS 16
/* A repetition slower than SLOW_REP_S (a naive kernel at a large shape) gets
 * one warm-up and only as many timed repetitions as fit in OP_BUDGET_S, but
 * at least MIN_REPS so the median means something: the default suite must
 * finish even when it holds a variant that is slow on purpose. */
#define SLOW_REP_S 0.05
#define OP_BUDGET_S 2.0
#define MIN_REPS 3

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
	/* A second Ctrl-C ends the process at once; the op in flight is one
	 * transaction, so the database keeps only whole ops either way. */
	signal(SIGINT, SIG_DFL);
}


/* ---- one op ------------------------------------------------------------ */

/* A distinct kernel of an op: same function and launch configuration. */
struct kslot {
	const struct kernel_rec *first;
	long long launches;      /* per rep */
	double *dur;             /* every launch's duration, all reps */
	size_t ndur;
	double *values;          /* counters summed over its launches */
	int counted;             /* how many launches the counters cover */
};

static int same_kernel(const struct kernel_rec *a, const struct kernel_rec *b)
{
	return !strcmp(a->mangled, b->mangled) && !memcmp(a->grid, b->grid, sizeof a->grid) &&
	       !memcmp(a->block, b->block, sizeof a->block) &&
	       a->dynamic_smem == b->dynamic_smem;
}

/* The time left, from the dry run's per-op estimates (est[i], seconds)
 * scaled by how the ops measured so far compared with theirs: measuring
 * ops [0, i) took meas_s against an estimated sum of est[0..i). Plus, in
 * the instruction-count stage, that stage's own rate over its ops [from,
 * to), at op i. NaN while nothing has been measured to scale by. */
struct eta {
	double *est;         /* per op */
	double meas_s;       /* wall time of the measurement loop so far */
	size_t measured;     /* ops measured: [0, measured) */
};

struct run_state {
	const struct run_opts *o;
	struct store *st;
	long long run_id;
	long long device_id;          /* the device's row: each op's */
	const struct probe_device *dev;
	struct counter_group *group;  /* NULL: no counters */
	/* The group's counters in two collectors: ctr counts hw[] per op (the
	 * group's counters hw_idx[], nhw of them), ictr the instrumented ins[]
	 * (op replay only: instruction counts need kernel replay), every op
	 * first, into insn[op] (nins values a kernel, insn_k[op] kernels).
	 * Both NULL: no counters (off, denied, busy, failed). */
	struct counters *ctr, *ictr;
	const char **hw, **ins;
	int *hw_idx, *ins_idx, nhw, nins;
	double **insn;
	int *insn_k;
	const char *counters_state;   /* what the run's row says */
	/* What a kernel's counter row holds: the group's counters, then the
	 * write-back (FP_WRITEBACK_METRIC); nvals names. */
	const char **vnames;
	int nvals;
	struct eta eta;
	unsigned long long seed_base;
	int nwrong, nerror;
	/* Where the run's wall time went, in seconds, for the closing line. */
	double t_setup, t_check, t_time, t_count, t_store;
	double t_start;               /* when run_suite began */
	double t_ceil;                /* measuring the ceilings (first run) */
	double t_first;               /* first op stored, from t_start; NaN */
	long long counted;            /* kernels counted (each once) */
	int nops;
};

/* a + b where a NaN means "nothing yet". */
static double nan_add(double a, double b)
{
	return isnan(a) ? b : a + b;
}

/* Seconds since *t0, and restart the clock there. */
static double lap(double *t0)
{
	double t = now_seconds(), d = t - *t0;

	*t0 = t;
	return d;
}

static int sync_device(const char *key)
{
	cudaError_t e = cudaDeviceSynchronize();

	if (e != cudaSuccess)
		return error("%s: the GPU reported an error: %s", key,
			     cudaGetErrorString(e));
	return 0;
}

/* Launch reps repetitions, rotating input sets from *next_set. */
static int launch_reps(const struct op_spec *op, struct fp_op *inst, int reps,
		       int nsets, int *next_set)
{
	for (int r = 0; r < reps; r++) {
		if (op->w->launch(inst, *next_set, 0))
			return error("%s: a launch failed", op->key);
		*next_set = (*next_set + 1) % nsets;
	}
	return 0;
}

/* One repetition of an op on one input set: the work of a counter pass. */
struct one_launch {
	const struct op_spec *op;
	struct fp_op *inst;
	int set;
};

static int launch_once(void *arg)
{
	const struct one_launch *ol = arg;

	if (ol->op->w->launch(ol->inst, ol->set, 0))
		return error("%s: a launch failed", ol->op->key);
	return 0;
}

/* If counters were denied, another profiler holds them, or a collection
 * failed (why = -1), say so once and go on timing only. */
static void counters_fallback(struct run_state *rs, int why)
{
	if (why == PROBE_DENIED) {
		warning("counters not permitted (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES): "
			"allow them with 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' "
			"in /etc/modprobe.d (then reboot) or run as root; timing only");
		rs->counters_state = "denied";
	} else if (why == PROBE_BUSY) {
		warning("counters unavailable: another profiler is attached "
			"(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED; e.g. Nsight "
			"Compute or Systems): timing only");
		rs->counters_state = "busy";
	} else {
		warning("counter collection failed: timing only from here on");
		rs->counters_state = "failed";
	}
	counters_close(rs->ctr);
	counters_close(rs->ictr);
	rs->ctr = rs->ictr = NULL;
	if (rs->insn) {
		for (int i = 0; i < rs->nops; i++)
			free(rs->insn[i]);
		free(rs->insn);
		free(rs->insn_k);
		rs->insn = NULL;
		rs->insn_k = NULL;
	}
	if (rs->st && rs->run_id)
		store_set_run_counters(rs->st, rs->run_id, rs->counters_state);
}

/* ---- one op, from set-up to its row in the store ------------------------ */

/* An op between set-up and store. The variants of one workload, dtype and
 * shape are set up together and their timed repetitions interleaved (see
 * time_group), so a clock or power drift over the seconds a comparison
 * takes lands on every variant alike instead of on whichever ran last. */
struct meas {
	const struct op_spec *op;
	size_t index;              /* in the op list: seed, instruction counts */
	struct fp_op *inst;
	struct fp_model model;
	struct fp_check chk;
	unsigned long long seed;
	int nsets, next_set;
	int k;                     /* kernels one repetition launches */
	int reps;                  /* timed repetitions */
	int settle;                /* untimed repetitions before each turn */
	struct kernel_rec *recs;   /* the timed ones, reps * k, launch order */
	const char *status;        /* "ok", "wrong" or "error" */
	char msg[512];
	char kernel[160];          /* what the launcher picked (w->kernel) */
};

/* Ops timed together at most; and what op_prepare returns for an op that
 * does not fit beside the ones set up before it (nothing happened yet). */
#define MAX_GROUP 16
#define OP_NO_ROOM 1
/* Timed repetitions an op runs in one turn of its group (time_group), and
 * how many L2 sizes its untimed settling repetitions move before them. */
#define TURN_REPS 10
#define SETTLE_L2S 2

static void meas_fail(struct meas *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Mark m failed ("error") with a message, unless it already has one. */
static void meas_fail(struct meas *m, const char *fmt, ...)
{
	va_list ap;

	m->status = "error";
	if (m->msg[0])
		return;
	va_start(ap, fmt);
	vsnprintf(m->msg, sizeof m->msg, fmt, ap);
	va_end(ap);
}

/* Steps 1-3 of the protocol up to the timed repetitions: check it fits,
 * create it, check it against the CPU reference, warm it up, learn how
 * many kernels a repetition launches. Returns 0 (m is ready, or finished
 * with a status other than "ok" and only waits to be stored), or
 * OP_NO_ROOM when held > 0 ops already occupy the memory it needs. */
static int op_prepare(struct run_state *rs, struct meas *m, const struct op_spec *op,
		      size_t index, size_t case_index, int held)
{
	const struct run_opts *o = rs->o;
	const struct workload *w = op->w;
	size_t free_b = 0, need;
	double ws, clk;
	int warm = 1;

	memset(m, 0, sizeof *m);
	m->op = op;
	m->index = index;
	m->status = "ok";
	m->nsets = 1;
	/* The variants of a case share a seed: checked on the same inputs,
	 * against one reference (the workloads keep the last one). */
	m->seed = splitmix64(rs->seed_base + case_index);
	m->chk.rel_err = m->chk.max_abs_err = m->chk.tolerance = NAN;
	w->model(&op->shape, op->dt, op->variant, &m->model);
	ws = m->model.min_bytes > 0 ? m->model.min_bytes : 1;
	if (ws < (double)WORKING_SET_L2S * rs->dev->l2_bytes)
		m->nsets = (int)fmin(MAX_SETS, ceil(WORKING_SET_L2S *
						    (double)rs->dev->l2_bytes / ws));
	m->settle = (int)fmin(MAX_SETS, ceil(SETTLE_L2S * (double)rs->dev->l2_bytes / ws));
	need = w->device_bytes(&op->shape, op->dt, op->variant, m->nsets);
	if (probe_device_free_bytes(&free_b)) {
		meas_fail(m, "measurement failed (see the error above)");
		return 0;
	}
	if (need > free_b) {
		if (held > 0)
			return OP_NO_ROOM;
		meas_fail(m, "does not fit in GPU memory: needs %.2f GiB, %.2f GiB "
			  "free", need / 1073741824.0, free_b / 1073741824.0);
		return 0;
	}
	nvtxRangePushA(op->key);
	clk = now_seconds();
	if (w->create(&m->inst, &op->shape, op->dt, op->variant, m->nsets, m->seed,
		      &op->ko)) {
		meas_fail(m, "could not be set up (see the error above)");
		goto out;
	}
	if (w->kernel)
		w->kernel(m->inst, m->kernel, sizeof m->kernel);
	rs->t_setup += lap(&clk);
	/* Check with the plain random inputs timing uses (profile 0), or with
	 * every profile (--check-all); the worst result is the op's. The hard
	 * profiles (offsets, extremes) are the GPU tests' job: checking them
	 * here would cost more CPU time than the measurement itself. */
	for (int p = 0, np = workload_nprofiles(w);
	     p < (o->check_all && np ? np : 1); p++) {
		struct fp_check c;

		memset(&c, 0, sizeof c);
		if (w->check(m->inst, p, splitmix64(m->seed ^ (unsigned long long)(p + 1)),
			     &c)) {
			meas_fail(m, "the check could not run");
			goto out;
		}
		if (!c.passed) {
			snprintf(m->msg, sizeof m->msg, "wrong result on '%s' inputs: %s",
				 np ? w->profiles[p] : "random", c.detail);
			m->status = "wrong";
			m->chk = c;
			rs->t_check += lap(&clk);
			error("%s: %s", op->key, m->msg);
			goto out;
		}
		if (p == 0 || c.rel_err > m->chk.rel_err)
			m->chk = c;
	}
	rs->t_check += lap(&clk);

	/* Warm up, and learn how many kernels one repetition launches and how
	 * long one takes (the first repetition alone: it pays one-time costs
	 * such as module loading, so it is not the one timed). */
	{
		struct kernel_rec *wr = NULL;
		size_t nw = 0;
		double t0, one;

		if (activity_collect(&wr, &nw))  /* drop what the check launched */
			goto fail;
		activity_free(wr, nw);
		if (launch_reps(op, m->inst, 1, m->nsets, &m->next_set) ||
		    sync_device(op->key))
			goto fail;
		if (o->warmup > 1) {
			t0 = now_seconds();
			if (launch_reps(op, m->inst, 1, m->nsets, &m->next_set) ||
			    sync_device(op->key))
				goto fail;
			one = now_seconds() - t0;
			warm = 2;
			if (one < SLOW_REP_S) {
				if (launch_reps(op, m->inst, o->warmup - 2, m->nsets,
						&m->next_set) || sync_device(op->key))
					goto fail;
				warm = o->warmup;
			} else {
				m->reps = (int)fmax(MIN_REPS, ceil(OP_BUDGET_S / one));
				m->settle = 0;  /* what it finds in L2 is noise to it */
			}
		}
		if (activity_collect(&wr, &nw))
			goto fail;
		activity_free(wr, nw);
		if (nw == 0 || nw % (size_t)warm) {
			meas_fail(m, "%zu kernels in %d warm-up repetitions: a "
				  "repetition must launch the same kernels every time",
				  nw, warm);
			goto out;
		}
		m->k = (int)(nw / (size_t)warm);
	}
	if (m->reps == 0 || m->reps > o->reps)
		m->reps = o->reps;
	rs->t_time += lap(&clk);
	goto out;
fail:
	meas_fail(m, "measurement failed (see the error above)");
out:
	nvtxRangePop();
	return 0;
}

/* Step 3's timed repetitions of the n ops of a group that are ready, in
 * turns: each op in its turn runs m->settle untimed repetitions, then up to
 * TURN_REPS timed ones, until every op has its m->reps. The settling
 * repetitions hand each op's timed ones the cache it leaves itself (its own
 * dirty lines to write back), not what the previous op left: an unfused
 * op's intermediate tensor still in L2 would otherwise be written back on
 * the next op's time. Everything is enqueued before one synchronization;
 * Activity's records come back in launch order, so walking the same turns
 * hands each op its own. */
static void time_group(struct run_state *rs, struct meas *ms, int n)
{
	struct kernel_rec *recs = NULL;
	size_t nrecs = 0, want = 0, at = 0;
	unsigned long long dropped0 = activity_dropped();
	const char *key = NULL;
	int live = 0, failed = 0, done[MAX_GROUP] = { 0 };
	double clk = now_seconds();

	for (int i = 0; i < n; i++) {
		struct meas *m = &ms[i];

		if (strcmp(m->status, "ok"))
			continue;
		if (live++ == 0)
			key = m->op->key;
	}
	if (live == 0)
		return;
	for (int i = 0; i < n; i++) {
		struct meas *m = &ms[i];
		int turns = (m->reps + TURN_REPS - 1) / TURN_REPS;

		if (live == 1)
			m->settle = 0;  /* nothing else runs between its turns */
		if (!strcmp(m->status, "ok"))
			want += ((size_t)turns * m->settle + (size_t)m->reps) * m->k;
	}
	for (int more = 1; more && !failed; ) {
		more = 0;
		for (int i = 0; i < n && !failed; i++) {
			struct meas *m = &ms[i];
			int t = m->reps - done[i] < TURN_REPS ? m->reps - done[i] : TURN_REPS;

			if (strcmp(m->status, "ok") || t == 0)
				continue;
			nvtxRangePushA(m->op->key);
			failed = launch_reps(m->op, m->inst, m->settle + t, m->nsets,
					     &m->next_set);
			nvtxRangePop();
			done[i] += t;
			more = 1;
		}
	}
	/* After a failed launch still drain what the others enqueued. */
	if (sync_device(key) || activity_collect(&recs, &nrecs) || failed) {
		for (int i = 0; i < n; i++)
			if (!strcmp(ms[i].status, "ok"))
				meas_fail(&ms[i], "measurement failed (see the error above)");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		struct meas *m = &ms[i];

		done[i] = 0;
		if (strcmp(m->status, "ok"))
			continue;
		if (activity_dropped() != dropped0)
			meas_fail(m, "CUPTI dropped %llu kernel records: timing discarded",
				  activity_dropped() - dropped0);
		else if (nrecs != want)
			meas_fail(m, "%zu kernel records for the %zu launches of %d ops "
				  "timed together", nrecs, want, live);
		else
			m->recs = xcalloc((size_t)m->reps * m->k, sizeof *m->recs);
	}
	for (int more = nrecs == want; more; ) {
		more = 0;
		for (int i = 0; i < n; i++) {
			struct meas *m = &ms[i];
			int t = m->reps - done[i] < TURN_REPS ? m->reps - done[i] : TURN_REPS;

			if (!m->recs || t == 0)
				continue;
			at += (size_t)m->settle * m->k;
			memcpy(&m->recs[(size_t)done[i] * m->k], &recs[at],
			       (size_t)t * m->k * sizeof *recs);
			at += (size_t)t * m->k;
			done[i] += t;
			more = 1;
		}
	}
out:
	activity_free(recs, nrecs);
	rs->t_time += lap(&clk);
}

/* Steps 3-5 after the timed repetitions: per-kernel durations, the counter
 * pass, the op's row; then tear it down. Returns 0 (stored, whatever its
 * status) or -1 when nothing could be stored. */
static int op_finish(struct run_state *rs, struct meas *m)
{
	const struct op_spec *op = m->op;
	const struct workload *w = op->w;
	struct store_op so;
	struct store_kernel *sk = NULL;
	struct kslot *slots = NULL;
	double *time_ns = NULL, *span_ns = NULL, *cvals = NULL, clk;
	struct span *spans = NULL;
	int *slot_of = NULL, k = m->k, reps = m->reps, nslots = 0, rc;

	nvtxRangePushA(op->key);
	if (strcmp(m->status, "ok"))
		goto store;
	time_ns = xcalloc((size_t)reps, sizeof *time_ns);
	span_ns = xcalloc((size_t)reps, sizeof *span_ns);
	slots = xcalloc((size_t)k, sizeof *slots);
	slot_of = xcalloc((size_t)k, sizeof *slot_of);
	for (int j = 0; j < k; j++) {
		int s;

		for (s = 0; s < nslots; s++)
			if (same_kernel(slots[s].first, &m->recs[j]))
				break;
		if (s == nslots) {
			slots[s].first = &m->recs[j];
			slots[s].dur = xcalloc((size_t)reps * (size_t)k,
					       sizeof *slots[s].dur);
			nslots++;
		}
		slots[s].launches++;
		slot_of[j] = s;
	}
	spans = xcalloc((size_t)k, sizeof *spans);
	for (int r = 0; r < reps; r++) {
		uint64_t lo = UINT64_MAX, hi = 0;

		for (int j = 0; j < k; j++) {
			const struct kernel_rec *kr = &m->recs[(size_t)r * k + j];
			struct kslot *sl = &slots[slot_of[j]];

			if (!same_kernel(sl->first, kr)) {
				meas_fail(m, "repetition %d launched '%s' where the first "
					  "launched '%s'", r, kr->name, sl->first->name);
				goto store;
			}
			sl->dur[sl->ndur++] = (double)(kr->end - kr->start);
			spans[j] = (struct span){ kr->start, kr->end };
			if (kr->start < lo)
				lo = kr->start;
			if (kr->end > hi)
				hi = kr->end;
		}
		/* The kernels' durations added, but a stretch where two run
		 * at once (a programmatic launch waiting on its predecessor)
		 * once: the GPU time the op took, its launch gaps left out. */
		time_ns[r] = (double)busy_time(spans, (size_t)k);
		span_ns[r] = (double)(hi - lo);
	}

	/* Counters: one repetition per replay pass, range j = launch j. */
	clk = now_seconds();
	if (rs->ctr || rs->insn) {
		struct one_launch ol = { op, m->inst, m->next_set };
		const double *iv = rs->insn ? rs->insn[m->index] : NULL;
		int nr = k, drop = 0, crc = 0;

		if (rs->ctr)
			crc = counters_collect(rs->ctr, launch_once, &ol, &cvals, &nr,
					       &drop);
		rs->t_count += lap(&clk);
		rs->counted += crc ? 0 : nr;

		if (rs->insn && !iv) {
			snprintf(m->msg, sizeof m->msg, "instruction counts not "
				 "stored: they could not be collected");
		} else if (iv && rs->insn_k[m->index] != k) {
			snprintf(m->msg, sizeof m->msg, "instruction counts not "
				 "stored: %d kernels when counted, %d timed",
				 rs->insn_k[m->index], k);
			iv = NULL;
		}
		if (crc == PROBE_DENIED || crc == PROBE_BUSY) {
			counters_fallback(rs, crc);
		} else if (crc) {
			/* The timing stands; a profiler in an unknown state is
			 * not used again. */
			snprintf(m->msg, sizeof m->msg, "counters not stored: the "
				 "collection failed (see the error above)");
			counters_fallback(rs, crc);
		} else if (nr != k || drop) {
			snprintf(m->msg, sizeof m->msg, "counters not stored: %d ranges "
				 "(%d dropped) for %d kernels", nr, drop, k);
		} else if (cvals || iv) {
			int nm = rs->group->ncounters;

			/* A counter not collected stays NaN: not stored. */
			for (int j = 0; j < k; j++) {
				struct kslot *sl = &slots[slot_of[j]];

				if (!sl->values) {
					sl->values = xcalloc((size_t)rs->nvals,
							     sizeof *sl->values);
					for (int c = 0; c < rs->nvals; c++)
						sl->values[c] = NAN;
				}
				if (cvals) {
					double wb = counters_writeback(rs->ctr, j);

					if (!isnan(wb))
						sl->values[nm] = nan_add(sl->values[nm], wb);
				}
				for (int c = 0; cvals && c < rs->nhw; c++)
					sl->values[rs->hw_idx[c]] = nan_add(
						sl->values[rs->hw_idx[c]],
						cvals[(size_t)j * rs->nhw + c]);
				for (int c = 0; iv && c < rs->nins; c++)
					sl->values[rs->ins_idx[c]] = nan_add(
						sl->values[rs->ins_idx[c]],
						iv[(size_t)j * rs->nins + c]);
				sl->counted++;
			}
		}
		/* The replayed kernels' Activity records are not timings. */
		{
			struct kernel_rec *cr = NULL;
			size_t nc = 0;

			if (activity_collect(&cr, &nc) == 0)
				activity_free(cr, nc);
		}
	}

store:
	nvtxRangePop();
	if (strcmp(m->status, "ok")) {
		if (!strcmp(m->status, "wrong"))
			rs->nwrong++;
		else
			rs->nerror++;
	}
	memset(&so, 0, sizeof so);
	so.workload = w->name;
	so.variant = w->variants[op->variant].name;
	so.role = fp_role_name(w->variants[op->variant].role);
	so.dtype = fp_dtype_name(op->dt);
	so.shape = op->shape_text;
	so.status = m->status;
	so.seed = m->chk.seed ? m->chk.seed : m->seed;
	so.rel_err = m->chk.rel_err;
	so.max_abs_err = m->chk.max_abs_err;
	so.tolerance = m->chk.tolerance;
	so.reps = !strcmp(m->status, "ok") ? reps : 0;
	so.time_ns = time_ns;
	so.span_ns = span_ns;
	so.launches = so.reps ? k : 0;
	so.model_flops = m->model.flops;
	so.device_id = rs->device_id;
	so.model_executed_flops = m->model.executed_flops;
	so.model_min_bytes = m->model.min_bytes;
	so.model_variant_bytes = m->model.variant_bytes;
	/* What a variant keeps for its backward means something only in a
	 * forward/backward pair: NULL for the other workloads. */
	so.model_saved_bytes = w->backward || workload_forward_of(w) ?
			       m->model.saved_bytes : NAN;
	so.backward = w->backward;
	so.message = m->msg[0] ? m->msg : NULL;
	so.kernel_opts = op->kopts_text;
	so.kernel = m->kernel;
	if (so.reps > 0) {
		sk = xcalloc((size_t)nslots, sizeof *sk);
		for (int s = 0; s < nslots; s++) {
			const struct kernel_rec *f = slots[s].first;
			double mn = INFINITY, mx = -INFINITY;

			for (size_t i = 0; i < slots[s].ndur; i++) {
				mn = fmin(mn, slots[s].dur[i]);
				mx = fmax(mx, slots[s].dur[i]);
			}
			sk[s].name = f->name;
			sk[s].mangled = f->mangled;
			memcpy(sk[s].grid, f->grid, sizeof sk[s].grid);
			memcpy(sk[s].block, f->block, sizeof sk[s].block);
			sk[s].registers = f->registers;
			sk[s].static_smem = f->static_smem;
			sk[s].dynamic_smem = f->dynamic_smem;
			sk[s].launches = slots[s].launches;
			sk[s].dur_ns_median = median_of(slots[s].dur, slots[s].ndur);
			sk[s].dur_ns_min = mn;
			sk[s].dur_ns_max = mx;
			if (slots[s].values) {
				sk[s].ncounters = rs->nvals;
				sk[s].counter_names = rs->vnames;
				sk[s].counter_values = slots[s].values;
			}
		}
		so.nkernels = nslots;
		so.kernels = sk;
	}
	clk = now_seconds();
	rc = store_insert_op(rs->st, rs->run_id, &so, NULL);
	rs->t_store += lap(&clk);
	if (rc == 0 && !strcmp(m->status, "error") && !strstr(m->msg, "see the error above"))
		error("%s: %s", op->key, m->msg);
	w->destroy(m->inst);
	m->inst = NULL;
	for (int s = 0; s < nslots; s++) {
		free(slots[s].dur);
		free(slots[s].values);
	}
	free(slots);
	free(slot_of);
	free(sk);
	free(cvals);
	free(time_ns);
	free(span_ns);
	free(spans);
	free(m->recs);
	m->recs = NULL;
	return rc;
}

/* Time and store the n ops of a group. Returns how many were stored in a
 * row from the first; fewer than n means a store failed (reported). */
static int flush_group(struct run_state *rs, struct meas *ms, int n)
{
	int stored = 0;

	time_group(rs, ms, n);
	for (int i = 0; i < n; i++) {
		if (stored == i && op_finish(rs, &ms[i]) == 0) {
			stored++;
		} else if (ms[i].inst) {  /* after a failed store: just let go */
			ms[i].op->w->destroy(ms[i].inst);
			free(ms[i].recs);
		}
	}
	return stored;
}

/* ---- progress ---------------------------------------------------------- */

static double eta_left(const struct eta *e, size_t n)
{
	double done = 0, left = 0;

	if (!e->est || e->measured == 0 || e->meas_s <= 0)
		return NAN;
	for (size_t j = 0; j < n; j++)
		*(j < e->measured ? &done : &left) += e->est[j];
	return done > 0 ? e->meas_s / done * left : NAN;
}

/* 0 in a measuring process of run_devices(): several of them on one
 * terminal would overwrite each other's line. */
static int show_progress = 1;

/* "[stage i/n] key  elapsed, ~left" on a terminal; stage names a
 * preliminary pass over the ops ("" for the measurement itself), left is
 * the seconds the run has left (NaN: not known yet). */
static void progress(const char *stage, size_t i, size_t n, const char *key,
		     double t0, double left)
{
	double el = now_seconds() - t0;

	if (!show_progress || !isatty(STDERR_FILENO))
		return;
	if (isnan(left))
		fprintf(stderr, "\r\033[K[%s%zu/%zu] %s  %.0fs", stage, i + 1, n,
			key, el);
	else
		fprintf(stderr, "\r\033[K[%s%zu/%zu] %s  %.0fs, ~%.0fs left", stage,
			i + 1, n, key, el, left);
	fflush(stderr);
}

static void progress_done(void)
{
	if (show_progress && isatty(STDERR_FILENO))
		fprintf(stderr, "\r\033[K");
}

/* ---- instruction counts ------------------------------------------------ */

/* Op replay: CUPTI counts the instrumented metrics (sm__sass_*) under
 * kernel replay only, and opening a range profiler session costs some
 * 0.4 s, so rather than switch sessions twice an op, count the
 * instructions of ops [from, to) in one kernel-replay session: set each op
 * up on one input set with its seed, launch it once (module loading stays
 * out of the replay), count one launch, tear it down. The values wait in
 * rs->insn for the op's own measurement. measure_ops counts the first case
 * alone, measures it, then counts the rest: the first op is stored within
 * seconds, for two more session switches. An op that cannot be set up
 * here gets no instruction counts; its measurement reports why. */
static void count_instructions(struct run_state *rs, const struct op_list *ops,
			       size_t from, size_t to, double t0)
{
	double start = now_seconds();

	if (!rs->insn) {
		rs->insn = xcalloc(ops->n, sizeof *rs->insn);
		rs->insn_k = xcalloc(ops->n, sizeof *rs->insn_k);
	}
	counters_suspend(rs->ctr);  /* its session, if it opened one */
	for (size_t i = from; i < to && rs->ictr && !interrupted; i++) {
		const struct op_spec *op = &ops->v[i];
		struct fp_op *inst = NULL;
		struct one_launch ol = { op, NULL, 0 };
		double clk = now_seconds(), *v = NULL;
		size_t free_b = 0;
		int nr = 0, drop = 0, crc;

		{
			double left = eta_left(&rs->eta, ops->n);

			if (i > from)
				left = (isnan(left) ? 0 : left) + (now_seconds() - start) /
					(double)(i - from) * (double)(to - i);
			progress("counting instructions ", i, ops->n, op->key, t0, left);
		}
		if (probe_device_free_bytes(&free_b) ||
		    op->w->device_bytes(&op->shape, op->dt, op->variant, 1) > free_b)
			continue;
		if (op->w->create(&inst, &op->shape, op->dt, op->variant, 1,
				  splitmix64(rs->seed_base + i), &op->ko))
			continue;
		ol.inst = inst;
		if (launch_once(&ol) || sync_device(op->key)) {
			op->w->destroy(inst);
			continue;
		}
		crc = counters_collect(rs->ictr, launch_once, &ol, &v, &nr, &drop);
		op->w->destroy(inst);
		rs->t_count += lap(&clk);
		if (crc) {
			counters_fallback(rs, crc);
			break;
		}
		if (drop == 0) {
			rs->insn[i] = v;
			rs->insn_k[i] = nr;
		} else {
			free(v);
		}
	}
	progress_done();
	/* Release the session for the op-replay collector (the last batch:
	 * the collector itself), and drop the Activity records of these
	 * launches. */
	if (to == ops->n) {
		counters_close(rs->ictr);
		rs->ictr = NULL;
	} else {
		counters_suspend(rs->ictr);
	}
	{
		struct kernel_rec *r = NULL;
		size_t n = 0;

		if (activity_collect(&r, &n) == 0)
			activity_free(r, n);
	}
}

/* ---- the run, in phases ------------------------------------------------ */

void run_print_summary(struct store *st, long long run_id)
{
	static const char *const hdr[] = { "workload", "variant", "dtype", "shape",
					   "status", "time_us", "kernels", "dram_MB",
					   "device" };
	sqlite3_stmt *s = NULL;
	struct table t;
	long long ndev = 0;

	/* A column for the device only in a run of several. */
	if (sqlite3_prepare_v2(store_db(st), "SELECT count(DISTINCT device_id) FROM "
			       "ops WHERE run_id = ?1", -1, &s, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(s, 1, run_id);
	if (sqlite3_step(s) == SQLITE_ROW)
		ndev = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	if (sqlite3_prepare_v2(store_db(st),
			       "SELECT workload, variant, dtype, shape, status, "
			       "time_ns / 1e3, launches, dram_bytes / 1e6, "
			       "device || ' (' || device_id || ')' FROM v_ops "
			       "WHERE run_id = ?1 ORDER BY device_id, op_id", -1, &s,
			       NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(s, 1, run_id);
	table_init(&t, ndev > 1 ? 9 : 8, hdr);
	while (sqlite3_step(s) == SQLITE_ROW) {
		for (int c = 0; c < 5; c++)
			table_add_text(&t, (const char *)sqlite3_column_text(s, c));
		for (int c = 5; c < 8; c++) {
			if (sqlite3_column_type(s, c) == SQLITE_NULL)
				table_add_null(&t);
			else
				table_add_double(&t, sqlite3_column_double(s, c), 4);
		}
		if (ndev > 1)
			table_add_text(&t, (const char *)sqlite3_column_text(s, 8));
	}
	sqlite3_finalize(s);
	table_print(&t, TABLE_TEXT, stdout);
	table_release(&t);
}

/* Every op must fit before anything is stored: a sweep that overflows GPU
 * memory at its last shape should fail now, not in an hour. Returns 0, or
 * -1 after an error naming the first op that does not fit. */
static int check_fit(const struct op_list *ops)
{
	size_t free_b;

	if (probe_device_free_bytes(&free_b))
		return -1;
	for (size_t i = 0; i < ops->n; i++) {
		const struct op_spec *op = &ops->v[i];
		size_t need = op->w->device_bytes(&op->shape, op->dt, op->variant, 1);

		if (need > free_b)
			return error("%s: does not fit in GPU memory: needs %.2f GiB, "
				     "%.2f GiB free (choose a smaller --shape)", op->key,
				     need / 1073741824.0, free_b / 1073741824.0);
	}
	return 0;
}

/* The device's row in the store (*device_id), and its ceilings when any
 * that a measurement stores is missing (none stored yet, or stored by a
 * fuseprof that measured fewer) or --remeasure asks: *nceil of them
 * measured into ceil[max], to be stored with the run (begin_run). Returns
 * 0 or -1. */
static int device_ceilings(const struct run_opts *o, struct store *st,
			   const struct probe_device *dev, long long *device_id,
			   struct ceiling *ceil, int max, int *nceil)
{
	struct store_device sd;
	long long missing = 0;
	char names[256];

	device_to_store(dev, &sd);
	if (store_upsert_device(st, &sd, device_id) ||
	    ceilings_missing(st, *device_id, &missing, names, sizeof names))
		return -1;
	if (!o->remeasure && missing > 0 && missing < PROBE_NMEASURED)
		fprintf(stderr, "fuseprof: measuring the ceilings of %s again: none "
			"stored for %s\n", dev->name, names);
	else if (o->remeasure || missing > 0)
		fprintf(stderr, "fuseprof: measuring the ceilings of %s (once per "
			"device, driver and clocks)\n", dev->name);
	if (o->remeasure || missing > 0) {
		*nceil = ceilings_collect(dev, ceil, max, 0);
		if (*nceil < 0)
			return -1;
	}
	return 0;
}

/* Open the counter group's collectors in rs: hardware counters under the
 * replay asked for, instrumented ones (instruction counts) under kernel
 * replay; fall back to no counters where profiling is denied or busy.
 * mode (size bytes) receives the run's counters description and must
 * outlive rs. Returns 0, or -1 after an error; either way close_counters
 * releases what was opened. */
static int open_counters(struct run_state *rs, struct counter_group *group,
			 size_t nops, char *mode, size_t size)
{
	const struct run_opts *o = rs->o;
	int nm = group->ncounters, rc = 0;

	rs->group = group;
	rs->nops = (int)nops;
	rs->nvals = nm + 1;
	rs->vnames = xcalloc((size_t)rs->nvals, sizeof *rs->vnames);
	for (int m = 0; m < nm; m++)
		rs->vnames[m] = group->counters[m];
	rs->vnames[nm] = FP_WRITEBACK_METRIC;
	rs->hw = xcalloc((size_t)nm, sizeof *rs->hw);
	rs->ins = xcalloc((size_t)nm, sizeof *rs->ins);
	rs->hw_idx = xcalloc((size_t)nm, sizeof *rs->hw_idx);
	rs->ins_idx = xcalloc((size_t)nm, sizeof *rs->ins_idx);
	for (int m = 0; m < nm; m++) {
		const char *name = group->counters[m];

		if (o->replay == COUNTERS_REPLAY_OP && counters_instrumented(name)) {
			rs->ins_idx[rs->nins] = m;
			rs->ins[rs->nins++] = name;
		} else {
			rs->hw_idx[rs->nhw] = m;
			rs->hw[rs->nhw++] = name;
		}
	}
	if (rs->nhw)
		rc = counters_open(&rs->ctr, rs->hw, rs->nhw, MAX_RANGES, o->replay);
	if (rc == 0 && rs->ctr && o->flush_each_kernel)
		rc = counters_flush_each_kernel(rs->ctr);
	if (rc == 0 && rs->nins)
		rc = counters_open(&rs->ictr, rs->ins, rs->nins, MAX_RANGES,
				   COUNTERS_REPLAY_KERNEL);
	if (rc == PROBE_BAD_COUNTER) {
		char *list = group_list();

		error("counter group '%s' (%s) names a counter this GPU lacks; "
		      "groups: %s", group->name, group->path, list);
		free(list);
		return -1;
	}
	if (rc == PROBE_DENIED || rc == PROBE_BUSY) {
		counters_fallback(rs, rc);
		return 0;
	}
	if (rc)
		return -1;
	/* The run's row says how the counters were taken, so that compare
	 * can tell runs apart that took them differently. */
	snprintf(mode, size, "range-profiler (%s; %s)", group->name,
		 o->replay == COUNTERS_REPLAY_KERNEL ? "kernel replay" :
		 o->flush_each_kernel ? "op replay, flush kernel, write-backs counted" :
					"op replay, flush op, write-backs counted");
	rs->counters_state = mode;
	if (rs->ctr) {
		int np = counters_passes(rs->ctr);

		fprintf(stderr, "fuseprof: counter group '%s': %d counters "
			"in %d replay pass%s %s\n", group->name, rs->nhw, np,
			np == 1 ? "" : "es", o->replay == COUNTERS_REPLAY_KERNEL ?
			"per kernel (kernel replay)" : o->flush_each_kernel ?
			"per op (op replay, L2 flushed before each kernel)" :
			"per op (op replay, L2 flushed before each)");
	}
	if (rs->ictr)
		fprintf(stderr, "fuseprof: counter group '%s': %d instruction "
			"counts in %d pass%s per kernel, every op first (kernel "
			"replay)\n", group->name, rs->nins, counters_passes(rs->ictr),
			counters_passes(rs->ictr) == 1 ? "" : "es");
	return 0;
}

/* Release what open_counters opened and the loop counted; rs may hold
 * none of it. */
static void close_counters(struct run_state *rs)
{
	counters_close(rs->ctr);
	counters_close(rs->ictr);
	for (int i = 0; rs->insn && i < rs->nops; i++)
		free(rs->insn[i]);
	free(rs->insn);
	free(rs->insn_k);
	free(rs->hw);
	free(rs->vnames);
	free(rs->ins);
	free(rs->hw_idx);
	free(rs->ins_idx);
}

/* Start CUPTI Activity, which times every kernel. Returns 0 or -1. */
static int start_timing(void)
{
	int rc = activity_start();

	if (rc == PROBE_BUSY)
		return error("cannot time kernels: another profiler holds CUPTI "
			     "(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED): run "
			     "fuseprof outside Nsight Systems/Compute");
	return rc ? -1 : 0;
}

/* A measuring process of run_devices(): the running run o->into_run,
 * which its parent started, takes this device's ops and the ceilings
 * measured for it (nceil of ceil). Returns 0, or -1 (reported). */
static int join_run(struct run_state *rs, long long device_id,
		    const struct ceiling *ceil, int nceil)
{
	sqlite3_stmt *s = NULL;
	int ok;

	if (sqlite3_prepare_v2(store_db(rs->st), "SELECT 1 FROM runs WHERE id = ?1 "
			       "AND kind = 'run' AND status = 'running'", -1, &s,
			       NULL) != SQLITE_OK)
		return store_error(rs->st, "cannot read runs from");
	sqlite3_bind_int64(s, 1, rs->o->into_run);
	ok = sqlite3_step(s) == SQLITE_ROW;
	sqlite3_finalize(s);
	if (!ok)
		return error("run %lld in '%s' is not a running run to measure into",
			     rs->o->into_run, store_path(rs->st));
	rs->run_id = rs->o->into_run;
	if (store_set_run_counters(rs->st, rs->run_id, rs->counters_state))
		return -1;
	if (rs->o->run_device ? store_set_run_device(rs->st, rs->run_id, device_id)
	    : store_profile_device(rs->st, rs->run_id, device_id))
		return -1;
	if (nceil > 0 && ceilings_save(rs->st, device_id, rs->run_id, ceil, nceil))
		return error("run %lld: could not store the ceilings of device %d",
			     rs->run_id, rs->o->device);
	return 0;
}

/* The run's row (rs->run_id), the ceilings measured for it (nceil of
 * ceil), and the seed every op's inputs derive from. Returns 0, or -1
 * (a run row that exists is then marked failed). */
static int begin_run(struct run_state *rs, long long device_id,
		     const struct ceiling *ceil, int nceil)
{
	const struct run_opts *o = rs->o;
	char host[256] = "";
	struct store_run sr;

	rs->seed_base = splitmix64((unsigned long long)time(NULL) ^
				   ((unsigned long long)getpid() << 32));
	if (o->into_run)
		return join_run(rs, device_id, ceil, nceil);
	gethostname(host, sizeof host - 1);
	memset(&sr, 0, sizeof sr);
	sr.tool_version = PACKAGE_VERSION;
	sr.host = host;
	sr.command_line = o->command_line;
	sr.tag = o->tag;
	sr.device_id = device_id;
	sr.counters = rs->counters_state;
	if (store_begin_run(rs->st, &sr, &rs->run_id))
		return -1;
	if (nceil > 0 && ceilings_save(rs->st, device_id, rs->run_id, ceil, nceil)) {
		store_finish_run(rs->st, rs->run_id, "failed", "could not store the ceilings");
		return -1;
	}
	return 0;
}

/* The loop: every op of the list measured and stored, until the end or
 * Ctrl-C (which stops it between groups); *done counts the ops stored.
 * Returns 0, or -1 when an op could not be stored (the run is then marked
 * failed). */
static int measure_ops(struct run_state *rs, const struct op_list *ops, size_t *done)
{
	struct sigaction sa, old_sa;
	char note[384];
	size_t counted = 0;  /* ops whose instructions were counted */
	double t0, clk;     /* when the loop started; the lap clock */

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	interrupted = 0;
	sigaction(SIGINT, &sa, &old_sa);
	/* Per-op estimates for the ETA (see struct eta). */
	rs->eta.est = xcalloc(ops->n, sizeof *rs->eta.est);
	for (size_t i = 0; i < ops->n; i++) {
		const struct op_spec *op = &ops->v[i];
		struct run_estimate e;

		memset(&e, 0, sizeof e);
		run_estimate_op(&e, rs->o, op->w, op->variant, op->dt, &op->shape,
				rs->group != NULL, op->key);
		rs->eta.est[i] = e.time_s + e.check_s + e.counters_s;
	}
	t0 = clk = now_seconds();
	/* The variants of one workload, dtype and shape are measured as a
	 * group, as many as fit in GPU memory together: set up one by one,
	 * timed interleaved, stored one by one. */
	for (size_t i = 0; i < ops->n && !interrupted; ) {
		struct meas ms[MAX_GROUP];
		int n = 0, stored;

		/* Instruction counts: the first case's, then everyone else's. */
		if (rs->ictr && i >= counted) {
			size_t to = ops->n;

			if (i == 0)
				for (to = 1; to < ops->n &&
				     same_case(&ops->v[0], &ops->v[to]); to++)
					;
			rs->eta.meas_s += lap(&clk);
			count_instructions(rs, ops, i, to, t0);
			lap(&clk);
			counted = to;
		}

		while (i < ops->n && n < MAX_GROUP && !interrupted &&
		       (n == 0 || same_case(ms[0].op, &ops->v[i]))) {
			size_t first = i;

			while (first > 0 && same_case(&ops->v[first - 1], &ops->v[i]))
				first--;
			progress("", i, ops->n, ops->v[i].key, t0,
				 eta_left(&rs->eta, ops->n));
			if (op_prepare(rs, &ms[n], &ops->v[i], i, first, n) == OP_NO_ROOM)
				break;
			n++;
			i++;
		}
		stored = flush_group(rs, ms, n);
		*done += (size_t)stored;
		if (stored > 0 && isnan(rs->t_first))
			rs->t_first = now_seconds() - rs->t_start;
		rs->eta.meas_s += lap(&clk);
		rs->eta.measured = i;
		if (stored < n) {
			progress_done();
			snprintf(note, sizeof note, "stopped at op %zu of %zu (%s): it "
				 "could not be stored", *done + 1, ops->n, ops->v[*done].key);
			store_finish_run(rs->st, rs->run_id, "failed", note);
			sigaction(SIGINT, &old_sa, NULL);
			free(rs->eta.est);
			rs->eta.est = NULL;
			return -1;
		}
	}
	progress_done();
	sigaction(SIGINT, &old_sa, NULL);
	free(rs->eta.est);
	rs->eta.est = NULL;
	return 0;
}

/* Close the run's row (complete, or aborted after Ctrl-C) with a note of
 * where the time went, and print the summary. Returns the exit status of
 * run_suite. */
static int finish_run(struct run_state *rs, const struct op_list *ops, size_t done)
{
	unsigned long long dr = activity_dropped();
	const char *final = interrupted ? "aborted" : "complete";
	char note[512];

	snprintf(note, sizeof note, "%zu of %zu ops; %d wrong, %d error; "
		 "CUPTI dropped %llu kernel records; counters: %s; %.1f s: "
		 "ceilings %.1f, setup %.1f, checks %.1f, timing %.1f, counters "
		 "%.1f (%lld kernels), storing %.1f; first op stored at %.1f s",
		 done, ops->n, rs->nwrong, rs->nerror, dr, rs->counters_state,
		 now_seconds() - rs->t_start, rs->t_ceil, rs->t_setup, rs->t_check,
		 rs->t_time, rs->t_count, rs->counted, rs->t_store, rs->t_first);
	if (dr)
		warning("CUPTI dropped %llu kernel records: the ops concerned "
			"are marked 'error'", dr);
	/* A measuring process of several leaves the run to its parent. */
	if (rs->o->into_run)
		fprintf(stderr, "fuseprof: run %lld, device %d: %s\n", rs->run_id,
			rs->o->device, note);
	else if (store_finish_run(rs->st, rs->run_id, final, note))
		return EXIT_FAIL;
	if (!rs->o->into_run) {
		run_print_summary(rs->st, rs->run_id);
		fprintf(stderr, "fuseprof: run %lld: %s\n", rs->run_id, note);
	}
	if (interrupted) {
		fprintf(stderr, "fuseprof: interrupted: run %lld aborted after %zu of "
			"%zu ops (all stored ops are whole)\n", rs->run_id, done, ops->n);
		return 130;
	}
	if (rs->nwrong || rs->nerror) {
		error("run %lld: %d op%s wrong, %d failed (see the messages above)",
		      rs->run_id, rs->nwrong, rs->nwrong == 1 ? "" : "s", rs->nerror);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/* --dry-run, once the op list and the counter group are valid: what a run
 * checks before it touches the GPU besides (the database), then the ops,
 * one key a line on stdout, and the estimate on stderr. Returns the exit
 * status. */
static int dry_run(const struct run_opts *o, const struct op_list *ops,
		   int counters)
{
	struct run_estimate e;
	size_t npairs;

	if (run_check_db(o->db))
		return EXIT_FAIL;
	memset(&e, 0, sizeof e);
	for (size_t i = 0; i < ops->n; i++) {
		const struct op_spec *op = &ops->v[i];

		printf("%s\n", op->key);
		run_estimate_op(&e, o, op->w, op->variant, op->dt, &op->shape,
				counters, op->key);
	}
	fflush(stdout);
	run_estimate_print(&e, stderr);
	npairs = count_saved_pairs(ops);
	if (npairs)
		fprintf(stderr, "fuseprof: dry run: %zu forward op%s with %s backward "
			"of the same variant, dtype and shape (the report's save-or-"
			"recompute table)\n", npairs, npairs == 1 ? "" : "s",
			npairs == 1 ? "its" : "their");
	return EXIT_OK;
}

/* The phases in order: the op list, the fit, the store and the device's
 * ceilings, the counters, timing, the run's row, the loop, the finish;
 * then each undone in reverse. */
int run_suite(const struct run_opts *o)
{
	struct op_list ops = { NULL, 0, 0 };
	struct counter_group group;
	struct probe_device dev;
	struct run_state rs;
	struct ceiling ceil[32];
	struct store *st = NULL;
	long long device_id = 0;
	char counters_mode[160];
	int nceil = 0, rc, status = EXIT_FAIL, have_group = 0;
	size_t done = 0;
	double t0;

	memset(&rs, 0, sizeof rs);
	rs.t_start = now_seconds();
	rs.t_first = NAN;
	memset(&group, 0, sizeof group);
	rc = build_ops(o, &ops);
	if (rc)
		return rc;
	if (o->counters) {
		if (group_load(&group, o->group))
			goto out_free;
		have_group = 1;
	}
	if (o->dry_run) {
		status = dry_run(o, &ops, have_group);
		goto out_free;
	}
	if (probe_device_open(o->device, &dev) || check_fit(&ops))
		goto out_free;
	if (store_open(&st, o->db, STORE_CREATE))
		goto out_free;
	t0 = now_seconds();
	if (device_ceilings(o, st, &dev, &device_id, ceil, (int)ARRAY_SIZE(ceil), &nceil))
		goto out_close;
	rs.t_ceil = now_seconds() - t0;

	rs.o = o;
	rs.st = st;
	rs.dev = &dev;
	rs.device_id = device_id;
	show_progress = !o->into_run;
	rs.counters_state = "none";
	if (have_group &&
	    open_counters(&rs, &group, ops.n, counters_mode, sizeof counters_mode))
		goto out_counters;
	if (start_timing())
		goto out_counters;
	if (begin_run(&rs, device_id, ceil, nceil) || measure_ops(&rs, &ops, &done))
		goto out_activity;
	status = finish_run(&rs, &ops, done);
out_activity:
	activity_stop();
out_counters:
	close_counters(&rs);
out_close:
	store_close(st);
out_free:
	if (have_group)
		group_release(&group);
	free(ops.v);
	return status;
}
