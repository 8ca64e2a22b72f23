// tma-stream.cu - how fast thread blocks stream a bf16 matrix into shared
// memory through a TMA ring, by the shape of the ring's stages, with no
// math behind it: the probe of bench/RESULTS.md's "What a TMA ring streams,
// by its stage". Each block has a producer thread, which loads stage after
// stage into a ring (2D tensor boxes of its rows of the matrix, or 1D bulk
// copies of its contiguous share), and a consumer thread, which waits for
// each stage, reads a word of it and frees it. Hopper (sm_90a) only.
//   bench/tma-stream [-n ROWS] [-k COLS] [-r REPS] [LOAD...]
#include "config.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define HOPPER_CODE 0
#else
#define HOPPER_CODE 1
#endif

#define MAX_STAGES 64
#define SMEM_MAX (220 * 1024)
#define FLUSH_BYTES (256L << 20)  // written between cold runs: past any L2

static const char usage[] =
	"usage: bench/tma-stream [-n ROWS] [-k COLS] [-r REPS] [LOAD...]\n"
	"Streams a ROWS x COLS bf16 matrix (default 5120 x 2048 and 5120 x 8192)\n"
	"into shared memory through a TMA ring of each LOAD and prints its time\n"
	"and bandwidth, cold (after a 256 MB write, best of 3) and warm (REPS\n"
	"launches back to back, default 20: a matrix that fits stays in L2).\n"
	"LOAD is one of\n"
	"  box:COLSxROWSxCOUNT:STAGES  COUNT 2D boxes of COLS x ROWS elements a\n"
	"                              stage (128-byte swizzled at 64 columns),\n"
	"                              a block each ROWS rows of the matrix\n"
	"  bulk:BYTES:STAGES:BLOCKS    one 1D bulk copy of BYTES a stage, BLOCKS\n"
	"                              blocks each streaming its share in order\n"
	"Default: box:64x64x1:24 box:64x64x2:12 box:64x64x4:6 box:64x128x1:12\n"
	"box:64x32x1:24 box:256x64x1:6 bulk:8192:24:80 bulk:16384:12:80\n"
	"bulk:16384:12:132. Needs a Hopper GPU.\n";

struct load {
	char text[64];
	int bulk;           // 0: 2D boxes, 1: bulk copies
	int bc, br, count;  // box columns, rows, boxes a stage
	int bytes;          // a stage's bytes
	int stages, blocks;
};

static int fail_arg(const char *what, const char *arg)
{
	fprintf(stderr, "tma-stream: %s: '%s'\n", what, arg);
	return 2;
}

// A positive int from s (the whole string), or -1.
static long parse_pos(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	return errno || end == s || *end || v < 1 || v > (1L << 30) ? -1 : v;
}

// One LOAD; 0, or 2 with the reason on stderr.
static int parse_load(const char *s, struct load *l)
{
	memset(l, 0, sizeof *l);
	snprintf(l->text, sizeof l->text, "%s", s);
	if (!strncmp(s, "box:", 4)) {
		char tail;

		if (sscanf(s + 4, "%dx%dx%d:%d%c", &l->bc, &l->br, &l->count, &l->stages,
			   &tail) != 4)
			return fail_arg("not box:COLSxROWSxCOUNT:STAGES", s);
		if (l->bc < 8 || l->bc > 256 || l->bc % 8 || l->br < 1 || l->br > 256)
			return fail_arg("a box is 8 to 256 columns (a multiple of 8) by 1 to "
					"256 rows", s);
		if (l->count < 1 || l->count > 16)
			return fail_arg("1 to 16 boxes a stage", s);
		// each box lands on its swizzle atom (1024 bytes at 64 columns,
		// 128-byte swizzled) or on 128 bytes
		if (l->bc * l->br * 2 % (l->bc == 64 ? 1024 : 128))
			return fail_arg("a box is whole 1024-byte atoms at 64 columns, else whole "
					"128 bytes", s);
		l->bytes = l->bc * l->br * 2 * l->count;
	} else if (!strncmp(s, "bulk:", 5)) {
		char tail;

		l->bulk = 1;
		if (sscanf(s + 5, "%d:%d:%d%c", &l->bytes, &l->stages, &l->blocks, &tail) != 3)
			return fail_arg("not bulk:BYTES:STAGES:BLOCKS", s);
		if (l->bytes < 16 || l->bytes % 16 || l->blocks < 1 || l->blocks > 4096)
			return fail_arg("bulk copies are a multiple of 16 bytes, 1 to 4096 "
					"blocks", s);
	} else {
		return fail_arg("a load is box:... or bulk:...", s);
	}
	if (l->stages < 1 || l->stages > MAX_STAGES)
		return fail_arg("1 to 64 stages", s);
	if ((long)l->bytes * l->stages + 1024 > SMEM_MAX)
		return fail_arg("the ring does not fit in 220 KB of shared memory", s);
	return 0;
}

#if HOPPER_CODE
__device__ __forceinline__ uint32_t smem_addr(const void *p)
{
	return (uint32_t)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void bar_wait(uint32_t bar, uint32_t parity)
{
	asm volatile("{\n.reg .pred p;\nWAIT:\n"
		     "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
		     "@!p bra WAIT;\n}\n" :: "r"(bar), "r"(parity) : "memory");
}
#endif

// The ring: stage s at ring + s * bytes, its full and empty barriers.
__global__ void __launch_bounds__(64, 1)
k_stream(const __grid_constant__ CUtensorMap map, const char *lin, int bulk, int steps, int count,
	 int bc, int br, int bytes, long share, int stages, int *sink)
{
#if HOPPER_CODE
	extern __shared__ __align__(1024) unsigned char smem[];
	__shared__ __align__(8) uint64_t full[MAX_STAGES], empty[MAX_STAGES];
	const uint32_t base = smem_addr(smem), ring = (base + 1023) & ~1023u;
	const uint32_t fb = smem_addr(full), eb = smem_addr(empty);

	if (threadIdx.x == 0) {
		for (int s = 0; s < stages; s++) {
			asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(fb + 8 * s));
			asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(eb + 8 * s));
		}
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
	}
	__syncthreads();
	if (threadIdx.x == 0) {  // the producer
		for (int i = 0; i < steps; i++) {
			const int s = i % stages;
			const uint32_t dst = ring + s * bytes, bar = fb + 8 * s;

			if (i >= stages)
				bar_wait(eb + 8 * s, (i / stages - 1) & 1);
			asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
				     :: "r"(bar), "r"(bytes) : "memory");
			if (bulk) {
				const char *src = lin + blockIdx.x * share + (long)i * bytes;

				asm volatile("cp.async.bulk.shared::cluster.global.mbarrier"
					     "::complete_tx::bytes [%0], [%1], %2, [%3];"
					     :: "r"(dst), "l"(src), "r"(bytes), "r"(bar)
					     : "memory");
				continue;
			}
			for (int j = 0; j < count; j++)
				asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global"
					     ".mbarrier::complete_tx::bytes"
					     " [%0], [%1, {%2, %3}], [%4];"
					     :: "r"(dst + j * (bytes / count)), "l"((uint64_t)&map),
						"r"((i * count + j) * bc),
						"r"((int)blockIdx.x * br), "r"(bar) : "memory");
		}
	} else if (threadIdx.x == 32) {  // the consumer
		int acc = 0;

		for (int i = 0; i < steps; i++) {
			const int s = i % stages;

			bar_wait(fb + 8 * s, (i / stages) & 1);
			acc += *(volatile int *)(smem + (ring - base) + s * bytes);
			asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(eb + 8 * s)
				     : "memory");
		}
		if (acc == 0x7fffffff)  // never: keeps the reads
			*sink = acc;
	}
#else
	(void)map, (void)lin, (void)bulk, (void)steps, (void)count, (void)bc, (void)br;
	(void)bytes, (void)share, (void)stages, (void)sink;
	__trap();
#endif
}

#define CK(call)                                                                            \
	do {                                                                                \
		cudaError_t e_ = (call);                                                    \
		if (e_ != cudaSuccess) {                                                    \
			fprintf(stderr, "tma-stream: %s: %s\n", #call, cudaGetErrorString(e_)); \
			exit(1);                                                            \
		}                                                                           \
	} while (0)

static PFN_cuTensorMapEncodeTiled_v12000 encode;

static void tensor_map(CUtensorMap *m, void *p, long cols, long rows, int bc, int br)
{
	cuuint64_t dim[2] = { (cuuint64_t)cols, (cuuint64_t)rows };
	cuuint64_t stride[1] = { (cuuint64_t)cols * 2 };
	cuuint32_t box[2] = { (cuuint32_t)bc, (cuuint32_t)br }, step[2] = { 1, 1 };
	CUresult r = encode(m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, p, dim, stride, box, step,
			    CU_TENSOR_MAP_INTERLEAVE_NONE,
			    bc == 64 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
			    CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);

	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "tma-stream: cuTensorMapEncodeTiled failed (error %d)\n", (int)r);
		exit(1);
	}
}

// One load over the rows x cols matrix at w: a line of times.
static void run(const struct load *l, char *w, char *flush, int *sink, long rows, long cols,
		int reps)
{
	const double matrix = 2.0 * (double)rows * (double)cols;
	CUtensorMap map;
	long share = 0;
	int blocks, steps;
	double moved;
	float best = 1e30f, ms, warm;
	cudaEvent_t e0, e1;

	memset(&map, 0, sizeof map);
	if (l->bulk) {
		blocks = l->blocks;
		share = (long)(matrix / blocks) / l->bytes * l->bytes;
		steps = (int)(share / l->bytes);
		moved = (double)share * blocks;
	} else {
		if (rows % l->br || cols % ((long)l->bc * l->count)) {
			printf("%-22s skipped: the matrix is not whole blocks of rows and "
			       "stages of boxes\n", l->text);
			return;
		}
		blocks = (int)(rows / l->br);
		steps = (int)(cols / ((long)l->bc * l->count));
		moved = matrix;
		tensor_map(&map, w, cols, rows, l->bc, l->br);
	}
	if (steps < 1) {
		printf("%-22s skipped: no whole stage a block\n", l->text);
		return;
	}
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	const size_t smem = (size_t)l->bytes * l->stages + 1024;
	auto launch = [&]() {
		k_stream<<<blocks, 64, smem>>>(map, w, l->bulk, steps, l->count, l->bc, l->br,
					       l->bytes, share, l->stages, sink);
	};
	for (int r = 0; r < 3; r++) {
		CK(cudaMemsetAsync(flush, r, FLUSH_BYTES));
		CK(cudaEventRecord(e0));
		launch();
		CK(cudaEventRecord(e1));
		CK(cudaEventSynchronize(e1));
		CK(cudaEventElapsedTime(&ms, e0, e1));
		if (ms < best)
			best = ms;
	}
	CK(cudaEventRecord(e0));
	for (int r = 0; r < reps; r++)
		launch();
	CK(cudaEventRecord(e1));
	CK(cudaEventSynchronize(e1));
	CK(cudaGetLastError());
	CK(cudaEventElapsedTime(&warm, e0, e1));
	warm /= (float)reps;
	printf("%-22s %6.1f %6d %6d %9.2f %7.2f %9.2f %7.2f\n", l->text, l->bytes / 1024.0,
	       l->stages, blocks, best * 1e3, moved / best / 1e9, warm * 1e3, moved / warm / 1e9);
	CK(cudaEventDestroy(e0));
	CK(cudaEventDestroy(e1));
}

int main(int argc, char **argv)
{
	static const char *const defaults[] = {
		"box:64x64x1:24", "box:64x64x2:12",   "box:64x64x4:6",
		"box:64x128x1:12", "box:64x32x1:24",  "box:256x64x1:6",
		"bulk:8192:24:80", "bulk:16384:12:80", "bulk:16384:12:132",
	};
	struct load loads[32];
	long rows = 5120, colv[2] = { 2048, 8192 }, v;
	int ncols = 2, nl = 0, reps = 20, i, dev, major = 0, minor = 0;
	cudaDriverEntryPointQueryResult q;
	char *w, *flush;
	int *sink;

	for (i = 1; i < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage, stdout);
			return 0;
		}
		if (strcmp(argv[i], "-n") && strcmp(argv[i], "-k") && strcmp(argv[i], "-r"))
			return fail_arg("unknown option (try --help)", argv[i]);
		if (i + 1 >= argc)
			return fail_arg("a value is missing after", argv[i]);
		v = parse_pos(argv[i + 1]);
		if (v < 1 || (argv[i][1] != 'r' && v > (1L << 24)) ||
		    (argv[i][1] == 'k' && v % 8) || (argv[i][1] == 'r' && v > 10000))
			return fail_arg(argv[i][1] == 'k'   ? "columns: a multiple of 8, up to 2^24"
					: argv[i][1] == 'n' ? "rows: 1 to 2^24"
							    : "reps: 1 to 10000",
					argv[i + 1]);
		if (argv[i][1] == 'n')
			rows = v;
		else if (argv[i][1] == 'k')
			colv[0] = v, ncols = 1;
		else
			reps = (int)v;
	}
	for (; i < argc; i++) {
		if (nl == (int)(sizeof loads / sizeof loads[0]))
			return fail_arg("at most 32 loads", argv[i]);
		if (parse_load(argv[i], &loads[nl++]))
			return 2;
	}
	if (!nl) {
		for (size_t d = 0; d < sizeof defaults / sizeof defaults[0]; d++)
			if (parse_load(defaults[d], &loads[nl++]))
				return 2;
	}

	CK(cudaGetDevice(&dev));
	CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
	CK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
	if (major != 9 || minor != 0) {
		fprintf(stderr, "tma-stream: needs a Hopper GPU (compute capability 9.0), "
			"not %d.%d\n", major, minor);
		return 1;
	}
	CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void **)&encode, 12000,
					    cudaEnableDefault, &q));
	if (q != cudaDriverEntryPointSuccess || !encode) {
		fputs("tma-stream: the CUDA driver has no cuTensorMapEncodeTiled\n", stderr);
		return 1;
	}
	const long most = colv[ncols - 1] > colv[0] ? colv[ncols - 1] : colv[0];
	CK(cudaMalloc(&w, 2 * (size_t)rows * (size_t)most));
	CK(cudaMalloc(&flush, FLUSH_BYTES));
	CK(cudaMalloc(&sink, sizeof *sink));
	CK(cudaMemset(w, 1, 2 * (size_t)rows * (size_t)most));
	CK(cudaFuncSetAttribute(k_stream, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_MAX));
	for (int c = 0; c < ncols; c++) {
		printf("%ld x %ld bf16 (%.1f MB)\n", rows, colv[c], 2e-6 * rows * colv[c]);
		printf("%-22s %6s %6s %6s %9s %7s %9s %7s\n", "load", "KB", "stages", "blocks",
		       "cold us", "TB/s", "warm us", "TB/s");
		for (int j = 0; j < nl; j++)
			run(&loads[j], w, flush, sink, rows, colv[c], reps);
	}
	CK(cudaFree(w));
	CK(cudaFree(flush));
	CK(cudaFree(sink));
	return 0;
}
