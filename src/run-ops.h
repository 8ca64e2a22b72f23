/* run-ops.h - what `fuseprof run` measures: the op list built from the
 * options (workloads, variants, dtypes, shapes, kernel options) in suite
 * order, before anything touches the GPU. runloop.c measures it. */
#ifndef FP_RUN_OPS_H
#define FP_RUN_OPS_H

#include <stddef.h>

#include "runloop.h"
#include "shape.h"
#include "workload.h"

/* One op: a workload's variant at a dtype and shape, with its options. */
struct op_spec {
	const struct workload *w;
	int variant;
	enum fp_dtype dt;
	struct fp_shape shape;
	char key[256];  /* workload/variant/dtype/shape: the NVTX range name */
	char shape_text[160];
	struct fp_kopts ko;     /* its workload's kernel options (--kernel-opt) */
	char kopts_text[256];   /* ko, canonical: what the op row stores */
};

struct op_list {
	struct op_spec *v;
	size_t n, alloc;
};

/* Build the ops of the run o describes into ops (zeroed first; free ops->v
 * afterwards), in suite order: workload, shape, dtype, variant. The shapes
 * are --shape's, else the --quick suite's, else the default suite's: there
 * a variant with a suite of its own (struct fp_variant) runs at its shapes
 * only. Returns 0, or EXIT_USAGE / EXIT_FAIL (reported). */
int build_ops(const struct run_opts *o, struct op_list *ops);

/* Whether two ops are variants of one case: workload, dtype and shape. */
int same_case(const struct op_spec *a, const struct op_spec *b);

/* How many ops of the list are forward variants whose backward variant
 * of the same name is in the list at their dtype and shape too: the rows
 * the run gives v_save_recompute when all pass. */
size_t count_saved_pairs(const struct op_list *ops);

/* The forward whose backward (workload->backward) is w, or NULL when w is
 * no workload's backward. */
const struct workload *workload_forward_of(const struct workload *w);

#endif
