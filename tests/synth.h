/* synth.h - synthetic fuseprof databases for report tests and benchmarks:
 * runs, a device, ceilings, ops with kernels and raw counters written
 * through the store API, with numbers drawn from a seeded generator. */
#ifndef FP_SYNTH_H
#define FP_SYNTH_H

struct synth_opts {
	long nops;                 /* ops in the run (0: a run with no ops) */
	unsigned long long seed;   /* every number derives from it */
	int ceilings;              /* 1: store ceilings for the device */
	int counters;              /* 1: store raw counters per kernel */
	int wrong_every;           /* every Nth op is stored as wrong; 0: none */
	const char *tag;           /* may be NULL */
	const char *status;        /* final run status; NULL: "complete" */
	long pairs;                /* groups (dtype and shape) of forward and
	                              backward ops added after the nops */
};

/* Append one run described by o to the database at path (created when
 * missing). Ceilings (when asked): dram_bw measured 3.0e12 and theoretical
 * 3.35e12 B/s, dram_read_bw measured 3.1e12, dram_add_bw measured
 * 2.95e12, dram_write_bw theoretical 3.35e12, l2_bw measured 1.0e13,
 * fp32_fma measured 5.17e13 and theoretical 6.7e13, fp64_fma theoretical
 * 3.35e13, tensor_bf16 measured 7.7e14 FLOP/s; no tensor_tf32. Workloads
 * ln_gelu (fused, unfused, naive), softmax (fused, unfused) and
 * ln_linear_fwd (fused, unfused; tensor-core FLOPs) cycle over fp32/bf16
 * and growing shapes; each kernel has its own read/write mix (in ops of
 * several kernels, read-only and copy kernels among them), and two groups
 * of ops in three a DRAM write-back counter on their last kernel. Then
 * `pairs` groups of bias_act_fwd and its backward bias_act_bwd, each in
 * three variants (save_input, save_output, bitmask) that keep M N, M N and
 * M N / 8 elements' bytes for the backward (wrong_every counts on over
 * them). Returns the run id, or -1 after an error. */
long long synth_build(const char *path, const struct synth_opts *o);

#endif
