/* roofline.c - reads a run's ceilings and per-op roofline numbers from the
 * views (the one home of the formulas), and keeps the reference math the
 * views implement for the plots and the tests. */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "error.h"
#include "roofline.h"
#include "rows.h"
#include "store.h"
#include "util.h"
#include "views.h"

#define T(f) { #f, COL_TEXT, offsetof(struct rf_op, f) }
#define R(f) { #f, COL_REAL, offsetof(struct rf_op, f) }
static const struct col op_cols[] = {
	{ "op_id", COL_INT, offsetof(struct rf_op, op_id) },
	T(workload), T(variant), T(role), T(dtype), T(shape), T(status),
	{ "message", COL_TEXT_NULL, offsetof(struct rf_op, message) },
	R(time_ns), R(launches),
	R(flops), R(flops_fp32), R(flops_fp64), R(flops_fp16), R(flops_tensor),
	T(precision), R(dram_read_bytes), R(dram_write_bytes),
	R(dram_writeback_bytes), R(dram_bytes), R(l2_bytes), R(l1_bytes),
	R(ai_dram), R(ai_l2), R(ai_l1), R(flop_rate), R(dram_rate), R(l2_rate),
	R(peak_flop_rate), R(dram_bw), R(l2_bw), R(dram_write_frac),
	T(peak_provenance), T(dram_bw_provenance), T(l2_bw_provenance),
	T(dram_bw_basis),
	R(roof), R(roof_pct), R(roof_l2), R(roof_l2_pct), T(bound),
	R(model_flops), R(model_min_bytes), R(model_variant_bytes),
	R(traffic_eff), R(eff_bw), R(eff_bw_pct), R(rel_err), R(tolerance),
	R(longest_kernel_ns), T(kernel_opts), T(kernel), T(device),
	{ "device_id", COL_INT, offsetof(struct rf_op, device_id) },
};
#undef T
#undef R

#define T(f) { #f, COL_TEXT, offsetof(struct rf_flag, f) }
#define R(f) { #f, COL_REAL, offsetof(struct rf_flag, f) }
static const struct col flag_cols[] = {
	{ "op_id", COL_INT, offsetof(struct rf_flag, op_id) },
	T(workload), T(variant), T(dtype), T(shape), T(reason),
	R(value), R(threshold), T(cause),
};
#undef T
#undef R

static char *text_or(sqlite3_stmt *s, int i, const char *dflt)
{
	const unsigned char *t = sqlite3_column_text(s, i);

	if (t)
		return xstrdup((const char *)t);
	return dflt ? xstrdup(dflt) : NULL;
}

static int load_run(struct store *st, long long run_id, struct rf_run *run)
{
	sqlite3_stmt *s = NULL;
	int rc;

	if (sqlite3_prepare_v2(store_db(st),
			       "SELECT r.started_at, r.finished_at,"
			       " fp_run_status(r.status, r.host, r.pid, r.proc_start),"
			       " r.tag,"
			       " r.host, r.tool_version, r.command_line, r.counters,"
			       " d.name, (SELECT kind FROM v_runs WHERE run_id = r.id)"
			       " FROM runs r LEFT JOIN devices d"
			       " ON d.id = r.device_id WHERE r.id = ?1", -1, &s, NULL))
		return store_error(st, "cannot read the run from");
	sqlite3_bind_int64(s, 1, run_id);
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(s);
		if (rc == SQLITE_DONE)
			return error("no run %lld in '%s' (see 'fuseprof list runs')",
				     run_id, store_path(st));
		return store_error(st, "cannot read the run from");
	}
	run->id = run_id;
	run->started_at = text_or(s, 0, "");
	run->finished_at = text_or(s, 1, "");
	run->status = text_or(s, 2, "");
	run->tag = text_or(s, 3, "");
	run->host = text_or(s, 4, "");
	run->tool_version = text_or(s, 5, "");
	run->command_line = text_or(s, 6, "");
	run->counters = text_or(s, 7, "");
	run->device = text_or(s, 8, "");
	run->kind = text_or(s, 9, "run");
	sqlite3_finalize(s);
	return 0;
}

/* The ceilings run_id is judged against on device device_id (0: the
 * run's device) into *out, *n of them. */
static int load_ceilings_of(struct store *st, long long run_id, long long device_id,
			    struct rf_ceiling **out, int *n)
{
	sqlite3_stmt *s = NULL;
	int rc, alloc = 0;

	if (sqlite3_prepare_v2(store_db(st),
			       "SELECT name, unit, value, provenance, method"
			       " FROM v_ceilings WHERE run_id = ?1 AND device_id IS"
			       " coalesce(?2, (SELECT device_id FROM runs WHERE id = ?1))"
			       " ORDER BY name", -1, &s, NULL))
		return store_error(st, "cannot read the ceilings from");
	sqlite3_bind_int64(s, 1, run_id);
	if (device_id > 0)
		sqlite3_bind_int64(s, 2, device_id);
	else
		sqlite3_bind_null(s, 2);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct rf_ceiling *c;

		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 8;
			*out = xrealloc(*out, (size_t)alloc * sizeof **out);
		}
		c = &(*out)[(*n)++];
		c->name = text_or(s, 0, "");
		c->unit = text_or(s, 1, "");
		c->value = sqlite3_column_double(s, 2);
		c->provenance = text_or(s, 3, "");
		c->method = text_or(s, 4, NULL);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return store_error(st, "cannot read the ceilings from");
	return 0;
}

static void free_ceilings(struct rf_ceiling *c, int n)
{
	for (int i = 0; i < n; i++) {
		free(c[i].name);
		free(c[i].unit);
		free(c[i].provenance);
		free(c[i].method);
	}
	free(c);
}

/* The devices of the run's ops: each op's place among them (device_nth),
 * their count, and where they are of two models or more, each model with
 * the ceilings of its first device. */
static int load_models(struct store *st, struct rf_run *run)
{
	long long *ids = xcalloc(run->nops + 1, sizeof *ids);
	size_t nids = 0;
	int rc = 0;

	for (size_t i = 0; i < run->nops; i++) {
		size_t k = 0;

		while (k < nids && ids[k] != run->ops[i].device_id)
			k++;
		if (k == nids)
			ids[nids++] = run->ops[i].device_id;
	}
	for (size_t a = 1; a < nids; a++)
		for (size_t b = a; b > 0 && ids[b - 1] > ids[b]; b--) {
			long long t = ids[b];

			ids[b] = ids[b - 1];
			ids[b - 1] = t;
		}
	run->ndevices = (int)nids;
	for (size_t i = 0; i < run->nops; i++)
		for (size_t k = 0; k < nids; k++)
			if (ids[k] == run->ops[i].device_id)
				run->ops[i].device_nth = (int)k;
	/* The models in order of their first device. */
	for (size_t k = 0; k < nids; k++) {
		const char *name = "";
		size_t m = 0;

		for (size_t i = 0; i < run->nops; i++)
			if (run->ops[i].device_id == ids[k])
				name = run->ops[i].device;
		while (m < run->nmodels && strcmp(run->models[m].name, name))
			m++;
		if (m < run->nmodels)
			continue;
		run->models = xrealloc(run->models, (m + 1) * sizeof *run->models);
		run->models[m] = (struct rf_model){ xstrdup(name), ids[k], 0, NULL };
		run->nmodels++;
	}
	if (run->nmodels < 2) {
		for (size_t m = 0; m < run->nmodels; m++)
			free(run->models[m].name);
		free(run->models);
		run->models = NULL;
		run->nmodels = 0;
	}
	for (size_t m = 0; m < run->nmodels && !rc; m++)
		rc = load_ceilings_of(st, run->id, run->models[m].device_id,
				      &run->models[m].ceilings, &run->models[m].nceilings);
	free(ids);
	return rc;
}

/* RF_RUN_TABLE, created empty, and the statement that fills it with one
 * row of the FP_RUN_INPUT columns; *ncols gets their number. The
 * columns have no declared type, so each value keeps the type the view
 * gave it and v_fusion's SQL over them computes what the view computes. */
static sqlite3_stmt *run_table(struct store *st, int *ncols)
{
	struct strbuf sql = STRBUF_INIT;
	sqlite3_stmt *ins = NULL;
	int n = 1;

	for (const char *p = FP_RUN_INPUT; *p; p++)
		n += *p == ',';
	strbuf_addstr(&sql, "INSERT INTO " RF_RUN_TABLE " VALUES (");
	for (int i = 1; i <= n; i++)
		strbuf_addf(&sql, "%s?%d", i > 1 ? ", " : "", i);
	strbuf_addstr(&sql, ")");
	if (sqlite3_exec(store_db(st), "DROP TABLE IF EXISTS " RF_RUN_TABLE ";"
			 " CREATE TABLE " RF_RUN_TABLE " (" FP_RUN_INPUT ")",
			 NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(store_db(st), strbuf_str(&sql), -1, &ins, NULL) != SQLITE_OK) {
		store_error(st, "cannot keep the run's roofline in");
		ins = NULL;
	}
	strbuf_release(&sql);
	*ncols = n;
	return ins;
}

static int load_ops(struct store *st, const char *const *workloads,
		    struct rf_run *run)
{
	struct strbuf sql = STRBUF_INIT;
	sqlite3_stmt *s = NULL, *ins;
	size_t alloc = 0;
	int rc, nin;

	if (!(ins = run_table(st, &nin)))
		return -1;
	/* The SELECT reads FP_RUN_INPUT's columns first, in its order, to
	 * copy them as they come; then every column of op_cols. */
	strbuf_addstr(&sql, "SELECT " FP_RUN_INPUT);
	strbuf_addstr(&sql, ", ");
	cols_select(&sql, op_cols, ARRAY_SIZE(op_cols));
	strbuf_addstr(&sql, " FROM v_roofline WHERE run_id = ?1 ORDER BY workload, op_id");
	rc = sqlite3_prepare_v2(store_db(st), strbuf_str(&sql), -1, &s, NULL);
	strbuf_release(&sql);
	if (rc != SQLITE_OK) {
		sqlite3_finalize(ins);
		return store_error(st, "cannot read v_roofline from");
	}
	sqlite3_bind_int64(s, 1, run->id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct rf_op *op;
		const unsigned char *w;

		for (int i = 0; i < nin; i++)
			sqlite3_bind_value(ins, i + 1, sqlite3_column_value(s, i));
		if (sqlite3_step(ins) != SQLITE_DONE || sqlite3_reset(ins) != SQLITE_OK) {
			rc = SQLITE_ERROR;
			break;
		}
		w = sqlite3_column_text(s, nin + 1);
		if (!rows_wanted(w ? (const char *)w : "", workloads))
			continue;
		if (run->nops == alloc) {
			alloc = alloc ? 2 * alloc : 64;
			run->ops = xrealloc(run->ops, alloc * sizeof *run->ops);
		}
		op = &run->ops[run->nops++];
		memset(op, 0, sizeof *op);
		cols_read(s, nin, op_cols, ARRAY_SIZE(op_cols), op);
	}
	sqlite3_finalize(s);
	sqlite3_finalize(ins);
	if (rc != SQLITE_DONE)
		return store_error(st, "cannot read v_roofline from");
	return 0;
}

/* 1 when RF_RUN_TABLE holds exactly the ops run_id has now, 0 otherwise
 * (also when there is no such table). */
int rf_run_table_holds(struct store *st, long long run_id)
{
	sqlite3_stmt *s = NULL;
	int ok = 0;

	if (sqlite3_prepare_v2(store_db(st),
			       "SELECT (SELECT count(*) FROM " RF_RUN_TABLE ") ="
			       " (SELECT count(*) FROM " RF_RUN_TABLE " WHERE run_id = ?1)"
			       " AND (SELECT count(*) FROM " RF_RUN_TABLE ") ="
			       " (SELECT count(*) FROM ops WHERE run_id = ?1)",
			       -1, &s, NULL) == SQLITE_OK) {
		sqlite3_bind_int64(s, 1, run_id);
		ok = sqlite3_step(s) == SQLITE_ROW && sqlite3_column_int(s, 0) == 1;
	}
	sqlite3_finalize(s);
	return ok;
}

/* The run's flags, by v_distrust's SQL over the rows load_ops left in
 * RF_RUN_TABLE: the same rules as the view, without evaluating v_roofline
 * again. */
static int load_flags(struct store *st, const char *const *workloads,
		      struct rf_run *run)
{
	struct strbuf sql = STRBUF_INIT;
	sqlite3_stmt *s = NULL;
	size_t alloc = 0;
	long long last = -1;
	int rc;

	strbuf_addstr(&sql, "SELECT ");
	cols_select(&sql, flag_cols, ARRAY_SIZE(flag_cols));
	strbuf_addstr(&sql, " FROM (" FP_DISTRUST_SQL(RF_RUN_TABLE) ") WHERE run_id = ?1"
		      " ORDER BY workload, op_id, reason");
	rc = sqlite3_prepare_v2(store_db(st), strbuf_str(&sql), -1, &s, NULL);
	strbuf_release(&sql);
	if (rc != SQLITE_OK)
		return store_error(st, "cannot read v_distrust from");
	sqlite3_bind_int64(s, 1, run->id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const unsigned char *w = sqlite3_column_text(s, 1);
		struct rf_flag *f;

		if (!rows_wanted(w ? (const char *)w : "", workloads))
			continue;
		if (run->nflags == alloc) {
			alloc = alloc ? 2 * alloc : 16;
			run->flags = xrealloc(run->flags, alloc * sizeof *run->flags);
		}
		f = &run->flags[run->nflags++];
		cols_read(s, 0, flag_cols, ARRAY_SIZE(flag_cols), f);
		/* Flags come grouped by op (ordered by op id within a workload). */
		run->nflagged += f->op_id != last;
		last = f->op_id;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return store_error(st, "cannot read v_distrust from");
	return 0;
}

int rf_load(struct store *st, long long run_id, const char *const *workloads,
	    struct rf_run *run)
{
	memset(run, 0, sizeof *run);
	if (load_run(st, run_id, run))
		return -1;
	if (load_ceilings_of(st, run_id, 0, &run->ceilings, &run->nceilings) ||
	    load_ops(st, workloads, run) || load_models(st, run) ||
	    load_flags(st, workloads, run)) {
		rf_release(run);
		return -1;
	}
	return 0;
}

void rf_release(struct rf_run *run)
{
	free(run->started_at);
	free(run->finished_at);
	free(run->status);
	free(run->tag);
	free(run->host);
	free(run->tool_version);
	free(run->command_line);
	free(run->counters);
	free(run->device);
	free(run->kind);
	free_ceilings(run->ceilings, run->nceilings);
	for (size_t m = 0; m < run->nmodels; m++) {
		free(run->models[m].name);
		free_ceilings(run->models[m].ceilings, run->models[m].nceilings);
	}
	free(run->models);
	for (size_t i = 0; i < run->nops; i++)
		cols_free(op_cols, ARRAY_SIZE(op_cols), &run->ops[i]);
	free(run->ops);
	for (size_t i = 0; i < run->nflags; i++)
		cols_free(flag_cols, ARRAY_SIZE(flag_cols), &run->flags[i]);
	free(run->flags);
	memset(run, 0, sizeof *run);
}

const struct rf_ceiling *rf_ceiling(const struct rf_run *run, const char *name)
{
	for (int i = 0; i < run->nceilings; i++)
		if (!strcmp(run->ceilings[i].name, name))
			return &run->ceilings[i];
	return NULL;
}

/* ---- the reference math ---------------------------------------------- */

double rf_div(double a, double b)
{
	if (isnan(a) || isnan(b) || b == 0)
		return NAN;
	return a / b;
}

double rf_attainable(double ai, double peak, double bw)
{
	double slope = ai * bw;

	if (isnan(ai) || isnan(peak) || isnan(bw))
		return NAN;
	return slope < peak ? slope : peak;
}

const char *rf_precision(double fp32, double fp64, double fp16, double tensor,
			 const char *dtype)
{
	if (isnan(tensor))
		tensor = 0;
	if (tensor > fp32 + fp64 + fp16)
		return !strcmp(dtype, "bf16") ? "tensor_bf16" : "tensor_tf32";
	if (fp64 > fp32 + fp16)
		return "fp64_fma";
	return "fp32_fma";
}

static double ceiling_value(const struct rf_run *run, const char *name,
			    char **provenance)
{
	const struct rf_ceiling *c = rf_ceiling(run, name);

	*provenance = c ? c->provenance : "";
	return c ? c->value : NAN;
}

/* The DRAM ceilings by write fraction (views.h): the ends of each segment,
 * with their names in basis texts. */
static const struct {
	double f;
	const char *name, *ceiling;
} mixes[] = {
	{ 0, "read", "dram_read_bw" },
	{ 1.0 / 3, "add", "dram_add_bw" },
	{ 0.5, "copy", "dram_bw" },
	{ 1, "write", "dram_write_bw" },
};

/* The segment of mixes holding write fraction f (not NaN), its ends in
 * run (NULL when missing) and f's place t between them. Returns the
 * segment's index in mixes. */
static size_t segment(const struct rf_run *run, double f, const struct rf_ceiling **lo,
		      const struct rf_ceiling **hi, double *t)
{
	size_t i = 0;

	/* [0, 1/3), [1/3, 1/2), [1/2, 1]. */
	while (i + 2 < ARRAY_SIZE(mixes) && f >= mixes[i + 1].f)
		i++;
	*lo = rf_ceiling(run, mixes[i].ceiling);
	*hi = rf_ceiling(run, mixes[i + 1].ceiling);
	/* Written as the SQL writes it, so both round alike. */
	*t = i == 0 ? f / (1.0 / 3) : i == 1 ? (f - 1.0 / 3) / (0.5 - 1.0 / 3)
				       : (f - 0.5) / 0.5;
	return i;
}

static int measured(const struct rf_ceiling *lo, const struct rf_ceiling *hi)
{
	return !strcmp(lo->provenance, "measured") && !strcmp(hi->provenance, "measured");
}

/* The copy's roof, for a mix unknown or without its ceilings. */
static double copy_roof(const struct rf_run *run, const char *why,
			const char **provenance, char *basis, size_t size)
{
	const struct rf_ceiling *copy = rf_ceiling(run, "dram_bw");

	if (!copy) {
		*provenance = "";
		snprintf(basis, size, "%s", "");
		return NAN;
	}
	*provenance = copy->provenance;
	snprintf(basis, size, "copy (%s)", why);
	return copy->value;
}

double rf_dram_bw(const struct rf_run *run, double f, const char **provenance,
		  char *basis, size_t size)
{
	const struct rf_ceiling *lo = NULL, *hi = NULL;
	size_t i;
	double t;

	if (isnan(f))
		return copy_roof(run, "mix unknown", provenance, basis, size);
	i = segment(run, f, &lo, &hi, &t);
	if (!lo || !hi)
		return copy_roof(run, "no ceiling for this mix", provenance, basis, size);
	*provenance = measured(lo, hi) ? "measured" : "theoretical";
	snprintf(basis, size, "%s..%s %.2f", mixes[i].name, mixes[i + 1].name, t);
	return lo->value + t * (hi->value - lo->value);
}

double rf_op_dram_bw(const struct rf_run *run, const struct rf_kernel_dram *k,
		     size_t nk, double f, const char **provenance, char *basis,
		     size_t size)
{
	/* The nearest named mix: up to the midpoints between them. */
	static const double upto[] = { 1.0 / 6, 5.0 / 12, 0.75, INFINITY };
	double bytes = 0, secs = 0;
	int known = 1, roofs = 1, all_measured = 1;
	unsigned seen = 0;
	size_t len;

	if (nk <= 1)
		return rf_dram_bw(run, f, provenance, basis, size);
	for (size_t j = 0; j < nk; j++) {
		double wb = isnan(k[j].writeback) ? 0 : k[j].writeback;
		double n = k[j].read + k[j].write + wb, fk, t;
		const struct rf_ceiling *lo, *hi;
		size_t m = 0;

		if (isnan(n)) {
			known = 0;
			continue;
		}
		bytes += n;
		if (n == 0)
			continue;
		fk = (k[j].write + wb) / n;
		while (fk >= upto[m])
			m++;
		seen |= 1u << m;
		segment(run, fk, &lo, &hi, &t);
		if (!lo || !hi) {
			roofs = 0;
			continue;
		}
		all_measured &= measured(lo, hi);
		secs += n / (lo->value + t * (hi->value - lo->value));
	}
	if (!known || isnan(f))
		return copy_roof(run, "mix unknown", provenance, basis, size);
	if (!roofs)
		return copy_roof(run, "no ceiling for this mix", provenance, basis, size);
	if (!(secs > 0))  /* no DRAM bytes: no mix */
		return copy_roof(run, "mix unknown", provenance, basis, size);
	*provenance = all_measured ? "measured" : "theoretical";
	snprintf(basis, size, "kernels (%zu):", nk);
	for (size_t m = 0; m < ARRAY_SIZE(upto); m++) {
		len = strlen(basis);
		if (seen & (1u << m) && len < size)
			snprintf(basis + len, size - len, "%s %s",
				 basis[len - 1] == ':' ? "" : ",", mixes[m].name);
	}
	return 1e9 * bytes / (1e9 * secs);
}

void rf_derive(struct rf_op *op, int has_counters, const struct rf_kernel_dram *k,
	       size_t nk, const struct rf_run *run)
{
	double tensor = isnan(op->flops_tensor) ? 0 : op->flops_tensor;
	double wb = isnan(op->dram_writeback_bytes) ? 0 : op->dram_writeback_bytes;
	char basis[64];

	/* v_ops's FLOP sums are 0, not NULL, for an op without counters,
	 * and the precision is chosen from those zeros all the same. */
	op->precision = (char *)rf_precision(op->flops_fp32, op->flops_fp64,
					     op->flops_fp16, tensor, op->dtype);
	if (has_counters) {
		op->flops = op->flops_fp32 + op->flops_fp64 + op->flops_fp16 + tensor;
		op->flops_tensor = tensor;
	} else {
		op->flops = op->flops_fp32 = op->flops_fp64 = NAN;
		op->flops_fp16 = op->flops_tensor = NAN;
	}
	op->dram_bytes = op->dram_read_bytes + op->dram_write_bytes + wb;
	op->dram_write_frac = rf_div(op->dram_write_bytes + wb, op->dram_bytes);
	op->ai_dram = rf_div(op->flops, op->dram_bytes);
	op->ai_l2 = rf_div(op->flops, op->l2_bytes);
	op->ai_l1 = rf_div(op->flops, op->l1_bytes);
	op->flop_rate = rf_div(1e9 * op->flops, op->time_ns);
	op->dram_rate = rf_div(1e9 * op->dram_bytes, op->time_ns);
	op->l2_rate = rf_div(1e9 * op->l2_bytes, op->time_ns);
	op->peak_flop_rate = ceiling_value(run, op->precision, &op->peak_provenance);
	op->dram_bw = rf_op_dram_bw(run, k, nk, op->dram_write_frac,
				    (const char **)&op->dram_bw_provenance, basis,
				    sizeof basis);
	op->dram_bw_basis = xstrdup(basis);
	op->l2_bw = ceiling_value(run, "l2_bw", &op->l2_bw_provenance);
	op->roof = rf_attainable(op->ai_dram, op->peak_flop_rate, op->dram_bw);
	op->roof_pct = rf_div(100.0 * op->flop_rate, op->roof);
	op->roof_l2 = rf_attainable(op->ai_l2, op->peak_flop_rate, op->l2_bw);
	op->roof_l2_pct = rf_div(100.0 * op->flop_rate, op->roof_l2);
	if (isnan(op->ai_dram) || isnan(op->dram_bw) || isnan(op->peak_flop_rate))
		op->bound = "";
	else
		op->bound = op->ai_dram * op->dram_bw < op->peak_flop_rate ? "memory"
									   : "compute";
	op->traffic_eff = rf_div(op->dram_bytes, op->model_min_bytes);
	op->eff_bw = rf_div(1e9 * op->model_min_bytes, op->time_ns);
	op->eff_bw_pct = rf_div(100.0 * op->eff_bw, op->dram_bw);
}
