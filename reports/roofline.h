/* roofline.h - the roofline numbers of one run: the ceilings it is judged
 * against (view v_ceilings) and, per op, FLOPs, bytes, intensity, achieved
 * rates and % of roof (view v_roofline); plus the reference math those
 * views implement, used to draw roofs and to test the views. */
#ifndef FP_ROOFLINE_H
#define FP_ROOFLINE_H

#include <stddef.h>

struct store;

/* One ceiling as v_ceilings chose it (measured beats theoretical). */
struct rf_ceiling {
	char *name;        /* "dram_bw", "fp32_fma", ... */
	char *unit;        /* "B/s" or "FLOP/s" */
	double value;      /* in unit */
	char *provenance;  /* "measured" or "theoretical" */
	char *method;      /* may be NULL */
};

/* One op: a row of v_roofline. Unknown numbers (no counters, a missing
 * ceiling, a division by zero) are NaN; strings are never NULL except
 * message. Units: ns, FLOP, bytes, FLOP/s, B/s, FLOP/byte, percent. */
struct rf_op {
	long long op_id;
	char *workload, *variant, *role, *dtype, *shape, *status, *message;
	double time_ns, launches;
	double flops, flops_fp32, flops_fp64, flops_fp16, flops_tensor;
	char *precision;  /* the ceiling name of its compute roof */
	/* DRAM bytes read and written while its kernels ran, and written
	 * back afterwards for the dirty L2 lines they left (NaN: not
	 * collected, a database from before); dram_bytes is their sum. */
	double dram_read_bytes, dram_write_bytes, dram_writeback_bytes;
	double dram_bytes, l2_bytes, l1_bytes;
	double ai_dram, ai_l2, ai_l1;
	double flop_rate, dram_rate, l2_rate;
	/* dram_bw is the DRAM roof of the op's read/write mix (views.h):
	 * dram_write_frac (0..1) places it between the mix ceilings, for an
	 * op of several kernels each kernel's own mix, and dram_bw_basis
	 * says how ("add..copy 0.62", "kernels (4): read, copy", "copy (mix
	 * unknown)"; "" when there is no DRAM roof). */
	double peak_flop_rate, dram_bw, l2_bw, dram_write_frac;
	char *peak_provenance, *dram_bw_provenance, *l2_bw_provenance;  /* "" if none */
	char *dram_bw_basis;
	double roof, roof_pct, roof_l2, roof_l2_pct;
	char *bound;  /* "memory", "compute" or "" */
	double model_flops, model_min_bytes, model_variant_bytes;
	double traffic_eff, eff_bw, eff_bw_pct;
	double rel_err, tolerance;
	double longest_kernel_ns;  /* its longest kernel: median x launches */
	char *kernel_opts;  /* kernel options in force, canonical; "" if none */
	char *kernel;       /* the kernels its launcher picked; "" if not said */
	char *device;       /* the GPU model it ran on; "" if unknown */
	long long device_id;  /* its device's row; 0 if unknown */
	int device_nth;     /* its device among the run's (0 first, by row) */
};

/* A GPU model of a run whose ops ran on several models: its name and the
 * ceilings of its first device (the roofs its chart draws). */
struct rf_model {
	char *name;
	long long device_id;
	int nceilings;
	struct rf_ceiling *ceilings;
};

/* One rule an op's numbers break: a row of v_distrust (see views.h for
 * the rules). value and threshold are in the rule's unit: a ratio for
 * traffic_below_min and flops_off_model, percent for above_roof and
 * above_l2_roof, FLOP for flops_without_model. Strings are never NULL. */
struct rf_flag {
	long long op_id;
	char *workload, *variant, *dtype, *shape;
	char *reason;  /* "traffic_below_min", "above_roof", ... */
	double value, threshold;
	char *cause;   /* the likely cause, one sentence */
};

/* A run with its ceilings and ops (ordered by workload, then op id). */
struct rf_run {
	long long id;
	char *started_at, *finished_at, *status, *tag, *host, *tool_version;
	char *command_line, *counters, *device;  /* "" when unknown */
	char *kind;  /* "run", or "profile" for `fuseprof profile` (v_runs.kind) */
	int nceilings;
	struct rf_ceiling *ceilings;  /* of the run's device */
	size_t nops;
	struct rf_op *ops;
	int ndevices;       /* devices its ops ran on (`run --device all`) */
	/* Its ops' GPU models, each with its roofs, when there are two or
	 * more (else nmodels is 0 and ceilings are every op's). */
	size_t nmodels;
	struct rf_model *models;
	/* The ops whose numbers are impossible (ordered by workload, op id,
	 * reason): nflags rules broken by nflagged distinct ops. */
	size_t nflags, nflagged;
	struct rf_flag *flags;
};

/* The TEMP table where rf_load leaves the run's rows of v_roofline (every
 * workload, the FP_RUN_INPUT columns), for fusion_load_run to pair and
 * rf_load to flag without evaluating the view again. */
#define RF_RUN_TABLE "temp.fp_run_roofline"

/* Read run `run_id`, its chosen ceilings, every op of v_roofline and the
 * flags of v_distrust into *run. When workloads is not NULL, keep only ops
 * (and flags) whose workload is in that NULL-terminated list. Returns 0,
 * or -1 after an error (nothing to free then). An existing run with no ops
 * is not an error: nops is 0.
 * Replaces RF_RUN_TABLE on st's connection with the run's rows. */
int rf_load(struct store *st, long long run_id, const char *const *workloads,
	    struct rf_run *run);

/* 1 when RF_RUN_TABLE on st's connection holds exactly the ops run_id has
 * now, 0 otherwise (also when there is no such table): whether a reader
 * of the run may use it instead of evaluating v_roofline again. */
int rf_run_table_holds(struct store *st, long long run_id);

/* Free everything rf_load allocated; the struct can be loaded again. */
void rf_release(struct rf_run *run);

/* The ceiling called name, or NULL when the run has none. */
const struct rf_ceiling *rf_ceiling(const struct rf_run *run, const char *name);

/* ---- the reference math (what v_roofline computes) ------------------- */

/* a / b; NaN when b is 0 or either is NaN (SQL's NULL). */
double rf_div(double a, double b);

/* The attainable FLOP/s at intensity ai (FLOP/byte) under a compute peak
 * (FLOP/s) and a bandwidth (B/s): min(peak, ai * bw); NaN when any is NaN:
 * a missing ceiling gives no roof rather than a borrowed one. */
double rf_attainable(double ai, double peak, double bw);

/* The ceiling name of an op's compute roof, from its FLOPs by precision:
 * tensor-core work when it outweighs all others ("tensor_bf16" for bf16
 * storage, else "tensor_tf32"), then "fp64_fma" when FP64 outweighs FP32
 * and FP16, else "fp32_fma". */
const char *rf_precision(double fp32, double fp64, double fp16, double tensor,
			 const char *dtype);

/* The DRAM roof (B/s) at write fraction f (bytes written / bytes; NaN:
 * unknown) under run's ceilings, as v_roofline computes it for an op of
 * one kernel (views.h, FP_DRAM_BW_SQL): linear in f between the two mix ceilings around f,
 * else dram_bw, the copy. *provenance gets "measured", "theoretical" or
 * "" (static or run's storage), basis (size bytes) the basis text ("" when
 * there is no roof). Returns NaN when there is no DRAM roof. */
double rf_dram_bw(const struct rf_run *run, double f, const char **provenance,
		  char *basis, size_t size);

/* One kernel slot's DRAM bytes, its launches summed, as its counters gave
 * them: read and written while it ran, and written back after it (NaN:
 * not collected, 0 then). read or write NaN: the kernel has no DRAM
 * counters, so its mix is unknown. */
struct rf_kernel_dram {
	double read, write, writeback;
};

/* The DRAM roof (B/s) of an op of nk kernel slots k (in any order), as
 * v_roofline computes it (views.h): for nk <= 1, rf_dram_bw at the op's
 * write fraction f; for several, the op's DRAM bytes over the least time
 * they can take, each kernel's bytes at the roof of its own mix
 * (rf_dram_bw's interpolation at its own f; a kernel of no DRAM bytes
 * takes none), else dram_bw, the copy, when f or a kernel's mix is
 * unknown or a kernel's mix has no ceilings. *provenance and basis as for
 * rf_dram_bw ("kernels (4): read, copy" for several). Returns NaN when
 * there is no DRAM roof. */
double rf_op_dram_bw(const struct rf_run *run, const struct rf_kernel_dram *k,
		     size_t nk, double f, const char **provenance, char *basis,
		     size_t size);

/* Fill op's derived fields (flops, precision, dram_bytes, dram_write_frac,
 * ai_*, rates, peaks, roofs, bound, traffic_eff, eff_bw*) from its raw
 * fields (time_ns, flops_fp32, flops_fp64, flops_fp16, flops_tensor, DRAM
 * read, write and write-back bytes, l2/l1 bytes, model_*, dtype), its nk
 * kernel slots' DRAM bytes k (for the DRAM roof: rf_op_dram_bw) and run's
 * ceilings, exactly as v_roofline does. has_counters is 0 for an op
 * without counters (its FLOPs are then unknown). precision and the
 * provenance strings point into static storage or run's ceilings;
 * dram_bw_basis is malloc'd over whatever it held: the caller frees it. */
void rf_derive(struct rf_op *op, int has_counters, const struct rf_kernel_dram *k,
	       size_t nk, const struct rf_run *run);

#endif
