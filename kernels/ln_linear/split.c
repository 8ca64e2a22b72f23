/* split.c - the LayerNorm+Linear fused forward's split-K arithmetic on the
 * host: how many slices of K the launcher takes at a shape and device, and
 * the bytes of partial sums they need. Plain C, so that the workload's
 * choice (choose.cu), the library's workspace (kernels/api/fpk.cu) and
 * a CPU test (tests/test-ln-linear-ref.c) share one rule. */
#include "config.h"

#include <stddef.h>

#include "ln_linear.h"

static long ceil_div(long a, long b)
{
	return (a + b - 1) / b;
}

int lnl_even_slices(int kt, int s)
{
	if (s < 2 || kt < 1)
		return 1;
	if (s > kt)
		s = kt;
	return (int)ceil_div(kt, ceil_div(kt, s));
}

int lnl_split_max(long M, long K, enum fp_dtype dt)
{
	const long es = (long)fp_dtype_size(dt), kt = lnl_ktiles(K, dt);
	long s = LNL_SPLIT_MAX;

	if (kt / LNL_SPLIT_MIN_KT < s)
		s = kt / LNL_SPLIT_MIN_KT;
	if (K * es / (8 * M) < s)
		s = K * es / (8 * M);
	return s < 2 ? 1 : (int)s;
}

size_t lnl_part_bytes(long M, long N, int splits)
{
	return splits < 2 ? 0 : (size_t)splits * (size_t)M * ((size_t)N + 2) * sizeof(float);
}

size_t lnl_split_bytes(long M, long K, long N, enum fp_dtype dt)
{
	const int s = lnl_split_max(M, K, dt), w = lnl_ws_split_max(M, K, N, dt);

	return lnl_part_bytes(M, N, s > w ? s : w);
}

/* Slices of K for `small` tiles of KT k-tiles on `slots` blocks at once
 * (two an SM): the count, up to smax, with the least time as the model
 * has it: waves of blocks (a partial wave costs a whole one) times the
 * k-tiles a block takes; ties go to fewer slices (fewer partials). At 72
 * tiles of 48 k-tiles on 264 slots (bf16, 3072 -> 9216) that is 7 slices
 * in two waves (14 k-tiles deep), where filling one wave with 4 would take
 * two waves of 12: 24. */
static int split_pick(long small, int slots, int KT, int smax)
{
	long best_t = (small + slots - 1) / slots * (long)KT;
	int best = 1;

	for (int sp = 2; sp <= smax; sp++) {
		const int kchunk = (KT + sp - 1) / sp, se = (KT + kchunk - 1) / kchunk;
		const long t = (small * se + slots - 1) / slots * (long)kchunk;

		if (t < best_t) {
			best_t = t;
			best = se;
		}
	}
	return best;
}

int lnl_skinny_xa_narrow(long M, long K, long Nw, enum fp_dtype dt, int sms)
{
	const long t32 = ceil_div(Nw, 32), kt = lnl_ktiles(K, dt);
	const int bn = t32 <= sms ? 32 : ceil_div(Nw, 48) <= sms ? 48 : 0;

	if (M <= LNL_SKINNY_MAX_M || M > LNL_SKINNY_RES_MAX_M || sms < 1 || !bn ||
	    20 * ceil_div(Nw, bn) < 9L * sms)
		return 0;
	if (M <= 32 ? kt <= 8 : kt <= 16 || (kt <= 32 && 10 * t32 >= 9L * sms))
		return bn;
	return 0;
}

int lnl_fwd_skinny_x(long M, long K, long Nw, enum fp_dtype dt, int sms)
{
	const long tiles = ceil_div(Nw, LNL_SKINNY_ST_BW);

	if (M <= LNL_SKINNY_MAX_M || M > LNL_SKINNY_RES_MAX_M || sms < 1)
		return 0;
	if (10 * tiles < 9L * sms)
		return lnl_skinny_xa_narrow(M, K, Nw, dt, sms);
	if (lnl_skinny_res_mp(M) <= 32 || tiles <= sms || 2 * tiles >= 3L * sms)
		return LNL_SKINNY_ST_BW;
	return lnl_skinny_xa_rows(Nw, sms);  /* Nw < 96 sms here: 96 fits */
}

int lnl_skinny_xa_plan(long M, long K, long Nw, enum fp_dtype dt, const int *caps, int bn_only,
		       int *bn, int *slices)
{
	static const int tiles_of[] = { 32, 48, 64, 72, 96 };
	const int kt = lnl_ktiles(K, dt);
	long best = -1, best_blocks = 0;

	if (dt != FP_BF16 || M <= LNL_SKINNY_MAX_M || M > LNL_SKINNY_RES_MAX_M || K < 1 ||
	    Nw < 1 || (!bn_only && M <= LNL_SKINNY_XA_SPLIT_MIN_M))
		return 0;
	for (size_t i = 0; i < sizeof tiles_of / sizeof tiles_of[0]; i++) {
		const int b = bn_only ? bn_only : tiles_of[i];
		const long tiles = ceil_div(Nw, b);

		for (int s = 1; s <= LNL_SKINNY_MAX_SPLITS && s <= kt; s++) {
			long cost;

			if (lnl_even_slices(kt, s) != s || tiles > caps[s])
				continue;  /* not s slices, or not one wave */
			cost = ceil_div(kt, s) + (s > 1 ? LNL_SKINNY_XA_SPLIT_COST : 0);
			/* ties: more blocks, then wider tiles (later in tiles_of) */
			if (best < 0 || cost < best || (cost == best && tiles * s >= best_blocks)) {
				best = cost;
				best_blocks = tiles * s;
				*bn = b;
				*slices = s;
			}
		}
		if (bn_only)
			break;
	}
	return best >= 0;
}

int lnl_skinny_st_plan(long M, long K, long Nw, enum fp_dtype dt, const int *caps,
		       const int *dcaps, int sms, int ring, int *slices, int *deep)
{
	const int kt = lnl_ktiles(K, dt);
	const long tiles = ceil_div(Nw, LNL_SKINNY_ST_BW);
	long best = -1, best_blocks = 0, dbest = -1;

	if (dt != FP_BF16 || M <= LNL_SKINNY_MAX_M || lnl_skinny_res_mp(M) > 32 || K < 1 ||
	    Nw < 1 || sms < 1 || lnl_vec_width(K, dt) == 1)
		return 0;
	/* the two-an-SM ring */
	for (int s = 1; s <= LNL_SKINNY_MAX_SPLITS && s <= kt; s++) {
		const long blocks = tiles * s;
		long cost;

		if (lnl_even_slices(kt, s) != s || tiles > caps[s])
			continue;  /* not s slices, or not one wave */
		cost = ceil_div(kt, s) * (blocks > sms ? LNL_SKINNY_ST_PAIR_COST : 10);
		if (best < 0 || cost < best || (cost == best && blocks > best_blocks)) {
			best = cost;
			best_blocks = blocks;
			*slices = s;
		}
	}
	*deep = 0;
	/* the deep ring where that puts one block an SM (or asked for): its
	 * fewest k-tiles a block in one wave of one block an SM */
	if (!dcaps || ring == 1 || (ring != 2 && (best < 0 || best_blocks > sms)))
		return best >= 0;
	for (int s = 2; s <= LNL_SKINNY_MAX_SPLITS && s <= kt; s++) {
		if (lnl_even_slices(kt, s) != s || tiles > dcaps[s])
			continue;
		if (dbest < 0 || ceil_div(kt, s) <= dbest) {  /* ties: more blocks */
			dbest = ceil_div(kt, s);
			*slices = s;
			*deep = 1;
		}
	}
	return best >= 0 || dbest >= 0;
}

int lnl_skinny_xt_tile(long Nw, int sms)
{
	for (int bn = 32; bn <= 96; bn += 8)
		if (ceil_div(Nw, bn) <= sms)
			return bn;
	return 0;
}

int lnl_skinny_xt_stage(int bn)
{
	return bn <= LNL_SKINNY_XT_KS4_MAX_BN ? 4 : 2;
}

int lnl_skinny_xt_slices(long K, int ks, int s, int *kchunk)
{
	const long kt = lnl_ktiles(K, FP_BF16);
	const long kc = ceil_div(ceil_div(kt, s < 1 ? 1 : s), ks) * ks;

	*kchunk = (int)kc;
	return (int)ceil_div(kt, kc);
}

int lnl_skinny_xt_auto(long M, long K, long Nw, int sms)
{
	const int bn = lnl_skinny_xt_tile(Nw, sms);
	const long mp = (M + 7) / 8 * 8;
	const long blocks = bn ? ceil_div(Nw, bn) : 0;

	if (M <= LNL_SKINNY_MAX_M || M > LNL_SKINNY_RES_MAX_M || !bn ||
	    bn > LNL_SKINNY_XT_AUTO_MAX_BN || mp > 2 * bn ||
	    (mp == 2 * bn && (K < LNL_SKINNY_XT_TWICE_MIN_K || 10 * blocks < 8 * (long)sms)) ||
	    (M <= LNL_SKINNY_XT_FEW_M && 10 * blocks < 9 * (long)sms) ||
	    (10 * blocks < 7 * (long)sms &&
	     (20 * blocks < 9 * (long)sms ||
	      K > (mp <= LNL_SKINNY_XT_NARROW_MP ? 2 : 1) * LNL_SKINNY_XT_SHORT_K)))
		return 0;
	return bn;
}

int lnl_skinny_xa_rows(long Nw, int sms)
{
	return ceil_div(Nw, 72) <= sms ? 72 : 96;
}

long lnl_ws_units(long M, long Np, int cl, int bn)
{
	return ceil_div(ceil_div(M, 128), cl) * ceil_div(Np, bn);
}

int lnl_ws_bn(long M, long Np, int cl, long slots)
{
	long r256, r192;

	if (slots < 1 || M < 1 || Np < 1)
		return 256;
	r256 = ceil_div(lnl_ws_units(M, Np, cl, 256), slots);
	r192 = ceil_div(lnl_ws_units(M, Np, cl, 192), slots);
	return 100 * 192 * r192 < 85 * 256 * r256 ? 192 : 256;
}

int lnl_few_big_tiles(long M, long N, int sms)
{
	return 2 * (((M + 127) / 128) * ((N + 255) / 256)) < sms;
}

/* The warp-specialized kernel's most slices of kt k-tiles: LNL_SPLIT_MIN_KT
 * k-tiles a slice or more, LNL_WS_SPLIT_MAX at most (1: none). */
static int ws_slices_max(int kt)
{
	const int s = kt / LNL_SPLIT_MIN_KT;

	return s < 2 ? 1 : s > LNL_WS_SPLIT_MAX ? LNL_WS_SPLIT_MAX : s;
}

/* Over x~, auto's most slices in a cluster of kt k-tiles. */
static int ws_dsum_max(int kt)
{
	const int s = ws_slices_max(kt);

	return s < LNL_WS_DSUM_AUTO ? s : LNL_WS_DSUM_AUTO;
}

int lnl_ws_split_max(long M, long K, long N, enum fp_dtype dt)
{
	if (dt != FP_BF16 || M <= LNL_SKINNY_RES_MAX_M || K < 1 ||
	    !lnl_few_big_tiles(M, N, LNL_HOPPER_SMS))
		return 1;
	return ws_slices_max(lnl_ktiles(K, dt));
}

/* The warp-specialized kernel's modelled time over x at M x Np in 128 x w
 * tiles: rounds of one block an SM, a k-tile costing w + LNL_WS_KT_COLS. */
static long ws_cost(long M, long kt, long Np, int sms, int w)
{
	return ceil_div(ceil_div(M, 128) * ceil_div(Np, w), sms) * kt * (w + LNL_WS_KT_COLS);
}

double lnl_few_ws_ns(long M, long K, long Np, int sms, const int *caps, int w, int s)
{
	const long kt = lnl_ktiles(K, FP_BF16), tiles = ceil_div(M, 128) * ceil_div(Np, w);
	// (clusters held at once: as caps says, else as many as fit the SMs)
	const long held = s == 1 ? sms : caps ? caps[s] : sms / s;
	const long at_once = (tiles < held ? tiles : held) * s;
	double kt_ns = LNL_FEW_WS_KT_NS * (w + LNL_WS_XT_KT_COLS), round_ns;

	if (held < 1 || kt < 1)
		return -1;
	if (LNL_FEW_L2_NS * at_once * (128 + w) > kt_ns)
		kt_ns = LNL_FEW_L2_NS * at_once * (128 + w);
	round_ns = ceil_div(kt, s) * kt_ns + LNL_FEW_ROUND_NS;
	if (s > 1)
		round_ns += LNL_FEW_DSUM_NS + LNL_FEW_DSUM_COL_NS * w;
	return ceil_div(tiles, held) * round_ns;
}

double lnl_few_xt_ns(long M, long K, long Np, int sms)
{
	const long kt = lnl_ktiles(K, FP_BF16), mt = ceil_div(M, 64);
	int xbn;

	if (sms < 1 || kt < 1)
		return -1;
	xbn = lnl_skinny_xt_tile(Np, (int)(sms / mt));
	if (!xbn)
		xbn = 96;
	return ceil_div(mt * ceil_div(Np, xbn), sms) *
	       ((kt + LNL_FEW_XT_FILL) * LNL_FEW_XT_KT_NS * (xbn + LNL_FEW_XT_KT_ROWS) +
		LNL_FEW_XT_ROUND_NS);
}

/* Over x~: the width and slices of least lnl_few_ws_ns (want_bn, want_s
 * fix either; slices up to smax); its time. */
static double ws_xt_best(long M, long K, long Np, int sms, const int *caps, int want_bn,
			 int want_s, int smax, int *bn, int *splits)
{
	static const int widths[] = { 256, 192, 128, 64 };
	const int kt = lnl_ktiles(K, FP_BF16), lo = want_s ? want_s : 1, hi = want_s ? want_s : smax;
	double best = -1;

	for (int i = 0; i < 4; i++) {
		if (want_bn && widths[i] != want_bn)
			continue;
		for (int s = lo; s <= hi; s++) {
			const int se = lnl_even_slices(kt, s);
			const double t = lnl_few_ws_ns(M, K, Np, sms, caps, widths[i], se);

			if (t >= 0 && (best < 0 || t < best)) {
				best = t;
				*bn = widths[i];
				*splits = se;
			}
		}
	}
	return best;
}

void lnl_ws_plan(long M, long K, long Np, int sms, int xt, const int *caps, int want_bn,
		 int want_splits, int parts, int *bn, int *splits)
{
	static const int widths[] = { 256, 192, 128 };
	const int kt = lnl_ktiles(K, FP_BF16), smax = ws_slices_max(kt);
	int s = want_splits;
	long best = -1;

	if (!parts || s < 1)
		s = 1;
	else if (s > smax)  // as many as may be
		s = smax;
	*splits = lnl_even_slices(kt, s);
	*bn = want_bn ? want_bn : 256;
	if (sms < 1 || M < 1 || Np < 1 || kt < 1)
		return;
	if (xt) {
		// slices: as asked, else the model's where they may be added
		// in a cluster (caps), none past LNL_WS_DSUM_AUTO
		const int sa = want_splits > 0 ? *splits : caps ? 0 : 1;

		ws_xt_best(M, K, Np, sms, caps, want_bn, sa, ws_dsum_max(kt), bn, splits);
		return;
	}
	if (want_bn)
		return;
	for (int i = 0; i < 3; i++) {
		const long t = ws_cost(M, kt, Np, sms, widths[i]);

		if (best < 0 || t < best) {
			best = t;
			*bn = widths[i];
		}
	}
}

int lnl_fwd_split_rows32(long M, enum fp_dtype dt)
{
	return dt == FP_F32 && M <= 32;
}

int lnl_fwd_splits(long M, long K, long N, enum fp_dtype dt, int sms)
{
	const long small = ((M + 63) / 64) * ((N + 127) / 128);
	int smax;

	if (sms < 1 || M < 1 || K < 1 || N < 1 || lnl_vec_width(K, dt) == 1 ||
	    !lnl_few_big_tiles(M, N, sms) || small >= sms)
		return 1;
	smax = lnl_split_max(M, K, dt);
	return smax < 2 ? 1 : split_pick(small, 2 * sms, lnl_ktiles(K, dt), smax);
}

/* The plan: rows a row block from LNL_GEMV_SUMS / mp down, halving while
 * the row blocks are fewer than 8 an SM. The launch's blocks, as many as
 * fit on the device at once, take row blocks in turn, so 8 an SM or more
 * keep their imbalance under an eighth; rows a row block are the loads a
 * warp has in flight between two barriers, so not fewer than that asks
 * (and x~ is loaded again for each, from L1 or L2). Where even row blocks
 * of one group are fewer than the SMs, slices of K make up twice the SMs
 * (at most one a chunk and lnl_split_max; between the two, the partials'
 * round trip and a second launch would cost more than the idle SMs); the
 * warps a block, one a chunk of its slice (32 x LNL_GEMV_E columns) up to
 * LNL_GEMV_WARPS (more chunks: each warp takes several). */
int lnl_fwd_gemv(long M, long K, long N, enum fp_dtype dt, int sms, struct lnl_gemv *g)
{
	const long Np = ceil_div(N, 32) * 32;
	const long target = 2L * sms, rb_target = 8L * sms;
	int mp = 1, s;

	if (sms < 1 || M < 1 || M > LNL_GEMV_MAX_M || K < 1 || N < 1 ||
	    lnl_vec_width(K, dt) == 1)
		return 0;
	while (mp < M)
		mp *= 2;
	g->mp = mp;
	g->group = LNL_GEMV_GROUP(mp);
	g->brows = LNL_GEMV_SUMS / mp;
	while (g->brows > g->group && ceil_div(Np, g->brows) < rb_target)
		g->brows /= 2;
	g->blocks = ceil_div(Np, g->brows);
	g->chunks = (int)ceil_div(K, 32 * LNL_GEMV_E);
	s = 1;
	if (g->blocks < sms) {
		const int smax = lnl_split_max(M, K, dt);

		s = (int)ceil_div(target, g->blocks);
		if (s > g->chunks)
			s = g->chunks;
		if (s > smax)
			s = smax;
	}
	g->cps = (int)ceil_div(g->chunks, s);
	g->splits = (int)ceil_div(g->chunks, g->cps);
	g->warps = g->cps < LNL_GEMV_WARPS ? g->cps : LNL_GEMV_WARPS;
	return 1;
}

int lnl_fwd_gemv_auto(long M, enum fp_dtype dt)
{
	return M <= (dt == FP_BF16 ? LNL_GEMV_AUTO_BF16 : LNL_GEMV_MAX_M);
}

int lnl_fwd_gemv_bf16_big(long K, long N, int sms)
{
	return sms > 0 && 2.0 * (double)K * (double)N > (double)LNL_GEMV_BF16_SM_W * sms;
}

int lnl_ws_pairs_pay(long M)
{
	const long tm = ceil_div(M, 128);

	return tm % 2 == 0 || tm >= 8;
}

int lnl_fwd_xt_possible(long M, long K, enum fp_dtype dt)
{
	return dt == FP_BF16 && M > LNL_SKINNY_MAX_M && M <= LNL_XT_MAX_M && K % 8 == 0;
}

int lnl_few_tiles_ws(long M, long K, long Np, int sms, const int *caps)
{
	const int kt = lnl_ktiles(K, FP_BF16);
	int w, sl;
	double ws, xt;

	if (!lnl_fwd_xt_possible(M, K, FP_BF16))
		return 1;
	if (sms < 1 || kt < 1)
		return 0;
	ws = ws_xt_best(M, K, Np, sms, caps, 0, caps ? 0 : 1, ws_dsum_max(kt), &w, &sl);
	xt = lnl_few_xt_ns(M, K, Np, sms);
	return ws >= 0 && ws < xt;
}

int lnl_fwd_part_slices(long M, long K, long N, enum fp_dtype dt, int sms)
{
	struct lnl_gemv g;

	if (lnl_fwd_gemv_auto(M, dt) && lnl_fwd_gemv(M, K, N, dt, sms, &g))
		return g.splits;
	return lnl_fwd_splits(M, K, N, dt, sms);
}

int lnl_fwd_skinny(long M, long K, long Nw, enum fp_dtype dt, int sms, long slots,
		   int *splits)
{
	const int kt = lnl_ktiles(K, dt);
	const long tiles = ceil_div(Nw, LNL_SKINNY_BW);
	long s;

	if (dt != FP_BF16 || M < 1 || M > LNL_SKINNY_MAX_M || K < 1 || Nw < 1 || sms < 1 ||
	    lnl_vec_width(K, dt) == 1)
		return 0;
	s = ceil_div(4L * sms, tiles);
	if (s > LNL_SKINNY_MAX_SPLITS)
		s = LNL_SKINNY_MAX_SPLITS;
	if (s > kt / LNL_SPLIT_MIN_KT)
		s = kt / LNL_SPLIT_MIN_KT;
	if (slots > 0 && s > slots / tiles)
		s = slots / tiles;  /* one wave: a second would double the time */
	if (s < 1)
		s = 1;
	/* slices of equal k-tiles, none empty (as the kernel cuts them) */
	*splits = lnl_even_slices(kt, (int)s);
	return 1;
}

int lnl_fwd_skinny_res(long M, long K, long Nw, enum fp_dtype dt, const int *clusters,
		       size_t smem_max, int want, int *slices, int *groups)
{
	const int kt = lnl_ktiles(K, dt), mp = lnl_skinny_res_mp(M);
	const long tiles = ceil_div(Nw, LNL_SKINNY_RES_BW);
	long best = -1;

	if (dt != FP_BF16 || M <= LNL_SKINNY_MAX_M || M > LNL_SKINNY_RES_MAX_M || K < 1 ||
	    Nw < 1 || lnl_vec_width(K, dt) == 1)
		return 0;
	for (int c = 1; c <= LNL_SKINNY_MAX_SPLITS && c <= kt; c++) {
		const int kc = (int)ceil_div(kt, c), ce = (int)ceil_div(kt, kc);
		long g = clusters[ce], cost;

		if (ce > 1 && kc < LNL_SPLIT_MIN_KT)
			break;
		if ((want > 0 && c != want) || lnl_skinny_res_smem(mp, kc) > smem_max || g < 1)
			continue;
		if (g > tiles)
			g = tiles;
		cost = ceil_div(tiles, g) * (kc + LNL_SKINNY_RES_ROUND);
		if (best < 0 || cost < best) {  /* ties: fewer slices */
			best = cost;
			*slices = ce;
			*groups = (int)g;
		}
	}
	return best >= 0;
}
