/* kutil.h - what every workload needs around its kernels: CUDA error checks,
 * a seeded RNG, dtype conversion on upload/download, output poisoning and the
 * error norms of a correctness check. C and C++ (nvcc) clean. */
#ifndef FP_KUTIL_H
#define FP_KUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#include "workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Report a failed CUDA call as "fuseprof: CALL failed: <cuda error string>
 * (FILE:LINE)". Returns 0 when e is cudaSuccess, else -1. */
int cuda_check(cudaError_t e, const char *call, const char *file, int line);
#define CUDA_CHECK(call) cuda_check((call), #call, __FILE__, __LINE__)
/* After every launch: catches bad configurations at once. */
#define CUDA_CHECK_LAUNCH(name) \
	cuda_check(cudaGetLastError(), "launch of " name, __FILE__, __LINE__)

/* A small, fast, seeded generator (splitmix64 + xoshiro256**); the same seed
 * gives the same numbers on every machine. */
struct fp_rng {
	uint64_t s[4];
	int have_spare;
	double spare;
};
void rng_seed(struct fp_rng *r, uint64_t seed);
uint64_t rng_next(struct fp_rng *r);
double rng_uniform(struct fp_rng *r);  /* [0, 1) */
double rng_normal(struct fp_rng *r);   /* mean 0, variance 1 */
/* Seed r with the stream of item `item` (a row) of a tensor drawn from
 * base: items drawn in any order, by any number of threads, come out the
 * same. */
void rng_seed_item(struct fp_rng *r, uint64_t base, long item);

/* Round each value to the nearest value dtype can hold (round to nearest
 * even, as the upload does), so a CPU reference sees exactly what the GPU
 * sees. */
void host_round(double *v, size_t n, enum fp_dtype dt);

/* Copy n values to the device as dtype (rounded to nearest even) / back to
 * the host as double. Synchronous. Return 0 or -1 (reported). */
int dev_upload(void *dst, enum fp_dtype dt, const double *src, size_t n);
int dev_download(double *dst, const void *src, enum fp_dtype dt, size_t n);

/* Fill n elements with N(mean, std^2) random values drawn on the device from
 * seed (counter-based: the values depend only on seed and index). For the
 * input sets that timing rotates through; checks upload host data instead. */
int dev_fill_normal(void *dst, enum fp_dtype dt, size_t n, uint64_t seed,
		    float mean, float std, cudaStream_t stream);

/* n bytes rounded up to what cudaMalloc hands out (512-byte blocks): what
 * device_bytes() counts, and the offset between buffers carved out of one
 * allocation, which keeps every buffer aligned for 16-byte and TMA access. */
static inline size_t dev_pad(size_t n)
{
	return (n + 511) & ~(size_t)511;
}

/* Threads a row for a row-group kernel (blocks of `most` threads taking
 * most / tpr rows of tpr each): the fewest, a power of two from 32 to most,
 * that leave each thread at most per_thread of the row's units (16-byte
 * vectors, or elements), or most where none does. A block a row of `most`
 * threads would leave a narrow row's kernel one load a thread, waiting on
 * latency. LayerNorm's register kernels size their rows by it too
 * (layernorm_plan). */
static inline int row_group_threads(long units, int per_thread, int most)
{
	int tpr = 32;

	while (tpr < most && (long)tpr * per_thread < units)
		tpr *= 2;
	return tpr;
}

/* The rows of blocks a grid of gx x gy blocks keeps when it is made
 * resident: its blocks' grid-stride loop takes bands of `band` rows out of
 * `rows`, and per blocks an SM fit on sms SMs. gy where they all fit at
 * once (or the limits are unknown, per or sms < 1); otherwise the fewest
 * rows of blocks that give each block the least number of bands any
 * resident grid can, ceil(bands / fit) with fit = per sms / gx rows of
 * blocks: no last partial wave, and no block a band longer than the rest
 * need be. */
static inline long resident_rows(long gx, long gy, long rows, long band, int per, int sms)
{
	const long fit = (long)per * sms / gx, bands = (rows + band - 1) / band;
	long steps;

	if (per < 1 || sms < 1 || fit < 1 || fit >= gy)
		return gy;
	steps = (bands + fit - 1) / fit;
	return (bands + steps - 1) / steps;
}

/* cudaMalloc n bytes into *(void **)pp; n = 0 sets NULL and allocates
 * nothing. Returns 0, or -1 (reported) with *pp unchanged. */
int dev_alloc(void *pp, size_t n);

/* Carve the next buffer of n bytes out of a block allocated with room for
 * it: returns *cur and advances it by dev_pad(n); n = 0 returns NULL and
 * advances nothing. How an instance lays out one set's written buffers in
 * one allocation, so a set's are all one offset away from set 0's. */
static inline void *dev_carve(char **cur, size_t n)
{
	char *p = *cur;

	if (n == 0)
		return NULL;
	*cur += dev_pad(n);
	return p;
}

/* A buffer p carved for set 0 (or NULL), as set s sees it: off = s times
 * the set's stride further on; NULL stays NULL. */
static inline void *dev_in_set(void *p, size_t off)
{
	return p ? (char *)p + off : NULL;
}

/* Set bytes to 0xff: NaN in fp32 and bf16, so an element a kernel forgot to
 * write fails the check. Synchronous. */
int dev_poison(void *p, size_t bytes);

/* The configuration of a launch (cudaLaunchKernelEx) of grid blocks of block
 * threads with smem bytes of dynamic shared memory on st, in clusters of
 * cluster blocks along x; cfg points to attr, its one attribute.
 * config_programmatic adds to cfg's attributes (its array must have room
 * for one more) that the launch may begin before the kernel before it on
 * the stream ends (programmatic dependent launch: the kernel's
 * grid_dep_wait waits for that end). */
void cluster_config(cudaLaunchConfig_t *cfg, cudaLaunchAttribute *attr,
		    unsigned cluster, unsigned grid, unsigned block, size_t smem,
		    cudaStream_t st);
void config_programmatic(cudaLaunchConfig_t *cfg);

/* Accumulates the error of one output against its reference. */
struct fp_cmp {
	double sq_err, sq_ref, max_abs;
	double sq_floor;      /* ||ref||^2 is taken as at least this (see cmp_rel) */
	size_t n, bad;        /* compared; non-finite where ref is finite */
	size_t first_bad;     /* index of the first bad element */
};
void cmp_init(struct fp_cmp *c);
void cmp_add(struct fp_cmp *c, const double *out, const double *ref, size_t n);
/* Add n terms' squared sizes sq[0..n) (a reference's, in order) into c's
 * sq_floor (see cmp_rel). */
void cmp_add_floor(struct fp_cmp *c, const double *sq, size_t n);
/* Append part, the comparison of the elements that follow into's, to into
 * (as if cmp_add had seen them after into's): how a check split over
 * threads (parallel_for) combines its parts, in part order. */
void cmp_merge(struct fp_cmp *into, const struct fp_cmp *part);
/* ||out - ref|| / max(||ref||, sqrt(sq_floor)); plain ||out - ref|| when
 * both are zero. A check whose outputs are sums sets sq_floor to the sum over
 * outputs of their terms' squares: the size the outputs have without
 * cancellation, so that a few outputs whose terms happen to cancel are judged
 * by the rounding their terms carry, not by their own tiny size. With many
 * outputs of random-signed terms ||ref||^2 is about sq_floor anyway. */
double cmp_rel(const struct fp_cmp *c);

/* Start a check result: seed recorded, tolerance set, passed = 1. */
void check_begin(struct fp_check *r, unsigned long long seed, double tol);
/* Fold one output's comparison into r (worst rel_err and max_abs_err kept);
 * marks r failed with a detail naming the output when it is out of bounds
 * or has non-finite elements. */
void check_output(struct fp_check *r, const char *name, const struct fp_cmp *c);

#ifdef __cplusplus
}
#endif
#endif
