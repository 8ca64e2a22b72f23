/* probes.h - what fuseprof measures and how: device facts, CUPTI Activity
 * kernel records (durations, launches), CUPTI Range Profiler counters,
 * counter groups read from text files, and the ceilings (measured and
 * theoretical). No SQLite here: commands turn these into store rows.
 * C and C++ (nvcc) clean. */
#ifndef FP_PROBES_H
#define FP_PROBES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Results beyond 0 / -1 that callers act on: each was already reported as
 * one line through error() unless said otherwise. */
enum probe_status {
	PROBE_OK = 0,
	PROBE_ERROR = -1,         /* anything else; reported */
	PROBE_NO_GPU = -2,        /* no driver or no device; reported */
	PROBE_DENIED = -3,        /* CUPTI_ERROR_INSUFFICIENT_PRIVILEGES; not reported */
	PROBE_BUSY = -4,          /* another profiler is attached; not reported */
	PROBE_BAD_COUNTER = -5,   /* a counter name the chip does not have; reported */
};

/* ---- device facts (device.c) ------------------------------------------ */

struct probe_device {
	int index;
	char name[256];
	char uuid[48];            /* "GPU-xxxxxxxx-xxxx-..." */
	int cc_major, cc_minor, sm_count;
	long long l2_bytes, mem_bytes;
	int mem_bus_bits;
	int sm_clock_khz, mem_clock_khz;  /* peak clocks the driver reports */
	int driver_version, runtime_version, cupti_version;
};

/* Number of CUDA devices in *n. Returns 0, or PROBE_NO_GPU after one line
 * naming the cause (no driver, no device) and the fix. */
int probe_device_count(int *n);

/* The index of the device whose UUID ("GPU-...", as probe_device has
 * it) is uuid, in *index, creating no context. Returns 0, PROBE_NO_GPU or
 * -1 (reported: no such GPU). */
int probe_device_find(const char *uuid, int *index);

/* Make device `index` current (cudaSetDevice, context created) and fill d.
 * Returns 0, PROBE_NO_GPU or -1 (reported). */
int probe_device_open(int index, struct probe_device *d);

/* Fill d for device `index` through the driver API alone, creating no
 * context and changing no current device: for the profiler inside a
 * program, after CUDA is initialised. The same values as
 * probe_device_open's (so both find one devices row). Returns 0 or -1
 * (reported). (device-drv.c; links the driver library.) */
int probe_device_query(int index, struct probe_device *d);

/* Free bytes on the current device in *free_bytes. 0 or -1 (reported). */
int probe_device_free_bytes(size_t *free_bytes);

/* ---- counter groups (groups.c) ---------------------------------------- */

/* A counter group: one text file under probes/groups/ (see roofline.txt):
 *   name NAME
 *   description TEXT
 *   counter RAW.METRIC.NAME        (one line each, in collection order)
 *   formula NAME = EXPRESSION      (+ - * / ( ) numbers and counter names)
 * '#' starts a comment; blank lines are ignored. */
struct counter_group {
	char *name, *description, *path;
	int ncounters;
	char **counters;
	int nformulas;
	char **formula_names, **formulas;
};

/* Parse a group from text (path is for messages). Returns 0, or -1 after
 * an error naming path and line; g is then empty. */
int group_parse(struct counter_group *g, const char *text, const char *path);

/* Load the group called name (or a file, when name contains '/') from the
 * group directories: $FUSEPROF_GROUPS_DIR, the installed data directory,
 * the source tree. Returns 0, or -1 after an error that lists the groups
 * there are. */
int group_load(struct counter_group *g, const char *name);

/* Names of the groups found (sorted, ", "-separated), malloc'd. */
char *group_list(void);

void group_release(struct counter_group *g);

/* Evaluate formula i with values[j] the value of counters[j]. NaN when a
 * value is missing (NaN) or on division by zero. */
double group_eval(const struct counter_group *g, int i, const double *values);

/* ---- CUPTI Activity (activity.c) -------------------------------------- */

struct kernel_rec {
	const char *name;         /* demangled; interned, lives as long as
				     the process */
	const char *mangled;      /* interned likewise */
	unsigned grid[3], block[3];
	int registers, static_smem, dynamic_smem;
	uint32_t device, context, stream, correlation;
	uint64_t start, end;      /* ns, GPU timestamps */
};

/* Subscribe CUPTI Activity to concurrent-kernel records. Returns 0, or
 * PROBE_BUSY when another profiler holds CUPTI (not reported), or -1. */
int activity_start(void);

/* An NVTX marker as CUPTI Activity reports it (push/pop and start/end
 * ranges alike: a start, then an end with the same id). */
enum marker_kind { MARKER_START, MARKER_END, MARKER_INSTANT };
struct marker_rec {
	enum marker_kind kind;
	uint32_t id;              /* pairs a start with its end */
	uint32_t tid;             /* the thread (system id, as gettid) */
	uint64_t ts;              /* ns, CUPTI's clock */
	const char *name;         /* interned; NULL on an end */
	const char *domain;       /* interned; NULL: the default domain */
};

/* Where the records of the profiler (`fuseprof profile`'s collector) go,
 * as CUPTI delivers them: from CUPTI's thread or the one that flushes,
 * one buffer at a time under the collector's lock (a sink must not call
 * back into activity_*). kernel and marker may be NULL. */
struct activity_sink {
	void (*kernel)(const struct kernel_rec *k, void *arg);
	void (*marker)(const struct marker_rec *m, void *arg);
	void *arg;
};

/* Subscribe CUPTI Activity to concurrent kernels, and to NVTX markers when
 * sink->marker is set (NVTX reaches CUPTI only when the program's NVTX
 * loads an injection library that hands it over: see inject/inject.c),
 * with thread ids as the system's (gettid). Records go to sink, which must
 * outlive the subscription. Callable before the program initialises CUDA.
 * Returns 0, PROBE_BUSY (not reported) or -1. */
int activity_start_sink(const struct activity_sink *sink);

/* Deliver the buffers CUPTI holds to the sink: those whose records are
 * all complete, or every one (forced: at the end). Returns 0 or -1. */
int activity_flush(int forced);

/* Pointers a launch record keeps at most. */
#define PROBE_LAUNCH_PTRS 32

/* A kernel or graph launch: which thread launched it when, so that the
 * profiler can tell the NVTX ranges it ran in. */
struct launch_rec {
	uint32_t correlation;     /* the launching call's: its kernels' */
	uint32_t tid;             /* system thread id */
	uint64_t ts;              /* ns, CUPTI's clock, when the call returned */
	int graph;                /* a graph launch: several kernels share
				     its correlation id */
	/* The device pointers among its arguments, in order, each once
	 * (activity_launch_pointers); nptrs -1: not read; ptrs_cut: more
	 * were there than PROBE_LAUNCH_PTRS, or arguments than were read. */
	int nptrs, ptrs_cut;
	uint64_t ptrs[PROBE_LAUNCH_PTRS];
	uint64_t ptr_bytes[PROBE_LAUNCH_PTRS];  /* each to its allocation's end */
};

/* Read the device pointers among each kernel launch's arguments with
 * read(cbid, params, out, bytes, max) (a driver launch call's callback id and
 * CUPTI's parameters of it, at its entry; returns as inject/args.h's
 * args_of_launch), into its launch_rec; NULL: stop. A runtime launch's
 * pointers come from the driver call it makes. */
void activity_launch_pointers(int (*read)(unsigned cbid, const void *params,
					  uint64_t *out, uint64_t *bytes, int max));

/* Call fn(launch, arg) from the launching thread as each kernel or graph
 * launch call returns successfully (CUPTI callbacks on the runtime's and
 * the driver's launch calls only). Returns 0, PROBE_BUSY or -1. */
int activity_trace_launches(void (*fn)(const struct launch_rec *l, void *arg),
			    void *arg);

/* Both edges of a kernel or graph launch call, as the launching thread
 * makes it (runtime calls, and driver calls made outside one). */
struct launch_edge {
	int enter;                /* 1: before the call; 0: after it */
	int ok;                   /* after: the call succeeded */
	int graph;                /* a graph launch */
	int known;                /* stream was read from the call's
				     parameters (a kernel launch) */
	int single;               /* the call launches one kernel (not a
				     graph, not one on several devices) */
	uint32_t correlation;
	void *stream;             /* a cudaStream_t / CUstream */
};

/* Also call fn(edge, arg) at both edges of each launch call, in the
 * launching thread, before the record activity_trace_launches' fn gets;
 * what fn launches itself is nobody's launch (no record, no edges). Call
 * before activity_trace_launches, or with fn NULL to stop. */
void activity_trace_launch_edges(void (*fn)(const struct launch_edge *e, void *arg),
				 void *arg);

/* hide 1: this thread's launches from now on are nobody's (as a launch
 * hook's own are), until hide 0. */
void activity_hide_launches(int hide);

/* The stream of a kernel launch call from its CUPTI callback parameters
 * (domain a CUpti_CallbackDomain, cbid its callback id): 1 with *s set,
 * or 0 for a call that is not a kernel launch this knows. */
int probe_launch_stream(int domain, unsigned cbid, const void *params,
			void **s);

/* CUPTI's clock now (ns), the clock of every record. */
uint64_t activity_now(void);

/* The same string every time for equal s (a copy, kept for the process's
 * life): the names the records point to. NULL for NULL. Thread-safe. */
const char *activity_intern(const char *s);

/* Make everything enqueued so far visible: caller synchronizes the device
 * first; this forces CUPTI to deliver every buffer. Then *recs holds the
 * kernel records since the previous collect, in launch order (correlation
 * id), *n of them; free with activity_free. Returns 0 or -1. */
int activity_collect(struct kernel_rec **recs, size_t *n);
void activity_free(struct kernel_rec *recs, size_t n);

/* Records CUPTI dropped so far (buffers full): never ignore a non-zero. */
unsigned long long activity_dropped(void);

/* Flush, disable and free everything. Safe to call twice. */
void activity_stop(void);

/* ---- NVTX range instances of a profiled program (ranges.c) ------------
 * No CUPTI here: markers in, range instances out, so that tests feed it
 * synthetic records. Push/pop ranges nest on their thread; a start/end
 * range counts on the thread that started it, nested in what was open
 * there then; a marker of no known thread (tid 0) opens a range that
 * holds for every thread. */

struct range_inst {
	long long id;             /* > 0; unique in the process */
	uint32_t tid;
	uint32_t marker;          /* the marker id that pairs start and end */
	const char *name;         /* as the marker's (interned by the caller) */
	const char *domain;       /* NULL: the default domain */
	char *path;               /* "outer/inner/name", owned */
	int depth;                /* 0: outermost on its thread */
	uint64_t start, end;      /* ns; end 0: still open */
	struct range_inst *parent;
	int children;             /* instances whose parent this is, alive */
	int reported;             /* 1: taken open; 2: taken closed */
};

struct ranges;

struct ranges *ranges_new(void);
void ranges_free(struct ranges *r);

/* Apply n markers, sorted here by time (so the array is reordered): a
 * start opens an instance on its thread, an end closes the open instance
 * with its id (or, when none has it, the innermost open on its thread;
 * an end with nothing open is counted in *unmatched), an instant is
 * ignored. The names must outlive r. */
void ranges_apply(struct ranges *r, struct marker_rec *m, size_t n,
		  unsigned long long *unmatched);

/* The innermost instance open on thread tid at time ts (start <= ts <=
 * end), or NULL: what a kernel launched then ran in. A thread with no
 * range open of its own at ts takes the main thread's (ranges_main_thread):
 * a PyTorch backward, for one, launches its kernels from autograd's own
 * thread while the main thread waits inside the range it opened. A
 * process-scoped range (tid 0) holds for every thread. */
const struct range_inst *ranges_at(const struct ranges *r, uint32_t tid, uint64_t ts);

/* Name the process's main thread (its tid is the pid on Linux); 0, the
 * default, for none. */
void ranges_main_thread(struct ranges *r, uint32_t tid);

/* A new instance id, for a launch outside any range (its own sample). */
long long ranges_next_id(struct ranges *r);

/* The instances opened or closed since the last call, in *out (valid
 * until ranges_prune), oldest first; returns how many. */
size_t ranges_changed(struct ranges *r, const struct range_inst ***out);

/* Forget the closed instances that ended before ts and hold no open
 * child: no launch taken after ts can have run in them. */
void ranges_prune(struct ranges *r, uint64_t ts);

/* Instances alive (open, or closed and not pruned). */
size_t ranges_alive(const struct ranges *r);

/* ---- CUPTI Range Profiler (counters.cu) ------------------------------- */

struct counters;

/* How the passes a counter configuration needs are replayed. */
enum counters_replay {
	COUNTERS_REPLAY_OP,      /* the work runs once per pass, L2 flushed
				    before each (CUPTI user replay) */
	COUNTERS_REPLAY_KERNEL,  /* CUPTI saves and restores device memory and
				    replays each kernel (any work) */
};

/* Prepare to collect the given raw metrics (the array must outlive the
 * collector) on the current device with auto ranges (one range per kernel),
 * at most max_ranges kernels per collection. Op replay refuses instrumented
 * metrics (counters_instrumented) and allocates a buffer of 4 x L2 to flush
 * it with. The range profiler session opens at the first collection: one
 * collector at a time may have collected, until it is closed. Returns 0
 * with *out set; PROBE_DENIED or PROBE_BUSY (not reported: the caller warns
 * and falls back); PROBE_BAD_COUNTER (reported, naming the metric); or -1. */
int counters_open(struct counters **out, const char *const *metrics, int n,
		  int max_ranges, enum counters_replay replay);

/* Is the metric counted by instrumenting the kernel's code (the sm__sass_*
 * instruction counts) rather than by hardware counters? Those need kernel
 * replay. */
int counters_instrumented(const char *metric);

/* Op replay: flush L2 before every kernel of a pass too, not only before
 * the pass, as Nsight Compute's --cache-control all does (a launch
 * callback enqueues the flush; its ranges are dropped). Without it the
 * cache state flows from one kernel of the op to the next, as in a real
 * run. Returns 0, PROBE_BUSY (another CUPTI subscriber) or -1. */
int counters_flush_each_kernel(struct counters *c);

/* Replay passes each kernel needs for this configuration. */
int counters_passes(const struct counters *c);

/* Collect: work(arg) enqueues kernels on the current device and returns 0
 * or -1 (reported); under op replay it runs once per pass and must launch
 * the same kernels, with the same results, every time. Every kernel it
 * launches is one range. *values is malloc'd, nranges x nmetrics, a row per
 * kernel in launch order; *dropped gets the ranges that did not fit.
 * Returns 0, PROBE_DENIED, PROBE_BUSY or -1. */
int counters_collect(struct counters *c, int (*work)(void *), void *arg,
		     double **values, int *nranges, int *dropped);

/* Collections around kernels someone else launches (the profiler inside
 * a program), on the current context, under kernel replay or under op
 * replay when the configuration takes one pass (counters_passes): then
 * the kernels run once, as the program runs them, with no memory saved
 * and restored around them (which leaves the cache warm with the
 * kernel's own buffers, so kernel replay's DRAM bytes are not to be
 * trusted below the L2's size):
 * counters_begin starts one (a no-op while one runs); every kernel
 * launched until counters_end is one range, at most max_ranges of them,
 * flushes included; counters_end synchronizes the device, stops, and gives
 * the values as counters_collect does, a row per kernel in launch order.
 * With counters_kernel_flushes (once, after counters_open), the caller
 * calls counters_flush_before(c, stream) right before each kernel launch,
 * on the kernel's stream: every kernel starts with a clean L2 (as Nsight
 * Compute's --cache-control all), and counters_writeback tells each
 * kernel's write-back (counters_end closes with one more flush on stream).
 * counters_flush_after(c, stream), called right after each kernel has
 * ended (the device synchronized) and before the program can enqueue
 * anything else, measures that kernel's write-back on its own: without
 * it the next kernel's flush does, and charges to the kernel whatever the
 * program wrote in between (a device-to-device copy, a memset). Either
 * every kernel of a collection gets one or none does.
 * All but counters_flush_before and counters_flush_after return 0 or -1
 * (reported). */
int counters_kernel_flushes(struct counters *c);
/* The flush kernel's name, as a demangled kernel record starts. */
#define COUNTERS_FLUSH_KERNEL "flush_l2_read("
/* The kernel CUPTI's range profiler launches around a range of its own
 * (CUDA 13.0), as its demangled record names it. */
#define COUNTERS_PROFILER_KERNEL "WaitNs"
int counters_begin(struct counters *c);
int counters_running(const struct counters *c);
void counters_flush_before(struct counters *c, void *stream);
void counters_flush_after(struct counters *c, void *stream);
int counters_end(struct counters *c, void *stream, double **values, int *nranges,
		 int *dropped);

/* Give up the range profiler session c opened at its first collection,
 * so that another collector may collect; c keeps its configuration and
 * opens a session again at its next collection (a few hundred ms). Safe on
 * a collector that holds none. */
void counters_suspend(struct counters *c);

/* The DRAM bytes written back from L2 after kernel `kernel` (0-based, in
 * launch order) of the last collection: lines a kernel leaves dirty in L2
 * reach DRAM after it ends, so no kernel's own dram__bytes_write counts
 * them. Op replay, or kernel flushes (counters_kernel_flushes), and only
 * when dram__bytes_write.sum is among the metrics: each pass ends with an
 * L2 flush inside the profiled region, and the DRAM writes of that flush's
 * range are the write-back. Flushed per kernel (counters_flush_each_kernel,
 * counters_kernel_flushes), every kernel gets its own; flushed
 * per op, the op's whole write-back is charged to its last kernel and the
 * others read NaN. NaN also when not measured. */
double counters_writeback(const struct counters *c, int kernel);

/* Where a collection's kernels and write-backs are among its ranges
 * (counters_layout): k kernels, kernel j's counters in range lead + j *
 * step. The ranges: op replay flushed per op, F K0 K1 ... K(k-1) W;
 * flushed before each kernel (op replay's per-kernel flushes or
 * counters_kernel_flushes), F K0 F K1 ... F K(k-1) W; with
 * counters_flush_after too, F K0 A0 F K1 A1 ... F K(k-1) A(k-1) W; kernel
 * replay without flushes, K0 ... K(k-1). F is a flush before a kernel, A
 * one right after it, W the closing one. */
struct counters_layout {
	size_t k, lead, step;
	int after;      /* an A after each kernel */
	int flush_each; /* an F before each kernel */
};

/* The layout of total ranges of a collection under op replay (op_replay)
 * or not, flushed before each kernel (flush_each) nflush times and after
 * each nafter times, in *l. Returns 0, or -1 with why (size bytes) set
 * when the count cannot be such a collection (a kernel launched in a way
 * the caller did not flush around). Pure: no CUDA. */
int counters_layout(int op_replay, int flush_each, int nflush, int nafter, size_t total,
		    struct counters_layout *l, char *why, size_t size);

/* The range holding kernel j's write-back (a flush's DRAM writes) in a
 * collection of total ranges laid out as l says; -1 where the write-back
 * of kernel j is not measured apart (flushed per op: all but the last). */
long counters_layout_writeback(const struct counters_layout *l, size_t j, size_t total);

void counters_close(struct counters *c);

/* Evaluate metrics (e.g. "dram__bytes.sum.peak_sustained") on one kernel
 * launched by fn(arg) on the current device, values in out[n].
 * Returns 0, PROBE_DENIED, PROBE_BUSY, PROBE_BAD_COUNTER or -1. */
int counters_sample(const char *const *metrics, int n, int (*fn)(void *),
		    void *arg, double *out);

/* One line for a CUPTI error code, e.g. "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES". */
const char *counters_result_name(int cupti_result);

/* ---- ceilings (ceilings.cu) ------------------------------------------- */

struct ceiling {
	char name[32];            /* "dram_bw", "fp32_fma", ... */
	char unit[8];             /* "B/s", "FLOP/s" */
	double value;
	char provenance[16];      /* "measured", "theoretical" */
	char method[160];
};

/* The names of the ceilings ceilings_measure() stores, every one each
 * time: DRAM at four read/write mixes (copy, read-only, 2:1 add,
 * write-only; the store's views interpolate an op's DRAM roof between
 * them), L2, FMA peaks and tensor peaks. A device whose stored measured
 * ceilings lack any of them is measured again. */
#define PROBE_MEASURED_CEILINGS \
	"dram_bw", "dram_read_bw", "dram_add_bw", "dram_write_bw", "l2_bw", \
	"fp32_fma", "fp64_fma", "tensor_bf16", "tensor_tf32"
#define PROBE_NMEASURED 9

/* Measure the ceilings of the current device (d describes it) into
 * out[max] (max >= PROBE_NMEASURED); returns how many, or -1 (reported).
 * Takes a few seconds. Progress lines go to stderr when verbose. */
int ceilings_measure(const struct probe_device *d, struct ceiling *out,
		     int max, int verbose);

/* Theoretical ceilings from CUPTI's *.peak_sustained metrics x the clock
 * the hardware reported: returns how many (0 when counters are denied),
 * or -1 (reported). */
int ceilings_theoretical(const struct probe_device *d, struct ceiling *out,
			 int max);

/* ---- test kernels (ceilings.cu) --------------------------------------- */

/* Kernels with known work, for tests and the ceilings: each enqueues one
 * launch on the default stream and returns 0 or -1 (reported). */
int probe_copy_f32(float *dst, const float *src, size_t n);
/* Each of `threads` threads does `iters` x `chains` independent FMAs on
 * floats: exactly threads * iters * chains FFMA instructions. */
int probe_fma_f32(float *out, int blocks, int threads_per_block, int iters);
#define PROBE_FMA_CHAINS 8

#ifdef __cplusplus
}
#endif
#endif
