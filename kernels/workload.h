/* workload.h - the contract between a workload (one operation, several
 * variants computing the same function) and the run loop that measures it.
 *
 * The run loop knows no workload by name: it walks fp_workloads[], asks each
 * for its shapes, model and variants, and drives instances through
 * create -> check -> launch (many times) -> destroy. Adding a workload is a
 * folder kernels/NAME/ whose files define a `const struct workload` (README,
 * "Adding a workload"), plus one line in kernels/registry.c. This header is
 * C and C++ (nvcc) clean. */
#ifndef FP_WORKLOAD_H
#define FP_WORKLOAD_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Storage types. Math is fp32 for both; bf16 is storage only. */
enum fp_dtype { FP_F32 = 0, FP_BF16 = 1, FP_NDTYPES };
#define FP_DTYPE_BIT(d) (1u << (d))

const char *fp_dtype_name(enum fp_dtype dt);            /* "fp32", "bf16" */
int fp_dtype_parse(const char *s, enum fp_dtype *out);  /* 0, or -1 if unknown */
size_t fp_dtype_size(enum fp_dtype dt);                 /* bytes per element */

#define FP_MAX_PARAMS 6
#define FP_REQUIRED (-1L)

/* One shape parameter. A shape spec may omit a parameter whose def is not
 * FP_REQUIRED; values outside [min, max] are rejected by the parser. */
struct fp_param {
	const char *name;  /* "M", "N", "erf" */
	long def;          /* default, or FP_REQUIRED */
	long min, max;
	const char *help;  /* "rows", "row width (elements)" */
};

/* Parameter values, in the order of workload->params. */
struct fp_shape {
	long v[FP_MAX_PARAMS];
};

/* What a variant is to fusion analysis: reports pair each FP_FUSED variant
 * with every other variant of the same workload, dtype and shape. */
enum fp_role { FP_UNFUSED = 0, FP_FUSED = 1, FP_NAIVE = 2 };
const char *fp_role_name(enum fp_role r);  /* "unfused", "fused", "naive" */

struct fp_variant {
	const char *name;     /* "fused", "unfused3" */
	enum fp_role role;
	const char *summary;  /* one line: how many kernels, what each does */
	const char *suite;    /* this variant's default-suite shapes, like
	                         workload->suite; NULL: the workload's. For a
	                         variant too slow for the big shapes (the naive
	                         ones); `run --quick` and `run --shape` ignore it */
	const char *twin;     /* an FP_UNFUSED variant's fusion: the FP_FUSED
	                         variant of the same workload that runs these
	                         kernels as one, reading the same inputs and
	                         writing the same outputs and saved tensors,
	                         the intermediates kept on chip ("unfused3" ->
	                         "fused_tape"). What a prediction of fusing
	                         this variant's kernels is checked against
	                         (bench/opportunities-truth.sh); NULL where
	                         no fused variant is one (the fused ones then
	                         pair by saved bytes) */
};

/* The napkin math of one op. Bytes are DRAM bytes. */
struct fp_model {
	double flops;          /* FLOP the operation must do (an FMA counts 2) */
	double min_bytes;      /* each input read once, each output written once */
	double variant_bytes;  /* what this variant is expected to move */
	double executed_flops; /* FLOP this variant executes where it does more
	                          than the operation must by design, so that
	                          FLOP counters read this, not flops (3xTF32:
	                          three tensor products for each product of the
	                          GEMM); 0: the same as flops */
	double saved_bytes;    /* bytes this variant keeps alive from the
	                          forward for the backward beyond the op's own
	                          inputs and parameters (which the caller keeps
	                          anyway): a pre-activation, an output the
	                          backward reads, a byte or bit mask, row
	                          statistics; 0 where the backward recomputes
	                          everything from the inputs. A forward and the
	                          backward variant of the same name (see
	                          workload->backward) give the same number */
};

/* Outcome of one correctness check. */
struct fp_check {
	unsigned long long seed;  /* inputs drawn from this seed */
	double rel_err;      /* worst over outputs of ||out - ref||_2 / ||ref||_2 */
	double max_abs_err;  /* worst |out - ref| over all outputs */
	double tolerance;    /* bound on rel_err for this dtype */
	int passed;          /* rel_err <= tolerance and every element finite where ref is */
	char detail[160];    /* on failure: which output and why */
};

/* A kernel option: the only way to steer which kernel a workload's launcher
 * picks (a tile shape, a cluster size, whether a pass of its own takes the
 * row statistics). Each takes one of a fixed list of values; values[0] is
 * the default, conventionally "auto" (the launcher decides by shape and
 * device). The options in force and the kernel picked are stored with each
 * op, so two runs that ran different kernels can be told apart. */
#define FP_MAX_KOPTS 32
#define FP_MAX_KOPT_VALUES 16
struct fp_kopt {
	const char *name;                /* "fwd_kernel" */
	const char *const *values;       /* NULL-terminated; [0] is the default */
	const char *help;                /* one line: what each value does */
	const char *tested;              /* values other than the default that
	                                    reach kernels the default never runs
	                                    at the test shapes, comma-separated:
	                                    tests/test-workloads checks each too;
	                                    NULL for none */
};

/* Chosen values: index into values[] per option, in the order of
 * workload->kopts. All zero (e.g. from memset) is every default. */
struct fp_kopts {
	unsigned char v[FP_MAX_KOPTS];
};

/* A workload's instance: device buffers for one shape, dtype and variant,
 * with nsets sets to rotate among. A set is everything one repetition
 * reads and writes: its inputs, and its outputs, intermediates, statistics,
 * partial sums, workspaces (whatever a launch writes, even where it reads
 * it back). So no repetition finds in L2 the lines the previous one read or
 * left dirty, and each pays for its own writes reaching DRAM, as it would
 * in a program. Only what no launch writes (e.g. a weight prepared once in
 * create) may be shared by the sets. Defined by each workload. */
struct fp_op;

struct workload {
	const char *name;                   /* "ln_gelu_fwd" */
	const char *summary;                /* one line */
	const struct fp_param *params;      /* terminated by .name == NULL */
	unsigned dtypes;                    /* FP_DTYPE_BIT(FP_F32) | ... */
	const struct fp_variant *variants;  /* terminated by .name == NULL */
	const char *const *profiles;        /* input profiles for check(), NULL-
	                                       terminated; [0] is plain random data,
	                                       the inputs timing uses */
	const char *suite;   /* default suite: shape specs separated by ';' */
	const char *quick;   /* the --quick suite, likewise */
	const char *tests;   /* shapes the GPU test checks every variant, dtype
	                        and profile at (awkward sizes), likewise */
	const struct fp_kopt *kopts;  /* kernel options, terminated by .name ==
	                                 NULL; NULL when there are none */
	const char *backward;  /* for a forward: the workload computing its
	                          gradients, NULL if none. It takes the same
	                          parameters, and its variant of the same name
	                          as a forward variant reads what that one
	                          saves (model saved_bytes): the pair reports
	                          show as one forward+backward step */

	/* 0 if this shape and dtype can run, else -1 with a one-line reason
	 * ("N=0: rows must be at least 1 element wide") in why. Allocates
	 * nothing, touches no GPU. */
	int (*validate)(const struct fp_shape *s, enum fp_dtype dt,
			char *why, size_t whylen);

	/* Device bytes that create() with nsets sets allocates (each buffer
	 * counted as dev_pad of its size), exactly, so the run loop can refuse
	 * a shape that does not fit before allocating. */
	size_t (*device_bytes)(const struct fp_shape *s, enum fp_dtype dt,
			       int variant, int nsets);

	/* FLOPs and bytes for this shape, dtype and variant: fills every field
	 * of *m (0 where one does not apply). */
	void (*model)(const struct fp_shape *s, enum fp_dtype dt, int variant,
		      struct fp_model *m);

	/* Allocate an instance with nsets (>= 1) sets and fill each set's
	 * inputs with profile-0 random data drawn from seed; ko (NULL: every
	 * default) steers the launcher's kernel choice and is copied. Returns
	 * 0 with *op set, or -1 (reported through error()) with nothing
	 * allocated. */
	int (*create)(struct fp_op **op, const struct fp_shape *s,
		      enum fp_dtype dt, int variant, int nsets,
		      unsigned long long seed, const struct fp_kopts *ko);

	/* The kernels this instance's launch runs, as one short line for
	 * people and for `compare` ("wgmma, warp-specialized, clusters of 2,
	 * statistics pass"): what the launcher picked from the shape, the
	 * device and the options. NULL when the variant has one fixed kernel
	 * sequence (its summary says it). */
	void (*kernel)(const struct fp_op *op, char *buf, size_t n);

	/* Enqueue every kernel of the variant on stream, reading set `set`'s
	 * inputs and writing set `set`'s outputs and scratch only (0 <= set <
	 * nsets). Does not synchronize. Returns 0, or -1 if a launch failed. */
	int (*launch)(struct fp_op *op, int set, cudaStream_t stream);

	/* Draw fresh inputs from profile (an index into profiles) and seed into
	 * set 0, poison the outputs, run the variant once, compare with the
	 * double-precision CPU reference. Returns 0 when the check ran (see
	 * r->passed), -1 when it could not run (CUDA error, reported). */
	int (*check)(struct fp_op *op, int profile, unsigned long long seed,
		     struct fp_check *r);

	/* Free everything create() allocated. NULL is a no-op. */
	void (*destroy)(struct fp_op *op);
};

/* The registry: every workload, NULL-terminated (kernels/registry.c). */
extern const struct workload *const fp_workloads[];

/* The workload named name, or NULL. */
const struct workload *workload_find(const char *name);
/* Index of the variant named name, or -1. */
int workload_variant(const struct workload *w, const char *name);
int workload_nvariants(const struct workload *w);
int workload_nparams(const struct workload *w);
int workload_nprofiles(const struct workload *w);
/* Parse one shape "M=16384,N=768" (no sweeps; names in any order; omitted
 * parameters take their defaults). Returns 0, or -1 with a one-line reason in
 * why ("unknown parameter 'Q' (ln_gelu_fwd takes M, N, erf)"). */
int workload_parse_shape(const struct workload *w, const char *spec,
			 struct fp_shape *s, char *why, size_t whylen);
/* Canonical shape text, every parameter in order: "M=16384,N=768". */
void workload_format_shape(const struct workload *w, const struct fp_shape *s,
			   char *buf, size_t n);

int workload_nkopts(const struct workload *w);
/* Index of the kernel option named name, or -1. */
int workload_kopt(const struct workload *w, const char *name);
/* Set option `key` to `value` in ko. Returns 0, or -1 with a one-line
 * reason in why ("ln_linear_fwd: unknown kernel option 'x' (options:
 * fwd_kernel, clusters)", "clusters: '3' is not one of auto, 1, 2"). */
int workload_set_kopt(const struct workload *w, struct fp_kopts *ko,
		      const char *key, const char *value, char *why, size_t whylen);
/* Parse "KEY=VALUE,KEY=VALUE" (an empty spec sets nothing) into ko, which
 * the caller initialises (zero: defaults). Returns 0 or -1 with why. */
int workload_parse_kopts(const struct workload *w, const char *spec,
			 struct fp_kopts *ko, char *why, size_t whylen);
/* Split one option "[WORKLOAD:]KEY=VALUE" (as `run --kernel-opt` and
 * `fpbench -o` take it) into its scope ("" when unscoped), key and value,
 * each in a buffer of n bytes. Returns 0, or -1 when there is no '='. */
int workload_split_kopt(const char *pair, char *scope, char *key, char *value,
			size_t n);
/* Canonical text of ko, every option in declaration order
 * ("fwd_kernel=auto,clusters=2"); "" for a workload without options. */
void workload_format_kopts(const struct workload *w, const struct fp_kopts *ko,
			   char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
