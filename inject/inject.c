/* inject.c - libfuseprof-inject.so, the collector `fuseprof profile` puts
 * into a program: the CUDA driver loads it through CUDA_INJECTION64_PATH
 * and calls InitializeInjection when the program initialises CUDA; NVTX
 * loads it through NVTX_INJECTION64_PATH at the program's first NVTX call
 * and calls InitializeInjectionNvtx2, which it hands on to CUPTI (that is
 * how CUPTI sees NVTX ranges). Whichever comes first subscribes CUPTI
 * Activity (kernels, NVTX markers) and the launch callbacks, opens the
 * database the command named, and starts a thread that commits what came
 * every FP_COMMIT_SECONDS, or sooner after FP_COMMIT_KERNELS kernels
 * (collect.c does the work); an exit handler commits the rest. Only the
 * two entry points are exported (inject.map): the library lives in
 * someone else's process, whose own symbols (error(), glibc's among them)
 * must never meet ours. A process that fails to set up says so in one
 * line on stderr and runs on unprofiled. */
/* dladdr */
#define _GNU_SOURCE
#include "config.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <cupti.h>

#include "args.h"
#include "collect.h"
#include "error.h"
#include "inject.h"
#include "probes.h"
#include "util.h"
#include "views.h"

#define EXPORT __attribute__((visibility("default")))

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	int active;          /* set up, thread running */
	int stop;
	pthread_t thread;
	struct collect_config cfg;
	struct collector *col;
	char *command_line;
	/* What the sinks queued since the last batch. */
	struct marker_rec *m;
	size_t nm, am;
	struct launch_rec *l;
	size_t nl, al;
	struct kernel_rec *k;
	size_t nk, ak;
} g = { .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER };

static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Counters (FP_ENV_PROFILE_COUNTERS): the range profiler, one range per
 * kernel, in turns of collectors. Hardware counters (bytes) are read in
 * one pass without replay (CUPTI's user replay with a configuration of
 * one pass: the kernels run once, as the program runs them; a group that
 * needs more passes is split into collectors that need one), with
 * fuseprof's L2 flush right before each kernel (every kernel starts from
 * a clean cache) and right after it, before its launch call returns (the
 * flush after a kernel measures what it left dirty, its write-back, and
 * nothing that GPU work the collector does not see, a copy or a memset,
 * left dirty after it: ranges F K A a kernel, probes/counters-layout.c).
 * Kernel replay would save and restore the memory a kernel may write
 * around each pass, which leaves its buffers in L2 and its DRAM bytes
 * wrong; the instruction counts (FLOPs), which CUPTI counts by patching
 * the code and which no cache changes, take kernel replay, in a collector
 * of their own. A collection holds the
 * kernels launched since it began; it ends at FP_COUNT_BATCH kernels,
 * before a launch it cannot count (a graph, a cooperative launch on
 * several devices), and at each commit, which takes the launches only once
 * the collection before them has ended (so a launch's values come in the
 * batch of its launch record); then the next collector takes its turn.
 * So each kernel slot's metrics are means over the launches that had
 * them. The lock is held from a counted launch's entry to its return, so
 * launches from several threads are counted one at a time and in order. */
#define MAX_COLLECTORS 8
struct collector_turn {
	struct counters *c;
	const char **names;     /* its metrics, n of them */
	int *at;                /* their places in ct.names */
	int n, flushes;
};
static struct {
	pthread_mutex_t lock;
	char **names;           /* the metrics, then the write-back */
	int n;                  /* of the counters (names has n + 1) */
	int wanted, failed, opened;
	struct collector_turn col[MAX_COLLECTORS];
	int ncol, cur;
	int *replayed, nreplayed;  /* hardware metrics left to kernel replay */
	int duration;           /* the place of COLLECT_DURATION_METRIC */
	int limit, turn;        /* kernels this collector's turn takes, and
				   has counted in collections that ended */
	unsigned long long seed;
	CUcontext ctx;
	uint32_t corr[FP_COUNT_BATCH];
	int nk;
	void *stream;           /* the last counted kernel's */
	long long lost;         /* counted kernels whose values were lost */
	char *note;             /* why counting stopped, if it did */
	struct counted_rec *done;   /* values waiting for the next batch */
	size_t ndone, adone;
} ct = { .lock = PTHREAD_MUTEX_INITIALIZER };
/* This thread holds ct.lock for the launch call it is in. */
static __thread int counting;

#define PUSH(v, n, a, x) do { \
	if ((n) == (a)) { \
		(a) = (a) ? 2 * (a) : 4096; \
		(v) = xrealloc((v), (a) * sizeof *(v)); \
	} \
	(v)[(n)++] = *(x); \
} while (0)

static void on_kernel(const struct kernel_rec *kr, void *arg)
{
	(void)arg;
	/* The counters' own L2 flushes are not the program's, nor the
	 * kernel the range profiler launches inside a counted launch call
	 * (its record carries that call's correlation id: kept, it would
	 * take the place of the program's kernel). */
	if (ct.wanted && kr->name &&
	    (!strncmp(kr->name, COUNTERS_FLUSH_KERNEL, sizeof COUNTERS_FLUSH_KERNEL - 1) ||
	     !strcmp(kr->name, COUNTERS_PROFILER_KERNEL)))
		return;
	pthread_mutex_lock(&g.lock);
	PUSH(g.k, g.nk, g.ak, kr);
	if (g.nk >= FP_COMMIT_KERNELS)
		pthread_cond_signal(&g.wake);
	pthread_mutex_unlock(&g.lock);
}

static void on_marker(const struct marker_rec *m, void *arg)
{
	(void)arg;
	pthread_mutex_lock(&g.lock);
	PUSH(g.m, g.nm, g.am, m);
	pthread_mutex_unlock(&g.lock);
}

static void on_launch(const struct launch_rec *l, void *arg)
{
	(void)arg;
	pthread_mutex_lock(&g.lock);
	PUSH(g.l, g.nl, g.al, l);
	pthread_mutex_unlock(&g.lock);
}

static const struct activity_sink sink = { on_kernel, on_marker, NULL };

/* Stop counting for good, with the reason on the process's row. */
static void count_fail(const char *why)
{
	ct.failed = 1;
	if (!ct.note)
		ct.note = xstrdup(why);
	warning("profile: process %ld: %s; timings only from here", (long)getpid(), why);
}

/* A new turn: FP_COUNT_BATCH / 3 to FP_COUNT_BATCH kernels, drawn, so
 * that turns do not keep step with a program's loop (which would give
 * one kernel slot's every launch to one collector). */
static void turn_draw(void)
{
	ct.seed = ct.seed * 6364136223846793005ull + 1442695040888963407ull;
	ct.limit = FP_COUNT_BATCH / 3 +
		   (int)((ct.seed >> 33) % (unsigned)(FP_COUNT_BATCH - FP_COUNT_BATCH / 3 + 1));
	ct.turn = 0;
}

/* End the running collection: its values, a row per kernel in launch
 * order, go to ct.done by the kernels' correlation ids; the next
 * collector takes its turn. Under ct.lock. */
static void count_end(void)
{
	struct collector_turn *t = &ct.col[ct.cur];
	double *v = NULL;
	int nr = 0, dropped = 0, rc;

	if (!ct.ncol || !counters_running(t->c))
		return;
	activity_hide_launches(1);  /* the closing flush */
	rc = counters_end(t->c, ct.stream, &v, &nr, &dropped);
	activity_hide_launches(0);
	if (rc || nr != ct.nk || dropped) {
		ct.lost += ct.nk;
		if (rc)
			count_fail("cannot read the counters of a collection");
	} else {
		pthread_mutex_lock(&g.lock);
		for (int j = 0; j < nr; j++) {
			struct counted_rec r = { ct.corr[j], xmalloc((size_t)(ct.n + 1) * sizeof(double)) };

			for (int i = 0; i <= ct.n; i++)
				r.values[i] = NAN;
			for (int i = 0; i < t->n; i++)
				r.values[t->at[i]] = v[(size_t)j * (size_t)t->n + (size_t)i];
			if (t->flushes)
				r.values[ct.n] = counters_writeback(t->c, j);
			PUSH(ct.done, ct.ndone, ct.adone, &r);
		}
		pthread_mutex_unlock(&g.lock);
	}
	free(v);
	ct.turn += ct.nk;
	ct.nk = 0;
	/* The next collector's turn once this one has had its kernels;
	 * a collection ended sooner (a commit, a graph, the exit) leaves
	 * the turn to go on: a program of few kernels gets the first
	 * collector's metrics on all of them. */
	if (ct.ncol > 1 && ct.turn >= ct.limit) {
		/* One range profiler session at a time. */
		counters_suspend(t->c);
		ct.cur = (ct.cur + 1) % ct.ncol;
		turn_draw();
	}
}

/* count_end from a thread that may not have the collection's context
 * current (the commit thread, the exit handler). Under ct.lock. */
static void count_end_here(void)
{
	CUcontext prev = NULL;

	if (!ct.ncol || !counters_running(ct.col[ct.cur].c))
		return;
	cuCtxGetCurrent(&prev);
	if (prev != ct.ctx)
		cuCtxSetCurrent(ct.ctx);
	count_end();
	if (prev != ct.ctx)
		cuCtxSetCurrent(prev);
}

/* The last collection, while the CUDA runtime the counters use (its own:
 * this handler is registered after that runtime started) is still up. */
static void count_at_exit(void)
{
	pthread_mutex_lock(&ct.lock);
	count_end_here();
	pthread_mutex_unlock(&ct.lock);
}

/* Add a collector of the n metrics at[] of ct.names: hardware counters
 * in one pass without replay (halved until each half takes one), or the
 * instrumented ones under kernel replay. Returns 0, or a PROBE_ code or
 * -1 from counters_open. */
static int turn_add(const int *at, int n, int instrumented)
{
	struct collector_turn t = { 0 };
	int rc;

	if (n == 0)
		return 0;
	if (ct.ncol == MAX_COLLECTORS)
		return error("profile: the counters need more than %d collectors",
			     MAX_COLLECTORS);
	t.n = n;
	t.names = xcalloc((size_t)n, sizeof *t.names);
	t.at = xcalloc((size_t)n, sizeof *t.at);
	for (int i = 0; i < n; i++) {
		t.at[i] = at[i];
		t.names[i] = ct.names[at[i]];
	}
	rc = counters_open(&t.c, t.names, n, 2 * FP_COUNT_BATCH + 1,
			   instrumented ? COUNTERS_REPLAY_KERNEL : COUNTERS_REPLAY_OP);
	if (rc == 0 && !instrumented && counters_passes(t.c) > 1) {
		counters_close(t.c);
		free(t.names);
		free(t.at);
		if (n == 1) {
			/* One metric that takes several passes (a ratio of
			 * counters read apart): kernel replay's. */
			ct.replayed[ct.nreplayed++] = at[0];
			return 0;
		}
		rc = turn_add(at, n / 2, 0);
		return rc ? rc : turn_add(at + n / 2, n - n / 2, 0);
	}
	if (rc == 0 && !instrumented) {
		rc = counters_kernel_flushes(t.c);
		t.flushes = 1;
	}
	if (rc) {
		counters_close(t.c);
		free(t.names);
		free(t.at);
		return rc;
	}
	ct.col[ct.ncol++] = t;
	return 0;
}

/* Open the collectors in the launching thread's context: the first
 * launch that has one. */
static int count_open(void)
{
	int *hw = xcalloc((size_t)ct.n, sizeof *hw), *ins = xcalloc((size_t)ct.n, sizeof *ins);
	int nhw = 0, nins = 0, rc;

	ct.opened = 1;
	if (cuCtxGetCurrent(&ct.ctx) != CUDA_SUCCESS || !ct.ctx) {
		ct.opened = 0;  /* the next launch tries again */
		free(hw);
		free(ins);
		return -1;
	}
	for (int i = 0; i < ct.n; i++) {
		if (counters_instrumented(ct.names[i]))
			ins[nins++] = i;
		else
			hw[nhw++] = i;
	}
	/* The instrumented collector times its kernels too. */
	if (nins)
		ins[nins++] = ct.duration;
	ct.replayed = ins + nins;  /* room: ins has ct.n places */
	ct.nreplayed = 0;
	rc = turn_add(hw, nhw, 0);
	nins += ct.nreplayed;
	if (rc == 0)
		rc = turn_add(ins, nins, 1);
	free(hw);
	free(ins);
	ct.replayed = NULL;
	if (rc == 0) {
		turn_draw();
		atexit(count_at_exit);  /* before the runtime it started goes */
	}
	if (rc) {
		count_fail(rc == PROBE_DENIED ? "counters are not permitted (run as root, "
			   "or set NVreg_RestrictProfilingToAdminUsers=0)"
			   : rc == PROBE_BUSY ? "another profiler holds the counters"
			   : "cannot open the counters");
		return -1;
	}
	return 0;
}

static void on_edge(const struct launch_edge *e, void *arg)
{
	struct collector_turn *t;

	(void)arg;
	if (!e->enter) {
		if (!counting)
			return;
		counting = 0;
		/* The kernel ends before anything else is counted: one
		 * range at a time, whatever the streams. Then its own
		 * write-back is flushed, before the program can enqueue
		 * anything that would dirty L2 (a copy, a memset): the next
		 * kernel's flush would charge that to this kernel. */
		if (e->ok) {
			cuCtxSynchronize();
			if (ct.col[ct.cur].flushes) {
				counters_flush_after(ct.col[ct.cur].c,
						     e->known ? e->stream : NULL);
				cuCtxSynchronize();
			}
		}
		/* A failed call launched no kernel, but its flush ran: the
		 * collection's ranges no longer pair with its kernels. */
		if (!e->ok || ct.turn + ct.nk >= ct.limit)
			count_end();
		pthread_mutex_unlock(&ct.lock);
		return;
	}
	if (ct.failed)
		return;
	pthread_mutex_lock(&ct.lock);
	if (!e->single) {
		/* Not one range we can tell: end before it. */
		count_end();
		goto unlock;
	}
	if (!ct.opened && count_open())
		goto unlock;
	if (ct.failed || !ct.ncol)
		goto unlock;
	t = &ct.col[ct.cur];
	if (!counters_running(t->c) && counters_begin(t->c)) {
		count_fail("cannot start a counter collection");
		goto unlock;
	}
	if (t->flushes) {
		/* On the kernel's stream; a launch call whose stream cannot
		 * be read (CUDA 13's __cudaLaunchKernel) gets it on the
		 * default stream, waited for. */
		counters_flush_before(t->c, e->known ? e->stream : NULL);
		if (!e->known)
			cuCtxSynchronize();
	}
	ct.corr[ct.nk++] = e->correlation;
	ct.stream = e->stream;
	counting = 1;
	return;  /* held until the call returns */
unlock:
	pthread_mutex_unlock(&ct.lock);
}

/* Take the launches, flush CUPTI, take the markers and kernels, and hand
 * them to the collector. Only the commit thread (or, after it ended, the
 * exit handler) calls this. */
static int commit_batch(int last)
{
	struct collect_batch b = { .last = last };
	struct launch_rec *l;
	struct marker_rec *m;
	struct kernel_rec *k;
	int rc;

	/* The running collection ends first, so that the values of every
	 * launch taken below are in this batch. No launch can enter while
	 * ct.lock is held; the collection is the context's, so this thread
	 * makes it current. */
	if (ct.wanted) {
		pthread_mutex_lock(&ct.lock);
		count_end_here();
	}
	/* Launches first: every marker before them is in CUPTI's buffers by
	 * the flush after. */
	pthread_mutex_lock(&g.lock);
	l = g.l;
	b.nlaunches = g.nl;
	g.l = NULL;
	g.nl = g.al = 0;
	b.taken = activity_now();
	b.counted = ct.done;
	b.ncounted = ct.ndone;
	ct.done = NULL;
	ct.ndone = ct.adone = 0;
	pthread_mutex_unlock(&g.lock);
	if (ct.wanted)
		pthread_mutex_unlock(&ct.lock);
	/* Counting, every buffer: CUPTI holds a buffer back while a kernel
	 * record in it lacks its times, which the kernels the range
	 * profiler measures never get, and the NVTX markers beside them
	 * would come too late to place the launches. */
	activity_flush(last || ct.wanted);
	pthread_mutex_lock(&g.lock);
	m = g.m;
	b.nmarkers = g.nm;
	k = g.k;
	b.nkernels = g.nk;
	g.m = NULL;
	g.k = NULL;
	g.nm = g.am = g.nk = g.ak = 0;
	pthread_mutex_unlock(&g.lock);
	b.launches = l;
	b.markers = m;
	b.kernels = k;
	b.dropped = activity_dropped();
	rc = collect_batch(g.col, &b);
	for (size_t i = 0; i < b.ncounted; i++)  /* not taken: an error */
		free(b.counted[i].values);
	free(b.counted);
	free(l);
	free(m);
	free(k);
	return rc;
}

static void *commit_loop(void *arg)
{
	sigset_t all;

	(void)arg;
	/* The program's signals are for its own threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_mutex_lock(&g.lock);
	while (!g.stop) {
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += FP_COMMIT_SECONDS;
		while (!g.stop && g.nk < FP_COMMIT_KERNELS &&
		       pthread_cond_timedwait(&g.wake, &g.lock, &until) == 0)
			;
		if (g.stop)
			break;
		pthread_mutex_unlock(&g.lock);
		commit_batch(0);
		pthread_mutex_lock(&g.lock);
	}
	pthread_mutex_unlock(&g.lock);
	return NULL;
}

static void at_exit(void)
{
	struct collect_counts n;
	char *note = NULL;

	if (!g.active)
		return;
	pthread_mutex_lock(&g.lock);
	g.stop = 1;
	pthread_cond_signal(&g.wake);
	pthread_mutex_unlock(&g.lock);
	pthread_join(g.thread, NULL);
	g.active = 0;
	commit_batch(1);
	activity_stop();
	collect_counts(g.col, &n);
	if (n.unmatched_ends)
		note = xasprintf("%llu NVTX range ends had no open range", n.unmatched_ends);
	if (ct.wanted) {
		char *c = xasprintf("%s%s%lld kernels counted, %lld lost%s%s",
				    note ? note : "", note ? "; " : "", n.counted,
				    ct.lost, ct.note ? ": " : "", ct.note ? ct.note : "");

		free(note);
		note = c;
	}
	collect_close(g.col, "complete", note);
	g.col = NULL;
	free(note);
}

/* A forked child has no commit thread, and no CUDA of its parent's. */
static void in_child(void)
{
	g.active = 0;
}

static char *read_command_line(void)
{
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	size_t n;
	FILE *f = fopen("/proc/self/cmdline", "rb");
	char *s;

	if (!f)
		return NULL;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		strbuf_add(&sb, buf, n);
	fclose(f);
	for (size_t i = 0; i + 1 < sb.len; i++)
		if (!sb.buf[i])
			sb.buf[i] = ' ';
	s = xstrdup(strbuf_str(&sb));
	strbuf_release(&sb);
	return s;
}

/* The counters named in the environment, one a line: ct.names, then the
 * write-back, which the collector stores beside them. */
static void count_setup(const char *list)
{
	char *copy, *line, *save = NULL;
	int i;

	if (!list || !*list)
		return;
	copy = xstrdup(list);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		ct.names = xrealloc(ct.names, (size_t)(ct.n + 2) * sizeof *ct.names);
		ct.names[ct.n++] = xstrdup(line);
	}
	free(copy);
	if (!ct.n)
		return;
	/* Each counted kernel's duration, which its record lacks (see
	 * collect.h, COLLECT_DURATION_METRIC). */
	for (i = 0; i < ct.n && strcmp(ct.names[i], COLLECT_DURATION_METRIC); i++)
		;
	if (i == ct.n) {
		ct.names = xrealloc(ct.names, (size_t)(ct.n + 2) * sizeof *ct.names);
		ct.names[ct.n++] = xstrdup(COLLECT_DURATION_METRIC);
	}
	ct.duration = i;
	ct.names[ct.n] = xstrdup(FP_METRIC_DRAM_WRITEBACK);
	ct.wanted = 1;
	g.cfg.counter_names = (const char *const *)ct.names;
	g.cfg.ncounters = ct.n + 1;
	activity_trace_launch_edges(on_edge, NULL);
	/* which buffers each counted kernel touches (inject/args.h) */
	activity_launch_pointers(args_of_launch);
}

static void setup(void)
{
	const char *db = getenv(FP_ENV_PROFILE_DB), *run = getenv(FP_ENV_PROFILE_RUN);
	const char *max = getenv(FP_ENV_PROFILE_MAX), *dev;
	long v;
	int rc;

	if (!db || !*db || !run || parse_long(run, &v) || v <= 0)
		return;  /* not under `fuseprof profile`: do nothing */
	g.cfg.db = db;
	g.cfg.run_id = v;
	g.cfg.kernel_filter = getenv(FP_ENV_PROFILE_FILTER);
	g.cfg.nvtx_include = getenv(FP_ENV_PROFILE_NVTX);
	if ((dev = getenv(FP_ENV_PROFILE_DEVICE)) && *dev && parse_long(dev, &v) == 0 &&
	    v >= 0 && v < 1024) {
		g.cfg.one_device = 1;
		g.cfg.device = (int)v;
	}
	if (max && *max && parse_long(max, &v) == 0 && v > 0)
		g.cfg.max_kernels = v;
	g.cfg.query_device = probe_device_query;
	g.command_line = read_command_line();
	count_setup(getenv(FP_ENV_PROFILE_COUNTERS));

	rc = activity_start_sink(&sink);
	if (rc == 0)
		rc = activity_trace_launches(on_launch, NULL);
	if (rc == PROBE_BUSY) {
		activity_stop();
		warning("profile: process %ld records nothing: another profiler "
			"holds CUPTI", (long)getpid());
		collect_refuse(&g.cfg, getpid(), g.command_line, "busy",
			       "another profiler holds CUPTI");
		return;
	}
	if (rc) {
		activity_stop();
		collect_refuse(&g.cfg, getpid(), g.command_line, "failed",
			       "cannot subscribe to CUPTI");
		return;
	}
	if (collect_open(&g.col, &g.cfg, getpid(), g.command_line)) {
		activity_stop();
		return;
	}
	if (pthread_create(&g.thread, NULL, commit_loop, NULL)) {
		error("profile: cannot start the commit thread of process %ld",
		      (long)getpid());
		collect_close(g.col, "failed", "cannot start the commit thread");
		g.col = NULL;
		activity_stop();
		return;
	}
	g.active = 1;
	pthread_atfork(NULL, NULL, in_child);
	atexit(at_exit);
}

/* Called by the CUDA driver inside cuInit. Returns 1: success (a profiler
 * that cannot set up leaves the program to run). */
EXPORT int InitializeInjection(void);
EXPORT int InitializeInjection(void)
{
	pthread_once(&once, setup);
	return 1;
}

/* Called by NVTX at the program's first NVTX call (possibly before
 * cuInit): set up, so that no range opened before CUDA starts is missed,
 * then hand NVTX to the CUPTI this library links, which turns NVTX calls
 * into the marker records setup() subscribed to. */
EXPORT int InitializeInjectionNvtx2(void *get_export_table);
EXPORT int InitializeInjectionNvtx2(void *get_export_table)
{
	int (*cupti_init)(void *);
	Dl_info info;
	void *h;

	pthread_once(&once, setup);
	if (!dladdr((void *)cuptiActivityEnable, &info) || !info.dli_fname)
		return 0;
	h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return 0;
	*(void **)&cupti_init = dlsym(h, "InitializeInjectionNvtx2");
	return cupti_init ? cupti_init(get_export_table) : 0;
}
