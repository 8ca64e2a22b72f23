// choose.cu - the LayerNorm+Linear fused forward's kernel choice
// (lnl_fwd_choose): from the variant, the rows' alignment, the tile count
// against the SMs, the device and the kernel options, which kernel a
// forward instance launches and in what tiles and slices; the option values
// it reads as numbers. Host code: the workload (workload.cu) and the
// library (kernels/api) call it; the rules' arithmetic is in split.c.
#include "config.h"

#include <stdlib.h>

#include <cuda_runtime.h>

#include "internal.h"

// Option xa_tile's values (fwd_kopts in workload.cu): rows of W' a block,
// as numbers but auto.
const char *const lnl_xa_tile_values[] = { "auto", "16", "32", "48", "64", "72", "96",
					      NULL };
// Option xa_split's: slices of K of the x-as-A kernel, as numbers but auto.
const char *const lnl_xa_split_values[] = { "auto", "1", "2", "3", "4", "5", "6", "7", "8",
					       NULL };
// Option xt_stage's: k-tiles a ring stage of the x~ kernel, as numbers but
// auto.
const char *const lnl_xt_stage_values[] = { "auto", "1", "2", "4", NULL };
// Option xt_tile's: rows of W' a block of the x~ kernel, as numbers but auto.
const char *const lnl_xt_tile_values[] = { "auto", "32", "40", "48", "56", "64", "72", "80",
					      "88", "96", NULL };

// The slices of K option opt (xa_split, st_split, res_split) asks for, 0
// for auto.
static int slices_asked(const struct lnl_op *op, int opt)
{
	const int v = op->ko.v[opt];

	return v == XAS_AUTO ? 0 : atoi(lnl_xa_split_values[v]);
}

// op->splits: the x-as-A kernel's slices of K for op in tiles of op->xbn
// rows of Nw: xa_split's, or auto's (lnl_skinny_xa_plan for that tile; 1
// where no slicing of it runs in one wave), at most a k-tile a slice, as
// the launch cuts them (none empty).
static void xa_slices(struct lnl_op *op, long Nw, const int *caps)
{
	const int kt = lnl_ktiles(op->K, op->dt);
	int s = slices_asked(op, OPT_XA_SPLIT), bn;

	if (!s && !lnl_skinny_xa_plan(op->M, op->K, Nw, op->dt, caps, op->xbn, &bn, &s))
		s = 1;
	op->splits = lnl_even_slices(kt, s);
}

// The x-streamed kernel's clusters that fit at once at 32 rows of x, in
// its two-an-SM ring (*caps) and its deep ring (*dcaps). 0, or -1.
static int st_caps(const int **caps, const int **dcaps)
{
	return fwd_skinny_stream_caps(FWD_CAPS_ST(32), caps) ||
			       fwd_skinny_stream_caps(FWD_CAPS_ST_DEEP, dcaps)
		       ? -1 : 0;
}

// op->splits, st_deep: the x-streamed kernel's (W' as A) slices of K for
// op and Nw rows of W' (st_split's, or auto's: lnl_skinny_st_plan at 17 to
// 32 rows, else 1; at most a k-tile a slice, as the launch cuts them, none
// empty) and its ring (the deep one where the plan or st_ring=16 says and
// there are slices, 17 to 32 rows). 0, or -1 (reported).
static int st_slices(struct lnl_op *op, long Nw)
{
	const int kt = lnl_ktiles(op->K, op->dt), mp = lnl_skinny_res_mp(op->M);
	const int asked = slices_asked(op, OPT_ST_SPLIT), ring = op->ko.v[OPT_ST_RING];
	const int *caps, *dcaps;
	int s = 1, deep = 0;

	if (asked) {
		s = asked;
		deep = ring == STR_16;
	} else if (mp <= 32) {
		if (st_caps(&caps, &dcaps))
			return -1;
		if (!lnl_skinny_st_plan(op->M, op->K, Nw, op->dt, caps, dcaps, op->sms, ring, &s,
					&deep))
			s = 1, deep = 0;
	}
	op->splits = lnl_even_slices(kt, s);
	op->st_deep = mp <= 32 && deep && op->splits > 1;
	return 0;
}

// skinny_x=auto at 17 to 32 rows: the x-streamed kernel over
// lnl_skinny_st_plan's slices of K (or st_split's) from
// LNL_SKINNY_ST_SPLIT_MIN_KT k-tiles of K, and where the x-resident kernel
// does not serve. 1 where it takes op (op->fk, xbn, splits set), 0 where
// not, -1 (reported).
static int st_auto(struct lnl_op *op, long Nw)
{
	const int kt = lnl_ktiles(op->K, op->dt), mp = lnl_skinny_res_mp(op->M);
	const int *caps, *dcaps;
	int s, d, rs, rg;

	if (mp > 32)
		return 0;
	if (st_caps(&caps, &dcaps))
		return -1;
	if (!lnl_skinny_st_plan(op->M, op->K, Nw, op->dt, caps, dcaps, op->sms,
				op->ko.v[OPT_ST_RING], &s, &d) ||
	    (kt < LNL_SKINNY_ST_SPLIT_MIN_KT &&
	     fwd_skinny_res_plan(op->M, op->K, Nw, op->dt, 0, &rs, &rg)))
		return 0;
	op->fk = FK_SKINNY_ST;
	op->xbn = LNL_SKINNY_ST_BW;
	return st_slices(op, Nw) ? -1 : 1;
}

// A tile's columns under option value opt (ws_tile, mma_tile): as asked,
// or lnl_ws_bn's choice for units of cl blocks over slots at once.
static int tile_bn(int opt, long M, long Np, int cl, long slots)
{
	return opt == WST_256   ? 256
	       : opt == WST_192 ? 192
	       : opt == WST_128 ? 128
	       : opt == WST_64	? 64
				: lnl_ws_bn(M, Np, cl, slots);
}

// The warp-specialized kernel's tile width ws_tile asks for, 0 for auto's
// (64 serves over x~ only: over x it is auto's too).
static int ws_tile_asked(const struct lnl_op *op)
{
	const int t = op->ko.v[OPT_WS_TILE];

	return t == WST_AUTO || (t == WST_64 && !op->ws_xt) ? 0 : tile_bn(t, 0, 0, 0, 0);
}

// The x~ skinny kernel (FK_SKINNY_XT) where its buffers are there (x~ in
// op->h, the statistics) and skinny_x asks for it (stream_xt) or auto
// takes it (lnl_skinny_xt_auto; mid: from 65 rows, where the caller has
// chosen it): its tile and stage as xt_tile and xt_stage say, or
// lnl_skinny_xt_tile's and _stage's. 1 where it takes op, 0 where not.
static int xt_choose(struct lnl_op *op, long Nw, int perm, int mid)
{
	const int ts = op->ko.v[OPT_XT_STAGE], tt = op->ko.v[OPT_XT_TILE];
	const int v = op->ko.v[OPT_SKINNY_X], sv = slices_asked(op, OPT_XT_SPLIT);
	const int s = sv ? sv : 1, mt = (int)((op->M + 63) / 64);
	int kchunk, bn;

	if (!op->h || !op->stats || !lnl_fwd_xt_possible(op->M, op->K, op->dt) ||
	    (!mid && ((v != SKX_STREAM_XT && v != SKX_AUTO) ||
		      (v == SKX_AUTO && !lnl_skinny_xt_auto(op->M, op->K, Nw, op->sms)))))
		return 0;
	// The tile: as asked, or the fewest rows whose tiles times the
	// slices and x~'s 64-row tiles are no more blocks than SMs (else
	// without the slices; else, over 64-row tiles of x~, 96)
	bn = lnl_skinny_xt_tile(Nw, op->sms / (s * mt));
	if (!bn)
		bn = lnl_skinny_xt_tile(Nw, op->sms / mt);
	op->xbn = tt != XTT_AUTO ? atoi(lnl_xt_tile_values[tt]) : bn ? bn : mid ? 96 : 0;
	if (!op->xbn)
		return 0;
	op->xks = ts == XTS_AUTO ? lnl_skinny_xt_stage(op->xbn) : atoi(lnl_xt_stage_values[ts]);
	op->splits = lnl_skinny_xt_slices(op->K, op->xks, s, &kchunk);
	op->wperm = perm;
	op->fk = FK_SKINNY_XT;
	return 1;
}

// The skinny forward from LNL_SKINNY_MAX_M + 1 rows (skinny_x): the
// x-as-A kernel over slices of K wherever auto finds a tile that runs in
// one wave (lnl_skinny_xa_plan, from 33 rows), the x-streamed kernel (W'
// as A) over slices of K at 17 to 32 rows from LNL_SKINNY_ST_SPLIT_MIN_KT
// k-tiles (st_auto), else the x-streamed kernels as lnl_fwd_skinny_x
// says, else the x-resident kernel. 1 where
// one is chosen, 0 where none serves, -1 (reported).
static int skinny_x_choose(struct lnl_op *op, long Nw, int perm)
{
	const int v = op->ko.v[OPT_SKINNY_X], xt = op->ko.v[OPT_XA_TILE];
	const int want = xt == XAT_AUTO ? 0 : atoi(lnl_xa_tile_values[xt]);
	const int rsv = slices_asked(op, OPT_RES_SPLIT);
	const int *caps;
	int pbn = 0, psl = 1;

	if (fwd_skinny_stream_caps(FWD_CAPS_XA, &caps))
		return -1;
	op->wperm = perm;
	if (v == SKX_AUTO && lnl_skinny_xa_plan(op->M, op->K, Nw, op->dt, caps, 0, &pbn, &psl)) {
		op->fk = FK_SKINNY_XA;
		op->xbn = want ? want : pbn;  // a tile asked for: its own slices
		xa_slices(op, Nw, caps);
		return 1;
	}
	if (v == SKX_AUTO) {
		const int r = st_auto(op, Nw);

		if (r)
			return r;
	}
	if (v != SKX_RESIDENT &&
	    (v != SKX_AUTO || lnl_fwd_skinny_x(op->M, op->K, Nw, op->dt, op->sms))) {
		// skinny_x=stream: 64 rows, W' as A; stream_xa: x as A, in tiles
		// of xa_tile rows of W'
		const int bn = v == SKX_STREAM ? LNL_SKINNY_ST_BW
			       : v == SKX_STREAM_XA ? lnl_skinny_xa_rows(Nw, op->sms)
			       : lnl_fwd_skinny_x(op->M, op->K, Nw, op->dt, op->sms);

		op->fk = v == SKX_STREAM || (v == SKX_AUTO && bn == LNL_SKINNY_ST_BW) ? FK_SKINNY_ST
										     : FK_SKINNY_XA;
		op->xbn = op->fk == FK_SKINNY_ST || !want ? bn : want;
		if (op->fk == FK_SKINNY_XA)
			xa_slices(op, Nw, caps);
		else if (st_slices(op, Nw))
			return -1;
		return 1;
	}
	// res_split: that many slices where they fit, else auto's
	if ((rsv && fwd_skinny_res_plan(op->M, op->K, Nw, op->dt, rsv, &op->splits, &op->sgroups)) ||
	    fwd_skinny_res_plan(op->M, op->K, Nw, op->dt, 0, &op->splits, &op->sgroups)) {
		op->fk = FK_SKINNY_RES;
		op->swg = op->ko.v[OPT_SKINNY_MMA] != SKMMA_SYNC;
		return 1;
	}
	op->wperm = 0;
	return 0;
}

// The forward's kernel, chosen once per instance from the variant, the
// rows' alignment, the tile count against the SMs, the device and the
// options; an option that cannot serve falls back as described in its help
// line, and kernel() says what runs:
//   naive, unfused                  their one kernel sequence
//   fused, rows not 16-byte aligned k_fwd_fused (fwd_simt.cu)
//   fused, decode rows (auto: fp32  k_fwd_gemv (fwd_gemv.cu): W' streamed
//   up to LNL_GEMV_MAX_M, bf16 up   on CUDA cores, over slices of K with a
//   to LNL_GEMV_AUTO_BF16; decode=) reduction where its blocks are fewer
//                                   than twice the SMs (plan: lnl_fwd_gemv,
//                                   split.c; rules: lnl_fwd_gemv_auto,
//                                   for bf16 on Hopper also
//                                   lnl_fwd_gemv_bf16_big)
//   fused bf16, up to               k_fwd_skinny (fwd_skinny.cu): W' as the
//   LNL_SKINNY_MAX_M rows on Hopper MMA's A operand, x as its B, slices of
//   where the 128 x 256 tiles fill  K in a cluster reduced through DSMEM,
//   under half the SMs (skinny=)    one wave at most (lnl_fwd_skinny)
//   the same from 17 rows, in W'    k_xt_pass, then k_fwd_skinny_xt
//   tiles of up to 88 rows over     (fwd_skinny_xt.cu): x~ = x - c and the
//   half x's (half from K = 1536    statistics from a pass, then a GEMM of
//   at 0.8 blocks an SM), at 0.7    x~ and W' in stages of 2-4 k-tiles
//   blocks an SM or more (0.45 up   (lnl_skinny_xt_auto), over slices of K
//   to K = 2048, 4096 for up to 40  in a cluster with xt_split
//   rows; up to 32 rows, 0.9;
//   skinny_x=stream_xt, xt_tile=,
//   xt_stage=)
//   the same, LNL_SKINNY_MAX_M + 1  k_fwd_skinny_res (fwd_skinny.cu; on
//   to LNL_SKINNY_RES_MAX_M rows    wgmma k_fwd_skinny_wg, skinny_mma=): x's
//                                   slice of K resident, W' alone in the
//                                   ring (TMA), tiles dealt round to
//                                   clusters (lnl_fwd_skinny_res)
//   the same where W' has about a   k_fwd_skinny_st, k_fwd_skinny_xa
//   64-row tile an SM or more       (fwd_skinny_wg.cu): a block a tile of W'
//   (skinny_x=)                     over all of K, x streamed beside it
//                                   (lnl_fwd_skinny_x)
//   the same from 33 rows where a   k_fwd_skinny_xa over slices of K in a
//   tile of W' runs in one wave     cluster, added through DSMEM (xa_tile=,
//                                   xa_split=; lnl_skinny_xa_plan)
//   the same at 17 to 32 rows from  k_fwd_skinny_st over slices of K in a
//   96 k-tiles (or where x's slice  cluster (st_split=), in a 16-stage ring
//   would not stay resident)        one block an SM, four warpgroups, where
//                                   the 8-stage ring's slices leave no SM
//                                   two blocks (st_ring=;
//                                   lnl_skinny_st_plan)
//   fused bf16 on Hopper from 65    k_xt_pass, then k_fwd_skinny_xt over
//   rows, too few 128 x 256 tiles   64-row tiles of x~ (few_tiles=), or
//                                   where a model has it faster
//                                   (lnl_few_tiles_ws) k_xt_pass, then
//                                   k_fwd_fused_ws (below) over x~ (ws_a=)
//                                   in tiles of least modelled time
//                                   (lnl_ws_plan, ws_tile=; over x past
//                                   LNL_XT_MAX_M rows), over slices of K
//                                   with ws_split= (fp32 partials, the
//                                   split-K reduction)
//   fused, too few 128 x 256 tiles  k_fwd_fused_mma 64 x 128 (fill half the
//                                   SMs, else small M would not spread)
//   fused, fewer 64 x 128 tiles     the same over slices of K (split-K,
//   than SMs (decode rows)          LNL_SPLIT_MAX), a reduction after
//                                   (split_k=); the slices aim at two
//                                   blocks an SM (lnl_fwd_splits, split.c:
//                                   the library sizes its workspace by it)
//   fused fp32, or no sm_90a code   k_fwd_fused_mma 128 x 256 or 128 x 192
//                                   (mma_tile=; 3xTF32 in fp32)
//   fused bf16 on Hopper            k_fwd_fused_wgmma below K = WS_MIN_K,
//                                   k_fwd_fused_ws from there (gemm=),
//                                   128 x 256 or 128 x 192 (ws_tile=)
// For k_fwd_fused_ws also the cluster size (clusters=: pairs sharing each W'
// tile by multicast where W' has more than one tile column, N > 256, and
// K > WS_SOLO_MAX_K; they gained at N = 4096 and 16384, nothing at N =
// 1024 and lost a little at N = 256: bench/RESULTS.md, "fuseprof run times
// a case's variants side by side; the bf16 fused forward in block pairs
// (H100)"; and lost at K <= 512, WS_SOLO_MAX_K), whether the row
// statistics take a pass of their own (stats_pass=, see WS_PASS_N), and
// its tiles' width (ws_tile=, lnl_ws_bn: 192 where 256-wide tiles leave
// the last round of the SMs far from full).
int lnl_fwd_choose(struct lnl_op *op, int ws_every_m)
{
	const int gemm = op->ko.v[OPT_GEMM], clusters = op->ko.v[OPT_CLUSTERS];
	const int pass = op->ko.v[OPT_STATS_PASS];
	const int xa_pass = op->ko.v[OPT_XA_PASS], few = op->ko.v[OPT_FEW_TILES];
	// the 128 x 256 tiles would fill under half the SMs
	const int few_big = lnl_few_big_tiles(op->M, op->N, op->sms);
	int hopper = 0, perm, skinny, skinny_big, ws_few, dsum;
	const int *caps = NULL;  // clusters of the kernel over x~ in slices

	op->ws_cl = 1;
	op->ws_pairs = op->ws_pass = op->ws_xt = op->ws_dsum = 0;
	op->ws_bn = 256;
	op->mma_bn = 256;
	op->splits = 1;
	op->swg = 0;
	op->xbn = 0;
	op->xa_pass = 0;
	op->st_deep = 0;
	op->xks = 0;
	op->wperm = 0;
	if (op->variant != FWD_FUSED) {
		op->fk = op->variant == FWD_NAIVE ? FK_NAIVE : FK_UNFUSED;
		return 0;
	}
	if (fwd_mma_setup() || fwd_wgmma_setup(&hopper))
		return -1;
	if (lnl_vec_width(op->K, op->dt) == 1) {
		op->fk = FK_SIMT;
		return 0;
	}
	// The library's one fold is the warp-specialized kernel's where that
	// kernel may run: the split-K kernel reads it in that order (wperm),
	// the 64 x 128 kernel without slices does not, so there the warp-
	// specialized kernel serves few rows too.
	perm = ws_every_m && lnl_fold_perm(op->K, op->dt, hopper);
	// The skinny kernels (below) serve bf16 up to 64 rows where the big
	// tiles would not fill the SMs, or wherever they can with skinny=on.
	skinny = op->ko.v[OPT_SKINNY] != SKINNY_OFF && hopper && op->dt == FP_BF16 &&
		 op->M <= LNL_SKINNY_RES_MAX_M &&
		 (op->ko.v[OPT_SKINNY] == SKINNY_ON || few_big);
	// bf16 decode rows: the skinny kernel where W' is big and it serves
	// (lnl_fwd_gemv_bf16_big; k_fwd_skinny serves every shape the decode
	// kernel does, so the partials the library sized for decode go unused)
	skinny_big = skinny && op->M <= LNL_SKINNY_MAX_M &&
		     few_big &&
		     lnl_fwd_gemv_bf16_big(op->K, op->N, op->sms);
	if (op->ko.v[OPT_DECODE] != DECODE_OFF &&
	    (op->ko.v[OPT_DECODE] == DECODE_ON ||
	     (lnl_fwd_gemv_auto(op->M, op->dt) && !skinny_big)) &&
	    lnl_fwd_gemv(op->M, op->K, op->N, op->dt, op->sms, &op->gv) &&
	    (op->gv.splits == 1 || op->fpart)) {
		op->fk = FK_GEMV;
		op->wperm = perm;
		return 0;
	}
	// bf16 up to 64 rows where the big tiles would not fill the SMs (or
	// wherever it serves, skinny=on): W' as the MMA's A operand, x as its
	// B, slices of K in a cluster (Hopper's: where the sm_90a code is);
	// from 17 rows with x's slice resident in shared memory, multiplied on
	// wgmma unless skinny_mma=sync (wgmma 2-8 % faster from 17 to 64 rows:
	// bench/RESULTS.md, "the resident skinny kernel on wgmma"), or, where W'
	// has about a 64-row tile an SM or more, x streamed beside W' through
	// a block a tile over all of K, no slices (skinny_x, lnl_fwd_skinny_x).
	if (skinny) {
		const long Nw = perm ? op->Np : op->N;
		long slots;

		if (fwd_skinny_setup())
			return -1;
		if (xt_choose(op, Nw, perm, 0))
			return 0;
		if (op->M <= LNL_SKINNY_MAX_M) {
			if (fwd_skinny_slots(op->M, op->sms, &slots))
				return -1;
			if (lnl_fwd_skinny(op->M, op->K, Nw, op->dt, op->sms, slots, &op->splits)) {
				op->fk = FK_SKINNY;
				op->wperm = perm;
				return 0;
			}
		} else {
			const int r = skinny_x_choose(op, Nw, perm);

			// xa_pass: the x-as-A kernel's statistics from a pass
			// of their own where its buffer is (bf16 from K =
			// WS_PASS_K) and its tile has an instance for it (48
			// rows and more); auto: in tiles of up to
			// LNL_XA_PASS_MAX_BN rows
			op->xa_pass = r > 0 && op->fk == FK_SKINNY_XA && op->stats &&
				      op->xbn >= 48 && xa_pass != PASS_OFF &&
				      (xa_pass == PASS_ON || op->xbn <= LNL_XA_PASS_MAX_BN);
			if (r)
				return r < 0 ? -1 : 0;
		}
	}
	// bf16 on Hopper from 65 rows where the 128 x 256 tiles are few: the
	// x~ kernel over 64-row tiles of x~, or where lnl_few_tiles_ws says
	// (or x~ cannot run) the warp-specialized kernel over x~ (over x
	// without it) in the tiles of lnl_ws_plan; the 64 x 128 mma.sync
	// kernel (few_tiles=mma, gemm=mma) took 1.48-4.09x the unfused
	// variant's time there (bench/RESULTS.md, "Few tiles from 65 rows").
	ws_few = few_big && op->dt == FP_BF16 && hopper &&
		 op->M > LNL_SKINNY_RES_MAX_M && few != FEW_MMA && gemm != GEMM_MMA;
	// slices of K over x~ added in their cluster unless ws_reduce asks
	// for the reduction kernel: the model's clusters held at once
	if (ws_few && op->ko.v[OPT_WS_REDUCE] != WSR_KERNEL && fwd_ws_dsum_caps(&caps))
		return -1;
	if (ws_few && (few == FEW_XT ||
		       (few == FEW_AUTO &&
			!lnl_few_tiles_ws(op->M, op->K, op->Np, op->sms, caps)))) {
		if (fwd_skinny_setup())
			return -1;
		if (xt_choose(op, perm ? op->Np : op->N, perm, 1))
			return 0;
	}
	if (few_big && !ws_few) {
		if (op->fpart && op->ko.v[OPT_SPLIT_K] == SPLIT_AUTO)
			op->splits = lnl_fwd_splits(op->M, op->K, op->N, op->dt, op->sms);
		if (op->splits > 1) {
			const int t = op->ko.v[OPT_SPLIT_TILE];

			op->fk = FK_MMA_SPLIT;
			op->wperm = perm;
			op->mma_bm = t == SPT_32 || (t == SPT_AUTO && lnl_fwd_split_rows32(op->M, op->dt))
					     ? 32 : 64;
			return 0;
		}
		if (!perm) {
			op->fk = FK_MMA_SMALL;
			return 0;
		}
	}
	if (op->dt != FP_BF16 || !hopper || gemm == GEMM_MMA) {
		op->fk = FK_MMA;
		op->mma_bn = tile_bn(op->ko.v[OPT_MMA_TILE], op->M, op->N, 1, op->sms);
		return 0;
	}
	if (gemm == GEMM_WGMMA || (gemm == GEMM_AUTO && op->K < WS_MIN_K)) {
		op->fk = FK_WGMMA;
		return 0;
	}
	op->fk = FK_WS;
	// x~ from its pass as A where its buffers are (65 to LNL_XT_MAX_M
	// rows) and ws_a asks for it, or auto where the tiles are few (there
	// the kernel over x took 1.01-2.0x the time of the one over x~ in its
	// best width at 55 shapes of 65 to 1024 rows on an H200,
	// bench/RESULTS.md, "The warp-specialized kernel over x~"); no
	// statistics pass then
	op->ws_xt = op->h && op->stats && lnl_fwd_xt_possible(op->M, op->K, op->dt) &&
		    (op->ko.v[OPT_WS_A] == WSA_XT || (op->ko.v[OPT_WS_A] == WSA_AUTO && ws_few));
	// over x~, slices of K added in their cluster (no partials needed)
	// unless ws_reduce asks for the reduction kernel
	dsum = op->ws_xt && caps;
	if (ws_few)
		lnl_ws_plan(op->M, op->K, op->Np, op->sms, op->ws_xt, dsum ? caps : NULL,
			    ws_tile_asked(op), slices_asked(op, OPT_WS_SPLIT),
			    op->fpart != NULL || dsum, &op->ws_bn, &op->splits);
	op->ws_dsum = dsum && op->splits > 1;
	op->ws_pass = op->splits == 1 && !op->ws_xt && lnl_fwd_pass_possible(op->K, op->dt) &&
		      (pass == PASS_ON || (pass == PASS_AUTO && op->N >= WS_PASS_N));
	// pairs: not where the tiles are few (one block a tile took 0.51-0.99x
	// the pairs' time at all 30 such shapes timed, bench/RESULTS.md, "Few
	// tiles from 65 rows"), nor where an odd count of row tiles under 8
	// leaves a pair's second block empty at 1/8 of the units or more (at
	// 384 x 3072 -> 9216, three row tiles, pairs took 1.55x one block's
	// time, lnl_ws_pairs_pay)
	op->ws_cl = clusters == CLUSTERS_AUTO
			    ? (op->N > 256 && op->K > WS_SOLO_MAX_K && !ws_few &&
					       lnl_ws_pairs_pay(op->M)
				       ? 2 : 1)
			    : clusters == CLUSTERS_2 && op->splits == 1 ? 2 : 1;
	if (op->ws_cl == 2) {
		if (ws_pairs_resident(op->sms, &op->ws_pairs))
			return -1;
		if (op->ws_pairs < 1)
			op->ws_cl = 1;  // no room for a pair: one block a cluster
	}
	if (!ws_few) {
		const int w = ws_tile_asked(op);

		op->ws_bn = w ? w : lnl_ws_bn(op->M, op->Np, op->ws_cl,
					      op->ws_cl == 2 ? op->ws_pairs : op->sms);
	}
	return 0;
}
