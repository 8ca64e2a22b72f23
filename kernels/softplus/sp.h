/* sp.h - inside kernels/softplus/: the elementwise kernels softplus.cu
 * launches for workload.cu. C and C++ (nvcc) clean. */
#ifndef FP_SOFTPLUS_SP_H
#define FP_SOFTPLUS_SP_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#include "workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kernels, each one pass over n elements. in[] and out[] in the order
 * given (e = exp(-|x|), l = log1p(e), s = sigmoid(x)):
 *   SP_K_EXP            x -> e                unfused3 forward, 1 of 3
 *   SP_K_LOG1P          e -> l                unfused3 forward, 2 of 3
 *   SP_K_ADD            x, l -> w             unfused3 forward, 3 of 3
 *   SP_K_FWD            x -> w                fused_recompute forward
 *   SP_K_FWD_SAVE       x -> w, s             fused_save forward
 *   SP_K_BWD_LOG1P      dy, e -> de           unfused3 backward, 1 of 2
 *   SP_K_BWD_EXP        dy, x, e, de -> dx    unfused3 backward, 2 of 2
 *   SP_K_BWD_SAVE       dy, s -> dx           fused_save backward
 *   SP_K_BWD_RECOMPUTE  dy, x -> dx           fused_recompute backward
 *   SP_K_FWD_TAPE       x -> w, e             fused_tape forward
 *   SP_K_BWD_TAPE       dy, x, e -> dx        fused_tape backward */
enum sp_kop {
	SP_K_EXP, SP_K_LOG1P, SP_K_ADD, SP_K_FWD, SP_K_FWD_SAVE,
	SP_K_BWD_LOG1P, SP_K_BWD_EXP, SP_K_BWD_SAVE, SP_K_BWD_RECOMPUTE,
	SP_K_FWD_TAPE, SP_K_BWD_TAPE,
};

/* The 16-byte vectors of each input a thread of kernel k over dt takes,
 * asked vectors (1, 2 or 4; 0 for the default, 1 for every kernel: the
 * fastest on an H100, softplus.cu says how much). */
int sp_vectors(enum sp_kop k, enum fp_dtype dt, int vectors);

/* Enqueue kernel k over n elements of dt on st, sp_vectors(k, dt, vectors)
 * vectors a thread; every buffer 16-byte aligned (dev_pad'ed offsets are).
 * n = 0 launches nothing. Returns 0, or -1 if the launch failed or
 * vectors is not 0, 1, 2 or 4 (reported). */
int sp_launch_op(enum sp_kop k, enum fp_dtype dt, int vectors,
		 const void *const *in, void *const *out, size_t n,
		 cudaStream_t st);

#ifdef __cplusplus
}
#endif
#endif
