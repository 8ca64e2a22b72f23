/* plot-input.c - a run's roofline and fusion rows as plots/ takes them. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "against.h"
#include "fusion.h"
#include "plot-input.h"
#include "plot.h"
#include "roofline.h"
#include "util.h"

int report_plots(const struct rf_run *run, const struct fu_pairs *pairs,
		 const struct against *ag, const struct plot_opts *o,
		 struct plot_images *out)
{
	struct plot_move *mv = xcalloc(ag ? ag->ndrawn + 1 : 1, sizeof *mv);
	struct plot_ceiling *ce = xcalloc((size_t)run->nceilings, sizeof *ce);
	struct plot_op *ops = xcalloc(run->nops, sizeof *ops);
	struct plot_pair *pp = xcalloc(pairs->n, sizeof *pp);
	struct plot_group *gr = xcalloc(run->nmodels + 1, sizeof *gr);
	size_t nce = 0;
	char **names = xcalloc(run->nops + 1, sizeof *names);
	struct plot_data d = {
		.run_id = run->id, .started_at = run->started_at, .device = run->device,
		.nceilings = run->nceilings, .ceilings = ce,
		.nops = run->nops, .ops = ops,
		.npairs = pairs->n, .pairs = pp,
		.base_run_id = ag ? ag->base->id : 0, .moves = mv,
		.ngroups = (int)run->nmodels, .groups = gr,
	};
	struct plot_ceiling *gce;
	int rc;

	/* Strings are borrowed: the plain rows live for this call only. */
	for (int i = 0; i < run->nceilings; i++) {
		const struct rf_ceiling *c = &run->ceilings[i];

		ce[i] = (struct plot_ceiling){ c->name, c->unit, c->value, c->provenance };
	}
	/* A run on several GPU models: each model's roofs. */
	for (size_t m = 0; m < run->nmodels; m++)
		nce += (size_t)run->models[m].nceilings;
	gce = xcalloc(nce + 1, sizeof *gce);
	nce = 0;
	for (size_t m = 0; m < run->nmodels; m++) {
		const struct rf_model *x = &run->models[m];

		gr[m] = (struct plot_group){ x->name, x->nceilings, gce + nce };
		for (int i = 0; i < x->nceilings; i++)
			gce[nce++] = (struct plot_ceiling){ x->ceilings[i].name,
				x->ceilings[i].unit, x->ceilings[i].value,
				x->ceilings[i].provenance };
	}
	for (size_t i = 0; i < run->nops; i++) {
		const struct rf_op *op = &run->ops[i];
		int group = 0;

		for (size_t m = 0; m < run->nmodels; m++)
			if (!strcmp(run->models[m].name, op->device))
				group = (int)m;
		/* Ops of several devices: each device's its own markers,
		 * variant@N, N the device's place in the run. */
		if (run->ndevices > 1)
			names[i] = xasprintf("%s@%d", op->variant, op->device_nth);
		ops[i] = (struct plot_op){
			.op_id = op->op_id, .workload = op->workload,
			.variant = names[i] ? names[i] : op->variant, .group = group,
			.role = op->role, .dtype = op->dtype, .shape = op->shape,
			.status = op->status, .time_ns = op->time_ns,
			.dram_bytes = op->dram_bytes, .ai_dram = op->ai_dram,
			.ai_l2 = op->ai_l2, .ai_l1 = op->ai_l1, .flop_rate = op->flop_rate,
			.dram_bw = op->dram_bw,
			.precision = op->precision ? op->precision : "",
		};
	}
	for (size_t i = 0; i < pairs->n; i++) {
		const struct fu_pair *p = &pairs->v[i];

		pp[i] = (struct plot_pair){
			.fused_op_id = p->fused_op_id, .base_op_id = p->base_op_id,
			.workload = p->workload, .base_role = p->base_role,
			.dtype = p->dtype, .shape = p->shape, .base_variant = p->base_variant,
			.speedup = p->speedup, .predicted = p->predicted_speedup,
		};
	}
	for (size_t i = 0; ag && i < ag->n; i++) {
		const struct ag_row *x = &ag->v[i];

		if (x->base && x->op && x->why == AG_DRAWN)
			mv[d.nmoves++] = (struct plot_move){ x->op->op_id, x->base->ai_dram,
							     x->base->flop_rate };
	}
	rc = plot_run(&d, o, out);
	for (size_t i = 0; i < run->nops; i++)
		free(names[i]);
	free(names);
	free(gce);
	free(gr);
	free(mv);
	free(ce);
	free(ops);
	free(pp);
	return rc;
}
