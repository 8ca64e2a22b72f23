/* against.c - one run against a base run: the ops matched as compare
 * matches them, their numbers side by side, and which pairs get an arrow
 * on the roofline (see against.h). */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "against.h"
#include "compare.h"
#include "roofline.h"
#include "store.h"
#include "table.h"
#include "util.h"

static int is_ok(const struct rf_op *op)
{
	return !strcmp(op->status, "ok");
}

/* Why op has no place on the roofline (AG_DRAWN: it has one): the plots
 * draw an ok op at (ai_dram, flop_rate), both finite and positive. */
static enum ag_why placed(const struct rf_op *op)
{
	if (!is_ok(op))
		return AG_NOT_OK;
	if (isnan(op->dram_bytes) || isnan(op->flops))
		return AG_NO_COUNTERS;
	if (!(op->flops > 0))
		return AG_NO_FLOPS;
	if (!(op->dram_bytes > 0))
		return AG_NO_BYTES;
	if (!(op->ai_dram > 0 && op->flop_rate > 0 && isfinite(op->ai_dram) &&
	      isfinite(op->flop_rate)))
		return AG_NO_TIME;
	return AG_DRAWN;
}

const char *ag_why_text(enum ag_why why)
{
	static const char *const text[AG_NWHY] = {
		[AG_DRAWN] = "drawn",
		[AG_NOT_OK] = "failed its check",
		[AG_NO_COUNTERS] = "no counters",
		[AG_NO_FLOPS] = "no FLOPs counted",
		[AG_NO_BYTES] = "no DRAM bytes counted",
		[AG_NO_TIME] = "no time",
	};

	return (unsigned)why < AG_NWHY ? text[why] : "?";
}

static struct cmp_key key_of(const struct rf_op *o)
{
	return (struct cmp_key){ o->workload, o->variant, o->dtype, o->shape, 0 };
}

void against_match(const struct rf_run *base, const struct rf_run *run,
		   struct against *out)
{
	struct cmp_key *kb = xcalloc(base->nops + 1, sizeof *kb);
	struct cmp_key *kr = xcalloc(run->nops + 1, sizeof *kr);
	struct cmp_match *m;

	memset(out, 0, sizeof *out);
	out->base = base;
	out->run = run;
	out->by_path = cmp_match_by_path(base->kind, run->kind);
	for (size_t i = 0; i < base->nops; i++)
		kb[i] = key_of(&base->ops[i]);
	for (size_t i = 0; i < run->nops; i++)
		kr[i] = key_of(&run->ops[i]);
	m = cmp_match_ops(kb, base->nops, kr, run->nops, out->by_path, &out->n);
	out->v = xcalloc(out->n + 1, sizeof *out->v);
	for (size_t k = 0; k < out->n; k++) {
		struct ag_row *r = &out->v[k];
		enum ag_why wb, wr;

		r->base = m[k].base != CMP_NONE ? &base->ops[m[k].base] : NULL;
		r->op = m[k].new != CMP_NONE ? &run->ops[m[k].new] : NULL;
		r->time_ratio = NAN;
		r->pred_ns = r->pred_own_ns = NAN;
		if (!r->base || !r->op) {
			out->nbase_only += !r->op;
			out->nrun_only += !r->base;
			continue;
		}
		out->npairs++;
		if (is_ok(r->base) && is_ok(r->op) && r->base->time_ns > 0 &&
		    r->op->time_ns > 0)
			r->time_ratio = r->op->time_ns / r->base->time_ns;
		wb = placed(r->base);
		wr = placed(r->op);
		r->why_base = wb != AG_DRAWN;
		r->why = r->why_base ? wb : wr;
		if (r->why == AG_DRAWN)
			out->ndrawn++;
		else
			out->nwhy[r->why_base][r->why]++;
	}
	free(m);
	free(kb);
	free(kr);
}

void against_release(struct against *a)
{
	free(a->v);
	memset(a, 0, sizeof *a);
}

void against_title(const struct against *a, struct strbuf *sb)
{
	strbuf_addf(sb, "Against run %lld", a->base->id);
	if (*a->base->tag)
		strbuf_addf(sb, " (%s)", a->base->tag);
}

/* An op by name: its range path between profiles, else workload, variant,
 * dtype and shape joined by '/' (empty ones left out). */
static void op_name(const struct against *a, const struct rf_op *o, struct strbuf *sb)
{
	const char *parts[] = { o->workload, o->variant, o->dtype, o->shape };
	size_t n = a->by_path ? 1 : ARRAY_SIZE(parts);
	int first = 1;

	for (size_t i = 0; i < n; i++) {
		if (!*parts[i])
			continue;
		strbuf_addf(sb, "%s%s", first ? "" : "/", parts[i]);
		first = 0;
	}
}

/* "Only in run N: a, b." for the ops of one side (base 1: the base run's). */
static void only_in(const struct against *a, int base, struct strbuf *sb)
{
	size_t count = base ? a->nbase_only : a->nrun_only, k = 0;

	if (!count)
		return;
	strbuf_addf(sb, " Only in run %lld (%zu op%s): ", base ? a->base->id : a->run->id,
		    count, count == 1 ? "" : "s");
	for (size_t i = 0; i < a->n; i++) {
		const struct ag_row *r = &a->v[i];
		const struct rf_op *o = base ? (r->op ? NULL : r->base) : (r->base ? NULL : r->op);

		if (!o)
			continue;
		if (k++)
			strbuf_addstr(sb, ", ");
		op_name(a, o, sb);
	}
	strbuf_addstr(sb, ".");
}

void against_text(const struct against *a, size_t ndrawn_plot, struct strbuf *sb)
{
	long long b = a->base->id, r = a->run->id;
	size_t nodraw = a->npairs - a->ndrawn;

	strbuf_addf(sb, "Run %lld against the base run %lld, op by op, matched as "
		    "'fuseprof compare %lld %lld' matches them: ", r, b, b, r);
	if (a->by_path)
		strbuf_addstr(sb, "both are profiles, so by range path alone. ");
	else
		strbuf_addstr(sb, "by workload, variant, dtype and shape. ");
	strbuf_addf(sb, "%zu op%s in both runs; ratios are run %lld's time ÷ run "
		    "%lld's (below 1: run %lld is faster). ", a->npairs,
		    a->npairs == 1 ? " is" : "s are", r, b, r);
	if (a->npairs && !a->ndrawn) {
		strbuf_addf(sb, "None of them has a place on the roofline in both "
			    "runs: no arrow leads from run %lld's points to run %lld's.",
			    b, r);
	} else if (a->npairs) {
		strbuf_addf(sb, "%zu of them %s a place on the roofline in both runs: "
			    "an arrow leads from run %lld's point to run %lld's",
			    a->ndrawn, a->ndrawn == 1 ? "has" : "have", b, r);
		if (ndrawn_plot == (size_t)-1)
			strbuf_addstr(sb, " (on the plots, when drawn)");
		else if (ndrawn_plot < a->ndrawn)
			strbuf_addf(sb, " (%zu drawn: the other %zu moved too little, "
				    "their two points a few pixels apart)", ndrawn_plot,
				    a->ndrawn - ndrawn_plot);
		strbuf_addstr(sb, ".");
	}
	if (nodraw) {
		int first = 1;

		strbuf_addf(sb, " %zu could not be drawn (a place on the roofline "
			    "needs a passed check and counters with FLOPs and DRAM "
			    "bytes; the base run's op is judged first): ", nodraw);
		for (int side = 1; side >= 0; side--)
			for (int w = 0; w < AG_NWHY; w++) {
				size_t n = a->nwhy[side][w];

				if (!n)
					continue;
				strbuf_addf(sb, "%s%zu %s in run %lld", first ? "" : ", ", n,
					    ag_why_text((enum ag_why)w), side ? b : r);
				first = 0;
			}
		strbuf_addstr(sb, ".");
	}
	if (*a->base->device && *a->run->device && strcmp(a->base->device, a->run->device))
		strbuf_addf(sb, " The runs ran on different GPUs (run %lld on %s, run "
			    "%lld on %s): the roofs drawn are run %lld's.", b,
			    a->base->device, r, a->run->device, r);
	only_in(a, 1, sb);
	only_in(a, 0, sb);
}

/* "no counters in run 3", or NULL for a pair with an arrow. */
static const char *why_cell(const struct against *a, const struct ag_row *r,
			    char *buf, size_t size)
{
	if (r->why == AG_DRAWN)
		return NULL;
	snprintf(buf, size, "%s in run %lld", ag_why_text(r->why),
		 r->why_base ? a->base->id : a->run->id);
	return buf;
}

static double field(const struct rf_op *o, size_t off)
{
	return o ? *(const double *)((const char *)o + off) : NAN;
}

static void table_display(const struct against *a, struct table *t)
{
	long long b = a->base->id, r = a->run->id;
	char h[7][48], buf[160];
	const char *hdr[] = {
		"workload", "variant", "dtype", "shape", h[0], h[1], h[2],
		h[3], h[4], h[5], h[6], "arrow",
	};

	snprintf(h[0], sizeof h[0], "run %lld µs", b);
	snprintf(h[1], sizeof h[1], "run %lld µs", r);
	snprintf(h[2], sizeof h[2], "÷ run %lld", b);
	snprintf(h[3], sizeof h[3], "run %lld DRAM MB", b);
	snprintf(h[4], sizeof h[4], "run %lld DRAM MB", r);
	snprintf(h[5], sizeof h[5], "run %lld %% of roof", b);
	snprintf(h[6], sizeof h[6], "run %lld %% of roof", r);
	table_init(t, (int)ARRAY_SIZE(hdr), hdr);
	for (size_t i = 0; i < a->n; i++) {
		const struct ag_row *x = &a->v[i];

		if (!x->base || !x->op)
			continue;
		table_add_text(t, x->op->workload);
		if (strcmp(x->base->variant, x->op->variant)) {
			snprintf(buf, sizeof buf, "%s->%s", x->base->variant, x->op->variant);
			table_add_text(t, buf);
		} else {
			table_add_text(t, x->op->variant);
		}
		table_add_text(t, x->op->dtype);
		table_add_text(t, x->op->shape);
		table_add_double(t, x->base->time_ns / 1e3, 4);
		table_add_double(t, x->op->time_ns / 1e3, 4);
		table_add_double(t, x->time_ratio, 3);
		table_add_double(t, x->base->dram_bytes / 1e6, 4);
		table_add_double(t, x->op->dram_bytes / 1e6, 4);
		table_add_double(t, x->base->roof_pct, 3);
		table_add_double(t, x->op->roof_pct, 3);
		if (x->why == AG_DRAWN)
			table_add_text(t, "yes");
		else {
			char why[96];

			snprintf(buf, sizeof buf, "no: %s", why_cell(a, x, why, sizeof why));
			table_add_text(t, buf);
		}
	}
}

static void table_full(const struct against *a, struct table *t)
{
	static const char *const hdr[] = {
		"in", "workload", "dtype", "shape", "base_run_id", "base_op_id",
		"base_variant", "base_status", "run_id", "op_id", "variant", "status",
		"base_time_ns", "time_ns", "time_ratio", "base_dram_bytes", "dram_bytes",
		"base_roof_pct", "roof_pct", "base_ai_dram", "ai_dram",
		"base_flop_rate", "flop_rate", "arrow", "no_arrow",
	};
	static const size_t nums[] = {
		offsetof(struct rf_op, dram_bytes), offsetof(struct rf_op, roof_pct),
		offsetof(struct rf_op, ai_dram), offsetof(struct rf_op, flop_rate),
	};
	char buf[96];

	table_init(t, (int)ARRAY_SIZE(hdr), hdr);
	for (size_t i = 0; i < a->n; i++) {
		const struct ag_row *x = &a->v[i];
		const struct rf_op *key = x->op ? x->op : x->base;

		table_add_text(t, x->base && x->op ? "both" : x->base ? "base" : "run");
		table_add_text(t, key->workload);
		table_add_text(t, key->dtype);
		table_add_text(t, key->shape);
		table_add_int(t, a->base->id);
		if (x->base)
			table_add_int(t, x->base->op_id);
		else
			table_add_null(t);
		table_add_text(t, x->base ? x->base->variant : NULL);
		table_add_text(t, x->base ? x->base->status : NULL);
		table_add_int(t, a->run->id);
		if (x->op)
			table_add_int(t, x->op->op_id);
		else
			table_add_null(t);
		table_add_text(t, x->op ? x->op->variant : NULL);
		table_add_text(t, x->op ? x->op->status : NULL);
		table_add_double(t, field(x->base, offsetof(struct rf_op, time_ns)), 10);
		table_add_double(t, field(x->op, offsetof(struct rf_op, time_ns)), 10);
		table_add_double(t, x->time_ratio, 10);
		for (size_t k = 0; k < ARRAY_SIZE(nums); k++) {
			table_add_double(t, field(x->base, nums[k]), 10);
			table_add_double(t, field(x->op, nums[k]), 10);
		}
		if (x->base && x->op) {
			table_add_int(t, x->why == AG_DRAWN);
			table_add_text(t, why_cell(a, x, buf, sizeof buf));
		} else {
			table_add_null(t);
			table_add_null(t);
		}
	}
}

void against_table(const struct against *a, struct table *t, int display)
{
	if (display)
		table_display(a, t);
	else
		table_full(a, t);
}

int against_predict(struct store *st, struct against *a)
{
	sqlite3_stmt *s = NULL;
	int rc;

	if (!a->by_path)
		return 0;
	if (sqlite3_prepare_v2(store_db(st), "SELECT op_id, chains, predicted_ns, "
			       "predicted_achieved_ns FROM v_fusion_predicted "
			       "WHERE run_id = ?1", -1, &s, NULL) != SQLITE_OK)
		return store_error(st, "cannot read v_fusion_predicted from");
	sqlite3_bind_int64(s, 1, a->base->id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const long long id = sqlite3_column_int64(s, 0);

		for (size_t i = 0; i < a->n; i++) {
			struct ag_row *r = &a->v[i];

			if (!r->base || r->base->op_id != id)
				continue;
			r->chains = sqlite3_column_int(s, 1);
			r->pred_ns = sqlite3_column_double(s, 2);
			r->pred_own_ns = sqlite3_column_double(s, 3);
			a->npredicted += r->op != NULL;
			break;
		}
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return store_error(st, "cannot read v_fusion_predicted from");
	return 0;
}

void against_predicted_text(const struct against *a, struct strbuf *sb)
{
	strbuf_addf(sb, "Each range of run %lld with fusion candidates inside it: "
		    "its time, its time were its chains fused (v_fusion_predicted: "
		    "each chain's predicted gain a range instance taken off, at the "
		    "DRAM roof and at the chains' own bandwidth), and run %lld's "
		    "time for the same range. run ÷ predicted near 1: run %lld "
		    "got what fusing those chains predicts; below 1, more (it "
		    "changed more than those chains, or moved work out of the "
		    "range); above 1, less.", a->base->id, a->run->id, a->run->id);
}

void against_predicted_table(const struct against *a, struct table *t, int display)
{
	static const char *const disp[] = {
		"range", "chains", "base µs", "predicted µs (roof)",
		"predicted µs (own bw)", "run µs", "run ÷ predicted (own bw)",
	};
	static const char *const full[] = {
		"workload", "base_op_id", "op_id", "chains", "base_time_ns",
		"predicted_ns", "predicted_achieved_ns", "time_ns", "ratio",
	};

	if (display)
		table_init(t, (int)ARRAY_SIZE(disp), disp);
	else
		table_init(t, (int)ARRAY_SIZE(full), full);
	for (size_t i = 0; i < a->n; i++) {
		const struct ag_row *r = &a->v[i];
		const double ratio = r->op && r->pred_own_ns > 0 && is_ok(r->op)
				     ? r->op->time_ns / r->pred_own_ns : NAN;

		if (!r->base || !r->op || isnan(r->pred_ns))
			continue;
		table_add_text(t, r->base->workload);
		if (!display) {
			table_add_int(t, r->base->op_id);
			table_add_int(t, r->op->op_id);
		}
		table_add_int(t, r->chains);
		if (display) {
			table_add_double(t, r->base->time_ns / 1e3, 4);
			table_add_double(t, r->pred_ns / 1e3, 4);
			table_add_double(t, r->pred_own_ns / 1e3, 4);
			table_add_double(t, r->op->time_ns / 1e3, 4);
			table_add_double(t, ratio, 3);
		} else {
			table_add_double(t, r->base->time_ns, 10);
			table_add_double(t, r->pred_ns, 10);
			table_add_double(t, r->pred_own_ns, 10);
			table_add_double(t, r->op->time_ns, 10);
			table_add_double(t, ratio, 10);
		}
	}
}
