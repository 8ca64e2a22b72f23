// workload.cu - the LayerNorm+Linear workloads, forward (ln_linear_fwd) and
// backward (ln_linear_bwd), fp32 and bf16 (bf16 storage, fp32
// accumulation): the forward's launch (its kernel chosen in choose.cu), the
// kernel options, the kernel() line, then the contract (limits, sizes, models,
// create, the check against ref.c's double references, the two workload
// definitions). The kernels are in the files internal.h lists; it also
// holds the operation, its napkin math and the numerics they share.
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "error.h"
#include "internal.h"
#include "layernorm/layernorm.h"
#include "util.h"

static int fwd_pass_possible(const struct fp_shape *s, enum fp_dtype dt);


// ---------------------------------------------------------------------------
// The forward's launch (the kernel is chosen in choose.cu), its kernel line
// and options

int lnl_fwd_takes_ldw(enum lnl_fwd_kernel fk)
{
	return fk != FK_NAIVE && fk != FK_UNFUSED && fk != FK_SIMT && fk != FK_WGMMA;
}

int lnl_fwd_launch(const struct lnl_op *op, const void *x, cudaStream_t st)
{
	if (op->Wf && op->ldw != op->K && !lnl_fwd_takes_ldw(op->fk))
		return error("ln_linear_fwd: kernel %d reads W' in rows of K, not of %ld",
			     (int)op->fk, op->ldw);
	switch (op->fk) {
	case FK_NAIVE:
		return fwd_naive_launch(op, x, st);
	case FK_UNFUSED:  // the LayerNorm module's row kernel
		return layernorm_fwd(op->dt, x, op->gamma, op->beta, op->h, NULL,
				      op->M, op->K, st) ||
		       lt_run(&op->g0, op->lt, op->W, op->h, op->y, op->workspace, st) ? -1 : 0;
	case FK_SIMT:
		return fwd_simt_launch(op, x, st);
	case FK_MMA_SMALL:
		return fwd_mma_launch(op, x, 0, st);
	case FK_MMA_SPLIT:
		return fwd_mma_split_launch(op, x, st);
	case FK_MMA:
		return fwd_mma_launch(op, x, 1, st);
	case FK_WGMMA:
		return fwd_wgmma_launch(op, x, st);
	case FK_WS:
		return fwd_ws_launch(op, x, st);
	case FK_GEMV:
		return fwd_gemv_launch(op, x, st);
	case FK_SKINNY:
	case FK_SKINNY_RES:
		return fwd_skinny_launch(op, x, st);
	case FK_SKINNY_ST:
		return fwd_skinny_st_launch(op, x, st);
	case FK_SKINNY_XA:
		return fwd_skinny_xa_launch(op, x, st);
	case FK_SKINNY_XT:
		return fwd_skinny_xt_launch(op, x, st);
	}
	return error("ln_linear_fwd: no kernel %d", (int)op->fk);
}

// v = op as seen by a launch of set `set`: its written buffers set * wset
// bytes past set 0's (the inputs are offset by the launch).
static void set_view(const struct lnl_op *op, int set, struct lnl_op *v)
{
	const size_t off = (size_t)set * op->wset;

	*v = *op;
	v->y = dev_in_set(op->y, off);
	v->h = dev_in_set(op->h, off);
	v->stats = (float *)dev_in_set(op->stats, off);
	v->dx = dev_in_set(op->dx, off);
	v->dW = dev_in_set(op->dW, off);
	v->dg = dev_in_set(op->dg, off);
	v->dbeta = dev_in_set(op->dbeta, off);
	v->db = dev_in_set(op->db, off);
	v->dh = dev_in_set(op->dh, off);
	v->part = (float *)dev_in_set(op->part, off);
	v->acc = (float *)dev_in_set(op->acc, off);
	v->workspace = dev_in_set(op->workspace, off);
	v->fpart = (float *)dev_in_set(op->fpart, off);
}

static int lnl_launch(struct fp_op *fop, int set, cudaStream_t st)
{
	const struct lnl_op *base = (const struct lnl_op *)fop;
	struct lnl_op view;
	const void *x, *dy;

	if (set < 0 || set >= base->nsets)
		return error("ln_linear: set %d out of range [0, %d)", set, base->nsets);
	set_view(base, set, &view);
	x = base->x + (size_t)set * base->xset;
	dy = base->dy ? base->dy + (size_t)set * base->dyset : NULL;
	return base->bwd ? bwd_launch(&view, x, dy, st) : lnl_fwd_launch(&view, x, st);
}

// What lnl_fwd_choose picked (forward) or which LayerNorm backward the fused
// backward runs (rows the register kernels hold, or not), as one line.
static void lnl_kernel(const struct fp_op *fop, char *buf, size_t n)
{
	const struct lnl_op *op = (const struct lnl_op *)fop;
	const char *loads = lnl_vec_width(op->K, op->dt) > 1 ? "16-byte loads" : "element loads";
	const char *tf = op->dt == FP_BF16 ? "" : "3xTF32 ";
	const char *unfused = "LayerNorm rows, cuBLASLt dW and dh, LayerNorm "
			      "backward, db column sums";
	char algo[128] = "";

	// lt_algo=fastest: which of the algorithms offered each GEMM runs
	// (1 = the heuristic's first choice).
	if (op->bwd && op->g0.offered > 1)
		snprintf(algo, sizeof algo, "; by time, cuBLASLt's algorithm %d of %d for dW, "
			 "%d of %d for dh", op->g0.rank + 1, op->g0.offered, op->g1.rank + 1,
			 op->g1.offered);
	else if (!op->bwd && op->g0.offered > 1)
		snprintf(algo, sizeof algo, "; by time, its algorithm %d of %d",
			 op->g0.rank + 1, op->g0.offered);
	if (op->bwd) {
		if (op->variant == BWD_NAIVE)
			snprintf(buf, n, "one thread a row, fp32 atomics, %s", loads);
		else if (op->variant == BWD_FUSED)
			snprintf(buf, n, "cuBLASLt dh, LayerNorm backward recomputing h "
				 "(%s), cuBLASLt dW, db column sums%s",
				 layernorm_bwd_threads(op->K, op->dt) ? "rows in registers" :
				 "rows of any width, a block a row", algo);
		else
			snprintf(buf, n, "%s%s", unfused, algo);
		return;
	}
	switch (op->fk) {
	case FK_NAIVE:
		snprintf(buf, n, "one thread a row, %s", loads);
		break;
	case FK_UNFUSED:
		snprintf(buf, n, "LayerNorm rows + cuBLASLt (bias in its epilogue%s)", algo);
		break;
	case FK_SIMT:
		snprintf(buf, n, "first fused kernel 128x128 on %s, element loads",
			 op->dt == FP_BF16 ? "WMMA" : "FMA");
		break;
	case FK_MMA_SMALL:
		snprintf(buf, n, "%smma.sync 64x128", tf);
		break;
	case FK_MMA_SPLIT:
		snprintf(buf, n, "%smma.sync %dx128 over %d slices of K, then a reduction",
			 tf, op->mma_bm, op->splits);
		break;
	case FK_MMA:
		snprintf(buf, n, "%smma.sync 128x%d", tf, op->mma_bn);
		break;
	case FK_SKINNY:
		snprintf(buf, n, "skinny: mma.sync with W' as A (%d rows a block) and x as B, "
			 "over %d slices of K in a cluster, reduced through DSMEM",
			 LNL_SKINNY_BW, op->splits);
		break;
	case FK_SKINNY_RES:
		snprintf(buf, n, "skinny, x resident: %s with W' as A (%d-row tiles by TMA, "
			 "dealt to %d clusters) and x's slice as B, over %d slices of K in a "
			 "cluster, reduced through DSMEM", op->swg ? "wgmma" : "mma.sync",
			 LNL_SKINNY_RES_BW, op->sgroups, op->splits);
		break;
	case FK_SKINNY_ST:
		if (op->splits > 1)
			snprintf(buf, n, "skinny, x streamed: wgmma with W' as A (%d rows a block) "
				 "and x's k-tiles as B, both by TMA, %d-stage ring, %d slices of "
				 "K in a cluster, added through DSMEM", LNL_SKINNY_ST_BW,
				 op->st_deep ? LNL_SKINNY_ST_DEEP_STAGES
					     : LNL_SKINNY_ST_STAGES(lnl_skinny_res_mp(op->M)),
				 op->splits);
		else
			snprintf(buf, n, "skinny, x streamed: wgmma with W' as A (%d rows a block, "
				 "all of K) and x's k-tiles as B, both by TMA", LNL_SKINNY_ST_BW);
		break;
	case FK_SKINNY_XA:
		if (op->splits > 1)
			snprintf(buf, n, "skinny, x streamed: wgmma with x's k-tiles as A and W' "
				 "as B (%d rows a block), both by TMA, over %d slices of K in a "
				 "cluster, reduced through DSMEM%s", op->xbn, op->splits,
				 op->xa_pass ? ", statistics pass" : "");
		else
			snprintf(buf, n, "skinny, x streamed: wgmma with x's k-tiles as A and W' "
				 "as B (%d rows a block, all of K), both by TMA%s", op->xbn,
				 op->xa_pass ? ", statistics pass" : "");
		break;
	case FK_SKINNY_XT: {
		const char *what = op->M > 64 ? "x~ from a pass, in 64-row tiles"
					      : "skinny, x~ from a pass";

		if (op->splits > 1)
			snprintf(buf, n, "%s: wgmma with x~'s k-tiles as A and "
				 "W' as B (%d rows a block), both by TMA, %d k-tiles a stage, over "
				 "%d slices of K in a cluster, reduced through DSMEM", what, op->xbn,
				 op->xks, op->splits);
		else
			snprintf(buf, n, "%s: wgmma with x~'s k-tiles as A and "
				 "W' as B (%d rows a block, all of K), both by TMA, %d k-tiles a "
				 "stage", what, op->xbn, op->xks);
		break;
	}
	case FK_WGMMA:
		snprintf(buf, n, "wgmma 128x256");
		break;
	case FK_WS:
		if (op->ws_dsum)
			snprintf(buf, n, "wgmma warp-specialized 128x%d over %d slices of K in a "
				 "cluster, reduced through DSMEM, x~ = x - c and the statistics "
				 "from a pass as A", op->ws_bn, op->splits);
		else if (op->splits > 1)
			snprintf(buf, n, "wgmma warp-specialized 128x%d, clusters of %d, over %d "
				 "slices of K, then a reduction%s", op->ws_bn, op->ws_cl, op->splits,
				 op->ws_xt ? ", x~ = x - c and the statistics from a pass as A" : "");
		else
			snprintf(buf, n, "wgmma warp-specialized 128x%d, clusters of %d%s",
				 op->ws_bn, op->ws_cl,
				 op->ws_xt     ? ", x~ = x - c and the statistics from a pass as A"
				 : op->ws_pass ? ", statistics pass" : "");
		break;
	case FK_GEMV:
		if (op->gv.splits > 1)
			snprintf(buf, n, "decode: W' streamed on CUDA cores, %d rows a block "
				 "of %d warps, over %d slices of K, then a reduction",
				 op->gv.brows, op->gv.warps, op->gv.splits);
		else
			snprintf(buf, n, "decode: W' streamed on CUDA cores, %d rows a block "
				 "of %d warps", op->gv.brows, op->gv.warps);
		break;
	}
}

// The forward's kernel options (values[0], the default, is today's choice).
// Option st_ring's values: stages of the x-streamed kernel's ring (STR_*).
static const char *const st_ring_values[] = { "auto", "8", "16", NULL };
// Option lt_algo's (both workloads): LTA_HEURISTIC, LTA_FASTEST.
static const char *const lt_algo_values[] = { "heuristic", "fastest", NULL };
static const char *const gemm_values[] = { "auto", "wgmma-ws", "wgmma", "mma", NULL };
static const char *const clusters_values[] = { "auto", "1", "2", NULL };
static const char *const pass_values[] = { "auto", "on", "off", NULL };
static const char *const split_values[] = { "auto", "off", NULL };
static const char *const split_tile_values[] = { "auto", "64", "32", NULL };
static const char *const decode_values[] = { "auto", "on", "off", NULL };
static const char *const skinny_values[] = { "auto", "on", "off", NULL };
static const char *const skinny_mma_values[] = { "auto", "sync", "wgmma", NULL };
static const char *const skinny_x_values[] = { "auto", "resident", "stream", "stream_xa",
						  "stream_xt", NULL };
static const char *const ws_tile_values[] = { "auto", "256", "192", "128", "64", NULL };
static const char *const ws_a_values[] = { "auto", "x", "xt", NULL };
static const char *const ws_reduce_values[] = { "auto", "cluster", "kernel", NULL };
static const char *const mma_tile_values[] = { "auto", "256", "192", NULL };
static const char *const few_tiles_values[] = { "auto", "xt", "ws", "mma", NULL };
static constexpr struct fp_kopt fwd_kopts[] = {
	{ "gemm", gemm_values,
	  "fused bf16 tensor-core kernel: wgmma-ws (warp-specialized), wgmma (both Hopper "
	  "only), mma (mma.sync); auto: wgmma-ws from K = 64, wgmma below, mma off Hopper; "
	  "fp32, unaligned rows and too few tiles for the SMs keep their mma.sync/first kernel "
	  "(bf16 from 65 rows: as few_tiles says, but mma takes the 64x128 mma.sync kernel)" },
	{ "clusters", clusters_values,
	  "blocks a cluster of the warp-specialized kernel: 2 share each W' tile by multicast "
	  "(1 where no pair fits, or over slices of K, ws_split); auto: 2 where N > 256 and "
	  "K > 512 but where its 128x256 tiles fill under half the SMs or the 128-row tiles "
	  "are an odd count under 8 (lnl_ws_pairs_pay)" },
	{ "stats_pass", pass_values,
	  "row statistics of the warp-specialized kernel from a pass of their own (on) or "
	  "summed from its tiles (off); bf16 from K = 2048 only; auto: on from N = 2048" },
	{ "split_k", split_values,
	  "few rows (fewer 64x128 tiles than SMs): the mma.sync kernel over slices of K, "
	  "their fp32 partials added in order by a reduction (auto), or one block a tile (off)" },
	{ "decode", decode_values,
	  "up to 8 rows with aligned 16-byte chunks: W' streamed once across the SMs on CUDA "
	  "cores, x~ in registers, slices of K where its blocks are fewer than twice the SMs "
	  "(on), or the mma.sync kernels above (off); auto: on for fp32 up to 8 rows and "
	  "bf16 up to two rows, where it was measured faster (bf16 on Hopper only where W' "
	  "is at most 80 KiB an SM, lnl_fwd_gemv_bf16_big; else the skinny kernel)",
	  "on,off" },
	{ "skinny", skinny_values,
	  "bf16 up to 64 rows (Hopper): W' as the MMA's A operand and x as its B (8 rows a "
	  "fragment, not 64), slices of K as a cluster's blocks, added through distributed "
	  "shared memory in one kernel, from 17 rows with x's slice resident (on), or the "
	  "kernels above (off); auto: on where the "
	  "128x256 tiles would fill under half the SMs and decode does not serve",
	  "off" },
	{ "skinny_mma", skinny_mma_values,
	  "the multiply of the x-resident skinny kernel (17 to 64 bf16 rows): mma.sync on "
	  "ldmatrix'd fragments (sync) or wgmma reading W' and x~ from shared memory (wgmma); "
	  "auto: wgmma (2-8 % faster from 17 to 64 rows)",
	  "sync" },
	{ "skinny_x", skinny_x_values,
	  "x in the skinny kernel from 17 to 64 bf16 rows: a slice of K resident in each "
	  "block of a cluster, W' streamed past it and the slices added through DSMEM "
	  "(resident), or a block a tile of W' over all of K with x's k-tiles streamed "
	  "beside it: 64 rows of W' as wgmma's A (stream), or 16 to 96 with x as A "
	  "(stream_xa, xa_tile, xa_split); auto: from 33 rows stream_xa over slices of K "
	  "wherever a tile runs in one wave (lnl_skinny_xa_plan); at 17 to 32 rows stream "
	  "over slices of K from K = 6144, or where resident does not serve "
	  "(lnl_skinny_st_plan); else stream where W' has "
	  "0.9 64-row tiles an SM or more, "
	  "but stream_xa at 33 to 64 rows where that would be 1 to 1.5 an SM (SMs with two "
	  "blocks would finish last); below, stream_xa in 32- or 48-row tiles at short K "
	  "(lnl_skinny_xa_narrow); else resident; stream_xt (17 to 64 rows): x~ = x - c and "
	  "the statistics from a pass, then a GEMM of x~ as A and W' tiles of xt_tile rows "
	  "as B, xt_stage k-tiles a ring stage; auto takes stream_xt before all of these "
	  "from 17 rows in tiles of up to 88 rows where x~'s rows are fewer than twice the "
	  "tile's, or twice from K = 1536 where its blocks are 0.8 an SM or more, and only "
	  "where they are 0.7 an SM or more (0.45 up to K = 2048, or 4096 up to 40 rows; up "
	  "to 32 rows 0.9: lnl_skinny_xt_auto)",
	  "stream,stream_xa,stream_xt" },
	{ "ws_tile", ws_tile_values,
	  "columns of the warp-specialized kernel's 128-row tiles: 256, 192, 128, or 64 "
	  "over x~ (ws_a=xt; 128 over x); auto: "
	  "192 where its rounds times 192 are under 0.85 of 256's (lnl_ws_bn), and where "
	  "the 128x256 tiles would fill under half the SMs (bf16 from 65 rows) the width of "
	  "least time as lnl_ws_plan models it",
	  "192,128,64" },
	{ "mma_tile", mma_tile_values,
	  "columns of the mma.sync kernel's 128-row tiles (fp32, and bf16 off Hopper or "
	  "with gemm=mma): 256, or 192 where the tiles come in fewer whole rounds of the "
	  "SMs; auto: the rule of ws_tile, one block an SM (lnl_ws_bn)",
	  "192" },
	{ "xa_tile", lnl_xa_tile_values,
	  "rows of W' a block of the x-as-A skinny kernel (skinny_x=stream_xa, or where "
	  "auto picks it): 16 to 96; auto: as skinny_x=auto picks them (from 33 rows the "
	  "tile of 32 to 96 rows and its slices of K that run in one wave with the fewest "
	  "k-tiles a block, lnl_skinny_xa_plan; else 32 or 48 at short K below 0.9 64-row "
	  "tiles an SM, lnl_skinny_xa_narrow), else 72, or 96 where 72-row tiles would "
	  "outnumber the SMs (lnl_skinny_xa_rows)",
	  "16,32,48,64" },
	{ "xa_split", lnl_xa_split_values,
	  "slices of K of the x-as-A skinny kernel (where it runs): a cluster of that many "
	  "blocks a tile, their sums added in rank order through DSMEM (1: a block a tile "
	  "over all of K); auto: the slices of its tile that run in one wave with the fewest "
	  "k-tiles a block, a slicing counted as 20 k-tiles more (lnl_skinny_xa_plan)",
	  "3" },
	{ "st_split", lnl_xa_split_values,
	  "slices of K of the x-streamed skinny kernel with W' as A (skinny_x=stream, or "
	  "where auto picks it): a cluster of that many blocks a 64-row tile of W', their "
	  "sums added in rank order through DSMEM; auto: at 17 to 32 rows the slices that run "
	  "in one wave with the fewest k-tiles an SM (lnl_skinny_st_plan), else 1",
	  "3" },
	{ "xa_pass", pass_values,
	  "the x-as-A skinny kernel's row statistics (tiles of 48 rows and more, bf16 from "
	  "K = 2048): from a pass of their own, the kernel launched programmatically so that "
	  "it streams W' meanwhile and reads them at its end (on), or summed in every block "
	  "(off); auto: on in tiles of up to 64 rows",
	  "on" },
	{ "res_split", lnl_xa_split_values,
	  "slices of K of the x-resident skinny kernel (17 to 64 rows where it serves): a "
	  "cluster of that many blocks, the 128-row tiles of W' dealt round to as many clusters as "
	  "run at once, where x's slice fits (else auto's); auto: the plan of "
	  "lnl_fwd_skinny_res (the fewest k-tiles an SM, each tile costing "
	  "LNL_SKINNY_RES_ROUND more)",
	  "2" },
	{ "xt_tile", lnl_xt_tile_values,
	  "rows of W' a block of the x~ skinny kernel (skinny_x=stream_xt, or where auto "
	  "picks it): 32 to 96, a multiple of 8; auto: the fewest that make no more blocks "
	  "than SMs (lnl_skinny_xt_tile)",
	  "96" },
	{ "xt_stage", lnl_xt_stage_values,
	  "k-tiles of x~ and W' a ring stage of the x~ skinny kernel: 1, 2 or 4; auto: 4 in "
	  "tiles of up to 48 rows, else 2 (lnl_skinny_xt_stage)",
	  "1" },
	{ "split_tile", split_tile_values,
	  "rows of the split-K mma.sync kernel's tiles (split_k): 64, or 32, half the "
	  "padding of up to 32 rows of x; auto: 32 for fp32 up to 32 rows, where 3xTF32 "
	  "multiplies each tile three times (lnl_fwd_split_rows32), else 64",
	  "32" },
	{ "lt_algo", lt_algo_values,
	  "the unfused variant's cuBLASLt GEMM: the algorithm cuBLASLt's heuristic puts "
	  "first, or the fastest of those it offers (up to 16), each timed when the op is "
	  "made on drawn operands; the kernel line says which of how many",
	  "fastest" },
	{ "xt_split", lnl_xa_split_values,
	  "slices of K of the x~ skinny kernel (where it runs): a cluster of that many blocks "
	  "a tile, their sums added in rank order through DSMEM, each slice a multiple of "
	  "xt_stage's k-tiles (fewer slices where that leaves the last ones none); with "
	  "xt_tile=auto the tile is then the fewest rows whose tiles times the slices are no "
	  "more blocks than SMs; auto: 1 (on an H200, 2 slices took 1.04-1.45x the time of "
	  "1 where its tiles fill the SMs, and where they do not beat auto's x-as-A slices "
	  "at 4 of 24 shapes, by 1-6 %; 3 and 4 slices took 1.15-3x the time of 1)",
	  "3" },
	{ "st_ring", st_ring_values,
	  "stages of the x-streamed skinny kernel's ring over slices of K at 17 to 32 rows: "
	  "8, two blocks an SM, or 16, one block an SM with twice the bytes in flight and "
	  "four warpgroups, its slices the fewest k-tiles a block in one wave; auto: 16 "
	  "where the slices of 8 (lnl_skinny_st_plan) put one block an SM (on an H200 "
	  "0.81-0.99x their time), else 8 (16 took 1.11-1.34x where 8 paired blocks)",
	  "8,16" },
	{ "ws_split", lnl_xa_split_values,
	  "slices of K of the warp-specialized kernel where its 128x256 tiles would fill "
	  "under half the SMs (bf16 from 65 rows, where few_tiles takes it): a block a "
	  "tile and slice, their sums added in slice order (deterministic) as ws_reduce says "
	  "(1: all of K a block); at most 8, 2 k-tiles a slice or more; auto: over x~ with "
	  "ws_reduce=cluster the model's 1 to 3 (lnl_ws_plan, lnl_few_ws_ns), else 1 (over "
	  "x, 2 and 4 slices were slower at 21 of 24 points where auto takes the kernel)",
	  "2" },
	{ "few_tiles", few_tiles_values,
	  "bf16 on Hopper from 65 rows where the 128x256 tiles would fill under half the SMs: "
	  "x~ = x - c and the statistics from a pass, then the x~ kernel's GEMM over 64-row "
	  "tiles of x~ (xt; xt_tile, xt_split, xt_stage), the warp-specialized kernel in "
	  "tiles and slices of K (ws; ws_a, ws_tile, ws_split), or the 64x128 mma.sync kernel or "
	  "its slices of K (mma); auto: the faster of xt and ws over x~ (its tiles and "
	  "slices of K in a cluster) in a model of their rounds of blocks and k-tiles fitted "
	  "on an H200, ws over x past 1024 rows (lnl_few_tiles_ws)",
	  "ws,mma" },
	{ "ws_a", ws_a_values,
	  "the warp-specialized kernel's A operand: x, shifted by each row's first element "
	  "and summed into the statistics in the math warps' registers (x), or x~ = x - c "
	  "and the statistics from the x~ kernel's pass, read by wgmma from shared memory "
	  "like W' (xt: bf16, 65 to 1024 rows, all of K a block, no statistics pass); "
	  "auto: xt where the 128x256 tiles would fill under half the SMs (there the kernel "
	  "over x took 1.01-2.0x its time on an H200), else x",
	  "x,xt" },
	{ "ws_reduce", ws_reduce_values,
	  "where the warp-specialized kernel's slices of K (ws_split) are added: over x~, "
	  "in the cluster of a tile's slices through distributed shared memory, in rank "
	  "order, no partials in memory (cluster), or by a reduction kernel after, from fp32 "
	  "partials in memory (kernel; over x always); auto: cluster over x~ (on an H200 "
	  "the reduction kernel alone took 6.6-7.3 us at 1M outputs)",
	  "kernel" },
	{ NULL, NULL, NULL },
};

// The launcher reads an option's value at its OPT_* index (internal.h):
// the table above must list them in that order.
static constexpr bool kopt_at(int i, const char *name)
{
	const char *a = fwd_kopts[i].name;

	while (*a && *a == *name)
		a++, name++;
	return *a == *name;
}
static_assert(kopt_at(OPT_GEMM, "gemm") && kopt_at(OPT_CLUSTERS, "clusters") &&
		      kopt_at(OPT_STATS_PASS, "stats_pass") && kopt_at(OPT_SPLIT_K, "split_k") &&
		      kopt_at(OPT_DECODE, "decode") && kopt_at(OPT_SKINNY, "skinny") &&
		      kopt_at(OPT_SKINNY_MMA, "skinny_mma") && kopt_at(OPT_SKINNY_X, "skinny_x") &&
		      kopt_at(OPT_WS_TILE, "ws_tile") && kopt_at(OPT_MMA_TILE, "mma_tile") &&
		      kopt_at(OPT_XA_TILE, "xa_tile") && kopt_at(OPT_XA_SPLIT, "xa_split") &&
		      kopt_at(OPT_ST_SPLIT, "st_split") && kopt_at(OPT_XA_PASS, "xa_pass") &&
		      kopt_at(OPT_RES_SPLIT, "res_split") && kopt_at(OPT_XT_TILE, "xt_tile") &&
		      kopt_at(OPT_XT_STAGE, "xt_stage") && kopt_at(OPT_SPLIT_TILE, "split_tile") &&
		      kopt_at(OPT_LT_ALGO, "lt_algo") && kopt_at(OPT_XT_SPLIT, "xt_split") &&
		      kopt_at(OPT_ST_RING, "st_ring") && kopt_at(OPT_WS_SPLIT, "ws_split") &&
		      kopt_at(OPT_FEW_TILES, "few_tiles") && kopt_at(OPT_WS_A, "ws_a") &&
		      kopt_at(OPT_WS_REDUCE, "ws_reduce"),
	      "fwd_kopts in the order of the OPT_* indices");

// ---------------------------------------------------------------------------
// The workload contract

#define LNL_MAX_M (1L << 22)   // column-sum chunks: M / 128 <= 65535 grid rows
#define LNL_MAX_KN (1L << 20)  // in-row indices are 32-bit
#define LNL_MAX_ELEMS (1L << 34)
// Relative error bounds (L2 norm of the error over the L2 norm of the
// reference, per output). fp32: GEMM summation order and fp32 statistics
// give ~1e-6; 1e-4 leaves room for K = 4096 sums and rstd up to 316 (the
// constant profile). bf16: the normalised x (or shifted x) and the outputs
// are rounded to bf16 (2^-9 relative each): ~4e-3 at worst.
#define LNL_TOL_FP32 1e-4
#define LNL_TOL_BF16 1e-2

static int lnl_validate(const struct fp_shape *s, enum fp_dtype dt, char *why,
			size_t n)
{
	long M = s->v[0], K = s->v[1], N = s->v[2];

	if (dt != FP_F32 && dt != FP_BF16)
		snprintf(why, n, "dtype %d is not supported (fp32, bf16)", (int)dt);
	else if (M < 1)
		snprintf(why, n, "M=%ld: there must be at least 1 row", M);
	else if (K < 1)
		snprintf(why, n, "K=%ld: rows must have at least 1 feature", K);
	else if (N < 1)
		snprintf(why, n, "N=%ld: there must be at least 1 output feature", N);
	else if (M > LNL_MAX_M)
		snprintf(why, n, "M=%ld: at most %ld rows", M, LNL_MAX_M);
	else if (K > LNL_MAX_KN)
		snprintf(why, n, "K=%ld: at most %ld features (32-bit in-row indexing)",
			 K, LNL_MAX_KN);
	else if (N > LNL_MAX_KN)
		snprintf(why, n, "N=%ld: at most %ld output features (32-bit in-row indexing)",
			 N, LNL_MAX_KN);
	else if ((double)M * K > (double)LNL_MAX_ELEMS || (double)M * N > (double)LNL_MAX_ELEMS)
		snprintf(why, n, "M=%ld: x or y would exceed 2^34 elements", M);
	else
		return 0;
	return -1;
}

int lnl_fold_perm(long K, enum fp_dtype dt, int hopper)
{
	return dt == FP_BF16 && hopper && lnl_vec_width(K, dt) > 1 && K >= WS_MIN_K;
}

long lnl_fold_ld(long K, enum fp_dtype dt, int hopper)
{
	return lnl_fold_perm(K, dt, hopper) ? lnl_row_ld(K, dt) : K;
}

int lnl_fwd_pass_possible(long K, enum fp_dtype dt)
{
	const struct fp_shape s = { { 1, K, 1 } };

	return fwd_pass_possible(&s, dt);
}

// Whether a bf16 fused forward's statistics pass may run at this shape
// (whatever the options say): create() allocates its buffer there, so that
// device_bytes(), which knows no options, counts what create() allocates.
static int fwd_pass_possible(const struct fp_shape *s, enum fp_dtype dt)
{
	return dt == FP_BF16 && s->v[1] >= WS_PASS_K;
}


// Whether it runs by default (stats_pass=auto), where the warp-specialized
// kernel serves: only that kernel has the choice, and the pass was measured
// at K = 4096 only, so below K = WS_PASS_K the sums stay in the load path.
static int fwd_pass_auto(const struct fp_shape *s, enum fp_dtype dt)
{
	return fwd_pass_possible(s, dt) && s->v[2] >= WS_PASS_N;
}

// Sizes of everything an instance allocates, shared by create() and
// device_bytes() so the two cannot drift apart. Each written buffer is
// counted once here; wset, their padded sum, is one set's share of wbuf.
struct lnl_sizes {
	size_t xset, dyset, vecK, vecN, W;
	size_t Wf, fold;  // the fused forward's W' and s, b' (fp32, N each)
	size_t y, h, stats, dx, dW, dg, db, dh, part, acc, workspace;  // written
	size_t fpart;     // written: the fused forward's split-K partials
	size_t wset, total;
};

static void lnl_sizes(int bwd, const struct fp_shape *s, enum fp_dtype dt,
		      int variant, int nsets, struct lnl_sizes *z)
{
	size_t M = (size_t)s->v[0], K = (size_t)s->v[1], N = (size_t)s->v[2];
	size_t es = fp_dtype_size(dt), R = (M + COLSUM_ROWS - 1) / COLSUM_ROWS;

	memset(z, 0, sizeof *z);
	z->xset = dev_pad(M * K * es);
	z->vecK = dev_pad(K * es);
	z->vecN = dev_pad(N * es);
	z->W = dev_pad(N * K * es);
	if (!bwd) {
		z->y = dev_pad(M * N * es);
		if (variant == FWD_UNFUSED) {
			z->h = z->xset;
			z->workspace = LT_WORKSPACE_BYTES;
		}
		if (variant == FWD_FUSED) {  // W', s, b'; the statistics
			// W''s rows at lnl_row_ld, whatever kernel runs
			z->Wf = dev_pad((N + 31) / 32 * 32 * (size_t)lnl_row_ld((long)K, dt) * es);
			z->fold = 2 * dev_pad(N * sizeof(float));
			const int xt = lnl_fwd_xt_possible((long)M, (long)K, dt);

			if (fwd_pass_possible(s, dt) || xt)
				z->stats = dev_pad(3 * M * sizeof(float));
			if (xt)
				z->h = dev_pad(lnl_xt_bytes((long)M, (long)K));
			z->fpart = dev_pad(lnl_split_bytes((long)M, (long)K, (long)N, dt));
		}
		z->wset = z->y + z->h + z->stats + z->workspace + z->fpart;
		z->total = (size_t)nsets * (z->xset + z->wset) + 2 * z->vecK + z->W +
			   z->vecN + z->Wf + z->fold;
		return;
	}
	z->dyset = dev_pad(M * N * es);
	z->dx = z->xset;
	z->dW = z->W;
	z->dg = 2 * z->vecK;  // dgamma, then dbeta K elements on
	z->db = z->vecN;
	if (variant == BWD_NAIVE) {
		z->acc = dev_pad((N * K + 2 * K + N) * sizeof(float));
	} else {
		z->h = z->xset;
		z->stats = dev_pad(3 * M * sizeof(float));
		z->dh = dev_pad(M * K * es);
		// db's column-sum partials, or the LayerNorm backward's (at
		// most LNL_PARTIALS blocks of 2 K)
		z->part = 2 * R * N > 2 * LNL_PARTIALS * K ? 2 * R * N
							   : 2 * LNL_PARTIALS * K;
		z->part = dev_pad(z->part * sizeof(float));
		z->workspace = LT_WORKSPACE_BYTES;
	}
	// inputs: x, dy sets; gamma, beta, W. written, per set: dx, dW,
	// dgamma, dbeta, db and the scratch.
	z->wset = z->dx + z->dW + z->dg + z->db + z->acc + z->h + z->stats +
		  z->dh + z->part + z->workspace;
	z->total = (size_t)nsets * (z->xset + z->dyset + z->wset) + 2 * z->vecK +
		   z->W;
}

static size_t fwd_device_bytes(const struct fp_shape *s, enum fp_dtype dt,
			       int variant, int nsets)
{
	struct lnl_sizes z;

	lnl_sizes(0, s, dt, variant, nsets, &z);
	return z.total;
}

static size_t bwd_device_bytes(const struct fp_shape *s, enum fp_dtype dt,
			       int variant, int nsets)
{
	struct lnl_sizes z;

	lnl_sizes(1, s, dt, variant, nsets, &z);
	return z.total;
}

// Extra DRAM reads of a weight of wbytes by a GEMM that walks M rows in
// groups of gm rows (8 tiles of 128 for the fused kernel; cuBLAS's
// rasterisation is similar): none while the weight stays in L2 (counted as
// 16 MB of the H100's 50 MB, leaving room for the streamed operand), else
// one more read per row group.
static double weight_rereads(double M, double wbytes, double gm)
{
	if (wbytes <= 16e6)
		return 0;
	return (ceil(M / gm) - 1) * wbytes;
}

static void fwd_model(const struct fp_shape *s, enum fp_dtype dt, int variant,
		      struct fp_model *m)
{
	double M = (double)s->v[0], K = (double)s->v[1], N = (double)s->v[2];
	double es = (double)fp_dtype_size(dt), wre = weight_rereads(M, N * K * es, 1024);

	memset(m, 0, sizeof *m);
	m->flops = 2 * M * N * K + 8 * M * K + M * N;
	m->min_bytes = es * (M * K + 2 * K + N * K + N + M * N);
	// Kept for the backward: nothing. Every ln_linear_bwd variant reads dy
	// and the op's inputs and parameters (x, gamma, beta, W) only, and
	// recomputes the statistics and h from x.
	m->saved_bytes = 0;
	switch (variant) {
	case FWD_NAIVE:  // x read three times (mean/var, output loop); W from L2
		m->variant_bytes = m->min_bytes + 2 * M * K * es + wre;
		break;
	case FWD_UNFUSED:  // h written by the LayerNorm and read by the GEMM
		m->variant_bytes = m->min_bytes + 2 * M * K * es + wre;
		break;
	default:  // W' in place of W, s and b' (fp32) in place of gamma, beta,
	          // b; with a statistics pass x read once more, 3 floats a row
	          // written and read (the model knows no kernel options: it
	          // counts the default's pass, which decode rows never take)
		m->variant_bytes = m->min_bytes - 2 * K * es - N * es + 8 * N + wre;
		if (m->variant_bytes < m->min_bytes)
			m->variant_bytes = m->min_bytes;
		if (fwd_pass_auto(s, dt) && !lnl_fwd_gemv_auto((long)M, dt))
			m->variant_bytes += M * K * es + 24 * M;
		/* fp32 rows in 16-byte chunks go to the tensor cores as 3xTF32
		 * (fwd_mma.cu): three products for each of the GEMM's; decode
		 * rows (fwd_gemv.cu) to CUDA cores, one product each. */
		if (dt == FP_F32 && lnl_vec_width((long)K, dt) > 1 && M > LNL_GEMV_MAX_M)
			m->executed_flops = m->flops + 2 * (2 * M * N * K);
		break;
	}
}

static void bwd_model(const struct fp_shape *s, enum fp_dtype dt, int variant,
		      struct fp_model *m)
{
	double M = (double)s->v[0], K = (double)s->v[1], N = (double)s->v[2];
	double es = (double)fp_dtype_size(dt);
	double E = M * K, wre = weight_rereads(M, N * K * es, 1024);

	memset(m, 0, sizeof *m);
	m->flops = 4 * M * N * K + 18 * M * K + M * N;
	m->saved_bytes = 0;  // it recomputes what it needs from x
	m->min_bytes = es * (M * N + M * K + 2 * K + N * K) +
		       es * (M * K + 2 * K + N * K + N);
	if (variant == BWD_NAIVE)  // x and dy re-read per pass; fp32 accumulators
		m->variant_bytes = m->min_bytes + 3 * E * es + 3 * M * N * es +
				   2 * 4 * (N * K + 2 * K + N);
	else  // h and dh written and read; dy read by both GEMMs and the db
	      // column sums; unfused: x read twice, statistics (3 floats a
	      // row) written and read (fused: x once, statistics recomputed)
		m->variant_bytes = m->min_bytes + 4 * E * es + 2 * M * N * es + 2 * wre +
				   (variant == BWD_UNFUSED ? E * es + 24 * M : 0);
}

static void lnl_destroy(struct fp_op *fop)
{
	struct lnl_op *op = (struct lnl_op *)fop;

	if (!op)
		return;
	lt_release(&op->g0);
	lt_release(&op->g1);
	if (op->lt)
		cublasLtDestroy(op->lt);
	void *bufs[] = { op->x, op->dy, op->gamma, op->beta, op->W, op->b,
			 op->Wf, op->sW, op->bf, op->wbuf };
	for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
		cudaFree(bufs[i]);
	free(op);
}

// lt_algo=fastest: the op's GEMMs timed on drawn operands (set 0's; the
// check and the timing draw their own later) with each algorithm the
// heuristic offers, the fastest kept. 0, or -1 (reported).
static int lnl_lt_tune(struct lnl_op *op)
{
	const size_t MK = (size_t)(op->M * op->K), NK = (size_t)(op->N * op->K);
	const size_t MN = (size_t)(op->M * op->N);
	const uint64_t seed = 0x9e3779b97f4a7c15ull;

	if (!op->bwd)  // y = h W^T + b
		return dev_fill_normal(op->W, op->dt, NK, seed, 0.f, 0.03f, 0) ||
		       dev_fill_normal(op->h, op->dt, MK, seed + 1, 0.f, 1.f, 0) ||
		       dev_fill_normal(op->b, op->dt, (size_t)op->N, seed + 2, 0.f, 0.1f, 0) ||
		       lt_tune(&op->g0, op->lt, op->W, op->h, op->y, op->workspace, 0) ? -1 : 0;
	return dev_fill_normal(op->W, op->dt, NK, seed, 0.f, 0.03f, 0) ||  // dW, dh
	       dev_fill_normal(op->h, op->dt, MK, seed + 1, 0.f, 1.f, 0) ||
	       dev_fill_normal(op->dy, op->dt, MN, seed + 3, 0.f, 1.f, 0) ||
	       lt_tune(&op->g0, op->lt, op->h, op->dy, op->dW, op->workspace, 0) ||
	       lt_tune(&op->g1, op->lt, op->W, op->dy, op->dh, op->workspace, 0) ? -1 : 0;
}

// The cuBLASLt plans of the unfused variants (and of the fused backward's
// GEMMs).
static int lnl_plan(struct lnl_op *op)
{
	const long M = op->M, K = op->K, N = op->N;
	cudaDataType_t t = op->dt == FP_BF16 ? CUDA_R_16BF : CUDA_R_32F;

	if (cublasLtCreate(&op->lt) != CUBLAS_STATUS_SUCCESS) {
		op->lt = NULL;
		return error("ln_linear: cannot create a cuBLASLt handle");
	}
	if (!op->bwd)
		return lt_init(&op->g0, op->lt, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K,
			       t, K, K, t, N, op->b) ||
		       (op->ko.v[OPT_LT_ALGO] == LTA_FASTEST && lnl_lt_tune(op));
	return lt_init(&op->g0, op->lt, CUBLAS_OP_N, CUBLAS_OP_T, K, N, M,
		       t, K, N, t, K, NULL) ||
	       lt_init(&op->g1, op->lt, CUBLAS_OP_N, CUBLAS_OP_N, K, M, N,
		       t, K, N, t, K, NULL) ||
	       (op->ko.v[BOPT_LT_ALGO] == LTA_FASTEST && lnl_lt_tune(op));
}

static int lnl_create(int bwd, struct fp_op **out, const struct fp_shape *s,
		      enum fp_dtype dt, int variant, int nsets,
		      unsigned long long seed, const struct fp_kopts *ko)
{
	struct lnl_op *op = (struct lnl_op *)xcalloc(1, sizeof *op);
	struct lnl_sizes z;
	char why[160], *cur;
	const char *name = bwd ? "ln_linear_bwd" : "ln_linear_fwd";

	*out = NULL;
	if (lnl_validate(s, dt, why, sizeof why)) {
		free(op);
		return error("%s: %s", name, why);
	}
	if (nsets < 1 || variant < 0 || variant > (bwd ? BWD_FUSED : FWD_FUSED)) {
		free(op);
		return error("%s: bad instance (variant %d, %d input sets)", name,
			     variant, nsets);
	}
	op->bwd = bwd;
	op->dt = dt;
	op->variant = variant;
	op->M = s->v[0];
	op->K = s->v[1];
	op->N = s->v[2];
	op->Np = (op->N + 31) / 32 * 32;
	op->nsets = nsets;
	if (ko)
		op->ko = *ko;
	lnl_sizes(bwd, s, dt, variant, nsets, &z);
	op->xset = z.xset;
	op->dyset = z.dyset;
	op->wset = z.wset;
	if (dev_alloc(&op->x, (size_t)nsets * z.xset) ||
	    dev_alloc(&op->dy, (size_t)nsets * z.dyset) ||
	    dev_alloc(&op->gamma, z.vecK) || dev_alloc(&op->beta, z.vecK) ||
	    dev_alloc(&op->W, z.W) || (!bwd && dev_alloc(&op->b, z.vecN)) ||
	    dev_alloc(&op->Wf, z.Wf) ||
	    dev_alloc(&op->sW, z.fold / 2) || dev_alloc(&op->bf, z.fold / 2) ||
	    dev_alloc(&op->wbuf, (size_t)nsets * z.wset))
		goto out_free;
	cur = op->wbuf;  // set 0's written buffers, in the order of lnl_sizes
	op->y = dev_carve(&cur, z.y);
	op->h = dev_carve(&cur, z.h);
	op->stats = (float *)dev_carve(&cur, z.stats);
	op->dx = dev_carve(&cur, z.dx);
	op->dW = dev_carve(&cur, z.dW);
	op->dg = dev_carve(&cur, z.dg);
	op->db = dev_carve(&cur, z.db);
	op->dh = dev_carve(&cur, z.dh);
	op->part = (float *)dev_carve(&cur, z.part);
	op->acc = (float *)dev_carve(&cur, z.acc);
	op->workspace = dev_carve(&cur, z.workspace);
	op->fpart = z.fpart ? (float *)dev_carve(&cur, z.fpart) : NULL;
	if (bwd)
		op->dbeta = (char *)op->dg + (size_t)op->K * fp_dtype_size(dt);
	if ((bwd ? variant != BWD_NAIVE : variant == FWD_UNFUSED) && lnl_plan(op))
		goto out_free;
	if (bwd && variant != BWD_NAIVE) {
		op->lnb = layernorm_bwd_blocks(dt, op->M, op->K, variant == BWD_FUSED);
		if (op->lnb < 0 || op->lnb > LNL_PARTIALS) {
			error("ln_linear_bwd: the LayerNorm backward wants %ld blocks "
			      "(at most %d)", op->lnb, LNL_PARTIALS);
			goto out_free;
		}
	}
	{
		int dev = 0;

		if (CUDA_CHECK(cudaGetDevice(&dev)) ||
		    CUDA_CHECK(cudaDeviceGetAttribute(&op->sms,
				cudaDevAttrMultiProcessorCount, dev)))
			goto out_free;
	}
	if (!bwd && lnl_fwd_choose(op, 0))
		goto out_free;
	// W''s rows in whole 128-byte lines where the kernel takes them, but
	// for the decode kernel's (its 512-byte warp loads took 1.00-1.06x
	// their time in rows of whole lines, fp32 at 1 and 8 rows, K = 1000
	// to 8200: bench/RESULTS.md, "W' and x~ in rows of whole 128-byte
	// lines")
	op->ldw = !bwd && lnl_fwd_takes_ldw(op->fk) && op->fk != FK_GEMV ? lnl_row_ld(op->K, dt)
									 : op->K;

	// Profile-0 inputs for timing, drawn on the device (see lnl_gen_inputs
	// for the distributions).
	for (int i = 0; i < nsets; i++) {
		uint64_t sd = seed + 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);

		if (dev_fill_normal(op->x + (size_t)i * z.xset, dt,
				    (size_t)(op->M * op->K), sd, 0.f, 1.f, 0) ||
		    (bwd && dev_fill_normal(op->dy + (size_t)i * z.dyset, dt,
					    (size_t)(op->M * op->N), sd ^ 0xd1b5u,
					    0.f, 1.f, 0)))
			goto out_free;
	}
	if (dev_fill_normal(op->gamma, dt, (size_t)op->K, seed ^ 1, 1.f, 0.1f, 0) ||
	    dev_fill_normal(op->beta, dt, (size_t)op->K, seed ^ 2, 0.f, 0.1f, 0) ||
	    dev_fill_normal(op->W, dt, (size_t)(op->N * op->K), seed ^ 3, 0.f,
			    (float)(1 / sqrt((double)op->K)), 0) ||
	    (op->b && dev_fill_normal(op->b, dt, (size_t)op->N, seed ^ 4, 0.f, 0.1f, 0)))
		goto out_free;
	// The weight fold: once per weight, not in the timed launch.
	if (!bwd && variant == FWD_FUSED && fold_launch(op, 0))
		goto out_free;
	if (CUDA_CHECK(cudaDeviceSynchronize()))
		goto out_free;
	*out = (struct fp_op *)op;
	return 0;

out_free:
	lnl_destroy((struct fp_op *)op);
	return -1;
}

static int fwd_create(struct fp_op **op, const struct fp_shape *s,
		      enum fp_dtype dt, int variant, int nsets,
		      unsigned long long seed, const struct fp_kopts *ko)
{
	return lnl_create(0, op, s, dt, variant, nsets, seed, ko);
}

// The backward declares no kernel options: ko is copied and unused.
static int bwd_create(struct fp_op **op, const struct fp_shape *s,
		      enum fp_dtype dt, int variant, int nsets,
		      unsigned long long seed, const struct fp_kopts *ko)
{
	return lnl_create(1, op, s, dt, variant, nsets, seed, ko);
}

// ---------------------------------------------------------------------------
// The check
//
// check.cu compares the outputs with the double references; here the
// inputs are drawn and the op run (lnl_check).

// x (M x K) of profile p (see enum lnl_profile).
template <typename T>
__global__ void k_draw_x(T *__restrict__ x, long M, int K, int p, uint64_t seed)
{
	const long n = M * K;

	for (long e = blockIdx.x * (long)blockDim.x + threadIdx.x; e < n;
	     e += (long)gridDim.x * blockDim.x) {
		float z = draw_normal(seed, (uint64_t)e);

		x[e] = from_f<T>(p == LNL_OFFSET ? (float)LNL_OFFSET_MEAN + z
				 : p == LNL_CONSTANT
				 ? draw_normal(seed ^ 0x5851f42d4c957f2dull, (uint64_t)(e / K)) + 1e-3f * z
				 : z);
	}
}

// Fresh inputs of profile p into set 0 and the weights.
static int draw_inputs(struct lnl_op *op, int p, uint64_t seed)
{
	const enum fp_dtype dt = op->dt;
	const size_t MK = (size_t)(op->M * op->K), NK = (size_t)(op->N * op->K);
	const long nb = (long)((MK + 255) / 256) < 65536 ? (long)((MK + 255) / 256) : 65536;

	if (dt == FP_BF16)
		k_draw_x<__nv_bfloat16><<<(unsigned)nb, 256>>>((__nv_bfloat16 *)op->x,
			op->M, (int)op->K, p, seed);
	else
		k_draw_x<float><<<(unsigned)nb, 256>>>((float *)op->x, op->M,
			(int)op->K, p, seed);
	if (CUDA_CHECK_LAUNCH("k_draw_x") ||
	    dev_fill_normal(op->gamma, dt, (size_t)op->K, seed ^ 0x243f6a8885a308d3ull,
			    1.f, 0.1f, 0) ||
	    dev_fill_normal(op->beta, dt, (size_t)op->K, seed ^ 0x13198a2e03707344ull,
			    0.f, 0.1f, 0) ||
	    dev_fill_normal(op->W, dt, NK, seed ^ 0xa4093822299f31d0ull, 0.f,
			    (float)(1 / sqrt((double)op->K)), 0) ||
	    (op->b && dev_fill_normal(op->b, dt, (size_t)op->N,
				      seed ^ 0x082efa98ec4e6c89ull, 0.f, 0.1f, 0)) ||
	    (op->dy && dev_fill_normal(op->dy, dt, (size_t)(op->M * op->N),
				       seed ^ 0x452821e638d01377ull, 0.f, 1.f, 0)))
		return -1;
	return 0;
}

// Split-K adds its slices in a fixed order: a second run, from poisoned
// partials and output, gives the first run's bits, or the check fails
// (the mma.sync, warp-specialized and decode kernels' partials, the
// skinny kernels' DSMEM sums).
static int same_bits_again(struct lnl_op *op)
{
	const size_t bytes = (size_t)(op->M * op->N) * fp_dtype_size(op->dt);
	unsigned char *a = (unsigned char *)xmalloc(bytes), *b = (unsigned char *)xmalloc(bytes);
	int rc = -1;

	if (CUDA_CHECK(cudaMemcpy(a, op->y, bytes, cudaMemcpyDeviceToHost)) ||
	    dev_poison(op->y, bytes) ||
	    dev_poison(op->fpart, lnl_split_bytes(op->M, op->K, op->N, op->dt)) ||
	    lnl_launch((struct fp_op *)op, 0, 0) || CUDA_CHECK(cudaDeviceSynchronize()) ||
	    CUDA_CHECK(cudaMemcpy(b, op->y, bytes, cudaMemcpyDeviceToHost)))
		goto out;
	if (memcmp(a, b, bytes) != 0) {
		error("ln_linear_fwd: the split-K forward gave other bits on a second run");
		goto out;
	}
	rc = 0;
out:
	free(a);
	free(b);
	return rc;
}

// Outputs and intermediates poisoned, then one run of set 0, finished.
static int poison_run(struct lnl_op *op)
{
	const long M = op->M, K = op->K, N = op->N;
	const size_t es = fp_dtype_size(op->dt);
	// the fused forward's h is x~ (lnl_sizes)
	const size_t hbytes = !op->bwd && op->variant == FWD_FUSED ? lnl_xt_bytes(M, K)
								  : (size_t)(M * K) * es;

	if ((op->y && dev_poison(op->y, (size_t)(M * N) * es)) ||
	    (op->h && dev_poison(op->h, hbytes)) ||
	    (op->dx && dev_poison(op->dx, (size_t)(M * K) * es)) ||
	    (op->dW && dev_poison(op->dW, (size_t)(N * K) * es)) ||
	    (op->dg && dev_poison(op->dg, (size_t)K * es)) ||
	    (op->dbeta && dev_poison(op->dbeta, (size_t)K * es)) ||
	    (op->db && dev_poison(op->db, (size_t)N * es)) ||
	    (op->stats && dev_poison(op->stats, (size_t)(3 * M) * 4)) ||
	    (op->dh && dev_poison(op->dh, (size_t)(M * K) * es)) ||
	    lnl_launch((struct fp_op *)op, 0, 0) || CUDA_CHECK(cudaDeviceSynchronize()))
		return -1;
	// the kernels that add slices of K (or may): once more, the same bits
	switch (op->bwd ? FK_UNFUSED : op->fk) {
	case FK_MMA_SPLIT:
	case FK_SKINNY:
	case FK_SKINNY_RES:
	case FK_SKINNY_ST:
	case FK_SKINNY_XA:
	case FK_SKINNY_XT:
		return same_bits_again(op);
	case FK_WS:
		return op->splits > 1 ? same_bits_again(op) : 0;
	case FK_GEMV:
		return op->gv.splits > 1 ? same_bits_again(op) : 0;
	default:
		return 0;
	}
}

// Fresh inputs of the profile drawn from seed into set 0 and the weights
// (on the device), the outputs and intermediates poisoned, one run, outputs
// compared with the double reference on the downloaded inputs, or with the
// one another variant of the case computed on the same profile and seed
// (check.cu says what is compared and downloaded).
static int lnl_check(struct fp_op *fop, int profile, unsigned long long seed,
		     struct fp_check *r)
{
	struct lnl_op *op = (struct lnl_op *)fop;
	const long N = op->N;
	const size_t es = fp_dtype_size(op->dt);

	if (profile < 0 || profile >= LNL_NPROFILES)
		return error("ln_linear: no input profile %d", profile);
	if (draw_inputs(op, profile, seed))
		return -1;
	if (op->Wf && (dev_poison(op->Wf, (size_t)(op->Np * op->ldw) * es) ||
		       dev_poison(op->sW, (size_t)N * 4) ||
		       dev_poison(op->bf, (size_t)N * 4) || fold_launch(op, 0)))
		return -1;
	if (poison_run(op))
		return -1;
	check_begin(r, seed, op->dt == FP_BF16 ? LNL_TOL_BF16 : LNL_TOL_FP32);
	return lnl_check_outputs(op, profile, seed, r);
}

static const struct fp_param lnl_params[] = {
	{ "M", 16384, 1, LNL_MAX_M, "rows" },
	{ "K", FP_REQUIRED, 1, LNL_MAX_KN, "input features (LayerNorm width)" },
	{ "N", FP_REQUIRED, 1, LNL_MAX_KN, "output features" },
	{ NULL, 0, 0, 0, NULL },
};

// Index i is enum lnl_profile i.
static const char *const lnl_profiles[] = { "normal", "offset", "constant", NULL };

// The tests' shapes: the issue's four, and two that send the bf16 fused
// forward's tensor-core kernel through its two tile sizes with every tail
// (K past the last 64-column step, partial row and column tiles, N not a
// multiple of 8 for the element-wise epilogue); three that take the
// split-K path (one row and 16 slices, with decode=off, which
// tests/test-workloads also runs; 37 rows, K = 1000 cut into slices
// whose last is short and ends in a partial k-tile; 70 rows over two row
// tiles, N past a column tile); and the decode forward's (plans on 132
// SMs, the same for both dtypes): 1 x 2048 -> 200 (28 row blocks of 8
// rows, 8 slices of K), one row in 1064 row blocks with no slices, K's
// last chunk two lanes' loads (1 x 520 -> 8500), 5 rows padded to 8 with
// N past the last row block and K's last chunk short, in 4 slices (5 x
// 1000 -> 300), 2 rows in 11 slices of 3 chunks (2 x 4096 -> 130), and 8
// rows in 1080 row blocks, 8 warps taking 33 chunks, the last short (8 x
// 4104 -> 4300). K under one k-tile with enough tiles (4000 x 40 -> 520)
// is where the bf16 forward on Hopper still takes k_fwd_fused_wgmma
// (WS_MIN_K); 4000 x 200 -> 520 takes the warp-specialized kernel through
// a partial last k-tile. 40 x 1000 -> 2100 and 20 x 300 -> 5000 take the
// x-as-A skinny kernel in 32- and 48-row tiles (lnl_skinny_xa_narrow), K
// and N past whole tiles, M past whole 16-row fragments; 50 x 4104 -> 999
// and 33 x 3000 -> 520 take it over slices of K in a cluster
// (lnl_skinny_xa_plan: 8 slices on an H100), K's last k-tile partial
// (the x~ kernel leaves them: too few tiles, lnl_skinny_xt_auto). 45 x
// 3000 -> 4000 takes the x~ kernel in 32-row tiles, K's last k-tile
// partial; with the tested xt_split=3, in 96-row tiles, the last partial,
// over 3 slices of 16, 16 and 15 k-tiles (on an H100 or H200). Where the
// 128 x 256 tiles are few from 65 rows (lnl_few_tiles_ws's model): 300 x
// 1000 -> 1000, 130 x 3000 -> 2052 and 70 x 2048 -> 130 take the x~ kernel
// over 64-row tiles of x~ (x~'s rows padded to whole tiles, M past a tile,
// K's last k-tile partial, 2052 not a multiple of 8; 130 rows: one tile of
// W'), and with the tested few_tiles=ws the warp-specialized kernel over
// x~ (200 x 264 -> 100 in 128 x 64 tiles: N not a multiple of 8, the
// scalar epilogue); 256 x 1000 -> 4100 takes that kernel in 128 x 64
// tiles (K's last k-tile partial, M past a row tile), 333 x 1000 -> 3000
// in 128 x 128 tiles (M and N past whole tiles), with the tested
// ws_tile=64 in 128 x 64, with ws_split=2 over slices of K in a cluster,
// with ws_split=2 and ws_reduce=kernel by the reduction kernel (taking
// the x~ pass's statistics) and with ws_a=x over x; 100 x 4104 -> 1000
// over 3 slices of K in a cluster (22, 22 and 21 k-tiles, the last
// partial; N past a 64-column tile), 200 x 6000 -> 2100 over 2 (N not a
// multiple of 8: the scalar epilogue of each rank's rows; M past a row
// tile), and with ws_reduce=kernel both by the reduction kernel; 512 x
// 4096 -> 16384 takes it over x~ in pairs with ws_a=xt. 1100 x 1000 -> 200 has too few tiles and too many
// rows for x~: the kernel over x in 128 x 128 tiles, with ws_split=2 over
// slices of K (N past its last 128-column tile).
#define LNL_TESTS "M=1,K=1,N=1;M=3,K=1023,N=17;M=200,K=264,N=100;M=1,K=2048,N=200;" \
	"M=37,K=1000,N=300;M=70,K=2048,N=130;M=1,K=520,N=8500;M=5,K=1000,N=300;" \
	"M=2,K=4096,N=130;M=8,K=4104,N=4300;M=13,K=1032,N=700;M=29,K=528,N=1100;" \
	"M=4000,K=40,N=520;M=4000,K=200,N=520;M=16384,K=768,N=256;M=512,K=4096,N=16384;" \
	"M=40,K=1000,N=2100;M=20,K=300,N=5000;M=50,K=4104,N=999;M=33,K=3000,N=520;" \
	"M=20,K=6152,N=700;M=2,K=1544,N=4100;M=9,K=8200,N=40;M=45,K=3000,N=4000;" \
	"M=300,K=1000,N=1000;M=130,K=3000,N=2052;M=256,K=1000,N=4100;M=333,K=1000,N=3000;" \
	"M=1100,K=1000,N=200;M=100,K=4104,N=1000;M=200,K=6000,N=2100"
// The naive variants run the suite's smallest shape only (still paired
// with the fused variant there): their place on the roofline shows at any
// size, and at K = 4096, N = 16384 one naive forward repetition takes ~22 s.
#define LNL_SUITE_SMALL "M=16384,K=768,N=256"
#define LNL_SUITE LNL_SUITE_SMALL ";M=16384,K=4096,N=256;M=16384,K=4096,N=16384"
#define LNL_QUICK "M=2048,K=768,N=256;M=1024,K=1024,N=1024"

static const struct fp_variant fwd_variants[] = {
	{ "naive", FP_NAIVE,
	  "1 kernel, one thread per row: statistics and all N outputs of the row, no tiling",
	  LNL_SUITE_SMALL },
	{ "unfused", FP_UNFUSED,
	  "2 kernels: LayerNorm writes h = LN(x) (dtype), cuBLASLt h W^T with the bias in its epilogue",
	  NULL, "fused" },
	{ "fused", FP_FUSED,
	  "1 kernel: tiled GEMM on x - c against W' = W o gamma (folded in create; bf16 on "
	  "wgmma or mma.sync, fp32 as 3xTF32 on mma.sync), row statistics from the same tiles "
	  "(bf16 from N, K >= 2048: from a statistics pass first, 2 kernels), "
	  "y = rstd (acc - (mean - c) s) + b' in the epilogue" },
	{ NULL, FP_UNFUSED, NULL },
};

extern "C" const struct workload wl_ln_linear_fwd = {
	.name = "ln_linear_fwd",
	.summary = "y = LayerNorm(x; gamma, beta) W^T + b, x: M x K, W: N x K",
	.params = lnl_params,
	.dtypes = FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16),
	.variants = fwd_variants,
	.profiles = lnl_profiles,
	.suite = LNL_SUITE,
	.quick = LNL_QUICK,
	.tests = LNL_TESTS,
	.kopts = fwd_kopts,
	.backward = "ln_linear_bwd",
	.validate = lnl_validate,
	.device_bytes = fwd_device_bytes,
	.model = fwd_model,
	.create = fwd_create,
	.kernel = lnl_kernel,
	.launch = lnl_launch,
	.check = lnl_check,
	.destroy = lnl_destroy,
};

static const struct fp_kopt bwd_kopts[] = {
	{ "lt_algo", lt_algo_values,
	  "the unfused and fused variants' cuBLASLt GEMMs (dW, dh): the algorithm cuBLASLt's "
	  "heuristic puts first, or the fastest of those it offers (up to 16), each timed "
	  "when the op is made on drawn operands",
	  "fastest" },
	{ NULL, NULL, NULL },
};

static const struct fp_variant bwd_variants[] = {
	{ "naive", FP_NAIVE,
	  "1 kernel + 4 conversions, one thread per row: dx, and dgamma, dbeta, dW, db by fp32 atomics",
	  LNL_SUITE_SMALL },
	{ "unfused", FP_UNFUSED,
	  "7 kernels: LayerNorm recompute h (with row statistics), cuBLASLt dW = dy^T h and "
	  "dh = dy W, LayerNorm backward (dx and dgamma/dbeta partials, reduced in order), "
	  "db by column sums of dy (deterministic)", NULL, "fused" },
	{ "fused", FP_FUSED,
	  "6 kernels: dh = dy W, then one pass over x and dh recomputes the statistics, writes h "
	  "and does the LayerNorm backward (x read once), dW = dy^T h, db column sums" },
	{ NULL, FP_UNFUSED, NULL },
};

extern "C" const struct workload wl_ln_linear_bwd = {
	.name = "ln_linear_bwd",
	.summary = "dx, dgamma, dbeta, dW, db of y = LayerNorm(x) W^T + b, given dy "
		   "(mean and rstd recomputed)",
	.params = lnl_params,
	.dtypes = FP_DTYPE_BIT(FP_F32) | FP_DTYPE_BIT(FP_BF16),
	.variants = bwd_variants,
	.profiles = lnl_profiles,
	.suite = LNL_SUITE,
	.quick = LNL_QUICK,
	.tests = LNL_TESTS,
	.kopts = bwd_kopts,
	.validate = lnl_validate,
	.device_bytes = bwd_device_bytes,
	.model = bwd_model,
	.create = bwd_create,
	.kernel = lnl_kernel,
	.launch = lnl_launch,
	.check = lnl_check,
	.destroy = lnl_destroy,
};
