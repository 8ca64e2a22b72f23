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

/* Make device `index` current (cudaSetDevice, context created) and fill d.
 * Returns 0, PROBE_NO_GPU or -1 (reported). */
int probe_device_open(int index, struct probe_device *d);

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
	uint32_t stream, correlation;
	uint64_t start, end;      /* ns, GPU timestamps */
};

/* Subscribe CUPTI Activity to concurrent-kernel records. Returns 0, or
 * PROBE_BUSY when another profiler holds CUPTI (not reported), or -1. */
int activity_start(void);

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

/* Give up the range profiler session c opened at its first collection,
 * so that another collector may collect; c keeps its configuration and
 * opens a session again at its next collection (a few hundred ms). Safe on
 * a collector that holds none. */
void counters_suspend(struct counters *c);

/* The DRAM bytes written back from L2 after kernel `kernel` (0-based, in
 * launch order) of the last collection: lines a kernel leaves dirty in L2
 * reach DRAM after it ends, so no kernel's own dram__bytes_write counts
 * them. Op replay only, and only when dram__bytes_write.sum is among the
 * metrics: each pass ends with an L2 flush inside the profiled region, and
 * the DRAM writes of that flush's range are the write-back. Flushed per
 * kernel (counters_flush_each_kernel), every kernel gets its own; flushed
 * per op, the op's whole write-back is charged to its last kernel and the
 * others read NaN. NaN also when not measured. */
double counters_writeback(const struct counters *c, int kernel);

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
